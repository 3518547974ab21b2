//! Lane refill in entry wrappers: a body made of code, one loop whose lanes leave at different
//! iterations, and code again runs its call's lanes through one group, refilling lanes whose
//! loop ended. Results must equal the interpreter's bit for bit, and the loop's host calls must
//! see full groups.

mod common;

include!("cases/refill.rs");
