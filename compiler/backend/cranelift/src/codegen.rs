//! Translation of one IR function into Cranelift IR for a lane width.
//!
//! Representation of an IR value (see [`V`]):
//! - uniform values (all of scalar mode) are one Cranelift scalar: `f32`, `i32` (i32 and u32),
//!   or `i8` holding 0/1 for bools;
//! - varying values are one (4 lanes) or two (8 lanes) 128-bit vectors: `f32x4`, `i32x4`, and
//!   for bools an `i32x4` lane mask (all ones or zero).
//!
//! Vector code runs under an execution mask (`Translator::mask`) that says which lanes are
//! active; side effects (stores, atomic adds, extern calls) only happen for active lanes, and
//! internal functions receive the caller's mask as their first vector parameters. A region
//! only ever runs when at least one lane is active. What an inactive lane holds is unspecified
//! and never observed (no operation mixes lanes, and every side effect is masked), so values
//! that only inactive lanes would need are neither selected nor zeroed.
//!
//! Local arrays ([`Op::LocalLoad`], [`Op::LocalStore`]) live in one stack slot each, of
//! `len * lanes` 4-byte cells: lane `l` of element `i` is cell `i * lanes + l`, so an access
//! with a uniform index is one whole-vector load (or a masked read-modify-write of one vector),
//! and only varying indices go lane by lane. Bools are stored as i32, non-zero meaning true.

use crate::abi::*;
use crate::Lanes;
use cranelift_codegen::ir::{
    self, condcodes::FloatCC, condcodes::IntCC, types, AbiParam, AtomicRmwOp, BlockArg, ConstantData, Endianness,
    InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind, Type,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::FunctionBuilder;
use drs_ir::{BinaryOp, CmpOp, Const, Function, Inst, Op, Region, Ty, UnaryOp, Value};
use drs_opt::util::mark_reads;
use std::collections::HashMap;

mod refill;

/// The Cranelift form of an IR value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum V {
    /// The same in every lane: one scalar.
    U(ir::Value),
    /// Per lane: `parts` vectors (the second is unused with 4 lanes).
    P([ir::Value; 2]),
}

pub(crate) type Result<T> = std::result::Result<T, String>;

/// What an entry wrapper runs its groups over: the `[param][lane]` argument and result arrays,
/// the number of groups, the distance between two rows in bytes, and the block it leaves by.
#[derive(Clone, Copy)]
struct EntryCall {
    args: ir::Value,
    results: ir::Value,
    groups: ir::Value,
    stride_bytes: ir::Value,
    exit: ir::Block,
}

/// Widths and types of one compilation.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub lanes: usize,
    pub parts: usize,
    pub ptr: Type,
}

impl Shape {
    pub fn new(lanes: Lanes, ptr: Type) -> Shape {
        Shape { lanes: lanes.count(), parts: lanes.count().div_ceil(4), ptr }
    }

    pub fn vector(self) -> bool {
        self.lanes > 1
    }
}

pub(crate) fn scalar_ty(ty: Ty) -> Type {
    match ty {
        Ty::F32 => types::F32,
        Ty::I32 | Ty::U32 => types::I32,
        Ty::Bool => types::I8,
    }
}

pub(crate) fn vec_ty(ty: Ty) -> Type {
    match ty {
        Ty::F32 => types::F32X4,
        _ => types::I32X4,
    }
}

pub(crate) fn trusted_ro() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

/// Flags of accesses to buffer elements and argument arrays: valid addresses (vector accesses
/// to argument arrays may be unaligned).
pub(crate) fn data_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Flags of loads of buffer elements: [`data_flags`], and for a read-only buffer (see
/// [`read_only_buffers`]) also free to move, since every address a load computes is valid.
fn element_load_flags(read_only: bool) -> MemFlagsData {
    let flags = data_flags().with_aligned();
    if read_only {
        flags.with_readonly().with_can_move()
    } else {
        flags
    }
}

fn little() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

pub(crate) fn block_args(vs: &[ir::Value]) -> Vec<BlockArg> {
    vs.iter().map(|&v| BlockArg::Value(v)).collect()
}

/// The Cranelift signature of the internal version of a function: `(ctx, [mask parts],
/// params...) -> results`, each value taking one scalar in scalar mode and `parts` vectors in
/// vector mode.
pub(crate) fn internal_signature(call_conv: CallConv, shape: Shape, f: &Function) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(shape.ptr));
    if shape.vector() {
        for _ in 0..shape.parts {
            sig.params.push(AbiParam::new(types::I32X4));
        }
    }
    for ty in f.param_types() {
        push_repr(&mut sig.params, shape, ty, !shape.vector());
    }
    for &ty in &f.result_types {
        push_repr(&mut sig.returns, shape, ty, !shape.vector());
    }
    sig
}

fn push_repr(list: &mut Vec<AbiParam>, shape: Shape, ty: Ty, uniform: bool) {
    if uniform {
        list.push(AbiParam::new(scalar_ty(ty)));
    } else {
        for _ in 0..shape.parts {
            list.push(AbiParam::new(vec_ty(ty)));
        }
    }
}

/// Module-level things a function body refers to.
pub(crate) struct Env<'a> {
    pub module: &'a drs_ir::Module,
    pub call_conv: CallConv,
    pub config: TargetFrontendConfig,
    /// The signature of the internal (all-varying) version of each IR function.
    pub funcs: &'a [Signature],
    /// Masked selects may use x86's one-instruction `blendvps` (x86-64 with SSE4.1); otherwise
    /// they are `bitselect`, which x86 lowers to three instructions when it cannot prove that
    /// the mask is all-ones or all-zeros per lane.
    pub blendv: bool,
    /// Byte shuffles may use x86's `pshufb` (x86-64 with SSSE3): lane refill then takes a
    /// group's new samples' arguments with one vector load per parameter.
    pub pshufb: bool,
    /// [`crate::Options::private_buffers`]: atomic adds as plain loads and stores.
    pub private_buffers: bool,
    /// Gathers take their indices out of the vector two at a time (x86-64; see
    /// [`Translator::lane_offsets`]).
    pub index_pairs: bool,
    /// Per buffer: whether no function of the module stores to it or adds to it, so that its
    /// elements keep their values for the whole call ([`read_only_buffers`]).
    pub read_only: &'a [bool],
}

/// Per buffer of `module`, whether no function stores or adds to it. Host functions never
/// touch buffers (the IR's rule), so these hold the same values for a whole kernel call: their
/// loads may move and merge (a parameter gather's loads then fold into its lane inserts).
pub(crate) fn read_only_buffers(module: &drs_ir::Module) -> Vec<bool> {
    let mut read_only = vec![true; module.buffers.len()];
    for f in &module.functions {
        drs_opt::util::walk_insts(&f.body, &mut |inst| {
            if let Op::Store { buffer, .. } | Op::AtomicAdd { buffer, .. } = inst.op {
                read_only[buffer as usize] = false;
            }
        });
    }
    read_only
}

/// Namespaces of the external names that compiled code refers to (`compile.rs` turns them
/// into relocations): the internal version of IR function `index`, and host symbols.
pub(crate) const NS_FUNCTION: u32 = 0;
pub(crate) const NS_SYMBOL: u32 = 1;
/// Host symbol `drs_fmodf` (f32 `Rem`), in [`NS_SYMBOL`].
pub(crate) const SYM_FMODF: u32 = 0;

/// Imports a function into `func`: a colocated one (in the same code blob, called directly)
/// or a host one (called through its absolute address).
fn import_function(
    func: &mut ir::Function,
    namespace: u32,
    index: u32,
    signature: Signature,
    colocated: bool,
) -> ir::FuncRef {
    let signature = func.import_signature(signature);
    let name = func.declare_imported_user_function(ir::UserExternalName { namespace, index });
    func.import_function(ir::ExtFuncData { name: ir::ExternalName::user(name), signature, colocated, patchable: false })
}

pub(crate) struct Translator<'a, 'b> {
    b: FunctionBuilder<'b>,
    env: Env<'a>,
    f: &'a Function,
    shape: Shape,
    uniform: Vec<bool>,
    /// Whether anything reads the value (an operand or a yield).
    used: Vec<bool>,
    vals: Vec<Option<V>>,
    consts: Vec<Option<Const>>,
    ctx: ir::Value,
    /// The execution mask (vector mode only).
    mask: [ir::Value; 2],
    /// While emitting a run of straight-line code half by half (8 lanes): the half.
    half: Option<usize>,
    func_refs: HashMap<u32, ir::FuncRef>,
    fmod_ref: Option<ir::FuncRef>,
    extern_sig: Option<ir::SigRef>,
    /// The stack slot of each local array, created at its first use.
    local_slots: Vec<Option<ir::StackSlot>>,
}

impl<'a, 'b> Translator<'a, 'b> {
    fn new(b: FunctionBuilder<'b>, env: Env<'a>, f: &'a Function, shape: Shape, param_uniform: &[bool]) -> Self {
        let uniform = crate::uniform::analyze(f, param_uniform, shape.vector());
        // `ctx` and `mask` are set by the caller once it has created the entry block.
        let placeholder = ir::Value::from_u32(0);
        Translator {
            b,
            env,
            f,
            shape,
            uniform,
            used: used_values(f),
            vals: vec![None; f.value_types.len()],
            consts: vec![None; f.value_types.len()],
            ctx: placeholder,
            mask: [placeholder; 2],
            half: None,
            func_refs: HashMap::new(),
            fmod_ref: None,
            extern_sig: None,
            local_slots: vec![None; f.locals.len()],
        }
    }

    /// Translates the body with the given parameter values and returns the results, flattened
    /// into their reprs (one scalar each in scalar mode, `parts` vectors each in vector mode).
    fn body(&mut self, params: Vec<V>) -> Result<Vec<ir::Value>> {
        for (p, v) in self.f.params.iter().zip(params) {
            self.set(p.value, v);
        }
        let results = self.region(&self.f.body)?;
        let mut flat = Vec::new();
        for (&v, &ty) in results.iter().zip(&self.f.result_types) {
            if self.shape.vector() {
                let p = self.vparts(v, ty);
                flat.extend_from_slice(&p[..self.shape.parts]);
            } else {
                flat.push(self.scalar_of(v)?);
            }
        }
        Ok(flat)
    }

