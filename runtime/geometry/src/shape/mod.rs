//! Shapes in world space: triangle meshes (from files or the `rectangle`/`cube` generators)
//! and the analytic sphere and disk. A shape is made of primitives: a mesh's triangles, or the
//! analytic shape as a single primitive 0.

mod disk;
mod generators;
mod mesh;
mod sphere;

pub use disk::Disk;
pub use generators::{cube, cube_data, rectangle, rectangle_data};
pub use mesh::{MeshData, MeshOptions, TriangleMesh};
pub use sphere::Sphere;

use crate::interaction::{Hit, PrimitiveHit, SurfaceInteraction};
use crate::math::{Aabb, Ray, Vec2};
use crate::sampling::{PositionSample, PositionSamples};
use crate::triangle::RayShear;

#[derive(Clone, Debug)]
pub enum Shape {
    Mesh(TriangleMesh),
    Sphere(Sphere),
    Disk(Disk),
}

impl From<TriangleMesh> for Shape {
    fn from(mesh: TriangleMesh) -> Shape {
        Shape::Mesh(mesh)
    }
}

impl From<Sphere> for Shape {
    fn from(sphere: Sphere) -> Shape {
        Shape::Sphere(sphere)
    }
}

impl From<Disk> for Shape {
    fn from(disk: Disk) -> Shape {
        Shape::Disk(disk)
    }
}

impl Shape {
    pub fn primitive_count(&self) -> usize {
        match self {
            Shape::Mesh(mesh) => mesh.triangles().len(),
            Shape::Sphere(_) | Shape::Disk(_) => 1,
        }
    }

    pub fn bounds(&self) -> Aabb {
        match self {
            Shape::Mesh(mesh) => mesh.bounds(),
            Shape::Sphere(sphere) => sphere.bounds(),
            Shape::Disk(disk) => disk.bounds(),
        }
    }

    /// Bounds of one primitive; `prim` must be below [`Shape::primitive_count`].
    pub fn primitive_bounds(&self, prim: usize) -> Aabb {
        match self {
            Shape::Mesh(mesh) => Aabb::from_points(&mesh.triangle_positions(prim)),
            Shape::Sphere(_) | Shape::Disk(_) => self.bounds(),
        }
    }

    /// The hit of `ray` with primitive `prim` within `[0, ray.maxt]`, if any. The BVH gets the
    /// same answers (its packet test of four triangles is bit for bit this triangle test), so
    /// looping over all primitives gives the reference closest hit.
    pub fn intersect_primitive(&self, prim: usize, ray: &Ray) -> Option<PrimitiveHit> {
        match self {
            Shape::Mesh(mesh) => mesh
                .intersect_triangle(prim, &RayShear::new(ray), ray.maxt)
                .map(|h| PrimitiveHit { t: h.t, uv: Vec2::new(h.b1, h.b2) }),
            Shape::Sphere(sphere) => sphere.intersect(ray),
            Shape::Disk(disk) => disk.intersect(ray),
        }
    }

    /// Position, normals, uv, partials and shading frame at a hit of this shape.
    pub fn surface_interaction(&self, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
        match self {
            Shape::Mesh(mesh) => mesh.surface_interaction(ray, hit),
            Shape::Sphere(sphere) => sphere.surface_interaction(ray, hit),
            Shape::Disk(disk) => disk.surface_interaction(ray, hit),
        }
    }

    pub fn surface_area(&self) -> f32 {
        match self {
            Shape::Mesh(mesh) => mesh.surface_area(),
            Shape::Sphere(sphere) => sphere.surface_area(),
            Shape::Disk(disk) => disk.surface_area(),
        }
    }

    /// A point uniformly distributed by area (Mitsuba `Shape::sample_position`), `sample` in
    /// `[0, 1)²`.
    pub fn sample_position(&self, sample: Vec2) -> PositionSample {
        match self {
            Shape::Mesh(mesh) => mesh.sample_position(sample),
            Shape::Sphere(sphere) => sphere.sample_position(sample),
            Shape::Disk(disk) => disk.sample_position(sample),
        }
    }

    /// [`Shape::sample_position`] of the point `(u[lane], v[lane])` of each lane in the bit
    /// mask `lanes`, the same bits (other lanes get unspecified values): a rectangle's lanes
    /// side by side in vector instructions, other shapes lane by lane.
    pub fn sample_positions<const L: usize>(&self, u: &[f32; L], v: &[f32; L], lanes: u32) -> PositionSamples<L> {
        match self {
            Shape::Mesh(mesh) => mesh.sample_positions(u, v, lanes),
            _ => PositionSamples::by_lane(u, v, lanes, |sample| self.sample_position(sample)),
        }
    }

    /// Area density of [`Shape::sample_position`] at any point of the surface: `1 / area`
    /// (0 for a shape without area).
    pub fn pdf_position(&self) -> f32 {
        let area = self.surface_area();
        if area > 0.0 {
            1.0 / area
        } else {
            0.0
        }
    }
}
