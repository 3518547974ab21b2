//! The kernel cache: one compilation per key, in memory and on disk, damaged files
//! recompiled. Every test uses its own directory (never the user's cache).

use drs_cranelift::{Buffer, CacheKey, Error, Jit, KernelCache, Lanes, Options};
use drs_ir::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};

/// An empty scratch directory for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("drs-kernel-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `f(x) = x * k + 1` (a different module for each `k`).
fn module(k: f32) -> Module {
    let mut m = Module::default();
    let sigs = Signatures::of(&m);
    let mut f = Function::new("f");
    let x = f.add_param("x", Ty::F32);
    let mut b = Builder::new(&mut f, &sigs);
    let k = b.f32(k);
    let one = b.f32(1.0);
    let y = b.fma(x, k, one);
    b.finish(vec![y]);
    f.result_types = vec![Ty::F32];
    m.add_function(f);
    m
}

fn run(jit: &Jit, x: f32) -> f32 {
    let n = jit.lanes().count();
    let mut out = vec![0u32; n];
    jit.function("f").unwrap().call(&vec![x.to_bits(); n], &mut out, &[], &jit.externs()).unwrap();
    f32::from_bits(out[0])
}

#[test]
fn the_same_key_gives_the_same_arc() {
    let cache = KernelCache::memory_only();
    assert!(cache.dir().is_none());
    let a = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X4)).unwrap();
    let b = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X4)).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(run(&a, 3.0), 7.0);
    // Other lanes, options or module: other code.
    let c = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X8)).unwrap();
    let d = cache.get_or_compile(&module(3.0), &Options::new(Lanes::X4)).unwrap();
    let e = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X4).uniform("f", vec![true])).unwrap();
    assert!(!Arc::ptr_eq(&a, &c) && !Arc::ptr_eq(&a, &d) && !Arc::ptr_eq(&a, &e));
    assert_eq!(run(&d, 3.0), 10.0);
    let stats = cache.stats();
    assert_eq!((stats.compiled, stats.memory_hits, stats.disk_writes), (4, 1, 0));
    // Keys are stable and differ with their inputs.
    let key = |k, lanes| CacheKey::of(&module(k), &Options::new(lanes)).unwrap();
    assert_eq!(key(2.0, Lanes::X4), key(2.0, Lanes::X4));
    assert_ne!(key(2.0, Lanes::X4), key(2.0, Lanes::X1));
    assert_ne!(key(2.0, Lanes::X4), key(2.5, Lanes::X4));
    let private = CacheKey::of(&module(2.0), &Options::new(Lanes::X4).private_buffers(true)).unwrap();
    assert_ne!(key(2.0, Lanes::X4), private, "private buffers compile other code");
    cache.clear();
    let f = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X4)).unwrap();
    assert!(!Arc::ptr_eq(&a, &f));
    assert_eq!(run(&a, 1.0), run(&f, 1.0));
}

