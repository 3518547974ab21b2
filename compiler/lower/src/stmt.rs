//! Blocks and statements: `let`/`var` with patterns, assignments to places (whole locals,
//! fields, swizzles, tuple elements, constant and dynamic indices), expression statements
//! and jumps.

use crate::analysis::{tail_parts, tail_returning_if};
use crate::env::SlotId;
use crate::func::{FnLowerer, LResult};
use drs_ir::{CmpOp, Const, Value};
use drs_sema::program::Resolution;
use drs_sema::types::Type;
use drs_syntax::ast::{BinOp, Block, Expr, ExprKind, Pattern, PatternKind, Stmt, StmtKind};

/// A part of a local that an assignment writes: the local, and where in its scalars. A
/// dynamic index makes several alternatives, each taken when its condition holds (at most
/// one does; none for an index out of range).
pub(crate) struct Place {
    root: SlotId,
    /// Whether the place is the whole local (which need not have a value yet).
    whole: bool,
    alternatives: Vec<(Option<Value>, Vec<usize>)>,
}

impl Place {
    /// The part `select` (positions within the current part) of each alternative.
    fn project(mut self, select: &[usize]) -> Place {
        self.whole = false;
        for (_, indices) in &mut self.alternatives {
            *indices = select.iter().map(|&k| indices[k]).collect();
        }
        self
    }
}

impl FnLowerer<'_, '_> {
    /// Lowers a block; its value is its tail's (nothing without tail). Bindings made in it
    /// end with it.
    pub(crate) fn lower_block(&mut self, block: &Block) -> LResult<Vec<Value>> {
        let tail_types = match &block.tail {
            Some(t) => self.tys(self.ty_of(t)?),
            None => Vec::new(),
        };
        self.lower_scoped(&block.stmts, block.tail.as_deref(), &tail_types, false)
    }

    /// Lowers the function's body, whose value is the function's result. In this tail position
    /// a `return e` that ends a block gives the block's value, and `if c { ..; return e; }`
    /// followed by more statements takes them as its `else` region. Such returns need no
    /// `returned` flag or return-value slots, which every later branch would carry and merge
    /// (in vector code, a select per returned scalar). Other returns use the flag.
    pub(crate) fn lower_tail_block(&mut self, block: &Block, tys: &[drs_ir::Ty]) -> LResult<Vec<Value>> {
        let (stmts, tail) = tail_parts(block);
        self.lower_scoped(stmts, tail, tys, true)
    }

    /// Statements and a tail whose bindings end with them; `function_tail`: in the function
    /// body's tail position (see [`FnLowerer::lower_tail_block`]).
    fn lower_scoped(
        &mut self,
        stmts: &[Stmt],
        tail: Option<&Expr>,
        tys: &[drs_ir::Ty],
        function_tail: bool,
    ) -> LResult<Vec<Value>> {
        let mut declared = Vec::new();
        let result = self.lower_stmts(stmts, tail, tys, function_tail, &mut declared);
        for slot in declared {
            self.env.undeclare(slot);
        }
        result
    }

    fn lower_stmts(
        &mut self,
        stmts: &[Stmt],
        tail: Option<&Expr>,
        tail_types: &[drs_ir::Ty],
        function_tail: bool,
        declared: &mut Vec<SlotId>,
    ) -> LResult<Vec<Value>> {
        for (i, stmt) in stmts.iter().enumerate() {
            if self.maybe_jumped {
                // The rest of the block runs only if no jump happened.
                return self
                    .guarded(tail_types, |lw| lw.lower_stmts(&stmts[i..], tail, tail_types, function_tail, declared));
            }
            if let Some((cond, then)) = tail_returning_if(stmt).filter(|_| function_tail) {
                let c = self.lower_expr(cond)?[0];
                let rest = &stmts[i + 1..];
                return self.branch(
                    c,
                    tail_types,
                    |lw| lw.lower_tail_block(then, tail_types),
                    |lw| lw.lower_stmts(rest, tail, tail_types, true, declared),
                );
            }
            self.lower_stmt(stmt, declared)?;
        }
        match tail {
            Some(t) if self.maybe_jumped => self.guarded(tail_types, |lw| lw.lower_expr(t)),
            Some(t) => self.lower_expr(t),
            None => Ok(Vec::new()),
        }
    }

    fn lower_stmt(&mut self, stmt: &Stmt, declared: &mut Vec<SlotId>) -> LResult<()> {
        match &stmt.kind {
            StmtKind::Let { pattern, init: Some(init), .. } => {
                let values = self.lower_expr(init)?;
                let ty = self.ty_of(init)?;
                self.bind_pattern(pattern, ty, Some(values), declared)
            }
            StmtKind::Let { pattern, init: None, .. } => self.bind_pattern(pattern, &Type::Error, None, declared),
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Expr { expr, .. } => self.lower_expr(expr).map(drop),
            StmtKind::Break => self.jump(true, stmt.span),
            StmtKind::Continue => self.jump(false, stmt.span),
            StmtKind::Return(value) => self.return_(value.as_ref(), stmt.span),
        }
    }

