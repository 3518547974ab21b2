//! The renderer on the bundled Cornell box (`lang-examples/cornell_box.xml`), in one process,
//! so that criterion's repetitions average out the noise that whole-process timings of
//! `drsc render` suffer on a shared machine:
//! - `render_cornell_box`: `Scene::render` on one thread, 64x64 at 4 spp, path tracer of max
//!   depth 8 (the side-by-side benchmark's scene at a smaller size), at 4 and 8 lanes;
//! - `traversal_cornell_box`: the BVH alone, with rays shaped like a path tracer's: diffuse
//!   bounces that leave a surface point in a cosine-weighted direction (closest hit,
//!   `Geometry::intersect`) and shadow rays between two surface points (any hit,
//!   `Geometry::ray_test`, `maxt` just short of the target).
//!
//! Run: `cargo bench -p drs-benches --bench render`; results go in docs/benchmarks.md. With
//! `DRS_DUMP_RAYS=DIR` the traversal rays are also written to `DIR/bounce.f32` and
//! `DIR/shadow.f32` (seven little-endian f32 per ray: origin, direction, maxt), which
//! `benches/mitsuba/traversal_side_by_side.sh` traces with Mitsuba 3 (Embree) for comparison.

use std::f32::consts::TAU;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_geometry::math::Vec3;
use drs_geometry::{Geometry, Ray};
use drs_render::{Definitions, Lanes, LibraryOptions, PluginLibrary, RenderOptions, Scene};

const RAYS: usize = 1 << 16;

/// A fixed xorshift sequence of numbers in [0, 1), so every run traces the same rays.
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn sphere(&mut self) -> Vec3 {
        let z = 1.0 - 2.0 * self.next();
        let r = (1.0 - z * z).max(0.0).sqrt();
        let phi = TAU * self.next();
        Vec3::new(r * phi.cos(), r * phi.sin(), z)
    }
}

/// Surface points with their normals: where rays from the room's centre in random directions
/// first hit something.
fn surface_points(geometry: &Geometry, rng: &mut Uniform, count: usize) -> Vec<(Vec3, Vec3)> {
    let centre = geometry.bounds().center();
    let mut points = Vec::with_capacity(count);
    while points.len() < count {
        let ray = Ray::new(centre, rng.sphere());
        if let Some(hit) = geometry.intersect(&ray) {
            let si = geometry.surface_interaction(&ray, &hit);
            let n = if si.n.dot(ray.d) > 0.0 { -si.n } else { si.n };
            points.push((si.p, n));
        }
    }
    points
}

/// Rays leaving each point in a cosine-weighted direction about its normal, from just off the
/// surface (as the integrators spawn them).
fn bounce_rays(points: &[(Vec3, Vec3)], rng: &mut Uniform) -> Vec<Ray> {
    points
        .iter()
        .map(|&(p, n)| {
            let d = (n + rng.sphere()).normalize_or(n);
            Ray::new(p + n * 1e-4, d)
        })
        .collect()
}

/// Rays from each point to the next one, ending just before it.
fn shadow_rays(points: &[(Vec3, Vec3)]) -> Vec<Ray> {
    points
        .iter()
        .zip(points.iter().cycle().skip(1))
        .map(|(&(p, n), &(q, _))| {
            let origin = p + n * 1e-4;
            let to = q - origin;
            let distance = to.length();
            Ray::with_maxt(origin, to / distance, distance * (1.0 - 1e-4))
        })
        .collect()
}

fn cornell_box(definitions: &Definitions) -> Scene {
    let library = Arc::new(PluginLibrary::load(&LibraryOptions::default()).expect("the stdlib plugins compile"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lang-examples/cornell_box.xml");
    Scene::load_file(path, definitions, library).unwrap_or_else(|e| panic!("cornell_box.xml: {e:?}"))
}

fn render(c: &mut Criterion) {
    const SIZE: u32 = 64;
    const SPP: u32 = 4;
    let mut definitions = Definitions::new();
    definitions.set("resx", SIZE.to_string()).set("resy", SIZE.to_string()).set("max_depth", "8");
    let scene = cornell_box(&definitions);
    let mut group = c.benchmark_group("render_cornell_box");
    group.throughput(Throughput::Elements((SIZE * SIZE * SPP) as u64));
    group.sample_size(20);
    for lanes in [Lanes::X4, Lanes::X8] {
        let options = RenderOptions { spp: Some(SPP), threads: Some(1), lanes, ..RenderOptions::default() };
        scene.render(&options).expect("the Cornell box renders");
        group.bench_function(format!("{}_lanes", lanes.count()), |b| b.iter(|| scene.render(&options)));
    }
    group.finish();
}

fn traversal(c: &mut Criterion) {
    let scene = cornell_box(&Definitions::new());
    let geometry = &scene.geometry().geometry;
    let mut rng = Uniform(0x9E37_79B9_7F4A_7C15);
    let points = surface_points(geometry, &mut rng, RAYS);
    let bounces = bounce_rays(&points, &mut rng);
    let shadows = shadow_rays(&points);
    let hits = bounces.iter().filter(|r| geometry.intersect(r).is_some()).count();
    let occluded = shadows.iter().filter(|r| geometry.ray_test(r)).count();
    println!("cornell box: {hits} of {RAYS} bounce rays hit, {occluded} of {RAYS} shadow rays are blocked");
    if let Some(dir) = std::env::var_os("DRS_DUMP_RAYS") {
        for (name, rays) in [("bounce", &bounces), ("shadow", &shadows)] {
            let path = Path::new(&dir).join(format!("{name}.f32"));
            let bytes: Vec<u8> = rays
                .iter()
                .flat_map(|r| [r.o.x, r.o.y, r.o.z, r.d.x, r.d.y, r.d.z, r.maxt])
                .flat_map(f32::to_le_bytes)
                .collect();
            std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        }
    }

    let mut group = c.benchmark_group("traversal_cornell_box");
    group.throughput(Throughput::Elements(RAYS as u64));
    group.bench_function("closest_hit", |b| {
        b.iter(|| bounces.iter().filter(|r| geometry.intersect(black_box(r)).is_some()).count())
    });
    group.bench_function("any_hit", |b| b.iter(|| shadows.iter().filter(|r| geometry.ray_test(black_box(r))).count()));
    group.finish();
}

criterion_group!(benches, render, traversal);
criterion_main!(benches);
