//! The binary interface between compiled code and the host: the per-call [`Context`], the buffer
//! and extern descriptor tables it points to, and the trampolines that run host closures.
//!
//! Everything here is `#[repr(C)]` with the field offsets the code generator bakes in (checked
//! by the unit tests at the bottom).

use crate::Error;
use std::cell::RefCell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU32;

/// The C signature every host function is called through, once per call site and lane group.
/// `args` holds `lanes` u32 per extern parameter (`args[param * lanes + lane]`: f32 bits, two's
/// complement integers, bools as 0/1) and the callee writes `results[result * lanes + lane]`
/// for the lanes whose bit is set in `active`; the results of other lanes are ignored. `user`
/// is the pointer bound with the function. Scalar code passes `lanes` 1 and `active` 1.
pub type RawExternFn =
    unsafe extern "C" fn(args: *const u32, results: *mut u32, user: *mut c_void, lanes: u32, active: u32);

/// The C signature of an entry wrapper (see [`crate::Kernel::entry`]).
///
/// `args` is laid out `[param][lane]`: for group `g` (of `W` lanes) parameter `p` of lane `l` is
/// at `args[p * ctx.stride + g * W + l]`; `results` likewise. Bools are 0/1.
pub type EntryFn = unsafe extern "C" fn(args: *const u32, results: *mut u32, ctx: *const Context);

/// One buffer of the module as compiled code sees it: `len` u32 elements at `ptr`.
///
/// Built from shared atomics so that many threads may run kernels over the same buffers at
/// once; compiled code reads and writes elements with plain (relaxed) 32-bit accesses and does
/// [`drs_ir::Op::AtomicAdd`] with real atomic read-modify-writes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Buffer<'a> {
    ptr: *const AtomicU32,
    len: usize,
    _borrow: PhantomData<&'a [AtomicU32]>,
}

// SAFETY: a `Buffer` is a shared borrow of `[AtomicU32]`, which is `Send + Sync`.
unsafe impl Send for Buffer<'_> {}
unsafe impl Sync for Buffer<'_> {}

/// What an empty buffer points at: compiled code clamps out-of-range indices before it loads
/// (to 0 for an empty buffer) and then discards the value, so every buffer must have one
/// readable element. Vector loads take this one's value for index 0 as it is, so it must stay
/// 0, the value of an out-of-range element (compiled code never writes it: stores and atomic
/// adds test the index against `len`).
static EMPTY: AtomicU32 = AtomicU32::new(0);

