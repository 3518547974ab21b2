//! Type checking of function bodies, constant initialisers and parameter defaults, with the
//! flow checks that ride along: definite assignment, unreachable code, missing returns,
//! mutability, loops' attributes, and the call graph for the recursion check.
//!
//! This file holds the entry points on `Sema` and the rules of constant expressions;
//! `checker.rs` the per-body state, flow and statements, `expr.rs` expression typing and
//! `calls.rs` calls of every kind.

mod calls;
mod checker;
mod expr;

use crate::builtins;
use crate::context::Sema;
use crate::program::*;
use crate::scope::Found;
use crate::types::{builtin_type, Type};
use checker::Checker;
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, Expr, ExprKind, StmtKind};
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
                Type::Tensor => {
                    cx.sema.error(
                        Diagnostic::new(Code::InvalidTensorUse, default.span, "a `Tensor` parameter has no default")
                            .with_label("remove this default")
                            .with_help("the scene or the host program provides the tensor's data"),
                    );
                    continue;
                }
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
            let choices = param.choices.len();
            if cx.require_constant(&default) {
                let actual = cx.check_expr(&default, Some(&expected));
                cx.expect(&actual, &expected, &default);
                if choices > 0 {
                    cx.check_choice_default(&default, choices);
                }
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

impl Checker<'_> {
    /// Reports the default of a `@choice` param when it is not the index of one of its
    /// `choices` words.
    fn check_choice_default(&mut self, default: &Expr, choices: usize) {
        let Some(value) = self.sema.eval_int(self.module, default) else { return };
        if value < 0 || value >= choices as i64 {
            self.sema.error(
                Diagnostic::new(
                    Code::AttributeArguments,
                    default.span,
                    format!("the default {value} is not one of the {choices} choices"),
                )
                .with_label(format!("`@choice` gives the values 0 to {}", choices - 1)),
            );
        }
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
