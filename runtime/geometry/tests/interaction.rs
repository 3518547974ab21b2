//! Surface interactions against hand-computed values: positions, normals (geometric and
//! shading), uv, dp/du, dp/dv and shading frames of every shape, `flip_normals`,
//! `face_normals`, mirroring and non-uniform transforms.

mod common;

use std::f32::consts::{FRAC_1_SQRT_2, PI, TAU};

use common::{assert_close, assert_vec2_close, assert_vec3_close, Rng};
use drs_geometry::math::{Mat4, Quat, Vec2, Vec3};
use drs_geometry::{
    cube, cube_data, rectangle, rectangle_data, Disk, Geometry, MeshData, MeshOptions, Ray, Shape, Sphere,
    SurfaceInteraction, SurfaceInteractions, Transform, TriangleMesh,
};

fn transform(matrix: Mat4) -> Transform {
    Transform::new(matrix).unwrap()
}

/// The interaction of `ray` with a scene holding only `shape`.
fn interact(shape: impl Into<Shape>, ray: Ray) -> SurfaceInteraction {
    let geometry = Geometry::new(vec![shape.into()]).unwrap();
    let hit = geometry.intersect(&ray).expect("the ray should hit");
    let si = geometry.surface_interaction(&ray, &hit);
    assert_orthonormal_frame(&si);
    assert_vec3_close(si.wi, si.to_local(-ray.d), 1e-6);
    si
}

fn assert_orthonormal_frame(si: &SurfaceInteraction) {
    let f = si.sh_frame;
    for v in [f.s, f.t, f.n] {
        assert_close(v.length(), 1.0, 1e-5);
    }
    assert_close(f.s.dot(f.t), 0.0, 1e-5);
    assert_close(f.s.dot(f.n), 0.0, 1e-5);
    assert_vec3_close(f.s.cross(f.t), f.n, 1e-5);
    assert_close(si.n.length(), 1.0, 1e-5);
}

fn down_at(x: f32, y: f32) -> Ray {
    Ray::new(Vec3::new(x, y, 5.0), -Vec3::Z)
}

#[test]
fn rectangle_uv_normals_and_partials() {
    let si = interact(rectangle(&Transform::IDENTITY, false).unwrap(), down_at(0.3, -0.4));
    assert_vec3_close(si.p, Vec3::new(0.3, -0.4, 0.0), 1e-6);
    assert_close(si.t, 5.0, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.65, 0.3), 1e-6);
    assert_vec3_close(si.n, Vec3::Z, 1e-6);
    assert_vec3_close(si.sh_frame.n, Vec3::Z, 1e-6);
    assert_vec3_close(si.dp_du, Vec3::new(2.0, 0.0, 0.0), 1e-5);
    assert_vec3_close(si.dp_dv, Vec3::new(0.0, 2.0, 0.0), 1e-5);

    let flipped = interact(rectangle(&Transform::IDENTITY, true).unwrap(), down_at(0.3, -0.4));
    assert_vec2_close(flipped.uv, si.uv, 1e-6);
    assert_vec3_close(flipped.n, -Vec3::Z, 1e-6);
    assert_vec3_close(flipped.sh_frame.n, -Vec3::Z, 1e-6);
}

#[test]
fn rectangle_under_scale_and_mirror() {
    let scaled = transform(Mat4::from_scale(Vec3::new(2.0, 3.0, 1.0)));
    let si = interact(rectangle(&scaled, false).unwrap(), down_at(1.0, 1.5));
    assert_vec2_close(si.uv, Vec2::new(0.75, 0.75), 1e-6);
    assert_vec3_close(si.dp_du, Vec3::new(4.0, 0.0, 0.0), 1e-5);
    assert_vec3_close(si.dp_dv, Vec3::new(0.0, 6.0, 0.0), 1e-5);
    // Mirroring x keeps the normal (inverse transpose of diag(-1, 1, 1)) and the winding is
    // reversed with it, so geometric and shading normals still agree.
    let mirrored = transform(Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)));
    let si = interact(rectangle(&mirrored, false).unwrap(), down_at(0.5, 0.5));
    assert_vec3_close(si.n, Vec3::Z, 1e-6);
    assert_vec3_close(si.sh_frame.n, Vec3::Z, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.25, 0.75), 1e-6);
}

