//! The surface interactions of several hits at once, side by side, for the runtime's lane
//! groups: the kernel's `scene.intersect` runs for a group of 1, 4, 8 or 16 lanes per host
//! call, and computing their interactions with one set of vector instructions (rather than the
//! scalar [`crate::Geometry::surface_interaction`] lane by lane) also hands the results over as
//! the lane-by-lane columns the kernel reads.
//!
//! Triangle-mesh hits take the vector path, which performs the scalar path's operations in the
//! same order (f32 without fused multiply-adds), so both give bit-identical interactions.
//! Spheres and disks fall back to the scalar path lane by lane.
//!
//! The vector path is written once, over arrays of `L` lanes ([`F32s`]) whose element-wise
//! loops the compiler turns into vector instructions: the baseline ones (SSE on x86-64), and
//! AVX-512, or else AVX2, for eight or sixteen where the processor has it (the same code
//! compiled again under `#[target_feature]`, chosen at run time).

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::geometry::Geometry;
use crate::interaction::{Hit, SurfaceInteraction};
use crate::math::{Ray, Vec2, Vec3};
use crate::shape::{Shape, TriangleMesh};

/// Columns of [`SurfaceInteractions`].
const COLUMNS: usize = 29;

/// `L` surface interactions as columns: component `c` of lane `l` is `field[c][l]`. Lanes
/// without a hit hold unspecified values.
///
/// Laid out as [`Self::COLUMNS`] columns of `L` 32-bit lanes in field order, so that a caller
/// can have the interactions written straight into such columns ([`Self::from_columns_mut`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SurfaceInteractions<const L: usize> {
    pub t: [f32; L],
    pub p: [[f32; L]; 3],
    pub n: [[f32; L]; 3],
    pub uv: [[f32; L]; 2],
    /// The shading frame's `s`, `t` and `n`.
    pub sh_frame: [[[f32; L]; 3]; 3],
    pub dp_du: [[f32; L]; 3],
    pub dp_dv: [[f32; L]; 3],
    pub wi: [[f32; L]; 3],
    pub shape_index: [u32; L],
    pub prim_index: [u32; L],
}

impl<const L: usize> Default for SurfaceInteractions<L> {
    fn default() -> Self {
        let columns = [[0u32; L]; COLUMNS];
        *Self::from_columns(&columns)
    }
}

impl<const L: usize> SurfaceInteractions<L> {
    /// Its columns: `t`, `p`, `n`, `uv`, `sh_frame`, `dp_du`, `dp_dv`, `wi`, `shape_index` and
    /// `prim_index`.
    pub const COLUMNS: usize = COLUMNS;
    const SIZE_MATCHES: () = assert!(std::mem::size_of::<Self>() == Self::COLUMNS * L * 4);

    /// Columns of u32 bits viewed as the interactions they hold.
    pub fn from_columns_mut(columns: &mut [[u32; L]; COLUMNS]) -> &mut SurfaceInteractions<L> {
        let () = Self::SIZE_MATCHES;
        // SAFETY: `repr(C)` arrays of 4-byte f32 and u32 only, of the size of `columns` (checked
        // above) and their alignment: no padding, and every bit pattern is valid for both.
        unsafe { &mut *(columns as *mut [[u32; L]; COLUMNS]).cast::<SurfaceInteractions<L>>() }
    }

    fn from_columns(columns: &[[u32; L]; COLUMNS]) -> &SurfaceInteractions<L> {
        let () = Self::SIZE_MATCHES;
        // SAFETY: as in `from_columns_mut`.
        unsafe { &*(columns as *const [[u32; L]; COLUMNS]).cast::<SurfaceInteractions<L>>() }
    }

