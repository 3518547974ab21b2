//! Sample streams: where kernels draw their random numbers.
//!
//! A `Sampler` handle names one stream. The streams of a batch's samples have handles `0..n`,
//! one per lane of the batch; the streams that `clone` and `split` derive come after them. The
//! host keeps them all, in this thread's [`HostStreams`], and draws for kernels through the
//! host functions [`HOST_SAMPLER_FUNCTIONS`]. For the independent sampler the batch's
//! generators (xoshiro128**, [`drs_film::Xoshiro128`]) are also in the buffer
//! [`SAMPLE_STREAMS`], and compiled code draws from them itself: the linker writes the
//! `Sampler` methods as IR that draws from the buffer for handles below its count and calls
//! the host for the others ([`sampler_function`]), and the kernel keeps its own sample's stream
//! in values rather than memory ([`keep_stream_in_values`]). (The stratified sampler's strata
//! need f64 arithmetic and hashing, so its streams stay on the host.)
//!
//! A host call costs compiled code the saving and restoring of every live vector. Drawing in
//! compiled code instead made a render 2–4% faster with xoshiro128**, and no faster with
//! PCG32, whose 64-bit multiply and rotation by a varying amount take dozens of 32-bit lane
//! operations (docs/benchmarks.md, session 42).
//!
//! Either way the numbers are those of [`SampleStream`], bit for bit, so where a stream is
//! drawn never changes an image. The host functions never touch the buffer (the IR's rule for
//! host functions): a stream derived from one in the buffer is made from its words, passed as
//! arguments.

use std::cell::RefCell;
use std::collections::HashMap;

use drs_film::{SampleStream, Sampler, SamplerKind};
use drs_ir::{
    BinaryOp, Builder, CmpOp, Const, ExternDecl, FuncId, Function, Inst, Module, Op, Region, Signatures, Ty, Value,
};
use drs_opt::util::{rename_uses, walk_insts, walk_insts_mut, Subst};
use drs_opt::{inline_into, Candidate};

use crate::link::{check_signature, u32_buffer, LinkError};

/// The buffer (u32) of the streams compiled code draws from: their count `n`, then
/// [`STREAM_WORDS`] words per stream, handle by handle: its generator's state
/// ([`SampleStream::words`]). `::` keeps the name
/// apart from the parameter buffers (`{plugin}.{param}`).
pub const SAMPLE_STREAMS: &str = "scene::sample_streams";

/// Words per stream in [`SAMPLE_STREAMS`].
pub const STREAM_WORDS: usize = 4;

/// The `Sampler` methods of `stdlib/runtime.drs`, which the linker writes as IR.
pub const SAMPLER_FUNCTIONS: [&str; 4] = ["Sampler::next_1d", "Sampler::next_2d", "Sampler::clone", "Sampler::split"];

/// The host functions behind them: the four methods on a host stream (by handle), then
/// `clone` and `split` of a buffer stream (from its four words; the new stream is the host's).
pub const HOST_SAMPLER_FUNCTIONS: [&str; 6] = [
    "Sampler::host_next_1d",
    "Sampler::host_next_2d",
    "Sampler::host_clone",
    "Sampler::host_split",
    "Sampler::clone_words",
    "Sampler::split_words",
];

/// 2^-24: the step between the floats a stream yields.
const UNIT: f32 = 1.0 / (1u32 << 24) as f32;

