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

    /// The width a kernel gets without `--lanes`: 4 with Cranelift, with LLVM as wide as this
    /// host's vectors.
    pub fn default_lanes(self) -> Result<Lanes, String> {
        match self {
            Generator::Cranelift => Ok(Lanes::X4),
            #[cfg(feature = "llvm")]
            Generator::Llvm => drs_llvm::native_lanes().map_err(|e| e.to_string()),
            #[cfg(not(feature = "llvm"))]
            // The error that this drsc has no LLVM.
            Generator::Llvm => self.code_generator().map(|_| Lanes::X4),
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
    /// SIMD lanes of the kernel: 1, 4, 8, or 16 (LLVM only). Default: 4 with Cranelift; with
    /// LLVM 16 where the processor has AVX-512, 8 where it has AVX2, 4 otherwise.
    #[arg(long)]
    pub lanes: Option<usize>,
}

impl KernelArgs {
    pub fn resolve(&self) -> Result<(Lanes, CodeGenerator), String> {
        let lanes = match self.lanes {
            Some(count) => self.backend.lanes(count)?,
            None => self.backend.default_lanes()?,
        };
        Ok((lanes, self.backend.code_generator()?))
    }
}
