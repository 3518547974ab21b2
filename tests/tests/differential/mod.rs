//! Differential testing of one lowered module on every stage and backend, shared by
//! `random_programs.rs` and `backends.rs`.
//!
//! For a lowered module `m0` and an optimisation level, [`Stages`] builds
//!
//! - `mopt = optimize(m0)`: the optimiser on the unexpanded module (`Math` ops kept, evaluated by
//!   the interpreter with the platform libm, and folded with the very same functions);
//! - `mexp = expand_math(mopt)`: the math library substituted, not optimised again;
//! - `m2 = optimize(mexp)`: what `drsc` hands a backend (`pipeline::for_backend`);
//! - the Cranelift JIT of `m2` for 1, 4 and 8 lanes, and optionally once more for 4 or 8 lanes
//!   with some parameters declared uniform (`Options::uniform`; the caller gives those the same
//!   value in every aligned group of 8 argument sets).
//!
//! [`Stages::check`] runs one function on many argument sets (a different set in every lane) and
//! checks:
//!
//! 1. `interp(m0) == interp(mopt)` bit for bit: the optimiser preserves interpreter results;
//! 2. `interp(mexp) == interp(m2)` bit for bit: the same, on expanded code (inlined helpers);
//! 3. `interp(m2) == jit(m2)` bit for bit in every lane width: the backend;
//! 4. `interp(m0)` against `interp(m2)` (unexpanded against expanded), per result scalar,
//!    according to its [`Class`] (computed by [`classify`] on the IR of `m0`): an `Exact`
//!    result does not depend on any transcendental and must be equal bit for bit; a `Direct`
//!    one is a transcendental of exact arguments, moved only through operations that cannot
//!    increase an error in ulps (negation, `abs`, `min`/`max`, selects and merges on exact
//!    conditions, copies), and must be within [`DIRECT_ULPS`]; an `Inexact` one (an error
//!    that may be amplified or decide a branch) is only measured, never asserted.
//!
//! Why not `interp(m0) == interp(m2)` bit for bit everywhere: the interpreter evaluates `Math`
//! ops with the platform libm, the expansion is another approximation (each within its
//! documented ulps of the correctly rounded result), and constant `Math` ops are folded with
//! libm before the expansion. So the unexpanded module is bit for bit the expanded one exactly
//! where no transcendental contributes (the `Exact` results, asserted), and where one does, an
//! error bound holds only where it cannot be amplified (the `Direct` ones): a relative
//! tolerance on anything else would be either wrong (`floor(8.0 * sin(x))`, a branch on
//! `exp(x) > 2.0`) or too loose to mean anything.
//!
//! Externs are bound to deterministic fakes ([`fake_extern`]); those named in
//! [`Env::stateful`] also count their calls per lane (keyed by their first argument, which the
//! caller makes a lane id), and answer differently each time, so a backend that calls an extern
//! for an inactive lane, or skips a call, computes different results. Their results are
//! `Inexact` for check 4 (a call made on one side only changes every later answer).
//!
//! "Bit for bit" treats all NaNs as equal: the IR does not specify NaN payloads or the sign of
//! a NaN, and the optimiser may change them (see `drs_opt`'s documentation).

#![allow(dead_code)]

use drs_cranelift::{Buffer, Jit, Lanes, Options};
use drs_interp::Interpreter;
use drs_ir::{FuncId, Module, Op, Region, Ty};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The most ulps by which the expanded math library and the interpreter (platform libm) may
/// differ on one `Math` op: `drs_opt`'s documented bound (its crate docs and `docs/math.md`:
/// "the expansion and the interpreter differ by at most 2 ulps on a `Math` op").
pub const DIRECT_ULPS: u64 = 2;

/// How a result of the unexpanded module relates to the expanded one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// No transcendental contributes: equal bit for bit.
    Exact,
    /// A transcendental of exact arguments, through ulp-preserving operations only.
    Direct,
    /// Anything else: not asserted.
    Inexact,
}

