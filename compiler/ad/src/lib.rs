//! Automatic differentiation of IR functions: forward mode (Jacobian–vector products) and
//! reverse mode (vector–Jacobian products) as IR-to-IR transforms.
//!
//! A [`Differentiator`] adds derivative functions to a [`Module`] on demand and reuses them:
//! the derivative of a function that calls `g` calls the derivative of `g` (generated once),
//! or `g`'s custom derivative when it has one ([`FnDiff::custom_fwd`], [`FnDiff::custom_bwd`]).
//!
//! Signatures, for a function `f(p1..pn) -> (r1..rm)` whose *tangent parameters* are the
//! `pi` marked in [`FnDiff::tangent_params`]:
//!
//! - `fwd(f)(p1..pn, dpi..) -> (r1..rm, dr1..drm)`: tangents of the results (zero for
//!   integer and boolean results);
//! - `bwd(f)(p1..pn, ar1..arm) -> (api..)`: adjoints of the tangent parameters (zero for
//!   integer and boolean ones) given adjoints of the results.
//!
//! These are the flattened forms of `fwd_diff(f)` and `bwd_diff(f)` in the language.
//!
//! What carries derivatives ([`activity`]): f32 values that depend on a tangent parameter, on
//! a differentiable buffer (a scene parameter; [`AdInfo::buffers`]) or on a differentiable
//! host function ([`AdInfo::externs`]). `Detach` stops derivatives, `ReplaceGrad(a, b)` takes
//! the derivative of `b`. Reading a differentiable buffer has as tangent the same element of
//! its tangent buffer (`{name}.tangent`) and as adjoint a scatter-add into its gradient buffer
//! (`{name}.grad`), both declared on demand. A differentiable host function `h` has host
//! derivatives `fwd_diff(h)` (arguments, then a tangent for every argument; results, then a
//! tangent for every result) and `bwd_diff(h)` (arguments, then an adjoint for every result;
//! an adjoint for every argument), which the runtime provides.
//!
//! Reverse mode runs the primal once (a *forward sweep*, keeping the values the reverse sweep
//! reads) and then propagates adjoints backwards. Values computed inside `if` branches are
//! yielded out of them; values computed inside loops are kept per iteration in local arrays
//! (the tape), which needs a `@max_iters(N)` bound on every loop whose values carry
//! derivatives. Callees are differentiated separately and recompute their primal, except
//! callees with effects (host calls, buffer writes), which are inlined so that their effects
//! happen once.

mod activity;
mod emit;
mod forward;
mod inline;
mod reverse;
mod rules;

use drs_ir::{BufferDecl, ExternDecl, FuncId, Function, Module, Ty};
use std::collections::HashMap;
use std::fmt;

/// Differentiation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Forward mode, `fwd_diff`.
    Fwd,
    /// Reverse mode, `bwd_diff`.
    Bwd,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fwd => "fwd_diff",
            Mode::Bwd => "bwd_diff",
        }
    }
}

/// A custom derivative: the function to call instead of differentiating the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomDerivative {
    pub func: FuncId,
    /// The primal is a plugin method (hidden instance first) and the custom derivative is not:
    /// the instance is not passed.
    pub drop_instance: bool,
}

/// What the differentiator needs to know about one function of the module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FnDiff {
    /// Per IR parameter: whether the derivative has a tangent/adjoint for it (the parameter
    /// belongs to a differentiable, non-`@no_diff` source parameter). Integer and boolean
    /// parameters may be marked; their tangents are ignored and their adjoints are zero.
    pub tangent_params: Vec<bool>,
    pub custom_fwd: Option<CustomDerivative>,
    pub custom_bwd: Option<CustomDerivative>,
}

/// Differentiation facts about a module, indexed like its functions, externs and buffers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdInfo {
    pub functions: Vec<FnDiff>,
    /// Whether each host function is differentiable (else its results carry no derivatives).
    pub externs: Vec<bool>,
    /// Whether each buffer is a differentiable scene parameter.
    pub buffers: Vec<bool>,
}

impl AdInfo {
    /// Facts for a module where every f32 parameter of every function is a tangent
    /// parameter, no function has a custom derivative, and no extern or buffer is
    /// differentiable.
    pub fn all_params(module: &Module) -> AdInfo {
        AdInfo {
            functions: module
                .functions
                .iter()
                .map(|f| FnDiff {
                    tangent_params: f.params.iter().map(|p| f.ty(p.value) == Ty::F32).collect(),
                    ..FnDiff::default()
                })
                .collect(),
            externs: vec![false; module.externs.len()],
            buffers: vec![false; module.buffers.len()],
        }
    }
}