/// The IR of the `Sampler` method `decl` (one of [`SAMPLER_FUNCTIONS`]): for a handle below the
/// buffer's stream count, the draw (or the copy of the words to the host) in compiled code;
/// otherwise the host function on the handle. Adds the buffer and the host functions to
/// `module` when it has them not yet.
pub(crate) fn sampler_function(module: &mut Module, decl: &ExternDecl) -> Result<Function, LinkError> {
    use Ty::{F32, U32};
    let (method, results): (&str, &[Ty]) = match decl.name.as_str() {
        "Sampler::next_1d" => ("next_1d", &[F32]),
        "Sampler::next_2d" => ("next_2d", &[F32, F32]),
        "Sampler::clone" => ("clone", &[U32]),
        _ => ("split", &[U32]),
    };
    check_signature(decl, &[U32], results)?;
    let table = u32_buffer(module, SAMPLE_STREAMS);
    let on_handle = host_function(module, &format!("Sampler::host_{method}"), &[U32], results);
    let from_words = match method {
        "clone" | "split" => Some(host_function(module, &format!("Sampler::{method}_words"), &[U32; 4], &[U32])),
        _ => None,
    };

    let mut f = Function::new(decl.name.clone());
    let handle = f.add_param("sampler", U32);
    f.result_types = results.to_vec();
    let signatures = Signatures::of(module);
    let mut b = Builder::new(&mut f, &signatures);
    let zero = b.u32(0);
    let count = b.load(table, zero);
    let in_buffer = b.cmp(CmpOp::Lt, handle, count);
    let results = b.if_(
        in_buffer,
        |b| {
            // Below the count, a batch's lanes at most, so the index does not wrap.
            let words = b.u32(STREAM_WORDS as u32);
            let offset = b.mul(handle, words);
            let one = b.u32(1);
            let first = b.add(offset, one);
            let at: [Value; 4] = std::array::from_fn(|w| {
                let w = b.u32(w as u32);
                b.add(first, w)
            });
            let loaded = at.map(|i| b.load(table, i));
            let draw = |b: &mut Builder, state: [Value; 4]| {
                let (bits, state) = xoshiro128(b, state);
                let top = b.u32(8);
                let top = b.binary(BinaryOp::Shr, bits, top);
                let top = b.convert(F32, top);
                let unit = b.f32(UNIT);
                (b.mul(top, unit), state)
            };
            let (draws, state) = match method {
                "next_1d" => {
                    let (u, state) = draw(b, loaded);
                    (vec![u], state)
                }
                "next_2d" => {
                    let (u, state) = draw(b, loaded);
                    let (v, state) = draw(b, state);
                    (vec![u, v], state)
                }
                _ => return b.call_extern(from_words.expect("clone and split have one"), loaded.to_vec()),
            };
            for (i, word) in at.into_iter().zip(state) {
                b.store(table, i, word);
            }
            draws
        },
        |b| b.call_extern(on_handle, vec![handle]),
    );
    b.finish(results);
    Ok(f)
}

/// The index of host function `name` in `module`, declared with this signature if it is not.
fn host_function(module: &mut Module, name: &str, params: &[Ty], results: &[Ty]) -> u32 {
    let index = module.externs.iter().position(|e| e.name == name).unwrap_or_else(|| {
        module.externs.push(ExternDecl { name: name.to_owned(), params: params.to_vec(), results: results.to_vec() });
        module.externs.len() - 1
    });
    index as u32
}

/// xoshiro128**'s output for `s` and its next state.
fn xoshiro128(b: &mut Builder, s: [Value; 4]) -> (Value, [Value; 4]) {
    let rotl = |b: &mut Builder, x: Value, n: u32| {
        let (l, r) = (b.u32(n), b.u32(32 - n));
        let hi = b.binary(BinaryOp::Shl, x, l);
        let lo = b.binary(BinaryOp::Shr, x, r);
        b.binary(BinaryOp::Or, hi, lo)
    };
    let five = b.u32(5);
    let x = b.mul(s[1], five);
    let x = rotl(b, x, 7);
    let nine = b.u32(9);
    let result = b.mul(x, nine);
    let t = b.binary(BinaryOp::Shl, s[1], nine);
    let s2 = b.binary(BinaryOp::Xor, s[2], s[0]);
    let s3 = b.binary(BinaryOp::Xor, s[3], s[1]);
    let s1 = b.binary(BinaryOp::Xor, s[1], s2);
    let s0 = b.binary(BinaryOp::Xor, s[0], s3);
    let s2 = b.binary(BinaryOp::Xor, s2, t);
    let s3 = rotl(b, s3, 11);
    (result, [s0, s1, s2, s3])
}

