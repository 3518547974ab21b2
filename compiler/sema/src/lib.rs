//! Semantic analysis of `.drs` programs: loading modules, resolving names and checking types.
//!
//! [`check`] is the entry point: it parses the given sources and everything they import, and
//! returns the checked [`Program`] with every diagnostic found. A program without diagnostics
//! is what later stages (IR lowering, autodiff, backends) accept.

mod builtins;
mod check;
mod collect;
mod context;
mod derivative;
mod loader;
pub mod program;
mod scope;
pub mod types;

pub use derivative::{derivative_signature, signature_text};
pub use loader::{LoadOptions, RootSource};
pub use program::Program;

use drs_diagnostics::{Diagnostic, SourceMap};
use std::path::{Path, PathBuf};

/// The outcome of checking: the sources (for rendering diagnostics), the program and the
/// diagnostics, sorted by position.
pub struct Checked {
    pub sources: SourceMap,
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks a program made of `roots` and the modules they import.
pub fn check(roots: Vec<RootSource>, options: &LoadOptions) -> Checked {
    let mut sources = SourceMap::new();
    let mut diagnostics = Vec::new();
    let loaded = loader::load(roots, options, &mut sources, &mut diagnostics);
    let mut sema = collect::collect(loaded, diagnostics);
    sema.check_bodies();
    let mut diagnostics = sema.diagnostics;
    drs_diagnostics::sort(&mut diagnostics);
    diagnostics.dedup();
    Checked { sources, program: sema.program, diagnostics }
}

/// Checks one in-memory source (imports resolve against the stdlib directory only).
pub fn check_source(name: &str, text: &str, options: &LoadOptions) -> Checked {
    check(vec![RootSource { name: name.to_string(), path: None, text: text.to_string() }], options)
}

/// Reads and checks files. Unreadable files are returned as errors before any checking.
pub fn check_files(paths: &[PathBuf], options: &LoadOptions) -> Result<Checked, (PathBuf, std::io::Error)> {
    let mut roots = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| (path.clone(), e))?;
        roots.push(RootSource { name: path.display().to_string(), path: Some(path.clone()), text });
    }
    Ok(check(roots, options))
}

/// The standard library shipped in this repository (`stdlib/` at the workspace root), used
/// when no other directory is configured.
pub fn bundled_stdlib_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../stdlib")
}