impl<'a> Buffer<'a> {
    pub fn new(data: &'a [AtomicU32]) -> Buffer<'a> {
        let ptr = if data.is_empty() { &EMPTY as *const AtomicU32 } else { data.as_ptr() };
        Buffer { ptr, len: data.len(), _borrow: PhantomData }
    }

    /// Borrows exclusively owned bits as a buffer (the borrow ends when the buffer is dropped).
    pub fn from_mut(data: &'a mut [u32]) -> Buffer<'a> {
        // SAFETY: `AtomicU32` has the size and bit validity of `u32` and, on every target with
        // 32-bit atomics, its alignment too (checked below); the exclusive borrow guarantees no
        // other access for `'a`.
        assert_eq!(std::mem::align_of::<AtomicU32>(), std::mem::align_of::<u32>());
        let atomics = unsafe { &*(data as *mut [u32] as *const [AtomicU32]) };
        Buffer::new(atomics)
    }

    /// Borrows f32 data as a buffer of its bits.
    pub fn from_f32_mut(data: &'a mut [f32]) -> Buffer<'a> {
        // SAFETY: f32 and u32 have the same size and alignment and every bit pattern is valid
        // for both.
        let bits = unsafe { &mut *(data as *mut [f32] as *mut [u32]) };
        Buffer::from_mut(bits)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One entry of the extern table: the function and the `user` pointer passed to it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ExternEntry {
    pub func: RawExternFn,
    pub user: *mut c_void,
}

/// The per-call context passed to an entry wrapper.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Context {
    /// `Buffer` descriptors in the order of [`drs_ir::Module::buffers`]; each must point at
    /// least at one readable, 4-byte aligned element (also when `len` is 0, and then one that
    /// reads 0, as [`Buffer::new`] makes them).
    pub buffers: *const Buffer<'static>,
    /// Extern entries in the order of [`drs_ir::Module::externs`].
    pub externs: *const ExternEntry,
    /// Number of `W`-lane groups to run.
    pub groups: u64,
    /// Elements between consecutive parameters (and results) in `args` / `results`; at least
    /// `groups * W`.
    pub stride: u64,
    /// Lanes of each group that run (bit `l` for lane `l`); inactive lanes have no side effects
    /// and unspecified results. Must be 1 in scalar mode.
    pub active: u32,
}

pub(crate) const CTX_BUFFERS: i32 = 0;
pub(crate) const CTX_EXTERNS: i32 = 8;
pub(crate) const CTX_GROUPS: i32 = 16;
pub(crate) const CTX_STRIDE: i32 = 24;
pub(crate) const CTX_ACTIVE: i32 = 32;
pub(crate) const BUFFER_SIZE: i64 = 16;
pub(crate) const BUFFER_LEN: i32 = 8;
pub(crate) const EXTERN_SIZE: i64 = 16;
pub(crate) const EXTERN_USER: i32 = 8;

/// The host side of one extern: its name, arity and (when bound) closure.
pub(crate) struct HostSlot {
    pub name: String,
    pub params: usize,
    pub results: usize,
    pub func: Option<HostClosure>,
}

pub(crate) type HostClosure = Box<dyn Fn(&mut LaneGroup) + Send + Sync>;

/// The lanes of one host call: arguments and results by (index, lane), and which lanes run.
/// Results start at zero; those of inactive lanes are ignored.
pub struct LaneGroup<'a> {
    args: &'a [u32],
    results: &'a mut [u32],
    lanes: usize,
    active: u32,
    /// Whether every result has its value or zero. Zeroing is left until a closure writes
    /// single results ([`LaneGroup::set`]) or returns having written none, because
    /// [`LaneGroup::map_lanes`] writes every result itself.
    defined: bool,
}

impl LaneGroup<'_> {
    /// Lanes in the group: 1 for a scalar call, else 4, 8 or 16.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// The lanes that run (bit `l` for lane `l`); the others' results are ignored.
    pub fn active(&self) -> u32 {
        self.active
    }

    /// The lanes the call runs for, in increasing order.
    pub fn active_lanes(&self) -> impl Iterator<Item = usize> + use<> {
        let active = self.active;
        (0..self.lanes).filter(move |l| active & (1 << l) != 0)
    }

    /// Parameter `param` of `lane` as u32 bits.
    #[inline]
    pub fn arg(&self, param: usize, lane: usize) -> u32 {
        self.args[param * self.lanes + lane]
    }

    /// Parameter `param` of every lane, lane 0 first, as u32 bits (inactive lanes' are
    /// unspecified).
    #[inline]
    pub fn arg_lanes(&self, param: usize) -> &[u32] {
        &self.args[param * self.lanes..(param + 1) * self.lanes]
    }

    /// Sets result `result` of `lane` to `bits`.
    #[inline]
    pub fn set(&mut self, result: usize, lane: usize, bits: u32) {
        self.define();
        self.results[result * self.lanes + lane] = bits;
    }

    fn define(&mut self) {
        if !self.defined {
            self.results.fill(0);
            self.defined = true;
        }
    }

    /// Runs `f` for each active lane, in increasing order, with that lane's first `P` arguments,
    /// and makes the `R` values it returns results `0..R` of the lane; every other result is
    /// zero. The lanes of a result sit side by side and the lane and argument counts are
    /// constants here, so the reads and writes need no index arithmetic or bounds checks: for
    /// externs with many results (a surface interaction has 33) this is several times cheaper
    /// than [`LaneGroup::set`].
    ///
    /// # Panics
    /// If the extern has fewer than `P` parameters or `R` results, or the group another lane
    /// count than compiled code uses (1, 4, 8 or 16); the trampoline reports either as
    /// [`Error::ExternPanicked`].
    pub fn map_lanes<const P: usize, const R: usize>(&mut self, f: impl FnMut([u32; P]) -> [u32; R]) {
        match self.lanes {
            1 => self.map_lanes_of::<1, P, R>(f),
            4 => self.map_lanes_of::<4, P, R>(f),
            8 => self.map_lanes_of::<8, P, R>(f),
            16 => self.map_lanes_of::<16, P, R>(f),
            lanes => panic!("a group of {lanes} lanes: compiled code calls with 1, 4, 8 or 16"),
        }
    }

    fn map_lanes_of<const L: usize, const P: usize, const R: usize>(
        &mut self,
        mut f: impl FnMut([u32; P]) -> [u32; R],
    ) {
        let active = self.active;
        assert!(P * L <= self.args.len(), "{P} arguments read, the extern has {}", self.args.len() / L);
        let args = &self.args[..P * L];
        let (columns, _) = self.results.as_chunks_mut::<L>();
        assert!(R <= columns.len(), "{R} results written, the extern has {}", columns.len());
        let (written, others) = columns.split_at_mut(R);
        for lane in 0..L {
            let values =
                if active & (1 << lane) != 0 { f(std::array::from_fn(|p| args[p * L + lane])) } else { [0; R] };
            for (column, bits) in written.iter_mut().zip(values) {
                column[lane] = bits;
            }
        }
        others.fill([0; L]);
        self.defined = true;
    }

    /// Lends `write` the result columns, one column of `L` lanes per result, for host functions
    /// that compute the whole group with vector instructions and write it in place. The columns
    /// hold unspecified values when `write` starts: it must set every result of every active
    /// lane (inactive lanes' are ignored).
    ///
    /// # Panics
    /// If the group does not have `L` lanes or the extern not `R` results; the trampoline
    /// reports either as [`Error::ExternPanicked`].
    #[inline]
    pub fn write_results<const L: usize, const R: usize>(&mut self, write: impl FnOnce(&mut [[u32; L]; R])) {
        assert_eq!(self.lanes, L, "write_results for {L} lanes in a group of {}", self.lanes);
        let results = self.results.len() / L;
        let (columns, _) = self.results.as_chunks_mut::<L>();
        let columns: &mut [[u32; L]; R] =
            columns.try_into().unwrap_or_else(|_| panic!("write_results writes {R} results, the extern has {results}"));
        write(columns);
        self.defined = true;
    }
}

/// A per-lane host closure as a group closure: each active lane's arguments are gathered into
/// a slice and its results scattered back.
pub(crate) fn per_lane(
    params: usize,
    results: usize,
    f: impl Fn(&[u32], &mut [u32]) + Send + Sync + 'static,
) -> HostClosure {
    Box::new(move |group: &mut LaneGroup| {
        let mut scratch = LaneScratch::new(params + results);
        let (lane_args, rest) = scratch.split(params);
        let lane_results = &mut rest[..results];
        for lane in group.active_lanes() {
            for (p, a) in lane_args.iter_mut().enumerate() {
                *a = group.arg(p, lane);
            }
            lane_results.fill(0);
            f(lane_args, lane_results);
            for (r, &x) in lane_results.iter().enumerate() {
                group.set(r, lane, x);
            }
        }
    })
}

thread_local! {
    /// The first error a host call reported during the current kernel call on this thread.
    static HOST_ERROR: RefCell<Option<Error>> = const { RefCell::new(None) };
}

pub(crate) fn take_host_error() -> Option<Error> {
    HOST_ERROR.with(|e| e.borrow_mut().take())
}

fn report(error: Error) {
    HOST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        if e.is_none() {
            *e = Some(error);
        }
    });
}

