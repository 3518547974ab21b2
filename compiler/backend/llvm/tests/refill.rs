//! The Cranelift backend's `refill` tests (`../cranelift/tests/cases/refill.rs`), run on LLVM's code.

#![cfg(feature = "llvm")]

mod common;

include!("../../cranelift/tests/cases/refill.rs");
