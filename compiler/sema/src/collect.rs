//! Collects the items of every module into the program tables and resolves their signatures:
//! names and duplicates, impls, struct fields, function signatures, constants' and plugin
//! parameters' types, attributes, custom derivatives and plugins against their interfaces.

use crate::context::Sema;
use crate::derivative::{derivative_signature, signature_text};
use crate::loader::Loaded;
use crate::program::*;
use crate::scope::{duplicate, Found, Scopes};
use crate::types::{PluginKind, Type};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{self, AttrArg, Attribute, DiffMode, ItemKind};
use std::collections::HashMap;

pub fn collect(loaded: Loaded, diagnostics: Vec<Diagnostic>) -> Sema {
    let mut program = Program { modules: loaded.modules, ..Program::default() };
    let mut diagnostics = diagnostics;
    let mut impls = Vec::new();
    for m in 0..program.modules.len() {
        let mut names: HashMap<String, (ItemRef, Span)> = HashMap::new();
        let items = std::mem::take(&mut program.modules[m].ast.items);
        for (i, item) in items.iter().enumerate() {
            let named = match &item.kind {
                ItemKind::Import(_) => None,
                ItemKind::Fn(decl) => {
                    let id = add_fn(&mut program, m, FnOwner::Free, decl, (i, None));
                    Some((decl.name.clone(), ItemRef::Fn(id)))
                }
                ItemKind::Struct(decl) => {
                    program.structs.push(StructDef {
                        name: decl.name.name.clone(),
                        module: m,
                        span: decl.name.span,
                        fields: Vec::new(),
                        methods: HashMap::new(),
                    });
                    Some((decl.name.clone(), ItemRef::Struct(program.structs.len() - 1)))
                }
                ItemKind::Const(decl) => {
                    program.consts.push(ConstDef {
                        name: decl.name.name.clone(),
                        module: m,
                        ty: Type::Error,
                        span: decl.name.span,
                        item: i,
                        body: BodyInfo::default(),
                    });
                    Some((decl.name.clone(), ItemRef::Const(program.consts.len() - 1)))
                }
                ItemKind::ExternType(name) => {
                    program.externs.push(ExternDef {
                        name: name.name.clone(),
                        module: m,
                        span: name.span,
                        methods: HashMap::new(),
                    });
                    Some((name.clone(), ItemRef::Extern(program.externs.len() - 1)))
                }
                ItemKind::Plugin(decl) => {
                    let Some(kind) = plugin_kind(&decl.kind, &mut diagnostics) else { continue };
                    let id = program.plugins.len();
                    program.plugins.push(PluginDef {
                        kind,
                        name: decl.name.name.clone(),
                        module: m,
                        span: decl.name.span,
                        item: i,
                        params: Vec::new(),
                        methods: HashMap::new(),
                        defaults: BodyInfo::default(),
                    });
                    for (j, method) in decl.methods.iter().enumerate() {
                        let f = add_fn(&mut program, m, FnOwner::Plugin(id), &method.decl, (i, Some(j)));
                        if let Some(&first) = program.plugins[id].methods.get(&method.decl.name.name) {
                            diagnostics.push(duplicate(
                                &method.decl.name.name,
                                method.decl.name.span,
                                program.functions[first].name_span,
                            ));
                        } else {
                            program.plugins[id].methods.insert(method.decl.name.name.clone(), f);
                        }
                    }
                    Some((decl.name.clone(), ItemRef::Plugin(id)))
                }
                ItemKind::Interface(decl) => {
                    let Some(kind) = plugin_kind(&decl.kind, &mut diagnostics) else { continue };
                    if let Some(first) = program.interfaces.get(&kind) {
                        // Point at the program's own declaration rather than into the stdlib,
                        // and keep the stdlib's: the stdlib's own code is written against it.
                        let stdlib_wins = program.modules[m].is_stdlib && !program.modules[first.module].is_stdlib;
                        let d = if stdlib_wins {
                            Diagnostic::new(Code::DuplicateDefinition, first.span, format!("a second interface for `{}`", kind.keyword()))
                                .with_label("redefined here")
                                .with_secondary(decl.kind.span, "the standard library declares it here")
                                .with_help("interfaces are global to the program: implement the standard one instead of declaring it again")
                        } else {
                            Diagnostic::new(
                                Code::DuplicateDefinition,
                                decl.kind.span,
                                format!("a second interface for `{}`", kind.keyword()),
                            )
                            .with_label("redefined here")
                            .with_secondary(first.span, "first defined here")
                        };
                        diagnostics.push(d);
                        if !stdlib_wins {
                            continue;
                        }
                    }
                    let mut methods: Vec<FnId> = Vec::new();
                    for (j, method) in decl.methods.iter().enumerate() {
                        let f = add_fn(&mut program, m, FnOwner::Interface(kind), &method.decl, (i, Some(j)));
                        if let Some(&first) =
                            methods.iter().find(|&&g| program.functions[g].name == method.decl.name.name)
                        {
                            diagnostics.push(duplicate(
                                &method.decl.name.name,
                                method.decl.name.span,
                                program.functions[first].name_span,
                            ));
                        } else {
                            methods.push(f);
                        }
                    }
                    program.interfaces.insert(kind, InterfaceDef { module: m, span: decl.kind.span, methods });
                    None
                }
                ItemKind::Impl(_) => {
                    impls.push((m, i));
                    None
                }
            };
            if let Some((ident, item_ref)) = named {
                if let Some((_, first)) = names.get(&ident.name) {
                    diagnostics.push(duplicate(&ident.name, ident.span, *first));
                } else {
                    names.insert(ident.name.clone(), (item_ref, ident.span));
                }
            }
        }
        program.modules[m].ast.items = items;
        program.module_items.push(names.into_iter().map(|(k, (v, _))| (k, v)).collect());
    }
    let scopes = Scopes::build(&program, &loaded.imports, &mut diagnostics);
    let mut sema = Sema::new(program, scopes, diagnostics);
    for (m, i) in impls {
        sema.collect_impl(m, i);
    }
    sema.resolve_structs();
    sema.resolve_signatures();
    sema.resolve_consts_and_params();
    sema.check_struct_cycles();
    sema.check_item_attributes();
    sema.check_plugins_against_interfaces();
    sema
}

