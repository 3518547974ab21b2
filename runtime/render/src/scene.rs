//! A renderable scene: a validated [`SceneDesc`] turned into geometry, plugin instances with
//! their parameter values, the camera, film and sampler.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use drs_film::{ReconstructionFilter, Sampler};
use drs_geometry::math::Vec3 as GVec3;
use drs_geometry::{Disk, Geometry, MeshOptions, Shape, Sphere, Transform};
use drs_ir::Ty;
use drs_lower::layout::{HostValue, Layout};
use drs_scene::{Category, Definitions, Location, Object, ObjectId, SceneDesc, SceneError, Value};
use drs_sema::program::{Derivation, FnId, PluginId};
use drs_sema::types::PluginKind;

use crate::aov::{parse_aovs, AovChannels, AOV_METHOD};
use crate::image_tensor::load_image_tensor;
use crate::kernel::Kernel;
use crate::library::{tensor_file_param, PluginLibrary, RAW_PARAM, SHAPE_PARAM};
use crate::link::{emitter_table, handle, LinkedTypes, EMITTER_TABLE, MAX_INSTANCES, NULL_HANDLE};
use crate::params::{ParamInfo, ParamStore, TensorBuffers};
use crate::sensor::{default_fov_degrees, FovAxis, PerspectiveCamera};

/// What the host functions of a kernel need: the geometry and which BSDF and emitter
/// instances belong to each shape.
pub struct SceneGeometry {
    pub geometry: Geometry,
    /// Per shape: its BSDF's and area emitter's handles ([`NULL_HANDLE`] if none).
    pub shape_bsdfs: Vec<u32>,
    pub shape_emitters: Vec<u32>,
    /// What a ray that hits nothing sees: the environment emitter's handle or [`NULL_HANDLE`].
    pub environment: u32,
}

/// The film as the scene file describes it.
#[derive(Clone, Debug)]
pub struct FilmDesc {
    pub width: u32,
    pub height: u32,
    pub filter: ReconstructionFilter,
    /// Where the film element is (the sensor, for Mitsuba's default film): errors found only
    /// when the film is allocated, such as a film too large for memory, are reported there.
    /// `None` for a scene built in code.
    pub location: Option<Location>,
    /// That element's path in the scene tree, e.g. `scene/sensor/film`.
    pub element_path: String,
}

impl FilmDesc {
    /// `message` as an error at the film's element.
    pub(crate) fn error(&self, message: impl Into<String>) -> SceneError {
        let mut e = SceneError::new(self.location.clone(), message);
        e.element_path = Some(self.element_path.clone());
        e
    }
}

type KernelKey = (drs_cranelift::Lanes, &'static str, crate::kernel::IntegratorKernel);

/// A scene ready to render.
pub struct Scene {
    pub(crate) library: Arc<PluginLibrary>,
    pub(crate) geometry: Arc<SceneGeometry>,
    pub(crate) types: LinkedTypes,
    /// How deep plugin instances nest in instances of their own kind (for the linker).
    pub(crate) nesting: usize,
    pub(crate) params: ParamStore,
    pub(crate) integrator: (PluginId, u32),
    /// The AOV channels of an integrator with `sample_aovs` (Mitsuba's `aov`).
    pub(crate) aovs: Option<AovChannels>,
    pub(crate) camera: PerspectiveCamera,
    pub(crate) film: FilmDesc,
    pub(crate) sampler: Sampler,
    /// The integrator's kernels by lanes, code generator and kind.
    pub(crate) kernels: Mutex<HashMap<KernelKey, Arc<Kernel>>>,
    /// The kernels of tabulated methods (`tabulate.rs`).
    pub(crate) table_kernels: Mutex<HashMap<FnId, Arc<Kernel>>>,
    /// Worker pools by requested thread count (0: rayon's default), kept between passes.
    pub(crate) pools: Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>,
}

impl Scene {
    /// Loads a Mitsuba 3 XML scene file (`-D` style overrides in `definitions`).
    pub fn load_file(
        path: impl AsRef<Path>,
        definitions: &Definitions,
        library: Arc<PluginLibrary>,
    ) -> Result<Scene, Vec<SceneError>> {
        let desc = drs_scene::load_file(path, definitions, library.schema())?;
        Scene::from_desc(&desc, library).map_err(|e| vec![e])
    }

    /// Loads scene text as if it were the file `virtual_path` (see [`drs_scene::load_str`]).
    pub fn load_str(
        text: &str,
        virtual_path: impl AsRef<Path>,
        definitions: &Definitions,
        library: Arc<PluginLibrary>,
    ) -> Result<Scene, Vec<SceneError>> {
        let desc = drs_scene::load_str(text, virtual_path, definitions, library.schema())?;
        Scene::from_desc(&desc, library).map_err(|e| vec![e])
    }

    /// Builds a scene from a validated description (from a file or [`drs_scene::SceneBuilder`]).
    /// Like [`load_file`](Self::load_file), with the scene's integrator replaced by one of type
    /// `integrator` with the properties `overrides` (see [`SceneDesc::replace_integrator`]),
    /// e.g. `prb` for gradients.
    pub fn load_file_with_integrator(
        path: impl AsRef<Path>,
        definitions: &Definitions,
        library: Arc<PluginLibrary>,
        integrator: &str,
        overrides: &[(&str, Value)],
    ) -> Result<Scene, Vec<SceneError>> {
        let mut desc = drs_scene::load_file(path, definitions, library.schema())?;
        desc.replace_integrator(integrator, overrides, library.schema()).map_err(|e| vec![e])?;
        Scene::from_desc(&desc, library).map_err(|e| vec![e])
    }

    pub fn from_desc(desc: &SceneDesc, library: Arc<PluginLibrary>) -> Result<Scene, SceneError> {
        SceneBuild::new(desc, &library).build(library.clone())
    }

    pub fn params(&self) -> &ParamStore {
        &self.params
    }

    /// Parameter values can change between renders; the kernel is not recompiled.
    pub fn params_mut(&mut self) -> &mut ParamStore {
        &mut self.params
    }

    pub fn film(&self) -> &FilmDesc {
        &self.film
    }

    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }

    pub fn geometry(&self) -> &SceneGeometry {
        &self.geometry
    }
}