/// Draws the random numbers of a kernel `module` prepared for a backend (entry function 0)
/// in compiled code where that pays: inlines the `Sampler` methods ([`sampler_function`])
/// where they are called, and keeps the entry's sample stream in values instead of the buffer.
/// Its draws' loads of the stream's words become the words' latest values, its stores go, and
/// the words are carried through the `if`s and loops that draw. (Drawing through memory cost
/// more than the host calls the draws replace: each loads and stores its words lane by lane,
/// and a kernel that stores to a buffer loses the refilling of its lanes, drs-cranelift's
/// `refill.rs`; a path tracer rendered 20% slower.) The methods are inlined only now, after
/// the kernel's own inlining, which would otherwise count their code against the functions
/// that draw and keep more of those out of line.
///
/// The stream stays in values when every access of the buffer is in the entry and is either of
/// the count or of a word of the stream of the entry's own `Sampler` parameter, so that the
/// words are the sample's alone: no other lane and no call sees them. The words are not
/// stored back at the end, because no one reads a batch's buffer after the kernel call (the
/// render loop seeds every batch afresh, the reverse pass restores the streams it saved).
/// Otherwise (radiative backpropagation's replay draws in a function of its own) the kernel
/// draws every number on the host, as if the buffer held no stream: the host has them all
/// ([`BatchStreams`]).
pub(crate) fn keep_stream_in_values(module: &mut Module) {
    inline_sampler_functions(module);
    let Some(buffer) = module.buffers.iter().position(|b| b.name == SAMPLE_STREAMS) else {
        return;
    };
    let buffer = buffer as u32;
    let accesses = |op: &Op| match op {
        Op::Load { buffer: b, .. } | Op::Store { buffer: b, .. } | Op::AtomicAdd { buffer: b, .. } => *b == buffer,
        _ => false,
    };
    let elsewhere = module.functions.iter().skip(1).any(|f| {
        let mut found = false;
        walk_insts(&f.body, &mut |inst| found |= accesses(&inst.op));
        found
    });
    let plan = module.functions.first().filter(|_| !elsewhere).and_then(|entry| StreamWords::of(entry, buffer));
    match plan {
        Some(plan) => plan.keep_in_values(&mut module.functions[0]),
        None => draw_on_host(module, buffer),
    }
    // The count's loads merge and leave the loops now that nothing stores to the buffer, and
    // what only computed indices or lay behind a count of 0 goes.
    drs_opt::fold_constants(module);
    drs_opt::licm(module);
    drs_opt::gvn(module);
    drs_opt::dce(module);
}

/// Inlines the `Sampler` methods wherever `module`'s functions call them, and drops them.
fn inline_sampler_functions(module: &mut Module) {
    let candidates: Vec<Candidate> = (0..module.functions.len() as u32)
        .map(FuncId)
        .filter(|&id| id != FuncId(0) && SAMPLER_FUNCTIONS.contains(&module.function(id).name.as_str()))
        .map(|id| Candidate { id, function: module.function(id).clone(), always: true })
        .collect();
    if candidates.is_empty() {
        return;
    }
    for f in &mut module.functions {
        inline_into(f, &candidates, 0);
    }
    *module = drs_opt::extract(module, &drs_opt::reachable_from(module, FuncId(0)));
}

/// Makes every function of `module` read the count of streams in `buffer` as 0, so that
/// every draw goes to the host; the stores to the buffer, behind that count, go.
fn draw_on_host(module: &mut Module, buffer: u32) {
    for f in &mut module.functions {
        walk_insts_mut(&mut f.body, &mut |inst| {
            if matches!(inst.op, Op::Load { buffer: b, .. } if b == buffer) {
                inst.op = Op::Const(Const::U32(0));
            }
        });
        remove_stores(&mut f.body, buffer);
    }
}

fn remove_stores(region: &mut Region, buffer: u32) {
    region.insts.retain(|inst| !matches!(inst.op, Op::Store { buffer: b, .. } if b == buffer));
    for inst in &mut region.insts {
        match &mut inst.op {
            Op::If { then, els, .. } => {
                remove_stores(then, buffer);
                remove_stores(els, buffer);
            }
            Op::Loop { body, .. } => remove_stores(body, buffer),
            _ => {}
        }
    }
}

