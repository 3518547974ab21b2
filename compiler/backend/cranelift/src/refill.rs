//! Lane refill in entry wrappers: which functions it applies to, and how their code divides
//! around the loop (the plan). Each code generator emits the refilling wrapper from the plan
//! (Cranelift: `codegen/refill.rs`; LLVM: drs-llvm).
//!
//! A plain entry wrapper runs its groups of lanes one after the other, and a group's loop runs
//! while any of its lanes continues, so lanes whose loop has ended wait for the others: in the
//! path tracer a quarter of the lanes of each host call (docs/benchmarks.md). When the
//! function's body is straight code (`pre`), one loop whose lanes leave at different
//! iterations, and straight code again (`post`), the wrapper instead feeds the call's
//! `groups * W` lanes (its samples) through a single group as a queue. Whenever lanes leave
//! the loop, `post` runs for them (under their mask) and stores their results at their
//! samples' places; each then takes the next sample of the queue: its arguments are gathered
//! from the argument arrays, `pre` runs for it under the mask of the refilled lanes, and it
//! enters the loop with its own initial values. The loop runs until no lane holds a sample.
//! `if`s on uniform conditions around the loop (an integrator's `if max_depth == 0 { return }`)
//! are decided once per call; when the loop is not reached, when uniform parameters differ
//! between groups (they are only promised to be the same within one), or when not every lane
//! is active, the groups run as in the plain wrapper. A `while` loop ends one iteration after
//! its condition fails (its do-while form runs an iteration that changes nothing); the refill
//! takes a lane out as soon as the condition fails on its next values, or the lane would hold
//! its place for that iteration.
//!
//! A lane computes exactly what it would in a group of its own, since no operation mixes lanes
//! and every side effect is masked: results are bit for bit those of the plain wrapper. Only
//! the order in which host functions see the samples changes, and the order of the samples'
//! adds into buffers. The wrapper therefore refills only functions that store to no buffer
//! (directly or through calls), since the order of stores can show. The order of adds shows
//! only in the rounding of float sums, and it is still a function of the call's arguments, so
//! a gradient kernel's sums stay deterministic.
//!
//! Values that `pre` computes (and varying parameters) belong to one sample: those the loop or
//! `post` reads are carried around the loop beside its own values and replaced for refilled
//! lanes. Uniform ones are the same for every sample (they depend on uniform parameters, which
//! the refill has checked to be the same in every group, and on constants), so the refill keeps
//! them and skips the pure instructions that compute them.

use crate::codegen::arithmetic;
use drs_ir::{Const, Function, Inst, Module, Op, Region, Value};
use drs_opt::util::{mark_reads, nested, operands, walk_insts};

/// How an entry wrapper refills the lanes of `f`'s loop: the instructions before the loop
/// (`pre`) and after it (`post`), flattened out of the `if`s on uniform conditions that hold
/// the loop, and those conditions (`guards`), which select the refilling code once per call.
pub struct RefillPlan<'f> {
    /// Uniform conditions and the value each must have for the body to reach the loop.
    pub guards: Vec<(Value, bool)>,
    pub pre: Vec<&'f Inst>,
    /// Which instructions of `pre` give the same values for every sample (see
    /// [`kept_for_all_samples`]); the guards are among their results.
    pub keep: Vec<bool>,
    pub the_loop: &'f Inst,
    /// The loop's `while` condition, when it has one (see [`while_condition`]).
    pub while_condition: Option<Value>,
    pub post: Vec<Step<'f>>,
}

/// What follows the loop, from the inside out.
pub enum Step<'f> {
    Inst(&'f Inst),
    /// An `if`'s results take the yields of the region that holds the loop.
    Bind {
        results: &'f [Value],
        yields: &'f [Value],
    },
}

impl RefillPlan<'_> {
    /// The loop's initial values and body.
    pub fn the_loop(&self) -> (&[Value], &Region) {
        match &self.the_loop.op {
            Op::Loop { init, body, .. } => (init, body),
            _ => unreachable!("refill_plan makes plans around loops only"),
        }
    }

    /// The values of one sample that the loop and `post` read: the varying parameters and
    /// results of `pre` (`uniform` as [`crate::uniform::analyze`] gives it). They are carried
    /// around the loop beside its own values and replaced for refilled lanes.
    pub fn per_sample(&self, f: &Function, uniform: &[bool]) -> Vec<Value> {
        let (_, body) = self.the_loop();
        let mut read = vec![false; f.value_types.len()];
        mark_reads(&body.insts, &body.yields, &mut read);
        for step in &self.post {
            match step {
                Step::Inst(inst) => mark_reads(std::slice::from_ref(*inst), &[], &mut read),
                Step::Bind { yields, .. } => mark_reads(&[], yields, &mut read),
            }
        }
        mark_reads(&[], &f.body.yields, &mut read);
        let mut per_sample: Vec<Value> = f.params.iter().map(|p| p.value).collect();
        per_sample.extend(self.pre.iter().flat_map(|i| i.results.iter().copied()));
        per_sample.retain(|&v| read[v.0 as usize] && !uniform[v.0 as usize]);
        per_sample
    }
}

