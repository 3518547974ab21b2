//! Ray hits against analytic answers: spheres, disks, rectangles and cubes, `maxt`, degenerate
//! rays, and rays leaving a surface.

mod common;

use common::{assert_close, assert_vec3_close, uv_sphere_mesh, Rng};
use drs_geometry::math::{Mat4, Vec3};
use drs_geometry::{
    cube, rectangle, Disk, Geometry, MeshOptions, Ray, RayPacket, Shape, Sphere, Transform, TriangleMesh, PACKET_RAYS,
};

fn transform(matrix: Mat4) -> Transform {
    Transform::new(matrix).unwrap()
}

fn scene(shapes: Vec<Shape>) -> Geometry {
    Geometry::new(shapes).unwrap()
}

fn sphere_scene(center: Vec3, radius: f32) -> Geometry {
    scene(vec![Sphere::new(center, radius, &Transform::IDENTITY, false).unwrap().into()])
}

/// `intersect` and `ray_test` agree on `ray`; returns the hit distance.
/// A unit sphere at the origin as a triangle mesh.
fn unit_sphere_mesh_scene() -> Geometry {
    let mesh = TriangleMesh::new(uv_sphere_mesh(Vec3::ZERO, 1.0, 16, 32), &Transform::IDENTITY, MeshOptions::default());
    scene(vec![mesh.unwrap().into()])
}

fn hit_t(geometry: &Geometry, ray: Ray) -> Option<f32> {
    let hit = geometry.intersect(&ray);
    assert_eq!(geometry.ray_test(&ray), hit.is_some(), "ray_test disagrees with intersect for {ray:?}");
    hit.map(|h| h.t)
}

#[test]
fn sphere_is_hit_at_the_near_root_from_outside() {
    let geometry = sphere_scene(Vec3::new(0.0, 0.0, 5.0), 1.0);
    assert_close(hit_t(&geometry, Ray::new(Vec3::ZERO, Vec3::Z)).unwrap(), 4.0, 1e-5);
    // Unnormalised directions measure t in their own units.
    assert_close(hit_t(&geometry, Ray::new(Vec3::ZERO, Vec3::Z * 2.0)).unwrap(), 2.0, 1e-5);
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::ZERO, -Vec3::Z)), None, "sphere behind the ray");
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::ZERO, Vec3::X)), None);
}

#[test]
fn sphere_is_hit_at_the_far_root_from_inside() {
    let geometry = sphere_scene(Vec3::new(1.0, 2.0, 3.0), 2.0);
    let mut rng = Rng::new(1);
    for _ in 0..100 {
        let d = rng.unit_vector();
        assert_close(hit_t(&geometry, Ray::new(Vec3::new(1.0, 2.0, 3.0), d)).unwrap(), 2.0, 1e-5);
    }
}

#[test]
fn sphere_from_to_world_matches_center_and_radius() {
    // Mitsuba's example: translate(1, 0, 0) · scale(2) is the sphere of radius 2 around (1, 0, 0).
    let to_world = transform(Mat4::from_translation(Vec3::X) * Mat4::from_scale(Vec3::splat(2.0)));
    let sphere = Sphere::new(Vec3::ZERO, 1.0, &to_world, false).unwrap();
    assert_vec3_close(sphere.center(), Vec3::X, 1e-6);
    assert_close(sphere.radius(), 2.0, 1e-6);
    let geometry = scene(vec![sphere.into()]);
    assert_close(hit_t(&geometry, Ray::new(Vec3::new(10.0, 0.0, 0.0), -Vec3::X)).unwrap(), 7.0, 1e-5);
}

#[test]
fn sphere_grazing_rays_hit_just_inside_and_miss_just_outside() {
    let geometry = sphere_scene(Vec3::ZERO, 1.0);
    for offset in [1.0 - 1e-4, 1.0 - 1e-3, 0.999_999] {
        let t = hit_t(&geometry, Ray::new(Vec3::new(-10.0, offset, 0.0), Vec3::X)).expect("inside the silhouette");
        assert_close(t, 10.0 - (1.0 - offset * offset).sqrt(), 1e-4);
    }
    for offset in [1.0 + 1e-4, 1.000_001] {
        assert_eq!(hit_t(&geometry, Ray::new(Vec3::new(-10.0, offset, 0.0), Vec3::X)), None);
    }
}