    /// Binds the names of a pattern to the parts of a value of type `ty` (`None`: declared
    /// without a value).
    fn bind_pattern(
        &mut self,
        pattern: &Pattern,
        ty: &Type,
        values: Option<Vec<Value>>,
        declared: &mut Vec<SlotId>,
    ) -> LResult<()> {
        match &pattern.kind {
            PatternKind::Bind(name) => {
                let local = self.local_at(name.span)?;
                declared.push(local);
                match values {
                    Some(values) => {
                        let tys = self.env.types(local).to_vec();
                        let values = self.fit(values, &tys);
                        self.env.bind(local, values);
                    }
                    None => self.env.declare_unassigned(local),
                }
                Ok(())
            }
            PatternKind::Wildcard => Ok(()),
            PatternKind::Tuple(elems) => {
                let elem_types: Vec<Type> = match ty {
                    Type::Tuple(types) if types.len() == elems.len() => types.clone(),
                    // Without a value (or of a value that never exists): each name on its own.
                    _ => vec![Type::Error; elems.len()],
                };
                let mut offset = 0;
                for (p, t) in elems.iter().zip(&elem_types) {
                    let n = self.len_of(t);
                    let part =
                        values.as_ref().map(|v| v.get(offset..offset + n).map(<[Value]>::to_vec).unwrap_or_default());
                    self.bind_pattern(p, t, part, declared)?;
                    offset += n;
                }
                Ok(())
            }
        }
    }

    /// `place = value;` and `place op= value;`: the index expressions of the place, then (for
    /// `op=`) the read of the place, then the value, then the store.
    fn assign(&mut self, target: &Expr, op: Option<BinOp>, value: &Expr) -> LResult<()> {
        let place = self.place(target)?;
        let new = match op {
            None => self.lower_expr(value)?,
            Some(op) => {
                let current = self.read_place(&place, target)?;
                let v = self.lower_expr(value)?;
                let (tt, tv) = (self.ty_of(target)?, self.ty_of(value)?);
                self.binary_values(op, tt, current, tv, v, target.span)?
            }
        };
        self.write_place(place, new, target)
    }

    fn place(&mut self, target: &Expr) -> LResult<Place> {
        match &target.kind {
            ExprKind::Path(_) => match self.info.resolutions.get(&target.id) {
                Some(Resolution::Local(l)) => {
                    let n = self.env.types(*l).len();
                    Ok(Place { root: *l, whole: true, alternatives: vec![(None, (0..n).collect())] })
                }
                _ => Err(self.internal(target.span, "an assignment to something other than a local")),
            },
            ExprKind::Field(base, field) => {
                let place = self.place(base)?;
                let select = self.field_indices(self.ty_of(base)?, field)?;
                Ok(place.project(&select))
            }
            ExprKind::TupleIndex(base, k, span) => {
                let place = self.place(base)?;
                let select = self.tuple_indices(self.ty_of(base)?, *k, *span)?;
                Ok(place.project(&select))
            }
            ExprKind::Index(base, index) => {
                let place = self.place(base)?;
                let (count, elem_len) = self.index_shape(self.ty_of(base)?, base.span)?;
                let i = self.lower_expr(index)?[0];
                if let Some(k) = self.constant_index(i, count) {
                    return Ok(place.project(&(k * elem_len..(k + 1) * elem_len).collect::<Vec<_>>()));
                }
                // One alternative per element, taken when the index equals it.
                let conds = self.index_conditions(i, count);
                let mut alternatives = Vec::new();
                for (cond, indices) in &place.alternatives {
                    for (k, &c) in conds.iter().enumerate() {
                        let c = match cond {
                            Some(outer) => self.e.and(*outer, c),
                            None => c,
                        };
                        alternatives.push((Some(c), indices[k * elem_len..(k + 1) * elem_len].to_vec()));
                    }
                }
                Ok(Place { root: place.root, whole: false, alternatives })
            }
            _ => Err(self.internal(target.span, "not an assignable place")),
        }
    }

    fn read_place(&mut self, place: &Place, target: &Expr) -> LResult<Vec<Value>> {
        let root = self.values_of(place.root, target.span)?;
        let (last, rest) = place.alternatives.split_last().expect("a place has an alternative");
        let mut out = Vec::with_capacity(last.1.len());
        for k in 0..last.1.len() {
            let mut acc = root[last.1[k]];
            for (cond, indices) in rest.iter().rev() {
                acc = match cond {
                    Some(c) => self.e.select(*c, root[indices[k]], acc),
                    None => root[indices[k]],
                };
            }
            out.push(acc);
        }
        Ok(out)
    }

    fn write_place(&mut self, place: Place, values: Vec<Value>, target: &Expr) -> LResult<()> {
        if place.whole {
            let tys = self.env.types(place.root).to_vec();
            let values = self.fit(values, &tys);
            self.env.bind(place.root, values);
            return Ok(());
        }
        let mut new = self.values_of(place.root, target.span)?;
        for (cond, indices) in &place.alternatives {
            if indices.len() != values.len() {
                return Err(self.internal(target.span, "an assignment of the wrong number of scalars"));
            }
            for (&at, &v) in indices.iter().zip(&values) {
                new[at] = match cond {
                    Some(c) => self.e.select(*c, v, new[at]),
                    None => v,
                };
            }
        }
        self.env.bind(place.root, new);
        Ok(())
    }

    /// The element an index selects when it is a constant within `0..count`.
    pub(crate) fn constant_index(&self, index: Value, count: usize) -> Option<usize> {
        let k = match self.e.const_of(index)? {
            Const::I32(i) => usize::try_from(i).ok()?,
            Const::U32(u) => u as usize,
            _ => return None,
        };
        (k < count).then_some(k)
    }

    /// `index == k` for each element `k`.
    pub(crate) fn index_conditions(&mut self, index: Value, count: usize) -> Vec<Value> {
        let ty = self.e.ty(index);
        (0..count)
            .map(|k| {
                let kv = self.e.number(ty, k as i32);
                self.e.cmp(CmpOp::Eq, index, kv)
            })
            .collect()
    }
}
