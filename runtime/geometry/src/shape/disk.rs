//! Mitsuba's analytic `disk`: the unit disk in the z = 0 plane under any invertible affine
//! `to_world` (an ellipse after non-uniform scale). uv is polar: `(r, φ/2π)`.

use std::f32::consts::{PI, TAU};

use crate::error::GeometryError;
use crate::interaction::{shading_frame, Hit, PrimitiveHit, SurfaceInteraction};
use crate::math::{Aabb, Mat4, Ray, Transform, Vec2, Vec3};
use crate::sampling::{square_to_uniform_disk_concentric, PositionSample};

#[derive(Clone, Debug)]
pub struct Disk {
    /// Object to world, with the z mirror of `flip_normals` folded in (as Mitsuba does).
    to_world: Transform,
    /// Unit normal: the image of +z under the inverse transpose.
    normal: Vec3,
    area: f32,
}

impl Disk {
    pub fn new(to_world: &Transform, flip_normals: bool) -> Result<Disk, GeometryError> {
        let to_world = if flip_normals {
            Transform::new(to_world.matrix() * Mat4::from_scale(Vec3::new(1.0, 1.0, -1.0)))?
        } else {
            *to_world
        };
        let area = PI * to_world.vector(Vec3::X).cross(to_world.vector(Vec3::Y)).length();
        Ok(Disk { normal: to_world.normal(Vec3::Z).normalize(), area, to_world })
    }

    pub fn bounds(&self) -> Aabb {
        let center = self.to_world.point(Vec3::ZERO);
        let u = self.to_world.vector(Vec3::X);
        let v = self.to_world.vector(Vec3::Y);
        // Half extent of an ellipse c + u cos φ + v sin φ along each axis.
        let half = Vec3::from_array((u * u + v * v).to_array().map(f32::sqrt));
        Aabb { min: center - half, max: center + half }
    }

    pub fn surface_area(&self) -> f32 {
        self.area
    }

    /// Intersects in object space, where the disk is `x² + y² ≤ 1, z = 0`; an affine map keeps
    /// the ray parameter, so `t` needs no conversion.
    pub(crate) fn intersect(&self, ray: &Ray) -> Option<PrimitiveHit> {
        let o = self.to_world.inverse_point(ray.o);
        let d = self.to_world.inverse_vector(ray.d);
        let t = -o.z / d.z;
        let local = o + d * t;
        // Written so that NaN (a ray in the plane) misses.
        let inside = t >= 0.0 && t <= ray.maxt && local.x * local.x + local.y * local.y <= 1.0;
        inside.then_some(PrimitiveHit { t, uv: Vec2::ZERO })
    }

    pub(crate) fn surface_interaction(&self, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
        let center = self.to_world.point(Vec3::ZERO);
        let n = self.normal;
        // Re-project onto the plane for accuracy.
        let q = ray.at(hit.t);
        let p = q + n * (center - q).dot(n);
        let local = self.to_world.inverse_point(p);
        let r = (local.x * local.x + local.y * local.y).sqrt();
        let (cos_phi, sin_phi) = if r != 0.0 { (local.x / r, local.y / r) } else { (0.0, 0.0) };
        let dp_du = self.to_world.vector(Vec3::new(cos_phi, sin_phi, 0.0));
        let dp_dv = self.to_world.vector(Vec3::new(-sin_phi, cos_phi, 0.0)) * (TAU * r);
        let sh_frame = shading_frame(n, dp_du);
        SurfaceInteraction {
            t: hit.t,
            p,
            n,
            uv: disk_uv(Vec2::new(local.x, local.y)),
            sh_frame,
            dp_du,
            dp_dv,
            wi: sh_frame.to_local(-ray.d),
            shape_index: hit.shape_index,
            prim_index: hit.prim_index,
        }
    }

    pub(crate) fn sample_position(&self, sample: Vec2) -> PositionSample {
        let local = square_to_uniform_disk_concentric(sample);
        PositionSample {
            p: self.to_world.point(local.extend(0.0)),
            n: self.normal,
            uv: disk_uv(local),
            pdf: 1.0 / self.area,
        }
    }
}

/// `(r, φ/2π)` of an object-space point of the disk, φ in [0, 2π).
fn disk_uv(local: Vec2) -> Vec2 {
    let mut v = local.y.atan2(local.x) / TAU;
    if v < 0.0 {
        v += 1.0;
    }
    Vec2::new(local.length(), v)
}
