//! Module scopes: what each name means at the top level of a module, through its own items,
//! its imports (explicit, glob, qualified, re-exported) and the implicit prelude.

use crate::loader::ImportTable;
use crate::program::{ItemRef, ModuleId, Program};
use drs_diagnostics::{Code, Diagnostic, Span};
use drs_syntax::ast::{ImportNames, ItemKind};
use std::collections::{HashMap, HashSet};

/// What a top-level name means in a module.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    Item(ItemRef),
    /// Several glob imports provide different items with this name.
    Ambiguous(Vec<ItemRef>),
    /// A module imported by `import m;`, used as a qualifier.
    Module(ModuleId),
}

#[derive(Default)]
struct ModuleScope {
    /// Names from `import m::{a, b};`.
    listed: HashMap<String, ItemRef>,
    /// Modules whose exports are glob-imported.
    globs: Vec<ModuleId>,
    /// The implicit prelude: consulted last, so a user's own glob import wins over it.
    prelude: Option<ModuleId>,
    /// Modules imported for qualified use, by their last path segment.
    qualified: HashMap<String, ModuleId>,
}

pub struct Scopes {
    scopes: Vec<ModuleScope>,
    /// Every name a module offers to importers: its items and what it re-exports.
    exports: Vec<HashMap<String, Vec<ItemRef>>>,
}

impl Scopes {
    pub fn build(program: &Program, imports: &ImportTable, diagnostics: &mut Vec<Diagnostic>) -> Scopes {
        let count = program.modules.len();
        let mut exports = vec![None; count];
        for m in 0..count {
            compute_exports(program, imports, m, &mut exports, &mut HashSet::new());
        }
        let exports: Vec<HashMap<String, Vec<ItemRef>>> = exports.into_iter().map(Option::unwrap_or_default).collect();
        let mut scopes = Vec::with_capacity(count);
        for (m, module) in program.modules.iter().enumerate() {
            let mut scope = ModuleScope::default();
            for (i, item) in module.ast.items.iter().enumerate() {
                let ItemKind::Import(import) = &item.kind else { continue };
                let Some(&target) = imports.explicit.get(&(m, i)) else { continue };
                match &import.names {
                    ImportNames::Module => {
                        let alias = import.module.last();
                        match scope.qualified.get(&alias.name) {
                            Some(&other) if other != target => diagnostics.push(
                                Diagnostic::new(
                                    Code::DuplicateDefinition,
                                    alias.span,
                                    format!("two imported modules are named `{}`", alias.name),
                                )
                                .with_label("a second module with this name")
                                .with_help(format!(
                                    "import one of them by item instead: `import {}::{{..}};`",
                                    import.module
                                )),
                            ),
                            _ => {
                                scope.qualified.insert(alias.name.clone(), target);
                            }
                        }
                    }
                    ImportNames::Glob(_) => scope.globs.push(target),
                    ImportNames::List(names) => {
                        for name in names {
                            match exports[target].get(&name.name).map(Vec::as_slice) {
                                Some([item, ..]) => {
                                    scope.listed.insert(name.name.clone(), *item);
                                }
                                _ => diagnostics.push(
                                    Diagnostic::new(
                                        Code::UnknownImport,
                                        name.span,
                                        format!("module `{}` has no item `{}`", import.module, name.name),
                                    )
                                    .with_label("not found"),
                                ),
                            }
                        }
                    }
                }
            }
            scope.prelude = imports.prelude.get(&m).copied();
            scopes.push(scope);
        }
        Scopes { scopes, exports }
    }

    /// Looks a top-level name up in a module: own items, listed imports, qualified module
    /// names, then glob imports, then the prelude.
    pub fn lookup(&self, program: &Program, module: ModuleId, name: &str) -> Option<Found> {
        if let Some(item) = program.module_items[module].get(name) {
            return Some(Found::Item(*item));
        }
        let scope = &self.scopes[module];
        if let Some(item) = scope.listed.get(name) {
            return Some(Found::Item(*item));
        }
        if let Some(m) = scope.qualified.get(name) {
            return Some(Found::Module(*m));
        }
        self.lookup_in_globs(&scope.globs, name).or_else(|| self.lookup_in_globs(scope.prelude.as_slice(), name))
    }

    fn lookup_in_globs(&self, globs: &[ModuleId], name: &str) -> Option<Found> {
        let mut found: Vec<ItemRef> = Vec::new();
        for &glob in globs {
            for item in self.exports[glob].get(name).into_iter().flatten() {
                if !found.contains(item) {
                    found.push(*item);
                }
            }
        }
        match found.len() {
            0 => None,
            1 => Some(Found::Item(found[0])),
            _ => Some(Found::Ambiguous(found)),
        }
    }

    /// Looks a name up among what `module` exports (for `m::name`).
    pub fn lookup_export(&self, module: ModuleId, name: &str) -> Option<Found> {
        match self.exports[module].get(name).map(Vec::as_slice) {
            None | Some([]) => None,
            Some([one]) => Some(Found::Item(*one)),
            Some(many) => Some(Found::Ambiguous(many.to_vec())),
        }
    }
}

fn compute_exports(
    program: &Program,
    imports: &ImportTable,
    module: ModuleId,
    memo: &mut Vec<Option<HashMap<String, Vec<ItemRef>>>>,
    visiting: &mut HashSet<ModuleId>,
) -> HashMap<String, Vec<ItemRef>> {
    if let Some(done) = &memo[module] {
        return done.clone();
    }
    let mut out: HashMap<String, Vec<ItemRef>> =
        program.module_items[module].iter().map(|(name, item)| (name.clone(), vec![*item])).collect();
    // A re-export cycle contributes nothing new on the way round.
    if !visiting.insert(module) {
        return out;
    }
    for (i, item) in program.modules[module].ast.items.iter().enumerate() {
        let ItemKind::Import(import) = &item.kind else { continue };
        if !import.is_pub {
            continue;
        }
        let Some(&target) = imports.explicit.get(&(module, i)) else { continue };
        let theirs = compute_exports(program, imports, target, memo, visiting);
        let mut add = |name: &str, items: &[ItemRef]| {
            // The module's own items take precedence over re-exported ones.
            if program.module_items[module].contains_key(name) {
                return;
            }
            let entry = out.entry(name.to_string()).or_default();
            for item in items {
                if !entry.contains(item) {
                    entry.push(*item);
                }
            }
        };
        match &import.names {
            ImportNames::Module => {}
            ImportNames::Glob(_) => {
                for (name, items) in &theirs {
                    add(name, items);
                }
            }
            ImportNames::List(names) => {
                for name in names {
                    if let Some(items) = theirs.get(&name.name) {
                        add(&name.name, items);
                    }
                }
            }
        }
    }
    visiting.remove(&module);
    memo[module] = Some(out.clone());
    out
}

/// Span helper for "first defined here" notes.
pub fn duplicate(name: &str, span: Span, first: Span) -> Diagnostic {
    Diagnostic::new(Code::DuplicateDefinition, span, format!("`{name}` is defined more than once"))
        .with_label("redefined here")
        .with_secondary(first, "first defined here")
}
