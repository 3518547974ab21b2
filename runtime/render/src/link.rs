//! Linking: the IR of the whole plugin library becomes one kernel for one scene.
//!
//! The lowering turns every call through a plugin reference (`si.bsdf.eval(..)`, a texture
//! lookup) into a call of the host function `{kind}::{method}` with the handle first, and the
//! autodiff turns derivatives of such calls into `fwd_diff({kind}::{method})` /
//! `bwd_diff({kind}::{method})`. The linker replaces them with IR:
//!
//! - `{kind}::{method}` becomes a *dispatch* function: it splits the handle into the plugin
//!   type's tag and the instance index ([`handle`]) and calls that type's method for the
//!   instance (every type of the kind that the scene uses, one `if` per type, so lanes of one
//!   type run together); the null handle gets zeros (the null instance of spec/plugins.md).
//! - their host derivatives become the generated derivatives of the dispatch functions, which
//!   have exactly the host-derivative signatures (every argument is a tangent parameter);
//! - `null_bsdf()` and friends become the null handle.
//!
//! Only what the entry function reaches is kept, so the kernel's content (and its cache key)
//! depends on which plugin types the scene uses, never on parameter values.

use std::collections::{HashMap, HashSet};

use drs_ad::{AdInfo, Differentiator, FnDiff, Mode};
use drs_ir::{BinaryOp, Builder, CmpOp, Const, ExternDecl, FuncId, Function, Module, Op, Signatures, Ty};
use drs_lower::LoweredProgram;
use drs_opt::util::{callees, walk_insts, walk_insts_mut};
use drs_sema::program::{FnId, PluginId};
use drs_sema::types::PluginKind;

use crate::streams::{sampler_function, HOST_SAMPLER_FUNCTIONS, SAMPLER_FUNCTIONS};

/// Bits of a handle that hold the instance index; the plugin type's tag is above them.
pub const TAG_SHIFT: u32 = 24;
/// The most instances one plugin type can have in a scene.
pub const MAX_INSTANCES: u32 = 1 << TAG_SHIFT;
/// The handle of the null instance of every kind (`null_bsdf()`, a surface without emitter).
pub const NULL_HANDLE: u32 = u32::MAX;

/// The handle of instance `instance` of the plugin type with tag `tag` (its position in its
/// kind's list of linked types).
pub fn handle(tag: u32, instance: u32) -> u32 {
    debug_assert!(instance < MAX_INSTANCES && tag < (u32::MAX >> TAG_SHIFT));
    (tag << TAG_SHIFT) | instance
}

/// The host functions the runtime provides to kernels (`stdlib/runtime.drs`), besides the
/// ones behind the `Sampler` methods (`HOST_SAMPLER_FUNCTIONS`).
pub const HOST_FUNCTIONS: [&str; 4] =
    ["Scene::intersect", "Scene::ray_test", "shape_sample_position", "shape_pdf_position"];

/// The `Scene` methods of `stdlib/runtime.drs` that only read the scene's emitter list: the
/// linker writes them as IR over the [`EMITTER_TABLE`] buffer, so that compiled code reads
/// these constants instead of calling the host for them (a host call costs compiled code the
/// spilling of every live vector).
pub const EMITTER_TABLE_FUNCTIONS: [&str; 4] =
    ["Scene::sample_emitter", "Scene::emitter_selection_pdf", "Scene::environment", "Scene::emitter_count"];

/// The buffer of the scene's emitter list (u32): the environment emitter's handle (or
/// [`NULL_HANDLE`]), the number of emitters `n`, the selection probability `1 / n` as f32 bits
/// (0 without emitters), then the `n` emitters' handles in selection order. `::` keeps the name
/// apart from the parameter buffers (`{plugin}.{param}`).
pub const EMITTER_TABLE: &str = "scene::emitters";

