//! Shapes, mesh loading (OBJ, PLY) and the BVH behind `scene.intersect` and `scene.ray_test`.
//!
//! Shapes follow Mitsuba 3's conventions (parametrisations, normals, `to_world`,
//! `flip_normals`, `face_normals`) and live in world space once built. [`Geometry`] holds a
//! scene's shapes and the BVH over all their primitives; its hits turn into
//! [`SurfaceInteraction`]s, and shapes sample positions by area for area emitters.
//!
//! - `math`: glam vectors, [`Transform`], [`Aabb`], [`Ray`], [`Frame`].
//! - `shape`: [`TriangleMesh`], [`Sphere`], [`Disk`], the `rectangle` and `cube` generators.
//! - `io`: the OBJ and PLY loaders, which produce [`MeshData`].
//! - `triangle`: the watertight ray/triangle test; `bvh`: build and traversal.
//! - `interaction`, `sampling`: hits, surface interactions, area sampling; `interaction_lanes`:
//!   the surface interactions of a lane group's hits at once, for the runtime.

mod bvh;
mod error;
mod geometry;
mod interaction;
mod interaction_lanes;
pub mod io;
pub mod math;
mod sampling;
mod shape;
mod triangle;

pub use bvh::{BvhStatistics, RayPacket, ANY_HIT_PACKET_MIN_RAYS, CLOSEST_HIT_PACKET_MIN_RAYS, PACKET_RAYS};
pub use error::GeometryError;
pub use geometry::Geometry;
pub use interaction::{Hit, PrimitiveHit, SurfaceInteraction};
pub use interaction_lanes::SurfaceInteractions;
pub use math::{Aabb, Frame, Ray, Transform};
pub use sampling::{
    square_to_uniform_disk_concentric, square_to_uniform_sphere, square_to_uniform_triangle, DiscreteDistribution,
    PositionSample, PositionSamples,
};
pub use shape::{cube, cube_data, rectangle, rectangle_data, Disk, MeshData, MeshOptions, Shape, Sphere, TriangleMesh};
