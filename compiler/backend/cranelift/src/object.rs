//! Native code from an object file: [`NativeModule::from_elf_object`] turns an x86-64 ELF
//! relocatable object made by another code generator (LLVM) into a [`NativeModule`], doing what
//! a static linker would, so that the loader, the kernel cache and artifacts treat it like
//! Cranelift's code.
//!
//! The allocatable sections (code, read-only data, data, `.bss` as zeros) are laid out one after
//! another in the blob, each at its alignment. Unwind tables (`.eh_frame`), notes and debug
//! information are left out with their relocations: the code is called from Rust through the C
//! ABI and never unwinds. Loaded code is read-only, data included, so the code must not write
//! its own data. Defined symbols resolve to offsets in the blob, undefined ones by name to the
//! host functions of [`Symbol`] (`fmodf`, `floorf`, `memcpy`, ...). Relocations (RELA):
//! - `R_X86_64_64`: the absolute address (`Abs8`);
//! - `R_X86_64_PC32`, `R_X86_64_PLT32`: PC-relative (`X86PCRel4`). A host function may be
//!   anywhere in the address space, out of reach, so these go to a stub for it appended to the
//!   blob: `jmp [rip]` followed by the function's absolute address;
//! - `R_X86_64_GOTPCREL`, `R_X86_64_GOTPCRELX`, `R_X86_64_REX_GOTPCRELX`: PC-relative to an
//!   8-byte slot appended to the blob that holds the symbol's absolute address (one per symbol).
//!
//! The blob is mapped anywhere, so absolute 32-bit relocations (`R_X86_64_32`, `R_X86_64_32S`,
//! which the small code model emits without PIC for indexed globals and jump tables) cannot be
//! applied: code must be position-independent. Those, thread-local storage, static constructors,
//! calls to other host functions and malformed objects are an [`Error::InvalidNativeCode`].

use crate::native::{NativeFn, Reloc, RelocKind, RelocTarget, Symbol, Target, MAX_ALIGN};
use crate::{Error, Lanes, NativeModule};
use drs_ir::{BufferDecl, ExternDecl, Ty};
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, Rela, SectionHeader, SectionTable, Sym, SymbolTable};
use object::{LittleEndian, SymbolIndex};
use std::collections::HashMap;

type Header = FileHeader64<LittleEndian>;
const LE: LittleEndian = LittleEndian;
/// The most code and data an object may lay out.
const MAX_SIZE: u64 = 1 << 30;

/// One IR function as an object file names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectFunction {
    /// The IR function's name.
    pub name: String,
    pub params: Vec<Ty>,
    pub results: Vec<Ty>,
    /// The symbol of its entry wrapper (C ABI [`crate::EntryFn`]), if it has one.
    pub entry_symbol: Option<String>,
    /// The symbol of its internal version, if the object exports it.
    pub internal_symbol: Option<String>,
}

