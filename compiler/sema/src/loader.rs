//! Finds and parses the modules of a program: the root files, everything they import
//! (transitively), and the implicit prelude.

use crate::program::{Module, ModuleId};
use drs_diagnostics::{Code, Diagnostic, SourceMap};
use drs_syntax::ast::{ItemKind, Path as AstPath};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where modules come from.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The standard library directory, searched after the importing file's directory and the
    /// source of the implicit prelude. `None` checks programs without a standard library.
    pub stdlib_dir: Option<PathBuf>,
}

/// A root source given by the caller.
pub struct RootSource {
    /// Shown in diagnostics.
    pub name: String,
    /// The file the text came from, if any; imports are searched next to it.
    pub path: Option<PathBuf>,
    pub text: String,
}

/// How each import of each module was resolved.
#[derive(Default)]
pub struct ImportTable {
    /// (module, item index) of an `import` item → the imported module.
    pub explicit: HashMap<(ModuleId, usize), ModuleId>,
    /// Module → the prelude module it implicitly glob-imports.
    pub prelude: HashMap<ModuleId, ModuleId>,
}

pub struct Loaded {
    pub modules: Vec<Module>,
    pub imports: ImportTable,
}

pub const PRELUDE: &str = "prelude";

pub fn load(
    roots: Vec<RootSource>,
    options: &LoadOptions,
    sources: &mut SourceMap,
    diagnostics: &mut Vec<Diagnostic>,
) -> Loaded {
    let mut loader = Loader {
        options,
        sources,
        diagnostics,
        modules: Vec::new(),
        by_path: HashMap::new(),
        imports: ImportTable::default(),
        stdlib: options.stdlib_dir.as_ref().and_then(|d| d.canonicalize().ok()),
    };
    for root in roots {
        let canonical = root.path.as_ref().and_then(|p| p.canonicalize().ok());
        // The same file given twice is checked once.
        if canonical.as_ref().is_some_and(|c| loader.by_path.contains_key(c)) {
            continue;
        }
        let name = root
            .path
            .as_ref()
            .and_then(|p| p.file_stem())
            .map_or_else(|| root.name.clone(), |s| s.to_string_lossy().into_owned());
        loader.add(name, root.name, root.path.unwrap_or_default(), canonical, root.text);
    }
    // Modules appended while walking are walked too.
    let mut next = 0;
    while next < loader.modules.len() {
        loader.resolve_imports(next);
        next += 1;
    }
    Loaded { modules: loader.modules, imports: loader.imports }
}

struct Loader<'a> {
    options: &'a LoadOptions,
    sources: &'a mut SourceMap,
    diagnostics: &'a mut Vec<Diagnostic>,
    modules: Vec<Module>,
    by_path: HashMap<PathBuf, ModuleId>,
    imports: ImportTable,
    stdlib: Option<PathBuf>,
}

impl Loader<'_> {
    fn add(
        &mut self,
        name: String,
        display: String,
        path: PathBuf,
        canonical: Option<PathBuf>,
        text: String,
    ) -> ModuleId {
        let file = self.sources.add(display, text);
        let (ast, mut diags) = drs_syntax::parse(&self.sources.get(file).text, file);
        self.diagnostics.append(&mut diags);
        let is_stdlib = match (&canonical, &self.stdlib) {
            (Some(c), Some(s)) => c.starts_with(s),
            _ => false,
        };
        let id = self.modules.len();
        self.modules.push(Module { name, file, path, is_stdlib, ast });
        if let Some(c) = canonical {
            self.by_path.insert(c, id);
        }
        id
    }

    fn resolve_imports(&mut self, module: ModuleId) {
        let dir = self.modules[module].path.parent().map(Path::to_path_buf);
        let imports: Vec<(usize, AstPath)> = self.modules[module]
            .ast
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match &item.kind {
                ItemKind::Import(import) => Some((i, import.module.clone())),
                _ => None,
            })
            .collect();
        for (item, path) in imports {
            let segments: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
            match self.find(dir.as_deref(), &segments) {
                Some(target) => {
                    self.imports.explicit.insert((module, item), target);
                }
                None => {
                    let mut searched = Vec::new();
                    if let Some(d) = &dir {
                        if !d.as_os_str().is_empty() {
                            searched.push(d.display().to_string());
                        }
                    }
                    if let Some(s) = &self.options.stdlib_dir {
                        searched.push(s.display().to_string());
                    }
                    let file = format!("{}.drs", segments.join("/"));
                    let help = if searched.is_empty() {
                        format!("no search directory is configured for `{file}`")
                    } else {
                        format!("looked for `{file}` in: {}", searched.join(", "))
                    };
                    self.diagnostics.push(
                        Diagnostic::new(Code::UnknownModule, path.span, format!("unknown module `{path}`"))
                            .with_label("no such module")
                            .with_help(help),
                    );
                }
            }
        }
        if !self.modules[module].is_stdlib && self.stdlib.is_some() {
            if let Some(prelude) = self.find(None, &[PRELUDE]) {
                self.imports.prelude.insert(module, prelude);
            }
        }
    }

    /// Loads the module `segments` from `dir` or the stdlib directory; `None` if not found or
    /// unreadable.
    fn find(&mut self, dir: Option<&Path>, segments: &[&str]) -> Option<ModuleId> {
        let relative: PathBuf = segments.iter().collect::<PathBuf>().with_extension("drs");
        let candidates = dir.into_iter().map(Path::to_path_buf).chain(self.options.stdlib_dir.clone());
        for base in candidates {
            let path = base.join(&relative);
            let Ok(canonical) = path.canonicalize() else { continue };
            if let Some(&id) = self.by_path.get(&canonical) {
                return Some(id);
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            return Some(self.add(segments.join("::"), path.display().to_string(), path, Some(canonical), text));
        }
        None
    }
}