/// The emitter table's contents for `emitters` (in selection order) and `environment`.
pub fn emitter_table(emitters: &[u32], environment: u32) -> Vec<u32> {
    let selection_pdf = if emitters.is_empty() { 0.0 } else { 1.0 / emitters.len() as f32 };
    let header = [environment, emitters.len() as u32, selection_pdf.to_bits()];
    header.into_iter().chain(emitters.iter().copied()).collect()
}

const TABLE_ENVIRONMENT: u32 = 0;
const TABLE_COUNT: u32 = 1;
const TABLE_SELECTION_PDF: u32 = 2;
const TABLE_FIRST_EMITTER: u32 = 3;

/// Why a scene's plugins cannot be linked into a kernel.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{0}")]
    Lowering(String),
    #[error("the kernel calls the host function `{0}`, which the runtime does not provide")]
    UnknownHostFunction(String),
    #[error("derivative for linking: {0}")]
    Derivative(String),
}

/// The kernel of one scene: a module whose function 0 is the entry point.
#[derive(Clone, Debug)]
pub struct Linked {
    pub module: Module,
}

/// The plugin types a scene uses: per kind, in tag order.
pub type LinkedTypes = Vec<(PluginKind, Vec<PluginId>)>;

/// What the kernel's entry point computes from the linked function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryMode {
    /// The function itself.
    Primal,
    /// Its reverse-mode derivative `bwd_diff(f)` (or its custom adjoint): the primal
    /// arguments and the adjoint of the result in, parameter gradients scatter-added into the
    /// `.grad` buffers.
    Backward,
}

/// Links `entry` (a function of `program`, typically an integrator's `sample`), or its
/// derivative, with the plugin types in `types`; `max_nesting` is how deep plugin instances
/// nest in instances of their own kind (`nesting.rs`).
pub fn link(
    program: &LoweredProgram,
    types: &LinkedTypes,
    max_nesting: usize,
    entry: FnId,
    mode: EntryMode,
) -> Result<Linked, LinkError> {
    let mut linker = Linker {
        program,
        types,
        module: program.lowered.module.clone(),
        ad: program.lowered.ad.clone(),
        replacements: HashMap::new(),
    };
    let path = program.program.fn_path(entry);
    let mut entry = linker.function_of(entry)?;
    if mode == EntryMode::Backward {
        entry = match linker.ad.functions[entry.0 as usize].custom_bwd {
            // The adjoint itself: differentiating a call of the entry would first run the
            // primal, whose effects (random numbers drawn) the adjoint must not see.
            Some(custom) if !custom.drop_instance => custom.func,
            Some(custom) => linker.without_instance(custom.func),
            None => Differentiator::new(&mut linker.module, &mut linker.ad)
                .derivative(entry, Mode::Bwd)
                .map_err(|err| LinkError::Derivative(format!("reverse mode of `{path}`: {err}")))?,
        };
    }
    let order = linker.resolve_reachable(entry)?;
    Ok(Linked { module: crate::nesting::unroll_cycles(drs_opt::extract(&linker.module, &order), max_nesting) })
}

struct Linker<'a> {
    program: &'a LoweredProgram,
    types: &'a LinkedTypes,
    module: Module,
    ad: AdInfo,
    /// What replaces each linked extern (by extern index).
    replacements: HashMap<u32, FuncId>,
}