fn error(object: &Object, message: impl Into<String>) -> SceneError {
    let mut e = SceneError::new(object.location().cloned(), message);
    e.element_path = Some(object.path().to_owned());
    e
}

struct SceneBuild<'a> {
    desc: &'a SceneDesc,
    library: &'a PluginLibrary,
    types: LinkedTypes,
    /// Instances created per plugin type.
    counts: HashMap<PluginId, u32>,
    params: ParamStore,
    /// Handles of objects already instantiated (referenced objects are shared).
    handles: HashMap<ObjectId, u32>,
    /// How deep each instantiated object nests objects of its own category.
    nesting: HashMap<ObjectId, usize>,
    /// The default BSDF of shapes without one, made on first use.
    default_bsdf: Option<u32>,
}

/// Where an instance's params get their values from besides its scene object.
struct InstanceContext {
    /// The shape an area emitter is attached to.
    shape: Option<u32>,
}

impl<'a> SceneBuild<'a> {
    fn new(desc: &'a SceneDesc, library: &'a PluginLibrary) -> Self {
        SceneBuild {
            desc,
            library,
            types: Vec::new(),
            counts: HashMap::new(),
            params: ParamStore::default(),
            handles: HashMap::new(),
            nesting: HashMap::new(),
            default_bsdf: None,
        }
    }

