//! Uniformity analysis: which values are the same in every SIMD lane (GPU thread) that
//! computes them, so that a backend can keep them scalar.
//!
//! Rules, for a function whose params are uniform or varying as given:
//!
//! - constants are uniform; a pure operation (arithmetic, compare, select, conversions,
//!   `Math`, `Detach`, `ReplaceGrad`) is uniform iff all its operands are;
//! - a `Load` is uniform iff its index is (buffers are shared by all lanes); a `LocalLoad` is
//!   never uniform (each lane has its own local arrays, written under its own mask);
//! - a `Call`'s results are those of the callee analysed with the uniformity of the
//!   arguments (recursion is assumed varying); `CallExtern` results are varying (the host
//!   may answer per lane, e.g. a ray intersection);
//! - an `If`'s result is uniform iff the condition and the values both regions yield for it
//!   are. Values computed inside a region with a varying condition can still be uniform:
//!   every lane that runs the region computes the same value, and such a value only leaves
//!   the region through the `If`'s results, which the rule above covers;
//! - a loop-carried value is uniform inside the body iff its initial value and its next value
//!   are (greatest fixpoint: start from "uniform if the initial value is", drop what the body
//!   makes varying, repeat); the loop's *result* is uniform iff, in addition, the continue
//!   flag is uniform: with a varying flag lanes leave after different iterations and keep
//!   different values.

use drs_ir::{FuncId, Function, Module, Op, Region, Value};
use rustc_hash::FxHashMap as HashMap;

/// For every value of `module.functions[func]` (indexed by `Value`), whether it is uniform
/// when the function's params are uniform as given by `uniform_params`.
pub fn uniform_values(module: &Module, func: FuncId, uniform_params: &[bool]) -> Vec<bool> {
    let mut a = Analysis { module, memo: HashMap::default(), active: Vec::new() };
    a.function(func, uniform_params)
}

struct Analysis<'m> {
    module: &'m Module,
    /// Result uniformity of (callee, argument uniformity).
    memo: HashMap<(FuncId, Vec<bool>), Vec<bool>>,
    /// Functions being analysed (to cut recursion).
    active: Vec<FuncId>,
}

impl Analysis<'_> {
    fn function(&mut self, func: FuncId, uniform_params: &[bool]) -> Vec<bool> {
        let f = self.module.function(func);
        let mut u = vec![false; f.value_types.len()];
        for (p, &uni) in f.params.iter().zip(uniform_params) {
            u[p.value.0 as usize] = uni;
        }
        self.active.push(func);
        self.region(&f.body, &mut u);
        self.active.pop();
        u
    }

    fn call_results(&mut self, callee: FuncId, args: Vec<bool>) -> Vec<bool> {
        let f: &Function = self.module.function(callee);
        if self.active.contains(&callee) {
            return vec![false; f.result_types.len()];
        }
        let key = (callee, args);
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let u = self.function(callee, &key.1);
        let r: Vec<bool> = f.body.yields.iter().map(|y| u[y.0 as usize]).collect();
        self.memo.insert(key, r.clone());
        r
    }

    fn region(&mut self, region: &Region, u: &mut [bool]) {
        for inst in &region.insts {
            let all = |vs: &[Value], u: &[bool]| vs.iter().all(|v| u[v.0 as usize]);
            let results: Vec<bool> = match &inst.op {
                Op::Const(_) => vec![true],
                Op::If { cond, then, els } => {
                    self.region(then, u);
                    self.region(els, u);
                    let c = u[cond.0 as usize];
                    then.yields.iter().zip(&els.yields).map(|(a, b)| c && u[a.0 as usize] && u[b.0 as usize]).collect()
                }
                Op::Loop { init, body, .. } => {
                    let mut carried: Vec<bool> = init.iter().map(|v| u[v.0 as usize]).collect();
                    loop {
                        for (p, &c) in body.params.iter().zip(&carried) {
                            u[p.0 as usize] = c;
                        }
                        self.region(body, u);
                        let next: Vec<bool> =
                            carried.iter().zip(&body.yields[1..]).map(|(&c, y)| c && u[y.0 as usize]).collect();
                        if next == carried {
                            break;
                        }
                        carried = next;
                    }
                    let cont = u[body.yields[0].0 as usize];
                    carried.iter().map(|&c| c && cont).collect()
                }
                Op::Call(g, args) => {
                    let a: Vec<bool> = args.iter().map(|v| u[v.0 as usize]).collect();
                    self.call_results(*g, a)
                }
                Op::CallExtern(..) => vec![false; inst.results.len()],
                Op::Store { .. } | Op::AtomicAdd { .. } | Op::LocalStore { .. } => vec![],
                // Lanes store under masks, so what a lane reads back is its own.
                Op::LocalLoad { .. } => vec![false],
                op => {
                    let uni = all(&crate::util::operands(op), u);
                    vec![uni; inst.results.len()]
                }
            };
            for (r, uni) in inst.results.iter().zip(results) {
                u[r.0 as usize] = uni;
            }
        }
    }
}
