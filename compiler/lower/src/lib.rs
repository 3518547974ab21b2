//! Lowering of checked `.drs` programs to the drs IR.
//!
//! [`lower_program`] turns every function with a body of a checked [`Program`] (one without
//! diagnostics) into an IR [`Function`](drs_ir::Function) over scalars:
//!
//! - values are flattened into scalars ([`layout`]): a `vec3` is three f32, a struct the
//!   concatenation of its fields, a handle one u32;
//! - locals become SSA values: assignments rebind them, `if` yields the values of the locals
//!   its branches assign, loops carry the locals their bodies assign (`control.rs`);
//! - `break`, `continue` and `return` become flags: the statements after a possible jump run
//!   under `if !jumped`, a loop continues while no `break` or `return` happened, and the
//!   function's result is chosen at its end;
//! - operators, built-in functions and constructors become scalar IR operations (matrix
//!   products as sums of products, left to right, without fused multiply-adds, so that every
//!   backend computes the same results);
//! - calls of `extern fn`s become [`drs_ir::Op::CallExtern`]; calls through plugin
//!   references and textures become calls of the extern `{kind}::{method}` with the handle
//!   first (the runtime links them to a dispatch); plugin methods take a hidden first
//!   parameter `instance: u32` and read a plugin `param` with one [`drs_ir::Op::Load`] per
//!   scalar from the buffer `{Plugin}.{param}[{k}]` at index `instance`.
//!
//! Functions are lowered independently: one that uses a construct this stage does not lower
//! yet (`fwd_diff`/`bwd_diff`, lowered by the future autodiff stage) is reported in
//! [`Lowered::errors`], together with the functions that call it, and the rest of the program
//! still lowers.

mod analysis;
mod builtins;
mod calls;
mod control;
mod emit;
mod env;
mod expr;
mod func;
pub mod layout;
mod module;
mod operators;
mod stmt;

pub use layout::{split_call, HostValue, Layout};
pub use module::{lower_program, FnLayout, Lowered, ParamLayout, PluginLayout, TENSOR_BUFFERS};

use drs_diagnostics::{SourceMap, Span};
use drs_ir::FuncId;
use drs_sema::program::FnId;
use drs_sema::{LoadOptions, Program};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// Why a function could not be lowered.
#[derive(Clone, Debug, PartialEq)]
pub enum LowerError {
    /// A construct this stage does not lower (yet): `fwd_diff`/`bwd_diff` calls, jumps inside
    /// a `while` condition.
    Unsupported { function: String, span: Span, message: String },
    /// The function calls a function that could not be lowered.
    Dependency { function: String, span: Span, message: String },
    /// The checked program broke an invariant the lowering relies on (a missing type or
    /// resolution): a bug in the checker or in the lowering.
    Internal { function: String, span: Span, message: String },
}

impl LowerError {
    /// The IR name of the function being lowered (`lerp`, `Frame::to_local`).
    pub fn function(&self) -> &str {
        match self {
            LowerError::Unsupported { function, .. }
            | LowerError::Dependency { function, .. }
            | LowerError::Internal { function, .. } => function,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            LowerError::Unsupported { span, .. }
            | LowerError::Dependency { span, .. }
            | LowerError::Internal { span, .. } => *span,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            LowerError::Unsupported { message, .. }
            | LowerError::Dependency { message, .. }
            | LowerError::Internal { message, .. } => message,
        }
    }

    /// `file:line:column: message (in `function`)`.
    pub fn render(&self, sources: &SourceMap) -> String {
        let span = self.span();
        let file = sources.get(span.file);
        let at = file.line_col(span.start as usize);
        format!("{}:{}:{}: {self}", file.name, at.line, at.column)
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            LowerError::Unsupported { .. } => "cannot lower",
            LowerError::Dependency { .. } => "cannot lower",
            LowerError::Internal { .. } => "internal lowering error",
        };
        write!(f, "{what} `{}`: {}", self.function(), self.message())
    }
}

impl std::error::Error for LowerError {}

/// A checked and lowered program, with its sources for rendering errors.
pub struct LoweredProgram {
    pub sources: SourceMap,
    pub program: Program,
    pub lowered: Lowered,
}

impl LoweredProgram {
    /// The function whose path (`lerp`, `Frame::to_local`, `Diffuse::eval`) is `path`; a
    /// function of a root file wins over a same-named one of an imported module.
    pub fn find_fn(&self, path: &str) -> Option<FnId> {
        let matches = |f: &FnId| {
            self.program.fn_path(*f) == path || self.lowered.module.function(self.lowered.functions[f]).name == path
        };
        let mut candidates: Vec<FnId> = self.lowered.functions.keys().copied().filter(matches).collect();
        candidates.sort_by_key(|&f| (self.program.modules[self.program.functions[f].module].is_stdlib, f));
        candidates.first().copied()
    }

