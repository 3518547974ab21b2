//! Every function of the lowered standard library and of `lang-examples/` — as lowered, as
//! optimised, and as prepared for a backend (math expanded) — is written as `.drs`, checked
//! without diagnostics, lowered again, and run against the original on random arguments:
//! identical results, host calls and buffers, bit for bit. (Functions that differentiate do
//! not lower yet and are not in the module.)

mod common;

use common::{random_args, Rng, RoundTrip, World};
use drs_ir::{FuncId, Module};
use drs_opt::OptLevel;
use drs_sema::RootSource;
use std::path::{Path, PathBuf};

/// Argument sets per function.
const SETS: usize = 24;

fn drs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the bundled directory exists").flatten() {
        let path = entry.path();
        if path.is_dir() {
            drs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "drs") {
            out.push(path);
        }
    }
}

/// The stdlib and the examples, lowered (the functions that lower).
fn bundled_module() -> Module {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut files = Vec::new();
    drs_files(&root.join("stdlib"), &mut files);
    drs_files(&root.join("lang-examples"), &mut files);
    files.sort();
    let roots = files
        .iter()
        .map(|p| RootSource {
            name: p.display().to_string(),
            path: Some(p.clone()),
            text: std::fs::read_to_string(p).unwrap(),
        })
        .collect();
    let checked = drs_sema::check(roots, &common::options());
    assert!(
        checked.diagnostics.is_empty(),
        "{}",
        drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false)
    );
    let lowered = drs_lower::lower_program(&checked.program);
    let module = lowered.module;
    assert!(module.functions.len() > 100, "only {} functions lowered", module.functions.len());
    module
}

/// Writes every function of `module` as one program and compares each with its original.
fn round_trip_all(module: &Module, seed: u64) {
    let all: Vec<FuncId> = (0..module.functions.len() as u32).map(FuncId).collect();
    let round_trip = RoundTrip::new(module, &all);
    assert_eq!(round_trip.written.functions.len(), all.len());
    let world = World { buffer_len: 4, seed };
    let mut rng = Rng::new(seed);
    for &f in &all {
        for _ in 0..SETS {
            let args = random_args(module, f, &mut rng);
            round_trip.compare(module, f, &args, &world);
        }
    }
}

#[test]
fn lowered_bundled_functions_round_trip() {
    round_trip_all(&bundled_module(), 1);
}

#[test]
fn optimised_bundled_functions_round_trip() {
    let mut module = bundled_module();
    drs_opt::optimize(&mut module, OptLevel::Default);
    round_trip_all(&module, 2);
}

#[test]
fn backend_ready_bundled_functions_round_trip() {
    // Math expanded into `__drs_*` helpers (copysign, bit casts), fully inlined.
    let module = drs_opt::prepare_for_backend(&bundled_module(), OptLevel::Full);
    round_trip_all(&module, 3);
}

#[test]
fn one_root_brings_its_callees_and_only_them() {
    let module = bundled_module();
    let root = module.find("Diffuse::eval").expect("the stdlib has Diffuse::eval");
    let round_trip = RoundTrip::new(&module, &[root]);
    let written = &round_trip.written;
    assert!(written.source.contains("fn Diffuse__eval(\n    instance: u32,\n"), "{}", written.source);
    // The texture parameter is a handle, read from the plugin's parameter buffer.
    assert!(written.source.contains("extern fn buffer_load_Diffuse_reflectance_0(index: u32) -> u32;"));
    // Callees come first; nothing else is written.
    let position = |name: &str| written.source.find(&format!("\nfn {name}(")).unwrap_or(usize::MAX);
    for (&f, name) in &written.functions {
        if f != root {
            assert!(position(name) < position("Diffuse__eval"), "`{name}` after its caller");
        }
    }
    // Exactly the functions reachable through calls are written.
    let mut reachable = std::collections::BTreeSet::from([root]);
    let mut pending = vec![root];
    while let Some(f) = pending.pop() {
        let mut calls = Vec::new();
        collect_calls(&module.function(f).body, &mut calls);
        for g in calls {
            if reachable.insert(g) {
                pending.push(g);
            }
        }
    }
    assert_eq!(written.functions.keys().copied().collect::<std::collections::BTreeSet<_>>(), reachable);
    let world = World { buffer_len: 4, seed: 5 };
    let mut rng = Rng::new(5);
    for _ in 0..200 {
        let mut args = random_args(&module, root, &mut rng);
        args[0] = rng.below(5) as u32; // the instance: in range mostly
        round_trip.compare(&module, root, &args, &world);
    }
}

fn collect_calls(region: &drs_ir::Region, out: &mut Vec<FuncId>) {
    for inst in &region.insts {
        match &inst.op {
            drs_ir::Op::Call(g, _) => out.push(*g),
            drs_ir::Op::If { then, els, .. } => {
                collect_calls(then, out);
                collect_calls(els, out);
            }
            drs_ir::Op::Loop { body, .. } => collect_calls(body, out),
            _ => {}
        }
    }
}