impl StreamWords {
    /// Rewrites `entry` (whose accesses these are) to keep the stream in values: the words
    /// are loaded once, first.
    fn keep_in_values(&self, entry: &mut Function) {
        let buffer = self.buffer;
        let mut words = [Value(0); STREAM_WORDS];
        let mut prologue = Vec::new();
        for (w, word) in words.iter_mut().enumerate() {
            let mut push = |f: &mut Function, op: Op| {
                let v = f.new_value(Ty::U32);
                prologue.push(Inst { results: vec![v], op });
                v
            };
            let four = push(entry, Op::Const(Const::U32(STREAM_WORDS as u32)));
            let offset = push(entry, Op::Binary(BinaryOp::Mul, self.handle, four));
            let at = push(entry, Op::Const(Const::U32(1 + w as u32)));
            let index = push(entry, Op::Binary(BinaryOp::Add, offset, at));
            *word = push(entry, Op::Load { buffer, index });
        }
        let zero = entry.new_value(Ty::U32);
        prologue.push(Inst { results: vec![zero], op: Op::Const(Const::U32(0)) });
        let mut body = std::mem::take(&mut entry.body);
        let mut subst = Subst::new(entry.value_types.len());
        self.rewrite(entry, &mut body, &mut words, &mut subst, zero);
        prologue.append(&mut body.insts);
        body.insts = prologue;
        rename_uses(&mut body, &mut |v| subst.get(v));
        entry.body = body;
    }
}

/// Where a function accesses the stream of its `Sampler` parameter `handle`: each load or
/// store of the buffer `buffer` at `index`, by the word it reads (`index` is `handle * 4 + 1 +
/// word`, or 0 for the count).
struct StreamWords {
    buffer: u32,
    handle: Value,
    /// The word of each index value (by value number) that addresses one.
    word_at: HashMap<Value, usize>,
    /// The values the count's loads define.
    counts: Vec<Value>,
}

impl StreamWords {
    /// The accesses of `f`, if every access of `buffer` is a load of the count or a load or
    /// store of a word of one parameter's stream.
    fn of(f: &Function, buffer: u32) -> Option<StreamWords> {
        let mut defs: HashMap<Value, &Op> = HashMap::new();
        walk_insts(&f.body, &mut |inst| {
            if let [v] = inst.results[..] {
                defs.insert(v, &inst.op);
            }
        });
        let constant = |v: Value| match defs.get(&v) {
            Some(Op::Const(c)) => Some(c.bits()),
            _ => None,
        };
        // `index` as `handle * 4 + offset`, or as a constant (with no handle).
        let linear = |index: Value| -> Option<(Option<Value>, u32)> {
            let (mut v, mut offset) = (index, 0u32);
            loop {
                if let Some(c) = constant(v) {
                    return Some((None, offset.checked_add(c)?));
                }
                match defs.get(&v)? {
                    Op::Binary(BinaryOp::Add, a, b) => {
                        let (rest, c) = match (constant(*a), constant(*b)) {
                            (_, Some(c)) => (*a, c),
                            (Some(c), _) => (*b, c),
                            _ => return None,
                        };
                        offset = offset.checked_add(c)?;
                        v = rest;
                    }
                    Op::Binary(BinaryOp::Mul, a, b) => {
                        let handle = match (constant(*a), constant(*b)) {
                            (_, Some(4)) => *a,
                            (Some(4), _) => *b,
                            _ => return None,
                        };
                        return Some((Some(handle), offset));
                    }
                    _ => return None,
                }
            }
        };
        let params: Vec<Value> = f.params.iter().map(|p| p.value).collect();
        let (mut handle, mut word_at, mut counts, mut ok) = (None, HashMap::new(), Vec::new(), true);
        walk_insts(&f.body, &mut |inst| {
            let (index, store) = match inst.op {
                Op::Load { buffer: b, index } if b == buffer => (index, false),
                Op::Store { buffer: b, index, .. } if b == buffer => (index, true),
                Op::AtomicAdd { buffer: b, .. } if b == buffer => {
                    ok = false;
                    return;
                }
                _ => return,
            };
            match linear(index) {
                Some((None, 0)) if !store => counts.extend(inst.results.first()),
                Some((Some(h), offset)) if params.contains(&h) && (1..=STREAM_WORDS as u32).contains(&offset) => {
                    ok &= *handle.get_or_insert(h) == h;
                    word_at.insert(index, offset as usize - 1);
                }
                _ => ok = false,
            }
        });
        Some(StreamWords { buffer, handle: handle.filter(|_| ok)?, word_at, counts })
    }

