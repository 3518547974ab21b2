//! The round trip the tests check: IR → `.drs` text → front end (no diagnostics) → IR again,
//! and both IRs run in the interpreter on the same inputs, host functions and buffers give
//! the same results, host calls and buffer contents, bit for bit (any NaN equals any NaN).

#![allow(dead_code)] // each test binary uses its own part of this module

use drs_interp::Interpreter;
use drs_ir::{FuncId, Module, Ty};
use drs_lower::LoweredProgram;
use drs_sema::LoadOptions;
use drs_source::{write_program, WrittenProgram};
use std::sync::{Arc, Mutex};

pub fn options() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

/// Checks and lowers written source; panics with the diagnostics (and the source, numbered)
/// if there are any.
pub fn check_and_lower(source: &str) -> LoweredProgram {
    match drs_lower::lower_source("written.drs", source, &options()) {
        Ok(lowered) => {
            assert!(lowered.lowered.errors.is_empty(), "{}\n{}", lowered.render_errors(), numbered(source));
            lowered
        }
        Err(diagnostics) => panic!("{diagnostics}\n{}", numbered(source)),
    }
}

pub fn numbered(source: &str) -> String {
    source.lines().enumerate().map(|(i, l)| format!("{:5} {l}\n", i + 1)).collect()
}

/// The written program of `roots`, checked and lowered.
pub struct RoundTrip {
    pub written: WrittenProgram,
    pub lowered: LoweredProgram,
}

impl RoundTrip {
    pub fn new(module: &Module, roots: &[FuncId]) -> RoundTrip {
        let written = write_program(module, roots).unwrap_or_else(|e| panic!("{e}"));
        let lowered = check_and_lower(&written.source);
        RoundTrip { written, lowered }
    }

    /// The re-lowered function written for `f`.
    pub fn function(&self, f: FuncId) -> FuncId {
        let name = &self.written.functions[&f];
        let id = self.lowered.find_fn(name).unwrap_or_else(|| panic!("`{name}` is not in the written program"));
        self.lowered.lowered.functions[&id]
    }

