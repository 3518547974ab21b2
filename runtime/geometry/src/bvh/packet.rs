//! Packet traversal: the rays of a kernel's lane group (up to 16) go through the tree
//! together, one lane of an AVX-512 register per ray (Wald, Slusallek, Benthin and Wagner
//! 2001, "Interactive rendering with coherent ray tracing"). A node's children are tested
//! against all of the packet's rays at once, and each leaf triangle too. Every stack entry
//! carries the mask of the rays that entered it and their entry distances, so that rays that
//! have found something nearer drop out. Once a subtree holds at most [`SINGLE_RAY_BELOW`]
//! rays, they finish it one at a time with the single-ray traversal (Benthin, Wald, Woop,
//! Ernst and Mark 2012, "Combining single and packet-ray tracing for arbitrary ray
//! distributions on the Intel MIC architecture"): packets pay off while many rays share a
//! node, single rays once few do.
//!
//! The answers are the single-ray traversal's, to the bit: the box tests are as
//! conservative, every triangle test is the watertight one with the same operations in the
//! same order (`Rays::intersect_triangle`), and of hits at equal distance the lowest
//! primitive index wins whatever the visiting order.
//!
//! Processors without AVX-512 (and other architectures) trace the rays one at a time.

use super::traverse::set_bits;
use super::Bvh;
use crate::interaction::Hit;
use crate::math::{Ray, Vec3};
use crate::shape::Shape;

/// Rays per packet: the lanes of one AVX-512 register.
pub const PACKET_RAYS: usize = 16;

/// Up to 16 rays side by side, as a kernel's lane group holds them: coordinate `axis` of lane
/// `l`'s origin at `o[axis][l]`, of its direction at `d[axis][l]`. Lanes from `lanes` on are
/// not rays.
#[derive(Clone, Copy, Debug)]
pub struct RayPacket {
    pub o: [[f32; PACKET_RAYS]; 3],
    pub d: [[f32; PACKET_RAYS]; 3],
    pub maxt: [f32; PACKET_RAYS],
    pub lanes: usize,
}

impl RayPacket {
    /// A packet of `lanes` rays whose values are all still to be written.
    pub fn new(lanes: usize) -> RayPacket {
        assert!(lanes <= PACKET_RAYS, "at most {PACKET_RAYS} rays per packet");
        RayPacket { o: [[0.0; PACKET_RAYS]; 3], d: [[0.0; PACKET_RAYS]; 3], maxt: [0.0; PACKET_RAYS], lanes }
    }

    /// The packet of `rays` (at most 16).
    pub fn from_rays(rays: &[Ray]) -> RayPacket {
        let mut packet = RayPacket::new(rays.len());
        for (l, ray) in rays.iter().enumerate() {
            for axis in 0..3 {
                packet.o[axis][l] = ray.o[axis];
                packet.d[axis][l] = ray.d[axis];
            }
            packet.maxt[l] = ray.maxt;
        }
        packet
    }

    /// Lane `l`'s ray.
    pub fn ray(&self, l: usize) -> Ray {
        let vec3 = |c: &[[f32; PACKET_RAYS]; 3]| Vec3::new(c[0][l], c[1][l], c[2][l]);
        Ray::with_maxt(vec3(&self.o), vec3(&self.d), self.maxt[l])
    }

    /// The lanes of `active` that hold rays.
    fn rays_of(&self, active: u32) -> u32 {
        if self.lanes == 0 {
            0
        } else {
            active & (u32::MAX >> (32 - self.lanes))
        }
    }
}

impl Bvh {
    /// [`Bvh::intersect`] of lane `l`'s ray for each lane `l` in `active`, into `hits[l]`;
    /// other lanes get `None`.
    pub(crate) fn intersect_packet(
        &self,
        shapes: &[Shape],
        rays: &RayPacket,
        active: u32,
        hits: &mut [Option<Hit>; PACKET_RAYS],
    ) {
        let active = rays.rays_of(active);
        #[cfg(target_arch = "x86_64")]
        if worth_a_packet(active, CLOSEST_HIT_PACKET_MIN_RAYS) {
            // SAFETY: `worth_a_packet` has checked that the processor has AVX-512.
            unsafe { avx512::closest(self, shapes, rays, active, hits) };
            return;
        }
        for (l, hit) in hits.iter_mut().enumerate() {
            *hit = if active & (1 << l) != 0 { self.intersect(shapes, &rays.ray(l)) } else { None };
        }
    }

