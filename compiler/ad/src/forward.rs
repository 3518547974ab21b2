//! Forward mode: the primal computation with a tangent next to every varied value.

use crate::activity::{varied_values, Facts};
use crate::emit::Emitter;
use crate::inline::map_operands;
use crate::rules::{operands, partials};
use crate::{Differentiator, Mode};
use drs_ir::*;

/// Builds `fwd(f)` into the signature reserved at `id`.
pub(crate) fn differentiate(d: &mut Differentiator, f: FuncId, id: FuncId) -> Function {
    let primal = d.module.function(f).clone();
    let tangent_params = d.info.functions[f.0 as usize].tangent_params.clone();
    let varied = varied_values(&mut Facts::new(d.module, d.info), &primal, &tangent_params);
    let mut signature = d.module.function(id).clone();
    signature.locals = primal.locals.clone();
    let out_params: Vec<Value> = signature.params.iter().map(|p| p.value).collect();

    let n = primal.value_types.len();
    let mut fw =
        Forward { d, primal: &primal, varied, e: Emitter::new(signature), map: vec![None; n], tan: vec![None; n] };
    let mut tangents = out_params[primal.params.len()..].iter();
    for (k, p) in primal.params.iter().enumerate() {
        fw.map[p.value.0 as usize] = Some(out_params[k]);
        if tangent_params[k] {
            let t = *tangents.next().expect("the signature has a tangent per tangent parameter");
            if fw.varied[p.value.0 as usize] {
                fw.tan[p.value.0 as usize] = Some(t);
            }
        }
    }
    fw.region(&primal.body.insts);
    let mut results: Vec<Value> = primal.body.yields.iter().map(|&v| fw.m(v)).collect();
    for &y in &primal.body.yields {
        let t = fw.tangent(y);
        results.push(t);
    }
    fw.e.finish(results)
}

struct Forward<'a, 'm> {
    d: &'a mut Differentiator<'m>,
    primal: &'a Function,
    varied: Vec<bool>,
    e: Emitter,
    /// The value of the output holding each primal value.
    map: Vec<Option<Value>>,
    /// The tangent of each varied primal value (absent: zero).
    tan: Vec<Option<Value>>,
}

impl Forward<'_, '_> {
    fn m(&self, v: Value) -> Value {
        self.map[v.0 as usize].expect("a primal value is mapped before its uses")
    }

    fn is_varied(&self, v: Value) -> bool {
        self.varied[v.0 as usize]
    }

    /// The tangent of primal value `v`, materialising a zero when it has none.
    fn tangent(&mut self, v: Value) -> Value {
        match self.tan[v.0 as usize] {
            Some(t) => t,
            None => self.e.zero(self.primal.ty(v)),
        }
    }

    fn bind(&mut self, results: &[Value], values: &[Value]) {
        for (r, v) in results.iter().zip(values) {
            self.map[r.0 as usize] = Some(*v);
        }
    }

    /// Allocates output values like `results` and maps them.
    fn fresh(&mut self, results: &[Value]) -> Vec<Value> {
        let values: Vec<Value> = results.iter().map(|r| self.e.new_value(self.primal.ty(*r))).collect();
        self.bind(results, &values);
        values
    }

    /// Allocates f32 tangent values for the varied ones among `values`.
    fn fresh_tangents(&mut self, values: &[Value], which: &[usize]) -> Vec<Value> {
        which
            .iter()
            .map(|&k| {
                let t = self.e.new_value(Ty::F32);
                self.tan[values[k].0 as usize] = Some(t);
                t
            })
            .collect()
    }

    fn region(&mut self, insts: &[Inst]) {
        for inst in insts {
            self.inst(inst);
        }
    }

