//! Type checking of function bodies, constant initialisers and parameter defaults, with the
//! flow checks that ride along: definite assignment, unreachable code, missing returns,
//! mutability, loops' attributes, and the call graph for the recursion check.

use crate::builtins::{self, Arg};
use crate::collect::{duplicate_attr, misplaced_or_unknown};
use crate::context::{ambiguous, Sema};
use crate::derivative::derivative_signature;
use crate::program::*;
use crate::scope::Found;
use crate::types::{builtin_type, PluginKind, Scalar, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, AttrArg, BinOp, Block, Expr, ExprKind, Lit, PatternKind, Stmt, StmtKind, UnOp};
use std::collections::HashMap;

impl Sema {
    /// Checks every body in the program and then the call graph.
    pub fn check_bodies(&mut self) {
        let mut calls = Vec::new();
        for f in 0..self.program.functions.len() {
            if self.program.fn_decl(f).body.is_none()
                || matches!(self.program.functions[f].owner, FnOwner::Interface(_))
            {
                continue;
            }
            let (info, mut fn_calls) = self.check_fn(f);
            self.program.functions[f].body = info;
            calls.append(&mut fn_calls);
        }
        for c in 0..self.program.consts.len() {
            let info = self.check_const(c);
            self.program.consts[c].body = info;
        }
        self.check_const_cycles();
        for p in 0..self.program.plugins.len() {
            let info = self.check_param_defaults(p);
            self.program.plugins[p].defaults = info;
        }
        self.check_recursion(&calls);
    }

    fn check_fn(&mut self, f: FnId) -> (BodyInfo, Vec<(FnId, FnId, Span)>) {
        let decl = self.program.fn_decl(f).clone();
        let def = &self.program.functions[f];
        let plugin = match def.owner {
            FnOwner::Plugin(p) => Some(p),
            _ => None,
        };
        let ret = def.ret.clone();
        let params: Vec<(String, Type, Span)> =
            def.params.iter().map(|p| (p.name.clone(), p.ty.clone(), p.span)).collect();
        let body_span = decl.body.as_ref().map(|b| b.span);
        let syntax_error_at = self
            .diagnostics
            .iter()
            .filter(|d| d.code.as_str() < "E0100")
            .map(|d| d.primary.span)
            .filter(|s| body_span.is_some_and(|b| s.file == b.file && b.start <= s.start && s.start <= b.end))
            .min_by_key(|s| s.start);
        let mut cx = Checker::new(self, def.module, Some(f), plugin, ret.clone());
        cx.syntax_error_at = syntax_error_at;
        for (name, ty, span) in params {
            cx.declare(&name, ty, false, true, span);
        }
        let Some(body) = &decl.body else { return (cx.info, Vec::new()) };
        let ty = cx.check_block(body, Some(&ret));
        let tail = body.tail.as_deref();
        // A tail `if` without `else` (or a loop) gives `()`: the body can end without a value.
        let tail_without_value =
            tail.is_some_and(|t| t.is_block_like() && !matches!(t.kind, ExprKind::Block(_)) && ty.is_unit());
        if let Some(tail) = tail.filter(|_| !tail_without_value || ret.is_unit()) {
            cx.expect(&ty, &ret, tail);
        } else if cx.live && !ret.is_unit() && !ret.is_error() {
            let shown = cx.sema.show(&ret);
            let close = Span { start: body.span.end.saturating_sub(1), ..body.span };
            // `x;` as the last statement, where `x` would be the value: the `;` discards it.
            let discarded = match (body.tail.as_deref(), body.stmts.last().map(|s| &s.kind)) {
                (None, Some(StmtKind::Expr { expr, semi: true })) => {
                    cx.info.expr_types.get(&expr.id).is_some_and(|t| t.fits(&ret) && !t.is_wildcard())
                }
                _ => false,
            };
            let help = if discarded {
                "the last expression ends with `;`, which discards its value: remove the `;` to return it"
            } else {
                "end the body with a value, or `return` on every path"
            };
            cx.sema.error(
                Diagnostic::new(
                    Code::MissingReturn,
                    decl.name.span,
                    format!("`{}` may end without returning a value", decl.name.name),
                )
                .with_label(format!("declared to return `{shown}`"))
                .with_secondary(close, "the end of the body is reachable")
                .with_help(help),
            );
        }
        let calls = cx.calls.iter().map(|&(g, span)| (f, g, span)).collect();
        (cx.info, calls)
    }

    fn check_const(&mut self, c: ConstId) -> BodyInfo {
        let (module, item, ty) =
            (self.program.consts[c].module, self.program.consts[c].item, self.program.consts[c].ty.clone());
        let ast::ItemKind::Const(decl) = &self.program.modules[module].ast.items[item].kind else {
            return BodyInfo::default();
        };
        let value = decl.value.clone();
        let mut cx = Checker::new(self, module, None, None, Type::Error);
        if cx.require_constant(&value) {
            let actual = cx.check_expr(&value, Some(&ty));
            cx.expect(&actual, &ty, &value);
        }
        cx.info
    }

    /// Reports constants that depend on themselves (E0217), once per cycle: at the constant of
    /// the cycle declared first, on its reference that leads back to it.
    fn check_const_cycles(&mut self) {
        let count = self.program.consts.len();
        let mut edges: Vec<Vec<(ConstId, Span)>> = Vec::with_capacity(count);
        for c in 0..count {
            let (module, item) = (self.program.consts[c].module, self.program.consts[c].item);
            let ast::ItemKind::Const(decl) = &self.program.modules[module].ast.items[item].kind else {
                edges.push(Vec::new());
                continue;
            };
            let mut paths = Vec::new();
            constant_paths(&decl.value, &mut paths);
            let deps = paths
                .into_iter()
                .filter_map(|path| match self.lookup_path(module, &path) {
                    Some(Found::Item(ItemRef::Const(d))) => Some((d, path.span)),
                    _ => None,
                })
                .collect();
            edges.push(deps);
        }
        let reaches = |from: ConstId, to: ConstId| -> bool {
            let mut seen = vec![false; count];
            let mut stack = vec![from];
            while let Some(c) = stack.pop() {
                for &(d, _) in &edges[c] {
                    if d == to {
                        return true;
                    }
                    if !std::mem::replace(&mut seen[d], true) {
                        stack.push(d);
                    }
                }
            }
            false
        };
        for (c, deps) in edges.iter().enumerate() {
            // The first reference of c that leads back to c, if c is the first of its cycle.
            let Some(&(_, span)) = deps.iter().find(|&&(d, _)| d == c || reaches(d, c)) else { continue };
            if (0..c).any(|d| reaches(c, d) && reaches(d, c)) {
                continue;
            }
            let name = self.program.consts[c].name.clone();
            self.error(
                Diagnostic::new(Code::NotConstant, span, format!("constant `{name}` depends on itself"))
                    .with_label(format!("this leads back to `{name}`"))
                    .with_help("a constant's value cannot be computed from itself: write the value"),
            );
        }
    }