/// Why a derivative could not be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum AdError {
    /// Reverse mode of a loop whose values carry derivatives and that has no `@max_iters`
    /// bound. `loop_index` counts the loops of `function` in pre-order (a loop before the
    /// loops it contains, in the order the lowering emits them).
    UnboundedLoop { function: FuncId, loop_index: usize, required_by: FuncId },
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdError::UnboundedLoop { function, loop_index, .. } => write!(
                f,
                "loop {loop_index} of function {} has no `@max_iters` bound and cannot be reverse-differentiated",
                function.0
            ),
        }
    }
}

impl std::error::Error for AdError {}

/// Generates derivative functions into a module, on demand, each once.
pub struct Differentiator<'m> {
    module: &'m mut Module,
    info: &'m mut AdInfo,
    /// Generated or reserved derivatives.
    done: HashMap<(FuncId, Mode), FuncId>,
    /// Reserved derivatives whose bodies are not generated yet.
    pending: Vec<(FuncId, Mode, FuncId)>,
    /// Derivative host functions and companion buffers declared so far.
    extern_derivatives: HashMap<(u32, Mode), u32>,
    companion_buffers: HashMap<(u32, Mode), u32>,
}

impl<'m> Differentiator<'m> {
    pub fn new(module: &'m mut Module, info: &'m mut AdInfo) -> Self {
        let done = HashMap::new();
        Differentiator {
            module,
            info,
            done,
            pending: Vec::new(),
            extern_derivatives: HashMap::new(),
            companion_buffers: HashMap::new(),
        }
    }

    /// The derivative of `f` in `mode`, generated with every derivative it needs (reused
    /// if it exists). This always differentiates `f`'s body: a custom derivative of `f` is
    /// used for calls of `f` inside other derivatives, so that it can be checked against the
    /// automatic one.
    ///
    /// On error the module is left as it was.
    pub fn derivative(&mut self, f: FuncId, mode: Mode) -> Result<FuncId, AdError> {
        if let Some(&id) = self.done.get(&(f, mode)) {
            return Ok(id);
        }
        let snapshot = self.snapshot();
        let id = self.reserve(f, mode);
        self.generate_pending(f).map_err(|e| self.restore(snapshot, e))?;
        Ok(id)
    }

    /// Generates the derivative of `f` into function `id`, a placeholder the caller added
    /// to the module (calls of it may already exist). On error the module is left as it was,
    /// with the placeholder unchanged.
    pub fn derivative_into(&mut self, f: FuncId, mode: Mode, id: FuncId) -> Result<(), AdError> {
        let snapshot = self.snapshot();
        let placeholder = self.module.function(id).clone();
        let placeholder_facts = self.info.functions[id.0 as usize].clone();
        *self.module.function_mut(id) = self.signature(f, mode);
        self.info.functions[id.0 as usize] = self.derivative_facts(f, mode);
        self.done.insert((f, mode), id);
        self.pending.push((f, mode, id));
        self.generate_pending(f).map_err(|e| {
            *self.module.function_mut(id) = placeholder;
            self.info.functions[id.0 as usize] = placeholder_facts;
            self.done.remove(&(f, mode));
            self.restore(snapshot, e)
        })
    }

    fn snapshot(&self) -> [usize; 3] {
        [self.module.functions.len(), self.module.externs.len(), self.module.buffers.len()]
    }

    /// Drops what was added since `snapshot`; returns `error` for convenience.
    fn restore(&mut self, [functions, externs, buffers]: [usize; 3], error: AdError) -> AdError {
        self.module.functions.truncate(functions);
        self.module.externs.truncate(externs);
        self.module.buffers.truncate(buffers);
        self.info.functions.truncate(functions);
        self.info.externs.truncate(externs);
        self.info.buffers.truncate(buffers);
        self.done.retain(|_, id| (id.0 as usize) < functions);
        self.extern_derivatives.retain(|_, id| (*id as usize) < externs);
        self.companion_buffers.retain(|_, id| (*id as usize) < buffers);
        self.pending.clear();
        error
    }

    /// The derivative the transform calls for a call of `f`: its custom derivative if it has
    /// one, else the generated one (reserved now, generated before [`Self::derivative`]
    /// returns).
    pub(crate) fn callee_derivative(&mut self, f: FuncId, mode: Mode) -> (FuncId, bool) {
        let custom = match mode {
            Mode::Fwd => self.info.functions[f.0 as usize].custom_fwd,
            Mode::Bwd => self.info.functions[f.0 as usize].custom_bwd,
        };
        match custom {
            Some(c) => (c.func, c.drop_instance),
            None => (self.reserve(f, mode), false),
        }
    }

    fn reserve(&mut self, f: FuncId, mode: Mode) -> FuncId {
        if let Some(&id) = self.done.get(&(f, mode)) {
            return id;
        }
        let signature = self.signature(f, mode);
        let id = self.module.add_function(signature);
        let facts = self.derivative_facts(f, mode);
        self.info.functions.push(facts);
        self.done.insert((f, mode), id);
        self.pending.push((f, mode, id));
        id
    }

