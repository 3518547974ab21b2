//! Cranelift backend throughput: a microfacet kernel (GGX visible-normal sampling, D, Smith G,
//! Schlick Fresnel; `drs_benches::microfacet`) over 1M lanes in scalar, 4-lane and 8-lane code,
//! reported as lanes per second. Also the compile time of the kernel, and what the kernel
//! cache saves: cold compilation against loading the same code from the disk cache, from
//! serialised bytes, and from memory — for the microfacet kernel and for the whole standard
//! library (92 functions).
//! Run: `cargo bench -p drs-benches --bench cranelift`; results go in docs/benchmarks.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_benches::microfacet;
use drs_cranelift::{Jit, KernelCache, Lanes, NativeModule, Options};
use drs_ir::Module;

const LANES: usize = 1 << 20;

fn microfacet_kernel(c: &mut Criterion) {
    let module = microfacet::module();
    let args = microfacet::inputs(LANES);
    let mut reference: Option<Vec<u32>> = None;
    let mut group = c.benchmark_group("cranelift_microfacet");
    group.throughput(Throughput::Elements(LANES as u64));
    group.sample_size(20);
    for mode in Lanes::ALL {
        let jit = Jit::compile(&module, mode).expect("the kernel compiles");
        let kernel = jit.function("microfacet").expect("the kernel exists");
        let externs = jit.externs();
        let mut results = vec![0u32; kernel.results().len() * LANES];
        kernel.call_batch(LANES, &args, &mut results, &[], &externs).expect("runs");
        // Every width computes the same bits.
        match &reference {
            None => reference = Some(results.clone()),
            Some(r) => assert!(r == &results, "{mode:?} differs from scalar"),
        }
        group.bench_function(format!("{}_lanes_1M", mode.count()), |b| {
            b.iter(|| kernel.call_batch(LANES, &args, &mut results, &[], &externs).expect("runs"))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("cranelift_compile");
    for mode in Lanes::ALL {
        group.bench_function(format!("microfacet_{}_lanes", mode.count()), |b| {
            b.iter(|| Jit::compile(&module, mode).expect("compiles"))
        });
    }
    group.finish();
}

/// The standard library, lowered and prepared for the backend.
fn stdlib_module() -> Module {
    let sources = drs_benches::drs_sources(&drs_sema::bundled_stdlib_dir());
    let options = drs_sema::LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let checked = drs_sema::check(sources, &options);
    assert!(checked.diagnostics.is_empty());
    let lowered = drs_lower::lower_program(&checked.program);
    drs_opt::prepare_for_backend(&lowered.module, drs_opt::OptLevel::Default)
}

fn kernel_cache(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("drs-bench-kernel-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut group = c.benchmark_group("kernel_cache");
    group.sample_size(20);
    for (name, module) in [("microfacet", microfacet::module()), ("stdlib", stdlib_module())] {
        for mode in [Lanes::X1, Lanes::X4] {
            let options = Options::new(mode);
            let id = format!("{name}_{}_lanes", mode.count());
            group.bench_function(format!("{id}/cold_compile"), |b| {
                b.iter(|| Jit::compile_with(&module, &options).expect("compiles"))
            });
            // A new cache each time: the file is read, checked and loaded (as in a new process).
            KernelCache::in_dir(&dir).get_or_compile(&module, &options).expect("compiles");
            group.bench_function(format!("{id}/disk_cache_load"), |b| {
                b.iter(|| {
                    let cache = KernelCache::in_dir(&dir);
                    let jit = cache.get_or_compile(&module, &options).expect("loads");
                    assert_eq!(cache.stats().disk_hits, 1);
                    jit
                })
            });
            let bytes = NativeModule::compile(&module, &options).expect("compiles").to_bytes();
            group.bench_function(format!("{id}/load_from_bytes"), |b| {
                b.iter(|| Jit::from_native_bytes(&bytes).expect("loads"))
            });
            let cache = KernelCache::memory_only();
            cache.get_or_compile(&module, &options).expect("compiles");
            group.bench_function(format!("{id}/memory_hit"), |b| {
                b.iter(|| cache.get_or_compile(&module, &options).expect("in memory"))
            });
            eprintln!("{id}: {} bytes of native code serialised", bytes.len());
        }
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, microfacet_kernel, kernel_cache);
criterion_main!(benches);
