//! Front-end throughput: lex + parse + resolve + type-check of the whole standard library.
//! Run: `cargo bench -p drs-benches --bench frontend`; results go in docs/benchmarks.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use drs_benches::{drs_sources, line_count};
use drs_sema::{LoadOptions, RootSource};

fn stdlib_check(c: &mut Criterion) {
    let stdlib = drs_sema::bundled_stdlib_dir();
    let sources = drs_sources(&stdlib);
    let lines = line_count(&sources);
    let options = LoadOptions { stdlib_dir: Some(stdlib) };
    let fresh = || -> Vec<RootSource> {
        sources
            .iter()
            .map(|s| RootSource { name: s.name.clone(), path: s.path.clone(), text: s.text.clone() })
            .collect()
    };
    let checked = drs_sema::check(fresh(), &options);
    assert!(checked.diagnostics.is_empty(), "the stdlib must check cleanly before it is benchmarked");

    let mut group = c.benchmark_group("frontend");
    group.throughput(Throughput::Elements(lines));
    group.bench_function(format!("check_stdlib_{}_files_{lines}_lines", sources.len()), |b| {
        b.iter(|| drs_sema::check(fresh(), &options))
    });
    group.bench_function(format!("parse_stdlib_{lines}_lines"), |b| {
        b.iter(|| {
            for (i, s) in sources.iter().enumerate() {
                std::hint::black_box(drs_syntax::parse(&s.text, drs_diagnostics::FileId(i as u32)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, stdlib_check);
criterion_main!(benches);
