//! Single-ray traversal: closest hit and any hit, over `[0, maxt]`, children visited nearest
//! first.
//!
//! Box tests use the precomputed reciprocal direction and pick near and far planes by its
//! sign. A zero (or denormal) direction component gets a huge finite reciprocal instead of
//! infinity, so `0 · ∞` never produces NaN for an origin on a slab plane. The far distance is
//! enlarged by 1 + 2γ₃ (Ize 2013, "Robust BVH Ray Traversal"), which makes the f32 slab test
//! conservative: a box the ray touches is never skipped.

use std::mem::MaybeUninit;

use super::{Bvh, LeafPrim, Node, NodeRef, ANALYTIC, WIDTH};
use crate::interaction::Hit;
use crate::math::{Aabb, Ray, Vec2};
use crate::shape::Shape;
use crate::triangle::{intersect_triangle, RayShear};

/// 1 + 2γ₃ with γₙ = nε/(1 − nε), ε = 2⁻²⁴ (pbrt's error bound for the slab test).
const ROBUST_FAR_SCALE: f32 = 1.0 + 2.0 * (3.0 * EPS / (1.0 - 3.0 * EPS));
const EPS: f32 = f32::EPSILON / 2.0;

/// The per-ray part of the box test.
struct RayBoxes {
    origin: [f32; 3],
    inv_dir: [f32; 3],
    /// Per axis: whether the ray goes towards −, so that the box's max plane is the near one.
    negative: [bool; 3],
}

impl RayBoxes {
    fn new(ray: &Ray) -> RayBoxes {
        let d = ray.d.to_array();
        let inv_dir = d.map(|c| {
            let inv = 1.0 / c;
            if inv.is_finite() {
                inv
            } else {
                f32::MAX.copysign(c)
            }
        });
        RayBoxes { origin: ray.o.to_array(), inv_dir, negative: inv_dir.map(|i| i < 0.0) }
    }

    /// Entry distances of the children of `node` and whether each overlaps `[0, maxt]`.
    #[inline(always)]
    fn children(&self, node: &Node, maxt: f32) -> ([f32; WIDTH], [bool; WIDTH]) {
        let mut t_near = [0.0f32; WIDTH];
        let mut t_far = [f32::INFINITY; WIDTH];
        for axis in 0..3 {
            let [min, max] = &node.bounds[axis];
            let (near, far) = if self.negative[axis] { (max, min) } else { (min, max) };
            let (o, inv) = (self.origin[axis], self.inv_dir[axis]);
            for c in 0..WIDTH {
                t_near[c] = fast_max(t_near[c], (near[c] - o) * inv);
                t_far[c] = fast_min(t_far[c], (far[c] - o) * inv);
            }
        }
        let mut hit = [false; WIDTH];
        for c in 0..WIDTH {
            hit[c] = t_near[c] <= fast_min(t_far[c] * ROBUST_FAR_SCALE, maxt);
        }
        (t_near, hit)
    }

    fn overlaps(&self, bounds: &Aabb, maxt: f32) -> bool {
        let (min, max) = (bounds.min.to_array(), bounds.max.to_array());
        let (mut t_near, mut t_far) = (0.0f32, f32::INFINITY);
        for axis in 0..3 {
            let (near, far) = if self.negative[axis] { (max[axis], min[axis]) } else { (min[axis], max[axis]) };
            t_near = fast_max(t_near, (near - self.origin[axis]) * self.inv_dir[axis]);
            t_far = fast_min(t_far, (far - self.origin[axis]) * self.inv_dir[axis]);
        }
        t_near <= fast_min(t_far * ROBUST_FAR_SCALE, maxt)
    }
}

/// `max` that compiles to one instruction: a NaN `b` (only from a NaN or infinite ray) comes
/// through and makes the box test fail.
#[inline(always)]
fn fast_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

#[inline(always)]
fn fast_min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// A hit found in a leaf: its `LeafPrim` index and local parametrisation.
#[derive(Clone, Copy)]
struct LeafHit {
    t: f32,
    prim: usize,
    uv: Vec2,
}

impl Bvh {
    pub(crate) fn intersect(&self, shapes: &[Shape], ray: &Ray) -> Option<Hit> {
        let mut closest: Option<LeafHit> = None;
        self.traverse(ray, |prims, range, shear, mut maxt| {
            for i in range {
                if let Some((t, uv)) = intersect_leaf_prim(shapes, &prims[i], shear, ray, maxt) {
                    closest = Some(LeafHit { t, prim: i, uv });
                    maxt = t;
                }
            }
            (maxt, false)
        });
        closest.map(|h| {
            let prim = &self.prims[h.prim];
            Hit { t: h.t, shape_index: prim.shape & !ANALYTIC, prim_index: prim.prim, prim_uv: h.uv }
        })
    }