#[test]
fn cube_face_uvs_and_normals() {
    let unit_cube = || cube(&Transform::IDENTITY, false).unwrap();
    // -y face: uv = ((z + 1) / 2, (x + 1) / 2).
    let si = interact(unit_cube(), Ray::new(Vec3::new(0.5, -5.0, -0.5), Vec3::Y));
    assert_vec3_close(si.n, -Vec3::Y, 1e-6);
    assert_vec3_close(si.sh_frame.n, -Vec3::Y, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.25, 0.75), 1e-6);
    // +z face: uv = ((y + 1) / 2, (x + 1) / 2).
    let si = interact(unit_cube(), down_at(-0.6, 0.2));
    assert_vec3_close(si.n, Vec3::Z, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.6, 0.2), 1e-6);
    assert_vec3_close(si.dp_du, Vec3::new(0.0, 2.0, 0.0), 1e-5);
    assert_vec3_close(si.dp_dv, Vec3::new(2.0, 0.0, 0.0), 1e-5);
    // Flipped: every face normal points inwards; seen from the inside they face the viewer.
    let flipped = cube(&Transform::IDENTITY, true).unwrap();
    let si = interact(flipped, Ray::new(Vec3::ZERO, Vec3::X));
    assert_vec3_close(si.n, -Vec3::X, 1e-6);
    assert_vec3_close(si.sh_frame.n, -Vec3::X, 1e-6);
}

#[test]
fn sphere_uv_partials_and_frame() {
    let center = Vec3::new(1.0, 2.0, 3.0);
    let (theta, phi) = (PI / 3.0, PI / 4.0);
    let dir = Vec3::new(theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos());
    let ray = Ray::new(center + dir * 10.0, -dir);
    let si = interact(Sphere::new(center, 2.0, &Transform::IDENTITY, false).unwrap(), ray);
    assert_close(si.t, 8.0, 1e-5);
    assert_vec3_close(si.p, center + dir * 2.0, 1e-5);
    assert_vec3_close(si.n, dir, 1e-6);
    assert_vec3_close(si.sh_frame.n, dir, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.125, 1.0 / 3.0), 1e-6);
    // dp/du = 2π r (-y, x, 0) and dp/dv = π r (z cos φ, z sin φ, -sin θ) in local coordinates.
    assert_vec3_close(si.dp_du, Vec3::new(-dir.y, dir.x, 0.0) * (TAU * 2.0), 1e-4);
    let expected_dp_dv = Vec3::new(dir.z * phi.cos(), dir.z * phi.sin(), -theta.sin()) * (PI * 2.0);
    assert_vec3_close(si.dp_dv, expected_dp_dv, 1e-4);
    assert_vec3_close(si.sh_frame.s, Vec3::new(-FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0), 1e-5);

    let flipped = interact(Sphere::new(center, 2.0, &Transform::IDENTITY, true).unwrap(), ray);
    assert_vec3_close(flipped.n, -dir, 1e-6);
    assert_vec3_close(flipped.sh_frame.n, -dir, 1e-6);
    assert_vec2_close(flipped.uv, si.uv, 1e-6);
}

#[test]
fn sphere_uv_follows_the_rotation_of_to_world() {
    // Rotating by 90° about z moves the object-space +x axis (u = 0) to world +y.
    let rotated = transform(Mat4::from_quat(Quat::from_rotation_z(PI / 2.0)));
    let si = interact(Sphere::new(Vec3::ZERO, 1.0, &rotated, false).unwrap(), Ray::new(Vec3::Y * 5.0, -Vec3::Y));
    assert_vec2_close(si.uv, Vec2::new(0.0, 0.5), 1e-6);
    assert_vec3_close(si.n, Vec3::Y, 1e-6);
    // A mirroring to_world turns the sphere inside out, like flip_normals.
    let mirrored = transform(Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)));
    let si = interact(Sphere::new(Vec3::ZERO, 1.0, &mirrored, false).unwrap(), Ray::new(Vec3::Y * 5.0, -Vec3::Y));
    assert_vec3_close(si.n, -Vec3::Y, 1e-6);
}