    /// Runs `f` of `module` and its written version on `args` and asserts that everything
    /// observable agrees.
    pub fn compare(&self, module: &Module, f: FuncId, args: &[u32], world: &World) {
        let original = run_original(module, f, args, world);
        let rewritten = self.run_written(module, f, args, world);
        let name = &module.function(f).name;
        let shown: Vec<String> =
            module.function(f).params.iter().zip(args).map(|(p, &a)| show(module.function(f).ty(p.value), a)).collect();
        let context = || format!("`{name}`({})\n{}", shown.join(", "), numbered(&self.written.source));
        match (&original.results, &rewritten.results) {
            (Ok(a), Ok(b)) => {
                let types = &module.function(f).result_types;
                assert!(
                    same_all(types, a, b),
                    "results differ: {} vs {}\n{}",
                    show_all(types, a),
                    show_all(types, b),
                    context()
                );
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{}", context()),
            (a, b) => panic!("{a:?} vs {b:?}\n{}", context()),
        }
        assert_eq!(original.host_calls.len(), rewritten.host_calls.len(), "host calls differ\n{}", context());
        for (a, b) in original.host_calls.iter().zip(&rewritten.host_calls) {
            assert!(a.0 == b.0 && a.1 == b.1, "host calls differ: {a:?} vs {b:?}\n{}", context());
        }
        for (b, decl) in module.buffers.iter().enumerate() {
            let types = vec![decl.elem; original.buffers[b].len()];
            assert!(
                same_all(&types, &original.buffers[b], &rewritten.buffers[b]),
                "buffer `{}` differs\n{}",
                decl.name,
                context()
            );
        }
    }

    fn run_written(&self, module: &Module, f: FuncId, args: &[u32], world: &World) -> Outcome {
        let lowered = &self.lowered.lowered.module;
        let mut interp = Interpreter::new(lowered);
        interp.iteration_limit = ITERATION_LIMIT;
        let log = Arc::new(Mutex::new(Vec::new()));
        for (&e, name) in &self.written.externs {
            let decl = module.externs[e as usize].clone();
            let log = log.clone();
            let bound = interp.bind_extern(
                name,
                Box::new(move |args| {
                    log.lock().unwrap().push((decl.name.clone(), args.to_vec()));
                    fake_results(&decl.name, args, &decl.results)
                }),
            );
            assert!(bound, "the written program does not call `{name}`");
        }
        let buffers: Vec<Arc<Mutex<Vec<u32>>>> =
            module.buffers.iter().map(|b| Arc::new(Mutex::new(world.buffer(&b.name)))).collect();
        for (&b, accessors) in &self.written.buffers {
            let (data, elem) = (buffers[b as usize].clone(), module.buffers[b as usize].elem);
            if let Some(name) = &accessors.load {
                let data = data.clone();
                interp.bind_extern(
                    name,
                    Box::new(move |args| vec![data.lock().unwrap().get(args[0] as usize).copied().unwrap_or(0)]),
                );
            }
            if let Some(name) = &accessors.store {
                let data = data.clone();
                interp.bind_extern(
                    name,
                    Box::new(move |args| {
                        if let Some(slot) = data.lock().unwrap().get_mut(args[0] as usize) {
                            *slot = args[1];
                        }
                        vec![]
                    }),
                );
            }
            if let Some(name) = &accessors.atomic_add {
                interp.bind_extern(
                    name,
                    Box::new(move |args| {
                        if let Some(slot) = data.lock().unwrap().get_mut(args[0] as usize) {
                            *slot = add(elem, *slot, args[1]);
                        }
                        vec![]
                    }),
                );
            }
        }
        let results = interp.call(self.function(f), args).map_err(|t| trap_kind(&t));
        let host_calls = log.lock().unwrap().clone();
        Outcome { results, host_calls, buffers: buffers.iter().map(|b| b.lock().unwrap().clone()).collect() }
    }
}

/// Loops of random programs may run long; both sides stop at the same count.
const ITERATION_LIMIT: u64 = 100_000;

/// What a run shows: results (or the kind of trap), host calls in order, final buffers.
struct Outcome {
    results: Result<Vec<u32>, String>,
    host_calls: Vec<(String, Vec<u32>)>,
    buffers: Vec<Vec<u32>>,
}

fn run_original(module: &Module, f: FuncId, args: &[u32], world: &World) -> Outcome {
    let mut interp = Interpreter::new(module);
    interp.iteration_limit = ITERATION_LIMIT;
    let log = Arc::new(Mutex::new(Vec::new()));
    for decl in &module.externs {
        let (decl, log) = (decl.clone(), log.clone());
        let name = decl.name.clone();
        interp.bind_extern(
            &name,
            Box::new(move |args| {
                log.lock().unwrap().push((decl.name.clone(), args.to_vec()));
                fake_results(&decl.name, args, &decl.results)
            }),
        );
    }
    interp.buffers = module.buffers.iter().map(|b| world.buffer(&b.name)).collect();
    let results = interp.call(f, args).map_err(|t| trap_kind(&t));
    let host_calls = log.lock().unwrap().clone();
    Outcome { results, host_calls, buffers: interp.buffers.clone() }
}

/// The trap without the function names, which differ between the two programs.
fn trap_kind(t: &drs_interp::Trap) -> String {
    let text = format!("{t:?}");
    text.split([' ', '(', '{']).next().unwrap_or_default().to_string()
}

fn add(ty: Ty, a: u32, b: u32) -> u32 {
    match ty {
        Ty::F32 => (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
        _ => a.wrapping_add(b),
    }
}

/// Initial buffer contents, a function of the buffer's name.
pub struct World {
    pub buffer_len: usize,
    pub seed: u64,
}

impl World {
    pub fn buffer(&self, name: &str) -> Vec<u32> {
        let mut rng = Rng::new(self.seed ^ hash_str(name));
        (0..self.buffer_len).map(|_| if rng.below(2) == 0 { rng.f32_bits() } else { rng.below(5) as u32 }).collect()
    }
}

/// Deterministic results of a host function: a hash of its name and arguments, shaped by
/// type (bools 0/1; floats usually in [-1, 1), integers usually small).
pub fn fake_results(name: &str, args: &[u32], results: &[Ty]) -> Vec<u32> {
    let mut h = hash_str(name);
    for &a in args {
        h = mix(h ^ a as u64);
    }
    let mut rng = Rng::new(h);
    results.iter().map(|&t| rng.bits(t)).collect()
}

pub fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// SplitMix64's finaliser.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Floats from every class: special values, small and large magnitudes, raw bits.
    pub fn f32_bits(&mut self) -> u32 {
        const SPECIAL: [f32; 12] = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
            2.5,
        ];
        match self.below(8) {
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize].to_bits(),
            1 => self.next() as u32,
            2 => ((self.next() % 2001) as f32 - 1000.0).to_bits(),
            _ => ((self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0).to_bits(),
        }
    }

    /// Integers: mostly small (counts, indices), some extreme, some raw bits.
    pub fn int_bits(&mut self) -> u32 {
        match self.below(6) {
            0 => [0, 1, u32::MAX, i32::MIN as u32, i32::MAX as u32, 31, 32][self.below(7) as usize],
            1 => self.next() as u32,
            _ => self.below(9) as u32,
        }
    }

    pub fn bits(&mut self, ty: Ty) -> u32 {
        match ty {
            Ty::F32 => self.f32_bits(),
            Ty::I32 | Ty::U32 => self.int_bits(),
            Ty::Bool => self.below(2) as u32,
        }
    }
}

pub fn same(ty: Ty, a: u32, b: u32) -> bool {
    a == b || (ty == Ty::F32 && f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}

fn same_all(types: &[Ty], a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && types.iter().zip(a.iter().zip(b)).all(|(&t, (&x, &y))| same(t, x, y))
}

pub fn show(ty: Ty, bits: u32) -> String {
    match ty {
        Ty::F32 => format!("{:?} ({bits:#x})", f32::from_bits(bits)),
        Ty::I32 => format!("{}i", bits as i32),
        Ty::U32 => format!("{bits}u"),
        Ty::Bool => format!("{}", bits != 0),
    }
}

fn show_all(types: &[Ty], bits: &[u32]) -> String {
    let shown: Vec<String> = types.iter().zip(bits).map(|(&t, &b)| show(t, b)).collect();
    format!("[{}]", shown.join(", "))
}

/// Random arguments for `f`.
pub fn random_args(module: &Module, f: FuncId, rng: &mut Rng) -> Vec<u32> {
    module.function(f).param_types().into_iter().map(|t| rng.bits(t)).collect()
}
