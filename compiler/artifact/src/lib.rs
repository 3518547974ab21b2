//! The artifact `drsc build` writes: a compiled `.drs` program that the runtime loads without
//! the sources.
//!
//! Layout of a file (all integers little endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `DRSARTF\0` |
//! | 4 | format version ([`FORMAT_VERSION`]) |
//! | 8 | payload length |
//! | 32 | BLAKE3 hash of the payload |
//! | n | payload: [`Artifact`] encoded with postcard |
//!
//! A file with another magic, another version, a wrong length or a wrong hash is rejected with
//! an [`ArtifactError`] that says which; nothing is decoded from an unverified payload.
//!
//! Besides the IR, an artifact may carry native code ([`NativeCode`]) for the targets it was
//! built on, one entry per target and lane width; a loader uses the entry that runs on its
//! host and otherwise compiles the IR (`drs_cranelift::Jit::from_artifact`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"DRSARTF\0";
/// Bumped whenever the payload's encoding changes (IR or metadata types).
/// 2: the optimisation level and native code.
/// 3: IR functions' local arrays (`LocalLoad`/`LocalStore`) and loops' `max_iters`.
pub const FORMAT_VERSION: u32 = 3;
const HEADER_LEN: usize = 8 + 4 + 8 + 32;

/// A checked, lowered program and what the runtime needs to know about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// `drsc`'s version that wrote the artifact.
    pub compiler: String,
    /// The IR of every function of the program (before backend-specific lowering).
    pub module: drs_ir::Module,
    /// The optimisation level `module` was optimised at, and that a backend prepares it with
    /// (`none`, `basic`, `default` or `full`).
    pub opt: String,
    /// The source-level signature of each IR function, in `module.functions` order.
    pub functions: Vec<FunctionMeta>,
    pub plugins: Vec<PluginMeta>,
    /// Names of the source files, for messages.
    pub sources: Vec<String>,
    /// Native code of `module`, as `drs-cranelift` serialises it (opaque here), for the
    /// targets and lane widths the artifact was built for; may be empty.
    pub native: Vec<NativeCode>,
}

/// Compiled code of an artifact's module for one target and lane width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NativeCode {
    /// The target, for people: triple and CPU features (`x86_64-unknown-linux-gnu +sse3 ...`).
    /// The loader checks the target recorded inside `code`, not this.
    pub target: String,
    /// Lanes per call: 1, 4 or 8.
    pub lanes: u32,
    /// `drs_cranelift::NativeModule::to_bytes`.
    pub code: Vec<u8>,
}

/// A parameter or result as the source declares it, with its scalar components.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueMeta {
    pub name: String,
    /// The type as written in `.drs` (`vec3`, `Frame`, `(f32, Color)`).
    pub ty: String,
    /// How many IR scalars it flattens to.
    pub scalars: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionMeta {
    /// The IR function's name (`Frame::to_local`, `Diffuse::eval`).
    pub name: String,
    pub params: Vec<ValueMeta>,
    pub result: ValueMeta,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginParamMeta {
    pub name: String,
    pub ty: String,
    pub no_diff: bool,
    /// The default value's scalars as bits, if there is a default.
    pub default: Option<Vec<u32>>,
    /// IR buffers holding the parameter per instance, one per scalar component.
    pub buffers: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginMeta {
    /// `bsdf`, `emitter`, ...
    pub kind: String,
    pub name: String,
    pub params: Vec<PluginParamMeta>,
    /// Interface method name → IR function name.
    pub methods: Vec<(String, String)>,
}

#[derive(Debug)]
pub enum ArtifactError {
    Io(std::io::Error),
    NotAnArtifact,
    Version { found: u32, expected: u32 },
    Truncated { expected: u64, found: u64 },
    Corrupt,
    Decode(String),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Io(e) => write!(f, "{e}"),
            ArtifactError::NotAnArtifact => write!(f, "not a drs artifact (wrong magic bytes)"),
            ArtifactError::Version { found, expected } => write!(
                f,
                "artifact format version {found} is not supported (this drs reads version {expected}); rebuild it with `drsc build`"
            ),
            ArtifactError::Truncated { expected, found } => {
                write!(f, "artifact is truncated: the header announces {expected} payload bytes, the file has {found}")
            }
            ArtifactError::Corrupt => write!(f, "artifact is corrupt: its checksum does not match its contents"),
            ArtifactError::Decode(e) => write!(f, "artifact payload cannot be decoded: {e}"),
        }
    }
}

