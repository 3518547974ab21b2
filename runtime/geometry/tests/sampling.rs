//! Area sampling: positions lie on the surface, are uniform by area (chi-square tests over
//! equal-area cells, sample means against centroids), and pdf = 1 / area.

mod common;

use std::f32::consts::{PI, TAU};

use common::{assert_close, assert_vec3_close, Rng};
use drs_geometry::math::{Mat4, Quat, Vec2, Vec3};
use drs_geometry::{
    cube, rectangle, DiscreteDistribution, Disk, MeshData, MeshOptions, PositionSample, Shape, Sphere, Transform,
    TriangleMesh,
};

const SAMPLES: usize = 200_000;

/// Pearson's statistic of `counts` against expected probabilities.
fn chi_square(counts: &[usize], probabilities: &[f64], total: usize) -> f64 {
    counts
        .iter()
        .zip(probabilities)
        .map(|(&c, &p)| {
            let expected = p * total as f64;
            assert!(expected >= 5.0, "cell too small for the test");
            (c as f64 - expected).powi(2) / expected
        })
        .sum()
}

fn samples(shape: &Shape, seed: u64) -> Vec<PositionSample> {
    let mut rng = Rng::new(seed);
    (0..SAMPLES).map(|_| shape.sample_position(rng.vec2())).collect()
}

/// Asserts that the mean of the sampled positions is `expected` within 5 standard errors.
fn assert_mean(samples: &[PositionSample], expected: Vec3) {
    let n = samples.len() as f64;
    let mean = samples.iter().fold(Vec3::ZERO.as_dvec3(), |m, s| m + s.p.as_dvec3()) / n;
    let variance = samples.iter().fold(Vec3::ZERO.as_dvec3(), |v, s| v + (s.p.as_dvec3() - mean).powf(2.0)) / n;
    for axis in 0..3 {
        let tolerance = 5.0 * (variance[axis] / n).sqrt() + 1e-6;
        assert!((mean[axis] - expected[axis] as f64).abs() <= tolerance, "mean {mean} vs expected {expected}");
    }
}

/// Right triangles with legs `sizes[k]`, the k-th with its right angle at (10k, 0, 0).
fn staircase(sizes: &[f32]) -> TriangleMesh {
    let mut data = MeshData::default();
    for (k, &s) in sizes.iter().enumerate() {
        let corner = Vec3::new(10.0 * k as f32, 0.0, 0.0);
        data.positions.extend([corner, corner + Vec3::X * s, corner + Vec3::Y * s]);
        let base = 3 * k as u32;
        data.triangles.push([base, base + 1, base + 2]);
    }
    TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap()
}

// 99.9% quantiles of the chi-square distribution.
const CHI2_999_DOF_19: f64 = 43.82;
const CHI2_999_DOF_39: f64 = 72.05;

#[test]
fn mesh_sampling_is_uniform_over_triangles_of_very_different_areas() {
    let sizes = [0.1f32, 1.0, 3.0, 0.5, 2.0];
    let areas: Vec<f64> = sizes.iter().map(|&s| 0.5 * (s as f64).powi(2)).collect();
    let total: f64 = areas.iter().sum();
    let shape: Shape = staircase(&sizes).into();
    assert_close(shape.surface_area(), total as f32, 1e-5);
    assert_close(shape.pdf_position(), (1.0 / total) as f32, 1e-6);

    let samples = samples(&shape, 21);
    // Cells: each triangle split at its edge midpoints into 4 equal-area triangles.
    let mut counts = vec![0usize; 4 * sizes.len()];
    for s in &samples {
        assert_close(s.p.z, 0.0, 0.0);
        assert_vec3_close(s.n, Vec3::Z, 1e-6);
        assert_close(s.pdf, (1.0 / total) as f32, 1e-6);
        let k = ((s.p.x / 10.0 + 0.25).floor() as usize).min(sizes.len() - 1);
        let (x, y) = ((s.p.x - 10.0 * k as f32) / sizes[k], s.p.y / sizes[k]);
        assert!(x >= -1e-5 && y >= -1e-5 && x + y <= 1.0 + 1e-5, "sample {} outside triangle {k}", s.p);
        // Without texture coordinates uv is the barycentric pair (b1, b2) = (x, y).
        assert!((s.uv - Vec2::new(x, y)).abs().max_element() < 1e-4);
        let cell = if x > 0.5 {
            0
        } else if y > 0.5 {
            1
        } else if x + y < 0.5 {
            2
        } else {
            3
        };
        counts[4 * k + cell] += 1;
    }
    let probabilities: Vec<f64> = areas.iter().flat_map(|a| [a / total / 4.0; 4]).collect();
    let statistic = chi_square(&counts, &probabilities, samples.len());
    assert!(statistic < CHI2_999_DOF_19, "chi-square {statistic} over 20 cells: {counts:?}");

    // The mean is the area-weighted mean of the triangle centroids.
    let centroid = sizes.iter().enumerate().fold(Vec3::ZERO, |c, (k, &s)| {
        let triangle_centroid = Vec3::new(10.0 * k as f32 + s / 3.0, s / 3.0, 0.0);
        c + triangle_centroid * (areas[k] / total) as f32
    });
    assert_mean(&samples, centroid);
}

