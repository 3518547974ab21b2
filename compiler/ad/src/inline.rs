//! Copying instructions between functions: operand renaming and inlining of calls.

use drs_ir::{Function, Inst, Module, Op, Region, Value};

/// `op` with every operand replaced by `f(operand)`. Not for `If`/`Loop`, whose regions the
/// caller copies itself.
pub(crate) fn map_operands(op: &Op, mut f: impl FnMut(Value) -> Value) -> Op {
    match op {
        Op::Const(c) => Op::Const(*c),
        Op::Unary(o, a) => Op::Unary(*o, f(*a)),
        Op::Binary(o, a, b) => Op::Binary(*o, f(*a), f(*b)),
        Op::Fma(a, b, c) => Op::Fma(f(*a), f(*b), f(*c)),
        Op::Cmp(o, a, b) => Op::Cmp(*o, f(*a), f(*b)),
        Op::Select(c, a, b) => Op::Select(f(*c), f(*a), f(*b)),
        Op::Convert(t, a) => Op::Convert(*t, f(*a)),
        Op::Bitcast(t, a) => Op::Bitcast(*t, f(*a)),
        Op::Math(o, args) => Op::Math(*o, args.iter().map(|a| f(*a)).collect()),
        Op::Call(g, args) => Op::Call(*g, args.iter().map(|a| f(*a)).collect()),
        Op::CallExtern(e, args) => Op::CallExtern(*e, args.iter().map(|a| f(*a)).collect()),
        Op::Load { buffer, index } => Op::Load { buffer: *buffer, index: f(*index) },
        Op::Store { buffer, index, value } => Op::Store { buffer: *buffer, index: f(*index), value: f(*value) },
        Op::AtomicAdd { buffer, index, value } => Op::AtomicAdd { buffer: *buffer, index: f(*index), value: f(*value) },
        Op::LocalLoad { array, index } => Op::LocalLoad { array: *array, index: f(*index) },
        Op::LocalStore { array, index, value } => Op::LocalStore { array: *array, index: f(*index), value: f(*value) },
        Op::Detach(a) => Op::Detach(f(*a)),
        Op::ReplaceGrad(a, b) => Op::ReplaceGrad(f(*a), f(*b)),
        Op::If { .. } | Op::Loop { .. } => unreachable!("regions are copied by the caller"),
    }
}

/// A copy of `function` in which every call of a function selected by `inline` is replaced by
/// the callee's body, recursively (the language has no recursion, so this ends). Loops keep
/// their pre-order position relative to the function they come from: the returned list gives,
/// for each loop of the result in pre-order, the function and pre-order index it was copied
/// from.
pub(crate) fn inline_calls(
    module: &Module,
    function: drs_ir::FuncId,
    inline: &mut impl FnMut(drs_ir::FuncId) -> bool,
) -> (Function, Vec<(drs_ir::FuncId, usize)>) {
    let source = module.function(function);
    let mut out = Function::new(source.name.clone());
    out.result_types = source.result_types.clone();
    out.locals = source.locals.clone();
    let mut map = vec![None; source.value_types.len()];
    for p in &source.params {
        map[p.value.0 as usize] = Some(out.add_param(p.name.clone(), source.ty(p.value)));
    }
    let mut cx = Inliner { module, out, inline, loops: Vec::new() };
    let body = cx.region(function, &source.body, &mut map, Vec::new(), &mut 0, 0);
    cx.out.body = body;
    (cx.out, cx.loops)
}

struct Inliner<'a, F> {
    module: &'a Module,
    out: Function,
    inline: &'a mut F,
    loops: Vec<(drs_ir::FuncId, usize)>,
}

impl<F: FnMut(drs_ir::FuncId) -> bool> Inliner<'_, F> {
    /// Copies `region` of function `from`; `loop_count` numbers `from`'s loops in pre-order.
    fn region(
        &mut self,
        from: drs_ir::FuncId,
        region: &Region,
        map: &mut Vec<Option<Value>>,
        params: Vec<Value>,
        loop_count: &mut usize,
        arrays: u32,
    ) -> Region {
        let mut insts = Vec::new();
        self.insts(from, &region.insts, map, &mut insts, loop_count, arrays);
        let yields = region.yields.iter().map(|v| map[v.0 as usize].expect("defined before use")).collect();
        Region { params, insts, yields }
    }

    fn insts(
        &mut self,
        from: drs_ir::FuncId,
        source: &[Inst],
        map: &mut Vec<Option<Value>>,
        out: &mut Vec<Inst>,
        loop_count: &mut usize,
        arrays: u32,
    ) {
        // `from`'s local arrays start at index `arrays` in the result.
        let module = self.module;
        let types = &module.function(from).value_types;
        for inst in source {
            let m = |map: &Vec<Option<Value>>, v: Value| map[v.0 as usize].expect("defined before use");
            let op = match &inst.op {
                Op::Call(g, args) if (self.inline)(*g) => {
                    let callee = module.function(*g);
                    let callee_arrays = self.out.locals.len() as u32;
                    self.out.locals.extend_from_slice(&callee.locals);
                    let mut callee_map = vec![None; callee.value_types.len()];
                    for (p, a) in callee.params.iter().zip(args) {
                        callee_map[p.value.0 as usize] = Some(m(map, *a));
                    }
                    let mut callee_loops = 0;
                    self.insts(*g, &callee.body.insts, &mut callee_map, out, &mut callee_loops, callee_arrays);
                    for (r, y) in inst.results.iter().zip(&callee.body.yields) {
                        map[r.0 as usize] = callee_map[y.0 as usize];
                    }
                    continue;
                }
                Op::If { cond, then, els } => Op::If {
                    cond: m(map, *cond),
                    then: self.region(from, then, map, Vec::new(), loop_count, arrays),
                    els: self.region(from, els, map, Vec::new(), loop_count, arrays),
                },
                Op::Loop { init, body, max_iters } => {
                    self.loops.push((from, *loop_count));
                    *loop_count += 1;
                    let params = body
                        .params
                        .iter()
                        .map(|p| {
                            let v = self.out.new_value(types[p.0 as usize]);
                            map[p.0 as usize] = Some(v);
                            v
                        })
                        .collect();
                    Op::Loop {
                        init: init.iter().map(|v| m(map, *v)).collect(),
                        body: self.region(from, body, map, params, loop_count, arrays),
                        max_iters: *max_iters,
                    }
                }
                op => match map_operands(op, |v| m(map, v)) {
                    Op::LocalLoad { array, index } => Op::LocalLoad { array: array + arrays, index },
                    Op::LocalStore { array, index, value } => Op::LocalStore { array: array + arrays, index, value },
                    op => op,
                },
            };
            let results = inst
                .results
                .iter()
                .map(|r| {
                    let v = self.out.new_value(types[r.0 as usize]);
                    map[r.0 as usize] = Some(v);
                    v
                })
                .collect();
            out.push(Inst { results, op });
        }
    }
}
