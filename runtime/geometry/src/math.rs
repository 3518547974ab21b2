//! The small amount of linear algebra the geometry layer needs, in f32 like the kernels: glam's
//! vectors and matrices, plus affine transforms that keep their inverse, bounding boxes, rays and
//! orthonormal frames.

pub use glam::{Mat3, Mat4, Quat, Vec2, Vec3};

use crate::error::GeometryError;

/// Mitsuba's `math::RayEpsilon` (1500 · 2⁻²⁴): how far, relative to the magnitude of the
/// position, a ray leaving a surface is pushed off it.
pub const RAY_EPSILON: f32 = 1500.0 * (f32::EPSILON / 2.0);

/// Mitsuba's `math::ShadowEpsilon`: the relative amount by which a shadow ray stops short of
/// its target.
pub const SHADOW_EPSILON: f32 = RAY_EPSILON * 10.0;

/// A ray `o + t·d` for `t` in `[0, maxt]` (Mitsuba rays have no lower bound; rays leaving a
/// surface are offset instead, see [`crate::SurfaceInteraction::spawn_ray`]). `d` need not be
/// normalised; `t` is in units of `d`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    pub o: Vec3,
    pub d: Vec3,
    pub maxt: f32,
}

impl Ray {
    /// A ray without an end (`maxt = f32::MAX`, like Mitsuba's `Largest<Float>`).
    pub fn new(o: Vec3, d: Vec3) -> Ray {
        Ray { o, d, maxt: f32::MAX }
    }

    pub fn with_maxt(o: Vec3, d: Vec3, maxt: f32) -> Ray {
        Ray { o, d, maxt }
    }

    pub fn at(&self, t: f32) -> Vec3 {
        self.o + self.d * t
    }
}

/// An invertible affine transform with its inverse and the matrix that maps normals (the
/// inverse transpose of the linear part).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    matrix: Mat4,
    inverse: Mat4,
    normal_matrix: Mat3,
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Transform =
        Transform { matrix: Mat4::IDENTITY, inverse: Mat4::IDENTITY, normal_matrix: Mat3::IDENTITY };

    /// Checks that `matrix` is finite, affine (last row `0 0 0 1`) and invertible.
    pub fn new(matrix: Mat4) -> Result<Transform, GeometryError> {
        if !matrix.is_finite() {
            return Err(GeometryError::NonFiniteTransform);
        }
        if matrix.row(3) != glam::Vec4::W {
            return Err(GeometryError::ProjectiveTransform);
        }
        let linear = Mat3::from_mat4(matrix);
        let det = linear.determinant();
        if det == 0.0 || !det.is_finite() {
            return Err(GeometryError::SingularTransform);
        }
        let inverse = matrix.inverse();
        if !inverse.is_finite() {
            return Err(GeometryError::SingularTransform);
        }
        Ok(Transform { matrix, inverse, normal_matrix: Mat3::from_mat4(inverse).transpose() })
    }

    pub fn matrix(&self) -> Mat4 {
        self.matrix
    }

    pub fn point(&self, p: Vec3) -> Vec3 {
        self.matrix.transform_point3(p)
    }

    pub fn vector(&self, v: Vec3) -> Vec3 {
        self.matrix.transform_vector3(v)
    }

    /// Maps a normal with the inverse transpose; the result is not normalised.
    pub fn normal(&self, n: Vec3) -> Vec3 {
        self.normal_matrix * n
    }

    pub fn inverse_point(&self, p: Vec3) -> Vec3 {
        self.inverse.transform_point3(p)
    }

    pub fn inverse_vector(&self, v: Vec3) -> Vec3 {
        self.inverse.transform_vector3(v)
    }

    /// Determinant of the linear part; negative for mirroring transforms.
    pub fn determinant(&self) -> f32 {
        Mat3::from_mat4(self.matrix).determinant()
    }

    /// Whether the linear part is a rotation (or mirror) times a uniform scale, within a
    /// relative tolerance (Mitsuba's `is_similarity`, which spheres require).
    pub fn is_similarity(&self) -> bool {
        let m = Mat3::from_mat4(self.matrix);
        let gram = m.transpose() * m;
        let scale2 = (gram.x_axis.x + gram.y_axis.y + gram.z_axis.z) / 3.0;
        let tolerance = 1e-4 * scale2;
        let off_diagonal = [gram.x_axis.y, gram.x_axis.z, gram.y_axis.z];
        let diagonal = [gram.x_axis.x, gram.y_axis.y, gram.z_axis.z];
        off_diagonal.iter().all(|g| g.abs() <= tolerance) && diagonal.iter().all(|g| (g - scale2).abs() <= tolerance)
    }
}

/// An axis-aligned bounding box; [`Aabb::EMPTY`] is the identity of [`Aabb::union`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Vec3,
    pub max: Vec3,
}

impl Aabb {
    pub const EMPTY: Aabb = Aabb { min: Vec3::splat(f32::INFINITY), max: Vec3::splat(f32::NEG_INFINITY) };

    pub fn from_points(points: &[Vec3]) -> Aabb {
        points.iter().fold(Aabb::EMPTY, |b, &p| b.expand(p))
    }

    pub fn expand(self, p: Vec3) -> Aabb {
        Aabb { min: self.min.min(p), max: self.max.max(p) }
    }

    pub fn union(self, other: Aabb) -> Aabb {
        Aabb { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    pub fn is_empty(&self) -> bool {
        !(self.min.cmple(self.max).all())
    }

    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    pub fn extent(&self) -> Vec3 {
        self.max - self.min
    }

    /// Surface area (0 for an empty box); the SAH compares these.
    pub fn surface_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let e = self.extent();
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }
}

/// An orthonormal basis with `n` as its third axis (Mitsuba's `Frame3f`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Frame {
    pub s: Vec3,
    pub t: Vec3,
    pub n: Vec3,
}

impl Frame {
    /// The frame the stdlib's `Frame::new` builds around the unit normal `n`.
    pub fn from_normal(n: Vec3) -> Frame {
        let (s, t) = coordinate_system(n);
        Frame { s, t, n }
    }

    pub fn to_local(&self, v: Vec3) -> Vec3 {
        Vec3::new(v.dot(self.s), v.dot(self.t), v.dot(self.n))
    }

    pub fn to_world(&self, v: Vec3) -> Vec3 {
        self.s * v.x + self.t * v.y + self.n * v.z
    }
}

/// Two unit tangents completing the unit vector `n` to a right-handed orthonormal basis,
/// without branches or singularities (Duff et al. 2017, "Building an Orthonormal Basis,
/// Revisited"); the same formula as the stdlib's `coordinate_system`.
pub fn coordinate_system(n: Vec3) -> (Vec3, Vec3) {
    let sign = 1.0f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let s = Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let t = Vec3::new(b, sign + n.y * n.y * a, -n.y);
    (s, t)
}
