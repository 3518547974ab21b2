//! The reference interpreter of the drs IR.
//!
//! It executes one lane with the exact scalar semantics documented on [`drs_ir::Op`]: IEEE
//! f32 arithmetic without fast-math, wrapping integers, the defined results of integer
//! division by zero, and Rust's `f32` functions (the platform libm) for transcendentals.
//! Every backend is tested against it.

use drs_ir::*;
use std::fmt;

/// Values are passed and returned as the 32 bits of each scalar (f32 bits, two's complement
/// integers, bools as 0/1), in the order of the function's flattened parameters.
pub type Bits = u32;

/// A host function that the interpreter calls for [`Op::CallExtern`].
pub type HostFn = Box<dyn Fn(&[Bits]) -> Vec<Bits> + Send + Sync>;

#[derive(Debug, Clone, PartialEq)]
pub enum Trap {
    /// Wrong number of arguments for the entry function.
    Arity { function: String, expected: usize, given: usize },
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

    /// Calls `func` with one lane of arguments.
    pub fn call(&mut self, func: FuncId, args: &[Bits]) -> Result<Vec<Bits>, Trap> {
        let f = self.module.function(func);
        if args.len() != f.params.len() {
            return Err(Trap::Arity { function: f.name.clone(), expected: f.params.len(), given: args.len() });
        }
        self.run(f, args, 0)
    }

    fn run(&mut self, f: &'m Function, args: &[Bits], depth: usize) -> Result<Vec<Bits>, Trap> {
        if depth > MAX_CALL_DEPTH {
            return Err(Trap::CallDepth(f.name.clone()));
        }
        let mut frame = Frame { f, values: vec![0; f.value_types.len()], depth };
        for (p, &a) in f.params.iter().zip(args) {
            frame.values[p.value.0 as usize] = a;
        }
        self.region(&mut frame, &f.body)
    }

    fn region(&mut self, frame: &mut Frame<'m>, region: &'m Region) -> Result<Vec<Bits>, Trap> {
        for inst in &region.insts {
            self.inst(frame, inst)?;
        }
        Ok(region.yields.iter().map(|&v| frame.get(v)).collect())
    }

