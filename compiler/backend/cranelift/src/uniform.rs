//! A local uniformity analysis: which values are the same in every active lane, so that they
//! stay scalar in vector code.
//!
//! The rules (the code generator follows exactly the same ones):
//! - constants are uniform; parameters are uniform only where the caller says so (entry
//!   wrappers with [`crate::Options::uniform_params`]); internal functions take varying params;
//! - pure operations (arithmetic, comparisons, selects, conversions, detach, replace_grad) and
//!   loads are uniform when all their operands are (a load with a uniform index reads one
//!   element for all lanes);
//! - local loads are varying: each lane has its own cells, written under its own mask;
//! - calls and extern calls are varying (callees are compiled once for varying arguments, and
//!   host functions run per lane);
//! - an `if` on a uniform condition branches, and a result is uniform when both regions yield
//!   uniform values; an `if` on a varying condition selects per lane, so its results vary;
//! - a loop whose continue flag is uniform runs the same number of iterations in every lane;
//!   a carried value is uniform when its initial and next values are uniform and the flag is
//!   uniform (a fixpoint, since the flag may depend on the carried values).

use drs_ir::{Function, Op, Region, Value};

/// `uniform[v]` for every value of `f`; all true in scalar mode.
pub fn analyze(f: &Function, param_uniform: &[bool], vector: bool) -> Vec<bool> {
    if !vector {
        return vec![true; f.value_types.len()];
    }
    let mut u = vec![false; f.value_types.len()];
    for (i, p) in f.params.iter().enumerate() {
        u[p.value.0 as usize] = param_uniform.get(i).copied().unwrap_or(false);
    }
    region(&mut u, &f.body);
    u
}

fn get(u: &[bool], v: Value) -> bool {
    u[v.0 as usize]
}

fn region(u: &mut [bool], r: &Region) {
    for inst in &r.insts {
        let uniform = match &inst.op {
            Op::Const(_) => true,
            Op::Unary(_, a) | Op::Convert(_, a) | Op::Bitcast(_, a) | Op::Detach(a) | Op::ReplaceGrad(a, _) => {
                get(u, *a)
            }
            Op::Binary(_, a, b) | Op::Cmp(_, a, b) => get(u, *a) && get(u, *b),
            Op::Fma(a, b, c) | Op::Select(a, b, c) => get(u, *a) && get(u, *b) && get(u, *c),
            Op::Load { index, .. } => get(u, *index),
            Op::Math(..)
            | Op::Call(..)
            | Op::CallExtern(..)
            | Op::Store { .. }
            | Op::AtomicAdd { .. }
            | Op::LocalLoad { .. }
            | Op::LocalStore { .. } => false,
            Op::If { cond, then, els } => {
                region(u, then);
                region(u, els);
                let c = get(u, *cond);
                for (i, &r) in inst.results.iter().enumerate() {
                    u[r.0 as usize] = c && get(u, then.yields[i]) && get(u, els.yields[i]);
                }
                continue;
            }
            Op::Loop { init, body, .. } => {
                let mut carried: Vec<bool> = init.iter().map(|&v| get(u, v)).collect();
                loop {
                    for (&p, &c) in body.params.iter().zip(&carried) {
                        u[p.0 as usize] = c;
                    }
                    region(u, body);
                    let cont = get(u, body.yields[0]);
                    let next: Vec<bool> =
                        carried.iter().zip(&body.yields[1..]).map(|(&c, &y)| c && cont && get(u, y)).collect();
                    if next == carried {
                        break;
                    }
                    carried = next;
                }
                for (&r, &c) in inst.results.iter().zip(&carried) {
                    u[r.0 as usize] = c;
                }
                continue;
            }
        };
        for &r in &inst.results {
            u[r.0 as usize] = uniform;
        }
    }
}
