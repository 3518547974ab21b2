//! The host functions kernels call (`stdlib/runtime.drs`): ray tracing against the scene's
//! BVH, shape sampling for area emitters, and the sample streams the host keeps
//! (`streams.rs`; emitter selection and most random numbers are compiled code:
//! `link::EMITTER_TABLE_FUNCTIONS`, `streams::sampler_function`).
//!
//! Every function runs once per lane group: it reads each active lane's arguments as 32-bit
//! patterns and returns that lane's results (most through
//! [`drs_cranelift::LaneGroup::map_lanes`]; the ray tests with a full enough group's rays
//! traced together, then the intersection's surface interactions of the whole group computed
//! with vector instructions and written in place through
//! [`drs_cranelift::LaneGroup::write_results`]; the rarely called ones one lane at a time
//! through `Externs::bind`). Struct results are written in the field order of their `.drs`
//! declaration, which binding checks by field name: a stdlib whose struct fields are reordered
//! fails to bind instead of getting scrambled results. Handles out of range give the null
//! answer; nothing here panics on kernel input.

use std::sync::Arc;

use drs_cranelift::{Externs, LaneGroup};
use drs_film::SampleStream;
use drs_geometry::math::Vec3;
use drs_geometry::{
    Hit, PositionSamples, Ray, RayPacket, SurfaceInteraction, SurfaceInteractions, ANY_HIT_PACKET_MIN_RAYS,
    CLOSEST_HIT_PACKET_MIN_RAYS, PACKET_RAYS,
};
use drs_lower::{FnLayout, LoweredProgram};

use crate::link::NULL_HANDLE;
use crate::scene::SceneGeometry;
use crate::streams::with_host_streams;

/// Fields of `SurfaceInteraction` (stdlib/types.drs) in declaration order, in which
/// [`intersect_lanes`] fills them: first the columns of [`SurfaceInteractions`] in its field order.
const SI_FIELDS: [&str; 33] = [
    "t",
    "p.x",
    "p.y",
    "p.z",
    "n.x",
    "n.y",
    "n.z",
    "uv.x",
    "uv.y",
    "sh_frame.s.x",
    "sh_frame.s.y",
    "sh_frame.s.z",
    "sh_frame.t.x",
    "sh_frame.t.y",
    "sh_frame.t.z",
    "sh_frame.n.x",
    "sh_frame.n.y",
    "sh_frame.n.z",
    "dp_du.x",
    "dp_du.y",
    "dp_du.z",
    "dp_dv.x",
    "dp_dv.y",
    "dp_dv.z",
    "wi.x",
    "wi.y",
    "wi.z",
    "shape_id",
    "prim_index",
    "time",
    "bsdf",
    "emitter",
    "valid",
];

/// Fields of `PositionSample` in declaration order.
const PS_FIELDS: [&str; 11] = ["p.x", "p.y", "p.z", "n.x", "n.y", "n.z", "uv.x", "uv.y", "time", "pdf", "delta"];

/// Why host functions cannot be bound.
#[derive(Debug, thiserror::Error)]
#[error("host function `{function}`: {message}")]
pub struct HostError {
    pub function: String,
    pub message: String,
}

/// Checks that extern `name` returns the struct whose scalars are `fields`, in this order, so
/// that the runtime can write them without looking up where each goes.
fn check_fields(program: &LoweredProgram, name: &str, fields: &[&str]) -> Result<(), HostError> {
    let fail = |message: String| HostError { function: name.to_owned(), message };
    let module = &program.lowered.module;
    let f = program
        .lowered
        .externs
        .iter()
        .find(|(_, &e)| module.externs[e as usize].name == name)
        .map(|(&f, _)| f)
        .ok_or_else(|| fail("not declared by the stdlib".into()))?;
    let names = FnLayout::of(&program.program, f).ret.component_names("r");
    let declared: Vec<&str> = names.iter().map(|n| n.strip_prefix("r.").unwrap_or(n)).collect();
    if declared != fields {
        return Err(fail(format!(
            "returns the scalars ({}), the runtime writes ({})",
            declared.join(", "),
            fields.join(", ")
        )));
    }
    Ok(())
}

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

/// The `Ray` argument of a `Scene` method from the method's first eight arguments: the scene
/// handle, then the ray's `o`, `d` and `maxt` (its `time`, argument 8, is not needed here).
fn lane_ray(a: [u32; 8]) -> Ray {
    let arg = |p: usize| f(a[1 + p]);
    let vec3 = |p: usize| Vec3::new(arg(p), arg(p + 1), arg(p + 2));
    Ray::with_maxt(vec3(0), vec3(3), arg(6))
}

