//! Relocatable native code of a module: what [`Jit`] runs, what the kernel cache keeps on disk
//! and what `drsc build` puts into artifacts. It is made once, by Cranelift
//! ([`NativeModule::compile`]) or from an object file of another code generator
//! ([`NativeModule::from_elf_object`], `object.rs`), and loaded any number of times without
//! either ([`NativeModule::load`]): copied into memory mapped for it, relocated, then made
//! read-only and executable (never writable and executable at once).
//!
//! # Code and relocations
//! A function of the module is compiled as its internal version, which other functions call,
//! and as its entry wrapper, which the host calls: an entry that no function calls has no
//! internal version, and a function that is no entry ([`Options::entries`]) no wrapper. All
//! are laid out in one blob, each at its alignment; Cranelift's constant pools are inside each
//! function's code (an object file's data sections follow its code in the blob). What the code
//! refers to outside its own function is a relocation, resolved at load time:
//! - calls between the module's functions: PC-relative (`X86CallPCRel4`, `Arm64Call`) to an
//!   offset in the blob;
//! - host functions: `drs_fmodf` (f32 `Rem`) and the library calls Cranelift emits where the
//!   CPU lacks an instruction (`floorf`, `ceilf`, `truncf`, `nearbyintf` without SSE4.1,
//!   `fmaf` without FMA), all bound to Rust's implementations so that results agree with the
//!   interpreter; called through their absolute address (`Abs8`), since the code is compiled
//!   without PIC. Code from an object file reaches them, `roundf` (Rust's `f32::round`) and
//!   the C library's `memcpy`, `memmove` and `memset` through stubs and slots in the blob.
//!
//! Buffers and extern functions are reached through the per-call [`crate::Context`], so the
//! code holds no other address.
//!
//! # Target
//! Code runs only where it was compiled for: the same target triple (architecture, OS and
//! calling convention) and every CPU feature it was compiled with ([`Target`]). Loading checks
//! both and answers [`Error::TargetMismatch`] otherwise; the caller then recompiles from the
//! IR. x86-64 and AArch64 are supported.
//!
//! # Serialised form
//! [`NativeModule::to_bytes`]: magic `DRSNATV\0`, [`NATIVE_FORMAT_VERSION`] (u32 LE), payload
//! length (u64 LE), BLAKE3 hash of the payload, payload (postcard). A blob with another magic,
//! version, length or hash is rejected ([`Error::InvalidNativeCode`]) before anything is
//! decoded. Native code is trusted like a shared library: the checks catch damage and stale
//! files, not malice.

use crate::abi::*;
use crate::compile::host_isa;
use crate::{fingerprint, Code, CompiledFn, Error, Jit, Lanes, Options};
use cranelift_codegen::binemit::Reloc as ClReloc;
use cranelift_codegen::isa::TargetIsa;
use drs_ir::{BufferDecl, ExternDecl, Module, Ty};
use serde::{Deserialize, Serialize};
use std::ffi::c_void;
use std::fmt;
use std::sync::OnceLock;

/// Version of the serialised form of [`NativeModule`] and of the binary interface its code
/// assumes (`abi.rs`: [`crate::Context`], [`crate::Buffer`], [`crate::ExternEntry`], host
/// symbols). Bumped whenever any of them changes.
pub const NATIVE_FORMAT_VERSION: u32 = 7;
/// Whether this host's architecture has native code (x86-64 and AArch64: the relocations the
/// loader applies).
pub const NATIVE_CODE_SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
const MAGIC: &[u8; 8] = b"DRSNATV\0";
const HEADER_LEN: usize = 8 + 4 + 8 + 32;
/// The most a function may ask to be aligned to (the blob is loaded at a page boundary).
pub(crate) const MAX_ALIGN: u32 = 4096;

/// What native code was compiled for: the target triple and Cranelift's ISA settings (CPU
/// features such as `has_avx2`, detected on the compiling host).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// E.g. `x86_64-unknown-linux-gnu`.
    pub triple: String,
    /// `(setting, value)` in Cranelift's order; booleans are `true` / `false`.
    pub flags: Vec<(String, String)>,
}

