//! The module-level part of lowering: which IR functions, externs and buffers a program
//! has, lowering each function, and assembling the module from the functions that lowered.

use crate::func::{self, FnLowerer};
use crate::layout::{flat_types, HostValue, Layout};
use crate::LowerError;
use drs_diagnostics::Span;
use drs_ir::*;
use drs_sema::program::{FnId, FnOwner, PluginId};
use drs_sema::types::{PluginKind, Type};
use drs_sema::Program;
use drs_syntax::ast::{self, DiffMode};
use std::collections::{BTreeSet, HashMap};

/// The IR of a program, with what callers need to call it and to fill its buffers.
pub struct Lowered {
    /// The functions that lowered, the externs they call and the plugin parameter buffers.
    pub module: Module,
    /// The IR function of each `.drs` function with a body that lowered.
    pub functions: HashMap<FnId, FuncId>,
    /// The extern of each `extern fn` (indices into `module.externs`).
    pub externs: HashMap<FnId, u32>,
    /// Parameter buffers of each plugin, indexed by `PluginId`.
    pub plugins: Vec<PluginLayout>,
    /// The functions that could not be lowered, and why.
    pub errors: Vec<LowerError>,
    /// Differentiation facts of the module, for generating more derivatives later
    /// ([`drs_ad::Differentiator`]).
    pub ad: drs_ad::AdInfo,
    /// Per function: the spans of its loops in pre-order (empty for generated functions).
    pub loop_spans: Vec<Vec<Span>>,
}

impl Lowered {
    /// Whether every function lowered.
    pub fn is_complete(&self) -> bool {
        self.errors.is_empty()
    }
}

/// The parameters of a plugin as the runtime stores them.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginLayout {
    /// The plugin's name as used in IR names (qualified by its module if two plugins share it).
    pub name: String,
    pub kind: PluginKind,
    pub params: Vec<ParamLayout>,
}

/// One plugin `param`: one buffer per scalar, indexed by instance.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamLayout {
    pub name: String,
    /// The parameter's layout (a texture or plugin reference is one handle).
    pub layout: Layout,
    /// `module.buffers` index of each scalar of `layout`, named `{Plugin}.{param}[{k}]`. For a
    /// `Tensor` ([`Layout::Tensor`]), the five buffers of [`TENSOR_BUFFERS`].
    pub buffers: Vec<u32>,
    /// The value of the default (for `Texture<T>`, the constant texture's `T` value).
    pub default: Option<HostValue>,
    pub no_diff: bool,
    /// `@choice(..)`: the words a scene gives for this `u32` param, the value being the index.
    pub choices: Vec<String>,
    /// `@derived(..)`: a `Tensor` param the runtime computes instead of the scene giving it.
    pub derived: Option<drs_sema::program::Derivation>,
}

/// The buffers of a `Tensor` param `{Plugin}.{param}`, in [`ParamLayout::buffers`] order: the
/// f32 data of every instance back to back (named `{Plugin}.{param}`), then per instance the
/// offset of its first element and its three dimensions (height, width, channels; u32,
/// named with these suffixes). Every instance has at least one element.
pub const TENSOR_BUFFERS: [(&str, Ty); 5] =
    [("", Ty::F32), (".offset", Ty::U32), (".shape[0]", Ty::U32), (".shape[1]", Ty::U32), (".shape[2]", Ty::U32)];

/// How a function's arguments and result are flattened.
#[derive(Clone, Debug, PartialEq)]
pub struct FnLayout {
    /// Plugin methods take the instance index as a hidden first u32.
    pub instance: bool,
    pub params: Vec<(String, Layout)>,
    pub ret: Layout,
}

impl FnLayout {
    pub fn of(program: &Program, f: FnId) -> FnLayout {
        let def = &program.functions[f];
        FnLayout {
            instance: matches!(def.owner, FnOwner::Plugin(_)),
            params: def.params.iter().map(|p| (p.name.clone(), Layout::of(program, &p.ty))).collect(),
            ret: Layout::of(program, &def.ret),
        }
    }

