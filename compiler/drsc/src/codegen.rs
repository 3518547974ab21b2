//! `--backend` and `--lanes`: which code generator compiles kernels, and how many lanes wide.

use drs_cranelift::{CodeGenerator, Lanes};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generator {
    /// Cranelift: built in, 128-bit vectors (1, 4 or 8 lanes).
    Cranelift,
    /// LLVM 19: as wide as the CPU's vectors (16 lanes with AVX-512); needs a drsc built with
    /// `--features llvm`.
    Llvm,
}

impl Generator {
    pub fn code_generator(self) -> Result<CodeGenerator, String> {
        match self {
            Generator::Cranelift => Ok(CodeGenerator::CRANELIFT),
            #[cfg(feature = "llvm")]
            Generator::Llvm => Ok(drs_llvm::GENERATOR),
            #[cfg(not(feature = "llvm"))]
            Generator::Llvm => Err("this drsc was built without LLVM: build it with `--features llvm` \
                 (which needs LLVM 19, Debian's llvm-19-dev)"
                .into()),
        }
    }

    /// The width of `count` lanes, if this generator compiles it.
    pub fn lanes(self, count: usize) -> Result<Lanes, String> {
        match (Lanes::from_count(count), self) {
            (Some(Lanes::X16), Generator::Cranelift) => Err("16 lanes need `--backend llvm`".into()),
            (Some(lanes), _) => Ok(lanes),
            (None, _) => Err(format!("--lanes {count} is not supported: use 1, 4, 8 or 16")),
        }
    }
}

/// The kernel options of `render`, `grad` and `optimize`.
#[derive(clap::Args)]
pub struct KernelArgs {
    /// The code generator of the kernel.
    #[arg(long, value_enum, default_value_t = Generator::Cranelift)]
    pub backend: Generator,
    /// SIMD lanes of the kernel: 1, 4, 8, or 16 (LLVM only).
    #[arg(long, default_value_t = 4)]
    pub lanes: usize,
}

impl KernelArgs {
    pub fn resolve(&self) -> Result<(Lanes, CodeGenerator), String> {
        Ok((self.backend.lanes(self.lanes)?, self.backend.code_generator()?))
    }
}