impl Target {
    pub(crate) fn of(isa: &dyn TargetIsa) -> Target {
        Target {
            triple: isa.triple().to_string(),
            flags: isa.isa_flags().iter().map(|v| (v.name.to_string(), v.value_string())).collect(),
        }
    }

    /// The target this process compiles for.
    pub fn host() -> Result<&'static Target, Error> {
        static HOST: OnceLock<Target> = OnceLock::new();
        if let Some(t) = HOST.get() {
            return Ok(t);
        }
        let isa = host_isa()?;
        Ok(HOST.get_or_init(|| Target::of(isa)))
    }

    /// The CPU features the code may use (enabled boolean settings, without `has_`).
    pub fn features(&self) -> Vec<&str> {
        self.flags.iter().filter(|(_, v)| v == "true").map(|(n, _)| n.strip_prefix("has_").unwrap_or(n)).collect()
    }

    /// Why code compiled for `self` cannot run on `host`, or `None` if it can: the triples
    /// must be equal, every feature the code uses must be on the host, other settings equal.
    pub fn incompatibility(&self, host: &Target) -> Option<String> {
        if self.triple != host.triple {
            return Some(format!("it is for {}, this host is {}", self.triple, host.triple));
        }
        let mut missing = Vec::new();
        for (name, value) in &self.flags {
            let theirs = host.flags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
            match (value.as_str(), theirs) {
                ("false", _) => {}
                ("true", Some("true")) => {}
                ("true", _) => missing.push(name.strip_prefix("has_").unwrap_or(name).to_string()),
                (v, Some(h)) if v == h => {}
                (v, h) => missing.push(format!("{name}={v} (host: {})", h.unwrap_or("none"))),
            }
        }
        (!missing.is_empty()).then(|| format!("it uses CPU features this host lacks: {}", missing.join(", ")))
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.triple)?;
        for (name, value) in &self.flags {
            match value.as_str() {
                "true" => write!(f, " +{}", name.strip_prefix("has_").unwrap_or(name))?,
                "false" => {}
                v => write!(f, " {name}={v}")?,
            }
        }
        Ok(())
    }
}

/// One IR function in a [`NativeModule`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NativeFn {
    pub name: String,
    pub params: Vec<Ty>,
    pub results: Vec<Ty>,
    /// Offset of the entry wrapper in the code; None for a function compiled only as a
    /// callee ([`Options::entries`]).
    pub entry: Option<u32>,
    /// Offset of the internal version (which other functions call) in the code; None for an
    /// entry that no function calls.
    pub internal: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum RelocKind {
    /// The absolute 64-bit address.
    Abs8,
    /// x86-64: 32-bit PC-relative (`target - address of the field`, the addend makes it
    /// relative to the next instruction).
    X86PCRel4,
    X86CallPCRel4,
    /// AArch64 `bl`: 26-bit word offset.
    Arm64Call,
    /// AArch64 `adrp`: the 4 KiB page offset, 21 bits.
    Aarch64AdrPrelPgHi21,
    /// AArch64 `add`: the low 12 bits of the address.
    Aarch64AddAbsLo12Nc,
}

impl RelocKind {
    /// The relocations the loader applies on this host's architecture.
    pub(crate) fn from_cranelift(kind: ClReloc) -> Option<RelocKind> {
        let k = match kind {
            ClReloc::Abs8 => RelocKind::Abs8,
            ClReloc::X86PCRel4 => RelocKind::X86PCRel4,
            ClReloc::X86CallPCRel4 => RelocKind::X86CallPCRel4,
            ClReloc::Arm64Call => RelocKind::Arm64Call,
            ClReloc::Aarch64AdrPrelPgHi21 => RelocKind::Aarch64AdrPrelPgHi21,
            ClReloc::Aarch64AddAbsLo12Nc => RelocKind::Aarch64AddAbsLo12Nc,
            _ => return None,
        };
        Some(k)
    }

