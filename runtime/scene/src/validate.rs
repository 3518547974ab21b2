//! Turns a [`Draft`] into a [`SceneDesc`]: references checked for cycles, element paths, and
//! every object checked against its plugin's schema (kinds converted, ranges and choices
//! checked, file names resolved, defaults filled in). All problems are reported, not just
//! the first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::builder::{Draft, DraftObject, Entry};
use crate::desc::{Category, Child, Object, ObjectId, Property, SceneDesc};
use crate::error::{ErrorSink, Location, SceneError};
use crate::schema::{ParamKind, ParamSchema, PluginSchema, Rule, Schema};
use crate::value::Value;

pub(crate) fn finish(mut draft: Draft, schema: &Schema, mut errors: ErrorSink) -> Result<SceneDesc, Vec<SceneError>> {
    drop_foreign_references(&mut draft, &mut errors);
    let paths = element_paths(&draft);
    let path_of = |id: ObjectId| paths.get(id.index()).cloned();
    if let Err(cycle) = find_cycle(&draft) {
        errors.push(Some(cycle.0), cycle.1);
        return Err(errors.finish(path_of, &draft.files));
    }
    let objects: Vec<Object> = (0..draft.objects.len())
        .map(|i| ObjectValidator { draft: &draft, schema, errors: &mut errors, id: ObjectId(i as u32) }.run(&paths))
        .collect();
    if !errors.is_empty() {
        return Err(errors.finish(path_of, &draft.files));
    }
    let mut ids = HashMap::new();
    for (i, object) in draft.objects.iter().enumerate() {
        if let Some(id) = &object.id {
            ids.entry(id.clone()).or_insert(ObjectId(i as u32));
        }
    }
    for (alias, target) in draft.aliases {
        ids.entry(alias).or_insert(target);
    }
    Ok(SceneDesc { objects, ids, unused_definitions: draft.unused_definitions })
}

/// Checks a schema default the way a scene value is checked.
pub(crate) fn check_default(param: &ParamSchema, default: &Value) -> Result<(), String> {
    let converted = convert(&param.kind, default.clone(), |_| None)
        .ok_or_else(|| format!("{} is not {}", default.kind_name(), param.kind.describe()))?;
    if let (Some(range), Some(values)) = (param.range, numbers(&converted)) {
        if !values.iter().all(|&x| range.contains(x)) {
            return Err(format!("not {range}"));
        }
    }
    match &converted {
        Value::String(s) if !param.choices.is_empty() && !param.choices.contains(s) => {
            Err(format!("\"{s}\" is not one of the choices"))
        }
        _ => Ok(()),
    }
}

/// References to ids a builder did not make (another builder's) cannot be followed.
fn drop_foreign_references(draft: &mut Draft, errors: &mut ErrorSink) {
    let count = draft.objects.len();
    for (i, object) in draft.objects.iter_mut().enumerate() {
        object.entries.retain(|entry| match entry.value {
            Value::Object(target) if target.index() >= count => {
                let name = entry.name.as_deref().unwrap_or("(unnamed)");
                errors.push(
                    Some(ObjectId(i as u32)),
                    SceneError::new(entry.location.clone(), format!("{name}: object is not part of this scene")),
                );
                false
            }
            _ => true,
        });
    }
}

