// Runs a function of a module on many lanes in the interpreter and in every JIT mode, and
// compares results and buffers bit for bit. Included by `mod.rs` here and by drs-llvm's tests,
// each with its own `compile_native`: the code generator under test.

use drs_cranelift::{Buffer, Error, Externs, Jit, Lanes, NativeModule, Options};
use drs_interp::Interpreter;
use drs_ir::{print_module, Module, Ty};
use std::sync::Arc;

/// A host function for tests: pure in its arguments, so that per-lane calls in any order agree.
pub type Host = Arc<dyn Fn(&[u32]) -> Vec<u32> + Send + Sync>;

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// `[lane][result]`.
    pub results: Vec<Vec<u32>>,
    pub buffers: Vec<Vec<u32>>,
}

/// Runs `func` once per lane (`lanes[l]` are lane `l`'s arguments) in the interpreter.
pub fn interp(
    module: &Module,
    func: &str,
    lanes: &[Vec<u32>],
    buffers: &[Vec<u32>],
    hosts: &[(&str, Host)],
) -> Outcome {
    let mut it = Interpreter::new(module);
    it.buffers = buffers.to_vec();
    it.iteration_limit = 1 << 20;
    for (name, h) in hosts {
        let h = h.clone();
        assert!(it.bind_extern(name, Box::new(move |a| h(a))));
    }
    let id = module.find(func).expect("function exists");
    let results = lanes.iter().map(|args| it.call(id, args).expect("interpreter runs")).collect();
    Outcome { results, buffers: it.buffers }
}

/// Compiles `module` for `lanes_mode` and runs `func` over all lanes with `call_batch`.
///
/// Also serialises the compiled code, loads it back from the bytes (no code generation) and
/// checks that it computes exactly the same bits.
pub fn jit(
    module: &Module,
    mode: Lanes,
    func: &str,
    lanes: &[Vec<u32>],
    buffers: &[Vec<u32>],
    hosts: &[(&str, Host)],
) -> Outcome {
    let (jit, loaded) = compile_and_reload(module, &Options::new(mode))
        .unwrap_or_else(|e| panic!("compile ({mode:?}): {e}\n{}", print_module(module)));
    let fresh = run_jit(&jit, func, lanes, buffers, hosts);
    let reloaded = run_jit(&loaded, func, lanes, buffers, hosts);
    assert!(fresh == reloaded, "`{func}` {mode:?}: code loaded from bytes computes other bits than fresh code");
    fresh
}

/// Compiles `module` (as `Jit::compile_with` does), and loads the same code a second time
/// from its serialised form.
pub fn compile_and_reload(module: &Module, options: &Options) -> Result<(Jit, Jit), Error> {
    let native = compile_native(module, options)?;
    let jit = native.load()?;
    let loaded = Jit::from_native_bytes(&native.to_bytes())?;
    Ok((jit, loaded))
}

/// Compiles `module` with the code generator under test and loads it.
pub fn compile_jit(module: &Module, options: &Options) -> Result<Jit, Error> {
    compile_native(module, options)?.load()
}

pub fn run_jit(jit: &Jit, func: &str, lanes: &[Vec<u32>], buffers: &[Vec<u32>], hosts: &[(&str, Host)]) -> Outcome {
    let f = jit.function(func).expect("function exists");
    let n = lanes.len();
    let (np, nr) = (f.params().len(), f.results().len());
    let mut args = vec![0u32; np * n];
    for (l, a) in lanes.iter().enumerate() {
        for p in 0..np {
            args[p * n + l] = a[p];
        }
    }
    let mut results = vec![0u32; nr * n];
    let mut bufs = buffers.to_vec();
    let mut externs: Externs = jit.externs();
    for (name, h) in hosts {
        let h = h.clone();
        externs
            .bind(name, move |a, r| {
                let out = h(a);
                r.copy_from_slice(&out);
            })
            .unwrap();
    }
    {
        let views: Vec<Buffer> = bufs.iter_mut().map(|b| Buffer::from_mut(b)).collect();
        f.call_batch(n, &args, &mut results, &views, &externs).expect("call");
    }
    let results = (0..n).map(|l| (0..nr).map(|r| results[r * n + l]).collect()).collect();
    Outcome { results, buffers: bufs }
}

fn describe(bits: u32) -> String {
    format!("{bits:#010x} (f32 {:e}, i32 {})", f32::from_bits(bits), bits as i32)
}

/// Asserts that every mode agrees with the interpreter.
pub fn check(module: &Module, func: &str, lanes: &[Vec<u32>], buffers: &[Vec<u32>], hosts: &[(&str, Host)]) {
    let want = interp(module, func, lanes, buffers, hosts);
    for &mode in MODES {
        let got = jit(module, mode, func, lanes, buffers, hosts);
        compare(module, func, mode, lanes, &want, &got);
    }
}

/// Whether two values of type `ty` agree: bit for bit, except that any two f32 NaNs agree (the
/// sign and payload of a NaN result are unspecified, as in IEEE 754 and Rust, and Cranelift
/// may commute operands or fold negations).
pub fn same(ty: Ty, a: u32, b: u32) -> bool {
    a == b || (ty == Ty::F32 && f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

pub fn compare(module: &Module, func: &str, mode: Lanes, lanes: &[Vec<u32>], want: &Outcome, got: &Outcome) {
    let types = &module.function(module.find(func).expect("function exists")).result_types;
    for (l, (w, g)) in want.results.iter().zip(&got.results).enumerate() {
        if w.iter().zip(g).zip(types).any(|((&a, &b), &ty)| !same(ty, a, b)) {
            let detail: Vec<String> = w
                .iter()
                .zip(g)
                .enumerate()
                .filter(|(i, (a, b))| !same(types[*i], **a, **b))
                .map(|(i, (a, b))| format!("result {i}: interp {} jit {}", describe(*a), describe(*b)))
                .collect();
            panic!(
                "`{func}` {mode:?} lane {l} args {:?}:\n{}\n{}",
                lanes[l].iter().map(|&a| describe(a)).collect::<Vec<_>>(),
                detail.join("\n"),
                print_module(module)
            );
        }
    }
    for (i, (w, g)) in want.buffers.iter().zip(&got.buffers).enumerate() {
        let ty = module.buffers[i].elem;
        let same_all = w.len() == g.len() && w.iter().zip(g).all(|(&a, &b)| same(ty, a, b));
        assert!(same_all, "`{func}` {mode:?}: buffer {i} differs:\n{w:x?}\n{g:x?}\n{}", print_module(module));
    }
}