    /// The derivative of function `f` in `mode`, generated from its body into the module
    /// (with the derivatives of its callees) or reused. Custom derivatives of `f`'s callees
    /// are called; `f`'s own is not (this is the automatic derivative).
    pub fn derivative(&mut self, f: FnId, mode: drs_ad::Mode) -> Result<FuncId, LowerError> {
        let id = *self.lowered.functions.get(&f).ok_or_else(|| LowerError::Unsupported {
            function: self.program.fn_path(f),
            span: self.program.functions[f].name_span,
            message: "the function has no IR (it could not be lowered)".into(),
        })?;
        let mut differentiator = drs_ad::Differentiator::new(&mut self.lowered.module, &mut self.lowered.ad);
        differentiator.derivative(id, mode).map_err(|e| {
            let mut spans: HashMap<FuncId, Span> = HashMap::new();
            for (&fn_id, &func) in &self.lowered.functions {
                spans.insert(func, self.program.functions[fn_id].name_span);
            }
            let origins: Vec<(String, Span)> = self
                .lowered
                .module
                .functions
                .iter()
                .enumerate()
                .map(|(i, g)| (g.name.clone(), spans.get(&FuncId(i as u32)).copied().unwrap_or_default()))
                .collect();
            module::ad_error(e, &origins, &self.lowered.loop_spans, mode)
        })
    }

    /// The lowering errors, rendered one per line.
    pub fn render_errors(&self) -> String {
        self.lowered.errors.iter().map(|e| e.render(&self.sources) + "\n").collect()
    }

    /// Parses a call written as text, `f(1.0, vec3(1.0, 2.0, 3.0))`: finds the function and
    /// flattens the arguments against its parameter types into one lane of argument bits.
    /// Plugin methods get instance 0.
    pub fn prepare_call(&self, call: &str) -> Result<PreparedCall, String> {
        let (name, arg_texts) = split_call(call)?;
        let f = self.find_fn(&name).ok_or_else(|| match self.lowered.errors.iter().find(|e| e.function() == name) {
            Some(e) => e.to_string(),
            None => format!("no function `{name}` with a body in the program"),
        })?;
        let layout = FnLayout::of(&self.program, f);
        if arg_texts.len() != layout.params.len() {
            return Err(format!("`{name}` takes {} arguments, {} given", layout.params.len(), arg_texts.len()));
        }
        let mut args = Vec::new();
        if layout.instance {
            args.push(0);
        }
        for ((pname, playout), text) in layout.params.iter().zip(&arg_texts) {
            let value = playout.parse(text).map_err(|e| format!("argument `{pname}`: {e}"))?;
            args.extend(playout.flatten(&value)?);
        }
        Ok(PreparedCall { function: self.lowered.functions[&f], args, result: layout.ret })
    }

    /// Evaluates a call written as text with the reference interpreter (see
    /// [`LoweredProgram::prepare_call`]). `setup` may bind extern functions and fill buffers.
    pub fn eval_call(&self, call: &str, setup: impl FnOnce(&mut drs_interp::Interpreter)) -> Result<HostValue, String> {
        let call = self.prepare_call(call)?;
        let mut interp = drs_interp::Interpreter::new(&self.lowered.module);
        setup(&mut interp);
        let out = interp.call(call.function, &call.args).map_err(|t| t.to_string())?;
        Ok(call.result.unflatten(&out))
    }
}

/// A call ready to run: the IR function, one lane of argument bits, and how to read the result.
pub struct PreparedCall {
    pub function: FuncId,
    pub args: Vec<u32>,
    pub result: Layout,
}

/// Checks one in-memory source (imports resolve against the stdlib directory) and lowers it.
/// Diagnostics are returned rendered as the error; lowering errors are in
/// [`Lowered::errors`].
pub fn lower_source(name: &str, text: &str, options: &LoadOptions) -> Result<LoweredProgram, String> {
    finish(drs_sema::check_source(name, text, options))
}

/// Reads, checks and lowers files (see [`lower_source`]).
pub fn lower_files(paths: &[PathBuf], options: &LoadOptions) -> Result<LoweredProgram, String> {
    let checked = drs_sema::check_files(paths, options).map_err(|(p, e)| format!("{}: {e}", p.display()))?;
    finish(checked)
}

fn finish(checked: drs_sema::Checked) -> Result<LoweredProgram, String> {
    if !checked.diagnostics.is_empty() {
        return Err(drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false));
    }
    let lowered = lower_program(&checked.program);
    Ok(LoweredProgram { sources: checked.sources, program: checked.program, lowered })
}
