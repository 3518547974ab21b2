//! The whole compiler on real `.drs` code:
//! - compile time of the standard library, stage by stage (check, lower, optimise with the math
//!   library, Cranelift codegen at 1 and 4 lanes);
//! - throughput of `benches/kernels/microfacet.drs` (GGX visible-normal sampling + evaluation,
//!   written in .drs and compiled through the full pipeline, math library included) over 1M
//!   lanes in scalar, 4-lane and 8-lane code.
//!
//! Run: `cargo bench -p drs-benches --bench pipeline`; results go in docs/benchmarks.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_benches::{drs_sources, line_count};
use drs_cranelift::{Jit, Lanes};
use drs_opt::OptLevel;
use drs_sema::{LoadOptions, RootSource};
use std::path::Path;

fn options() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

fn stdlib_compile(c: &mut Criterion) {
    let sources = drs_sources(&drs_sema::bundled_stdlib_dir());
    let lines = line_count(&sources);
    let fresh = || -> Vec<RootSource> {
        sources
            .iter()
            .map(|s| RootSource { name: s.name.clone(), path: s.path.clone(), text: s.text.clone() })
            .collect()
    };
    let checked = drs_sema::check(fresh(), &options());
    assert!(checked.diagnostics.is_empty());
    let lowered = drs_lower::lower_program(&checked.program);
    assert!(lowered.is_complete(), "the stdlib lowers completely");
    let prepared = drs_opt::prepare_for_backend(&lowered.module, OptLevel::Default);

    let mut group = c.benchmark_group(format!("stdlib_compile_{lines}_lines"));
    group.sample_size(10);
    group.bench_function("check", |b| b.iter(|| drs_sema::check(fresh(), &options())));
    group.bench_function("lower", |b| b.iter(|| drs_lower::lower_program(&checked.program)));
    group.bench_function("optimise_and_math", |b| {
        b.iter(|| drs_opt::prepare_for_backend(&lowered.module, OptLevel::Default))
    });
    for lanes in [Lanes::X1, Lanes::X4] {
        group.bench_function(format!("cranelift_{}_lanes", lanes.count()), |b| {
            b.iter(|| Jit::compile(&prepared, lanes).expect("the stdlib compiles"))
        });
    }
    group.bench_function("all_stages_4_lanes", |b| {
        b.iter(|| {
            let checked = drs_sema::check(fresh(), &options());
            let lowered = drs_lower::lower_program(&checked.program);
            let prepared = drs_opt::prepare_for_backend(&lowered.module, OptLevel::Default);
            Jit::compile(&prepared, Lanes::X4).expect("the stdlib compiles")
        })
    });
    group.finish();
}

const LANES: usize = 1 << 20;

/// `[param][lane]` inputs for `sample_and_eval(wi: vec3, alpha: f32, f0: Color, u: vec2)`:
/// directions in the upper hemisphere, roughness in [0.05, 1), random samples.
fn microfacet_inputs(n: usize) -> Vec<u32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut rows: Vec<Vec<f32>> = (0..9).map(|_| Vec::with_capacity(n)).collect();
    for _ in 0..n {
        let (u1, u2) = (next(), next());
        let r = (1.0 - u1 * u1).sqrt();
        let phi = std::f32::consts::TAU * u2;
        let lane =
            [r * phi.cos(), r * phi.sin(), u1.max(0.01), 0.05 + 0.95 * next(), next(), next(), next(), next(), next()];
        for (row, v) in rows.iter_mut().zip(lane) {
            row.push(v);
        }
    }
    rows.into_iter().flatten().map(f32::to_bits).collect()
}

fn microfacet_kernel(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/microfacet.drs");
    let program = drs_lower::lower_files(&[path], &options()).expect("microfacet.drs checks");
    assert!(program.lowered.is_complete());
    let module = drs_opt::prepare_for_backend(&program.lowered.module, OptLevel::Default);
    let args = microfacet_inputs(LANES);
    let mut reference: Option<Vec<u32>> = None;
    let mut group = c.benchmark_group("drs_microfacet_sample_and_eval");
    group.throughput(Throughput::Elements(LANES as u64));
    group.sample_size(10);
    for lanes in Lanes::ALL {
        let jit = Jit::compile(&module, lanes).expect("the kernel compiles");
        let kernel = jit.function("sample_and_eval").expect("the kernel exists");
        let externs = jit.externs();
        let mut results = vec![0u32; kernel.results().len() * LANES];
        kernel.call_batch(LANES, &args, &mut results, &[], &externs).expect("runs");
        match &reference {
            None => reference = Some(results.clone()),
            Some(r) => assert!(r == &results, "{lanes:?} differs from scalar"),
        }
        group.bench_function(format!("{}_lanes_1M", lanes.count()), |b| {
            b.iter(|| kernel.call_batch(LANES, &args, &mut results, &[], &externs).expect("runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, stdlib_compile, microfacet_kernel);
criterion_main!(benches);