#[test]
fn sphere_sampling_is_uniform_on_the_surface() {
    let center = Vec3::new(1.0, -2.0, 0.5);
    let shape: Shape = Sphere::new(center, 2.0, &Transform::IDENTITY, false).unwrap().into();
    assert_close(shape.surface_area(), 16.0 * PI, 1e-4);
    assert_close(shape.pdf_position(), 1.0 / (16.0 * PI), 1e-7);
    let samples = samples(&shape, 22);
    // By Archimedes' theorem z is uniform: 10 bands in z × 4 sectors in φ of equal area.
    let mut counts = vec![0usize; 40];
    for s in &samples {
        let local = (s.p - center) / 2.0;
        assert_close(local.length(), 1.0, 1e-5);
        assert_vec3_close(s.n, local, 1e-5);
        assert_close(s.uv.y, local.z.clamp(-1.0, 1.0).acos() / PI, 1e-4);
        let band = (((local.z + 1.0) / 2.0 * 10.0) as usize).min(9);
        let sector = ((local.y.atan2(local.x) + PI) / TAU * 4.0) as usize % 4;
        counts[band * 4 + sector] += 1;
    }
    let statistic = chi_square(&counts, &[1.0 / 40.0; 40], samples.len());
    assert!(statistic < CHI2_999_DOF_39, "chi-square {statistic}: {counts:?}");
    assert_mean(&samples, center);

    let flipped: Shape = Sphere::new(center, 2.0, &Transform::IDENTITY, true).unwrap().into();
    let s = flipped.sample_position(Vec2::new(0.3, 0.6));
    assert_vec3_close(s.n, -(s.p - center) / 2.0, 1e-5);
}

#[test]
fn disk_sampling_is_uniform_on_a_rotated_ellipse() {
    let matrix = Mat4::from_scale_rotation_translation(
        Vec3::new(3.0, 0.5, 1.0),
        Quat::from_axis_angle(Vec3::new(1.0, 2.0, 0.5).normalize(), 0.7),
        Vec3::new(0.0, 4.0, -1.0),
    );
    let shape: Shape = Disk::new(&Transform::new(matrix).unwrap(), false).unwrap().into();
    assert_close(shape.surface_area(), PI * 1.5, 1e-5);
    assert_close(shape.pdf_position(), 1.0 / (PI * 1.5), 1e-6);
    let samples = samples(&shape, 23);
    let to_object = matrix.inverse();
    // 10 rings of equal area (uniform in r²) × 4 sectors.
    let mut counts = vec![0usize; 40];
    for s in &samples {
        let local = to_object.transform_point3(s.p);
        assert_close(local.z, 0.0, 1e-5);
        let r = local.truncate().length();
        assert!(r <= 1.0 + 1e-5);
        assert_close(s.uv.x, r, 1e-5);
        let ring = ((r * r * 10.0) as usize).min(9);
        let sector = ((local.y.atan2(local.x) + PI) / TAU * 4.0) as usize % 4;
        counts[ring * 4 + sector] += 1;
    }
    let statistic = chi_square(&counts, &[1.0 / 40.0; 40], samples.len());
    assert!(statistic < CHI2_999_DOF_39, "chi-square {statistic}: {counts:?}");
    assert_mean(&samples, Vec3::new(0.0, 4.0, -1.0));
    let n = samples[0].n;
    assert_vec3_close(
        n,
        Mat4::from_quat(Quat::from_axis_angle(Vec3::new(1.0, 2.0, 0.5).normalize(), 0.7)).transform_vector3(Vec3::Z),
        1e-5,
    );
}