/// `scene/shape[2]/bsdf`: each object under the object that declared it; `[k]` counts the
/// declared siblings of the same category and appears when there is more than one.
pub(crate) fn element_paths(draft: &Draft) -> Vec<String> {
    // Each object's 1-based position among its declared siblings of the same category.
    let mut position = vec![0; draft.objects.len()];
    let mut siblings: HashMap<(ObjectId, Category), usize> = HashMap::new();
    for (owner, object) in draft.objects.iter().enumerate() {
        let owner = ObjectId(owner as u32);
        for entry in &object.entries {
            let Value::Object(child) = entry.value else { continue };
            let declared = &draft.objects[child.index()];
            if declared.owner == Some(owner) && position[child.index()] == 0 {
                let count = siblings.entry((owner, declared.category)).or_default();
                *count += 1;
                position[child.index()] = *count;
            }
        }
    }
    let mut paths = vec![Category::Scene.tag().to_owned(); draft.objects.len()];
    // Owners are created before what they own, so their paths are ready when needed.
    for (i, object) in draft.objects.iter().enumerate().skip(1) {
        let Some(owner) = object.owner else { continue };
        let tag = object.category.tag();
        paths[i] = match siblings.get(&(owner, object.category)) {
            Some(&count) if count > 1 && position[i] > 0 => format!("{}/{tag}[{}]", paths[owner.index()], position[i]),
            _ => format!("{}/{tag}", paths[owner.index()]),
        };
    }
    paths
}

/// An object that contains itself through references, with the error to report.
fn find_cycle(draft: &Draft) -> Result<(), (ObjectId, SceneError)> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnStack,
        Done,
    }
    // Reversed, so that popping them visits the entries in scene order.
    let edges = |i: usize| -> Vec<(usize, Option<Location>)> {
        draft.objects[i]
            .entries
            .iter()
            .rev()
            .filter_map(|e| match e.value {
                Value::Object(c) => Some((c.index(), e.location.clone())),
                _ => None,
            })
            .collect()
    };
    let name = |i: usize| match &draft.objects[i].id {
        Some(id) => format!("\"{id}\""),
        None => format!("<{}>", draft.objects[i].category),
    };
    let mut state = vec![State::New; draft.objects.len()];
    for start in 0..draft.objects.len() {
        if state[start] != State::New {
            continue;
        }
        // Depth-first, with each frame's pending edges on an explicit stack.
        let mut stack = vec![(start, edges(start))];
        state[start] = State::OnStack;
        while let Some((node, pending)) = stack.last_mut() {
            let node = *node;
            let Some((next, location)) = pending.pop() else {
                state[node] = State::Done;
                stack.pop();
                continue;
            };
            match state[next] {
                State::New => {
                    state[next] = State::OnStack;
                    stack.push((next, edges(next)));
                }
                State::OnStack => {
                    let from = stack.iter().position(|(n, _)| *n == next).unwrap_or(0);
                    let chain: Vec<String> = stack[from..].iter().map(|(n, _)| name(*n)).chain([name(next)]).collect();
                    let error = SceneError::new(location, format!("circular reference: {}", chain.join(" -> ")));
                    return Err((ObjectId(node as u32), error));
                }
                State::Done => {}
            }
        }
    }
    Ok(())
}

/// Converts a value to a parameter kind, as Mitsuba's property lookups do (an integer where
/// a float is expected, a float where a colour is expected, points and vectors alike).
fn convert(kind: &ParamKind, value: Value, category_of: impl Fn(ObjectId) -> Option<Category>) -> Option<Value> {
    use Value as V;
    let converted = match (kind, value) {
        (ParamKind::Float | ParamKind::FloatTexture, V::Integer(i)) => V::Float(i as f64),
        (ParamKind::Color | ParamKind::ColorTexture, V::Float(x)) => V::Spectrum(x),
        (ParamKind::Point, V::Vector(v)) => V::Point(v),
        (ParamKind::Vector, V::Point(p)) => V::Vector(p),
        (ParamKind::Float | ParamKind::FloatTexture, v @ V::Float(_))
        | (ParamKind::Integer, v @ V::Integer(_))
        | (ParamKind::Boolean, v @ V::Boolean(_))
        | (ParamKind::String, v @ V::String(_))
        | (ParamKind::Filename, v @ (V::String(_) | V::Filename(_)))
        | (ParamKind::Color | ParamKind::ColorTexture, v @ (V::Rgb(_) | V::Spectrum(_)))
        | (ParamKind::Point, v @ V::Point(_))
        | (ParamKind::Vector, v @ V::Vector(_))
        | (ParamKind::Transform, v @ V::Transform(_)) => v,
        (ParamKind::FloatTexture | ParamKind::ColorTexture, V::Object(o))
            if category_of(o) == Some(Category::Texture) =>
        {
            V::Object(o)
        }
        (ParamKind::Object(category), V::Object(o)) if category_of(o) == Some(*category) => V::Object(o),
        _ => return None,
    };
    Some(converted)
}