    fn build(mut self, library: Arc<PluginLibrary>) -> Result<Scene, SceneError> {
        let desc = self.desc;
        let root = desc.root();

        let mut shapes = Vec::new();
        let mut shape_bsdfs = Vec::new();
        let mut shape_emitters = Vec::new();
        let mut emitters = Vec::new();
        for (index, id) in root.children(Category::Shape).enumerate() {
            let object = &desc[id];
            shapes.push(build_shape(object)?);
            let bsdf = match object.child(Category::Bsdf) {
                Some(b) => self.instance(b, &key_of(desc, b, object_key(object, "shape", index), "bsdf"), None)?,
                None => self.default_bsdf()?,
            };
            shape_bsdfs.push(bsdf);
            let emitter = match object.child(Category::Emitter) {
                Some(e) => {
                    let key = key_of(desc, e, object_key(object, "shape", index), "emitter");
                    let h = self.instance(e, &key, Some(InstanceContext { shape: Some(index as u32) }))?;
                    emitters.push(h);
                    h
                }
                None => NULL_HANDLE,
            };
            shape_emitters.push(emitter);
        }

        let mut environment = NULL_HANDLE;
        for (index, id) in root.children(Category::Emitter).enumerate() {
            let object = &desc[id];
            let h = self.instance(id, &object_key(object, "emitter", index), Some(InstanceContext { shape: None }))?;
            if self.is_environment(object, h)? {
                if environment != NULL_HANDLE {
                    return Err(error(object, "a scene can have only one environment emitter"));
                }
                environment = h;
            }
            emitters.push(h);
        }

        let integrator = match root.child(Category::Integrator) {
            Some(id) => self.instance(id, &object_key(&desc[id], "integrator", 0), None)?,
            None => {
                let p = self.plugin(root, PluginKind::Integrator, "path")?;
                self.defaults_instance(p, "integrator")?
            }
        };
        let integrator_plugin = self.plugin_of_handle(PluginKind::Integrator, integrator);
        let aovs = match root.child(Category::Integrator) {
            Some(id) => self.aov_channels(&desc[id], integrator_plugin)?,
            None => None,
        };

        let sensor = root.child(Category::Sensor).ok_or_else(|| error(root, "the scene has no <sensor>"))?;
        let (camera, film, sampler) = build_sensor(desc, &desc[sensor])?;

        let geometry =
            Geometry::new(shapes).map_err(|e| error(root, format!("cannot build the scene geometry: {e}")))?;
        // Every emitter (area ones included) for emitter sampling, which kernels read.
        self.params.set_buffer(EMITTER_TABLE, emitter_table(&emitters, environment));
        Ok(Scene {
            library,
            geometry: Arc::new(SceneGeometry { geometry, shape_bsdfs, shape_emitters, environment }),
            nesting: self.nesting.values().copied().max().unwrap_or(0),
            types: self.types,
            params: self.params,
            integrator: (integrator_plugin, integrator & (MAX_INSTANCES - 1)),
            aovs,
            camera,
            film,
            sampler,
            kernels: Mutex::new(HashMap::new()),
            table_kernels: Mutex::new(HashMap::new()),
            pools: Mutex::new(HashMap::new()),
        })
    }

    /// The AOV channels of the scene's integrator: those of its `aovs` list when its plugin has
    /// `sample_aovs` (the schema of `aov` requires the list; an integrator without one renders
    /// through `sample`).
    fn aov_channels(&self, object: &Object, plugin: PluginId) -> Result<Option<AovChannels>, SceneError> {
        let has_method = self.library.program().program.plugins[plugin].methods.contains_key(AOV_METHOD);
        let Some(list) = object.string("aovs").filter(|_| has_method) else { return Ok(None) };
        parse_aovs(list).map(Some).map_err(|message| {
            let location = object.property("aovs").and_then(|p| p.location.clone());
            let mut e = SceneError::new(location.or_else(|| object.location().cloned()), message);
            e.element_path = Some(object.path().to_owned());
            e
        })
    }

    fn plugin(&self, object: &Object, kind: PluginKind, name: &str) -> Result<PluginId, SceneError> {
        self.library.plugin(kind, name).ok_or_else(|| {
            error(object, format!("no .drs plugin implements {} \"{name}\"", kind.keyword()))
                .with_hint("add one to the stdlib or to a --plugins directory")
        })
    }

    fn plugin_of_handle(&self, kind: PluginKind, h: u32) -> PluginId {
        let types = &self.types.iter().find(|(k, _)| *k == kind).expect("the handle's kind has types").1;
        types[(h >> crate::link::TAG_SHIFT) as usize]
    }

    /// A new instance of plugin `p`: its handle.
    fn new_instance(&mut self, object: &Object, p: PluginId) -> Result<(u32, u32), SceneError> {
        let kind = self.library.program().program.plugins[p].kind;
        let list = match self.types.iter().position(|(k, _)| *k == kind) {
            Some(i) => &mut self.types[i].1,
            None => {
                self.types.push((kind, Vec::new()));
                &mut self.types.last_mut().expect("just pushed").1
            }
        };
        let tag = match list.iter().position(|&q| q == p) {
            Some(t) => t,
            None => {
                list.push(p);
                list.len() - 1
            }
        } as u32;
        let count = self.counts.entry(p).or_insert(0);
        if *count >= MAX_INSTANCES {
            return Err(error(object, format!("more than {MAX_INSTANCES} instances of one plugin type")));
        }
        let instance = *count;
        *count += 1;
        Ok((handle(tag, instance), instance))
    }

    fn default_bsdf(&mut self) -> Result<u32, SceneError> {
        if let Some(h) = self.default_bsdf {
            return Ok(h);
        }
        let p = self.plugin(self.desc.root(), PluginKind::Bsdf, "diffuse")?;
        let h = self.defaults_instance(p, "default_bsdf")?;
        self.default_bsdf = Some(h);
        Ok(h)
    }

