//! Measures the math library's error: `cargo run --release -p drs-opt --example math_ulp -- [fn|all] [stride] [max_abs]`.
//!
//! Unary functions: every `stride`-th f32 bit pattern (stride 1 = all 2^32 inputs), both
//! signs, optionally only `|x| <= max_abs`. Binary functions: `2^24 / stride` random pairs
//! plus structured grids. Prints the maximum distance in ulps to the reference (f64 libm
//! rounded to f32) of the expansion and of the platform's f32 libm.

use drs_ir::MathOp;
use drs_opt::math::{eval, reference, ulp_distance};

struct Stat {
    max: u64,
    arg: (f32, f32),
    over1: u64,
    n: u64,
    libm_max: u64,
    libm_arg: (f32, f32),
    /// Largest distance between the expansion and the platform libm.
    vs_libm: u64,
}

impl Stat {
    fn new() -> Self {
        Stat { max: 0, arg: (0.0, 0.0), over1: 0, n: 0, libm_max: 0, libm_arg: (0.0, 0.0), vs_libm: 0 }
    }
    fn add(&mut self, op: MathOp, args: &[f32]) {
        let r = reference(op, args);
        let ours = eval(op, args);
        let libm = drs_interp::math(op, args);
        let e = ulp_distance(ours, r);
        let l = ulp_distance(libm, r);
        self.vs_libm = self.vs_libm.max(ulp_distance(ours, libm));
        let a = (args[0], args.get(1).copied().unwrap_or(0.0));
        self.n += 1;
        if e > 1 {
            self.over1 += 1;
        }
        if e > self.max {
            self.max = e;
            self.arg = a;
        }
        if l > self.libm_max {
            self.libm_max = l;
            self.libm_arg = a;
        }
    }
    fn merge(&mut self, o: Stat) {
        self.n += o.n;
        self.over1 += o.over1;
        self.vs_libm = self.vs_libm.max(o.vs_libm);
        if o.max > self.max {
            self.max = o.max;
            self.arg = o.arg;
        }
        if o.libm_max > self.libm_max {
            self.libm_max = o.libm_max;
            self.libm_arg = o.libm_arg;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).cloned().unwrap_or_else(|| "all".into());
    let stride: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4099);
    let max_abs: f32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(f32::INFINITY);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    for op in MathOp::ALL {
        if which != "all" && which != op.name() {
            continue;
        }
        let t0 = std::time::Instant::now();
        let mut total = Stat::new();
        let stats: Vec<Stat> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut st = Stat::new();
                        if op.arity() == 1 {
                            let mut b = t * stride;
                            while b < 1u64 << 32 {
                                let x = f32::from_bits(b as u32);
                                if x.abs() <= max_abs || x.is_nan() {
                                    st.add(op, &[x]);
                                }
                                b += stride * threads;
                            }
                        } else {
                            let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ (t + 1).wrapping_mul(0x1234_5678_9abc_def1);
                            let mut next = || {
                                rng ^= rng << 13;
                                rng ^= rng >> 7;
                                rng ^= rng << 17;
                                rng
                            };
                            let n = (1u64 << 24) / stride.max(1) / threads;
                            for _ in 0..n {
                                let r = next();
                                let (x, y) = (f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32));
                                st.add(op, &[x, y]);
                                // moderate magnitudes, where results are neither 0 nor inf
                                let u = (r as u32 as f32) / 4294967296.0;
                                let v = ((r >> 32) as u32 as f32) / 4294967296.0;
                                let x2 = (u * 8.0 - 4.0).exp2();
                                let y2 = v * 40.0 - 20.0;
                                st.add(op, &[x2, y2]);
                                st.add(op, &[-x2, y2.round()]);
                                st.add(op, &[x2 * 1e3, y2 * 0.01]);
                            }
                        }
                        st
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for s in stats {
            total.merge(s);
        }
        println!(
            "{:6} n={:>11} max={:>3} ulp at {:?} (>1ulp: {}), libm f32 max={} at {:?}, expansion vs libm max={}  [{:.1}s]",
            op.name(),
            total.n,
            total.max,
            total.arg,
            total.over1,
            total.libm_max,
            total.libm_arg,
            total.vs_libm,
            t0.elapsed().as_secs_f64()
        );
    }
}
