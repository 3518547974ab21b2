//! The plugin library: the stdlib's plugins and the user's `.drs` plugins, checked and
//! lowered once, with the scene-file schema of each plugin type.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use drs_lower::layout::{HostValue, Layout};
use drs_lower::{lower_program, LoweredProgram, ParamLayout};
use drs_scene::{Category, ParamKind, ParamSchema, PluginSchema, Range, Schema, Value};
use drs_sema::program::PluginId;
use drs_sema::types::PluginKind;
use drs_sema::{LoadOptions, RootSource};

use crate::materials;

/// The stdlib directories of plugins (with the modules their plugins share).
const STDLIB_PLUGIN_DIRS: [&str; 4] = ["bsdfs", "emitters", "textures", "integrators"];

/// The emitter param the runtime fills with the index of the emitter's shape.
pub const SHAPE_PARAM: &str = "shape";

/// The `bool` param that keeps the runtime from sRGB-decoding the plugin's image files
/// (Mitsuba's `raw`).
pub const RAW_PARAM: &str = "raw";

/// The scene parameter naming the image file of `Tensor` param `param`: `filename` for `data`
/// (Mitsuba's convention for bitmaps), else the param's own name.
pub fn tensor_file_param(param: &str) -> &str {
    if param == "data" {
        "filename"
    } else {
        param
    }
}

/// Plugin-reference params that a scene may leave out, as (kind, plugin, param): they then
/// hold the null handle, which the plugin recognises by its empty `flags()`. The language
/// cannot declare an optional reference (a reference param has no default), so the runtime
/// lists them here. Mitsuba's `twosided` takes one BSDF for both sides or one per side; its
/// `aov` integrator renders AOVs alone or next to a nested integrator's image.
pub const OPTIONAL_REFERENCES: [(PluginKind, &str, &str); 2] =
    [(PluginKind::Bsdf, "twosided", "brdf_1"), (PluginKind::Integrator, "aov", "integrator")];

/// Where plugins come from.
#[derive(Clone, Debug, Default)]
pub struct LibraryOptions {
    /// The standard library; `None` is the bundled one (or `$DRS_STDLIB`).
    pub stdlib_dir: Option<PathBuf>,
    /// Directories of user `.drs` plugins; a user plugin overrides a stdlib plugin of the same
    /// kind and name.
    pub plugin_dirs: Vec<PathBuf>,
}

/// A library that could not be built: rendered diagnostics.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LibraryError(pub String);

/// Checked and lowered plugins, by kind and scene-file name.
pub struct PluginLibrary {
    program: LoweredProgram,
    types: HashMap<(PluginKind, String), PluginId>,
    schema: Schema,
}

impl PluginLibrary {
    pub fn load(options: &LibraryOptions) -> Result<PluginLibrary, LibraryError> {
        let stdlib_dir = options
            .stdlib_dir
            .clone()
            .or_else(|| std::env::var_os("DRS_STDLIB").map(PathBuf::from))
            .unwrap_or_else(drs_sema::bundled_stdlib_dir);
        if !stdlib_dir.is_dir() {
            return Err(LibraryError(format!(
                "the standard library directory {} does not exist",
                stdlib_dir.display()
            )));
        }
        let mut imports = String::from("// The stdlib plugins a scene may use.\n");
        for dir in STDLIB_PLUGIN_DIRS {
            for file in drs_files(&stdlib_dir.join(dir))? {
                let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                imports.push_str(&format!("import {dir}::{stem};\n"));
            }
        }
        let mut roots = vec![RootSource { name: "<stdlib plugins>".into(), path: None, text: imports }];
        for dir in &options.plugin_dirs {
            for path in drs_files(dir)? {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| LibraryError(format!("{}: cannot read: {e}", path.display())))?;
                roots.push(RootSource { name: path.display().to_string(), path: Some(path), text });
            }
        }
        let checked = drs_sema::check(roots, &LoadOptions { stdlib_dir: Some(stdlib_dir) });
        if !checked.diagnostics.is_empty() {
            return Err(LibraryError(drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false)));
        }
        let lowered = lower_program(&checked.program);
        let program = LoweredProgram { sources: checked.sources, program: checked.program, lowered };

        // User plugins (root modules) win over stdlib ones of the same kind and name.
        let mut types: HashMap<(PluginKind, String), PluginId> = HashMap::new();
        for (p, def) in program.program.plugins.iter().enumerate() {
            let key = (def.kind, def.name.to_lowercase());
            let is_stdlib = program.program.modules[def.module].is_stdlib;
            match types.get(&key) {
                Some(&q) if !program.program.modules[program.program.plugins[q].module].is_stdlib || is_stdlib => {}
                _ => {
                    types.insert(key, p);
                }
            }
        }
        let mut schema = Schema::builtin();
        let mut keys: Vec<_> = types.iter().collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        for ((kind, name), &p) in keys {
            let category = category_of(*kind);
            if schema.get(category, name).is_some() {
                // Emitters keep their built-in schemas (with Mitsuba's `to_world` forms); the
                // scene converts their values into the plugin's params.
                continue;
            }
            let plugin_schema = plugin_schema(category, name, &program.lowered.plugins[p].params, *kind);
            schema.register(plugin_schema).map_err(|e| LibraryError(e.to_string()))?;
        }
        Ok(PluginLibrary { program, types, schema })
    }

    pub fn program(&self) -> &LoweredProgram {
        &self.program
    }

    /// The schema scenes are validated against: the native plugins and every library plugin.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The plugin type of `kind` named `name` in scene files (the `.drs` name in lower case).
    pub fn plugin(&self, kind: PluginKind, name: &str) -> Option<PluginId> {
        self.types.get(&(kind, name.to_owned())).copied()
    }
}