/// What a linkable extern's name asks for.
enum ExternRole<'n> {
    Dispatch { kind: PluginKind, method: &'n str },
    Derivative { mode: Mode, primal: &'n str },
    Null,
    EmitterTable,
    SampleStream,
    Host,
}

fn role(name: &str) -> Option<ExternRole<'_>> {
    for (mode, prefix) in [(Mode::Fwd, "fwd_diff("), (Mode::Bwd, "bwd_diff(")] {
        if let Some(primal) = name.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')) {
            return Some(ExternRole::Derivative { mode, primal });
        }
    }
    if matches!(name, "null_bsdf" | "null_emitter" | "null_medium") {
        return Some(ExternRole::Null);
    }
    if EMITTER_TABLE_FUNCTIONS.contains(&name) {
        return Some(ExternRole::EmitterTable);
    }
    if SAMPLER_FUNCTIONS.contains(&name) {
        return Some(ExternRole::SampleStream);
    }
    if HOST_FUNCTIONS.contains(&name) || HOST_SAMPLER_FUNCTIONS.contains(&name) {
        return Some(ExternRole::Host);
    }
    let (kind, method) = name.split_once("::")?;
    let kind = PluginKind::ALL.into_iter().find(|k| k.keyword() == kind)?;
    Some(ExternRole::Dispatch { kind, method })
}

impl Linker<'_> {
    fn function_of(&self, f: FnId) -> Result<FuncId, LinkError> {
        match self.program.lowered.functions.get(&f) {
            Some(&id) => Ok(id),
            None => {
                let path = self.program.program.fn_path(f);
                let why = self
                    .program
                    .lowered
                    .errors
                    .iter()
                    .find(|e| e.function() == path)
                    .map(|e| e.render(&self.program.sources))
                    .unwrap_or_else(|| format!("`{path}` could not be lowered"));
                Err(LinkError::Lowering(why))
            }
        }
    }

    /// Visits every function reachable from `entry`, replacing linkable extern calls as it
    /// goes; returns the reachable functions, `entry` first.
    fn resolve_reachable(&mut self, entry: FuncId) -> Result<Vec<FuncId>, LinkError> {
        let mut order = vec![entry];
        let mut seen: HashSet<FuncId> = order.iter().copied().collect();
        let mut next = 0;
        while next < order.len() {
            let f = order[next];
            next += 1;
            let mut externs = HashSet::new();
            walk_insts(&self.module.function(f).body, &mut |inst| {
                if let Op::CallExtern(e, _) = &inst.op {
                    externs.insert(*e);
                }
            });
            let mut map = HashMap::new();
            for e in externs {
                if let Some(g) = self.replacement(e)? {
                    map.insert(e, g);
                }
            }
            let function = self.module.function_mut(f);
            walk_insts_mut(&mut function.body, &mut |inst| {
                if let Op::CallExtern(e, args) = &mut inst.op {
                    if let Some(&g) = map.get(e) {
                        inst.op = Op::Call(g, std::mem::take(args));
                    }
                }
            });
            for g in callees(&self.module.function(f).body) {
                if seen.insert(g) {
                    order.push(g);
                }
            }
        }
        Ok(order)
    }

    /// The function that replaces calls of extern `e`, or `None` for host functions.
    fn replacement(&mut self, e: u32) -> Result<Option<FuncId>, LinkError> {
        if let Some(&g) = self.replacements.get(&e) {
            return Ok(Some(g));
        }
        let decl = self.module.externs[e as usize].clone();
        let g = match role(&decl.name) {
            Some(ExternRole::Host) => return Ok(None),
            Some(ExternRole::Null) => self.add_function(null_function(&decl)),
            Some(ExternRole::EmitterTable) => {
                let f = emitter_table_function(&mut self.module, &decl)?;
                self.add_function(f)
            }
            Some(ExternRole::SampleStream) => {
                let f = sampler_function(&mut self.module, &decl)?;
                self.add_function(f)
            }
            Some(ExternRole::Dispatch { kind, method }) => {
                let f = self.dispatch(&decl, kind, method)?;
                self.add_function(f)
            }
            Some(ExternRole::Derivative { mode, primal }) => {
                let primal_decl = self
                    .module
                    .externs
                    .iter()
                    .position(|x| x.name == primal)
                    .ok_or_else(|| LinkError::UnknownHostFunction(decl.name.clone()))?;
                let Some(primal_fn) = self.replacement(primal_decl as u32)? else {
                    return Err(LinkError::UnknownHostFunction(decl.name.clone()));
                };
                let mut differentiator = Differentiator::new(&mut self.module, &mut self.ad);
                differentiator
                    .derivative(primal_fn, mode)
                    .map_err(|err| LinkError::Derivative(format!("{} of `{primal}`: {err}", mode.name())))?
            }
            None => return Err(LinkError::UnknownHostFunction(decl.name.clone())),
        };
        self.replacements.insert(e, g);
        Ok(Some(g))
    }

    /// A function that takes a plugin instance first and calls `f` with the other arguments
    /// (a plugin method's custom adjoint that is a free function).
    fn without_instance(&mut self, f: FuncId) -> FuncId {
        let callee = self.module.function(f).clone();
        let mut caller = Function::new(format!("{} (instance dropped)", callee.name));
        caller.add_param("instance", Ty::U32);
        let params: Vec<_> =
            callee.params.iter().map(|p| caller.add_param(p.name.clone(), callee.ty(p.value))).collect();
        caller.result_types = callee.result_types.clone();
        let signatures = Signatures::of(&self.module);
        let mut b = Builder::new(&mut caller, &signatures);
        let results = b.call(f, params);
        b.finish(results);
        self.add_function(caller)
    }

    /// Adds a linker-made function; every argument is a tangent parameter, so its derivatives
    /// have the host-derivative signatures of the extern it replaces.
    fn add_function(&mut self, f: Function) -> FuncId {
        self.ad.functions.push(FnDiff { tangent_params: vec![true; f.params.len()], ..FnDiff::default() });
        self.module.add_function(f)
    }

    /// `{kind}::{method}(handle, args..)`: calls `method` of the handle's plugin type.
    fn dispatch(&self, decl: &ExternDecl, kind: PluginKind, method: &str) -> Result<Function, LinkError> {
        let types = self.types.iter().find(|(k, _)| *k == kind).map(|(_, t)| t.as_slice()).unwrap_or(&[]);
        let mut targets = Vec::new();
        for &p in types {
            let def = &self.program.program.plugins[p];
            let f = def.methods.get(method).ok_or_else(|| {
                LinkError::Lowering(format!("{} `{}` has no method `{method}`", kind.keyword(), def.name))
            })?;
            targets.push(self.function_of(*f)?);
        }
        let mut f = Function::new(format!("{}::{method}", kind.keyword()));
        let params: Vec<_> = decl.params.iter().enumerate().map(|(i, &ty)| f.add_param(format!("a{i}"), ty)).collect();
        f.result_types = decl.results.clone();
        let signatures = Signatures::of(&self.module);
        let mut b = Builder::new(&mut f, &signatures);
        let shift = b.u32(TAG_SHIFT);
        let tag = b.binary(BinaryOp::Shr, params[0], shift);
        let mask = b.u32(MAX_INSTANCES - 1);
        let instance = b.binary(BinaryOp::And, params[0], mask);
        let mut args = vec![instance];
        args.extend_from_slice(&params[1..]);
        let results = dispatch_chain(&mut b, tag, &args, &targets, 0, &decl.results);
        b.finish(results);
        Ok(f)
    }
}

