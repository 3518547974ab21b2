//! The perspective camera (Mitsuba 3 `perspective`): a pinhole looking down its local +z,
//! local +x to the image's left and +y up, placed by `to_world` (usually a `lookat`).

use drs_geometry::math::{Vec2, Vec3};
use drs_geometry::{Ray, Transform};
use wide::f32x8;

/// Camera rays computed side by side by [`PerspectiveCamera::rays`].
pub const RAY_LANES: usize = 8;

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

    /// The rays through [`RAY_LANES`] film positions at once, each bit for bit [`ray`]'s: the
    /// same operations in the same order, eight lanes wide. One at a time, the two square
    /// roots and three divisions of a ray made up half of the camera's and seeding's time.
    ///
    /// [`ray`]: Self::ray
    pub fn rays(&self, uv: [Vec2; RAY_LANES]) -> [Ray; RAY_LANES] {
        let splat = f32x8::splat;
        let one = splat(1.0);
        let local_x = (one - splat(2.0) * f32x8::new(uv.map(|p| p.x))) * splat(self.tan_half.x);
        let local_y = (one - splat(2.0) * f32x8::new(uv.map(|p| p.y))) * splat(self.tan_half.y);
        // `normalize` multiplies by `1 / sqrt(x² + y² + z²)`, summed left to right.
        let recip_length = one / (local_x * local_x + local_y * local_y + one * one).sqrt();
        let d_local = [local_x * recip_length, local_y * recip_length, one * recip_length];
        let inv_z = one / d_local[2];
        let (near_t, far_t) = (splat(self.near_clip) * inv_z, splat(self.far_clip) * inv_z);
        // glam's `transform_vector3`: x_axis * x, then y_axis * y and z_axis * z added in turn.
        let m = self.to_world.matrix();
        let columns = [m.x_axis, m.y_axis, m.z_axis];
        let world: [f32x8; 3] = std::array::from_fn(|row| {
            let [x, y, z] = columns.map(|column| splat(column[row]));
            x * d_local[0] + y * d_local[1] + z * d_local[2]
        });
        let recip_length = one / (world[0] * world[0] + world[1] * world[1] + world[2] * world[2]).sqrt();
        let d = world.map(|w| (w * recip_length).to_array());
        let o = self.to_world.point(Vec3::ZERO);
        let (near_t, far_t) = (near_t.to_array(), far_t.to_array());
        std::array::from_fn(|l| {
            let d = Vec3::new(d[0][l], d[1][l], d[2][l]);
            Ray::with_maxt(o + d * near_t[l], d, far_t[l] - near_t[l])
        })
    }
}

#[cfg(test)]
mod tests {
    use drs_geometry::math::{Mat4, Quat, Vec2, Vec3};
    use drs_geometry::Transform;

    use super::{FovAxis, PerspectiveCamera, RAY_LANES};

    /// The eight-lane rays are the one-at-a-time rays to the bit, for a rotated, translated and
    /// scaled camera and film positions across the whole film and beyond its edges.
    #[test]
    fn rays_side_by_side_equal_single_rays() {
        let rotation = Quat::from_axis_angle(Vec3::new(0.3, 1.0, -0.2).normalize(), 2.5);
        let placed = Mat4::from_rotation_translation(rotation, Vec3::new(0.3, 1.2, 4.5));
        let placements = [
            Transform::IDENTITY,
            Transform::new(placed).unwrap(),
            Transform::new(placed * Mat4::from_scale(Vec3::new(2.0, 0.5, 1.5))).unwrap(),
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 1.2 - 0.1
        };
        for to_world in placements {
            for (fov, axis) in [(39.3, FovAxis::X), (60.0, FovAxis::Diagonal), (20.0, FovAxis::Y)] {
                let camera = PerspectiveCamera::new(to_world, fov, axis, 320, 240, 0.01, 1000.0);
                for _ in 0..500 {
                    let uv: [Vec2; RAY_LANES] = std::array::from_fn(|_| Vec2::new(uniform(), uniform()));
                    for (lane, ray) in camera.rays(uv).iter().enumerate() {
                        let single = camera.ray(uv[lane]);
                        let bits = |r: &drs_geometry::Ray| {
                            [r.o.to_array(), r.d.to_array(), [r.maxt; 3]].map(|v| v.map(f32::to_bits))
                        };
                        assert_eq!(bits(ray), bits(&single), "uv {:?}", uv[lane]);
                    }
                }
            }
        }
    }
}
