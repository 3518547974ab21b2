//! Built-in functions (spec/builtins.md) and constructors and conversions of built-in types
//! (spec/types.md) as scalar IR operations.
//!
//! Choices where the spec leaves room:
//!
//! - `sign(x)` on floats is `x > 0 ? 1 : (x < 0 ? -1 : x)`: `sign(±0.0)` is `±0.0` and
//!   `sign(NaN)` is the NaN itself.
//! - `min`, `max` (and `clamp`, `saturate`) follow the IR's `Min`/`Max`: `min(a, b)` is
//!   `a < b ? a : b`, so a NaN `b` is returned as is, a NaN `a` gives `b`.
//! - `rsqrt(x)` is `1 / sqrt(x)` (two roundings).
//! - `determinant` and `inverse` use cofactor (Laplace) expansion along the first row, and
//!   `inverse` divides each cofactor by the determinant.
//! - `normalize(v)` divides each component by `length(v)`.

use crate::func::{FnLowerer, LResult};
use crate::layout::scalar_ty;
use crate::operators::at;
use drs_ir::{BinaryOp, CmpOp, MathOp, Ty, UnaryOp, Value};
use drs_sema::types::{Scalar, Type};
use drs_syntax::ast::Expr;

impl FnLowerer<'_, '_> {
    pub(crate) fn builtin_call(&mut self, e: &Expr, name: &str, args: &[Expr]) -> LResult<Vec<Value>> {
        let mut v: Vec<Vec<Value>> = Vec::with_capacity(args.len());
        let mut types: Vec<&Type> = Vec::with_capacity(args.len());
        for a in args {
            v.push(self.lower_expr(a)?);
            types.push(self.ty_of(a)?);
        }
        let result = self.ty_of(e)?;
        let n = self.len_of(result);
        let wrong = |lw: &Self| lw.internal(e.span, format!("`{name}` with unexpected arguments"));
        if v.iter().any(Vec::is_empty) {
            return Err(wrong(self));
        }
        let out = match name {
            "sqrt" => self.map_unary(UnaryOp::Sqrt, &v[0]),
            "floor" => self.map_unary(UnaryOp::Floor, &v[0]),
            "ceil" => self.map_unary(UnaryOp::Ceil, &v[0]),
            "trunc" => self.map_unary(UnaryOp::Trunc, &v[0]),
            "round" => self.map_unary(UnaryOp::Round, &v[0]),
            "rsqrt" => v[0]
                .iter()
                .map(|&x| {
                    let s = self.e.unary(UnaryOp::Sqrt, x);
                    let one = self.e.f32(1.0);
                    self.e.div(one, s)
                })
                .collect(),
            "fract" => v[0]
                .iter()
                .map(|&x| {
                    let f = self.e.unary(UnaryOp::Floor, x);
                    self.e.sub(x, f)
                })
                .collect(),
            "saturate" => v[0].iter().map(|&x| self.saturate(x)).collect(),
            "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" | "exp" | "exp2" | "log"
            | "log2" => {
                let op = MathOp::from_name(name).ok_or_else(|| wrong(self))?;
                v[0].iter().map(|&x| self.e.math(op, vec![x])).collect()
            }
            "atan2" | "pow" => {
                let op = MathOp::from_name(name).ok_or_else(|| wrong(self))?;
                (0..n).map(|k| self.e.math(op, vec![at(&v[0], k), at(&v[1], k)])).collect()
            }
            "abs" => match types[0].element_scalar() {
                Some(Scalar::F32) => self.map_unary(UnaryOp::Abs, &v[0]),
                // `abs(i32::MIN)` wraps to itself.
                Some(Scalar::I32) => v[0]
                    .iter()
                    .map(|&x| {
                        let zero = self.e.zero(Ty::I32);
                        let negative = self.e.cmp(CmpOp::Lt, x, zero);
                        let neg = self.e.unary(UnaryOp::Neg, x);
                        self.e.select(negative, neg, x)
                    })
                    .collect(),
                _ => v[0].clone(),
            },
            "sign" => {
                let ty = self.scalar_of(types[0], e.span)?;
                v[0].iter()
                    .map(|&x| {
                        let zero = self.e.zero(ty);
                        let one = self.e.number(ty, 1);
                        let minus_one = self.e.number(ty, -1);
                        let positive = self.e.cmp(CmpOp::Gt, x, zero);
                        let negative = self.e.cmp(CmpOp::Lt, x, zero);
                        // Floats keep ±0 and NaN; integers are 0 there.
                        let otherwise = if ty == Ty::F32 { x } else { zero };
                        let low = self.e.select(negative, minus_one, otherwise);
                        self.e.select(positive, one, low)
                    })
                    .collect()
            }
            "step" => (0..n)
                .map(|k| {
                    let (edge, x) = (at(&v[0], k), at(&v[1], k));
                    let below = self.e.cmp(CmpOp::Lt, x, edge);
                    let (zero, one) = (self.e.f32(0.0), self.e.f32(1.0));
                    self.e.select(below, zero, one)
                })
                .collect(),
            "min" | "max" => {
                let op = if name == "min" { BinaryOp::Min } else { BinaryOp::Max };
                (0..n).map(|k| self.e.binary(op, at(&v[0], k), at(&v[1], k))).collect()
            }
            "clamp" => (0..n)
                .map(|k| {
                    let low = self.e.binary(BinaryOp::Max, at(&v[0], k), at(&v[1], k));
                    self.e.binary(BinaryOp::Min, low, at(&v[2], k))
                })
                .collect(),
            "lerp" => (0..n)
                .map(|k| {
                    let (a, b, t) = (at(&v[0], k), at(&v[1], k), at(&v[2], k));
                    let d = self.e.sub(b, a);
                    let dt = self.e.mul(d, t);
                    self.e.add(a, dt)
                })
                .collect(),
            "smoothstep" => (0..n)
                .map(|k| {
                    let (e0, e1, x) = (at(&v[0], k), at(&v[1], k), at(&v[2], k));
                    let num = self.e.sub(x, e0);
                    let den = self.e.sub(e1, e0);
                    let q = self.e.div(num, den);
                    let t = self.saturate(q);
                    let (two, three) = (self.e.f32(2.0), self.e.f32(3.0));
                    let tt = self.e.mul(t, t);
                    let two_t = self.e.mul(two, t);
                    let s = self.e.sub(three, two_t);
                    self.e.mul(tt, s)
                })
                .collect(),
            "fma" => (0..n).map(|k| self.e.fma(at(&v[0], k), at(&v[1], k), at(&v[2], k))).collect(),
            "isnan" => vec![self.e.cmp(CmpOp::Ne, v[0][0], v[0][0])],
            "isinf" | "isfinite" => {
                let a = self.e.unary(UnaryOp::Abs, v[0][0]);
                let inf = self.e.f32(f32::INFINITY);
                let op = if name == "isinf" { CmpOp::Eq } else { CmpOp::Lt };
                vec![self.e.cmp(op, a, inf)]
            }
            "select" => {
                let c = v[0][0];
                v[1].iter().zip(&v[2]).map(|(&a, &b)| self.e.select(c, a, b)).collect()
            }
            "dot" => vec![self.dot(&v[0], &v[1])],
            "length_squared" => vec![self.dot(&v[0], &v[0])],
            "length" => vec![self.length(&v[0])],
            "distance" => {
                let d: Vec<Value> = v[0].iter().zip(&v[1]).map(|(&a, &b)| self.e.sub(a, b)).collect();
                vec![self.length(&d)]
            }
            "normalize" => {
                let l = self.length(&v[0]);
                v[0].iter().map(|&x| self.e.div(x, l)).collect()
            }
            "cross" => self.cross(&v[0], &v[1]),
            "reflect" => {
                // i - 2 dot(n, i) n
                let (i, nrm) = (&v[0], &v[1]);
                let d = self.dot(nrm, i);
                let two = self.e.f32(2.0);
                let t = self.e.mul(two, d);
                (0..3)
                    .map(|k| {
                        let s = self.e.mul(t, nrm[k]);
                        self.e.sub(i[k], s)
                    })
                    .collect()
            }
            "refract" => self.refract(&v[0], &v[1], v[2][0]),
            "transpose" => {
                let m = matrix_size(types[0]).ok_or_else(|| wrong(self))?;
                (0..m * m).map(|k| v[0][(k % m) * m + k / m]).collect()
            }
            "determinant" => {
                let m = matrix_size(types[0]).ok_or_else(|| wrong(self))?;
                let all: Vec<usize> = (0..m).collect();
                vec![self.minor_det(&v[0], m, &all, &all)]
            }
            "inverse" => {
                let m = matrix_size(types[0]).ok_or_else(|| wrong(self))?;
                self.inverse(&v[0], m)
            }
            "to_bits" => vec![self.e.bitcast(Ty::U32, v[0][0])],
            "from_bits" => vec![self.e.bitcast(Ty::F32, v[0][0])],
            "detach" => v[0].iter().map(|&x| if self.e.ty(x) == Ty::F32 { self.e.detach(x) } else { x }).collect(),
            "replace_grad" => v[0]
                .iter()
                .zip(&v[1])
                .map(|(&a, &b)| if self.e.ty(a) == Ty::F32 { self.e.replace_grad(a, b) } else { a })
                .collect(),
            _ => return Err(self.unsupported(e.span, format!("the built-in function `{name}`"))),
        };
        if out.len() != n {
            return Err(wrong(self));
        }
        Ok(out)
    }