#[test]
fn analytic_hits_leave_their_uv_to_the_interaction() {
    // Spheres' and disks' hits carry no local parametrisation (it would cost an acos and an
    // atan2 per test); the interaction computes the polar uv from the hit point.
    let geometry = Geometry::new(vec![
        Sphere::new(Vec3::ZERO, 1.5, &Transform::IDENTITY, false).unwrap().into(),
        Disk::new(&transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0))), false).unwrap().into(),
    ])
    .unwrap();
    let mut rng = Rng::new(11);
    for _ in 0..200 {
        let target = rng.unit_vector() * 1.4;
        let origin = rng.unit_vector() * 6.0;
        let ray = Ray::new(origin, target - origin);
        let hit = geometry.intersect(&ray).unwrap();
        assert_eq!(hit.prim_uv, Vec2::ZERO);
        let si = geometry.surface_interaction(&ray, &hit);
        if hit.shape_index == 0 {
            let local = si.p / 1.5;
            let phi = local.y.atan2(local.x).rem_euclid(TAU);
            // Away from the seam at φ = 0.
            if phi > 1e-2 && phi < TAU - 1e-2 {
                assert_vec2_close(si.uv, Vec2::new(phi / TAU, local.z.acos() / PI), 1e-4);
            }
            assert_close(si.p.length(), 1.5, 1e-5);
        }
    }
    let hit = geometry.intersect(&down_at(0.5, 0.5)).unwrap();
    assert_eq!((hit.shape_index, hit.prim_uv), (1, Vec2::ZERO));
}

#[test]
fn disk_polar_uv_partials_and_flip() {
    let si = interact(Disk::new(&Transform::IDENTITY, false).unwrap(), down_at(0.5, 0.5));
    let r = 0.5f32.hypot(0.5);
    assert_vec2_close(si.uv, Vec2::new(r, 0.125), 1e-6);
    assert_vec3_close(si.n, Vec3::Z, 1e-6);
    assert_vec3_close(si.dp_du, Vec3::new(FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0), 1e-6);
    assert_vec3_close(si.dp_dv, Vec3::new(-FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0) * (TAU * r), 1e-5);
    assert_vec3_close(si.sh_frame.s, Vec3::new(FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0), 1e-6);
    // Third quadrant: the angle wraps into [0, 1).
    let si = interact(Disk::new(&Transform::IDENTITY, false).unwrap(), down_at(-0.5, -0.5));
    assert_vec2_close(si.uv, Vec2::new(r, 0.625), 1e-6);
    // The center has no tangent direction; the frame is still orthonormal.
    let center = interact(Disk::new(&Transform::IDENTITY, false).unwrap(), down_at(0.0, 0.0));
    assert_vec2_close(center.uv, Vec2::ZERO, 1e-6);

    let flipped = interact(Disk::new(&Transform::IDENTITY, true).unwrap(), down_at(0.5, 0.5));
    assert_vec3_close(flipped.n, -Vec3::Z, 1e-6);
    assert_vec3_close(flipped.sh_frame.n, -Vec3::Z, 1e-6);
    assert_vec2_close(flipped.uv, Vec2::new(r, 0.125), 1e-6);
}

/// One triangle (0,0,0), (1,0,0), (0,1,0) with tilted vertex normals.
fn tilted_triangle() -> MeshData {
    MeshData {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals: Some(vec![Vec3::Z, Vec3::new(1.0, 0.0, 1.0).normalize(), Vec3::new(0.0, 1.0, 1.0).normalize()]),
        uvs: None,
        triangles: vec![[0, 1, 2]],
    }
}

