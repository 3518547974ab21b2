//! A scene's geometry: its shapes and the BVH over them, answering the runtime's
//! `scene.intersect(ray)` and `scene.ray_test(ray)`.

use crate::bvh::{Bvh, BvhStatistics, RayPacket, PACKET_RAYS};
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
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.bvh.intersect(&self.shapes, ray)
    }

    /// Whether anything is hit within `[0, ray.maxt]` (Mitsuba `Scene::ray_test`).
    pub fn ray_test(&self, ray: &Ray) -> bool {
        self.bvh.ray_test(&self.shapes, ray)
    }

    /// [`Geometry::intersect`] of lane `l`'s ray for each lane `l` in `active`, into
    /// `hits[l]`: the rays of a kernel's lane group, traced together where that pays (see
    /// `bvh/packet.rs`). Other lanes get `None`. The hits are the single rays', to the bit.
    pub fn intersect_packet(&self, rays: &RayPacket, active: u32, hits: &mut [Option<Hit>; PACKET_RAYS]) {
        self.bvh.intersect_packet(&self.shapes, rays, active, hits);
    }

    /// [`Geometry::ray_test`] of lane `l`'s ray for each lane `l` in `active`, traced together
    /// as [`Geometry::intersect_packet`] does: bit `l` is set when that ray hits something.
    pub fn ray_test_packet(&self, rays: &RayPacket, active: u32) -> u32 {
        self.bvh.ray_test_packet(&self.shapes, rays, active)
    }

    /// [`Geometry::intersect`] for each ray, in packets of 16.
    ///
    /// # Panics
    /// If `rays` and `hits` differ in length.
    pub fn intersect_n(&self, rays: &[Ray], hits: &mut [Option<Hit>]) {
        assert_eq!(rays.len(), hits.len(), "intersect_n: one hit slot per ray");
        for (rays, hits) in rays.chunks(PACKET_RAYS).zip(hits.chunks_mut(PACKET_RAYS)) {
            let mut packet_hits = [None; PACKET_RAYS];
            self.intersect_packet(&RayPacket::from_rays(rays), u32::MAX, &mut packet_hits);
            hits.copy_from_slice(&packet_hits[..rays.len()]);
        }
    }

    /// [`Geometry::ray_test`] for each ray, in packets of 16.
    ///
    /// # Panics
    /// If `rays` and `occluded` differ in length.
    pub fn ray_test_n(&self, rays: &[Ray], occluded: &mut [bool]) {
        assert_eq!(rays.len(), occluded.len(), "ray_test_n: one result slot per ray");
        for (rays, occluded) in rays.chunks(PACKET_RAYS).zip(occluded.chunks_mut(PACKET_RAYS)) {
            let hit = self.ray_test_packet(&RayPacket::from_rays(rays), u32::MAX);
            for (l, occluded) in occluded.iter_mut().enumerate() {
                *occluded = hit & (1 << l) != 0;
            }
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
