//! Watertight ray/triangle intersection (Woop, Benthin and Wald 2013, "Watertight Ray/Triangle
//! Intersection", JCGT 2(1)). The ray is mapped to the +z axis by a permutation and a shear;
//! the edge functions of the projected triangle are then evaluated in the same way for every
//! triangle sharing an edge, so a ray through a shared edge or vertex hits at least one of them.
//! Barycentrics follow Mitsuba's `prim_uv`: `b1`, `b2` weight the second and third vertex.

use crate::math::{Ray, Vec3};

/// For the axis `kz`, the two other axes in cyclic order.
const NEXT_AXIS: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// The per-ray part of the test: axis permutation and shear, computed once per ray.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayShear {
    origin: [f32; 3],
    kx: usize,
    ky: usize,
    kz: usize,
    sx: f32,
    sy: f32,
    sz: f32,
}

impl RayShear {
    pub(crate) fn new(ray: &Ray) -> RayShear {
        let d = ray.d.to_array();
        let a = ray.d.abs();
        // The axis of the largest component, computed without branches: ray directions are
        // as good as random, so a branch here would mispredict for every other ray.
        let x_largest = (a.x >= a.y) & (a.x >= a.z);
        let y_over_z = a.y >= a.z;
        let kz = (!x_largest as usize) * (2 - y_over_z as usize);
        // Keep the winding of the projected triangle independent of the ray's direction:
        // (kx, ky) follow kz cyclically, swapped when the ray goes towards -kz.
        let swap = (d[kz] < 0.0) as usize;
        let kx = NEXT_AXIS[kz][swap];
        let ky = NEXT_AXIS[kz][1 - swap];
        RayShear { origin: ray.o.to_array(), kx, ky, kz, sx: d[kx] / d[kz], sy: d[ky] / d[kz], sz: 1.0 / d[kz] }
    }
}

/// A hit at distance `t` with barycentrics `(b1, b2)` of the second and third vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TriangleHit {
    pub t: f32,
    pub b1: f32,
    pub b2: f32,
}

/// The hit of the ray described by `shear` with the triangle `vertices` within `[0, maxt]`,
/// both sides counting.
#[inline]
pub(crate) fn intersect_triangle(shear: &RayShear, vertices: &[Vec3; 3], maxt: f32) -> Option<TriangleHit> {
    let o = shear.origin;
    let (kx, ky, kz) = (shear.kx, shear.ky, shear.kz);
    // Each vertex relative to the origin, permuted and sheared; indexing the vertices in place
    // (rather than copies) keeps this to one load per coordinate.
    let project = |p: &Vec3| {
        let p: &[f32; 3] = p.as_ref();
        let z = p[kz] - o[kz];
        (p[kx] - o[kx] - shear.sx * z, p[ky] - o[ky] - shear.sy * z, z)
    };
    let (ax, ay, az) = project(&vertices[0]);
    let (bx, by, bz) = project(&vertices[1]);
    let (cx, cy, cz) = project(&vertices[2]);

    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    // An edge function that rounds to zero is recomputed exactly enough to decide on which
    // side of the edge the ray passes (the paper's double-precision fallback).
    if u == 0.0 || v == 0.0 || w == 0.0 {
        let (ax, ay, bx, by, cx, cy) = (ax as f64, ay as f64, bx as f64, by as f64, cx as f64, cy as f64);
        u = (cx * by - cy * bx) as f32;
        v = (ax * cy - ay * cx) as f32;
        w = (bx * ay - by * ax) as f32;
    }
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    if det == 0.0 {
        return None;
    }
    let scaled_t = shear.sz * (u * az + v * bz + w * cz);
    let inv_det = 1.0 / det;
    let t = scaled_t * inv_det;
    // Also rejects NaN, e.g. from a zero direction.
    if !(t >= 0.0 && t <= maxt) {
        return None;
    }
    Some(TriangleHit { t, b1: v * inv_det, b2: w * inv_det })
}
