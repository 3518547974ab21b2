//! Mitsuba 3 XML scene loader: the scene description the runtime builds from.
//!
//! [`load_file`] reads a scene (with its includes), substitutes `$name` parameters, resolves
//! ids and references, and validates every object against a [`Schema`]: the built-in schemas
//! of the natively implemented plugins plus one per `.drs` plugin, registered by the runtime.
//! The result is a [`SceneDesc`], an arena of [`Object`]s whose properties are exactly the
//! declared parameters with defaults applied. Host programs build the same description in
//! code with [`SceneBuilder`].
//!
//! Errors are [`SceneError`]s with file, line, column and element path. A broken file stops
//! loading at once; otherwise every validation error is reported.
//!
//! Modules: `xml` (parsing, includes, substitution), `builder` (the unvalidated draft),
//! `validate` (schema checks), `schema` (the registry and the built-in schemas), `desc`
//! (the validated model), `math` (transforms).

mod builder;
mod definitions;
mod desc;
mod error;
mod math;
mod schema;
mod validate;
mod value;
mod xml;

use std::path::Path;

pub use builder::SceneBuilder;
pub use definitions::Definitions;
pub use desc::{Category, Child, Object, ObjectId, Property, SceneDesc};
pub use error::{Location, SceneError};
pub use math::{LookAtError, Transform, Vec3};
pub use schema::{Bound, ChildSlot, ParamKind, ParamSchema, PluginSchema, Range, Rule, Schema, SchemaError};
pub use value::{Rgb, Value};

/// Loads and validates the scene file at `path`. Relative file names in the scene resolve
/// against its directory.
pub fn load_file(
    path: impl AsRef<Path>,
    definitions: &Definitions,
    schema: &Schema,
) -> Result<SceneDesc, Vec<SceneError>> {
    xml::load(path.as_ref(), None, definitions, schema)
}

/// Loads and validates scene text as if it were the file `virtual_path` (which names it in
/// errors and anchors includes and relative file names; it need not exist).
pub fn load_str(
    text: &str,
    virtual_path: impl AsRef<Path>,
    definitions: &Definitions,
    schema: &Schema,
) -> Result<SceneDesc, Vec<SceneError>> {
    xml::load(virtual_path.as_ref(), Some(text), definitions, schema)
}
