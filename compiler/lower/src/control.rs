//! Control flow: `if` (and every other two-way choice: guards after jumps, short-circuit
//! operators), loops, and `break`/`continue`/`return` as flags.
//!
//! **Branches.** Both regions of an IR `If` are lowered from the same environment. The `If`
//! yields the branch values plus the new values of every local (or flag) that either branch
//! changed; afterwards those locals are rebound to its results.
//!
//! **Jumps.** `break`, `continue` and `return` set flags (pseudo-locals): a `broke` and a
//! `continued` flag per loop that needs them, and one `returned` flag with the return-value
//! slots per function that returns early. Code that follows a possible jump in a block runs
//! under `if !(returned || broke || continued)`; a call or loop met in the middle of an
//! expression after a possible jump is guarded the same way.
//!
//! **Loops.** The IR loop is a do-while over carried values: the locals declared outside the
//! loop that its body (or `while` condition) assigns, the `returned` flag and return values
//! when the body may return, the `for` counter and the `@max_iters` iteration count. One
//! iteration is
//!
//! ```text
//! loop { B }            B; continue while !(broke || returned)
//! while c { B }         if c { B; !(broke || returned) } else { false }
//! for i in a..b { B }   if i < b { B; !(broke || returned) } else { false }; i + 1
//! ```
//!
//! and `@max_iters(N)` ends the loop after the N-th iteration as if by `break`.

use crate::analysis::{assigned_locals, block_jumps, expr_jumps, Code};
use crate::env::{SlotId, SlotState};
use crate::func::{FnLowerer, LResult};
use drs_ir::*;
use drs_syntax::ast::{AttrArg, Block, Expr, ExprKind};

/// The `returned` flag and the slot of the values returned so far.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReturnSlots {
    pub(crate) flag: SlotId,
    pub(crate) values: SlotId,
}

/// The flags of one loop, where its body contains a `break` or `continue` of it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoopFlags {
    pub(crate) broke: Option<SlotId>,
    pub(crate) continued: Option<SlotId>,
    /// Whether the body may `return` (the `returned` flag then ends the loop).
    pub(crate) returns: bool,
}

impl FnLowerer<'_, '_> {
    /// Lowers a two-way choice: `then_f` runs in the region taken when `cond` holds, `else_f`
    /// in the other; each returns values of types `tys` (or nothing, when it jumped away).
    /// Locals changed in either branch are merged. Returns the chosen values.
    pub(crate) fn branch(
        &mut self,
        cond: Value,
        tys: &[Ty],
        then_f: impl FnOnce(&mut Self) -> LResult<Vec<Value>>,
        else_f: impl FnOnce(&mut Self) -> LResult<Vec<Value>>,
    ) -> LResult<Vec<Value>> {
        let before = self.env.snapshot();
        let jumped_before = self.maybe_jumped;

        self.e.open_region();
        let then_values = then_f(self);
        let then_insts = self.e.close_region();
        let then_values = then_values?;
        let then_env = self.env.snapshot();
        let then_jumped = self.maybe_jumped;

        self.env.restore(&before);
        self.maybe_jumped = jumped_before;
        self.e.open_region();
        let else_values = else_f(self);
        let else_insts = self.e.close_region();
        let else_values = else_values?;
        let else_env = self.env.snapshot();
        let else_jumped = self.maybe_jumped;
        self.env.restore(&before);

        let mut then_yields = self.fit(then_values, tys);
        let mut else_yields = self.fit(else_values, tys);
        let mut result_types = tys.to_vec();
        let mut merged = Vec::new();
        for (slot, old) in before.iter().enumerate() {
            if *old == SlotState::Undeclared || (then_env[slot] == *old && else_env[slot] == *old) {
                continue;
            }
            let slot_types = self.env.types(slot).to_vec();
            for (state, yields) in [(&then_env[slot], &mut then_yields), (&else_env[slot], &mut else_yields)] {
                match state {
                    SlotState::Bound(values) => yields.extend_from_slice(values),
                    // Not assigned on this path: the value is never read after the join.
                    _ => yields.extend(self.e.zeros(&slot_types)),
                }
            }
            result_types.extend_from_slice(&slot_types);
            merged.push(slot);
        }
        let results: Vec<Value> = result_types.iter().map(|&t| self.e.new_value(t)).collect();
        self.e.push_inst(Inst {
            results: results.clone(),
            op: Op::If {
                cond,
                then: Region { params: Vec::new(), insts: then_insts, yields: then_yields },
                els: Region { params: Vec::new(), insts: else_insts, yields: else_yields },
            },
        });
        let mut offset = tys.len();
        for slot in merged {
            let n = self.env.types(slot).len();
            self.env.bind(slot, results[offset..offset + n].to_vec());
            offset += n;
        }
        self.maybe_jumped = then_jumped || else_jumped;
        Ok(results[..tys.len()].to_vec())
    }

