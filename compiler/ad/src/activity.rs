//! Which values carry derivatives, and which functions have effects or read scene parameters.

use crate::AdInfo;
use drs_ir::{FuncId, Function, Inst, Module, Op, Region, Ty, Value};
use std::collections::HashMap;

/// Facts about the module's functions, computed once per function on demand.
pub(crate) struct Facts<'a> {
    module: &'a Module,
    info: &'a AdInfo,
    touches: HashMap<FuncId, bool>,
    effects: HashMap<FuncId, bool>,
}

impl<'a> Facts<'a> {
    pub(crate) fn new(module: &'a Module, info: &'a AdInfo) -> Self {
        Facts { module, info, touches: HashMap::new(), effects: HashMap::new() }
    }

    /// Whether `f`'s results may depend on a scene parameter: it reads a differentiable buffer
    /// or calls a differentiable host function, itself or through its callees.
    pub(crate) fn touches_params(&mut self, f: FuncId) -> bool {
        if let Some(&t) = self.touches.get(&f) {
            return t;
        }
        let mut callees = Vec::new();
        let mut direct = false;
        visit(&self.module.function(f).body, &mut |op| match op {
            Op::Load { buffer, .. } => direct |= self.info.buffers[*buffer as usize],
            Op::CallExtern(e, _) => direct |= self.info.externs[*e as usize],
            Op::Call(g, _) => callees.push(*g),
            _ => {}
        });
        // Recursion is not allowed in the language, so this terminates.
        let t = direct || callees.into_iter().any(|g| self.touches_params(g));
        self.touches.insert(f, t);
        t
    }

    /// Whether calling `f` has effects: host calls or buffer writes, itself or through its
    /// callees. Such callees are inlined in reverse mode so that their effects happen once.
    pub(crate) fn has_effects(&mut self, f: FuncId) -> bool {
        if let Some(&e) = self.effects.get(&f) {
            return e;
        }
        let mut callees = Vec::new();
        let mut direct = false;
        visit(&self.module.function(f).body, &mut |op| match op {
            Op::CallExtern(..) | Op::Store { .. } | Op::AtomicAdd { .. } => direct = true,
            Op::Call(g, _) => callees.push(*g),
            _ => {}
        });
        let e = direct || callees.into_iter().any(|g| self.has_effects(g));
        self.effects.insert(f, e);
        e
    }
}

/// Calls `f` on every operation of a region and its nested regions.
pub(crate) fn visit(region: &Region, f: &mut impl FnMut(&Op)) {
    for inst in &region.insts {
        f(&inst.op);
        match &inst.op {
            Op::If { then, els, .. } => {
                visit(then, f);
                visit(els, f);
            }
            Op::Loop { body, .. } => visit(body, f),
            _ => {}
        }
    }
}

/// Calls `f` on every instruction of a region and its nested regions.
pub(crate) fn visit_insts(region: &Region, f: &mut impl FnMut(&Inst)) {
    for inst in &region.insts {
        f(inst);
        match &inst.op {
            Op::If { then, els, .. } => {
                visit_insts(then, f);
                visit_insts(els, f);
            }
            Op::Loop { body, .. } => visit_insts(body, f),
            _ => {}
        }
    }
}

/// The *varied* values of a function: f32 values that depend on a tangent parameter or on a
/// scene parameter through differentiable operations. Only they carry tangents and adjoints.
pub(crate) fn varied_values(facts: &mut Facts, function: &Function, tangent_params: &[bool]) -> Vec<bool> {
    let mut varied = vec![false; function.value_types.len()];
    for (p, &t) in function.params.iter().zip(tangent_params) {
        varied[p.value.0 as usize] = t && function.ty(p.value) == Ty::F32;
    }
    // Loops feed values back: repeat until nothing changes.
    loop {
        let mut changed = false;
        propagate(facts, function, &function.body, &mut varied, &mut changed);
        if !changed {
            return varied;
        }
    }
}

fn propagate(facts: &mut Facts, function: &Function, region: &Region, varied: &mut [bool], changed: &mut bool) {
    let is = |varied: &[bool], v: &Value| varied[v.0 as usize];
    for inst in &region.insts {
        // Which results vary, by result position.
        let results: Vec<bool> = match &inst.op {
            Op::Const(_)
            | Op::Cmp(..)
            | Op::Convert(..)
            | Op::Bitcast(..)
            | Op::Detach(_)
            | Op::Store { .. }
            | Op::AtomicAdd { .. }
            | Op::LocalLoad { .. }
            | Op::LocalStore { .. } => vec![false; inst.results.len()],
            Op::Unary(_, a) => vec![is(varied, a)],
            Op::Binary(_, a, b) | Op::Select(_, a, b) => vec![is(varied, a) || is(varied, b)],
            Op::Fma(a, b, c) => vec![is(varied, a) || is(varied, b) || is(varied, c)],
            Op::Math(_, args) => vec![args.iter().any(|a| is(varied, a))],
            Op::ReplaceGrad(_, b) => vec![is(varied, b)],
            Op::Load { buffer, .. } => vec![facts.info.buffers[*buffer as usize]],
            Op::CallExtern(e, _) => vec![facts.info.externs[*e as usize]; inst.results.len()],
            Op::Call(g, args) => {
                let tangent = &facts.info.functions[g.0 as usize].tangent_params;
                let v = args.iter().zip(tangent).any(|(a, &t)| t && is(varied, a)) || facts.touches_params(*g);
                vec![v; inst.results.len()]
            }
            Op::If { then, els, .. } => {
                propagate(facts, function, then, varied, changed);
                propagate(facts, function, els, varied, changed);
                then.yields.iter().zip(&els.yields).map(|(t, e)| is(varied, t) || is(varied, e)).collect()
            }
            Op::Loop { init, body, .. } => {
                // A carried value varies if its initial or its next value does.
                let params: Vec<bool> =
                    (0..body.params.len()).map(|k| is(varied, &init[k]) || is(varied, &body.yields[k + 1])).collect();
                mark(function, &body.params, &params, varied, changed);
                propagate(facts, function, body, varied, changed);
                body.params.iter().map(|p| is(varied, p)).collect()
            }
        };
        mark(function, &inst.results, &results, varied, changed);
    }
}

/// Marks the f32 values among `values` whose flag is set as varied.
fn mark(function: &Function, values: &[Value], flags: &[bool], varied: &mut [bool], changed: &mut bool) {
    for (v, &flag) in values.iter().zip(flags) {
        if flag && function.ty(*v) == Ty::F32 && !varied[v.0 as usize] {
            varied[v.0 as usize] = true;
            *changed = true;
        }
    }
}
