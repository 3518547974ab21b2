//! The kernel cache: compiled modules by content hash, in memory and on disk.
//!
//! [`KernelCache::get_or_compile`] hashes what determines the code ([`CacheKey`]: the module,
//! the options, this crate's version and build, the host [`Target`]) and answers, in order:
//! 1. the [`Jit`] already in memory for that key (the same `Arc`);
//! 2. the native code in the disk cache, loaded without compiling;
//! 3. a fresh compilation, which is then written to the disk cache.
//!
//! [`KernelCache::get_or_prepare`] does the same for a module that an optimisation pipeline
//! makes from a source module, keyed on the source: a hit skips the pipeline as well.
//!
//! Several threads asking for the same key at once compile it once: the others wait for it.
//! Errors are not cached (the next request compiles again).
//!
//! # On disk
//! One file per key, `<dir>/<key in hex>.bin`, where `<dir>` is `$DRS_CACHE_DIR/kernels` if
//! `DRS_CACHE_DIR` is set, else `drs/kernels` under the user's cache directory
//! (`~/.cache/drs/kernels` on Linux); `DRS_NO_DISK_CACHE=1` turns the disk cache off. A file
//! is: magic `DRSKERN\0`, [`CACHE_FORMAT_VERSION`] (u32 LE), the key (32 bytes), payload length
//! (u64 LE), BLAKE3 hash of the payload, payload ([`NativeModule::to_bytes`]). It is written
//! to a temporary file in the same directory and renamed into place, so a reader sees a whole
//! file or none; a file that fails any check (another version or key, truncated, corrupt, for
//! another target) is ignored, recompiled and overwritten. Nothing is ever deleted: remove
//! the directory to reclaim space.

use crate::native::{NativeModule, Target, NATIVE_FORMAT_VERSION};
use crate::{Error, Jit, Options};
use drs_ir::Module;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Version of the cache files' layout; part of every key.
pub const CACHE_FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"DRSKERN\0";
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 32;

/// A hash of everything that determines a module's compiled code.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

/// `options` as keys hash them: every field changes the code, so all are in (the destructuring
/// fails to compile when a field is added and not hashed), the code generator as its name and
/// version.
fn options_bytes(options: &Options) -> Vec<u8> {
    let Options { lanes, uniform_params, entries, generator, private_buffers } = options;
    postcard::to_allocvec(&(lanes, uniform_params, entries, private_buffers, generator.name, (generator.version)()))
        .expect("serialisable")
}

impl CacheKey {
    /// BLAKE3 of: the cache and native code format versions, this crate's version and build
    /// (a hash of its sources and of the workspace's `Cargo.lock`, so a changed backend or
    /// Cranelift never reuses old code), the host target (triple, CPU features), the options
    /// (with the code generator's name and version) and the module (postcard-encoded).
    pub fn of(module: &Module, options: &Options) -> Result<CacheKey, Error> {
        let mut h = CacheKey::hasher(b"module")?;
        h.update(&options_bytes(options));
        h.update(&postcard::to_allocvec(module).expect("modules are serialisable"));
        Ok(CacheKey(*h.finalize().as_bytes()))
    }

    /// The key of the module that the preparation named `preparation` makes from `source` (see
    /// [`KernelCache::get_or_prepare`]), compiled with `options`.
    pub fn of_prepared(source: &Module, preparation: &[u8], options: &Options) -> Result<CacheKey, Error> {
        let mut h = CacheKey::hasher(b"prepared")?;
        h.update(&(preparation.len() as u64).to_le_bytes());
        h.update(preparation);
        h.update(&options_bytes(options));
        h.update(&postcard::to_allocvec(source).expect("modules are serialisable"));
        Ok(CacheKey(*h.finalize().as_bytes()))
    }

    /// A hasher that already has the versions and the host target, for keys of `kind`.
    pub(crate) fn hasher(kind: &[u8]) -> Result<blake3::Hasher, Error> {
        let target = Target::host()?;
        let mut h = blake3::Hasher::new();
        h.update(b"drs-cranelift\0");
        h.update(&(kind.len() as u64).to_le_bytes());
        h.update(kind);
        h.update(&CACHE_FORMAT_VERSION.to_le_bytes());
        h.update(&NATIVE_FORMAT_VERSION.to_le_bytes());
        h.update(
            &postcard::to_allocvec(&(env!("CARGO_PKG_VERSION"), env!("DRS_CRANELIFT_BUILD_ID"))).expect("strings"),
        );
        h.update(&postcard::to_allocvec(target).expect("serialisable"));
        Ok(h)
    }

