//! Calls: of functions, methods (of structs, externs and plugin interfaces), derivatives
//! (`fwd_diff(f)(..)`), built-in functions and type constructors, and their arguments.

use super::checker::Checker;
use super::expr::{is_literal, operand_hint};
use crate::builtins::{self, Arg};
use crate::context::ambiguous;
use crate::derivative::derivative_signature;
use crate::program::*;
use crate::scope::Found;
use crate::types::{builtin_type, PluginKind, Scalar, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, Expr, ExprKind};

impl Checker<'_> {
    pub(super) fn call(&mut self, e: &Expr, callee: &Expr, args: &[Expr]) -> Type {
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
        let mut typed = self.typed_args(args, None);
        match builtins::check_call(&self.sema.program, name, &typed, e.span) {
            Ok(t) => t,
            Err(d) => {
                // Float literals splat to the vector or Color type of the other arguments
                // (`max(v, 0.0)`) when they do not fit as scalars.
                let splat_to = typed.iter().zip(args).find(|(_, a)| !is_literal(a)).map(|(t, _)| t.ty.clone());
                if let Some(target @ (Type::Vector(Scalar::F32, _) | Type::Color)) = splat_to {
                    for (arg, expr) in typed.iter_mut().zip(args) {
                        if is_literal(expr) && arg.ty == Type::F32 {
                            arg.ty = target.clone();
                        }
                    }
                    if let Ok(t) = builtins::check_call(&self.sema.program, name, &typed, e.span) {
                        for (arg, expr) in typed.iter().zip(args) {
                            if is_literal(expr) {
                                self.record_splat(expr, &arg.ty);
                            }
                        }
                        return t;
                    }
                }
                self.sema.error(d);
                Type::Error
            }
        }
    }

    /// Records a (possibly negated) literal and its operand as having the splat type.
    fn record_splat(&mut self, e: &Expr, ty: &Type) {
        self.record(e, ty.clone());
        if let ExprKind::Unary(_, inner) = &e.kind {
            self.record_splat(inner, ty);
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

    pub(super) fn method_call(&mut self, e: &Expr, receiver: &Expr, method: &ast::Ident, args: &[Expr]) -> Type {
        self.tensor_receiver = matches!(receiver.kind, ExprKind::Path(_));
        let recv_ty = self.check_expr(receiver, None);
        self.tensor_receiver = false;
        if recv_ty == Type::Tensor {
            return self.tensor_method_call(e, method, args);
        }
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

    /// `t.shape(i)` / `t.at(i)` on a `Tensor` param: one `u32` argument each.
    fn tensor_method_call(&mut self, e: &Expr, method: &ast::Ident, args: &[Expr]) -> Type {
        let Some(m) = TensorMethod::ALL.into_iter().find(|m| m.name() == method.name) else {
            self.check_args_loosely(args);
            self.sema.error(
                Diagnostic::new(Code::UnknownMethod, method.span, format!("`Tensor` has no method `{}`", method.name))
                    .with_label("unknown method")
                    .with_help("a tensor has `at(i: u32) -> f32` and `shape(i: u32) -> u32`"),
            );
            return Type::Error;
        };
        self.info.tensor_methods.insert(e.id, m);
        self.check_args(&[Type::U32], args, e.span, &format!("Tensor::{}", m.name()));
        if let (TensorMethod::Shape, [index]) = (m, args) {
            if let Some(value) = self.constant_index(index).filter(|&v| !(0..3).contains(&v)) {
                self.sema.error(
                    Diagnostic::new(Code::InvalidIndex, index.span, format!("a tensor has no dimension {value}"))
                        .with_label("dimensions are 0 (height), 1 (width) and 2 (channels)"),
                );
            }
        }
        m.result()
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
}