    /// Rewrites `region` with `words` the words' values on entry, and leaves them at their
    /// values on exit: loads of a word become its value, stores set it, and `if`s and loops
    /// yield or carry the words they change.
    fn rewrite(
        &self,
        f: &mut Function,
        region: &mut Region,
        words: &mut [Value; STREAM_WORDS],
        subst: &mut Subst,
        zero: Value,
    ) {
        let word = |op: &Op| match op {
            Op::Load { buffer, index } | Op::Store { buffer, index, .. } if *buffer == self.buffer => {
                self.word_at.get(index).copied()
            }
            _ => None,
        };
        let insts = std::mem::take(&mut region.insts);
        for mut inst in insts {
            let at = word(&inst.op);
            match (&mut inst.op, at) {
                (Op::Load { .. }, Some(w)) => {
                    subst.set(inst.results[0], words[w]);
                    continue;
                }
                (Op::Store { value, .. }, Some(w)) => {
                    words[w] = *value;
                    continue;
                }
                // Whether the entry's stream is in the buffer: the stream of a batch's sample is
                // whenever the buffer holds streams, so a condition the same in every lane.
                (Op::Cmp(CmpOp::Lt, handle, count), _) if *handle == self.handle && self.counts.contains(count) => {
                    inst.op = Op::Cmp(CmpOp::Ne, *count, zero);
                }
                (Op::If { then, els, .. }, _) => {
                    let (mut then_words, mut else_words) = (*words, *words);
                    self.rewrite(f, then, &mut then_words, subst, zero);
                    self.rewrite(f, els, &mut else_words, subst, zero);
                    for w in 0..STREAM_WORDS {
                        if then_words[w] != else_words[w] {
                            then.yields.push(then_words[w]);
                            els.yields.push(else_words[w]);
                            words[w] = f.new_value(Ty::U32);
                            inst.results.push(words[w]);
                        }
                    }
                }
                (Op::Loop { init, body, .. }, _) => {
                    let stores = self.stores_in(body);
                    let mut body_words = *words;
                    for w in (0..STREAM_WORDS).filter(|&w| stores[w]) {
                        init.push(words[w]);
                        body_words[w] = f.new_value(Ty::U32);
                        body.params.push(body_words[w]);
                    }
                    self.rewrite(f, body, &mut body_words, subst, zero);
                    for w in (0..STREAM_WORDS).filter(|&w| stores[w]) {
                        body.yields.push(body_words[w]);
                        words[w] = f.new_value(Ty::U32);
                        inst.results.push(words[w]);
                    }
                }
                _ => {}
            }
            region.insts.push(inst);
        }
    }

    /// Which words `region` stores to.
    fn stores_in(&self, region: &Region) -> [bool; STREAM_WORDS] {
        let mut stores = [false; STREAM_WORDS];
        walk_insts(region, &mut |inst| {
            if let Op::Store { buffer, index, .. } = &inst.op {
                if let Some(&w) = self.word_at.get(index).filter(|_| *buffer == self.buffer) {
                    stores[w] = true;
                }
            }
        });
        stores
    }
}

/// The streams of the current thread's batch, handle by handle, and those that `clone` and
/// `split` derive after them. The host draws from all of them in kernels that draw on the
/// host, and from the derived ones in kernels that draw from the buffer.
#[derive(Clone, Debug, Default)]
pub(crate) struct HostStreams {
    pub streams: Vec<SampleStream>,
}