    pub(crate) fn from_hasher(h: blake3::Hasher) -> CacheKey {
        CacheKey(*h.finalize().as_bytes())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

/// Counters of what a [`KernelCache`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Modules compiled by Cranelift.
    pub compiled: u64,
    /// Requests answered from memory (including those that waited for another thread).
    pub memory_hits: u64,
    /// Requests answered by loading a file of the disk cache.
    pub disk_hits: u64,
    /// Files of the disk cache that were there but unusable (ignored and overwritten).
    pub disk_rejected: u64,
    /// Files written.
    pub disk_writes: u64,
    /// Files that could not be read or written (the request still succeeded).
    pub disk_errors: u64,
}

#[derive(Default)]
struct Counters {
    compiled: AtomicU64,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
    disk_rejected: AtomicU64,
    disk_writes: AtomicU64,
    disk_errors: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

type Slot = Arc<OnceLock<Result<Arc<Jit>, Error>>>;

/// Compiled modules by [`CacheKey`]; see the module documentation. Kept in memory until
/// [`KernelCache::clear`] (or the cache is dropped).
pub struct KernelCache {
    dir: Option<PathBuf>,
    slots: Mutex<HashMap<CacheKey, Slot>>,
    counters: Counters,
}

impl Default for KernelCache {
    fn default() -> Self {
        KernelCache::new()
    }
}

impl KernelCache {
    /// A cache with the disk directory from the environment ([`KernelCache::default_dir`]).
    pub fn new() -> KernelCache {
        KernelCache::with_disk(KernelCache::default_dir())
    }

    /// A cache whose files are directly in `dir` (created when first written).
    pub fn in_dir(dir: impl Into<PathBuf>) -> KernelCache {
        KernelCache::with_disk(Some(dir.into()))
    }

    /// A cache without disk files.
    pub fn memory_only() -> KernelCache {
        KernelCache::with_disk(None)
    }

    fn with_disk(dir: Option<PathBuf>) -> KernelCache {
        KernelCache { dir, slots: Mutex::new(HashMap::new()), counters: Counters::default() }
    }

    /// The process-wide cache (made with [`KernelCache::new`] when first used).
    pub fn global() -> &'static KernelCache {
        static GLOBAL: OnceLock<KernelCache> = OnceLock::new();
        GLOBAL.get_or_init(KernelCache::new)
    }

    /// Where the disk cache is by default: `None` if `DRS_NO_DISK_CACHE` is set (to anything
    /// but `0` or nothing), else `$DRS_CACHE_DIR/kernels`, else `<user cache dir>/drs/kernels`
    /// (`None` if the platform has none).
    pub fn default_dir() -> Option<PathBuf> {
        if std::env::var_os("DRS_NO_DISK_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
            return None;
        }
        match std::env::var_os("DRS_CACHE_DIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join("kernels")),
            _ => dirs::cache_dir().map(|d| d.join("drs").join("kernels")),
        }
    }

    /// The directory of the disk cache, if it has one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The file that holds `key`'s code, if the cache has a disk directory.
    pub fn path_of(&self, key: &CacheKey) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{}.bin", key.to_hex())))
    }

    pub fn stats(&self) -> CacheStats {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        CacheStats {
            compiled: get(&c.compiled),
            memory_hits: get(&c.memory_hits),
            disk_hits: get(&c.disk_hits),
            disk_rejected: get(&c.disk_rejected),
            disk_writes: get(&c.disk_writes),
            disk_errors: get(&c.disk_errors),
        }
    }

    /// Forgets every module held in memory (the disk cache stays; `Arc`s handed out stay
    /// valid).
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Slot>> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts
        // and removals), so a poisoned lock is still usable.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The compiled `module`: from memory, else from the disk cache, else compiled (and
    /// written to the disk cache). The same key always gives the same `Arc` while it is in
    /// memory.
    pub fn get_or_compile(&self, module: &Module, options: &Options) -> Result<Arc<Jit>, Error> {
        let key = CacheKey::of(module, options)?;
        self.get_or_insert_with(key, || self.load_or_compile(&key, options, || Cow::Borrowed(module)))
    }