impl NativeModule {
    /// Native code from an x86-64 ELF relocatable object made by another code generator for
    /// this host (its target is [`Target::host`]), for `lanes`; `externs` and `buffers` as in
    /// the IR module. What the object may contain: see `object.rs`. Anything else, a malformed
    /// object or a symbol of `functions` it does not define is an [`Error::InvalidNativeCode`].
    pub fn from_elf_object(
        object: &[u8],
        lanes: Lanes,
        functions: Vec<ObjectFunction>,
        externs: Vec<ExternDecl>,
        buffers: Vec<BufferDecl>,
    ) -> Result<NativeModule, Error> {
        if !cfg!(target_arch = "x86_64") {
            return Err(invalid("x86-64 object files are imported on x86-64 hosts only".into()));
        }
        let header = Header::parse(object)
            .ok()
            .filter(|h| h.endian().is_ok() && h.e_machine(LE) == elf::EM_X86_64 && h.e_type(LE) == elf::ET_REL);
        let header = header.ok_or_else(|| invalid("not an x86-64 ELF relocatable object".into()))?;
        let sections = header.sections(LE, object).map_err(unreadable)?;
        let symbols = sections.symbols(LE, object, elf::SHT_SYMTAB).map_err(unreadable)?;
        let mut elf = Elf { data: object, sections, symbols, starts: vec![None; sections.len()] };
        let mut blob =
            Blob { code: Vec::new(), align: 1, relocs: Vec::new(), stubs: HashMap::new(), slots: HashMap::new() };
        elf.lay_out(&mut blob)?;
        elf.relocate(&mut blob)?;
        let offset = |symbol: Option<String>| symbol.map(|s| elf.function(&s)).transpose();
        let functions = functions
            .into_iter()
            .map(|f| {
                Ok(NativeFn {
                    entry: offset(f.entry_symbol)?,
                    internal: offset(f.internal_symbol)?,
                    name: f.name,
                    params: f.params,
                    results: f.results,
                })
            })
            .collect::<Result<_, Error>>()?;
        let native = NativeModule {
            target: Target::host()?.clone(),
            lanes,
            functions,
            externs,
            extern_reads: Vec::new(),
            buffers,
            align: blob.align,
            code: blob.code,
            relocs: blob.relocs,
        };
        native.validate()?;
        Ok(native)
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidNativeCode(message)
}

fn unreadable(e: object::read::Error) -> Error {
    invalid(format!("the object file cannot be read: {e}"))
}

/// The host function an object may call by this name.
fn host_function(name: &str) -> Option<Symbol> {
    let symbol = match name {
        "fmodf" => Symbol::Fmodf,
        "fmaf" => Symbol::FmaF32,
        "floorf" => Symbol::FloorF32,
        "ceilf" => Symbol::CeilF32,
        "truncf" => Symbol::TruncF32,
        // Ties to even in the default rounding mode, the only one drs code runs in.
        "nearbyintf" | "rintf" | "roundevenf" => Symbol::NearestF32,
        "roundf" => Symbol::RoundF32,
        "fma" => Symbol::FmaF64,
        "floor" => Symbol::FloorF64,
        "ceil" => Symbol::CeilF64,
        "trunc" => Symbol::TruncF64,
        "nearbyint" | "rint" | "roundeven" => Symbol::NearestF64,
        "memcpy" => Symbol::Memcpy,
        "memmove" => Symbol::Memmove,
        "memset" => Symbol::Memset,
        _ => return None,
    };
    Some(symbol)
}

/// An object file being laid out.
struct Elf<'a> {
    data: &'a [u8],
    sections: SectionTable<'a, Header>,
    symbols: SymbolTable<'a, Header>,
    /// Where each section starts in the blob; None for those left out.
    starts: Vec<Option<u32>>,
}

/// The code being made: the object's sections, then stubs and slots.
struct Blob {
    code: Vec<u8>,
    align: u32,
    relocs: Vec<Reloc>,
    /// The stub of each host function called PC-relative.
    stubs: HashMap<Symbol, u32>,
    /// The slot holding the address of each symbol referred to through the GOT.
    slots: HashMap<RelocTarget, u32>,
}

/// How a relocation reaches its symbol.
enum Via {
    Direct,
    /// Through a stub if it is a host function.
    Stub,
    Slot,
}

