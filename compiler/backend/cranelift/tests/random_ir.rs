//! Random well-typed IR modules (arithmetic, comparisons, selects, conversions, ifs, bounded
//! loops, calls between functions, local arrays) run in every lane width must agree bit for
//! bit with the interpreter, lane by lane, with different inputs per lane.
//!
//! Local arrays: each function first fills every element of its arrays (a loop with the
//! counter as index), since an unwritten element is unspecified; later loads and stores, in
//! divergent ifs and loops too, use uniform indices (constants, some out of range), varying
//! ones (masked values, the lane index) and loop counters.
//!
//! The generator draws its decisions from a stream of numbers that proptest produces and
//! shrinks (a shorter or smaller stream gives a simpler program), so failures minimise.

mod common;

include!("cases/random_ir.rs");
