//! The state of checking one body (scopes, locals, definite assignment, reachability, loops)
//! and the statements: `let`, assignments and the places they assign, `break`, `continue`,
//! `return`, with the joining of control-flow paths and loops' attributes.

use crate::collect::{duplicate_attr, misplaced_or_unknown};
use crate::context::Sema;
use crate::program::*;
use crate::types::{Scalar, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, AttrArg, BinOp, Block, Expr, ExprKind, Lit, PatternKind, Stmt, StmtKind, UnOp};
use std::collections::HashMap;

pub(super) struct LoopCx {
    /// Assignment state merged over every `break` seen so far (`None`: no break yet).
    pub(super) breaks: Option<Vec<bool>>,
}

/// Checks one body: a function, a constant initialiser or the parameter defaults of a plugin.
pub(super) struct Checker<'s> {
    pub(super) sema: &'s mut Sema,
    pub(super) module: ModuleId,
    pub(super) function: Option<FnId>,
    pub(super) plugin: Option<PluginId>,
    ret: Type,
    pub(super) info: BodyInfo,
    pub(super) scopes: Vec<HashMap<String, LocalId>>,
    /// Definitely-assigned flags, indexed by local.
    pub(super) assigned: Vec<bool>,
    /// Whether the current point can be reached.
    pub(super) live: bool,
    pub(super) loops: Vec<LoopCx>,
    pub(super) calls: Vec<(FnId, Span)>,
    /// Locals already reported as used unassigned (one report each).
    pub(super) reported_unassigned: Vec<LocalId>,
    /// Where the first syntax error inside this body starts: statements the parser dropped may
    /// have declared names, so unknown names after it are not reported.
    pub(super) syntax_error_at: Option<Span>,
    /// The variables of `for` loops (immutable), for messages.
    pub(super) loop_vars: Vec<LocalId>,
    /// Set while checking the receiver of a method call: the one place a `Tensor` param may
    /// be named.
    pub(super) tensor_receiver: bool,
}

impl<'s> Checker<'s> {
    pub(super) fn new(
        sema: &'s mut Sema,
        module: ModuleId,
        function: Option<FnId>,
        plugin: Option<PluginId>,
        ret: Type,
    ) -> Self {
        Checker {
            sema,
            module,
            function,
            plugin,
            ret,
            info: BodyInfo::default(),
            scopes: vec![HashMap::new()],
            assigned: Vec::new(),
            live: true,
            loops: Vec::new(),
            calls: Vec::new(),
            reported_unassigned: Vec::new(),
            syntax_error_at: None,
            loop_vars: Vec::new(),
            tensor_receiver: false,
        }
    }

    pub(super) fn show(&self, ty: &Type) -> String {
        self.sema.show(ty)
    }

    pub(super) fn declare(&mut self, name: &str, ty: Type, mutable: bool, assigned: bool, span: Span) -> LocalId {
        let id = self.info.locals.len();
        self.info.locals.push(LocalDef { name: name.to_string(), ty, mutable, span });
        // `assigned` may be a snapshot from before locals that went out of scope since (an
        // `if` restores it for the `else` branch, loops after their body): pad their slots.
        self.assigned.resize(id, false);
        self.assigned.push(assigned);
        self.scopes.last_mut().expect("a scope is open").insert(name.to_string(), id);
        id
    }