fn drs_files(dir: &Path) -> Result<Vec<PathBuf>, LibraryError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.exists() => return Ok(Vec::new()),
        Err(e) => return Err(LibraryError(format!("{}: cannot read the directory: {e}", dir.display()))),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "drs"))
        .collect();
    files.sort();
    Ok(files)
}

pub fn category_of(kind: PluginKind) -> Category {
    match kind {
        PluginKind::Bsdf => Category::Bsdf,
        PluginKind::Emitter => Category::Emitter,
        PluginKind::Texture => Category::Texture,
        PluginKind::Medium => Category::Medium,
        PluginKind::Phase => Category::Phase,
        PluginKind::Integrator => Category::Integrator,
    }
}

/// How a param of this layout is written in a scene file, if it can be.
pub fn param_kind(layout: &Layout) -> Option<ParamKind> {
    use drs_ir::Ty;
    Some(match layout {
        Layout::Scalar(Ty::F32) => ParamKind::Float,
        Layout::Scalar(Ty::I32 | Ty::U32) => ParamKind::Integer,
        Layout::Scalar(Ty::Bool) => ParamKind::Boolean,
        Layout::Vector(Ty::F32, 3) => ParamKind::Vector,
        Layout::Color => ParamKind::Color,
        Layout::Matrix(3 | 4) => ParamKind::Transform,
        Layout::Tensor => ParamKind::Filename,
        Layout::Handle(name) => match name.as_str() {
            "Texture<Color>" => ParamKind::ColorTexture,
            "Texture<f32>" => ParamKind::FloatTexture,
            "Bsdf" => ParamKind::Object(Category::Bsdf),
            "Emitter" => ParamKind::Object(Category::Emitter),
            "Medium" => ParamKind::Object(Category::Medium),
            "PhaseFunction" => ParamKind::Object(Category::Phase),
            "Integrator" => ParamKind::Object(Category::Integrator),
            _ => return None,
        },
        _ => return None,
    })
}