    fn check_param_defaults(&mut self, p: PluginId) -> BodyInfo {
        let (module, item) = (self.program.plugins[p].module, self.program.plugins[p].item);
        let ast::ItemKind::Plugin(decl) = &self.program.modules[module].ast.items[item].kind else {
            return BodyInfo::default();
        };
        let defaults: Vec<(String, Option<Expr>)> =
            decl.params.iter().map(|q| (q.name.name.clone(), q.default.clone())).collect();
        let mut cx = Checker::new(self, module, None, None, Type::Error);
        for (name, default) in defaults {
            let Some(default) = default else { continue };
            let Some(param) = cx.sema.program.plugins[p].params.iter().find(|q| q.name == name) else { continue };
            // An invalid parameter type is reported already (E0403).
            if !crate::collect::is_param_type(&param.ty) {
                continue;
            }
            let expected = match &param.ty {
                Type::Texture(inner) => (**inner).clone(),
                Type::Plugin(kind) => {
                    let kind = *kind;
                    cx.sema.error(
                        Diagnostic::new(
                            Code::InvalidParamType,
                            default.span,
                            format!("a `{}` parameter has no default", kind.type_name()),
                        )
                        .with_label("remove this default")
                        .with_help("the scene provides plugin references"),
                    );
                    continue;
                }
                other => other.clone(),
            };
            if cx.require_constant(&default) {
                let actual = cx.check_expr(&default, Some(&expected));
                cx.expect(&actual, &expected, &default);
            }
        }
        cx.info
    }

    fn check_recursion(&mut self, calls: &[(FnId, FnId, Span)]) {
        let mut edges: HashMap<FnId, Vec<(FnId, Span)>> = HashMap::new();
        for &(from, to, span) in calls {
            edges.entry(from).or_default().push((to, span));
        }
        // Depth-first search; a back edge closes a cycle, reported once per cycle.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Active,
            Done,
        }
        let mut mark = vec![Mark::New; self.program.functions.len()];
        let mut reported: Vec<Vec<FnId>> = Vec::new();
        for start in 0..self.program.functions.len() {
            if mark[start] != Mark::New {
                continue;
            }
            let mut stack: Vec<(FnId, usize)> = vec![(start, 0)];
            mark[start] = Mark::Active;
            while let Some(&mut (f, ref mut next)) = stack.last_mut() {
                let out = edges.get(&f).map(Vec::as_slice).unwrap_or(&[]);
                if *next >= out.len() {
                    mark[f] = Mark::Done;
                    stack.pop();
                    continue;
                }
                let (g, span) = out[*next];
                *next += 1;
                match mark[g] {
                    Mark::New => {
                        mark[g] = Mark::Active;
                        stack.push((g, 0));
                    }
                    Mark::Active => {
                        let pos = stack.iter().position(|&(h, _)| h == g).unwrap_or(0);
                        let mut cycle: Vec<FnId> = stack[pos..].iter().map(|&(h, _)| h).collect();
                        let mut key = cycle.clone();
                        key.sort_unstable();
                        if reported.contains(&key) {
                            continue;
                        }
                        reported.push(key);
                        cycle.push(g);
                        let names: Vec<String> =
                            cycle.iter().map(|&h| format!("`{}`", self.program.fn_path(h))).collect();
                        let message = if cycle.len() == 2 {
                            format!("`{}` calls itself", self.program.fn_path(g))
                        } else {
                            format!("recursive calls: {}", names.join(" -> "))
                        };
                        self.error(
                            Diagnostic::new(Code::Recursion, span, message)
                                .with_label("this call closes the cycle")
                                .with_help(
                                "recursion is not supported (GPU backends have no call stack): rewrite it as a loop",
                            ),
                        );
                    }
                    Mark::Done => {}
                }
            }
        }
    }
}

struct LoopCx {
    /// Assignment state merged over every `break` seen so far (`None`: no break yet).
    breaks: Option<Vec<bool>>,
}

/// Checks one body: a function, a constant initialiser or the parameter defaults of a plugin.
struct Checker<'s> {
    sema: &'s mut Sema,
    module: ModuleId,
    function: Option<FnId>,
    plugin: Option<PluginId>,
    ret: Type,
    info: BodyInfo,
    scopes: Vec<HashMap<String, LocalId>>,
    /// Definitely-assigned flags, indexed by local.
    assigned: Vec<bool>,
    /// Whether the current point can be reached.
    live: bool,
    loops: Vec<LoopCx>,
    calls: Vec<(FnId, Span)>,
    /// Locals already reported as used unassigned (one report each).
    reported_unassigned: Vec<LocalId>,
    /// Where the first syntax error inside this body starts: statements the parser dropped may
    /// have declared names, so unknown names after it are not reported.
    syntax_error_at: Option<Span>,
    /// The variables of `for` loops (immutable), for messages.
    loop_vars: Vec<LocalId>,
}