fn add_fn(
    program: &mut Program,
    module: ModuleId,
    owner: FnOwner,
    decl: &ast::FnDecl,
    at: (usize, Option<usize>),
) -> FnId {
    program.functions.push(FnDef {
        name: decl.name.name.clone(),
        module,
        owner,
        has_self: false,
        is_extern: decl.is_extern,
        params: Vec::new(),
        ret: Type::unit(),
        span: decl.span,
        name_span: decl.name.span,
        custom_fwd: None,
        custom_bwd: None,
        no_diff: false,
        decl: at,
        body: BodyInfo::default(),
    });
    program.functions.len() - 1
}

fn plugin_kind(word: &ast::Ident, diagnostics: &mut Vec<Diagnostic>) -> Option<PluginKind> {
    let kind = PluginKind::from_keyword(&word.name);
    if kind.is_none() {
        let kinds: Vec<&str> = PluginKind::ALL.iter().map(|k| k.keyword()).collect();
        diagnostics.push(
            Diagnostic::new(Code::UnknownPluginKind, word.span, format!("unknown plugin kind `{}`", word.name))
                .with_label("not a plugin kind")
                .with_help(format!("plugin kinds are: {}", kinds.join(", "))),
        );
    }
    kind
}

/// Whether a type may be the type of a plugin `param`.
pub(crate) fn is_param_type(ty: &Type) -> bool {
    matches!(
        ty,
        Type::Scalar(_)
            | Type::Vector(..)
            | Type::Color
            | Type::Matrix(_)
            | Type::Texture(_)
            | Type::Tensor
            | Type::Plugin(_)
            | Type::Error
    )
}

impl Sema {
    fn collect_impl(&mut self, module: ModuleId, item: usize) {
        let ItemKind::Impl(decl) = &self.program.modules[module].ast.items[item].kind else { return };
        let decl = decl.clone();
        let owner = match self.program.module_items[module].get(&decl.ty.name) {
            Some(ItemRef::Struct(s)) => FnOwner::Struct(*s),
            Some(ItemRef::Extern(e)) => FnOwner::Extern(*e),
            Some(_) => {
                self.error(
                    Diagnostic::new(
                        Code::WrongKindOfName,
                        decl.ty.span,
                        format!("`{}` is not a struct or extern type", decl.ty.name),
                    )
                    .with_label("`impl` blocks add methods to structs and extern types"),
                );
                return;
            }
            None => {
                let name = &decl.ty.name;
                let d = match self.scopes.lookup(&self.program, module, name) {
                    Some(Found::Item(ItemRef::Struct(_) | ItemRef::Extern(_))) => Diagnostic::new(
                        Code::UnknownType,
                        decl.ty.span,
                        format!("`{name}` is not a type of this module"),
                    )
                    .with_label("defined in another module")
                    .with_help("methods can only be added in the module that defines the type"),
                    Some(Found::Item(_)) => Diagnostic::new(
                        Code::WrongKindOfName,
                        decl.ty.span,
                        format!("`{name}` is not a struct or extern type"),
                    )
                    .with_label("`impl` blocks add methods to structs and extern types"),
                    _ => Diagnostic::new(Code::UnknownType, decl.ty.span, format!("unknown type `{name}`"))
                        .with_label("no struct or extern type of this name in this module"),
                };
                self.error(d);
                return;
            }
        };
        for (j, method) in decl.methods.iter().enumerate() {
            let f = add_fn(&mut self.program, module, owner, &method.decl, (item, Some(j)));
            let table = match owner {
                FnOwner::Struct(s) => &mut self.program.structs[s].methods,
                FnOwner::Extern(e) => &mut self.program.externs[e].methods,
                _ => unreachable!(),
            };
            if let Some(&first) = table.get(&method.decl.name.name) {
                let first_span = self.program.functions[first].name_span;
                self.error(duplicate(&method.decl.name.name, method.decl.name.span, first_span));
            } else {
                table.insert(method.decl.name.name.clone(), f);
            }
        }
    }

