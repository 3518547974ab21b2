//! IR functions → LLVM IR over vectors of the kernel's lane count.
//!
//! Every IR value becomes one LLVM vector of `W` lanes (`<W x float>`, `<W x i32>`, bools as
//! `<W x i1>` lane masks); LLVM's type legalisation maps them onto the CPU's registers. Code
//! runs under an execution mask, as in the Cranelift backend (ARCHITECTURE.md): a varying
//! `if` runs each region under its lanes' mask when some lane needs it (short pure regions
//! simply run) and selects the results; a loop runs while any lane continues and keeps the
//! values of lanes that stopped; buffer and local-array loads are gathers ([`Gathers`]) that
//! give 0 in the lanes masked off, and stores, atomics and host calls happen for active lanes
//! only. Inactive lanes compute unspecified values that nothing observes.
//!
//! Each IR function becomes an internal `fastcc` function `(context, mask, params...) ->
//! {results...}`, and each entry a C function with [`drs_cranelift::EntryFn`]'s signature
//! that loops over the call's lane groups (`drs_entry_<id>`).

mod refill;

use crate::llvm::{cstr, enum_attribute, string_attribute, Llvm};
use crate::Gathers;
use drs_cranelift::refill::refill_plan;
use drs_cranelift::{Buffer, Context, ExternEntry, Options};
use drs_ir::{BinaryOp, CmpOp, Const, Function, Inst, Module, Op, Region, Ty, UnaryOp, Value};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{
    LLVMAtomicOrdering, LLVMAtomicRMWBinOp, LLVMCallConv, LLVMIntPredicate, LLVMLinkage, LLVMRealPredicate,
};
use refill::EntryIo;
use std::mem::{offset_of, size_of};

/// Byte layout of [`Buffer`] (`repr(C)`: the data pointer, then the `usize` length).
const BUFFER_PTR: u64 = 0;
const BUFFER_LEN: u64 = size_of::<*const u32>() as u64;
const BUFFER_SIZE: u64 = size_of::<Buffer>() as u64;

/// A region runs without a branch around it when it has fewer than this many instructions,
/// all pure and cheap (a branch on a mask costs more than a few vector operations).
const SPECULATE_BELOW: usize = 8;

/// The symbol of function `id`'s entry wrapper in the object file.
pub(crate) fn entry_symbol(id: usize) -> String {
    format!("drs_entry_{id}")
}

struct Types {
    i1: LLVMTypeRef,
    i32: LLVMTypeRef,
    i64: LLVMTypeRef,
    ptr: LLVMTypeRef,
    /// `<W x float>`, `<W x i32>`, `<W x i1>`, `<W x ptr>`.
    f32s: LLVMTypeRef,
    i32s: LLVMTypeRef,
    mask: LLVMTypeRef,
    ptrs: LLVMTypeRef,
    /// The integer of `W` bits a mask is bit-cast to.
    mask_bits: LLVMTypeRef,
}

pub(crate) struct Codegen<'a> {
    llvm: &'a Llvm,
    ir: &'a Module,
    lanes: u32,
    t: Types,
    /// Internal functions and their types, by IR function index.
    functions: Vec<(LLVMValueRef, LLVMTypeRef)>,
    /// Attributes every generated function carries (CPU, features, vector width, nounwind).
    attributes: Vec<LLVMAttributeRef>,
    invariant_load: u32,
    empty_node: LLVMValueRef,
    loop_kind: u32,
    /// `llvm.loop.vectorize.enable false` (see [`Codegen::no_vectorize`]).
    vectorize_off: LLVMMetadataRef,
    /// [`Options::private_buffers`]: atomic adds as plain loads and stores.
    private_buffers: bool,
    /// How loads gather their lanes ([`Codegen::gather`]).
    gathers: Gathers,
}

/// The state of one function being translated.
struct Frame<'f> {
    ir: &'f Function,
    func: LLVMValueRef,
    ctx: LLVMValueRef,
    values: Vec<LLVMValueRef>,
    locals: Vec<LLVMValueRef>,
    /// The function's first block, where stack slots are allocated.
    allocas: LLVMBasicBlockRef,
}

impl Frame<'_> {
    fn get(&self, v: Value) -> LLVMValueRef {
        let value = self.values[v.0 as usize];
        debug_assert!(!value.is_null(), "v{} used before its definition (the verifier forbids it)", v.0);
        value
    }

    fn set(&mut self, v: Value, value: LLVMValueRef) {
        self.values[v.0 as usize] = value;
    }
}

const NO_NAME: *const std::ffi::c_char = c"".as_ptr();

