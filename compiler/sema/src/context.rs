//! State shared by the checking passes, and the resolution of type expressions.

use crate::program::{ConstId, ItemRef, ModuleId, Program};
use crate::scope::{Found, Scopes};
use crate::types::{builtin_type, PluginKind, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, ArrayLen, BinOp, ExprKind, Lit, TypeExpr, TypeExprKind, UnOp};
use std::collections::HashSet;

pub struct Sema {
    pub program: Program,
    pub scopes: Scopes,
    pub diagnostics: Vec<Diagnostic>,
    /// Constants being evaluated, to stop on cycles.
    evaluating: HashSet<ConstId>,
}

/// The name of the tensor type (a plugin param type only).
pub const TENSOR: &str = "Tensor";

/// The largest array length accepted (keeps per-lane storage bounded).
pub const MAX_ARRAY_LEN: u64 = 1 << 16;

impl Sema {
    pub fn new(program: Program, scopes: Scopes, diagnostics: Vec<Diagnostic>) -> Self {
        Sema { program, scopes, diagnostics, evaluating: HashSet::new() }
    }

    pub fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    pub fn show(&self, ty: &Type) -> String {
        self.program.show(ty)
    }

    /// Resolves a possibly qualified path to a top-level item, reporting unknown names.
    /// `what` names the kind of thing expected, for messages ("type", "function").
    pub fn lookup_path(&mut self, module: ModuleId, path: &ast::Path) -> Option<Found> {
        let segments = &path.segments;
        let mut found = self.scopes.lookup(&self.program, module, &segments[0].name);
        for seg in &segments[1..] {
            found = match found {
                Some(Found::Module(m)) => self.scopes.lookup_export(m, &seg.name),
                // `Type::item` is not a top-level name; callers resolve associated items.
                _ => return None,
            };
        }
        found
    }

    /// Resolves a type expression in a module.
    pub fn resolve_type(&mut self, module: ModuleId, ty: &TypeExpr) -> Type {
        match &ty.kind {
            TypeExprKind::Tuple(elems) => Type::Tuple(elems.iter().map(|t| self.resolve_type(module, t)).collect()),
            TypeExprKind::Array { elem, len } => {
                let elem = self.resolve_type(module, elem);
                match self.array_len(module, len) {
                    Some(n) => Type::Array(Box::new(elem), n),
                    None => Type::Error,
                }
            }
            TypeExprKind::Named { path, args } => self.resolve_named_type(module, path, args, ty.span),
        }
    }

    /// Resolves the type of a plugin `param`: any type, or `Tensor`, which is allowed nowhere
    /// else.
    pub fn resolve_param_type(&mut self, module: ModuleId, ty: &TypeExpr) -> Type {
        match &ty.kind {
            TypeExprKind::Named { path, args } if path.segments.len() == 1 && path.segments[0].name == TENSOR => {
                if !args.is_empty() {
                    self.error(
                        Diagnostic::new(Code::UnknownType, ty.span, "`Tensor` takes no type arguments")
                            .with_help("a tensor always holds f32 values: write `Tensor`"),
                    );
                }
                Type::Tensor
            }
            _ => self.resolve_type(module, ty),
        }
    }

    fn resolve_named_type(&mut self, module: ModuleId, path: &ast::Path, args: &[TypeExpr], span: Span) -> Type {
        let name = &path.segments[0].name;
        if path.segments.len() == 1 {
            if name == TENSOR {
                self.error(
                    Diagnostic::new(Code::InvalidTensorUse, span, "`Tensor` is only a plugin parameter type")
                        .with_label("not allowed here")
                        .with_help("declare the tensor as a plugin `param` and read it with `.at(i)` and `.shape(i)`"),
                );
                return Type::Error;
            }
            if name == "Texture" {
                let [arg] = args else {
                    self.error(
                        Diagnostic::new(Code::UnknownType, span, "`Texture` takes one type argument")
                            .with_help("write `Texture<Color>` or `Texture<f32>`"),
                    );
                    return Type::Error;
                };
                let arg_ty = self.resolve_type(module, arg);
                if !matches!(arg_ty, Type::Color | Type::Scalar(crate::types::Scalar::F32) | Type::Error) {
                    let shown = self.show(&arg_ty);
                    self.error(
                        Diagnostic::new(Code::UnknownType, arg.span, format!("`Texture<{shown}>` is not supported"))
                            .with_label("expected `Color` or `f32`"),
                    );
                    return Type::Error;
                }
                return Type::Texture(Box::new(arg_ty));
            }
            let builtin = builtin_type(name).or_else(|| {
                PluginKind::ALL
                    .into_iter()
                    .find(|k| *k != PluginKind::Texture && k.type_name() == name)
                    .map(Type::Plugin)
            });
            if let Some(t) = builtin {
                if !args.is_empty() {
                    self.error(Diagnostic::new(Code::UnknownType, span, format!("`{name}` takes no type arguments")));
                }
                return t;
            }
        }
        if !args.is_empty() {
            self.error(Diagnostic::new(Code::UnknownType, span, format!("`{path}` takes no type arguments")));
        }
        match self.lookup_path(module, path) {
            Some(Found::Item(ItemRef::Struct(s))) => Type::Struct(s),
            Some(Found::Item(ItemRef::Extern(e))) => Type::Extern(e),
            Some(Found::Item(_)) | Some(Found::Module(_)) => {
                self.error(
                    Diagnostic::new(Code::WrongKindOfName, path.span, format!("`{path}` is not a type"))
                        .with_label("expected a type"),
                );
                Type::Error
            }
            Some(Found::Ambiguous(items)) => {
                self.error(ambiguous(&self.program, path, &items));
                Type::Error
            }
            None => {
                let mut d = Diagnostic::new(Code::UnknownType, path.span, format!("unknown type `{path}`"))
                    .with_label("not found in this scope");
                if let Some(hint) = type_hint(name) {
                    d = d.with_help(hint);
                }
                self.error(d);
                Type::Error
            }
        }
    }

