//! A bench for plugins: instances of library plugins with their params, queried through
//! probe functions of `tests/probes/` that the runtime's linker links with the bench's plugin
//! types (calls through plugin references dispatch as in a render) and the Cranelift JIT
//! compiles. Queries run in batches, so millions of samples take a fraction of a second.
//! [`Probes`] are the BSDF queries of `bsdf_probe.drs` (`sample`, `eval`, `pdf`, `flags` on
//! one BSDF handle); other tests build their own from [`Entry`].
//!
//! ```no_run
//! use drs_tests::plugin_bench::{Bench, HostValue};
//! let mut bench = Bench::new();
//! let metal = bench.bsdf("roughconductor", &[("alpha", HostValue::F32(0.3))]);
//! let probes = bench.compile();
//! let pdfs = probes.pdf(metal, 0, [0.0, 0.6, 0.8], &[[0.0, -0.6, 0.8]]);
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, OnceLock};

use drs_cranelift::{Buffer, Externs, Jit, KernelCache, Lanes, Options};
use drs_ir::FuncId;
use drs_lower::layout::Layout;
use drs_lower::FnLayout;
use drs_render::link::{self, EntryMode, LinkedTypes, NULL_HANDLE, TAG_SHIFT};
use drs_render::{LibraryOptions, PluginLibrary, TensorValue};
use drs_sema::program::{Derivation, FnId, PluginId};
use drs_sema::types::PluginKind;

pub use drs_lower::layout::HostValue;

/// `BsdfContext::mode` values (stdlib/types.drs).
pub const TRANSPORT_RADIANCE: u32 = 0;
pub const TRANSPORT_IMPORTANCE: u32 = 1;

/// The stdlib plugins and the probes, checked and lowered once per test binary.
fn library() -> &'static PluginLibrary {
    static LIBRARY: OnceLock<PluginLibrary> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let options = LibraryOptions { stdlib_dir: None, plugin_dirs: vec![probes_dir()] };
        PluginLibrary::load(&options).unwrap_or_else(|e| panic!("the plugin library: {e}"))
    })
}

fn probes_dir() -> PathBuf {
    crate::workspace_root().join("tests/probes")
}

/// Plugin instances and their parameter buffers.
pub struct Bench {
    types: LinkedTypes,
    /// Param buffers by name, one element per instance of their plugin type.
    buffers: HashMap<String, Vec<u32>>,
    counts: HashMap<PluginId, u32>,
    /// How deep each instance nests instances of its own kind, by (kind, handle).
    nesting: HashMap<(PluginKind, u32), usize>,
    /// The instances' `@derived(tabulate | mean, ..)` tensors.
    tables: Vec<Table>,
}

/// A `@derived(tabulate | mean, ..)` tensor of one instance: `count` values of the plugin
/// method `method` (or with `mean` their mean), in the tensor's data and offset buffers `data`
/// and `offset` (indices in the module's buffers).
#[derive(Clone, Copy)]
struct Table {
    method: FnId,
    count: u32,
    mean: bool,
    instance: u32,
    data: u32,
    offset: u32,
}

impl Default for Bench {
    fn default() -> Self {
        Self::new()
    }
}

impl Bench {
    pub fn new() -> Bench {
        Bench {
            types: Vec::new(),
            buffers: HashMap::new(),
            counts: HashMap::new(),
            nesting: HashMap::new(),
            tables: Vec::new(),
        }
    }

    /// Adds a BSDF instance; see [`Bench::instance`].
    pub fn bsdf(&mut self, name: &str, params: &[(&str, HostValue)]) -> u32 {
        self.instance(PluginKind::Bsdf, name, params)
    }

    /// Adds an emitter instance; see [`Bench::instance`].
    pub fn emitter(&mut self, name: &str, params: &[(&str, HostValue)]) -> u32 {
        self.instance(PluginKind::Emitter, name, params)
    }

    /// Adds an instance of the plugin of `kind` named `name` in scene files, and returns its
    /// handle. Params not in `params` take their defaults; a texture param given as a
    /// constant (a float, or a list of three floats) gets a constant texture instance (`uniform`
    /// or `srgb`) as in a scene; a `@choice` param takes the index as `HostValue::U32`; a plugin
    /// reference not given is the null handle. Panics on an unknown plugin or param.
    pub fn instance(&mut self, kind: PluginKind, name: &str, params: &[(&str, HostValue)]) -> u32 {
        self.instance_with_tensors(kind, name, params, &[])
    }

