//! The bundled programs — the standard library and the examples — check without a single
//! diagnostic: this is the README's main job.

use drs_sema::{LoadOptions, RootSource};
use std::path::{Path, PathBuf};

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

#[test]
fn stdlib_and_examples_check_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    drs_files(&root.join("stdlib"), &mut files);
    drs_files(&root.join("lang-examples"), &mut files);
    files.sort();
    assert!(files.len() >= 10, "expected the bundled stdlib and examples, found {files:?}");
    let roots = files
        .iter()
        .map(|p| RootSource {
            name: p.display().to_string(),
            path: Some(p.clone()),
            text: std::fs::read_to_string(p).unwrap(),
        })
        .collect();
    let checked = drs_sema::check(roots, &LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) });
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false)
    );
    // Every plugin kind has its interface in the standard library.
    assert_eq!(checked.program.interfaces.len(), drs_sema::types::PluginKind::ALL.len());
}
