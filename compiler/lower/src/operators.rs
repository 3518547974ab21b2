//! Binary operators on flattened values: elementwise with scalar broadcasting (vectors and
//! `Color` alike), matrix products, and whole-value comparisons of vectors.
//!
//! Matrix products are sums of products evaluated left to right, `((a0 b0 + a1 b1) + a2 b2)`,
//! with separate roundings (no fused multiply-add), so that every backend computes the same
//! bits. Matrices are column-major: element (row `r`, column `c`) of a `matN` is scalar
//! `c * N + r`.

use crate::func::{FnLowerer, LResult};
use drs_diagnostics::Span;
use drs_ir::{BinaryOp, CmpOp, Value};
use drs_sema::types::Type;
use drs_syntax::ast::BinOp;

impl FnLowerer<'_, '_> {
    /// `a op b` for values of types `ta` and `tb` (any operator but `&&` and `||`).
    pub(crate) fn binary_values(
        &mut self,
        op: BinOp,
        ta: &Type,
        a: Vec<Value>,
        tb: &Type,
        b: Vec<Value>,
        span: Span,
    ) -> LResult<Vec<Value>> {
        let arithmetic = match op {
            BinOp::Add => BinaryOp::Add,
            BinOp::Sub => BinaryOp::Sub,
            BinOp::Mul => BinaryOp::Mul,
            BinOp::Div => BinaryOp::Div,
            BinOp::Rem => BinaryOp::Rem,
            BinOp::BitAnd => BinaryOp::And,
            BinOp::BitOr => BinaryOp::Or,
            BinOp::BitXor => BinaryOp::Xor,
            BinOp::Shl => BinaryOp::Shl,
            BinOp::Shr => BinaryOp::Shr,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                return self.comparison(op, a, b, span)
            }
            BinOp::And | BinOp::Or => {
                let f = if op == BinOp::And { BinaryOp::And } else { BinaryOp::Or };
                return Ok(vec![self.e.binary(f, a[0], b[0])]);
            }
        };
        match (ta, tb, op) {
            (Type::Matrix(n), Type::Matrix(_), BinOp::Mul) => Ok(self.mat_mul(*n as usize, &a, &b)),
            (Type::Matrix(n), Type::Vector(..), BinOp::Mul) => Ok(self.mat_vec(*n as usize, &a, &b)),
            (Type::Vector(..), Type::Matrix(n), BinOp::Mul) => Ok(self.vec_mat(*n as usize, &a, &b)),
            _ => self.elementwise(arithmetic, &a, &b, span),
        }
    }

    /// `a op b` componentwise; a one-scalar side is broadcast.
    pub(crate) fn elementwise(&mut self, op: BinaryOp, a: &[Value], b: &[Value], span: Span) -> LResult<Vec<Value>> {
        let n = a.len().max(b.len());
        if !(a.len() == n || a.len() == 1) || !(b.len() == n || b.len() == 1) {
            return Err(self.internal(span, format!("operands of {} and {} scalars", a.len(), b.len())));
        }
        Ok((0..n).map(|k| self.e.binary(op, at(a, k), at(b, k))).collect())
    }

    /// Comparisons: `==` is true when all components are equal, `!=` when any differs
    /// (its negation); ordering compares scalars.
    fn comparison(&mut self, op: BinOp, a: Vec<Value>, b: Vec<Value>, span: Span) -> LResult<Vec<Value>> {
        let cmp = match op {
            BinOp::Eq => CmpOp::Eq,
            BinOp::Ne => CmpOp::Ne,
            BinOp::Lt => CmpOp::Lt,
            BinOp::Le => CmpOp::Le,
            BinOp::Gt => CmpOp::Gt,
            _ => CmpOp::Ge,
        };
        if a.len() != b.len() || a.is_empty() {
            return Err(self.internal(span, "a comparison of values of different sizes"));
        }
        let parts: Vec<Value> = a.iter().zip(&b).map(|(&x, &y)| self.e.cmp(cmp, x, y)).collect();
        Ok(vec![if cmp == CmpOp::Ne { self.e.any(&parts) } else { self.e.all(&parts) }])
    }

    /// Σ_k x_k y_k, left to right, without fused multiply-adds.
    pub(crate) fn sum_of_products(&mut self, pairs: &[(Value, Value)]) -> Value {
        let mut acc = self.e.mul(pairs[0].0, pairs[0].1);
        for &(x, y) in &pairs[1..] {
            let p = self.e.mul(x, y);
            acc = self.e.add(acc, p);
        }
        acc
    }

    /// `A * B`: element (r, c) is Σ_k A(r, k) B(k, c).
    fn mat_mul(&mut self, n: usize, a: &[Value], b: &[Value]) -> Vec<Value> {
        let mut out = Vec::with_capacity(n * n);
        for c in 0..n {
            for r in 0..n {
                let pairs: Vec<(Value, Value)> = (0..n).map(|k| (a[k * n + r], b[c * n + k])).collect();
                out.push(self.sum_of_products(&pairs));
            }
        }
        out
    }

    /// `M * v` (v a column): component r is Σ_k M(r, k) v_k.
    fn mat_vec(&mut self, n: usize, m: &[Value], v: &[Value]) -> Vec<Value> {
        (0..n)
            .map(|r| {
                let pairs: Vec<(Value, Value)> = (0..n).map(|k| (m[k * n + r], v[k])).collect();
                self.sum_of_products(&pairs)
            })
            .collect()
    }

    /// `v * M` (v a row): component c is Σ_k v_k M(k, c).
    fn vec_mat(&mut self, n: usize, v: &[Value], m: &[Value]) -> Vec<Value> {
        (0..n)
            .map(|c| {
                let pairs: Vec<(Value, Value)> = (0..n).map(|k| (v[k], m[c * n + k])).collect();
                self.sum_of_products(&pairs)
            })
            .collect()
    }
}

/// Component `k` of a value, or its only scalar (broadcasting).
pub(crate) fn at(values: &[Value], k: usize) -> Value {
    if values.len() == 1 {
        values[0]
    } else {
        values[k]
    }
}