#[test]
fn generated_meshes_have_their_analytic_areas() {
    let scale = Transform::new(Mat4::from_scale(Vec3::new(2.0, 3.0, 0.5))).unwrap();
    let rect: Shape = rectangle(&scale, false).unwrap().into();
    assert_close(rect.surface_area(), 4.0 * 6.0, 1e-4);
    let cube: Shape = cube(&scale, false).unwrap().into();
    // Faces 2(2·3 + 3·0.5 + 2·0.5) with each side doubled.
    assert_close(cube.surface_area(), 8.0 * (6.0 + 1.5 + 1.0), 1e-4);
    assert_close(cube.pdf_position(), 1.0 / 68.0, 1e-7);
    let mut rng = Rng::new(24);
    for _ in 0..1000 {
        let s = cube.sample_position(rng.vec2());
        let local = s.p / Vec3::new(2.0, 3.0, 0.5);
        assert_close(local.abs().max_element(), 1.0, 1e-5);
        // The sampled normal is the face's outward normal.
        assert_close(s.n.dot(local), local.abs().max_element(), 1e-5);
    }
}

/// A mesh with face normals samples its triangles' geometric normals, and one with texture
/// coordinates interpolates them.
#[test]
fn mesh_samples_take_face_normals_and_texture_coordinates() {
    // Triangle 0 lies in z = 0; all of triangle 1 but an edge has z > 0.
    let data = MeshData {
        positions: vec![Vec3::ZERO, Vec3::X * 2.0, Vec3::Y, Vec3::X * 5.0, Vec3::new(5.0, 0.0, 1.0)],
        normals: None,
        uvs: Some(vec![Vec2::ZERO, Vec2::X, Vec2::Y, Vec2::ZERO, Vec2::ONE]),
        triangles: vec![[0, 1, 2], [3, 2, 4]],
    };
    let options = MeshOptions { face_normals: true, ..MeshOptions::default() };
    let mesh = TriangleMesh::new(data, &Transform::IDENTITY, options).unwrap();
    let shape: Shape = mesh.clone().into();
    let mut rng = Rng::new(7);
    for _ in 0..200 {
        let s = shape.sample_position(rng.vec2());
        let [p0, p1, p2] = mesh.triangle_positions(if s.p.z > 0.0 { 1 } else { 0 });
        assert_eq!(s.n, (p1 - p0).cross(p2 - p0).normalize());
        if s.p.z == 0.0 {
            assert!((s.uv - Vec2::new(s.p.x / 2.0, s.p.y)).abs().max_element() < 1e-5);
        }
    }
}

/// A rectangle maps the sample affinely onto itself as Mitsuba's analytic rectangle does: the
/// point is `to_world((2u − 1, 2v − 1, 0))`, uv is the sample, and the normal is the one its
/// triangles are hit with, also when mirrored or flipped. Without area it has zero density.
#[test]
fn rectangles_sample_their_parallelogram_directly() {
    let sheared =
        Mat4::from_cols_array(&[2.0, 0.5, 0.0, 0.0, 0.3, 1.5, 0.4, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, -2.0, 3.0, 1.0]);
    let mirrored = Mat4::from_scale(Vec3::new(-1.0, 2.0, 1.0));
    let mut rng = Rng::new(25);
    for (matrix, flip) in [(sheared, false), (sheared, true), (mirrored, false), (mirrored, true)] {
        let to_world = Transform::new(matrix).unwrap();
        let mesh = rectangle(&to_world, flip).unwrap();
        let [p0, p1, p2] = mesh.triangle_positions(1);
        let hit_normal = (p1 - p0).cross(p2 - p0).normalize();
        let shape: Shape = mesh.into();
        for _ in 0..100 {
            let sample = rng.vec2();
            let s = shape.sample_position(sample);
            assert_vec3_close(s.p, to_world.point(Vec3::new(2.0 * sample.x - 1.0, 2.0 * sample.y - 1.0, 0.0)), 1e-5);
            assert_eq!(s.uv, sample);
            assert_vec3_close(s.n, hit_normal, 1e-6);
            assert_eq!(s.pdf, shape.pdf_position());
        }
    }
    // An invertible transform whose rectangle's area underflows f32.
    let tiny = Transform::new(Mat4::from_scale(Vec3::new(1e-25, 1e-25, 1e30))).unwrap();
    assert_eq!(Shape::from(rectangle(&tiny, false).unwrap()).sample_position(Vec2::new(0.5, 0.5)).pdf, 0.0);
}