    fn finish(mut self) {
        self.b.seal_all_blocks();
        self.b.finalize(self.env.config);
    }

    /// Translates `f` into the function `b` is building, whose signature is
    /// [`internal_signature`] (all parameters varying).
    pub fn translate_function(b: FunctionBuilder<'b>, env: Env<'a>, f: &'a Function, shape: Shape) -> Result<()> {
        let mut t = Translator::new(b, env, f, shape, &[]);
        let entry = t.b.create_block();
        t.b.append_block_params_for_function_params(entry);
        t.b.switch_to_block(entry);
        let params: Vec<ir::Value> = t.b.block_params(entry).to_vec();
        t.ctx = params[0];
        let mut next = 1;
        if shape.vector() {
            t.mask = [params[1]; 2];
            t.mask[..shape.parts].copy_from_slice(&params[1..1 + shape.parts]);
            next += shape.parts;
        }
        let args: Vec<V> = f.params.iter().map(|_| t.take_repr(&params, &mut next, !shape.vector())).collect();
        let rets = t.body(args)?;
        t.b.ins().return_(&rets);
        t.finish();
        Ok(())
    }

    /// Builds the entry wrapper of `f` (see [`crate::EntryFn`]): a loop over `ctx.groups`
    /// groups of lanes that loads each group's arguments from `[param][lane]` arrays, runs the
    /// body of `f` inline (with `param_uniform` parameters read from lane 0 and kept scalar)
    /// and stores its results likewise. In vector code, a body made of one loop with code
    /// around it runs through one group whose lanes are refilled instead (see [`refill`]).
    pub fn translate_entry(
        b: FunctionBuilder<'b>,
        env: Env<'a>,
        f: &'a Function,
        shape: Shape,
        param_uniform: &[bool],
    ) -> Result<()> {
        let mut t = Translator::new(b, env, f, shape, param_uniform);
        let block0 = t.b.create_block();
        t.b.append_block_params_for_function_params(block0);
        t.b.switch_to_block(block0);
        let (args, results, ctx) = {
            let p = t.b.block_params(block0);
            (p[0], p[1], p[2])
        };
        t.ctx = ctx;
        let groups = t.b.ins().load(types::I64, trusted_ro(), ctx, CTX_GROUPS);
        let (start, exit) = (t.b.create_block(), t.b.create_block());
        t.b.ins().brif(groups, start, &[], exit, &[]);

        t.b.switch_to_block(start);
        let stride = t.b.ins().load(types::I64, trusted_ro(), ctx, CTX_STRIDE);
        let stride_bytes = t.b.ins().ishl_imm_u(stride, 2);
        if shape.vector() {
            t.mask = t.active_mask();
        }
        let call = EntryCall { args, results, groups, stride_bytes, exit };
        let plan = if shape.vector() { crate::refill::refill_plan(t.env.module, f, &t.uniform) } else { None };
        match plan {
            Some(plan) => t.refill_groups(&plan, call, param_uniform)?,
            None => t.plain_groups(call, param_uniform)?,
        }
        t.b.switch_to_block(exit);
        t.b.ins().return_(&[]);
        debug_assert_eq!(shape.ptr, types::I64);
        t.finish();
        Ok(())
    }