/// Calls the closure of a [`HostSlot`] (`user`) for a lane group; reports unbound externs and
/// panics instead of unwinding into compiled code.
pub(crate) unsafe extern "C" fn host_trampoline(
    args: *const u32,
    results: *mut u32,
    user: *mut c_void,
    lanes: u32,
    active: u32,
) {
    // SAFETY: `user` is the `HostSlot` this entry was created with, kept alive by `Externs`,
    // and compiled code passes `params * lanes` readable and `results * lanes` writable u32s.
    let slot = unsafe { &*(user as *const HostSlot) };
    let lanes = lanes as usize;
    let args = unsafe { std::slice::from_raw_parts(args, slot.params * lanes) };
    let results = unsafe { std::slice::from_raw_parts_mut(results, slot.results * lanes) };
    let Some(f) = &slot.func else {
        results.fill(0);
        report(Error::UnboundExtern(slot.name.clone()));
        return;
    };
    let mut group = LaneGroup { args, results, lanes, active, defined: false };
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut group))).is_err() {
        group.results.fill(0);
        report(Error::ExternPanicked(slot.name.clone()));
    } else {
        group.define();
    }
}

/// One lane's arguments and results: on the stack for the usual sizes.
enum LaneScratch {
    Inline([u32; 16]),
    Heap(Vec<u32>),
}

