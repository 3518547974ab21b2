//! The bundled programs — the standard library and the examples — check without a single
//! diagnostic: this is the README's main job.

use drs_sema::{LoadOptions, RootSource};
use std::path::Path;

#[test]
fn stdlib_and_examples_check_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    files.extend(drs_tests::drs_files_under(&root.join("stdlib")));
    files.extend(drs_tests::drs_files_under(&root.join("lang-examples")));
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
