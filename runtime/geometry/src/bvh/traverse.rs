//! Single-ray traversal: closest hit and any hit, over `[0, maxt]`. The closest-hit search
//! visits a node's children nearest first, so that nearer hits shorten `maxt` early; the
//! any-hit test stops at any hit, so it takes them in slot order without sorting. Of hits at
//! the same distance the primitive with the lowest scene index wins (`Closest::is_beaten_by`),
//! so the answer does not depend on the order of the visit, which packets (`packet.rs`) change.
//!
//! Box tests use the precomputed reciprocal direction and pick near and far planes by its
//! sign. A zero (or denormal) direction component gets a huge finite reciprocal instead of
//! infinity, so `0 · ∞` never produces NaN for an origin on a slab plane. The far distance is
//! enlarged by 1 + 2γ₃ (Ize 2013, "Robust BVH Ray Traversal"), which makes the f32 slab test
//! conservative: a box the ray touches is never skipped.

use std::mem::MaybeUninit;

use wide::f32x4;

use super::{Bvh, LeafPacket, Node, NodeRef, ANALYTIC, MAX_DEPTH, WIDTH};
use crate::interaction::Hit;
use crate::math::{Ray, Vec2, Vec3};
use crate::shape::Shape;
use crate::triangle::{intersect_packet, RayShear};

/// 1 + 2γ₃ with γₙ = nε/(1 − nε), ε = 2⁻²⁴ (pbrt's error bound for the slab test).
pub(super) const ROBUST_FAR_SCALE: f32 = 1.0 + 2.0 * (3.0 * EPS / (1.0 - 3.0 * EPS));
const EPS: f32 = f32::EPSILON / 2.0;

/// The per-ray part of the box test, with the origin and reciprocal direction broadcast to
/// the four children's lanes once per ray instead of at every node.
struct RayBoxes {
    origin: [f32x4; 3],
    inv_dir: [f32x4; 3],
    /// Per axis, the index in `Node::bounds[axis]` of the near planes: 1 (the maxima) when the
    /// ray goes towards −, else 0.
    near: [usize; 3],
}

impl RayBoxes {
    fn new(ray: &Ray) -> RayBoxes {
        // The three reciprocals at once (the fourth lane is padding).
        let d = f32x4::from([ray.d.x, ray.d.y, ray.d.z, 1.0]);
        let inv = f32x4::ONE / d;
        // Where the reciprocal is not finite, f32::MAX with the component's sign (see above).
        let huge = (d & f32x4::splat(-0.0)) | f32x4::splat(f32::MAX);
        let inv = inv.abs().simd_lt(f32x4::splat(f32::INFINITY)).select(inv, huge);
        let negative = inv.simd_lt(f32x4::ZERO).to_bitmask();
        let inv = inv.to_array();
        RayBoxes {
            origin: [ray.o.x, ray.o.y, ray.o.z].map(f32x4::splat),
            inv_dir: [inv[0], inv[1], inv[2]].map(f32x4::splat),
            near: [0, 1, 2].map(|axis| (negative >> axis) as usize & 1),
        }
    }

    /// Entry distances of the children of `node` and whether each overlaps `[0, maxt]`, as
    /// bits. The slabs' maxima and minima are taken pairwise, which keeps the chain of
    /// dependent instructions per node short.
    #[inline(always)]
    fn children(&self, node: &Node, maxt: f32) -> ([f32; WIDTH], u32) {
        let slab = |axis: usize| {
            // `& 1` shows the compiler that both indices are in bounds.
            let near = self.near[axis] & 1;
            let (near, far) = (&node.bounds[axis][near], &node.bounds[axis][near ^ 1]);
            let (o, inv) = (self.origin[axis], self.inv_dir[axis]);
            ((f32x4::from(*near) - o) * inv, (f32x4::from(*far) - o) * inv)
        };
        let ((near_x, far_x), (near_y, far_y), (near_z, far_z)) = (slab(0), slab(1), slab(2));
        // No distance is NaN (rays are finite, `inv_dir` finite and non-zero), so the one-
        // instruction `fast_max`/`fast_min` give the exact answer.
        let t_near = near_x.fast_max(f32x4::ZERO).fast_max(near_y.fast_max(near_z));
        let t_far = far_x.fast_min(far_y.fast_min(far_z));
        let hit = t_near.simd_le((t_far * f32x4::splat(ROBUST_FAR_SCALE)).fast_min(f32x4::splat(maxt)));
        (t_near.to_array(), hit.to_bitmask())
    }
}