    /// The compiled form of `prepare(source)`, where `prepare` is a pipeline of passes that
    /// `preparation` names together with its settings (an optimisation level, say): like
    /// [`KernelCache::get_or_compile`] of that module, but keyed on `source` and `preparation`
    /// ([`CacheKey::of_prepared`]), so that code found in memory or on disk costs no run of
    /// `prepare`, which can take longer than loading the code. The key's build ID covers
    /// drs-opt's sources, so a changed optimiser never reuses old code; a pipeline from
    /// elsewhere must put its own version into `preparation`.
    pub fn get_or_prepare(
        &self,
        source: &Module,
        preparation: &[u8],
        options: &Options,
        prepare: impl FnOnce(&Module) -> Module,
    ) -> Result<Arc<Jit>, Error> {
        let key = CacheKey::of_prepared(source, preparation, options)?;
        self.get_or_insert_with(key, || self.load_or_compile(&key, options, || Cow::Owned(prepare(source))))
    }

    /// The entry for `key`, made by `make` by exactly one of the threads that ask at once.
    pub(crate) fn get_or_insert_with(
        &self,
        key: CacheKey,
        make: impl FnOnce() -> Result<Arc<Jit>, Error>,
    ) -> Result<Arc<Jit>, Error> {
        let slot = self.lock().entry(key).or_default().clone();
        let mut made = false;
        let result = slot
            .get_or_init(|| {
                made = true;
                make()
            })
            .clone();
        if !made {
            bump(&self.counters.memory_hits);
        } else if result.is_err() {
            let mut slots = self.lock();
            if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                slots.remove(&key);
            }
        }
        result
    }

    /// The code of `key` from the disk cache, else compiled from the module `make` returns.
    fn load_or_compile<'m>(
        &self,
        key: &CacheKey,
        options: &Options,
        make: impl FnOnce() -> Cow<'m, Module>,
    ) -> Result<Arc<Jit>, Error> {
        let path = self.path_of(key);
        if let Some(path) = &path {
            match read_file(path, key) {
                Ok(None) => {}
                Ok(Some(jit)) => {
                    bump(&self.counters.disk_hits);
                    return Ok(Arc::new(jit));
                }
                Err(_) => bump(&self.counters.disk_rejected),
            }
        }
        let native = (options.generator.compile)(&make(), options)?;
        bump(&self.counters.compiled);
        let jit = native.load()?;
        if let Some(path) = &path {
            match write_file(path, key, &native) {
                Ok(()) => bump(&self.counters.disk_writes),
                Err(_) => bump(&self.counters.disk_errors),
            }
        }
        Ok(Arc::new(jit))
    }
}

/// Loads the code in a cache file: `Ok(None)` if there is no file, an error if it is unusable.
fn read_file(path: &Path, key: &CacheKey) -> Result<Option<Jit>, Error> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::InvalidNativeCode(e.to_string())),
    };
    let bad = |m: &str| Err(Error::InvalidNativeCode(format!("cache file {}: {m}", path.display())));
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return bad("not a cache file");
    }
    if bytes[8..12] != CACHE_FORMAT_VERSION.to_le_bytes() {
        return bad("another format version");
    }
    if &bytes[12..44] != key.as_bytes() {
        return bad("another key");
    }
    let len = u64::from_le_bytes(bytes[44..52].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != len {
        return bad("truncated");
    }
    if blake3::hash(payload).as_bytes() != &bytes[52..HEADER_LEN] {
        return bad("corrupt");
    }
    NativeModule::from_bytes(payload)?.load().map(Some)
}

/// Writes a cache file atomically (a temporary file in the same directory, then renamed).
fn write_file(path: &Path, key: &CacheKey, native: &NativeModule) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().expect("cache files are in a directory");
    std::fs::create_dir_all(dir)?;
    let payload = native.to_bytes();
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
    bytes.extend_from_slice(&payload);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{}.{}.{n}.tmp", key.to_hex(), std::process::id()));
    let result =
        std::fs::File::create(&tmp).and_then(|mut f| f.write_all(&bytes)).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
