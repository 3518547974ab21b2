//! Every function of the bundled standard library (all `.drs` files of
//! `drs_sema::bundled_stdlib_dir()`, plugins included) runs on every stage and backend with
//! random arguments, a different set in every lane, and the results agree (see
//! `differential/mod.rs` for exactly what is compared): the interpreter on the lowered and the
//! optimised module bit for bit; the interpreter on the expanded module and Cranelift with 1, 4
//! and 8 lanes bit for bit; unexpanded against expanded within the math library's bound where
//! a result is a transcendental of exact arguments, bit for bit where no transcendental
//! contributes, and only measured elsewhere (the largest difference is printed per function).
//!
//! Arguments are random per parameter type, shaped by the parameter's name where that helps
//! (unit-ish directions, samples in [0, 1), colours in [0, 1.5), handles 0..3); some are
//! extreme or NaN — backends must agree on those too. Plugin methods get an instance in 0..3;
//! every buffer (plugin parameters) has four random elements; every extern is bound to a
//! deterministic fake (a hash of its arguments). Functions that fail to lower are listed in
//! the output and skipped.

mod differential;

use differential::{Env, Rng, Stages, UlpStats, LEVELS};
use drs_cranelift::Lanes;
use drs_ir::Ty;
use drs_lower::{FnLayout, Layout};
use drs_sema::LoadOptions;
use std::fmt::Write as _;

/// Argument sets per function (64 groups of 8 lanes, 128 of 4, and a partial last group).
const SETS: usize = 515;

/// Functions not checked, with the reason. Each entry is a known bug of another stage,
/// described in the report that added it; remove it when the bug is fixed.
const KNOWN_BUGS: &[(&str, &str)] = &[];

/// A random value of a layout, flattened, shaped by the name of the parameter or field.
fn value(rng: &mut Rng, layout: &Layout, name: &str, out: &mut Vec<u32>) {
    let lower = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    match layout {
        Layout::Scalar(Ty::F32) => out.push(scalar_f32(rng, &lower)),
        Layout::Scalar(Ty::Bool) => out.push((rng.next() & 1) as u32),
        Layout::Scalar(ty @ (Ty::U32 | Ty::I32)) => out.push(if has(&["flag", "mode", "type", "component"]) {
            match rng.below(4) {
                0 => u32::MAX,
                1 => 0,
                _ => (rng.next() as u32) & 0x3ffff,
            }
        } else if *ty == Ty::U32 && rng.below(4) > 0 {
            rng.below(4) as u32
        } else {
            rng.int_bits()
        }),
        Layout::Handle(_) => out.push(rng.below(4) as u32),
        Layout::Vector(Ty::F32, 3) if !has(&["uv", "sample"]) => {
            // A direction: unit length most of the time.
            let v = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
            let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-6);
            let scale = match rng.below(10) {
                0 => rng.range(0.0, 10.0),
                1 => 0.0,
                _ => 1.0 / len,
            };
            for c in v {
                if rng.below(40) == 0 {
                    out.push(rng.f32_bits());
                } else {
                    out.push((c * scale).to_bits());
                }
            }
        }
        Layout::Vector(Ty::F32, n) => {
            for _ in 0..*n {
                out.push(if rng.below(20) == 0 { rng.f32_bits() } else { rng.unit().to_bits() });
            }
        }
        Layout::Vector(ty, n) => {
            for _ in 0..*n {
                out.push(rng.bits(*ty));
            }
        }
        Layout::Color => {
            for _ in 0..3 {
                out.push(if rng.below(20) == 0 { rng.f32_bits() } else { rng.range(0.0, 1.5).to_bits() });
            }
        }
        Layout::Matrix(n) => {
            for _ in 0..(*n as usize * *n as usize) {
                out.push(rng.range(-2.0, 2.0).to_bits());
            }
        }
        Layout::Tuple(elems) => {
            for (i, l) in elems.iter().enumerate() {
                value(rng, l, &format!("{name}.{i}"), out);
            }
        }
        Layout::Array(elem, n) => {
            for _ in 0..*n {
                value(rng, elem, name, out);
            }
        }
        Layout::Struct { fields, .. } => {
            for (f, l) in fields {
                value(rng, l, f, out);
            }
        }
        // Only plugin params are tensors, and they have no scalars of their own.
        Layout::Tensor => {}
    }
}

fn scalar_f32(rng: &mut Rng, name: &str) -> u32 {
    if rng.below(12) == 0 {
        return rng.f32_bits();
    }
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    let x = if has(&["sample", "u"]) && name.len() <= 8 {
        rng.unit()
    } else if has(&["eta", "ior"]) {
        rng.range(1.0, 2.5)
    } else if has(&["alpha", "rough"]) {
        rng.range(0.01, 1.0)
    } else if has(&["pdf", "dist", "maxt", "t"]) && name.len() <= 4 {
        rng.range(0.0, 5.0)
    } else if has(&["cos"]) {
        rng.range(-1.0, 1.0)
    } else {
        rng.range(-2.0, 2.0)
    };
    x.to_bits()
}

struct Outcome {
    name: String,
    stats: UlpStats,
    error: Option<String>,
}

fn ulps(d: u64) -> String {
    if d == u64::MAX {
        "NaN/number".into()
    } else {
        d.to_string()
    }
}