/// The schema of a `.drs` plugin: one scene parameter per param that a scene file can give
/// (with the param's default); params it cannot give keep their defaults. Plugin-reference
/// params also take nested objects of their category without a matching name (one child slot
/// per category, as many as there are such params): Mitsuba passes the BSDFs of `twosided`,
/// `blendbsdf` and `mask` this way, and the scene fills the params in declaration order (and
/// so the texture params of [`NESTED_TEXTURES`]).
/// BSDFs also take Mitsuba's named constants (`materials.rs`): IOR names for `int_ior` and
/// `ext_ior`, and a `material` preset that gives the defaults of `eta` and `k`.
fn plugin_schema(category: Category, name: &str, params: &[ParamLayout], kind: PluginKind) -> PluginSchema {
    let mut schema = PluginSchema::new(category, name);
    let takes_material = materials::takes_material(kind, params);
    let mut slots: Vec<(Category, usize)> = Vec::new();
    for param in params {
        if let Some(c) = child_category(kind, name, param) {
            match slots.iter_mut().find(|(s, _)| *s == c) {
                Some((_, n)) => *n += 1,
                None => slots.push((c, 1)),
            }
        }
    }
    for (c, n) in slots {
        schema = schema.slot(c, Some(n));
    }
    for param in params {
        if (kind == PluginKind::Emitter && param.name == SHAPE_PARAM) || param.derived.is_some() {
            continue;
        }
        let Some(param_kind) = param_kind(&param.layout) else { continue };
        if !param.choices.is_empty() {
            schema = schema.param(choice_schema(param));
            continue;
        }
        let scene_name = if param.layout == Layout::Tensor { tensor_file_param(&param.name) } else { &param.name };
        let mut p = ParamSchema::new(scene_name, param_kind.clone());
        match (&param_kind, &param.layout) {
            (ParamKind::Integer, Layout::Scalar(drs_ir::Ty::I32)) => p = p.range(Range::i32()),
            (ParamKind::Integer, _) => p = p.range(Range::u32()),
            _ => {}
        }
        let is_vector = param_kind == ParamKind::Vector;
        let default = match takes_material && materials::MATERIAL_TARGETS.contains(&param.name.as_str()) {
            // Given by the `material` when the scene leaves it out.
            true => None,
            false => param.default.as_ref().and_then(|d| scene_value(d, is_vector)),
        };
        if materials::takes_ior_name(kind, param) {
            p = materials::with_ior_names(p);
        }
        p = match default {
            Some(value) => p.default(value),
            // A reference param may come from an unnamed nested object, matched when the scene
            // is built (which reports a missing one).
            None if param.default.is_none() && child_category(kind, name, param).is_none() => p.required(),
            None => p,
        };
        schema = schema.param(p);
    }
    if takes_material {
        schema = schema.param(materials::material_schema());
    }
    schema
}

/// A `@choice` param: a `<string>` with the words as choices, its default the word at the
/// default's position.
fn choice_schema(param: &ParamLayout) -> ParamSchema {
    let words: Vec<&str> = param.choices.iter().map(String::as_str).collect();
    let p = ParamSchema::new(param.name.clone(), ParamKind::String).choices(&words);
    let default_word = match param.default {
        Some(HostValue::U32(i)) => words.get(i as usize),
        _ => None,
    };
    // Without a default, or with one that is no position in the list (a constant the checker
    // could not evaluate), the scene must give the word.
    match default_word {
        Some(word) => p.default(Value::String(word.to_string())),
        None => p.required(),
    }
}

/// Texture params that take a nested texture of any name, as (kind, plugin, param): Mitsuba's
/// `bumpmap` takes its height field so.
pub const NESTED_TEXTURES: [(PluginKind, &str, &str); 1] = [(PluginKind::Bsdf, "bumpmap", "texture")];

/// The category of the nested objects without a matching name that fill `param` of the plugin
/// `kind` `name`: a plugin reference's, or `texture` for [`NESTED_TEXTURES`].
pub fn child_category(kind: PluginKind, name: &str, param: &ParamLayout) -> Option<Category> {
    match param_kind(&param.layout) {
        Some(ParamKind::Object(c)) => Some(c),
        _ if NESTED_TEXTURES.iter().any(|&(k, n, p)| k == kind && n == name && p == param.name) => {
            Some(Category::Texture)
        }
        _ => None,
    }
}

/// Whether `param` of the plugin `kind` `name` is in [`OPTIONAL_REFERENCES`].
pub fn is_optional_reference(kind: PluginKind, name: &str, param: &str) -> bool {
    OPTIONAL_REFERENCES.iter().any(|&(k, n, p)| k == kind && n == name && p == param)
}

/// A param default as a scene value (a `<vector>` or else an `<rgb>` for three floats).
fn scene_value(value: &HostValue, is_vector: bool) -> Option<Value> {
    Some(match value {
        HostValue::F32(x) => Value::Float(*x as f64),
        HostValue::I32(x) => Value::Integer(*x as i64),
        HostValue::U32(x) => Value::Integer(*x as i64),
        HostValue::Bool(b) => Value::Boolean(*b),
        HostValue::List(items) if items.len() == 3 => {
            let mut xyz = [0.0; 3];
            for (x, item) in xyz.iter_mut().zip(items) {
                let HostValue::F32(v) = item else { return None };
                *x = *v as f64;
            }
            if is_vector {
                Value::Vector(xyz)
            } else {
                Value::Rgb(xyz)
            }
        }
        _ => return None,
    })
}