impl<'s> Checker<'s> {
    fn new(sema: &'s mut Sema, module: ModuleId, function: Option<FnId>, plugin: Option<PluginId>, ret: Type) -> Self {
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
        }
    }

    fn show(&self, ty: &Type) -> String {
        self.sema.show(ty)
    }

    fn declare(&mut self, name: &str, ty: Type, mutable: bool, assigned: bool, span: Span) -> LocalId {
        let id = self.info.locals.len();
        self.info.locals.push(LocalDef { name: name.to_string(), ty, mutable, span });
        self.assigned.push(assigned);
        self.scopes.last_mut().expect("a scope is open").insert(name.to_string(), id);
        id
    }

    fn local(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn record(&mut self, e: &Expr, ty: Type) -> Type {
        self.info.expr_types.insert(e.id, ty.clone());
        ty
    }

    /// Reports `actual` not fitting `expected` for the value of `e`.
    fn expect(&mut self, actual: &Type, expected: &Type, e: &Expr) {
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

    fn check_block(&mut self, block: &Block, expected: Option<&Type>) -> Type {
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

    // ----------------------------------------------------------------------- expressions

    fn check_expr(&mut self, e: &Expr, expected: Option<&Type>) -> Type {
        let ty = self.expr_type(e, expected);
        self.record(e, ty)
    }

    fn expr_type(&mut self, e: &Expr, expected: Option<&Type>) -> Type {
        match &e.kind {
            ExprKind::Lit(lit) => self.literal(lit, e.span, expected, false),
            ExprKind::Path(path) => self.path_value(e, path),
            ExprKind::Unary(op, operand) => self.unary(*op, operand, expected, e.span),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, expected),
            ExprKind::Call { callee, args } => self.call(e, callee, args),
            ExprKind::MethodCall { receiver, method, args } => self.method_call(e, receiver, method, args),
            ExprKind::Field(base, field) => {
                let base_ty = self.check_expr(base, None);
                self.field(&base_ty, field)
            }
            ExprKind::TupleIndex(base, index, span) => {
                let base_ty = self.check_expr(base, None);
                match base_ty {
                    Type::Tuple(elems) => match elems.get(*index as usize) {
                        Some(t) => t.clone(),
                        None => {
                            let shown = self.show(&Type::Tuple(elems.clone()));
                            self.sema.error(
                                Diagnostic::new(
                                    Code::InvalidTupleIndex,
                                    *span,
                                    format!("`{shown}` has no element {index}"),
                                )
                                .with_label(format!("elements are numbered 0 to {}", elems.len().saturating_sub(1))),
                            );
                            Type::Error
                        }
                    },
                    Type::Error => Type::Error,
                    other => {
                        let shown = self.show(&other);
                        self.sema.error(
                            Diagnostic::new(
                                Code::InvalidTupleIndex,
                                *span,
                                format!("`.{index}` on `{shown}`, which is not a tuple"),
                            )
                            .with_label("only tuples have numbered elements"),
                        );
                        Type::Error
                    }
                }
            }
            ExprKind::Index(base, index) => self.index(base, index),
            ExprKind::Tuple(elems) => {
                let expected_elems = match expected {
                    Some(Type::Tuple(ts)) if ts.len() == elems.len() => Some(ts.clone()),
                    _ => None,
                };
                Type::Tuple(
                    elems
                        .iter()
                        .enumerate()
                        .map(|(i, el)| self.check_expr(el, expected_elems.as_ref().map(|ts| &ts[i])))
                        .collect(),
                )
            }
            ExprKind::Array(elems) => {
                let expected_elem = match expected {
                    Some(Type::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                let Some((first, rest)) = elems.split_first() else {
                    self.sema.error(
                        Diagnostic::new(Code::InvalidArrayLength, e.span, "empty array")
                            .with_label("arrays have at least one element"),
                    );
                    return Type::Error;
                };
                let elem_ty = self.check_expr(first, expected_elem.as_ref());
                let elem_ty = match expected_elem {
                    Some(t) if elem_ty.fits(&t) => t,
                    _ => elem_ty,
                };
                for el in rest {
                    let t = self.check_expr(el, Some(&elem_ty));
                    self.expect(&t, &elem_ty, el);
                }
                Type::Array(Box::new(elem_ty), elems.len() as u32)
            }
            ExprKind::ArrayRepeat(value, len) => {
                let expected_elem = match expected {
                    Some(Type::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                let elem_ty = self.check_expr(value, expected_elem.as_ref());
                match self.sema.array_len(self.module, len) {
                    Some(n) => Type::Array(Box::new(elem_ty), n),
                    None => Type::Error,
                }
            }
            ExprKind::StructLit { path, fields } => self.struct_literal(e, path, fields),
            ExprKind::Block(block) => self.check_block(block, expected),
            ExprKind::If { cond, then, els } => self.if_expr(cond, then, els.as_deref(), expected),
            ExprKind::Loop { attrs, body } => {
                self.loop_attributes(attrs);
                self.loops.push(LoopCx { breaks: None });
                self.check_block(body, None);
                let lp = self.loops.pop().expect("loop context pushed above");
                match lp.breaks {
                    Some(state) => {
                        self.assigned = state;
                        self.live = true;
                        Type::unit()
                    }
                    None => {
                        self.live = false;
                        Type::Never
                    }
                }
            }
            ExprKind::While { attrs, cond, body } => {
                self.loop_attributes(attrs);
                self.condition(cond);
                let (before, live) = (self.assigned.clone(), self.live);
                self.loops.push(LoopCx { breaks: None });
                self.check_block(body, None);
                self.loops.pop();
                // The body may run zero times: what it assigns does not count after the loop.
                self.assigned = before;
                self.live = live;
                Type::unit()
            }
            ExprKind::For { attrs, var, start, end, body } => {
                self.loop_attributes(attrs);
                // A literal bound takes its type from the other one (`0..n` with n: u32).
                let (start_ty, end_ty) = if is_literal(start) && !is_literal(end) {
                    let end_ty = self.check_expr(end, None);
                    (self.check_expr(start, Some(&end_ty)), end_ty)
                } else {
                    let start_ty = self.check_expr(start, None);
                    (start_ty.clone(), self.check_expr(end, Some(&start_ty)))
                };
                let var_ty = match (&start_ty, &end_ty) {
                    (Type::Error, _) | (_, Type::Error) => Type::Error,
                    (Type::Scalar(s), t) if s.is_integer() && *t == start_ty => start_ty.clone(),
                    _ => {
                        let (a, b) = (self.show(&start_ty), self.show(&end_ty));
                        self.sema.error(
                            Diagnostic::new(
                                Code::InvalidRange,
                                start.span.to(end.span),
                                format!(
                                    "a `for` range needs two bounds of the same integer type, found `{a}` and `{b}`"
                                ),
                            )
                            .with_label("invalid range")
                            .with_help("ranges count with i32 or u32: `for i in 0..n`"),
                        );
                        Type::Error
                    }
                };
                let (before, live) = (self.assigned.clone(), self.live);
                self.scopes.push(HashMap::new());
                let local = self.declare(&var.name, var_ty, false, true, var.span);
                self.loop_vars.push(local);
                self.loops.push(LoopCx { breaks: None });
                self.check_block(body, None);
                self.loops.pop();
                self.scopes.pop();
                self.assigned = before;
                self.assigned.resize(self.info.locals.len(), false);
                self.live = live;
                Type::unit()
            }
            ExprKind::Derivative { mode, .. } => {
                let word = if *mode == ast::DiffMode::Fwd { "fwd_diff" } else { "bwd_diff" };
                self.sema.error(
                    Diagnostic::new(Code::DerivativeNotCalled, e.span, format!("`{word}(..)` must be called"))
                        .with_label("a derivative is not a value")
                        .with_help(format!("call it directly: `{word}(f)(arguments)`")),
                );
                Type::Error
            }
        }
    }

    fn literal(&mut self, lit: &Lit, span: Span, expected: Option<&Type>, negated: bool) -> Type {
        match lit {
            Lit::Bool(_) => Type::BOOL,
            Lit::Float(text) => {
                let value: f64 = text.replace('_', "").parse().unwrap_or(f64::INFINITY);
                if value.is_finite() && (value as f32).is_infinite() || !value.is_finite() {
                    self.sema.error(
                        Diagnostic::new(Code::LiteralOutOfRange, span, format!("`{text}` does not fit in f32"))
                            .with_label(format!("the largest f32 is about {:e}", f32::MAX)),
                    );
                }
                match expected {
                    Some(t @ (Type::Vector(Scalar::F32, _) | Type::Color)) => t.clone(),
                    _ => Type::F32,
                }
            }
            Lit::Int { value, suffix } => {
                let ty = match (suffix, expected) {
                    (Some(ast::IntSuffix::U32), _) => Type::U32,
                    (Some(ast::IntSuffix::I32), _) => Type::I32,
                    (None, Some(Type::Scalar(Scalar::U32))) => Type::U32,
                    _ => Type::I32,
                };
                let limit: u64 = match (&ty, negated) {
                    (Type::Scalar(Scalar::U32), _) => u32::MAX as u64,
                    (_, true) => 1 << 31,
                    _ => i32::MAX as u64,
                };
                if *value > limit {
                    let name = self.show(&ty);
                    self.sema.error(
                        Diagnostic::new(Code::LiteralOutOfRange, span, format!("`{value}` does not fit in {name}"))
                            .with_label(format!("the largest {name} is {limit}"))
                            .with_help(if ty == Type::I32 {
                                "use a `u` suffix for u32, e.g. `4000000000u`"
                            } else {
                                "use a smaller value"
                            }),
                    );
                }
                if negated && ty == Type::U32 {
                    self.sema.error(
                        Diagnostic::new(Code::InvalidOperands, span, "cannot negate a u32")
                            .with_label("u32 values are never negative"),
                    );
                }
                ty
            }
        }
    }

    fn path_value(&mut self, e: &Expr, path: &ast::Path) -> Type {
        let first = &path.segments[0];
        if path.segments.len() == 1 {
            if let Some(local) = self.local(&first.name) {
                self.info.resolutions.insert(e.id, Resolution::Local(local));
                if self.live && !self.assigned[local] && !self.reported_unassigned.contains(&local) {
                    self.reported_unassigned.push(local);
                    let decl = self.info.locals[local].span;
                    self.sema.error(
                        Diagnostic::new(
                            Code::UseOfUnassigned,
                            e.span,
                            format!("`{}` is used before it is assigned on every path", first.name),
                        )
                        .with_label("possibly unassigned here")
                        .with_secondary(decl, "declared without a value here")
                        .with_help("assign it on every path before this use, or give it an initial value"),
                    );
                }
                return self.info.locals[local].ty.clone();
            }
            if let Some(p) = self.plugin {
                if let Some(i) = self.sema.program.plugins[p].params.iter().position(|q| q.name == first.name) {
                    self.info.resolutions.insert(e.id, Resolution::PluginParam(p, i));
                    return self.sema.program.plugins[p].params[i].ty.clone();
                }
                if self.sema.program.plugins[p].methods.contains_key(&first.name) {
                    return self.not_a_value(path, "a method");
                }
            }
            if first.name == "self" {
                self.sema.error(
                    Diagnostic::new(Code::InvalidSelf, e.span, "`self` is only available in methods that take `self`")
                        .with_label("no receiver here"),
                );
                return Type::Error;
            }
        }
        match self.sema.lookup_path(self.module, path) {
            Some(Found::Item(ItemRef::Const(c))) => {
                self.info.resolutions.insert(e.id, Resolution::Const(c));
                self.sema.program.consts[c].ty.clone()
            }
            Some(Found::Item(ItemRef::Fn(_))) => self.not_a_value(path, "a function"),
            Some(Found::Item(ItemRef::Struct(_) | ItemRef::Extern(_))) => self.not_a_value(path, "a type"),
            Some(Found::Item(ItemRef::Plugin(_))) => self.not_a_value(path, "a plugin"),
            Some(Found::Module(_)) => self.not_a_value(path, "a module"),
            Some(Found::Ambiguous(items)) => {
                self.sema.error(ambiguous(&self.sema.program, path, &items));
                Type::Error
            }
            None if path.segments.len() == 1
                && (builtins::is_builtin(&first.name) || builtin_type(&first.name).is_some()) =>
            {
                self.not_a_value(path, "a built-in function")
            }
            // The statement declaring it may be one the parser dropped.
            None if self.syntax_error_at.is_some_and(|s| s.start <= path.span.start) => Type::Error,
            None => {
                let mut d = Diagnostic::new(Code::UnknownName, path.span, format!("unknown name `{path}`"))
                    .with_label("not found in this scope");
                if let Some(similar) = self.similar_local(&first.name) {
                    d = d.with_help(format!("a variable with a similar name exists: `{similar}`"));
                }
                self.sema.error(d);
                Type::Error
            }
        }
    }

    fn similar_local(&self, name: &str) -> Option<String> {
        let candidates = self.scopes.iter().flat_map(|s| s.keys());
        candidates
            .filter(|c| edit_distance(c, name) <= 2 && c.len() > 1)
            .min_by_key(|c| edit_distance(c, name))
            .cloned()
    }

    fn not_a_value(&mut self, path: &ast::Path, what: &str) -> Type {
        self.sema.error(
            Diagnostic::new(Code::WrongKindOfName, path.span, format!("`{path}` is {what}, not a value"))
                .with_label("expected a value")
                .with_help(if what.contains("function") || what == "a method" {
                    "call it: `name(arguments)`"
                } else {
                    "use a variable or constant here"
                }),
        );
        Type::Error
    }

    fn unary(&mut self, op: UnOp, operand: &Expr, expected: Option<&Type>, span: Span) -> Type {
        let ty = match (&operand.kind, op) {
            (ExprKind::Lit(lit @ Lit::Int { .. }), UnOp::Neg) => {
                let t = self.literal(lit, operand.span, expected, true);
                return self.record(operand, t);
            }
            _ => self.check_expr(operand, expected),
        };
        let ok = match op {
            UnOp::Neg => match &ty {
                Type::Scalar(s) | Type::Vector(s, _) => matches!(s, Scalar::F32 | Scalar::I32),
                Type::Color | Type::Matrix(_) => true,
                t => t.is_wildcard(),
            },
            UnOp::Not => matches!(&ty, Type::Scalar(_) | Type::Vector(..)) || ty.is_wildcard(),
        };
        let ok = ok && !(op == UnOp::Not && ty.element_scalar() == Some(Scalar::F32));
        if ok {
            ty
        } else {
            let shown = self.show(&ty);
            let help = match op {
                UnOp::Neg if ty.element_scalar() == Some(Scalar::U32) => {
                    "u32 values are never negative: convert with `i32(..)` first"
                }
                UnOp::Neg => "`-` applies to f32, i32, their vectors, Color and matrices",
                UnOp::Not => "`!` is logical not on bool and bitwise not on integers",
            };
            self.sema.error(
                Diagnostic::new(Code::InvalidOperands, span, format!("cannot apply `{}` to `{shown}`", op.symbol()))
                    .with_label(format!("this has type `{shown}`"))
                    .with_help(help),
            );
            Type::Error
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, expected: Option<&Type>) -> Type {
        let arithmetic = !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or);
        let context = if arithmetic { expected } else { None };
        // A literal takes its type from the other operand, so check that one first.
        let (ta, tb) = if is_literal(a) && !is_literal(b) {
            let tb = self.check_expr(b, context);
            let hint = operand_hint(&tb);
            (self.check_expr(a, hint.as_ref()), tb)
        } else {
            let ta = self.check_expr(a, context);
            let hint = operand_hint(&ta);
            (ta, self.check_expr(b, hint.as_ref()))
        };
        self.binary_type(op, &ta, &tb, a, b).unwrap_or(Type::Error)
    }

    /// The type of `a op b`, or `None` after reporting why the operands do not fit.
    fn binary_type(&mut self, op: BinOp, ta: &Type, tb: &Type, a: &Expr, b: &Expr) -> Option<Type> {
        if ta.is_wildcard() || tb.is_wildcard() {
            return Some(match op {
                _ if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) => Type::BOOL,
                // Reported already: the result is unknown too (not the other operand's type).
                _ if ta.is_error() || tb.is_error() => Type::Error,
                _ if ta.is_wildcard() => tb.clone(),
                _ => ta.clone(),
            });
        }
        let result = match op {
            BinOp::And | BinOp::Or => (*ta == Type::BOOL && *tb == Type::BOOL).then_some(Type::BOOL),
            BinOp::Eq | BinOp::Ne => {
                (ta == tb && matches!(ta, Type::Scalar(_) | Type::Vector(..) | Type::Color)).then_some(Type::BOOL)
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                (ta == tb && matches!(ta, Type::Scalar(s) if s.is_numeric())).then_some(Type::BOOL)
            }
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                (ta == tb && (ta.is_integer_valued() || ta.element_scalar() == Some(Scalar::Bool))).then(|| ta.clone())
            }
            BinOp::Shl | BinOp::Shr => (ta == tb && ta.is_integer_valued()).then(|| ta.clone()),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => arithmetic_type(op, ta, tb),
        };
        if result.is_some() {
            return result;
        }
        let (sa, sb) = (self.show(ta), self.show(tb));
        let mixes = ta
            .element_scalar()
            .zip(tb.element_scalar())
            .is_some_and(|(x, y)| x.is_numeric() && y.is_numeric() && (x == Scalar::F32) != (y == Scalar::F32));
        let span = a.span.to(b.span);
        let d = if mixes {
            let literal = [a, b].into_iter().find_map(|x| match &x.kind {
                ExprKind::Lit(Lit::Int { value, .. }) => Some(*value),
                _ => None,
            });
            let help = match literal {
                Some(v) => format!("write `{v}.0` for a float literal"),
                None => "convert one side explicitly, e.g. `f32(i)`".to_string(),
            };
            Diagnostic::new(
                Code::IntFloatMix,
                span,
                format!("`{}` between `{sa}` and `{sb}`: integer and float mixed", op.symbol()),
            )
            .with_label(format!("`{sa}` {} `{sb}`", op.symbol()))
            .with_help(help)
        } else {
            let help = match op {
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => "ordering comparisons apply to two numbers of the same type",
                BinOp::And | BinOp::Or => "`&&` and `||` combine two bools",
                BinOp::Eq | BinOp::Ne => "`==` and `!=` compare two values of the same scalar, vector or Color type",
                BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    "bitwise operators apply to two integers (or vectors) of the same type"
                }
                _ if matches!(ta, Type::Matrix(_)) || matches!(tb, Type::Matrix(_)) => {
                    "a `matN` adds to and multiplies another `matN`, multiplies a `vecN` of the same size, and multiplies or divides by an f32"
                }
                _ => "arithmetic applies to two values of the same type, or a vector/Color/matrix and a scalar of its element type",
            };
            Diagnostic::new(Code::InvalidOperands, span, format!("cannot apply `{}` to `{sa}` and `{sb}`", op.symbol()))
                .with_label(format!("`{sa}` {} `{sb}`", op.symbol()))
                .with_help(help)
        };
        self.sema.error(d);
        None
    }

    fn condition(&mut self, cond: &Expr) {
        let ty = self.check_expr(cond, Some(&Type::BOOL));
        if !ty.fits(&Type::BOOL) {
            let shown = self.show(&ty);
            let help = match ty.element_scalar() {
                Some(Scalar::F32) => "compare explicitly, e.g. `x > 0.0`",
                Some(s) if s.is_numeric() => "compare explicitly, e.g. `x != 0`",
                _ => "conditions are bool values",
            };
            self.sema.error(
                Diagnostic::new(
                    Code::NonBoolCondition,
                    cond.span,
                    format!("expected a `bool` condition, found `{shown}`"),
                )
                .with_label("not a bool")
                .with_help(help),
            );
        }
    }

    fn if_expr(&mut self, cond: &Expr, then: &Block, els: Option<&Expr>, expected: Option<&Type>) -> Type {
        self.condition(cond);
        let start = (self.assigned.clone(), self.live);
        let then_ty = self.check_block(then, expected);
        let after_then = (std::mem::replace(&mut self.assigned, start.0.clone()), self.live);
        self.live = start.1;
        let Some(els) = els else {
            if !then_ty.is_unit() && !then_ty.is_wildcard() {
                let shown = self.show(&then_ty);
                let span = then.tail.as_ref().map_or(then.span, |t| t.span);
                self.sema.error(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        span,
                        format!("`if` without `else` has type `()`, but this branch gives a `{shown}`"),
                    )
                    .with_label("value of the branch")
                    .with_help("add an `else` branch, or end the statement with `;`"),
                );
            }
            self.merge(after_then, start);
            return Type::unit();
        };
        let else_ty = self.check_expr(els, expected.or(Some(&then_ty)).filter(|t| !t.is_wildcard()));
        let after_else = (std::mem::take(&mut self.assigned), self.live);
        self.merge(after_then, after_else);
        match (&then_ty, &else_ty) {
            (Type::Never, t) | (t, Type::Never) => t.clone(),
            _ if else_ty.fits(&then_ty) => then_ty,
            _ => {
                let (a, b) = (self.show(&then_ty), self.show(&else_ty));
                self.sema.error(
                    Diagnostic::new(
                        Code::TypeMismatch,
                        els.span,
                        format!("`if` and `else` have different types: `{a}` and `{b}`"),
                    )
                    .with_label(format!("expected `{a}`"))
                    .with_help("both branches must give a value of the same type"),
                );
                Type::Error
            }
        }
    }

    /// Joins two control-flow paths: a local is assigned after the join if it is on every
    /// live path.
    fn merge(&mut self, a: (Vec<bool>, bool), b: (Vec<bool>, bool)) {
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

    fn loop_attributes(&mut self, attrs: &[ast::Attribute]) {
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
    }

    fn field(&mut self, base: &Type, field: &ast::Ident) -> Type {
        match base {
            Type::Struct(s) => {
                if let Some((_, t)) = self.sema.program.structs[*s].fields.iter().find(|(n, _)| *n == field.name) {
                    return t.clone();
                }
                let def = &self.sema.program.structs[*s];
                let names: Vec<&str> = def.fields.iter().map(|(n, _)| n.as_str()).collect();
                let mut d = Diagnostic::new(
                    Code::UnknownField,
                    field.span,
                    format!("struct `{}` has no field `{}`", def.name, field.name),
                )
                .with_label("unknown field")
                .with_help(format!("its fields are: {}", names.join(", ")));
                if def.methods.contains_key(&field.name) {
                    d = d.with_help(format!("`{}` is a method: call it with `.{}(..)`", field.name, field.name));
                }
                self.sema.error(d);
                Type::Error
            }
            Type::Vector(elem, n) => self.swizzle(*elem, *n, false, field),
            Type::Color => self.swizzle(Scalar::F32, 3, true, field),
            Type::Error => Type::Error,
            other => {
                let shown = self.show(other);
                let help = if matches!(other, Type::Tuple(_)) {
                    "tuple elements are accessed by number: `.0`"
                } else {
                    "only structs have fields"
                };
                self.sema.error(
                    Diagnostic::new(Code::UnknownField, field.span, format!("`{shown}` has no field `{}`", field.name))
                        .with_label("unknown field")
                        .with_help(help),
                );
                Type::Error
            }
        }
    }

    fn swizzle(&mut self, elem: Scalar, size: u8, color: bool, field: &ast::Ident) -> Type {
        let sets: &[&str] = if color { &["rgb", "xyz"] } else { &["xyzw", "rgba"] };
        let name = &field.name;
        let valid_set = sets.iter().find(|set| name.chars().all(|c| set.contains(c)));
        let bad = |why: String| {
            Diagnostic::new(Code::InvalidSwizzle, field.span, format!("invalid swizzle `.{name}`")).with_label(why)
        };
        let Some(set) = valid_set else {
            let d = match name.chars().find(|&c| !sets.iter().any(|set| set.contains(c))) {
                None if color => bad("components from `rgb` and `xyz` cannot be mixed".into()),
                None => bad("components from `xyzw` and `rgba` cannot be mixed".into()),
                Some(c) if color => bad(format!("`{c}` is not a channel of a Color"))
                    .with_help("a Color has the channels `r`, `g`, `b` (or `x`, `y`, `z`); there is no alpha"),
                Some(c) => bad(format!("`{c}` is not a component of a vector"))
                    .with_help("vector components are `x`, `y`, `z`, `w` (or `r`, `g`, `b`, `a`)"),
            };
            self.sema.error(d);
            return Type::Error;
        };
        if name.len() > 4 {
            self.sema.error(bad("a swizzle has at most 4 components".into()));
            return Type::Error;
        }
        if let Some(c) = name.chars().find(|&c| set.find(c).is_some_and(|i| i >= size as usize)) {
            self.sema.error(bad(format!("`{c}` is beyond the {size} components")));
            return Type::Error;
        }
        match (name.len(), color) {
            (1, _) => Type::Scalar(elem),
            (3, true) => Type::Color,
            (n, _) => Type::Vector(elem, n as u8),
        }
    }

    fn index(&mut self, base: &Expr, index: &Expr) -> Type {
        let base_ty = self.check_expr(base, None);
        let index_ty = self.check_expr(index, None);
        if !index_ty.is_wildcard() && !matches!(index_ty, Type::Scalar(Scalar::I32 | Scalar::U32)) {
            let shown = self.show(&index_ty);
            self.sema.error(
                Diagnostic::new(
                    Code::InvalidIndex,
                    index.span,
                    format!("an index must be i32 or u32, found `{shown}`"),
                )
                .with_label("not an integer"),
            );
        }
        let (elem, len) = match &base_ty {
            Type::Array(t, n) => ((**t).clone(), *n),
            Type::Vector(s, n) => (Type::Scalar(*s), *n as u32),
            Type::Color => (Type::F32, 3),
            Type::Matrix(n) => (Type::Vector(Scalar::F32, *n), *n as u32),
            Type::Error => return Type::Error,
            other => {
                let shown = self.show(other);
                self.sema.error(
                    Diagnostic::new(Code::InvalidIndex, base.span, format!("cannot index into `{shown}`"))
                        .with_label("not an array, vector, Color or matrix"),
                );
                return Type::Error;
            }
        };
        // A constant index: a literal, a negated literal or the name of an integer constant.
        let constant = match &index.kind {
            ExprKind::Lit(Lit::Int { value, .. }) => Some(i128::from(*value)),
            ExprKind::Unary(UnOp::Neg, inner) => match &inner.kind {
                ExprKind::Lit(Lit::Int { value, .. }) => Some(-i128::from(*value)),
                _ => None,
            },
            ExprKind::Path(_) => match self.info.resolutions.get(&index.id) {
                Some(&Resolution::Const(c)) => self.sema.const_int(c).map(i128::from),
                _ => None,
            },
            _ => None,
        };
        if let Some(value) = constant {
            if value < 0 || value >= i128::from(len) {
                let shown = self.show(&base_ty);
                self.sema.error(
                    Diagnostic::new(
                        Code::InvalidIndex,
                        index.span,
                        format!("index {value} is out of range for `{shown}`"),
                    )
                    .with_label(format!("valid indices are 0 to {}", len - 1)),
                );
            }
        }
        elem
    }

    fn struct_literal(&mut self, e: &Expr, path: &ast::Path, fields: &[ast::FieldInit]) -> Type {
        let s = match self.sema.lookup_path(self.module, path) {
            Some(Found::Item(ItemRef::Struct(s))) => s,
            found => {
                for f in fields {
                    self.check_expr(&f.value, None);
                }
                let d = match found {
                    None => Diagnostic::new(Code::UnknownType, path.span, format!("unknown struct `{path}`"))
                        .with_label("not found in this scope"),
                    Some(Found::Ambiguous(items)) => ambiguous(&self.sema.program, path, &items),
                    Some(_) => Diagnostic::new(Code::WrongKindOfName, path.span, format!("`{path}` is not a struct"))
                        .with_label("expected a struct name"),
                };
                self.sema.error(d);
                return Type::Error;
            }
        };
        let declared = self.sema.program.structs[s].fields.clone();
        let mut given: Vec<&str> = Vec::new();
        for f in fields {
            match declared.iter().find(|(n, _)| *n == f.name.name) {
                Some((_, ty)) => {
                    let t = self.check_expr(&f.value, Some(ty));
                    self.expect(&t, ty, &f.value);
                    if given.contains(&f.name.name.as_str()) {
                        self.sema.error(
                            Diagnostic::new(
                                Code::StructLiteralFields,
                                f.name.span,
                                format!("field `{}` is given twice", f.name.name),
                            )
                            .with_label("given again here"),
                        );
                    }
                    given.push(&f.name.name);
                }
                None => {
                    self.check_expr(&f.value, None);
                    let name = self.sema.program.structs[s].name.clone();
                    self.sema.error(
                        Diagnostic::new(
                            Code::StructLiteralFields,
                            f.name.span,
                            format!("struct `{name}` has no field `{}`", f.name.name),
                        )
                        .with_label("unknown field"),
                    );
                }
            }
        }
        let missing: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).filter(|n| !given.contains(n)).collect();
        if !missing.is_empty() {
            let name = &self.sema.program.structs[s].name;
            let list = missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
            let d = Diagnostic::new(
                Code::StructLiteralFields,
                e.span,
                format!("missing field{} {list} in `{name}` literal", if missing.len() > 1 { "s" } else { "" }),
            )
            .with_label("every field must be given");
            self.sema.error(d);
        }
        Type::Struct(s)
    }

    // ----------------------------------------------------------------------------- calls

    fn call(&mut self, e: &Expr, callee: &Expr, args: &[Expr]) -> Type {
        match &callee.kind {
            ExprKind::Path(path) => self.call_path(e, callee, path, args),
            ExprKind::Derivative { mode, target } => {
                let target_fn = match self.function {
                    Some(f) => self.sema.resolve_fn_path(f, target),
                    None => self.sema.resolve_fn_in_module(self.module, target),
                };
                let Some(target_fn) = target_fn else {
                    self.check_args_loosely(args);
                    return Type::Error;
                };
                match derivative_signature(&self.sema.program, target_fn, *mode) {
                    Ok(sig) => {
                        self.calls.push((target_fn, callee.span));
                        self.info.resolutions.insert(callee.id, Resolution::Fn(target_fn));
                        self.check_args(
                            &sig.params,
                            args,
                            e.span,
                            &format!("{}({target})", if *mode == ast::DiffMode::Fwd { "fwd_diff" } else { "bwd_diff" }),
                        );
                        sig.ret
                    }
                    Err(why) => {
                        let name = self.sema.program.fn_path(target_fn);
                        self.sema.error(
                            Diagnostic::new(Code::NotDifferentiable, target.span, format!("`{name}` cannot be differentiated"))
                                .with_label(why)
                                .with_help("derivatives need f32-valued inputs and result (f32, float vectors, Color, matrices, or aggregates of them)"),
                        );
                        self.check_args_loosely(args);
                        Type::Error
                    }
                }
            }
            _ => {
                let ty = self.check_expr(callee, None);
                self.check_args_loosely(args);
                if !ty.is_error() {
                    let shown = self.show(&ty);
                    self.sema.error(
                        Diagnostic::new(Code::NotCallable, callee.span, format!("a `{shown}` value cannot be called"))
                            .with_label("not a function"),
                    );
                }
                Type::Error
            }
        }
    }

    fn call_path(&mut self, e: &Expr, callee: &Expr, path: &ast::Path, args: &[Expr]) -> Type {
        let first = &path.segments[0].name;
        if path.segments.len() == 1 {
            if self.local(first).is_some()
                || self.plugin.is_some_and(|p| self.sema.program.plugins[p].params.iter().any(|q| q.name == *first))
            {
                self.check_args_loosely(args);
                let shadows = builtins::is_builtin(first)
                    || builtin_type(first).is_some()
                    || matches!(self.sema.lookup_path(self.module, path), Some(Found::Item(ItemRef::Fn(_))));
                let mut d =
                    Diagnostic::new(Code::NotCallable, callee.span, format!("`{first}` is a variable, not a function"))
                        .with_label("not callable");
                if shadows {
                    d = d.with_help(format!(
                        "a local variable or parameter named `{first}` hides the function of this name: rename it"
                    ));
                }
                self.sema.error(d);
                return Type::Error;
            }
            if let Some(p) = self.plugin {
                if let Some(&f) = self.sema.program.plugins[p].methods.get(first) {
                    return self.call_fn(e, callee, f, args);
                }
            }
            if let Some(ty) = builtin_type(first) {
                return self.constructor(e, callee, ty, args);
            }
        }
        let found = self.sema.lookup_path(self.module, path);
        match found {
            Some(Found::Item(ItemRef::Fn(f))) => self.call_fn(e, callee, f, args),
            None if path.segments.len() == 1 && builtins::is_builtin(first) => {
                self.info.resolutions.insert(callee.id, Resolution::Builtin(first.clone()));
                self.builtin_call(e, first, args)
            }
            // `Type::function` and `Plugin::method`.
            _ if path.segments.len() >= 2 && found.is_none() => match self.sema.resolve_fn_in_module(self.module, path)
            {
                Some(f) => self.call_fn(e, callee, f, args),
                None => {
                    self.check_args_loosely(args);
                    Type::Error
                }
            },
            Some(Found::Item(ItemRef::Struct(_))) => {
                self.check_args_loosely(args);
                self.sema.error(
                    Diagnostic::new(Code::NotCallable, callee.span, format!("struct `{path}` is not a function"))
                        .with_label("not callable")
                        .with_help(format!("build a struct value with `{path} {{ field: value, ... }}`")),
                );
                Type::Error
            }
            Some(Found::Ambiguous(items)) => {
                self.check_args_loosely(args);
                self.sema.error(ambiguous(&self.sema.program, path, &items));
                Type::Error
            }
            Some(_) => {
                self.check_args_loosely(args);
                self.sema.error(
                    Diagnostic::new(Code::NotCallable, callee.span, format!("`{path}` is not a function"))
                        .with_label("not callable"),
                );
                Type::Error
            }
            None => {
                self.check_args_loosely(args);
                self.sema.error(
                    Diagnostic::new(Code::UnknownName, path.span, format!("unknown function `{path}`"))
                        .with_label("not found in this scope"),
                );
                Type::Error
            }
        }
    }

    fn call_fn(&mut self, e: &Expr, callee: &Expr, f: FnId, args: &[Expr]) -> Type {
        self.info.resolutions.insert(callee.id, Resolution::Fn(f));
        self.calls.push((f, callee.span));
        let sig = self.sema.program.functions[f].signature();
        let name = self.sema.program.fn_path(f);
        self.check_args(&sig.params, args, e.span, &name);
        sig.ret
    }

    fn check_args(&mut self, params: &[Type], args: &[Expr], span: Span, name: &str) {
        if params.len() != args.len() {
            let list: Vec<String> = params.iter().map(|t| self.show(t)).collect();
            self.sema.error(
                Diagnostic::new(
                    Code::ArgumentCount,
                    span,
                    format!(
                        "`{name}` takes {} argument{}, {} given",
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                )
                .with_label(format!("expected ({})", list.join(", "))),
            );
        }
        for (i, arg) in args.iter().enumerate() {
            match params.get(i) {
                Some(p) => {
                    let t = self.check_expr(arg, Some(p));
                    self.expect(&t, p, arg);
                }
                None => {
                    self.check_expr(arg, None);
                }
            }
        }
    }

    fn check_args_loosely(&mut self, args: &[Expr]) {
        for arg in args {
            self.check_expr(arg, None);
        }
    }

    /// Checks arguments whose types the callee decides (built-ins, constructors): other
    /// arguments first, then literals with the type of the first non-literal.
    fn typed_args(&mut self, args: &[Expr], element_hint: Option<Type>) -> Vec<Arg> {
        let mut types: Vec<Option<Type>> = vec![None; args.len()];
        let mut hint = element_hint;
        for (i, arg) in args.iter().enumerate() {
            if !is_literal(arg) {
                let t = self.check_expr(arg, None);
                hint = hint.or_else(|| operand_hint(&t));
                types[i] = Some(t);
            }
        }
        for (i, arg) in args.iter().enumerate() {
            if types[i].is_none() {
                types[i] = Some(self.check_expr(arg, hint.as_ref()));
            }
        }
        args.iter().zip(types).map(|(a, t)| Arg { ty: t.unwrap_or(Type::Error), span: a.span }).collect()
    }

    fn builtin_call(&mut self, e: &Expr, name: &str, args: &[Expr]) -> Type {
        let typed = self.typed_args(args, None);
        match builtins::check_call(&self.sema.program, name, &typed, e.span) {
            Ok(t) => t,
            Err(d) => {
                self.sema.error(d);
                Type::Error
            }
        }
    }

    fn constructor(&mut self, e: &Expr, callee: &Expr, target: Type, args: &[Expr]) -> Type {
        self.info.resolutions.insert(callee.id, Resolution::Constructor(target.clone()));
        let hint = match &target {
            Type::Vector(s, _) => Some(Type::Scalar(*s)),
            Type::Color | Type::Matrix(_) => Some(Type::F32),
            _ => None,
        };
        let typed = self.typed_args(args, hint);
        if let Err(d) = builtins::check_constructor(&self.sema.program, &target, &typed, e.span) {
            self.sema.error(d);
        }
        target
    }

    fn method_call(&mut self, e: &Expr, receiver: &Expr, method: &ast::Ident, args: &[Expr]) -> Type {
        let recv_ty = self.check_expr(receiver, None);
        let interface = match &recv_ty {
            Type::Plugin(kind) => Some(*kind),
            Type::Texture(_) => Some(PluginKind::Texture),
            _ => None,
        };
        let table = match (&recv_ty, interface) {
            (Type::Struct(s), _) => Some(self.sema.program.structs[*s].methods.get(&method.name).copied()),
            (Type::Extern(x), _) => Some(self.sema.program.externs[*x].methods.get(&method.name).copied()),
            (_, Some(kind)) => match self.sema.program.interfaces.get(&kind) {
                Some(iface) => {
                    Some(iface.methods.iter().copied().find(|&f| self.sema.program.functions[f].name == method.name))
                }
                None => {
                    self.no_interface(kind, receiver.span);
                    self.check_args_loosely(args);
                    return Type::Error;
                }
            },
            (Type::Error, _) => {
                self.check_args_loosely(args);
                return Type::Error;
            }
            _ => None,
        };
        let Some(Some(f)) = table else {
            self.check_args_loosely(args);
            let shown = self.show(&recv_ty);
            let mut d =
                Diagnostic::new(Code::UnknownMethod, method.span, format!("`{shown}` has no method `{}`", method.name))
                    .with_label("unknown method");
            if builtins::is_builtin(&method.name) {
                d = d.with_help(format!("`{}` is a built-in function: write `{}(x, ..)`", method.name, method.name));
            }
            self.sema.error(d);
            return Type::Error;
        };
        self.info.method_targets.insert(e.id, f);
        let def = &self.sema.program.functions[f];
        if let Type::Texture(value) = &recv_ty {
            // `Texture<T>.eval(si)` evaluates the texture as a T, whatever the plugin's methods;
            // the other interface methods (`eval_1`, `mean`) keep their declared result types.
            let params: Vec<Type> = def.params.iter().map(|p| p.ty.clone()).collect();
            let result = if method.name == "eval" { (**value).clone() } else { def.ret.clone() };
            self.check_args(&params, args, e.span, &format!("Texture::{}", method.name));
            return result;
        }
        let is_interface = matches!(def.owner, FnOwner::Interface(_));
        if !is_interface && !def.has_self {
            let name = self.sema.program.fn_path(f);
            self.check_args_loosely(args);
            self.sema.error(
                Diagnostic::new(Code::InvalidSelf, method.span, format!("`{name}` does not take `self`"))
                    .with_label("not a method")
                    .with_help(format!("call it as `{name}(..)`")),
            );
            return Type::Error;
        }
        if !is_interface {
            self.calls.push((f, method.span));
        }
        let sig = def.signature();
        let skip = usize::from(!is_interface);
        let name = self.sema.program.fn_path(f);
        self.check_args(&sig.params[skip..], args, e.span, &name);
        sig.ret
    }

    fn no_interface(&mut self, kind: PluginKind, span: Span) {
        self.sema.error(
            Diagnostic::new(
                Code::NoInterfaceForKind,
                span,
                format!("no interface is declared for `{}` plugins", kind.keyword()),
            )
            .with_label(format!("cannot call methods of a `{}`", kind.type_name())),
        );
    }

    /// Reports a non-constant part of a constant expression; returns whether it is constant.
    fn require_constant(&mut self, e: &Expr) -> bool {
        match find_non_constant(e) {
            None => true,
            Some((span, why)) => {
                self.sema.error(
                    Diagnostic::new(Code::NotConstant, span, "not a constant expression")
                        .with_label(why)
                        .with_help("constants and parameter defaults are built from literals, other constants, operators, constructors and built-in math"),
                );
                false
            }
        }
    }
}

/// An integer or float literal, possibly negated: its type comes from the context.
fn is_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lit(Lit::Int { suffix: None, .. } | Lit::Float(_)) => true,
        ExprKind::Unary(UnOp::Neg, inner) => is_literal(inner),
        _ => false,
    }
}