impl Elf<'_> {
    fn lay_out(&mut self, blob: &mut Blob) -> Result<(), Error> {
        for (index, section) in self.sections.enumerate() {
            let (flags, kind) = (section.sh_flags(LE), section.sh_type(LE));
            let name = self.sections.section_name(LE, section).map_err(unreadable)?;
            let unwind =
                kind == elf::SHT_X86_64_UNWIND || name == b".eh_frame" || name.starts_with(b".gcc_except_table");
            if !flags.contains(elf::SHF_ALLOC) || unwind || kind == elf::SHT_NOTE {
                continue;
            }
            let name = String::from_utf8_lossy(name);
            if flags.contains(elf::SHF_TLS) {
                return Err(invalid(format!("section `{name}` is thread-local, which drs does not support")));
            }
            if [elf::SHT_INIT_ARRAY, elf::SHT_FINI_ARRAY, elf::SHT_PREINIT_ARRAY].contains(&kind) {
                return Err(invalid(format!("section `{name}` holds static constructors, which drs does not run")));
            }
            let align = section.sh_addralign(LE).max(1);
            if !align.is_power_of_two() || align > u64::from(MAX_ALIGN) {
                return Err(invalid(format!(
                    "section `{name}`: alignment {align} is not a power of two up to {MAX_ALIGN}"
                )));
            }
            let start = (blob.code.len() as u64).next_multiple_of(align);
            let size = section.sh_size(LE);
            if start.saturating_add(size) > MAX_SIZE {
                return Err(invalid(format!("more than {MAX_SIZE} bytes of code and data")));
            }
            blob.code.resize(start as usize, 0);
            if kind == elf::SHT_NOBITS {
                blob.code.resize((start + size) as usize, 0);
            } else {
                blob.code.extend_from_slice(section.data(LE, self.data).map_err(unreadable)?);
            }
            self.starts[index.0] = Some(start as u32);
            blob.align = blob.align.max(align as u32);
        }
        Ok(())
    }

    /// Turns the relocations of the sections laid out into the loader's.
    fn relocate(&self, blob: &mut Blob) -> Result<(), Error> {
        for section in self.sections.iter() {
            if ![elf::SHT_RELA, elf::SHT_REL, elf::SHT_CREL].contains(&section.sh_type(LE)) {
                continue;
            }
            let patched = section.info_link(LE);
            let Some(start) = self.starts.get(patched.0).copied().flatten() else { continue };
            let Some((relas, symtab)) = section.rela(LE, self.data).map_err(unreadable)? else {
                return Err(invalid("relocations without addends (REL, CREL) are not supported".into()));
            };
            if symtab != self.symbols.section() {
                return Err(invalid("relocations refer to another symbol table than `.symtab`".into()));
            }
            let patched = self.sections.section(patched).map_err(unreadable)?;
            let size = patched.sh_size(LE);
            for rela in relas {
                let (offset, r_type) = (rela.r_offset(LE), rela.r_type(LE, false));
                let (kind, via) = match r_type {
                    elf::R_X86_64_NONE => continue,
                    elf::R_X86_64_64 => (RelocKind::Abs8, Via::Direct),
                    elf::R_X86_64_PC32 | elf::R_X86_64_PLT32 => (RelocKind::X86PCRel4, Via::Stub),
                    elf::R_X86_64_GOTPCREL | elf::R_X86_64_GOTPCRELX | elf::R_X86_64_REX_GOTPCRELX => {
                        (RelocKind::X86PCRel4, Via::Slot)
                    }
                    _ => {
                        let name = elf::NAMES_R_X86_64.name(r_type).map_or(format!("type {r_type}"), String::from);
                        let pic = [elf::R_X86_64_32, elf::R_X86_64_32S].contains(&r_type);
                        return Err(invalid(format!(
                            "relocation {name} at {offset:#x} in section `{}` is not supported{}",
                            String::from_utf8_lossy(self.sections.section_name(LE, patched).unwrap_or(b"?")),
                            if pic { " (the code must be position-independent)" } else { "" },
                        )));
                    }
                };
                if offset.checked_add(kind.width() as u64).is_none_or(|end| end > size) {
                    return Err(invalid(format!("relocation at {offset:#x} is outside its section")));
                }
                let target = match (via, self.resolve(SymbolIndex(rela.r_sym(LE, false) as usize))?) {
                    (Via::Stub, RelocTarget::Symbol(s)) => RelocTarget::Code(blob.stub(s)),
                    (Via::Slot, target) => RelocTarget::Code(blob.slot(target)),
                    (_, target) => target,
                };
                blob.relocs.push(Reloc { offset: start + offset as u32, kind, target, addend: rela.r_addend(LE) });
            }
        }
        Ok(())
    }

    /// Where a symbol is: in the blob or a host function.
    fn resolve(&self, index: SymbolIndex) -> Result<RelocTarget, Error> {
        let symbol = self.symbols.symbol(index).map_err(unreadable)?;
        if !symbol.is_undefined(LE) {
            return self.defined(index, symbol).map(RelocTarget::Code);
        }
        let name = self.symbols.symbol_name(LE, symbol).map_err(unreadable)?;
        let name = String::from_utf8_lossy(name);
        host_function(&name)
            .map(RelocTarget::Symbol)
            .ok_or_else(|| invalid(format!("the object calls `{name}`, which drs does not provide")))
    }

    /// The offset in the blob of a symbol the object defines.
    fn defined(&self, index: SymbolIndex, symbol: &elf::Sym64<LittleEndian>) -> Result<u32, Error> {
        let name = || String::from_utf8_lossy(self.symbols.symbol_name(LE, symbol).unwrap_or(b"?")).into_owned();
        let Some(section) = self.symbols.symbol_section(LE, symbol, index).map_err(unreadable)? else {
            return Err(invalid(format!("symbol `{}` is absolute or common, which drs does not support", name())));
        };
        let Some(start) = self.starts.get(section.0).copied().flatten() else {
            return Err(invalid(format!("symbol `{}` is in a section drs leaves out", name())));
        };
        let value = symbol.st_value(LE);
        if value > self.sections.section(section).map_err(unreadable)?.sh_size(LE) {
            return Err(invalid(format!("symbol `{}` is outside its section", name())));
        }
        Ok(start + value as u32)
    }

    /// The offset in the blob of the function the object defines as `name`.
    fn function(&self, name: &str) -> Result<u32, Error> {
        let found = self.symbols.enumerate().find(|(_, symbol)| {
            !symbol.is_undefined(LE) && self.symbols.symbol_name(LE, symbol).is_ok_and(|n| n == name.as_bytes())
        });
        let (index, symbol) = found.ok_or_else(|| invalid(format!("the object defines no symbol `{name}`")))?;
        self.defined(index, symbol)
    }
}