    fn resolve_structs(&mut self) {
        for s in 0..self.program.structs.len() {
            let module = self.program.structs[s].module;
            let decl = self.program.modules[module].ast.items.iter().find_map(|item| match &item.kind {
                ItemKind::Struct(d) if d.name.span == self.program.structs[s].span => Some(d.clone()),
                _ => None,
            });
            let Some(decl) = decl else { continue };
            let mut fields: Vec<(String, Type)> = Vec::new();
            let mut seen: HashMap<&str, Span> = HashMap::new();
            for field in &decl.fields {
                if let Some(first) = seen.get(field.name.name.as_str()) {
                    self.error(duplicate(&field.name.name, field.name.span, *first));
                    continue;
                }
                seen.insert(&field.name.name, field.name.span);
                let ty = self.resolve_type(module, &field.ty);
                fields.push((field.name.name.clone(), ty));
            }
            self.program.structs[s].fields = fields;
        }
    }

    fn resolve_signatures(&mut self) {
        for f in 0..self.program.functions.len() {
            let decl = self.program.fn_decl(f).clone();
            let (module, owner) = (self.program.functions[f].module, self.program.functions[f].owner);
            let mut params = Vec::new();
            let mut has_self = false;
            let mut seen: HashMap<String, Span> = HashMap::new();
            for (i, param) in decl.params.iter().enumerate() {
                if let Some(first) = seen.get(&param.name.name) {
                    self.error(duplicate(&param.name.name, param.name.span, *first));
                }
                seen.insert(param.name.name.clone(), param.name.span);
                let no_diff = self.param_attributes(&param.attrs, "parameters accept only `@no_diff`");
                let ty = match &param.ty {
                    Some(ty) => self.resolve_type(module, ty),
                    None => match owner {
                        FnOwner::Struct(s) if i == 0 => {
                            has_self = true;
                            Type::Struct(s)
                        }
                        FnOwner::Extern(e) if i == 0 => {
                            has_self = true;
                            Type::Extern(e)
                        }
                        _ => {
                            let why = if i == 0 {
                                "only methods in an `impl` block take `self`"
                            } else {
                                "`self` must be the first parameter"
                            };
                            self.error(
                                Diagnostic::new(Code::InvalidSelf, param.span, "`self` is not allowed here")
                                    .with_label(why),
                            );
                            Type::Error
                        }
                    },
                };
                params.push(ParamDef { name: param.name.name.clone(), ty, no_diff, span: param.span });
            }
            let ret = match &decl.ret {
                Some(t) => self.resolve_type(module, t),
                None => Type::unit(),
            };
            self.check_body_presence(f, owner, &decl);
            let def = &mut self.program.functions[f];
            def.params = params;
            def.ret = ret;
            def.has_self = has_self;
        }
    }

    fn check_body_presence(&mut self, f: FnId, owner: FnOwner, decl: &ast::FnDecl) {
        let name = &decl.name.name;
        let span = self.program.functions[f].name_span;
        match owner {
            FnOwner::Interface(kind) if decl.body.is_some() || decl.is_extern => {
                self.error(
                    Diagnostic::new(
                        Code::UnexpectedBody,
                        span,
                        format!("interface method `{name}` may not have a body"),
                    )
                    .with_label(format!("the `{}` interface only declares signatures", kind.keyword()))
                    .with_help("end the declaration with `;` and implement it in each plugin"),
                );
            }
            // Interface methods only declare signatures.
            FnOwner::Interface(_) => {}
            FnOwner::Plugin(_) if decl.is_extern || decl.body.is_none() => {
                self.error(
                    Diagnostic::new(Code::MissingBody, span, format!("plugin method `{name}` needs a body"))
                        .with_label("plugin methods are implemented in .drs"),
                );
            }
            FnOwner::Struct(_) if decl.is_extern => {
                self.error(
                    Diagnostic::new(Code::MissingBody, span, format!("`extern fn {name}` in an impl of a struct"))
                        .with_label("only extern types have runtime-provided methods")
                        .with_help("give the method a body"),
                );
            }
            _ if decl.is_extern && decl.body.is_some() => {
                self.error(
                    Diagnostic::new(Code::UnexpectedBody, span, format!("`extern fn {name}` may not have a body"))
                        .with_label("provided by the runtime")
                        .with_help("remove `extern` to define the function here, or the body to declare it"),
                );
            }
            _ if !decl.is_extern && decl.body.is_none() => {
                self.error(
                    Diagnostic::new(Code::MissingBody, span, format!("function `{name}` has no body"))
                        .with_label("expected `{ ... }`")
                        .with_help("write `extern fn` for a function the runtime provides"),
                );
            }
            _ => {}
        }
    }

