//! The LLVM side of lane refill (`drs_cranelift::refill`, which says when it applies and why
//! results stay the same bits): the call's samples go through one group as a queue, and a lane
//! whose loop ends stores its results and takes the next sample.

use super::*;
use drs_cranelift::refill::{RefillPlan, Step};

/// What an entry wrapper received and read from its context.
pub(super) struct EntryIo {
    pub args: LLVMValueRef,
    pub results: LLVMValueRef,
    pub groups: LLVMValueRef,
    pub stride: LLVMValueRef,
    pub active: LLVMValueRef,
}

impl Codegen<'_> {
    /// Emits, from the current block, the choice between refill and the plain groups (`plain`:
    /// not every lane active, a guard of the plan fails, uniform parameters differ between
    /// groups, or more samples than 32-bit indices reach) and the refilling loop, which ends at
    /// `exit`. `frame` is the wrapper's frame for the function; `uniform` its uniform values,
    /// `param_uniform` the caller's flags.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn refill(
        &self,
        frame: &mut Frame,
        plan: &RefillPlan,
        uniform: &[bool],
        param_uniform: &[bool],
        io: EntryIo,
        plain: LLVMBasicBlockRef,
        exit: LLVMBasicBlockRef,
    ) {
        let b = self.b();
        let f = frame.ir;
        let w = self.lanes;
        let all = self.constant(Const::Bool(true));
        let (init, body) = plan.the_loop();
        let per_sample = plan.per_sample(f, uniform);

        // The first group's arguments, and what `pre` computes the same for every sample (the
        // guards among it).
        for (k, (p, ty)) in f.params.iter().zip(f.param_types()).enumerate() {
            let column = self.column(io.args, io.stride, k, self.i64_const(0));
            frame.set(p.value, self.value_from_bits(ty, self.load_lanes(column)));
        }
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| k) {
            self.inst(frame, inst, all);
        }
        let full = LLVMConstInt(self.t.i32, (1u64 << w) - 1, 0);
        let mut reaches = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, io.active, full, NO_NAME);
        let limit = self.i64_const(u32::MAX as u64 / w as u64);
        let few_enough = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULE, io.groups, limit, NO_NAME);
        reaches = LLVMBuildAnd(b, reaches, few_enough, NO_NAME);
        for &(cond, want) in &plan.guards {
            let c = self.lane(frame.get(cond), 0);
            let c = if want { c } else { LLVMBuildNot(b, c, NO_NAME) };
            reaches = LLVMBuildAnd(b, reaches, c, NO_NAME);
        }
        let same_groups = self.block(frame, "same_groups");
        LLVMBuildCondBr(b, reaches, same_groups, plain);
        LLVMPositionBuilderAtEnd(b, same_groups);
        let start = self.block(frame, "refill");
        self.branch_on_uniform_groups(frame, &io, param_uniform, start, plain);

        // The first samples enter the loop.
        LLVMPositionBuilderAtEnd(b, start);
        let total = LLVMBuildMul(b, io.groups, self.i64_const(w as u64), NO_NAME);
        let total = self.splat_runtime(LLVMBuildTrunc(b, total, self.t.i32, NO_NAME), self.t.i32s);
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| !k) {
            self.inst(frame, inst, all);
        }
        let first_carried: Vec<LLVMValueRef> = init.iter().map(|&v| frame.get(v)).collect();
        let first_per_sample: Vec<LLVMValueRef> = per_sample.iter().map(|&v| frame.get(v)).collect();
        let first_sample = self.lane_vector(false);
        let start_end = LLVMGetInsertBlock(b);
        let header = self.block(frame, "refill_loop");
        LLVMBuildBr(b, header);

        // header(carried, per-sample values, sample indices, running lanes, next sample)
        LLVMPositionBuilderAtEnd(b, header);
        let phi = |ty: LLVMTypeRef| LLVMBuildPhi(b, ty, NO_NAME);
        let carried: Vec<LLVMValueRef> = body.params.iter().map(|&p| phi(self.vector(f.ty(p)))).collect();
        let sample_values: Vec<LLVMValueRef> = per_sample.iter().map(|&v| phi(self.vector(f.ty(v)))).collect();
        let (sample, running, next) = (phi(self.t.i32s), phi(self.t.mask), phi(self.t.i64));
        for (&p, &c) in body.params.iter().zip(&carried) {
            frame.set(p, c);
        }
        for (&v, &s) in per_sample.iter().zip(&sample_values) {
            frame.set(v, s);
        }
        let yields = self.region(frame, body, running);
        let (mut cont, next_values) = (yields[0], yields[1..].to_vec());
        if let Some(condition) = plan.while_condition {
            // Lanes whose condition fails on the next values leave now.
            for (&p, &n) in body.params.iter().zip(&next_values) {
                frame.set(p, n);
            }
            for inst in &body.insts[..body.insts.len() - 1] {
                self.inst(frame, inst, running);
            }
            cont = LLVMBuildAnd(b, cont, frame.get(condition), NO_NAME);
        }
        let still = LLVMBuildAnd(b, running, cont, NO_NAME);
        let finished = LLVMBuildAnd(b, running, LLVMBuildNot(b, cont, NO_NAME), NO_NAME);
        let body_end = LLVMGetInsertBlock(b);
        let finish = self.block(frame, "finish");
        self.no_vectorize(LLVMBuildCondBr(b, self.any(finished), finish, header));

        // Lanes that left the loop: `post`, their results stored, the next samples taken.
        LLVMPositionBuilderAtEnd(b, finish);
        for (&r, &n) in plan.the_loop.results.iter().zip(&next_values) {
            frame.set(r, n);
        }
        for step in &plan.post {
            match step {
                Step::Inst(inst) => self.inst(frame, inst, finished),
                Step::Bind { results, yields } => {
                    for (&r, &y) in results.iter().zip(yields.iter()) {
                        frame.set(r, frame.get(y));
                    }
                }
            }
        }
        for (k, (&y, &ty)) in f.body.yields.iter().zip(&f.result_types).enumerate() {
            let pointers = self.element_pointers(self.column(io.results, io.stride, k, self.i64_const(0)), sample);
            self.scatter(frame, self.value_to_bits(ty, frame.get(y)), pointers, finished);
        }
        let (new_sample, next_sample) = self.assign_samples(finished, next);
        let queued = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULT, new_sample, total, NO_NAME);
        let fresh = LLVMBuildAnd(b, finished, queued, NO_NAME);
        let sample_after = LLVMBuildSelect(b, fresh, new_sample, sample, NO_NAME);
        let (fill, drained) = (self.block(frame, "fill"), self.block(frame, "drained"));
        LLVMBuildCondBr(b, self.any(fresh), fill, drained);
        // With the queue empty, around again while any lane still runs.
        LLVMPositionBuilderAtEnd(b, drained);
        LLVMBuildCondBr(b, self.any(still), header, exit);

        // Refilled lanes: their samples' arguments (masked gathers: other lanes' sample numbers
        // may lie past the arguments), `pre`, and their first loop values.
        LLVMPositionBuilderAtEnd(b, fill);
        for (k, (p, ty)) in f.params.iter().zip(f.param_types()).enumerate() {
            if param_uniform.get(k) == Some(&true) {
                continue;
            }
            let pointers = self.element_pointers(self.column(io.args, io.stride, k, self.i64_const(0)), sample_after);
            frame.set(p.value, self.value_from_bits(ty, self.masked_gather(pointers, fresh)));
        }
        for (inst, _) in plan.pre.iter().zip(&plan.keep).filter(|(_, &k)| !k) {
            self.inst(frame, inst, fresh);
        }
        let merge = |value: LLVMValueRef, old: LLVMValueRef| LLVMBuildSelect(b, fresh, value, old, NO_NAME);
        let refilled_carried: Vec<LLVMValueRef> =
            init.iter().zip(&next_values).map(|(&v, &old)| merge(frame.get(v), old)).collect();
        let refilled_per_sample: Vec<LLVMValueRef> =
            per_sample.iter().zip(&sample_values).map(|(&v, &old)| merge(frame.get(v), old)).collect();
        let refilled_running = LLVMBuildOr(b, still, fresh, NO_NAME);
        let fill_end = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, header);

        // The header's incoming values: from the start, around again with no lane finished,
        // with the queue empty, and after refilling.
        let edges = [start_end, body_end, drained, fill_end];
        let add = |phi: LLVMValueRef, values: [LLVMValueRef; 4]| {
            let (mut values, mut blocks) = (values, edges);
            LLVMAddIncoming(phi, values.as_mut_ptr(), blocks.as_mut_ptr(), 4);
        };
        for (k, &c) in carried.iter().enumerate() {
            add(c, [first_carried[k], next_values[k], next_values[k], refilled_carried[k]]);
        }
        for (k, &s) in sample_values.iter().enumerate() {
            add(s, [first_per_sample[k], s, s, refilled_per_sample[k]]);
        }
        add(sample, [first_sample, sample, sample_after, sample_after]);
        add(running, [all, still, still, refilled_running]);
        let first_next = self.i64_const(w as u64);
        add(next, [first_next, next, next_sample, next_sample]);
    }

    /// `&base[k * stride + first]`: lane 0 of column `k` at sample `first`.
    unsafe fn column(&self, base: LLVMValueRef, stride: LLVMValueRef, k: usize, first: LLVMValueRef) -> LLVMValueRef {
        let b = self.b();
        let offset = LLVMBuildAdd(b, LLVMBuildMul(b, stride, self.i64_const(k as u64), NO_NAME), first, NO_NAME);
        let mut index = [offset];
        LLVMBuildGEP2(b, self.t.i32, base, index.as_mut_ptr(), 1, NO_NAME)
    }

    /// Queue positions for the lanes in `finished`, in lane order from `next`: the lanes' new
    /// sample indices (others' are unspecified) and the next free position.
    unsafe fn assign_samples(&self, finished: LLVMValueRef, next: LLVMValueRef) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b();
        let bits = self.mask_to_i32(finished);
        // Lane `l` counts the finished lanes below it: the bits under `(1 << l) - 1`.
        let mut below: Vec<LLVMValueRef> =
            (0..self.lanes).map(|l| LLVMConstInt(self.t.i32, (1u64 << l) - 1, 0)).collect();
        let below = LLVMConstVector(below.as_mut_ptr(), self.lanes);
        let lower = LLVMBuildAnd(b, self.splat_runtime(bits, self.t.i32s), below, NO_NAME);
        let counts = self.intrinsic("llvm.ctpop", &[self.t.i32s], &[lower]);
        let next32 = self.splat_runtime(LLVMBuildTrunc(b, next, self.t.i32, NO_NAME), self.t.i32s);
        let new_sample = LLVMBuildAdd(b, next32, counts, NO_NAME);
        let taken = self.intrinsic("llvm.ctpop", &[self.t.i32], &[bits]);
        let next_sample = LLVMBuildAdd(b, next, LLVMBuildZExt(b, taken, self.t.i64, NO_NAME), NO_NAME);
        (new_sample, next_sample)
    }

    /// Branches to `same` if every uniform parameter has the same value in all groups of the
    /// call (lane 0 of each), else to `differ`.
    unsafe fn branch_on_uniform_groups(
        &self,
        frame: &Frame,
        io: &EntryIo,
        param_uniform: &[bool],
        same: LLVMBasicBlockRef,
        differ: LLVMBasicBlockRef,
    ) {
        let b = self.b();
        let rows: Vec<usize> = (0..frame.ir.params.len()).filter(|&k| param_uniform.get(k) == Some(&true)).collect();
        if rows.is_empty() {
            LLVMBuildBr(b, same);
            return;
        }
        let load = |at: LLVMValueRef| {
            let load = LLVMBuildLoad2(b, self.t.i32, at, NO_NAME);
            LLVMSetAlignment(load, 4);
            load
        };
        let first: Vec<LLVMValueRef> =
            rows.iter().map(|&k| load(self.column(io.args, io.stride, k, self.i64_const(0)))).collect();
        let before = LLVMGetInsertBlock(b);
        let (check, next) = (self.block(frame, "check_group"), self.block(frame, "compare_group"));
        LLVMBuildBr(b, check);
        // check(g): groups g.. are still to compare.
        LLVMPositionBuilderAtEnd(b, check);
        let group = LLVMBuildPhi(b, self.t.i64, NO_NAME);
        let done = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGE, group, io.groups, NO_NAME);
        LLVMBuildCondBr(b, done, same, next);
        LLVMPositionBuilderAtEnd(b, next);
        let at = LLVMBuildMul(b, group, self.i64_const(self.lanes as u64), NO_NAME);
        let mut equal = LLVMConstInt(self.t.i1, 1, 0);
        for (&k, &x) in rows.iter().zip(&first) {
            let y = load(self.column(io.args, io.stride, k, at));
            equal = LLVMBuildAnd(b, equal, LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, x, y, NO_NAME), NO_NAME);
        }
        let following = LLVMBuildAdd(b, group, self.i64_const(1), NO_NAME);
        self.no_vectorize(LLVMBuildCondBr(b, equal, check, differ));
        let mut values = [self.i64_const(1), following];
        let mut blocks = [before, next];
        LLVMAddIncoming(group, values.as_mut_ptr(), blocks.as_mut_ptr(), 2);
    }
}