impl std::error::Error for ArtifactError {}

impl From<std::io::Error> for ArtifactError {
    fn from(e: std::io::Error) -> Self {
        ArtifactError::Io(e)
    }
}

impl Artifact {
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = postcard::to_allocvec(self).expect("artifacts contain only serialisable data");
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(blake3::hash(&payload).as_bytes());
        out.extend_from_slice(&payload);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Artifact, ArtifactError> {
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(ArtifactError::NotAnArtifact);
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(ArtifactError::Version { found: version, expected: FORMAT_VERSION });
        }
        if bytes.len() < HEADER_LEN {
            return Err(ArtifactError::Truncated { expected: 0, found: 0 });
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let payload = &bytes[HEADER_LEN..];
        if payload.len() as u64 != len {
            return Err(ArtifactError::Truncated { expected: len, found: payload.len() as u64 });
        }
        if blake3::hash(payload).as_bytes() != &bytes[20..52] {
            return Err(ArtifactError::Corrupt);
        }
        postcard::from_bytes(payload).map_err(|e| ArtifactError::Decode(e.to_string()))
    }

    /// Writes the artifact atomically: to a temporary file next to `path`, then renamed, so
    /// that a failed write never leaves a broken artifact behind.
    pub fn write(&self, path: &Path) -> Result<(), ArtifactError> {
        let tmp = path.with_extension("drsa.tmp");
        std::fs::write(&tmp, self.to_bytes())?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })?;
        Ok(())
    }

    pub fn read(path: &Path) -> Result<Artifact, ArtifactError> {
        Artifact::from_bytes(&std::fs::read(path)?)
    }

    /// A hash of the program's content (IR and metadata), the key under which compiled
    /// kernels are cached.
    pub fn content_hash(&self) -> [u8; 32] {
        *blake3::hash(&postcard::to_allocvec(self).expect("serialisable")).as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Artifact {
        let mut module = drs_ir::Module::default();
        let mut f = drs_ir::Function::new("id");
        let x = f.add_param("x", drs_ir::Ty::F32);
        f.result_types = vec![drs_ir::Ty::F32];
        f.body.yields = vec![x];
        module.add_function(f);
        Artifact {
            compiler: "test".into(),
            module,
            functions: vec![FunctionMeta {
                name: "id".into(),
                params: vec![ValueMeta { name: "x".into(), ty: "f32".into(), scalars: 1 }],
                result: ValueMeta { name: "result".into(), ty: "f32".into(), scalars: 1 },
            }],
            plugins: Vec::new(),
            sources: vec!["id.drs".into()],
            opt: "default".into(),
            native: vec![NativeCode { target: "test".into(), lanes: 4, code: vec![1, 2, 3] }],
        }
    }

    #[test]
    fn round_trips() {
        let a = sample();
        assert_eq!(Artifact::from_bytes(&a.to_bytes()).unwrap(), a);
    }

    #[test]
    fn rejects_damage() {
        let bytes = sample().to_bytes();
        assert!(matches!(Artifact::from_bytes(b"hello world, not an artifact"), Err(ArtifactError::NotAnArtifact)));
        let mut wrong_version = bytes.clone();
        wrong_version[8] = 99;
        assert!(matches!(Artifact::from_bytes(&wrong_version), Err(ArtifactError::Version { found: 99, .. })));
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(matches!(Artifact::from_bytes(&flipped), Err(ArtifactError::Corrupt)));
        assert!(matches!(Artifact::from_bytes(&bytes[..bytes.len() - 3]), Err(ArtifactError::Truncated { .. })));
        // Every truncation and every single-byte corruption is an error, never a panic.
        for cut in 0..bytes.len() {
            assert!(Artifact::from_bytes(&bytes[..cut]).is_err());
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(Artifact::from_bytes(&b).is_err(), "flipping byte {i} went unnoticed");
        }
    }
}
