//! Scenes before validation: the [`Draft`] both the XML loader and [`SceneBuilder`] fill, and
//! the builder itself, through which host programs make scenes without XML.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::desc::{Category, ObjectId, SceneDesc};
use crate::error::{ErrorSink, Location, SceneError};
use crate::schema::Schema;
use crate::value::Value;

/// One `name = value` as given, or an unnamed nested object (`name` is `None`).
pub(crate) struct Entry {
    pub name: Option<String>,
    pub value: Value,
    pub location: Option<Location>,
}

pub(crate) struct DraftObject {
    pub category: Category,
    /// `None` when the element's `type` was missing: the object is kept (so that references
    /// to it resolve) but not validated.
    pub plugin: Option<String>,
    pub id: Option<String>,
    pub location: Option<Location>,
    /// The object it was declared in (`None` for the root); gives the element path.
    pub owner: Option<ObjectId>,
    pub entries: Vec<Entry>,
    /// Parameters whose element was malformed (already reported): not "missing".
    pub malformed: Vec<String>,
}

/// An unvalidated scene. Object 0 is the root.
pub(crate) struct Draft {
    pub objects: Vec<DraftObject>,
    /// Source files in loading order.
    pub files: Vec<Arc<Path>>,
    /// Directories relative file names are looked up in, in order.
    pub search_dirs: Vec<PathBuf>,
    /// Extra ids (`<alias id as>`).
    pub aliases: Vec<(String, ObjectId)>,
    pub unused_definitions: Vec<String>,
}

impl Draft {
    pub fn new(root_location: Option<Location>) -> Self {
        let root = DraftObject {
            category: Category::Scene,
            plugin: Some("scene".into()),
            id: None,
            location: root_location,
            owner: None,
            entries: Vec::new(),
            malformed: Vec::new(),
        };
        Draft {
            objects: vec![root],
            files: Vec::new(),
            search_dirs: Vec::new(),
            aliases: Vec::new(),
            unused_definitions: Vec::new(),
        }
    }

    pub fn add_object(
        &mut self,
        owner: ObjectId,
        category: Category,
        plugin: Option<String>,
        location: Option<Location>,
    ) -> ObjectId {
        let id = ObjectId(self.objects.len() as u32);
        self.objects.push(DraftObject {
            category,
            plugin,
            id: None,
            location,
            owner: Some(owner),
            entries: Vec::new(),
            malformed: Vec::new(),
        });
        id
    }

    pub fn get(&self, id: ObjectId) -> Option<&DraftObject> {
        self.objects.get(id.index())
    }
}

/// Builds a scene in code. Objects are created inside a parent (their declaration, which gives
/// their element path) and can be shared by referencing them from other parents.
///
/// ```
/// use drs_scene::{Category, Schema, SceneBuilder, Value};
/// let mut b = SceneBuilder::new();
/// let root = b.root();
/// let sphere = b.add_object(root, Category::Shape, "sphere");
/// b.set(sphere, "radius", 2.0);
/// let scene = b.build(&Schema::builtin()).unwrap();
/// let shape = scene.root().child(Category::Shape).unwrap();
/// assert_eq!(scene[shape].float("radius"), Some(2.0));
/// ```
///
/// Methods taking an [`ObjectId`] panic when it was not made by this builder.
pub struct SceneBuilder {
    draft: Draft,
}

impl Default for SceneBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SceneBuilder {
    /// Relative file names will resolve against the current directory.
    pub fn new() -> Self {
        SceneBuilder { draft: Draft::new(None) }
    }

    /// Relative file names will resolve against `dir`.
    pub fn with_base_dir(dir: impl Into<PathBuf>) -> Self {
        let mut builder = Self::new();
        builder.draft.search_dirs.push(dir.into());
        builder
    }

    pub fn root(&self) -> ObjectId {
        ObjectId(0)
    }

    /// A new object nested in `parent` without a parameter name (a shape in the scene, a BSDF
    /// in a shape).
    pub fn add_object(&mut self, parent: ObjectId, category: Category, plugin: &str) -> ObjectId {
        let child = self.draft.add_object(parent, category, Some(plugin.to_owned()), None);
        self.draft.objects[parent.index()].entries.push(Entry {
            name: None,
            value: Value::Object(child),
            location: None,
        });
        child
    }

    /// A new object passed to `parent` as parameter `name` (a texture for `reflectance`).
    pub fn add_named_object(&mut self, parent: ObjectId, name: &str, category: Category, plugin: &str) -> ObjectId {
        let child = self.draft.add_object(parent, category, Some(plugin.to_owned()), None);
        self.set(parent, name, child);
        child
    }

    /// Shares an existing object as an unnamed child of `parent` (the `<ref id=".."/>` of XML).
    /// Pass it as a named parameter with [`SceneBuilder::set`] and [`Value::Object`].
    pub fn add_reference(&mut self, parent: ObjectId, object: ObjectId) {
        self.draft.objects[parent.index()].entries.push(Entry {
            name: None,
            value: Value::Object(object),
            location: None,
        });
    }

    /// Sets parameter `name` of `object`, replacing an earlier value.
    pub fn set(&mut self, object: ObjectId, name: &str, value: impl Into<Value>) -> &mut Self {
        let entries = &mut self.draft.objects[object.index()].entries;
        let value = value.into();
        match entries.iter_mut().find(|e| e.name.as_deref() == Some(name)) {
            Some(entry) => entry.value = value,
            None => entries.push(Entry { name: Some(name.to_owned()), value, location: None }),
        }
        self
    }

    /// Gives `object` an id, by which [`SceneDesc::by_id`] finds it.
    pub fn set_id(&mut self, object: ObjectId, id: &str) -> &mut Self {
        self.draft.objects[object.index()].id = Some(id.to_owned());
        self
    }

    /// Validates the scene against `schema`.
    pub fn build(self, schema: &Schema) -> Result<SceneDesc, Vec<SceneError>> {
        let mut errors = ErrorSink::default();
        check_ids(&self.draft, &mut errors);
        crate::validate::finish(self.draft, schema, errors)
    }
}

/// Ids must be unique (the XML loader reports its duplicates while parsing).
fn check_ids(draft: &Draft, errors: &mut ErrorSink) {
    let mut seen = std::collections::HashSet::new();
    for (i, object) in draft.objects.iter().enumerate() {
        if let Some(id) = &object.id {
            if !seen.insert(id) {
                errors.push(
                    Some(ObjectId(i as u32)),
                    SceneError::new(object.location.clone(), format!("duplicate id \"{id}\"")),
                );
            }
        }
    }
}
