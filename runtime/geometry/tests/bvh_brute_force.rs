//! The BVH against brute force: on random scenes of triangle soups, meshes, spheres and disks,
//! the closest hit equals the closest of all per-primitive tests (of equally distant ones the
//! first primitive of the first shape), `ray_test` equals `intersect(..).is_some()`, and
//! packets of 4, 8 and 16 rays find exactly what single rays find.

mod common;

use common::Rng;
use drs_geometry::math::{Mat4, Quat, Vec3};
use drs_geometry::{
    Disk, Geometry, Hit, MeshData, MeshOptions, Ray, RayPacket, Shape, Sphere, Transform, TriangleMesh, PACKET_RAYS,
};
use proptest::prelude::*;

/// The closest hit over every primitive of every shape, tested one by one.
fn brute_force(shapes: &[Shape], ray: &Ray) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    for (shape_index, shape) in shapes.iter().enumerate() {
        for prim in 0..shape.primitive_count() {
            let maxt = best.map_or(ray.maxt, |b| b.t);
            if let Some(h) = shape.intersect_primitive(prim, &Ray { maxt, ..*ray }) {
                if best.is_none_or(|b| h.t < b.t) {
                    best =
                        Some(Hit { t: h.t, shape_index: shape_index as u32, prim_index: prim as u32, prim_uv: h.uv });
                }
            }
        }
    }
    best
}

/// A random scene: `soup` triangles with vertices in a cube of size `spread` (some huge, some
/// tiny), plus spheres, disks and a mesh with shared edges.
fn random_scene(seed: u64, soup: usize, analytic: usize) -> Vec<Shape> {
    let mut rng = Rng::new(seed);
    let mut data = MeshData::default();
    for i in 0..soup {
        let center = rng.vec3_in(-10.0, 10.0);
        let size = if i % 7 == 0 { 8.0 } else { rng.range(0.01, 2.0) };
        for _ in 0..3 {
            data.positions.push(center + rng.vec3_in(-size, size));
        }
        let base = 3 * i as u32;
        data.triangles.push([base, base + 1, base + 2]);
    }
    let mut shapes: Vec<Shape> = Vec::new();
    if soup > 0 {
        shapes.push(TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap().into());
    }
    shapes.push(
        TriangleMesh::new(
            common::uv_sphere_mesh(rng.vec3_in(-5.0, 5.0), rng.range(0.5, 3.0), 6, 10),
            &Transform::IDENTITY,
            MeshOptions::default(),
        )
        .unwrap()
        .into(),
    );
    for i in 0..analytic {
        let center = rng.vec3_in(-10.0, 10.0);
        if i % 2 == 0 {
            shapes.push(Sphere::new(center, rng.range(0.1, 2.0), &Transform::IDENTITY, i % 4 == 0).unwrap().into());
        } else {
            let rotation = Quat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 6.0));
            let scale = Vec3::new(rng.range(0.2, 3.0), rng.range(0.2, 3.0), 1.0);
            let matrix = Mat4::from_scale_rotation_translation(scale, rotation, center);
            shapes.push(Disk::new(&Transform::new(matrix).unwrap(), false).unwrap().into());
        }
    }
    shapes
}

fn random_ray(rng: &mut Rng) -> Ray {
    let o = rng.vec3_in(-15.0, 15.0);
    let d = match rng.next_u64() % 4 {
        // Axis-aligned directions exercise zero reciprocal components.
        0 => [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z][(rng.next_u64() % 6) as usize],
        // Aimed at the scene's center region, so that many rays hit.
        1 => rng.vec3_in(-5.0, 5.0) - o,
        _ => rng.unit_vector() * rng.range(0.1, 10.0),
    };
    let maxt = if rng.next_u64().is_multiple_of(3) { rng.range(0.0, 20.0) / d.length() } else { f32::MAX };
    Ray::with_maxt(o, d, maxt)
}

