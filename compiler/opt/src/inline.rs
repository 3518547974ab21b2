//! Inlining of calls between functions of a module.
//!
//! A call is replaced by a copy of the callee's body with fresh values (the callee's params
//! become the arguments, its results the values the body yields); the callee's local arrays
//! are appended to the caller's, one new set per inlined call. Callees are processed
//! before their callers (bottom-up over the call graph), so sizes are measured after the
//! callee's own calls were inlined. Calls inside a recursive cycle are never inlined.
//! Functions are never removed (their ids are the module's interface); DCE of unreferenced
//! functions is the linker's business.

use crate::util::{callees, rename_uses, size, walk_insts, Subst};
use drs_ir::{FuncId, Function, Inst, Module, Op, Region, Value};

/// When a call is inlined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InlineOptions {
    /// Callees of at most this many instructions (nested regions included) are inlined while
    /// the caller stays within `max_caller`...
    pub threshold: usize,
    /// ...and callees of at most this many are inlined always.
    pub always_below: usize,
    /// Size cap of a caller for threshold-based inlining.
    pub max_caller: usize,
    /// Inline every call outside recursive cycles.
    pub full: bool,
    /// The module is a kernel whose only entry point is function 0: a callee called from
    /// one place among the functions reachable from it is inlined there whatever its size,
    /// which adds no code once the callee, then unreachable, is dropped ([`crate::extract`]).
    pub single_call_site: bool,
    /// With `single_call_site`: a callee called from two places among the functions reachable
    /// from function 0, and of at most this many instructions, is inlined at both while the
    /// callers stay within `max_caller` (0: never).
    pub two_call_sites_below: usize,
}

impl InlineOptions {
    pub const DEFAULT: InlineOptions = InlineOptions {
        threshold: 60,
        always_below: 12,
        max_caller: 4000,
        full: false,
        single_call_site: false,
        two_call_sites_below: 0,
    };
    pub const FULL: InlineOptions = InlineOptions {
        threshold: usize::MAX,
        always_below: usize::MAX,
        max_caller: usize::MAX,
        full: true,
        single_call_site: false,
        two_call_sites_below: 0,
    };
}

impl Default for InlineOptions {
    fn default() -> Self {
        InlineOptions::DEFAULT
    }
}

/// A callee chosen for inlining.
pub struct Candidate {
    pub id: FuncId,
    pub function: Function,
    /// Inlined at every call, whatever the caller's size.
    pub always: bool,
}