    /// [`Bench::instance`] for a plugin with `Tensor` params: `tensors` gives their values,
    /// and the `@derived` ones are computed from them as the runtime computes them.
    pub fn instance_with_tensors(
        &mut self,
        kind: PluginKind,
        name: &str,
        params: &[(&str, HostValue)],
        tensors: &[(&str, TensorValue)],
    ) -> u32 {
        let library = library();
        let p = library.plugin(kind, name).unwrap_or_else(|| panic!("no {} plugin `{name}`", kind.keyword()));
        let layouts = library.program().lowered.plugins[p].params.clone();
        for given in params.iter().map(|(n, _)| n).chain(tensors.iter().map(|(n, _)| n)) {
            assert!(layouts.iter().any(|l| l.name == *given), "{} `{name}` has no param `{given}`", kind.keyword());
        }
        let instance = {
            let count = self.counts.entry(p).or_insert(0);
            *count += 1;
            *count - 1
        };
        let handle = self.tag(kind, p) << TAG_SHIFT | instance;
        let mut depth = 0;
        for layout in &layouts {
            let given = params.iter().find(|(n, _)| *n == layout.name).map(|(_, v)| v.clone());
            let bits = match &layout.layout {
                Layout::Tensor => {
                    let value = match &layout.derived {
                        // Computed by `compile`, once every instance is there.
                        Some(Derivation::Tabulate { method, count, mean }) => {
                            let (count, mean) = (*count, *mean);
                            let method = library.program().program.plugins[p].methods[method];
                            let (data, offset) = (layout.buffers[0], layout.buffers[1]);
                            self.tables.push(Table { method, count, mean, instance, data, offset });
                            let len = drs_render::tabulated_len(count, mean);
                            TensorValue::new([len, 1, 1], vec![0.0; len as usize]).expect("a list")
                        }
                        Some(derivation @ Derivation::Distribution2d { source, .. }) => {
                            let source = tensors.iter().find(|(n, _)| n == source).map(|(_, v)| v);
                            let source = source.unwrap_or_else(|| panic!("`{name}.{}` needs its source", layout.name));
                            drs_render::derive::derive(derivation, source).unwrap_or_else(|e| panic!("{e}"))
                        }
                        None => tensors.iter().find(|(n, _)| *n == layout.name).map(|(_, v)| v.clone()).unwrap_or_else(
                            || panic!("{} `{name}`: tensor param `{}` was not given", kind.keyword(), layout.name),
                        ),
                    };
                    self.add_tensor(&layout.buffers, instance, &value);
                    continue;
                }
                Layout::Handle(type_name) => {
                    let h = self.handle_param(type_name, given, layout.default.clone());
                    if let Some(&nested) =
                        self.nesting.get(&(kind, h)).filter(|_| reference_kind(type_name) == Some(kind))
                    {
                        depth = depth.max(nested + 1);
                    }
                    vec![h]
                }
                other => {
                    let value = given.or_else(|| layout.default.clone()).unwrap_or_else(|| {
                        panic!("{} `{name}`: param `{}` has no default and was not given", kind.keyword(), layout.name)
                    });
                    other.flatten(&value).unwrap_or_else(|e| panic!("`{name}.{}`: {e}", layout.name))
                }
            };
            let module = &library.program().lowered.module;
            for (&b, bits) in layout.buffers.iter().zip(bits) {
                let buffer = self.buffers.entry(module.buffers[b as usize].name.clone()).or_default();
                buffer.resize(buffer.len().max(instance as usize + 1), 0);
                buffer[instance as usize] = bits;
            }
        }
        self.nesting.insert((kind, handle), depth);
        handle
    }

    /// Appends a tensor's data to its data buffer and writes the instance's offset and shape
    /// (the buffers of `drs_lower::TENSOR_BUFFERS`).
    fn add_tensor(&mut self, buffers: &[u32], instance: u32, value: &TensorValue) {
        let module = &library().program().lowered.module;
        let names: Vec<String> = buffers.iter().map(|&b| module.buffers[b as usize].name.clone()).collect();
        let data = self.buffers.entry(names[0].clone()).or_default();
        let offset = data.len() as u32;
        data.extend(value.data().iter().map(|v| v.to_bits()));
        let [h, w, c] = value.shape();
        for (name, bits) in names[1..].iter().zip([offset, h, w, c]) {
            let buffer = self.buffers.entry(name.clone()).or_default();
            buffer.resize(buffer.len().max(instance as usize + 1), 0);
            buffer[instance as usize] = bits;
        }
    }