    pub(crate) fn width(self) -> usize {
        match self {
            RelocKind::Abs8 => 8,
            _ => 4,
        }
    }

    #[allow(clippy::match_like_matches_macro)] // it is, once `cfg!` is expanded
    fn for_this_arch(self) -> bool {
        match self {
            RelocKind::Abs8 => true,
            RelocKind::X86PCRel4 | RelocKind::X86CallPCRel4 => cfg!(target_arch = "x86_64"),
            _ => cfg!(target_arch = "aarch64"),
        }
    }
}

/// A host function compiled code calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Symbol {
    Fmodf,
    FmaF32,
    FloorF32,
    CeilF32,
    TruncF32,
    NearestF32,
    FmaF64,
    FloorF64,
    CeilF64,
    TruncF64,
    NearestF64,
    RoundF32,
    Memcpy,
    Memmove,
    Memset,
}

// The C library's, called by code from object files.
extern "C" {
    fn memcpy(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
    fn memmove(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
    fn memset(dest: *mut c_void, c: i32, n: usize) -> *mut c_void;
}

/// C `roundf` (half away from zero), as the interpreter's `Round`.
extern "C" fn drs_roundf(a: f32) -> f32 {
    a.round()
}

impl Symbol {
    fn address(self) -> u64 {
        let p: *const u8 = match self {
            Symbol::Fmodf => drs_fmodf as *const u8,
            Symbol::FmaF32 => drs_fmaf as *const u8,
            Symbol::FloorF32 => drs_floorf as *const u8,
            Symbol::CeilF32 => drs_ceilf as *const u8,
            Symbol::TruncF32 => drs_truncf as *const u8,
            Symbol::NearestF32 => drs_nearbyintf as *const u8,
            Symbol::FmaF64 => drs_fma as *const u8,
            Symbol::FloorF64 => drs_floor as *const u8,
            Symbol::CeilF64 => drs_ceil as *const u8,
            Symbol::TruncF64 => drs_trunc as *const u8,
            Symbol::NearestF64 => drs_nearbyint as *const u8,
            Symbol::RoundF32 => drs_roundf as *const u8,
            Symbol::Memcpy => memcpy as *const u8,
            Symbol::Memmove => memmove as *const u8,
            Symbol::Memset => memset as *const u8,
        };
        p as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum RelocTarget {
    /// An offset in the module's code.
    Code(u32),
    Symbol(Symbol),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Reloc {
    /// Where in the code the field to patch is.
    pub offset: u32,
    pub kind: RelocKind,
    pub target: RelocTarget,
    pub addend: i64,
}

/// The compiled code of a module for one lane width and one [`Target`], with what a [`Jit`]
/// needs to know about its functions, externs and buffers. See the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NativeModule {
    pub(crate) target: Target,
    pub(crate) lanes: Lanes,
    pub(crate) functions: Vec<NativeFn>,
    pub(crate) externs: Vec<ExternDecl>,
    /// For each extern, which of its results compiled code reads
    /// ([`drs_opt::util::extern_results_read`]), so that its host function may skip the
    /// others; empty when that is not known (then every result counts as read).
    pub(crate) extern_reads: Vec<Vec<bool>>,
    pub(crate) buffers: Vec<BufferDecl>,
    /// The largest alignment a function needs (a power of two, at most a page).
    pub(crate) align: u32,
    pub(crate) code: Vec<u8>,
    pub(crate) relocs: Vec<Reloc>,
}

impl NativeModule {
    /// Compiles every function of `module` for this host with Cranelift (the same checks and
    /// the same code as [`Jit::compile_with`] with [`crate::CodeGenerator::CRANELIFT`], which
    /// is this followed by [`NativeModule::load`]).
    pub fn compile(module: &Module, options: &Options) -> Result<NativeModule, Error> {
        if options.lanes == Lanes::X16 {
            return Err(Error::Unsupported {
                function: String::new(),
                message: "Cranelift compiles 1, 4 or 8 lanes; 16 lanes need the LLVM backend".into(),
            });
        }
        crate::check_module(module, options)?;
        Error::catch_codegen_panic("Cranelift", || crate::compile::compile(module, options))
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn lanes(&self) -> Lanes {
        self.lanes
    }

    /// Bytes of machine code (with padding between functions).
    pub fn code_size(&self) -> usize {
        self.code.len()
    }

    /// This code with the record of which extern results it reads, from `module`, the IR it
    /// was compiled from (another code generator's object files do not say).
    pub fn with_extern_reads_of(mut self, module: &Module) -> NativeModule {
        self.extern_reads = drs_opt::util::extern_results_read(module);
        self
    }

    /// The serialised form (see the module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = postcard::to_allocvec(self).expect("native modules contain only serialisable data");
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&NATIVE_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(blake3::hash(&payload).as_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Reads [`NativeModule::to_bytes`]'s output back, checking magic, version, length and
    /// checksum first, then that the contents are consistent.
    pub fn from_bytes(bytes: &[u8]) -> Result<NativeModule, Error> {
        let invalid = |m: String| Error::InvalidNativeCode(m);
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(invalid("not drs native code (wrong magic bytes)".into()));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != NATIVE_FORMAT_VERSION {
            return Err(invalid(format!(
                "native code format version {version}, this drs reads version {NATIVE_FORMAT_VERSION}: recompile it"
            )));
        }
        if bytes.len() < HEADER_LEN {
            return Err(invalid(format!("truncated: {} bytes, the header alone has {HEADER_LEN}", bytes.len())));
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let payload = &bytes[HEADER_LEN..];
        if payload.len() as u64 != len {
            return Err(invalid(format!(
                "truncated: the header announces {len} payload bytes, there are {}",
                payload.len()
            )));
        }
        if blake3::hash(payload).as_bytes() != &bytes[20..HEADER_LEN] {
            return Err(invalid("corrupt: the checksum does not match the contents".into()));
        }
        let native: NativeModule = postcard::from_bytes(payload).map_err(|e| invalid(format!("cannot decode: {e}")))?;
        native.validate()?;
        Ok(native)
    }

    /// Checks that every offset is inside the code, so that loading never writes or jumps
    /// outside it.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let invalid = |m: String| Err(Error::InvalidNativeCode(m));
        let len = self.code.len();
        if u32::try_from(len).is_err() {
            return invalid("code larger than 4 GiB".into());
        }
        if !self.align.is_power_of_two() || self.align > MAX_ALIGN {
            return invalid(format!("alignment {} is not a power of two up to {MAX_ALIGN}", self.align));
        }
        let reads_fit = self.extern_reads.len() == self.externs.len()
            && self.extern_reads.iter().zip(&self.externs).all(|(reads, e)| reads.len() == e.results.len());
        if !(self.extern_reads.is_empty() || reads_fit) {
            return invalid("the results read do not match the externs".into());
        }
        if let Some(f) =
            self.functions.iter().find(|f| [f.entry, f.internal].iter().flatten().any(|&at| at as usize >= len))
        {
            return invalid(format!("the code of `{}` is outside the code", f.name));
        }
        for r in &self.relocs {
            if r.offset as usize + r.kind.width() > len {
                return invalid(format!("relocation at {:#x} is outside the code", r.offset));
            }
            if matches!(r.target, RelocTarget::Code(t) if t as usize > len) {
                return invalid(format!("relocation at {:#x} targets an address outside the code", r.offset));
            }
        }
        Ok(())
    }

    /// Loads the code into executable memory and returns a [`Jit`] that runs it, exactly as
    /// one freshly compiled. Fails with [`Error::TargetMismatch`] if the code was compiled for
    /// another target or CPU features this host lacks.
    pub fn load(&self) -> Result<Jit, Error> {
        let host = Target::host()?;
        if let Some(reason) = self.target.incompatibility(host) {
            return Err(Error::TargetMismatch { code: self.target.to_string(), host: host.to_string(), reason });
        }
        self.validate()?;
        if let Some(r) = self.relocs.iter().find(|r| !r.kind.for_this_arch()) {
            return Err(Error::InvalidNativeCode(format!(
                "relocation {:?} does not exist on this architecture",
                r.kind
            )));
        }
        let memory = |e: std::io::Error| Error::Memory(e.to_string());
        let mut map = memmap2::MmapMut::map_anon(self.code.len().max(1)).map_err(memory)?;
        map[..self.code.len()].copy_from_slice(&self.code);
        let base = map.as_mut_ptr();
        for r in &self.relocs {
            // SAFETY: `validate` checked that the field lies inside the mapping.
            unsafe { relocate(base, r) }.map_err(Error::InvalidNativeCode)?;
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the range is the mapping just written.
        unsafe {
            wasmtime_internal_jit_icache_coherence::clear_cache(base as *const std::ffi::c_void, map.len())
                .map_err(|e| Error::Memory(e.to_string()))?;
        }
        let exec = map.make_exec().map_err(memory)?;
        #[cfg(target_arch = "aarch64")]
        wasmtime_internal_jit_icache_coherence::pipeline_flush_mt().map_err(|e| Error::Memory(e.to_string()))?;
        let base = exec.as_ptr();
        if std::env::var_os("DRS_PERF_MAP").is_some_and(|v| v != "0") {
            self.write_perf_map(base as u64);
        }
        let functions = self
            .functions
            .iter()
            .map(|f| CompiledFn {
                name: f.name.clone(),
                params: f.params.clone(),
                results: f.results.clone(),
                // SAFETY: the entry wrapper was compiled with the C signature of `EntryFn`, and
                // its offset is inside the (now executable) code.
                entry: f
                    .entry
                    .map(|entry| unsafe { std::mem::transmute::<*const u8, EntryFn>(base.add(entry as usize)) }),
            })
            .collect();
        Ok(Jit {
            lanes: self.lanes,
            functions,
            externs: self.externs.clone(),
            extern_reads: self.extern_reads.clone(),
            externs_fingerprint: fingerprint(&self.externs),
            buffers: self.buffers.clone(),
            _code: Code(exec),
        })
    }
}

impl NativeModule {
    /// Appends the functions of the code loaded at `base` to `/tmp/perf-<pid>.map`, where
    /// `perf report` looks up the names of JIT code, and writes the code's bytes (before
    /// relocation: call targets and absolute addresses read as zero) to
    /// `/tmp/drs-jit-<pid>-<base>.bin` (`base` in hex), where `benches/kernel_profile.sh` finds
    /// the instructions its counts and samples fall on. Best effort: a profiling aid, so a
    /// failure to write is reported and otherwise ignored. A function's size runs to the next
    /// function's start (alignment padding included).
    fn write_perf_map(&self, base: u64) {
        use std::io::Write;
        let mut starts: Vec<(u32, String)> = self
            .functions
            .iter()
            .flat_map(|f| {
                let entry = f.entry.map(|entry| (entry, format!("{} (entry)", f.name)));
                f.internal.map(|internal| (internal, f.name.clone())).into_iter().chain(entry)
            })
            .collect();
        starts.sort();
        let mut map = String::new();
        for (i, (start, name)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(self.code.len() as u32, |next| next.0);
            map.push_str(&format!("{:x} {:x} drs:{name}\n", base + u64::from(*start), end - start));
        }
        let path = std::env::temp_dir().join(format!("perf-{}.map", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(map.as_bytes()));
        if let Err(e) = written {
            eprintln!("DRS_PERF_MAP: cannot write {}: {e}", path.display());
        }
        let code_path = std::env::temp_dir().join(format!("drs-jit-{}-{base:x}.bin", std::process::id()));
        if let Err(e) = std::fs::write(&code_path, &self.code) {
            eprintln!("DRS_PERF_MAP: cannot write {}: {e}", code_path.display());
        }
    }
}

/// Patches one relocation into code at `base`.
///
/// # Safety
/// The field (`r.offset`, `r.kind.width()` bytes) lies inside writable memory at `base`.
unsafe fn relocate(base: *mut u8, r: &Reloc) -> Result<(), String> {
    let at = unsafe { base.add(r.offset as usize) };
    let target = match r.target {
        RelocTarget::Code(offset) => base as u64 + offset as u64,
        RelocTarget::Symbol(s) => s.address(),
    }
    .wrapping_add(r.addend as u64);
    let pc = at as u64;
    let out_of_range = || format!("relocation {:?} at {:#x}: the target is out of range", r.kind, r.offset);
    // SAFETY (all writes): the caller guarantees the field is in bounds; unaligned accesses.
    match r.kind {
        RelocKind::Abs8 => unsafe { (at as *mut u64).write_unaligned(target) },
        RelocKind::X86PCRel4 | RelocKind::X86CallPCRel4 => {
            let delta = i32::try_from(target.wrapping_sub(pc) as i64).map_err(|_| out_of_range())?;
            unsafe { (at as *mut i32).write_unaligned(delta) };
        }
        RelocKind::Arm64Call => {
            let delta = target.wrapping_sub(pc) as i64;
            if delta % 4 != 0 || !(-(1 << 27)..(1 << 27)).contains(&delta) {
                return Err(out_of_range());
            }
            let imm26 = ((delta >> 2) as u32) & 0x03ff_ffff;
            let inst = unsafe { (at as *mut u32).read_unaligned() };
            unsafe { (at as *mut u32).write_unaligned(inst | imm26) };
        }
        RelocKind::Aarch64AdrPrelPgHi21 => {
            let page = |x: u64| (x & !0xfff) as i64;
            let delta = page(target) - page(pc);
            if !(-(1i64 << 32)..(1i64 << 32)).contains(&delta) {
                return Err(out_of_range());
            }
            let hi21 = ((delta >> 12) as u32) & 0x1f_ffff;
            let bits = ((hi21 & 0x3) << 29) | ((hi21 & 0x1f_fffc) << 3);
            let inst = unsafe { (at as *mut u32).read_unaligned() };
            unsafe { (at as *mut u32).write_unaligned(inst | bits) };
        }
        RelocKind::Aarch64AddAbsLo12Nc => {
            let imm12 = ((target as u32) & 0xfff) << 10;
            let inst = unsafe { (at as *mut u32).read_unaligned() };
            unsafe { (at as *mut u32).write_unaligned(inst | imm12) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_ir::{BinaryOp, Builder, Function, Signatures};

    /// `g(x, y) = (x % y, floor(x))`, and `f` calls it: a PC-relative call and host symbols.
    fn module() -> Module {
        let mut m = Module::default();
        let mut g = Function::new("g");
        let x = g.add_param("x", Ty::F32);
        let y = g.add_param("y", Ty::F32);
        let sigs = Signatures::of(&m);
        let mut b = Builder::new(&mut g, &sigs);
        let r = b.binary(BinaryOp::Rem, x, y);
        let fl = b.unary(drs_ir::UnaryOp::Floor, x);
        b.finish(vec![r, fl]);
        g.result_types = vec![Ty::F32, Ty::F32];
        let gid = m.add_function(g);
        let mut f = Function::new("f");
        let x = f.add_param("x", Ty::F32);
        let sigs = Signatures::of(&m);
        let mut b = Builder::new(&mut f, &sigs);
        let c = b.f32(0.75);
        let r = b.call(gid, vec![x, c]);
        let s = b.add(r[0], r[1]);
        b.finish(vec![s]);
        f.result_types = vec![Ty::F32];
        m.add_function(f);
        m
    }

    fn run(jit: &Jit, x: f32) -> u32 {
        let mut out = [0u32];
        jit.function("f").unwrap().call(&[x.to_bits()], &mut out, &[], &jit.externs()).unwrap();
        out[0]
    }

    #[test]
    fn calls_and_host_symbols_are_relocated() {
        let native = NativeModule::compile(&module(), &Options::new(Lanes::X1)).unwrap();
        assert!(native.relocs.iter().any(|r| matches!(r.target, RelocTarget::Code(_))), "{:?}", native.relocs);
        assert!(native.relocs.iter().any(|r| r.target == RelocTarget::Symbol(Symbol::Fmodf)), "{:?}", native.relocs);
        let jit = native.load().unwrap();
        for x in [2.3f32, -1.6, 0.0, 7.5] {
            assert_eq!(run(&jit, x), (x % 0.75 + x.floor()).to_bits(), "f({x})");
        }
    }

    #[test]
    fn only_called_functions_have_an_internal_version_and_only_entries_a_wrapper() {
        let versions = |options: &Options| {
            let native = NativeModule::compile(&module(), options).unwrap();
            let jit = native.load().unwrap();
            assert_eq!(run(&jit, 2.3), (2.3f32 % 0.75 + 2.3f32.floor()).to_bits());
            native
                .functions
                .iter()
                .map(|f| (f.name.clone(), f.internal.is_some(), f.entry.is_some()))
                .collect::<Vec<_>>()
        };
        // `g` is called by `f`; nothing calls `f`.
        assert_eq!(versions(&Options::new(Lanes::X1)), [("g".to_string(), true, true), ("f".to_string(), false, true)]);
        assert_eq!(
            versions(&Options::new(Lanes::X1).entry("f")),
            [("g".to_string(), true, false), ("f".to_string(), false, true)]
        );
    }

    #[test]
    fn code_for_another_target_is_rejected() {
        let native = NativeModule::compile(&module(), &Options::new(Lanes::X4)).unwrap();
        let host = Target::host().unwrap();
        assert_eq!(native.target(), host);

        let mut other_arch = native.clone();
        other_arch.target.triple = if cfg!(target_arch = "x86_64") {
            "aarch64-unknown-linux-gnu".into()
        } else {
            "x86_64-unknown-linux-gnu".into()
        };
        let reloaded = NativeModule::from_bytes(&other_arch.to_bytes()).unwrap();
        let e = reloaded.load().err().expect("another architecture is rejected");
        assert!(matches!(&e, Error::TargetMismatch { .. }), "{e}");
        assert!(e.to_string().contains("recompile"), "{e}");

        // A CPU feature the host lacks.
        let mut more = native.clone();
        more.target.flags.push(("has_future_extension".into(), "true".into()));
        let e = more.load().err().expect("a missing feature is rejected");
        assert!(e.to_string().contains("future_extension"), "{e}");
        if let Some(flag) = host.flags.iter().position(|(_, v)| v == "false") {
            let mut more = native.clone();
            more.target.flags[flag].1 = "true".into();
            assert!(matches!(more.load(), Err(Error::TargetMismatch { .. })));
        }

        // Code that uses fewer features than the host has runs.
        if let Some(flag) = host.flags.iter().position(|(_, v)| v == "true") {
            let mut fewer = native.clone();
            fewer.target.flags[flag].1 = "false".into();
            let jit = fewer.load().unwrap();
            let mut out = [0u32; 4];
            let x: Vec<u32> = [1.5f32, 2.0, -3.25, 0.5].iter().map(|x| x.to_bits()).collect();
            jit.function("f").unwrap().call(&x, &mut out, &[], &jit.externs()).unwrap();
            assert_eq!(out[2], ((-3.25f32) % 0.75 + (-3.25f32).floor()).to_bits());
        }
    }

    /// Code for an x86-64 CPU without SSE4.1 and FMA calls Rust's `floorf`, `fmaf` etc.
    /// (library calls relocated to absolute addresses), selects lanes without `blendvps`, runs
    /// on this host (it needs fewer features) and computes the same bits as the host's code.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn library_calls_of_a_baseline_cpu_are_relocated() {
        use drs_ir::{CmpOp, UnaryOp};
        let off = ["has_sse41", "has_sse42", "has_fma", "has_avx", "has_avx2", "has_avx512f", "has_avx512vl"];
        let off: Vec<(&str, &str)> = off.iter().map(|f| (*f, "false")).collect();
        let isa = crate::compile::build_isa(&off).unwrap();
        let mut m = Module::default();
        let mut f = Function::new("f");
        let x = f.add_param("x", Ty::F32);
        let y = f.add_param("y", Ty::F32);
        let sigs = Signatures::of(&m);
        let mut b = Builder::new(&mut f, &sigs);
        let mut outs = Vec::new();
        for op in [UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Trunc, UnaryOp::Round] {
            outs.push(b.unary(op, x));
        }
        let fma = b.fma(x, y, x);
        outs.push(fma);
        let less = b.cmp(CmpOp::Lt, x, y);
        outs.push(b.select(less, x, fma));
        b.finish(outs);
        f.result_types = vec![Ty::F32; 6];
        m.add_function(f);
        let xs = [-2.5f32, -0.5, 0.49999997, 1.5, 2.5, 8388609.0, -0.0, f32::INFINITY, 1e-40];
        for lanes in Lanes::ALL {
            let options = Options::new(lanes);
            let base = crate::compile::compile_for(&*isa, &m, &options).unwrap();
            assert!(base.relocs.iter().any(|r| r.target == RelocTarget::Symbol(Symbol::FloorF32)), "{lanes:?}");
            assert!(base.relocs.iter().any(|r| r.target == RelocTarget::Symbol(Symbol::FmaF32)), "{lanes:?}");
            assert!(!base.target.features().contains(&"sse41"));
            let base = NativeModule::from_bytes(&base.to_bytes()).unwrap().load().unwrap();
            let host = NativeModule::compile(&m, &options).unwrap().load().unwrap();
            let n = lanes.count();
            for chunk in xs.chunks(n) {
                let mut args = vec![0u32; 2 * n];
                for (l, &x) in chunk.iter().enumerate() {
                    args[l] = x.to_bits();
                    args[n + l] = (x * 0.75 + 0.1).to_bits();
                }
                let active = (1u32 << chunk.len()) - 1;
                let (mut r1, mut r2) = (vec![0u32; 6 * n], vec![0u32; 6 * n]);
                for (jit, r) in [(&base, &mut r1), (&host, &mut r2)] {
                    jit.function("f").unwrap().call_masked(active, &args, r, &[], &jit.externs()).unwrap();
                }
                for (l, &x) in chunk.iter().enumerate() {
                    let y = x * 0.75 + 0.1;
                    let fma = x.mul_add(y, x);
                    let want = [x.floor(), x.ceil(), x.trunc(), x.round(), fma, if x < y { x } else { fma }];
                    let want = want.map(f32::to_bits);
                    let got: Vec<u32> = (0..6).map(|k| r1[k * n + l]).collect();
                    assert_eq!(got, want, "{lanes:?} x = {x}");
                    let host: Vec<u32> = (0..6).map(|k| r2[k * n + l]).collect();
                    assert_eq!(got, host, "{lanes:?} x = {x}");
                }
            }
        }
    }

    #[test]
    fn inconsistent_code_is_rejected_before_loading() {
        let native = NativeModule::compile(&module(), &Options::new(Lanes::X1)).unwrap();
        let mut bad = native.clone();
        bad.functions[0].entry = Some(bad.code.len() as u32);
        assert!(matches!(NativeModule::from_bytes(&bad.to_bytes()), Err(Error::InvalidNativeCode(_))));
        let mut bad = native.clone();
        bad.relocs[0].offset = bad.code.len() as u32 - 2;
        assert!(matches!(bad.load(), Err(Error::InvalidNativeCode(_))));
        let mut bad = native.clone();
        bad.align = 3;
        assert!(matches!(bad.load(), Err(Error::InvalidNativeCode(_))));
    }
}