    fn map_unary(&mut self, op: UnaryOp, x: &[Value]) -> Vec<Value> {
        x.iter().map(|&c| self.e.unary(op, c)).collect()
    }

    /// `min(max(x, 0), 1)`.
    fn saturate(&mut self, x: Value) -> Value {
        let (zero, one) = (self.e.f32(0.0), self.e.f32(1.0));
        let low = self.e.binary(BinaryOp::Max, x, zero);
        self.e.binary(BinaryOp::Min, low, one)
    }

    fn dot(&mut self, a: &[Value], b: &[Value]) -> Value {
        let pairs: Vec<(Value, Value)> = a.iter().copied().zip(b.iter().copied()).collect();
        self.sum_of_products(&pairs)
    }

    fn length(&mut self, v: &[Value]) -> Value {
        let d = self.dot(v, v);
        self.e.unary(UnaryOp::Sqrt, d)
    }

    /// `a × b = (a.y b.z - a.z b.y, a.z b.x - a.x b.z, a.x b.y - a.y b.x)`.
    fn cross(&mut self, a: &[Value], b: &[Value]) -> Vec<Value> {
        [(1, 2), (2, 0), (0, 1)]
            .into_iter()
            .map(|(i, j)| {
                let p = self.e.mul(a[i], b[j]);
                let q = self.e.mul(a[j], b[i]);
                self.e.sub(p, q)
            })
            .collect()
    }