    /// [`Bvh::ray_test`] of lane `l`'s ray for each lane `l` in `active`, as the mask of the
    /// lanes whose rays hit something.
    pub(crate) fn ray_test_packet(&self, shapes: &[Shape], rays: &RayPacket, active: u32) -> u32 {
        let active = rays.rays_of(active);
        #[cfg(target_arch = "x86_64")]
        if worth_a_packet(active, ANY_HIT_PACKET_MIN_RAYS) {
            // SAFETY: `worth_a_packet` has checked that the processor has AVX-512.
            return unsafe { avx512::any_hit(self, shapes, rays, active) };
        }
        let mut hit = 0;
        for l in set_bits(active) {
            if self.ray_test(shapes, &rays.ray(l)) {
                hit |= 1 << l;
            }
        }
        hit
    }
}

/// Whether `active` holds enough rays (at least `min_rays`) for a packet, and the processor
/// AVX-512. A packet costs about the same whatever number of rays it holds.
#[cfg(target_arch = "x86_64")]
fn worth_a_packet(active: u32, min_rays: u32) -> bool {
    active.count_ones() >= min_rays && std::arch::is_x86_feature_detected!("avx512f")
}

/// The fewest active rays [`Geometry::intersect_packet`](crate::Geometry::intersect_packet)
/// traces as a packet: only full ones. On the BVH benchmark's Cornell box a full packet of
/// closest-hit rays takes 0.8 times the time of its rays traced singly, and path replay, whose
/// adjoint pass runs partly filled groups, was slower with packets from 12 rays on. Callers
/// with fewer rays can skip building a [`RayPacket`].
pub const CLOSEST_HIT_PACKET_MIN_RAYS: u32 = 16;

/// The fewest active rays [`Geometry::ray_test_packet`](crate::Geometry::ray_test_packet)
/// traces as a packet: on the Cornell box a full packet of any-hit rays takes about half the
/// time of its rays traced singly. (Groups of 4 lanes, as Cranelift's kernels have, rendered
/// 20–35% slower with packets.)
pub const ANY_HIT_PACKET_MIN_RAYS: u32 = 10;