    fn inst(&mut self, frame: &mut Frame<'m>, inst: &'m Inst) -> Result<(), Trap> {
        let f = frame.f;
        let results: Vec<Bits> = match &inst.op {
            Op::Const(c) => vec![c.bits()],
            Op::Unary(op, a) => vec![unary(*op, f.ty(*a), frame.get(*a))],
            Op::Binary(op, a, b) => vec![binary(*op, f.ty(*a), frame.get(*a), frame.get(*b))],
            Op::Fma(a, b, c) => vec![fl(frame.get(*a)).mul_add(fl(frame.get(*b)), fl(frame.get(*c))).to_bits()],
            Op::Cmp(op, a, b) => vec![compare(*op, f.ty(*a), frame.get(*a), frame.get(*b)) as Bits],
            Op::Select(c, a, b) => vec![if frame.get(*c) != 0 { frame.get(*a) } else { frame.get(*b) }],
            Op::Convert(to, a) => vec![convert(f.ty(*a), *to, frame.get(*a))],
            Op::Bitcast(_, a) => vec![frame.get(*a)],
            Op::Detach(a) | Op::ReplaceGrad(a, _) => vec![frame.get(*a)],
            Op::Math(op, args) => {
                let x: Vec<f32> = args.iter().map(|&a| fl(frame.get(a))).collect();
                vec![math(*op, &x).to_bits()]
            }
            Op::Call(func, args) => {
                let callee = self.module.function(*func);
                let args: Vec<Bits> = args.iter().map(|&a| frame.get(a)).collect();
                self.run(callee, &args, frame.depth + 1)?
            }
            Op::CallExtern(ext, args) => {
                let decl = &self.module.externs[*ext as usize];
                let host =
                    self.externs[*ext as usize].as_ref().ok_or_else(|| Trap::UnboundExtern(decl.name.clone()))?;
                let args: Vec<Bits> = args.iter().map(|&a| frame.get(a)).collect();
                let out = host(&args);
                if out.len() != decl.results.len() {
                    return Err(Trap::HostResults {
                        name: decl.name.clone(),
                        expected: decl.results.len(),
                        given: out.len(),
                    });
                }
                out
            }
            Op::Load { buffer, index } => {
                let i = frame.get(*index) as usize;
                vec![self.buffers[*buffer as usize].get(i).copied().unwrap_or(0)]
            }
            Op::Store { buffer, index, value } => {
                let (i, v) = (frame.get(*index) as usize, frame.get(*value));
                if let Some(slot) = self.buffers[*buffer as usize].get_mut(i) {
                    *slot = v;
                }
                vec![]
            }
            Op::AtomicAdd { buffer, index, value } => {
                let (i, v) = (frame.get(*index) as usize, frame.get(*value));
                let elem = self.module.buffers[*buffer as usize].elem;
                if let Some(slot) = self.buffers[*buffer as usize].get_mut(i) {
                    *slot = binary(BinaryOp::Add, elem, *slot, v);
                }
                vec![]
            }
            Op::If { cond, then, els } => {
                let region = if frame.get(*cond) != 0 { then } else { els };
                self.region(frame, region)?
            }
            Op::Loop { init, body } => {
                let mut carried: Vec<Bits> = init.iter().map(|&v| frame.get(v)).collect();
                let mut iterations = 0u64;
                loop {
                    for (&p, &v) in body.params.iter().zip(&carried) {
                        frame.set(p, v);
                    }
                    let out = self.region(frame, body)?;
                    carried = out[1..].to_vec();
                    if out[0] == 0 {
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

struct Frame<'m> {
    f: &'m Function,
    values: Vec<Bits>,
    depth: usize,
}

impl Frame<'_> {
    fn get(&self, v: Value) -> Bits {
        self.values[v.0 as usize]
    }

    fn set(&mut self, v: Value, bits: Bits) {
        self.values[v.0 as usize] = bits;
    }
}

fn fl(bits: Bits) -> f32 {
    f32::from_bits(bits)
}

pub fn unary(op: UnaryOp, ty: Ty, a: Bits) -> Bits {
    match (op, ty) {
        (UnaryOp::Neg, Ty::F32) => a ^ 0x8000_0000,
        (UnaryOp::Neg, _) => (a as i32).wrapping_neg() as Bits,
        (UnaryOp::Not, Ty::Bool) => (a == 0) as Bits,
        (UnaryOp::Not, _) => !a,
        (UnaryOp::Abs, _) => a & 0x7fff_ffff,
        (UnaryOp::Sqrt, _) => fl(a).sqrt().to_bits(),
        (UnaryOp::Floor, _) => fl(a).floor().to_bits(),
        (UnaryOp::Ceil, _) => fl(a).ceil().to_bits(),
        (UnaryOp::Trunc, _) => fl(a).trunc().to_bits(),
        (UnaryOp::Round, _) => fl(a).round().to_bits(),
    }
}

pub fn binary(op: BinaryOp, ty: Ty, a: Bits, b: Bits) -> Bits {
    use BinaryOp::*;
    match ty {
        Ty::F32 => {
            let (x, y) = (fl(a), fl(b));
            let r = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                Rem => x % y,
                Min => {
                    if x < y {
                        x
                    } else {
                        y
                    }
                }
                Max => {
                    if x > y {
                        x
                    } else {
                        y
                    }
                }
                CopySign => x.copysign(y),
                And | Or | Xor | Shl | Shr => unreachable!("the verifier rejects {op:?} on f32"),
            };
            r.to_bits()
        }
        Ty::I32 => {
            let (x, y) = (a as i32, b as i32);
            let r = match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                Div if y == 0 => 0,
                Div => x.wrapping_div(y),
                Rem if y == 0 => x,
                Rem => x.wrapping_rem(y),
                Min => x.min(y),
                Max => x.max(y),
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
                Shl => x.wrapping_shl(b),
                Shr => x.wrapping_shr(b),
                CopySign => unreachable!("the verifier rejects copysign on integers"),
            };
            r as Bits
        }
        Ty::U32 => match op {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div if b == 0 => 0,
            Div => a / b,
            Rem if b == 0 => a,
            Rem => a % b,
            Min => a.min(b),
            Max => a.max(b),
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            Shl => a.wrapping_shl(b),
            Shr => a.wrapping_shr(b),
            CopySign => unreachable!("the verifier rejects copysign on integers"),
        },
        Ty::Bool => match op {
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            _ => unreachable!("the verifier rejects {op:?} on bool"),
        },
    }
}

pub fn compare(op: CmpOp, ty: Ty, a: Bits, b: Bits) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match ty {
        Ty::F32 => fl(a).partial_cmp(&fl(b)),
        Ty::I32 => Some((a as i32).cmp(&(b as i32))),
        Ty::U32 | Ty::Bool => Some(a.cmp(&b)),
    };
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

/// The reference value of a transcendental function (Rust's `f32` methods).
pub fn math(op: MathOp, x: &[f32]) -> f32 {
    match op {
        MathOp::Sin => x[0].sin(),
        MathOp::Cos => x[0].cos(),
        MathOp::Tan => x[0].tan(),
        MathOp::Asin => x[0].asin(),
        MathOp::Acos => x[0].acos(),
        MathOp::Atan => x[0].atan(),
        MathOp::Atan2 => x[0].atan2(x[1]),
        MathOp::Sinh => x[0].sinh(),
        MathOp::Cosh => x[0].cosh(),
        MathOp::Tanh => x[0].tanh(),
        MathOp::Exp => x[0].exp(),
        MathOp::Exp2 => x[0].exp2(),
        MathOp::Log => x[0].ln(),
        MathOp::Log2 => x[0].log2(),
        MathOp::Pow => x[0].powf(x[1]),
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