    /// GLSL `refract`: `k = 1 - eta² (1 - dot(n, i)²)`; `vec3(0)` if `k < 0`, else
    /// `eta i - (eta dot(n, i) + √k) n`.
    fn refract(&mut self, i: &[Value], n: &[Value], eta: Value) -> Vec<Value> {
        let d = self.dot(n, i);
        let one = self.e.f32(1.0);
        let dd = self.e.mul(d, d);
        let s = self.e.sub(one, dd);
        let ee = self.e.mul(eta, eta);
        let ees = self.e.mul(ee, s);
        let k = self.e.sub(one, ees);
        let zero = self.e.f32(0.0);
        let total_reflection = self.e.cmp(CmpOp::Lt, k, zero);
        let root = self.e.unary(UnaryOp::Sqrt, k);
        let ed = self.e.mul(eta, d);
        let t = self.e.add(ed, root);
        (0..3)
            .map(|c| {
                let a = self.e.mul(eta, i[c]);
                let b = self.e.mul(t, n[c]);
                let r = self.e.sub(a, b);
                self.e.select(total_reflection, zero, r)
            })
            .collect()
    }

    /// The determinant of the submatrix of `m` (size `size`, column-major) with the given
    /// rows and columns, by Laplace expansion along its first row.
    fn minor_det(&mut self, m: &[Value], size: usize, rows: &[usize], cols: &[usize]) -> Value {
        let el = |r: usize, c: usize| m[c * size + r];
        if rows.len() == 1 {
            return el(rows[0], cols[0]);
        }
        if rows.len() == 2 {
            let p = self.e.mul(el(rows[0], cols[0]), el(rows[1], cols[1]));
            let q = self.e.mul(el(rows[1], cols[0]), el(rows[0], cols[1]));
            return self.e.sub(p, q);
        }
        let mut acc: Option<Value> = None;
        for (j, &c) in cols.iter().enumerate() {
            let sub_cols: Vec<usize> = cols.iter().copied().filter(|&x| x != c).collect();
            let minor = self.minor_det(m, size, &rows[1..], &sub_cols);
            let term = self.e.mul(el(rows[0], c), minor);
            acc = Some(match acc {
                None => term,
                Some(a) if j % 2 == 1 => self.e.sub(a, term),
                Some(a) => self.e.add(a, term),
            });
        }
        acc.expect("a matrix has columns")
    }

