//! The `control` and `random_ir` cases (out-of-range, empty and local-array loads among them)
//! compiled with the kind of gathers this host's kernels do not use
//! ([`drs_llvm::Gathers::for_host`]), so that both kinds are tested whatever the host.

#![cfg(feature = "llvm")]

mod common {
    #![allow(dead_code)]

    include!("../../cranelift/tests/common/harness.rs");

    /// The widths with vector gathers.
    pub const MODES: &[Lanes] = &[Lanes::X4, Lanes::X8, Lanes::X16];

    /// LLVM with the other kind of gathers.
    pub fn compile_native(module: &Module, options: &Options) -> Result<NativeModule, Error> {
        let other = match drs_llvm::Gathers::for_host()? {
            drs_llvm::Gathers::Masked => drs_llvm::Gathers::EveryLane,
            drs_llvm::Gathers::EveryLane => drs_llvm::Gathers::Masked,
        };
        drs_llvm::compile_with(module, options, other)
    }
}

mod control {
    use super::common;

    include!("../../cranelift/tests/cases/control.rs");
}

mod random_ir {
    use super::common;

    include!("../../cranelift/tests/cases/random_ir.rs");
}