#[test]
fn mesh_interpolates_vertex_normals_and_uses_barycentric_uv() {
    let mesh = TriangleMesh::new(tilted_triangle(), &Transform::IDENTITY, MeshOptions::default()).unwrap();
    let geometry = Geometry::new(vec![mesh.into()]).unwrap();
    let ray = down_at(0.25, 0.5);
    let hit = geometry.intersect(&ray).unwrap();
    assert_vec2_close(hit.prim_uv, Vec2::new(0.25, 0.5), 1e-6);
    let si = geometry.surface_interaction(&ray, &hit);
    let data = tilted_triangle();
    let normals = data.normals.unwrap();
    let expected = (normals[0] * 0.25 + normals[1] * 0.25 + normals[2] * 0.5).normalize();
    assert_vec3_close(si.sh_frame.n, expected, 1e-6);
    assert_vec3_close(si.n, Vec3::Z, 1e-6);
    assert_vec2_close(si.uv, Vec2::new(0.25, 0.5), 1e-6);
    assert_vec3_close(si.dp_du, Vec3::X, 1e-6);
    assert_vec3_close(si.dp_dv, Vec3::Y, 1e-6);

    let faceted = TriangleMesh::new(
        tilted_triangle(),
        &Transform::IDENTITY,
        MeshOptions { face_normals: true, flip_normals: false },
    )
    .unwrap();
    assert!(faceted.normals().is_none());
    assert_vec3_close(interact(faceted, ray).sh_frame.n, Vec3::Z, 1e-6);

    let flipped = TriangleMesh::new(
        tilted_triangle(),
        &Transform::IDENTITY,
        MeshOptions { face_normals: false, flip_normals: true },
    )
    .unwrap();
    let si = interact(flipped, ray);
    assert_vec3_close(si.n, -Vec3::Z, 1e-6);
    assert_vec3_close(si.sh_frame.n, -expected, 1e-6);
}

#[test]
fn normals_transform_with_the_inverse_transpose() {
    // The plane x + z = 0 (normal (1, 0, 1)/√2) stretched by 2 along x becomes x/2 + z = 0.
    let n = Vec3::new(1.0, 0.0, 1.0).normalize();
    let data = MeshData {
        positions: vec![Vec3::new(-1.0, -1.0, 1.0), Vec3::new(1.0, -1.0, -1.0), Vec3::new(0.0, 1.0, 0.0)],
        normals: Some(vec![n; 3]),
        uvs: None,
        triangles: vec![[0, 1, 2]],
    };
    let stretch = transform(Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0)));
    let mesh = TriangleMesh::new(data, &stretch, MeshOptions::default()).unwrap();
    let si = interact(mesh, Ray::new(Vec3::new(0.0, 0.0, 5.0), -Vec3::Z));
    let expected = Vec3::new(0.5, 0.0, 1.0).normalize();
    assert_vec3_close(si.sh_frame.n, expected, 1e-6);
    assert_vec3_close(si.n, expected, 1e-6);
}

#[test]
fn generated_normals_are_angle_weighted_per_position() {
    // The cube without its normals: every corner joins three faces at right angles, split into
    // triangles in different ways, and must still get the diagonal normal.
    let data = MeshData { normals: None, ..cube_data() };
    let mesh = TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap();
    for (p, n) in mesh.positions().iter().zip(mesh.normals().unwrap()) {
        assert_vec3_close(*n, p.normalize(), 1e-6);
    }
    // Zero normals in a file are "missing" and are generated as well.
    let mut partial = cube_data();
    partial.normals.as_mut().unwrap()[0] = Vec3::ZERO;
    let mesh = TriangleMesh::new(partial, &Transform::IDENTITY, MeshOptions::default()).unwrap();
    let normals = mesh.normals().unwrap();
    assert_vec3_close(normals[0], mesh.positions()[0].normalize(), 1e-6);
    assert_vec3_close(normals[1], -Vec3::Y, 0.0);
}

#[test]
fn mesh_uv_partials_follow_the_texture_parametrisation() {
    // uv = (2x, y + 0.5) on the triangle: dp/du = (0.5, 0, 0), dp/dv = (0, 1, 0).
    let data = MeshData {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals: None,
        uvs: Some(vec![Vec2::new(0.0, 0.5), Vec2::new(2.0, 0.5), Vec2::new(0.0, 1.5)]),
        triangles: vec![[0, 1, 2]],
    };
    let mesh = TriangleMesh::new(data, &Transform::IDENTITY, MeshOptions::default()).unwrap();
    let si = interact(mesh, down_at(0.2, 0.3));
    assert_vec2_close(si.uv, Vec2::new(0.4, 0.8), 1e-6);
    assert_vec3_close(si.dp_du, Vec3::new(0.5, 0.0, 0.0), 1e-6);
    assert_vec3_close(si.dp_dv, Vec3::new(0.0, 1.0, 0.0), 1e-6);
}

