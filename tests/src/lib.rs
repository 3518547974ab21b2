//! Helpers shared by the cross-crate tests in `tests/tests/`.

use std::path::{Path, PathBuf};

/// The workspace root (the parent of the `tests` package).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Every `.drs` file under `dir` (recursively, sorted); none when `dir` does not exist.
pub fn drs_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "drs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