/// Subtrees entered by this many of a packet's rays or fewer are finished ray by ray. (On the
/// BVH benchmark's Cornell box and camera rays, 2 was faster than 0, 1, 3 and 5; in renders,
/// whose later bounces' rays are incoherent, 1 and 0 were 2% faster than 2, and 3 and 4 3% and
/// 7% slower: docs/benchmarks.md, session 37.)
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const SINGLE_RAY_BELOW: u32 = 1;

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::{RayPacket, PACKET_RAYS, SINGLE_RAY_BELOW};
    use crate::bvh::traverse::{intersect_analytic, set_bits, Closest, ROBUST_FAR_SCALE, STACK_SIZE};
    use crate::bvh::{Bvh, LeafPacket, Node, NodeRef, WIDTH};
    use crate::interaction::Hit;
    use crate::math::Vec2;
    use crate::shape::Shape;
    use crate::triangle::{edge_functions_exact, TrianglePacket, PACKET};

    type Mask = __mmask16;
    const LANES: usize = PACKET_RAYS;

    /// The rays of a packet, one lane each, with what the box and triangle tests need. Lanes
    /// without a ray to trace hold a copy of one that has, so that they compute harmless
    /// values; their results are ignored.
    struct Rays<'a> {
        rays: &'a RayPacket,
        origin: [__m512; 3],
        /// Reciprocal direction, finite as in `RayBoxes`.
        inv_dir: [__m512; 3],
        /// Lanes whose direction points towards − on each axis.
        negative: [Mask; 3],
        /// The watertight test's permutation per lane (`RayShear`): whether axis `kx`, `ky`,
        /// `kz` is x, and whether it is y; the origin along them; the shear `sx`, `sy`, `sz`.
        axis_is_x: [Mask; 3],
        axis_is_y: [Mask; 3],
        sheared_origin: [__m512; 3],
        shear: [__m512; 3],
    }

    impl<'a> Rays<'a> {
        /// The rays of the lanes in `active` (lanes that hold rays) that can hit anything
        /// (finite, `maxt` neither negative nor NaN, as `traverse` requires), and the mask of
        /// those lanes.
        #[target_feature(enable = "avx512f")]
        fn new(rays: &'a RayPacket, active: u32) -> (Rays<'a>, Mask) {
            let mut o = [load(&rays.o[0]), load(&rays.o[1]), load(&rays.o[2])];
            let mut d = [load(&rays.d[0]), load(&rays.d[1]), load(&rays.d[2])];
            let infinity = _mm512_set1_ps(f32::INFINITY);
            let sign = _mm512_set1_epi32(i32::MIN);
            let abs = |x: __m512| _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
            let finite = |x: __m512| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(abs(x), infinity);
            let zero = _mm512_setzero_ps();
            let live = (active as Mask)
                & finite(o[0])
                & finite(o[1])
                & finite(o[2])
                & finite(d[0])
                & finite(d[1])
                & finite(d[2])
                & _mm512_cmp_ps_mask::<_CMP_GE_OQ>(load(&rays.maxt), zero);
            // Lanes without a ray to trace take the first live lane's.
            let stand_in = _mm512_set1_epi32(live.trailing_zeros().min(LANES as u32 - 1) as i32);
            for v in o.iter_mut().chain(d.iter_mut()) {
                *v = _mm512_mask_blend_ps(live, _mm512_permutexvar_ps(stand_in, *v), *v);
            }
            // As `RayBoxes::new`: where 1/d is not finite, f32::MAX with the sign of d.
            let mut inv_dir = [zero; 3];
            let mut negative = [0; 3];
            for axis in 0..3 {
                let inv = _mm512_div_ps(_mm512_set1_ps(1.0), d[axis]);
                let huge = _mm512_castsi512_ps(_mm512_or_si512(
                    _mm512_and_si512(sign, _mm512_castps_si512(d[axis])),
                    _mm512_castps_si512(_mm512_set1_ps(f32::MAX)),
                ));
                inv_dir[axis] = _mm512_mask_blend_ps(finite(inv), huge, inv);
                negative[axis] = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(inv_dir[axis], zero);
            }
            // As `RayShear::new`: kz is the axis of the largest |d|; (kx, ky) follow it
            // cyclically, swapped when d points towards −kz.
            let [ax, ay, az] = [abs(d[0]), abs(d[1]), abs(d[2])];
            let ge = |p: __m512, q: __m512| _mm512_cmp_ps_mask::<_CMP_GE_OQ>(p, q);
            let kz_x = ge(ax, ay) & ge(ax, az);
            let kz_y = !kz_x & ge(ay, az);
            let kz_z = !kz_x & !kz_y;
            let pick = |is_x: Mask, is_y: Mask, v: &[__m512; 3]| {
                _mm512_mask_blend_ps(is_x, _mm512_mask_blend_ps(is_y, v[2], v[1]), v[0])
            };
            let d_z = pick(kz_x, kz_y, &d);
            let swap = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(d_z, zero);
            let axis_is_x = [(kz_y & swap) | (kz_z & !swap), (kz_y & !swap) | (kz_z & swap), kz_x];
            let axis_is_y = [(kz_x & !swap) | (kz_z & swap), (kz_x & swap) | (kz_z & !swap), kz_y];
            let mut sheared_origin = [zero; 3];
            for i in 0..3 {
                sheared_origin[i] = pick(axis_is_x[i], axis_is_y[i], &o);
            }
            let shear = [
                _mm512_div_ps(pick(axis_is_x[0], axis_is_y[0], &d), d_z),
                _mm512_div_ps(pick(axis_is_x[1], axis_is_y[1], &d), d_z),
                _mm512_div_ps(_mm512_set1_ps(1.0), d_z),
            ];
            let packet = Rays { rays, origin: o, inv_dir, negative, axis_is_x, axis_is_y, sheared_origin, shear };
            (packet, live)
        }

        /// The lanes whose rays enter child `c` of `node` within `[0, maxt]`, and their entry
        /// distances: the slab test of `RayBoxes::children`, lane by lane.
        #[target_feature(enable = "avx512f")]
        fn enter(&self, node: &Node, c: usize, maxt: __m512) -> (__m512, Mask) {
            let mut t_near = _mm512_setzero_ps();
            let mut t_far = _mm512_set1_ps(f32::INFINITY);
            for axis in 0..3 {
                let min = _mm512_set1_ps(node.bounds[axis][0][c]);
                let max = _mm512_set1_ps(node.bounds[axis][1][c]);
                let near = _mm512_mask_blend_ps(self.negative[axis], min, max);
                let far = _mm512_mask_blend_ps(self.negative[axis], max, min);
                let (o, inv) = (self.origin[axis], self.inv_dir[axis]);
                t_near = _mm512_max_ps(t_near, _mm512_mul_ps(_mm512_sub_ps(near, o), inv));
                t_far = _mm512_min_ps(t_far, _mm512_mul_ps(_mm512_sub_ps(far, o), inv));
            }
            let far = _mm512_min_ps(_mm512_mul_ps(t_far, _mm512_set1_ps(ROBUST_FAR_SCALE)), maxt);
            (t_near, _mm512_cmp_ps_mask::<_CMP_LE_OQ>(t_near, far))
        }

        /// Triangle `slot` of `triangles` against every lane: the watertight test of
        /// `triangle::intersect_packet` with the same operations in the same order, so each
        /// lane's answer is bit for bit the single-ray one. The distances, barycentrics and the
        /// lanes that hit within `[0, maxt]`.
        #[target_feature(enable = "avx512f")]
        fn intersect_triangle(&self, triangles: &TrianglePacket, slot: usize, maxt: __m512) -> LaneHits {
            let project = |v: usize| {
                let coordinate = |axis: usize| _mm512_set1_ps(triangles.vertices[v][axis][slot]);
                let (x, y, z) = (coordinate(0), coordinate(1), coordinate(2));
                let pick = |i: usize| {
                    _mm512_mask_blend_ps(self.axis_is_x[i], _mm512_mask_blend_ps(self.axis_is_y[i], z, y), x)
                };
                let [o, s] = [self.sheared_origin, self.shear];
                let pz = _mm512_sub_ps(pick(2), o[2]);
                let px = _mm512_sub_ps(_mm512_sub_ps(pick(0), o[0]), _mm512_mul_ps(s[0], pz));
                let py = _mm512_sub_ps(_mm512_sub_ps(pick(1), o[1]), _mm512_mul_ps(s[1], pz));
                (px, py, pz)
            };
            let (ax, ay, az) = project(0);
            let (bx, by, bz) = project(1);
            let (cx, cy, cz) = project(2);
            let edge =
                |p: __m512, q: __m512, r: __m512, s: __m512| _mm512_sub_ps(_mm512_mul_ps(p, q), _mm512_mul_ps(r, s));
            let mut u = edge(cx, by, cy, bx);
            let mut v = edge(ax, cy, ay, cx);
            let mut w = edge(bx, ay, by, ax);
            let zero = _mm512_setzero_ps();
            let is_zero = |x: __m512| _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, zero);
            let rounded_to_zero = is_zero(u) | is_zero(v) | is_zero(w);
            if rounded_to_zero != 0 {
                let projected = [store(ax), store(ay), store(bx), store(by), store(cx), store(cy)];
                let (mut uu, mut vv, mut ww) = (store(u), store(v), store(w));
                for l in set_bits(u32::from(rounded_to_zero)) {
                    let [ax, ay, bx, by, cx, cy] = &projected;
                    [uu[l], vv[l], ww[l]] = edge_functions_exact([ax[l], ay[l], bx[l], by[l], cx[l], cy[l]]);
                }
                (u, v, w) = (load(&uu), load(&vv), load(&ww));
            }
            let below = |x: __m512| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, zero);
            let above = |x: __m512| _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, zero);
            let outside = (below(u) | below(v) | below(w)) & (above(u) | above(v) | above(w));
            let det = _mm512_add_ps(_mm512_add_ps(u, v), w);
            let dot = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(u, az), _mm512_mul_ps(v, bz)), _mm512_mul_ps(w, cz));
            let scaled_t = _mm512_mul_ps(self.shear[2], dot);
            let inv_det = _mm512_div_ps(_mm512_set1_ps(1.0), det);
            let t = _mm512_mul_ps(scaled_t, inv_det);
            let hit = !outside
                & _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(det, zero)
                & _mm512_cmp_ps_mask::<_CMP_GE_OQ>(t, zero)
                & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(t, maxt);
            LaneHits { t, b1: _mm512_mul_ps(v, inv_det), b2: _mm512_mul_ps(w, inv_det), hit }
        }
    }

    /// What [`Rays::intersect_triangle`] finds, per lane.
    struct LaneHits {
        t: __m512,
        b1: __m512,
        b2: __m512,
        hit: Mask,
    }

    /// The closest hits of the packet's lanes so far (`Closest` per lane), side by side.
    struct ClosestLanes {
        t: __m512,
        id: __m512i,
        /// `packet * PACKET + slot` of the hit primitive.
        location: __m512i,
        b1: __m512,
        b2: __m512,
    }

    impl ClosestLanes {
        #[target_feature(enable = "avx512f")]
        fn new(maxt: __m512) -> ClosestLanes {
            let zero = _mm512_setzero_ps();
            ClosestLanes { t: maxt, id: _mm512_set1_epi32(-1), location: _mm512_setzero_si512(), b1: zero, b2: zero }
        }

        /// Takes the hits of `hits` in `lanes` that beat the lane's closest: primitive `id`,
        /// stored at `location`.
        #[target_feature(enable = "avx512f")]
        fn update(&mut self, hits: &LaneHits, lanes: Mask, id: u32, location: u32) {
            let id_v = _mm512_set1_epi32(id as i32);
            let nearer = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(hits.t, self.t);
            let tie = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(hits.t, self.t) & _mm512_cmplt_epu32_mask(id_v, self.id);
            let better = (nearer | tie) & hits.hit & lanes;
            if better != 0 {
                self.t = _mm512_mask_blend_ps(better, self.t, hits.t);
                self.id = _mm512_mask_blend_epi32(better, self.id, id_v);
                self.location = _mm512_mask_blend_epi32(better, self.location, _mm512_set1_epi32(location as i32));
                self.b1 = _mm512_mask_blend_ps(better, self.b1, hits.b1);
                self.b2 = _mm512_mask_blend_ps(better, self.b2, hits.b2);
            }
        }

        /// The lanes as `Closest` values, for the single-ray traversal.
        #[target_feature(enable = "avx512f")]
        fn to_arrays(&self) -> ClosestArrays {
            ClosestArrays {
                t: store(self.t),
                id: store_u32(self.id),
                location: store_u32(self.location),
                b1: store(self.b1),
                b2: store(self.b2),
            }
        }

        #[target_feature(enable = "avx512f")]
        fn set_arrays(&mut self, lanes: &ClosestArrays) {
            self.t = load(&lanes.t);
            self.id = load_u32(&lanes.id);
            self.location = load_u32(&lanes.location);
            self.b1 = load(&lanes.b1);
            self.b2 = load(&lanes.b2);
        }
    }

    /// [`ClosestLanes`] in memory, where single lanes are read and written.
    struct ClosestArrays {
        t: [f32; LANES],
        id: [u32; LANES],
        location: [u32; LANES],
        b1: [f32; LANES],
        b2: [f32; LANES],
    }

    impl ClosestArrays {
        fn get(&self, l: usize) -> Closest {
            let location = self.location[l];
            Closest {
                t: self.t[l],
                id: self.id[l],
                packet: location / PACKET as u32,
                slot: location % PACKET as u32,
                uv: Vec2::new(self.b1[l], self.b2[l]),
            }
        }

        fn set(&mut self, l: usize, closest: &Closest) {
            self.t[l] = closest.t;
            self.id[l] = closest.id;
            self.location[l] = closest.packet * PACKET as u32 + closest.slot;
            (self.b1[l], self.b2[l]) = (closest.uv.x, closest.uv.y);
        }
    }

    /// A subtree waiting on the stack: the lanes that entered it and their entry distances.
    #[derive(Clone, Copy)]
    struct Entry {
        t_near: __m512,
        node: NodeRef,
        lanes: Mask,
    }

    /// A packet's traversal stack; each level of the tree pushes at most `WIDTH - 1` entries,
    /// as in `traverse`. Entries start uninitialised.
    struct Stack {
        entries: [MaybeUninit<Entry>; STACK_SIZE],
        len: usize,
    }

    impl Stack {
        fn new() -> Stack {
            Stack { entries: [const { MaybeUninit::uninit() }; STACK_SIZE], len: 0 }
        }

        #[inline]
        fn push(&mut self, entry: Entry) {
            self.entries[self.len].write(entry);
            self.len += 1;
        }

        /// The next subtree and the lanes that still enter it within their `maxt`; entries
        /// that none does any more are dropped.
        #[target_feature(enable = "avx512f")]
        fn pop(&mut self, maxt: __m512) -> Option<(NodeRef, Mask)> {
            while self.len > 0 {
                self.len -= 1;
                // SAFETY: every entry below `len` was written by a push.
                let entry = unsafe { self.entries[self.len].assume_init_ref() };
                let lanes = entry.lanes & _mm512_cmp_ps_mask::<_CMP_LE_OQ>(entry.t_near, maxt);
                if lanes != 0 {
                    return Some((entry.node, lanes));
                }
            }
            None
        }
    }

    /// The closest hits of `rays` in the lanes of `active`, into `hits`.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn closest(bvh: &Bvh, shapes: &[Shape], rays: &RayPacket, active: u32, hits: &mut [Option<Hit>; LANES]) {
        hits.fill(None);
        let Some((root, _)) = bvh.root else { return };
        let (packet, live) = Rays::new(rays, active);
        let mut closest = ClosestLanes::new(load(&rays.maxt));
        let mut stack = Stack::new();
        let mut next = (live != 0).then_some((root, live));
        while let Some((node, lanes)) = next {
            next = None;
            if lanes.count_ones() <= SINGLE_RAY_BELOW {
                let mut each = closest.to_arrays();
                for l in set_bits(u32::from(lanes)) {
                    let mut lane = each.get(l);
                    bvh.closest_from(shapes, &rays.ray(l), node, &mut lane);
                    each.set(l, &lane);
                }
                closest.set_arrays(&each);
            } else if node.count > 0 {
                for (i, leaf) in bvh.leaf_packets(node).iter().enumerate() {
                    visit_closest(&packet, shapes, leaf, node.index + i as u32, lanes, &mut closest);
                }
            } else {
                next = descend(&packet, &bvh.nodes[node.index as usize], lanes, closest.t, &mut stack);
            }
            if next.is_none() {
                next = stack.pop(closest.t);
            }
        }
        let each = closest.to_arrays();
        for l in set_bits(u32::from(live)) {
            hits[l] = bvh.hit(&each.get(l));
        }
    }

    /// The leaf packet `leaf`, number `index`, against the rays of `lanes`.
    #[target_feature(enable = "avx512f")]
    fn visit_closest(
        packet: &Rays,
        shapes: &[Shape],
        leaf: &LeafPacket,
        index: u32,
        lanes: Mask,
        closest: &mut ClosestLanes,
    ) {
        for slot in set_bits(leaf.triangle_slots()) {
            let hits = packet.intersect_triangle(&leaf.triangles, slot, closest.t);
            closest.update(&hits, lanes, leaf.id[slot], index * PACKET as u32 + slot as u32);
        }
        if leaf.analytic != 0 {
            let mut each = closest.to_arrays();
            for slot in set_bits(leaf.analytic) {
                for l in set_bits(u32::from(lanes)) {
                    let lane = each.get(l);
                    let found = intersect_analytic(shapes, leaf, slot, &packet.rays.ray(l), lane.t);
                    if let Some((t, uv)) = found.filter(|&(t, _)| lane.is_beaten_by(t, leaf.id[slot])) {
                        each.set(l, &Closest { t, id: leaf.id[slot], packet: index, slot: slot as u32, uv });
                    }
                }
            }
            closest.set_arrays(&each);
        }
    }

    /// Tests the children of `inner` against the rays of `lanes`. The child entered nearest
    /// (by the least entry distance of its rays) is returned to be visited next; the others
    /// wait on `stack`, nearer ones on top.
    #[target_feature(enable = "avx512f")]
    fn descend(packet: &Rays, inner: &Node, lanes: Mask, maxt: __m512, stack: &mut Stack) -> Option<(NodeRef, Mask)> {
        let mut entered: [MaybeUninit<Entry>; WIDTH] = [MaybeUninit::uninit(); WIDTH];
        let mut distance = [0.0f32; WIDTH];
        let mut order = [0usize; WIDTH];
        let mut count = 0;
        for c in 0..WIDTH {
            let (t_near, hit) = packet.enter(inner, c, maxt);
            let hit = hit & lanes;
            if hit == 0 {
                continue;
            }
            distance[c] = _mm512_mask_reduce_min_ps(hit, t_near);
            entered[c].write(Entry { t_near, node: inner.children[c], lanes: hit });
            // Insertion into `order`, farthest first.
            let mut j = count;
            while j > 0 && distance[order[j - 1]] < distance[c] {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = c;
            count += 1;
        }
        if count == 0 {
            return None;
        }
        for &c in &order[..count - 1] {
            // SAFETY: `order` holds only children written above.
            stack.push(unsafe { entered[c].assume_init() });
        }
        // SAFETY: as above.
        let nearest = unsafe { entered[order[count - 1]].assume_init() };
        Some((nearest.node, nearest.lanes))
    }

    /// The mask of the lanes of `active` whose rays hit something.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn any_hit(bvh: &Bvh, shapes: &[Shape], rays: &RayPacket, active: u32) -> u32 {
        let Some((root, _)) = bvh.root else { return 0 };
        let (packet, live) = Rays::new(rays, active);
        let maxt = load(&rays.maxt);
        // Lanes still searching; a lane that finds a hit leaves every entry.
        let mut searching = live;
        let mut stack = Stack::new();
        let mut next = (live != 0).then_some((root, live));
        while let Some((node, entered)) = next {
            next = None;
            let lanes = entered & searching;
            if lanes == 0 {
                // Every ray that entered has found something already.
            } else if lanes.count_ones() <= SINGLE_RAY_BELOW {
                for l in set_bits(u32::from(lanes)) {
                    if bvh.any_hit_from(shapes, &rays.ray(l), node) {
                        searching &= !(1 << l);
                    }
                }
            } else if node.count > 0 {
                for leaf in bvh.leaf_packets(node) {
                    let mut found: Mask = 0;
                    for slot in set_bits(leaf.triangle_slots()) {
                        found |= packet.intersect_triangle(&leaf.triangles, slot, maxt).hit;
                    }
                    for slot in set_bits(leaf.analytic) {
                        for l in set_bits(u32::from(lanes & !found)) {
                            if intersect_analytic(shapes, leaf, slot, &rays.ray(l), rays.maxt[l]).is_some() {
                                found |= 1 << l;
                            }
                        }
                    }
                    searching &= !(found & lanes);
                }
            } else {
                next = descend_any(&packet, &bvh.nodes[node.index as usize], lanes, maxt, &mut stack);
            }
            if searching == 0 {
                break;
            }
            if next.is_none() {
                next = stack.pop(maxt);
            }
        }
        u32::from(live & !searching)
    }

    /// [`descend`] for any-hit rays: the children in slot order, unsorted.
    #[target_feature(enable = "avx512f")]
    fn descend_any(
        packet: &Rays,
        inner: &Node,
        lanes: Mask,
        maxt: __m512,
        stack: &mut Stack,
    ) -> Option<(NodeRef, Mask)> {
        let mut next = None;
        for c in (0..WIDTH).rev() {
            let (t_near, hit) = packet.enter(inner, c, maxt);
            let hit = hit & lanes;
            if hit != 0 {
                if let Some(later) = next.replace(Entry { t_near, node: inner.children[c], lanes: hit }) {
                    stack.push(later);
                }
            }
        }
        next.map(|e| (e.node, e.lanes))
    }

    #[target_feature(enable = "avx512f")]
    fn load(lanes: &[f32; LANES]) -> __m512 {
        // SAFETY: `lanes` holds 16 floats; the load needs no alignment.
        unsafe { _mm512_loadu_ps(lanes.as_ptr()) }
    }

    #[target_feature(enable = "avx512f")]
    fn store(v: __m512) -> [f32; LANES] {
        let mut lanes = [0.0; LANES];
        // SAFETY: `lanes` has room for 16 floats; the store needs no alignment.
        unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), v) };
        lanes
    }

    #[target_feature(enable = "avx512f")]
    fn load_u32(lanes: &[u32; LANES]) -> __m512i {
        // SAFETY: `lanes` holds 16 u32; the load needs no alignment.
        unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    fn store_u32(v: __m512i) -> [u32; LANES] {
        let mut lanes = [0; LANES];
        // SAFETY: `lanes` has room for 16 u32; the store needs no alignment.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
        lanes
    }
}