#[test]
fn mesh_construction_rejects_bad_data() {
    let bad_index = MeshData { triangles: vec![[0, 1, 3]], ..tilted_triangle() };
    assert!(TriangleMesh::new(bad_index, &Transform::IDENTITY, MeshOptions::default()).is_err());
    let bad_count = MeshData { uvs: Some(vec![Vec2::ZERO]), ..tilted_triangle() };
    assert!(TriangleMesh::new(bad_count, &Transform::IDENTITY, MeshOptions::default()).is_err());
    let mut non_finite = tilted_triangle();
    non_finite.positions[1].x = f32::INFINITY;
    assert!(TriangleMesh::new(non_finite, &Transform::IDENTITY, MeshOptions::default()).is_err());
    assert!(Transform::new(Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0))).is_err());
    let mut projective = Mat4::IDENTITY;
    projective.x_axis.w = 0.5;
    assert!(Transform::new(projective).is_err());
}

#[test]
fn spawn_ray_offsets_along_the_normal_towards_the_direction() {
    let si = interact(rectangle(&Transform::IDENTITY, false).unwrap(), down_at(0.25, 0.25));
    let up = si.spawn_ray(Vec3::new(0.3, 0.0, 1.0));
    assert!(up.o.z > 0.0 && up.o.z < 1e-3);
    let down = si.spawn_ray(Vec3::new(0.3, 0.0, -1.0));
    assert!(down.o.z < 0.0 && down.o.z > -1e-3);
    let to = si.spawn_ray_to(Vec3::new(0.25, 0.25, 2.0));
    assert_close(to.d.length(), 1.0, 1e-6);
    assert!(to.maxt < 2.0 && to.maxt > 1.99);
}

/// Every field of an interaction as bits, so that NaNs compare equal to themselves.
fn interaction_bits(si: &SurfaceInteraction) -> Vec<u32> {
    let f = si.sh_frame;
    let floats = [si.t, si.uv.x, si.uv.y]
        .into_iter()
        .chain([si.p, si.n, f.s, f.t, f.n, si.dp_du, si.dp_dv, si.wi].into_iter().flat_map(|v| v.to_array()));
    floats.map(f32::to_bits).chain([si.shape_index, si.prim_index]).collect()
}

/// `Geometry::surface_interactions` (1, 4, 8 and 16 lanes at once, the last two with AVX-512
/// or AVX2 where the processor has it) equals `surface_interaction` lane by lane, bit for bit,
/// on every kind of shape: meshes with vertex normals, face normals, uvs, degenerate uvs (which
/// fall back to `coordinate_system`) and mirrored transforms, spheres and disks, with lanes
/// that missed in between.
#[test]
fn interactions_of_lanes_equal_the_scalar_ones_bit_for_bit() {
    let mut rng = Rng::new(0x5EED_4A11);
    let mirrored =
        transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 6.0)) * Mat4::from_scale(Vec3::new(-2.0, 1.5, 1.0)));
    let mut same_uvs = common::uv_sphere_mesh(Vec3::new(-5.0, 5.0, 0.0), 1.5, 5, 8);
    same_uvs.uvs = Some(vec![Vec2::splat(0.25); same_uvs.positions.len()]);
    let mut unit_uvs = common::uv_sphere_mesh(Vec3::new(0.0, -5.0, 1.0), 1.0, 4, 6);
    unit_uvs.uvs = Some((0..unit_uvs.positions.len()).map(|_| rng.vec2()).collect());
    let face_normals = MeshOptions { face_normals: true, ..MeshOptions::default() };
    let flipped = MeshOptions { flip_normals: true, ..MeshOptions::default() };
    let shapes: Vec<Shape> = vec![
        TriangleMesh::new(
            common::uv_sphere_mesh(Vec3::new(5.0, 5.0, 0.0), 2.0, 6, 10),
            &Transform::IDENTITY,
            face_normals,
        )
        .unwrap()
        .into(),
        TriangleMesh::new(common::uv_sphere_mesh(Vec3::new(5.0, -5.0, 0.0), 2.0, 6, 10), &Transform::IDENTITY, flipped)
            .unwrap()
            .into(),
        TriangleMesh::new(same_uvs, &Transform::IDENTITY, MeshOptions::default()).unwrap().into(),
        TriangleMesh::new(unit_uvs, &mirrored, MeshOptions::default()).unwrap().into(),
        cube(&transform(Mat4::from_rotation_y(0.4) * Mat4::from_scale(Vec3::splat(1.2))), false).unwrap().into(),
        rectangle(&mirrored, true).unwrap().into(),
        Sphere::new(Vec3::new(-5.0, -5.0, 0.0), 1.5, &Transform::IDENTITY, false).unwrap().into(),
        Disk::new(&transform(Mat4::from_translation(Vec3::new(0.0, 6.0, -3.0))), false).unwrap().into(),
    ];
    check_interaction_lanes_at_every_width(&Geometry::new(shapes).unwrap(), &mut rng, 2000);
}

