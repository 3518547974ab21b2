//! Expression typing: literals (typed from context), paths, unary and binary operators,
//! conditions, `if` and loops, fields and swizzles, indexing, tuples, arrays and struct literals.

use super::checker::{Checker, LoopCx};
use crate::builtins;
use crate::context::ambiguous;
use crate::program::*;
use crate::scope::Found;
use crate::types::{builtin_type, Scalar, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, BinOp, Block, Expr, ExprKind, Lit, UnOp};
use std::collections::HashMap;

impl Checker<'_> {
    pub(super) fn check_expr(&mut self, e: &Expr, expected: Option<&Type>) -> Type {
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
                let bounded = self.loop_attributes(attrs);
                let (before, live) = (self.assigned.clone(), self.live);
                self.loops.push(LoopCx { breaks: None });
                self.check_block(body, None);
                let lp = self.loops.pop().expect("loop context pushed above");
                // A loop with `@max_iters` also ends when its bound is reached: the state
                // after it is then at least what held on entry.
                let exits: Vec<Vec<bool>> = lp.breaks.into_iter().chain(bounded.then_some(before)).collect();
                match exits.into_iter().reduce(|a, b| a.iter().zip(&b).map(|(x, y)| *x && *y).collect()) {
                    Some(mut state) => {
                        state.resize(self.info.locals.len(), false);
                        self.assigned = state;
                        self.live = live;
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
                    let ty = self.sema.program.plugins[p].params[i].ty.clone();
                    if ty == Type::Tensor && !std::mem::take(&mut self.tensor_receiver) {
                        self.sema.error(
                            Diagnostic::new(
                                Code::InvalidTensorUse,
                                e.span,
                                format!("the tensor `{}` is not a value", first.name),
                            )
                            .with_label("a tensor can only be read through its methods")
                            .with_help(format!(
                                "read elements with `{0}.at(i)` and sizes with `{0}.shape(i)`",
                                first.name
                            )),
                        );
                        return Type::Error;
                    }
                    return ty;
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
    pub(super) fn binary_type(&mut self, op: BinOp, ta: &Type, tb: &Type, a: &Expr, b: &Expr) -> Option<Type> {
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
        if let Some(value) = self.constant_index(index) {
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

    /// The value of a constant index (already checked): a literal, a negated literal or the
    /// name of an integer constant.
    pub(super) fn constant_index(&mut self, index: &Expr) -> Option<i128> {
        match &index.kind {
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
        }
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
}

/// An integer or float literal, possibly negated: its type comes from the context.
pub(super) fn is_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lit(Lit::Int { suffix: None, .. } | Lit::Float(_)) => true,
        ExprKind::Unary(UnOp::Neg, inner) => is_literal(inner),
        _ => false,
    }
}

/// The type a literal operand should take next to an operand of type `t`.
pub(super) fn operand_hint(t: &Type) -> Option<Type> {
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