impl Class {
    fn join(self, other: Class) -> Class {
        self.max(other)
    }
}

/// The class of every result of `f` when its parameters are exact (see the module docs).
pub fn classify(module: &Module, f: FuncId, stateful: &[String]) -> Vec<Class> {
    let args = vec![Class::Exact; module.function(f).params.len()];
    let stateful = module.externs.iter().map(|e| stateful.contains(&e.name)).collect();
    let mut cx = Classifier { module, memo: HashMap::new(), loads_exact: !has_stores(module), stateful };
    cx.function(f, &args)
}

fn has_stores(module: &Module) -> bool {
    fn region(r: &Region) -> bool {
        r.insts.iter().any(|i| match &i.op {
            Op::Store { .. } | Op::AtomicAdd { .. } => true,
            Op::If { then, els, .. } => region(then) || region(els),
            Op::Loop { body, .. } => region(body),
            _ => false,
        })
    }
    module.functions.iter().any(|f| region(&f.body))
}

struct Classifier<'m> {
    module: &'m Module,
    memo: HashMap<(FuncId, Vec<Class>), Vec<Class>>,
    /// Loads read what the caller put in the buffers (no function writes them).
    loads_exact: bool,
    /// Which externs answer by call count (see [`Env::stateful`]).
    stateful: Vec<bool>,
}

impl Classifier<'_> {
    fn function(&mut self, f: FuncId, args: &[Class]) -> Vec<Class> {
        let key = (f, args.to_vec());
        if let Some(r) = self.memo.get(&key) {
            return r.clone();
        }
        let func = self.module.function(f);
        let mut values = vec![Class::Exact; func.value_types.len()];
        for (p, &c) in func.params.iter().zip(args) {
            values[p.value.0 as usize] = c;
        }
        let out = self.region(&func.body, &mut values);
        self.memo.insert(key, out.clone());
        out
    }

    fn region(&mut self, r: &Region, values: &mut [Class]) -> Vec<Class> {
        for inst in &r.insts {
            let c = |v: &drs_ir::Value| values[v.0 as usize];
            let all = |vs: &[drs_ir::Value]| vs.iter().map(|v| values[v.0 as usize]).max().unwrap_or(Class::Exact);
            let exact_or_inexact = |k: Class| if k == Class::Exact { Class::Exact } else { Class::Inexact };
            let results: Vec<Class> = match &inst.op {
                Op::Const(_) => vec![Class::Exact],
                Op::Unary(drs_ir::UnaryOp::Neg | drs_ir::UnaryOp::Abs, a) => vec![c(a)],
                Op::Unary(_, a) => vec![exact_or_inexact(c(a))],
                Op::Binary(drs_ir::BinaryOp::Min | drs_ir::BinaryOp::Max, a, b) => vec![c(a).join(c(b))],
                Op::Binary(_, a, b) => vec![exact_or_inexact(c(a).join(c(b)))],
                Op::Fma(a, b, d) => vec![exact_or_inexact(c(a).join(c(b)).join(c(d)))],
                Op::Cmp(_, a, b) => vec![exact_or_inexact(c(a).join(c(b)))],
                Op::Select(k, a, b) => {
                    vec![if c(k) == Class::Exact { c(a).join(c(b)) } else { Class::Inexact }]
                }
                Op::Convert(_, a) | Op::Bitcast(_, a) => vec![exact_or_inexact(c(a))],
                Op::Math(_, args) => {
                    vec![if all(args) == Class::Exact { Class::Direct } else { Class::Inexact }]
                }
                Op::Detach(a) | Op::ReplaceGrad(a, _) => vec![c(a)],
                Op::Call(f, args) => {
                    let args: Vec<Class> = args.iter().map(c).collect();
                    self.function(*f, &args)
                }
                Op::CallExtern(e, _) if self.stateful[*e as usize] => vec![Class::Inexact; inst.results.len()],
                Op::CallExtern(_, args) => vec![exact_or_inexact(all(args)); inst.results.len()],
                Op::Load { index, .. } => {
                    vec![if self.loads_exact { exact_or_inexact(c(index)) } else { Class::Inexact }]
                }
                Op::Store { .. } | Op::AtomicAdd { .. } | Op::LocalStore { .. } => vec![],
                // What a local array holds is not tracked.
                Op::LocalLoad { .. } => vec![Class::Inexact],
                Op::If { cond, then, els } => {
                    let cond = c(cond);
                    let a = self.region(then, values);
                    let b = self.region(els, values);
                    a.iter()
                        .zip(&b)
                        .map(|(x, y)| if cond == Class::Exact { x.join(*y) } else { Class::Inexact })
                        .collect()
                }
                Op::Loop { init, body, .. } => {
                    let mut carried: Vec<Class> = init.iter().map(c).collect();
                    loop {
                        for (p, k) in body.params.iter().zip(&carried) {
                            values[p.0 as usize] = *k;
                        }
                        let out = self.region(body, values);
                        let flag = out[0];
                        let mut next: Vec<Class> = carried.iter().zip(&out[1..]).map(|(a, b)| a.join(*b)).collect();
                        if flag != Class::Exact {
                            next = vec![Class::Inexact; carried.len()];
                        }
                        if next == carried {
                            break;
                        }
                        carried = next;
                    }
                    carried
                }
            };
            for (r, k) in inst.results.iter().zip(results) {
                values[r.0 as usize] = k;
            }
        }
        r.yields.iter().map(|v| values[v.0 as usize]).collect()
    }
}

