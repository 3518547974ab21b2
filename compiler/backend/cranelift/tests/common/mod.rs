//! Runs a function of a module on many lanes in the interpreter and in every JIT mode, and
//! compares results and buffers bit for bit (`harness.rs`, shared with drs-llvm's tests).

#![allow(dead_code)]

include!("harness.rs");

/// The widths the code generator compiles.
pub const MODES: &[Lanes] = &Lanes::ALL;

/// The code generator under test.
pub fn compile_native(module: &Module, options: &Options) -> Result<NativeModule, Error> {
    NativeModule::compile(module, options)
}
