//! SPMD control flow, calls, memory and externs against the interpreter, in 1, 4 and 8 lanes
//! with different inputs per lane; plus the call API's errors and thread safety.

mod common;

include!("cases/control.rs");