    /// An instance of `p` with every param at its default.
    fn defaults_instance(&mut self, p: PluginId, key: &str) -> Result<u32, SceneError> {
        let root = self.desc.root();
        let (h, instance) = self.new_instance(root, p)?;
        let layouts = self.library.program().lowered.plugins[p].params.clone();
        for param in &layouts {
            self.set_param(root, p, instance, param, None, key, None)?;
        }
        Ok(h)
    }

    /// The instance of scene object `id` (made once; references share it).
    fn instance(&mut self, id: ObjectId, key: &str, context: Option<InstanceContext>) -> Result<u32, SceneError> {
        if let Some(&h) = self.handles.get(&id) {
            return Ok(h);
        }
        let object = &self.desc[id];
        let kind = kind_of(object.category()).ok_or_else(|| error(object, "not a plugin object"))?;
        let p = self.plugin(object, kind, object.plugin())?;
        let (h, instance) = self.new_instance(object, p)?;
        let layouts = self.library.program().lowered.plugins[p].params.clone();
        // Nested objects without a param's name fill the reference params the scene does not
        // name, in declaration order (the schema gives such params child slots).
        let mut nested: Vec<(Category, ObjectId)> =
            object.all_children().iter().map(|c| (c.category, c.object)).collect();
        let mut depth = 0;
        let material_values = match crate::materials::takes_material(kind, &layouts) {
            true => crate::materials::material_values(object)?,
            false => Vec::new(),
        };
        for param in &layouts {
            let mut value = self
                .property_value(object, kind, &param.name)
                .or_else(|| material_values.iter().find(|(target, _)| *target == param.name).map(|(_, v)| v.clone()));
            let category = crate::library::child_category(kind, object.plugin(), param);
            if let (None, Some(category)) = (&value, category) {
                if let Some(i) = nested.iter().position(|(c, _)| *c == category) {
                    value = Some(Value::Object(nested.remove(i).1));
                } else if crate::library::is_optional_reference(kind, object.plugin(), &param.name) {
                    let buffers = self.buffer_names(param);
                    self.params.write(&buffers, instance, &[NULL_HANDLE]);
                    continue;
                }
            }
            let same_kind = match &value {
                Some(Value::Object(child)) if self.desc[*child].category() == object.category() => Some(*child),
                _ => None,
            };
            self.set_param(object, p, instance, param, value, key, context.as_ref())?;
            if let Some(child) = same_kind {
                depth = depth.max(1 + self.nesting.get(&child).copied().unwrap_or(0));
            }
        }
        if let Some((category, _)) = nested.first() {
            return Err(error(object, format!("too many nested <{category}> objects: each fills a parameter")));
        }
        for param in &layouts {
            if let Some(derivation) = &param.derived {
                self.set_derived_param(object, p, instance, param, derivation, key)?;
            }
        }
        self.handles.insert(id, h);
        self.nesting.insert(id, depth);
        Ok(h)
    }

