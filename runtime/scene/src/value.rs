//! Property values, as written in a scene and as validated.

use std::path::PathBuf;

use crate::desc::ObjectId;
use crate::math::{Transform, Vec3};

/// A linear RGB triple.
pub type Rgb = [f64; 3];

/// The value of one property.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f64),
    Integer(i64),
    Boolean(bool),
    String(String),
    /// A file name resolved against the scene's directory (validation turns the `String` a
    /// scene gives for a file parameter into this).
    Filename(PathBuf),
    Rgb(Rgb),
    /// A spectrum that is the same at every wavelength (`<spectrum value="0.5"/>`).
    Spectrum(f64),
    Point(Vec3),
    Vector(Vec3),
    Transform(Transform),
    /// A nested or referenced object passed as a named parameter (e.g. a texture).
    Object(ObjectId),
}

impl Value {
    /// The name of the value's kind as it appears in messages, e.g. `<float>`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Float(_) => "<float>",
            Value::Integer(_) => "<integer>",
            Value::Boolean(_) => "<boolean>",
            Value::String(_) => "<string>",
            Value::Filename(_) => "a file name",
            Value::Rgb(_) => "<rgb>",
            Value::Spectrum(_) => "<spectrum>",
            Value::Point(_) => "<point>",
            Value::Vector(_) => "<vector>",
            Value::Transform(_) => "<transform>",
            Value::Object(_) => "an object",
        }
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Float(x)
    }
}

impl From<i64> for Value {
    fn from(x: i64) -> Self {
        Value::Integer(x)
    }
}

impl From<bool> for Value {
    fn from(x: bool) -> Self {
        Value::Boolean(x)
    }
}

impl From<&str> for Value {
    fn from(x: &str) -> Self {
        Value::String(x.to_owned())
    }
}

impl From<Transform> for Value {
    fn from(x: Transform) -> Self {
        Value::Transform(x)
    }
}

impl From<ObjectId> for Value {
    fn from(x: ObjectId) -> Self {
        Value::Object(x)
    }
}