#[test]
fn sphere_respects_maxt() {
    let geometry = sphere_scene(Vec3::new(0.0, 0.0, 5.0), 1.0);
    assert_eq!(hit_t(&geometry, Ray::with_maxt(Vec3::ZERO, Vec3::Z, 3.99)), None);
    assert!(hit_t(&geometry, Ray::with_maxt(Vec3::ZERO, Vec3::Z, 4.01)).is_some());
    // From inside, a segment that ends before the surface hits nothing.
    assert_eq!(hit_t(&geometry, Ray::with_maxt(Vec3::new(0.0, 0.0, 5.0), Vec3::Z, 0.99)), None);
    assert!(hit_t(&geometry, Ray::with_maxt(Vec3::new(0.0, 0.0, 5.0), Vec3::Z, 1.01)).is_some());
}

#[test]
fn sphere_rejects_non_uniform_scale_and_zero_radius() {
    let squashed = transform(Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0)));
    assert!(Sphere::new(Vec3::ZERO, 1.0, &squashed, false).is_err());
    assert!(Sphere::new(Vec3::ZERO, 0.0, &Transform::IDENTITY, false).is_err());
    assert!(Sphere::new(Vec3::ZERO, f32::NAN, &Transform::IDENTITY, false).is_err());
}

#[test]
fn disk_is_hit_inside_its_ellipse_only() {
    // Unit disk scaled to a 2 × 0.5 ellipse, 3 units up.
    let to_world =
        transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0)) * Mat4::from_scale(Vec3::new(2.0, 0.5, 1.0)));
    let geometry = scene(vec![Disk::new(&to_world, false).unwrap().into()]);
    assert_close(hit_t(&geometry, Ray::new(Vec3::new(1.9, 0.0, 0.0), Vec3::Z)).unwrap(), 3.0, 1e-6);
    assert_close(hit_t(&geometry, Ray::new(Vec3::new(0.0, 0.0, 10.0), -Vec3::Z)).unwrap(), 7.0, 1e-6);
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::new(2.1, 0.0, 0.0), Vec3::Z)), None);
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::new(0.0, 0.6, 0.0), Vec3::Z)), None);
    // Parallel to the plane: no hit, and no NaN trouble.
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::new(-5.0, 0.0, 3.0), Vec3::X)), None);
    assert_eq!(hit_t(&geometry, Ray::with_maxt(Vec3::ZERO, Vec3::Z, 2.5)), None);
}

#[test]
fn rectangle_is_hit_inside_and_on_its_diagonal() {
    let geometry = scene(vec![rectangle(&Transform::IDENTITY, false).unwrap().into()]);
    let hit = geometry.intersect(&Ray::new(Vec3::new(0.3, -0.4, 2.0), -Vec3::Z)).unwrap();
    assert_close(hit.t, 2.0, 1e-6);
    assert_eq!(hit_t(&geometry, Ray::new(Vec3::new(1.01, 0.0, 2.0), -Vec3::Z)), None);
    // The two triangles share the diagonal from (1, -1) to (-1, 1): watertight means no ray
    // through it slips between them.
    let mut rng = Rng::new(2);
    for _ in 0..2000 {
        let s = rng.range(-0.999, 0.999);
        let origin = Vec3::new(s, -s, 0.0) + rng.unit_vector() * 3.0;
        let d = Vec3::new(s, -s, 0.0) - origin;
        assert!(geometry.intersect(&Ray::new(origin, d)).is_some(), "ray through the diagonal at {s} missed");
    }
}

#[test]
fn cube_faces_are_hit_from_outside_and_inside() {
    let to_world = transform(Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0)) * Mat4::from_scale(Vec3::splat(0.5)));
    let geometry = scene(vec![cube(&to_world, false).unwrap().into()]);
    let center = Vec3::new(1.0, 2.0, 3.0);
    for axis in [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z] {
        // From 4 units away along each axis, slightly off the face center.
        let origin = center + axis * 4.0 + axis.any_orthonormal_vector() * 0.2;
        let ray = Ray::new(origin, -axis);
        let hit = geometry.intersect(&ray).expect("cube face");
        assert_close(hit.t, 3.5, 1e-5);
        let si = geometry.surface_interaction(&ray, &hit);
        assert_vec3_close(si.n, axis, 1e-6);
        // From the center every face is half a unit away.
        assert_close(hit_t(&geometry, Ray::new(center, axis)).unwrap(), 0.5, 1e-6);
    }
}

