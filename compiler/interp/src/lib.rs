//! The reference interpreter of the drs IR.
//!
//! It executes one lane with the exact scalar semantics documented on [`drs_ir::Op`]: IEEE
//! f32 arithmetic without fast-math, wrapping integers, the defined results of integer
//! division by zero, and Rust's `f32` functions (the platform libm) for transcendentals.
//! Every backend is tested against it.
//!
//! Two evaluation modes share one evaluator, generic over how a lane holds a value:
//! - f32 mode ([`Interpreter::call`]), the IR's semantics, on the 32 bits of each value;
//! - f64 mode ([`Interpreter::call_f64`]), where every f32 value and operation is carried out
//!   in f64 (the rules are on [`Wide`]): the reference for finite differences. Integer and
//!   bool semantics are the same in both.
//!
//! Each call gets fresh local arrays ([`Op::LocalLoad`], [`Op::LocalStore`]), zeroed, so a
//! read before any write gives 0 here (the IR leaves it unspecified).

mod lane;
mod ops;
mod wide;

pub use ops::{binary, compare, math, unary};
pub use wide::Wide;

use drs_ir::*;
use lane::Lane;
use std::fmt;

/// Values are passed and returned as the 32 bits of each scalar (f32 bits, two's complement
/// integers, bools as 0/1), in the order of the function's flattened parameters.
pub type Bits = u32;

/// A host function that the interpreter calls for [`Op::CallExtern`]. It works on f32 bits
/// in both modes: in f64 mode its arguments are rounded to f32 and its results widened.
pub type HostFn = Box<dyn Fn(&[Bits]) -> Vec<Bits> + Send + Sync>;

#[derive(Debug, Clone, PartialEq)]
pub enum Trap {
    /// Wrong number of arguments for the entry function.
    Arity { function: String, expected: usize, given: usize },
    /// An f64-mode argument of the wrong kind: [`Wide::Float`] for an f32 parameter,
    /// [`Wide::Bits`] for the others.
    ArgumentKind { function: String, index: usize, ty: Ty },
    /// An extern function has no host implementation.
    UnboundExtern(String),
    /// A host function returned the wrong number of results.
    HostResults { name: String, expected: usize, given: usize },
    /// A loop ran past the interpreter's iteration limit.
    IterationLimit { function: String, limit: u64 },
    /// Calls nested deeper than the limit (recursion is rejected by the front end; IR built
    /// by hand may still recurse).
    CallDepth(String),
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::Arity { function, expected, given } => {
                write!(f, "`{function}` takes {expected} scalar arguments, {given} given")
            }
            Trap::ArgumentKind { function, index, ty } => {
                let kind = if *ty == Ty::F32 { "Wide::Float" } else { "Wide::Bits" };
                write!(f, "argument {index} of `{function}` has type {}, so it is passed as {kind}", ty.name())
            }
            Trap::UnboundExtern(name) => {
                write!(f, "extern function `{name}` is provided by the runtime, and none is bound")
            }
            Trap::HostResults { name, expected, given } => {
                write!(f, "host function `{name}` returned {given} values, {expected} expected")
            }
            Trap::IterationLimit { function, limit } => {
                write!(f, "a loop in `{function}` ran more than {limit} iterations")
            }
            Trap::CallDepth(name) => write!(f, "calls nested too deeply at `{name}`"),
        }
    }
}

impl std::error::Error for Trap {}

pub struct Interpreter<'m> {
    module: &'m Module,
    /// Contents of each buffer of the module, as bits.
    pub buffers: Vec<Vec<Bits>>,
    externs: Vec<Option<HostFn>>,
    /// Iterations any one loop may run before [`Trap::IterationLimit`].
    pub iteration_limit: u64,
}