/// Writes the rays of a `Scene` method's lane group (its arguments 1 to 7: `o`, `d`, `maxt`)
/// into `rays`, a packet of as many lanes. (Returned by value, the packet was copied out
/// through the C library's `memcpy`.)
fn group_rays(g: &LaneGroup, rays: &mut RayPacket) {
    let copy = |to: &mut [f32; PACKET_RAYS], param: usize| {
        for (to, &bits) in to.iter_mut().zip(g.arg_lanes(param)) {
            *to = f(bits);
        }
    };
    for axis in 0..3 {
        copy(&mut rays.o[axis], 1 + axis);
        copy(&mut rays.d[axis], 4 + axis);
    }
    copy(&mut rays.maxt, 7);
}

/// `shape_sample_position` for a lane group ([`sample_position_lanes`] at the group's width).
fn sample_position_group(scene: &SceneGeometry, g: &mut LaneGroup) {
    match g.lanes() {
        1 => sample_position_lanes::<1>(scene, g),
        4 => sample_position_lanes::<4>(scene, g),
        8 => sample_position_lanes::<8>(scene, g),
        16 => sample_position_lanes::<16>(scene, g),
        lanes => panic!("a group of {lanes} lanes: compiled code calls with 1, 4, 8 or 16"),
    }
}

/// `shape_sample_position(shape, time, u, v)` for a group of `L` lanes, written column by
/// column in the order of [`PS_FIELDS`]: each shape that active lanes name samples their
/// points at once ([`drs_geometry::Shape::sample_positions`]); usually there is one, the
/// scene's only area light. An unknown shape gives zeros (no sample); inactive lanes get
/// unspecified values. (Lane by lane, through closures writing a lane of each column, area
/// sampling took 3% of a Cornell box render.)
fn sample_position_lanes<const L: usize>(scene: &SceneGeometry, g: &mut LaneGroup) {
    let column = |param: usize| -> [u32; L] { g.arg_lanes(param).try_into().expect("a group of L lanes") };
    let (shape_of, time) = (column(0), column(1));
    let (u, v) = (column(2).map(f), column(3).map(f));
    let lanes_of = |shape: u32| (0..L).filter(|&l| shape_of[l] == shape).fold(0u32, |mask, l| mask | 1 << l);
    let sample = |shape: u32, lanes: u32| {
        let shape = scene.geometry.shapes().get(shape as usize);
        shape.map_or(PositionSamples::ZERO, |shape| shape.sample_positions(&u, &v, lanes))
    };
    let mut samples = PositionSamples::ZERO;
    let mut todo = g.active();
    while todo != 0 {
        let shape = shape_of[todo.trailing_zeros() as usize];
        let lanes = lanes_of(shape) & todo;
        let drawn = sample(shape, lanes);
        if todo == g.active() {
            // The first shape (usually the only one) gives the whole columns.
            samples = drawn;
        } else {
            for lane in (0..L).filter(|&l| lanes & (1 << l) != 0) {
                samples.set_lane(lane, &drawn.lane(lane));
            }
        }
        todo &= !lanes;
    }
    let bits = |c: [f32; L]| c.map(f32::to_bits);
    g.write_results(|out: &mut [[u32; L]; PS_FIELDS.len()]| {
        let [p @ .., n0, n1, n2, uv0, uv1, time_column, pdf, delta] = out;
        for (to, from) in p.iter_mut().zip(samples.p) {
            *to = bits(from);
        }
        for (to, from) in [n0, n1, n2].into_iter().zip(samples.n) {
            *to = bits(from);
        }
        (*uv0, *uv1) = (bits(samples.uv[0]), bits(samples.uv[1]));
        *time_column = time;
        *pdf = bits(samples.pdf);
        *delta = [0; L];
    });
}

/// `Scene::intersect` for a lane group ([`intersect_lanes`] at the group's width).
fn intersect_group(scene: &SceneGeometry, g: &mut LaneGroup, with_uv: bool) {
    match g.lanes() {
        1 => intersect_lanes::<1>(scene, g, with_uv),
        4 => intersect_lanes::<4>(scene, g, with_uv),
        8 => intersect_lanes::<8>(scene, g, with_uv),
        16 => intersect_lanes::<16>(scene, g, with_uv),
        lanes => panic!("a group of {lanes} lanes: compiled code calls with 1, 4, 8 or 16"),
    }
}

