//! Cost of derivatives: the reverse-mode derivative `bwd_diff(eval_ggx)` of the microfacet
//! BSDF evaluation in `benches/kernels/microfacet.drs` (GGX D, Smith G, Schlick Fresnel)
//! against its primal, and the forward-mode derivative, on Cranelift at 1, 4 and 8 lanes over
//! 1M lanes. The classical bound for reverse mode is 4x the primal; the ratios are recorded in
//! docs/benchmarks.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_cranelift::{Jit, Lanes};
use drs_opt::OptLevel;
use drs_sema::LoadOptions;
use std::path::Path;

const LANES: usize = 1 << 20;

/// `[param][lane]` columns: wi, wo in the upper hemisphere, alpha in [0.05, 1), f0 in [0, 1).
fn columns(n: usize) -> Vec<Vec<f32>> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut cols: Vec<Vec<f32>> = (0..10).map(|_| Vec::with_capacity(n)).collect();
    for _ in 0..n {
        let mut dir = || {
            let (u1, u2) = (next(), next());
            let r = (1.0 - u1 * u1).sqrt();
            let phi = std::f32::consts::TAU * u2;
            [r * phi.cos(), r * phi.sin(), u1.max(0.01)]
        };
        let (wi, wo) = (dir(), dir());
        let lane = [wi[0], wi[1], wi[2], wo[0], wo[1], wo[2], 0.05 + 0.95 * next(), next(), next(), next()];
        for (c, v) in cols.iter_mut().zip(lane) {
            c.push(v);
        }
    }
    cols
}

fn bits(cols: &[Vec<f32>]) -> Vec<u32> {
    cols.iter().flatten().map(|v| v.to_bits()).collect()
}

fn derivative_cost(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/microfacet.drs");
    let options = LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) };
    let mut program = drs_lower::lower_files(&[path], &options).expect("microfacet.drs checks");
    let eval = program.find_fn("eval_ggx").expect("eval_ggx exists");
    let bwd = program.derivative(eval, drs_ad::Mode::Bwd).expect("reverse mode");
    let fwd = program.derivative(eval, drs_ad::Mode::Fwd).expect("forward mode");
    let names = [
        ("primal", "eval_ggx".to_string()),
        ("bwd", program.lowered.module.function(bwd).name.clone()),
        ("fwd", program.lowered.module.function(fwd).name.clone()),
    ];
    let module = drs_opt::prepare_for_backend(&program.lowered.module, OptLevel::Default);

    let primal_cols = columns(LANES);
    let primal_args = bits(&primal_cols);
    // Reverse: the primal arguments, then the adjoint of the Color result.
    let mut bwd_cols = primal_cols.clone();
    bwd_cols.extend((0..3).map(|k| vec![[1.0, 0.5, 0.25][k]; LANES]));
    // Forward: the primal arguments, then tangents of wi, wo, alpha and f0.
    let mut fwd_cols = primal_cols.clone();
    fwd_cols.extend((0..10).map(|k| vec![if k == 6 { 1.0 } else { 0.0 }; LANES]));
    let args = [primal_args, bits(&bwd_cols), bits(&fwd_cols)];

    let mut group = c.benchmark_group("drs_autodiff_eval_ggx");
    group.throughput(Throughput::Elements(LANES as u64));
    group.sample_size(10);
    for lanes in Lanes::ALL {
        let jit = Jit::compile(&module, lanes).expect("the kernels compile");
        let externs = jit.externs();
        for ((what, name), args) in names.iter().zip(&args) {
            let kernel = jit.function(name).expect("the kernel exists");
            let mut results = vec![0u32; kernel.results().len() * LANES];
            group.bench_function(format!("{what}_{}_lanes_1M", lanes.count()), |b| {
                b.iter(|| kernel.call_batch(LANES, args, &mut results, &[], &externs).expect("runs"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, derivative_cost);
criterion_main!(benches);
