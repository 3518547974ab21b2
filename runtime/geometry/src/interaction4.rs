//! The surface interactions of four hits at once, side by side, for the runtime's lane groups:
//! the kernel's `scene.intersect` runs for four lanes per host call, and computing their
//! interactions with one set of vector instructions (rather than four times the scalar
//! [`crate::Geometry::surface_interaction`]) also hands the results over lane-by-lane columns
//! as the kernel reads them.
//!
//! Triangle-mesh hits take the vector path, which performs the scalar path's operations in the
//! same order (f32 without fused multiply-adds), so both give bit-identical interactions.
//! Spheres and disks fall back to the scalar path lane by lane.

use wide::f32x4;

use crate::geometry::Geometry;
use crate::interaction::{Hit, SurfaceInteraction};
use crate::math::{Ray, Vec2, Vec3};
use crate::shape::{Shape, TriangleMesh};

/// Lanes per [`SurfaceInteraction4`].
pub const LANES: usize = 4;

/// Four surface interactions as columns: component `c` of lane `l` is `field[c][l]`. Lanes
/// without a hit hold unspecified values.
///
/// Laid out as [`Self::COLUMNS`] columns of four 32-bit lanes in field order, so that a caller can
/// have the interactions written straight into such columns ([`Self::from_columns_mut`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct SurfaceInteraction4 {
    pub t: [f32; LANES],
    pub p: [[f32; LANES]; 3],
    pub n: [[f32; LANES]; 3],
    pub uv: [[f32; LANES]; 2],
    /// The shading frame's `s`, `t` and `n`.
    pub sh_frame: [[[f32; LANES]; 3]; 3],
    pub dp_du: [[f32; LANES]; 3],
    pub dp_dv: [[f32; LANES]; 3],
    pub wi: [[f32; LANES]; 3],
    pub shape_index: [u32; LANES],
    pub prim_index: [u32; LANES],
}

// SAFETY: `repr(C)` arrays of f32 and u32 only: no padding, and every bit pattern is valid.
unsafe impl bytemuck::Zeroable for SurfaceInteraction4 {}
unsafe impl bytemuck::Pod for SurfaceInteraction4 {}
const _: () = assert!(std::mem::size_of::<SurfaceInteraction4>() == SurfaceInteraction4::COLUMNS * LANES * 4);

impl SurfaceInteraction4 {
    /// Its columns: `t`, `p`, `n`, `uv`, `sh_frame`, `dp_du`, `dp_dv`, `wi`, `shape_index` and
    /// `prim_index`.
    pub const COLUMNS: usize = 29;

    /// Columns of u32 bits viewed as the interactions they hold.
    pub fn from_columns_mut(columns: &mut [[u32; LANES]; Self::COLUMNS]) -> &mut SurfaceInteraction4 {
        bytemuck::cast_mut(columns)
    }