const MAX_CALL_DEPTH: usize = 256;

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m Module) -> Self {
        Interpreter {
            module,
            buffers: vec![Vec::new(); module.buffers.len()],
            externs: (0..module.externs.len()).map(|_| None).collect(),
            iteration_limit: 1 << 32,
        }
    }

    /// Binds the host implementation of the extern named `name`; false if there is none.
    pub fn bind_extern(&mut self, name: &str, f: HostFn) -> bool {
        match self.module.externs.iter().position(|e| e.name == name) {
            Some(i) => {
                self.externs[i] = Some(f);
                true
            }
            None => false,
        }
    }

    /// Calls `func` with one lane of arguments (f32 mode).
    pub fn call(&mut self, func: FuncId, args: &[Bits]) -> Result<Vec<Bits>, Trap> {
        let f = self.module.function(func);
        self.check_arity(f, args.len())?;
        self.run(f, args, 0)
    }

    /// Calls `func` with one lane of arguments in f64 mode: f32 parameters take
    /// [`Wide::Float`], the others [`Wide::Bits`]; f32 results come back as [`Wide::Float`]
    /// without rounding. Buffers keep their f32 elements (read widened, written rounded).
    pub fn call_f64(&mut self, func: FuncId, args: &[Wide]) -> Result<Vec<Wide>, Trap> {
        let f = self.module.function(func);
        self.check_arity(f, args.len())?;
        if let Some(index) = f.params.iter().zip(args).position(|(p, a)| !a.fits(f.ty(p.value))) {
            let ty = f.ty(f.params[index].value);
            return Err(Trap::ArgumentKind { function: f.name.clone(), index, ty });
        }
        self.run(f, args, 0)
    }

    fn check_arity(&self, f: &Function, given: usize) -> Result<(), Trap> {
        if given != f.params.len() {
            return Err(Trap::Arity { function: f.name.clone(), expected: f.params.len(), given });
        }
        Ok(())
    }

    fn run<L: Lane>(&mut self, f: &'m Function, args: &[L], depth: usize) -> Result<Vec<L>, Trap> {
        if depth > MAX_CALL_DEPTH {
            return Err(Trap::CallDepth(f.name.clone()));
        }
        let zero = |ty: Ty| L::from_bits(ty, 0);
        let locals = f.locals.iter().map(|a| vec![zero(a.elem); a.len as usize]).collect();
        let mut frame = Frame { f, values: f.value_types.iter().map(|&t| zero(t)).collect(), locals, depth };
        for (p, &a) in f.params.iter().zip(args) {
            frame.set(p.value, a);
        }
        self.region(&mut frame, &f.body)
    }

    fn region<L: Lane>(&mut self, frame: &mut Frame<'m, L>, region: &'m Region) -> Result<Vec<L>, Trap> {
        for inst in &region.insts {
            self.inst(frame, inst)?;
        }
        Ok(region.yields.iter().map(|&v| frame.get(v)).collect())
    }

    fn inst<L: Lane>(&mut self, frame: &mut Frame<'m, L>, inst: &'m Inst) -> Result<(), Trap> {
        let f = frame.f;
        let results: Vec<L> = match &inst.op {
            Op::Const(c) => vec![L::from_bits(c.ty(), c.bits())],
            Op::Unary(op, a) => vec![L::unary(*op, f.ty(*a), frame.get(*a))],
            Op::Binary(op, a, b) => vec![L::binary(*op, f.ty(*a), frame.get(*a), frame.get(*b))],
            Op::Fma(a, b, c) => vec![L::fma(frame.get(*a), frame.get(*b), frame.get(*c))],
            Op::Cmp(op, a, b) => vec![L::from_bool(L::compare(*op, f.ty(*a), frame.get(*a), frame.get(*b)))],
            Op::Select(c, a, b) => vec![if frame.get(*c).is_true() { frame.get(*a) } else { frame.get(*b) }],
            Op::Convert(to, a) => vec![L::convert(f.ty(*a), *to, frame.get(*a))],
            Op::Bitcast(to, a) => vec![L::bitcast(f.ty(*a), *to, frame.get(*a))],
            Op::Detach(a) | Op::ReplaceGrad(a, _) => vec![frame.get(*a)],
            Op::Math(op, args) => {
                let x: Vec<L> = args.iter().map(|&a| frame.get(a)).collect();
                vec![L::math(*op, &x)]
            }
            Op::Call(func, args) => {
                let callee = self.module.function(*func);
                let args: Vec<L> = args.iter().map(|&a| frame.get(a)).collect();
                self.run(callee, &args, frame.depth + 1)?
            }
            Op::CallExtern(ext, args) => {
                let decl = &self.module.externs[*ext as usize];
                let host =
                    self.externs[*ext as usize].as_ref().ok_or_else(|| Trap::UnboundExtern(decl.name.clone()))?;
                let args: Vec<Bits> = args.iter().map(|&a| frame.get(a).to_bits(f.ty(a))).collect();
                let out = host(&args);
                if out.len() != decl.results.len() {
                    return Err(Trap::HostResults {
                        name: decl.name.clone(),
                        expected: decl.results.len(),
                        given: out.len(),
                    });
                }
                out.iter().zip(&decl.results).map(|(&bits, &ty)| L::from_bits(ty, bits)).collect()
            }
            Op::Load { buffer, index } => {
                let elem = self.module.buffers[*buffer as usize].elem;
                let bits = self.buffers[*buffer as usize].get(frame.get(*index).index()).copied().unwrap_or(0);
                vec![L::from_bits(elem, bits)]
            }
            Op::Store { buffer, index, value } => {
                let elem = self.module.buffers[*buffer as usize].elem;
                let (i, v) = (frame.get(*index).index(), frame.get(*value).to_bits(elem));
                if let Some(slot) = self.buffers[*buffer as usize].get_mut(i) {
                    *slot = v;
                }
                vec![]
            }
            Op::AtomicAdd { buffer, index, value } => {
                let elem = self.module.buffers[*buffer as usize].elem;
                let (i, v) = (frame.get(*index).index(), frame.get(*value));
                if let Some(slot) = self.buffers[*buffer as usize].get_mut(i) {
                    *slot = L::binary(BinaryOp::Add, elem, L::from_bits(elem, *slot), v).to_bits(elem);
                }
                vec![]
            }
            Op::LocalLoad { array, index } => {
                let i = frame.get(*index).index();
                let elem = f.locals[*array as usize].elem;
                vec![frame.locals[*array as usize].get(i).copied().unwrap_or_else(|| L::from_bits(elem, 0))]
            }
            Op::LocalStore { array, index, value } => {
                let (i, v) = (frame.get(*index).index(), frame.get(*value));
                if let Some(slot) = frame.locals[*array as usize].get_mut(i) {
                    *slot = v;
                }
                vec![]
            }
            Op::If { cond, then, els } => {
                let region = if frame.get(*cond).is_true() { then } else { els };
                self.region(frame, region)?
            }
            Op::Loop { init, body, .. } => {
                let mut carried: Vec<L> = init.iter().map(|&v| frame.get(v)).collect();
                let mut iterations = 0u64;
                loop {
                    for (&p, &v) in body.params.iter().zip(&carried) {
                        frame.set(p, v);
                    }
                    let out = self.region(frame, body)?;
                    carried = out[1..].to_vec();
                    if !out[0].is_true() {
                        break;
                    }
                    iterations += 1;
                    if iterations >= self.iteration_limit {
                        return Err(Trap::IterationLimit { function: f.name.clone(), limit: self.iteration_limit });
                    }
                }
                carried
            }
        };
        for (&r, v) in inst.results.iter().zip(results) {
            frame.set(r, v);
        }
        Ok(())
    }
}

