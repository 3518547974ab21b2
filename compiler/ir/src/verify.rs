//! Checks the invariants every pass must preserve: each value is defined once, used only
//! where its definition is in scope (an enclosing region, earlier), and every operation has
//! operands and results of the types it requires.

use crate::*;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub function: String,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid IR in `{}`: {}", self.function, self.message)
    }
}

impl std::error::Error for VerifyError {}

pub fn verify_module(module: &Module) -> Result<(), VerifyError> {
    for f in &module.functions {
        verify_function(module, f)?;
    }
    Ok(())
}

pub fn verify_function(module: &Module, function: &Function) -> Result<(), VerifyError> {
    let mut v =
        Verifier { module, function, defined: vec![false; function.value_types.len()], scopes: vec![Vec::new()] };
    v.run().map_err(|message| VerifyError { function: function.name.clone(), message })
}

struct Verifier<'a> {
    module: &'a Module,
    function: &'a Function,
    defined: Vec<bool>,
    /// Values visible in each open region, innermost last.
    scopes: Vec<Vec<Value>>,
}

type Check = Result<(), String>;

impl Verifier<'_> {
    fn run(&mut self) -> Check {
        for p in &self.function.params {
            self.define(p.value)?;
        }
        let body = &self.function.body;
        if !body.params.is_empty() {
            return Err("the function body has region params".into());
        }
        let types = self.region(body)?;
        if types != self.function.result_types {
            return Err(format!("the body yields {types:?}, the function returns {:?}", self.function.result_types));
        }
        Ok(())
    }

    fn ty(&self, v: Value) -> Result<Ty, String> {
        self.function.value_types.get(v.0 as usize).copied().ok_or_else(|| format!("%{} has no type", v.0))
    }

    fn define(&mut self, v: Value) -> Check {
        let slot = self.defined.get_mut(v.0 as usize).ok_or_else(|| format!("%{} has no type", v.0))?;
        if std::mem::replace(slot, true) {
            return Err(format!("%{} is defined twice", v.0));
        }
        self.scopes.last_mut().expect("a scope is open").push(v);
        Ok(())
    }

    fn use_value(&self, v: Value) -> Result<Ty, String> {
        let ty = self.ty(v)?;
        if !self.scopes.iter().any(|s| s.contains(&v)) {
            return Err(format!("%{} is used where it is not defined", v.0));
        }
        Ok(ty)
    }

    /// Checks a region in a new scope and returns the types it yields.
    fn region(&mut self, region: &Region) -> Result<Vec<Ty>, String> {
        self.scopes.push(Vec::new());
        for &p in &region.params {
            self.define(p)?;
        }
        for inst in &region.insts {
            self.inst(inst)?;
        }
        let types = region.yields.iter().map(|&v| self.use_value(v)).collect::<Result<Vec<_>, _>>()?;
        self.scopes.pop();
        Ok(types)
    }

    fn expect(&self, v: Value, ty: Ty, what: &str) -> Check {
        let actual = self.use_value(v)?;
        if actual == ty {
            Ok(())
        } else {
            Err(format!("{what}: %{} is {} but {} is required", v.0, actual.name(), ty.name()))
        }
    }

    fn inst(&mut self, inst: &Inst) -> Check {
        let results = self.result_types(inst)?;
        if results.len() != inst.results.len() {
            return Err(format!("{:?} defines {} values, {} expected", inst.op, inst.results.len(), results.len()));
        }
        for (&r, ty) in inst.results.iter().zip(&results) {
            if self.ty(r)? != *ty {
                return Err(format!(
                    "result %{} of {:?} has type {} but {} is produced",
                    r.0,
                    inst.op,
                    self.ty(r)?.name(),
                    ty.name()
                ));
            }
        }
        for &r in &inst.results {
            self.define(r)?;
        }
        Ok(())
    }

    /// The types an operation produces, after checking its operands.
    fn result_types(&mut self, inst: &Inst) -> Result<Vec<Ty>, String> {
        Ok(match &inst.op {
            Op::Const(c) => vec![c.ty()],
            Op::Unary(op, a) => {
                let t = self.use_value(*a)?;
                if !unary_accepts(*op, t) {
                    return Err(format!("{} does not apply to {}", op.name(), t.name()));
                }
                vec![t]
            }
            Op::Binary(op, a, b) => {
                let t = self.use_value(*a)?;
                self.expect(*b, t, op.name())?;
                if !binary_accepts(*op, t) {
                    return Err(format!("{} does not apply to {}", op.name(), t.name()));
                }
                vec![t]
            }
            Op::Fma(a, b, c) => {
                for v in [a, b, c] {
                    self.expect(*v, Ty::F32, "fma")?;
                }
                vec![Ty::F32]
            }
            Op::Cmp(op, a, b) => {
                let t = self.use_value(*a)?;
                self.expect(*b, t, op.name())?;
                if !cmp_accepts(*op, t) {
                    return Err(format!("{} does not compare {}", op.name(), t.name()));
                }
                vec![Ty::Bool]
            }
            Op::Select(c, a, b) => {
                self.expect(*c, Ty::Bool, "select condition")?;
                let t = self.use_value(*a)?;
                self.expect(*b, t, "select")?;
                vec![t]
            }
            Op::Convert(to, a) => {
                let from = self.use_value(*a)?;
                if from == Ty::Bool || *to == Ty::Bool {
                    return Err("conversions do not involve bool".into());
                }
                vec![*to]
            }
            Op::Bitcast(to, a) => {
                let from = self.use_value(*a)?;
                if from == Ty::Bool || *to == Ty::Bool {
                    return Err("bitcasts do not involve bool".into());
                }
                vec![*to]
            }
            Op::Detach(a) => vec![self.use_value(*a)?],
            Op::ReplaceGrad(a, b) => {
                let t = self.use_value(*a)?;
                self.expect(*b, t, "replace_grad")?;
                vec![t]
            }
            Op::Math(op, args) => {
                if args.len() != op.arity() {
                    return Err(format!("{} takes {} arguments", op.name(), op.arity()));
                }
                for a in args {
                    self.expect(*a, Ty::F32, op.name())?;
                }
                vec![Ty::F32]
            }
            Op::Call(func, args) => {
                let callee = self
                    .module
                    .functions
                    .get(func.0 as usize)
                    .ok_or_else(|| format!("call of unknown function {}", func.0))?;
                let params = callee.param_types();
                self.args(&params, args, &callee.name)?;
                callee.result_types.clone()
            }
            Op::CallExtern(ext, args) => {
                let decl =
                    self.module.externs.get(*ext as usize).ok_or_else(|| format!("call of unknown extern {ext}"))?;
                self.args(&decl.params, args, &decl.name)?;
                decl.results.clone()
            }
            Op::Load { buffer, index } => {
                let elem = self.buffer(*buffer)?;
                self.expect(*index, Ty::U32, "load index")?;
                vec![elem]
            }
            Op::Store { buffer, index, value } | Op::AtomicAdd { buffer, index, value } => {
                let elem = self.buffer(*buffer)?;
                self.expect(*index, Ty::U32, "store index")?;
                self.expect(*value, elem, "stored value")?;
                if matches!(inst.op, Op::AtomicAdd { .. }) && elem == Ty::Bool {
                    return Err("atomic add on a bool buffer".into());
                }
                vec![]
            }
            Op::LocalLoad { array, index } => {
                let elem = self.local(*array)?;
                self.expect(*index, Ty::U32, "local load index")?;
                vec![elem]
            }
            Op::LocalStore { array, index, value } => {
                let elem = self.local(*array)?;
                self.expect(*index, Ty::U32, "local store index")?;
                self.expect(*value, elem, "value stored in a local array")?;
                vec![]
            }
            Op::If { cond, then, els } => {
                self.expect(*cond, Ty::Bool, "if condition")?;
                if !then.params.is_empty() || !els.params.is_empty() {
                    return Err("if regions take no params".into());
                }
                let a = self.region(then)?;
                let b = self.region(els)?;
                if a != b {
                    return Err(format!("if branches yield {a:?} and {b:?}"));
                }
                a
            }
            Op::Loop { init, body, max_iters } => {
                if *max_iters == Some(0) {
                    return Err("a loop bound `max_iters` is at least 1".into());
                }
                if body.params.len() != init.len() {
                    return Err(format!(
                        "loop has {} initial values but {} carried params",
                        init.len(),
                        body.params.len()
                    ));
                }
                let mut carried = Vec::new();
                for (&i, &p) in init.iter().zip(&body.params) {
                    let t = self.use_value(i)?;
                    if self.ty(p)? != t {
                        return Err(format!(
                            "loop param %{} does not have the type of its initial value %{}",
                            p.0, i.0
                        ));
                    }
                    carried.push(t);
                }
                let yields = self.region(body)?;
                if yields.first() != Some(&Ty::Bool) || yields[1..] != carried[..] {
                    return Err(format!("loop body yields {yields:?}, expected [Bool] followed by {carried:?}"));
                }
                carried
            }
        })
    }

    fn args(&self, params: &[Ty], args: &[Value], name: &str) -> Check {
        if params.len() != args.len() {
            return Err(format!("`{name}` takes {} arguments, {} given", params.len(), args.len()));
        }
        for (&a, &t) in args.iter().zip(params) {
            self.expect(a, t, name)?;
        }
        Ok(())
    }

    fn local(&self, index: u32) -> Result<Ty, String> {
        self.function.locals.get(index as usize).map(|a| a.elem).ok_or_else(|| format!("unknown local array {index}"))
    }

    fn buffer(&self, index: u32) -> Result<Ty, String> {
        self.module.buffers.get(index as usize).map(|b| b.elem).ok_or_else(|| format!("unknown buffer {index}"))
    }
}