/// The type a literal operand should take next to an operand of type `t`.
fn operand_hint(t: &Type) -> Option<Type> {
    match t {
        Type::Scalar(_) => Some(t.clone()),
        Type::Vector(s, _) => Some(Type::Scalar(*s)),
        Type::Color | Type::Matrix(_) => Some(Type::F32),
        _ => None,
    }
}

/// `+ - * / %` typing: same types, broadcasting with scalars, and matrix products.
fn arithmetic_type(op: BinOp, a: &Type, b: &Type) -> Option<Type> {
    let numeric = |t: &Type| t.element_scalar().is_some_and(Scalar::is_numeric);
    if !numeric(a) || !numeric(b) {
        return None;
    }
    match (a, b) {
        (Type::Matrix(n), Type::Matrix(m)) if n == m => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul).then(|| a.clone())
        }
        (Type::Matrix(n), Type::Vector(Scalar::F32, m)) | (Type::Vector(Scalar::F32, m), Type::Matrix(n)) if n == m => {
            (op == BinOp::Mul).then_some(Type::Vector(Scalar::F32, *m))
        }
        (Type::Matrix(_), Type::Scalar(Scalar::F32)) => matches!(op, BinOp::Mul | BinOp::Div).then(|| a.clone()),
        (Type::Scalar(Scalar::F32), Type::Matrix(_)) => (op == BinOp::Mul).then(|| b.clone()),
        (Type::Matrix(_), _) | (_, Type::Matrix(_)) => None,
        _ if a == b => Some(a.clone()),
        (Type::Vector(s, _), Type::Scalar(t)) | (Type::Scalar(t), Type::Vector(s, _)) if s == t => {
            Some(if matches!(a, Type::Vector(..)) { a.clone() } else { b.clone() })
        }
        (Type::Color, Type::Scalar(Scalar::F32)) => Some(Type::Color),
        (Type::Scalar(Scalar::F32), Type::Color) => Some(Type::Color),
        _ => None,
    }
}

