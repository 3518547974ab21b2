//! Loading artifacts: their native code where it runs, else their IR compiled; both run the
//! same code.

use drs_artifact::Artifact;
use drs_cranelift::*;
use drs_ir::*;
use std::sync::Arc;

/// `f(x) = sin(x) * 2 + x % 0.5` (the math library is expanded when the artifact is prepared).
fn artifact() -> Artifact {
    let mut m = Module::default();
    let sigs = Signatures::of(&m);
    let mut f = Function::new("f");
    let x = f.add_param("x", Ty::F32);
    let mut b = Builder::new(&mut f, &sigs);
    let s = b.math(MathOp::Sin, vec![x]);
    let two = b.f32(2.0);
    let h = b.f32(0.5);
    let r = b.binary(BinaryOp::Rem, x, h);
    let y = b.fma(s, two, r);
    b.finish(vec![y]);
    f.result_types = vec![Ty::F32];
    m.add_function(f);
    Artifact {
        compiler: "test".into(),
        module: m,
        opt: "default".into(),
        functions: Vec::new(),
        plugins: Vec::new(),
        sources: Vec::new(),
        native: Vec::new(),
    }
}

fn with_native(mut a: Artifact) -> Artifact {
    let prepared = prepare_artifact_module(&a);
    for lanes in Lanes::ALL {
        a.native.push(native_code_for_artifact(&prepared, lanes).unwrap());
    }
    a
}

fn run(jit: &Jit) -> Vec<u32> {
    let n = jit.lanes().count() * 3;
    let args: Vec<u32> = (0..n).map(|i| (i as f32 * 0.7 - 4.0).to_bits()).collect();
    let mut out = vec![0u32; n];
    jit.function("f").unwrap().call_batch(n, &args, &mut out, &[], &jit.externs()).unwrap();
    out
}

#[test]
fn native_code_and_ir_give_the_same_bits() {
    let ir_only = artifact();
    let built = with_native(artifact());
    // Through the artifact file format.
    let built = Artifact::from_bytes(&built.to_bytes()).unwrap();
    assert_eq!(built.native.len(), 3);
    assert!(built.native[0].target.starts_with(&Target::host().unwrap().triple));
    for lanes in Lanes::ALL {
        assert!(native_for_host(&ir_only, lanes).is_none());
        assert!(native_for_host(&built, lanes).is_some(), "{lanes:?}");
        let native = Jit::from_artifact(&built, lanes).unwrap();
        let compiled = Jit::from_artifact(&ir_only, lanes).unwrap();
        assert_eq!(native.lanes(), lanes);
        assert_eq!(run(&native), run(&compiled), "{lanes:?}");
    }
}

#[test]
fn unusable_native_code_falls_back_to_the_ir() {
    let mut damaged = with_native(artifact());
    for n in &mut damaged.native {
        let last = n.code.len() - 1;
        n.code[last] ^= 1;
    }
    let mut wrong_lanes = with_native(artifact());
    for n in &mut wrong_lanes.native {
        n.lanes = 2;
    }
    let reference = Jit::from_artifact(&artifact(), Lanes::X4).unwrap();
    for a in [&damaged, &wrong_lanes] {
        assert!(native_for_host(a, Lanes::X4).is_none());
        assert_eq!(run(&Jit::from_artifact(a, Lanes::X4).unwrap()), run(&reference));
    }
}

#[test]
fn the_cache_loads_artifacts_once() {
    let cache = KernelCache::memory_only();
    let built = with_native(artifact());
    let a = cache.get_or_load_artifact(&built, Lanes::X8).unwrap();
    let b = cache.get_or_load_artifact(&built, Lanes::X8).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(cache.stats().compiled, 0, "native code is loaded, not compiled");
    let c = cache.get_or_load_artifact(&artifact(), Lanes::X8).unwrap();
    assert_eq!(cache.stats().compiled, 1);
    assert_eq!(run(&a), run(&c));
}