    /// The tag of plugin `p` among the linked types of its kind (added if new).
    fn tag(&mut self, kind: PluginKind, p: PluginId) -> u32 {
        let index = match self.types.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.types.push((kind, Vec::new()));
                self.types.len() - 1
            }
        };
        let list = &mut self.types[index].1;
        let tag = list.iter().position(|&q| q == p).unwrap_or_else(|| {
            list.push(p);
            list.len() - 1
        });
        tag as u32
    }

    /// The handle a texture or plugin-reference param holds.
    fn handle_param(&mut self, type_name: &str, given: Option<HostValue>, default: Option<HostValue>) -> u32 {
        if let Some(HostValue::Handle(h)) = given {
            return h;
        }
        let texture = match type_name {
            "Texture<Color>" => "srgb",
            "Texture<f32>" => "uniform",
            _ => return NULL_HANDLE,
        };
        let value = given.or(default).unwrap_or_else(|| panic!("a {type_name} param needs a value"));
        let value = match (texture, value) {
            ("srgb", HostValue::F32(x)) => HostValue::List(vec![HostValue::F32(x); 3]),
            (_, v) => v,
        };
        self.instance(PluginKind::Texture, texture, &[("value", value)])
    }

    /// Computes the instances' `@derived(tabulate | mean, ..)` tensors, as a scene does before
    /// a pass (with [`drs_render::table_arguments`] and [`drs_render::tabulated_data`]).
    fn fill_tables(&mut self) {
        let module = &library().program().lowered.module;
        // One kernel and one call per tabulated method, for all its instances.
        let mut groups: HashMap<(FnId, u32), Vec<Table>> = HashMap::new();
        for &table in &self.tables {
            groups.entry((table.method, table.count)).or_default().push(table);
        }
        for ((method, count), tables) in groups {
            let entry = Entry::for_function(method, self, 0, &[]);
            let instances: Vec<u32> = tables.iter().map(|t| t.instance).collect();
            let values = entry.call(tables.len() * count as usize, &drs_render::table_arguments(&instances, count));
            for (table, values) in tables.iter().zip(values.chunks_exact(count as usize)) {
                let offsets = &self.buffers[&module.buffers[table.offset as usize].name];
                let offset = offsets[table.instance as usize] as usize;
                let data = self.buffers.get_mut(&module.buffers[table.data as usize].name).expect("the table's data");
                let values = drs_render::tabulated_data(values, table.mean);
                data[offset..offset + values.len()].copy_from_slice(&values);
            }
        }
    }

    /// The method `method` of the `kind` plugin named `plugin` as an entry of its own (the
    /// instance index, then the method's arguments), with the tables computed as in
    /// [`Bench::compile`].
    pub fn method_entry(&mut self, kind: PluginKind, plugin: &str, method: &str) -> Entry {
        self.fill_tables();
        let program = library().program();
        let p = library().plugin(kind, plugin).unwrap_or_else(|| panic!("no {} plugin `{plugin}`", kind.keyword()));
        let f =
            *program.program.plugins[p].methods.get(method).unwrap_or_else(|| panic!("`{plugin}` has no `{method}`"));
        Entry::for_function(f, self, 0, &[])
    }

    /// The data of the `Tensor` param `param` of the instance with handle `handle` of the `kind`
    /// plugin named `plugin`, with the tables computed as in [`Bench::compile`].
    pub fn tensor(&mut self, kind: PluginKind, plugin: &str, handle: u32, param: &str) -> Vec<f32> {
        self.fill_tables();
        let program = library().program();
        let p = library().plugin(kind, plugin).unwrap_or_else(|| panic!("no {} plugin `{plugin}`", kind.keyword()));
        let layout = program.lowered.plugins[p].params.iter().find(|l| l.name == param);
        let layout = layout.unwrap_or_else(|| panic!("`{plugin}` has no param `{param}`"));
        let buffer = |k: usize| &self.buffers[&program.lowered.module.buffers[layout.buffers[k] as usize].name];
        let instance = (handle & ((1 << TAG_SHIFT) - 1)) as usize;
        let offset = buffer(1)[instance] as usize;
        let len: usize = (2..5).map(|k| buffer(k)[instance] as usize).product();
        buffer(0)[offset..offset + len].iter().map(|&b| f32::from_bits(b)).collect()
    }

    /// The BSDF probes compiled for the plugin types and param values added so far (and the
    /// tables of their `@derived(tabulate | mean, ..)` params computed).
    pub fn compile(&mut self) -> Probes {
        self.fill_tables();
        // The BSDF handle and the transport mode are the same in every lane of a batch.
        let entry = |name: &str| Entry::new(name, self, 2, &[]);
        Probes {
            sample: entry("probe_sample"),
            eval: entry("probe_eval"),
            pdf: entry("probe_pdf"),
            flags: entry("probe_flags"),
        }
    }
}

