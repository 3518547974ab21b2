//! The Cranelift backend's test harness (`../cranelift/tests/common/harness.rs`) with LLVM as
//! the code generator under test.

#![allow(dead_code)]

include!("../../../cranelift/tests/common/harness.rs");

/// The widths the code generator compiles.
pub const MODES: &[Lanes] = &[Lanes::X1, Lanes::X4, Lanes::X8, Lanes::X16];

/// The code generator under test.
pub fn compile_native(module: &Module, options: &Options) -> Result<NativeModule, Error> {
    drs_llvm::compile(module, options)
}