    fn resolve_consts_and_params(&mut self) {
        for c in 0..self.program.consts.len() {
            let (module, item) = (self.program.consts[c].module, self.program.consts[c].item);
            if let ItemKind::Const(decl) = &self.program.modules[module].ast.items[item].kind {
                let ty = decl.ty.clone();
                self.program.consts[c].ty = self.resolve_type(module, &ty);
            }
        }
        for p in 0..self.program.plugins.len() {
            let (module, item) = (self.program.plugins[p].module, self.program.plugins[p].item);
            let ItemKind::Plugin(decl) = &self.program.modules[module].ast.items[item].kind else { continue };
            let decl = decl.clone();
            let mut params = Vec::new();
            let mut derived_spans: Vec<Option<Span>> = Vec::new();
            let mut seen: HashMap<String, Span> = HashMap::new();
            for param in &decl.params {
                if let Some(first) = seen.get(&param.name.name) {
                    self.error(duplicate(&param.name.name, param.name.span, *first));
                    continue;
                }
                if let Some(&m) = self.program.plugins[p].methods.get(&param.name.name) {
                    let method_span = self.program.functions[m].name_span;
                    self.error(duplicate(&param.name.name, method_span, param.name.span));
                }
                seen.insert(param.name.name.clone(), param.name.span);
                let ty = self.resolve_param_type(module, &param.ty);
                if !is_param_type(&ty) {
                    let shown = self.show(&ty);
                    self.error(
                        Diagnostic::new(Code::InvalidParamType, param.ty.span, format!("`{shown}` cannot be a plugin parameter"))
                            .with_label("not a parameter type")
                            .with_help("parameters are scalars, vectors, Color, mat3, mat4, Texture<f32>, Texture<Color>, Tensor or plugin references such as Bsdf"),
                    );
                }
                let (no_diff, choices, derived) = self.plugin_param_attributes(&param.attrs, &ty, param.ty.span);
                params.push(PluginParamDef {
                    name: param.name.name.clone(),
                    ty,
                    no_diff: no_diff || derived.is_some(),
                    span: param.span,
                    choices,
                    derived: derived.map(|(d, _)| d),
                });
                derived_spans.push(param.attrs.iter().find(|a| a.name.name == "derived").map(|a| a.span));
            }
            self.check_derivations(p, &params, &derived_spans);
            self.program.plugins[p].params = params;
        }
    }

    /// Reports structs that contain themselves (they would have infinite size).
    fn check_struct_cycles(&mut self) {
        fn contains(program: &Program, ty: &Type, target: usize, seen: &mut Vec<usize>) -> bool {
            match ty {
                Type::Struct(s) => {
                    *s == target
                        || (!seen.contains(s) && {
                            seen.push(*s);
                            program.structs[*s].fields.iter().any(|(_, t)| contains(program, t, target, seen))
                        })
                }
                Type::Tuple(elems) => elems.iter().any(|t| contains(program, t, target, seen)),
                Type::Array(elem, _) => contains(program, elem, target, seen),
                _ => false,
            }
        }
        let mut cyclic = Vec::new();
        for s in 0..self.program.structs.len() {
            let mut seen = Vec::new();
            if self.program.structs[s].fields.iter().any(|(_, t)| contains(&self.program, t, s, &mut seen)) {
                cyclic.push(s);
            }
        }
        for &s in &cyclic {
            let name = self.program.structs[s].name.clone();
            self.error(
                Diagnostic::new(
                    Code::Recursion,
                    self.program.structs[s].span,
                    format!("struct `{name}` contains itself"),
                )
                .with_label("recursive struct")
                .with_help("a struct value has a fixed size: store the data in a fixed array or separate fields"),
            );
        }
        // Break the cycles so that later walks over field types terminate.
        for s in cyclic {
            self.program.structs[s].fields.clear();
        }
    }

    /// Checks `@no_diff` on a parameter; returns whether it is present. Other attributes are
    /// reported with `why`.
    fn param_attributes(&mut self, attrs: &[Attribute], why: &str) -> bool {
        let mut no_diff = false;
        for attr in attrs {
            match attr.name.name.as_str() {
                "no_diff" => {
                    if no_diff {
                        self.error(duplicate_attr(attr));
                    }
                    no_diff = true;
                    if !attr.args.is_empty() {
                        self.error(
                            Diagnostic::new(Code::AttributeArguments, attr.span, "`@no_diff` takes no arguments")
                                .with_label("remove the arguments"),
                        );
                    }
                }
                _ => self.error(misplaced_or_unknown(attr, why)),
            }
        }
        no_diff
    }

