//! Every function of the bundled programs — the standard library, the examples and the valid
//! UI programs — lowers to IR that the verifier accepts. Functions that call `fwd_diff` or
//! `bwd_diff` (lowered by the future autodiff stage) are the only ones reported, with the
//! functions that call them.

use drs_lower::{lower_program, LowerError, Lowered};
use drs_sema::{LoadOptions, RootSource};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn drs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("bundled directory exists").flatten() {
        let path = entry.path();
        if path.is_dir() {
            drs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "drs") {
            out.push(path);
        }
    }
}

fn options() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

fn check(files: &[PathBuf]) -> drs_sema::Checked {
    let roots = files
        .iter()
        .map(|p| RootSource {
            name: p.display().to_string(),
            path: Some(p.clone()),
            text: std::fs::read_to_string(p).unwrap(),
        })
        .collect();
    let checked = drs_sema::check(roots, &options());
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false)
    );
    checked
}

/// Lowers, verifies, and checks that every error is about a derivative call.
fn lower_and_verify(checked: &drs_sema::Checked) -> Lowered {
    let lowered = lower_program(&checked.program);
    if let Err(e) = drs_ir::verify_module(&lowered.module) {
        let f = lowered.module.functions.iter().find(|f| f.name == e.function);
        panic!("{e}\n{}", f.map(|f| drs_ir::print_function(&lowered.module, f)).unwrap_or_default());
    }
    for e in &lowered.errors {
        let about_derivatives = match e {
            LowerError::Unsupported { message, .. } => message.contains("fwd_diff"),
            LowerError::Dependency { .. } => true,
            LowerError::Internal { .. } => false,
        };
        assert!(about_derivatives, "{}", e.render(&checked.sources));
    }
    // Every function with a body either lowered or was reported.
    let program = &checked.program;
    for f in 0..program.functions.len() {
        let def = &program.functions[f];
        if def.is_extern || program.fn_decl(f).body.is_none() {
            continue;
        }
        if matches!(def.owner, drs_sema::program::FnOwner::Interface(_)) {
            continue;
        }
        let name = program.fn_path(f);
        assert!(
            lowered.functions.contains_key(&f) || lowered.errors.iter().any(|e| e.function().ends_with(&name)),
            "`{name}` neither lowered nor reported"
        );
    }
    lowered
}

#[test]
fn stdlib_and_examples_lower_and_verify() {
    let mut files = Vec::new();
    drs_files(&root().join("stdlib"), &mut files);
    drs_files(&root().join("lang-examples"), &mut files);
    files.sort();
    let checked = check(&files);
    let lowered = lower_and_verify(&checked);
    assert!(lowered.module.functions.len() > 50, "only {} functions lowered", lowered.module.functions.len());
    // Only the functions that differentiate are left out.
    for e in &lowered.errors {
        let file = checked.sources.get(e.span().file).name.clone();
        assert!(file.contains("autodiff") || file.contains("custom_adjoint"), "{}", e.render(&checked.sources));
    }
    // The stdlib alone lowers completely.
    let mut stdlib = Vec::new();
    drs_files(&root().join("stdlib"), &mut stdlib);
    stdlib.sort();
    let checked = check(&stdlib);
    let lowered = lower_and_verify(&checked);
    assert!(lowered.is_complete(), "{:?}", lowered.errors);
    // Plugin params have their buffers and defaults.
    let diffuse = lowered.plugins.iter().find(|p| p.name == "Diffuse").expect("the stdlib has Diffuse");
    let reflectance = &diffuse.params[0];
    assert_eq!(reflectance.name, "reflectance");
    assert_eq!(lowered.module.buffers[reflectance.buffers[0] as usize].name, "Diffuse.reflectance[0]");
    assert_eq!(reflectance.default.as_ref().map(|v| v.to_string()).as_deref(), Some("[0.5, 0.5, 0.5]"));
}

#[test]
fn valid_ui_programs_lower_and_verify() {
    let mut files = Vec::new();
    drs_files(&root().join("tests/ui/valid"), &mut files);
    files.sort();
    assert!(files.len() >= 15);
    let mut lowered_any = 0;
    for file in &files {
        let checked = check(std::slice::from_ref(file));
        let lowered = lower_and_verify(&checked);
        let has_derivatives = std::fs::read_to_string(file).unwrap().contains("_diff(");
        if !has_derivatives {
            assert!(lowered.is_complete(), "{}: {:?}", file.display(), lowered.errors);
        }
        lowered_any += lowered.module.functions.len();
    }
    assert!(lowered_any > 100);
}