    /// The groups of an entry wrapper one after the other, emitted from the current block
    /// (with at least one group) and ending with a jump to `call.exit`.
    fn plain_groups(&mut self, call: EntryCall, param_uniform: &[bool]) -> Result<()> {
        let EntryCall { args, results, groups, stride_bytes, exit } = call;
        let shape = self.shape;
        let body = self.b.create_block();
        let g = self.b.append_block_param(body, types::I64);
        let zero64 = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(body, &block_args(&[zero64]));

        self.b.switch_to_block(body);
        let group_bytes = self.b.ins().imul_imm_u(g, (shape.lanes * 4) as i64);
        let group_args = self.b.ins().iadd(args, group_bytes);
        let params = self.load_entry_params(group_args, stride_bytes, param_uniform);
        let outs = self.body(params)?;
        let mut pr = self.b.ins().iadd(results, group_bytes);
        let mut next = 0;
        for (i, &ty) in self.f.result_types.iter().enumerate() {
            if i > 0 {
                pr = self.b.ins().iadd(pr, stride_bytes);
            }
            for part in 0..shape.parts {
                let x = outs[next];
                next += 1;
                let x = match ty {
                    Ty::Bool if shape.vector() => {
                        let one = self.vconst(Ty::I32, 1);
                        self.b.ins().band(x, one)
                    }
                    Ty::Bool => self.b.ins().uextend(types::I32, x),
                    _ => x,
                };
                self.b.ins().store(data_flags(), x, pr, (part * 16) as i32);
            }
        }
        let g1 = self.b.ins().iadd_imm_u(g, 1);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, g1, groups);
        self.b.ins().brif(more, body, &block_args(&[g1]), exit, &[]);
        Ok(())
    }

    /// The execution mask of an entry wrapper's lanes: `ctx.active`, bit `l` for lane `l`.
    fn active_mask(&mut self) -> [ir::Value; 2] {
        let active = self.b.ins().load(types::I32, trusted_ro(), self.ctx, CTX_ACTIVE);
        let splat = self.b.ins().splat(types::I32X4, active);
        let zero = self.vconst(Ty::I32, 0);
        let mut mask = [zero; 2];
        for (part, m) in mask.iter_mut().enumerate().take(self.shape.parts) {
            let bits: [u32; 4] = std::array::from_fn(|l| 1 << (part * 4 + l));
            let lanes = self.vconst_lanes(bits);
            let on = self.b.ins().band(splat, lanes);
            *m = self.b.ins().icmp(IntCC::NotEqual, on, zero);
        }
        if self.shape.parts == 1 {
            mask[1] = mask[0];
        }
        mask
    }

    /// The parameters of the group of lanes whose first argument is at `args`, one row of the
    /// `[param][lane]` arrays every `stride_bytes`; `param_uniform` parameters read from the
    /// first lane and kept scalar.
    fn load_entry_params(&mut self, args: ir::Value, stride_bytes: ir::Value, param_uniform: &[bool]) -> Vec<V> {
        let shape = self.shape;
        let mut pa = args;
        let mut params = Vec::new();
        for (i, ty) in self.f.param_types().into_iter().enumerate() {
            if i > 0 {
                pa = self.b.ins().iadd(pa, stride_bytes);
            }
            let uniform = !shape.vector() || param_uniform.get(i).copied().unwrap_or(false);
            if uniform {
                // Lane 0 stands for all lanes.
                let lty = if ty == Ty::F32 { types::F32 } else { types::I32 };
                let x = self.b.ins().load(lty, data_flags(), pa, 0);
                let x = if ty == Ty::Bool { self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0) } else { x };
                params.push(V::U(x));
            } else {
                let mut p = [pa; 2];
                for (part, slot) in p.iter_mut().enumerate().take(shape.parts) {
                    let x = self.b.ins().load(vec_ty(ty), data_flags(), pa, (part * 16) as i32);
                    *slot = if ty == Ty::Bool {
                        let z = self.vconst(Ty::I32, 0);
                        self.b.ins().icmp(IntCC::NotEqual, x, z)
                    } else {
                        x
                    };
                }
                if shape.parts == 1 {
                    p[1] = p[0];
                }
                params.push(V::P(p));
            }
        }
        params
    }

    fn take_repr(&self, vals: &[ir::Value], next: &mut usize, uniform: bool) -> V {
        if uniform {
            *next += 1;
            V::U(vals[*next - 1])
        } else {
            let mut p = [vals[*next]; 2];
            for (i, slot) in p.iter_mut().enumerate().take(self.shape.parts) {
                *slot = vals[*next + i];
            }
            *next += self.shape.parts;
            V::P(p)
        }
    }

    // ----- values -------------------------------------------------------------------------

    fn get(&self, v: Value) -> Result<V> {
        self.vals[v.0 as usize].ok_or_else(|| format!("%{} is used before it is translated", v.0))
    }

    fn set(&mut self, v: Value, x: V) {
        let slot = &mut self.vals[v.0 as usize];
        if let (Some(1), Some(V::P(old)), V::P(new)) = (self.half, *slot, x) {
            // The second half of a value whose first half is already there.
            *slot = Some(V::P([old[0], new[1]]));
            return;
        }
        *slot = Some(x);
    }

    fn ty(&self, v: Value) -> Ty {
        self.f.ty(v)
    }

    fn is_uniform(&self, v: Value) -> bool {
        self.uniform[v.0 as usize]
    }

    fn scalar_of(&self, v: V) -> Result<ir::Value> {
        match v {
            V::U(x) => Ok(x),
            V::P(_) => Err("internal error: a varying value where a uniform one is required".into()),
        }
    }

    fn scalar(&self, v: Value) -> Result<ir::Value> {
        self.scalar_of(self.get(v)?)
    }

    /// The vector parts of an IR value (uniform values are broadcast).
    fn parts(&mut self, v: Value) -> Result<[ir::Value; 2]> {
        if let (Some(c), V::U(_)) = (self.consts[v.0 as usize], self.get(v)?) {
            let x = self.vconst(c.ty(), c.bits());
            return Ok([x; 2]);
        }
        let x = self.get(v)?;
        Ok(self.vparts(x, self.ty(v)))
    }

    /// The vector parts of a translated value of type `ty`.
    fn vparts(&mut self, v: V, ty: Ty) -> [ir::Value; 2] {
        match v {
            V::P(p) => p,
            V::U(x) => {
                let x = if ty == Ty::Bool { self.bool_to_lane(x) } else { x };
                let s = self.b.ins().splat(vec_ty(ty), x);
                [s; 2]
            }
        }
    }

    /// 0/1 (i8) to 0/-1 (i32).
    fn bool_to_lane(&mut self, x: ir::Value) -> ir::Value {
        let w = self.b.ins().uextend(types::I32, x);
        self.b.ins().ineg(w)
    }

    /// A vector with `bits` in every lane (bools: a mask of `bits != 0`).
    fn vconst(&mut self, ty: Ty, bits: u32) -> ir::Value {
        let bits = if ty == Ty::Bool {
            if bits != 0 {
                u32::MAX
            } else {
                0
            }
        } else {
            bits
        };
        let bytes: Vec<u8> = (0..4).flat_map(|_| bits.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(vec_ty(ty), c)
    }

    /// Whether `v` is a vector constant with every bit zero.
    fn is_zero_vector(&self, v: ir::Value) -> bool {
        let dfg = &self.b.func.dfg;
        match dfg.value_def(v) {
            ir::ValueDef::Result(inst, _) => match dfg.insts[inst] {
                ir::InstructionData::UnaryConst { opcode: ir::Opcode::Vconst, constant_handle } => {
                    dfg.constants.get(constant_handle).as_slice().iter().all(|&byte| byte == 0)
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn vconst_lanes(&mut self, lanes: [u32; 4]) -> ir::Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|b| b.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::I32X4, c)
    }

    fn sconst(&mut self, c: Const) -> ir::Value {
        match c {
            Const::F32(bits) => self.b.ins().f32const(f32::from_bits(bits)),
            Const::I32(x) => self.b.ins().iconst(types::I32, x as i64),
            Const::U32(x) => self.b.ins().iconst(types::I32, x as i64),
            Const::Bool(x) => self.b.ins().iconst(types::I8, x as i64),
        }
    }

    /// Flattens a value into the block arguments of a repr.
    fn repr_args(&mut self, v: Value, uniform: bool) -> Result<Vec<ir::Value>> {
        if uniform {
            Ok(vec![self.scalar(v)?])
        } else {
            let p = self.parts(v)?;
            Ok(p[..self.shape.parts].to_vec())
        }
    }

    fn append_repr_params(&mut self, block: ir::Block, ty: Ty, uniform: bool) {
        if uniform {
            self.b.append_block_param(block, scalar_ty(ty));
        } else {
            for _ in 0..self.shape.parts {
                self.b.append_block_param(block, vec_ty(ty));
            }
        }
    }

    /// Reads the values of `reprs` back from block params.
    fn reprs_from(&self, params: &[ir::Value], reprs: &[bool]) -> Vec<V> {
        let mut next = 0;
        reprs.iter().map(|&u| self.take_repr(params, &mut next, u)).collect()
    }

    // ----- masks ----------------------------------------------------------------------------

    fn any(&mut self, m: [ir::Value; 2]) -> ir::Value {
        let m = if self.shape.parts == 2 { self.b.ins().bor(m[0], m[1]) } else { m[0] };
        self.b.ins().vany_true(m)
    }

    /// The mask as an integer, bit `l` for lane `l`.
    fn lane_bits(&mut self, m: [ir::Value; 2]) -> ir::Value {
        let lo = self.b.ins().vhigh_bits(types::I32, m[0]);
        if self.shape.parts == 2 {
            let hi = self.b.ins().vhigh_bits(types::I32, m[1]);
            let hi = self.b.ins().ishl_imm_u(hi, 4);
            self.b.ins().bor(lo, hi)
        } else {
            lo
        }
    }

    fn map_mask(
        &mut self,
        a: [ir::Value; 2],
        b: [ir::Value; 2],
        f: fn(&mut FunctionBuilder, ir::Value, ir::Value) -> ir::Value,
    ) -> [ir::Value; 2] {
        let mut out = a;
        for p in 0..self.shape.parts {
            out[p] = f(&mut self.b, a[p], b[p]);
        }
        out
    }

    /// Per-lane select under a mask (`i32x4`) for values of type `ty`.
    fn vselect(&mut self, mask: ir::Value, ty: Ty, a: ir::Value, b: ir::Value) -> ir::Value {
        // Against zero, a select is the other operand with the mask (or its complement) applied:
        // no zero vector, which Cranelift does not rematerialise but keeps in a spill slot.
        let (zero_a, zero_b) = (self.is_zero_vector(a), self.is_zero_vector(b));
        if zero_a || zero_b {
            let m = if ty == Ty::F32 { self.b.ins().bitcast(types::F32X4, little(), mask) } else { mask };
            return if zero_b { self.b.ins().band(a, m) } else { self.b.ins().band_not(b, m) };
        }
        if self.env.blendv {
            // `blendv` reads each lane's top bit, which decides a lane mask as well as all its bits.
            if ty != Ty::F32 {
                return self.b.ins().blendv(mask, a, b);
            }
            let (a, b) =
                (self.b.ins().bitcast(types::I32X4, little(), a), self.b.ins().bitcast(types::I32X4, little(), b));
            let r = self.b.ins().blendv(mask, a, b);
            return self.b.ins().bitcast(types::F32X4, little(), r);
        }
        let m = if ty == Ty::F32 { self.b.ins().bitcast(types::F32X4, little(), mask) } else { mask };
        self.b.ins().bitselect(m, a, b)
    }

    // ----- regions --------------------------------------------------------------------------

    fn region(&mut self, r: &Region) -> Result<Vec<V>> {
        self.insts(&r.insts)?;
        r.yields.iter().map(|&v| self.get(v)).collect()
    }

    fn insts(&mut self, insts: &[Inst]) -> Result<()> {
        let mut i = 0;
        while i < insts.len() {
            // With two halves, a run of straight-line arithmetic is emitted half after half:
            // the halves are independent, and this halves the registers live at once.
            let run =
                if self.shape.parts == 2 { insts[i..].iter().take_while(|x| splittable(self.f, x)).count() } else { 0 };
            if run >= 2 {
                for half in 0..2 {
                    self.half = Some(half);
                    for inst in &insts[i..i + run] {
                        self.inst(inst)?;
                    }
                }
                self.half = None;
                i += run;
            } else {
                self.inst(&insts[i])?;
                i += 1;
            }
        }
        Ok(())
    }

    /// The vector parts to compute now.
    fn part_range(&self) -> std::ops::Range<usize> {
        match self.half {
            Some(h) => h..h + 1,
            None => 0..self.shape.parts,
        }
    }

    fn inst(&mut self, inst: &Inst) -> Result<()> {
        let res = &inst.results;
        if self.half == Some(1) && res.first().is_some_and(|r| matches!(self.vals[r.0 as usize], Some(V::U(_)))) {
            // Uniform values were computed with the first half.
            return Ok(());
        }
        match &inst.op {
            Op::Const(c) => {
                let x = self.sconst(*c);
                self.consts[res[0].0 as usize] = Some(*c);
                self.set(res[0], V::U(x));
            }
            Op::Unary(op, a) => {
                let ty = self.ty(*a);
                let x = self.lift(&[*a], |t, xs, vector| t.unary(*op, ty, xs[0], vector))?;
                self.set(res[0], x);
            }
            Op::Binary(op, a, b) => {
                let x = self.binary(*op, *a, *b)?;
                self.set(res[0], x);
            }
            Op::Fma(a, b, c) => {
                let x = self.lift(&[*a, *b, *c], |t, xs, _| t.b.ins().fma(xs[0], xs[1], xs[2]))?;
                self.set(res[0], x);
            }
            Op::Cmp(op, a, b) => {
                let ty = self.ty(*a);
                let x = self.lift(&[*a, *b], |t, xs, _| t.compare(*op, ty, xs[0], xs[1]))?;
                self.set(res[0], x);
            }
            Op::Select(c, a, b) => {
                let x = self.select(*c, *a, *b)?;
                self.set(res[0], x);
            }
            Op::Convert(to, a) => {
                let from = self.ty(*a);
                let to = *to;
                let x = self.lift(&[*a], |t, xs, vector| t.convert(from, to, xs[0], vector))?;
                self.set(res[0], x);
            }
            Op::Bitcast(to, a) => {
                let from = self.ty(*a);
                let to = *to;
                let x = self.lift(&[*a], |t, xs, vector| {
                    if (from == Ty::F32) == (to == Ty::F32) {
                        xs[0]
                    } else {
                        let ty = if vector { vec_ty(to) } else { scalar_ty(to) };
                        t.b.ins().bitcast(ty, little(), xs[0])
                    }
                })?;
                self.set(res[0], x);
            }
            Op::Detach(a) | Op::ReplaceGrad(a, _) => {
                let x = self.get(*a)?;
                self.set(res[0], x);
                if let Some(c) = self.consts[a.0 as usize] {
                    self.consts[res[0].0 as usize] = Some(c);
                }
            }
            Op::Math(op, _) => {
                return Err(format!(
                    "`{}` (Op::Math) reached the Cranelift backend; run drs-opt's math expansion first",
                    op.name()
                ))
            }
            Op::Call(func, args) => {
                let outs = self.call(*func, args)?;
                for (&r, v) in res.iter().zip(outs) {
                    self.set(r, v);
                }
            }
            Op::CallExtern(ext, args) => {
                let outs = self.call_extern(*ext, args, res)?;
                for (&r, v) in res.iter().zip(outs) {
                    self.set(r, v);
                }
            }
            Op::Load { buffer, index } => {
                let x = self.load(*buffer, *index)?;
                self.set(res[0], x);
            }
            Op::Store { buffer, index, value } => self.store(*buffer, *index, *value)?,
            Op::AtomicAdd { buffer, index, value } => self.atomic_add(*buffer, *index, *value)?,
            Op::LocalLoad { array, index } => {
                let x = self.local_load(*array, *index)?;
                self.set(res[0], x);
            }
            Op::LocalStore { array, index, value } => self.local_store(*array, *index, *value)?,
            Op::If { cond, then, els } => {
                let outs = self.if_(inst, *cond, then, els)?;
                for (&r, v) in res.iter().zip(outs) {
                    self.set(r, v);
                }
            }
            Op::Loop { init, body, .. } => {
                let outs = self.loop_(init, body, &inst.results)?;
                for (&r, v) in res.iter().zip(outs) {
                    self.set(r, v);
                }
            }
        }
        Ok(())
    }

    /// Applies an operation that has the same Cranelift form for scalars and vectors: on the
    /// scalars when all operands are uniform, else part by part.
    fn lift(&mut self, args: &[Value], mut f: impl FnMut(&mut Self, &[ir::Value], bool) -> ir::Value) -> Result<V> {
        let mut uniform = true;
        for &a in args {
            uniform &= matches!(self.get(a)?, V::U(_));
        }
        if uniform {
            let xs = args.iter().map(|&a| self.scalar(a)).collect::<Result<Vec<_>>>()?;
            return Ok(V::U(f(self, &xs, false)));
        }
        let ps = args.iter().map(|&a| self.parts(a)).collect::<Result<Vec<_>>>()?;
        let mut out = ps[0];
        for p in self.part_range() {
            let xs: Vec<ir::Value> = ps.iter().map(|x| x[p]).collect();
            out[p] = f(self, &xs, true);
        }
        Ok(V::P(out))
    }

    /// Applies a scalar operation lane by lane to vector parts.
    fn lanewise(
        &mut self,
        out_ty: Ty,
        ins: &[[ir::Value; 2]],
        mut f: impl FnMut(&mut Self, &[ir::Value]) -> ir::Value,
    ) -> [ir::Value; 2] {
        let zero = self.vconst(out_ty, 0);
        let mut out = [zero; 2];
        for l in 0..self.shape.lanes {
            let (p, i) = (l / 4, (l % 4) as u8);
            let xs: Vec<ir::Value> = ins.iter().map(|x| self.b.ins().extractlane(x[p], i)).collect();
            let r = f(self, &xs);
            out[p] = self.b.ins().insertlane(out[p], r, i);
        }
        out
    }

    // ----- arithmetic -----------------------------------------------------------------------

    fn fconst(&mut self, x: f32, vector: bool) -> ir::Value {
        if vector {
            self.vconst(Ty::F32, x.to_bits())
        } else {
            self.b.ins().f32const(x)
        }
    }

    fn unary(&mut self, op: UnaryOp, ty: Ty, x: ir::Value, vector: bool) -> ir::Value {
        let ins = self.b.ins();
        match (op, ty) {
            (UnaryOp::Neg, Ty::F32) => ins.fneg(x),
            (UnaryOp::Neg, _) => ins.ineg(x),
            (UnaryOp::Not, Ty::Bool) if !vector => ins.bxor_imm_u(x, 1),
            (UnaryOp::Not, _) => ins.bnot(x),
            (UnaryOp::Abs, _) => ins.fabs(x),
            (UnaryOp::Sqrt, _) => ins.sqrt(x),
            (UnaryOp::Floor, _) => {
                let r = ins.floor(x);
                self.nan_passthrough(x, r, vector)
            }
            (UnaryOp::Ceil, _) => {
                let r = ins.ceil(x);
                self.nan_passthrough(x, r, vector)
            }
            (UnaryOp::Trunc, _) => {
                let r = ins.trunc(x);
                self.nan_passthrough(x, r, vector)
            }
            (UnaryOp::Round, _) => {
                // Half away from zero: trunc(x) + copysign(|x - trunc(x)| >= 0.5 ? 1 : 0, x).
                // `x - trunc(x)` is exact, so there is no double rounding (unlike
                // `floor(x + 0.5)`), and ±0, infinities and NaN pass through trunc.
                let t = ins.trunc(x);
                let d = self.b.ins().fsub(x, t);
                let ad = self.b.ins().fabs(d);
                let half = self.fconst(0.5, vector);
                let one = self.fconst(1.0, vector);
                let zero = self.fconst(0.0, vector);
                let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, ad, half);
                let step =
                    if vector { self.vselect(ge, Ty::F32, one, zero) } else { self.b.ins().select(ge, one, zero) };
                let s = self.copysign(step, x, vector);
                // A NaN comes out of trunc quieted, as from Rust's `round`.
                self.b.ins().fadd(t, s)
            }
        }
    }

    /// `r`, or `x` itself where `x` is NaN: Rust's `floor`, `ceil` and `trunc` (the
    /// interpreter's) return a NaN operand unchanged (a signalling NaN stays signalling); the
    /// SSE4.1 instructions quiet it.
    fn nan_passthrough(&mut self, x: ir::Value, r: ir::Value, vector: bool) -> ir::Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        if vector {
            self.vselect(nan, Ty::F32, x, r)
        } else {
            self.b.ins().select(nan, x, r)
        }
    }

    /// The magnitude of `x` with the sign of `y` (Cranelift has no vector `fcopysign` on x64).
    fn copysign(&mut self, x: ir::Value, y: ir::Value, vector: bool) -> ir::Value {
        if !vector {
            return self.b.ins().fcopysign(x, y);
        }
        let sign = self.vconst(Ty::F32, 0x8000_0000);
        let mag = self.vconst(Ty::F32, 0x7fff_ffff);
        let a = self.b.ins().band(x, mag);
        let b = self.b.ins().band(y, sign);
        self.b.ins().bor(a, b)
    }

    fn compare(&mut self, op: CmpOp, ty: Ty, a: ir::Value, b: ir::Value) -> ir::Value {
        if ty == Ty::F32 {
            let cc = match op {
                CmpOp::Eq => FloatCC::Equal,
                CmpOp::Ne => FloatCC::NotEqual,
                CmpOp::Lt => FloatCC::LessThan,
                CmpOp::Le => FloatCC::LessThanOrEqual,
                CmpOp::Gt => FloatCC::GreaterThan,
                CmpOp::Ge => FloatCC::GreaterThanOrEqual,
            };
            return self.b.ins().fcmp(cc, a, b);
        }
        let signed = ty == Ty::I32;
        let cc = match (op, signed) {
            (CmpOp::Eq, _) => IntCC::Equal,
            (CmpOp::Ne, _) => IntCC::NotEqual,
            (CmpOp::Lt, true) => IntCC::SignedLessThan,
            (CmpOp::Le, true) => IntCC::SignedLessThanOrEqual,
            (CmpOp::Gt, true) => IntCC::SignedGreaterThan,
            (CmpOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
            (CmpOp::Lt, false) => IntCC::UnsignedLessThan,
            (CmpOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
            (CmpOp::Gt, false) => IntCC::UnsignedGreaterThan,
            (CmpOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        };
        self.b.ins().icmp(cc, a, b)
    }

    fn convert(&mut self, from: Ty, to: Ty, x: ir::Value, vector: bool) -> ir::Value {
        let (f32t, i32t) = if vector { (types::F32X4, types::I32X4) } else { (types::F32, types::I32) };
        match (from, to) {
            (Ty::F32, Ty::I32) => self.b.ins().fcvt_to_sint_sat(i32t, x),
            (Ty::F32, Ty::U32) => self.b.ins().fcvt_to_uint_sat(i32t, x),
            (Ty::I32, Ty::F32) => self.b.ins().fcvt_from_sint(f32t, x),
            (Ty::U32, Ty::F32) if self.below_2_31(x) => self.b.ins().fcvt_from_sint(f32t, x),
            (Ty::U32, Ty::F32) => self.b.ins().fcvt_from_uint(f32t, x),
            _ => x,
        }
    }

    /// Whether `x` is a logical right shift by a constant of 1 to 31, so below 2^31 in every
    /// lane: its signed conversion to float then equals the unsigned one, which takes eight
    /// instructions on x86-64 without AVX-512 against one (`f32(bits >> 8)` of random numbers).
    fn below_2_31(&self, x: ir::Value) -> bool {
        let dfg = &self.b.func.dfg;
        let ir::ValueDef::Result(shift, _) = dfg.value_def(x) else { return false };
        let ir::InstructionData::Binary { opcode: ir::Opcode::Ushr, args } = dfg.insts[shift] else { return false };
        let ir::ValueDef::Result(amount, _) = dfg.value_def(args[1]) else { return false };
        matches!(dfg.insts[amount], ir::InstructionData::UnaryImm { opcode: ir::Opcode::Iconst, imm } if imm.bits() & 31 != 0)
    }

    fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Result<V> {
        use BinaryOp::*;
        let ty = self.ty(a);
        let signed = ty == Ty::I32;
        match (op, ty) {
            (Rem, Ty::F32) => self.per_lane_op(ty, &[a, b], |t, xs| {
                let fmod = t.fmod_ref();
                let call = t.b.ins().call(fmod, &[xs[0], xs[1]]);
                t.b.inst_results(call)[0]
            }),
            (Div | Rem, Ty::I32 | Ty::U32) => {
                self.per_lane_op(ty, &[a, b], |t, xs| int_div_rem(&mut t.b, op, signed, xs[0], xs[1]))
            }
            (Shl | Shr, _) => {
                let (va, vb) = (self.get(a)?, self.get(b)?);
                let shift = |t: &mut Self, x: ir::Value, n: ir::Value| match op {
                    Shl => t.b.ins().ishl(x, n),
                    _ if signed => t.b.ins().sshr(x, n),
                    _ => t.b.ins().ushr(x, n),
                };
                match (va, vb) {
                    (V::U(x), V::U(n)) => Ok(V::U(shift(self, x, n))),
                    // A uniform amount shifts every lane by the same count (masked to 0..31 by
                    // Cranelift, like the IR's modulo 32).
                    (_, V::U(n)) => {
                        let mut p = self.parts(a)?;
                        for part in p.iter_mut().take(self.shape.parts) {
                            *part = shift(self, *part, n);
                        }
                        Ok(V::P(p))
                    }
                    _ => self.per_lane_op(ty, &[a, b], |t, xs| shift(t, xs[0], xs[1])),
                }
            }
            _ => self.lift(&[a, b], |t, xs, vector| {
                let (x, y) = (xs[0], xs[1]);
                let ins = t.b.ins();
                match (op, ty) {
                    (Add, Ty::F32) => ins.fadd(x, y),
                    (Sub, Ty::F32) => ins.fsub(x, y),
                    (Mul, Ty::F32) => ins.fmul(x, y),
                    (Div, Ty::F32) => ins.fdiv(x, y),
                    (Min | Max, Ty::F32) => {
                        let cc = if op == Min { FloatCC::LessThan } else { FloatCC::GreaterThan };
                        let c = ins.fcmp(cc, x, y);
                        if vector {
                            t.vselect(c, Ty::F32, x, y)
                        } else {
                            t.b.ins().select(c, x, y)
                        }
                    }
                    (CopySign, _) => t.copysign(x, y, vector),
                    (Add, _) => ins.iadd(x, y),
                    (Sub, _) => ins.isub(x, y),
                    (Mul, _) => ins.imul(x, y),
                    (Min, _) if signed => ins.smin(x, y),
                    (Min, _) => ins.umin(x, y),
                    (Max, _) if signed => ins.smax(x, y),
                    (Max, _) => ins.umax(x, y),
                    (And, _) => ins.band(x, y),
                    (Or, _) => ins.bor(x, y),
                    (Xor, _) => ins.bxor(x, y),
                    (Rem | Div | Shl | Shr, _) => unreachable!("handled above"),
                }
            }),
        }
    }

    /// A scalar operation applied to uniform operands once, or to each lane of varying ones.
    fn per_lane_op(
        &mut self,
        ty: Ty,
        args: &[Value],
        mut f: impl FnMut(&mut Self, &[ir::Value]) -> ir::Value,
    ) -> Result<V> {
        let mut uniform = true;
        for &a in args {
            uniform &= matches!(self.get(a)?, V::U(_));
        }
        if uniform {
            let xs = args.iter().map(|&a| self.scalar(a)).collect::<Result<Vec<_>>>()?;
            return Ok(V::U(f(self, &xs)));
        }
        let ps = args.iter().map(|&a| self.parts(a)).collect::<Result<Vec<_>>>()?;
        Ok(V::P(self.lanewise(ty, &ps, f)))
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> Result<V> {
        let ty = self.ty(a);
        match self.get(c)? {
            V::U(cv) => self.lift(&[a, b], |t, xs, _| t.b.ins().select(cv, xs[0], xs[1])),
            V::P(cm) => {
                let (pa, pb) = (self.parts(a)?, self.parts(b)?);
                let mut out = pa;
                for p in self.part_range() {
                    out[p] = self.vselect(cm[p], ty, pa[p], pb[p]);
                }
                Ok(V::P(out))
            }
        }
    }

    // ----- control flow ---------------------------------------------------------------------

    fn if_(&mut self, inst: &Inst, cond: Value, then: &Region, els: &Region) -> Result<Vec<V>> {
        let types: Vec<Ty> = inst.results.iter().map(|&r| self.ty(r)).collect();
        match self.get(cond)? {
            V::U(c) => {
                let reprs: Vec<bool> = inst.results.iter().map(|&r| self.is_uniform(r)).collect();
                let (then_blk, else_blk, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                for (&ty, &u) in types.iter().zip(&reprs) {
                    self.append_repr_params(join, ty, u);
                }
                self.b.ins().brif(c, then_blk, &[], else_blk, &[]);
                for (blk, region) in [(then_blk, then), (else_blk, els)] {
                    self.b.switch_to_block(blk);
                    self.region(region)?;
                    let mut args = Vec::new();
                    for (&y, &u) in region.yields.iter().zip(&reprs) {
                        args.extend(self.repr_args(y, u)?);
                    }
                    self.b.ins().jump(join, &block_args(&args));
                }
                self.b.switch_to_block(join);
                let params = self.b.block_params(join).to_vec();
                Ok(self.reprs_from(&params, &reprs))
            }
            V::P(cm) => {
                if is_cheap(then) && is_cheap(els) {
                    // If-conversion: both regions are short and free of side effects, so run
                    // them for all lanes and select.
                    let ys_then = self.region(then)?;
                    let ys_else = self.region(els)?;
                    let mut outs = Vec::new();
                    for (i, &ty) in types.iter().enumerate() {
                        let pt = self.vparts(ys_then[i], ty);
                        let pe = self.vparts(ys_else[i], ty);
                        let pt = self.const_parts(then.yields[i], pt);
                        let pe = self.const_parts(els.yields[i], pe);
                        let mut out = pt;
                        for p in 0..self.shape.parts {
                            out[p] = self.vselect(cm[p], ty, pt[p], pe[p]);
                        }
                        outs.push(V::P(out));
                    }
                    return Ok(outs);
                }
                self.masked_if(&types, cm, then, els)
            }
        }
    }

    /// An `if` whose condition varies: each region runs under its lanes' mask, and only when
    /// one of them is active. The `then` region runs first; a result carries the value that is
    /// right for the lanes of the regions handled so far, and a region chooses its lanes over
    /// it with a select. Values defined before the `if` (a variable that one region leaves as
    /// it was) need no block parameter, and a region whose yields are all such values costs no
    /// branch. When no active lane took the other region, which is the usual case for an early
    /// exit, the region's values are taken whole, without selects.
    fn masked_if(&mut self, types: &[Ty], cm: [ir::Value; 2], then: &Region, els: &Region) -> Result<Vec<V>> {
        let parts = self.shape.parts;
        let outer = self.mask;
        let early = |t: &Self, v: Value| t.vals[v.0 as usize].is_some();
        let then_early: Vec<bool> = then.yields.iter().map(|&y| early(self, y)).collect();
        // Each result's value so far: right for the lanes of the regions handled already.
        let mut merged: Vec<Option<[ir::Value; 2]>> = Vec::with_capacity(types.len());
        let mut else_done = Vec::with_capacity(types.len());
        for &y in &els.yields {
            let e = early(self, y);
            merged.push(if e { Some(self.parts(y)?) } else { None });
            else_done.push(e);
        }
        let mut not_c = cm;
        for p in not_c.iter_mut().take(parts) {
            *p = self.b.ins().bnot(*p);
        }
        let m_then = self.map_mask(outer, cm, |b, x, y| b.ins().band(x, y));
        let m_else = self.map_mask(outer, not_c, |b, x, y| b.ins().band(x, y));
        let (any_then, any_else) = (self.any(m_then), self.any(m_else));
        for (is_then, region, m, any, other_any) in
            [(true, then, m_then, any_then, any_else), (false, els, m_else, any_else, any_then)]
        {
            let mut todo = Vec::new();
            for i in 0..types.len() {
                if is_then && then_early[i] && merged[i].is_none() {
                    // Right for the `then` lanes already; the `else` region selects over it.
                    merged[i] = Some(self.parts(then.yields[i])?);
                } else if if is_then { then.yields[i] != els.yields[i] } else { !else_done[i] } {
                    todo.push(i);
                }
            }
            // This region's lanes chosen over the value so far.
            let merge = |t: &mut Self, i: usize, y: [ir::Value; 2], so_far: Option<[ir::Value; 2]>| match so_far {
                None => y,
                Some(p) => {
                    let mut out = y;
                    for k in 0..parts {
                        out[k] = if is_then {
                            t.vselect(cm[k], types[i], y[k], p[k])
                        } else {
                            t.vselect(cm[k], types[i], p[k], y[k])
                        };
                    }
                    out
                }
            };
            if region.insts.is_empty() {
                // Every yield is an earlier value: select without branching.
                for &i in &todo {
                    let y = self.parts(region.yields[i])?;
                    merged[i] = Some(merge(self, i, y, merged[i]));
                }
                continue;
            }
            let (blk, join) = (self.b.create_block(), self.b.create_block());
            // What the results are when the region is skipped. A result without a value so far
            // is then needed by no active lane, so it takes a vector that is live anyway (a
            // constant would be one more spilled value).
            let mut skip = Vec::new();
            for &i in &todo {
                self.append_repr_params(join, types[i], false);
                match merged[i] {
                    Some(p) => skip.extend_from_slice(&p[..parts]),
                    None if types[i] == Ty::F32 => {
                        for &c in &cm[..parts] {
                            skip.push(self.b.ins().bitcast(types::F32X4, little(), c));
                        }
                    }
                    None => skip.extend_from_slice(&cm[..parts]),
                }
            }
            self.b.ins().brif(any, blk, &[], join, &block_args(&skip));
            self.b.switch_to_block(blk);
            self.mask = m;
            self.region(region)?;
            let mut ys = Vec::with_capacity(todo.len());
            for &i in &todo {
                ys.push(self.parts(region.yields[i])?);
            }
            let selects = todo.iter().filter(|&&i| merged[i].is_some()).count();
            if selects >= 2 {
                // No active lane took the other region: the yields as they are.
                let whole: Vec<ir::Value> = ys.iter().flat_map(|y| y[..parts].to_vec()).collect();
                let mixed = self.b.create_block();
                self.b.ins().brif(other_any, mixed, &[], join, &block_args(&whole));
                self.b.switch_to_block(mixed);
            }
            let mut args = Vec::new();
            for (&i, &y) in todo.iter().zip(&ys) {
                args.extend_from_slice(&merge(self, i, y, merged[i])[..parts]);
            }
            self.b.ins().jump(join, &block_args(&args));
            self.b.switch_to_block(join);
            self.mask = outer;
            let params = self.b.block_params(join).to_vec();
            for (k, &i) in todo.iter().enumerate() {
                let mut p = [params[k * parts]; 2];
                p[..parts].copy_from_slice(&params[k * parts..(k + 1) * parts]);
                merged[i] = Some(p);
            }
        }
        Ok(merged.into_iter().map(|p| V::P(p.expect("both regions merged every result"))).collect())
    }

    /// Vector constants instead of splats for constant yields.
    fn const_parts(&mut self, v: Value, p: [ir::Value; 2]) -> [ir::Value; 2] {
        match self.consts[v.0 as usize] {
            Some(c) => {
                let x = self.vconst(c.ty(), c.bits());
                [x; 2]
            }
            None => p,
        }
    }

    fn loop_(&mut self, init: &[Value], body: &Region, results: &[Value]) -> Result<Vec<V>> {
        let types: Vec<Ty> = init.iter().map(|&v| self.ty(v)).collect();
        let reprs: Vec<bool> = body.params.iter().map(|&p| self.is_uniform(p)).collect();
        let (header, exit) = (self.b.create_block(), self.b.create_block());
        for (&ty, &u) in types.iter().zip(&reprs) {
            self.append_repr_params(header, ty, u);
            self.append_repr_params(exit, ty, u);
        }
        let mut args = Vec::new();
        for (&v, &u) in init.iter().zip(&reprs) {
            args.extend(self.repr_args(v, u)?);
        }
        if self.is_uniform(body.yields[0]) {
            // Every active lane runs the same iterations: a plain loop.
            self.b.ins().jump(header, &block_args(&args));
            self.b.switch_to_block(header);
            let params = self.b.block_params(header).to_vec();
            for (&p, v) in body.params.iter().zip(self.reprs_from(&params, &reprs)) {
                self.set(p, v);
            }
            self.region(body)?;
            let cont = self.scalar(body.yields[0])?;
            let mut next = Vec::new();
            for (&y, &u) in body.yields[1..].iter().zip(&reprs) {
                next.extend(self.repr_args(y, u)?);
            }
            let next = block_args(&next);
            self.b.ins().brif(cont, header, &next, exit, &next);
        } else {
            // Lanes leave at different iterations: run while any lane continues; lanes that
            // stopped keep their carried values.
            if reprs.iter().any(|&u| u) {
                return Err("internal error: a uniform value carried by a loop with a varying condition".into());
            }
            let outer = self.mask;
            let parts = self.shape.parts;
            args.extend_from_slice(&outer[..parts]);
            for _ in 0..parts {
                self.b.append_block_param(header, types::I32X4);
            }
            self.b.ins().jump(header, &block_args(&args));
            self.b.switch_to_block(header);
            let params = self.b.block_params(header).to_vec();
            let (carried_params, mask_params) = params.split_at(params.len() - parts);
            let carried = self.reprs_from(carried_params, &reprs);
            let mut running = [mask_params[0]; 2];
            running[..parts].copy_from_slice(mask_params);
            for (&p, v) in body.params.iter().zip(&carried) {
                self.set(p, *v);
            }
            self.mask = running;
            self.region(body)?;
            let cont = self.parts(body.yields[0])?;
            let mut next = Vec::new();
            for (i, &y) in body.yields[1..].iter().enumerate() {
                let ty = types[i];
                let new = self.parts(y)?;
                // A value the body does not change, or that nothing reads after the loop, needs
                // no select: what a stopped lane carries on is never observed (side effects are
                // masked by `running`).
                if y == body.params[i] || !self.used[results[i].0 as usize] {
                    next.extend_from_slice(&new[..parts]);
                    continue;
                }
                let old = self.vparts(carried[i], ty);
                for p in 0..parts {
                    let v = self.vselect(running[p], ty, new[p], old[p]);
                    next.push(v);
                }
            }
            let still = self.map_mask(running, cont, |b, x, y| b.ins().band(x, y));
            let any = self.any(still);
            let exit_args = block_args(&next);
            next.extend_from_slice(&still[..parts]);
            self.b.ins().brif(any, header, &block_args(&next), exit, &exit_args);
            self.mask = outer;
        }
        self.b.switch_to_block(exit);
        let params = self.b.block_params(exit).to_vec();
        Ok(self.reprs_from(&params, &reprs))
    }

    // ----- calls ----------------------------------------------------------------------------

    fn func_ref(&mut self, func: u32) -> ir::FuncRef {
        if let Some(&r) = self.func_refs.get(&func) {
            return r;
        }
        let sig = self.env.funcs[func as usize].clone();
        let r = import_function(self.b.func, NS_FUNCTION, func, sig, true);
        self.func_refs.insert(func, r);
        r
    }

    fn fmod_ref(&mut self) -> ir::FuncRef {
        if let Some(r) = self.fmod_ref {
            return r;
        }
        let mut sig = Signature::new(self.env.call_conv);
        sig.params.extend([AbiParam::new(types::F32), AbiParam::new(types::F32)]);
        sig.returns.push(AbiParam::new(types::F32));
        let r = import_function(self.b.func, NS_SYMBOL, SYM_FMODF, sig, false);
        self.fmod_ref = Some(r);
        r
    }

    fn call(&mut self, func: drs_ir::FuncId, args: &[Value]) -> Result<Vec<V>> {
        let fref = self.func_ref(func.0);
        let mut cargs = vec![self.ctx];
        if self.shape.vector() {
            cargs.extend_from_slice(&self.mask[..self.shape.parts]);
            for &a in args {
                let p = self.parts(a)?;
                cargs.extend_from_slice(&p[..self.shape.parts]);
            }
        } else {
            for &a in args {
                cargs.push(self.scalar(a)?);
            }
        }
        let call = self.b.ins().call(fref, &cargs);
        let results = self.b.inst_results(call).to_vec();
        let callee = self.env.module.function(func);
        let reprs = vec![!self.shape.vector(); callee.result_types.len()];
        Ok(self.reprs_from(&results, &reprs))
    }

    /// A lane's value as the u32 bits of the host ABI.
    fn lane_to_bits(&mut self, ty: Ty, x: ir::Value, vector_lane: bool) -> ir::Value {
        match ty {
            Ty::F32 => self.b.ins().bitcast(types::I32, MemFlagsData::new(), x),
            Ty::Bool if vector_lane => self.b.ins().band_imm_u(x, 1),
            Ty::Bool => self.b.ins().uextend(types::I32, x),
            _ => x,
        }
    }

    /// Runs `body` once for each active lane (vector mode), with the lane index.
    fn for_active_lanes(&mut self, mut body: impl FnMut(&mut Self, usize) -> Result<()>) -> Result<()> {
        let bits = self.lane_bits(self.mask);
        for l in 0..self.shape.lanes {
            let (blk, next) = (self.b.create_block(), self.b.create_block());
            let on = self.b.ins().band_imm_u(bits, 1i64 << l);
            self.b.ins().brif(on, blk, &[], next, &[]);
            self.b.switch_to_block(blk);
            body(self, l)?;
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
        }
        Ok(())
    }

    fn lane(&mut self, v: Value, l: usize) -> Result<ir::Value> {
        match self.get(v)? {
            V::U(x) => Ok(x),
            V::P(_) => {
                let p = self.parts(v)?;
                Ok(self.b.ins().extractlane(p[l / 4], (l % 4) as u8))
            }
        }
    }

    /// One host call for the whole lane group: the arguments of every lane (`[param][lane]`)
    /// go to a stack slot with vector stores, the host writes the results the same way, and the
    /// active-lane bits tell it which lanes to run.
    fn call_extern(&mut self, ext: u32, args: &[Value], results: &[Value]) -> Result<Vec<V>> {
        let decl = &self.env.module.externs[ext as usize];
        let (n_args, result_types) = (decl.params.len(), decl.results.clone());
        let lanes = self.shape.lanes;
        let res_base = (n_args * lanes * 4) as i32;
        let size = (((n_args + result_types.len()) * lanes).max(1) * 4) as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4));
        let ptr = self.shape.ptr;
        for (i, &a) in args.iter().enumerate() {
            let ty = self.ty(a);
            if self.shape.vector() {
                let parts = self.parts(a)?;
                for (part, &x) in parts[..self.shape.parts].iter().enumerate() {
                    let bits = match ty {
                        Ty::F32 => self.b.ins().bitcast(types::I32X4, little(), x),
                        Ty::Bool => {
                            let one = self.vconst(Ty::I32, 1);
                            self.b.ins().band(x, one)
                        }
                        _ => x,
                    };
                    self.b.ins().stack_store(ptr, bits, slot, ((i * lanes + part * 4) * 4) as i32);
                }
            } else {
                let x = self.scalar(a)?;
                let bits = self.lane_to_bits(ty, x, false);
                self.b.ins().stack_store(ptr, bits, slot, (i * 4) as i32);
            }
        }
        let active = if self.shape.vector() { self.lane_bits(self.mask) } else { self.b.ins().iconst(types::I32, 1) };
        let sig = self.extern_sig();
        let table = self.b.ins().load(ptr, trusted_ro(), self.ctx, CTX_EXTERNS);
        let entry_off = ext as i64 * EXTERN_SIZE;
        let func = self.b.ins().load(ptr, trusted_ro(), table, entry_off as i32);
        let user = self.b.ins().load(ptr, trusted_ro(), table, entry_off as i32 + EXTERN_USER);
        let pa = self.b.ins().stack_addr(ptr, slot, 0);
        let pr = self.b.ins().stack_addr(ptr, slot, res_base);
        let n_lanes = self.b.ins().iconst(types::I32, lanes as i64);
        self.b.ins().call_indirect(sig, func, &[pa, pr, user, n_lanes, active]);
        let mut outs = Vec::new();
        for (r, &ty) in result_types.iter().enumerate() {
            let at = res_base + (r * lanes * 4) as i32;
            if !self.used[results[r].0 as usize] {
                // Nothing reads it: a placeholder instead of a load that Cranelift would keep.
                let x = self.sconst(Const::from_bits(ty, 0));
                outs.push(V::U(x));
                continue;
            }
            if !self.shape.vector() {
                let bits = self.b.ins().stack_load(ptr, types::I32, slot, at);
                outs.push(V::U(self.bits_to_lane(ty, bits)));
                continue;
            }
            let zero = self.vconst(ty, 0);
            let mut out = [zero; 2];
            for (part, o) in out[..self.shape.parts].iter_mut().enumerate() {
                let bits = self.b.ins().stack_load(ptr, types::I32X4, slot, at + (part * 16) as i32);
                *o = match ty {
                    Ty::F32 => self.b.ins().bitcast(types::F32X4, little(), bits),
                    Ty::Bool => {
                        let z = self.vconst(Ty::I32, 0);
                        self.b.ins().icmp(IntCC::NotEqual, bits, z)
                    }
                    _ => bits,
                };
            }
            outs.push(V::P(out));
        }
        Ok(outs)
    }

    /// Host bits to a scalar value of `ty`.
    fn bits_to_lane(&mut self, ty: Ty, bits: ir::Value) -> ir::Value {
        match ty {
            Ty::F32 => self.b.ins().bitcast(types::F32, MemFlagsData::new(), bits),
            Ty::Bool => self.b.ins().icmp_imm_s(IntCC::NotEqual, bits, 0),
            _ => bits,
        }
    }

    fn extern_sig(&mut self) -> ir::SigRef {
        if let Some(s) = self.extern_sig {
            return s;
        }
        let mut sig = Signature::new(self.env.call_conv);
        for _ in 0..3 {
            sig.params.push(AbiParam::new(self.shape.ptr));
        }
        sig.params.extend([AbiParam::new(types::I32), AbiParam::new(types::I32)]);
        let s = self.b.import_signature(sig);
        self.extern_sig = Some(s);
        s
    }

    // ----- memory ---------------------------------------------------------------------------

    /// The base pointer and length (elements) of a buffer.
    fn buffer(&mut self, buffer: u32) -> (ir::Value, ir::Value) {
        let ptr = self.shape.ptr;
        let table = self.b.ins().load(ptr, trusted_ro(), self.ctx, CTX_BUFFERS);
        let off = (buffer as i64 * BUFFER_SIZE) as i32;
        let base = self.b.ins().load(ptr, trusted_ro(), table, off);
        let len = self.b.ins().load(ptr, trusted_ro(), table, off + BUFFER_LEN);
        (base, len)
    }

    /// `(in range, address)` of element `index` (i32); the address is of element 0 when out of
    /// range, which every buffer has (see [`crate::Buffer`]).
    fn element(&mut self, base: ir::Value, len: ir::Value, index: ir::Value) -> (ir::Value, ir::Value) {
        let ptr = self.shape.ptr;
        let i = self.b.ins().uextend(ptr, index);
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        let zero = self.b.ins().iconst(ptr, 0);
        let safe = self.b.ins().select(ok, i, zero);
        let off = self.b.ins().ishl_imm_u(safe, 2);
        (ok, self.b.ins().iadd(base, off))
    }

    fn load_lane(
        &mut self,
        elem: Ty,
        flags: MemFlagsData,
        base: ir::Value,
        len: ir::Value,
        index: ir::Value,
    ) -> ir::Value {
        let (ok, addr) = self.element(base, len, index);
        let lty = if elem == Ty::F32 { types::F32 } else { types::I32 };
        let x = self.b.ins().load(lty, flags, addr, 0);
        let zero = if elem == Ty::F32 { self.b.ins().f32const(0.0) } else { self.b.ins().iconst(types::I32, 0) };
        self.b.ins().select(ok, x, zero)
    }

    fn load(&mut self, buffer: u32, index: Value) -> Result<V> {
        let elem = self.env.module.buffers[buffer as usize].elem;
        let flags = element_load_flags(self.env.read_only[buffer as usize]);
        let (base, len) = self.buffer(buffer);
        match self.get(index)? {
            V::U(i) => {
                let x = self.load_lane(elem, flags, base, len, i);
                let x = if elem == Ty::Bool { self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0) } else { x };
                Ok(V::U(x))
            }
            V::P(ip) => {
                let bits = self.gather(flags, base, len, ip);
                let mut out = [self.vconst(elem, 0); 2];
                for (p, bits) in out.iter_mut().zip(bits).take(self.shape.parts) {
                    *p = match elem {
                        Ty::F32 => self.b.ins().bitcast(types::F32X4, little(), bits),
                        Ty::Bool => {
                            let z = self.vconst(Ty::I32, 0);
                            self.b.ins().icmp(IntCC::NotEqual, bits, z)
                        }
                        _ => bits,
                    };
                }
                Ok(V::P(out))
            }
        }
    }

    /// The elements at a vector of indices as i32 bits, 0 in lanes whose index is out of
    /// range. Each lane loads from its index clamped to the last element, so that every load
    /// is in bounds without a test, and the lanes whose index the clamp changed are then
    /// zeroed: one unsigned minimum and one comparison per vector. The clamped indices also
    /// serve as the vector the loaded lanes are inserted into (every lane is overwritten), so
    /// no zero vector is kept live for it. (A signed comparison against the length, with the
    /// sign bits flipped and a flag for buffers longer than u32::MAX, took three more
    /// instructions and three more loop-invariant vectors per gather.)
    fn gather(
        &mut self,
        flags: MemFlagsData,
        base: ir::Value,
        len: ir::Value,
        indices: [ir::Value; 2],
    ) -> [ir::Value; 2] {
        let ptr = self.shape.ptr;
        // The last readable element: len - 1, or u32::MAX for a buffer longer than that (every
        // index is in range), or 0 for an empty buffer, whose one element reads 0
        // (`abi::Buffer`), which is the value of an out-of-range lane anyway.
        let one = self.b.ins().iconst(ptr, 1);
        let at_least_one = self.b.ins().umax(len, one);
        let last = self.b.ins().isub(at_least_one, one);
        let max = self.b.ins().iconst(ptr, i64::from(u32::MAX));
        let last = self.b.ins().umin(last, max);
        let last = self.b.ins().ireduce(types::I32, last);
        let last = self.b.ins().splat(types::I32X4, last);
        let zero = self.vconst(Ty::I32, 0);
        let mut out = [zero; 2];
        for (part, out) in out.iter_mut().enumerate().take(self.shape.parts) {
            let clamped = self.b.ins().umin(indices[part], last);
            let in_range = self.b.ins().icmp(IntCC::Equal, clamped, indices[part]);
            let offsets = self.lane_offsets(clamped);
            let mut bits = clamped;
            for (lane, offset) in offsets.into_iter().enumerate() {
                let address = self.b.ins().iadd(base, offset);
                let x = self.b.ins().load(types::I32, flags, address, 0);
                bits = self.b.ins().insertlane(bits, x, lane as u8);
            }
            *out = self.b.ins().band(bits, in_range);
        }
        out
    }

    /// The byte offsets (pointer-sized) of the 32-bit elements at the four u32 `indices`. On
    /// x86-64 they leave the vector two at a time, as 64-bit lanes split by a shift and a 32-bit
    /// move: x86 extracts a 32-bit lane into a register that Cranelift then zero-extends with
    /// an instruction of its own.
    fn lane_offsets(&mut self, indices: ir::Value) -> [ir::Value; 4] {
        let ptr = self.shape.ptr;
        if !(self.env.index_pairs && ptr == types::I64) {
            return std::array::from_fn(|lane| {
                let index = self.b.ins().extractlane(indices, lane as u8);
                let index = self.b.ins().uextend(ptr, index);
                self.b.ins().ishl_imm_u(index, 2)
            });
        }
        let pairs = self.b.ins().bitcast(types::I64X2, little(), indices);
        let mut offsets = [pairs; 4];
        for pair in 0..2 {
            let both = self.b.ins().extractlane(pairs, pair as u8);
            let low = self.b.ins().ireduce(types::I32, both);
            let low = self.b.ins().uextend(types::I64, low);
            let high = self.b.ins().ushr_imm_u(both, 32);
            offsets[2 * pair] = self.b.ins().ishl_imm_u(low, 2);
            offsets[2 * pair + 1] = self.b.ins().ishl_imm_u(high, 2);
        }
        offsets
    }

    fn store(&mut self, buffer: u32, index: Value, value: Value) -> Result<()> {
        let elem = self.env.module.buffers[buffer as usize].elem;
        let (base, len) = self.buffer(buffer);
        let uniform = matches!((self.get(index)?, self.get(value)?), (V::U(_), V::U(_)));
        let store_lane = |t: &mut Self, l: usize| -> Result<()> {
            let i = t.lane(index, l)?;
            let x = t.lane(value, l)?;
            let vector_lane = !matches!(t.get(value)?, V::U(_));
            let x = if elem == Ty::Bool { t.lane_to_bits(elem, x, vector_lane) } else { x };
            let (ok, addr) = t.element(base, len, i);
            let (blk, next) = (t.b.create_block(), t.b.create_block());
            t.b.ins().brif(ok, blk, &[], next, &[]);
            t.b.switch_to_block(blk);
            t.b.ins().store(data_flags().with_aligned(), x, addr, 0);
            t.b.ins().jump(next, &[]);
            t.b.switch_to_block(next);
            Ok(())
        };
        if uniform {
            // Every active lane (there is at least one) writes the same value to one element.
            store_lane(self, 0)
        } else {
            self.for_active_lanes(store_lane)
        }
    }

    fn atomic_add(&mut self, buffer: u32, index: Value, value: Value) -> Result<()> {
        let elem = self.env.module.buffers[buffer as usize].elem;
        let (base, len) = self.buffer(buffer);
        let add_lane = |t: &mut Self, l: usize| -> Result<()> {
            let i = t.lane(index, l)?;
            let x = t.lane(value, l)?;
            let (ok, addr) = t.element(base, len, i);
            let (blk, next) = (t.b.create_block(), t.b.create_block());
            t.b.ins().brif(ok, blk, &[], next, &[]);
            t.b.switch_to_block(blk);
            let flags = MemFlagsData::trusted();
            if t.env.private_buffers {
                let old = t.b.ins().load(types::I32, flags, addr, 0);
                let new = if elem == Ty::F32 {
                    let f = t.b.ins().bitcast(types::F32, MemFlagsData::new(), old);
                    let sum = t.b.ins().fadd(f, x);
                    t.b.ins().bitcast(types::I32, MemFlagsData::new(), sum)
                } else {
                    t.b.ins().iadd(old, x)
                };
                t.b.ins().store(flags, new, addr, 0);
                t.b.ins().jump(next, &[]);
            } else if elem == Ty::F32 {
                // Compare-and-swap loop on the bits.
                let old = t.b.ins().atomic_load(types::I32, flags, addr);
                let retry = t.b.create_block();
                let seen = t.b.append_block_param(retry, types::I32);
                t.b.ins().jump(retry, &block_args(&[old]));
                t.b.switch_to_block(retry);
                let f = t.b.ins().bitcast(types::F32, MemFlagsData::new(), seen);
                let sum = t.b.ins().fadd(f, x);
                let new = t.b.ins().bitcast(types::I32, MemFlagsData::new(), sum);
                let prev = t.b.ins().atomic_cas(flags, addr, seen, new);
                let done = t.b.ins().icmp(IntCC::Equal, prev, seen);
                t.b.ins().brif(done, next, &[], retry, &block_args(&[prev]));
            } else {
                t.b.ins().atomic_rmw(types::I32, flags, AtomicRmwOp::Add, addr, x);
                t.b.ins().jump(next, &[]);
            }
            t.b.switch_to_block(next);
            Ok(())
        };
        if self.shape.vector() {
            self.for_active_lanes(add_lane)
        } else {
            add_lane(self, 0)
        }
    }
}

impl Translator<'_, '_> {
    // ----- local arrays -----------------------------------------------------------------------

    /// The stack slot of local array `array` (at least one element, so that a clamped index
    /// always has a cell to point at) and its length in elements.
    fn local_slot(&mut self, array: u32) -> (ir::StackSlot, u32) {
        let len = self.f.locals[array as usize].len;
        if let Some(slot) = self.local_slots[array as usize] {
            return (slot, len);
        }
        // At most `MAX_LOCAL_BYTES` (checked before code generation).
        let bytes = len.max(1) * self.shape.lanes as u32 * 4;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4));
        self.local_slots[array as usize] = Some(slot);
        (slot, len)
    }

    /// `(in range, address)` of cell `index * lanes + lane` of a local array; out of range
    /// points at element 0.
    fn local_cell(&mut self, slot: ir::StackSlot, len: u32, index: ir::Value, lane: usize) -> (ir::Value, ir::Value) {
        let ptr = self.shape.ptr;
        let i = self.b.ins().uextend(ptr, index);
        let ok = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, i, len as i64);
        let zero = self.b.ins().iconst(ptr, 0);
        let safe = self.b.ins().select(ok, i, zero);
        let cell = self.b.ins().imul_imm_u(safe, self.shape.lanes as i64);
        let off = self.b.ins().ishl_imm_u(cell, 2);
        let base = self.b.ins().stack_addr(ptr, slot, (lane * 4) as i32);
        (ok, self.b.ins().iadd(base, off))
    }

    fn local_load(&mut self, array: u32, index: Value) -> Result<V> {
        let elem = self.f.locals[array as usize].elem;
        let (slot, len) = self.local_slot(array);
        let lty = if elem == Ty::F32 { types::F32 } else { types::I32 };
        let mem = MemFlagsData::trusted();
        if !self.shape.vector() {
            let i = self.scalar(index)?;
            let (ok, addr) = self.local_cell(slot, len, i, 0);
            let x = self.b.ins().load(lty, mem, addr, 0);
            let x = if elem == Ty::Bool { self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0) } else { x };
            let zero = self.sconst(Const::from_bits(elem, 0));
            return Ok(V::U(self.b.ins().select(ok, x, zero)));
        }
        let lane_ty = if elem == Ty::Bool { Ty::I32 } else { elem };
        let mut out = match self.get(index)? {
            V::U(i) => {
                // Every lane reads its own cell of one element: whole vectors.
                let (ok, addr) = self.local_cell(slot, len, i, 0);
                let zero = self.vconst(lane_ty, 0);
                let mut out = [zero; 2];
                for (part, x) in out.iter_mut().enumerate().take(self.shape.parts) {
                    let v = self.b.ins().load(vec_ty(lane_ty), mem, addr, (part * 16) as i32);
                    *x = self.b.ins().select(ok, v, zero);
                }
                out
            }
            V::P(ip) => {
                let zero = self.vconst(lane_ty, 0);
                let mut out = [zero; 2];
                for l in 0..self.shape.lanes {
                    let (p, k) = (l / 4, (l % 4) as u8);
                    let i = self.b.ins().extractlane(ip[p], k);
                    let (ok, addr) = self.local_cell(slot, len, i, l);
                    let x = self.b.ins().load(lty, mem, addr, 0);
                    let z = self.sconst(Const::from_bits(lane_ty, 0));
                    let x = self.b.ins().select(ok, x, z);
                    out[p] = self.b.ins().insertlane(out[p], x, k);
                }
                out
            }
        };
        if elem == Ty::Bool {
            let z = self.vconst(Ty::I32, 0);
            for p in out.iter_mut().take(self.shape.parts) {
                *p = self.b.ins().icmp(IntCC::NotEqual, *p, z);
            }
        }
        Ok(V::P(out))
    }

    fn local_store(&mut self, array: u32, index: Value, value: Value) -> Result<()> {
        let elem = self.f.locals[array as usize].elem;
        let (slot, len) = self.local_slot(array);
        let mem = MemFlagsData::trusted();
        let store_cell = |t: &mut Self, i: ir::Value, x: ir::Value, lane: usize| {
            let (ok, addr) = t.local_cell(slot, len, i, lane);
            let (blk, next) = (t.b.create_block(), t.b.create_block());
            t.b.ins().brif(ok, blk, &[], next, &[]);
            t.b.switch_to_block(blk);
            t.b.ins().store(mem, x, addr, 0);
            t.b.ins().jump(next, &[]);
            t.b.switch_to_block(next);
        };
        if !self.shape.vector() {
            let (i, x) = (self.scalar(index)?, self.scalar(value)?);
            let x = if elem == Ty::Bool { self.b.ins().uextend(types::I32, x) } else { x };
            store_cell(self, i, x, 0);
            return Ok(());
        }
        match self.get(index)? {
            V::U(i) => {
                // One element, every lane's own cell: merge the new lanes into the old vectors
                // under the execution mask (the slot belongs to this call alone).
                let new = self.parts(value)?;
                let (ok, addr) = self.local_cell(slot, len, i, 0);
                let (blk, next) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(ok, blk, &[], next, &[]);
                self.b.switch_to_block(blk);
                let lane_ty = if elem == Ty::Bool { Ty::I32 } else { elem };
                for (part, &new) in new.iter().enumerate().take(self.shape.parts) {
                    let off = (part * 16) as i32;
                    let old = self.b.ins().load(vec_ty(lane_ty), mem, addr, off);
                    let merged = self.vselect(self.mask[part], lane_ty, new, old);
                    self.b.ins().store(mem, merged, addr, off);
                }
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(next);
                Ok(())
            }
            V::P(_) => self.for_active_lanes(|t, l| {
                let i = t.lane(index, l)?;
                let x = t.lane(value, l)?;
                let vector_lane = !matches!(t.get(value)?, V::U(_));
                let x = if elem == Ty::Bool { t.lane_to_bits(elem, x, vector_lane) } else { x };
                store_cell(t, i, x, l);
                Ok(())
            }),
        }
    }
}