/// The refill plan for an entry wrapper of `f`, if `f` has the shape for it (see the module
/// comment): a loop with a varying continue flag, reached through `if`s on uniform conditions
/// only (such as `if max_depth == 0 { return ... }` before it), and no other loop outside it
/// on the way there: the code around it runs again for each refilled lane, often for few
/// lanes at once, so it must not hold long-running work. No buffer stores in `f` or the
/// functions it calls (adds are allowed).
pub fn refill_plan<'f>(module: &Module, f: &'f Function, uniform: &[bool]) -> Option<RefillPlan<'f>> {
    if stores_to_buffers(module, f) {
        return None;
    }
    let holds_loop = |inst: &Inst| {
        let mut found = matches!(inst.op, Op::Loop { .. });
        for r in nested(&inst.op) {
            walk_insts(r, &mut |i| found |= matches!(i.op, Op::Loop { .. }));
        }
        found
    };
    let (mut guards, mut pre, mut posts) = (Vec::new(), Vec::new(), Vec::new());
    let mut region = &f.body;
    let the_loop = loop {
        let at = region.insts.iter().position(holds_loop)?;
        pre.extend(&region.insts[..at]);
        let inst = &region.insts[at];
        let mut post: Vec<Step> = region.insts[at + 1..].iter().map(Step::Inst).collect();
        match &inst.op {
            Op::Loop { body, .. } if !uniform[body.yields[0].0 as usize] => {
                posts.push(post);
                break inst;
            }
            Op::If { cond, then, els } if uniform[cond.0 as usize] => {
                let then_holds = then.insts.iter().any(holds_loop);
                let inner = if then_holds { then } else { els };
                guards.push((*cond, then_holds));
                post.insert(0, Step::Bind { results: &inst.results, yields: &inner.yields });
                posts.push(post);
                region = inner;
            }
            _ => return None,
        }
    };
    let post: Vec<Step> = posts.into_iter().rev().flatten().collect();
    if post.iter().any(|step| matches!(step, Step::Inst(inst) if holds_loop(inst))) {
        return None;
    }
    let keep = kept_for_all_samples(f, uniform, &pre);
    let kept = |v: Value| pre.iter().zip(&keep).any(|(inst, &k)| k && inst.results.contains(&v));
    if !guards.iter().all(|&(cond, _)| kept(cond)) {
        return None;
    }
    let while_condition = while_condition(f, the_loop);
    Some(RefillPlan { guards, pre, keep, the_loop, while_condition, post })
}

/// The condition of a `while` loop (see `drs_lower`'s control flow): a body that computes `c`
/// from the carried values with pure instructions, then `if c { ...; yield [keep_going, new
/// values] } else { yield [false, the carried values as they were] }`. A lane for which `c` is
/// false on the next values leaves the loop after one more iteration that changes nothing, so
/// the refill can take it out at once: the condition on the next values decides.
fn while_condition(f: &Function, the_loop: &Inst) -> Option<Value> {
    let Op::Loop { body, .. } = &the_loop.op else { return None };
    let (last, guard) = body.insts.split_last()?;
    let Op::If { cond, els, .. } = &last.op else { return None };
    let constant = |inst: &Inst| matches!(inst.op, Op::Const(_));
    if !els.insts.iter().all(constant) || !guard.iter().all(|inst| arithmetic(&inst.op)) {
        return None;
    }
    // The flag is `c` itself where the body cannot break out of the loop (the optimiser folds
    // `if c { true } else { false }`), else the `if`'s result that is false in `else`.
    let flag_is_false_in_else = |flag: usize| {
        let mut is_false = false;
        walk_insts(&f.body, &mut |inst| {
            is_false |= inst.results.first() == Some(&els.yields[flag]) && inst.op == Op::Const(Const::Bool(false));
        });
        is_false
    };
    let flag = body.yields[0] == *cond
        || last.results.iter().position(|&r| r == body.yields[0]).is_some_and(flag_is_false_in_else);
    let unchanged = body.params.iter().zip(&body.yields[1..]).all(|(&param, &next)| {
        next == param || last.results.iter().position(|&r| r == next).is_some_and(|j| els.yields[j] == param)
    });
    (flag && unchanged).then_some(*cond)
}

/// Which instructions of `pre` the refill keeps from the first samples: pure, uniform, and
/// reading only values kept likewise, uniform parameters and constants. They are the same for
/// every sample.
fn kept_for_all_samples(f: &Function, uniform: &[bool], pre: &[&Inst]) -> Vec<bool> {
    let mut kept_value = vec![false; f.value_types.len()];
    for p in &f.params {
        kept_value[p.value.0 as usize] = uniform[p.value.0 as usize];
    }
    pre.iter()
        .map(|inst| {
            let kept = (arithmetic(&inst.op) || matches!(inst.op, Op::Load { .. }))
                && inst.results.iter().all(|&r| uniform[r.0 as usize])
                && operands(&inst.op).iter().all(|v| kept_value[v.0 as usize]);
            for &r in &inst.results {
                kept_value[r.0 as usize] = kept;
            }
            kept
        })
        .collect()
}

/// Whether `f` or a function it calls (directly or not) stores to a buffer.
fn stores_to_buffers(module: &Module, f: &Function) -> bool {
    let mut seen = vec![false; module.functions.len()];
    let mut todo = vec![f];
    while let Some(g) = todo.pop() {
        let mut writes = false;
        walk_insts(&g.body, &mut |inst| match inst.op {
            Op::Store { .. } => writes = true,
            Op::Call(callee, _) => {
                if let Some(done) = seen.get_mut(callee.0 as usize) {
                    if !*done {
                        *done = true;
                        todo.push(&module.functions[callee.0 as usize]);
                    }
                }
            }
            _ => {}
        });
        if writes {
            return true;
        }
    }
    false
}

/// The values that `insts` define, with those of their regions (results and region
/// parameters).
pub fn defined_values(insts: &[Inst], out: &mut Vec<Value>) {
    for inst in insts {
        out.extend_from_slice(&inst.results);
        for r in nested(&inst.op) {
            out.extend_from_slice(&r.params);
            defined_values(&r.insts, out);
        }
    }
}