    /// The inverse: element (r, c) is cofactor C(c, r) / det, with det expanded along row 0.
    fn inverse(&mut self, m: &[Value], size: usize) -> Vec<Value> {
        let all: Vec<usize> = (0..size).collect();
        // cofactor[r][c] = (-1)^(r+c) det(m without row r and column c)
        let mut cofactor = vec![vec![None; size]; size];
        for (r, row) in cofactor.iter_mut().enumerate() {
            for (c, slot) in row.iter_mut().enumerate() {
                let rows: Vec<usize> = all.iter().copied().filter(|&x| x != r).collect();
                let cols: Vec<usize> = all.iter().copied().filter(|&x| x != c).collect();
                let minor = self.minor_det(m, size, &rows, &cols);
                *slot = Some(if (r + c) % 2 == 1 { self.e.unary(UnaryOp::Neg, minor) } else { minor });
            }
        }
        let cof = |r: usize, c: usize| cofactor[r][c].expect("every cofactor is computed");
        let pairs: Vec<(Value, Value)> = (0..size).map(|c| (m[c * size], cof(0, c))).collect();
        let det = self.sum_of_products(&pairs);
        let mut out = Vec::with_capacity(size * size);
        for c in 0..size {
            for r in 0..size {
                out.push(self.e.div(cof(c, r), det));
            }
        }
        out
    }

    /// `T(args)` for a built-in type `T`: conversions, splats and assembling vectors,
    /// colours and matrices.
    pub(crate) fn constructor(&mut self, e: &Expr, target: &Type, args: &[Expr]) -> LResult<Vec<Value>> {
        let mut v: Vec<Vec<Value>> = Vec::with_capacity(args.len());
        let mut types: Vec<&Type> = Vec::with_capacity(args.len());
        for a in args {
            v.push(self.lower_expr(a)?);
            types.push(self.ty_of(a)?);
        }
        let wrong = |lw: &Self| lw.internal(e.span, "a constructor with unexpected arguments");
        let out: Vec<Value> = match (target, types.as_slice()) {
            // Conversions (and identities): f32 ↔ i32/u32 numerically, i32 ↔ u32 by bits.
            (Type::Scalar(to), [_]) => vec![self.e.convert(scalar_ty(*to), v[0][0])],
            (Type::Vector(_, n), [Type::Scalar(_)]) => vec![v[0][0]; *n as usize],
            (Type::Vector(elem, n), [Type::Vector(_, m)]) if m == n => {
                v[0].iter().map(|&x| self.e.convert(scalar_ty(*elem), x)).collect()
            }
            (Type::Color, [Type::Scalar(_)]) => vec![v[0][0]; 3],
            (Type::Matrix(n), [Type::Scalar(_)]) => {
                let n = *n as usize;
                let zero = self.e.f32(0.0);
                (0..n * n).map(|k| if k / n == k % n { v[0][0] } else { zero }).collect()
            }
            (Type::Matrix(n), [Type::Matrix(m)]) => {
                // GLSL: the upper-left part, the rest of the identity.
                let (n, m) = (*n as usize, *m as usize);
                let (zero, one) = (self.e.f32(0.0), self.e.f32(1.0));
                let mut out = Vec::with_capacity(n * n);
                for c in 0..n {
                    for r in 0..n {
                        out.push(match (c < m && r < m, c == r) {
                            (true, _) => v[0][c * m + r],
                            (false, true) => one,
                            (false, false) => zero,
                        });
                    }
                }
                out
            }
            // Components in order: `vec4(v.xy, 0.0, 1.0)`, `Color(r, g, b)`, `Color(v)`,
            // `vec3(c)`, `mat3(c0, c1, c2)`.
            (Type::Vector(..) | Type::Color | Type::Matrix(_), _) => v.concat(),
            _ => return Err(wrong(self)),
        };
        if out.len() != self.len_of(target) {
            return Err(wrong(self));
        }
        Ok(out)
    }
}

fn matrix_size(ty: &Type) -> Option<usize> {
    match ty {
        Type::Matrix(n) => Some(*n as usize),
        _ => None,
    }
}