/// Integer division and remainder with the IR's defined edge cases, without traps: the divisor
/// is replaced by 1 where it is 0 or where `MIN / -1` would overflow, and the result fixed up.
fn int_div_rem(b: &mut FunctionBuilder, op: BinaryOp, signed: bool, x: ir::Value, y: ir::Value) -> ir::Value {
    let one = b.ins().iconst(types::I32, 1);
    let zero = b.ins().iconst(types::I32, 0);
    let y_zero = b.ins().icmp_imm_s(IntCC::Equal, y, 0);
    let mut safe = b.ins().select(y_zero, one, y);
    if signed {
        let x_min = b.ins().icmp_imm_s(IntCC::Equal, x, i32::MIN as i64);
        let y_m1 = b.ins().icmp_imm_s(IntCC::Equal, y, -1);
        let ovf = b.ins().band(x_min, y_m1);
        safe = b.ins().select(ovf, one, safe);
    }
    let r = match (op, signed) {
        (BinaryOp::Div, true) => b.ins().sdiv(x, safe),
        (BinaryOp::Div, false) => b.ins().udiv(x, safe),
        (_, true) => b.ins().srem(x, safe),
        (_, false) => b.ins().urem(x, safe),
    };
    let on_zero = if op == BinaryOp::Div { zero } else { x };
    b.ins().select(y_zero, on_zero, r)
}