/// The same where every mesh has face normals, whose normals and shading tangents the lanes
/// take from per-triangle storage when every hit of a group allows it: with and without uvs,
/// with degenerate uvs (the tangent from `coordinate_system`) and mirrored.
#[test]
fn interactions_of_face_normal_meshes_equal_the_scalar_ones_bit_for_bit() {
    let mut rng = Rng::new(0xFACE_0001);
    let mirrored =
        transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 6.0)) * Mat4::from_scale(Vec3::new(-2.0, 1.5, 1.0)));
    let face_normals = MeshOptions { face_normals: true, ..MeshOptions::default() };
    let mut same_uvs = common::uv_sphere_mesh(Vec3::new(-5.0, 5.0, 0.0), 1.5, 5, 8);
    same_uvs.uvs = Some(vec![Vec2::splat(0.25); same_uvs.positions.len()]);
    let mut unit_uvs = common::uv_sphere_mesh(Vec3::new(0.0, -5.0, 1.0), 1.0, 4, 6);
    unit_uvs.uvs = Some((0..unit_uvs.positions.len()).map(|_| rng.vec2()).collect());
    let shapes: Vec<Shape> = vec![
        TriangleMesh::new(common::uv_sphere_mesh(Vec3::new(5.0, 5.0, 0.0), 2.0, 6, 10), &mirrored, face_normals)
            .unwrap()
            .into(),
        TriangleMesh::new(same_uvs, &Transform::IDENTITY, face_normals).unwrap().into(),
        TriangleMesh::new(unit_uvs, &mirrored, face_normals).unwrap().into(),
        cube(&transform(Mat4::from_rotation_y(0.4) * Mat4::from_scale(Vec3::splat(1.2))), true).unwrap().into(),
        rectangle(&transform(Mat4::from_translation(Vec3::new(0.0, 6.0, -3.0))), false).unwrap().into(),
    ];
    check_interaction_lanes_at_every_width(&Geometry::new(shapes).unwrap(), &mut rng, 900);
}

/// [`check_interaction_lanes`] at 1, 4, 8 and 16 lanes, 8,000 rays each; every width must see
/// more than `min_hits` hits and 500 misses.
fn check_interaction_lanes_at_every_width(geometry: &Geometry, rng: &mut Rng, min_hits: usize) {
    for (hits, misses) in [
        check_interaction_lanes::<1>(geometry, rng, 8000),
        check_interaction_lanes::<4>(geometry, rng, 2000),
        check_interaction_lanes::<8>(geometry, rng, 1000),
        check_interaction_lanes::<16>(geometry, rng, 500),
    ] {
        assert!(hits > min_hits && misses > 500, "{hits} hits, {misses} misses");
    }
}

/// Whether `hit` is on a mesh with face normals.
fn face_normals(geometry: &Geometry, hit: &drs_geometry::Hit) -> bool {
    matches!(&geometry.shapes()[hit.shape_index as usize], Shape::Mesh(mesh) if mesh.normals().is_none())
}