    /// Checks the attributes of a plugin `param` of type `ty`: `@no_diff`, `@choice(..)` and
    /// `@derived(..)`. Returns whether `@no_diff` is present, the choices and the derivation.
    fn plugin_param_attributes(
        &mut self,
        attrs: &[Attribute],
        ty: &Type,
        ty_span: Span,
    ) -> (bool, Vec<String>, Option<(Derivation, Span)>) {
        let (derived_attrs, attrs): (Vec<Attribute>, Vec<Attribute>) =
            attrs.iter().cloned().partition(|a| a.name.name == "derived");
        let (others, choice_attrs): (Vec<Attribute>, Vec<Attribute>) =
            attrs.iter().cloned().partition(|a| a.name.name != "choice");
        let no_diff =
            self.param_attributes(&others, "plugin parameters accept only `@no_diff`, `@choice` and `@derived`");
        let mut derived = None;
        for (k, attr) in derived_attrs.iter().enumerate() {
            if k > 0 {
                self.error(duplicate_attr(attr));
                continue;
            }
            if !matches!(ty, Type::Tensor | Type::Error) {
                let shown = self.show(ty);
                self.error(
                    Diagnostic::new(Code::MisplacedAttribute, attr.span, "`@derived` is not allowed here")
                        .with_label("`@derived` computes the data of a `Tensor` parameter")
                        .with_secondary(ty_span, format!("this parameter is `{shown}`")),
                );
                continue;
            }
            derived = self.derivation(attr).map(|d| (d, attr.span));
        }
        let mut choices = Vec::new();
        for (k, attr) in choice_attrs.iter().enumerate() {
            if k > 0 {
                self.error(duplicate_attr(attr));
                continue;
            }
            if !matches!(ty, Type::Scalar(crate::types::Scalar::U32) | Type::Error) {
                let shown = self.show(ty);
                self.error(
                    Diagnostic::new(Code::MisplacedAttribute, attr.span, "`@choice` is not allowed here")
                        .with_label("`@choice` names the values of a `u32` parameter")
                        .with_secondary(ty_span, format!("this parameter is `{shown}`")),
                );
                continue;
            }
            choices = self.choice_words(attr);
        }
        (no_diff, choices, derived)
    }

    /// The derivation `@derived(..)` names: `distribution_2d, SOURCE, ROWS[, mis_compensated]`,
    /// `tabulate, METHOD, N` or `mean, METHOD, N`, its source or method not yet checked (see
    /// [`Self::check_derivations`]).
    fn derivation(&mut self, attr: &Attribute) -> Option<Derivation> {
        let word = |k: usize| match attr.args.get(k) {
            Some(AttrArg::Path(path)) if path.segments.len() == 1 => Some(path.segments[0].name.as_str()),
            _ => None,
        };
        let span_of = |k: usize| attr.args.get(k).map_or(attr.span, AttrArg::span);
        let row_words = RowWeight::WORDS.map(|(w, _)| format!("`{w}`")).join(" or ");
        let (min, max) = Derivation::TABULATE_COUNTS;
        let n = attr.args.len();
        let problem = match word(0) {
            None if n == 0 => (attr.span, "no derivation given".to_string()),
            Some("distribution_2d") => match (word(1), word(2), word(3)) {
                _ if !(3..=4).contains(&n) => {
                    (attr.span, "`distribution_2d` takes a source and a row weight".to_string())
                }
                (None, _, _) => (span_of(1), "not a plain name".to_string()),
                (_, None, _) => (span_of(2), "not a plain name".to_string()),
                (_, _, w) if n == 4 && w != Some(MIS_COMPENSATED) => {
                    (span_of(3), format!("the optional last word is `{MIS_COMPENSATED}`"))
                }
                (Some(source), Some(rows), _) => match RowWeight::WORDS.iter().find(|(w, _)| *w == rows) {
                    Some(&(_, rows)) => {
                        let source = source.to_string();
                        return Some(Derivation::Distribution2d { source, rows, mis_compensated: n == 4 });
                    }
                    None => (span_of(2), format!("the rows are weighted {row_words}")),
                },
            },
            Some(kind @ ("tabulate" | "mean")) => match (word(1), attr.args.get(2)) {
                _ if n != 3 => (attr.span, format!("`{kind}` takes a method and a number of points")),
                (None, _) => (span_of(1), "not a plain name".to_string()),
                (Some(method), Some(&AttrArg::Int(count, _))) if (min as u64..=max as u64).contains(&count) => {
                    let (method, count, mean) = (method.to_string(), count as u32, kind == "mean");
                    return Some(Derivation::Tabulate { method, count, mean });
                }
                _ => (span_of(2), format!("the number of points is from {min} to {max}")),
            },
            _ => (span_of(0), "the derivation is `distribution_2d`, `tabulate` or `mean`".to_string()),
        };
        self.error(
            Diagnostic::new(Code::AttributeArguments, problem.0, "`@derived` takes a derivation and its arguments")
                .with_label(problem.1)
                .with_help(format!(
                    "write `@derived(distribution_2d, SOURCE, ROWS)` with ROWS {row_words}, optionally followed by `{MIS_COMPENSATED}`, `@derived(tabulate, METHOD, N)` or `@derived(mean, METHOD, N)`"
                )),
        );
        None
    }