/// The closest hit found so far: its distance, the scene index of its primitive (the tie
/// break, see `LeafPacket::id`), where it is stored and its local parametrisation. `id` is
/// `u32::MAX` until something is hit, and `t` starts at the ray's `maxt`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Closest {
    pub t: f32,
    pub id: u32,
    pub packet: u32,
    pub slot: u32,
    pub uv: Vec2,
}

impl Closest {
    pub(super) fn none(maxt: f32) -> Closest {
        Closest { t: maxt, id: u32::MAX, packet: 0, slot: 0, uv: Vec2::ZERO }
    }

    /// Whether a hit at `t` of primitive `id` replaces this one: nearer, or as near with a
    /// lower index.
    #[inline(always)]
    pub(super) fn is_beaten_by(&self, t: f32, id: u32) -> bool {
        t < self.t || (t == self.t && id < self.id)
    }
}

impl Bvh {
    // Inline, so that callers get the hit's fields rather than an `Option<Hit>` in memory:
    // returned, it was written by 4- and 8-byte stores and copied by 16- and 8-byte loads,
    // which cannot take their data from the stores in flight and wait for them (1.5% of a
    // Cornell box render on a Zen 3 host).
    #[inline]
    pub(crate) fn intersect(&self, shapes: &[Shape], ray: &Ray) -> Option<Hit> {
        let (root, _) = self.root?;
        let mut closest = Closest::none(ray.maxt);
        self.closest_from(shapes, ray, root, &mut closest);
        self.hit(&closest)
    }

    /// The hit that `closest` describes, if it describes one.
    pub(super) fn hit(&self, closest: &Closest) -> Option<Hit> {
        (closest.id != u32::MAX).then(|| {
            let packet = &self.packets[closest.packet as usize];
            let slot = closest.slot as usize;
            Hit {
                t: closest.t,
                shape_index: packet.shape[slot] & !ANALYTIC,
                prim_index: packet.prim[slot],
                prim_uv: closest.uv,
            }
        })
    }

    /// Improves `closest` by the hits of `ray` in the subtree `start` (up to `closest.t`).
    pub(super) fn closest_from(&self, shapes: &[Shape], ray: &Ray, start: NodeRef, closest: &mut Closest) {
        self.traverse::<true>(ray, start, closest.t, |first, packets, shear, _| {
            for (i, packet) in packets.iter().enumerate() {
                let hits = intersect_packet(shear, &packet.triangles, closest.t);
                for slot in set_bits(hits.hit) {
                    if closest.is_beaten_by(hits.t[slot], packet.id[slot]) {
                        let uv = Vec2::new(hits.b1[slot], hits.b2[slot]);
                        *closest = Closest {
                            t: hits.t[slot],
                            id: packet.id[slot],
                            packet: (first + i) as u32,
                            slot: slot as u32,
                            uv,
                        };
                    }
                }
                for slot in set_bits(packet.analytic) {
                    if let Some((t, uv)) = intersect_analytic(shapes, packet, slot, ray, closest.t) {
                        if closest.is_beaten_by(t, packet.id[slot]) {
                            *closest =
                                Closest { t, id: packet.id[slot], packet: (first + i) as u32, slot: slot as u32, uv };
                        }
                    }
                }
            }
            (closest.t, false)
        });
    }

    pub(crate) fn ray_test(&self, shapes: &[Shape], ray: &Ray) -> bool {
        let Some((root, _)) = self.root else { return false };
        self.any_hit_from(shapes, ray, root)
    }

    /// Whether `ray` hits anything in the subtree `start`.
    pub(super) fn any_hit_from(&self, shapes: &[Shape], ray: &Ray, start: NodeRef) -> bool {
        let mut found = false;
        self.traverse::<false>(ray, start, ray.maxt, |_, packets, shear, maxt| {
            found = packets.iter().any(|packet| {
                intersect_packet(shear, &packet.triangles, maxt).hit != 0
                    || set_bits(packet.analytic)
                        .any(|slot| intersect_analytic(shapes, packet, slot, ray, maxt).is_some())
            });
            (maxt, found)
        });
        found
    }

