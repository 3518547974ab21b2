// The cases of the `ops` tests, included by the test crates of both backends (their `common`
// module is the harness with their code generator).

use drs_cranelift::Options;
use drs_ir::*;

fn f32s() -> Vec<u32> {
    let mut v: Vec<u32> = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.49999997,
        3.0,
        -7.25,
        0.1,
        123.456,
        1e10,
        -1e10,
        8388607.5,
        8388608.0,
        16777217.0,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect();
    // Subnormals and NaNs (quiet, negative, payload, signalling).
    v.extend([0x0000_0001, 0x8000_0001, 0x007f_ffff, 0x0040_0000, 0x7fc0_0000, 0xffc0_0000, 0x7fc1_2345, 0x7f80_0001]);
    v
}

fn i32s() -> Vec<u32> {
    [
        0,
        1,
        -1,
        2,
        -2,
        3,
        7,
        -7,
        31,
        32,
        33,
        63,
        64,
        100,
        -100,
        16777217,
        -16777217,
        0x5555_5555,
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
    ]
    .iter()
    .map(|&x: &i32| x as u32)
    .collect()
}

fn u32s() -> Vec<u32> {
    vec![
        0,
        1,
        2,
        3,
        7,
        31,
        32,
        33,
        100,
        16777217,
        16777219,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_fffe,
        0xffff_ffff,
        4294967040,
        0xdead_beef,
    ]
}

fn values(ty: Ty) -> Vec<u32> {
    match ty {
        Ty::F32 => f32s(),
        Ty::I32 => i32s(),
        Ty::U32 => u32s(),
        Ty::Bool => vec![0, 1],
    }
}

/// A small set of constants per type for the uniform operand forms.
fn consts(ty: Ty) -> Vec<u32> {
    match ty {
        Ty::F32 => vec![
            0.0f32.to_bits(),
            (-0.0f32).to_bits(),
            2.5f32.to_bits(),
            f32::INFINITY.to_bits(),
            0x7fc0_0000,
            0x0000_0001,
        ],
        Ty::I32 => vec![0, -1i32 as u32, 33, i32::MIN as u32, 7],
        Ty::U32 => vec![0, 1, 32, 0xffff_ffff, 7],
        Ty::Bool => vec![0, 1],
    }
}

const ALL_TYS: [Ty; 4] = [Ty::F32, Ty::I32, Ty::U32, Ty::Bool];

/// The module under test and the lanes each function runs on.
struct Suite {
    module: Module,
    cases: Vec<(String, Vec<Vec<u32>>)>,
}

impl Suite {
    fn new() -> Suite {
        Suite { module: Module::default(), cases: Vec::new() }
    }

    /// Adds a function of `params` built by `body` (returning its results) and its inputs.
    fn add(
        &mut self,
        name: String,
        params: &[Ty],
        lanes: Vec<Vec<u32>>,
        body: impl FnOnce(&mut Builder, &[Value]) -> Vec<Value>,
    ) {
        let sigs = Signatures::of(&self.module);
        let mut f = Function::new(name.clone());
        let ps: Vec<Value> = params.iter().enumerate().map(|(i, &t)| f.add_param(format!("p{i}"), t)).collect();
        let mut b = Builder::new(&mut f, &sigs);
        let results = body(&mut b, &ps);
        let types = results.iter().map(|&r| b.ty(r)).collect();
        b.finish(results);
        f.result_types = types;
        self.module.add_function(f);
        self.cases.push((name, lanes));
    }

    fn run(self) {
        verify_module(&self.module).unwrap();
        let want: Vec<common::Outcome> =
            self.cases.iter().map(|(name, lanes)| common::interp(&self.module, name, lanes, &[], &[])).collect();
        for &mode in common::MODES {
            let (jit, loaded) = common::compile_and_reload(&self.module, &Options::new(mode))
                .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
            for ((name, lanes), want) in self.cases.iter().zip(&want) {
                let got = common::run_jit(&jit, name, lanes, &[], &[]);
                common::compare(&self.module, name, mode, lanes, want, &got);
                // Code loaded from its serialised form computes exactly the same bits.
                assert!(
                    common::run_jit(&loaded, name, lanes, &[], &[]) == got,
                    "`{name}` {mode:?}: reloaded code differs"
                );
            }
        }
    }
}