    pub(super) fn local(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    pub(super) fn record(&mut self, e: &Expr, ty: Type) -> Type {
        self.info.expr_types.insert(e.id, ty.clone());
        ty
    }

    /// Reports `actual` not fitting `expected` for the value of `e`.
    pub(super) fn expect(&mut self, actual: &Type, expected: &Type, e: &Expr) {
        if actual.fits(expected) {
            return;
        }
        let (want, got) = (self.show(expected), self.show(actual));
        let int_vs_float = (actual.is_integer_valued() && expected.is_float_valued())
            || (actual.is_float_valued() && expected.is_integer_valued());
        let d = if int_vs_float {
            let help = match &e.kind {
                ExprKind::Lit(Lit::Int { value, .. }) => format!("write `{value}.0` for a float"),
                ExprKind::Unary(UnOp::Neg, inner)
                    if matches!(inner.kind, ExprKind::Lit(Lit::Int { .. })) && expected.is_float_valued() =>
                {
                    let ExprKind::Lit(Lit::Int { value, .. }) = &inner.kind else { unreachable!() };
                    format!("write `-{value}.0` for a float")
                }
                _ if expected.is_float_valued() => format!("convert explicitly: `{want}(..)`"),
                _ => format!("convert explicitly: `{want}(..)` (rounds toward zero)"),
            };
            Diagnostic::new(Code::IntFloatMix, e.span, format!("expected `{want}`, found `{got}`"))
                .with_label("integers and floats do not mix implicitly")
                .with_help(help)
        } else {
            let d = Diagnostic::new(Code::TypeMismatch, e.span, format!("expected `{want}`, found `{got}`"))
                .with_label(format!("expected `{want}`"));
            let vec3 = Type::Vector(Scalar::F32, 3);
            if (*actual == vec3 && *expected == Type::Color) || (*actual == Type::Color && *expected == vec3) {
                d.with_help(format!("`Color` and `vec3` are distinct types: convert with `{want}(..)`"))
            } else {
                d
            }
        };
        self.sema.error(d);
    }

    // ------------------------------------------------------------------------ statements

    pub(super) fn check_block(&mut self, block: &Block, expected: Option<&Type>) -> Type {
        self.scopes.push(HashMap::new());
        let mut dead = false;
        for stmt in &block.stmts {
            if !self.live && !dead {
                self.unreachable(stmt.span);
                dead = true;
                self.live = true;
            }
            self.check_stmt(stmt);
        }
        let ty = match &block.tail {
            Some(tail) => {
                if !self.live && !dead {
                    self.unreachable(tail.span);
                    dead = true;
                    self.live = true;
                }
                self.check_expr(tail, expected)
            }
            None if !self.live || dead => Type::Never,
            None => Type::unit(),
        };
        if dead {
            self.live = false;
        }
        self.scopes.pop();
        ty
    }

    fn unreachable(&mut self, span: Span) {
        self.sema.error(
            Diagnostic::new(Code::UnreachableCode, span, "unreachable code")
                .with_label("this is never executed")
                .with_help("an earlier `return`, `break` or `continue` always leaves before it; remove it"),
        );
    }

    fn check_stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { mutable, pattern, ty, init } => {
                let declared = ty.as_ref().map(|t| self.sema.resolve_type(self.module, t));
                let value_ty = init.as_ref().map(|e| {
                    let t = self.check_expr(e, declared.as_ref());
                    if let Some(d) = &declared {
                        self.expect(&t, d, e);
                    }
                    t
                });
                let ty = match (declared, value_ty) {
                    (Some(d), _) => d,
                    (None, Some(Type::Never)) => Type::Error,
                    (None, Some(v)) => v,
                    (None, None) => {
                        self.sema.error(
                            Diagnostic::new(
                                Code::CannotInferType,
                                pattern.span,
                                "the type of this variable is unknown",
                            )
                            .with_label("no type and no initial value")
                            .with_help("give it a type: `var x: f32;`"),
                        );
                        Type::Error
                    }
                };
                self.bind_pattern(pattern, &ty, *mutable, init.is_some());
            }
            StmtKind::Assign { target, op, value } => self.check_assign(target, *op, value),
            StmtKind::Expr { expr, semi } => {
                let ty = self.check_expr(expr, None);
                // A block-like statement's value would be silently lost (as in Rust).
                if !semi && !ty.is_unit() && !ty.is_wildcard() {
                    let shown = self.show(&ty);
                    self.sema.error(
                        Diagnostic::new(
                            Code::TypeMismatch,
                            expr.span,
                            format!("this gives a `{shown}` that is never used"),
                        )
                        .with_label("a statement has type `()`")
                        .with_help("end it with `;` to discard the value, or make it the last expression of the block"),
                    );
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                let state = self.live.then(|| self.assigned.clone());
                match self.loops.last_mut() {
                    Some(l) => {
                        if matches!(stmt.kind, StmtKind::Break) {
                            if let Some(state) = state {
                                l.breaks = Some(match l.breaks.take() {
                                    None => state,
                                    Some(prev) => prev.iter().zip(&state).map(|(a, b)| *a && *b).collect(),
                                });
                            }
                        }
                    }
                    None => {
                        let word = if matches!(stmt.kind, StmtKind::Break) { "break" } else { "continue" };
                        self.sema.error(
                            Diagnostic::new(Code::BreakOutsideLoop, stmt.span, format!("`{word}` outside of a loop"))
                                .with_label("not inside `loop`, `while` or `for`"),
                        );
                    }
                }
                self.live = false;
            }
            StmtKind::Return(value) => {
                let ret = self.ret.clone();
                if self.function.is_none() {
                    self.sema.error(
                        Diagnostic::new(Code::NotConstant, stmt.span, "`return` outside of a function")
                            .with_label("not allowed here"),
                    );
                }
                match value {
                    Some(e) if ret.is_unit() => {
                        let t = self.check_expr(e, None);
                        if !t.is_unit() && !t.is_wildcard() {
                            let shown = self.show(&t);
                            self.sema.error(
                                Diagnostic::new(
                                    Code::TypeMismatch,
                                    e.span,
                                    format!("`return` with a `{shown}` value in a function without a return type"),
                                )
                                .with_label("expected no value")
                                .with_help(format!("declare the result type, `-> {shown}`, or write `return;`")),
                            );
                        }
                    }
                    Some(e) => {
                        let t = self.check_expr(e, Some(&ret));
                        self.expect(&t, &ret, e);
                    }
                    None if !ret.is_unit() && !ret.is_error() => {
                        let shown = self.show(&ret);
                        self.sema.error(
                            Diagnostic::new(
                                Code::MissingReturn,
                                stmt.span,
                                format!("`return` without a value in a function returning `{shown}`"),
                            )
                            .with_label(format!("expected a value of type `{shown}`")),
                        );
                    }
                    None => {}
                }
                self.live = false;
            }
        }
    }

