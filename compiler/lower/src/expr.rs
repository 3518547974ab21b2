//! Expressions: each evaluates, left to right, to the scalars of its value.

use crate::func::{FnLowerer, LResult};
use drs_diagnostics::Span;
use drs_ir::{BinaryOp, CmpOp, Const, Ty, UnaryOp, Value};
use drs_sema::program::{ConstId, PluginId, Resolution, TensorMethod};
use drs_sema::types::{Scalar, Type};
use drs_syntax::ast::{self, BinOp, Expr, ExprKind, Ident, Lit, UnOp};

impl FnLowerer<'_, '_> {
    pub(crate) fn lower_expr(&mut self, e: &Expr) -> LResult<Vec<Value>> {
        match &e.kind {
            ExprKind::Lit(lit) => self.literal(e, lit, false),
            ExprKind::Path(_) => self.path(e),
            ExprKind::Unary(op, x) => self.unary_expr(*op, x),
            ExprKind::Binary(BinOp::And, a, b) => self.short_circuit(true, a, b),
            ExprKind::Binary(BinOp::Or, a, b) => self.short_circuit(false, a, b),
            ExprKind::Binary(op, a, b) => {
                let va = self.lower_expr(a)?;
                let vb = self.lower_expr(b)?;
                let (ta, tb) = (self.ty_of(a)?, self.ty_of(b)?);
                self.binary_values(*op, ta, va, tb, vb, e.span)
            }
            ExprKind::Call { callee, args } => self.call_expr(e, callee, args),
            ExprKind::MethodCall { receiver, method, args } => self.method_call(e, receiver, method, args),
            ExprKind::Field(base, field) => {
                let values = self.lower_expr(base)?;
                let select = self.field_indices(self.ty_of(base)?, field)?;
                Ok(select.iter().map(|&k| values[k]).collect())
            }
            ExprKind::TupleIndex(base, k, span) => {
                let values = self.lower_expr(base)?;
                let select = self.tuple_indices(self.ty_of(base)?, *k, *span)?;
                Ok(select.iter().map(|&k| values[k]).collect())
            }
            ExprKind::Index(base, index) => self.index_expr(base, index),
            ExprKind::Tuple(elems) | ExprKind::Array(elems) => {
                let mut out = Vec::new();
                for el in elems {
                    out.extend(self.lower_expr(el)?);
                }
                Ok(out)
            }
            ExprKind::ArrayRepeat(value, _) => {
                let one = self.lower_expr(value)?;
                let count = match self.ty_of(e)? {
                    Type::Array(_, n) => *n as usize,
                    _ => return Err(self.internal(e.span, "an array repeat without an array type")),
                };
                Ok(one.iter().copied().cycle().take(one.len() * count).collect())
            }
            ExprKind::StructLit { fields, .. } => self.struct_literal(e, fields),
            ExprKind::Block(block) => self.lower_block(block),
            ExprKind::If { cond, then, els } => self.if_expr(e, cond, then, els.as_deref()),
            ExprKind::Loop { .. } | ExprKind::While { .. } | ExprKind::For { .. } => self.loop_expr(e),
            ExprKind::Derivative { .. } => Err(self.internal(e.span, "a derivative that is not called")),
        }
    }

    /// A literal, splatted to its type (a float literal whose type is a vector or Color);
    /// `negated` folds a unary minus in front of it.
    fn literal(&mut self, e: &Expr, lit: &Lit, negated: bool) -> LResult<Vec<Value>> {
        let ty = self.ty_of(e)?;
        let value = match lit {
            Lit::Bool(b) => self.e.bool(*b),
            Lit::Int { value, .. } => {
                // Out-of-range literals are rejected by the checker; 2^31 only under a minus.
                let bits = *value as u32;
                let bits = if negated { bits.wrapping_neg() } else { bits };
                match ty {
                    Type::Scalar(Scalar::U32) => self.e.konst(Const::U32(bits)),
                    _ => self.e.konst(Const::I32(bits as i32)),
                }
            }
            Lit::Float(text) => {
                let x: f32 = text
                    .replace('_', "")
                    .parse()
                    .map_err(|_| self.internal(e.span, format!("`{text}` is not a float literal")))?;
                self.e.f32(if negated { -x } else { x })
            }
        };
        Ok(vec![value; self.len_of(ty).max(1)])
    }