fn pairs(a: &[u32], b: &[u32]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for &x in a {
        for &y in b {
            out.push(vec![x, y]);
        }
    }
    out
}

fn singles(a: &[u32]) -> Vec<Vec<u32>> {
    a.iter().map(|&x| vec![x]).collect()
}

const UNARY: [UnaryOp; 8] = [
    UnaryOp::Neg,
    UnaryOp::Not,
    UnaryOp::Abs,
    UnaryOp::Sqrt,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Trunc,
    UnaryOp::Round,
];

const BINARY: [BinaryOp; 13] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Rem,
    BinaryOp::Min,
    BinaryOp::Max,
    BinaryOp::CopySign,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::Shl,
    BinaryOp::Shr,
];

const CMP: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

#[test]
fn unary_ops() {
    let mut s = Suite::new();
    for op in UNARY {
        for ty in ALL_TYS {
            if !unary_accepts(op, ty) {
                continue;
            }
            s.add(format!("{}_{}", op.name(), ty.name()), &[ty], singles(&values(ty)), |b, p| vec![b.unary(op, p[0])]);
            // Uniform operand: each constant folded in the scalar path.
            for (i, c) in consts(ty).into_iter().enumerate() {
                s.add(format!("{}_{}_const{i}", op.name(), ty.name()), &[], vec![vec![]; 5], |b, _| {
                    let k = b.konst(Const::from_bits(ty, c));
                    vec![b.unary(op, k)]
                });
            }
        }
    }
    s.run();
}

#[test]
fn binary_ops() {
    let mut s = Suite::new();
    for op in BINARY {
        for ty in ALL_TYS {
            if !binary_accepts(op, ty) {
                continue;
            }
            let name = format!("{}_{}", op.name(), ty.name());
            let vals = values(ty);
            s.add(format!("{name}_vv"), &[ty, ty], pairs(&vals, &vals), |b, p| vec![b.binary(op, p[0], p[1])]);
            for (i, c) in consts(ty).into_iter().enumerate() {
                s.add(format!("{name}_vu{i}"), &[ty], singles(&vals), |b, p| {
                    let k = b.konst(Const::from_bits(ty, c));
                    vec![b.binary(op, p[0], k)]
                });
                s.add(format!("{name}_uv{i}"), &[ty], singles(&vals), |b, p| {
                    let k = b.konst(Const::from_bits(ty, c));
                    vec![b.binary(op, k, p[0])]
                });
                for (j, d) in consts(ty).into_iter().enumerate() {
                    s.add(format!("{name}_uu{i}_{j}"), &[], vec![vec![]; 3], |b, _| {
                        let x = b.konst(Const::from_bits(ty, c));
                        let y = b.konst(Const::from_bits(ty, d));
                        vec![b.binary(op, x, y)]
                    });
                }
            }
        }
    }
    s.run();
}