    fn generate_pending(&mut self, requested: FuncId) -> Result<(), AdError> {
        while let Some((f, mode, id)) = self.pending.pop() {
            let function = match mode {
                Mode::Fwd => forward::differentiate(self, f, id),
                Mode::Bwd => reverse::differentiate(self, f, id).map_err(|e| match e {
                    AdError::UnboundedLoop { function, loop_index, .. } => {
                        AdError::UnboundedLoop { function, loop_index, required_by: requested }
                    }
                })?,
            };
            *self.module.function_mut(id) = function;
        }
        Ok(())
    }

    /// Differentiation facts of `f`'s derivative, so that code calling it can be
    /// differentiated too (higher-order derivatives): its primal parameters are tangent
    /// parameters where `f`'s are, and its tangents or adjoints all are (the derivative is
    /// linear in them).
    fn derivative_facts(&self, f: FuncId, mode: Mode) -> FnDiff {
        let primal = self.module.function(f);
        let mut tangent_params = self.info.functions[f.0 as usize].tangent_params.clone();
        let extra = match mode {
            Mode::Fwd => tangent_params.iter().filter(|&&t| t).count(),
            Mode::Bwd => primal.result_types.len(),
        };
        tangent_params.extend(std::iter::repeat_n(true, extra));
        FnDiff { tangent_params, custom_fwd: None, custom_bwd: None }
    }

    /// An empty function with the signature of `f`'s derivative (see the crate docs).
    fn signature(&self, f: FuncId, mode: Mode) -> Function {
        let primal = self.module.function(f);
        let mut out = Function::new(format!("{}({})", mode.name(), primal.name));
        for p in &primal.params {
            out.add_param(p.name.clone(), primal.ty(p.value));
        }
        let tangent_params = &self.info.functions[f.0 as usize].tangent_params;
        match mode {
            Mode::Fwd => {
                for (p, _) in primal.params.iter().zip(tangent_params).filter(|(_, &t)| t) {
                    out.add_param(format!("d{}", p.name), primal.ty(p.value));
                }
                out.result_types = primal.result_types.repeat(2);
            }
            Mode::Bwd => {
                for (k, &ty) in primal.result_types.iter().enumerate() {
                    out.add_param(format!("dout.{k}"), ty);
                }
                out.result_types = primal
                    .params
                    .iter()
                    .zip(tangent_params)
                    .filter(|(_, &t)| t)
                    .map(|(p, _)| primal.ty(p.value))
                    .collect();
            }
        }
        out
    }

    /// The host derivative of extern `ext` in `mode`, declared on first use.
    pub(crate) fn extern_derivative(&mut self, ext: u32, mode: Mode) -> u32 {
        if let Some(&id) = self.extern_derivatives.get(&(ext, mode)) {
            return id;
        }
        let primal = &self.module.externs[ext as usize];
        let decl = match mode {
            Mode::Fwd => ExternDecl {
                name: format!("fwd_diff({})", primal.name),
                params: primal.params.repeat(2),
                results: primal.results.repeat(2),
            },
            Mode::Bwd => ExternDecl {
                name: format!("bwd_diff({})", primal.name),
                params: [primal.params.as_slice(), primal.results.as_slice()].concat(),
                results: primal.params.clone(),
            },
        };
        let id = match self.module.externs.iter().position(|e| *e == decl) {
            Some(i) => i as u32,
            None => {
                self.module.externs.push(decl);
                self.info.externs.push(false);
                self.module.externs.len() as u32 - 1
            }
        };
        self.extern_derivatives.insert((ext, mode), id);
        id
    }

    /// The tangent (forward) or gradient (reverse) buffer of differentiable buffer `buffer`.
    pub(crate) fn companion_buffer(&mut self, buffer: u32, mode: Mode) -> u32 {
        if let Some(&id) = self.companion_buffers.get(&(buffer, mode)) {
            return id;
        }
        let primal = &self.module.buffers[buffer as usize].name;
        let name = match mode {
            Mode::Fwd => tangent_buffer_name(primal),
            Mode::Bwd => gradient_buffer_name(primal),
        };
        let id = match self.module.buffers.iter().position(|b| b.name == name) {
            Some(i) => i as u32,
            None => {
                self.module.buffers.push(BufferDecl { name, elem: Ty::F32 });
                self.info.buffers.push(false);
                self.module.buffers.len() as u32 - 1
            }
        };
        self.companion_buffers.insert((buffer, mode), id);
        id
    }
}

/// The name of the tangent buffer of a differentiable buffer.
pub fn tangent_buffer_name(buffer: &str) -> String {
    format!("{buffer}.tangent")
}

/// The name of the gradient buffer of a differentiable buffer.
pub fn gradient_buffer_name(buffer: &str) -> String {
    format!("{buffer}.grad")
}