/// Inlines calls according to `opts` in every function of the module.
pub fn inline_calls(module: &mut Module, opts: &InlineOptions) {
    let n = module.functions.len();
    let calls: Vec<Vec<FuncId>> = module.functions.iter().map(|f| callees(&f.body)).collect();
    // Post-order over the call graph; `recursive[f]` marks functions on a cycle.
    let mut order = Vec::with_capacity(n);
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut recursive_edge = vec![Vec::new(); n];
    fn visit(
        f: usize,
        calls: &[Vec<FuncId>],
        state: &mut [u8],
        order: &mut Vec<usize>,
        rec: &mut [Vec<FuncId>],
        stack: &mut Vec<usize>,
    ) {
        state[f] = 1;
        stack.push(f);
        for &g in &calls[f] {
            let gi = g.0 as usize;
            if gi >= state.len() {
                continue;
            }
            match state[gi] {
                0 => visit(gi, calls, state, order, rec, stack),
                1 => {
                    // every call along the cycle is recursive
                    let start = stack.iter().position(|&s| s == gi).expect("on the stack");
                    for w in start..stack.len() {
                        let from = stack[w];
                        let to = if w + 1 < stack.len() { stack[w + 1] } else { gi };
                        rec[from].push(FuncId(to as u32));
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state[f] = 2;
        order.push(f);
    }
    let mut stack = Vec::new();
    for f in 0..n {
        if state[f] == 0 {
            visit(f, &calls, &mut state, &mut order, &mut recursive_edge, &mut stack);
        }
    }
    // A call into a function that can reach the caller again is also left alone.
    let reaches = |from: usize, to: usize| -> bool {
        let mut seen = vec![false; n];
        let mut work = vec![from];
        while let Some(x) = work.pop() {
            if x == to {
                return true;
            }
            if std::mem::replace(&mut seen[x], true) {
                continue;
            }
            work.extend(calls[x].iter().map(|g| g.0 as usize).filter(|&g| g < n));
        }
        false
    };
    let call_sites = if opts.single_call_site { call_sites_from_entry(module) } else { vec![0; n] };
    for &fi in &order {
        let candidates: Vec<FuncId> = calls[fi]
            .iter()
            .copied()
            .filter(|g| (g.0 as usize) < n && !recursive_edge[fi].contains(g) && !reaches(g.0 as usize, fi))
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let chosen: Vec<Candidate> = candidates
            .into_iter()
            .filter_map(|g| {
                let callee = module.function(g);
                let n = size(&callee.body);
                let sites = call_sites[g.0 as usize];
                let always = opts.full || n <= opts.always_below || sites == 1;
                let within_threshold = n <= opts.threshold || (sites == 2 && n <= opts.two_call_sites_below);
                (always || within_threshold).then(|| Candidate { id: g, function: callee.clone(), always })
            })
            .collect();
        if chosen.is_empty() {
            continue;
        }
        let f = &mut module.functions[fi];
        inline_into(f, &chosen, opts.max_caller);
    }
}

/// For each function, the number of calls to it in the functions reachable from function 0.
fn call_sites_from_entry(module: &Module) -> Vec<usize> {
    let mut sites = vec![0; module.functions.len()];
    for f in crate::reachable_from(module, FuncId(0)) {
        walk_insts(&module.function(f).body, &mut |inst| {
            if let Op::Call(g, _) = inst.op {
                if let Some(count) = sites.get_mut(g.0 as usize) {
                    *count += 1;
                }
            }
        });
    }
    sites
}

/// Inlines the calls of `callees` in `f`, in program order: those marked `always` every time,
/// the others while `f` stays within `max_caller` instructions.
pub fn inline_into(f: &mut Function, callees: &[Candidate], max_caller: usize) {
    let mut subst = Subst::new(f.value_types.len());
    let mut body = std::mem::take(&mut f.body);
    let mut budget = max_caller.saturating_sub(size(&body));
    region(f, &mut body, callees, &mut subst, &mut budget);
    if !subst.is_empty() {
        rename_uses(&mut body, &mut |v| subst.get(v));
    }
    f.body = body;
}

fn region(f: &mut Function, r: &mut Region, callees: &[Candidate], subst: &mut Subst, budget: &mut usize) {
    let insts = std::mem::take(&mut r.insts);
    let mut out = Vec::with_capacity(insts.len());
    for mut inst in insts {
        match &mut inst.op {
            Op::Call(g, args) => {
                if let Some(c) = callees.iter().find(|c| c.id == *g) {
                    let n = size(&c.function.body);
                    if c.always || n <= *budget {
                        *budget = budget.saturating_sub(n);
                        let results = copy_body(f, &c.function, args, &mut out);
                        for (&r, y) in inst.results.iter().zip(results) {
                            subst.set(r, y);
                        }
                        continue;
                    }
                }
            }
            Op::If { then, els, .. } => {
                region(f, then, callees, subst, budget);
                region(f, els, callees, subst, budget);
            }
            Op::Loop { body, .. } => region(f, body, callees, subst, budget),
            _ => {}
        }
        out.push(inst);
    }
    r.insts = out;
}

/// Appends a copy of `callee`'s body, with fresh values of `f`, the params bound to `args`
/// and new local arrays of `f` for the callee's, to `out`; returns the values it yields.
fn copy_body(f: &mut Function, callee: &Function, args: &[Value], out: &mut Vec<Inst>) -> Vec<Value> {
    let first_local = f.locals.len() as u32;
    f.locals.extend_from_slice(&callee.locals);
    let mut map: Vec<Option<Value>> = vec![None; callee.value_types.len()];
    for (p, &a) in callee.params.iter().zip(args) {
        map[p.value.0 as usize] = Some(a);
    }
    let mut fresh = |v: Value, map: &mut Vec<Option<Value>>| -> Value {
        let nv = f.new_value(callee.ty(v));
        map[v.0 as usize] = Some(nv);
        nv
    };
    fn copy_region(
        r: &Region,
        map: &mut Vec<Option<Value>>,
        fresh: &mut impl FnMut(Value, &mut Vec<Option<Value>>) -> Value,
        first_local: u32,
    ) -> Region {
        let params = r.params.iter().map(|&p| fresh(p, map)).collect();
        let insts = r.insts.iter().map(|i| copy_inst(i, map, fresh, first_local)).collect();
        let yields = r.yields.iter().map(|&y| map[y.0 as usize].expect("defined before use")).collect();
        Region { params, insts, yields }
    }
    fn copy_inst(
        inst: &Inst,
        map: &mut Vec<Option<Value>>,
        fresh: &mut impl FnMut(Value, &mut Vec<Option<Value>>) -> Value,
        first_local: u32,
    ) -> Inst {
        let mut op = inst.op.clone();
        crate::util::map_operands(&mut op, |v| map[v.0 as usize].expect("defined before use"));
        match &mut op {
            Op::If { then, els, .. } => {
                *then = copy_region(then, map, fresh, first_local);
                *els = copy_region(els, map, fresh, first_local);
            }
            Op::Loop { body, .. } => *body = copy_region(body, map, fresh, first_local),
            Op::LocalLoad { array, .. } | Op::LocalStore { array, .. } => *array += first_local,
            _ => {}
        }
        let results = inst.results.iter().map(|&r| fresh(r, map)).collect();
        Inst { results, op }
    }
    let body = copy_region(&callee.body, &mut map, &mut fresh, first_local);
    out.extend(body.insts);
    body.yields
}
