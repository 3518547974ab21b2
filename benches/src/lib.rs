//! Inputs shared by the benchmarks.

pub mod microfacet;

use drs_sema::RootSource;
use std::path::{Path, PathBuf};

/// Every `.drs` file under `dir`, sorted, with its text.
pub fn drs_sources(dir: &Path) -> Vec<RootSource> {
    let mut paths = Vec::new();
    collect(dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("reading a bundled .drs file");
            RootSource { name: path.display().to_string(), path: Some(path), text }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "drs") {
            out.push(path);
        }
    }
}

/// Number of lines in the sources, for throughput.
pub fn line_count(sources: &[RootSource]) -> u64 {
    sources.iter().map(|s| s.text.lines().count() as u64).sum()
}