/// The numbers a range applies to.
fn numbers(value: &Value) -> Option<Vec<f64>> {
    match value {
        Value::Float(x) | Value::Spectrum(x) => Some(vec![*x]),
        Value::Integer(i) => Some(vec![*i as f64]),
        Value::Rgb(c) => Some(c.to_vec()),
        _ => None,
    }
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::Float(x) | Value::Spectrum(x) => x.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Rgb([r, g, b]) => format!("({r}, {g}, {b})"),
        other => other.kind_name().to_owned(),
    }
}

struct ObjectValidator<'a> {
    draft: &'a Draft,
    schema: &'a Schema,
    errors: &'a mut ErrorSink,
    id: ObjectId,
}

impl<'a> ObjectValidator<'a> {
    fn object(&self) -> &'a DraftObject {
        &self.draft.objects[self.id.index()]
    }

    fn error(&mut self, location: Option<Location>, message: String, hint: Option<String>) {
        let mut error = SceneError::new(location, message);
        error.hint = hint;
        self.errors.push(Some(self.id), error);
    }

    /// `bsdf "diffuse"`, or `the scene`.
    fn label(&self) -> String {
        let object = self.object();
        match object.category {
            Category::Scene => "the scene".to_owned(),
            category => format!("{category} \"{}\"", object.plugin.as_deref().unwrap_or("?")),
        }
    }

    fn category_of(&self, id: ObjectId) -> Option<Category> {
        self.draft.get(id).map(|o| o.category)
    }

    fn run(mut self, paths: &[String]) -> Object {
        let draft_object = self.object();
        let mut object = Object {
            category: draft_object.category,
            plugin: draft_object.plugin.clone().unwrap_or_default(),
            id: draft_object.id.clone(),
            path: paths[self.id.index()].clone(),
            location: draft_object.location.clone(),
            properties: Vec::new(),
            children: Vec::new(),
        };
        let Some(plugin) = &draft_object.plugin else { return object };
        let Some(plugin_schema) = self.schema.get(draft_object.category, plugin) else {
            self.unknown_plugin(plugin);
            return object;
        };
        let mut given: Vec<Option<&Entry>> = vec![None; plugin_schema.params.len()];
        let mut values: Vec<Option<Value>> = vec![None; plugin_schema.params.len()];
        let entries = &self.draft.objects[self.id.index()].entries;
        for entry in entries {
            match &entry.name {
                Some(name) => {
                    if let Some(index) = plugin_schema.params.iter().position(|p| &p.name == name) {
                        if let Some(first) = given[index] {
                            self.given_twice(name, entry, first);
                            continue;
                        }
                        given[index] = Some(entry);
                        values[index] = self.check_param(&plugin_schema.params[index], entry);
                    } else if let Some(child) = self.slot_child(plugin_schema, entry) {
                        object.children.push(child);
                    } else {
                        self.unknown_param(plugin_schema, name, entry);
                    }
                }
                None => match self.slot_child(plugin_schema, entry) {
                    Some(child) => object.children.push(child),
                    None => self.unexpected_child(plugin_schema, entry),
                },
            }
        }
        self.check_slot_counts(plugin_schema, &object.children);
        for (index, param) in plugin_schema.params.iter().enumerate() {
            let malformed = self.object().malformed.contains(&param.name);
            if given[index].is_none() && param.required && !malformed {
                let message = format!("missing required parameter \"{}\" for {}", param.name, self.label());
                self.error(self.object().location.clone(), message, None);
            }
        }
        self.check_rules(plugin_schema, &given, &values);
        for (index, param) in plugin_schema.params.iter().enumerate() {
            let location = given[index].and_then(|e| e.location.clone());
            let value = match (&given[index], values[index].take()) {
                (Some(_), value) => value,
                (None, _) => param.default.clone().and_then(|d| convert(&param.kind, d, |_| None)),
            };
            if let Some(value) = value {
                object.properties.push(Property { name: param.name.clone(), value, location });
            }
        }
        object
    }

    fn unknown_plugin(&mut self, plugin: &str) {
        let category = self.object().category;
        let known: Vec<&str> = self.schema.plugin_names(category).collect();
        let hint = match known.is_empty() {
            true => format!("no {category} plugins are registered"),
            false => format!("expected one of: {}", known.join(", ")),
        };
        self.error(self.object().location.clone(), format!("unknown {category} plugin \"{plugin}\""), Some(hint));
    }

    fn given_twice(&mut self, name: &str, entry: &Entry, first: &Entry) {
        let hint = first.location.as_ref().map(|l| format!("first given at {l}"));
        let message = format!("parameter \"{name}\" of {} is given twice", self.label());
        self.error(entry.location.clone(), message, hint);
    }

    fn unknown_param(&mut self, plugin_schema: &PluginSchema, name: &str, entry: &Entry) {
        if let Some((_, reason)) = plugin_schema.unsupported.iter().find(|(n, _)| n == name) {
            let message = format!("parameter \"{name}\" of {} is not supported by drs", self.label());
            self.error(entry.location.clone(), message, Some(reason.clone()));
            return;
        }
        let names: Vec<&str> = plugin_schema.params.iter().map(|p| p.name.as_str()).collect();
        let hint = match names.is_empty() {
            true => format!("{} takes no parameters", self.label()),
            false => format!("expected one of: {}", names.join(", ")),
        };
        self.error(entry.location.clone(), format!("unknown parameter \"{name}\" for {}", self.label()), Some(hint));
    }

    /// The child, when `entry` is an object whose category has a slot here.
    fn slot_child(&self, plugin_schema: &PluginSchema, entry: &Entry) -> Option<Child> {
        let Value::Object(object) = entry.value else { return None };
        let category = self.category_of(object)?;
        plugin_schema.find_slot(category)?;
        Some(Child { name: entry.name.clone(), object, category, location: entry.location.clone() })
    }

    fn unexpected_child(&mut self, plugin_schema: &PluginSchema, entry: &Entry) {
        let what = match entry.value {
            Value::Object(o) => self.category_of(o).map_or("an object".to_owned(), |c| format!("a <{c}>")),
            ref other => other.kind_name().to_owned(),
        };
        let slots: Vec<String> = plugin_schema.slots.iter().map(|s| format!("<{}>", s.category)).collect();
        let hint = match slots.is_empty() {
            true => format!("{} takes no nested objects", self.label()),
            false => format!("expected {}", slots.join(", ")),
        };
        self.error(entry.location.clone(), format!("{} cannot contain {what}", self.label()), Some(hint));
    }

    fn check_slot_counts(&mut self, plugin_schema: &PluginSchema, children: &[Child]) {
        for slot in &plugin_schema.slots {
            let Some(max) = slot.max else { continue };
            if let Some(extra) = children.iter().filter(|c| c.category == slot.category).nth(max) {
                let message = format!("{} takes at most {max} <{}>", self.label(), slot.category);
                self.error(extra.location.clone(), message, None);
            }
        }
    }

    /// The converted value, or `None` after reporting why it is not acceptable.
    fn check_param(&mut self, param: &ParamSchema, entry: &Entry) -> Option<Value> {
        let given = match &entry.value {
            Value::String(name) if !param.named_values.is_empty() => {
                Value::Float(self.named_value(param, name, entry)?)
            }
            other => other.clone(),
        };
        let Some(value) = convert(&param.kind, given, |o| self.category_of(o)) else {
            let found = match entry.value {
                Value::Object(o) => self.category_of(o).map_or("an object".to_owned(), |c| format!("a <{c}>")),
                ref other => other.kind_name().to_owned(),
            };
            let message =
                format!("parameter \"{}\" of {} expects {}, found {found}", param.name, self.label(), param.describe());
            self.error(entry.location.clone(), message, None);
            return None;
        };
        if let (Some(range), Some(numbers)) = (param.range, numbers(&value)) {
            if !numbers.iter().all(|&x| range.contains(x)) {
                let components = if numbers.len() > 1 { " in every component" } else { "" };
                let message = format!(
                    "parameter \"{}\" of {} must be {range}{components}, found {}",
                    param.name,
                    self.label(),
                    describe_value(&value)
                );
                self.error(entry.location.clone(), message, None);
                return None;
            }
        }
        match value {
            Value::String(s) if !param.choices.is_empty() => {
                let choice = param.choices.iter().find(|c| c.eq_ignore_ascii_case(&s));
                if choice.is_none() {
                    let message = format!("invalid value \"{s}\" for parameter \"{}\" of {}", param.name, self.label());
                    self.error(
                        entry.location.clone(),
                        message,
                        Some(format!("expected one of: {}", param.choices.join(", "))),
                    );
                }
                choice.map(|c| Value::String(c.clone()))
            }
            Value::String(s) if param.kind == ParamKind::Filename => self.resolve_file(Path::new(&s), entry),
            Value::Filename(p) => self.resolve_file(&p, entry),
            value => Some(value),
        }
    }

    /// The number a name stands for in a parameter with named values, or `None` after
    /// reporting an unknown name.
    fn named_value(&mut self, param: &ParamSchema, name: &str, entry: &Entry) -> Option<f64> {
        let found = param.named_values.iter().find(|(known, _)| known.eq_ignore_ascii_case(name));
        if found.is_none() {
            let message = format!("unknown name \"{name}\" for parameter \"{}\" of {}", param.name, self.label());
            let names: Vec<&str> = param.named_values.iter().map(|(known, _)| known.as_str()).collect();
            let hint = format!("give a number, or one of: {}", names.join(", "));
            self.error(entry.location.clone(), message, Some(hint));
        }
        found.map(|&(_, value)| value)
    }

    /// Absolute names as they are; relative ones in the first search directory that has them.
    fn resolve_file(&mut self, name: &Path, entry: &Entry) -> Option<Value> {
        let dirs = &self.draft.search_dirs;
        let candidates: Vec<PathBuf> = match name.is_absolute() || dirs.is_empty() {
            true => vec![name.to_owned()],
            false => dirs.iter().map(|d| d.join(name)).collect(),
        };
        if let Some(found) = candidates.iter().find(|c| c.is_file()) {
            return Some(Value::Filename(found.clone()));
        }
        let hint = (!name.is_absolute() && !dirs.is_empty()).then(|| {
            format!("looked in: {}", dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "))
        });
        self.error(entry.location.clone(), format!("file \"{}\" not found", name.display()), hint);
        None
    }

    fn check_rules(&mut self, plugin_schema: &PluginSchema, given: &[Option<&Entry>], values: &[Option<Value>]) {
        let index = |name: &str| plugin_schema.params.iter().position(|p| p.name == name);
        for rule in &plugin_schema.rules {
            match rule {
                Rule::Exclusive(a, b) => {
                    let (Some(ia), Some(ib)) = (index(a), index(b)) else { continue };
                    if let (Some(_), Some(second)) = (given[ia], given[ib]) {
                        let message =
                            format!("parameters \"{a}\" and \"{b}\" of {} cannot both be given", self.label());
                        self.error(second.location.clone(), message, None);
                    }
                }
                Rule::Less(a, b) => {
                    let (Some(ia), Some(ib)) = (index(a), index(b)) else { continue };
                    let value = |i: usize| match (&given[i], &values[i], &plugin_schema.params[i].default) {
                        (Some(_), Some(v), _) | (None, _, Some(v)) => numbers(v).and_then(|n| n.first().copied()),
                        _ => None,
                    };
                    if let (Some(x), Some(y)) = (value(ia), value(ib)) {
                        if x >= y {
                            let location = given[ia].or(given[ib]).and_then(|e| e.location.clone());
                            let message = format!("\"{a}\" ({x}) must be less than \"{b}\" ({y}) for {}", self.label());
                            self.error(location, message, None);
                        }
                    }
                }
                Rule::NonZero(a) => {
                    let Some(ia) = index(a) else { continue };
                    if let (Some(entry), Some(Value::Vector(v) | Value::Point(v))) = (given[ia], &values[ia]) {
                        if *v == [0.0; 3] {
                            let message = format!("parameter \"{a}\" of {} must not be zero", self.label());
                            self.error(entry.location.clone(), message, None);
                        }
                    }
                }
            }
        }
    }
}