/// The plugin kind a param of reference type `type_name` refers to.
fn reference_kind(type_name: &str) -> Option<PluginKind> {
    Some(match type_name {
        "Bsdf" => PluginKind::Bsdf,
        "Emitter" => PluginKind::Emitter,
        "Texture<Color>" | "Texture<f32>" => PluginKind::Texture,
        "Medium" => PluginKind::Medium,
        "PhaseFunction" => PluginKind::Phase,
        "Integrator" => PluginKind::Integrator,
        _ => return None,
    })
}

/// A host function a probe may call, as [`Externs::bind`] takes it.
pub type HostFn = fn(&[u32], &mut [u32]);

/// One probe function, linked and compiled, with its buffers and host functions.
pub struct Entry {
    jit: Arc<Jit>,
    externs: Externs,
    buffers: Vec<Vec<AtomicU32>>,
}

impl Entry {
    /// The probe function `name` linked with `bench`'s plugin types and param values. Its
    /// first `uniform` params are the same in every lane of a batch (the plugin handle, ...);
    /// `hosts` are the host functions it may call (any other is an error when called).
    pub fn new(name: &str, bench: &Bench, uniform: usize, hosts: &[(&str, HostFn)]) -> Entry {
        let f = library().program().find_fn(name).unwrap_or_else(|| panic!("no probe `{name}`"));
        Entry::for_function(f, bench, uniform, hosts)
    }