/// Keeps only the functions reachable from `roots` (by name), renumbering calls; externs and
/// buffers are kept as they are.
pub fn prune(module: &Module, roots: &[String]) -> Module {
    let n = module.functions.len();
    let mut keep = vec![false; n];
    let mut stack: Vec<usize> = roots.iter().filter_map(|r| module.find(r)).map(|f| f.0 as usize).collect();
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut keep[f], true) {
            continue;
        }
        let mut out = Vec::new();
        callees(&module.functions[f].body, &mut out);
        stack.extend(out.into_iter().map(|g| g.0 as usize).filter(|&g| !keep[g]));
    }
    let mut new_id = vec![None; n];
    let mut functions = Vec::new();
    for (i, f) in module.functions.iter().enumerate() {
        if keep[i] {
            new_id[i] = Some(FuncId(functions.len() as u32));
            functions.push(f.clone());
        }
    }
    for f in &mut functions {
        renumber(&mut f.body, &new_id);
    }
    Module { functions, externs: module.externs.clone(), buffers: module.buffers.clone() }
}

fn callees(r: &Region, out: &mut Vec<FuncId>) {
    for inst in &r.insts {
        match &inst.op {
            Op::Call(f, _) => out.push(*f),
            Op::If { then, els, .. } => {
                callees(then, out);
                callees(els, out);
            }
            Op::Loop { body, .. } => callees(body, out),
            _ => {}
        }
    }
}

fn renumber(r: &mut Region, new_id: &[Option<FuncId>]) {
    for inst in &mut r.insts {
        match &mut inst.op {
            Op::Call(f, _) => *f = new_id[f.0 as usize].expect("callees are kept"),
            Op::If { then, els, .. } => {
                renumber(then, new_id);
                renumber(els, new_id);
            }
            Op::Loop { body, .. } => renumber(body, new_id),
            _ => {}
        }
    }
}

/// Whether the module has any `Math` op.
pub fn has_math(module: &Module) -> bool {
    fn region(r: &Region) -> bool {
        r.insts.iter().any(|i| match &i.op {
            Op::Math(..) => true,
            Op::If { then, els, .. } => region(then) || region(els),
            Op::Loop { body, .. } => region(body),
            _ => false,
        })
    }
    module.functions.iter().any(|f| region(&f.body))
}