    /// Reports a `@derived` param whose source is not another, not derived, `Tensor` param of
    /// the same plugin `p`, or whose tabulated method is not a method `(f32) -> f32` of it.
    fn check_derivations(&mut self, p: PluginId, params: &[PluginParamDef], spans: &[Option<Span>]) {
        for (param, span) in params.iter().zip(spans) {
            let (Some(derivation), Some(span)) = (&param.derived, span) else { continue };
            let (message, label, help) = match derivation {
                Derivation::Distribution2d { source, .. } => {
                    let label = match params.iter().find(|q| &q.name == source) {
                        Some(q) if q.derived.is_none() && matches!(q.ty, Type::Tensor | Type::Error) => continue,
                        Some(q) if q.derived.is_some() => format!("`{source}` is itself derived"),
                        Some(_) => format!("`{source}` is not a `Tensor` parameter"),
                        None => format!("the plugin has no parameter `{source}`"),
                    };
                    (
                        "`@derived` needs a `Tensor` parameter as its source",
                        label,
                        "name a `Tensor` parameter of this plugin that the scene gives",
                    )
                }
                Derivation::Tabulate { method, mean, .. } => {
                    let label = match self.program.plugins[p].methods.get(method) {
                        Some(&f) => {
                            let signature = self.program.functions[f].signature();
                            let f32_type = Type::Scalar(crate::types::Scalar::F32);
                            let ok = |t: &Type| matches!(t, Type::Error) || *t == f32_type;
                            if signature.params.len() == 1 && ok(&signature.params[0]) && ok(&signature.ret) {
                                continue;
                            }
                            let shown = signature_text(&self.program, &signature);
                            format!("`{method}` is `{shown}`")
                        }
                        None => format!("the plugin has no method `{method}`"),
                    };
                    (
                        if *mean {
                            "`@derived(mean, ..)` needs a method `(f32) -> f32`"
                        } else {
                            "`@derived(tabulate, ..)` needs a method `(f32) -> f32`"
                        },
                        label,
                        "name a method of this plugin that takes one `f32` and returns an `f32`",
                    )
                }
            };
            self.error(Diagnostic::new(Code::AttributeArguments, *span, message).with_label(label).with_help(help));
        }
    }

    /// The words of `@choice(a, b, ..)`: at least one, each a plain name, all distinct.
    fn choice_words(&mut self, attr: &Attribute) -> Vec<String> {
        let mut words: Vec<String> = Vec::new();
        let mut problem = None;
        for arg in &attr.args {
            match arg {
                AttrArg::Path(path) if path.segments.len() == 1 => {
                    let word = &path.segments[0].name;
                    if words.contains(word) {
                        problem = Some((path.span, format!("`{word}` is listed twice")));
                    }
                    words.push(word.clone());
                }
                AttrArg::Path(path) => problem = Some((path.span, format!("`{path}` is not a plain name"))),
                AttrArg::Int(_, span) => problem = Some((*span, "a number is not a choice".to_string())),
            }
        }
        if words.is_empty() && problem.is_none() {
            problem = Some((attr.span, "no choices given".to_string()));
        }
        match problem {
            Some((span, label)) => {
                self.error(
                    Diagnostic::new(
                        Code::AttributeArguments,
                        span,
                        "`@choice` takes the distinct names a scene may give",
                    )
                    .with_label(label)
                    .with_help("write the scene file's words in order, e.g. `@choice(repeat, mirror, clamp)`"),
                );
                Vec::new()
            }
            None => words,
        }
    }

    fn check_item_attributes(&mut self) {
        for m in 0..self.program.modules.len() {
            for i in 0..self.program.modules[m].ast.items.len() {
                let item = &self.program.modules[m].ast.items[i];
                let attrs = item.attrs.clone();
                match &item.kind {
                    ItemKind::Fn(_) => {
                        if let Some(f) = self.fn_at(m, i, None) {
                            self.fn_attributes(f, &attrs);
                        }
                    }
                    ItemKind::Plugin(p) => {
                        let methods: Vec<Vec<Attribute>> = p.methods.iter().map(|m| m.attrs.clone()).collect();
                        self.item_attrs_not_allowed(&attrs, "plugins take no attributes");
                        for (j, attrs) in methods.iter().enumerate() {
                            if let Some(f) = self.fn_at(m, i, Some(j)) {
                                self.fn_attributes(f, attrs);
                            }
                        }
                    }
                    ItemKind::Impl(imp) => {
                        let methods: Vec<Vec<Attribute>> = imp.methods.iter().map(|m| m.attrs.clone()).collect();
                        self.item_attrs_not_allowed(&attrs, "impl blocks take no attributes");
                        for (j, attrs) in methods.iter().enumerate() {
                            if let Some(f) = self.fn_at(m, i, Some(j)) {
                                self.fn_attributes(f, attrs);
                            }
                        }
                    }
                    ItemKind::Interface(iface) => {
                        let methods: Vec<Attribute> = iface.methods.iter().flat_map(|m| m.attrs.clone()).collect();
                        self.item_attrs_not_allowed(&attrs, "interfaces take no attributes");
                        self.item_attrs_not_allowed(&methods, "interface methods only declare signatures");
                    }
                    _ => self.item_attrs_not_allowed(&attrs, "only functions and methods take attributes"),
                }
            }
        }
    }

