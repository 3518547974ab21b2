//! Helpers shared by the semantic tests: compile a program (check, lower, verify) and run
//! its functions with the reference interpreter.

#![allow(dead_code)]

use drs_interp::Interpreter;
use drs_lower::{HostValue, LoweredProgram};
use drs_sema::LoadOptions;

pub fn options() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

/// Checks and lowers `src`, which must lower completely to IR that verifies.
pub fn compile(src: &str) -> LoweredProgram {
    let p = drs_lower::lower_source("test.drs", src, &options()).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.lowered.is_complete(), "{}", p.render_errors());
    if let Err(e) = drs_ir::verify_module(&p.lowered.module) {
        panic!("{e}\n{}", drs_ir::print_module(&p.lowered.module));
    }
    p
}

/// Runs a call written as text and prints the result.
pub fn eval(p: &LoweredProgram, call: &str) -> String {
    eval_with(p, call, |_| {})
}

pub fn eval_with(p: &LoweredProgram, call: &str, setup: impl FnOnce(&mut Interpreter)) -> String {
    p.eval_call(call, setup).unwrap_or_else(|e| panic!("{call}: {e}")).to_string()
}

pub fn eval_value(p: &LoweredProgram, call: &str) -> HostValue {
    p.eval_call(call, |_| {}).unwrap_or_else(|e| panic!("{call}: {e}"))
}

pub fn eval_f32(p: &LoweredProgram, call: &str) -> f32 {
    match eval_value(p, call) {
        HostValue::F32(x) => x,
        other => panic!("{call} gave {other}, not an f32"),
    }
}

/// The f32 components of a vector, colour or matrix result.
pub fn eval_f32s(p: &LoweredProgram, call: &str) -> Vec<f32> {
    fn collect(v: &HostValue, out: &mut Vec<f32>) {
        match v {
            HostValue::F32(x) => out.push(*x),
            HostValue::List(items) | HostValue::Tuple(items) => items.iter().for_each(|i| collect(i, out)),
            other => panic!("{other} is not made of f32"),
        }
    }
    let mut out = Vec::new();
    collect(&eval_value(p, call), &mut out);
    out
}

/// Bitwise equality of floats (NaN equals NaN of the same bits).
pub fn same_bits(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

/// Runs function `name` on raw scalars.
pub fn run_bits(p: &LoweredProgram, name: &str, args: &[u32], setup: impl FnOnce(&mut Interpreter)) -> Vec<u32> {
    let f = p.find_fn(name).unwrap_or_else(|| panic!("no function `{name}`"));
    let mut interp = Interpreter::new(&p.lowered.module);
    setup(&mut interp);
    interp.call(p.lowered.functions[&f], args).unwrap_or_else(|t| panic!("{name}: {t}"))
}