#[test]
fn concurrent_requests_compile_once() {
    let dir = scratch("concurrent");
    let cache = Arc::new(KernelCache::in_dir(&dir));
    let threads = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (cache, barrier) = (cache.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                cache.get_or_compile(&module(5.0), &Options::new(Lanes::X8)).unwrap()
            })
        })
        .collect();
    let jits: Vec<Arc<Jit>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(jits.iter().all(|j| Arc::ptr_eq(j, &jits[0])));
    let stats = cache.stats();
    assert_eq!(stats.compiled, 1, "{stats:?}");
    assert_eq!(stats.memory_hits, threads as u64 - 1, "{stats:?}");
    assert_eq!(stats.disk_writes, 1, "{stats:?}");
    assert_eq!(run(&jits[3], 2.0), 11.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn disk_cache_is_used_and_damaged_files_are_recompiled() {
    let dir = scratch("disk");
    let options = Options::new(Lanes::X4);
    let m = module(1.5);
    let key = CacheKey::of(&m, &options).unwrap();

    let first = KernelCache::in_dir(&dir);
    let fresh = first.get_or_compile(&m, &options).unwrap();
    let path = first.path_of(&key).unwrap();
    assert_eq!(path, dir.join(format!("{}.bin", key.to_hex())));
    assert!(path.exists());
    assert_eq!(first.stats().compiled, 1);
    assert_eq!(first.stats().disk_writes, 1);
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);

    // Another cache (another process, say) loads it without compiling.
    let second = KernelCache::in_dir(&dir);
    let loaded = second.get_or_compile(&m, &options).unwrap();
    assert_eq!(second.stats().compiled, 0);
    assert_eq!(second.stats().disk_hits, 1);
    for x in [0.0f32, -1.25, 3.5, f32::INFINITY] {
        assert_eq!(run(&fresh, x).to_bits(), run(&loaded, x).to_bits());
    }

    let good = std::fs::read(&path).unwrap();
    let mut damaged: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"not a cache file at all".to_vec()),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("truncated header", good[..30].to_vec()),
    ];
    for at in [3, 9, 20, 50, 70, good.len() / 2, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x81;
        damaged.push(("flipped", b));
    }
    // A valid file of another key.
    let other_dir = scratch("disk-other");
    let other = KernelCache::in_dir(&other_dir);
    other.get_or_compile(&module(9.0), &options).unwrap();
    let other_key = CacheKey::of(&module(9.0), &options).unwrap();
    damaged.push(("another key", std::fs::read(other.path_of(&other_key).unwrap()).unwrap()));

    for (what, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let cache = KernelCache::in_dir(&dir);
        let jit = cache.get_or_compile(&m, &options).unwrap();
        let stats = cache.stats();
        assert_eq!((stats.disk_rejected, stats.compiled, stats.disk_writes), (1, 1, 1), "{what}: {stats:?}");
        assert_eq!(run(&jit, 2.0), 4.0, "{what}");
        // The file was overwritten with good code.
        assert_eq!(std::fs::read(&path).unwrap(), good, "{what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other_dir);
}

#[test]
fn an_unwritable_directory_only_costs_the_disk_cache() {
    let dir = scratch("unwritable");
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    // A directory below a regular file cannot be created.
    let cache = KernelCache::in_dir(file.join("kernels"));
    let jit = cache.get_or_compile(&module(2.0), &Options::new(Lanes::X1)).unwrap();
    assert_eq!(run(&jit, 1.0), 3.0);
    assert_eq!(cache.stats().disk_errors, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_are_reported_to_every_caller_and_not_cached() {
    let cache = KernelCache::memory_only();
    let mut m = module(1.0);
    let sigs = Signatures::of(&m);
    let mut f = Function::new("bad");
    let x = f.add_param("x", Ty::F32);
    let mut b = Builder::new(&mut f, &sigs);
    let s = b.math(MathOp::Exp, vec![x]);
    b.finish(vec![s]);
    f.result_types = vec![Ty::F32];
    m.add_function(f);
    for _ in 0..2 {
        let e = cache.get_or_compile(&m, &Options::new(Lanes::X4)).err().unwrap();
        assert!(matches!(e, Error::Unsupported { .. }));
    }
    assert_eq!(cache.stats().compiled, 0);
    assert_eq!(cache.stats().memory_hits, 0);
}

/// A prepared module is keyed on its source and the preparation's name: a hit, in memory or
/// on disk, never runs the preparation, and the code keeps the prepared module's buffers and
/// externs (which the preparation may have changed).
#[test]
fn prepared_modules_are_keyed_on_their_source() {
    static PREPARED: AtomicU32 = AtomicU32::new(0);
    /// Turns `module(2.0)` into `f(x) = x * 4 + 1` with a buffer and an extern.
    fn prepare(source: &Module) -> Module {
        PREPARED.fetch_add(1, Ordering::SeqCst);
        assert_eq!(source, &module(2.0));
        let mut prepared = module(4.0);
        prepared.buffers.push(BufferDecl { name: "weights".into(), elem: Ty::F32 });
        prepared.externs.push(ExternDecl { name: "host".into(), params: vec![Ty::F32], results: vec![] });
        prepared
    }
    let prepared = || PREPARED.load(Ordering::SeqCst);
    let dir = scratch("prepared");
    let options = Options::new(Lanes::X4);
    let source = module(2.0);

    let first = KernelCache::in_dir(&dir);
    let fresh = first.get_or_prepare(&source, b"times two", &options, prepare).unwrap();
    assert_eq!((prepared(), first.stats().compiled, first.stats().disk_writes), (1, 1, 1));
    let again = first.get_or_prepare(&source, b"times two", &options, prepare).unwrap();
    assert!(Arc::ptr_eq(&fresh, &again));

    // Another process: loaded from disk, not prepared again.
    let second = KernelCache::in_dir(&dir);
    let loaded = second.get_or_prepare(&source, b"times two", &options, prepare).unwrap();
    assert_eq!((prepared(), second.stats().compiled, second.stats().disk_hits), (1, 0, 1));
    let mut weights = [0u32];
    let buffers = [Buffer::from_mut(&mut weights)];
    let mut out = [0u32; 4];
    loaded.function("f").unwrap().call(&[2f32.to_bits(); 4], &mut out, &buffers, &loaded.externs()).unwrap();
    assert_eq!(f32::from_bits(out[0]), 9.0);
    for jit in [&fresh, &loaded] {
        assert_eq!(jit.buffers(), [BufferDecl { name: "weights".into(), elem: Ty::F32 }]);
        assert_eq!(jit.extern_decls().iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["host"]);
    }

    // Another preparation name, source or option is another key.
    let key = |m: &Module, p: &[u8], o: &Options| CacheKey::of_prepared(m, p, o).unwrap();
    let base = key(&source, b"times two", &options);
    assert_ne!(base, key(&source, b"times three", &options));
    assert_ne!(base, key(&module(2.5), b"times two", &options));
    assert_ne!(base, key(&source, b"times two", &Options::new(Lanes::X8)));
    assert_ne!(base, key(&source, b"times two", &options.clone().private_buffers(true)));
    assert_ne!(base, CacheKey::of(&source, &options).unwrap(), "a prepared key is not the source's own");
    second.get_or_prepare(&source, b"times three", &options, prepare).unwrap();
    assert_eq!(prepared(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