    pub(crate) fn ray_test(&self, shapes: &[Shape], ray: &Ray) -> bool {
        let mut found = false;
        self.traverse(ray, |prims, mut range, shear, maxt| {
            found = range.any(|i| intersect_leaf_prim(shapes, &prims[i], shear, ray, maxt).is_some());
            (maxt, found)
        });
        found
    }

    /// Visits the leaves the ray reaches, nearer children first. `visit_leaf` gets the leaf's
    /// primitive range and the current `maxt`, and returns the new `maxt` and whether to stop.
    #[inline(always)]
    fn traverse(
        &self,
        ray: &Ray,
        mut visit_leaf: impl FnMut(&[LeafPrim], std::ops::Range<usize>, &RayShear, f32) -> (f32, bool),
    ) {
        let Some((root, bounds)) = self.root else { return };
        let boxes = RayBoxes::new(ray);
        let mut maxt = ray.maxt;
        // Non-finite rays miss: the box tests rely on finite origins and directions.
        let finite = ray.o.is_finite() && ray.d.is_finite();
        if !finite || maxt.is_nan() || maxt < 0.0 || !boxes.overlaps(&bounds, maxt) {
            return;
        }
        let shear = RayShear::new(ray);
        let mut stack = TraversalStack::new();
        let mut current = root;
        loop {
            if current.count > 0 {
                let first = current.index as usize;
                let (new_maxt, stop) = visit_leaf(&self.prims, first..first + current.count as usize, &shear, maxt);
                if stop {
                    return;
                }
                maxt = new_maxt;
            } else {
                let node = &self.nodes[current.index as usize];
                let (t_near, hit) = boxes.children(node, maxt);
                // The hit children sorted by entry distance (insertion sort of at most 4).
                let mut order = [(0.0f32, current); WIDTH];
                let mut count = 0;
                for c in 0..WIDTH {
                    if hit[c] {
                        let mut j = count;
                        while j > 0 && order[j - 1].0 > t_near[c] {
                            order[j] = order[j - 1];
                            j -= 1;
                        }
                        order[j] = (t_near[c], node.children[c]);
                        count += 1;
                    }
                }
                if count > 0 {
                    // Visit the nearest now; the others wait on the stack, nearest on top.
                    for &entry in order[1..count].iter().rev() {
                        stack.push(entry);
                    }
                    current = order[0].1;
                    continue;
                }
            }
            // Pop the next subtree that may still hold something closer than `maxt`.
            loop {
                let Some((t_near, next)) = stack.pop() else { return };
                if t_near <= maxt {
                    current = next;
                    break;
                }
            }
        }
    }
}

/// The subtrees still to visit with their entry distances: a fixed array, spilling into a
/// vector only for pathological trees (the collapsed tree has no depth bound of its own). The
/// array starts uninitialised: zeroing it took longer than traversing a small scene.
struct TraversalStack {
    entries: [MaybeUninit<(f32, NodeRef)>; INLINE_STACK],
    len: usize,
    spill: Vec<(f32, NodeRef)>,
}

const INLINE_STACK: usize = 64;

impl TraversalStack {
    #[inline(always)]
    fn new() -> TraversalStack {
        TraversalStack { entries: [const { MaybeUninit::uninit() }; INLINE_STACK], len: 0, spill: Vec::new() }
    }

    #[inline(always)]
    fn push(&mut self, entry: (f32, NodeRef)) {
        if self.len < INLINE_STACK {
            self.entries[self.len].write(entry);
            self.len += 1;
        } else {
            self.spill.push(entry);
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(f32, NodeRef)> {
        if let Some(entry) = self.spill.pop() {
            return Some(entry);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: `push` wrote every entry below `len`.
        Some(unsafe { self.entries[self.len].assume_init() })
    }
}

#[inline(always)]
fn intersect_leaf_prim(
    shapes: &[Shape],
    prim: &LeafPrim,
    shear: &RayShear,
    ray: &Ray,
    maxt: f32,
) -> Option<(f32, Vec2)> {
    if prim.shape & ANALYTIC == 0 {
        intersect_triangle(shear, &prim.vertices, maxt).map(|h| (h.t, Vec2::new(h.b1, h.b2)))
    } else {
        intersect_analytic(shapes, prim, ray, maxt)
    }
}

#[cold]
fn intersect_analytic(shapes: &[Shape], prim: &LeafPrim, ray: &Ray, maxt: f32) -> Option<(f32, Vec2)> {
    let shape = &shapes[(prim.shape & !ANALYTIC) as usize];
    shape.intersect_primitive(prim.prim as usize, &Ray { maxt, ..*ray }).map(|h| (h.t, h.uv))
}
