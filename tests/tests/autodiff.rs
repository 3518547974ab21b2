//! Derivatives checked numerically: for every function of the corpus
//! (`tests/autodiff/corpus.drs`) and every differentiable function of the standard library,
//! at random points,
//! - forward mode against central finite differences of the primal computed in f64 by the
//!   interpreter (points where the difference quotient is unstable, near a kink or a jump,
//!   are skipped; each function must keep most of its points), except for corpus functions
//!   named `controlled_*`, whose derivatives differ from the primal's on purpose (`detach`,
//!   `replace_grad`, `@no_diff`; their exact values are tested separately);
//! - the dot-product test `<w, J v> == <Jᵀ w, v>` between forward and reverse mode;
//! - the primal results of `fwd_diff(f)` equal those of `f` bit for bit;
//! - the derivative functions on every backend (interpreter before and after optimisation
//!   and math expansion, Cranelift with 1, 4 and 8 lanes) with the relations of
//!   `differential/mod.rs`.

mod differential;

use differential::{Env, Rng, Stages};
use drs_ad::{Differentiator, Mode};
use drs_interp::{Interpreter, Wide};
use drs_ir::{FuncId, Module, Ty};
use drs_lower::LoweredProgram;
use drs_sema::LoadOptions;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Random points per function.
const POINTS: usize = 24;

fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("autodiff/corpus.drs")
}

