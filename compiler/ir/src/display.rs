//! The textual form of the IR (`drsc ir`): one instruction per line, regions indented.
//!
//! ```text
//! fn lerp(%0 a: f32, %1 b: f32, %2 t: f32) -> (f32) {
//!     %3 = sub %1, %0
//!     %4 = fma %3, %2, %0
//!     return %4
//! }
//! ```
//!
//! A function with local arrays lists them after its result types
//! (`locals(L0: [f32; 8], L1: [u32; 2])`); they are accessed by `local_load L0[%4]` and
//! `local_store L0[%4], %5`. A loop with a source bound prints it: `loop (%1) |%2| max_iters 16 {`.

use crate::*;
use std::fmt::Write;

pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    for (i, b) in module.buffers.iter().enumerate() {
        let _ = writeln!(out, "buffer #{i} {}: [{}]", b.name, b.elem.name());
    }
    for (i, e) in module.externs.iter().enumerate() {
        let params: Vec<&str> = e.params.iter().map(|t| t.name()).collect();
        let results: Vec<&str> = e.results.iter().map(|t| t.name()).collect();
        let _ = writeln!(out, "extern #{i} {}({}) -> ({})", e.name, params.join(", "), results.join(", "));
    }
    if !module.buffers.is_empty() || !module.externs.is_empty() {
        out.push('\n');
    }
    for (i, f) in module.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print_function(module, f));
    }
    out
}

pub fn print_function(module: &Module, f: &Function) -> String {
    let mut p = Printer { module, f, out: String::new(), indent: 1 };
    let params: Vec<String> =
        f.params.iter().map(|prm| format!("%{} {}: {}", prm.value.0, prm.name, f.ty(prm.value).name())).collect();
    let results: Vec<&str> = f.result_types.iter().map(|t| t.name()).collect();
    let locals = if f.locals.is_empty() {
        String::new()
    } else {
        let arrays: Vec<String> =
            f.locals.iter().enumerate().map(|(i, a)| format!("L{i}: [{}; {}]", a.elem.name(), a.len)).collect();
        format!(" locals({})", arrays.join(", "))
    };
    let _ = writeln!(p.out, "fn {}({}) -> ({}){locals} {{", f.name, params.join(", "), results.join(", "));
    for inst in &f.body.insts {
        p.inst(inst);
    }
    p.line(&format!("return {}", list(&f.body.yields)));
    p.out.push_str("}\n");
    p.out
}

struct Printer<'a> {
    module: &'a Module,
    f: &'a Function,
    out: String,
    indent: usize,
}

fn list(values: &[Value]) -> String {
    values.iter().map(|v| format!("%{}", v.0)).collect::<Vec<_>>().join(", ")
}

impl Printer<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn region_body(&mut self, region: &Region) {
        self.indent += 1;
        for inst in &region.insts {
            self.inst(inst);
        }
        self.line(&format!("yield {}", list(&region.yields)));
        self.indent -= 1;
    }

    fn inst(&mut self, inst: &Inst) {
        let lhs = if inst.results.is_empty() {
            String::new()
        } else {
            let typed: Vec<String> =
                inst.results.iter().map(|v| format!("%{}: {}", v.0, self.f.ty(*v).name())).collect();
            format!("{} = ", typed.join(", "))
        };
        let v = |v: &Value| format!("%{}", v.0);
        let text = match &inst.op {
            Op::Const(c) => match c {
                Const::F32(bits) => {
                    let x = f32::from_bits(*bits);
                    if x.is_finite() {
                        format!("const {x:?}")
                    } else {
                        format!("const f32 0x{bits:08x}")
                    }
                }
                Const::I32(x) => format!("const {x}i"),
                Const::U32(x) => format!("const {x}u"),
                Const::Bool(b) => format!("const {b}"),
            },
            Op::Unary(op, a) => format!("{} {}", op.name(), v(a)),
            Op::Binary(op, a, b) => format!("{} {}, {}", op.name(), v(a), v(b)),
            Op::Fma(a, b, c) => format!("fma {}, {}, {}", v(a), v(b), v(c)),
            Op::Cmp(op, a, b) => format!("cmp.{} {}, {}", op.name(), v(a), v(b)),
            Op::Select(c, a, b) => format!("select {}, {}, {}", v(c), v(a), v(b)),
            Op::Convert(to, a) => format!("convert.{} {}", to.name(), v(a)),
            Op::Bitcast(to, a) => format!("bitcast.{} {}", to.name(), v(a)),
            Op::Math(op, args) => format!("{} {}", op.name(), list(args)),
            Op::Detach(a) => format!("detach {}", v(a)),
            Op::ReplaceGrad(a, b) => format!("replace_grad {}, {}", v(a), v(b)),
            Op::Call(func, args) => {
                let name = self.module.functions.get(func.0 as usize).map_or("?", |f| f.name.as_str());
                format!("call {name}({})", list(args))
            }
            Op::CallExtern(ext, args) => {
                let name = self.module.externs.get(*ext as usize).map_or("?", |e| e.name.as_str());
                format!("call_extern {name}({})", list(args))
            }
            Op::Load { buffer, index } => format!("load #{buffer}[{}]", v(index)),
            Op::Store { buffer, index, value } => format!("store #{buffer}[{}], {}", v(index), v(value)),
            Op::AtomicAdd { buffer, index, value } => format!("atomic_add #{buffer}[{}], {}", v(index), v(value)),
            Op::LocalLoad { array, index } => format!("local_load L{array}[{}]", v(index)),
            Op::LocalStore { array, index, value } => format!("local_store L{array}[{}], {}", v(index), v(value)),
            Op::If { cond, then, els } => {
                self.line(&format!("{lhs}if {} {{", v(cond)));
                self.region_body(then);
                self.line("} else {");
                self.region_body(els);
                self.line("}");
                return;
            }
            Op::Loop { init, body, max_iters } => {
                let bound = max_iters.map_or(String::new(), |n| format!(" max_iters {n}"));
                self.line(&format!("{lhs}loop ({}) |{}|{bound} {{", list(init), list(&body.params)));
                self.region_body(body);
                self.line("}");
                return;
            }
        };
        self.line(&format!("{lhs}{text}"));
    }
}