    /// Lane `lane` as a scalar interaction.
    pub fn lane(&self, lane: usize) -> SurfaceInteraction {
        let v3 = |c: &[[f32; L]; 3]| Vec3::new(c[0][lane], c[1][lane], c[2][lane]);
        SurfaceInteraction {
            t: self.t[lane],
            p: v3(&self.p),
            n: v3(&self.n),
            uv: Vec2::new(self.uv[0][lane], self.uv[1][lane]),
            sh_frame: crate::math::Frame {
                s: v3(&self.sh_frame[0]),
                t: v3(&self.sh_frame[1]),
                n: v3(&self.sh_frame[2]),
            },
            dp_du: v3(&self.dp_du),
            dp_dv: v3(&self.dp_dv),
            wi: v3(&self.wi),
            shape_index: self.shape_index[lane],
            prim_index: self.prim_index[lane],
        }
    }

    /// Replaces lane `lane` by `si`.
    pub fn set_lane(&mut self, lane: usize, si: &SurfaceInteraction) {
        let put3 = |c: &mut [[f32; L]; 3], v: Vec3| {
            c[0][lane] = v.x;
            c[1][lane] = v.y;
            c[2][lane] = v.z;
        };
        self.t[lane] = si.t;
        put3(&mut self.p, si.p);
        put3(&mut self.n, si.n);
        self.uv[0][lane] = si.uv.x;
        self.uv[1][lane] = si.uv.y;
        put3(&mut self.sh_frame[0], si.sh_frame.s);
        put3(&mut self.sh_frame[1], si.sh_frame.t);
        put3(&mut self.sh_frame[2], si.sh_frame.n);
        put3(&mut self.dp_du, si.dp_du);
        put3(&mut self.dp_dv, si.dp_dv);
        put3(&mut self.wi, si.wi);
        self.shape_index[lane] = si.shape_index;
        self.prim_index[lane] = si.prim_index;
    }
}

impl Geometry {
    /// Writes to `out` the surface interactions of the hits that [`Geometry::intersect`]
    /// returned for `rays`, lane by lane equal to [`Geometry::surface_interaction`]; lanes whose
    /// hit is `None` get unspecified values. (Written in place: returned, the interactions were
    /// copied twice on their way to the kernel.) Without `with_uv`, `uv`, `dp_du` and `dp_dv`
    /// are unspecified where the mesh has face normals: then nothing else depends on the
    /// vertices' texture coordinates, which are not read (a kernel that reads none of those
    /// fields saves their gathering and arithmetic).
    ///
    /// # Panics
    /// If a hit names a shape or primitive that this geometry does not have.
    pub fn surface_interactions<const L: usize>(
        &self,
        rays: &[Ray; L],
        hits: &[Option<Hit>; L],
        out: &mut SurfaceInteractions<L>,
        with_uv: bool,
    ) {
        let mut triangles = TriangleLanes::<L>::default();
        // The lanes that hit spheres or disks, whose interactions replace the triangle code's
        // after it (a bit mask rather than an array of `Option`s, which had to be cleared on
        // every call).
        const { assert!(L <= 64, "a lane group has at most 64 lanes") };
        let mut analytic = 0u64;
        for (lane, (ray, hit)) in rays.iter().zip(hits).enumerate() {
            let Some(hit) = hit else { continue };
            match &self.shapes()[hit.shape_index as usize] {
                Shape::Mesh(mesh) => triangles.gather(lane, mesh, ray, hit, with_uv),
                _ => analytic |= 1 << lane,
            }
        }
        triangles.interactions_for_this_cpu(out);
        while analytic != 0 {
            let lane = analytic.trailing_zeros() as usize;
            analytic &= analytic - 1;
            if let Some(hit) = &hits[lane] {
                let shape = &self.shapes()[hit.shape_index as usize];
                out.set_lane(lane, &analytic_interaction(shape, &rays[lane], hit));
            }
        }
    }
}

/// The interaction of a sphere or disk hit, out of line: inlined, the analytic shapes' code
/// sat between the mesh path's instructions and took instruction-cache space on every call.
#[cold]
#[inline(never)]
fn analytic_interaction(shape: &Shape, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
    shape.surface_interaction(ray, hit)
}

