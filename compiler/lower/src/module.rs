//! The module-level part of lowering: which IR functions, externs and buffers a program
//! has, lowering each function, and assembling the module from the functions that lowered.

use crate::func::{self, FnLowerer};
use crate::layout::{flat_types, HostValue, Layout};
use crate::LowerError;
use drs_ir::*;
use drs_sema::program::{FnId, FnOwner, PluginId};
use drs_sema::types::{PluginKind, Type};
use drs_sema::Program;
use drs_syntax::ast;
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
    /// `module.buffers` index of each scalar of `layout`, named `{Plugin}.{param}[{k}]`.
    pub buffers: Vec<u32>,
    /// The value of the default (for `Texture<T>`, the constant texture's `T` value).
    pub default: Option<HostValue>,
    pub no_diff: bool,
}

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
}

impl<'p> ModuleCx<'p> {
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
    // One buffer per scalar of each plugin parameter.
    let mut plugins = Vec::new();
    for (p, def) in program.plugins.iter().enumerate() {
        let mut params = Vec::new();
        for (i, param) in def.params.iter().enumerate() {
            let layout = Layout::of(program, &param.ty);
            let mut buffers = Vec::new();
            for (k, ty) in layout.scalar_types().into_iter().enumerate() {
                buffers.push(cx.buffers.len() as u32);
                cx.buffers.push(BufferDecl { name: format!("{}.{}[{k}]", plugin_names[p], param.name), elem: ty });
            }
            cx.param_buffers.insert((p, i), buffers.clone());
            params.push(ParamLayout {
                name: param.name.clone(),
                layout,
                buffers,
                default: None,
                no_diff: param.no_diff,
            });
        }
        plugins.push(PluginLayout { name: plugin_names[p].clone(), kind: def.kind, params });
    }

    let mut lowered: Vec<Option<Function>> = Vec::with_capacity(planned.len());
    for &f in &planned {
        match func::lower_function(&mut cx, f) {
            Ok(function) => lowered.push(Some(function)),
            Err(e) => {
                errors.push(e);
                lowered.push(None);
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

    // Functions that call a function that failed fail too, until nothing changes.
    loop {
        let mut changed = false;
        for i in 0..lowered.len() {
            let Some(function) = &lowered[i] else { continue };
            let mut called = BTreeSet::new();
            callees(&function.body, &mut called);
            if let Some(bad) = called.into_iter().find(|c| lowered[c.0 as usize].is_none()) {
                let f = planned[i];
                let callee = &cx.names[&planned[bad.0 as usize]];
                errors.push(LowerError::Dependency {
                    function: cx.names[&f].clone(),
                    span: program.functions[f].name_span,
                    message: format!("it calls `{callee}`, which could not be lowered"),
                });
                lowered[i] = None;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    // Renumber the functions that lowered.
    let mut new_ids: HashMap<FuncId, FuncId> = HashMap::new();
    let mut functions = HashMap::new();
    let mut module_functions = Vec::new();
    for (i, function) in lowered.into_iter().enumerate() {
        if let Some(function) = function {
            let id = FuncId(module_functions.len() as u32);
            new_ids.insert(FuncId(i as u32), id);
            functions.insert(planned[i], id);
            module_functions.push(function);
        }
    }
    for function in &mut module_functions {
        renumber_calls(&mut function.body, &new_ids);
    }
    let module = Module { functions: module_functions, externs: cx.externs, buffers: cx.buffers };
    Lowered { module, functions, externs: cx.fn_externs, plugins, errors }
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