/// Checks `rays` random rays; returns how many hit something.
fn check_scene(shapes: Vec<Shape>, seed: u64, rays: usize) -> Result<usize, TestCaseError> {
    let geometry = Geometry::new(shapes).unwrap();
    let total: usize = geometry.shapes().iter().map(Shape::primitive_count).sum();
    prop_assert_eq!(geometry.bvh_statistics().primitives, total);
    let mut rng = Rng::new(seed ^ 0xABCD);
    let rays: Vec<Ray> = (0..rays).map(|_| random_ray(&mut rng)).collect();
    let mut hits = 0;
    for ray in &rays {
        let expected = brute_force(geometry.shapes(), ray);
        let actual = geometry.intersect(ray);
        prop_assert_eq!(geometry.ray_test(ray), actual.is_some(), "ray_test vs intersect for {:?}", ray);
        prop_assert_eq!(actual, expected, "for {:?}", ray);
        if let Some(hit) = actual {
            prop_assert!(hit.t >= 0.0 && hit.t <= ray.maxt);
            hits += 1;
        }
    }
    check_packets::<4>(&geometry, &rays, seed)?;
    check_packets::<8>(&geometry, &rays, seed)?;
    check_packets::<16>(&geometry, &rays, seed)?;
    Ok(hits)
}

/// `rays` in packets of `N` with random lanes active: each active lane's answers are the
/// single ray's, to the bit; inactive lanes get none.
fn check_packets<const N: usize>(geometry: &Geometry, rays: &[Ray], seed: u64) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed ^ N as u64);
    for chunk in rays.chunks_exact(N) {
        let packet: [Ray; N] = chunk.try_into().unwrap();
        // Mostly full packets, as kernels with lane refill make them; some with a few lanes off
        // (still traced as packets), some with random lanes (mostly traced ray by ray).
        let full = u32::MAX >> (32 - N);
        let active = match rng.next_u64() % 4 {
            0 => rng.next_u64() as u32 & full,
            1 => full & !(1 << (rng.next_u64() % N as u64)) & !(1 << (rng.next_u64() % N as u64)),
            _ => full,
        };
        let mut hits = [None; PACKET_RAYS];
        let rays = RayPacket::from_rays(&packet);
        geometry.intersect_packet(&rays, active, &mut hits);
        let occluded = geometry.ray_test_packet(&rays, active);
        for (l, ray) in packet.iter().enumerate() {
            let on = active & (1 << l) != 0;
            let expected = if on { geometry.intersect(ray) } else { None };
            let bits = |h: Option<Hit>| {
                h.map(|h| (h.t.to_bits(), h.shape_index, h.prim_index, h.prim_uv.x.to_bits(), h.prim_uv.y.to_bits()))
            };
            prop_assert_eq!(bits(hits[l]), bits(expected), "lane {} of {} for {:?}", l, N, ray);
            prop_assert_eq!(
                occluded & (1 << l) != 0,
                on && geometry.ray_test(ray),
                "lane {} of {} for {:?}",
                l,
                N,
                ray
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// 48 scenes × 500 rays.
    #[test]
    fn closest_hit_equals_brute_force(seed in any::<u64>(), soup in 0usize..400, analytic in 0usize..12) {
        check_scene(random_scene(seed, soup, analytic), seed, 500)?;
    }
}

/// A large scene, so that the tree is deep and subtrees are built in parallel.
#[test]
fn closest_hit_equals_brute_force_on_a_large_scene() {
    let hits = check_scene(random_scene(7, 20_000, 20), 7, 300).unwrap();
    assert!(hits > 150, "only {hits} of 300 rays hit");
}

/// Many primitives with identical bounds cannot be split by the SAH; the builder must still
/// terminate with a usable tree.
#[test]
fn identical_primitives_build_and_intersect() {
    let mut data = MeshData::default();
    for i in 0..1000u32 {
        data.positions.extend([Vec3::ZERO, Vec3::X, Vec3::Y]);
        data.triangles.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    let geometry =
        Geometry::new(vec![TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap().into()])
            .unwrap();
    let stats = geometry.bvh_statistics();
    assert_eq!(stats.primitives, 1000);
    let hit = geometry.intersect(&Ray::new(Vec3::new(0.2, 0.2, 1.0), -Vec3::Z)).unwrap();
    assert_eq!(hit.t, 1.0);
}