#[test]
fn stdlib_functions_agree_on_all_stages_and_backends() {
    let start = std::time::Instant::now();
    let mut files = Vec::new();
    files.extend(drs_tests::drs_files_under(&drs_sema::bundled_stdlib_dir()));
    files.sort();
    assert!(files.len() >= 9, "expected the bundled stdlib, found {files:?}");
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let program =
        drs_lower::lower_files(&files, &options).unwrap_or_else(|e| panic!("the stdlib does not check:\n{e}"));
    let mut report = String::new();
    if !program.lowered.errors.is_empty() {
        let _ = writeln!(report, "functions that did not lower (skipped):\n{}", program.render_errors());
    }
    let lowered = &program.lowered;
    // Every function that lowered, by IR name, with its layout.
    let mut entries: Vec<(String, FnLayout)> = lowered
        .functions
        .iter()
        .map(|(&f, &id)| (lowered.module.function(id).name.clone(), FnLayout::of(&program.program, f)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(entries.len() > 50, "only {} functions lowered", entries.len());

    // Buffers: four instances of every plugin parameter.
    let mut rng = Rng(0x5eed_0001);
    let env = Env {
        stateful: Vec::new(),
        buffers: lowered
            .module
            .buffers
            .iter()
            .map(|b| {
                (0..4)
                    .map(|_| match b.elem {
                        Ty::F32 => rng.range(0.0, 1.0).to_bits(),
                        Ty::Bool => (rng.next() & 1) as u32,
                        Ty::I32 | Ty::U32 => rng.below(4) as u32,
                    })
                    .collect()
            })
            .collect(),
    };

    // One more JIT, 8 lanes, with the plugin instance and some other parameters uniform:
    // those get one value per aligned group of 8 argument sets.
    let mut rng = Rng(0x0123_4567);
    let mut uniform = std::collections::BTreeMap::new();
    for (name, layout) in &entries {
        let f = lowered.module.function(lowered.module.find(name).unwrap());
        let flags: Vec<bool> = (0..f.params.len()).map(|k| (k == 0 && layout.instance) || rng.below(4) == 0).collect();
        uniform.insert(name.clone(), flags);
    }

    let mut failures = Vec::new();
    let mut per_function: Vec<Outcome> = Vec::new();
    for level in LEVELS {
        let stages = match Stages::new(lowered.module.clone(), level, Some((Lanes::X8, uniform.clone()))) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("at {level:?}: {e}"));
                continue;
            }
        };
        for (name, layout) in &entries {
            if let Some((_, why)) = KNOWN_BUGS.iter().find(|(n, _)| n == name) {
                let _ = writeln!(report, "skipped `{name}` (known bug: {why})");
                continue;
            }
            let mut rng = Rng(0xd15c_0000 ^ name.len() as u64 ^ (name.bytes().map(u64::from).sum::<u64>() << 8));
            let mut inputs: Vec<Vec<u32>> = Vec::new();
            for set in 0..SETS {
                let mut args = Vec::new();
                if layout.instance {
                    args.push(rng.below(4) as u32);
                }
                for (p, l) in &layout.params {
                    value(&mut rng, l, p, &mut args);
                }
                for (k, &u) in uniform[name].iter().enumerate() {
                    if u && set % 8 != 0 {
                        args[k] = inputs[set & !7][k];
                    }
                }
                inputs.push(args);
            }
            let outcome = stages.check(name, &inputs, &env);
            let entry = match per_function.iter_mut().find(|o| o.name == *name) {
                Some(e) => e,
                None => {
                    per_function.push(Outcome { name: name.clone(), stats: UlpStats::default(), error: None });
                    per_function.last_mut().unwrap()
                }
            };
            match outcome {
                Ok(stats) => entry.stats.add(&stats),
                Err(e) => {
                    failures.push(format!("`{name}` at {level:?}: {e}"));
                    entry.error.get_or_insert(e);
                }
            }
        }
    }

    let _ = writeln!(
        report,
        "{:<48} {:>7} {:>7} {:>7} {:>10} {:>12} {:>8}",
        "function", "exact", "direct", "inexact", "max direct", "max inexact", "differ"
    );
    let mut total = UlpStats::default();
    for o in &per_function {
        let s = &o.stats;
        total.add(s);
        let _ = writeln!(
            report,
            "{:<48} {:>7} {:>7} {:>7} {:>10} {:>12} {:>8}{}",
            o.name,
            s.exact,
            s.direct,
            s.inexact,
            ulps(s.max_direct),
            ulps(s.max_inexact),
            s.inexact_differ,
            if o.error.is_some() { "  FAILED" } else { "" }
        );
    }
    let _ = writeln!(
        report,
        "{} functions x {} optimisation levels x {SETS} argument sets in {:.1?}; result scalars: {} exact, {} \
         direct (max {} ulps), {} inexact ({} differ, max {} ulps)",
        per_function.len(),
        LEVELS.len(),
        start.elapsed(),
        total.exact,
        total.direct,
        ulps(total.max_direct),
        total.inexact,
        total.inexact_differ,
        ulps(total.max_inexact)
    );
    let _ = writeln!(report, "{}", differential::timings());
    println!("{report}");
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n\n"));
}
