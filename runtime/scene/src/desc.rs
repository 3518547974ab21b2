//! The validated scene description: an arena of objects with typed ids.
//!
//! Every object passed [`Schema`](crate::Schema) validation: its properties are exactly the
//! parameters its plugin declares, converted to the declared kind, with defaults filled in.
//! An object referenced from several places (`<ref id=".."/>`) is one object with one id.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use crate::error::Location;
use crate::math::{Transform, Vec3};
use crate::value::{Rgb, Value};

/// The kind of a scene object, i.e. its XML tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Scene,
    Shape,
    Bsdf,
    Texture,
    Emitter,
    Sensor,
    Film,
    Rfilter,
    Sampler,
    Integrator,
    Medium,
    Phase,
}

impl Category {
    pub const ALL: [Category; 12] = [
        Category::Scene,
        Category::Shape,
        Category::Bsdf,
        Category::Texture,
        Category::Emitter,
        Category::Sensor,
        Category::Film,
        Category::Rfilter,
        Category::Sampler,
        Category::Integrator,
        Category::Medium,
        Category::Phase,
    ];

    /// The XML tag, e.g. `rfilter`.
    pub fn tag(self) -> &'static str {
        match self {
            Category::Scene => "scene",
            Category::Shape => "shape",
            Category::Bsdf => "bsdf",
            Category::Texture => "texture",
            Category::Emitter => "emitter",
            Category::Sensor => "sensor",
            Category::Film => "film",
            Category::Rfilter => "rfilter",
            Category::Sampler => "sampler",
            Category::Integrator => "integrator",
            Category::Medium => "medium",
            Category::Phase => "phase",
        }
    }

    pub fn from_tag(tag: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.tag() == tag)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// An object of one [`SceneDesc`] (or of the [`SceneBuilder`](crate::SceneBuilder) it came from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub(crate) u32);

impl ObjectId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A validated property. `location` is `None` for a default the schema filled in (and for
/// scenes built in code).
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub name: String,
    pub value: Value,
    pub location: Option<Location>,
}

/// A nested or referenced object that fills one of its parent's child slots (a shape's BSDF,
/// a sensor's film). `name` is the optional `name` attribute, which such slots ignore.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    pub name: Option<String>,
    pub object: ObjectId,
    pub category: Category,
    pub location: Option<Location>,
}

/// One plugin instance (or the scene root).
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    pub(crate) category: Category,
    pub(crate) plugin: String,
    pub(crate) id: Option<String>,
    pub(crate) path: String,
    pub(crate) location: Option<Location>,
    pub(crate) properties: Vec<Property>,
    pub(crate) children: Vec<Child>,
}

impl Object {
    pub fn category(&self) -> Category {
        self.category
    }

    /// The plugin type name (`type=".."`); `scene` for the root.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The element path of the declaration, e.g. `scene/shape[2]/bsdf`.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// Every declared parameter that has a value (given, or the schema's default), in schema order.
    pub fn properties(&self) -> &[Property] {
        &self.properties
    }

    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }

    pub fn value(&self, name: &str) -> Option<&Value> {
        self.property(name).map(|p| &p.value)
    }

    /// The typed accessors below return `None` when the parameter has no value (optional, no
    /// default) or is not of the accessor's kind.
    pub fn float(&self, name: &str) -> Option<f64> {
        match self.value(name)? {
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }

    pub fn integer(&self, name: &str) -> Option<i64> {
        match self.value(name)? {
            Value::Integer(x) => Some(*x),
            _ => None,
        }
    }

    pub fn boolean(&self, name: &str) -> Option<bool> {
        match self.value(name)? {
            Value::Boolean(x) => Some(*x),
            _ => None,
        }
    }

    pub fn string(&self, name: &str) -> Option<&str> {
        match self.value(name)? {
            Value::String(x) => Some(x),
            _ => None,
        }
    }

    pub fn filename(&self, name: &str) -> Option<&Path> {
        match self.value(name)? {
            Value::Filename(x) => Some(x),
            _ => None,
        }
    }

    /// A colour: an `<rgb>`, or a uniform `<spectrum>` as grey.
    pub fn rgb(&self, name: &str) -> Option<Rgb> {
        match self.value(name)? {
            Value::Rgb(x) => Some(*x),
            Value::Spectrum(x) => Some([*x; 3]),
            _ => None,
        }
    }

    pub fn point(&self, name: &str) -> Option<Vec3> {
        match self.value(name)? {
            Value::Point(x) => Some(*x),
            _ => None,
        }
    }

    pub fn vector(&self, name: &str) -> Option<Vec3> {
        match self.value(name)? {
            Value::Vector(x) => Some(*x),
            _ => None,
        }
    }

    pub fn transform(&self, name: &str) -> Option<Transform> {
        match self.value(name)? {
            Value::Transform(x) => Some(*x),
            _ => None,
        }
    }

    /// An object passed as a named parameter (e.g. a texture for `reflectance`).
    pub fn object(&self, name: &str) -> Option<ObjectId> {
        match self.value(name)? {
            Value::Object(x) => Some(*x),
            _ => None,
        }
    }

    /// The objects in child slots, in scene order.
    pub fn all_children(&self) -> &[Child] {
        &self.children
    }

    /// The child objects of one category, in scene order.
    pub fn children(&self, category: Category) -> impl Iterator<Item = ObjectId> + '_ {
        self.children.iter().filter(move |c| c.category == category).map(|c| c.object)
    }

    /// The first child object of one category (slots such as a shape's BSDF hold at most one).
    pub fn child(&self, category: Category) -> Option<ObjectId> {
        self.children(category).next()
    }
}

/// A validated scene: the root object and every object reachable from it or declared in the file.
#[derive(Clone, Debug)]
pub struct SceneDesc {
    pub(crate) objects: Vec<Object>,
    pub(crate) ids: HashMap<String, ObjectId>,
    pub(crate) unused_definitions: Vec<String>,
}

impl SceneDesc {
    pub fn root_id(&self) -> ObjectId {
        ObjectId(0)
    }

    pub fn root(&self) -> &Object {
        &self.objects[0]
    }

    /// # Panics
    /// If `id` belongs to another scene with more objects.
    pub fn object(&self, id: ObjectId) -> &Object {
        &self.objects[id.index()]
    }

    pub fn objects(&self) -> impl Iterator<Item = (ObjectId, &Object)> {
        self.objects.iter().enumerate().map(|(i, o)| (ObjectId(i as u32), o))
    }

    /// The object declared with `id=".."` (or aliased to it).
    pub fn by_id(&self, id: &str) -> Option<ObjectId> {
        self.ids.get(id).copied()
    }

    /// Caller definitions (`-D name=value`) that the scene never used.
    pub fn unused_definitions(&self) -> &[String] {
        &self.unused_definitions
    }
}

impl std::ops::Index<ObjectId> for SceneDesc {
    type Output = Object;

    fn index(&self, id: ObjectId) -> &Object {
        self.object(id)
    }
}