impl SceneDesc {
    /// Makes the scene's integrator a `plugin` (as Mitsuba users swap `path` for `prb` to take
    /// gradients): `overrides` set properties of the new integrator, the properties the scene
    /// gave explicitly that `plugin` also has are kept (checked again), the others take
    /// `plugin`'s defaults. A scene without an integrator gets one.
    pub fn replace_integrator(
        &mut self,
        plugin: &str,
        overrides: &[(&str, Value)],
        schema: &Schema,
    ) -> Result<(), SceneError> {
        let plugin_schema = schema
            .get(Category::Integrator, plugin)
            .ok_or_else(|| SceneError::new(None, format!("unknown integrator type \"{plugin}\"")))?;
        if let Some((name, _)) =
            overrides.iter().find(|(name, _)| !plugin_schema.params.iter().any(|p| p.name == *name))
        {
            return Err(SceneError::new(None, format!("integrator \"{plugin}\" has no parameter \"{name}\"")));
        }
        let root = self.root_id();
        let old = self.root().child(Category::Integrator).map(|id| self.objects[id.index()].clone());
        let mut properties = Vec::new();
        for param in &plugin_schema.params {
            if let Some((_, value)) = overrides.iter().find(|(name, _)| *name == param.name) {
                let value = convert(&param.kind, value.clone(), |_| None).ok_or_else(|| {
                    SceneError::new(
                        None,
                        format!("integrator \"{plugin}\": \"{}\" must be {}", param.name, param.kind.describe()),
                    )
                })?;
                properties.push(Property { name: param.name.clone(), value, location: None });
                continue;
            }
            let given = old.as_ref().and_then(|o| o.property(param.name.as_str())).filter(|p| p.location.is_some());
            let value = match given {
                Some(property) => Some(convert(&param.kind, property.value.clone(), |_| None).ok_or_else(|| {
                    SceneError::new(
                        property.location.clone(),
                        format!("integrator \"{plugin}\": \"{}\" must be {}", param.name, param.kind.describe()),
                    )
                })?),
                None => param.default.clone().and_then(|d| convert(&param.kind, d, |_| None)),
            };
            if let Some(value) = value {
                let location = given.and_then(|p| p.location.clone());
                properties.push(Property { name: param.name.clone(), value, location });
            }
        }
        let object = Object {
            category: Category::Integrator,
            plugin: plugin.to_owned(),
            id: old.as_ref().and_then(|o| o.id.clone()),
            path: "scene/integrator".to_owned(),
            location: old.as_ref().and_then(|o| o.location.clone()),
            properties,
            children: Vec::new(),
        };
        match self.root().child(Category::Integrator) {
            Some(id) => self.objects[id.index()] = object,
            None => {
                self.objects.push(object);
                let id = ObjectId(self.objects.len() as u32 - 1);
                self.objects[root.index()].children.push(Child {
                    name: None,
                    object: id,
                    category: Category::Integrator,
                    location: None,
                });
            }
        }
        Ok(())
    }
}
