//! Sets `DRS_CRANELIFT_BUILD_ID`: a hash of the sources and manifests of this crate and of the
//! crates that decide what it compiles (drs-ir, and drs-opt with drs-interp, which prepare
//! modules and whose analyses the code generator uses), and of the workspace's `Cargo.lock`
//! (when there is one). It is part of every kernel cache key, so that code cached by a
//! different backend, optimiser or Cranelift is never reused.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for krate in [root.clone(), root.join("../../ir"), root.join("../../opt"), root.join("../../interp")] {
        let mut sources = Vec::new();
        // The directory too, so that an added file also reruns this script.
        println!("cargo::rerun-if-changed={}", krate.join("src").display());
        collect(&krate.join("src"), &mut sources);
        sources.sort();
        files.extend(sources);
        files.push(krate.join("Cargo.toml"));
    }
    files.push(root.join("build.rs"));
    let lock = root.join("../../../Cargo.lock");
    if lock.exists() {
        files.push(lock);
    }
    // The hasher only has to be stable within one build of this script.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for file in &files {
        println!("cargo::rerun-if-changed={}", file.display());
        file.strip_prefix(&root).unwrap_or(file).hash(&mut h);
        std::fs::read(file).unwrap_or_default().hash(&mut h);
    }
    println!("cargo::rustc-env=DRS_CRANELIFT_BUILD_ID={:016x}", h.finish());
}