/// The state of one call: its values and its local arrays.
struct Frame<'m, L> {
    f: &'m Function,
    values: Vec<L>,
    /// The call's local arrays, zeroed on entry.
    locals: Vec<Vec<L>>,
    depth: usize,
}

impl<L: Lane> Frame<'_, L> {
    fn get(&self, v: Value) -> L {
        self.values[v.0 as usize]
    }

    fn set(&mut self, v: Value, x: L) {
        self.values[v.0 as usize] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_edge_cases_are_defined() {
        assert_eq!(binary(BinaryOp::Div, Ty::I32, 7, 0), 0);
        assert_eq!(binary(BinaryOp::Rem, Ty::I32, 7, 0), 7);
        assert_eq!(binary(BinaryOp::Div, Ty::I32, i32::MIN as u32, -1i32 as u32), i32::MIN as u32);
        assert_eq!(binary(BinaryOp::Rem, Ty::I32, i32::MIN as u32, -1i32 as u32), 0);
        assert_eq!(binary(BinaryOp::Shl, Ty::U32, 1, 33), 2);
        assert_eq!(binary(BinaryOp::Shr, Ty::I32, -8i32 as u32, 1), -4i32 as u32);
        assert_eq!(binary(BinaryOp::Shr, Ty::U32, 0x8000_0000, 31), 1);
    }

    #[test]
    fn float_min_max_follow_the_comparison() {
        let nan = f32::NAN.to_bits();
        let one = 1.0f32.to_bits();
        assert_eq!(binary(BinaryOp::Min, Ty::F32, one, nan), nan);
        assert_eq!(binary(BinaryOp::Min, Ty::F32, nan, one), one);
        assert_eq!(binary(BinaryOp::Max, Ty::F32, one, nan), nan);
        assert!(compare(CmpOp::Ne, Ty::F32, nan, nan));
        assert!(!compare(CmpOp::Eq, Ty::F32, nan, nan));
    }

    #[test]
    fn loops_and_ifs_run() {
        // sum of 0..n
        let mut module = Module::default();
        let mut f = Function::new("sum");
        let n = f.add_param("n", Ty::I32);
        f.result_types = vec![Ty::I32];
        let sigs = Signatures::default();
        let mut b = Builder::new(&mut f, &sigs);
        let zero = b.i32(0);
        let out = b.loop_(vec![zero, zero], |b, carried| {
            let (i, acc) = (carried[0], carried[1]);
            let more = b.cmp(CmpOp::Lt, i, n);
            let next = b.if_(
                more,
                |b| {
                    let one = b.i32(1);
                    let i1 = b.add(i, one);
                    let acc1 = b.add(acc, i);
                    vec![i1, acc1]
                },
                |_| vec![i, acc],
            );
            (more, next)
        });
        b.finish(vec![out[1]]);
        module.add_function(f);
        verify_module(&module).unwrap();
        let mut interp = Interpreter::new(&module);
        assert_eq!(interp.call(FuncId(0), &[10]).unwrap(), vec![45]);
        assert_eq!(interp.call(FuncId(0), &[0]).unwrap(), vec![0]);
    }
}