    fn bind_pattern(&mut self, pattern: &ast::Pattern, ty: &Type, mutable: bool, assigned: bool) {
        match &pattern.kind {
            PatternKind::Bind(name) => {
                self.declare(&name.name, ty.clone(), mutable, assigned, name.span);
            }
            PatternKind::Wildcard => {}
            PatternKind::Tuple(elems) => match ty {
                Type::Tuple(types) if types.len() == elems.len() => {
                    for (p, t) in elems.iter().zip(types) {
                        self.bind_pattern(p, t, mutable, assigned);
                    }
                }
                Type::Error => {
                    for p in elems {
                        self.bind_pattern(p, &Type::Error, mutable, assigned);
                    }
                }
                other => {
                    let shown = self.show(other);
                    self.sema.error(
                        Diagnostic::new(
                            Code::PatternMismatch,
                            pattern.span,
                            format!("a tuple pattern of {} elements cannot match `{shown}`", elems.len()),
                        )
                        .with_label(format!("the value has type `{shown}`")),
                    );
                    for p in elems {
                        self.bind_pattern(p, &Type::Error, mutable, assigned);
                    }
                }
            },
        }
    }

    fn check_assign(&mut self, target: &Expr, op: Option<BinOp>, value: &Expr) {
        let whole_local = match &target.kind {
            ExprKind::Path(p) if p.segments.len() == 1 => self.local(&p.segments[0].name),
            _ => None,
        };
        let target_ty = match (whole_local, op) {
            // `x = v` assigns x: it need not be assigned before.
            (Some(local), None) => {
                let ty = self.info.locals[local].ty.clone();
                self.info.resolutions.insert(target.id, Resolution::Local(local));
                self.record(target, ty)
            }
            _ => self.check_expr(target, None),
        };
        self.check_place(target);
        let value_ty = self.check_expr(value, Some(&target_ty));
        match op {
            None => self.expect(&value_ty, &target_ty, value),
            Some(op) => {
                if let Some(result) = self.binary_type(op, &target_ty, &value_ty, target, value) {
                    if !result.fits(&target_ty) {
                        let (t, r) = (self.show(&target_ty), self.show(&result));
                        self.sema.error(
                            Diagnostic::new(
                                Code::TypeMismatch,
                                value.span,
                                format!("`{}=` would change the type of the target from `{t}` to `{r}`", op.symbol()),
                            )
                            .with_label(format!("expected a value that keeps `{t}`")),
                        );
                    }
                }
            }
        }
        if let (Some(local), true) = (whole_local, self.live) {
            self.assigned[local] = true;
        }
    }

