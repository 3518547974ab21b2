//! A scene's geometry: its shapes and the BVH over them, answering the runtime's
//! `scene.intersect(ray)` and `scene.ray_test(ray)`.

use crate::bvh::{Bvh, BvhStatistics};
use crate::error::GeometryError;
use crate::interaction::{Hit, SurfaceInteraction};
use crate::math::{Aabb, Ray};
use crate::shape::Shape;

#[derive(Clone, Debug)]
pub struct Geometry {
    shapes: Vec<Shape>,
    bvh: Bvh,
}

impl Geometry {
    /// Builds the BVH over all primitives of `shapes` (in parallel on rayon's pool). A shape's
    /// index in `shapes` is its [`Hit::shape_index`].
    pub fn new(shapes: Vec<Shape>) -> Result<Geometry, GeometryError> {
        let bvh = Bvh::build(&shapes)?;
        Ok(Geometry { shapes, bvh })
    }

    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }

    /// Bounds of everything (empty for a scene without primitives).
    pub fn bounds(&self) -> Aabb {
        self.bvh.bounds()
    }

    pub fn bvh_statistics(&self) -> BvhStatistics {
        self.bvh.statistics()
    }

    /// The closest hit within `[0, ray.maxt]` (Mitsuba `Scene::ray_intersect_preliminary`).
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.bvh.intersect(&self.shapes, ray)
    }

    /// Whether anything is hit within `[0, ray.maxt]` (Mitsuba `Scene::ray_test`).
    pub fn ray_test(&self, ray: &Ray) -> bool {
        self.bvh.ray_test(&self.shapes, ray)
    }

    /// [`Geometry::intersect`] for each ray (a SIMD kernel's lane group).
    ///
    /// # Panics
    /// If `rays` and `hits` differ in length.
    pub fn intersect_n(&self, rays: &[Ray], hits: &mut [Option<Hit>]) {
        assert_eq!(rays.len(), hits.len(), "intersect_n: one hit slot per ray");
        for (ray, hit) in rays.iter().zip(hits) {
            *hit = self.intersect(ray);
        }
    }

    /// [`Geometry::ray_test`] for each ray.
    ///
    /// # Panics
    /// If `rays` and `occluded` differ in length.
    pub fn ray_test_n(&self, rays: &[Ray], occluded: &mut [bool]) {
        assert_eq!(rays.len(), occluded.len(), "ray_test_n: one result slot per ray");
        for (ray, occluded) in rays.iter().zip(occluded) {
            *occluded = self.ray_test(ray);
        }
    }

    /// The full surface interaction of a hit that [`Geometry::intersect`] returned for `ray`.
    ///
    /// # Panics
    /// If `hit` names a shape or primitive that this geometry does not have.
    pub fn surface_interaction(&self, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
        self.shapes[hit.shape_index as usize].surface_interaction(ray, hit)
    }
}
