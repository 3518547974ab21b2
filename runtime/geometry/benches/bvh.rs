//! BVH build time and ray throughput (closest hit and any hit; coherent camera rays and random
//! rays) on a generated terrain of 2 · 400² = 320k triangles plus a 130k-triangle sphere
//! floating above it, and on the 36 triangles of the bundled Cornell box
//! (lang-examples/cornell_box.xml), where the per-ray fixed costs dominate. Throughput is
//! reported in rays (elements) per second.

use std::f32::consts::{PI, TAU};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use drs_geometry::math::{Mat4, Vec2, Vec3};
use drs_geometry::{cube, rectangle, Geometry, MeshData, MeshOptions, Ray, Shape, Transform, TriangleMesh};

const TERRAIN_QUADS: u32 = 400;
const IMAGE_SIZE: u32 = 256;
const RANDOM_RAYS: usize = 65_536;

/// A 20 × 20 height field of sines over [-10, 10]².
fn terrain() -> MeshData {
    let n = TERRAIN_QUADS;
    let mut data = MeshData::default();
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (20.0 * i as f32 / n as f32 - 10.0, 20.0 * j as f32 / n as f32 - 10.0);
            let z = 0.8 * (0.7 * x).sin() * (0.5 * y).cos() + 0.2 * (2.3 * x + 1.7 * y).sin();
            data.positions.push(Vec3::new(x, y, z));
        }
    }
    let index = |i: u32, j: u32| j * (n + 1) + i;
    for j in 0..n {
        for i in 0..n {
            data.triangles.push([index(i, j), index(i + 1, j), index(i + 1, j + 1)]);
            data.triangles.push([index(i, j), index(i + 1, j + 1), index(i, j + 1)]);
        }
    }
    data
}

/// A UV sphere of radius 3 at (0, 0, 5) with 256 rings × 256 segments.
fn sphere() -> MeshData {
    let (rings, segments) = (256u32, 256u32);
    let mut data = MeshData::default();
    for r in 0..=rings {
        let theta = PI * r as f32 / rings as f32;
        for s in 0..segments {
            let phi = TAU * s as f32 / segments as f32;
            let d = Vec3::new(theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos());
            data.positions.push(Vec3::new(0.0, 0.0, 5.0) + d * 3.0);
        }
    }
    let index = |r: u32, s: u32| r * segments + s % segments;
    for r in 0..rings {
        for s in 0..segments {
            data.triangles.push([index(r, s), index(r + 1, s), index(r, s + 1)]);
            data.triangles.push([index(r, s + 1), index(r + 1, s), index(r + 1, s + 1)]);
        }
    }
    data
}

fn shapes() -> Vec<Shape> {
    [terrain(), sphere()]
        .into_iter()
        .map(|data| TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap().into())
        .collect()
}

/// Pinhole camera rays, row by row, looking down at the scene from a corner.
fn camera_rays() -> Vec<Ray> {
    let eye = Vec3::new(14.0, -14.0, 12.0);
    let forward = (Vec3::new(0.0, 0.0, 1.0) - eye).normalize();
    let right = forward.cross(Vec3::Z).normalize();
    let up = right.cross(forward);
    let mut rays = Vec::new();
    for y in 0..IMAGE_SIZE {
        for x in 0..IMAGE_SIZE {
            let pixel = (Vec2::new(x as f32, y as f32) + 0.5) / IMAGE_SIZE as f32 * 2.0 - 1.0;
            let d = forward + right * (0.6 * pixel.x) - up * (0.6 * pixel.y);
            rays.push(Ray::new(eye, d.normalize()));
        }
    }
    rays
}

/// Rays with origins anywhere in the scene's box and uniformly random directions (like
/// bounces after the first).
fn random_rays() -> Vec<Ray> {
    rays_in((Vec3::new(-10.0, -10.0, -1.0), Vec3::new(10.0, 10.0, 9.0)))
}