#[test]
fn closest_of_several_shapes_wins_and_reports_its_shape() {
    let geometry = scene(vec![
        Sphere::new(Vec3::new(0.0, 0.0, 10.0), 1.0, &Transform::IDENTITY, false).unwrap().into(),
        rectangle(&transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 5.0))), false).unwrap().into(),
        Disk::new(&transform(Mat4::from_translation(Vec3::new(0.0, 0.0, 7.0))), false).unwrap().into(),
    ]);
    let hit = geometry.intersect(&Ray::new(Vec3::ZERO, Vec3::Z)).unwrap();
    assert_eq!((hit.shape_index, hit.t), (1, 5.0));
    let hit = geometry.intersect(&Ray::new(Vec3::new(0.0, 0.0, 6.0), Vec3::Z)).unwrap();
    assert_eq!((hit.shape_index, hit.t), (2, 1.0));
    let hit = geometry.intersect(&Ray::new(Vec3::new(0.0, 0.0, 8.0), Vec3::Z)).unwrap();
    assert_eq!(hit.shape_index, 0);
    assert_close(hit.t, 1.0, 1e-6);
}

#[test]
fn degenerate_rays_and_empty_scenes_hit_nothing() {
    let empty = scene(Vec::new());
    assert_eq!(hit_t(&empty, Ray::new(Vec3::ZERO, Vec3::Z)), None);
    assert!(empty.bounds().is_empty());
    let geometry = scene(vec![
        cube(&Transform::IDENTITY, false).unwrap().into(),
        Sphere::new(Vec3::ZERO, 2.0, &Transform::IDENTITY, false).unwrap().into(),
    ]);
    for ray in [
        Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO),
        Ray::new(Vec3::new(0.0, 0.0, 5.0), Vec3::new(f32::NAN, 0.0, -1.0)),
        Ray::new(Vec3::new(f32::NAN, 0.0, 5.0), -Vec3::Z),
        Ray::with_maxt(Vec3::new(0.0, 0.0, 5.0), -Vec3::Z, f32::NAN),
        Ray::with_maxt(Vec3::new(0.0, 0.0, 5.0), -Vec3::Z, -1.0),
    ] {
        assert_eq!(hit_t(&geometry, ray), None, "{ray:?}");
    }
    // An infinite origin far away along an axis is no reason to panic either.
    let _ = geometry.intersect(&Ray::new(Vec3::new(f32::INFINITY, 0.0, 0.0), -Vec3::X));
}

#[test]
fn axis_parallel_rays_along_box_faces_still_hit() {
    // Rays in the plane of a flat mesh's bounding box (zero direction components).
    let geometry = scene(vec![rectangle(&Transform::IDENTITY, false).unwrap().into()]);
    assert!(geometry.intersect(&Ray::new(Vec3::new(0.5, 0.5, 1.0), -Vec3::Z)).is_some());
    let cube_geometry = scene(vec![cube(&Transform::IDENTITY, false).unwrap().into()]);
    // Origin exactly on the plane y = -1 of the bounding box, moving along x.
    let hit = cube_geometry.intersect(&Ray::new(Vec3::new(-5.0, -0.5, 0.0), Vec3::X)).unwrap();
    assert_close(hit.t, 4.0, 1e-6);
}

#[test]
fn intersect_n_and_ray_test_n_match_single_rays() {
    let geometry = unit_sphere_mesh_scene();
    let mut rng = Rng::new(3);
    let rays: Vec<Ray> = (0..64).map(|_| Ray::new(rng.vec3_in(-3.0, 3.0), rng.unit_vector())).collect();
    let mut hits = vec![None; rays.len()];
    let mut occluded = vec![false; rays.len()];
    geometry.intersect_n(&rays, &mut hits);
    geometry.ray_test_n(&rays, &mut occluded);
    for ((ray, hit), occluded) in rays.iter().zip(&hits).zip(&occluded) {
        assert_eq!(*hit, geometry.intersect(ray));
        assert_eq!(*occluded, hit.is_some());
    }
    assert!(hits.iter().any(Option::is_some) && hits.iter().any(Option::is_none));
}

