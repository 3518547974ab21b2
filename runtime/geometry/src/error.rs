//! Why a shape or a scene's geometry could not be built from its description.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum GeometryError {
    #[error("the transform contains a non-finite value")]
    NonFiniteTransform,
    #[error("the transform is projective (its last row is not 0 0 0 1)")]
    ProjectiveTransform,
    #[error("the transform is singular (it flattens space)")]
    SingularTransform,
    #[error("a sphere's to_world may only rotate, translate and scale uniformly (no non-uniform scale or shear)")]
    NonUniformSphereScale,
    #[error("sphere radius {0} is not a positive finite number")]
    InvalidRadius(f32),
    #[error("vertex {vertex} has a non-finite {attribute}")]
    NonFiniteVertex { vertex: usize, attribute: &'static str },
    #[error("{attribute} has {found} entries but the mesh has {expected} vertices")]
    AttributeCount { attribute: &'static str, expected: usize, found: usize },
    #[error("triangle {triangle} refers to vertex {index}, but the mesh has {vertex_count} vertices")]
    IndexOutOfRange { triangle: usize, index: u32, vertex_count: usize },
    #[error("the scene has {0} primitives; at most 2^32 - 1 are supported")]
    TooManyPrimitives(u64),
    #[error("the scene has {0} shapes; at most 2^31 are supported")]
    TooManyShapes(usize),
}