fn lower(paths: &[PathBuf]) -> LoweredProgram {
    let lp = drs_lower::lower_files(paths, &LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(lp.lowered.is_complete(), "lowering failed:\n{}", lp.render_errors());
    lp
}

/// A function with both derivatives generated.
struct Differentiated {
    name: String,
    primal: FuncId,
    fwd: FuncId,
    bwd: FuncId,
    tangent_params: Vec<bool>,
}

fn differentiate(lp: &mut LoweredProgram, primal: FuncId) -> Result<Differentiated, String> {
    let tangent_params = lp.lowered.ad.functions[primal.0 as usize].tangent_params.clone();
    let name = lp.lowered.module.function(primal).name.clone();
    let mut d = Differentiator::new(&mut lp.lowered.module, &mut lp.lowered.ad);
    let fwd = d.derivative(primal, Mode::Fwd).map_err(|e| e.to_string())?;
    let bwd = d.derivative(primal, Mode::Bwd).map_err(|e| e.to_string())?;
    drs_ir::verify_module(&lp.lowered.module).map_err(|e| format!("`{name}`: derivative does not verify: {e}"))?;
    Ok(Differentiated { name, primal, fwd, bwd, tangent_params })
}

/// How many points a function's checks used and skipped.
#[derive(Default)]
struct Tally {
    used: usize,
    skipped: usize,
}

fn f64_of(ty: Ty, bits: u32) -> Wide {
    Wide::from_bits(ty, bits)
}

/// Central difference of `f` at `x` along `v` (f64 mode), per result; `None` if a result is
/// not finite.
fn central_difference(interp: &mut Interpreter, f: FuncId, x: &[Wide], v: &[f64], h: f64) -> Option<Vec<f64>> {
    let shifted = |s: f64| -> Vec<Wide> {
        x.iter()
            .zip(v)
            .map(|(a, d)| match a {
                Wide::Float(a) => Wide::Float(a + s * d),
                other => *other,
            })
            .collect()
    };
    let plus = interp.call_f64(f, &shifted(h)).ok()?;
    let minus = interp.call_f64(f, &shifted(-h)).ok()?;
    let mut out = Vec::new();
    for (p, m) in plus.iter().zip(&minus) {
        if let (Some(p), Some(m)) = (p.as_f64(), m.as_f64()) {
            let d = (p - m) / (2.0 * h);
            if !d.is_finite() {
                return None;
            }
            out.push(d);
        } else {
            out.push(0.0);
        }
    }
    Some(out)
}

/// Checks one function at random points; `Err` describes the first failure.
fn check_numerically(
    module: &Module,
    env: &Env,
    d: &Differentiated,
    seed: u64,
    min_used: usize,
) -> Result<Tally, String> {
    let f = module.function(d.primal);
    let param_types = f.param_types();
    let result_types = f.result_types.clone();
    let mut interp = Interpreter::new(module);
    for (b, contents) in env.buffers.iter().enumerate() {
        interp.buffers[b] = contents.clone();
    }
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    for point in 0..POINTS {
        let x: Vec<u32> = param_types
            .iter()
            .map(|&t| match t {
                Ty::F32 => rng.range(0.25, 1.75).to_bits(),
                Ty::I32 | Ty::U32 => rng.below(4) as u32,
                Ty::Bool => (rng.next() & 1) as u32,
            })
            .collect();
        // Direction v over the tangent parameters (zero for integer ones).
        let v: Vec<f32> = param_types
            .iter()
            .zip(&d.tangent_params)
            .map(|(&t, &tan)| if tan && t == Ty::F32 { rng.range(-1.0, 1.0) } else { 0.0 })
            .collect();
        let w: Vec<f32> = result_types.iter().map(|&t| if t == Ty::F32 { rng.range(-1.0, 1.0) } else { 0.0 }).collect();
        let at = || format!("`{}` at point {point}, x = {:?}", d.name, show_args(&param_types, &x));

        let y = interp.call(d.primal, &x).map_err(|e| format!("{}: primal traps: {e}", at()))?;
        if y.iter().zip(&result_types).any(|(&b, &t)| t == Ty::F32 && !f32::from_bits(b).is_finite()) {
            tally.skipped += 1;
            continue;
        }
        // Forward mode: the primal results again, then the tangents.
        let mut fwd_args = x.clone();
        for (k, &tan) in d.tangent_params.iter().enumerate() {
            if tan {
                fwd_args.push(if param_types[k] == Ty::F32 { v[k].to_bits() } else { 0 });
            }
        }
        let fwd = interp.call(d.fwd, &fwd_args).map_err(|e| format!("{}: fwd traps: {e}", at()))?;
        let (fy, dy) = fwd.split_at(result_types.len());
        if fy != y.as_slice() {
            return Err(format!("{}: fwd_diff's primal results {fy:?} differ from the primal's {y:?}", at()));
        }
        // Reverse mode.
        let mut bwd_args = x.clone();
        bwd_args.extend(w.iter().map(|a| a.to_bits()));
        let adj = interp.call(d.bwd, &bwd_args).map_err(|e| format!("{}: bwd traps: {e}", at()))?;

        // Finite differences in f64, at two step sizes: unstable means a kink is near.
        let xw: Vec<Wide> = x.iter().zip(&param_types).map(|(&b, &t)| f64_of(t, b)).collect();
        let vw: Vec<f64> = v.iter().map(|&a| a as f64).collect();
        let (Some(fd), Some(fd_fine)) = (
            central_difference(&mut interp, d.primal, &xw, &vw, 1e-4),
            central_difference(&mut interp, d.primal, &xw, &vw, 1e-5),
        ) else {
            tally.skipped += 1;
            continue;
        };
        if fd.iter().zip(&fd_fine).any(|(a, b)| (a - b).abs() > 1e-6 * (1.0 + a.abs())) {
            tally.skipped += 1;
            continue;
        }
        let dy_f: Vec<f64> = dy.iter().zip(&result_types).map(|(&b, &t)| scalar(t, b)).collect();
        if dy_f.iter().any(|a| !a.is_finite()) {
            return Err(format!("{}: fwd tangent is not finite: {dy_f:?}", at()));
        }
        let fd_applies = !d.name.starts_with("controlled_");
        for (k, (&t, (&a, &b))) in result_types.iter().zip(dy_f.iter().zip(&fd)).enumerate() {
            if !fd_applies {
                break;
            }
            if t == Ty::F32 && (a - b).abs() > 2e-3 * (1.0 + b.abs()) {
                return Err(format!(
                    "{}: forward derivative of result {k} along v = {v:?} is {a}, finite differences give {b}",
                    at()
                ));
            }
            if t != Ty::F32 && a != 0.0 {
                return Err(format!("{}: tangent of the non-float result {k} is {a}", at()));
            }
        }
        // Dot-product test.
        let adj_f: Vec<f64> = d
            .tangent_params
            .iter()
            .enumerate()
            .filter(|(_, &t)| t)
            .zip(&adj)
            .map(|((k, _), &b)| scalar(param_types[k], b))
            .collect();
        let tangent_v: Vec<f64> = d.tangent_params.iter().zip(&v).filter(|(&t, _)| t).map(|(_, &a)| a as f64).collect();
        let lhs: f64 = w.iter().zip(&dy_f).map(|(&a, b)| a as f64 * b).sum();
        let rhs: f64 = adj_f.iter().zip(&tangent_v).map(|(a, b)| a * b).sum();
        let scale: f64 = 1.0
            + w.iter().zip(&dy_f).map(|(&a, b)| (a as f64 * b).abs()).sum::<f64>()
            + adj_f.iter().zip(&tangent_v).map(|(a, b)| (a * b).abs()).sum::<f64>();
        if (lhs - rhs).abs() > 1e-4 * scale || !rhs.is_finite() {
            return Err(format!(
                "{}: dot-product test fails: <w, J v> = {lhs}, <J^T w, v> = {rhs} (w = {w:?}, v = {v:?}, J^T w = {adj_f:?})",
                at()
            ));
        }
        for (k, (&tan, &t)) in d.tangent_params.iter().zip(&param_types).enumerate() {
            let pos = d.tangent_params[..k].iter().filter(|&&t| t).count();
            if tan && t != Ty::F32 && adj[pos] != 0 {
                return Err(format!("{}: adjoint of the non-float parameter {k} is not zero", at()));
            }
        }
        tally.used += 1;
    }
    if tally.used < min_used {
        return Err(format!(
            "`{}`: only {} of {POINTS} points were usable (non-finite results or kinks)",
            d.name, tally.used
        ));
    }
    Ok(tally)
}

fn scalar(ty: Ty, bits: u32) -> f64 {
    match ty {
        Ty::F32 => f32::from_bits(bits) as f64,
        Ty::I32 => bits as i32 as f64,
        Ty::U32 => bits as f64,
        Ty::Bool => bits as f64,
    }
}

fn show_args(types: &[Ty], bits: &[u32]) -> Vec<String> {
    types.iter().zip(bits).map(|(&t, &b)| differential::show(t, b)).collect()
}

/// The corpus functions (those of the corpus file itself, not of its imports).
fn corpus_functions(lp: &LoweredProgram) -> Vec<FuncId> {
    let mut out: Vec<(FuncId, String)> = lp
        .lowered
        .functions
        .iter()
        .filter(|(f, _)| !lp.program.modules[lp.program.functions[**f].module].is_stdlib)
        .filter(|(f, _)| drs_sema::derivative_signature(&lp.program, **f, drs_syntax::ast::DiffMode::Fwd).is_ok())
        .map(|(_, &id)| (id, lp.lowered.module.function(id).name.clone()))
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out.into_iter().map(|(id, _)| id).collect()
}

#[test]
fn corpus_derivatives_match_finite_differences_and_each_other() {
    let mut lp = lower(&[corpus_path()]);
    let functions = corpus_functions(&lp);
    assert!(
        functions.len() >= 100,
        "the corpus has {} differentiable functions; at least 100 are expected",
        functions.len()
    );
    let mut failures = String::new();
    let mut report = String::new();
    let mut done = Vec::new();
    for &f in &functions {
        match differentiate(&mut lp, f) {
            Ok(d) => done.push(d),
            Err(e) => writeln!(failures, "{e}").unwrap(),
        }
    }
    let env = Env::default();
    for (i, d) in done.iter().enumerate() {
        match check_numerically(&lp.lowered.module, &env, d, 0x5eed + i as u64, POINTS / 2) {
            Ok(t) => writeln!(report, "{}: {} points, {} skipped", d.name, t.used, t.skipped).unwrap(),
            Err(e) => writeln!(failures, "{e}").unwrap(),
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "derivative checks failed:\n{failures}");
}

/// Random argument sets (any bits, NaN and extremes included) for a derivative function.
fn random_inputs(module: &Module, f: FuncId, seed: u64, sets: usize) -> Vec<Vec<u32>> {
    let types = module.function(f).param_types();
    let mut rng = Rng(seed);
    (0..sets).map(|_| types.iter().map(|&t| rng.bits(t)).collect()).collect()
}

/// Checks every derivative function on every stage and backend (bit-exact where the
/// differential harness requires it).
fn check_backends(module: &Module, env: &Env, names: &[String]) -> Vec<String> {
    let mut failures = Vec::new();
    let stages = match Stages::new(module.clone(), drs_opt::OptLevel::Default, None) {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    for (i, name) in names.iter().enumerate() {
        let id = module.find(name).expect("derivatives are in the module");
        let inputs = random_inputs(module, id, 0xbac0 + i as u64, 67);
        if let Err(e) = stages.check(name, &inputs, env) {
            failures.push(format!("`{name}`: {e}"));
        }
    }
    failures
}

#[test]
fn corpus_derivatives_agree_across_backends() {
    let mut lp = lower(&[corpus_path()]);
    let mut names = Vec::new();
    for f in corpus_functions(&lp) {
        let d = differentiate(&mut lp, f).unwrap_or_else(|e| panic!("{e}"));
        names.push(lp.lowered.module.function(d.fwd).name.clone());
        names.push(lp.lowered.module.function(d.bwd).name.clone());
    }
    let failures = check_backends(&lp.lowered.module, &Env::default(), &names);
    assert!(failures.is_empty(), "backends disagree:\n{}", failures.join("\n"));
}

fn stdlib_files() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("the stdlib directory exists").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "drs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&drs_sema::bundled_stdlib_dir(), &mut files);
    files.sort();
    files
}

/// Whether a function calls a host function, itself or through its callees.
fn calls_host(module: &Module, f: FuncId) -> bool {
    fn region(module: &Module, r: &drs_ir::Region) -> bool {
        r.insts.iter().any(|i| match &i.op {
            drs_ir::Op::CallExtern(..) => true,
            drs_ir::Op::Call(g, _) => region(module, &module.function(*g).body),
            drs_ir::Op::If { then, els, .. } => region(module, then) || region(module, els),
            drs_ir::Op::Loop { body, .. } => region(module, body),
            _ => false,
        })
    }
    region(module, &module.function(f).body)
}

/// The 64-bit FNV-1a hash of `name`: a seed that depends on nothing else.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Every differentiable function of the standard library: both derivatives generate, verify
/// and agree across backends; those that call no host function also pass the numerical
/// checks wherever the points drawn are in their domain.
#[test]
fn stdlib_derivatives() {
    /// Path tracing loops with no length bound: their reverse mode is the job of custom
    /// adjoints (path replay and radiative backpropagation: the adjoints of `Prb::sample` and
    /// `Rb::sample`, which the runtime links in place of generated ones), not of the automatic
    /// one.
    const FORWARD_ONLY: [&str; 8] = [
        "Direct::sample",
        "Path::sample",
        "Prb::sample",
        "Prb::sample_adjoint",
        "Rb::sample",
        "Rb::sample_adjoint",
        "trace_path",
        "finish_path",
    ];
    let files = stdlib_files();
    let mut lp = drs_lower::lower_files(&files, &LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(lp.lowered.is_complete(), "{}", lp.render_errors());
    let mut functions: Vec<(String, FuncId)> = lp
        .lowered
        .functions
        .iter()
        .filter(|(f, _)| drs_sema::derivative_signature(&lp.program, **f, drs_syntax::ast::DiffMode::Fwd).is_ok())
        .map(|(_, &id)| (lp.lowered.module.function(id).name.clone(), id))
        .collect();
    functions.sort();
    assert!(functions.len() >= 40, "only {} differentiable stdlib functions", functions.len());
    // Param values, drawn from each buffer's name, so that adding stdlib params does not move
    // the values of the others: the bits of floats in (0.1, 0.9), 0 or 1 for bool params (any
    // other bit pattern is not a bool, and backends may disagree on it), and 1 to 3 for integer
    // params (tensor shapes and offsets, choices, handles of instances 1 to 3: as float bits
    // they made images a billion texels wide, where finite differences in f32 mean nothing).
    let env = Env {
        stateful: Vec::new(),
        buffers: lp
            .lowered
            .module
            .buffers
            .iter()
            .map(|b| {
                let mut rng = Rng(fnv1a(&b.name));
                (0..4)
                    .map(|_| match b.elem {
                        drs_ir::Ty::Bool => rng.below(2) as u32,
                        drs_ir::Ty::U32 | drs_ir::Ty::I32 => 1 + rng.below(3) as u32,
                        _ => rng.range(0.1, 0.9).to_bits(),
                    })
                    .collect()
            })
            .collect(),
    };
    let mut failures = Vec::new();
    let mut report = String::new();
    let mut names = Vec::new();
    let mut numeric = Vec::new();
    for (name, f) in &functions {
        if FORWARD_ONLY.contains(&name.as_str()) {
            // Forward mode works; reverse mode is refused at the unbounded loop.
            let mut d = Differentiator::new(&mut lp.lowered.module, &mut lp.lowered.ad);
            if let Err(e) = d.derivative(*f, Mode::Fwd) {
                failures.push(format!("`{name}` forward: {e}"));
            }
            match d.derivative(*f, Mode::Bwd) {
                Err(e) if e.to_string().contains("@max_iters") => {}
                other => failures.push(format!("`{name}` reverse: expected the unbounded-loop error, got {other:?}")),
            }
            continue;
        }
        match differentiate(&mut lp, *f) {
            Ok(d) => {
                names.push(lp.lowered.module.function(d.fwd).name.clone());
                names.push(lp.lowered.module.function(d.bwd).name.clone());
                if !calls_host(&lp.lowered.module, *f) {
                    numeric.push(d);
                }
            }
            Err(e) => failures.push(format!("`{name}`: {e}")),
        }
    }
    let mut env_full = env.clone();
    env_full.buffers.resize(lp.lowered.module.buffers.len(), vec![0; 4]);
    for d in &numeric {
        // Points drawn from the function's name, so that adding stdlib functions does not
        // move the points of the others.
        let seed = fnv1a(&d.name);
        match check_numerically(&lp.lowered.module, &env_full, d, seed, 0) {
            Ok(t) => writeln!(report, "{}: {} points, {} outside the domain or near a kink", d.name, t.used, t.skipped)
                .unwrap(),
            Err(e) => failures.push(e),
        }
    }
    failures.extend(check_backends(&lp.lowered.module, &env_full, &names));
    println!("{} differentiable functions, {} checked numerically\n{report}", functions.len(), numeric.len());
    assert!(failures.is_empty(), "stdlib derivatives fail:\n{}", failures.join("\n"));
}

/// `drsc ad`'s output for every corpus derivative (optimised at `Basic`, written as `.drs`)
/// checks again without diagnostics.
#[test]
fn written_derivatives_check_again() {
    let mut lp = lower(&[corpus_path()]);
    let mut names = Vec::new();
    for f in corpus_functions(&lp) {
        let d = differentiate(&mut lp, f).unwrap_or_else(|e| panic!("{e}"));
        names.push(lp.lowered.module.function(d.fwd).name.clone());
        names.push(lp.lowered.module.function(d.bwd).name.clone());
    }
    let mut module = lp.lowered.module.clone();
    drs_opt::optimize(&mut module, drs_opt::OptLevel::Basic);
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let mut failures = Vec::new();
    for name in &names {
        let id = module.find(name).expect("derivatives survive optimisation");
        let written = drs_source::write_program(&module, &[id]).unwrap_or_else(|e| panic!("`{name}`: {e}"));
        let checked = drs_sema::check_source("written.drs", &written.source, &options);
        if !checked.diagnostics.is_empty() {
            let shown = drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false);
            failures.push(format!("`{name}`:\n{shown}"));
        }
    }
    assert!(failures.is_empty(), "written derivatives do not check:\n{}", failures.join("\n"));
}
