//! Mitsuba's built-in meshes: `rectangle` ([-1, 1]² at z = 0, two triangles) and `cube`
//! ([-1, 1]³, four vertices per face so that faces keep their own normal and uv).

use crate::error::GeometryError;
use crate::math::{Transform, Vec2, Vec3};
use crate::shape::mesh::{MeshData, MeshOptions, TriangleMesh};

/// The rectangle with Mitsuba's vertex order and uv: corner (x, y) has uv ((x+1)/2, (y+1)/2),
/// the normal is +z.
pub fn rectangle_data() -> MeshData {
    let corners = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)];
    MeshData {
        positions: corners.iter().map(|&(x, y)| Vec3::new(x, y, 0.0)).collect(),
        normals: Some(vec![Vec3::Z; 4]),
        uvs: Some(corners.iter().map(|&(x, y)| Vec2::new((x + 1.0) / 2.0, (y + 1.0) / 2.0)).collect()),
        triangles: vec![[1, 2, 0], [1, 3, 2]],
    }
}

/// The rectangle as a mesh that samples positions as Mitsuba's analytic rectangle does: uv is
/// the sample, mapped affinely onto the rectangle. Like both generated meshes it takes face
/// normals (see [`cube`]).
pub fn rectangle(to_world: &Transform, flip_normals: bool) -> Result<TriangleMesh, GeometryError> {
    let mesh = TriangleMesh::new(rectangle_data(), to_world, MeshOptions { flip_normals, face_normals: true })?;
    Ok(mesh.sampled_as_rectangle())
}

/// The cube as Mitsuba's `cube` plugin lays it out: face `f` has vertices `4f..4f+3` at the
/// corners below (corner `c` is at `(±1, ±1, ±1)` with bit k of `c` giving the sign of axis k),
/// uv `(0,1) (1,1) (1,0) (0,0)`, and triangles `(4f, 4f+1, 4f+2)`, `(4f+3, 4f, 4f+2)`.
pub fn cube_data() -> MeshData {
    const FACE_NORMALS: [Vec3; 6] = [Vec3::NEG_Y, Vec3::Y, Vec3::X, Vec3::Z, Vec3::NEG_X, Vec3::NEG_Z];
    const FACE_CORNERS: [[u32; 4]; 6] =
        [[1, 5, 4, 0], [3, 2, 6, 7], [1, 3, 7, 5], [5, 7, 6, 4], [4, 6, 2, 0], [3, 1, 0, 2]];
    const FACE_UVS: [Vec2; 4] = [Vec2::new(0.0, 1.0), Vec2::new(1.0, 1.0), Vec2::new(1.0, 0.0), Vec2::new(0.0, 0.0)];
    let corner = |c: u32| Vec3::new(sign(c & 1), sign(c & 2), sign(c & 4));
    let mut data = MeshData::default();
    let (mut normals, mut uvs) = (Vec::new(), Vec::new());
    for (face, corners) in FACE_CORNERS.iter().enumerate() {
        data.positions.extend(corners.iter().map(|&c| corner(c)));
        normals.extend([FACE_NORMALS[face]; 4]);
        uvs.extend(FACE_UVS);
        let v = 4 * face as u32;
        data.triangles.extend([[v, v + 1, v + 2], [v + 3, v, v + 2]]);
    }
    MeshData { normals: Some(normals), uvs: Some(uvs), ..data }
}

/// The cube mesh. Every vertex normal of a generated face is the face's normal, so the mesh
/// keeps none and shades with face normals: the same directions (a mirroring transform or
/// `flip_normals` turns the winding as it turns the normals), without gathering and
/// interpolating three normals per hit (1.2% of a Cornell box render's instructions).
pub fn cube(to_world: &Transform, flip_normals: bool) -> Result<TriangleMesh, GeometryError> {
    TriangleMesh::new(cube_data(), to_world, MeshOptions { flip_normals, face_normals: true })
}

fn sign(bit: u32) -> f32 {
    if bit != 0 {
        1.0
    } else {
        -1.0
    }
}
