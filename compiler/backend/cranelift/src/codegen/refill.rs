//! The Cranelift side of lane refill (`crate::refill`): the refilling entry wrapper.

use super::*;
use crate::refill::{defined_values, RefillPlan, Step};

impl Translator<'_, '_> {
    /// The groups of an entry wrapper with lane refill (see `crate::refill`), emitted from
    /// the current block, which has the wrapper's `ctx` and `mask` and at least one group,
    /// and ending with a jump to `call.exit`. The arrays are those of
    /// [`Translator::translate_entry`]. When a guard of the plan fails, not every lane of the
    /// groups is active (a masked call), the uniform parameters differ between groups, or the
    /// call has more lanes than 32-bit indices reach, the groups run as in the plain wrapper.
    pub(super) fn refill_groups(&mut self, plan: &RefillPlan, call: EntryCall, param_uniform: &[bool]) -> Result<()> {
        let EntryCall { args, results, groups, stride_bytes, exit } = call;
        let f = self.f;
        let (parts, lanes) = (self.shape.parts, self.shape.lanes);
        let Op::Loop { init, body, .. } = &plan.the_loop.op else {
            return Err("internal error: the refilled instruction is not a loop".into());
        };
        let carried_types: Vec<Ty> = init.iter().map(|&v| self.ty(v)).collect();

        let per_sample = plan.per_sample(f, &self.uniform);
        let per_sample_types: Vec<Ty> = per_sample.iter().map(|&v| self.ty(v)).collect();

        // The first `lanes` samples, straight from the arrays; the uniform values that are the
        // same for all samples, among them the guards.
        let params = self.load_entry_params(args, stride_bytes, param_uniform);
        for (p, v) in f.params.iter().zip(&params) {
            self.set(p.value, *v);
        }
        let mut kept = Vec::new();
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| k) {
            self.inst(inst)?;
            for &r in &inst.results {
                kept.push((r, self.get(r)?));
            }
        }
        let (refill, plain) = (self.b.create_block(), self.b.create_block());
        let active = self.b.ins().load(types::I32, trusted_ro(), self.ctx, CTX_ACTIVE);
        let all_lanes = (1i64 << lanes) - 1;
        let mut reaches_loop = self.b.ins().icmp_imm_s(IntCC::Equal, active, all_lanes);
        // Sample indices are 32-bit lanes.
        let few_enough =
            self.b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, groups, (u32::MAX as usize / lanes) as i64);
        reaches_loop = self.b.ins().band(reaches_loop, few_enough);
        for &(cond, want) in &plan.guards {
            let c = self.scalar(cond)?;
            let c = if want { c } else { self.b.ins().bxor_imm_u(c, 1) };
            reaches_loop = self.b.ins().band(reaches_loop, c);
        }
        let same_groups = self.b.create_block();
        self.b.ins().brif(reaches_loop, same_groups, &[], plain, &[]);
        self.b.switch_to_block(same_groups);
        self.branch_on_uniform_groups(args, groups, stride_bytes, param_uniform, refill, plain);
        self.b.switch_to_block(plain);
        let entry_mask = self.mask;
        let translated = std::mem::replace(&mut self.vals, vec![None; f.value_types.len()]);
        self.plain_groups(call, param_uniform)?;
        self.vals = translated;
        self.mask = entry_mask;

        self.b.switch_to_block(refill);
        let total = self.b.ins().imul_imm_u(groups, lanes as i64);
        let mut sample = [self.vconst_lanes([0, 1, 2, 3]); 2];
        if parts == 2 {
            sample[1] = self.vconst_lanes([4, 5, 6, 7]);
        }
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| !k) {
            self.inst(inst)?;
        }
        let mut entry_args = Vec::new();
        for &v in init.iter().chain(&per_sample) {
            entry_args.extend_from_slice(&self.parts(v)?[..parts]);
        }
        entry_args.extend_from_slice(&sample[..parts]);
        entry_args.extend_from_slice(&self.mask[..parts]);
        entry_args.push(self.b.ins().iconst(types::I64, lanes as i64));

        // header(carried, per-sample values, sample indices, running lanes, next sample).
        let header = self.b.create_block();
        for &ty in carried_types.iter().chain(&per_sample_types) {
            self.append_repr_params(header, ty, false);
        }
        for _ in 0..2 * parts {
            self.b.append_block_param(header, types::I32X4);
        }
        self.b.append_block_param(header, types::I64);
        self.b.ins().jump(header, &block_args(&entry_args));

        self.b.switch_to_block(header);
        let state = LoopState::unpack(self.b.block_params(header), carried_types.len(), per_sample.len(), parts);
        for (&p, &c) in body.params.iter().zip(&state.carried) {
            self.set(p, V::P(c));
        }
        for (&v, &c) in per_sample.iter().zip(&state.per_sample) {
            self.set(v, V::P(c));
        }
        self.mask = state.running;
        self.region(body)?;
        let cont = self.parts(body.yields[0])?;
        let mut next = Vec::with_capacity(carried_types.len());
        for &y in &body.yields[1..] {
            next.push(self.parts(y)?);
        }
        let cont = match plan.while_condition {
            Some(condition) => {
                // Lanes whose condition fails on the next values leave now.
                let guard = &body.insts[..body.insts.len() - 1];
                for (&p, &n) in body.params.iter().zip(&next) {
                    self.set(p, V::P(n));
                }
                let mut recomputed = Vec::new();
                defined_values(guard, &mut recomputed);
                for v in recomputed {
                    self.vals[v.0 as usize] = None;
                }
                self.insts(guard)?;
                let holds = self.parts(condition)?;
                self.map_mask(cont, holds, |b, x, y| b.ins().band(x, y))
            }
            None => cont,
        };
        let still = self.map_mask(state.running, cont, |b, x, y| b.ins().band(x, y));
        let finished = self.map_mask(state.running, cont, |b, x, y| b.ins().band_not(x, y));
        let to_header = |carried: &[[ir::Value; 2]],
                         per_sample: &[[ir::Value; 2]],
                         sample: [ir::Value; 2],
                         running: [ir::Value; 2],
                         next_sample: ir::Value| {
            let mut a: Vec<ir::Value> = carried.iter().chain(per_sample).flat_map(|p| p[..parts].to_vec()).collect();
            a.extend_from_slice(&sample[..parts]);
            a.extend_from_slice(&running[..parts]);
            a.push(next_sample);
            block_args(&a)
        };
        // Around again: with no lane finished, every running lane still runs.
        let any_finished = self.any(finished);
        let finish = self.b.create_block();
        let stay = to_header(&next, &state.per_sample, state.sample, still, state.next);
        self.b.ins().brif(any_finished, finish, &[], header, &stay);

        // Lanes that left the loop: `post`, their results stored, the next samples taken.
        self.b.switch_to_block(finish);
        self.mask = finished;
        for (&r, &n) in plan.the_loop.results.iter().zip(&next) {
            self.set(r, V::P(n));
        }
        for step in &plan.post {
            match step {
                Step::Inst(inst) => self.inst(inst)?,
                Step::Bind { results, yields } => {
                    for (&r, &y) in results.iter().zip(yields.iter()) {
                        let v = self.get(y)?;
                        self.set(r, v);
                    }
                }
            }
        }
        let mut outs = Vec::with_capacity(f.result_types.len());
        for &y in &f.body.yields {
            outs.push(self.parts(y)?);
        }
        self.store_finished_results(results, stride_bytes, &outs, state.sample, finished);
        let (new_sample, next_sample) = self.assign_samples(finished, state.next);
        let total32 = self.b.ins().ireduce(types::I32, total);
        let total_lanes = self.b.ins().splat(types::I32X4, total32);
        let mut fresh = finished;
        let mut sample = state.sample;
        for p in 0..parts {
            let queued = self.b.ins().icmp(IntCC::UnsignedLessThan, new_sample[p], total_lanes);
            fresh[p] = self.b.ins().band(finished[p], queued);
            sample[p] = self.vselect(fresh[p], Ty::I32, new_sample[p], state.sample[p]);
        }
        // With the queue empty, around again while any lane still runs.
        let any_fresh = self.any(fresh);
        let (fill, drained) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(any_fresh, fill, &[], drained, &[]);
        self.b.switch_to_block(drained);
        let any_still = self.any(still);
        let drained_args = to_header(&next, &state.per_sample, sample, still, next_sample);
        self.b.ins().brif(any_still, header, &drained_args, exit, &[]);

        // Refilled lanes: their samples' arguments, `pre`, and their first loop values.
        self.b.switch_to_block(fill);
        self.mask = fresh;
        let gathered = self.gather_fresh_params(args, stride_bytes, &params, sample, fresh, state.next, total);
        let mut redefined = Vec::new();
        for inst in &plan.pre {
            defined_values(std::slice::from_ref(*inst), &mut redefined);
        }
        for v in redefined {
            self.vals[v.0 as usize] = None;
        }
        for &(v, x) in &kept {
            self.vals[v.0 as usize] = Some(x);
        }
        for (p, v) in f.params.iter().zip(gathered) {
            self.set(p.value, v);
        }
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| !k) {
            self.inst(inst)?;
        }
        let refilled = |t: &mut Self, values: &[Value], current: &[[ir::Value; 2]]| -> Result<Vec<[ir::Value; 2]>> {
            let mut out = Vec::with_capacity(values.len());
            for (&v, &c) in values.iter().zip(current) {
                let ty = t.ty(v);
                let fresh_value = t.parts(v)?;
                let mut merged = c;
                for p in 0..parts {
                    merged[p] = t.vselect(fresh[p], ty, fresh_value[p], c[p]);
                }
                out.push(merged);
            }
            Ok(out)
        };
        let carried = refilled(self, init, &next)?;
        let per_sample_values = refilled(self, &per_sample, &state.per_sample)?;
        let running = self.map_mask(still, fresh, |b, x, y| b.ins().bor(x, y));
        let refill_args = to_header(&carried, &per_sample_values, sample, running, next_sample);
        self.b.ins().jump(header, &refill_args);
        Ok(())
    }

    /// Branches to `same` if every uniform parameter has the same value in all groups of the
    /// call (lane 0 of each, as the plain wrapper reads them), else to `differ`.
    fn branch_on_uniform_groups(
        &mut self,
        args: ir::Value,
        groups: ir::Value,
        stride_bytes: ir::Value,
        param_uniform: &[bool],
        same: ir::Block,
        differ: ir::Block,
    ) {
        let rows: Vec<usize> = (0..self.f.params.len()).filter(|&i| param_uniform.get(i) == Some(&true)).collect();
        if rows.is_empty() {
            self.b.ins().jump(same, &[]);
            return;
        }
        let mut row_args = Vec::with_capacity(rows.len());
        for &row in &rows {
            let offset = self.b.ins().imul_imm_u(stride_bytes, row as i64);
            row_args.push(self.b.ins().iadd(args, offset));
        }
        let first: Vec<ir::Value> =
            row_args.iter().map(|&at| self.b.ins().load(types::I32, data_flags(), at, 0)).collect();
        let (check, next) = (self.b.create_block(), self.b.create_block());
        let group = self.b.append_block_param(check, types::I64);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b.ins().jump(check, &block_args(&[one]));

        // check(g): groups g.. are still to compare.
        self.b.switch_to_block(check);
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, group, groups);
        self.b.ins().brif(done, same, &[], next, &[]);
        self.b.switch_to_block(next);
        let group_bytes = self.b.ins().imul_imm_u(group, (self.shape.lanes * 4) as i64);
        let mut equal = self.b.ins().iconst(types::I8, 1);
        for (&at, &x) in row_args.iter().zip(&first) {
            let at = self.b.ins().iadd(at, group_bytes);
            let y = self.b.ins().load(types::I32, data_flags(), at, 0);
            let e = self.b.ins().icmp(IntCC::Equal, x, y);
            equal = self.b.ins().band(equal, e);
        }
        let following = self.b.ins().iadd_imm_u(group, 1);
        self.b.ins().brif(equal, check, &block_args(&[following]), differ, &[]);
    }

    /// Stores the results `outs` of the lanes in `finished` (at least one) at their samples'
    /// places: `results[r * stride + sample]`. The vectors go to a stack slot whole, and a loop
    /// over the finished lanes copies each one's values from there. One or two lanes finish at
    /// a time, and the others cost nothing: stores for every lane, sent to a scratch slot by a
    /// selected address where the lane had not finished, ran about 150 instructions per refill
    /// at four lanes (docs/benchmarks.md).
    fn store_finished_results(
        &mut self,
        results: ir::Value,
        stride_bytes: ir::Value,
        outs: &[[ir::Value; 2]],
        sample: [ir::Value; 2],
        finished: [ir::Value; 2],
    ) {
        let f = self.f;
        let parts = self.shape.parts;
        let ptr = self.shape.ptr;
        // The sample indices, then each result: `parts` vectors of four 32-bit lanes each, so
        // that lane `l` of a value lies at byte `4 l` of its row.
        let row_bytes = 16 * parts as u32;
        let rows = 1 + outs.len() as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, rows * row_bytes, 4));
        for (row, value) in std::iter::once(&sample).chain(outs).enumerate() {
            for (p, &part) in value[..parts].iter().enumerate() {
                self.b.ins().stack_store(ptr, part, slot, (row as u32 * row_bytes + 16 * p as u32) as i32);
            }
        }
        let bits = self.lane_bits(finished);
        let base = self.b.ins().stack_addr(ptr, slot, 0);
        let (copy, done) = (self.b.create_block(), self.b.create_block());
        self.b.append_block_param(copy, types::I32);
        self.b.ins().jump(copy, &[BlockArg::Value(bits)]);

        self.b.switch_to_block(copy);
        let bits = self.b.block_params(copy)[0];
        let lane = self.b.ins().ctz(bits);
        let lane = self.b.ins().uextend(types::I64, lane);
        let lane_offset = self.b.ins().ishl_imm_u(lane, 2);
        let lane_at = self.b.ins().iadd(base, lane_offset);
        let index = self.b.ins().load(types::I32, MemFlagsData::trusted(), lane_at, 0);
        let index = self.b.ins().uextend(types::I64, index);
        let offset = self.b.ins().ishl_imm_u(index, 2);
        let mut at = self.b.ins().iadd(results, offset);
        for (r, &ty) in f.result_types.iter().enumerate() {
            if r > 0 {
                at = self.b.ins().iadd(at, stride_bytes);
            }
            let row = ((r as u32 + 1) * row_bytes) as i32;
            let x = self.b.ins().load(types::I32, MemFlagsData::trusted(), lane_at, row);
            let x = if ty == Ty::Bool { self.b.ins().band_imm_u(x, 1) } else { x };
            self.b.ins().store(data_flags(), x, at, 0);
        }
        let below = self.b.ins().iadd_imm_s(bits, -1);
        let rest = self.b.ins().band(bits, below);
        self.b.ins().brif(rest, copy, &[BlockArg::Value(rest)], done, &[]);
        self.b.switch_to_block(done);
    }

    /// Queue positions for the lanes in `finished`, in lane order from `next`: the lanes'
    /// new sample indices (other lanes' are unspecified) and the next free position.
    fn assign_samples(&mut self, finished: [ir::Value; 2], next: ir::Value) -> ([ir::Value; 2], ir::Value) {
        let bits = self.lane_bits(finished);
        let bits = self.b.ins().uextend(types::I64, bits);
        let mut position = next;
        let mut new_sample = [self.vconst_lanes([0; 4]); 2];
        for l in 0..self.shape.lanes {
            let index = self.b.ins().ireduce(types::I32, position);
            new_sample[l / 4] = self.b.ins().insertlane(new_sample[l / 4], index, (l % 4) as u8);
            let taken = self.b.ins().ushr_imm_u(bits, l as i64);
            let taken = self.b.ins().band_imm_u(taken, 1);
            position = self.b.ins().iadd(position, taken);
        }
        (new_sample, position)
    }

    /// The arguments of the samples in `sample` for the lanes in `fresh`, which the queue gave
    /// samples `next`, `next + 1`, ... in lane order ([`Self::assign_samples`]): where four
    /// samples from `next` on are in the arrays and `pshufb` is at hand, one vector load per
    /// parameter and a byte shuffle that moves sample `next + k` to the `k`-th fresh lane;
    /// otherwise lane by lane ([`Self::gather_entry_params`]). Lanes outside `fresh` get
    /// unspecified values. (Lane by lane, each loaded scalar waits in a spill slot for the
    /// insert that assembles its vector, which Cranelift places at the vector's first use; the
    /// vector loads take 3% of the Cornell box kernel's instructions off: docs/benchmarks.md.)
    #[allow(clippy::too_many_arguments)]
    fn gather_fresh_params(
        &mut self,
        args: ir::Value,
        stride_bytes: ir::Value,
        first: &[V],
        sample: [ir::Value; 2],
        fresh: [ir::Value; 2],
        next: ir::Value,
        total: ir::Value,
    ) -> Vec<V> {
        if !self.env.pshufb || self.shape.parts != 1 {
            return self.gather_entry_params(args, stride_bytes, first, sample);
        }
        let (vector, lanewise, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let param_types = self.f.param_types();
        let varying: Vec<Ty> =
            param_types.iter().zip(first).filter(|(_, v)| matches!(v, V::P(_))).map(|(&t, _)| t).collect();
        let joined: Vec<ir::Value> = varying.iter().map(|&ty| self.b.append_block_param(join, vec_ty(ty))).collect();
        let end = self.b.ins().iadd_imm_u(next, 4);
        let in_arrays = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, total);
        self.b.ins().brif(in_arrays, vector, &[], lanewise, &[]);

        self.b.switch_to_block(lanewise);
        let gathered = self.gather_entry_params(args, stride_bytes, first, sample);
        let parts: Vec<ir::BlockArg> = gathered
            .iter()
            .filter_map(|v| match v {
                V::P(p) => Some(ir::BlockArg::Value(p[0])),
                V::U(_) => None,
            })
            .collect();
        self.b.ins().jump(join, &parts);

        self.b.switch_to_block(vector);
        // The shuffle's control: lane l takes the bytes of element k, the number of fresh
        // lanes below l (an exclusive prefix sum of the mask, by shifts of whole lanes).
        let one = self.vconst_lanes([1; 4]);
        let counts = self.b.ins().band(fresh[0], one);
        let shift_lanes = |t: &mut Self, v: ir::Value, lanes: u8| {
            let bytes: Vec<u8> = (0..16u8).map(|i| if i < 4 * lanes { 0x80 } else { i - 4 * lanes }).collect();
            let c = t.b.func.dfg.constants.insert(ConstantData::from(bytes));
            let control = t.b.ins().vconst(types::I8X16, c);
            let v = t.b.ins().bitcast(types::I8X16, little(), v);
            let shifted = t.b.ins().x86_pshufb(v, control);
            t.b.ins().bitcast(types::I32X4, little(), shifted)
        };
        let by_one = shift_lanes(self, counts, 1);
        let pairs = self.b.ins().iadd(counts, by_one);
        let by_two = shift_lanes(self, pairs, 2);
        let inclusive = self.b.ins().iadd(pairs, by_two);
        let below = self.b.ins().isub(inclusive, counts);
        let bytes_per_lane = self.vconst_lanes([0x0404_0404; 4]);
        let first_bytes = self.b.ins().imul(below, bytes_per_lane);
        let byte_in_lane = self.vconst_lanes([0x0302_0100; 4]);
        let control = self.b.ins().iadd(first_bytes, byte_in_lane);
        let control = self.b.ins().bitcast(types::I8X16, little(), control);
        let offset = self.b.ins().ishl_imm_u(next, 2);
        let mut at = self.b.ins().iadd(args, offset);
        let mut shuffled = Vec::with_capacity(varying.len());
        for (i, (&ty, v)) in param_types.iter().zip(first).enumerate() {
            if let V::P(_) = v {
                let x = self.b.ins().load(types::I8X16, data_flags(), at, 0);
                let x = self.b.ins().x86_pshufb(x, control);
                let x = if ty == Ty::Bool {
                    let x = self.b.ins().bitcast(types::I32X4, little(), x);
                    let zero = self.vconst(Ty::I32, 0);
                    self.b.ins().icmp(IntCC::NotEqual, x, zero)
                } else {
                    self.b.ins().bitcast(vec_ty(ty), little(), x)
                };
                shuffled.push(ir::BlockArg::Value(x));
            }
            if i + 1 < first.len() {
                at = self.b.ins().iadd(at, stride_bytes);
            }
        }
        self.b.ins().jump(join, &shuffled);

        self.b.switch_to_block(join);
        let mut joined = joined.into_iter();
        first
            .iter()
            .map(|&v| match v {
                V::P(_) => {
                    let x = joined.next().expect("a block parameter per varying parameter");
                    V::P([x, x])
                }
                u => u,
            })
            .collect()
    }

    /// The arguments of the samples in `sample`, lane by lane from the `[param][sample]`
    /// arrays; uniform parameters keep their values in `first`.
    fn gather_entry_params(
        &mut self,
        args: ir::Value,
        stride_bytes: ir::Value,
        first: &[V],
        sample: [ir::Value; 2],
    ) -> Vec<V> {
        let mut offsets = Vec::with_capacity(self.shape.lanes);
        for l in 0..self.shape.lanes {
            let index = self.b.ins().extractlane(sample[l / 4], (l % 4) as u8);
            let index = self.b.ins().uextend(types::I64, index);
            let offset = self.b.ins().ishl_imm_u(index, 2);
            offsets.push(self.b.ins().iadd(args, offset));
        }
        let mut out = Vec::with_capacity(first.len());
        for (i, (ty, &v)) in self.f.param_types().into_iter().zip(first).enumerate() {
            if let V::U(_) = v {
                out.push(v);
            } else {
                let mut p = [self.vconst(ty, 0); 2];
                for (l, at) in offsets.iter().enumerate() {
                    let lane_ty = if ty == Ty::F32 { types::F32 } else { types::I32 };
                    let x = self.b.ins().load(lane_ty, data_flags(), *at, 0);
                    p[l / 4] = self.b.ins().insertlane(p[l / 4], x, (l % 4) as u8);
                }
                if ty == Ty::Bool {
                    let zero = self.vconst(Ty::I32, 0);
                    for part in p.iter_mut().take(self.shape.parts) {
                        *part = self.b.ins().icmp(IntCC::NotEqual, *part, zero);
                    }
                }
                out.push(V::P(p));
            }
            if i + 1 < first.len() {
                for at in &mut offsets {
                    *at = self.b.ins().iadd(*at, stride_bytes);
                }
            }
        }
        out
    }
}

/// The block parameters of the refill loop's header, in order.
struct LoopState {
    carried: Vec<[ir::Value; 2]>,
    per_sample: Vec<[ir::Value; 2]>,
    sample: [ir::Value; 2],
    running: [ir::Value; 2],
    next: ir::Value,
}

impl LoopState {
    fn unpack(params: &[ir::Value], carried: usize, per_sample: usize, parts: usize) -> LoopState {
        let mut it = params.chunks(parts);
        let mut take = || {
            let c = it.next().expect("the refill loop's block parameters");
            if parts == 1 {
                [c[0]; 2]
            } else {
                [c[0], c[1]]
            }
        };
        let carried = (0..carried).map(|_| take()).collect();
        let per_sample = (0..per_sample).map(|_| take()).collect();
        let (sample, running) = (take(), take());
        LoopState { carried, per_sample, sample, running, next: *params.last().expect("the next sample") }
    }
}
