//! Mitsuba 3 XML into a [`Draft`]: elements, `$name` substitution, ids and references,
//! includes, defaults, aliases and search paths. Values are parsed here; whether a plugin
//! accepts them is [`validate`](crate::validate)'s job.
//!
//! Errors about one element are reported and loading goes on with the next element; errors
//! about a whole file (unreadable, not XML, wrong version, a broken include) stop it.

mod source;
mod transform;
mod values;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use roxmltree::{Document, Node};

use crate::builder::{Draft, Entry};
use crate::definitions::{Definitions, Substitution};
use crate::desc::{Category, ObjectId, SceneDesc};
use crate::error::{ErrorSink, Location, SceneError};
use crate::schema::Schema;
use crate::value::Value;
use source::SourceFile;
use values::{parse_boolean, parse_float, parse_integer, parse_one_or_three, tokens};

/// Deeper element nesting is refused (real scenes nest a handful of levels).
const MAX_DEPTH: usize = 64;

const ROOT: ObjectId = ObjectId(0);

/// Loads the scene file at `path`; `text` is its content when the caller already has it.
pub(crate) fn load(
    path: &Path,
    text: Option<&str>,
    definitions: &Definitions,
    schema: &Schema,
) -> Result<SceneDesc, Vec<SceneError>> {
    let path: Arc<Path> = path.into();
    let mut loader = Loader {
        draft: Draft::new(None),
        substitution: Substitution::new(definitions),
        errors: ErrorSink::default(),
        include_stack: Vec::new(),
        ids: HashMap::new(),
        pending: vec![Vec::new()],
    };
    let base_dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    loader.draft.search_dirs.push(base_dir.to_owned());
    let loaded = match text {
        Some(text) => Ok(text.to_owned()),
        None => loader.read(&path, None, ROOT),
    };
    let parsed = loaded.and_then(|text| loader.main_file(SourceFile::new(path.clone(), text)));
    let Loader { mut draft, substitution, mut errors, pending, ids, .. } = loader;
    if draft.files.is_empty() {
        draft.files.push(path);
    }
    resolve_references(&mut draft, pending, &ids, parsed.is_ok().then_some(&mut errors));
    if parsed.is_err() {
        // A partly read scene is not validated: its objects would look incomplete.
        let paths = crate::validate::element_paths(&draft);
        return Err(errors.finish(|id| paths.get(id.index()).cloned(), &draft.files));
    }
    draft.unused_definitions = substitution.unused_caller_definitions();
    crate::validate::finish(draft, schema, errors)
}

/// A fatal error, already reported: loading stops.
struct Stop;

/// An entry whose `<ref>` is resolved once every id is known (references may come first).
enum Pending {
    Ready(Entry),
    Reference { name: Option<String>, id: String, element: Location, id_location: Location },
}

/// An attribute value after `$name` substitution.
struct Attr {
    value: String,
    location: Location,
}

/// The attributes of one element, and whether they were all as expected.
struct Attrs {
    list: Vec<(String, Attr)>,
    ok: bool,
}

impl Attrs {
    fn get(&self, name: &str) -> Option<&Attr> {
        self.list.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
}

struct Loader<'d> {
    draft: Draft,
    substitution: Substitution<'d>,
    errors: ErrorSink,
    /// The files being read, outermost first, canonical (to find include cycles) and as shown.
    include_stack: Vec<(PathBuf, Arc<Path>)>,
    ids: HashMap<String, (ObjectId, Location)>,
    /// Per object, its entries in document order.
    pending: Vec<Vec<Pending>>,
}

