//! Lowering one function: its parameters, its body, and the choice of its result between
//! the body's value and a `return`ed one.

use crate::analysis::returns_outside_tail;
use crate::control::{LoopFlags, ReturnSlots};
use crate::emit::Emitter;
use crate::env::{Env, SlotId};
use crate::layout::{flat_len, flat_types, Layout};
use crate::module::ModuleCx;
use crate::LowerError;
use drs_diagnostics::Span;
use drs_ir::{Function, Ty, Value};
use drs_sema::program::{BodyInfo, FnId, FnOwner, LocalId, PluginId};
use drs_sema::types::Type;
use drs_sema::Program;
use drs_syntax::ast::Expr;
use std::collections::HashMap;

pub(crate) type LResult<T> = Result<T, LowerError>;

/// The state of lowering one function body (or one constant expression).
pub(crate) struct FnLowerer<'m, 'p> {
    pub(crate) m: &'m mut ModuleCx<'p>,
    pub(crate) program: &'p Program,
    /// The facts of the body being lowered (swapped for a constant's while lowering its
    /// initialiser).
    pub(crate) info: &'p BodyInfo,
    /// IR name of the function, for errors.
    pub(crate) name: String,
    /// The plugin whose method this is, and its hidden instance parameter.
    pub(crate) plugin: Option<(PluginId, Value)>,
    pub(crate) e: Emitter,
    pub(crate) env: Env,
    /// The local declared by each binding, by the span of its name.
    local_of_span: HashMap<Span, LocalId>,
    /// The `returned` flag and return-value slots, when the body contains a `return`.
    pub(crate) ret: Option<ReturnSlots>,
    /// Jump flags of the enclosing loops, innermost last.
    pub(crate) loops: Vec<LoopFlags>,
    /// Whether a jump may have happened since the last guard: the code lowered next must
    /// run only if none did.
    pub(crate) maybe_jumped: bool,
    /// The span of each loop lowered so far, in the order the loops start (the pre-order of
    /// the IR's loops), for errors of the autodiff about a loop.
    pub(crate) loop_spans: Vec<Span>,
}

/// Lowers a function with a body; also returns the spans of its loops in pre-order.
pub(crate) fn lower_function(m: &mut ModuleCx<'_>, f: FnId) -> LResult<(Function, Vec<Span>)> {
    let program = m.program;
    let def = &program.functions[f];
    let body = program.fn_decl(f).body.as_ref().expect("planned functions have bodies");
    let name = m.names[&f].clone();
    let mut function = Function::new(name.clone());
    let plugin = match def.owner {
        FnOwner::Plugin(p) => Some((p, function.add_param("instance", Ty::U32))),
        _ => None,
    };
    let info = &def.body;
    let mut env = Env::new(info.locals.iter().map(|l| flat_types(program, &l.ty)).collect());
    for (i, p) in def.params.iter().enumerate() {
        let layout = Layout::of(program, &p.ty);
        let values: Vec<Value> = layout
            .component_names(&p.name)
            .into_iter()
            .zip(layout.scalar_types())
            .map(|(n, t)| function.add_param(n, t))
            .collect();
        if i >= info.locals.len() {
            return Err(LowerError::Internal {
                function: name,
                span: p.span,
                message: "the body has fewer locals than the function has parameters".into(),
            });
        }
        env.bind(i, values);
    }
    let result_types = flat_types(program, &def.ret);
    function.result_types = result_types.clone();
    let local_of_span = info.locals.iter().enumerate().skip(def.params.len()).map(|(i, l)| (l.span, i)).collect();
    let mut lw = FnLowerer {
        m,
        program,
        info,
        name,
        plugin,
        e: Emitter::new(function),
        env,
        local_of_span,
        ret: None,
        loops: Vec::new(),
        maybe_jumped: false,
        loop_spans: Vec::new(),
    };
    if returns_outside_tail(body) {
        let flag = lw.env.add_slot(vec![Ty::Bool]);
        let values = lw.env.add_slot(result_types.clone());
        let no = lw.e.bool(false);
        lw.env.bind(flag, vec![no]);
        let zeros = lw.e.zeros(&result_types);
        lw.env.bind(values, zeros);
        lw.ret = Some(ReturnSlots { flag, values });
    }
    let tail = lw.lower_tail_block(body, &result_types)?;
    let tail = lw.fit(tail, &result_types);
    let results = match lw.ret {
        Some(ReturnSlots { flag, values }) => {
            // The body's value, unless a `return` that set the flag happened.
            let returned = lw.values_of(flag, body.span)?[0];
            let ret_values = lw.values_of(values, body.span)?;
            ret_values.iter().zip(&tail).map(|(&r, &t)| lw.e.select(returned, r, t)).collect()
        }
        None => tail,
    };
    let loop_spans = std::mem::take(&mut lw.loop_spans);
    Ok((lw.e.finish(results), loop_spans))
}