    fn path(&mut self, e: &Expr) -> LResult<Vec<Value>> {
        match self.info.resolutions.get(&e.id) {
            Some(Resolution::Local(l)) => self.values_of(*l, e.span),
            Some(Resolution::Const(c)) => self.const_value(*c, e.span),
            Some(Resolution::PluginParam(p, i)) => self.param_read(*p, *i, e.span),
            _ => Err(self.internal(e.span, "a name that is not a value")),
        }
    }

    /// A constant: its initialiser, lowered where it is used (the optimiser folds it).
    fn const_value(&mut self, c: ConstId, span: Span) -> LResult<Vec<Value>> {
        let program = self.program;
        let def = &program.consts[c];
        let ast::ItemKind::Const(decl) = &program.modules[def.module].ast.items[def.item].kind else {
            return Err(self.internal(span, "a constant without declaration"));
        };
        let saved = std::mem::replace(&mut self.info, &def.body);
        let values = self.lower_expr(&decl.value);
        self.info = saved;
        let values = values?;
        let tys = self.tys(&def.ty);
        Ok(self.fit(values, &tys))
    }

    /// A plugin parameter: one load per scalar, at the instance's index.
    fn param_read(&mut self, p: PluginId, i: usize, span: Span) -> LResult<Vec<Value>> {
        let instance = match self.plugin {
            Some((q, instance)) if q == p => instance,
            _ => return Err(self.internal(span, "a plugin parameter read outside of its plugin")),
        };
        let buffers = self.m.param_buffers.get(&(p, i)).cloned().unwrap_or_default();
        Ok(buffers
            .into_iter()
            .map(|b| {
                let elem = self.m.buffers[b as usize].elem;
                self.e.load(b, instance, elem)
            })
            .collect())
    }

    /// `t.shape(i)` / `t.at(i)` on a `Tensor` param: loads from its buffers
    /// ([`crate::TENSOR_BUFFERS`]) at the instance's element. `shape(i)` is 1 past the third
    /// dimension; `at(i)` clamps `i` to the instance's last element, so it never reads another
    /// instance's data (the runtime keeps every tensor non-empty).
    pub(crate) fn tensor_method(&mut self, m: TensorMethod, receiver: &Expr, index: &Expr) -> LResult<Vec<Value>> {
        let Some(&Resolution::PluginParam(p, param)) = self.info.resolutions.get(&receiver.id) else {
            return Err(self.internal(receiver.span, "a tensor method on something that is not a tensor param"));
        };
        let instance = match self.plugin {
            Some((q, instance)) if q == p => instance,
            _ => return Err(self.internal(receiver.span, "a tensor read outside of its plugin")),
        };
        let buffers = self.m.param_buffers.get(&(p, param)).cloned().unwrap_or_default();
        let &[data, offset, s0, s1, s2] = buffers.as_slice() else {
            return Err(self.internal(receiver.span, "a tensor param without its five buffers"));
        };
        let i = self.lower_expr(index)?[0];
        let shape = [s0, s1, s2].map(|b| self.e.load(b, instance, Ty::U32));
        let value = match m {
            TensorMethod::Shape => {
                let mut dim = self.e.u32(1);
                for (d, &size) in shape.iter().enumerate().rev() {
                    let d = self.e.u32(d as u32);
                    let is_d = self.e.cmp(CmpOp::Eq, i, d);
                    dim = self.e.select(is_d, size, dim);
                }
                dim
            }
            TensorMethod::At => {
                let area = self.e.mul(shape[0], shape[1]);
                let len = self.e.mul(area, shape[2]);
                let one = self.e.u32(1);
                let last = self.e.sub(len, one);
                let clamped = self.e.binary(BinaryOp::Min, i, last);
                let first = self.e.load(offset, instance, Ty::U32);
                let at = self.e.add(first, clamped);
                self.e.load(data, at, Ty::F32)
            }
        };
        Ok(vec![value])
    }

    fn unary_expr(&mut self, op: UnOp, x: &Expr) -> LResult<Vec<Value>> {
        if let (UnOp::Neg, ExprKind::Lit(lit @ (Lit::Int { .. } | Lit::Float(_)))) = (op, &x.kind) {
            return self.literal(x, lit, true);
        }
        let values = self.lower_expr(x)?;
        let op = match op {
            UnOp::Neg => UnaryOp::Neg,
            UnOp::Not => UnaryOp::Not,
        };
        Ok(values.into_iter().map(|v| self.e.unary(op, v)).collect())
    }