/// `L` floats, one per lane. Every operation is a loop over the lanes that the compiler
/// vectorises, all inlined into [`TriangleLanes::interactions`]; each lane performs exactly
/// the scalar operation, so the results are the scalar code's bits.
#[derive(Clone, Copy)]
struct F32s<const L: usize>([f32; L]);

/// Lane-by-lane conditions: all bits set where true, zero where false. (Of f32's width, they
/// need no conversion before a blend; arrays of `bool` cost a widening per use on SSE.)
#[derive(Clone, Copy)]
struct Mask<const L: usize>([u32; L]);

// Index loops, because the compiler vectorises them; loops over arrays zipped by value came out
// partly scalar.
#[allow(clippy::needless_range_loop)]
impl<const L: usize> F32s<L> {
    #[inline(always)]
    fn splat(x: f32) -> Self {
        F32s([x; L])
    }

    #[inline(always)]
    fn map(self, f: impl Fn(f32) -> f32) -> Self {
        let mut out = [0.0; L];
        for i in 0..L {
            out[i] = f(self.0[i]);
        }
        F32s(out)
    }

    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(f32, f32) -> f32) -> Self {
        let mut out = [0.0; L];
        for i in 0..L {
            out[i] = f(self.0[i], o.0[i]);
        }
        F32s(out)
    }

    #[inline(always)]
    fn compare(self, o: Self, f: impl Fn(f32, f32) -> bool) -> Mask<L> {
        let mut out = [0; L];
        for i in 0..L {
            out[i] = Mask::<L>::of(f(self.0[i], o.0[i]));
        }
        Mask(out)
    }

    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f32::sqrt)
    }

    /// Lane by lane `if mask { a } else { b }`.
    #[inline(always)]
    fn select(mask: Mask<L>, a: Self, b: Self) -> Self {
        let mut out = [0.0; L];
        for i in 0..L {
            out[i] = if mask.0[i] != 0 { a.0[i] } else { b.0[i] };
        }
        F32s(out)
    }
}

#[allow(clippy::needless_range_loop)]
impl<const L: usize> Mask<L> {
    #[inline(always)]
    fn of(condition: bool) -> u32 {
        if condition {
            u32::MAX
        } else {
            0
        }
    }

    #[inline(always)]
    fn any(self) -> bool {
        self.0.iter().any(|&m| m != 0)
    }

    #[inline(always)]
    fn all(self) -> bool {
        self.0.iter().all(|&m| m != 0)
    }

    #[inline(always)]
    fn and(self, o: Self) -> Self {
        let mut out = [0; L];
        for i in 0..L {
            out[i] = self.0[i] & o.0[i];
        }
        Mask(out)
    }
}

macro_rules! lane_operator {
    ($trait:ident, $method:ident, $op:tt) => {
        impl<const L: usize> $trait for F32s<L> {
            type Output = Self;
            #[inline(always)]
            fn $method(self, o: Self) -> Self {
                self.zip(o, |x, y| x $op y)
            }
        }
    };
}
lane_operator!(Add, add, +);
lane_operator!(Sub, sub, -);
lane_operator!(Mul, mul, *);
lane_operator!(Div, div, /);

impl<const L: usize> Neg for F32s<L> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|x| -x)
    }
}

/// A 3-vector of `L` lanes, with glam's `Vec3` operations in glam's order of evaluation.
#[derive(Clone, Copy)]
struct V3<const L: usize> {
    x: F32s<L>,
    y: F32s<L>,
    z: F32s<L>,
}

impl<const L: usize> V3<L> {
    #[inline(always)]
    fn new(x: F32s<L>, y: F32s<L>, z: F32s<L>) -> Self {
        V3 { x, y, z }
    }

    #[inline(always)]
    fn from_columns(c: &[[f32; L]; 3]) -> Self {
        V3::new(F32s(c[0]), F32s(c[1]), F32s(c[2]))
    }

