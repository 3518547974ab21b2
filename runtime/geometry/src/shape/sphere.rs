//! Mitsuba's analytic `sphere`: the unit sphere under `to_world · translate(center) ·
//! scale(radius)`, which must be a similarity. uv is `(φ/2π, θ/π)` in object space.

use std::f32::consts::{PI, TAU};

use crate::error::GeometryError;
use crate::interaction::{shading_frame, Hit, PrimitiveHit, SurfaceInteraction};
use crate::math::{Aabb, Mat4, Ray, Transform, Vec2, Vec3};
use crate::sampling::{square_to_uniform_sphere, PositionSample};

#[derive(Clone, Debug)]
pub struct Sphere {
    /// Object (unit sphere) to world.
    to_world: Transform,
    center: Vec3,
    radius: f32,
    flip_normals: bool,
}

impl Sphere {
    /// A mirroring `to_world` turns the sphere inside out, like `flip_normals` (Mitsuba).
    pub fn new(center: Vec3, radius: f32, to_world: &Transform, flip_normals: bool) -> Result<Sphere, GeometryError> {
        if !radius.is_finite() || radius == 0.0 {
            return Err(GeometryError::InvalidRadius(radius));
        }
        let placement = Mat4::from_translation(center) * Mat4::from_scale(Vec3::splat(radius));
        let to_world = Transform::new(to_world.matrix() * placement)?;
        if !to_world.is_similarity() {
            return Err(GeometryError::NonUniformSphereScale);
        }
        Ok(Sphere {
            center: to_world.point(Vec3::ZERO),
            radius: to_world.vector(Vec3::X).length(),
            flip_normals: flip_normals != (to_world.determinant() < 0.0),
            to_world,
        })
    }

    pub fn center(&self) -> Vec3 {
        self.center
    }

    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// Whether normals point inwards (`flip_normals` or a mirroring `to_world`); emitters need
    /// it to orient sampled directions, as in Mitsuba's `Sphere::sample_direction`.
    pub fn flip_normals(&self) -> bool {
        self.flip_normals
    }

    pub fn bounds(&self) -> Aabb {
        Aabb { min: self.center - self.radius, max: self.center + self.radius }
    }

    pub fn surface_area(&self) -> f32 {
        4.0 * PI * self.radius * self.radius
    }

    /// Mitsuba's robust test, in f64: the quadratic is solved from the point of the ray closest
    /// to the center, which avoids cancellation for distant origins. Inside the sphere the far
    /// root counts.
    pub(crate) fn intersect(&self, ray: &Ray) -> Option<PrimitiveHit> {
        let center = self.center.as_dvec3();
        let (o, d) = (ray.o.as_dvec3(), ray.d.as_dvec3());
        let a = d.length_squared();
        let plane_t = (center - o).dot(d) / a;
        let closest = o + d * plane_t - center;
        let b = 2.0 * closest.dot(d);
        let c = closest.length_squared() - (self.radius as f64).powi(2);
        let (near, far) = solve_quadratic(a, b, c)?;
        let (near, far) = (near + plane_t, far + plane_t);
        let maxt = ray.maxt as f64;
        // Written so that NaN misses.
        let overlaps = near <= maxt && far >= 0.0;
        let segment_inside = near < 0.0 && far > maxt;
        if !overlaps || segment_inside {
            return None;
        }
        let t = if near < 0.0 { far } else { near } as f32;
        Some(PrimitiveHit { t, uv: Vec2::ZERO })
    }

    pub(crate) fn surface_interaction(&self, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
        // Re-project onto the sphere for accuracy.
        let outward = (ray.at(hit.t) - self.center).normalize();
        let p = self.center + outward * self.radius;
        let local = self.to_world.inverse_point(p);
        let rd = (local.x * local.x + local.y * local.y).sqrt();
        let dp_dv_local =
            if rd == 0.0 { Vec3::X } else { Vec3::new(local.z * local.x / rd, local.z * local.y / rd, -rd) };
        let dp_du = self.to_world.vector(Vec3::new(-local.y, local.x, 0.0)) * TAU;
        let dp_dv = self.to_world.vector(dp_dv_local) * PI;
        let n = if self.flip_normals { -outward } else { outward };
        let sh_frame = shading_frame(n, dp_du);
        SurfaceInteraction {
            t: hit.t,
            p,
            n,
            uv: sphere_uv(local),
            sh_frame,
            dp_du,
            dp_dv,
            wi: sh_frame.to_local(-ray.d),
            shape_index: hit.shape_index,
            prim_index: hit.prim_index,
        }
    }

    pub(crate) fn sample_position(&self, sample: Vec2) -> PositionSample {
        let local = square_to_uniform_sphere(sample);
        let p = self.to_world.point(local);
        let outward = (p - self.center).normalize();
        PositionSample {
            p,
            n: if self.flip_normals { -outward } else { outward },
            uv: sphere_uv(local),
            pdf: 1.0 / self.surface_area(),
        }
    }
}

/// `(φ/2π, θ/π)` of an object-space point on the unit sphere, φ in [0, 2π).
fn sphere_uv(local: Vec3) -> Vec2 {
    let theta = local.z.clamp(-1.0, 1.0).acos();
    let mut phi = local.y.atan2(local.x);
    if phi < 0.0 {
        phi += TAU;
    }
    Vec2::new(phi / TAU, theta / PI)
}

/// Real roots of `a t² + b t + c` in increasing order, computed without cancellation
/// (Mitsuba `math::solve_quadratic`; a linear equation has its root twice).
fn solve_quadratic(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {
    if a == 0.0 {
        if b == 0.0 {
            return None;
        }
        let x = -c / b;
        return Some((x, x));
    }
    let discriminant = b * b - 4.0 * a * c;
    if discriminant.is_nan() || discriminant < 0.0 {
        return None;
    }
    let temp = -0.5 * (b + discriminant.sqrt().copysign(b));
    let x0 = temp / a;
    // temp = 0 only for the double root 0 (b = c = 0).
    let x1 = if temp != 0.0 { c / temp } else { x0 };
    Some(if x0 <= x1 { (x0, x1) } else { (x1, x0) })
}