    /// The flags that are set when the code lowered next must not run.
    fn jump_flags(&self) -> Vec<Value> {
        let mut slots = Vec::new();
        if let Some(r) = self.ret {
            slots.push(r.flag);
        }
        if let Some(l) = self.loops.last() {
            slots.extend(l.broke);
            slots.extend(l.continued);
        }
        slots.into_iter().filter_map(|s| self.env.values(s).map(|v| v[0])).collect()
    }

    /// `!(returned || broke || continued)`.
    pub(crate) fn not_jumped(&mut self) -> Value {
        let flags = self.jump_flags();
        let any = self.e.any(&flags);
        self.e.not(any)
    }

    /// Runs `f` only if no jump happened (else the values are zeros, never used).
    pub(crate) fn guarded(
        &mut self,
        tys: &[Ty],
        f: impl FnOnce(&mut Self) -> LResult<Vec<Value>>,
    ) -> LResult<Vec<Value>> {
        let go = self.not_jumped();
        self.branch(
            go,
            tys,
            |lw| {
                lw.maybe_jumped = false;
                f(lw)
            },
            |_| Ok(Vec::new()),
        )
    }

    /// `if cond { then } else { els }` as an expression.
    pub(crate) fn if_expr(&mut self, e: &Expr, cond: &Expr, then: &Block, els: Option<&Expr>) -> LResult<Vec<Value>> {
        let c = self.lower_expr(cond)?[0];
        let tys = self.tys(self.ty_of(e)?);
        self.branch(
            c,
            &tys,
            |lw| lw.lower_block(then),
            |lw| match els {
                Some(x) => lw.lower_expr(x),
                None => Ok(Vec::new()),
            },
        )
    }

    /// `a && b`, `a || b`: `b` runs only when needed if it may have effects; otherwise both
    /// are evaluated and combined.
    pub(crate) fn short_circuit(&mut self, is_and: bool, a: &Expr, b: &Expr) -> LResult<Vec<Value>> {
        let va = self.lower_expr(a)?[0];
        if !crate::analysis::has_effects(self.info, b) {
            let vb = self.lower_expr(b)?[0];
            return Ok(vec![if is_and { self.e.and(va, vb) } else { self.e.or(va, vb) }]);
        }
        let constant = |lw: &mut Self| Ok(vec![lw.e.bool(!is_and)]);
        if is_and {
            self.branch(va, &[Ty::Bool], |lw| lw.lower_expr(b), constant)
        } else {
            self.branch(va, &[Ty::Bool], constant, |lw| lw.lower_expr(b))
        }
    }

    /// `break`, `continue`: set the innermost loop's flag.
    pub(crate) fn jump(&mut self, is_break: bool, span: drs_diagnostics::Span) -> LResult<()> {
        let flags = self.loops.last().copied().unwrap_or_default();
        let slot = if is_break { flags.broke } else { flags.continued };
        let slot = slot.ok_or_else(|| self.internal(span, "a jump outside of the loops the lowering knows"))?;
        let yes = self.e.bool(true);
        self.env.bind(slot, vec![yes]);
        self.maybe_jumped = true;
        Ok(())
    }