    /// Like [`Entry::new`], for any function or plugin method `f` (a method takes the instance
    /// index first).
    pub fn for_function(f: FnId, bench: &Bench, uniform: usize, hosts: &[(&str, HostFn)]) -> Entry {
        let program = library().program();
        let name = program.program.fn_path(f);
        let nesting = bench.nesting.values().copied().max().unwrap_or(0);
        let linked = link::link(program, &bench.types, nesting, f, EntryMode::Primal)
            .unwrap_or_else(|e| panic!("linking {name}: {e}"));
        let module = drs_opt::prepare_kernel(&linked.module, drs_opt::OptLevel::Default, FuncId(0));
        let entry_fn = module.function(FuncId(0));
        let uniform = vec![true; entry_fn.params.len().min(uniform)];
        let options = Options::new(Lanes::X4).uniform(entry_fn.name.clone(), uniform).entry(entry_fn.name.clone());
        let jit = KernelCache::global().get_or_compile(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut externs = jit.externs();
        for &(host, function) in hosts {
            if module.externs.iter().any(|e| e.name == host) {
                externs.bind(host, function).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        let buffers = module
            .buffers
            .iter()
            .map(|b| {
                let data = bench.buffers.get(&b.name).filter(|d| !d.is_empty()).cloned().unwrap_or_else(|| vec![0]);
                data.into_iter().map(AtomicU32::new).collect()
            })
            .collect();
        Entry { jit, externs, buffers }
    }

    /// Runs `n` lanes: `args` is `[param][lane]`, the result `[result][lane]`.
    pub fn call(&self, n: usize, args: &[u32]) -> Vec<u32> {
        let kernel = self.jit.function_by_id(FuncId(0)).expect("the entry is function 0");
        let mut results = vec![0u32; kernel.results().len() * n];
        let buffers: Vec<Buffer> = self.buffers.iter().map(|b| Buffer::new(b)).collect();
        kernel.call_batch(n, args, &mut results, &buffers, &self.externs).unwrap_or_else(|e| panic!("{e}"));
        results
    }
}

/// A result of `sample`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampled {
    pub wo: [f32; 3],
    pub pdf: f32,
    /// f |cos(theta_o)| / pdf (f for delta lobes); zero when sampling failed.
    pub weight: [f32; 3],
    pub sampled_type: u32,
    pub eta: f32,
}

impl Sampled {
    pub fn failed(&self) -> bool {
        self.weight == [0.0; 3]
    }
}

/// The compiled queries of a [`Bench`]'s BSDFs, for any of its handles.
pub struct Probes {
    sample: Entry,
    eval: Entry,
    pdf: Entry,
    flags: Entry,
}

/// `[param][lane]` arguments: the handle and the mode in every lane, then the lanes' rows of
/// `width` f32 values (`rows` holds them back to back).
fn batch_args(bsdf: u32, mode: u32, width: usize, rows: &[f32]) -> Vec<u32> {
    let n = rows.len() / width;
    let mut args = Vec::with_capacity((2 + width) * n);
    args.extend(std::iter::repeat_n(bsdf, n));
    args.extend(std::iter::repeat_n(mode, n));
    for c in 0..width {
        args.extend(rows.chunks_exact(width).map(|r| r[c].to_bits()));
    }
    args
}

/// Rows of (wi, v) for each v.
fn rows_with(wi: [f32; 3], vs: &[[f32; 3]]) -> Vec<f32> {
    vs.iter().flat_map(|v| [wi[0], wi[1], wi[2], v[0], v[1], v[2]]).collect()
}

impl Probes {
    /// `bsdf.sample` at wi for each (sample1, sample2.x, sample2.y).
    pub fn sample(&self, bsdf: u32, mode: u32, wi: [f32; 3], samples: &[[f32; 3]]) -> Vec<Sampled> {
        let n = samples.len();
        let r = self.sample.call(n, &batch_args(bsdf, mode, 6, &rows_with(wi, samples)));
        let f = |c: usize, i: usize| f32::from_bits(r[c * n + i]);
        (0..n)
            .map(|i| Sampled {
                wo: [f(0, i), f(1, i), f(2, i)],
                pdf: f(3, i),
                weight: [f(4, i), f(5, i), f(6, i)],
                sampled_type: r[7 * n + i],
                eta: f(8, i),
            })
            .collect()
    }

    /// `bsdf.eval` (f |cos(theta_o)|) at wi for each wo.
    pub fn eval(&self, bsdf: u32, mode: u32, wi: [f32; 3], wos: &[[f32; 3]]) -> Vec<[f32; 3]> {
        let n = wos.len();
        let r = self.eval.call(n, &batch_args(bsdf, mode, 6, &rows_with(wi, wos)));
        let f = |c: usize, i: usize| f32::from_bits(r[c * n + i]);
        (0..n).map(|i| [f(0, i), f(1, i), f(2, i)]).collect()
    }

    /// `bsdf.pdf` at wi for each wo.
    pub fn pdf(&self, bsdf: u32, mode: u32, wi: [f32; 3], wos: &[[f32; 3]]) -> Vec<f32> {
        let r = self.pdf.call(wos.len(), &batch_args(bsdf, mode, 6, &rows_with(wi, wos)));
        r.into_iter().map(f32::from_bits).collect()
    }

    /// `bsdf.flags()`.
    pub fn flags(&self, bsdf: u32) -> u32 {
        self.flags.call(1, &[bsdf])[0]
    }
}

/// Calls a function of the library that is not a plugin method (`fresnel::fresnel`, a
/// `.drs` path or IR name) with the reference interpreter.
pub fn call_function(path: &str, args: &[HostValue]) -> HostValue {
    let program = library().program();
    let f = program.find_fn(path).unwrap_or_else(|| panic!("no function `{path}`"));
    let layout = FnLayout::of(&program.program, f);
    assert_eq!(layout.params.len(), args.len(), "arguments of `{path}`");
    let mut bits = Vec::new();
    for ((name, l), v) in layout.params.iter().zip(args) {
        bits.extend(l.flatten(v).unwrap_or_else(|e| panic!("`{path}` argument `{name}`: {e}")));
    }
    let module = &program.lowered.module;
    let out = drs_interp::Interpreter::new(module)
        .call(program.lowered.functions[&f], &bits)
        .unwrap_or_else(|t| panic!("{path}: {t}"));
    layout.ret.unflatten(&out)
}