/// `Scene::intersect`'s results for a group of `L` lanes: the closest hits (a group of 16
/// lanes, all active, traced together as a packet by
/// [`drs_geometry::Geometry::intersect_packet`], otherwise ray by ray), then their surface
/// interactions computed together and written in place as the fields of `SurfaceInteraction`
/// in declaration order ([`SI_FIELDS`], which starts with the columns of
/// [`SurfaceInteractions`]). Without `with_uv` (the kernel reads none of them), `uv`, `dp_du`
/// and `dp_dv` may be left unspecified ([`drs_geometry::Geometry::surface_interactions`]).
// Out of line, each width in a function of its own: inlined into `intersect_group`, all four
// widths' code in one function, Cranelift's four lanes rendered a few per cent slower.
#[inline(never)]
fn intersect_lanes<const L: usize>(scene: &SceneGeometry, g: &mut LaneGroup, with_uv: bool) {
    let active = g.active();
    let column = |param: usize| -> [f32; L] {
        let bits: &[u32; L] = g.arg_lanes(param).try_into().expect("a group of L lanes");
        bits.map(f)
    };
    let (o, d, maxt) = ([column(1), column(2), column(3)], [column(4), column(5), column(6)], column(7));
    let mut time = [0; L];
    time.copy_from_slice(g.arg_lanes(8));
    let mut rays = [Ray::with_maxt(Vec3::ZERO, Vec3::ZERO, 0.0); L];
    for (l, ray) in rays.iter_mut().enumerate() {
        let lane_vec3 = |c: &[[f32; L]; 3]| Vec3::new(c[0][l], c[1][l], c[2][l]);
        *ray = Ray::with_maxt(lane_vec3(&o), lane_vec3(&d), maxt[l]);
    }
    let mut hits = [None; L];
    if L == PACKET_RAYS && active.count_ones() >= CLOSEST_HIT_PACKET_MIN_RAYS {
        let mut packet = RayPacket::new(PACKET_RAYS);
        for axis in 0..3 {
            packet.o[axis].copy_from_slice(&o[axis]);
            packet.d[axis].copy_from_slice(&d[axis]);
        }
        packet.maxt.copy_from_slice(&maxt);
        // In place: a copy of the packet's hits went through the C library's `memcpy`, about
        // 1% of a render.
        let hits: &mut [Option<Hit>; PACKET_RAYS] = (&mut hits[..]).try_into().expect("L is PACKET_RAYS");
        scene.geometry.intersect_packet(&packet, active, hits);
    } else {
        for lane in g.active_lanes() {
            hits[lane] = scene.geometry.intersect(&rays[lane]);
        }
    }
    g.write_results(|columns: &mut [[u32; L]; SI_FIELDS.len()]| {
        let [interactions @ .., time_column, bsdf, emitter, valid] = columns;
        let si = SurfaceInteractions::from_columns_mut(interactions);
        scene.geometry.surface_interactions(&rays, &hits, si, with_uv);
        *time_column = time;
        for (lane, hit) in hits.iter().enumerate() {
            match hit {
                Some(hit) => {
                    let shape = hit.shape_index as usize;
                    bsdf[lane] = scene.shape_bsdfs.get(shape).copied().unwrap_or(NULL_HANDLE);
                    emitter[lane] = scene.shape_emitters.get(shape).copied().unwrap_or(NULL_HANDLE);
                    valid[lane] = 1;
                }
                None if active & (1 << lane) == 0 => {}
                None => {
                    // Mitsuba's miss: t = inf, wi = -d in world space, the environment as emitter.
                    let ray = &rays[lane];
                    si.set_lane(
                        lane,
                        &SurfaceInteraction { t: f32::INFINITY, wi: -ray.d, ..SurfaceInteraction::default() },
                    );
                    (bsdf[lane], emitter[lane], valid[lane]) = (NULL_HANDLE, scene.environment, 0);
                }
            }
        }
    });
}