impl<'m, 'p> FnLowerer<'m, 'p> {
    /// Lowers a constant expression (a plugin parameter's default) into a function without
    /// parameters that returns its value.
    pub(crate) fn lower_constant(
        m: &'m mut ModuleCx<'p>,
        name: &str,
        info: &'p BodyInfo,
        value: &Expr,
        ty: &Type,
    ) -> LResult<Function> {
        let program = m.program;
        let mut function = Function::new(name);
        let result_types = flat_types(program, ty);
        function.result_types = result_types.clone();
        let mut lw = FnLowerer {
            m,
            program,
            info,
            name: name.to_string(),
            plugin: None,
            e: Emitter::new(function),
            env: Env::new(info.locals.iter().map(|l| flat_types(program, &l.ty)).collect()),
            local_of_span: HashMap::new(),
            ret: None,
            loops: Vec::new(),
            maybe_jumped: false,
            loop_spans: Vec::new(),
        };
        let values = lw.lower_expr(value)?;
        // A float literal default of a vector or Color parameter is splatted by its type.
        let values = lw.fit(values, &result_types);
        Ok(lw.e.finish(values))
    }

    pub(crate) fn internal(&self, span: Span, message: impl Into<String>) -> LowerError {
        LowerError::Internal { function: self.name.clone(), span, message: message.into() }
    }

    pub(crate) fn unsupported(&self, span: Span, message: impl Into<String>) -> LowerError {
        LowerError::Unsupported { function: self.name.clone(), span, message: message.into() }
    }

    /// The checked type of an expression.
    pub(crate) fn ty_of(&self, e: &Expr) -> LResult<&'p Type> {
        self.info.expr_types.get(&e.id).ok_or_else(|| self.internal(e.span, "an expression has no type"))
    }

    pub(crate) fn tys(&self, ty: &Type) -> Vec<Ty> {
        flat_types(self.program, ty)
    }

    pub(crate) fn len_of(&self, ty: &Type) -> usize {
        flat_len(self.program, ty)
    }

    /// The local that the binding whose name is at `span` declares.
    pub(crate) fn local_at(&self, span: Span) -> LResult<LocalId> {
        self.local_of_span.get(&span).copied().ok_or_else(|| self.internal(span, "a binding has no local"))
    }

    /// The current values of a slot that must have some.
    pub(crate) fn values_of(&self, slot: SlotId, span: Span) -> LResult<Vec<Value>> {
        self.env.values(slot).map(<[Value]>::to_vec).ok_or_else(|| {
            let what = match self.info.locals.get(slot) {
                Some(l) => format!("`{}`", l.name),
                None => "a flag".to_string(),
            };
            self.internal(span, format!("{what} is read before it has a value"))
        })
    }

    /// `values` if there are as many as `tys`, else zeros: the value of code that jumped
    /// away (a diverging branch) is never used.
    pub(crate) fn fit(&mut self, values: Vec<Value>, tys: &[Ty]) -> Vec<Value> {
        if values.len() == tys.len() {
            values
        } else {
            self.e.zeros(tys)
        }
    }
}
