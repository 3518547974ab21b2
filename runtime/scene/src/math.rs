//! The little linear algebra a scene description needs: 3-vectors and affine 4x4 transforms
//! in f64, built the way Mitsuba 3 builds them.

use std::ops::Mul;

/// A point, vector or RGB triple.
pub type Vec3 = [f64; 3];

/// A 4x4 matrix acting on column vectors (`p' = M p`), stored row-major.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    rows: [[f64; 4]; 4],
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Transform =
        Transform { rows: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]] };

    pub fn from_rows(rows: [[f64; 4]; 4]) -> Self {
        Transform { rows }
    }

    pub fn rows(&self) -> [[f64; 4]; 4] {
        self.rows
    }

    pub fn translate(t: Vec3) -> Self {
        let mut m = Self::IDENTITY;
        for (i, ti) in t.into_iter().enumerate() {
            m.rows[i][3] = ti;
        }
        m
    }

    pub fn scale(s: Vec3) -> Self {
        let mut m = Self::IDENTITY;
        for (i, si) in s.into_iter().enumerate() {
            m.rows[i][i] = si;
        }
        m
    }

    /// Counter-clockwise rotation by `degrees` about `axis` (normalised here; Rodrigues'
    /// formula `R = cos θ I + sin θ [a]x + (1 - cos θ) a aᵀ`). `None` when the axis is zero.
    pub fn rotate(axis: Vec3, degrees: f64) -> Option<Self> {
        let a = normalize(axis)?;
        let (s, c) = degrees.to_radians().sin_cos();
        let t = 1.0 - c;
        let mut m = Self::IDENTITY;
        m.rows[0][..3].copy_from_slice(&[a[0] * a[0] * t + c, a[0] * a[1] * t - a[2] * s, a[0] * a[2] * t + a[1] * s]);
        m.rows[1][..3].copy_from_slice(&[a[0] * a[1] * t + a[2] * s, a[1] * a[1] * t + c, a[1] * a[2] * t - a[0] * s]);
        m.rows[2][..3].copy_from_slice(&[a[0] * a[2] * t - a[1] * s, a[1] * a[2] * t + a[0] * s, a[2] * a[2] * t + c]);
        Some(m)
    }

    /// Mitsuba's camera-to-world look-at: the columns are `left = normalize(up x dir)`,
    /// `up' = dir x left`, `dir = normalize(target - origin)` and `origin`. A zero `up` is
    /// replaced by a vector perpendicular to `dir` (as Mitsuba does).
    pub fn look_at(origin: Vec3, target: Vec3, up: Vec3) -> Result<Self, LookAtError> {
        let dir = normalize(sub(target, origin)).ok_or(LookAtError::TargetAtOrigin)?;
        let up = if up == [0.0; 3] { perpendicular(dir) } else { up };
        let left = normalize(cross(up, dir)).ok_or(LookAtError::UpParallelToDirection)?;
        let new_up = cross(dir, left);
        let mut m = Self::IDENTITY;
        for (column, v) in [left, new_up, dir, origin].into_iter().enumerate() {
            for (row, vi) in v.into_iter().enumerate() {
                m.rows[row][column] = vi;
            }
        }
        Ok(m)
    }

    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let h = [p[0], p[1], p[2], 1.0];
        let r = |i: usize| (0..4).map(|j| self.rows[i][j] * h[j]).sum::<f64>();
        let w = r(3);
        [r(0) / w, r(1) / w, r(2) / w]
    }

    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        let r = |i: usize| (0..3).map(|j| self.rows[i][j] * v[j]).sum::<f64>();
        [r(0), r(1), r(2)]
    }

    pub fn is_finite(&self) -> bool {
        self.rows.iter().flatten().all(|x| x.is_finite())
    }
}

/// `a * b`: apply `b` first, then `a`.
impl Mul for Transform {
    type Output = Transform;

    fn mul(self, b: Transform) -> Transform {
        let mut rows = [[0.0; 4]; 4];
        for (i, row) in rows.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = (0..4).map(|k| self.rows[i][k] * b.rows[k][j]).sum();
            }
        }
        Transform { rows }
    }
}

/// Why a `<lookat>` has no camera frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookAtError {
    TargetAtOrigin,
    UpParallelToDirection,
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `v / |v|`, or `None` when `v` is zero (or so small that the result is not finite).
pub(crate) fn normalize(v: Vec3) -> Option<Vec3> {
    let length = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let n = [v[0] / length, v[1] / length, v[2] / length];
    (length > 0.0 && n.iter().all(|x| x.is_finite())).then_some(n)
}

/// A unit vector perpendicular to the unit vector `n`: the first tangent of the branchless
/// orthonormal basis of Duff et al., "Building an Orthonormal Basis, Revisited" (JCGT 2017).
fn perpendicular(n: Vec3) -> Vec3 {
    let sign = 1f64.copysign(n[2]);
    let a = -1.0 / (sign + n[2]);
    let b = n[0] * n[1] * a;
    [1.0 + sign * n[0] * n[0] * a, sign * b, -sign * n[0]]
}