impl Blob {
    /// Appends `bytes` at `align` and returns where.
    fn append(&mut self, align: u32, bytes: &[u8]) -> u32 {
        self.code.resize(self.code.len().next_multiple_of(align as usize), 0);
        self.align = self.align.max(align);
        let at = self.code.len() as u32;
        self.code.extend_from_slice(bytes);
        at
    }

    /// The stub that jumps to a host function: `jmp [rip + 0]`, then the address.
    fn stub(&mut self, symbol: Symbol) -> u32 {
        if let Some(&at) = self.stubs.get(&symbol) {
            return at;
        }
        let at = self.append(16, &[0xff, 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        self.relocs.push(Reloc {
            offset: at + 6,
            kind: RelocKind::Abs8,
            target: RelocTarget::Symbol(symbol),
            addend: 0,
        });
        self.stubs.insert(symbol, at);
        at
    }

    /// The slot that holds the address of `target` (its GOT entry).
    fn slot(&mut self, target: RelocTarget) -> u32 {
        if let Some(&at) = self.slots.get(&target) {
            return at;
        }
        let at = self.append(8, &[0; 8]);
        self.relocs.push(Reloc { offset: at, kind: RelocKind::Abs8, target, addend: 0 });
        self.slots.insert(target, at);
        at
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::Jit;
    use object::elf::RelocationType;
    use object::write::{self, Relocation, SectionId, SymbolId, SymbolSection};
    use object::SymbolScope;
    use object::{Architecture, BinaryFormat, Endianness, RelocationFlags, SectionKind, SymbolFlags, SymbolKind};

    /// An x86-64 object being written, with `.text`, `.rodata` (aligned to 32) and `.data`.
    struct Obj {
        obj: write::Object<'static>,
        text: SectionId,
        rodata: SectionId,
        data: SectionId,
    }

    impl Obj {
        fn new() -> Obj {
            let mut obj = write::Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
            let text = obj.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
            let rodata = obj.add_section(Vec::new(), b".rodata".to_vec(), SectionKind::ReadOnlyData);
            obj.append_section_data(rodata, &[], 32);
            let data = obj.add_section(Vec::new(), b".data".to_vec(), SectionKind::Data);
            Obj { obj, text, rodata, data }
        }

        /// Defines `name` at `offset` in `section`.
        fn define(&mut self, name: &str, section: SectionId, offset: u64, scope: SymbolScope) -> SymbolId {
            let kind = if section == self.text { SymbolKind::Text } else { SymbolKind::Data };
            self.obj.add_symbol(write::Symbol {
                name: name.as_bytes().to_vec(),
                value: offset,
                size: 0,
                kind,
                scope,
                weak: false,
                section: SymbolSection::Section(section),
                flags: SymbolFlags::None,
            })
        }

        /// Appends a function and returns its offset in `.text`.
        fn function(&mut self, name: &str, code: &[u8]) -> u64 {
            let at = self.obj.append_section_data(self.text, code, 16);
            self.define(name, self.text, at, SymbolScope::Linkage);
            at
        }

        fn undefined(&mut self, name: &str) -> SymbolId {
            self.obj.symbol_id(name.as_bytes()).unwrap_or_else(|| {
                self.obj.add_symbol(write::Symbol {
                    name: name.as_bytes().to_vec(),
                    value: 0,
                    size: 0,
                    kind: SymbolKind::Unknown,
                    scope: SymbolScope::Unknown,
                    weak: false,
                    section: SymbolSection::Undefined,
                    flags: SymbolFlags::None,
                })
            })
        }

        fn reloc(&mut self, section: SectionId, offset: u64, symbol: SymbolId, addend: i64, r_type: RelocationType) {
            let flags = RelocationFlags::Elf { r_type };
            self.obj.add_relocation(section, Relocation { offset, symbol, addend, flags }).unwrap();
        }

        /// A function that tail-calls `callee` (`jmp rel32`, PLT32).
        fn tail_call(&mut self, name: &str, callee: &str) -> u64 {
            let at = self.function(name, &[0xe9, 0, 0, 0, 0]);
            let callee = self.undefined(callee);
            self.reloc(self.text, at + 1, callee, -4, elf::R_X86_64_PLT32);
            at
        }

        fn bytes(&self) -> Vec<u8> {
            self.obj.write().unwrap()
        }
    }

    fn entries(names: &[&str]) -> Vec<ObjectFunction> {
        names
            .iter()
            .map(|name| ObjectFunction {
                name: name.to_string(),
                params: vec![Ty::F32],
                results: vec![Ty::F32],
                entry_symbol: Some(name.to_string()),
                internal_symbol: None,
            })
            .collect()
    }

    fn import(object: &[u8], names: &[&str]) -> Result<NativeModule, Error> {
        NativeModule::from_elf_object(object, Lanes::X1, entries(names), Vec::new(), Vec::new())
    }

    /// The code at the entry of `name`, as a function of type `F`.
    ///
    /// # Safety
    /// `F` is a function pointer type with the code's signature.
    unsafe fn entry<F: Copy>(jit: &Jit, name: &str) -> F {
        let f = jit.functions.iter().find(|f| f.name == name).and_then(|f| f.entry).unwrap();
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
        unsafe { std::mem::transmute_copy(&f) }
    }

    const MOVSS_XMM0_RIP: [u8; 4] = [0xf3, 0x0f, 0x10, 0x05]; // movss xmm0, [rip + disp32]
    const MOV_RAX_RIP: [u8; 3] = [0x48, 0x8b, 0x05]; // mov rax, [rip + disp32]

    /// Every relocation kind, section symbols, `.bss`, and host functions through stubs and slots.
    fn object() -> (Vec<u8>, u64) {
        let mut o = Obj::new();
        o.tail_call("fmod", "fmodf");
        let fmod2 = o.tail_call("fmod2", "fmodf");
        o.tail_call("fill", "memset");
        o.tail_call("round", "roundf");
        o.tail_call("nearest", "nearbyintf");

        // `constant`: an f32 in `.rodata` through PC32 against the section symbol.
        let rodata = o.obj.section_symbol(o.rodata);
        let pointer = o.obj.append_section_data(o.rodata, &[0; 8], 8);
        let value = o.obj.append_section_data(o.rodata, &1.25f32.to_le_bytes(), 4);
        let constant = o.function("constant", &[MOVSS_XMM0_RIP.as_slice(), &[0; 4], &[0xc3]].concat());
        o.reloc(o.text, constant + 4, rodata, value as i64 - 4, elf::R_X86_64_PC32);

        // `indirect`: jumps to `constant` through a pointer in `.rodata` (Abs8 against `.text`).
        let text = o.obj.section_symbol(o.text);
        o.reloc(o.rodata, pointer, text, constant as i64, elf::R_X86_64_64);
        let indirect = o.function("indirect", &[MOV_RAX_RIP.as_slice(), &[0; 4], &[0xff, 0xe0]].concat());
        o.reloc(o.text, indirect + 3, rodata, pointer as i64 - 4, elf::R_X86_64_PC32);

        // `global`: loads the address of `answer` in `.data` from its GOT slot.
        let answer_at = o.obj.append_section_data(o.data, &42.5f32.to_le_bytes(), 4);
        let answer = o.define("answer", o.data, answer_at, SymbolScope::Linkage);
        let code = [MOV_RAX_RIP.as_slice(), &[0; 4], &[0xf3, 0x0f, 0x10, 0x00, 0xc3]].concat();
        let global = o.function("global", &code);
        o.reloc(o.text, global + 3, answer, -4, elf::R_X86_64_REX_GOTPCRELX);

        // Host functions through their GOT slots: `jmp [rip + floorf@GOTPCRELX]`, and
        // `mov rax, [rip + ceilf@GOTPCREL]; jmp rax`.
        let floor = o.function("floor", &[0xff, 0x25, 0, 0, 0, 0]);
        let floorf = o.undefined("floorf");
        o.reloc(o.text, floor + 2, floorf, -4, elf::R_X86_64_GOTPCRELX);
        let ceil = o.function("ceil", &[MOV_RAX_RIP.as_slice(), &[0; 4], &[0xff, 0xe0]].concat());
        let ceilf = o.undefined("ceilf");
        o.reloc(o.text, ceil + 3, ceilf, -4, elf::R_X86_64_GOTPCREL);

        // `zero`: reads a local variable in `.bss`.
        let bss = o.obj.add_section(Vec::new(), b".bss".to_vec(), SectionKind::UninitializedData);
        let scratch_at = o.obj.append_section_bss(bss, 16, 16);
        let scratch = o.define("scratch", bss, scratch_at + 8, SymbolScope::Compilation);
        let zero = o.function("zero", &[MOVSS_XMM0_RIP.as_slice(), &[0; 4], &[0xc3]].concat());
        o.reloc(o.text, zero + 4, scratch, -4, elf::R_X86_64_PC32);

        // Unwind tables are left out, with relocations the importer could not resolve.
        let eh_frame = o.obj.add_section(Vec::new(), b".eh_frame".to_vec(), SectionKind::ReadOnlyData);
        o.obj.append_section_data(eh_frame, &[0; 16], 8);
        let personality = o.undefined("__gxx_personality_v0");
        o.reloc(eh_frame, 8, personality, 0, elf::R_X86_64_PC32);
        (o.bytes(), fmod2)
    }

    const NAMES: [&str; 11] =
        ["fmod", "fmod2", "fill", "round", "nearest", "constant", "indirect", "global", "floor", "ceil", "zero"];

    #[test]
    fn every_relocation_kind_is_linked_and_runs() {
        let (object, fmod2) = object();
        let mut functions = entries(&NAMES);
        functions[0].internal_symbol = Some("fmod2".into());
        let native = NativeModule::from_elf_object(&object, Lanes::X4, functions, Vec::new(), Vec::new()).unwrap();
        assert_eq!(native.target(), Target::host().unwrap());
        assert_eq!(native.lanes(), Lanes::X4);
        assert_eq!(native.functions[0].internal, Some(fmod2 as u32), ".text is laid out first");
        assert_eq!(native.align, 32);
        // One stub for both calls of `fmodf`, one slot for each symbol loaded from the GOT.
        let to = |s| native.relocs.iter().filter(|r| r.target == RelocTarget::Symbol(s)).count();
        assert_eq!([to(Symbol::Fmodf), to(Symbol::FloorF32), to(Symbol::Memset)], [1, 1, 1]);
        assert_eq!(native.relocs.iter().filter(|r| r.kind == RelocKind::Abs8).count(), 8);
        assert_eq!(NativeModule::from_bytes(&native.to_bytes()).unwrap(), native);

        let jit = native.load().unwrap();
        // SAFETY: the signatures of the machine code above.
        unsafe {
            let fmod: extern "C" fn(f32, f32) -> f32 = entry(&jit, "fmod");
            let fmod2: extern "C" fn(f32, f32) -> f32 = entry(&jit, "fmod2");
            for (x, y) in [(7.5f32, 2.0f32), (-5.5, 2.0), (1.0, 0.0)] {
                // Computed at run time: folded by the compiler (release builds), `1 % 0` is a NaN
                // of the other sign than the C library's.
                let expected = (std::hint::black_box(x) % std::hint::black_box(y)).to_bits();
                assert_eq!(fmod(x, y).to_bits(), expected, "fmod({x}, {y})");
                assert_eq!(fmod2(x, y).to_bits(), expected);
            }
            let fill: extern "C" fn(*mut u8, i32, usize) -> *mut u8 = entry(&jit, "fill");
            let mut bytes = [0u8; 8];
            assert_eq!(fill(bytes.as_mut_ptr().add(2), 7, 5), bytes.as_mut_ptr().add(2));
            assert_eq!(bytes, [0, 0, 7, 7, 7, 7, 7, 0]);
            for (name, want) in [("round", [3.0f32, -3.0, 1.0]), ("nearest", [2.0, -2.0, 0.0])] {
                let f: extern "C" fn(f32) -> f32 = entry(&jit, name);
                assert_eq!([f(2.5), f(-2.5), f(0.5)], want, "{name}");
            }
            for (name, want) in [("constant", 1.25f32), ("indirect", 1.25), ("global", 42.5), ("zero", 0.0)] {
                let f: extern "C" fn() -> f32 = entry(&jit, name);
                assert_eq!(f(), want, "{name}");
            }
            let floor: extern "C" fn(f32) -> f32 = entry(&jit, "floor");
            let ceil: extern "C" fn(f32) -> f32 = entry(&jit, "ceil");
            assert_eq!([floor(-1.5), ceil(-1.5), floor(2.0)], [-2.0, -1.0, 2.0]);
        }
    }

    fn error(result: Result<NativeModule, Error>) -> String {
        match result {
            Err(Error::InvalidNativeCode(message)) => message,
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("the object was accepted"),
        }
    }

    #[test]
    fn calls_of_functions_drs_does_not_provide_are_rejected() {
        let mut o = Obj::new();
        o.tail_call("f", "sinf");
        assert_eq!(error(import(&o.bytes(), &["f"])), "the object calls `sinf`, which drs does not provide");
    }

    #[test]
    fn unsupported_relocations_are_rejected() {
        // movss xmm0, [rax*4 + table]: absolute, as without PIC.
        let mut o = Obj::new();
        let at = o.function("f", &[0xf3, 0x0f, 0x10, 0x04, 0x85, 0, 0, 0, 0, 0xc3]);
        let rodata = o.obj.section_symbol(o.rodata);
        o.reloc(o.text, at + 5, rodata, 0, elf::R_X86_64_32S);
        let e = error(import(&o.bytes(), &["f"]));
        assert!(e.contains("R_X86_64_32S at 0x5 in section `.text`") && e.contains("position-independent"), "{e}");

        let mut o = Obj::new();
        let at = o.obj.append_section_data(o.data, &[0; 8], 8);
        o.function("f", &[0xc3]);
        let text = o.obj.section_symbol(o.text);
        o.reloc(o.data, at, text, 0, elf::R_X86_64_PC64);
        let e = error(import(&o.bytes(), &["f"]));
        assert!(e.contains("R_X86_64_PC64") && !e.contains("position-independent"), "{e}");
    }

    #[test]
    fn functions_the_object_does_not_define_are_rejected() {
        let mut o = Obj::new();
        o.function("f", &[0xc3]);
        o.undefined("g");
        assert!(import(&o.bytes(), &["f"]).is_ok());
        for missing in ["nope", "g"] {
            assert_eq!(error(import(&o.bytes(), &["f", missing])), format!("the object defines no symbol `{missing}`"));
        }
    }

    #[test]
    fn anything_but_an_intact_x86_64_relocatable_object_is_an_error() {
        for bytes in [&b""[..], b"garbage", b"\x7fELF\x02\x01\x01"] {
            assert_eq!(error(import(bytes, &[])), "not an x86-64 ELF relocatable object");
        }
        let arm = write::Object::new(BinaryFormat::Elf, Architecture::Aarch64, Endianness::Little);
        assert_eq!(error(import(&arm.write().unwrap(), &[])), "not an x86-64 ELF relocatable object");

        // Truncated: every prefix is rejected; damaged: never a panic.
        let (object, _) = object();
        for len in 0..object.len() {
            assert!(import(&object[..len], &NAMES).is_err(), "{len} bytes");
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let mut damaged = object.clone();
            for _ in 0..4 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                damaged[(state >> 8) as usize % object.len()] ^= state as u8 | 1;
            }
            let _ = import(&damaged, &NAMES);
        }
    }
}
