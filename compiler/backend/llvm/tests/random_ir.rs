//! The Cranelift backend's `random_ir` tests (`../cranelift/tests/cases/random_ir.rs`), run on LLVM's code.

#![cfg(feature = "llvm")]

mod common;

include!("../../cranelift/tests/cases/random_ir.rs");