    /// The number of IR parameters (the instance included).
    pub fn arg_count(&self) -> usize {
        usize::from(self.instance) + self.params.iter().map(|(_, l)| l.len()).sum::<usize>()
    }
}

/// What all function lowerings share: the program, the planned functions and the externs
/// and buffers declared so far.
pub(crate) struct ModuleCx<'p> {
    pub(crate) program: &'p Program,
    /// Provisional ids (positions in the plan) of the functions with bodies.
    pub(crate) fn_ids: HashMap<FnId, FuncId>,
    /// IR name of every function (also of externs).
    pub(crate) names: HashMap<FnId, String>,
    pub(crate) externs: Vec<ExternDecl>,
    extern_ids: HashMap<String, u32>,
    pub(crate) fn_externs: HashMap<FnId, u32>,
    pub(crate) buffers: Vec<BufferDecl>,
    pub(crate) param_buffers: HashMap<(PluginId, usize), Vec<u32>>,
    /// `fwd_diff(f)`/`bwd_diff(f)` called without a custom derivative: their provisional ids
    /// follow the planned functions'.
    derivative_requests: Vec<(FnId, DiffMode)>,
}

impl<'p> ModuleCx<'p> {
    /// The provisional id of the generated derivative of `f`, requested on first use.
    pub(crate) fn derivative_id(&mut self, f: FnId, mode: DiffMode) -> FuncId {
        let k = match self.derivative_requests.iter().position(|&r| r == (f, mode)) {
            Some(k) => k,
            None => {
                self.derivative_requests.push((f, mode));
                self.derivative_requests.len() - 1
            }
        };
        FuncId((self.fn_ids.len() + k) as u32)
    }

    /// The extern named `name`, declared on first use. The same name with another signature
    /// is an internal error.
    pub(crate) fn extern_id(&mut self, name: &str, params: Vec<Ty>, results: Vec<Ty>) -> Result<u32, String> {
        if let Some(&id) = self.extern_ids.get(name) {
            let decl = &self.externs[id as usize];
            if decl.params != params || decl.results != results {
                return Err(format!("the extern `{name}` is used with two different signatures"));
            }
            return Ok(id);
        }
        let id = self.externs.len() as u32;
        self.externs.push(ExternDecl { name: name.to_string(), params, results });
        self.extern_ids.insert(name.to_string(), id);
        Ok(id)
    }
}

/// Names for the items of a program, qualified by their module where two share a name.
fn ir_names(program: &Program) -> (HashMap<FnId, String>, Vec<String>) {
    let is_stdlib = |f: FnId| program.modules[program.functions[f].module].is_stdlib;
    let mut count: HashMap<String, usize> = HashMap::new();
    let mut user_count: HashMap<String, usize> = HashMap::new();
    for f in 0..program.functions.len() {
        *count.entry(program.fn_path(f)).or_default() += 1;
        *user_count.entry(program.fn_path(f)).or_default() += usize::from(!is_stdlib(f));
    }
    let names = (0..program.functions.len())
        .map(|f| {
            let path = program.fn_path(f);
            // Plugin names are qualified below, and methods follow them.
            let plugin_name = match program.functions[f].owner {
                FnOwner::Plugin(p) => Some(plugin_name(program, p)),
                _ => None,
            };
            let name = match plugin_name {
                Some(p) => format!("{p}::{}", program.functions[f].name),
                // A name shared with functions of other modules: a function of a user
                // module keeps it if it is the only one outside the stdlib.
                None if count[&path] > 1 && (is_stdlib(f) || user_count[&path] > 1) => {
                    format!("{}::{path}", program.modules[program.functions[f].module].name)
                }
                None => path,
            };
            (f, name)
        })
        .collect();
    let plugins = (0..program.plugins.len()).map(|p| plugin_name(program, p)).collect();
    (names, plugins)
}

