//! Reverse mode: a forward sweep that runs the primal and keeps what the reverse sweep reads,
//! then the reverse sweep that propagates adjoints from the results to the parameters.
//!
//! Where the reverse sweep of a region runs, the forward sweep's values of that region are out
//! of scope, so the forward sweep *transports* every value the reverse sweep reads:
//! - out of an `if` branch as extra yields of the `if` (zeros from the other branch);
//! - out of a loop body into a per-iteration tape (a local array indexed by the iteration,
//!   times the enclosing loops' indices), which the reverse loop reads back.
//!
//! The reverse of an `if` is an `if` on the same condition whose branches yield the updated
//! adjoints of the outer values they contribute to. The reverse of a loop runs its iterations
//! backwards (it counts them: the forward sweep carries an iteration counter), carrying the
//! adjoints of the loop-carried values and of the outer values the body contributes to.

use crate::activity::{varied_values, Facts};
use crate::emit::Emitter;
use crate::inline::{inline_calls, map_operands};
use crate::rules::{operands, partials};
use crate::{AdError, Differentiator, Mode};
use drs_ir::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Builds `bwd(f)` into the signature reserved at `id`.
pub(crate) fn differentiate(d: &mut Differentiator, f: FuncId, id: FuncId) -> Result<Function, AdError> {
    let tangent_params = d.info.functions[f.0 as usize].tangent_params.clone();
    // Callees with effects are inlined, so that the forward sweep runs their effects once.
    let (mut primal, loop_origins) = {
        let (module, info) = (&*d.module, &*d.info);
        let mut facts = Facts::new(module, info);
        inline_calls(module, f, &mut |g| info.functions[g.0 as usize].custom_bwd.is_none() && facts.has_effects(g))
    };
    let counters = add_iteration_counters(&mut primal);
    let varied = varied_values(&mut Facts::new(d.module, d.info), &primal, &tangent_params);

    let mut signature = d.module.function(id).clone();
    signature.locals = primal.locals.clone();
    let out_params: Vec<Value> = signature.params.iter().map(|p| p.value).collect();
    let n = primal.value_types.len();
    let mut rev = Reverse {
        d,
        p: &primal,
        varied,
        rel: vec![false; n],
        e: Emitter::new(signature),
        fmap: vec![None; n],
        bmap: vec![None; n],
        consts: vec![None; n],
        transport: vec![Vec::new()],
        levels: Vec::new(),
        tapes: HashMap::new(),
        adj: HashMap::new(),
        counters,
        loop_origins,
        loops_seen: 0,
        error: None,
    };
    rev.mark_relevant(&primal.body);
    for (k, p) in primal.params.iter().enumerate() {
        rev.fmap[p.value.0 as usize] = Some(out_params[k]);
    }
    rev.forward_region(&primal.body.insts);
    if let Some(e) = rev.error {
        return Err(e);
    }
    // Seed the results' adjoints and run the reverse sweep.
    let adjoints = &out_params[primal.params.len()..];
    for (y, a) in primal.body.yields.iter().zip(adjoints) {
        if rev.is_varied(*y) {
            rev.add_adj(*y, *a);
        }
    }
    rev.reverse_region(&primal.body.insts);
    let mut results = Vec::new();
    for (p, _) in primal.params.iter().zip(&tangent_params).filter(|(_, &t)| t) {
        let a = rev.adj_or_zero(p.value);
        results.push(a);
    }
    Ok(rev.e.finish(results))
}

/// Gives every loop an iteration counter: a last carried u32 that starts at 0 and counts the
/// iterations. Returns, for each loop (by its counter result, the loop's last result), the
/// counter's value inside the body.
fn add_iteration_counters(function: &mut Function) -> HashMap<Value, Value> {
    let mut counters = HashMap::new();
    let mut body = std::mem::take(&mut function.body);
    add_counters_in(function, &mut body, &mut counters);
    function.body = body;
    counters
}

