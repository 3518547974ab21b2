//! The Cranelift backend's `ops` tests (`../cranelift/tests/cases/ops.rs`), run on LLVM's code.

#![cfg(feature = "llvm")]

mod common;

include!("../../cranelift/tests/cases/ops.rs");
