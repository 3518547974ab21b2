//! Helpers shared by the cross-crate tests in `tests/tests/`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use drs_render::{LibraryOptions, PluginLibrary};

pub mod chi2;
pub mod plugin_bench;

/// A deterministic stream of uniform numbers in [0, 1) (SplitMix64), for tests that need
/// reproducible random inputs.
pub struct Uniforms(pub u64);

impl Uniforms {
    /// The next number: the top 24 bits of the next SplitMix64 output, times 2^-24.
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A uniform number in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    /// `n` triples of numbers, as a BSDF's `sample(u1, u2)` takes them.
    pub fn triples(&mut self, n: usize) -> Vec<[f32; 3]> {
        (0..n).map(|_| [self.next_f32(), self.next_f32(), self.next_f32()]).collect()
    }
}

/// The stdlib plugins, compiled once per test binary, for tests that load scenes.
pub fn stdlib_library() -> Arc<PluginLibrary> {
    static LIBRARY: OnceLock<Arc<PluginLibrary>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            Arc::new(PluginLibrary::load(&LibraryOptions::default()).unwrap_or_else(|e| panic!("the stdlib: {e}")))
        })
        .clone()
}

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