/// Rays spawned from hit points with Mitsuba's offset never find their own surface again.
#[test]
fn spawned_rays_do_not_self_intersect() {
    let mesh = TriangleMesh::new(
        uv_sphere_mesh(Vec3::new(100.0, -50.0, 20.0), 3.0, 64, 128),
        &Transform::IDENTITY,
        MeshOptions::default(),
    )
    .unwrap();
    let shapes: Vec<Shape> = vec![
        mesh.into(),
        Sphere::new(Vec3::new(-100.0, 50.0, 20.0), 3.0, &Transform::IDENTITY, false).unwrap().into(),
        Disk::new(
            &transform(Mat4::from_translation(Vec3::new(0.0, 300.0, 0.0)) * Mat4::from_scale(Vec3::splat(5.0))),
            false,
        )
        .unwrap()
        .into(),
    ];
    let targets = [Vec3::new(100.0, -50.0, 20.0), Vec3::new(-100.0, 50.0, 20.0), Vec3::new(0.0, 300.0, 0.0)];
    let geometry = scene(shapes);
    let mut rng = Rng::new(4);
    let mut hits = 0;
    for i in 0..3000 {
        let target = targets[i % 3] + rng.vec3_in(-1.0, 1.0);
        let origin = target + rng.unit_vector() * 50.0;
        let ray = Ray::new(origin, target - origin);
        let Some(hit) = geometry.intersect(&ray) else { continue };
        hits += 1;
        let si = geometry.surface_interaction(&ray, &hit);
        // Every surface here is convex: leaving it on the side of the normal it came from
        // hits nothing, and leaving through it hits the far side, not the same point.
        let mut d = rng.unit_vector();
        if d.dot(si.n) * ray.d.dot(si.n) > 0.0 {
            d = -d;
        }
        if let Some(again) = geometry.intersect(&si.spawn_ray(d)) {
            assert_ne!(again.shape_index, hit.shape_index, "outgoing ray re-hit its convex shape at t = {}", again.t);
        }
        let through = geometry.intersect(&si.spawn_ray(ray.d));
        if let Some(far) = through {
            assert!(far.t > 1e-3, "ray through the surface hit at t = {}", far.t);
        }
        // A shadow ray back to the origin is unoccluded.
        assert!(!geometry.ray_test(&si.spawn_ray_to(origin)));
    }
    assert!(hits > 2000, "only {hits} of 3000 rays hit");
}

/// A full packet with rays that cannot hit anything (NaN or infinite components, a zero
/// direction, a negative or NaN `maxt`) among ordinary ones: every lane answers as its single
/// ray does, and the bad lanes do not disturb the others.
#[test]
fn packets_with_degenerate_rays_match_single_rays() {
    let geometry = unit_sphere_mesh_scene();
    let mut rng = Rng::new(5);
    let degenerate = [
        Ray::new(Vec3::new(f32::NAN, 0.0, 3.0), -Vec3::Z),
        Ray::new(Vec3::new(0.0, 0.0, 3.0), Vec3::new(0.0, f32::INFINITY, -1.0)),
        Ray::new(Vec3::new(0.0, 0.0, 3.0), Vec3::ZERO),
        Ray::with_maxt(Vec3::new(0.0, 0.0, 3.0), -Vec3::Z, -1.0),
        Ray::with_maxt(Vec3::new(0.0, 0.0, 3.0), -Vec3::Z, f32::NAN),
    ];
    for round in 0..16 {
        let mut rays: Vec<Ray> = (0..16).map(|_| Ray::new(rng.vec3_in(-3.0, 3.0) * 2.0, -rng.unit_vector())).collect();
        for (i, ray) in degenerate.iter().enumerate() {
            rays[(round + 3 * i) % 16] = *ray;
        }
        let mut hits = [None; PACKET_RAYS];
        let packet = RayPacket::from_rays(&rays);
        geometry.intersect_packet(&packet, u32::MAX, &mut hits);
        let occluded = geometry.ray_test_packet(&packet, u32::MAX);
        for (l, ray) in rays.iter().enumerate() {
            assert_eq!(hits[l], geometry.intersect(ray), "lane {l}: {ray:?}");
            assert_eq!(occluded & (1 << l) != 0, geometry.ray_test(ray), "lane {l}: {ray:?}");
        }
    }
}
