//! The perspective camera (Mitsuba 3 `perspective`): a pinhole looking down its local +z,
//! local +x to the image's left and +y up, placed by `to_world` (usually a `lookat`).

use drs_geometry::math::{Vec2, Vec3};
use drs_geometry::{Ray, Transform};

/// Which image extent `fov` spans (Mitsuba's `fov_axis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FovAxis {
    X,
    Y,
    Diagonal,
    Smaller,
    Larger,
}

impl FovAxis {
    pub fn parse(text: &str) -> Option<FovAxis> {
        Some(match text {
            "x" => FovAxis::X,
            "y" => FovAxis::Y,
            "diagonal" => FovAxis::Diagonal,
            "smaller" => FovAxis::Smaller,
            "larger" => FovAxis::Larger,
            _ => return None,
        })
    }
}

/// Mitsuba's field of view without `fov`: a 50 mm lens on 35 mm film (36 x 24 mm), measured
/// on the diagonal, in degrees.
pub fn default_fov_degrees() -> f64 {
    let diagonal: f64 = (36.0f64 * 36.0 + 24.0 * 24.0).sqrt();
    2.0 * (diagonal / (2.0 * 50.0)).atan().to_degrees()
}

#[derive(Clone, Debug)]
pub struct PerspectiveCamera {
    to_world: Transform,
    /// tan(fov_x / 2) and tan(fov_y / 2).
    tan_half: Vec2,
    near_clip: f32,
    far_clip: f32,
}

impl PerspectiveCamera {
    /// `fov_degrees` along `axis` of a `width` x `height` film.
    pub fn new(
        to_world: Transform,
        fov_degrees: f64,
        axis: FovAxis,
        width: u32,
        height: u32,
        near_clip: f32,
        far_clip: f32,
    ) -> PerspectiveCamera {
        let aspect = width as f64 / height as f64;
        let tan_fov = (fov_degrees.to_radians() / 2.0).tan();
        let axis = match axis {
            FovAxis::Smaller if aspect > 1.0 => FovAxis::Y,
            FovAxis::Smaller => FovAxis::X,
            FovAxis::Larger if aspect > 1.0 => FovAxis::X,
            FovAxis::Larger => FovAxis::Y,
            other => other,
        };
        let tan_x = match axis {
            FovAxis::Y => tan_fov * aspect,
            FovAxis::Diagonal => tan_fov * aspect / (1.0 + aspect * aspect).sqrt(),
            _ => tan_fov,
        };
        PerspectiveCamera { to_world, tan_half: Vec2::new(tan_x as f32, (tan_x / aspect) as f32), near_clip, far_clip }
    }

    /// The ray through film position `uv` in `[0, 1]²` (`(0, 0)` the top-left corner), starting
    /// at the near clip plane and ending at the far one (as Mitsuba's `sample_ray`).
    pub fn ray(&self, uv: Vec2) -> Ray {
        let local = Vec3::new((1.0 - 2.0 * uv.x) * self.tan_half.x, (1.0 - 2.0 * uv.y) * self.tan_half.y, 1.0);
        let d_local = local.normalize();
        let inv_z = 1.0 / d_local.z;
        let (near_t, far_t) = (self.near_clip * inv_z, self.far_clip * inv_z);
        let o = self.to_world.point(Vec3::ZERO);
        let d = self.to_world.vector(d_local).normalize();
        Ray::with_maxt(o + d * near_t, d, far_t - near_t)
    }
}