    fn inst(&mut self, inst: &Inst) {
        let any_varied = inst.results.iter().any(|r| self.is_varied(*r));
        match &inst.op {
            Op::Detach(a) => {
                let a = self.m(*a);
                self.bind(&inst.results, &[a]);
            }
            Op::ReplaceGrad(a, b) => {
                let a = self.m(*a);
                self.bind(&inst.results, &[a]);
                self.tan[inst.results[0].0 as usize] = self.tan[b.0 as usize];
            }
            Op::If { cond, then, els } => self.if_(inst, *cond, then, els),
            Op::Loop { init, body, max_iters } => self.loop_(inst, init, body, *max_iters),
            Op::Call(g, args) if any_varied => {
                let (callee, drop_instance) = self.d.callee_derivative(*g, Mode::Fwd);
                let tangent_params = self.d.info.functions[g.0 as usize].tangent_params.clone();
                let mut call_args: Vec<Value> = args.iter().map(|&a| self.m(a)).collect();
                for (&a, _) in args.iter().zip(&tangent_params).filter(|(_, &t)| t) {
                    let t = self.tangent(a);
                    call_args.push(t);
                }
                if drop_instance {
                    call_args.remove(0);
                }
                let n = inst.results.len();
                let mut types: Vec<Ty> = inst.results.iter().map(|r| self.primal.ty(*r)).collect();
                types.extend(types.clone());
                let out = self.e.push(Op::Call(callee, call_args), &types);
                self.bind_with_tangents(&inst.results, &out[..n], &out[n..]);
            }
            Op::CallExtern(ext, args) if any_varied => {
                let derivative = self.d.extern_derivative(*ext, Mode::Fwd);
                let mut call_args: Vec<Value> = args.iter().map(|&a| self.m(a)).collect();
                for &a in args {
                    let t = self.tangent(a);
                    call_args.push(t);
                }
                let n = inst.results.len();
                let mut types: Vec<Ty> = inst.results.iter().map(|r| self.primal.ty(*r)).collect();
                types.extend(types.clone());
                let out = self.e.push(Op::CallExtern(derivative, call_args), &types);
                self.bind_with_tangents(&inst.results, &out[..n], &out[n..]);
            }
            op => {
                let out = self.e.push(
                    map_operands(op, |v| self.map[v.0 as usize].expect("mapped")),
                    &types_of(self.primal, &inst.results),
                );
                self.bind(&inst.results, &out);
                if any_varied {
                    self.tangent_of(inst, &out);
                }
            }
        }
    }

    fn bind_with_tangents(&mut self, results: &[Value], values: &[Value], tangents: &[Value]) {
        self.bind(results, values);
        for (r, t) in results.iter().zip(tangents) {
            if self.is_varied(*r) {
                self.tan[r.0 as usize] = Some(*t);
            }
        }
    }

    /// The tangent of a varied result of an arithmetic operation or a parameter read.
    fn tangent_of(&mut self, inst: &Inst, out: &[Value]) {
        let r = inst.results[0];
        if let Op::Load { buffer, index } = inst.op {
            let tangents = self.d.companion_buffer(buffer, Mode::Fwd);
            let index = self.m(index);
            let t = self.e.push(Op::Load { buffer: tangents, index }, &[Ty::F32])[0];
            self.tan[r.0 as usize] = Some(t);
            return;
        }
        let xs = operands(&inst.op).expect("only arithmetic results vary without a derivative call");
        let args: Vec<Value> = xs.iter().map(|&x| self.m(x)).collect();
        let parts = partials(&mut self.e, &inst.op, &args, out[0]);
        let mut sum: Option<Value> = None;
        for (x, p) in xs.iter().zip(parts) {
            let Some(dx) = self.tan[x.0 as usize].filter(|_| self.is_varied(*x)) else { continue };
            if let Some(term) = p.apply(&mut self.e, dx) {
                sum = Some(match sum {
                    Some(s) => self.e.add(s, term),
                    None => term,
                });
            }
        }
        self.tan[r.0 as usize] = sum;
    }

    fn if_(&mut self, inst: &Inst, cond: Value, then: &Region, els: &Region) {
        let cond = self.m(cond);
        let which: Vec<usize> = (0..inst.results.len()).filter(|&k| self.is_varied(inst.results[k])).collect();
        let branch = |fw: &mut Self, region: &Region| {
            fw.e.open();
            fw.region(&region.insts);
            let mut yields: Vec<Value> = region.yields.iter().map(|&v| fw.m(v)).collect();
            for &k in &which {
                let t = fw.tangent(region.yields[k]);
                yields.push(t);
            }
            fw.e.close(Vec::new(), yields)
        };
        let then = branch(self, then);
        let els = branch(self, els);
        let mut results = self.fresh(&inst.results);
        results.extend(self.fresh_tangents(&inst.results, &which));
        self.e.push_with(Op::If { cond, then, els }, results);
    }

    fn loop_(&mut self, inst: &Inst, init: &[Value], body: &Region, max_iters: Option<u32>) {
        let which: Vec<usize> = (0..body.params.len()).filter(|&k| self.is_varied(body.params[k])).collect();
        let mut new_init: Vec<Value> = init.iter().map(|&v| self.m(v)).collect();
        for &k in &which {
            let t = self.tangent(init[k]);
            new_init.push(t);
        }
        let mut params = self.fresh(&body.params);
        params.extend(self.fresh_tangents(&body.params, &which));
        self.e.open();
        self.region(&body.insts);
        let mut yields: Vec<Value> = body.yields.iter().map(|&v| self.m(v)).collect();
        for &k in &which {
            let t = self.tangent(body.yields[k + 1]);
            yields.push(t);
        }
        let body = self.e.close(params, yields);
        let mut results = self.fresh(&inst.results);
        results.extend(self.fresh_tangents(&inst.results, &which));
        self.e.push_with(Op::Loop { init: new_init, body, max_iters }, results);
    }
}

fn types_of(f: &Function, values: &[Value]) -> Vec<Ty> {
    values.iter().map(|v| f.ty(*v)).collect()
}