impl Loader<'_> {
    fn error(&mut self, object: ObjectId, location: Location, message: impl Into<String>) {
        self.errors.push(Some(object), SceneError::new(Some(location), message));
    }

    fn error_with_hint(&mut self, object: ObjectId, location: Location, message: String, hint: String) {
        self.errors.push(Some(object), SceneError::new(Some(location), message).with_hint(hint));
    }

    /// Reads a file; `at` is the `<include>` asking for it.
    fn read(&mut self, path: &Path, at: Option<Location>, object: ObjectId) -> Result<String, Stop> {
        let bytes = std::fs::read(path).map_err(|e| {
            let message = format!("cannot read scene file \"{}\": {e}", path.display());
            self.errors.push(at.is_some().then_some(object), SceneError::new(at, message));
            Stop
        })?;
        String::from_utf8(bytes).map_err(|e| {
            let valid = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(&e.into_bytes()[..valid]).into_owned();
            let location = SourceFile::new(path.into(), text).location(valid);
            self.errors.push(None, SceneError::new(Some(location), "the file is not valid UTF-8"));
            Stop
        })
    }

    fn parse<'f>(&mut self, file: &'f SourceFile) -> Result<Document<'f>, Stop> {
        self.draft.files.push(file.path.clone());
        Document::parse(&file.text).map_err(|e| {
            let pos = e.pos();
            // roxmltree ends its messages with the position, which the location already gives.
            let message = e.to_string();
            let suffix = format!(" at {}:{}", pos.row, pos.col);
            let message = message.strip_suffix(&suffix).unwrap_or(&message);
            let location = Location { file: file.path.clone(), line: pos.row, column: pos.col };
            self.errors.push(None, SceneError::new(Some(location), format!("invalid XML: {message}")));
            Stop
        })
    }

    fn main_file(&mut self, file: SourceFile) -> Result<(), Stop> {
        let canonical = std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.to_path_buf());
        self.include_stack.push((canonical, file.path.clone()));
        let doc = self.parse(&file)?;
        let root = doc.root_element();
        let location = file.location(root.range().start);
        if root.tag_name().name() != "scene" || root.tag_name().namespace().is_some() {
            let message = format!("the root element must be <scene>, found <{}>", root.tag_name().name());
            self.errors.push(None, SceneError::new(Some(location), message));
            return Err(Stop);
        }
        self.draft.objects[0].location = Some(location);
        self.check_version(&file, root, ROOT)?;
        self.attributes(&file, root, &[("version", true)], ROOT);
        self.contents(&file, root, ROOT, 1)
    }

    /// `version="3.x.y"`: drs reads Mitsuba 3 scenes only.
    fn check_version(&mut self, file: &SourceFile, root: Node, object: ObjectId) -> Result<(), Stop> {
        let Some(attr) = root.attribute_node("version") else {
            let message = format!("<{}> has no \"version\" attribute", root.tag_name().name());
            self.error_with_hint(object, file.location(root.range().start), message, "write version=\"3.0.0\"".into());
            return Err(Stop);
        };
        let version = attr.value();
        let location = file.location(attr.range_value().start);
        let parts: Vec<Option<u32>> = version.split('.').map(|p| p.parse().ok()).collect();
        if parts.len() > 3 || parts.iter().any(Option::is_none) {
            self.error(object, location, format!("invalid version \"{version}\""));
            return Err(Stop);
        }
        if parts[0] != Some(3) {
            let message = format!("unsupported scene version \"{version}\"");
            self.error_with_hint(object, location, message, "drs reads Mitsuba 3 scenes (version 3.x.y)".into());
            return Err(Stop);
        }
        Ok(())
    }

    /// Checks an element's attributes against `spec` (`(name, required)`) and substitutes
    /// `$name` parameters in their values.
    fn attributes(&mut self, file: &SourceFile, node: Node, spec: &[(&str, bool)], object: ObjectId) -> Attrs {
        let tag = node.tag_name().name();
        let mut attrs = Attrs { list: Vec::new(), ok: true };
        for attr in node.attributes() {
            let start = attr.range_value().start;
            let location = file.location(start);
            if attr.namespace().is_some() || !spec.iter().any(|(n, _)| *n == attr.name()) {
                let expected: Vec<&str> = spec.iter().map(|(n, _)| *n).collect();
                let hint = match expected.is_empty() {
                    true => format!("<{tag}> takes no attributes"),
                    false => format!("expected: {}", expected.join(", ")),
                };
                let message = format!("unexpected attribute \"{}\" in <{tag}>", attr.name());
                self.error_with_hint(object, file.location(attr.range().start), message, hint);
                attrs.ok = false;
                continue;
            }
            match self.substitution.apply(attr.value()) {
                Ok(value) => attrs.list.push((attr.name().to_owned(), Attr { value, location })),
                Err((message, offset)) => {
                    // Point at the `$` itself when the value has no entity references.
                    let raw = &file.text[attr.range_value()];
                    let location = if raw == attr.value() { file.location(start + offset) } else { location };
                    self.error(object, location, message);
                    attrs.ok = false;
                }
            }
        }
        for (name, required) in spec {
            if *required && node.attribute(*name).is_none() {
                let message = format!("missing attribute \"{name}\" in <{tag}>");
                self.error(object, file.location(node.range().start), message);
                attrs.ok = false;
            }
        }
        attrs
    }

    /// The child elements of an object (or of the root), in order.
    fn contents(&mut self, file: &SourceFile, node: Node, object: ObjectId, depth: usize) -> Result<(), Stop> {
        if depth > MAX_DEPTH {
            let message = format!("elements are nested more than {MAX_DEPTH} levels deep");
            self.error(object, file.location(node.range().start), message);
            return Err(Stop);
        }
        for child in node.children() {
            if child.is_element() {
                self.element(file, child, object, depth)?;
            } else if child.is_text() && !child.text().unwrap_or("").trim().is_empty() {
                self.unexpected_text(file, child, object);
            }
        }
        Ok(())
    }

    fn unexpected_text(&mut self, file: &SourceFile, text: Node, object: ObjectId) {
        let raw = text.text().unwrap_or("");
        let skipped = raw.len() - raw.trim_start().len();
        let location = match file.text.get(text.range()) == Some(raw) {
            true => file.location(text.range().start + skipped),
            false => file.location(text.range().start),
        };
        self.error(object, location, "unexpected text");
    }

    fn element(&mut self, file: &SourceFile, node: Node, parent: ObjectId, depth: usize) -> Result<(), Stop> {
        let tag = node.tag_name().name();
        let location = file.location(node.range().start);
        if node.tag_name().namespace().is_some() {
            self.error(parent, location, format!("unknown element <{}>", node.tag_name().name()));
            return Ok(());
        }
        match tag {
            "scene" => self.error(parent, location, "<scene> can only be the root element"),
            "spectrum" if node.attribute("type").is_some() => {
                // A spectrum plugin (`<spectrum type="d65"/>`) is a texture object in Mitsuba 3.
                self.object(file, node, parent, Category::Texture, None, depth)?;
            }
            "float" | "integer" | "boolean" | "string" | "rgb" | "spectrum" | "point" | "vector" | "transform" => {
                self.property(file, node, parent)
            }
            "ref" => self.reference(file, node, parent),
            "include" => self.include(file, node, parent, depth)?,
            "default" => self.default(file, node, parent),
            "alias" => self.alias(file, node, parent),
            "path" => self.search_path(file, node, parent),
            "translate" | "rotate" | "scale" | "matrix" | "lookat" => {
                self.error(parent, location, format!("<{tag}> can only appear inside a <transform>"))
            }
            "volume" => self.error_with_hint(
                parent,
                location,
                "unsupported element <volume>".into(),
                "grid volumes are not supported".into(),
            ),
            _ => match Category::from_tag(tag) {
                Some(category) => self.object(file, node, parent, category, None, depth)?,
                None => self.error(parent, location, format!("unknown element <{tag}>")),
            },
        }
        Ok(())
    }

    /// An object element. `include_name` is `Some` for the root of an included file, which
    /// carries a version and takes its parameter name from the `<include>`.
    fn object(
        &mut self,
        file: &SourceFile,
        node: Node,
        parent: ObjectId,
        category: Category,
        include_name: Option<Option<String>>,
        depth: usize,
    ) -> Result<(), Stop> {
        let location = file.location(node.range().start);
        let spec: &[(&str, bool)] = match include_name {
            None => &[("type", true), ("id", false), ("name", false)],
            Some(_) => &[("version", true), ("type", true), ("id", false)],
        };
        let attrs = self.attributes(file, node, spec, parent);
        let plugin = attrs.get("type").map(|a| a.value.clone());
        let object = self.draft.add_object(parent, category, plugin, Some(location.clone()));
        self.pending.push(Vec::new());
        let name = match include_name {
            Some(name) => name,
            None => attrs.get("name").map(|a| a.value.clone()),
        };
        self.pending[parent.index()].push(Pending::Ready(Entry {
            name,
            value: Value::Object(object),
            location: Some(location),
        }));
        if let Some(id) = attrs.get("id") {
            self.declare_id(object, id);
        }
        self.contents(file, node, object, depth + 1)
    }

    fn declare_id(&mut self, object: ObjectId, id: &Attr) {
        if id.value.is_empty() {
            self.error(object, id.location.clone(), "empty id");
        } else if let Some((_, first)) = self.ids.get(&id.value) {
            let message = format!("duplicate id \"{}\"", id.value);
            let hint = format!("first declared at {first}");
            self.error_with_hint(object, id.location.clone(), message, hint);
        } else {
            self.ids.insert(id.value.clone(), (object, id.location.clone()));
            self.draft.objects[object.index()].id = Some(id.value.clone());
        }
    }

    /// `<float name value>` and the other property elements.
    fn property(&mut self, file: &SourceFile, node: Node, object: ObjectId) {
        let location = file.location(node.range().start);
        let parsed = self.property_value(file, node, object);
        let name = node.attribute("name");
        match (parsed, name) {
            (Some((name, value)), _) => {
                let entry = Entry { name: Some(name), value, location: Some(location) };
                self.pending[object.index()].push(Pending::Ready(entry));
            }
            // Reported already; the parameter is not "missing" as well.
            (None, Some(name)) => self.draft.objects[object.index()].malformed.push(name.to_owned()),
            (None, None) => {}
        }
    }

    fn property_value(&mut self, file: &SourceFile, node: Node, object: ObjectId) -> Option<(String, Value)> {
        let tag = node.tag_name().name();
        if tag == "transform" {
            let attrs = self.attributes(file, node, &[("name", true)], object);
            let transform = self.transform(file, node, object)?;
            let name = attrs.get("name")?.value.clone();
            return attrs.ok.then_some((name, Value::Transform(transform)));
        }
        let spec: &[(&str, bool)] = match tag {
            "point" | "vector" => &[("name", true), ("value", false), ("x", false), ("y", false), ("z", false)],
            "spectrum" => &[("name", true), ("value", false), ("filename", false)],
            _ => &[("name", true), ("value", true)],
        };
        let attrs = self.attributes(file, node, spec, object);
        let leaf = self.no_children(file, node, object);
        if !attrs.ok || !leaf {
            return None;
        }
        let name = attrs.get("name")?.value.clone();
        let parsed = match tag {
            "point" | "vector" => {
                let xyz = self.xyz(file, node, &attrs, None, object)?;
                Ok(if tag == "point" { Value::Point(xyz) } else { Value::Vector(xyz) })
            }
            "spectrum" => return self.spectrum(file, node, &attrs, object).map(|v| (name, v)),
            _ => {
                let text = &attrs.get("value")?.value;
                match tag {
                    "float" => parse_float(text).map(Value::Float),
                    "integer" => parse_integer(text).map(Value::Integer),
                    "boolean" => parse_boolean(text).map(Value::Boolean),
                    "rgb" => parse_one_or_three(text).map(Value::Rgb),
                    _ => Ok(Value::String(text.clone())),
                }
            }
        };
        match parsed {
            Ok(value) => Some((name, value)),
            Err(message) => {
                let location =
                    attrs.get("value").map_or_else(|| file.location(node.range().start), |a| a.location.clone());
                self.error(object, location, message);
                None
            }
        }
    }

    /// Only a uniform `<spectrum value="0.5"/>`: drs renders in RGB.
    fn spectrum(&mut self, file: &SourceFile, node: Node, attrs: &Attrs, object: ObjectId) -> Option<Value> {
        let location = file.location(node.range().start);
        match (attrs.get("value"), attrs.get("filename")) {
            (Some(value), None) if value.value.contains(':') => {
                let message = "spectra given as wavelength:value pairs are not supported".to_owned();
                let hint = "use <rgb> or a single <spectrum value>".to_owned();
                self.error_with_hint(object, value.location.clone(), message, hint);
                None
            }
            (Some(value), None) => match tokens(&value.value).as_slice() {
                [single] => match parse_float(single) {
                    Ok(x) => Some(Value::Spectrum(x)),
                    Err(message) => {
                        self.error(object, value.location.clone(), message);
                        None
                    }
                },
                _ => {
                    let message = format!("expected a single value in <spectrum>, found \"{}\"", value.value);
                    self.error(object, value.location.clone(), message);
                    None
                }
            },
            (None, Some(filename)) => {
                let message = "spectra loaded from files are not supported".to_owned();
                let hint = "use <rgb> or a single <spectrum value>".to_owned();
                self.error_with_hint(object, filename.location.clone(), message, hint);
                None
            }
            _ => {
                self.error(object, location, "<spectrum> needs either \"value\" or \"filename\"");
                None
            }
        }
    }

    /// Three components from `value` (one number or three) or from `x`, `y`, `z`; a missing
    /// component takes `default`, or is an error without one.
    fn xyz(
        &mut self,
        file: &SourceFile,
        node: Node,
        attrs: &Attrs,
        default: Option<f64>,
        object: ObjectId,
    ) -> Option<[f64; 3]> {
        let components = ["x", "y", "z"].map(|c| attrs.get(c));
        if let Some(value) = attrs.get("value") {
            if components.iter().any(Option::is_some) {
                let message = format!("<{}> cannot mix \"value\" with \"x\", \"y\", \"z\"", node.tag_name().name());
                self.error(object, file.location(node.range().start), message);
                return None;
            }
            return parse_one_or_three(&value.value).map_err(|m| self.error(object, value.location.clone(), m)).ok();
        }
        let mut out = [0.0; 3];
        let mut ok = true;
        for ((o, attr), axis) in out.iter_mut().zip(components).zip(["x", "y", "z"]) {
            match (attr, default) {
                (Some(attr), _) => match parse_float(&attr.value) {
                    Ok(x) => *o = x,
                    Err(message) => {
                        self.error(object, attr.location.clone(), message);
                        ok = false;
                    }
                },
                (None, Some(d)) => *o = d,
                (None, None) => {
                    let message = format!("missing attribute \"{axis}\" in <{}>", node.tag_name().name());
                    let hint = "give \"value\" or all of \"x\", \"y\", \"z\"".to_owned();
                    self.error_with_hint(object, file.location(node.range().start), message, hint);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Property elements hold no elements and no text.
    fn no_children(&mut self, file: &SourceFile, node: Node, object: ObjectId) -> bool {
        let mut ok = true;
        for child in node.children() {
            if child.is_element() {
                let message = format!("<{}> cannot contain <{}>", node.tag_name().name(), child.tag_name().name());
                self.error(object, file.location(child.range().start), message);
                ok = false;
            } else if child.is_text() && !child.text().unwrap_or("").trim().is_empty() {
                self.unexpected_text(file, child, object);
                ok = false;
            }
        }
        ok
    }

    /// `<ref id=".."/>` or `<ref name=".." id=".."/>`: resolved at the end.
    fn reference(&mut self, file: &SourceFile, node: Node, object: ObjectId) {
        let attrs = self.attributes(file, node, &[("id", true), ("name", false)], object);
        let leaf = self.no_children(file, node, object);
        let name = attrs.get("name").map(|a| a.value.clone());
        match attrs.get("id") {
            Some(id) if attrs.ok && leaf => {
                let element = file.location(node.range().start);
                let reference =
                    Pending::Reference { name, id: id.value.clone(), element, id_location: id.location.clone() };
                self.pending[object.index()].push(reference);
            }
            _ => self.draft.objects[object.index()].malformed.extend(name),
        }
    }

    /// `<default name value>`: a value for `$name` unless the caller gave one.
    fn default(&mut self, file: &SourceFile, node: Node, object: ObjectId) {
        let attrs = self.attributes(file, node, &[("name", true), ("value", true)], object);
        let leaf = self.no_children(file, node, object);
        let (Some(name), Some(value)) = (attrs.get("name"), attrs.get("value")) else { return };
        if !attrs.ok || !leaf {
            return;
        }
        if name.value.is_empty() || !name.value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            let message = format!("\"{}\" is not a parameter name (letters, digits and _)", name.value);
            self.error(object, name.location.clone(), message);
            return;
        }
        self.substitution.add_default(&name.value, &value.value);
    }

    /// `<alias id="a" as="b"/>`: `b` names the object declared (earlier) as `a`.
    fn alias(&mut self, file: &SourceFile, node: Node, object: ObjectId) {
        let attrs = self.attributes(file, node, &[("id", true), ("as", true)], object);
        let leaf = self.no_children(file, node, object);
        let (Some(id), Some(alias)) = (attrs.get("id"), attrs.get("as")) else { return };
        if !attrs.ok || !leaf {
            return;
        }
        let Some(&(target, _)) = self.ids.get(&id.value) else {
            self.error(object, id.location.clone(), format!("no object has the id \"{}\" (yet)", id.value));
            return;
        };
        if let Some((_, first)) = self.ids.get(&alias.value) {
            let message = format!("duplicate id \"{}\"", alias.value);
            self.error_with_hint(object, alias.location.clone(), message, format!("first declared at {first}"));
            return;
        }
        self.ids.insert(alias.value.clone(), (target, alias.location.clone()));
        self.draft.aliases.push((alias.value.clone(), target));
    }

    /// `<path value="dir"/>` at the top level: one more directory to find files in, searched
    /// before the earlier ones.
    fn search_path(&mut self, file: &SourceFile, node: Node, object: ObjectId) {
        let attrs = self.attributes(file, node, &[("value", true)], object);
        let leaf = self.no_children(file, node, object);
        let Some(value) = attrs.get("value") else { return };
        if !attrs.ok || !leaf {
            return;
        }
        if object != ROOT {
            self.error(object, file.location(node.range().start), "<path> can only appear at the top level");
            return;
        }
        let dir = file.path.parent().unwrap_or(Path::new("")).join(&value.value);
        if !dir.is_dir() {
            self.error(object, value.location.clone(), format!("directory \"{}\" not found", dir.display()));
            return;
        }
        self.draft.search_dirs.insert(0, dir);
    }

    /// `<include filename=".."/>`: the file's `<scene>` children join `parent`, or its root
    /// object becomes a child of `parent`.
    fn include(&mut self, file: &SourceFile, node: Node, parent: ObjectId, depth: usize) -> Result<(), Stop> {
        let attrs = self.attributes(file, node, &[("filename", true), ("name", false)], parent);
        let leaf = self.no_children(file, node, parent);
        let Some(filename) = attrs.get("filename") else { return Ok(()) };
        if !attrs.ok || !leaf {
            return Ok(());
        }
        let name = attrs.get("name").map(|a| a.value.clone());
        let own_dir = file.path.parent().unwrap_or(Path::new(""));
        let candidates: Vec<PathBuf> = std::iter::once(own_dir.join(&filename.value))
            .chain(self.draft.search_dirs.iter().map(|d| d.join(&filename.value)))
            .collect();
        let Some(path) = candidates.into_iter().find(|c| c.is_file()) else {
            let message = format!("included file \"{}\" not found", filename.value);
            self.error(parent, filename.location.clone(), message);
            return Err(Stop);
        };
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let path: Arc<Path> = path.into();
        if let Some(start) = self.include_stack.iter().position(|(c, _)| *c == canonical) {
            let chain: Vec<String> =
                self.include_stack[start..].iter().map(|(_, shown)| shown.display().to_string()).collect();
            let message = format!("include cycle: {} -> {}", chain.join(" -> "), path.display());
            self.error(parent, filename.location.clone(), message);
            return Err(Stop);
        }
        let text = self.read(&path, Some(filename.location.clone()), parent)?;
        self.include_stack.push((canonical, path.clone()));
        let included = SourceFile::new(path, text);
        let result = self.included_file(&included, parent, name, filename.location.clone(), depth);
        self.include_stack.pop();
        result
    }

    fn included_file(
        &mut self,
        file: &SourceFile,
        parent: ObjectId,
        name: Option<String>,
        at: Location,
        depth: usize,
    ) -> Result<(), Stop> {
        let doc = self.parse(file)?;
        let root = doc.root_element();
        let tag = root.tag_name().name();
        self.check_version(file, root, parent)?;
        if tag == "scene" {
            if name.is_some() {
                let message = "\"name\" in <include> needs a file whose root is an object, not a <scene>";
                self.error(parent, at, message);
            }
            self.attributes(file, root, &[("version", true)], parent);
            return self.contents(file, root, parent, depth + 1);
        }
        match Category::from_tag(tag).filter(|c| *c != Category::Scene) {
            Some(category) => self.object(file, root, parent, category, Some(name), depth + 1),
            None => {
                let message = format!("an included file's root must be <scene> or an object, found <{tag}>");
                self.error(parent, file.location(root.range().start), message);
                Err(Stop)
            }
        }
    }
}

/// Puts every object's entries in place, now that all ids are known. Without `errors` (the
/// file was not read to the end) unknown ids are not reported: they may be declared later.
fn resolve_references(
    draft: &mut Draft,
    pending: Vec<Vec<Pending>>,
    ids: &HashMap<String, (ObjectId, Location)>,
    mut errors: Option<&mut ErrorSink>,
) {
    for (index, entries) in pending.into_iter().enumerate() {
        for entry in entries {
            let entry = match entry {
                Pending::Ready(entry) => entry,
                Pending::Reference { name, id, element, id_location } => match ids.get(&id) {
                    Some((target, _)) => Entry { name, value: Value::Object(*target), location: Some(element) },
                    None => {
                        if let Some(errors) = errors.as_deref_mut() {
                            let message = format!("no object has the id \"{id}\"");
                            errors.push(Some(ObjectId(index as u32)), SceneError::new(Some(id_location), message));
                        }
                        draft.objects[index].malformed.extend(name);
                        continue;
                    }
                },
            };
            draft.objects[index].entries.push(entry);
        }
    }
}