    /// Checks that `target` is a place that may be assigned.
    fn check_place(&mut self, target: &Expr) {
        match &target.kind {
            ExprKind::Path(path) => match self.info.resolutions.get(&target.id).cloned() {
                Some(Resolution::Local(local)) => {
                    let def = &self.info.locals[local];
                    if !def.mutable {
                        let (name, span) = (def.name.clone(), def.span);
                        // Parameters are the first locals of a function.
                        let params = self.function.map_or(0, |f| self.sema.program.functions[f].params.len());
                        let (what, help) = if name == "self" {
                            (
                                "parameter",
                                "`self` is immutable: copy it into a variable first, e.g. `var copy = self;`"
                                    .to_string(),
                            )
                        } else if local < params {
                            ("parameter", format!("parameters are immutable: copy it into a variable first, e.g. `var {name} = {name};`"))
                        } else if self.loop_vars.contains(&local) {
                            ("loop variable", format!("the variable of a `for` loop is immutable: copy it into a variable, e.g. `var k = {name};`"))
                        } else {
                            ("binding", format!("declare it with `var {name}` to make it mutable"))
                        };
                        self.sema.error(
                            Diagnostic::new(
                                Code::AssignToImmutable,
                                target.span,
                                format!("cannot assign to `{name}`, which is not a `var`"),
                            )
                            .with_label(format!("assignment to an immutable {what}"))
                            .with_secondary(span, "declared here")
                            .with_help(help),
                        );
                    }
                }
                Some(resolution @ (Resolution::PluginParam(..) | Resolution::Const(_))) => {
                    let what =
                        if matches!(resolution, Resolution::Const(_)) { "a constant" } else { "a plugin parameter" };
                    self.sema.error(
                        Diagnostic::new(
                            Code::AssignToImmutable,
                            target.span,
                            format!("cannot assign to `{path}`, which is {what}"),
                        )
                        .with_label("constants and plugin parameters are read-only")
                        .with_help(format!("copy it into a variable first, e.g. `var v = {path};`")),
                    );
                }
                None => {} // Unknown name: reported already.
                Some(_) => self.invalid_place(target),
            },
            ExprKind::Field(base, field) => {
                if let Some(Type::Vector(..) | Type::Color) = self.info.expr_types.get(&base.id) {
                    let mut seen = Vec::new();
                    for c in field.name.chars() {
                        if seen.contains(&c) {
                            self.sema.error(
                                Diagnostic::new(
                                    Code::InvalidSwizzle,
                                    field.span,
                                    format!("cannot assign to `.{}`: a component repeats", field.name),
                                )
                                .with_label("each component may be assigned once"),
                            );
                            break;
                        }
                        seen.push(c);
                    }
                }
                self.check_place(base)
            }
            ExprKind::Index(base, _) | ExprKind::TupleIndex(base, ..) => self.check_place(base),
            _ => self.invalid_place(target),
        }
    }

    fn invalid_place(&mut self, target: &Expr) {
        self.sema.error(
            Diagnostic::new(Code::InvalidAssignTarget, target.span, "cannot assign to this expression")
                .with_label("not a variable, field, element or component")
                .with_help("assign to a `var`, or to a field, element or component of one"),
        );
    }

    /// Joins two control-flow paths: a local is assigned after the join if it is on every
    /// live path.
    pub(super) fn merge(&mut self, a: (Vec<bool>, bool), b: (Vec<bool>, bool)) {
        let n = self.info.locals.len();
        let (mut va, mut vb) = (a.0, b.0);
        va.resize(n, false);
        vb.resize(n, false);
        (self.assigned, self.live) = match (a.1, b.1) {
            (true, true) => (va.iter().zip(&vb).map(|(x, y)| *x && *y).collect(), true),
            (true, false) => (va, true),
            (false, true) => (vb, true),
            (false, false) => (va, false),
        };
    }

    /// Checks a loop's attributes; returns whether it has a `@max_iters` bound.
    pub(super) fn loop_attributes(&mut self, attrs: &[ast::Attribute]) -> bool {
        let mut seen = false;
        for attr in attrs {
            if attr.name.name != "max_iters" {
                self.sema.error(misplaced_or_unknown(attr, "loops accept only `@max_iters(N)`"));
                continue;
            }
            if seen {
                self.sema.error(duplicate_attr(attr));
                continue;
            }
            seen = true;
            if !matches!(attr.args.as_slice(), [AttrArg::Int(n, _)] if *n >= 1 && *n <= u32::MAX as u64) {
                self.sema.error(
                    Diagnostic::new(
                        Code::AttributeArguments,
                        attr.span,
                        "`@max_iters` takes one positive integer literal",
                    )
                    .with_label("expected `@max_iters(N)` with N >= 1"),
                );
            }
        }
        seen
    }
}