    fn fn_at(&self, module: ModuleId, item: usize, method: Option<usize>) -> Option<FnId> {
        self.program.functions.iter().position(|f| f.module == module && f.decl == (item, method))
    }

    fn item_attrs_not_allowed(&mut self, attrs: &[Attribute], why: &str) {
        for attr in attrs {
            self.error(misplaced_or_unknown(attr, why));
        }
    }

    fn fn_attributes(&mut self, f: FnId, attrs: &[Attribute]) {
        for attr in attrs {
            let mode = match attr.name.name.as_str() {
                "custom_fwd" => DiffMode::Fwd,
                "custom_bwd" => DiffMode::Bwd,
                "no_diff" if self.program.functions[f].is_extern => {
                    if self.program.functions[f].no_diff {
                        self.error(duplicate_attr(attr));
                    } else if !attr.args.is_empty() {
                        self.error(
                            Diagnostic::new(Code::AttributeArguments, attr.span, "`@no_diff` takes no arguments")
                                .with_label("expected `@no_diff`"),
                        );
                    }
                    self.program.functions[f].no_diff = true;
                    continue;
                }
                _ => {
                    let why = "functions accept `@custom_fwd(g)` and `@custom_bwd(g)`; `extern fn`s accept `@no_diff`";
                    self.error(misplaced_or_unknown(attr, why));
                    continue;
                }
            };
            let already = match mode {
                DiffMode::Fwd => self.program.functions[f].custom_fwd,
                DiffMode::Bwd => self.program.functions[f].custom_bwd,
            };
            if already.is_some() {
                self.error(duplicate_attr(attr));
                continue;
            }
            let [AttrArg::Path(path)] = attr.args.as_slice() else {
                self.error(
                    Diagnostic::new(
                        Code::AttributeArguments,
                        attr.span,
                        format!("`@{}` takes one function name", attr.name.name),
                    )
                    .with_label("expected `(function)`"),
                );
                continue;
            };
            let Some(g) = self.resolve_fn_path(f, path) else { continue };
            let expected = match derivative_signature(&self.program, f, mode) {
                Ok(sig) => sig,
                Err(why) => {
                    let name = self.program.fn_path(f);
                    self.error(
                        Diagnostic::new(
                            Code::NotDifferentiable,
                            attr.span,
                            format!("`{name}` has no derivative to customise"),
                        )
                        .with_label(why),
                    );
                    continue;
                }
            };
            let actual = self.program.functions[g].signature();
            if actual != expected {
                let (gname, fname) = (self.program.fn_path(g), self.program.fn_path(f));
                let expected_text = signature_text(&self.program, &expected);
                let actual_text = signature_text(&self.program, &actual);
                let g_span = self.program.functions[g].name_span;
                self.error(
                    Diagnostic::new(
                        Code::CustomDerivativeSignature,
                        path.span,
                        format!(
                            "`{gname}` does not have the signature of `{}({fname})`",
                            if mode == DiffMode::Fwd { "fwd_diff" } else { "bwd_diff" }
                        ),
                    )
                    .with_label(format!("expected `fn{expected_text}`"))
                    .with_secondary(g_span, format!("found `fn{actual_text}`")),
                );
                continue;
            }
            match mode {
                DiffMode::Fwd => self.program.functions[f].custom_fwd = Some(g),
                DiffMode::Bwd => self.program.functions[f].custom_bwd = Some(g),
            }
        }
    }

    /// Resolves the path of a function named in an attribute or `fwd_diff(..)`, as seen from
    /// inside function `from`: a sibling method of the same plugin, a top-level function, or
    /// `Type::method`.
    pub fn resolve_fn_path(&mut self, from: FnId, path: &ast::Path) -> Option<FnId> {
        let (module, owner) = (self.program.functions[from].module, self.program.functions[from].owner);
        if let (FnOwner::Plugin(p), [name]) = (owner, path.segments.as_slice()) {
            if let Some(&g) = self.program.plugins[p].methods.get(&name.name) {
                return Some(g);
            }
        }
        self.resolve_fn_in_module(module, path)
    }