/// `if tag == first_tag { targets[0](args) } else if tag == first_tag + 1 { .. } else { zeros }`.
fn dispatch_chain(
    b: &mut Builder,
    tag: drs_ir::Value,
    args: &[drs_ir::Value],
    targets: &[FuncId],
    first_tag: u32,
    results: &[Ty],
) -> Vec<drs_ir::Value> {
    let Some((&target, rest)) = targets.split_first() else {
        return results.iter().map(|&ty| b.konst(zero(ty))).collect();
    };
    let k = b.u32(first_tag);
    let is_target = b.cmp(CmpOp::Eq, tag, k);
    b.if_(is_target, |b| b.call(target, args.to_vec()), |b| dispatch_chain(b, tag, args, rest, first_tag + 1, results))
}

fn zero(ty: Ty) -> Const {
    Const::from_bits(ty, 0)
}

/// One of [`EMITTER_TABLE_FUNCTIONS`] as reads of the emitter table: uniform selection among
/// the scene's emitters, as Mitsuba's `Scene::sample_emitter` does. Handles reach compiled code
/// only from the runtime, so a handle other than the null one is one of the scene's emitters.
fn emitter_table_function(module: &mut Module, decl: &ExternDecl) -> Result<Function, LinkError> {
    use Ty::{F32, U32};
    let (params, results): (&[Ty], &[Ty]) = match decl.name.as_str() {
        "Scene::sample_emitter" => (&[U32, F32], &[U32, F32, F32]),
        "Scene::emitter_selection_pdf" => (&[U32, U32], &[F32]),
        _ => (&[U32], &[U32]),
    };
    check_signature(decl, params, results)?;
    let table = u32_buffer(module, EMITTER_TABLE);
    let mut f = Function::new(decl.name.clone());
    let args: Vec<_> = params.iter().enumerate().map(|(i, &ty)| f.add_param(format!("a{i}"), ty)).collect();
    f.result_types = results.to_vec();
    let signatures = Signatures::of(module);
    let mut b = Builder::new(&mut f, &signatures);
    let entry = |b: &mut Builder, index: u32| {
        let index = b.u32(index);
        b.load(table, index)
    };
    let results = match decl.name.as_str() {
        "Scene::environment" => vec![entry(&mut b, TABLE_ENVIRONMENT)],
        "Scene::emitter_count" => vec![entry(&mut b, TABLE_COUNT)],
        "Scene::emitter_selection_pdf" => {
            let null = b.u32(NULL_HANDLE);
            let known = b.cmp(CmpOp::Ne, args[1], null);
            let pdf_bits = entry(&mut b, TABLE_SELECTION_PDF);
            let pdf = b.bitcast(F32, pdf_bits);
            let zero = b.f32(0.0);
            vec![b.select(known, pdf, zero)]
        }
        _ => {
            // The emitter at floor(u n) (the last for u n rounding up to n), u n minus that
            // index clamped below 1 for reuse, and n as the reciprocal selection probability.
            let u = args[1];
            let count = entry(&mut b, TABLE_COUNT);
            let count_f = b.convert(F32, count);
            let scaled = b.mul(u, count_f);
            let one = b.u32(1);
            let last = b.sub(count, one);
            let floor = b.convert(U32, scaled);
            let index = b.binary(BinaryOp::Min, floor, last);
            let first = b.u32(TABLE_FIRST_EMITTER);
            let at = b.add(first, index);
            let emitter = b.load(table, at);
            let index_f = b.convert(F32, index);
            let offset = b.sub(scaled, index_f);
            let zero = b.f32(0.0);
            let below_one = b.f32(1.0 - f32::EPSILON / 2.0);
            let at_least_zero = b.binary(BinaryOp::Max, offset, zero);
            let reused = b.binary(BinaryOp::Min, at_least_zero, below_one);
            let zero_count = b.u32(0);
            let none = b.cmp(CmpOp::Eq, count, zero_count);
            let null = b.u32(NULL_HANDLE);
            let emitter = b.select(none, null, emitter);
            let reused = b.select(none, u, reused);
            vec![emitter, count_f, reused]
        }
    };
    b.finish(results);
    Ok(f)
}