fn plugin_name(program: &Program, p: PluginId) -> String {
    let def = &program.plugins[p];
    if program.plugins.iter().filter(|q| q.name == def.name).count() > 1 {
        format!("{}::{}", program.modules[def.module].name, def.name)
    } else {
        def.name.clone()
    }
}

/// Lowers every function with a body of a checked program (one without diagnostics).
///
/// A function that cannot be lowered is left out of the module and reported in
/// [`Lowered::errors`]; so is every function that calls it, directly or not.
pub fn lower_program(program: &Program) -> Lowered {
    let (names, plugin_names) = ir_names(program);
    let planned: Vec<FnId> = (0..program.functions.len())
        .filter(|&f| {
            let def = &program.functions[f];
            !def.is_extern && !matches!(def.owner, FnOwner::Interface(_)) && program.fn_decl(f).body.is_some()
        })
        .collect();
    let mut cx = ModuleCx {
        program,
        fn_ids: planned.iter().enumerate().map(|(i, &f)| (f, FuncId(i as u32))).collect(),
        names,
        externs: Vec::new(),
        extern_ids: HashMap::new(),
        fn_externs: HashMap::new(),
        buffers: Vec::new(),
        param_buffers: HashMap::new(),
        derivative_requests: Vec::new(),
    };
    let mut errors = Vec::new();
    // The program's externs, in declaration order.
    for f in 0..program.functions.len() {
        let def = &program.functions[f];
        if def.is_extern {
            let params = def.params.iter().flat_map(|p| flat_types(program, &p.ty)).collect();
            let results = flat_types(program, &def.ret);
            let name = cx.names[&f].clone();
            match cx.extern_id(&name, params, results) {
                Ok(id) => {
                    cx.fn_externs.insert(f, id);
                }
                Err(message) => errors.push(LowerError::Internal { function: name, span: def.name_span, message }),
            }
        }
    }
    // One buffer per scalar of each plugin parameter; a tensor's data and shape buffers.
    let mut plugins = Vec::new();
    for (p, def) in program.plugins.iter().enumerate() {
        let mut params = Vec::new();
        for (i, param) in def.params.iter().enumerate() {
            let layout = Layout::of(program, &param.ty);
            let base = format!("{}.{}", plugin_names[p], param.name);
            let decls: Vec<BufferDecl> = match layout {
                Layout::Tensor => TENSOR_BUFFERS
                    .iter()
                    .map(|(suffix, ty)| BufferDecl { name: format!("{base}{suffix}"), elem: *ty })
                    .collect(),
                _ => layout
                    .scalar_types()
                    .into_iter()
                    .enumerate()
                    .map(|(k, ty)| BufferDecl { name: format!("{base}[{k}]"), elem: ty })
                    .collect(),
            };
            let mut buffers = Vec::new();
            for decl in decls {
                buffers.push(cx.buffers.len() as u32);
                cx.buffers.push(decl);
            }
            cx.param_buffers.insert((p, i), buffers.clone());
            params.push(ParamLayout {
                name: param.name.clone(),
                layout,
                buffers,
                default: None,
                no_diff: param.no_diff,
                choices: param.choices.clone(),
                derived: param.derived.clone(),
            });
        }
        plugins.push(PluginLayout { name: plugin_names[p].clone(), kind: def.kind, params });
    }

    let mut lowered: Vec<Option<Function>> = Vec::with_capacity(planned.len());
    let mut loop_spans: Vec<Vec<Span>> = Vec::with_capacity(planned.len());
    for &f in &planned {
        match func::lower_function(&mut cx, f) {
            Ok((function, spans)) => {
                lowered.push(Some(function));
                loop_spans.push(spans);
            }
            Err(e) => {
                errors.push(e);
                lowered.push(None);
                loop_spans.push(Vec::new());
            }
        }
    }
    for (p, layout) in plugins.iter_mut().enumerate() {
        for (i, param) in layout.params.iter_mut().enumerate() {
            match param_default(&mut cx, p, i) {
                Ok(v) => param.default = v,
                Err(e) => errors.push(e),
            }
        }
    }
    let mut origins: Vec<(String, Span)> =
        planned.iter().map(|&f| (cx.names[&f].clone(), program.functions[f].name_span)).collect();
    drop_failed_callers(&mut lowered, &origins, &mut errors);

    // Custom derivatives of host functions are not called by the autodiff (it calls the
    // host derivatives `fwd_diff(name)`/`bwd_diff(name)`): say so rather than ignore them.
    let mut extern_fns: Vec<FnId> = cx.fn_externs.keys().copied().collect();
    extern_fns.sort();
    for f in extern_fns {
        let def = &program.functions[f];
        if def.custom_fwd.is_some() || def.custom_bwd.is_some() {
            errors.push(LowerError::Unsupported {
                function: cx.names[&f].clone(),
                span: def.name_span,
                message: "custom derivatives of `extern fn`s are not supported: derivatives call the host \
                          derivatives `fwd_diff(..)`/`bwd_diff(..)` of the extern, which the runtime provides"
                    .into(),
            });
        }
    }

    // Generate the requested derivatives into placeholders at their provisional ids.
    let mut info = ad_info(program, &cx, &planned);
    let mut alive: Vec<bool> = lowered.iter().map(Option::is_some).collect();
    let requests = std::mem::take(&mut cx.derivative_requests);
    let mut module = Module {
        functions: lowered.into_iter().map(|f| f.unwrap_or_else(|| Function::new("<not lowered>"))).collect(),
        externs: cx.externs,
        buffers: cx.buffers,
    };
    for &(f, mode) in &requests {
        let name = format!("{}({})", ad_mode(mode).name(), cx.names[&f]);
        origins.push((name.clone(), program.functions[f].name_span));
        module.add_function(Function::new(name));
        info.functions.push(drs_ad::FnDiff::default());
        alive.push(false);
        loop_spans.push(Vec::new());
    }
    {
        let mut differentiator = drs_ad::Differentiator::new(&mut module, &mut info);
        for (k, &(f, mode)) in requests.iter().enumerate() {
            let id = FuncId((planned.len() + k) as u32);
            let primal = cx.fn_ids[&f];
            if !alive[primal.0 as usize] {
                continue; // Its callers fail below, with the primal's own error reported.
            }
            match differentiator.derivative_into(primal, ad_mode(mode), id) {
                Ok(()) => alive[id.0 as usize] = true,
                Err(e) => errors.push(ad_error(e, &origins, &loop_spans, ad_mode(mode))),
            }
        }
    }
    let first_generated = origins.len();
    for function in &module.functions[first_generated..] {
        origins.push((function.name.clone(), Span::default()));
    }
    alive.resize(module.functions.len(), true);
    loop_spans.resize(module.functions.len(), Vec::new());
    let Module { functions, externs, buffers } = module;
    let mut lowered: Vec<Option<Function>> =
        functions.into_iter().zip(&alive).map(|(f, &alive)| alive.then_some(f)).collect();
    drop_failed_callers(&mut lowered, &origins, &mut errors);

    // Renumber the functions that lowered.
    let mut new_ids: HashMap<FuncId, FuncId> = HashMap::new();
    let mut module_functions = Vec::new();
    let mut kept = Vec::new();
    for (i, function) in lowered.into_iter().enumerate() {
        if let Some(function) = function {
            new_ids.insert(FuncId(i as u32), FuncId(module_functions.len() as u32));
            module_functions.push(function);
            kept.push(i);
        }
    }
    let functions =
        planned.iter().enumerate().filter_map(|(i, f)| Some((*f, *new_ids.get(&FuncId(i as u32))?))).collect();
    for function in &mut module_functions {
        renumber_calls(&mut function.body, &new_ids);
    }
    let ad = drs_ad::AdInfo {
        functions: kept.iter().map(|&i| renumber_fn_diff(&info.functions[i], &new_ids)).collect(),
        externs: info.externs,
        buffers: info.buffers,
    };
    let loop_spans = kept.iter().map(|&i| std::mem::take(&mut loop_spans[i])).collect();
    let module = Module { functions: module_functions, externs, buffers };
    Lowered { module, functions, externs: cx.fn_externs, plugins, errors, ad, loop_spans }
}