    pub fn resolve_fn_in_module(&mut self, module: ModuleId, path: &ast::Path) -> Option<FnId> {
        let segs = &path.segments;
        // `Type::method` (possibly module-qualified).
        if segs.len() >= 2 {
            let owner_path = ast::Path { segments: segs[..segs.len() - 1].to_vec(), span: path.span };
            let method = &segs[segs.len() - 1];
            let table = match self.lookup_path(module, &owner_path) {
                Some(Found::Item(ItemRef::Struct(s))) => Some(&self.program.structs[s].methods),
                Some(Found::Item(ItemRef::Extern(e))) => Some(&self.program.externs[e].methods),
                Some(Found::Item(ItemRef::Plugin(p))) => Some(&self.program.plugins[p].methods),
                _ => None,
            };
            if let Some(table) = table {
                return match table.get(&method.name) {
                    Some(&f) => Some(f),
                    None => {
                        self.error(
                            Diagnostic::new(
                                Code::UnknownMethod,
                                method.span,
                                format!("`{owner_path}` has no function `{}`", method.name),
                            )
                            .with_label("not found"),
                        );
                        None
                    }
                };
            }
        }
        match self.lookup_path(module, path) {
            Some(Found::Item(ItemRef::Fn(f))) => Some(f),
            Some(Found::Ambiguous(items)) => {
                self.error(crate::context::ambiguous(&self.program, path, &items));
                None
            }
            Some(_) => {
                self.error(
                    Diagnostic::new(Code::WrongKindOfName, path.span, format!("`{path}` is not a function"))
                        .with_label("expected a function"),
                );
                None
            }
            None => {
                self.error(
                    Diagnostic::new(Code::UnknownName, path.span, format!("unknown function `{path}`"))
                        .with_label("not found in this scope"),
                );
                None
            }
        }
    }

    fn check_plugins_against_interfaces(&mut self) {
        for p in 0..self.program.plugins.len() {
            let kind = self.program.plugins[p].kind;
            let plugin_span = self.program.plugins[p].span;
            let plugin_name = self.program.plugins[p].name.clone();
            let Some(interface) = self.program.interfaces.get(&kind) else {
                self.error(
                    Diagnostic::new(
                        Code::NoInterfaceForKind,
                        plugin_span,
                        format!("no interface is declared for `{}` plugins", kind.keyword()),
                    )
                    .with_label("cannot check this plugin")
                    .with_help(format!(
                        "the standard library declares `interface {} {{ ... }}`; check that the prelude is available",
                        kind.keyword()
                    )),
                );
                continue;
            };
            for &required in &interface.methods.clone() {
                let name = self.program.functions[required].name.clone();
                let expected = self.program.functions[required].signature();
                let required_span = self.program.functions[required].name_span;
                let Some(&actual) = self.program.plugins[p].methods.get(&name) else {
                    let text = signature_text(&self.program, &expected);
                    self.error(
                        Diagnostic::new(
                            Code::MissingInterfaceMethod,
                            plugin_span,
                            format!("{} `{plugin_name}` does not implement `{name}`", kind.keyword()),
                        )
                        .with_label(format!("missing `fn {name}{text}`"))
                        .with_secondary(required_span, "required by the interface here"),
                    );
                    continue;
                };
                let found = self.program.functions[actual].signature();
                if found != expected {
                    let (want, got) = (signature_text(&self.program, &expected), signature_text(&self.program, &found));
                    let span = self.program.functions[actual].name_span;
                    self.error(
                        Diagnostic::new(
                            Code::InterfaceSignatureMismatch,
                            span,
                            format!("`{name}` does not match the `{}` interface", kind.keyword()),
                        )
                        .with_label(format!("found `fn {name}{got}`"))
                        .with_secondary(required_span, format!("expected `fn {name}{want}`")),
                    );
                }
            }
        }
    }
}

pub fn duplicate_attr(attr: &Attribute) -> Diagnostic {
    Diagnostic::new(Code::DuplicateAttribute, attr.span, format!("`@{}` is given twice", attr.name.name))
        .with_label("remove this one")
}

/// The optional last word of `@derived(distribution_2d, ..)`.
const MIS_COMPENSATED: &str = "mis_compensated";

const KNOWN_ATTRIBUTES: &[&str] = &["choice", "custom_fwd", "custom_bwd", "derived", "max_iters", "no_diff"];

pub fn misplaced_or_unknown(attr: &Attribute, why: &str) -> Diagnostic {
    if KNOWN_ATTRIBUTES.contains(&attr.name.name.as_str()) {
        Diagnostic::new(Code::MisplacedAttribute, attr.span, format!("`@{}` is not allowed here", attr.name.name))
            .with_label(why.to_string())
    } else {
        Diagnostic::new(Code::UnknownAttribute, attr.span, format!("unknown attribute `@{}`", attr.name.name))
            .with_label("not an attribute")
            .with_help(format!(
                "attributes are: {}",
                KNOWN_ATTRIBUTES.iter().map(|a| format!("@{a}")).collect::<Vec<_>>().join(", ")
            ))
    }
}