impl HostStreams {
    /// The stream of `handle`.
    pub fn get_mut(&mut self, handle: u32) -> Option<&mut SampleStream> {
        self.streams.get_mut(handle as usize)
    }

    /// Adds `stream` and returns its handle.
    pub fn push(&mut self, stream: SampleStream) -> u32 {
        self.streams.push(stream);
        self.streams.len() as u32 - 1
    }

    /// Adds the stream that `derive` makes from the stream of `handle` and returns its handle
    /// (`handle` itself when it names no stream).
    pub fn derive(&mut self, handle: u32, derive: impl Fn(&SampleStream) -> SampleStream) -> u32 {
        match self.get_mut(handle).map(|s| derive(s)) {
            Some(stream) => self.push(stream),
            None => handle,
        }
    }
}

thread_local! {
    /// The host's streams of the batch the current thread runs.
    static HOST_STREAMS: RefCell<HostStreams> = RefCell::new(HostStreams::default());
}

/// Runs `f` with this thread's host streams.
pub(crate) fn with_host_streams<R>(f: impl FnOnce(&mut HostStreams) -> R) -> R {
    HOST_STREAMS.with(|s| f(&mut s.borrow_mut()))
}

/// The streams of a batch of `n` samples, added in handle order: to this thread's host
/// streams, and an independent sampler's also to `buffer` (the contents of
/// [`SAMPLE_STREAMS`]), whatever kernels the batch runs.
pub(crate) struct BatchStreams<'a> {
    buffer: &'a mut Vec<u32>,
    in_buffer: bool,
}