/// Binds every host function the kernel `jit` declares.
pub(crate) fn bind(
    externs: &mut Externs,
    jit: &drs_cranelift::Jit,
    program: &LoweredProgram,
    scene: Arc<SceneGeometry>,
) -> Result<(), HostError> {
    let decls = jit.extern_decls();
    let bind_err = |name: &str| {
        let name = name.to_owned();
        move |e: drs_cranelift::Error| HostError { function: name.clone(), message: e.to_string() }
    };
    for (index, decl) in decls.iter().enumerate() {
        let name = decl.name.as_str();
        let s = scene.clone();
        match name {
            "Sampler::host_next_1d" => externs.bind_group(name, |g| {
                with_host_streams(|st| g.map_lanes(|[h]| [st.get_mut(h).map_or(0.0, |s| s.next_1d()).to_bits()]))
            }),
            "Sampler::host_next_2d" => externs.bind_group(name, |g| {
                with_host_streams(|st| {
                    g.map_lanes(|[h]| st.get_mut(h).map_or([0.0; 2], |s| s.next_2d()).map(f32::to_bits))
                })
            }),
            "Sampler::host_clone" => externs.bind(name, |args, out| {
                out[0] = with_host_streams(|st| st.derive(args[0], SampleStream::clone));
            }),
            "Sampler::host_split" => externs.bind(name, |args, out| {
                out[0] = with_host_streams(|st| st.derive(args[0], SampleStream::split));
            }),
            "Sampler::clone_words" => externs.bind(name, |args, out| {
                let words = [args[0], args[1], args[2], args[3]];
                out[0] = with_host_streams(|st| st.push(SampleStream::from_words(words)));
            }),
            "Sampler::split_words" => externs.bind(name, |args, out| {
                let words = [args[0], args[1], args[2], args[3]];
                out[0] = with_host_streams(|st| st.push(SampleStream::from_words(words).split()));
            }),
            "Scene::intersect" => {
                check_fields(program, name, &SI_FIELDS)?;
                let reads = jit.extern_results_read(index);
                let read = |field: &str| SI_FIELDS.iter().zip(&reads).any(|(f, &r)| r && f.starts_with(field));
                let with_uv = read("uv.") || read("dp_du.") || read("dp_dv.");
                externs.bind_group(name, move |g| intersect_group(&s, g, with_uv))
            }
            "Scene::ray_test" => externs.bind_group(name, move |g| {
                if g.active().count_ones() < ANY_HIT_PACKET_MIN_RAYS {
                    return g.map_lanes(|a| [s.geometry.ray_test(&lane_ray(a)) as u32]);
                }
                let mut rays = RayPacket::new(g.lanes());
                group_rays(g, &mut rays);
                let occluded = s.geometry.ray_test_packet(&rays, g.active());
                for lane in g.active_lanes() {
                    g.set(0, lane, (occluded >> lane) & 1);
                }
            }),
            "shape_sample_position" => {
                check_fields(program, name, &PS_FIELDS)?;
                externs.bind_group(name, move |g| sample_position_group(&s, g))
            }
            "shape_pdf_position" => externs.bind_group(name, move |g| {
                g.map_lanes(|[shape]| {
                    let shape = s.geometry.shapes().get(shape as usize);
                    [shape.map_or(0.0, |shape| shape.pdf_position()).to_bits()]
                })
            }),
            other => {
                return Err(HostError { function: other.to_owned(), message: "the runtime does not provide it".into() })
            }
        }
        .map_err(bind_err(name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_geometry::math::Vec2;

    /// Struct results are written in declaration order, so binding refuses a struct whose
    /// fields are in another order (or are other fields) and names both lists.
    #[test]
    fn struct_results_must_be_declared_in_the_order_the_runtime_writes() {
        let src = "struct Pair { b: f32, a: vec2 }\nextern fn probe() -> Pair;\nfn read() -> f32 { probe().b }\n";
        let options = drs_sema::LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
        let program = drs_lower::lower_source("probe.drs", src, &options).unwrap();
        assert!(check_fields(&program, "probe", &["b", "a.x", "a.y"]).is_ok());
        let err = check_fields(&program, "probe", &["a.x", "a.y", "b"]).unwrap_err();
        assert_eq!(err.message, "returns the scalars (b, a.x, a.y), the runtime writes (a.x, a.y, b)");
        assert!(check_fields(&program, "probe", &["b", "a.x"]).is_err());
        let missing = check_fields(&program, "absent", &["b"]).unwrap_err();
        assert_eq!(missing.message, "not declared by the stdlib");
    }

    /// `intersect_lanes` writes `SurfaceInteractions` straight into the first columns of the
    /// result, so its fields must lie in the order of the first `SI_FIELDS`.
    #[test]
    fn surface_interaction_columns_are_the_first_si_fields() {
        let mut columns = [[0u32; 4]; SurfaceInteractions::<4>::COLUMNS];
        let vec3 = |first: f32| Vec3::new(first, first + 1.0, first + 2.0);
        let si = SurfaceInteraction {
            t: 1.0,
            p: vec3(2.0),
            n: vec3(5.0),
            uv: Vec2::new(8.0, 9.0),
            sh_frame: drs_geometry::Frame { s: vec3(10.0), t: vec3(13.0), n: vec3(16.0) },
            dp_du: vec3(19.0),
            dp_dv: vec3(22.0),
            wi: vec3(25.0),
            shape_index: 28,
            prim_index: 29,
        };
        SurfaceInteractions::from_columns_mut(&mut columns).set_lane(2, &si);
        let written: Vec<u32> = columns.iter().map(|column| column[2]).collect();
        let expected: Vec<u32> = (1..=27).map(|i| (i as f32).to_bits()).chain([28, 29]).collect();
        assert_eq!(written, expected);
        assert_eq!(
            SI_FIELDS[SurfaceInteractions::<4>::COLUMNS - 3..SurfaceInteractions::<4>::COLUMNS],
            ["wi.z", "shape_id", "prim_index"]
        );
    }
}