    /// The value of an array length: a literal or an integer constant, positive and bounded.
    pub fn array_len(&mut self, module: ModuleId, len: &ArrayLen) -> Option<u32> {
        let (value, span) = match len {
            ArrayLen::Literal(n, span) => (Some(*n), *span),
            ArrayLen::Const(path) => {
                let value = match self.lookup_path(module, path) {
                    Some(Found::Item(ItemRef::Const(c))) => self.const_int(c),
                    _ => {
                        self.error(
                            Diagnostic::new(
                                Code::InvalidArrayLength,
                                path.span,
                                format!("`{path}` is not an integer constant"),
                            )
                            .with_label("array lengths are integer literals or constants"),
                        );
                        return None;
                    }
                };
                (value, path.span)
            }
        };
        match value {
            Some(n) if (1..=MAX_ARRAY_LEN).contains(&n) => Some(n as u32),
            Some(n) => {
                self.error(
                    Diagnostic::new(Code::InvalidArrayLength, span, format!("array length {n} is out of range"))
                        .with_label(format!("must be between 1 and {MAX_ARRAY_LEN}")),
                );
                None
            }
            None => {
                self.error(
                    Diagnostic::new(
                        Code::InvalidArrayLength,
                        span,
                        "array length is not a non-negative integer constant",
                    )
                    .with_label("cannot evaluate this length"),
                );
                None
            }
        }
    }

    /// Evaluates an integer constant (for array lengths). `None` if it is not an integer
    /// constant expression, negative, or refers to itself.
    pub fn const_int(&mut self, id: ConstId) -> Option<u64> {
        if !self.evaluating.insert(id) {
            return None;
        }
        let c = &self.program.consts[id];
        let module = c.module;
        let item = c.item;
        let value = match &self.program.modules[module].ast.items[item].kind {
            ast::ItemKind::Const(decl) => {
                let expr = decl.value.clone();
                self.eval_int(module, &expr)
            }
            _ => None,
        };
        self.evaluating.remove(&id);
        value.and_then(|v| u64::try_from(v).ok())
    }

    /// The value of an integer constant expression made of literals, constants and integer
    /// operators, if it is one.
    pub fn eval_int(&mut self, module: ModuleId, expr: &ast::Expr) -> Option<i64> {
        match &expr.kind {
            ExprKind::Lit(Lit::Int { value, .. }) => i64::try_from(*value).ok(),
            ExprKind::Path(path) => match self.lookup_path(module, path) {
                Some(Found::Item(ItemRef::Const(c))) => self.const_int(c).and_then(|v| i64::try_from(v).ok()),
                _ => None,
            },
            ExprKind::Unary(UnOp::Neg, e) => self.eval_int(module, e).map(|v| -v),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.eval_int(module, a)?, self.eval_int(module, b)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    BinOp::Shl => u32::try_from(b).ok().and_then(|b| a.checked_shl(b)),
                    BinOp::Shr => u32::try_from(b).ok().and_then(|b| a.checked_shr(b)),
                    BinOp::BitAnd => Some(a & b),
                    BinOp::BitOr => Some(a | b),
                    BinOp::BitXor => Some(a ^ b),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// `path` names several items through glob imports: points at each of them.
pub fn ambiguous(program: &Program, path: &ast::Path, items: &[ItemRef]) -> Diagnostic {
    let mut d = Diagnostic::new(Code::AmbiguousName, path.span, format!("`{path}` is ambiguous"))
        .with_label("several glob imports define this name");
    let mut modules = Vec::new();
    for item in items {
        let (module, span) = match *item {
            ItemRef::Fn(f) => (program.functions[f].module, program.functions[f].name_span),
            ItemRef::Struct(s) => (program.structs[s].module, program.structs[s].span),
            ItemRef::Const(c) => (program.consts[c].module, program.consts[c].span),
            ItemRef::Plugin(p) => (program.plugins[p].module, program.plugins[p].span),
            ItemRef::Extern(e) => (program.externs[e].module, program.externs[e].span),
        };
        let name = &program.modules[module].name;
        d = d.with_secondary(span, format!("one is defined in `{name}`"));
        modules.push(name.clone());
    }
    let last = path.segments.last().map_or("name", |s| s.name.as_str());
    let example = modules.first().map_or("module".to_string(), String::clone);
    d.with_help(format!("import the one you mean by name, e.g. `import {example}::{{{last}}};`"))
}

/// Suggestions for type names people bring from other languages.
fn type_hint(name: &str) -> Option<String> {
    let suggestion = match name {
        "float" | "f64" | "double" => "f32",
        "int" | "i64" => "i32",
        "uint" | "u64" | "usize" => "u32",
        "Vec3" | "Vector3f" | "float3" | "vec3f" => "vec3",
        "Vec2" | "Vector2f" | "float2" | "vec2f" => "vec2",
        "Spectrum" | "Color3f" | "Rgb" | "RGB" => "Color",
        _ => return None,
    };
    Some(format!("did you mean `{suggestion}`?"))
}