    #[inline(always)]
    fn to_columns(self) -> [[f32; L]; 3] {
        [self.x.0, self.y.0, self.z.0]
    }

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        V3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        V3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }

    #[inline(always)]
    fn scale(self, s: F32s<L>) -> Self {
        V3::new(self.x * s, self.y * s, self.z * s)
    }

    #[inline(always)]
    fn divide(self, s: F32s<L>) -> Self {
        V3::new(self.x / s, self.y / s, self.z / s)
    }

    #[inline(always)]
    fn neg(self) -> Self {
        V3::new(-self.x, -self.y, -self.z)
    }

    #[inline(always)]
    fn dot(self, o: Self) -> F32s<L> {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    #[inline(always)]
    fn cross(self, o: Self) -> Self {
        V3::new(self.y * o.z - o.y * self.z, self.z * o.x - o.z * self.x, self.x * o.y - o.x * self.y)
    }

    #[inline(always)]
    fn normalize(self) -> Self {
        self.scale(F32s::splat(1.0) / self.dot(self).sqrt())
    }

    /// `b0 a + b1 b + b2 c` (a closure, it was not always inlined).
    #[inline(always)]
    fn interpolate([a, b, c]: [Self; 3], [b0, b1, b2]: [F32s<L>; 3]) -> Self {
        a.scale(b0).add(b.scale(b1)).add(c.scale(b2))
    }

    /// Lane by lane `if mask { a } else { b }`.
    #[inline(always)]
    fn select(mask: Mask<L>, a: Self, b: Self) -> Self {
        V3::new(F32s::select(mask, a.x, b.x), F32s::select(mask, a.y, b.y), F32s::select(mask, a.z, b.z))
    }
}

/// The triangle-mesh hits of `L` lanes, gathered side by side. Lanes without one hold zeros,
/// which give NaNs that nobody reads.
struct TriangleLanes<const L: usize> {
    /// Vertex positions, normals and texture coordinates as `[vertex][component][lane]`.
    positions: [[[f32; L]; 3]; 3],
    normals: [[[f32; L]; 3]; 3],
    uvs: [[[f32; L]; 2]; 3],
    /// Barycentrics of vertices 1 and 2.
    b1: [f32; L],
    b2: [f32; L],
    direction: [[f32; L]; 3],
    t: [f32; L],
    shape_index: [u32; L],
    prim_index: [u32; L],
    /// Lanes whose mesh has vertex normals, and those whose mesh has uvs.
    has_normals: Mask<L>,
    has_uvs: Mask<L>,
    /// The normal and shading frame's first two axes of lanes whose mesh stores them per
    /// triangle (`TriangleMesh::face_frames`), as `[vector][component][lane]`, and the lanes
    /// that have them or no triangle hit (whatever those hold, nobody reads it).
    face_frames: [[[f32; L]; 3]; 3],
    face_frame_or_no_hit: Mask<L>,
}

impl<const L: usize> Default for TriangleLanes<L> {
    fn default() -> Self {
        let zeros = [0.0; L];
        TriangleLanes {
            positions: [[zeros; 3]; 3],
            normals: [[zeros; 3]; 3],
            uvs: [[zeros; 2]; 3],
            b1: zeros,
            b2: zeros,
            direction: [zeros; 3],
            t: zeros,
            shape_index: [0; L],
            prim_index: [0; L],
            has_normals: Mask([0; L]),
            has_uvs: Mask([0; L]),
            face_frames: [[zeros; 3]; 3],
            face_frame_or_no_hit: Mask([u32::MAX; L]),
        }
    }
}

