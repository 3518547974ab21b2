//! Ray hits and the surface interaction computed from them, with Mitsuba's conventions
//! (`SurfaceInteraction3f`, `compute_surface_interaction` of each shape).

use crate::math::{coordinate_system, Frame, Ray, Vec2, Vec3, RAY_EPSILON, SHADOW_EPSILON};

/// The closest (or any) hit of a ray: what traversal finds, before shading quantities are
/// computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Distance along the ray, in units of `ray.d`.
    pub t: f32,
    /// Index of the shape in the scene's shape list.
    pub shape_index: u32,
    /// Triangle index within a mesh; 0 for spheres and disks.
    pub prim_index: u32,
    /// The primitive's local parametrisation at the hit: barycentrics `(b1, b2)` of the second
    /// and third vertex for triangles; zero for spheres and disks, whose surface interaction
    /// recomputes what it needs from the hit point (as Mitsuba's preliminary intersections
    /// do). Their polar uv costs an `acos` and an `atan2`, which an intersection test, often of
    /// a shadow ray or of a hit that a nearer one replaces, would throw away.
    pub prim_uv: Vec2,
}

/// The hit of one primitive, before it is known to be the closest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrimitiveHit {
    pub t: f32,
    /// As [`Hit::prim_uv`].
    pub uv: Vec2,
}

/// Geometry of a surface point hit by a ray (Mitsuba `SurfaceInteraction3f`, without the
/// BSDF and emitter lookups, which the runtime adds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SurfaceInteraction {
    pub t: f32,
    pub p: Vec3,
    /// Geometric normal (unit length; flipped by `flip_normals`).
    pub n: Vec3,
    pub uv: Vec2,
    /// Shading frame; `sh_frame.n` is the interpolated vertex normal where a mesh has them.
    pub sh_frame: Frame,
    /// Partial derivatives of the position with respect to `uv`.
    pub dp_du: Vec3,
    pub dp_dv: Vec3,
    /// `-ray.d` in the shading frame.
    pub wi: Vec3,
    pub shape_index: u32,
    pub prim_index: u32,
}

impl SurfaceInteraction {
    pub fn to_local(&self, v: Vec3) -> Vec3 {
        self.sh_frame.to_local(v)
    }

    pub fn to_world(&self, v: Vec3) -> Vec3 {
        self.sh_frame.to_world(v)
    }

    /// A ray leaving the surface in direction `d`, its origin pushed off the surface along the
    /// geometric normal on the side `d` points to (Mitsuba `spawn_ray`).
    pub fn spawn_ray(&self, d: Vec3) -> Ray {
        Ray::new(self.offset_origin(d), d)
    }

    /// A ray from the surface towards `target` that stops just short of it, for visibility
    /// tests (Mitsuba `spawn_ray_to`); its direction is normalised.
    pub fn spawn_ray_to(&self, target: Vec3) -> Ray {
        let o = self.offset_origin(target - self.p);
        let d = target - o;
        let dist = d.length();
        Ray::with_maxt(o, d / dist, dist * (1.0 - SHADOW_EPSILON))
    }

    fn offset_origin(&self, d: Vec3) -> Vec3 {
        let magnitude = (1.0 + self.p.abs().max_element()) * RAY_EPSILON;
        self.p + self.n * magnitude.copysign(self.n.dot(d))
    }
}

/// The shading frame around the unit normal `n` whose first axis is `tangent` made orthogonal
/// to `n`, or any frame when that vanishes (Mitsuba `finalize_surface_interaction`).
pub(crate) fn shading_frame(n: Vec3, tangent: Vec3) -> Frame {
    let s = tangent - n * n.dot(tangent);
    let length2 = s.length_squared();
    if length2 > 0.0 && length2.is_finite() {
        let s = s / length2.sqrt();
        Frame { s, t: n.cross(s), n }
    } else {
        let (s, t) = coordinate_system(n);
        Frame { s, t, n }
    }
}