    /// `return e`: set the `returned` flag and the return values.
    pub(crate) fn return_(&mut self, value: Option<&Expr>, span: drs_diagnostics::Span) -> LResult<()> {
        let values = match value {
            Some(x) => self.lower_expr(x)?,
            None => Vec::new(),
        };
        let ret = self.ret.ok_or_else(|| self.internal(span, "a `return` the lowering did not expect"))?;
        let tys = self.env.types(ret.values).to_vec();
        let values = self.fit(values, &tys);
        self.env.bind(ret.values, values);
        let yes = self.e.bool(true);
        self.env.bind(ret.flag, vec![yes]);
        self.maybe_jumped = true;
        Ok(())
    }

    /// `loop`, `while` and `for` (their value is `()`).
    pub(crate) fn loop_expr(&mut self, e: &Expr) -> LResult<Vec<Value>> {
        if self.maybe_jumped {
            // A loop in the middle of an expression after a jump: run it only if none happened.
            return self.guarded(&[], |lw| lw.loop_now(e));
        }
        self.loop_now(e)
    }

    fn loop_now(&mut self, e: &Expr) -> LResult<Vec<Value>> {
        self.loop_spans.push(e.span);
        let (attrs, body) = match &e.kind {
            ExprKind::Loop { attrs, body }
            | ExprKind::While { attrs, body, .. }
            | ExprKind::For { attrs, body, .. } => (attrs, body),
            _ => return Err(self.internal(e.span, "not a loop")),
        };
        let max_iters = attrs.iter().find(|a| a.name.name == "max_iters").and_then(|a| match a.args.as_slice() {
            [AttrArg::Int(n, _)] => Some(*n as u32),
            _ => None,
        });
        let cond = match &e.kind {
            ExprKind::While { cond, .. } => {
                if expr_jumps(cond).any() {
                    return Err(self.unsupported(
                        cond.span,
                        "`break`, `continue` or `return` inside a `while` condition is not supported",
                    ));
                }
                Some(&**cond)
            }
            _ => None,
        };
        // `for` bounds are evaluated once, before the loop.
        let range = match &e.kind {
            ExprKind::For { var, start, end, .. } => {
                let start = self.lower_expr(start)?[0];
                let end = self.lower_expr(end)?[0];
                Some((self.local_at(var.span)?, start, end))
            }
            _ => None,
        };
        let jumps = block_jumps(body);

        // The carried slots: outer locals assigned inside, and the return state.
        let mut code = vec![Code::Block(body)];
        code.extend(cond.map(Code::Expr));
        let mut carried: Vec<SlotId> =
            assigned_locals(self.info, code).into_iter().filter(|&l| self.env.is_declared(l)).collect();
        if jumps.returns {
            let ret = self.ret.ok_or_else(|| self.internal(e.span, "a `return` the lowering did not expect"))?;
            carried.extend([ret.flag, ret.values]);
        }
        let mut init = Vec::new();
        let mut types = Vec::new();
        for &slot in &carried {
            let slot_types = self.env.types(slot).to_vec();
            match self.env.state(slot) {
                SlotState::Bound(values) => init.extend_from_slice(values),
                _ => init.extend(self.e.zeros(&slot_types)),
            }
            types.extend(slot_types);
        }
        let counter_at = range.map(|(_, start, _)| {
            init.push(start);
            types.push(self.e.ty(start));
            init.len() - 1
        });
        let iterations_at = max_iters.map(|_| {
            init.push(self.e.u32(0));
            types.push(Ty::U32);
            init.len() - 1
        });

        let before = self.env.snapshot();
        let jumped_before = self.maybe_jumped;
        let params: Vec<Value> = types.iter().map(|&t| self.e.new_value(t)).collect();
        self.e.open_region();
        let mut offset = 0;
        for &slot in &carried {
            let n = self.env.types(slot).len();
            self.env.bind(slot, params[offset..offset + n].to_vec());
            offset += n;
        }
        if let (Some((var, _, _)), Some(at)) = (range, counter_at) {
            self.env.bind(var, vec![params[at]]);
        }
        let flags = LoopFlags {
            broke: jumps.breaks.then(|| self.env.add_slot(vec![Ty::Bool])),
            continued: jumps.continues.then(|| self.env.add_slot(vec![Ty::Bool])),
            returns: jumps.returns,
        };
        self.loops.push(flags);
        self.maybe_jumped = false;
        let keep_going = match (&e.kind, range) {
            (ExprKind::Loop { .. }, _) => self.iteration(body),
            (ExprKind::While { .. }, _) => {
                let c = self.lower_expr(cond.expect("while has a condition"))?[0];
                self.iteration_if(c, body)
            }
            (_, Some((_, _, end))) => {
                let i = params[counter_at.expect("for has a counter")];
                let c = self.e.cmp(CmpOp::Lt, i, end);
                self.iteration_if(c, body)
            }
            _ => Err(self.internal(e.span, "not a loop")),
        };
        self.loops.pop();
        let keep_going = keep_going?;

        let mut yields = vec![keep_going];
        for &slot in &carried {
            yields.extend(self.values_of(slot, e.span)?);
        }
        if let Some(at) = counter_at {
            let i = params[at];
            let one = self.e.number(self.e.ty(i), 1);
            yields.push(self.e.add(i, one));
        }
        if let (Some(at), Some(n)) = (iterations_at, max_iters) {
            let one = self.e.u32(1);
            let count = self.e.add(params[at], one);
            let limit = self.e.u32(n);
            let below = self.e.cmp(CmpOp::Lt, count, limit);
            yields[0] = self.e.and(keep_going, below);
            yields.push(count);
        }
        let insts = self.e.close_region();
        let results: Vec<Value> = types.iter().map(|&t| self.e.new_value(t)).collect();
        self.e.push_inst(Inst {
            results: results.clone(),
            op: Op::Loop { init, body: Region { params, insts, yields }, max_iters },
        });

        self.env.restore(&before);
        let mut offset = 0;
        for &slot in &carried {
            let n = self.env.types(slot).len();
            self.env.bind(slot, results[offset..offset + n].to_vec());
            offset += n;
        }
        self.maybe_jumped = jumped_before || jumps.returns;
        Ok(Vec::new())
    }

    /// One run of a loop body; returns whether the loop goes on (no `break`, no `return`).
    fn iteration(&mut self, body: &Block) -> LResult<Value> {
        let flags = *self.loops.last().expect("inside a loop");
        for slot in [flags.broke, flags.continued].into_iter().flatten() {
            let no = self.e.bool(false);
            self.env.bind(slot, vec![no]);
        }
        self.maybe_jumped = false;
        self.lower_block(body)?;
        let mut stop = Vec::new();
        if let Some(b) = flags.broke {
            stop.extend(self.env.values(b).map(|v| v[0]));
        }
        if flags.returns {
            if let Some(r) = self.ret {
                stop.extend(self.env.values(r.flag).map(|v| v[0]));
            }
        }
        if stop.is_empty() {
            return Ok(self.e.bool(true));
        }
        let any = self.e.any(&stop);
        Ok(self.e.not(any))
    }

    /// `if c { body; keep going? } else { false }`.
    fn iteration_if(&mut self, c: Value, body: &Block) -> LResult<Value> {
        let r = self.branch(c, &[Ty::Bool], |lw| Ok(vec![lw.iteration(body)?]), |lw| Ok(vec![lw.e.bool(false)]))?;
        Ok(r[0])
    }
}