    /// The scene value for param `name`, with the native emitters' alternative forms, the
    /// `srgb` texture's `color`, and derived defaults.
    fn property_value(&self, object: &Object, kind: PluginKind, name: &str) -> Option<Value> {
        if let Some(v) = object.value(name) {
            return Some(v.clone());
        }
        if (kind, object.plugin(), name) == (PluginKind::Texture, "srgb", "value") {
            return object.value("color").cloned();
        }
        if (kind, object.plugin(), name) == (PluginKind::Emitter, "spot", "beam_width") {
            // Mitsuba's default core: 3/4 of the cone.
            return Some(Value::Float(0.75 * object.float("cutoff_angle")?));
        }
        let to_world = object.transform("to_world")?;
        match (kind, object.plugin(), name) {
            (PluginKind::Emitter, "point", "position") => Some(Value::Point(to_world.transform_point([0.0; 3]))),
            (PluginKind::Emitter, "directional", "direction") => {
                Some(Value::Vector(to_world.transform_vector([0.0, 0.0, 1.0])))
            }
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn set_param(
        &mut self,
        object: &Object,
        p: PluginId,
        instance: u32,
        param: &drs_lower::ParamLayout,
        value: Option<Value>,
        key: &str,
        context: Option<&InstanceContext>,
    ) -> Result<(), SceneError> {
        let plugin = &self.library.program().lowered.plugins[p];
        let buffers = self.buffer_names(param);
        let param_key = format!("{key}.{}", param.name);
        let kind = plugin.kind;
        if kind == PluginKind::Emitter && param.name == SHAPE_PARAM && param.layout == Layout::Scalar(Ty::U32) {
            let shape = context.and_then(|c| c.shape).unwrap_or(0);
            self.params.write(&buffers, instance, &[shape]);
            return Ok(());
        }
        if param.derived.is_some() {
            // Computed once the instance's other params are set.
            return Ok(());
        }
        if param.layout == Layout::Tensor {
            return self.set_tensor_param(object, instance, param, buffers, param_key);
        }
        // A `@choice` param's word (the validator checked it) is its position in the list.
        let value = match value {
            Some(Value::String(word)) if !param.choices.is_empty() => {
                let index = param.choices.iter().position(|c| c.eq_ignore_ascii_case(&word)).ok_or_else(|| {
                    error(
                        object,
                        format!("parameter \"{}\": \"{word}\" is not one of {}", param.name, param.choices.join(", ")),
                    )
                })?;
                Some(Value::Integer(index as i64))
            }
            value => value,
        };
        let bits = match &param.layout {
            Layout::Handle(type_name) => {
                let h = self.handle_value(object, type_name, value, param.default.as_ref(), &param_key, &param.name)?;
                vec![h]
            }
            layout => {
                let host = match value {
                    Some(v) => host_value(layout, &v).ok_or_else(|| {
                        error(
                            object,
                            format!(
                                "parameter \"{}\": {} does not fit {}",
                                param.name,
                                v.kind_name(),
                                layout.describe()
                            ),
                        )
                    })?,
                    None => param.default.clone().ok_or_else(|| {
                        error(
                            object,
                            format!(
                                "parameter \"{}\" ({}) has no default and the scene cannot set it",
                                param.name,
                                layout.describe()
                            ),
                        )
                    })?,
                };
                let bits =
                    layout.flatten(&host).map_err(|m| error(object, format!("parameter \"{}\": {m}", param.name)))?;
                self.params.add(ParamInfo {
                    key: param_key,
                    layout: layout.clone(),
                    differentiable: !param.no_diff && layout.scalar_types().contains(&Ty::F32),
                    buffers: buffers.clone(),
                    instance,
                    tensor: None,
                });
                bits
            }
        };
        self.params.write(&buffers, instance, &bits);
        Ok(())
    }

    /// A `Tensor` param: the image file the scene names, sRGB-decoded unless the object's
    /// `raw` is true (spec/plugins.md § How scenes use plugins).
    fn set_tensor_param(
        &mut self,
        object: &Object,
        instance: u32,
        param: &drs_lower::ParamLayout,
        buffers: Vec<String>,
        key: String,
    ) -> Result<(), SceneError> {
        let file_param = tensor_file_param(&param.name);
        let path = object.filename(file_param).ok_or_else(|| {
            error(
                object,
                format!(
                    "parameter \"{}\" (Tensor) needs an image file: <string name=\"{file_param}\" value=\"..\"/>",
                    param.name
                ),
            )
        })?;
        let raw = object.boolean(RAW_PARAM).unwrap_or(false);
        let value = load_image_tensor(path, raw).map_err(|message| {
            let location = object.property(file_param).and_then(|p| p.location.clone());
            let mut e = SceneError::new(location.or_else(|| object.location().cloned()), message);
            e.element_path = Some(object.path().to_owned());
            e
        })?;
        let info = tensor_info(object, key, param, buffers, instance)?;
        self.params.add_tensor(info, &value).map_err(|e| error(object, e.to_string()))
    }

    /// A `@derived` `Tensor` param of plugin `p`: computed from the instance's source tensor,
    /// or a table of a method of the plugin that kernels compute before every pass.
    #[allow(clippy::too_many_arguments)]
    fn set_derived_param(
        &mut self,
        object: &Object,
        p: PluginId,
        instance: u32,
        param: &drs_lower::ParamLayout,
        derivation: &Derivation,
        key: &str,
    ) -> Result<(), SceneError> {
        let buffers = self.buffer_names(param);
        let info = tensor_info(object, format!("{key}.{}", param.name), param, buffers, instance)?;
        let source_param = match derivation {
            Derivation::Distribution2d { source, .. } => source,
            Derivation::Tabulate { method, count, mean } => {
                let program = &self.library.program().program;
                let method = *program.plugins[p].methods.get(method).ok_or_else(|| {
                    error(object, format!("plugin `{}` has no method `{method}` to tabulate", program.plugins[p].name))
                })?;
                return self.params.add_table(info, method, *count, *mean).map_err(|e| error(object, e.to_string()));
            }
        };
        let source = format!("{key}.{source_param}");
        self.params.add_derived(info, &source, derivation).map_err(|e| {
            let file_param = tensor_file_param(source_param);
            let location = object.property(file_param).and_then(|p| p.location.clone());
            let mut e = SceneError::new(location.or_else(|| object.location().cloned()), e.to_string());
            e.element_path = Some(object.path().to_owned());
            e
        })
    }

    /// The names of the buffers that hold `param`'s scalars.
    fn buffer_names(&self, param: &drs_lower::ParamLayout) -> Vec<String> {
        let module = &self.library.program().lowered.module;
        param.buffers.iter().map(|&b| module.buffers[b as usize].name.clone()).collect()
    }

    /// The handle a plugin-reference or texture param holds: a referenced object's instance,
    /// or for textures a constant (`srgb` for colours, `uniform` for floats).
    fn handle_value(
        &mut self,
        object: &Object,
        type_name: &str,
        value: Option<Value>,
        default: Option<&HostValue>,
        key: &str,
        name: &str,
    ) -> Result<u32, SceneError> {
        if let Some(Value::Object(id)) = value {
            return self.instance(id, key, None);
        }
        let (texture, layout) = match type_name {
            "Texture<Color>" => ("srgb", Layout::Color),
            "Texture<f32>" => ("uniform", Layout::Scalar(Ty::F32)),
            _ => {
                return Err(error(
                    object,
                    format!("parameter \"{name}\" ({type_name}) must be given as a nested or referenced object"),
                ));
            }
        };
        let constant = match value {
            Some(v) => host_value(&layout, &v).ok_or_else(|| {
                error(object, format!("parameter \"{name}\": {} does not fit {type_name}", v.kind_name()))
            })?,
            None => default
                .cloned()
                .ok_or_else(|| error(object, format!("parameter \"{name}\" ({type_name}) is required")))?,
        };
        let p = self.plugin(object, PluginKind::Texture, texture)?;
        let (h, instance) = self.new_instance(object, p)?;
        let layouts = self.library.program().lowered.plugins[p].params.clone();
        let value_param = layouts.iter().find(|l| l.name == "value" && l.layout == layout).ok_or_else(|| {
            error(
                object,
                format!("the constant texture plugin \"{texture}\" has no param `value: {}`", layout.describe()),
            )
        })?;
        let bits = layout.flatten(&constant).map_err(|m| error(object, m))?;
        let buffers = self.buffer_names(value_param);
        self.params.write(&buffers, instance, &bits);
        self.params.add(ParamInfo {
            key: format!("{key}.value"),
            layout,
            differentiable: !value_param.no_diff,
            buffers,
            instance,
            tensor: None,
        });
        Ok(h)
    }

    /// Whether an emitter is the scene's environment (infinite, not a delta direction), from
    /// its `flags()` run by the interpreter.
    fn is_environment(&self, object: &Object, h: u32) -> Result<bool, SceneError> {
        const INFINITE: u32 = 0x4;
        const DELTA_DIRECTION: u32 = 0x2;
        let p = self.plugin_of_handle(PluginKind::Emitter, h);
        let program = self.library.program();
        let flags_fn = program.program.plugins[p].methods.get("flags").and_then(|f| program.lowered.functions.get(f));
        let Some(&flags_fn) = flags_fn else {
            return Err(error(object, "the emitter plugin's `flags` could not be compiled"));
        };
        let mut interp = drs_interp::Interpreter::new(&program.lowered.module);
        let flags = interp
            .call(flags_fn, &[h & (MAX_INSTANCES - 1)])
            .map_err(|t| error(object, format!("evaluating the emitter's flags: {t}")))?;
        let flags = flags.first().copied().unwrap_or(0);
        Ok(flags & INFINITE != 0 && flags & DELTA_DIRECTION == 0)
    }
}

/// The parameter of a `Tensor` param of an instance, with its data, offset and shape buffers.
fn tensor_info(
    object: &Object,
    key: String,
    param: &drs_lower::ParamLayout,
    buffers: Vec<String>,
    instance: u32,
) -> Result<ParamInfo, SceneError> {
    let [data, offset, s0, s1, s2]: [String; 5] =
        buffers.try_into().map_err(|_| error(object, "a Tensor param without its five buffers"))?;
    Ok(ParamInfo {
        key,
        layout: Layout::Tensor,
        differentiable: !param.no_diff,
        buffers: vec![data],
        instance,
        tensor: Some(TensorBuffers { offset, shape: [s0, s1, s2] }),
    })
}

fn kind_of(category: Category) -> Option<PluginKind> {
    Some(match category {
        Category::Bsdf => PluginKind::Bsdf,
        Category::Emitter => PluginKind::Emitter,
        Category::Texture => PluginKind::Texture,
        Category::Medium => PluginKind::Medium,
        Category::Phase => PluginKind::Phase,
        Category::Integrator => PluginKind::Integrator,
        _ => return None,
    })
}

/// The key prefix of a top-level object: its id, else its tag and index.
fn object_key(object: &Object, tag: &str, index: usize) -> String {
    match object.id() {
        Some(id) => id.to_owned(),
        None => format!("{tag}{index}"),
    }
}

/// The key prefix of a child object: its id, else the parent's key and the slot.
fn key_of(desc: &SceneDesc, id: ObjectId, parent: String, slot: &str) -> String {
    match desc[id].id() {
        Some(own) => own.to_owned(),
        None => format!("{parent}.{slot}"),
    }
}

/// A scene value as a host value of `layout`, where it fits.
fn host_value(layout: &Layout, value: &Value) -> Option<HostValue> {
    let f = |x: f64| HostValue::F32(x as f32);
    let triple = |v: [f64; 3]| HostValue::List(v.iter().map(|&x| f(x)).collect());
    Some(match (layout, value) {
        (Layout::Scalar(Ty::F32), Value::Float(x)) => f(*x),
        (Layout::Scalar(Ty::F32), Value::Integer(i)) => f(*i as f64),
        (Layout::Scalar(Ty::F32), Value::Spectrum(x)) => f(*x),
        (Layout::Scalar(Ty::I32), Value::Integer(i)) => HostValue::I32(i32::try_from(*i).ok()?),
        (Layout::Scalar(Ty::U32), Value::Integer(i)) => HostValue::U32(u32::try_from(*i).ok()?),
        (Layout::Scalar(Ty::Bool), Value::Boolean(b)) => HostValue::Bool(*b),
        (Layout::Vector(Ty::F32, 3), Value::Point(v) | Value::Vector(v) | Value::Rgb(v)) => triple(*v),
        (Layout::Color, Value::Rgb(v)) => triple(*v),
        (Layout::Color, Value::Spectrum(x) | Value::Float(x)) => triple([*x; 3]),
        // Columns of the 4x4 matrix, or of its 2-D homogeneous part (rows and columns 0, 1, 3:
        // Mitsuba's `Transform4f::extract()`, as a bitmap's `to_uv` uses it).
        (Layout::Matrix(n @ (3 | 4)), Value::Transform(t)) => {
            let rows = t.rows();
            let keep: &[usize] = if *n == 4 { &[0, 1, 2, 3] } else { &[0, 1, 3] };
            HostValue::List(
                keep.iter().map(|&c| HostValue::List(keep.iter().map(|&r| f(rows[r][c])).collect())).collect(),
            )
        }
        _ => return None,
    })
}

fn geometry_transform(object: &Object, t: &drs_scene::Transform) -> Result<Transform, SceneError> {
    let rows = t.rows();
    let cols: Vec<f32> = (0..4).flat_map(|c| (0..4).map(move |r| rows[r][c] as f32)).collect();
    let matrix = drs_geometry::math::Mat4::from_cols_slice(&cols);
    Transform::new(matrix).map_err(|e| error(object, format!("invalid to_world: {e}")))
}

fn build_shape(object: &Object) -> Result<Shape, SceneError> {
    let to_world = match object.transform("to_world") {
        Some(t) => geometry_transform(object, &t)?,
        None => Transform::IDENTITY,
    };
    let flip = object.boolean("flip_normals").unwrap_or(false);
    let fail = |e: &dyn std::fmt::Display| error(object, e.to_string());
    Ok(match object.plugin() {
        "rectangle" => drs_geometry::rectangle(&to_world, flip).map_err(|e| fail(&e))?.into(),
        "cube" => drs_geometry::cube(&to_world, flip).map_err(|e| fail(&e))?.into(),
        "sphere" => {
            let c = object.point("center").unwrap_or([0.0; 3]);
            let center = GVec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            let radius = object.float("radius").unwrap_or(1.0) as f32;
            Sphere::new(center, radius, &to_world, flip).map_err(|e| fail(&e))?.into()
        }
        "disk" => Disk::new(&to_world, flip).map_err(|e| fail(&e))?.into(),
        kind @ ("obj" | "ply") => {
            let path = object.filename("filename").ok_or_else(|| error(object, "the mesh has no filename"))?;
            let data = if kind == "obj" {
                let mut d = drs_geometry::io::obj::load(path).map_err(|e| fail(&e))?;
                d.flip_tex_coords();
                d
            } else {
                drs_geometry::io::ply::load(path).map_err(|e| fail(&e))?
            };
            let options =
                MeshOptions { flip_normals: flip, face_normals: object.boolean("face_normals").unwrap_or(false) };
            drs_geometry::TriangleMesh::new(data, &to_world, options).map_err(|e| fail(&e))?.into()
        }
        other => return Err(error(object, format!("shape \"{other}\" is not supported"))),
    })
}

fn build_sensor(desc: &SceneDesc, sensor: &Object) -> Result<(PerspectiveCamera, FilmDesc, Sampler), SceneError> {
    if sensor.plugin() != "perspective" {
        return Err(error(sensor, format!("sensor \"{}\" is not supported", sensor.plugin())));
    }
    // Mitsuba's defaults when the sensor has no film or sampler: a 768 x 576 hdrfilm with
    // a gaussian filter, and an independent sampler with 4 samples.
    let film = match sensor.child(Category::Film) {
        Some(id) => {
            let film = &desc[id];
            let filter = match film.child(Category::Rfilter) {
                Some(f) => build_filter(&desc[f])?,
                None => ReconstructionFilter::gaussian(0.5).map_err(|e| error(film, e.to_string()))?,
            };
            let dim = |name: &str, default: i64| film.integer(name).unwrap_or(default);
            let (width, height) = (dim("width", 768), dim("height", 576));
            // Samples are seeded by pixel number, a u32.
            if width < 1 || height < 1 || width.checked_mul(height).is_none_or(|pixels| pixels > i64::from(u32::MAX)) {
                return Err(error(
                    film,
                    format!(
                        "a {width}x{height} film is not supported: its width and height must be at least 1 and \
                         its pixels at most {}",
                        u32::MAX
                    ),
                ));
            }
            FilmDesc {
                width: width as u32,
                height: height as u32,
                filter,
                location: film.location().cloned(),
                element_path: film.path().to_owned(),
            }
        }
        None => FilmDesc {
            width: 768,
            height: 576,
            filter: ReconstructionFilter::gaussian(0.5).map_err(|e| error(sensor, e.to_string()))?,
            location: sensor.location().cloned(),
            element_path: sensor.path().to_owned(),
        },
    };
    let sampler = match sensor.child(Category::Sampler) {
        Some(id) => {
            let s = &desc[id];
            let count = s.integer("sample_count").unwrap_or(4) as u32;
            let seed = s.integer("seed").unwrap_or(0) as u32;
            let sampler = match s.plugin() {
                "stratified" => Sampler::stratified(count, seed, s.boolean("jitter").unwrap_or(true)),
                _ => Sampler::independent(count, seed),
            };
            sampler.map_err(|e| error(s, e.to_string()))?
        }
        None => Sampler::independent(4, 0).map_err(|e| error(sensor, e.to_string()))?,
    };
    let to_world = match sensor.transform("to_world") {
        Some(t) => geometry_transform(sensor, &t)?,
        None => Transform::IDENTITY,
    };
    let (fov, axis) = match sensor.float("fov") {
        Some(fov) => (fov, FovAxis::parse(sensor.string("fov_axis").unwrap_or("x")).unwrap_or(FovAxis::X)),
        None => (default_fov_degrees(), FovAxis::Diagonal),
    };
    let near = sensor.float("near_clip").unwrap_or(1e-2) as f32;
    let far = sensor.float("far_clip").unwrap_or(1e4) as f32;
    let camera = PerspectiveCamera::new(to_world, fov, axis, film.width, film.height, near, far);
    Ok((camera, film, sampler))
}

fn build_filter(object: &Object) -> Result<ReconstructionFilter, SceneError> {
    let filter = match object.plugin() {
        "box" => Ok(ReconstructionFilter::box_filter()),
        "gaussian" => ReconstructionFilter::gaussian(object.float("stddev").unwrap_or(0.5) as f32),
        "tent" => ReconstructionFilter::tent(object.float("radius").unwrap_or(1.0) as f32),
        other => return Err(error(object, format!("reconstruction filter \"{other}\" is not supported"))),
    };
    filter.map_err(|e| error(object, e.to_string()))
}
