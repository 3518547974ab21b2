//! Watertight ray/triangle intersection (Woop, Benthin and Wald 2013, "Watertight Ray/Triangle
//! Intersection", JCGT 2(1)). The ray is mapped to the +z axis by a permutation and a shear;
//! the edge functions of the projected triangle are then evaluated in the same way for every
//! triangle sharing an edge, so a ray through a shared edge or vertex hits at least one of them.
//! Barycentrics follow Mitsuba's `prim_uv`: `b1`, `b2` weight the second and third vertex.

use wide::f32x4;

use crate::math::{Ray, Vec3};

/// For the axis `kz`, the two other axes in cyclic order.
const NEXT_AXIS: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// The per-ray part of the test: axis permutation and shear, computed once per ray.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayShear {
    /// The origin's coordinates along `kx`, `ky` and `kz`, then the shear `sx`, `sy` and the
    /// scale `sz`, each broadcast to a packet's lanes once per ray. (Kept as scalars, they were
    /// stored in pieces and loaded back as vectors that straddled those pieces, which the
    /// processor cannot forward from its store buffer: the stall took about a twelfth of a
    /// shadow ray's time.)
    origin: [f32x4; 3],
    shear: [f32x4; 3],
    kx: usize,
    ky: usize,
    kz: usize,
}

impl RayShear {
    // Inlined into the traversal: as a call, it cost about 20 instructions more per ray.
    #[inline(always)]
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
        let o = ray.o.to_array();
        // sx = d[kx] / d[kz], sy = d[ky] / d[kz] and sz = 1 / d[kz] in one division.
        let [sx, sy, sz, _] = (f32x4::from([d[kx], d[ky], 1.0, 1.0]) / f32x4::splat(d[kz])).to_array();
        RayShear { origin: [o[kx], o[ky], o[kz]].map(f32x4::splat), shear: [sx, sy, sz].map(f32x4::splat), kx, ky, kz }
    }

    /// `origin` or `shear` as the three scalars they broadcast.
    fn scalars(v: &[f32x4; 3]) -> [f32; 3] {
        v.map(|x| x.as_array()[0])
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
    let [ox, oy, oz] = RayShear::scalars(&shear.origin);
    let [sx, sy, sz] = RayShear::scalars(&shear.shear);
    let (kx, ky, kz) = (shear.kx, shear.ky, shear.kz);
    // Each vertex relative to the origin, permuted and sheared; indexing the vertices in place
    // (rather than copies) keeps this to one load per coordinate.
    let project = |p: &Vec3| {
        let p: &[f32; 3] = p.as_ref();
        let z = p[kz] - oz;
        (p[kx] - ox - sx * z, p[ky] - oy - sy * z, z)
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
        [u, v, w] = edge_functions_exact([ax, ay, bx, by, cx, cy]);
    }
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    if det == 0.0 {
        return None;
    }
    let scaled_t = sz * (u * az + v * bz + w * cz);
    let inv_det = 1.0 / det;
    let t = scaled_t * inv_det;
    // Also rejects NaN, e.g. from a zero direction.
    if !(t >= 0.0 && t <= maxt) {
        return None;
    }
    Some(TriangleHit { t, b1: v * inv_det, b2: w * inv_det })
}

/// Triangles per [`TrianglePacket`].
pub(crate) const PACKET: usize = 4;

/// Up to [`PACKET`] triangles side by side, coordinate `axis` of vertex `v` of slot `i` at
/// `vertices[v][axis][i]`, so that [`intersect_packet`] tests one ray against all of them with
/// the same vector instructions. A slot without a triangle holds NaN, which no ray hits.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub(crate) struct TrianglePacket {
    pub vertices: [[[f32; PACKET]; 3]; 3],
}

impl TrianglePacket {
    pub(crate) const EMPTY: TrianglePacket = TrianglePacket { vertices: [[[f32::NAN; PACKET]; 3]; 3] };

    pub(crate) fn set(&mut self, slot: usize, triangle: &[Vec3; 3]) {
        for (v, p) in triangle.iter().enumerate() {
            for axis in 0..3 {
                self.vertices[v][axis][slot] = p[axis];
            }
        }
    }
}

/// What [`intersect_packet`] finds: for each slot, the distance and barycentrics, valid where
/// bit `slot` of `hit` is set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PacketHits {
    pub t: [f32; PACKET],
    pub b1: [f32; PACKET],
    pub b2: [f32; PACKET],
    pub hit: u32,
}