fn ad_mode(mode: DiffMode) -> drs_ad::Mode {
    match mode {
        DiffMode::Fwd => drs_ad::Mode::Fwd,
        DiffMode::Bwd => drs_ad::Mode::Bwd,
    }
}

/// Removes the functions that call a function that failed, until nothing changes, with an
/// error for each. `origins` names each function and gives the span to report.
fn drop_failed_callers(lowered: &mut [Option<Function>], origins: &[(String, Span)], errors: &mut Vec<LowerError>) {
    loop {
        let mut changed = false;
        for i in 0..lowered.len() {
            let Some(function) = &lowered[i] else { continue };
            let mut called = BTreeSet::new();
            callees(&function.body, &mut called);
            // Ids past the end are derivatives not generated yet.
            if let Some(bad) = called.into_iter().find(|c| lowered.get(c.0 as usize).is_some_and(Option::is_none)) {
                errors.push(LowerError::Dependency {
                    function: origins[i].0.clone(),
                    span: origins[i].1,
                    message: format!("it calls `{}`, which could not be lowered", origins[bad.0 as usize].0),
                });
                lowered[i] = None;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Differentiation facts of the planned functions (by provisional id), the externs and the
/// parameter buffers.
fn ad_info(program: &Program, cx: &ModuleCx<'_>, planned: &[FnId]) -> drs_ad::AdInfo {
    let is_method = |f: FnId| matches!(program.functions[f].owner, FnOwner::Plugin(_));
    let custom = |f: FnId, g: Option<FnId>| {
        let g = g?;
        Some(drs_ad::CustomDerivative { func: *cx.fn_ids.get(&g)?, drop_instance: is_method(f) && !is_method(g) })
    };
    let functions = planned
        .iter()
        .map(|&f| {
            let def = &program.functions[f];
            let mut tangent_params = vec![false; usize::from(is_method(f))];
            for p in &def.params {
                let differentiable = !p.no_diff && program.is_differentiable(&p.ty);
                tangent_params.extend(std::iter::repeat_n(differentiable, flat_types(program, &p.ty).len()));
            }
            drs_ad::FnDiff {
                tangent_params,
                custom_fwd: custom(f, def.custom_fwd),
                custom_bwd: custom(f, def.custom_bwd),
            }
        })
        .collect();
    // Host functions: `extern fn`s unless `@no_diff`; calls through plugin references are
    // differentiable (the runtime links them to the plugins' derivatives).
    let no_diff_externs: BTreeSet<u32> =
        cx.fn_externs.iter().filter(|(f, _)| program.functions[**f].no_diff).map(|(_, &e)| e).collect();
    let externs = (0..cx.externs.len() as u32).map(|e| !no_diff_externs.contains(&e)).collect();
    let mut buffers = vec![false; cx.buffers.len()];
    for ((p, i), ids) in &cx.param_buffers {
        let param = &program.plugins[*p].params[*i];
        // A tensor's data (its f32 buffer) is differentiable, its offsets and shape are not.
        let differentiable = !param.no_diff && (program.is_differentiable(&param.ty) || param.ty == Type::Tensor);
        for &b in ids {
            buffers[b as usize] = differentiable && cx.buffers[b as usize].elem == Ty::F32;
        }
    }
    drs_ad::AdInfo { functions, externs, buffers }
}

fn renumber_fn_diff(d: &drs_ad::FnDiff, new_ids: &HashMap<FuncId, FuncId>) -> drs_ad::FnDiff {
    let renumber = |c: Option<drs_ad::CustomDerivative>| {
        c.and_then(|c| Some(drs_ad::CustomDerivative { func: *new_ids.get(&c.func)?, ..c }))
    };
    drs_ad::FnDiff {
        tangent_params: d.tangent_params.clone(),
        custom_fwd: renumber(d.custom_fwd),
        custom_bwd: renumber(d.custom_bwd),
    }
}

/// The lowering error for a derivative the autodiff could not generate.
pub(crate) fn ad_error(
    e: drs_ad::AdError,
    origins: &[(String, Span)],
    loop_spans: &[Vec<Span>],
    mode: drs_ad::Mode,
) -> LowerError {
    match e {
        drs_ad::AdError::UnboundedLoop { function, loop_index, required_by } => {
            let (name, fallback) = &origins[function.0 as usize];
            let span =
                loop_spans.get(function.0 as usize).and_then(|s| s.get(loop_index)).copied().unwrap_or(*fallback);
            let requested = &origins[required_by.0 as usize].0;
            LowerError::Unsupported {
                function: name.clone(),
                span,
                message: format!(
                    "`{}({requested})` needs the reverse derivative of this loop, which has no `@max_iters(N)` bound: \
                     add one (the derivative keeps N iterations of state) or give `{name}` a `@custom_bwd`",
                    mode.name()
                ),
            }
        }
    }
}

/// The functions called in a region, nested regions included.
fn callees(region: &Region, out: &mut BTreeSet<FuncId>) {
    for inst in &region.insts {
        match &inst.op {
            Op::Call(f, _) => {
                out.insert(*f);
            }
            Op::If { then, els, .. } => {
                callees(then, out);
                callees(els, out);
            }
            Op::Loop { body, .. } => callees(body, out),
            _ => {}
        }
    }
}

fn renumber_calls(region: &mut Region, new_ids: &HashMap<FuncId, FuncId>) {
    for inst in &mut region.insts {
        match &mut inst.op {
            Op::Call(f, _) => *f = new_ids[f],
            Op::If { then, els, .. } => {
                renumber_calls(then, new_ids);
                renumber_calls(els, new_ids);
            }
            Op::Loop { body, .. } => renumber_calls(body, new_ids),
            _ => {}
        }
    }
}

/// Evaluates the default of parameter `i` of plugin `p`, a constant expression, with the
/// reference interpreter.
fn param_default(cx: &mut ModuleCx<'_>, p: PluginId, i: usize) -> Result<Option<HostValue>, LowerError> {
    let program = cx.program;
    let def = &program.plugins[p];
    let ast::ItemKind::Plugin(decl) = &program.modules[def.module].ast.items[def.item].kind else {
        return Ok(None);
    };
    let param = &def.params[i];
    let Some(default) = decl.params.iter().find(|q| q.name.name == param.name).and_then(|q| q.default.as_ref()) else {
        return Ok(None);
    };
    let value_ty = match &param.ty {
        Type::Texture(inner) => (**inner).clone(),
        other => other.clone(),
    };
    let name = format!("{}.{}.default", def.name, param.name);
    let function = FnLowerer::lower_constant(cx, &name, &def.defaults, default, &value_ty)?;
    let module = Module { functions: vec![function], externs: Vec::new(), buffers: Vec::new() };
    let internal = |message: String| LowerError::Internal { function: name.clone(), span: default.span, message };
    verify_module(&module).map_err(|e| internal(e.to_string()))?;
    let bits = drs_interp::Interpreter::new(&module).call(FuncId(0), &[]).map_err(|t| internal(t.to_string()))?;
    Ok(Some(Layout::of(program, &value_ty).unflatten(&bits)))
}