fn add_counters_in(function: &mut Function, region: &mut Region, counters: &mut HashMap<Value, Value>) {
    let mut i = 0;
    while i < region.insts.len() {
        if let Op::Loop { body, .. } = &mut region.insts[i].op {
            add_counters_in(function, body, counters);
            let zero = function.new_value(Ty::U32);
            let counter = function.new_value(Ty::U32);
            let one = function.new_value(Ty::U32);
            let next = function.new_value(Ty::U32);
            let total = function.new_value(Ty::U32);
            body.params.push(counter);
            body.insts.push(Inst { results: vec![one], op: Op::Const(Const::U32(1)) });
            body.insts.push(Inst { results: vec![next], op: Op::Binary(BinaryOp::Add, counter, one) });
            body.yields.push(next);
            let Op::Loop { init, .. } = &mut region.insts[i].op else { unreachable!("matched above") };
            init.push(zero);
            region.insts[i].results.push(total);
            region.insts.insert(i, Inst { results: vec![zero], op: Op::Const(Const::U32(0)) });
            counters.insert(total, counter);
            i += 1;
        }
        if let Op::If { then, els, .. } = &mut region.insts[i].op {
            add_counters_in(function, then, counters);
            add_counters_in(function, els, counters);
        }
        i += 1;
    }
}

/// A loop of the primal whose iterations are taped, as seen from inside its body.
struct Level {
    /// Product of the bounds of this loop and the enclosing taped loops (the tape length).
    total: u32,
    /// Tape index of the current iteration, in the sweep being emitted.
    index: Value,
}

struct Reverse<'a, 'm> {
    d: &'a mut Differentiator<'m>,
    /// The primal after inlining and with iteration counters.
    p: &'a Function,
    varied: Vec<bool>,
    /// Values the reverse sweep may read (operands and results of operations that carry
    /// derivatives, conditions of `if`s with varied results, iteration counts).
    rel: Vec<bool>,
    e: Emitter,
    /// Forward-sweep value of each primal value, at the level it was last transported to.
    fmap: Vec<Option<Value>>,
    /// Reverse-sweep value of each taped primal value (read from its tape).
    bmap: Vec<Option<Value>>,
    /// Primal constants, re-emitted where the reverse sweep needs them.
    consts: Vec<Option<Const>>,
    /// Per open forward region: the relevant values available there, to transport out of it.
    transport: Vec<Vec<Value>>,
    levels: Vec<Level>,
    /// The tape of each taped loop (by counter result): primal value and local array.
    tapes: HashMap<Value, Vec<(Value, u32)>>,
    /// Adjoints accumulated so far (absent: zero).
    adj: HashMap<Value, Value>,
    counters: HashMap<Value, Value>,
    loop_origins: Vec<(FuncId, usize)>,
    loops_seen: usize,
    error: Option<AdError>,
}

impl Reverse<'_, '_> {
    fn is_varied(&self, v: Value) -> bool {
        self.varied[v.0 as usize]
    }

    fn ty(&self, v: Value) -> Ty {
        self.p.ty(v)
    }

    fn f(&self, v: Value) -> Value {
        self.fmap[v.0 as usize].expect("a primal value is mapped before its uses")
    }

    /// The value of primal `v` where the reverse sweep is being emitted.
    fn b(&mut self, v: Value) -> Value {
        if let Some(c) = self.consts[v.0 as usize] {
            return self.e.konst(c);
        }
        self.bmap[v.0 as usize].unwrap_or_else(|| self.f(v))
    }

    fn add_adj(&mut self, v: Value, a: Value) {
        let sum = match self.adj.get(&v) {
            Some(&old) => self.e.add(old, a),
            None => a,
        };
        self.adj.insert(v, sum);
    }

    fn adj_or_zero(&mut self, v: Value) -> Value {
        match self.adj.get(&v) {
            Some(&a) => a,
            None => self.e.zero(self.ty(v)),
        }
    }

    /// Whether a loop carries derivatives (then its reverse needs a tape).
    fn loop_is_active(&self, inst: &Inst) -> bool {
        let Op::Loop { body, .. } = &inst.op else { return false };
        let mut active = body.params.iter().any(|p| self.is_varied(*p));
        crate::activity::visit_insts(body, &mut |i: &Inst| active |= i.results.iter().any(|r| self.is_varied(*r)));
        active
    }