/// Traces `groups` groups of `L` random rays through `geometry` and checks that
/// `surface_interactions` gives every lane's interaction bit for bit as `surface_interaction`
/// does, and without uv the same but for the uv fields of meshes with face normals. Returns the
/// number of hits and misses seen.
fn check_interaction_lanes<const L: usize>(geometry: &Geometry, rng: &mut Rng, groups: usize) -> (usize, usize) {
    let (mut hits_seen, mut misses_seen) = (0, 0);
    for _ in 0..groups {
        let rays: [Ray; L] = std::array::from_fn(|_| {
            let o = rng.vec3_in(-12.0, 12.0);
            let target = rng.vec3_in(-7.0, 7.0);
            Ray::new(o, (target - o) * rng.range(0.2, 3.0))
        });
        let hits = rays.each_ref().map(|ray| geometry.intersect(ray));
        let mut lanes = SurfaceInteractions::<L>::default();
        geometry.surface_interactions(&rays, &hits, &mut lanes, true);
        // Without uv, the same but for uv, dp_du and dp_dv of meshes with face normals.
        let mut without_uv = SurfaceInteractions::<L>::default();
        geometry.surface_interactions(&rays, &hits, &mut without_uv, false);
        for (lane, (ray, hit)) in rays.iter().zip(&hits).enumerate() {
            match hit {
                Some(hit) => {
                    let expected = geometry.surface_interaction(ray, hit);
                    assert_eq!(
                        interaction_bits(&lanes.lane(lane)),
                        interaction_bits(&expected),
                        "lane {lane} of {L}, {rays:?}"
                    );
                    let mut uv_free = without_uv.lane(lane);
                    if face_normals(geometry, hit) {
                        (uv_free.uv, uv_free.dp_du, uv_free.dp_dv) = (expected.uv, expected.dp_du, expected.dp_dv);
                    }
                    assert_eq!(
                        interaction_bits(&uv_free),
                        interaction_bits(&expected),
                        "lane {lane} of {L} without uv, {rays:?}"
                    );
                    hits_seen += 1;
                }
                None => misses_seen += 1,
            }
        }
    }
    (hits_seen, misses_seen)
}

/// The generated rectangle and cube shade with face normals; those are the directions their
/// vertex normals give, under rotations, non-uniform scales, mirrors and `flip_normals`.
#[test]
fn generated_meshes_shade_as_their_vertex_normals_would() {
    let transforms = [
        Mat4::IDENTITY,
        Mat4::from_scale_rotation_translation(
            Vec3::new(2.0, 0.5, 1.5),
            Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7),
            Vec3::new(0.3, -0.2, 0.1),
        ),
        Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
        Mat4::from_scale(Vec3::new(1.5, -2.0, -0.5)) * Mat4::from_rotation_y(1.1),
    ];
    let mut rng = Rng::new(7);
    for matrix in transforms {
        let to_world = transform(matrix);
        for flip in [false, true] {
            let with_vertex_normals = MeshOptions { flip_normals: flip, face_normals: false };
            let pairs = [
                (
                    rectangle(&to_world, flip).unwrap(),
                    TriangleMesh::new(rectangle_data(), &to_world, with_vertex_normals),
                ),
                (cube(&to_world, flip).unwrap(), TriangleMesh::new(cube_data(), &to_world, with_vertex_normals)),
            ];
            for (generated, reference) in pairs {
                let reference = reference.unwrap();
                assert!(generated.normals().is_none(), "generated meshes keep no vertex normals");
                let (generated, reference) =
                    (Geometry::new(vec![generated.into()]).unwrap(), Geometry::new(vec![reference.into()]).unwrap());
                let mut hits = 0;
                for _ in 0..200 {
                    // Rays from outside the unit shapes' images toward points inside them.
                    let target = to_world.point(rng.vec3_in(-0.9, 0.9) * Vec3::new(1.0, 1.0, 0.0));
                    let target = if rng.f32() < 0.5 { target } else { to_world.point(rng.vec3_in(-0.9, 0.9)) };
                    let origin = target + rng.unit_vector() * 10.0;
                    let ray = Ray::new(origin, (target - origin).normalize());
                    // The same triangles: both hit at the same place, or both miss.
                    let (a, b) = match (generated.intersect(&ray), reference.intersect(&ray)) {
                        (None, None) => continue,
                        (Some(a), Some(b)) => {
                            assert_eq!(a, b, "the same hit");
                            (generated.surface_interaction(&ray, &a), reference.surface_interaction(&ray, &b))
                        }
                        (a, b) => panic!("one mesh hit, the other not: {a:?} and {b:?}"),
                    };
                    assert_vec3_close(a.n, b.n, 1e-5);
                    assert_vec3_close(a.sh_frame.n, b.sh_frame.n, 1e-5);
                    assert_vec3_close(a.wi, b.wi, 1e-4);
                    hits += 1;
                }
                assert!(hits > 100, "{hits} of 200 rays hit");
            }
        }
    }
}