#[test]
fn fma_compare_select() {
    let mut s = Suite::new();
    let few: Vec<u32> =
        [0.0f32, -0.0, 1.0, -1.5, 1e-20, 3e38, f32::INFINITY, f32::NEG_INFINITY, 0.1, 1.0 + f32::EPSILON, 1e-45]
            .iter()
            .map(|x| x.to_bits())
            .chain([0x7fc0_0000, 0x7f80_0001])
            .collect();
    let mut triples = Vec::new();
    for &a in &few {
        for &b in &few {
            for &c in &few {
                triples.push(vec![a, b, c]);
            }
        }
    }
    s.add("fma".into(), &[Ty::F32; 3], triples, |b, p| vec![b.fma(p[0], p[1], p[2])]);
    s.add("fma_uniform".into(), &[], vec![vec![]; 2], |b, _| {
        let x = b.f32(0.1);
        let y = b.f32(10.0);
        let z = b.f32(-1.0);
        vec![b.fma(x, y, z)]
    });
    for op in CMP {
        for ty in ALL_TYS {
            if !cmp_accepts(op, ty) {
                continue;
            }
            let vals = values(ty);
            s.add(format!("cmp_{}_{}", op.name(), ty.name()), &[ty, ty], pairs(&vals, &vals), |b, p| {
                vec![b.cmp(op, p[0], p[1])]
            });
            for (i, c) in consts(ty).into_iter().enumerate() {
                s.add(format!("cmp_{}_{}_vu{i}", op.name(), ty.name()), &[ty], singles(&vals), |b, p| {
                    let k = b.konst(Const::from_bits(ty, c));
                    vec![b.cmp(op, p[0], k)]
                });
            }
        }
    }
    for ty in ALL_TYS {
        let vals = values(ty);
        let lanes: Vec<Vec<u32>> = pairs(&vals, &vals)
            .into_iter()
            .enumerate()
            .map(|(i, mut v)| {
                v.insert(0, (i % 3 == 0) as u32);
                v
            })
            .collect();
        s.add(format!("select_{}", ty.name()), &[Ty::Bool, ty, ty], lanes.clone(), |b, p| {
            vec![b.select(p[0], p[1], p[2])]
        });
        // Uniform condition, varying values, and varying condition with a uniform value.
        s.add(format!("select_{}_ucond", ty.name()), &[Ty::Bool, ty, ty], lanes.clone(), |b, p| {
            let t = b.bool(true);
            let f = b.bool(false);
            let x = b.select(t, p[1], p[2]);
            let y = b.select(f, p[1], p[2]);
            vec![x, y]
        });
        let c = consts(ty)[1];
        s.add(format!("select_{}_uval", ty.name()), &[Ty::Bool, ty, ty], lanes, |b, p| {
            let k = b.konst(Const::from_bits(ty, c));
            let x = b.select(p[0], k, p[2]);
            let y = b.select(p[0], p[1], k);
            vec![x, y]
        });
    }
    s.run();
}

#[test]
fn conversions_and_bitcasts() {
    let mut s = Suite::new();
    let numeric = [Ty::F32, Ty::I32, Ty::U32];
    for from in numeric {
        let mut vals = values(from);
        if from != Ty::F32 {
            // Integers that round in f32 (ties to even) and near powers of two.
            vals.extend([
                16777217,
                16777219,
                33554435,
                0x7fff_ff80,
                0x7fff_ffc0,
                0xffff_ff80,
                0xffff_ff7f,
                0xffff_ffc0,
            ]);
        }
        for to in numeric {
            if from == to {
                continue;
            }
            s.add(format!("convert_{}_{}", from.name(), to.name()), &[from], singles(&vals), |b, p| {
                vec![b.convert(to, p[0])]
            });
            s.add(format!("bitcast_{}_{}", from.name(), to.name()), &[from], singles(&vals), |b, p| {
                vec![b.bitcast(to, p[0])]
            });
            for (i, c) in consts(from).into_iter().enumerate() {
                s.add(format!("convert_{}_{}_u{i}", from.name(), to.name()), &[], vec![vec![]; 2], |b, _| {
                    let k = b.konst(Const::from_bits(from, c));
                    vec![b.convert(to, k)]
                });
            }
        }
    }
    for ty in ALL_TYS {
        s.add(format!("detach_{}", ty.name()), &[ty, ty], pairs(&values(ty), &values(ty)[..2]), |b, p| {
            let d = b.detach(p[0]);
            let r = b.replace_grad(p[1], p[0]);
            vec![d, r]
        });
        let cs = consts(ty);
        s.add(format!("consts_{}", ty.name()), &[], vec![vec![]; 9], |b, _| {
            cs.iter().map(|&c| b.konst(Const::from_bits(ty, c))).collect()
        });
    }
    s.run();
}

#[test]
fn many_results_and_bool_plumbing() {
    // Bools through params, results and every bool op, varying and uniform.
    let mut s = Suite::new();
    let lanes = pairs(&[0, 1], &[0, 1]);
    s.add("bools".into(), &[Ty::Bool, Ty::Bool], lanes, |b, p| {
        let t = b.bool(true);
        let and = b.binary(BinaryOp::And, p[0], p[1]);
        let or = b.binary(BinaryOp::Or, p[0], t);
        let xor = b.binary(BinaryOp::Xor, p[0], p[1]);
        let not = b.unary(UnaryOp::Not, p[1]);
        let eq = b.cmp(CmpOp::Eq, p[0], p[1]);
        let ne = b.cmp(CmpOp::Ne, t, p[1]);
        let nt = b.unary(UnaryOp::Not, t);
        vec![and, or, xor, not, eq, ne, nt, p[0]]
    });
    s.run();
}