/// The shapes of lang-examples/cornell_box.xml: five walls, the light and two blocks, each
/// placed as the scene's `to_world` does (scale, then rotate about `axis` by `degrees`, then
/// translate).
fn cornell_box() -> Vec<Shape> {
    let place = |scale: [f32; 3], axis: Vec3, degrees: f32, translate: [f32; 3]| {
        let m = Mat4::from_translation(Vec3::from(translate))
            * Mat4::from_axis_angle(axis, degrees.to_radians())
            * Mat4::from_scale(Vec3::from(scale));
        Transform::new(m).unwrap()
    };
    let walls = [
        place([2.78, 2.795, 1.0], Vec3::X, -90.0, [2.78, 0.0, 2.795]),
        place([2.78, 2.795, 1.0], Vec3::X, 90.0, [2.78, 5.488, 2.795]),
        place([2.78, 2.744, 1.0], Vec3::Y, 180.0, [2.78, 2.744, 5.592]),
        place([2.796, 2.744, 1.0], Vec3::Y, -90.0, [5.56, 2.744, 2.796]),
        place([2.796, 2.744, 1.0], Vec3::Y, 90.0, [0.0, 2.744, 2.796]),
        place([0.65, 0.525, 1.0], Vec3::X, 90.0, [2.78, 5.487, 2.795]),
    ];
    let blocks = [
        place([0.825; 3], Vec3::Y, -17.0, [1.855, 0.825, 1.69]),
        place([0.825, 1.65, 0.825], Vec3::Y, 17.0, [3.685, 1.65, 3.51]),
    ];
    let walls = walls.iter().map(|t| rectangle(t, false).unwrap().into());
    walls.chain(blocks.iter().map(|t| cube(t, false).unwrap().into())).collect()
}

/// Rays from anywhere in `bounds`, in uniformly random directions, from a fixed seed.
fn rays_in(bounds: (Vec3, Vec3)) -> Vec<Ray> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let (min, max) = bounds;
    (0..RANDOM_RAYS)
        .map(|_| {
            let o = min + (max - min) * Vec3::new(next(), next(), next());
            Ray::new(o, drs_geometry::square_to_uniform_sphere(Vec2::new(next(), next())))
        })
        .collect()
}

fn bench_rays(c: &mut Criterion, name: &str, geometry: &Geometry, rays: &[Ray]) {
    let hits = rays.iter().filter(|r| geometry.intersect(r).is_some()).count();
    eprintln!("{name} rays: {hits} of {} hit", rays.len());
    let mut group = c.benchmark_group(format!("rays_{name}"));
    group.sample_size(10);
    group.throughput(Throughput::Elements(rays.len() as u64));
    group.bench_function("intersect", |b| b.iter(|| rays.iter().filter(|r| geometry.intersect(r).is_some()).count()));
    group.bench_function("ray_test", |b| b.iter(|| rays.iter().filter(|r| geometry.ray_test(r)).count()));
    // The same rays in packets of 16, as a kernel's lane group of 16 traces them.
    let mut packet_hits = vec![None; rays.len()];
    group.bench_function("intersect_packets_16", |b| b.iter(|| geometry.intersect_n(rays, &mut packet_hits)));
    let mut occluded = vec![false; rays.len()];
    group.bench_function("ray_test_packets_16", |b| b.iter(|| geometry.ray_test_n(rays, &mut occluded)));
    group.finish();
}

fn bench(c: &mut Criterion) {
    let mut build = c.benchmark_group("bvh_build");
    build.sample_size(10);
    let triangle_count: usize = shapes().iter().map(Shape::primitive_count).sum();
    build.throughput(Throughput::Elements(triangle_count as u64));
    build.bench_function("terrain_and_sphere", |b| {
        b.iter_batched(shapes, |shapes| Geometry::new(shapes).unwrap(), BatchSize::LargeInput)
    });
    build.finish();

    let geometry = Geometry::new(shapes()).unwrap();
    let stats = geometry.bvh_statistics();
    eprintln!(
        "{} triangles: {} inner nodes, {} leaves, largest leaf {}",
        stats.primitives, stats.inner_nodes, stats.leaves, stats.largest_leaf
    );
    for (name, rays) in [("camera", camera_rays()), ("random", random_rays())] {
        bench_rays(c, name, &geometry, &rays);
    }

    let cornell = Geometry::new(cornell_box()).unwrap();
    let stats = cornell.bvh_statistics();
    eprintln!(
        "Cornell box, {} triangles: {} inner nodes, {} leaves, largest leaf {}",
        stats.primitives, stats.inner_nodes, stats.leaves, stats.largest_leaf
    );
    let bounds = cornell.bounds();
    bench_rays(c, "cornell_box", &cornell, &rays_in((bounds.min, bounds.max)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