    /// Lane `lane` as a scalar interaction.
    pub fn lane(&self, lane: usize) -> SurfaceInteraction {
        let v3 = |c: &[[f32; LANES]; 3]| Vec3::new(c[0][lane], c[1][lane], c[2][lane]);
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
        let put3 = |c: &mut [[f32; LANES]; 3], v: Vec3| {
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
    /// copied twice on their way to the kernel.)
    ///
    /// # Panics
    /// If a hit names a shape or primitive that this geometry does not have.
    pub fn surface_interactions(
        &self,
        rays: &[Ray; LANES],
        hits: &[Option<Hit>; LANES],
        out: &mut SurfaceInteraction4,
    ) {
        let mut triangles = TriangleLanes::default();
        let mut scalar = [None; LANES];
        for (lane, (ray, hit)) in rays.iter().zip(hits).enumerate() {
            let Some(hit) = hit else { continue };
            match &self.shapes()[hit.shape_index as usize] {
                Shape::Mesh(mesh) => triangles.gather(lane, mesh, ray, hit),
                other => scalar[lane] = Some(analytic_interaction(other, ray, hit)),
            }
        }
        triangles.interactions(out);
        for (lane, si) in scalar.iter().enumerate() {
            if let Some(si) = si {
                out.set_lane(lane, si);
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

/// A 3-vector of four lanes, with glam's `Vec3` operations in glam's order of evaluation.
#[derive(Clone, Copy)]
struct V3 {
    x: f32x4,
    y: f32x4,
    z: f32x4,
}

impl V3 {
    fn new(x: f32x4, y: f32x4, z: f32x4) -> V3 {
        V3 { x, y, z }
    }

    fn from_columns(c: &[[f32; LANES]; 3]) -> V3 {
        V3::new(c[0].into(), c[1].into(), c[2].into())
    }

    fn to_columns(self) -> [[f32; LANES]; 3] {
        [self.x.to_array(), self.y.to_array(), self.z.to_array()]
    }

    fn add(self, o: V3) -> V3 {
        V3::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }

    fn sub(self, o: V3) -> V3 {
        V3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }

    fn scale(self, s: f32x4) -> V3 {
        V3::new(self.x * s, self.y * s, self.z * s)
    }

    fn divide(self, s: f32x4) -> V3 {
        V3::new(self.x / s, self.y / s, self.z / s)
    }

    fn neg(self) -> V3 {
        V3::new(-self.x, -self.y, -self.z)
    }

    fn dot(self, o: V3) -> f32x4 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    fn cross(self, o: V3) -> V3 {
        V3::new(self.y * o.z - o.y * self.z, self.z * o.x - o.z * self.x, self.x * o.y - o.x * self.y)
    }

    fn normalize(self) -> V3 {
        self.scale(f32x4::ONE / self.dot(self).sqrt())
    }

    /// Lane by lane `if mask { a } else { b }`.
    fn select(mask: f32x4, a: V3, b: V3) -> V3 {
        V3::new(mask.select(a.x, b.x), mask.select(a.y, b.y), mask.select(a.z, b.z))
    }
}

/// The triangle-mesh hits of four lanes, gathered side by side. Lanes without one hold
/// zeros, which give NaNs that nobody reads.
#[derive(Default)]
struct TriangleLanes {
    /// Vertex positions, normals and texture coordinates as `[vertex][component][lane]`.
    positions: [[[f32; LANES]; 3]; 3],
    normals: [[[f32; LANES]; 3]; 3],
    uvs: [[[f32; LANES]; 2]; 3],
    /// Barycentrics of vertices 1 and 2.
    b1: [f32; LANES],
    b2: [f32; LANES],
    direction: [[f32; LANES]; 3],
    t: [f32; LANES],
    shape_index: [u32; LANES],
    prim_index: [u32; LANES],
    /// All bits set in lanes whose mesh has vertex normals, and in those with uvs.
    has_normals: [u32; LANES],
    has_uvs: [u32; LANES],
}

impl TriangleLanes {
    fn gather(&mut self, lane: usize, mesh: &TriangleMesh, ray: &Ray, hit: &Hit) {
        let tri = mesh.triangles()[hit.prim_index as usize];
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
            if let Some(uvs) = mesh.uvs() {
                let uv = uvs[index];
                for c in 0..2 {
                    self.uvs[v][c][lane] = uv[c];
                }
            }
        }
        self.has_normals[lane] = if mesh.normals().is_some() { u32::MAX } else { 0 };
        self.has_uvs[lane] = if mesh.uvs().is_some() { u32::MAX } else { 0 };
        (self.b1[lane], self.b2[lane]) = (hit.prim_uv.x, hit.prim_uv.y);
        for c in 0..3 {
            self.direction[c][lane] = ray.d[c];
        }
        self.t[lane] = hit.t;
        self.shape_index[lane] = hit.shape_index;
        self.prim_index[lane] = hit.prim_index;
    }

    /// `TriangleMesh::surface_interaction` and `shading_frame`, four lanes at once; both
    /// sides of each branch are computed and blended.
    fn interactions(&self, out: &mut SurfaceInteraction4) {
        let mask = |bits: [u32; LANES]| f32x4::from(bits.map(f32::from_bits));
        let (has_normals, has_uvs) = (mask(self.has_normals), mask(self.has_uvs));
        let [p0, p1, p2] = self.positions.each_ref().map(V3::from_columns);
        let (b1, b2) = (f32x4::from(self.b1), f32x4::from(self.b2));
        let b0 = f32x4::ONE - b1 - b2;
        let interpolate = |[a, b, c]: [V3; 3]| a.scale(b0).add(b.scale(b1)).add(c.scale(b2));
        let e1 = p1.sub(p0);
        let e2 = p2.sub(p0);
        let n = e1.cross(e2).normalize();
        let vertex_n = interpolate(self.normals.each_ref().map(V3::from_columns)).normalize();
        let shading_n = V3::select(has_normals, vertex_n, n);

        let [uv0, uv1, uv2] = self.uvs.map(|[u, v]| (f32x4::from(u), f32x4::from(v)));
        let duv1 = (uv1.0 - uv0.0, uv1.1 - uv0.1);
        let duv2 = (uv2.0 - uv0.0, uv2.1 - uv0.1);
        let det = duv1.0 * duv2.1 - duv1.1 * duv2.0;
        let inv_det = det.simd_ne(f32x4::ZERO).select(f32x4::ONE / det, f32x4::ZERO);
        let uv_u = uv0.0 * b0 + uv1.0 * b1 + uv2.0 * b2;
        let uv_v = uv0.1 * b0 + uv1.1 * b1 + uv2.1 * b2;
        let dp_du_uv = e1.scale(duv2.1).sub(e2.scale(duv1.1)).scale(inv_det);
        let dp_dv_uv = e2.scale(duv1.0).sub(e1.scale(duv2.0)).scale(inv_det);
        let uv = [has_uvs.select(uv_u, b1), has_uvs.select(uv_v, b2)];
        let dp_du = V3::select(has_uvs, dp_du_uv, e1);
        let dp_dv = V3::select(has_uvs, dp_dv_uv, e2);

        let (s, t) = shading_tangents(shading_n, dp_du);
        let wi_from = V3::from_columns(&self.direction).neg();
        let wi = V3::new(wi_from.dot(s), wi_from.dot(t), wi_from.dot(shading_n));
        *out = SurfaceInteraction4 {
            t: self.t,
            p: interpolate([p0, p1, p2]).to_columns(),
            n: n.to_columns(),
            uv: uv.map(f32x4::to_array),
            sh_frame: [s.to_columns(), t.to_columns(), shading_n.to_columns()],
            dp_du: dp_du.to_columns(),
            dp_dv: dp_dv.to_columns(),
            wi: wi.to_columns(),
            shape_index: self.shape_index,
            prim_index: self.prim_index,
        };
    }
}

/// `shading_frame(n, tangent)`'s `s` and `t`: the tangent made orthogonal to `n`, or where
/// that vanishes, `coordinate_system(n)`.
fn shading_tangents(n: V3, tangent: V3) -> (V3, V3) {
    let s = tangent.sub(n.scale(n.dot(tangent)));
    let length2 = s.dot(s);
    let usable = length2.simd_gt(f32x4::ZERO) & length2.simd_lt(f32x4::splat(f32::INFINITY));
    let s = s.divide(length2.sqrt());
    let t = n.cross(s);
    // coordinate_system(n) (Duff et al. 2017).
    let sign = n.z.is_sign_negative().select(f32x4::splat(-1.0), f32x4::ONE);
    let a = f32x4::splat(-1.0) / (sign + n.z);
    let b = n.x * n.y * a;
    let fallback_s = V3::new(f32x4::ONE + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let fallback_t = V3::new(b, sign + n.y * n.y * a, -n.y);
    (V3::select(usable, s, fallback_s), V3::select(usable, t, fallback_t))
}