impl<const L: usize> TriangleLanes<L> {
    /// Lane `lane`'s hit of `mesh`; its vertex uvs only `with_uv` or where the shading frame
    /// depends on them (vertex normals, whose frame follows `dp_du`).
    fn gather(&mut self, lane: usize, mesh: &TriangleMesh, ray: &Ray, hit: &Hit, with_uv: bool) {
        let tri = mesh.triangles()[hit.prim_index as usize];
        let uvs = mesh.uvs().filter(|_| with_uv || mesh.face_frames().is_none());
        for (v, &index) in tri.iter().enumerate() {
            let index = index as usize;
            let p = mesh.positions()[index];
            for c in 0..3 {
                self.positions[v][c][lane] = p[c];
            }
            if let Some(normals) = mesh.normals() {
                let n = normals[index];
                for c in 0..3 {
                    self.normals[v][c][lane] = n[c];
                }
            }
            if let Some(uvs) = uvs {
                let uv = uvs[index];
                for c in 0..2 {
                    self.uvs[v][c][lane] = uv[c];
                }
            }
        }
        if let Some(frames) = mesh.face_frames() {
            for (v, vector) in frames[hit.prim_index as usize].iter().enumerate() {
                for c in 0..3 {
                    self.face_frames[v][c][lane] = vector[c];
                }
            }
        } else {
            self.face_frame_or_no_hit.0[lane] = 0;
        }
        self.has_normals.0[lane] = Mask::<L>::of(mesh.normals().is_some());
        self.has_uvs.0[lane] = Mask::<L>::of(uvs.is_some());
        (self.b1[lane], self.b2[lane]) = (hit.prim_uv.x, hit.prim_uv.y);
        for c in 0..3 {
            self.direction[c][lane] = ray.d[c];
        }
        self.t[lane] = hit.t;
        self.shape_index[lane] = hit.shape_index;
        self.prim_index[lane] = hit.prim_index;
    }

