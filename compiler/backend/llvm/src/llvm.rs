//! The few pieces of LLVM's C API the code generator uses, behind owning handles: a context
//! with its module and builder, the host's target machine, and the pass and object-file steps.
//!
//! Everything LLVM returns is a raw `LLVMValueRef` / `LLVMTypeRef` owned by the context; the
//! context outlives every use because [`Llvm`] owns it and drops it last.

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::*;
use llvm_sys::target_machine::*;
use llvm_sys::transforms::pass_builder::*;
use std::ffi::{c_char, CStr, CString};
use std::sync::Once;

/// Converts a name to the C string LLVM wants (names here never contain NUL).
pub(crate) fn cstr(s: &str) -> CString {
    CString::new(s).expect("LLVM names have no NUL byte")
}

/// Takes an error message LLVM allocated.
unsafe fn take_message(message: *mut c_char) -> String {
    if message.is_null() {
        return String::new();
    }
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    unsafe { LLVMDisposeMessage(message) };
    text
}

/// The version of the LLVM library this process runs (`19.1.7`).
pub(crate) fn version() -> String {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: writes three integers.
    unsafe { LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    format!("{major}.{minor}.{patch}")
}

/// One LLVM context, the module being built in it, and a builder.
pub(crate) struct Llvm {
    pub ctx: LLVMContextRef,
    pub module: LLVMModuleRef,
    pub builder: LLVMBuilderRef,
}

impl Llvm {
    pub fn new(name: &str) -> Llvm {
        // SAFETY: plain constructors; the handles are disposed of in `drop`.
        unsafe {
            let ctx = LLVMContextCreate();
            let module = LLVMModuleCreateWithNameInContext(cstr(name).as_ptr(), ctx);
            let builder = LLVMCreateBuilderInContext(ctx);
            Llvm { ctx, module, builder }
        }
    }

    /// Checks the module; the message says what is wrong (a bug of the code generator).
    pub fn verify(&self) -> Result<(), String> {
        let mut message = std::ptr::null_mut();
        // SAFETY: the module is alive; the message is freed by `take_message`.
        let broken = unsafe {
            llvm_sys::analysis::LLVMVerifyModule(
                self.module,
                llvm_sys::analysis::LLVMVerifierFailureAction::LLVMReturnStatusAction,
                &mut message,
            )
        };
        let text = unsafe { take_message(message) };
        if broken != 0 {
            Err(text)
        } else {
            Ok(())
        }
    }

    /// The module as LLVM assembly (for `DRS_LLVM_DUMP`).
    pub fn print(&self) -> String {
        // SAFETY: the module is alive; LLVM allocates the string.
        unsafe { take_message(LLVMPrintModuleToString(self.module)) }
    }
}

impl Drop for Llvm {
    fn drop(&mut self) {
        // SAFETY: created in `new`, disposed of once, the context last.
        unsafe {
            LLVMDisposeBuilder(self.builder);
            LLVMDisposeModule(self.module);
            LLVMContextDispose(self.ctx);
        }
    }
}

/// A target machine for this host: its triple, a CPU and the features the code may use.
pub(crate) struct Machine {
    raw: LLVMTargetMachineRef,
    pub triple: String,
}

impl Machine {
    /// This host's target triple, for CPU `cpu` with exactly `features` (LLVM's `+name,-name`
    /// list), position-independent code, `O3` code generation.
    pub fn host(cpu: &str, features: &str) -> Result<Machine, String> {
        static INIT: Once = Once::new();
        // SAFETY: initialisation of LLVM's native target, once per process.
        INIT.call_once(|| unsafe {
            LLVM_InitializeNativeTarget();
            LLVM_InitializeNativeAsmPrinter();
        });
        // SAFETY: the triple string is LLVM's and freed by `take_message`; the target
        // reference is static in LLVM.
        unsafe {
            let triple = take_message(LLVMGetDefaultTargetTriple());
            let c_triple = cstr(&triple);
            let mut target = std::ptr::null_mut();
            let mut message = std::ptr::null_mut();
            if LLVMGetTargetFromTriple(c_triple.as_ptr(), &mut target, &mut message) != 0 {
                return Err(take_message(message));
            }
            let raw = LLVMCreateTargetMachine(
                target,
                c_triple.as_ptr(),
                cstr(cpu).as_ptr(),
                cstr(features).as_ptr(),
                LLVMCodeGenOptLevel::LLVMCodeGenLevelAggressive,
                LLVMRelocMode::LLVMRelocPIC,
                LLVMCodeModel::LLVMCodeModelSmall,
            );
            if raw.is_null() {
                return Err(format!("LLVM has no target machine for {triple}"));
            }
            Ok(Machine { raw, triple })
        }
    }

    /// The name of this host's CPU as LLVM knows it (for tuning).
    pub fn host_cpu_name() -> String {
        // SAFETY: LLVM allocates the string.
        unsafe { take_message(LLVMGetHostCPUName()) }
    }

    /// Gives `llvm`'s module this machine's triple and data layout.
    pub fn adopt(&self, llvm: &Llvm) {
        // SAFETY: both are alive; the layout is copied into the module.
        unsafe {
            LLVMSetTarget(llvm.module, cstr(&self.triple).as_ptr());
            let layout = LLVMCreateTargetDataLayout(self.raw);
            LLVMSetModuleDataLayout(llvm.module, layout);
            llvm_sys::target::LLVMDisposeTargetData(layout);
        }
    }

    /// Runs LLVM's standard `O3` pipeline on the module, without the SLP vectoriser (the code
    /// is vectorised already; the loops carry hints that keep the loop vectoriser off them).
    pub fn optimise(&self, llvm: &Llvm) -> Result<(), String> {
        // SAFETY: the options are created and disposed of here; the error is consumed.
        unsafe {
            let options = LLVMCreatePassBuilderOptions();
            LLVMPassBuilderOptionsSetSLPVectorization(options, 0);
            let error = LLVMRunPasses(llvm.module, c"default<O3>".as_ptr(), self.raw, options);
            LLVMDisposePassBuilderOptions(options);
            if !error.is_null() {
                let message = llvm_sys::error::LLVMGetErrorMessage(error);
                let text = CStr::from_ptr(message).to_string_lossy().into_owned();
                llvm_sys::error::LLVMDisposeErrorMessage(message);
                return Err(text);
            }
        }
        Ok(())
    }

    /// The module compiled to a relocatable object file (ELF on Linux).
    pub fn object(&self, llvm: &Llvm) -> Result<Vec<u8>, String> {
        // SAFETY: the buffer is LLVM's, copied out, then disposed of.
        unsafe {
            let mut buffer = std::ptr::null_mut();
            let mut message = std::ptr::null_mut();
            if LLVMTargetMachineEmitToMemoryBuffer(
                self.raw,
                llvm.module,
                LLVMCodeGenFileType::LLVMObjectFile,
                &mut message,
                &mut buffer,
            ) != 0
            {
                return Err(take_message(message));
            }
            let start = LLVMGetBufferStart(buffer) as *const u8;
            let bytes = std::slice::from_raw_parts(start, LLVMGetBufferSize(buffer)).to_vec();
            LLVMDisposeMemoryBuffer(buffer);
            Ok(bytes)
        }
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        // SAFETY: created in `host`, disposed of once.
        unsafe { LLVMDisposeTargetMachine(self.raw) }
    }
}

/// An attribute without a value (`nounwind`).
pub(crate) fn enum_attribute(ctx: LLVMContextRef, name: &str) -> LLVMAttributeRef {
    // SAFETY: attribute names are looked up by value; unknown names give kind 0, which LLVM
    // rejects when verifying (a bug here, caught by the tests).
    unsafe {
        let kind = LLVMGetEnumAttributeKindForName(name.as_ptr() as *const c_char, name.len());
        LLVMCreateEnumAttribute(ctx, kind, 0)
    }
}

/// A string attribute `key=value`.
pub(crate) fn string_attribute(ctx: LLVMContextRef, key: &str, value: &str) -> LLVMAttributeRef {
    // SAFETY: LLVM copies both strings.
    unsafe {
        LLVMCreateStringAttribute(
            ctx,
            key.as_ptr() as *const c_char,
            key.len() as u32,
            value.as_ptr() as *const c_char,
            value.len() as u32,
        )
    }
}