/// `sample_positions` gives every lane of its mask the bits of `sample_position` for the lane's
/// point, for rectangles (whose lanes are computed together), other meshes, spheres and disks,
/// and zeros elsewhere for all but rectangles.
#[test]
fn lanes_sample_the_bits_of_single_samples() {
    let sheared =
        Mat4::from_cols_array(&[2.0, 0.5, 0.0, 0.0, 0.3, 1.5, 0.4, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, -2.0, 3.0, 1.0]);
    let to_world = Transform::new(sheared).unwrap();
    let shapes: [Shape; 4] = [
        rectangle(&to_world, false).unwrap().into(),
        staircase(&[1.0, 2.0, 0.5]).into(),
        Sphere::new(Vec3::new(0.5, 1.0, -1.0), 2.0, &Transform::IDENTITY, false).unwrap().into(),
        Disk::new(&to_world, false).unwrap().into(),
    ];
    let mut rng = Rng::new(31);
    for (k, shape) in shapes.iter().enumerate() {
        for lanes in [0b1111_1111u32, 0b1010_0110] {
            let points: [Vec2; 8] = std::array::from_fn(|_| rng.vec2());
            let (u, v) = (points.map(|p| p.x), points.map(|p| p.y));
            let samples = shape.sample_positions(&u, &v, lanes);
            for (lane, &point) in points.iter().enumerate() {
                if lanes & (1 << lane) != 0 {
                    let single = shape.sample_position(point);
                    let bits = |s: PositionSample| {
                        [s.p.to_array(), s.n.to_array()].concat().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                    };
                    assert_eq!(bits(samples.lane(lane)), bits(single), "shape {k}, lane {lane}");
                    assert_eq!(
                        samples.lane(lane).uv.to_array().map(f32::to_bits),
                        single.uv.to_array().map(f32::to_bits)
                    );
                    assert_eq!(samples.lane(lane).pdf.to_bits(), single.pdf.to_bits());
                } else if k > 0 {
                    assert_eq!(samples.lane(lane).pdf, 0.0, "shape {k}, lane {lane} outside the mask");
                }
            }
        }
    }
}

#[test]
fn shapes_without_area_sample_with_zero_density() {
    let degenerate = MeshData {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::X * 2.0],
        normals: None,
        uvs: None,
        triangles: vec![[0, 1, 2]],
    };
    for data in [degenerate, MeshData::default()] {
        let shape: Shape = TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap().into();
        assert_eq!(shape.surface_area(), 0.0);
        assert_eq!(shape.pdf_position(), 0.0);
        assert_eq!(shape.sample_position(Vec2::new(0.5, 0.5)).pdf, 0.0);
    }
}

#[test]
fn discrete_distribution_picks_by_weight_and_reuses_the_sample() {
    let d = DiscreteDistribution::new([1.0, 0.0, 3.0, -2.0, f32::NAN, 4.0]);
    assert_eq!(d.len(), 6);
    assert_eq!(d.total(), 8.0);
    let pmf: Vec<f32> = (0..7).map(|i| d.pmf(i)).collect();
    assert_eq!(pmf, [0.125, 0.0, 0.375, 0.0, 0.0, 0.5, 0.0]);
    assert_eq!(d.sample_reuse(0.0), Some((0, 0.0)));
    assert_eq!(d.sample_reuse(0.0625), Some((0, 0.5)));
    assert_eq!(d.sample_reuse(0.125), Some((2, 0.0)));
    assert_eq!(d.sample_reuse(0.3125), Some((2, 0.5)));
    assert_eq!(d.sample_reuse(0.75), Some((5, 0.5)));
    let (last, reused) = d.sample_reuse(1.0).unwrap();
    assert_eq!(last, 5);
    assert!(reused < 1.0);
    // Zero-weight entries at the end are never chosen.
    let trailing = DiscreteDistribution::new([2.0, 0.0]);
    assert_eq!(trailing.sample_reuse(1.0).map(|s| s.0), Some(0));
    assert_eq!(DiscreteDistribution::new([0.0, 0.0]).sample_reuse(0.5), None);
    assert_eq!(DiscreteDistribution::new([]).sample_reuse(0.5), None);
}
