//! The Cranelift backend's `control` tests (`../cranelift/tests/cases/control.rs`), run on LLVM's code.

#![cfg(feature = "llvm")]

mod common;

include!("../../cranelift/tests/cases/control.rs");