/// Whether an instruction computes each lane from the same lane of its operands with
/// whole-vector instructions (so that the two halves of 8 lanes can be emitted separately).
fn splittable(f: &Function, inst: &Inst) -> bool {
    match &inst.op {
        Op::Binary(op, a, _) => match op {
            BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => false,
            BinaryOp::Div => f.ty(*a) == Ty::F32,
            _ => true,
        },
        op => arithmetic(op),
    }
}

/// Whether an operation is arithmetic on its operands alone: no memory, calls or regions.
pub(crate) fn arithmetic(op: &Op) -> bool {
    matches!(
        op,
        Op::Const(_)
            | Op::Unary(..)
            | Op::Binary(..)
            | Op::Fma(..)
            | Op::Cmp(..)
            | Op::Select(..)
            | Op::Convert(..)
            | Op::Bitcast(..)
            | Op::Detach(_)
            | Op::ReplaceGrad(..)
    )
}

/// `used[v]`: some instruction or region of `f` reads `v`.
fn used_values(f: &Function) -> Vec<bool> {
    let mut used = vec![false; f.value_types.len()];
    mark_reads(&f.body.insts, &f.body.yields, &mut used);
    used
}

/// Whether a region is worth if-converting: short, and without side effects, calls or loops.
fn is_cheap(r: &Region) -> bool {
    const LIMIT: usize = 12;
    fn count(r: &Region, n: &mut usize) -> bool {
        for inst in &r.insts {
            *n += 1;
            let ok = match &inst.op {
                Op::Call(..)
                | Op::CallExtern(..)
                | Op::Store { .. }
                | Op::AtomicAdd { .. }
                | Op::LocalLoad { .. }
                | Op::LocalStore { .. }
                | Op::Loop { .. }
                | Op::Math(..)
                | Op::Load { .. } => false,
                Op::Binary(BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr, ..) => false,
                Op::If { then, els, .. } => count(then, n) && count(els, n),
                _ => true,
            };
            if !ok || *n > LIMIT {
                return false;
            }
        }
        true
    }
    let mut n = 0;
    count(r, &mut n)
}