/// A deterministic fake for an extern: a hash of its index and arguments, shaped by the result
/// types (floats in [-2, 2), bools 0/1, integers and handles small).
pub fn fake_extern(index: usize, args: &[u32], results: &[Ty]) -> Vec<u32> {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ (index as u64).wrapping_mul(0x1000_0000_01b3);
    for &a in args {
        h = mix(h ^ a as u64);
    }
    results
        .iter()
        .enumerate()
        .map(|(k, ty)| {
            let r = mix(h ^ (k as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f));
            match ty {
                Ty::F32 => ((r >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0).to_bits(),
                Ty::Bool => (r & 1) as u32,
                Ty::I32 | Ty::U32 => (r & 3) as u32,
            }
        })
        .collect()
}

/// SplitMix64's finaliser.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small deterministic random number generator for arguments.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(1);
        mix(self.0)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// A float argument: mostly ordinary values of moderate size, some integers and halves,
    /// some large, tiny and special values (zeros, infinities, NaN, subnormals), some random
    /// bit patterns.
    pub fn f32_bits(&mut self) -> u32 {
        match self.below(20) {
            0..=7 => self.range(-4.0, 4.0).to_bits(),
            8..=9 => self.unit().to_bits(),
            10..=11 => ((self.below(13) as f32 - 6.0) * 0.5).to_bits(),
            12 => self.range(-100.0, 100.0).to_bits(),
            13 => {
                let e = self.below(60) as i32 - 30;
                (self.range(-1.0, 1.0) * 2f32.powi(e * 4)).to_bits()
            }
            14 => {
                const SPECIAL: [f32; 12] = [
                    0.0,
                    -0.0,
                    1.0,
                    -1.0,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    f32::NAN,
                    f32::MAX,
                    f32::MIN_POSITIVE,
                    1e-40,
                    -1e-45,
                    16777216.0,
                ];
                SPECIAL[self.below(SPECIAL.len() as u64) as usize].to_bits()
            }
            15 => self.next() as u32,
            _ => self.range(-1.5, 1.5).to_bits(),
        }
    }

    /// An integer argument (i32 or u32 bits): mostly small, so that loops and comparisons
    /// are interesting, some large and extreme.
    pub fn int_bits(&mut self) -> u32 {
        match self.below(10) {
            0..=4 => (self.below(17) as i32 - 8) as u32,
            5..=6 => self.below(40) as u32,
            7 => self.next() as u32,
            _ => {
                const SPECIAL: [u32; 8] = [0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 31, 32, 0xffff_fff9];
                SPECIAL[self.below(SPECIAL.len() as u64) as usize]
            }
        }
    }

    pub fn bits(&mut self, ty: Ty) -> u32 {
        match ty {
            Ty::F32 => self.f32_bits(),
            Ty::I32 | Ty::U32 => self.int_bits(),
            Ty::Bool => (self.next() & 1) as u32,
        }
    }
}

