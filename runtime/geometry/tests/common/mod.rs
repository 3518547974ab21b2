//! Helpers shared by the integration tests: a seeded generator and float comparisons.

#![allow(dead_code)] // each test crate uses a different subset

use drs_geometry::math::{Vec2, Vec3};

/// SplitMix64: a small deterministic generator, so that statistical tests are reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    pub fn vec2(&mut self) -> Vec2 {
        Vec2::new(self.f32(), self.f32())
    }

    pub fn vec3_in(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }

    pub fn unit_vector(&mut self) -> Vec3 {
        drs_geometry::square_to_uniform_sphere(self.vec2())
    }
}

pub fn assert_close(actual: f32, expected: f32, tolerance: f32) {
    assert!((actual - expected).abs() <= tolerance, "{actual} differs from {expected} by more than {tolerance}");
}

pub fn assert_vec3_close(actual: Vec3, expected: Vec3, tolerance: f32) {
    assert!(actual.abs_diff_eq(expected, tolerance), "{actual} differs from {expected} by more than {tolerance}");
}

pub fn assert_vec2_close(actual: Vec2, expected: Vec2, tolerance: f32) {
    assert!(actual.abs_diff_eq(expected, tolerance), "{actual} differs from {expected} by more than {tolerance}");
}

/// A UV sphere mesh of `rings × segments` quads (poles as triangle fans), without normals.
pub fn uv_sphere_mesh(center: Vec3, radius: f32, rings: u32, segments: u32) -> drs_geometry::MeshData {
    use std::f32::consts::{PI, TAU};
    let mut data = drs_geometry::MeshData::default();
    for ring in 0..=rings {
        let theta = PI * ring as f32 / rings as f32;
        for segment in 0..segments {
            let phi = TAU * segment as f32 / segments as f32;
            let direction = Vec3::new(theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos());
            data.positions.push(center + direction * radius);
        }
    }
    let index = |ring: u32, segment: u32| ring * segments + segment % segments;
    for ring in 0..rings {
        for segment in 0..segments {
            let (a, b) = (index(ring, segment), index(ring, segment + 1));
            let (c, d) = (index(ring + 1, segment), index(ring + 1, segment + 1));
            if ring > 0 {
                data.triangles.push([a, c, b]);
            }
            if ring + 1 < rings {
                data.triangles.push([b, c, d]);
            }
        }
    }
    data
}
