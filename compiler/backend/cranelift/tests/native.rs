//! Serialised native code: deterministic compilation, and every damaged blob is an error,
//! never a crash. (That code loaded from bytes computes the same bits as fresh code is
//! checked on every kernel of `ops.rs`, `control.rs` and `random_ir.rs`, through
//! `common::compile_and_reload`.)

mod common;

use drs_cranelift::{Error, Jit, Lanes, NativeModule, Options, Target, NATIVE_FORMAT_VERSION};
use drs_ir::*;

/// A kernel with a call, an f32 remainder (a host symbol), a loop, a divergent `if`, a buffer
/// and an extern.
pub fn sample() -> Module {
    let mut m = Module::default();
    m.buffers.push(BufferDecl { name: "out".into(), elem: Ty::F32 });
    m.externs.push(ExternDecl { name: "twice".into(), params: vec![Ty::F32], results: vec![Ty::F32] });
    let sigs = Signatures::of(&m);
    let mut g = Function::new("g");
    let x = g.add_param("x", Ty::F32);
    let mut b = Builder::new(&mut g, &sigs);
    let c = b.f32(0.7);
    let r = b.binary(BinaryOp::Rem, x, c);
    let fl = b.unary(UnaryOp::Floor, x);
    let s = b.add(r, fl);
    b.finish(vec![s]);
    g.result_types = vec![Ty::F32];
    let gid = m.add_function(g);
    let sigs = Signatures::of(&m);
    let mut f = Function::new("kernel");
    let x = f.add_param("x", Ty::F32);
    let n = f.add_param("n", Ty::I32);
    let mut b = Builder::new(&mut f, &sigs);
    let zero = b.f32(0.0);
    let lp = b.loop_(vec![n, zero], |b, c| {
        let y = b.call(gid, vec![x]);
        let acc = b.add(c[1], y[0]);
        let one = b.i32(1);
        let k = b.sub(c[0], one);
        let z = b.i32(0);
        let more = b.cmp(CmpOp::Gt, k, z);
        (more, vec![k, acc])
    });
    let neg = b.cmp(CmpOp::Lt, x, zero);
    let r = b.if_(neg, |b| b.call_extern(0, vec![lp[1]]), |b| vec![b.unary(UnaryOp::Sqrt, lp[1])]);
    let idx = b.convert(Ty::U32, n);
    b.store(0, idx, r[0]);
    b.finish(vec![r[0], lp[0]]);
    f.result_types = vec![Ty::F32, Ty::I32];
    m.add_function(f);
    m
}

fn lanes() -> Vec<Vec<u32>> {
    (0..19).map(|l| vec![(l as f32 * 0.37 - 2.0).to_bits(), (l % 5) as u32]).collect()
}

fn hosts() -> Vec<(&'static str, common::Host)> {
    vec![("twice", std::sync::Arc::new(|a: &[u32]| vec![(f32::from_bits(a[0]) * 2.0).to_bits()]))]
}

#[test]
fn loaded_code_agrees_with_the_interpreter_and_fresh_code() {
    common::check(&sample(), "kernel", &lanes(), &[vec![0; 8]], &hosts());
}

#[test]
fn compilation_is_deterministic() {
    for mode in Lanes::ALL {
        let a = NativeModule::compile(&sample(), &Options::new(mode)).unwrap();
        let b = NativeModule::compile(&sample(), &Options::new(mode)).unwrap();
        assert_eq!(a.to_bytes(), b.to_bytes(), "{mode:?}");
        assert_eq!(NativeModule::from_bytes(&a.to_bytes()).unwrap(), a);
        assert_eq!(a.target(), Target::host().unwrap());
        assert_eq!(a.lanes(), mode);
        assert!(a.code_size() > 0);
    }
}

#[test]
fn damaged_blobs_are_rejected() {
    let bytes = NativeModule::compile(&sample(), &Options::new(Lanes::X4)).unwrap().to_bytes();
    let invalid = |b: &[u8]| matches!(Jit::from_native_bytes(b), Err(Error::InvalidNativeCode(_)));
    assert!(invalid(b""));
    assert!(invalid(b"DRSARTF\0 an artifact is not native code"));
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&(NATIVE_FORMAT_VERSION + 1).to_le_bytes());
    let e = Jit::from_native_bytes(&version).err().unwrap();
    assert!(e.to_string().contains("recompile"), "{e}");
    // Every truncation and every single-byte corruption is an error, never a panic.
    for cut in 0..bytes.len() {
        assert!(invalid(&bytes[..cut]), "cut at {cut}");
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x20;
        assert!(invalid(&b), "flipping byte {i} went unnoticed");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(invalid(&longer));
    assert!(Jit::from_native_bytes(&bytes).is_ok());
}

#[test]
fn native_code_of_a_module_the_backend_rejects_is_an_error() {
    let mut m = sample();
    let sigs = Signatures::of(&m);
    let mut f = Function::new("with_math");
    let x = f.add_param("x", Ty::F32);
    let mut b = Builder::new(&mut f, &sigs);
    let s = b.math(MathOp::Sin, vec![x]);
    b.finish(vec![s]);
    f.result_types = vec![Ty::F32];
    m.add_function(f);
    assert!(matches!(NativeModule::compile(&m, &Options::new(Lanes::X1)), Err(Error::Unsupported { .. })));
}

/// Compiled code records which extern results it reads, and keeps the record through its
/// serialised form.
#[test]
fn the_extern_results_read_are_recorded() {
    let mut m = Module::default();
    m.externs.push(ExternDecl { name: "pair".into(), params: vec![], results: vec![Ty::F32, Ty::F32] });
    let sigs = Signatures::of(&m);
    let mut f = Function::new("kernel");
    let mut b = Builder::new(&mut f, &sigs);
    let r = b.call_extern(0, vec![]);
    b.finish(vec![r[1]]);
    f.result_types = vec![Ty::F32];
    m.add_function(f);
    let native = NativeModule::compile(&m, &Options::new(Lanes::X4)).unwrap();
    let reloaded = NativeModule::from_bytes(&native.to_bytes()).unwrap();
    for jit in [native.load().unwrap(), reloaded.load().unwrap()] {
        assert_eq!(jit.extern_results_read(0), [false, true]);
        assert_eq!(jit.extern_results_read(1), [] as [bool; 0], "no such extern");
    }
}