    fn index_expr(&mut self, base: &Expr, index: &Expr) -> LResult<Vec<Value>> {
        let values = self.lower_expr(base)?;
        let (count, elem_len) = self.index_shape(self.ty_of(base)?, base.span)?;
        let i = self.lower_expr(index)?[0];
        if let Some(k) = self.constant_index(i, count) {
            return Ok(values[k * elem_len..(k + 1) * elem_len].to_vec());
        }
        // A select chain over the elements; an index out of range gives the last element.
        let conds = self.index_conditions(i, count - 1);
        let mut out = Vec::with_capacity(elem_len);
        for c in 0..elem_len {
            let mut acc = values[(count - 1) * elem_len + c];
            for k in (0..count - 1).rev() {
                acc = self.e.select(conds[k], values[k * elem_len + c], acc);
            }
            out.push(acc);
        }
        Ok(out)
    }

    /// Fields in the order written, then arranged in declaration order.
    fn struct_literal(&mut self, e: &Expr, fields: &[ast::FieldInit]) -> LResult<Vec<Value>> {
        let s = match self.ty_of(e)? {
            Type::Struct(s) => *s,
            _ => return Err(self.internal(e.span, "a struct literal without a struct type")),
        };
        let declared = &self.program.structs[s].fields;
        let mut given: Vec<Option<Vec<Value>>> = vec![None; declared.len()];
        for f in fields {
            let values = self.lower_expr(&f.value)?;
            let Some(k) = declared.iter().position(|(n, _)| *n == f.name.name) else {
                return Err(self.internal(f.name.span, "an unknown field in a struct literal"));
            };
            given[k] = Some(values);
        }
        let mut out = Vec::new();
        for (k, values) in given.into_iter().enumerate() {
            match values {
                Some(v) => out.extend(v),
                None => {
                    let tys = self.tys(&declared[k].1);
                    out.extend(self.e.zeros(&tys));
                }
            }
        }
        Ok(out)
    }

    /// The scalars of `base_ty` that field or swizzle `field` selects.
    pub(crate) fn field_indices(&self, base_ty: &Type, field: &Ident) -> LResult<Vec<usize>> {
        match base_ty {
            Type::Struct(s) => {
                let mut offset = 0;
                for (name, ty) in &self.program.structs[*s].fields {
                    let n = self.len_of(ty);
                    if *name == field.name {
                        return Ok((offset..offset + n).collect());
                    }
                    offset += n;
                }
                Err(self.internal(field.span, format!("no field `{}`", field.name)))
            }
            Type::Vector(..) | Type::Color => field
                .name
                .chars()
                .map(|c| {
                    "xyzw"
                        .find(c)
                        .or_else(|| "rgba".find(c))
                        .ok_or_else(|| self.internal(field.span, format!("`{c}` is not a component")))
                })
                .collect(),
            _ => Err(self.internal(field.span, "a field of a value without fields")),
        }
    }

    /// The scalars of element `k` of a tuple.
    pub(crate) fn tuple_indices(&self, base_ty: &Type, k: u32, span: Span) -> LResult<Vec<usize>> {
        let Type::Tuple(elems) = base_ty else { return Err(self.internal(span, "a tuple index of a non-tuple")) };
        let k = k as usize;
        let offset: usize = elems.iter().take(k).map(|t| self.len_of(t)).sum();
        let n =
            elems.get(k).map(|t| self.len_of(t)).ok_or_else(|| self.internal(span, "a tuple index out of range"))?;
        Ok((offset..offset + n).collect())
    }

    /// The number of elements of an indexable type and the scalars of each.
    pub(crate) fn index_shape(&self, ty: &Type, span: Span) -> LResult<(usize, usize)> {
        match ty {
            Type::Array(elem, n) => Ok((*n as usize, self.len_of(elem))),
            Type::Vector(_, n) => Ok((*n as usize, 1)),
            Type::Color => Ok((3, 1)),
            Type::Matrix(n) => Ok((*n as usize, *n as usize)),
            _ => Err(self.internal(span, "an index into a value that has no elements")),
        }
    }

    /// The scalar IR type of a scalar `.drs` type.
    pub(crate) fn scalar_of(&self, ty: &Type, span: Span) -> LResult<Ty> {
        match ty.element_scalar() {
            Some(s) => Ok(crate::layout::scalar_ty(s)),
            None => Err(self.internal(span, "not a scalar, vector, Color or matrix")),
        }
    }
}