/// The paths (names of constants, presumably) in a constant expression.
fn constant_paths(e: &Expr, out: &mut Vec<ast::Path>) {
    match &e.kind {
        ExprKind::Path(p) => out.push(p.clone()),
        ExprKind::Unary(_, x) => constant_paths(x, out),
        ExprKind::Binary(_, a, b) => {
            constant_paths(a, out);
            constant_paths(b, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| constant_paths(a, out)),
        _ => {}
    }
}

/// The first part of `e` that is not allowed in a constant expression: only literals, names
/// (of constants), operators, constructors and built-in calls are.
fn find_non_constant(e: &Expr) -> Option<(Span, &'static str)> {
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Path(_) => None,
        ExprKind::Unary(_, x) => find_non_constant(x),
        ExprKind::Binary(_, a, b) => find_non_constant(a).or_else(|| find_non_constant(b)),
        ExprKind::Call { callee, args } => match &callee.kind {
            ExprKind::Path(p)
                if p.segments.len() == 1
                    && (builtin_type(&p.segments[0].name).is_some() || builtins::is_builtin(&p.segments[0].name)) =>
            {
                args.iter().find_map(find_non_constant)
            }
            _ => Some((e.span, "a call of a function that is not built in")),
        },
        ExprKind::MethodCall { .. } => Some((e.span, "a method call")),
        ExprKind::Tuple(_) => Some((e.span, "a tuple is not a constant")),
        ExprKind::Array(_) | ExprKind::ArrayRepeat(..) => Some((e.span, "an array is not a constant")),
        ExprKind::StructLit { .. } => Some((e.span, "a struct literal is not a constant")),
        ExprKind::Field(..) | ExprKind::TupleIndex(..) | ExprKind::Index(..) => {
            Some((e.span, "access to a part of a value"))
        }
        _ => Some((e.span, "evaluated at run time")),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