impl<'a> BatchStreams<'a> {
    /// Starts the streams of a batch of `n` samples of `sampler`.
    pub fn start(buffer: &'a mut Vec<u32>, n: usize, sampler: &Sampler) -> BatchStreams<'a> {
        let in_buffer = sampler.kind() == SamplerKind::Independent;
        buffer.clear();
        buffer.reserve(1 + n * STREAM_WORDS);
        buffer.push(if in_buffer { n as u32 } else { 0 });
        with_host_streams(|host| host.streams.clear());
        BatchStreams { buffer, in_buffer }
    }

    /// Adds the stream of the next sample.
    pub fn add(&mut self, stream: SampleStream) {
        if let Some(words) = stream.words().filter(|_| self.in_buffer) {
            self.buffer.extend_from_slice(&words);
        }
        with_host_streams(|host| host.push(stream));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_interp::Interpreter;

    /// The `Sampler` methods of `stdlib/runtime.drs`, as the linker writes them, in `module`.
    fn sampler_functions(module: &mut Module) -> [FuncId; 4] {
        let decl = |name: &str, results: &[Ty]| ExternDecl {
            name: name.to_owned(),
            params: vec![Ty::U32],
            results: results.to_vec(),
        };
        let decls = [
            decl("Sampler::next_1d", &[Ty::F32]),
            decl("Sampler::next_2d", &[Ty::F32, Ty::F32]),
            decl("Sampler::clone", &[Ty::U32]),
            decl("Sampler::split", &[Ty::U32]),
        ];
        decls.map(|decl| sampler_function(module, &decl).map(|f| module.add_function(f)).unwrap())
    }

    /// A kernel that draws from stream `sampler` (or, with `from_clone`, from a clone of it)
    /// in a loop of `n` iterations, one draw behind an `if`, prepared as the runtime prepares
    /// kernels: it returns the sum of its draws.
    fn drawing_kernel(from_clone: bool) -> Module {
        let mut module = Module::default();
        let [next_1d, next_2d, clone, _] = sampler_functions(&mut module);
        let mut f = Function::new("draws");
        let sampler = f.add_param("sampler", Ty::U32);
        let n = f.add_param("n", Ty::U32);
        f.result_types = vec![Ty::F32];
        let signatures = Signatures::of(&module);
        let mut b = Builder::new(&mut f, &signatures);
        let stream = if from_clone { b.call(clone, vec![sampler])[0] } else { sampler };
        let (zero, zero_f) = (b.u32(0), b.f32(0.0));
        let result = b.loop_(vec![zero, zero_f], |b, carried| {
            let (i, sum) = (carried[0], carried[1]);
            let u = b.call(next_1d, vec![stream])[0];
            let sum = b.add(sum, u);
            let half = b.f32(0.5);
            let high = b.cmp(CmpOp::Gt, u, half);
            let sum = b.if_(
                high,
                |b| {
                    let pair = b.call(next_2d, vec![stream]);
                    vec![b.add(sum, pair[1])]
                },
                |_| vec![sum],
            )[0];
            let one = b.u32(1);
            let i = b.add(i, one);
            (b.cmp(CmpOp::Lt, i, n), vec![i, sum])
        });
        let last = b.call(next_1d, vec![stream])[0];
        let total = b.add(result[1], last);
        b.finish(vec![total]);
        let entry = module.add_function(f);
        drs_opt::prepare_kernel(&module, drs_opt::OptLevel::Default, entry)
    }

    fn stream_accesses(module: &Module) -> (usize, usize) {
        let (mut loads, mut stores) = (0, 0);
        for f in &module.functions {
            walk_insts(&f.body, &mut |inst| match inst.op {
                Op::Load { .. } => loads += 1,
                Op::Store { .. } => stores += 1,
                _ => {}
            });
        }
        (loads, stores)
    }

    /// Host functions for `interp` that draw from `streams` as the runtime's do.
    fn bind_host_streams(interp: &mut Interpreter, streams: &std::sync::Arc<std::sync::Mutex<HostStreams>>) {
        let with = |streams: &std::sync::Arc<std::sync::Mutex<HostStreams>>| {
            let streams = streams.clone();
            move |f: &dyn Fn(&mut HostStreams) -> Vec<u32>| f(&mut streams.lock().unwrap())
        };
        let host = with(streams);
        interp.bind_extern(
            "Sampler::host_next_1d",
            Box::new(move |a| host(&|st| vec![st.get_mut(a[0]).map_or(0.0, |s| s.next_1d()).to_bits()])),
        );
        let host = with(streams);
        interp.bind_extern(
            "Sampler::host_next_2d",
            Box::new(move |a| {
                host(&|st| st.get_mut(a[0]).map_or([0.0; 2], |s| s.next_2d()).map(f32::to_bits).to_vec())
            }),
        );
        let host = with(streams);
        interp.bind_extern(
            "Sampler::host_clone",
            Box::new(move |a| host(&|st| vec![st.derive(a[0], SampleStream::clone)])),
        );
        let host = with(streams);
        interp.bind_extern(
            "Sampler::clone_words",
            Box::new(move |a| host(&|st| vec![st.push(SampleStream::from_words([a[0], a[1], a[2], a[3]]))])),
        );
    }

    /// Kept in values, the entry's stream gives the same draws as in the buffer, with no
    /// store left and the words loaded once. A kernel that draws from a derived stream draws
    /// everything on the host instead, as it does with a count of 0, with no access of the
    /// buffer left.
    #[test]
    fn the_entry_stream_is_kept_in_values_or_drawn_on_the_host() {
        let sampler = drs_film::Sampler::independent(1, 9).unwrap();
        let streams: Vec<SampleStream> = (0..3).map(|pixel| sampler.stream(pixel, 0, 0)).collect();
        let words: Vec<u32> = streams.iter().flat_map(|s| s.words().unwrap()).collect();
        let run = |module: &Module, count: u32, h: u32, n: u32| {
            let host = std::sync::Arc::new(std::sync::Mutex::new(HostStreams { streams: streams.clone() }));
            let mut interp = Interpreter::new(module);
            if let Some(b) = module.buffers.iter().position(|b| b.name == SAMPLE_STREAMS) {
                interp.buffers[b] = [count].into_iter().chain(words.iter().copied()).collect();
            }
            bind_host_streams(&mut interp, &host);
            interp.call(FuncId(0), &[h, n]).unwrap()
        };
        for from_clone in [false, true] {
            let original = drawing_kernel(from_clone);
            let mut rewritten = original.clone();
            keep_stream_in_values(&mut rewritten);
            let (loads, stores) = stream_accesses(&rewritten);
            assert_eq!(stores, 0, "no store is left");
            if from_clone {
                assert_eq!(loads, 0, "the derived stream's kernel draws on the host");
            } else {
                assert!(loads <= 1 + STREAM_WORDS, "the count and each word loaded once: {loads}");
            }
            for (h, n) in [(0, 1), (1, 5), (2, 40)] {
                let from_buffer = run(&original, 3, h, n);
                assert_eq!(run(&rewritten, 3, h, n), from_buffer, "stream {h}, {n} iterations");
                assert_eq!(run(&original, 0, h, n), from_buffer, "the host draws the same numbers");
            }
        }
    }

    /// The IR of the `Sampler` methods, run by the interpreter (the reference for every
    /// backend), draws what `SampleStream` draws from the buffer's streams, bit for bit, and
    /// leaves other handles to the host functions.
    #[test]
    fn sampler_functions_draw_the_streams_numbers() {
        let mut module = Module::default();
        let [next_1d, next_2d, clone, split] = sampler_functions(&mut module);
        let decl = ExternDecl { name: "Sampler::next_1d".into(), params: vec![Ty::U32], results: vec![Ty::U32] };
        assert!(sampler_function(&mut module, &decl).is_err());
        assert_eq!(module.buffers.len(), 1, "one buffer for all four");
        let mut names: Vec<&str> = module.externs.iter().map(|e| e.name.as_str()).collect();
        names.sort_unstable();
        let mut expected = HOST_SAMPLER_FUNCTIONS;
        expected.sort_unstable();
        assert_eq!(names, expected);

        let sampler = drs_film::Sampler::independent(1, 5).unwrap();
        let mut streams: Vec<SampleStream> = (0..3).map(|pixel| sampler.stream(pixel, 0, 0)).collect();
        let mut interp = Interpreter::new(&module);
        let mut buffer = vec![streams.len() as u32];
        for stream in &streams {
            buffer.extend(stream.words().unwrap());
        }
        interp.buffers[0] = buffer;
        // Host functions that say which handle and words they were given.
        interp.bind_extern("Sampler::host_next_1d", Box::new(|args| vec![(args[0] as f32).to_bits()]));
        interp.bind_extern("Sampler::host_next_2d", Box::new(|args| vec![(args[0] as f32).to_bits(), 0]));
        interp.bind_extern("Sampler::host_clone", Box::new(|args| vec![args[0].wrapping_add(100)]));
        interp.bind_extern("Sampler::host_split", Box::new(|args| vec![args[0].wrapping_add(200)]));
        let words = |args: &[u32]| SampleStream::from_words([args[0], args[1], args[2], args[3]]);
        interp.bind_extern("Sampler::clone_words", Box::new(move |args| vec![words(args).next_1d().to_bits()]));
        interp.bind_extern("Sampler::split_words", Box::new(move |args| vec![words(args).split().next_1d().to_bits()]));

        for round in 0..50 {
            for (h, stream) in streams.iter_mut().enumerate() {
                let h = h as u32;
                // The words clone and split pass on are the stream's as it is now.
                assert_eq!(interp.call(clone, &[h]).unwrap(), [stream.clone().next_1d().to_bits()]);
                assert_eq!(interp.call(split, &[h]).unwrap(), [stream.split().next_1d().to_bits()]);
                if round % 2 == 0 {
                    assert_eq!(interp.call(next_1d, &[h]).unwrap(), [stream.next_1d().to_bits()]);
                } else {
                    assert_eq!(interp.call(next_2d, &[h]).unwrap(), stream.next_2d().map(f32::to_bits));
                }
            }
        }
        for h in [3, 7, u32::MAX] {
            assert_eq!(interp.call(next_1d, &[h]).unwrap(), [(h as f32).to_bits()]);
            assert_eq!(interp.call(next_2d, &[h]).unwrap(), [(h as f32).to_bits(), 0]);
            assert_eq!(interp.call(clone, &[h]).unwrap(), [h.wrapping_add(100)]);
            assert_eq!(interp.call(split, &[h]).unwrap(), [h.wrapping_add(200)]);
        }
    }
}
