//! Cranelift backend throughput: a microfacet kernel (GGX visible-normal sampling, D, Smith G,
//! Schlick Fresnel; `drs_benches::microfacet`) over 1M lanes in scalar, 4-lane and 8-lane code,
//! reported as lanes per second. Also the compile time of the kernel.
//! Run: `cargo bench -p drs-benches --bench cranelift`; results go in docs/benchmarks.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_benches::microfacet;
use drs_cranelift::{Jit, Lanes};

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

criterion_group!(benches, microfacet_kernel);
criterion_main!(benches);