/// [`intersect_triangle`] for every slot of `packet` at once, with the same arithmetic in the
/// same order, so each slot's answer is bit for bit the one-triangle answer.
#[inline(always)]
pub(crate) fn intersect_packet(shear: &RayShear, packet: &TrianglePacket, maxt: f32) -> PacketHits {
    let (ax, ay, az) = project(shear, &packet.vertices[0]);
    let (bx, by, bz) = project(shear, &packet.vertices[1]);
    let (cx, cy, cz) = project(shear, &packet.vertices[2]);
    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    let zero = f32x4::ZERO;
    if (u.simd_eq(zero) | v.simd_eq(zero) | w.simd_eq(zero)).any() {
        (u, v, w) = edge_functions_f64([ax, ay, bx, by, cx, cy].map(f32x4::to_array), [u, v, w].map(f32x4::to_array));
    }
    let outside =
        (u.simd_lt(zero) | v.simd_lt(zero) | w.simd_lt(zero)) & (u.simd_gt(zero) | v.simd_gt(zero) | w.simd_gt(zero));
    let det = u + v + w;
    let scaled_t = shear.shear[2] * (u * az + v * bz + w * cz);
    let inv_det = f32x4::ONE / det;
    let t = scaled_t * inv_det;
    // `t >= 0 && t <= maxt` also rejects NaN, e.g. from an empty slot or a zero direction.
    let hit = !outside & det.simd_ne(zero) & t.simd_ge(zero) & t.simd_le(f32x4::splat(maxt));
    PacketHits { t: t.to_array(), b1: (v * inv_det).to_array(), b2: (w * inv_det).to_array(), hit: hit.to_bitmask() }
}

/// The vertex `p` of each slot relative to the ray origin, permuted and sheared.
#[inline(always)]
fn project(shear: &RayShear, p: &[[f32; PACKET]; 3]) -> (f32x4, f32x4, f32x4) {
    let [ox, oy, oz] = shear.origin;
    let [sx, sy, _] = shear.shear;
    let z = f32x4::from(p[shear.kz]) - oz;
    let x = f32x4::from(p[shear.kx]) - ox - sx * z;
    let y = f32x4::from(p[shear.ky]) - oy - sy * z;
    (x, y, z)
}

/// The edge functions `uvw` again, in double precision for the slots where one of them
/// rounded to zero (the paper's fallback; rare, so it runs slot by slot).
#[cold]
fn edge_functions_f64(projected: [[f32; PACKET]; 6], uvw: [[f32; PACKET]; 3]) -> (f32x4, f32x4, f32x4) {
    let [mut u, mut v, mut w] = uvw;
    for i in 0..PACKET {
        if u[i] == 0.0 || v[i] == 0.0 || w[i] == 0.0 {
            [u[i], v[i], w[i]] = edge_functions_exact(projected.map(|c| c[i]));
        }
    }
    (u.into(), v.into(), w.into())
}

/// The edge functions `uvw` of the projected vertices `[ax, ay, bx, by, cx, cy]` in double
/// precision, which decides the side of an edge where single precision rounds to zero.
#[cold]
pub(crate) fn edge_functions_exact(projected: [f32; 6]) -> [f32; 3] {
    let [ax, ay, bx, by, cx, cy] = projected.map(f64::from);
    [(cx * by - cy * bx) as f32, (ax * cy - ay * cx) as f32, (bx * ay - by * ax) as f32]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator, so the cases are the same on every run.
    fn uniform(state: &mut u64) -> f32 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Each slot of the packet test answers exactly as the one-triangle test, on random
    /// triangles and rays and on rays through shared vertices and edges (where an edge function
    /// is zero and the double-precision fallback decides), and empty slots are never hit.
    #[test]
    fn packet_slots_equal_single_triangle_tests() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |scale: f32| (uniform(&mut state) * 2.0 - 1.0) * scale;
        let (mut hits_seen, mut edge_hits) = (0, 0);
        for case in 0..20_000 {
            let grid = case % 2 == 0;
            // Half the cases on an integer grid with axis-aligned rays: many rays pass
            // exactly through vertices and edges.
            let mut point = |scale: f32| {
                let p = Vec3::new(next(scale), next(scale), next(scale));
                if grid {
                    p.round()
                } else {
                    p
                }
            };
            let triangles: Vec<[Vec3; 3]> = (0..3).map(|_| [point(2.0), point(2.0), point(2.0)]).collect();
            let origin = point(3.0);
            let direction =
                if grid { [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z][case / 2 % 6] } else { point(1.0) };
            let maxt = if case % 3 == 0 { 2.5 } else { f32::INFINITY };
            let shear = RayShear::new(&Ray::with_maxt(origin, direction, maxt));
            let mut packet = TrianglePacket::EMPTY;
            for (slot, triangle) in triangles.iter().enumerate() {
                packet.set(slot, triangle);
            }
            let hits = intersect_packet(&shear, &packet, maxt);
            assert_eq!(hits.hit & 0b1000, 0, "the empty slot was hit");
            for (slot, triangle) in triangles.iter().enumerate() {
                let single = intersect_triangle(&shear, triangle, maxt);
                let packed = (hits.hit & (1 << slot) != 0).then(|| TriangleHit {
                    t: hits.t[slot],
                    b1: hits.b1[slot],
                    b2: hits.b2[slot],
                });
                let bits = |h: Option<TriangleHit>| h.map(|h| [h.t, h.b1, h.b2].map(f32::to_bits));
                assert_eq!(bits(packed), bits(single), "slot {slot} of case {case}");
                hits_seen += single.is_some() as usize;
                edge_hits += single.is_some_and(|h| h.b1 == 0.0 || h.b2 == 0.0) as usize;
            }
        }
        // The cases must reach what they are meant to test.
        assert!(hits_seen > 1000 && edge_hits > 100, "{hits_seen} hits, {edge_hits} on an edge");
    }
}