/// Checks that the extern `decl`, which the linker replaces, has the signature the runtime
/// gives it.
pub(crate) fn check_signature(decl: &ExternDecl, params: &[Ty], results: &[Ty]) -> Result<(), LinkError> {
    if decl.params != params || decl.results != results {
        return Err(LinkError::Lowering(format!(
            "`{}` is declared with another signature than the runtime's ({params:?} -> {results:?})",
            decl.name
        )));
    }
    Ok(())
}

/// The index of the u32 buffer `name` of `module`, declared if it is not yet.
pub(crate) fn u32_buffer(module: &mut Module, name: &str) -> u32 {
    let index = module.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| {
        module.buffers.push(drs_ir::BufferDecl { name: name.to_owned(), elem: Ty::U32 });
        module.buffers.len() - 1
    });
    index as u32
}

fn null_function(decl: &ExternDecl) -> Function {
    let mut f = Function::new(decl.name.clone());
    f.result_types = decl.results.clone();
    let signatures = Signatures::default();
    let mut b = Builder::new(&mut f, &signatures);
    let null = b.u32(NULL_HANDLE);
    b.finish(vec![null]);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_interp::Interpreter;

    /// Mitsuba's uniform emitter selection over `n` emitters for sample `u`: the index, the
    /// reciprocal selection probability and the sample rescaled for reuse.
    fn expected_selection(n: u32, u: f32) -> (Option<usize>, f32, f32) {
        if n == 0 {
            return (None, 0.0, u);
        }
        let scaled = u * n as f32;
        let index = (scaled as usize).min(n as usize - 1);
        (Some(index), n as f32, (scaled - index as f32).clamp(0.0, 1.0 - f32::EPSILON / 2.0))
    }

    /// The linker's emitter-table functions, run by the interpreter over tables of 0 to 5
    /// emitters, give Mitsuba's selection bit for bit, also at the ends of [0, 1).
    #[test]
    fn emitter_table_functions_select_emitters_uniformly() {
        let mut module = Module::default();
        let signature = |name: &str, params: &[Ty], results: &[Ty]| ExternDecl {
            name: name.to_owned(),
            params: params.to_vec(),
            results: results.to_vec(),
        };
        let decls = [
            signature("Scene::sample_emitter", &[Ty::U32, Ty::F32], &[Ty::U32, Ty::F32, Ty::F32]),
            signature("Scene::emitter_selection_pdf", &[Ty::U32, Ty::U32], &[Ty::F32]),
            signature("Scene::environment", &[Ty::U32], &[Ty::U32]),
            signature("Scene::emitter_count", &[Ty::U32], &[Ty::U32]),
        ];
        let [sample, pdf, environment, count] =
            decls.map(|decl| emitter_table_function(&mut module, &decl).map(|f| module.add_function(f)).unwrap());
        let wrong = signature("Scene::emitter_count", &[Ty::U32], &[Ty::F32]);
        assert!(emitter_table_function(&mut module, &wrong).is_err());
        assert_eq!(module.buffers.len(), 1, "one table for all four");

        let samples = [0.0, 0.2, 0.25, 0.5, 0.75, 0.999, 1.0f32.next_down()];
        for n in 0..=5u32 {
            let handles: Vec<u32> = (0..n).map(|i| handle(i % 2, 10 + i)).collect();
            let env = if n > 2 { handles[2] } else { NULL_HANDLE };
            let mut interp = Interpreter::new(&module);
            interp.buffers[0] = emitter_table(&handles, env);
            assert_eq!(interp.call(environment, &[0]).unwrap(), [env]);
            assert_eq!(interp.call(count, &[0]).unwrap(), [n]);
            let selection_pdf = if n == 0 { 0.0 } else { 1.0 / n as f32 };
            for h in &handles {
                assert_eq!(interp.call(pdf, &[0, *h]).unwrap(), [selection_pdf.to_bits()]);
            }
            assert_eq!(interp.call(pdf, &[0, NULL_HANDLE]).unwrap(), [0]);
            for u in samples {
                let (index, inv_pdf, reused) = expected_selection(n, u);
                let emitter = index.map_or(NULL_HANDLE, |i| handles[i]);
                let got = interp.call(sample, &[0, u.to_bits()]).unwrap();
                assert_eq!(got, [emitter, inv_pdf.to_bits(), reused.to_bits()], "{n} emitters, u = {u}");
            }
        }
    }
}