    /// Visits the leaves of subtree `start` that the ray reaches within `[0, maxt]`, nearer
    /// children first if `NEAREST_FIRST` (else in slot order). `visit_leaf` gets the index of
    /// the leaf's first packet, its packets and the current `maxt`, and returns the new `maxt`
    /// and whether to stop.
    #[inline(always)]
    fn traverse<const NEAREST_FIRST: bool>(
        &self,
        ray: &Ray,
        start: NodeRef,
        mut maxt: f32,
        mut visit_leaf: impl FnMut(usize, &[LeafPacket], &RayShear, f32) -> (f32, bool),
    ) {
        // The per-ray set-up reads the ray one component at a time (see `ray_by_component`).
        let ray = &ray_by_component(ray);
        let boxes = RayBoxes::new(ray);
        // Non-finite rays miss: the box tests rely on finite origins and directions. (All six
        // components checked with two vector comparisons.)
        let finite = |v: Vec3| f32x4::from([v.x, v.y, v.z, 0.0]).abs().simd_lt(f32x4::splat(f32::INFINITY));
        if (finite(ray.o) & finite(ray.d)).to_bitmask() != 0b1111 || maxt.is_nan() || maxt < 0.0 {
            return;
        }
        let shear = RayShear::new(ray);
        // The subtrees still to visit, nearest on top, with their entry distances. Each level
        // of the tree pushes at most WIDTH - 1 entries, so STACK_SIZE always suffices. The
        // arrays start uninitialised: zeroing them took longer than traversing a small scene.
        let mut stack_t = [MaybeUninit::<f32>::uninit(); STACK_SIZE];
        let mut stack_node = [MaybeUninit::<NodeRef>::uninit(); STACK_SIZE];
        let mut len = 0;
        let mut current = start;
        loop {
            if current.count > 0 {
                let (new_maxt, stop) = visit_leaf(current.index as usize, self.leaf_packets(current), &shear, maxt);
                if stop {
                    return;
                }
                maxt = new_maxt;
            } else {
                let node = &self.nodes[current.index as usize];
                let (t_near, hit) = boxes.children(node, maxt);
                // The hit children's slots, sorted by entry distance when nearest first
                // (insertion sort of at most 4).
                let mut order = [0usize; WIDTH];
                let mut count = 0;
                for c in 0..WIDTH {
                    if hit & (1 << c) != 0 {
                        let mut j = count;
                        while NEAREST_FIRST && j > 0 && t_near[order[j - 1]] > t_near[c] {
                            order[j] = order[j - 1];
                            j -= 1;
                        }
                        order[j] = c;
                        count += 1;
                    }
                }
                if count > 0 {
                    // Visit the nearest now; the others wait on the stack, nearest on top.
                    for &c in order[1..count].iter().rev() {
                        stack_t[len].write(t_near[c]);
                        stack_node[len].write(node.children[c]);
                        len += 1;
                    }
                    current = node.children[order[0]];
                    continue;
                }
            }
            // Pop the next subtree that may still hold something closer than `maxt`.
            loop {
                if len == 0 {
                    return;
                }
                len -= 1;
                // SAFETY: every entry below `len` was written by a push.
                let (t_near, next) = unsafe { (stack_t[len].assume_init(), stack_node[len].assume_init()) };
                if t_near <= maxt {
                    current = next;
                    break;
                }
            }
        }
    }
}

/// A copy of `ray` read one component at a time, for the per-ray set-up of a walk.
/// Callers write a ray component by component just before tracing it (host closures, the lane
/// columns' gather, the packet traversal's hand-over to single rays), and the compiler reads
/// neighbouring components with one wider load, which the processor cannot forward from the
/// narrower stores still in flight: the stall sits at the head of the per-ray set-up's chain
/// of dependent instructions. Volatile reads keep each load the size of its store.
#[inline(always)]
fn ray_by_component(ray: &Ray) -> Ray {
    // SAFETY: each pointer comes from a reference to an initialised, aligned f32.
    let read = |x: &f32| unsafe { std::ptr::read_volatile(x) };
    let vec3 = |v: &Vec3| Vec3::new(read(&v.x), read(&v.y), read(&v.z));
    Ray::with_maxt(vec3(&ray.o), vec3(&ray.d), read(&ray.maxt))
}

/// Entries of the traversal stack: the 4-wide tree is at most [`MAX_DEPTH`] levels deep (it
/// collapses the binary tree, which is), and each level pushes at most `WIDTH - 1` entries.
pub(super) const STACK_SIZE: usize = MAX_DEPTH * (WIDTH - 1);

/// The indices of the set bits of `bits`, lowest first.
#[inline(always)]
pub(super) fn set_bits(mut bits: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            slot
        })
    })
}

#[cold]
pub(super) fn intersect_analytic(
    shapes: &[Shape],
    packet: &LeafPacket,
    slot: usize,
    ray: &Ray,
    maxt: f32,
) -> Option<(f32, Vec2)> {
    let shape = &shapes[(packet.shape[slot] & !ANALYTIC) as usize];
    shape.intersect_primitive(packet.prim[slot] as usize, &Ray { maxt, ..*ray }).map(|h| (h.t, h.uv))
}