/// Whether two scalars of type `ty` are the same value: equal bits, or both NaN.
pub fn same(ty: Ty, a: u32, b: u32) -> bool {
    a == b || (ty == Ty::F32 && f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

pub fn show(ty: Ty, bits: u32) -> String {
    match ty {
        Ty::F32 => format!("{:?} ({bits:#010x})", f32::from_bits(bits)),
        Ty::I32 => format!("{}", bits as i32),
        Ty::U32 => format!("{bits}u"),
        Ty::Bool => format!("{}", bits != 0),
    }
}

/// The host environment of a run: buffer contents, and which externs are stateful (all are
/// bound to [`fake_extern`]; the stateful ones also count calls per lane id, their first
/// argument).
#[derive(Clone, Default)]
pub struct Env {
    pub buffers: Vec<Vec<u32>>,
    pub stateful: Vec<String>,
}

/// The host functions of one run: fakes, with fresh call counters.
#[derive(Clone)]
struct Host {
    decls: Vec<(Vec<Ty>, bool)>,
    counts: Arc<Mutex<HashMap<(usize, u32), u32>>>,
}

impl Host {
    fn new(module: &Module, env: &Env) -> Host {
        Host {
            decls: module.externs.iter().map(|e| (e.results.clone(), env.stateful.contains(&e.name))).collect(),
            counts: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn call(&self, index: usize, args: &[u32]) -> Vec<u32> {
        let (results, stateful) = &self.decls[index];
        // NaN payloads are not specified: every NaN argument is the same to the fake.
        let mut key: Vec<u32> =
            args.iter().map(|&a| if f32::from_bits(a).is_nan() { 0x7fc0_0000 } else { a }).collect();
        if *stateful {
            let lane = args.first().copied().unwrap_or(0);
            let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            let n = counts.entry((index, lane)).or_insert(0);
            *n += 1;
            key.push(*n);
        }
        fake_extern(index, &key, results)
    }
}

/// Time spent, in nanoseconds, over all checks (for the reports).
pub static COMPILE_NS: AtomicU64 = AtomicU64::new(0);
pub static OPTIMIZE_NS: AtomicU64 = AtomicU64::new(0);
pub static INTERP_NS: AtomicU64 = AtomicU64::new(0);
pub static JIT_NS: AtomicU64 = AtomicU64::new(0);

fn timed<R>(counter: &AtomicU64, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = f();
    counter.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    r
}

/// The time counters, as text.
pub fn timings() -> String {
    let s = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 * 1e-9;
    format!(
        "optimise and expand {:.1}s, Cranelift compile {:.1}s, interpreter {:.1}s, compiled code {:.1}s (CPU time)",
        s(&OPTIMIZE_NS),
        s(&COMPILE_NS),
        s(&INTERP_NS),
        s(&JIT_NS)
    )
}

/// The optimisation levels exercised, by index.
pub const LEVELS: [drs_opt::OptLevel; 3] =
    [drs_opt::OptLevel::Basic, drs_opt::OptLevel::Default, drs_opt::OptLevel::Full];

/// A module at every stage, compiled for every lane width.
pub struct Stages {
    pub m0: Module,
    pub mopt: Module,
    pub mexp: Module,
    pub m2: Module,
    /// The JIT of `m2` for 1, 4 and 8 lanes, then the one with uniform parameters, if any.
    pub jits: Vec<(Jit, String)>,
    pub level: drs_opt::OptLevel,
}

/// Parameters declared uniform for one more JIT: its width and the flags by function.
pub type Uniform = (Lanes, BTreeMap<String, Vec<bool>>);

/// Statistics of the unexpanded-against-expanded comparison.
#[derive(Clone, Debug, Default)]
pub struct UlpStats {
    /// Result scalars compared, by class.
    pub exact: u64,
    pub direct: u64,
    pub inexact: u64,
    /// The largest distance seen on a `Direct` result, and on an `Inexact` f32 result (NaN
    /// against a number counts as `u64::MAX`).
    pub max_direct: u64,
    pub max_inexact: u64,
    /// Inexact results that differed at all.
    pub inexact_differ: u64,
}

impl UlpStats {
    pub fn add(&mut self, o: &UlpStats) {
        self.exact += o.exact;
        self.direct += o.direct;
        self.inexact += o.inexact;
        self.max_direct = self.max_direct.max(o.max_direct);
        self.max_inexact = self.max_inexact.max(o.max_inexact);
        self.inexact_differ += o.inexact_differ;
    }
}

impl Stages {
    pub fn new(m0: Module, level: drs_opt::OptLevel, uniform: Option<Uniform>) -> Result<Stages, String> {
        drs_ir::verify_module(&m0).map_err(|e| format!("lowered module does not verify: {e}"))?;
        let (mopt, mexp, m2) = timed(&OPTIMIZE_NS, || -> Result<_, String> {
            let mut mopt = m0.clone();
            drs_opt::optimize(&mut mopt, level);
            drs_ir::verify_module(&mopt).map_err(|e| format!("optimised module ({level:?}) does not verify: {e}"))?;
            let mut mexp = mopt.clone();
            drs_opt::expand_math(&mut mexp);
            drs_ir::verify_module(&mexp).map_err(|e| format!("expanded module does not verify: {e}"))?;
            let mut m2 = mexp.clone();
            drs_opt::optimize(&mut m2, level);
            drs_ir::verify_module(&m2)
                .map_err(|e| format!("module for the backend ({level:?}) does not verify: {e}"))?;
            Ok((mopt, mexp, m2))
        })?;
        let mut options: Vec<Options> = Lanes::ALL.into_iter().map(Options::new).collect();
        if let Some((lanes, flags)) = uniform {
            options.push(Options { uniform_params: flags, ..Options::new(lanes) });
        }
        let mut jits = Vec::new();
        for o in options {
            let what = if o.uniform_params.is_empty() {
                format!("Cranelift {:?}", o.lanes)
            } else {
                format!("Cranelift {:?} with uniform parameters {:?}", o.lanes, o.uniform_params)
            };
            let jit = timed(&COMPILE_NS, || Jit::compile_with(&m2, &o))
                .map_err(|e| format!("{what} rejects the module: {e}"))?;
            jits.push((jit, what));
        }
        Ok(Stages { m0, mopt, mexp, m2, jits, level })
    }

    /// Runs `name` on every argument set of `inputs` (`[set][scalar]`) on every stage and
    /// checks the relations of the module docs. `Err` describes the first disagreement.
    pub fn check(&self, name: &str, inputs: &[Vec<u32>], env: &Env) -> Result<UlpStats, String> {
        let mut env = env.clone();
        env.buffers.resize(self.m0.buffers.len(), Vec::new());
        let env = &env;
        let id0 = self.m0.find(name).ok_or_else(|| format!("no function `{name}` in the lowered module"))?;
        let f0 = self.m0.function(id0);
        let rtys = f0.result_types.clone();
        let classes = classify(&self.m0, id0, &env.stateful);
        let r0 = interp_all(&self.m0, name, inputs, env)?;
        let ropt = interp_all(&self.mopt, name, inputs, env)?;
        compare(&rtys, &r0, &ropt, inputs, "interpreter: lowered", "interpreter: optimised (unexpanded)")?;
        let rexp = interp_all(&self.mexp, name, inputs, env)?;
        let r2 = interp_all(&self.m2, name, inputs, env)?;
        compare(&rtys, &rexp, &r2, inputs, "interpreter: expanded", "interpreter: expanded and optimised")?;
        for (jit, what) in &self.jits {
            let rj = jit_all(jit, &self.m2, name, inputs, env)?;
            compare(&rtys, &r2, &rj, inputs, "interpreter: expanded and optimised", what)?;
        }
        let mut stats = UlpStats::default();
        for (set, (a, b)) in r0.iter().zip(&r2).enumerate() {
            for (k, ((&x, &y), (&ty, &class))) in a.iter().zip(b).zip(rtys.iter().zip(&classes)).enumerate() {
                let d = if ty == Ty::F32 {
                    drs_opt::math::ulp_distance(f32::from_bits(x), f32::from_bits(y))
                } else if x == y {
                    0
                } else {
                    u64::MAX
                };
                match class {
                    Class::Exact => {
                        stats.exact += 1;
                        if !same(ty, x, y) {
                            return Err(format!(
                                "unexpanded and expanded modules differ on result {k}, which depends on no \
                                 transcendental: {} against {} (argument set {set}: {:?})",
                                show(ty, x),
                                show(ty, y),
                                inputs[set]
                            ));
                        }
                    }
                    Class::Direct => {
                        stats.direct += 1;
                        stats.max_direct = stats.max_direct.max(d);
                        if d > DIRECT_ULPS {
                            return Err(format!(
                                "unexpanded and expanded modules differ by {d} ulps on result {k}, a transcendental \
                                 of exact arguments: {} against {} (argument set {set}: {:?})",
                                show(ty, x),
                                show(ty, y),
                                inputs[set]
                            ));
                        }
                    }
                    Class::Inexact => {
                        stats.inexact += 1;
                        if !same(ty, x, y) {
                            stats.inexact_differ += 1;
                        }
                        if ty == Ty::F32 {
                            stats.max_inexact = stats.max_inexact.max(d);
                        }
                    }
                }
            }
        }
        Ok(stats)
    }
}

pub fn compare(
    tys: &[Ty],
    expected: &[Vec<u32>],
    actual: &[Vec<u32>],
    inputs: &[Vec<u32>],
    what_expected: &str,
    what_actual: &str,
) -> Result<(), String> {
    for (set, (e, a)) in expected.iter().zip(actual).enumerate() {
        for (k, ((&x, &y), &ty)) in e.iter().zip(a).zip(tys).enumerate() {
            if !same(ty, x, y) {
                return Err(format!(
                    "{what_actual} disagrees with {what_expected} on result {k} of argument set {set} \
                     (lane {set} of the batch): {} expected, {} computed\narguments: {:?}",
                    show(ty, x),
                    show(ty, y),
                    inputs[set]
                ));
            }
        }
    }
    Ok(())
}

/// `[set][result]` of the interpreter on every argument set.
pub fn interp_all(module: &Module, name: &str, inputs: &[Vec<u32>], env: &Env) -> Result<Vec<Vec<u32>>, String> {
    let id = module.find(name).ok_or_else(|| format!("no function `{name}`"))?;
    let mut interp = Interpreter::new(module);
    interp.iteration_limit = 1 << 16;
    let host = Host::new(module, env);
    for (i, e) in module.externs.iter().enumerate() {
        let host = host.clone();
        interp.bind_extern(&e.name, Box::new(move |args| host.call(i, args)));
    }
    timed(&INTERP_NS, || {
        let mut out = Vec::with_capacity(inputs.len());
        for args in inputs {
            interp.buffers = env.buffers.clone();
            out.push(interp.call(id, args).map_err(|t| format!("interpreter trap: {t}"))?);
        }
        Ok(out)
    })
}

/// `[set][result]` of a JIT kernel run over all argument sets at once with `call_batch`.
pub fn jit_all(
    jit: &Jit,
    module: &Module,
    name: &str,
    inputs: &[Vec<u32>],
    env: &Env,
) -> Result<Vec<Vec<u32>>, String> {
    let kernel = jit.function(name).map_err(|e| e.to_string())?;
    let mut externs = jit.externs();
    let host = Host::new(module, env);
    for (i, e) in module.externs.iter().enumerate() {
        let host = host.clone();
        externs.bind(&e.name, move |args, out| out.copy_from_slice(&host.call(i, args))).map_err(|e| e.to_string())?;
    }
    let n = inputs.len();
    let (np, nr) = (kernel.params().len(), kernel.results().len());
    let mut args = vec![0u32; np * n];
    for (l, a) in inputs.iter().enumerate() {
        for (p, &v) in a.iter().enumerate() {
            args[p * n + l] = v;
        }
    }
    let mut results = vec![0u32; nr * n];
    let mut storage = env.buffers.clone();
    let buffers: Vec<Buffer<'_>> = storage.iter_mut().map(|b| Buffer::from_mut(b)).collect();
    timed(&JIT_NS, || kernel.call_batch(n, &args, &mut results, &buffers, &externs))
        .map_err(|e| format!("Cranelift call: {e}"))?;
    Ok((0..n).map(|l| (0..nr).map(|r| results[r * n + l]).collect()).collect())
}