impl LaneScratch {
    fn new(len: usize) -> LaneScratch {
        if len <= 16 {
            LaneScratch::Inline([0; 16])
        } else {
            LaneScratch::Heap(vec![0; len])
        }
    }

    #[inline]
    fn split(&mut self, at: usize) -> (&mut [u32], &mut [u32]) {
        let all = match self {
            LaneScratch::Inline(a) => &mut a[..],
            LaneScratch::Heap(v) => &mut v[..],
        };
        all.split_at_mut(at)
    }
}

/// `fmodf` with Rust's (and the interpreter's) semantics, for f32 `Rem`.
pub(crate) extern "C" fn drs_fmodf(a: f32, b: f32) -> f32 {
    a % b
}

// Library calls Cranelift may emit when the host lacks an instruction (FMA, SSE4.1 rounding).
// Bound to Rust's implementations so that they agree with the interpreter.
pub(crate) extern "C" fn drs_fmaf(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}
pub(crate) extern "C" fn drs_floorf(a: f32) -> f32 {
    a.floor()
}
pub(crate) extern "C" fn drs_ceilf(a: f32) -> f32 {
    a.ceil()
}
pub(crate) extern "C" fn drs_truncf(a: f32) -> f32 {
    a.trunc()
}
pub(crate) extern "C" fn drs_nearbyintf(a: f32) -> f32 {
    a.round_ties_even()
}
pub(crate) extern "C" fn drs_fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}
pub(crate) extern "C" fn drs_floor(a: f64) -> f64 {
    a.floor()
}
pub(crate) extern "C" fn drs_ceil(a: f64) -> f64 {
    a.ceil()
}
pub(crate) extern "C" fn drs_trunc(a: f64) -> f64 {
    a.trunc()
}
pub(crate) extern "C" fn drs_nearbyint(a: f64) -> f64 {
    a.round_ties_even()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layouts_match_the_generated_code() {
        assert_eq!(offset_of!(Context, buffers) as i32, CTX_BUFFERS);
        assert_eq!(offset_of!(Context, externs) as i32, CTX_EXTERNS);
        assert_eq!(offset_of!(Context, groups) as i32, CTX_GROUPS);
        assert_eq!(offset_of!(Context, stride) as i32, CTX_STRIDE);
        assert_eq!(offset_of!(Context, active) as i32, CTX_ACTIVE);
        assert_eq!(std::mem::size_of::<Buffer>() as i64, BUFFER_SIZE);
        assert_eq!(offset_of!(Buffer, len) as i32, BUFFER_LEN);
        assert_eq!(std::mem::size_of::<ExternEntry>() as i64, EXTERN_SIZE);
        assert_eq!(offset_of!(ExternEntry, user) as i32, EXTERN_USER);
    }
}