impl<'a> Codegen<'a> {
    /// Code for `options` (lanes, private buffers) with `gathers`; `target_cpu`/`tune_cpu`/
    /// `features` as LLVM names them.
    pub fn new(
        llvm: &'a Llvm,
        ir: &'a Module,
        options: &Options,
        gathers: Gathers,
        target_cpu: &str,
        tune_cpu: &str,
        features: &str,
    ) -> Self {
        let lanes = options.lanes.count() as u32;
        let private_buffers = options.private_buffers;
        // SAFETY: type and metadata constructors of a live context.
        unsafe {
            let c = llvm.ctx;
            let i1 = LLVMInt1TypeInContext(c);
            let i32 = LLVMInt32TypeInContext(c);
            let i64 = LLVMInt64TypeInContext(c);
            let ptr = LLVMPointerTypeInContext(c, 0);
            // Scalar code uses scalar types: LLVM 19 fails on some `<1 x i1>` copies with
            // AVX-512 ("Cannot emit physreg copy instruction").
            let lanes_of = |ty| if lanes == 1 { ty } else { LLVMVectorType(ty, lanes) };
            let t = Types {
                i1,
                i32,
                i64,
                ptr,
                f32s: lanes_of(LLVMFloatTypeInContext(c)),
                i32s: lanes_of(i32),
                mask: lanes_of(i1),
                ptrs: lanes_of(ptr),
                mask_bits: LLVMIntTypeInContext(c, lanes),
            };
            // Vectors of the kernel's width stay whole (LLVM splits 512-bit vectors into two
            // by default, even where AVX-512 has them).
            let width = (lanes * 32).max(128).to_string();
            let attributes = vec![
                string_attribute(c, "target-cpu", target_cpu),
                string_attribute(c, "tune-cpu", tune_cpu),
                string_attribute(c, "target-features", features),
                string_attribute(c, "min-legal-vector-width", &width),
                string_attribute(c, "prefer-vector-width", &width),
                // Local arrays may make frames larger than a page: touch every page as the
                // frame grows, so that running out of stack hits the guard page.
                string_attribute(c, "probe-stack", "inline-asm"),
                enum_attribute(c, "nounwind"),
            ];
            let kind = "invariant.load";
            let invariant_load = LLVMGetMDKindIDInContext(c, kind.as_ptr() as *const _, kind.len() as u32);
            let empty_node = LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, std::ptr::null_mut(), 0));
            let kind = "llvm.loop";
            let loop_kind = LLVMGetMDKindIDInContext(c, kind.as_ptr() as *const _, kind.len() as u32);
            let hint = "llvm.loop.vectorize.enable";
            let mut hint = [
                LLVMMDStringInContext2(c, hint.as_ptr() as *const _, hint.len()),
                LLVMValueAsMetadata(LLVMConstInt(i1, 0, 0)),
            ];
            let vectorize_off = LLVMMDNodeInContext2(c, hint.as_mut_ptr(), 2);
            Codegen {
                llvm,
                ir,
                lanes,
                t,
                functions: Vec::new(),
                attributes,
                invariant_load,
                empty_node,
                loop_kind,
                vectorize_off,
                private_buffers,
                gathers,
            }
        }
    }

    /// Emits every function, and entry wrappers for the entries `options` names.
    pub fn emit(&mut self, options: &Options) {
        let called = called_functions(self.ir);
        // SAFETY: every handle below belongs to `self.llvm`'s context and module.
        unsafe {
            for (i, f) in self.ir.functions.iter().enumerate() {
                let mut params = vec![self.t.ptr, self.t.mask];
                params.extend(f.param_types().into_iter().map(|ty| self.vector(ty)));
                let ret = self.results_type(&f.result_types);
                let ty = LLVMFunctionType(ret, params.as_mut_ptr(), params.len() as u32, 0);
                let func = LLVMAddFunction(self.llvm.module, cstr(&format!("drs_fn_{i}")).as_ptr(), ty);
                LLVMSetLinkage(func, LLVMLinkage::LLVMInternalLinkage);
                LLVMSetFunctionCallConv(func, LLVMCallConv::LLVMFastCallConv as u32);
                self.add_attributes(func);
                if !called[i] {
                    // Called by its entry wrapper only: its body belongs there.
                    LLVMAddAttributeAtIndex(func, u32::MAX, enum_attribute(self.llvm.ctx, "alwaysinline"));
                }
                self.functions.push((func, ty));
            }
            for (i, f) in self.ir.functions.iter().enumerate() {
                self.define(i, f);
                if options.entries.as_ref().is_none_or(|names| names.contains(&f.name)) {
                    self.entry_wrapper(i, f, options);
                }
            }
        }
    }

    unsafe fn add_attributes(&self, func: LLVMValueRef) {
        for &a in &self.attributes {
            LLVMAddAttributeAtIndex(func, u32::MAX, a);
        }
    }

    fn vector(&self, ty: Ty) -> LLVMTypeRef {
        match ty {
            Ty::F32 => self.t.f32s,
            Ty::I32 | Ty::U32 => self.t.i32s,
            Ty::Bool => self.t.mask,
        }
    }

    unsafe fn results_type(&self, results: &[Ty]) -> LLVMTypeRef {
        if results.is_empty() {
            return LLVMVoidTypeInContext(self.llvm.ctx);
        }
        let mut fields: Vec<LLVMTypeRef> = results.iter().map(|&ty| self.vector(ty)).collect();
        LLVMStructTypeInContext(self.llvm.ctx, fields.as_mut_ptr(), fields.len() as u32, 0)
    }

    // ---- constants and small helpers -------------------------------------------------------

    unsafe fn splat(&self, scalar: LLVMValueRef) -> LLVMValueRef {
        if self.lanes == 1 {
            return scalar;
        }
        let mut elems = vec![scalar; self.lanes as usize];
        LLVMConstVector(elems.as_mut_ptr(), self.lanes)
    }

    unsafe fn constant(&self, c: Const) -> LLVMValueRef {
        let scalar = match c {
            Const::F32(bits) => {
                LLVMConstBitCast(LLVMConstInt(self.t.i32, bits as u64, 0), LLVMFloatTypeInContext(self.llvm.ctx))
            }
            Const::I32(v) => LLVMConstInt(self.t.i32, v as u32 as u64, 0),
            Const::U32(v) => LLVMConstInt(self.t.i32, v as u64, 0),
            Const::Bool(b) => LLVMConstInt(self.t.i1, b as u64, 0),
        };
        self.splat(scalar)
    }

    unsafe fn i32s(&self, v: u32) -> LLVMValueRef {
        self.splat(LLVMConstInt(self.t.i32, v as u64, 0))
    }

    unsafe fn i64_const(&self, v: u64) -> LLVMValueRef {
        LLVMConstInt(self.t.i64, v, 0)
    }

    /// `<0, 1, ..., W-1>`, or each lane's bit `<1, 2, 4, ...>`.
    unsafe fn lane_vector(&self, bits: bool) -> LLVMValueRef {
        let lane = |l: u32| LLVMConstInt(self.t.i32, if bits { 1 << l } else { u64::from(l) }, 0);
        if self.lanes == 1 {
            return lane(0);
        }
        let mut elems: Vec<LLVMValueRef> = (0..self.lanes).map(lane).collect();
        LLVMConstVector(elems.as_mut_ptr(), self.lanes)
    }

    fn b(&self) -> LLVMBuilderRef {
        self.llvm.builder
    }

    /// Whether any lane of `mask` is set (an `i1`).
    unsafe fn any(&self, mask: LLVMValueRef) -> LLVMValueRef {
        if self.lanes == 1 {
            return mask;
        }
        let bits = LLVMBuildBitCast(self.b(), mask, self.t.mask_bits, NO_NAME);
        LLVMBuildICmp(self.b(), LLVMIntPredicate::LLVMIntNE, bits, LLVMConstNull(self.t.mask_bits), NO_NAME)
    }

    /// The lanes of `mask` as the bits of an `i32` (what host calls receive as `active`).
    unsafe fn mask_to_i32(&self, mask: LLVMValueRef) -> LLVMValueRef {
        let bits = if self.lanes == 1 { mask } else { LLVMBuildBitCast(self.b(), mask, self.t.mask_bits, NO_NAME) };
        LLVMBuildZExt(self.b(), bits, self.t.i32, NO_NAME)
    }

    /// A value of type `ty` from the u32 bits host memory holds (bools are 0 or 1).
    unsafe fn value_from_bits(&self, ty: Ty, bits: LLVMValueRef) -> LLVMValueRef {
        match ty {
            Ty::F32 => LLVMBuildBitCast(self.b(), bits, self.t.f32s, NO_NAME),
            Ty::I32 | Ty::U32 => bits,
            Ty::Bool => LLVMBuildICmp(self.b(), LLVMIntPredicate::LLVMIntNE, bits, self.i32s(0), NO_NAME),
        }
    }

    unsafe fn value_to_bits(&self, ty: Ty, value: LLVMValueRef) -> LLVMValueRef {
        match ty {
            Ty::F32 => LLVMBuildBitCast(self.b(), value, self.t.i32s, NO_NAME),
            Ty::I32 | Ty::U32 => value,
            Ty::Bool => LLVMBuildZExt(self.b(), value, self.t.i32s, NO_NAME),
        }
    }

    unsafe fn intrinsic(&self, name: &str, overloads: &[LLVMTypeRef], args: &[LLVMValueRef]) -> LLVMValueRef {
        let id = LLVMLookupIntrinsicID(name.as_ptr() as *const _, name.len());
        assert!(id != 0, "LLVM has no intrinsic {name}");
        let mut overloads = overloads.to_vec();
        let decl = LLVMGetIntrinsicDeclaration(self.llvm.module, id, overloads.as_mut_ptr(), overloads.len());
        let ty = LLVMIntrinsicGetType(self.llvm.ctx, id, overloads.as_mut_ptr(), overloads.len());
        let mut args = args.to_vec();
        LLVMBuildCall2(self.b(), ty, decl, args.as_mut_ptr(), args.len() as u32, NO_NAME)
    }

    /// `base + offset` bytes.
    unsafe fn byte_offset(&self, base: LLVMValueRef, offset: u64) -> LLVMValueRef {
        let mut index = [self.i64_const(offset)];
        LLVMBuildGEP2(self.b(), LLVMInt8TypeInContext(self.llvm.ctx), base, index.as_mut_ptr(), 1, NO_NAME)
    }

    /// A load of a value that does not change during the call (the context and its tables).
    unsafe fn load_invariant(&self, ty: LLVMTypeRef, ptr: LLVMValueRef) -> LLVMValueRef {
        let load = LLVMBuildLoad2(self.b(), ty, ptr, NO_NAME);
        LLVMSetMetadata(load, self.invariant_load, self.empty_node);
        load
    }

    /// Loads `<W x i32>` from `ptr` (4-byte aligned).
    unsafe fn load_lanes(&self, ptr: LLVMValueRef) -> LLVMValueRef {
        let load = LLVMBuildLoad2(self.b(), self.t.i32s, ptr, NO_NAME);
        LLVMSetAlignment(load, 4);
        load
    }

    unsafe fn store_lanes(&self, value: LLVMValueRef, ptr: LLVMValueRef) {
        let store = LLVMBuildStore(self.b(), value, ptr);
        LLVMSetAlignment(store, 4);
    }

    /// `&base[index]` for every lane, `base` a pointer to u32s and `index` `<W x i32>` read as
    /// unsigned.
    ///
    /// The indices stay 32-bit so that an AVX-512 gather takes all 16 lanes in one instruction:
    /// with 64-bit indices LLVM splits each into two 8-lane gathers. A gather's 32-bit indices
    /// are signed, so the pointers are based 2^31 elements past `base` and the indices biased by
    /// -2^31 (their top bit flipped): every u32 index reaches its element.
    unsafe fn element_pointers(&self, base: LLVMValueRef, index: LLVMValueRef) -> LLVMValueRef {
        let biased = LLVMBuildXor(self.b(), index, self.i32s(1 << 31), NO_NAME);
        let mut indices = [biased];
        let shifted_base = self.byte_offset(base, 4 << 31);
        LLVMBuildGEP2(self.b(), self.t.i32, shifted_base, indices.as_mut_ptr(), 1, NO_NAME)
    }

    /// Loads the u32 of each lane of `mask`; other lanes are 0. Where loads are unconditional
    /// (one lane, [`Gathers::EveryLane`]), every lane's pointer must be valid even when masked
    /// off ([`Self::addressed_index`]). Without AVX-512, LLVM's branch per lane of a masked
    /// gather took about 40% of a kernel's time on an AMD processor (docs/benchmarks.md,
    /// session 38).
    unsafe fn gather(&self, pointers: LLVMValueRef, mask: LLVMValueRef) -> LLVMValueRef {
        let zero = self.i32s(0);
        if self.lanes == 1 {
            let load = LLVMBuildLoad2(self.b(), self.t.i32, pointers, NO_NAME);
            LLVMSetAlignment(load, 4);
            return LLVMBuildSelect(self.b(), mask, load, zero, NO_NAME);
        }
        match self.gathers {
            Gathers::Masked => self.masked_gather(pointers, mask),
            Gathers::EveryLane => {
                let loaded = self.masked_gather(pointers, self.splat(LLVMConstInt(self.t.i1, 1, 0)));
                LLVMBuildSelect(self.b(), mask, loaded, zero, NO_NAME)
            }
        }
    }

    /// Loads the u32 of each lane of `mask` (more than one lane) and reads no other lane's
    /// pointer, whatever [`Gathers`] says; other lanes are 0.
    unsafe fn masked_gather(&self, pointers: LLVMValueRef, mask: LLVMValueRef) -> LLVMValueRef {
        let align = LLVMConstInt(self.t.i32, 4, 0);
        self.intrinsic("llvm.masked.gather", &[self.t.i32s, self.t.ptrs], &[pointers, align, mask, self.i32s(0)])
    }

    /// Stores each lane of `mask`, in increasing lane order.
    unsafe fn scatter(&self, frame: &Frame, bits: LLVMValueRef, pointers: LLVMValueRef, mask: LLVMValueRef) {
        if self.lanes == 1 {
            let (store, next) = (self.block(frame, "store"), self.block(frame, "store_next"));
            LLVMBuildCondBr(self.b(), mask, store, next);
            LLVMPositionBuilderAtEnd(self.b(), store);
            self.store_lanes(bits, pointers);
            LLVMBuildBr(self.b(), next);
            LLVMPositionBuilderAtEnd(self.b(), next);
            return;
        }
        let align = LLVMConstInt(self.t.i32, 4, 0);
        self.intrinsic("llvm.masked.scatter", &[self.t.i32s, self.t.ptrs], &[bits, pointers, align, mask]);
    }

    /// Keeps LLVM's loop vectoriser off the loop whose back edge is `branch`: the code is
    /// vectorised already, and LLVM 19's loop vectoriser miscompiles scalar loops of this form
    /// (a loop whose carried values a mask selects ran one iteration too many).
    unsafe fn no_vectorize(&self, branch: LLVMValueRef) {
        use llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
        let c = self.llvm.ctx;
        // A loop's ID is a node whose first operand is itself.
        let placeholder = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut operands = [placeholder, self.vectorize_off];
        let id = LLVMMDNodeInContext2(c, operands.as_mut_ptr(), 2);
        LLVMMetadataReplaceAllUsesWith(placeholder, id);
        LLVMSetMetadata(branch, self.loop_kind, LLVMMetadataAsValue(c, id));
    }

    /// A stack slot of `elems` u32s in the function's first block.
    unsafe fn stack_slot(&self, frame: &Frame, elems: u32) -> LLVMValueRef {
        let here = LLVMGetInsertBlock(self.b());
        LLVMPositionBuilderAtEnd(self.b(), frame.allocas);
        let slot = LLVMBuildAlloca(self.b(), LLVMArrayType2(self.t.i32, elems.max(1) as u64), NO_NAME);
        LLVMSetAlignment(slot, 64);
        LLVMPositionBuilderAtEnd(self.b(), here);
        slot
    }

    /// The stack slots of the function's local arrays, each with an element 0 (every lane's
    /// out-of-range index reads it: [`Self::addressed_index`]).
    unsafe fn local_arrays(&self, frame: &Frame) -> Vec<LLVMValueRef> {
        frame.ir.locals.iter().map(|a| self.stack_slot(frame, a.len.max(1) * self.lanes)).collect()
    }

    unsafe fn block(&self, frame: &Frame, name: &str) -> LLVMBasicBlockRef {
        LLVMAppendBasicBlockInContext(self.llvm.ctx, frame.func, cstr(name).as_ptr())
    }

    // ---- functions ---------------------------------------------------------------------------

    unsafe fn define(&self, index: usize, ir: &Function) {
        let (func, _) = self.functions[index];
        let allocas = LLVMAppendBasicBlockInContext(self.llvm.ctx, func, c"allocas".as_ptr());
        let body = LLVMAppendBasicBlockInContext(self.llvm.ctx, func, c"body".as_ptr());
        let mut frame = Frame {
            ir,
            func,
            ctx: LLVMGetParam(func, 0),
            values: vec![std::ptr::null_mut(); ir.value_types.len()],
            locals: Vec::new(),
            allocas,
        };
        LLVMPositionBuilderAtEnd(self.b(), body);
        for (k, p) in ir.params.iter().enumerate() {
            frame.set(p.value, LLVMGetParam(func, 2 + k as u32));
        }
        frame.locals = self.local_arrays(&frame);
        let mask = LLVMGetParam(func, 1);
        let yields = self.region(&mut frame, &ir.body, mask);
        if yields.is_empty() {
            LLVMBuildRetVoid(self.b());
        } else {
            let mut result = LLVMGetUndef(self.results_type(&ir.result_types));
            for (k, y) in yields.into_iter().enumerate() {
                result = LLVMBuildInsertValue(self.b(), result, y, k as u32, NO_NAME);
            }
            LLVMBuildRet(self.b(), result);
        }
        LLVMPositionBuilderAtEnd(self.b(), allocas);
        LLVMBuildBr(self.b(), body);
    }

    /// The C entry point of function `index`: every lane group of the call in turn, or, for a
    /// function with a refill plan, the call's lanes through one refilled group
    /// (`codegen/refill.rs`).
    unsafe fn entry_wrapper(&self, index: usize, ir: &Function, options: &Options) {
        let (internal, internal_ty) = self.functions[index];
        let c = self.llvm.ctx;
        let mut params = [self.t.ptr, self.t.ptr, self.t.ptr];
        let ty = LLVMFunctionType(LLVMVoidTypeInContext(c), params.as_mut_ptr(), 3, 0);
        let func = LLVMAddFunction(self.llvm.module, cstr(&entry_symbol(index)).as_ptr(), ty);
        self.add_attributes(func);
        let (args, results, ctx) = (LLVMGetParam(func, 0), LLVMGetParam(func, 1), LLVMGetParam(func, 2));
        let allocas = LLVMAppendBasicBlockInContext(c, func, c"allocas".as_ptr());
        let start = LLVMAppendBasicBlockInContext(c, func, c"start".as_ptr());
        let plain = LLVMAppendBasicBlockInContext(c, func, c"plain".as_ptr());
        let group = LLVMAppendBasicBlockInContext(c, func, c"group".as_ptr());
        let exit = LLVMAppendBasicBlockInContext(c, func, c"exit".as_ptr());
        let b = self.b();

        LLVMPositionBuilderAtEnd(b, start);
        let groups = self.load_invariant(self.t.i64, self.byte_offset(ctx, offset_of!(Context, groups) as u64));
        let stride = self.load_invariant(self.t.i64, self.byte_offset(ctx, offset_of!(Context, stride) as u64));
        let active = self.load_invariant(self.t.i32, self.byte_offset(ctx, offset_of!(Context, active) as u64));
        let lane_bits = LLVMBuildAnd(b, self.splat_runtime(active, self.t.i32s), self.lane_vector(true), NO_NAME);
        let mask = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntNE, lane_bits, self.i32s(0), NO_NAME);
        let none = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, groups, self.i64_const(0), NO_NAME);
        let dispatch = LLVMAppendBasicBlockInContext(c, func, c"dispatch".as_ptr());
        LLVMBuildCondBr(b, none, exit, dispatch);

        LLVMPositionBuilderAtEnd(b, dispatch);
        let flags = options.uniform_params.get(&ir.name).cloned().unwrap_or_default();
        let uniform = drs_cranelift::uniform::analyze(ir, &flags, self.lanes > 1);
        let plan = if self.lanes > 1 { refill_plan(self.ir, ir, &uniform) } else { None };
        match plan {
            Some(plan) => {
                let mut frame = Frame {
                    ir,
                    func,
                    ctx,
                    values: vec![std::ptr::null_mut(); ir.value_types.len()],
                    locals: Vec::new(),
                    allocas,
                };
                frame.locals = self.local_arrays(&frame);
                let io = EntryIo { args, results, groups, stride, active };
                self.refill(&mut frame, &plan, &uniform, &flags, io, plain, exit);
            }
            None => {
                LLVMBuildBr(b, plain);
            }
        }

        LLVMPositionBuilderAtEnd(b, plain);
        LLVMBuildBr(b, group);
        LLVMPositionBuilderAtEnd(b, group);
        let g = LLVMBuildPhi(b, self.t.i64, c"g".as_ptr());
        let first = LLVMBuildMul(b, g, self.i64_const(self.lanes as u64), NO_NAME);
        let column = |k: usize, base: LLVMValueRef| {
            let offset = LLVMBuildAdd(b, LLVMBuildMul(b, stride, self.i64_const(k as u64), NO_NAME), first, NO_NAME);
            let mut index = [offset];
            LLVMBuildGEP2(b, self.t.i32, base, index.as_mut_ptr(), 1, NO_NAME)
        };
        let mut call_args = vec![ctx, mask];
        for (k, ty) in ir.param_types().into_iter().enumerate() {
            call_args.push(self.value_from_bits(ty, self.load_lanes(column(k, args))));
        }
        let call = LLVMBuildCall2(b, internal_ty, internal, call_args.as_mut_ptr(), call_args.len() as u32, NO_NAME);
        LLVMSetInstructionCallConv(call, LLVMCallConv::LLVMFastCallConv as u32);
        for (k, &ty) in ir.result_types.iter().enumerate() {
            let value = LLVMBuildExtractValue(b, call, k as u32, NO_NAME);
            self.store_lanes(self.value_to_bits(ty, value), column(k, results));
        }
        let next = LLVMBuildAdd(b, g, self.i64_const(1), NO_NAME);
        let more = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULT, next, groups, NO_NAME);
        self.no_vectorize(LLVMBuildCondBr(b, more, group, exit));
        let mut incoming = [self.i64_const(0), next];
        let mut blocks = [plain, group];
        LLVMAddIncoming(g, incoming.as_mut_ptr(), blocks.as_mut_ptr(), 2);

        LLVMPositionBuilderAtEnd(b, exit);
        LLVMBuildRetVoid(b);
        LLVMPositionBuilderAtEnd(b, allocas);
        LLVMBuildBr(b, start);
    }

    /// A runtime scalar in every lane of a value of type `lanes_ty`.
    unsafe fn splat_runtime(&self, scalar: LLVMValueRef, lanes_ty: LLVMTypeRef) -> LLVMValueRef {
        if self.lanes == 1 {
            return scalar;
        }
        let one = LLVMBuildInsertElement(self.b(), LLVMGetPoison(lanes_ty), scalar, self.i64_const(0), NO_NAME);
        let zeros = LLVMConstNull(LLVMVectorType(self.t.i32, self.lanes));
        LLVMBuildShuffleVector(self.b(), one, LLVMGetPoison(lanes_ty), zeros, NO_NAME)
    }

    /// Lane `l` of `value`.
    unsafe fn lane(&self, value: LLVMValueRef, l: u32) -> LLVMValueRef {
        if self.lanes == 1 {
            return value;
        }
        LLVMBuildExtractElement(self.b(), value, self.i64_const(l as u64), NO_NAME)
    }

    // ---- regions and instructions ------------------------------------------------------------

    unsafe fn region(&self, frame: &mut Frame, region: &Region, mask: LLVMValueRef) -> Vec<LLVMValueRef> {
        for inst in &region.insts {
            self.inst(frame, inst, mask);
        }
        region.yields.iter().map(|&v| frame.get(v)).collect()
    }

    unsafe fn inst(&self, frame: &mut Frame, inst: &Inst, mask: LLVMValueRef) {
        let b = self.b();
        let result = |frame: &mut Frame, value| frame.set(inst.results[0], value);
        match &inst.op {
            Op::Const(c) => result(frame, self.constant(*c)),
            Op::Unary(op, a) => {
                let v = self.unary(*op, frame.ir.ty(*a), frame.get(*a));
                result(frame, v)
            }
            Op::Binary(op, a, c) => {
                let v = self.binary(*op, frame.ir.ty(*a), frame.get(*a), frame.get(*c));
                result(frame, v)
            }
            Op::Fma(x, y, z) => {
                let v = self.intrinsic("llvm.fma", &[self.t.f32s], &[frame.get(*x), frame.get(*y), frame.get(*z)]);
                result(frame, v)
            }
            Op::Cmp(op, x, y) => {
                let v = self.compare(*op, frame.ir.ty(*x), frame.get(*x), frame.get(*y));
                result(frame, v)
            }
            Op::Select(c, x, y) => {
                let v = LLVMBuildSelect(b, frame.get(*c), frame.get(*x), frame.get(*y), NO_NAME);
                result(frame, v)
            }
            Op::Convert(to, x) => {
                let v = self.convert(frame.ir.ty(*x), *to, frame.get(*x));
                result(frame, v)
            }
            Op::Bitcast(to, x) => {
                let v = match (frame.ir.ty(*x), to) {
                    (from, to) if (from == Ty::F32) == (*to == Ty::F32) => frame.get(*x),
                    _ => LLVMBuildBitCast(b, frame.get(*x), self.vector(*to), NO_NAME),
                };
                result(frame, v)
            }
            Op::Detach(x) | Op::ReplaceGrad(x, _) => {
                let v = frame.get(*x);
                result(frame, v)
            }
            Op::Math(..) => unreachable!("check_module rejects unexpanded math"),
            Op::Call(callee, args) => {
                let (func, ty) = self.functions[callee.0 as usize];
                let mut call_args = vec![frame.ctx, mask];
                call_args.extend(args.iter().map(|&a| frame.get(a)));
                let call = LLVMBuildCall2(b, ty, func, call_args.as_mut_ptr(), call_args.len() as u32, NO_NAME);
                LLVMSetInstructionCallConv(call, LLVMCallConv::LLVMFastCallConv as u32);
                for (k, &r) in inst.results.iter().enumerate() {
                    frame.set(r, LLVMBuildExtractValue(b, call, k as u32, NO_NAME));
                }
            }
            Op::CallExtern(index, args) => self.call_extern(frame, inst, *index, args, mask),
            Op::Load { buffer, index } => {
                let (pointers, in_range) = self.buffer_elements(frame, *buffer, frame.get(*index));
                let bits = self.gather(pointers, LLVMBuildAnd(b, mask, in_range, NO_NAME));
                let v = self.value_from_bits(frame.ir.ty(inst.results[0]), bits);
                result(frame, v)
            }
            Op::Store { buffer, index, value } => {
                let (pointers, in_range) = self.buffer_elements(frame, *buffer, frame.get(*index));
                let bits = self.value_to_bits(frame.ir.ty(*value), frame.get(*value));
                self.scatter(frame, bits, pointers, LLVMBuildAnd(b, mask, in_range, NO_NAME));
            }
            Op::AtomicAdd { buffer, index, value } => {
                let (pointers, in_range) = self.buffer_elements(frame, *buffer, frame.get(*index));
                let lanes = LLVMBuildAnd(b, mask, in_range, NO_NAME);
                self.atomic_add(frame, pointers, frame.ir.ty(*value), frame.get(*value), lanes);
            }
            Op::LocalLoad { array, index } => {
                let (pointers, in_range) = self.local_elements(frame, *array, frame.get(*index));
                let bits = self.gather(pointers, LLVMBuildAnd(b, mask, in_range, NO_NAME));
                // An element not yet written reads as some value, never as LLVM's undef, which
                // could reach a branch.
                let bits = LLVMBuildFreeze(b, bits, NO_NAME);
                let v = self.value_from_bits(frame.ir.ty(inst.results[0]), bits);
                result(frame, v)
            }
            Op::LocalStore { array, index, value } => {
                let (pointers, in_range) = self.local_elements(frame, *array, frame.get(*index));
                let bits = self.value_to_bits(frame.ir.ty(*value), frame.get(*value));
                self.scatter(frame, bits, pointers, LLVMBuildAnd(b, mask, in_range, NO_NAME));
            }
            Op::If { cond, then, els } => self.branch(frame, inst, *cond, then, els, mask),
            Op::Loop { init, body, .. } => self.translate_loop(frame, inst, init, body, mask),
        }
    }

    unsafe fn unary(&self, op: UnaryOp, ty: Ty, x: LLVMValueRef) -> LLVMValueRef {
        let b = self.b();
        let f = |name: &str| self.intrinsic(name, &[self.t.f32s], &[x]);
        match op {
            UnaryOp::Neg if ty == Ty::F32 => LLVMBuildFNeg(b, x, NO_NAME),
            UnaryOp::Neg => LLVMBuildNeg(b, x, NO_NAME),
            UnaryOp::Not => LLVMBuildNot(b, x, NO_NAME),
            UnaryOp::Abs => f("llvm.fabs"),
            UnaryOp::Sqrt => f("llvm.sqrt"),
            UnaryOp::Floor => f("llvm.floor"),
            UnaryOp::Ceil => f("llvm.ceil"),
            UnaryOp::Trunc => f("llvm.trunc"),
            UnaryOp::Round => f("llvm.round"),
        }
    }

    unsafe fn binary(&self, op: BinaryOp, ty: Ty, x: LLVMValueRef, y: LLVMValueRef) -> LLVMValueRef {
        use LLVMIntPredicate::*;
        let b = self.b();
        let select = |c, p, q| LLVMBuildSelect(b, c, p, q, NO_NAME);
        if ty == Ty::F32 {
            let fcmp = |pred| LLVMBuildFCmp(b, pred, x, y, NO_NAME);
            return match op {
                BinaryOp::Add => LLVMBuildFAdd(b, x, y, NO_NAME),
                BinaryOp::Sub => LLVMBuildFSub(b, x, y, NO_NAME),
                BinaryOp::Mul => LLVMBuildFMul(b, x, y, NO_NAME),
                BinaryOp::Div => LLVMBuildFDiv(b, x, y, NO_NAME),
                BinaryOp::Rem => LLVMBuildFRem(b, x, y, NO_NAME),
                // `x < y ? x : y`, as the IR defines it (a NaN `y` is returned).
                BinaryOp::Min => select(fcmp(LLVMRealPredicate::LLVMRealOLT), x, y),
                BinaryOp::Max => select(fcmp(LLVMRealPredicate::LLVMRealOGT), x, y),
                BinaryOp::CopySign => self.intrinsic("llvm.copysign", &[self.t.f32s], &[x, y]),
                _ => unreachable!("the verifier rejects {op:?} on f32"),
            };
        }
        let signed = ty == Ty::I32;
        let icmp = |pred, p, q| LLVMBuildICmp(b, pred, p, q, NO_NAME);
        match op {
            BinaryOp::Add => LLVMBuildAdd(b, x, y, NO_NAME),
            BinaryOp::Sub => LLVMBuildSub(b, x, y, NO_NAME),
            BinaryOp::Mul => LLVMBuildMul(b, x, y, NO_NAME),
            BinaryOp::Div | BinaryOp::Rem => {
                // Division by zero and `i32::MIN / -1` are defined in the IR (0 / `i32::MIN`,
                // remainders `x` / 0) and undefined in LLVM: divide by 1 instead, then fix.
                let zero = self.i32s(0);
                let by_zero = icmp(LLVMIntEQ, y, zero);
                let unsafe_divisor = if signed {
                    let min = icmp(LLVMIntEQ, x, self.i32s(i32::MIN as u32));
                    let minus_one = icmp(LLVMIntEQ, y, self.i32s(u32::MAX));
                    LLVMBuildOr(b, by_zero, LLVMBuildAnd(b, min, minus_one, NO_NAME), NO_NAME)
                } else {
                    by_zero
                };
                let divisor = select(unsafe_divisor, self.i32s(1), y);
                match (op, signed) {
                    (BinaryOp::Div, true) => select(by_zero, zero, LLVMBuildSDiv(b, x, divisor, NO_NAME)),
                    (BinaryOp::Div, false) => select(by_zero, zero, LLVMBuildUDiv(b, x, divisor, NO_NAME)),
                    (_, true) => select(by_zero, x, LLVMBuildSRem(b, x, divisor, NO_NAME)),
                    (_, false) => select(by_zero, x, LLVMBuildURem(b, x, divisor, NO_NAME)),
                }
            }
            BinaryOp::Min => select(icmp(if signed { LLVMIntSLT } else { LLVMIntULT }, x, y), x, y),
            BinaryOp::Max => select(icmp(if signed { LLVMIntSGT } else { LLVMIntUGT }, x, y), x, y),
            BinaryOp::And => LLVMBuildAnd(b, x, y, NO_NAME),
            BinaryOp::Or => LLVMBuildOr(b, x, y, NO_NAME),
            BinaryOp::Xor => LLVMBuildXor(b, x, y, NO_NAME),
            BinaryOp::Shl | BinaryOp::Shr => {
                let amount = LLVMBuildAnd(b, y, self.i32s(31), NO_NAME);
                match (op, signed) {
                    (BinaryOp::Shl, _) => LLVMBuildShl(b, x, amount, NO_NAME),
                    (_, true) => LLVMBuildAShr(b, x, amount, NO_NAME),
                    (_, false) => LLVMBuildLShr(b, x, amount, NO_NAME),
                }
            }
            BinaryOp::CopySign => unreachable!("the verifier rejects copysign on integers"),
        }
    }

    unsafe fn compare(&self, op: CmpOp, ty: Ty, x: LLVMValueRef, y: LLVMValueRef) -> LLVMValueRef {
        use LLVMIntPredicate::*;
        use LLVMRealPredicate::*;
        let b = self.b();
        if ty == Ty::F32 {
            // Ordered comparisons (false with a NaN) except `Ne` (true with a NaN).
            let pred = match op {
                CmpOp::Eq => LLVMRealOEQ,
                CmpOp::Ne => LLVMRealUNE,
                CmpOp::Lt => LLVMRealOLT,
                CmpOp::Le => LLVMRealOLE,
                CmpOp::Gt => LLVMRealOGT,
                CmpOp::Ge => LLVMRealOGE,
            };
            return LLVMBuildFCmp(b, pred, x, y, NO_NAME);
        }
        let signed = ty == Ty::I32;
        let pred = match op {
            CmpOp::Eq => LLVMIntEQ,
            CmpOp::Ne => LLVMIntNE,
            CmpOp::Lt if signed => LLVMIntSLT,
            CmpOp::Le if signed => LLVMIntSLE,
            CmpOp::Gt if signed => LLVMIntSGT,
            CmpOp::Ge if signed => LLVMIntSGE,
            CmpOp::Lt => LLVMIntULT,
            CmpOp::Le => LLVMIntULE,
            CmpOp::Gt => LLVMIntUGT,
            CmpOp::Ge => LLVMIntUGE,
        };
        LLVMBuildICmp(b, pred, x, y, NO_NAME)
    }

    unsafe fn convert(&self, from: Ty, to: Ty, x: LLVMValueRef) -> LLVMValueRef {
        let b = self.b();
        match (from, to) {
            // Saturating, NaN to 0: exactly the IR's rule.
            (Ty::F32, Ty::I32) => self.intrinsic("llvm.fptosi.sat", &[self.t.i32s, self.t.f32s], &[x]),
            (Ty::F32, Ty::U32) => self.intrinsic("llvm.fptoui.sat", &[self.t.i32s, self.t.f32s], &[x]),
            (Ty::I32, Ty::F32) => LLVMBuildSIToFP(b, x, self.t.f32s, NO_NAME),
            (Ty::U32, Ty::F32) => LLVMBuildUIToFP(b, x, self.t.f32s, NO_NAME),
            _ => x,
        }
    }

    /// Pointers to element `index` of a module buffer in every lane, and which lanes are in range
    /// (the others must be masked off: see [`Self::addressed_index`]).
    unsafe fn buffer_elements(&self, frame: &Frame, buffer: u32, index: LLVMValueRef) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b();
        let table = self.load_invariant(self.t.ptr, self.byte_offset(frame.ctx, offset_of!(Context, buffers) as u64));
        let descriptor = self.byte_offset(table, buffer as u64 * BUFFER_SIZE);
        let data = self.load_invariant(self.t.ptr, self.byte_offset(descriptor, BUFFER_PTR));
        let len = self.load_invariant(self.t.i64, self.byte_offset(descriptor, BUFFER_LEN));
        // In range: the buffer is not empty and `index <= min(len - 1, u32::MAX)`, which is
        // exact however long the buffer is.
        let not_empty = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntNE, len, self.i64_const(0), NO_NAME);
        let last = LLVMBuildSub(b, len, self.i64_const(1), NO_NAME);
        let u32_max = self.i64_const(u64::from(u32::MAX));
        let beyond_u32 = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGT, last, u32_max, NO_NAME);
        let last = LLVMBuildTrunc(b, LLVMBuildSelect(b, beyond_u32, u32_max, last, NO_NAME), self.t.i32, NO_NAME);
        let at_most_last =
            LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULE, index, self.splat_runtime(last, self.t.i32s), NO_NAME);
        let in_range = LLVMBuildAnd(b, at_most_last, self.splat_runtime(not_empty, self.t.mask), NO_NAME);
        let addressed = self.addressed_index(in_range, index);
        (self.element_pointers(data, addressed), in_range)
    }

    /// The element index each lane addresses: `index`, except where loads are unconditional
    /// ([`Self::gather`]), where an index out of range becomes 0 (every buffer and local array
    /// has an element 0). Masked gathers and scatters touch only their enabled lanes; a select
    /// there would also cost AVX-512's one-instruction gather, since LLVM hoists the index's
    /// widening to 64 bits above it.
    unsafe fn addressed_index(&self, in_range: LLVMValueRef, index: LLVMValueRef) -> LLVMValueRef {
        if self.lanes == 1 || self.gathers == Gathers::EveryLane {
            LLVMBuildSelect(self.b(), in_range, index, self.i32s(0), NO_NAME)
        } else {
            index
        }
    }

    /// Pointers to element `index` of a local array in every lane (lane `l` of element `i` is
    /// at `i * W + l`), and which lanes are in range. (`check_module` bounds a function's local
    /// arrays far below 2^32 slots.)
    unsafe fn local_elements(&self, frame: &Frame, array: u32, index: LLVMValueRef) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b();
        let len = frame.ir.locals[array as usize].len;
        let in_range = LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULT, index, self.i32s(len), NO_NAME);
        let addressed = self.addressed_index(in_range, index);
        let slot = LLVMBuildAdd(
            b,
            LLVMBuildMul(b, addressed, self.i32s(self.lanes), NO_NAME),
            self.lane_vector(false),
            NO_NAME,
        );
        (self.element_pointers(frame.locals[array as usize], slot), in_range)
    }

    /// Atomic adds lane by lane, in increasing lane order, for the lanes set in `lanes` (with
    /// [`Options::private_buffers`], each a plain load, add and store).
    unsafe fn atomic_add(
        &self,
        frame: &Frame,
        pointers: LLVMValueRef,
        ty: Ty,
        value: LLVMValueRef,
        lanes: LLVMValueRef,
    ) {
        let b = self.b();
        let op = if ty == Ty::F32 {
            LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFAdd
        } else {
            LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpAdd
        };
        for l in 0..self.lanes {
            let run = self.block(frame, "atomic");
            let next = self.block(frame, "atomic_next");
            LLVMBuildCondBr(b, self.lane(lanes, l), run, next);
            LLVMPositionBuilderAtEnd(b, run);
            let pointer = self.lane(pointers, l);
            let addend = self.lane(value, l);
            if self.private_buffers {
                let element_ty = LLVMTypeOf(addend);
                let old = LLVMBuildLoad2(b, element_ty, pointer, NO_NAME);
                LLVMSetAlignment(old, 4);
                let sum = if ty == Ty::F32 {
                    LLVMBuildFAdd(b, old, addend, NO_NAME)
                } else {
                    LLVMBuildAdd(b, old, addend, NO_NAME)
                };
                LLVMSetAlignment(LLVMBuildStore(b, sum, pointer), 4);
            } else {
                LLVMBuildAtomicRMW(b, op, pointer, addend, LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic, 0);
            }
            LLVMBuildBr(b, next);
            LLVMPositionBuilderAtEnd(b, next);
        }
    }

    /// One host call for the lane group: arguments and results as `[param][lane]` u32 arrays
    /// on the stack, the active lanes as bits; skipped when no lane is active.
    unsafe fn call_extern(&self, frame: &mut Frame, inst: &Inst, index: u32, args: &[Value], mask: LLVMValueRef) {
        let b = self.b();
        let w = self.lanes;
        let decl = &self.ir.externs[index as usize];
        let arg_slot = self.stack_slot(frame, decl.params.len() as u32 * w);
        let result_slot = self.stack_slot(frame, decl.results.len() as u32 * w);
        let skip_from = LLVMGetInsertBlock(b);
        let call = self.block(frame, "host_call");
        let after = self.block(frame, "after_host_call");
        LLVMBuildCondBr(b, self.any(mask), call, after);

        LLVMPositionBuilderAtEnd(b, call);
        for (k, &a) in args.iter().enumerate() {
            let bits = self.value_to_bits(frame.ir.ty(a), frame.get(a));
            self.store_lanes(bits, self.byte_offset(arg_slot, k as u64 * w as u64 * 4));
        }
        let table = self.load_invariant(self.t.ptr, self.byte_offset(frame.ctx, offset_of!(Context, externs) as u64));
        let entry = self.byte_offset(table, index as u64 * size_of::<ExternEntry>() as u64);
        let func = self.load_invariant(self.t.ptr, self.byte_offset(entry, offset_of!(ExternEntry, func) as u64));
        let user = self.load_invariant(self.t.ptr, self.byte_offset(entry, offset_of!(ExternEntry, user) as u64));
        let mut params = [self.t.ptr, self.t.ptr, self.t.ptr, self.t.i32, self.t.i32];
        let ty = LLVMFunctionType(LLVMVoidTypeInContext(self.llvm.ctx), params.as_mut_ptr(), 5, 0);
        let mut call_args =
            [arg_slot, result_slot, user, LLVMConstInt(self.t.i32, w as u64, 0), self.mask_to_i32(mask)];
        LLVMBuildCall2(b, ty, func, call_args.as_mut_ptr(), 5, NO_NAME);
        let mut loaded = Vec::new();
        for (k, &ty) in decl.results.iter().enumerate() {
            let bits = self.load_lanes(self.byte_offset(result_slot, k as u64 * w as u64 * 4));
            loaded.push((self.value_from_bits(ty, bits), self.vector(ty)));
        }
        let call_end = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, after);

        LLVMPositionBuilderAtEnd(b, after);
        for (&r, (value, ty)) in inst.results.iter().zip(loaded) {
            let phi = LLVMBuildPhi(b, ty, NO_NAME);
            let mut incoming = [value, LLVMConstNull(ty)];
            let mut blocks = [call_end, skip_from];
            LLVMAddIncoming(phi, incoming.as_mut_ptr(), blocks.as_mut_ptr(), 2);
            frame.set(r, phi);
        }
    }

    /// `if`: each region runs under its lanes' mask when any lane takes it; the results are
    /// selected by the condition.
    unsafe fn branch(
        &self,
        frame: &mut Frame,
        inst: &Inst,
        cond: Value,
        then: &Region,
        els: &Region,
        mask: LLVMValueRef,
    ) {
        let b = self.b();
        let c = frame.get(cond);
        let then_mask = LLVMBuildAnd(b, mask, c, NO_NAME);
        let else_mask = LLVMBuildAnd(b, mask, LLVMBuildNot(b, c, NO_NAME), NO_NAME);
        let types: Vec<LLVMTypeRef> = inst.results.iter().map(|&r| self.vector(frame.ir.ty(r))).collect();
        let then_values = self.guarded_region(frame, then, then_mask, &types, "then");
        let else_values = self.guarded_region(frame, els, else_mask, &types, "else");
        for (k, &r) in inst.results.iter().enumerate() {
            frame.set(r, LLVMBuildSelect(b, c, then_values[k], else_values[k], NO_NAME));
        }
    }

    /// Runs `region` under `mask` if any lane is set (or always, if it is short and pure); its
    /// yields, zero where it did not run.
    unsafe fn guarded_region(
        &self,
        frame: &mut Frame,
        region: &Region,
        mask: LLVMValueRef,
        types: &[LLVMTypeRef],
        name: &str,
    ) -> Vec<LLVMValueRef> {
        if region.insts.len() < SPECULATE_BELOW && region.insts.iter().all(|i| is_cheap_and_pure(&i.op)) {
            return self.region(frame, region, mask);
        }
        let b = self.b();
        let before = LLVMGetInsertBlock(b);
        let run = self.block(frame, name);
        let join = self.block(frame, &format!("{name}_join"));
        LLVMBuildCondBr(b, self.any(mask), run, join);
        LLVMPositionBuilderAtEnd(b, run);
        let values = self.region(frame, region, mask);
        let end = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, join);
        LLVMPositionBuilderAtEnd(b, join);
        values
            .into_iter()
            .zip(types)
            .map(|(value, &ty)| {
                let phi = LLVMBuildPhi(b, ty, NO_NAME);
                let mut incoming = [value, LLVMConstNull(ty)];
                let mut blocks = [end, before];
                LLVMAddIncoming(phi, incoming.as_mut_ptr(), blocks.as_mut_ptr(), 2);
                phi
            })
            .collect()
    }

    /// A do-while loop over the lanes of `mask`: each iteration runs the body under the lanes
    /// still looping; a lane that stops keeps the values of its last iteration.
    unsafe fn translate_loop(&self, frame: &mut Frame, inst: &Inst, init: &[Value], body: &Region, mask: LLVMValueRef) {
        let b = self.b();
        let before = LLVMGetInsertBlock(b);
        let header = self.block(frame, "loop");
        let exit = self.block(frame, "loop_exit");
        LLVMBuildBr(b, header);
        LLVMPositionBuilderAtEnd(b, header);
        let active = LLVMBuildPhi(b, self.t.mask, c"active".as_ptr());
        let carried: Vec<LLVMValueRef> =
            body.params.iter().map(|&p| LLVMBuildPhi(b, self.vector(frame.ir.ty(p)), NO_NAME)).collect();
        for (&p, &phi) in body.params.iter().zip(&carried) {
            frame.set(p, phi);
        }
        let yields = self.region(frame, body, active);
        let latch = LLVMGetInsertBlock(b);
        let next: Vec<LLVMValueRef> =
            yields[1..].iter().zip(&carried).map(|(&y, &old)| LLVMBuildSelect(b, active, y, old, NO_NAME)).collect();
        let still = LLVMBuildAnd(b, active, yields[0], NO_NAME);
        self.no_vectorize(LLVMBuildCondBr(b, self.any(still), header, exit));
        let add = |phi: LLVMValueRef, first: LLVMValueRef, again: LLVMValueRef| {
            let mut incoming = [first, again];
            let mut blocks = [before, latch];
            LLVMAddIncoming(phi, incoming.as_mut_ptr(), blocks.as_mut_ptr(), 2);
        };
        add(active, mask, still);
        for ((&phi, &v), &n) in carried.iter().zip(init).zip(&next) {
            add(phi, frame.get(v), n);
        }
        LLVMPositionBuilderAtEnd(b, exit);
        for (&r, &n) in inst.results.iter().zip(&next) {
            frame.set(r, n);
        }
    }
}

/// Operations that cost a few vector instructions and have no effects.
fn is_cheap_and_pure(op: &Op) -> bool {
    match op {
        Op::Const(_) | Op::Unary(..) | Op::Fma(..) | Op::Cmp(..) | Op::Select(..) => true,
        Op::Convert(..) | Op::Bitcast(..) | Op::Detach(_) | Op::ReplaceGrad(..) => true,
        Op::Binary(op, ..) => !matches!(op, BinaryOp::Div | BinaryOp::Rem),
        _ => false,
    }
}

/// Which functions some function of the module calls.
fn called_functions(module: &Module) -> Vec<bool> {
    fn visit(region: &Region, called: &mut [bool]) {
        for inst in &region.insts {
            match &inst.op {
                Op::Call(f, _) => called[f.0 as usize] = true,
                Op::If { then, els, .. } => {
                    visit(then, called);
                    visit(els, called);
                }
                Op::Loop { body, .. } => visit(body, called),
                _ => {}
            }
        }
    }
    let mut called = vec![false; module.functions.len()];
    for f in &module.functions {
        visit(&f.body, &mut called);
    }
    called
}
