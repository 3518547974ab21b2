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
        let rays = self.rays(&[[uv.x], [uv.y]]);
        let lane = |v: &[[f32; 1]; 3]| Vec3::new(v[0][0], v[1][0], v[2][0]);
        Ray::with_maxt(lane(&rays.o), lane(&rays.d), rays.maxt[0])
    }

    /// [`Self::ray`] for `N` film positions (`uv[axis][lane]`) at once: each step runs on all
    /// lanes (vector instructions), so that the two square roots and three divisions of a
    /// ray overlap with the other lanes' instead of waiting on each other. Every lane gets the
    /// arithmetic of one glam ray (`normalize` as the product with `1 / length`, the matrix
    /// applied column by column), in the same order, without fused multiply-adds.
    pub fn rays<const N: usize>(&self, uv: &[[f32; N]; 2]) -> RayLanes<N> {
        let lanes = |f: &dyn Fn(usize) -> f32| -> [f32; N] { std::array::from_fn(f) };
        // The direction in camera space, (x, y, 1) normalised.
        let x = lanes(&|l| (1.0 - 2.0 * uv[0][l]) * self.tan_half.x);
        let y = lanes(&|l| (1.0 - 2.0 * uv[1][l]) * self.tan_half.y);
        let inv_length = lanes(&|l| 1.0 / (x[l] * x[l] + y[l] * y[l] + 1.0).sqrt());
        let local = [lanes(&|l| x[l] * inv_length[l]), lanes(&|l| y[l] * inv_length[l]), inv_length];
        let inv_z = lanes(&|l| 1.0 / local[2][l]);
        let near_t = lanes(&|l| self.near_clip * inv_z[l]);
        let far_t = lanes(&|l| self.far_clip * inv_z[l]);
        // In world space, normalised again.
        let m = self.to_world.matrix();
        let world: [[f32; N]; 3] = std::array::from_fn(|c| {
            lanes(&|l| m.x_axis[c] * local[0][l] + m.y_axis[c] * local[1][l] + m.z_axis[c] * local[2][l])
        });
        let inv_length = lanes(&|l| {
            let [wx, wy, wz] = [world[0][l], world[1][l], world[2][l]];
            1.0 / (wx * wx + wy * wy + wz * wz).sqrt()
        });
        let d: [[f32; N]; 3] = std::array::from_fn(|c| lanes(&|l| world[c][l] * inv_length[l]));
        let o = self.to_world.point(Vec3::ZERO);
        RayLanes {
            o: std::array::from_fn(|c| lanes(&|l| o[c] + d[c][l] * near_t[l])),
            d,
            maxt: lanes(&|l| far_t[l] - near_t[l]),
        }
    }
}

/// `N` rays, component by component: `o[axis][lane]`, `d[axis][lane]`, `maxt[lane]`.
#[derive(Clone, Copy, Debug)]
pub struct RayLanes<const N: usize> {
    pub o: [[f32; N]; 3],
    pub d: [[f32; N]; 3],
    pub maxt: [f32; N],
}

#[cfg(test)]
mod tests {
    use drs_geometry::math::{Mat4, Quat, Vec2, Vec3};
    use drs_geometry::{Ray, Transform};

    use super::{FovAxis, PerspectiveCamera};

    /// The camera ray written with glam's vector operations, one ray at a time.
    fn glam_ray(camera: &PerspectiveCamera, uv: Vec2) -> Ray {
        let tan_half = camera.tan_half;
        let local = Vec3::new((1.0 - 2.0 * uv.x) * tan_half.x, (1.0 - 2.0 * uv.y) * tan_half.y, 1.0);
        let d_local = local.normalize();
        let inv_z = 1.0 / d_local.z;
        let (near_t, far_t) = (camera.near_clip * inv_z, camera.far_clip * inv_z);
        let o = camera.to_world.point(Vec3::ZERO);
        let d = camera.to_world.vector(d_local).normalize();
        Ray::with_maxt(o + d * near_t, d, far_t - near_t)
    }

    /// The rays of eight film positions at once are glam's rays bit for bit, for a camera
    /// placed by a rotation and by a skewed, scaled transform; the centre's ray runs along the
    /// camera's axis from the near plane to the far one.
    #[test]
    fn camera_rays_in_lanes_are_the_single_rays() {
        let rotation = Quat::from_rotation_y(2.9) * Quat::from_rotation_x(-0.2);
        let placed = Mat4::from_rotation_translation(rotation, Vec3::new(0.0, 1.0, 6.8));
        let skewed = Mat4::from_cols_array(&[
            2.0, 0.5, 0.0, 0.0, //
            0.0, 1.5, 0.3, 0.0, //
            0.1, 0.0, 0.7, 0.0, //
            -1.0, 2.0, 0.25, 1.0,
        ]);
        for (matrix, axis, near, far) in [(placed, FovAxis::X, 0.01, 1e4), (skewed, FovAxis::Diagonal, 0.5, 30.0)] {
            let camera = PerspectiveCamera::new(Transform::new(matrix).unwrap(), 39.3, axis, 320, 240, near, far);
            let mut state = 0x9e37_79b9u32;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state >> 8) as f32 / (1u32 << 24) as f32
            };
            for _ in 0..64 {
                let uv: [[f32; 8]; 2] = [std::array::from_fn(|_| next()), std::array::from_fn(|_| next())];
                let rays = camera.rays(&uv);
                for l in 0..8 {
                    let expected = glam_ray(&camera, Vec2::new(uv[0][l], uv[1][l]));
                    let bits = |v: Vec3| v.to_array().map(f32::to_bits);
                    let lane = |v: &[[f32; 8]; 3]| Vec3::new(v[0][l], v[1][l], v[2][l]);
                    assert_eq!(bits(lane(&rays.o)), bits(expected.o), "origin, uv {:?}", (uv[0][l], uv[1][l]));
                    assert_eq!(bits(lane(&rays.d)), bits(expected.d), "direction");
                    assert_eq!(rays.maxt[l].to_bits(), expected.maxt.to_bits(), "maxt");
                }
            }
            let centre = camera.ray(Vec2::splat(0.5));
            let forward = Transform::new(matrix).unwrap().vector(Vec3::Z).normalize();
            assert!(centre.d.abs_diff_eq(forward, 1e-6), "{:?} against {forward:?}", centre.d);
            assert!((centre.maxt - (far - near)).abs() <= 1e-6 * far);
        }
    }
}