    /// [`Self::interactions`] in the widest vector instructions this processor has: compiled
    /// for AVX-512 (sixteen lanes per instruction) or else AVX2 (eight) when there are eight
    /// lanes or more and the processor has it, for baseline x86-64 (SSE, four lanes per
    /// instruction) otherwise. The results are the same bits: no fused multiply-adds are
    /// enabled. (Out of line: inlined into the host's code, the four-lane path ran slower.)
    #[inline(never)]
    fn interactions_for_this_cpu(&self, out: &mut SurfaceInteractions<L>) {
        #[cfg(target_arch = "x86_64")]
        if L >= 8 {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has AVX-512.
                return unsafe { self.interactions_avx512(out) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2.
                return unsafe { self.interactions_avx2(out) };
            }
        }
        self.interactions(out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn interactions_avx512(&self, out: &mut SurfaceInteractions<L>) {
        self.interactions(out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn interactions_avx2(&self, out: &mut SurfaceInteractions<L>) {
        self.interactions(out);
    }

    /// `TriangleMesh::surface_interaction` and `shading_frame` for all lanes at once; both
    /// sides of each branch are computed and blended, unless no lane takes one of them.
    #[inline(always)]
    fn interactions(&self, out: &mut SurfaceInteractions<L>) {
        let (has_normals, has_uvs) = (self.has_normals, self.has_uvs);
        let p0 = V3::from_columns(&self.positions[0]);
        let p1 = V3::from_columns(&self.positions[1]);
        let p2 = V3::from_columns(&self.positions[2]);
        let (b1, b2) = (F32s(self.b1), F32s(self.b2));
        let b0 = F32s::splat(1.0) - b1 - b2;
        let barycentrics = [b0, b1, b2];
        let e1 = p1.sub(p0);
        let e2 = p2.sub(p0);
        // Where every hit's triangle has its normal and tangents stored, they replace the
        // normalisations and divisions that compute them (the same bits).
        let stored = self.face_frame_or_no_hit.all();
        let [face_n, face_s, face_t] = &self.face_frames;
        let n = if stored { V3::from_columns(face_n) } else { e1.cross(e2).normalize() };
        // Where no lane has vertex normals (or uvs), the blends below would pick the other
        // side in every lane: skip computing the one they drop.
        let shading_n = if has_normals.any() {
            let [n0, n1, n2] = &self.normals;
            let normals = [V3::from_columns(n0), V3::from_columns(n1), V3::from_columns(n2)];
            let vertex_n = V3::interpolate(normals, barycentrics).normalize();
            V3::select(has_normals, vertex_n, n)
        } else {
            n
        };
        let (uv, dp_du, dp_dv) = if has_uvs.any() {
            let [uv0, uv1, uv2] = &self.uvs;
            let (u0, v0) = (F32s(uv0[0]), F32s(uv0[1]));
            let (u1, v1) = (F32s(uv1[0]), F32s(uv1[1]));
            let (u2, v2) = (F32s(uv2[0]), F32s(uv2[1]));
            let duv1 = (u1 - u0, v1 - v0);
            let duv2 = (u2 - u0, v2 - v0);
            let det = duv1.0 * duv2.1 - duv1.1 * duv2.0;
            let zero = F32s::splat(0.0);
            let inv_det = F32s::select(det.compare(zero, |d, z| d != z), F32s::splat(1.0) / det, zero);
            let uv_u = u0 * b0 + u1 * b1 + u2 * b2;
            let uv_v = v0 * b0 + v1 * b1 + v2 * b2;
            let dp_du_uv = e1.scale(duv2.1).sub(e2.scale(duv1.1)).scale(inv_det);
            let dp_dv_uv = e2.scale(duv1.0).sub(e1.scale(duv2.0)).scale(inv_det);
            (
                [F32s::select(has_uvs, uv_u, b1), F32s::select(has_uvs, uv_v, b2)],
                V3::select(has_uvs, dp_du_uv, e1),
                V3::select(has_uvs, dp_dv_uv, e2),
            )
        } else {
            ([b1, b2], e1, e2)
        };

        let (s, t) = if stored {
            // Meshes with stored frames have face normals: the shading normal is `n`.
            (V3::from_columns(face_s), V3::from_columns(face_t))
        } else {
            // Lanes with stored frames take them (the same bits), since their uvs, and so
            // `dp_du`, may not have been gathered.
            let (s, t) = shading_tangents(shading_n, dp_du);
            let framed = self.face_frame_or_no_hit;
            (V3::select(framed, V3::from_columns(face_s), s), V3::select(framed, V3::from_columns(face_t), t))
        };
        let wi_from = V3::from_columns(&self.direction).neg();
        out.t = self.t;
        out.p = V3::interpolate([p0, p1, p2], barycentrics).to_columns();
        out.n = n.to_columns();
        out.uv = [uv[0].0, uv[1].0];
        out.sh_frame = [s.to_columns(), t.to_columns(), shading_n.to_columns()];
        out.dp_du = dp_du.to_columns();
        out.dp_dv = dp_dv.to_columns();
        out.wi = V3::new(wi_from.dot(s), wi_from.dot(t), wi_from.dot(shading_n)).to_columns();
        out.shape_index = self.shape_index;
        out.prim_index = self.prim_index;
    }
}

/// `shading_frame(n, tangent)`'s `s` and `t`: the tangent made orthogonal to `n`, or where
/// that vanishes, `coordinate_system(n)`.
#[inline(always)]
fn shading_tangents<const L: usize>(n: V3<L>, tangent: V3<L>) -> (V3<L>, V3<L>) {
    let s = tangent.sub(n.scale(n.dot(tangent)));
    let length2 = s.dot(s);
    let usable =
        length2.compare(F32s::splat(0.0), |l, z| l > z).and(length2.compare(F32s::splat(f32::INFINITY), |l, i| l < i));
    let s = s.divide(length2.sqrt());
    let t = n.cross(s);
    // coordinate_system(n) (Duff et al. 2017).
    let one = F32s::splat(1.0);
    // -1 where n.z has its sign bit set (-0 included), else 1.
    let sign = n.z.map(|z| 1f32.copysign(z));
    let a = F32s::splat(-1.0) / (sign + n.z);
    let b = n.x * n.y * a;
    let fallback_s = V3::new(one + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let fallback_t = V3::new(b, sign + n.y * n.y * a, -n.y);
    (V3::select(usable, s, fallback_s), V3::select(usable, t, fallback_t))
}