    // ---------------------------------------------------------------- analysis

    fn mark_relevant(&mut self, region: &Region) {
        for inst in &region.insts {
            match &inst.op {
                Op::If { cond, then, els } => {
                    self.mark_relevant(then);
                    self.mark_relevant(els);
                    if inst.results.iter().any(|r| self.is_varied(*r)) {
                        self.rel[cond.0 as usize] = true;
                    }
                }
                Op::Loop { body, .. } => {
                    self.mark_relevant(body);
                    if self.loop_is_active(inst) {
                        let total = *inst.results.last().expect("loops have a counter");
                        self.rel[total.0 as usize] = true;
                    }
                }
                op if inst.results.iter().any(|r| self.is_varied(*r)) => {
                    for v in op_operands(op).into_iter().chain(inst.results.iter().copied()) {
                        self.rel[v.0 as usize] = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// The varied values defined outside `regions` to which their reverse sweep contributes
    /// adjoints, in value order.
    fn outer_targets(&self, regions: &[&Region]) -> Vec<Value> {
        let mut defined = HashSet::new();
        let mut used = BTreeSet::new();
        for r in regions {
            self.collect_targets(r, &mut defined, &mut used);
        }
        used.into_iter().filter(|v| !defined.contains(v)).collect()
    }

    fn collect_targets(&self, region: &Region, defined: &mut HashSet<Value>, used: &mut BTreeSet<Value>) {
        defined.extend(region.params.iter().copied());
        used.extend(region.yields.iter().copied().filter(|v| self.is_varied(*v)));
        for inst in &region.insts {
            defined.extend(inst.results.iter().copied());
            match &inst.op {
                Op::If { then, els, .. } => {
                    self.collect_targets(then, defined, used);
                    self.collect_targets(els, defined, used);
                }
                Op::Loop { init, body, .. } => {
                    used.extend(init.iter().copied().filter(|v| self.is_varied(*v)));
                    self.collect_targets(body, defined, used);
                }
                op if inst.results.iter().any(|r| self.is_varied(*r)) => {
                    used.extend(op_operands(op).into_iter().filter(|v| self.is_varied(*v)));
                }
                _ => {}
            }
        }
    }

    // ---------------------------------------------------------------- forward sweep

    /// Records primal `v`, now available at the current forward level as `value`.
    fn define(&mut self, v: Value, value: Value) {
        self.fmap[v.0 as usize] = Some(value);
        if self.rel[v.0 as usize] && self.consts[v.0 as usize].is_none() {
            self.transport.last_mut().expect("a forward region is open").push(v);
        }
    }

    fn forward_region(&mut self, insts: &[Inst]) {
        for inst in insts {
            self.forward_inst(inst);
        }
    }

    fn forward_inst(&mut self, inst: &Inst) {
        match &inst.op {
            Op::Detach(a) | Op::ReplaceGrad(a, _) => {
                let a = self.f(*a);
                self.define(inst.results[0], a);
            }
            Op::If { cond, then, els } => self.forward_if(inst, *cond, then, els),
            Op::Loop { init, body, max_iters } => self.forward_loop(inst, init, body, *max_iters),
            op => {
                if let Op::Const(c) = op {
                    self.consts[inst.results[0].0 as usize] = Some(*c);
                }
                let types: Vec<Ty> = inst.results.iter().map(|r| self.ty(*r)).collect();
                let op = map_operands(op, |v| self.fmap[v.0 as usize].expect("mapped before use"));
                let out = self.e.push(op, &types);
                for (r, v) in inst.results.iter().zip(out) {
                    self.define(*r, v);
                }
            }
        }
    }

    /// Emits one branch of a forward `if` yielding the primal results; returns it, the values
    /// to export from it, and their forward values in it.
    fn forward_branch(&mut self, region: &Region) -> (Region, Vec<Value>, Vec<Value>) {
        self.e.open();
        self.transport.push(Vec::new());
        self.forward_region(&region.insts);
        let exports = self.transport.pop().expect("pushed above");
        let values = exports.iter().map(|&v| self.f(v)).collect();
        let yields = region.yields.iter().map(|&v| self.f(v)).collect();
        (self.e.close(Vec::new(), yields), exports, values)
    }

    /// Appends zeros of the types of `values` to a closed region's yields.
    fn yield_zeros(&mut self, region: &mut Region, values: &[Value]) {
        for v in values {
            let ty = self.ty(*v);
            let z = self.e.new_value(ty);
            region.insts.push(Inst { results: vec![z], op: Op::Const(Const::from_bits(ty, 0)) });
            region.yields.push(z);
        }
    }

    fn forward_if(&mut self, inst: &Inst, cond: Value, then: &Region, els: &Region) {
        let cond = self.f(cond);
        let (mut then, then_exports, then_values) = self.forward_branch(then);
        let (mut els, else_exports, else_values) = self.forward_branch(els);
        // Yields: the results, then's exports (zeros from else), else's exports (zeros from then).
        then.yields.extend(then_values);
        self.yield_zeros(&mut then, &else_exports);
        self.yield_zeros(&mut els, &then_exports);
        els.yields.extend(else_values);
        let results: Vec<Value> = inst.results.iter().map(|r| self.e.new_value(self.ty(*r))).collect();
        let exported: Vec<(Value, Value)> =
            then_exports.iter().chain(&else_exports).map(|&v| (v, self.e.new_value(self.ty(v)))).collect();
        let all: Vec<Value> = results.iter().copied().chain(exported.iter().map(|(_, x)| *x)).collect();
        self.e.push_with(Op::If { cond, then, els }, all);
        for (r, v) in inst.results.iter().zip(results) {
            self.define(*r, v);
        }
        for (v, value) in exported {
            self.define(v, value);
        }
    }

    fn forward_loop(&mut self, inst: &Inst, init: &[Value], body: &Region, max_iters: Option<u32>) {
        let loop_number = self.loops_seen;
        self.loops_seen += 1;
        let total = *inst.results.last().expect("loops have a counter");
        let taped = self.loop_is_active(inst);
        let bound = match (taped, max_iters) {
            (true, None) => {
                let (function, loop_index) = self.loop_origins[loop_number];
                self.error.get_or_insert(AdError::UnboundedLoop { function, loop_index, required_by: function });
                None
            }
            (true, Some(n)) => Some(n),
            (false, _) => None,
        };
        let init: Vec<Value> = init.iter().map(|&v| self.f(v)).collect();
        let params: Vec<Value> = body.params.iter().map(|p| self.e.new_value(self.ty(*p))).collect();
        self.e.open();
        self.transport.push(Vec::new());
        for (p, v) in body.params.iter().zip(&params) {
            self.define(*p, *v);
        }
        if let Some(n) = bound {
            let counter = self.f(self.counters[&total]);
            self.push_level(n, counter);
        }
        self.forward_region(&body.insts);
        let exports = self.transport.pop().expect("pushed above");
        if bound.is_some() {
            let level = self.levels.pop().expect("pushed above");
            let mut tape = Vec::new();
            for v in exports {
                let array = self.e.func.add_local(self.ty(v), level.total);
                let value = self.f(v);
                self.e.push(Op::LocalStore { array, index: level.index, value }, &[]);
                tape.push((v, array));
            }
            self.tapes.insert(total, tape);
        }
        let yields = body.yields.iter().map(|&v| self.f(v)).collect();
        let body = self.e.close(params, yields);
        let results: Vec<Value> = inst.results.iter().map(|r| self.e.new_value(self.ty(*r))).collect();
        self.e.push_with(Op::Loop { init, body, max_iters }, results.clone());
        for (r, v) in inst.results.iter().zip(results) {
            self.define(*r, v);
        }
    }

    /// Enters a taped loop whose current iteration is `counter` (in the sweep being emitted).
    fn push_level(&mut self, n: u32, counter: Value) {
        let (index, total) = match self.levels.last() {
            Some(outer) => {
                let (outer_index, outer_total) = (outer.index, outer.total);
                let nn = self.e.u32(n);
                let scaled = self.e.mul(outer_index, nn);
                (self.e.add(scaled, counter), outer_total.saturating_mul(n))
            }
            None => (counter, n),
        };
        self.levels.push(Level { total, index });
    }

    // ---------------------------------------------------------------- reverse sweep

    fn reverse_region(&mut self, insts: &[Inst]) {
        for inst in insts.iter().rev() {
            if inst.results.iter().any(|r| self.adj.contains_key(r)) {
                self.reverse_inst(inst);
            }
        }
    }

    fn reverse_inst(&mut self, inst: &Inst) {
        match &inst.op {
            Op::If { cond, then, els } => self.reverse_if(inst, *cond, then, els),
            Op::Loop { init, body, max_iters } => self.reverse_loop(inst, init, body, max_iters.unwrap_or(1)),
            Op::Load { buffer, index } => {
                let grad = self.d.companion_buffer(*buffer, Mode::Bwd);
                let index = self.b(*index);
                let a = self.adj[&inst.results[0]];
                self.e.push(Op::AtomicAdd { buffer: grad, index, value: a }, &[]);
            }
            Op::CallExtern(ext, args) => {
                let derivative = self.d.extern_derivative(*ext, Mode::Bwd);
                let mut call_args: Vec<Value> = args.iter().map(|&a| self.b(a)).collect();
                for r in &inst.results {
                    let a = self.adj_or_zero(*r);
                    call_args.push(a);
                }
                let types: Vec<Ty> = args.iter().map(|a| self.ty(*a)).collect();
                let out = self.e.push(Op::CallExtern(derivative, call_args), &types);
                for (a, o) in args.iter().zip(out) {
                    if self.is_varied(*a) {
                        self.add_adj(*a, o);
                    }
                }
            }
            Op::Call(g, args) => {
                let (callee, drop_instance) = self.d.callee_derivative(*g, Mode::Bwd);
                let tangent_params = self.d.info.functions[g.0 as usize].tangent_params.clone();
                let mut call_args: Vec<Value> = args.iter().map(|&a| self.b(a)).collect();
                if drop_instance {
                    call_args.remove(0);
                }
                for r in &inst.results {
                    let a = self.adj_or_zero(*r);
                    call_args.push(a);
                }
                let targets: Vec<Value> =
                    args.iter().zip(&tangent_params).filter(|(_, &t)| t).map(|(a, _)| *a).collect();
                let types: Vec<Ty> = targets.iter().map(|a| self.ty(*a)).collect();
                let out = self.e.push(Op::Call(callee, call_args), &types);
                for (a, o) in targets.into_iter().zip(out) {
                    if self.is_varied(a) {
                        self.add_adj(a, o);
                    }
                }
            }
            op => {
                let Some(xs) = operands(op) else { return };
                let ybar = self.adj[&inst.results[0]];
                let args: Vec<Value> = xs.iter().map(|&x| self.b(x)).collect();
                let y = self.b(inst.results[0]);
                let parts = partials(&mut self.e, op, &args, y);
                for (x, p) in xs.into_iter().zip(parts) {
                    if self.is_varied(x) {
                        if let Some(c) = p.apply(&mut self.e, ybar) {
                            self.add_adj(x, c);
                        }
                    }
                }
            }
        }
    }

    fn reverse_if(&mut self, inst: &Inst, cond: Value, then: &Region, els: &Region) {
        let outer = self.outer_targets(&[then, els]);
        let current: Vec<Value> = outer.iter().map(|&x| self.adj_or_zero(x)).collect();
        let cond = self.b(cond);
        let result_adj: Vec<Option<Value>> = inst.results.iter().map(|r| self.adj.get(r).copied()).collect();
        let branch = |rev: &mut Self, region: &Region| {
            let saved = std::mem::replace(&mut rev.adj, outer.iter().copied().zip(current.iter().copied()).collect());
            rev.e.open();
            for (y, a) in region.yields.iter().zip(&result_adj) {
                if let Some(a) = a {
                    if rev.is_varied(*y) {
                        rev.add_adj(*y, *a);
                    }
                }
            }
            rev.reverse_region(&region.insts);
            let yields: Vec<Value> = outer.iter().map(|&x| rev.adj_or_zero(x)).collect();
            rev.adj = saved;
            rev.e.close(Vec::new(), yields)
        };
        let then = branch(self, then);
        let els = branch(self, els);
        let results: Vec<Value> = outer.iter().map(|_| self.e.new_value(Ty::F32)).collect();
        self.e.push_with(Op::If { cond, then, els }, results.clone());
        for (x, r) in outer.into_iter().zip(results) {
            self.adj.insert(x, r);
        }
    }

    fn reverse_loop(&mut self, inst: &Inst, init: &[Value], body: &Region, n: u32) {
        let total = *inst.results.last().expect("loops have a counter");
        let iterations = self.b(total);
        let outer = self.outer_targets(&[body]);
        let carried: Vec<usize> = (0..body.params.len()).filter(|&k| self.is_varied(body.params[k])).collect();

        let mut rev_init = vec![iterations];
        for &k in &carried {
            let a = self.adj_or_zero(inst.results[k]);
            rev_init.push(a);
        }
        for &x in &outer {
            let a = self.adj_or_zero(x);
            rev_init.push(a);
        }
        let remaining = self.e.new_value(Ty::U32);
        let carried_adj: Vec<Value> = carried.iter().map(|_| self.e.new_value(Ty::F32)).collect();
        let outer_adj: Vec<Value> = outer.iter().map(|_| self.e.new_value(Ty::F32)).collect();

        self.e.open();
        let one = self.e.u32(1);
        let iteration = self.e.sub(remaining, one);
        self.push_level(n, iteration);
        let index = self.levels.last().expect("pushed above").index;
        for (v, array) in self.tapes.get(&total).cloned().unwrap_or_default() {
            let value = self.e.push(Op::LocalLoad { array, index }, &[self.ty(v)])[0];
            self.bmap[v.0 as usize] = Some(value);
        }
        let saved = std::mem::replace(&mut self.adj, outer.iter().copied().zip(outer_adj.iter().copied()).collect());
        for (&k, &a) in carried.iter().zip(&carried_adj) {
            let next = body.yields[k + 1];
            if self.is_varied(next) {
                self.add_adj(next, a);
            }
        }
        self.reverse_region(&body.insts);
        let zero = self.e.u32(0);
        let more = self.e.cmp(CmpOp::Gt, iteration, zero);
        let mut yields = vec![more, iteration];
        for &k in &carried {
            let a = self.adj_or_zero(body.params[k]);
            yields.push(a);
        }
        for &x in &outer {
            let a = self.adj_or_zero(x);
            yields.push(a);
        }
        self.adj = saved;
        self.levels.pop();
        let params = [vec![remaining], carried_adj, outer_adj].concat();
        let rev_body = self.e.close(params, yields);

        let results: Vec<Value> = std::iter::once(Ty::U32)
            .chain(std::iter::repeat_n(Ty::F32, carried.len() + outer.len()))
            .map(|t| self.e.new_value(t))
            .collect();
        self.e.push_with(Op::Loop { init: rev_init, body: rev_body, max_iters: Some(n) }, results.clone());
        let (carried_results, outer_results) = results[1..].split_at(carried.len());
        for (&x, &r) in outer.iter().zip(outer_results) {
            self.adj.insert(x, r);
        }
        for (&k, &r) in carried.iter().zip(carried_results) {
            if self.is_varied(init[k]) {
                self.add_adj(init[k], r);
            }
        }
    }
}

/// The value operands of a non-region operation.
fn op_operands(op: &Op) -> Vec<Value> {
    let mut out = Vec::new();
    map_operands(op, |v| {
        out.push(v);
        v
    });
    out
}
