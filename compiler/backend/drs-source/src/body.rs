//! One IR function as a `.drs` function: the signature, local arrays, then one statement per
//! instruction, regions as blocks.

use crate::literal::{is_negative, literal};
use crate::names::{sanitize, Namer};
use crate::{return_type, BufferAccessors};
use drs_ir::{BinaryOp, CmpOp, Const, FuncId, Function, Inst, Module, Op, Region, Ty, UnaryOp, Value};
use std::collections::{BTreeMap, HashMap};

/// The `.drs` names of the program's items.
pub(crate) struct ItemNames<'a> {
    pub(crate) functions: &'a BTreeMap<FuncId, String>,
    pub(crate) externs: &'a BTreeMap<u32, String>,
    pub(crate) buffers: &'a BTreeMap<u32, BufferAccessors>,
}

/// Appends function `id` to `out`. `namer` holds the item names, which parameters avoid.
pub(crate) fn write_function(out: &mut String, module: &Module, id: FuncId, items: &ItemNames, mut namer: Namer) {
    let f = module.function(id);
    let params: HashMap<Value, String> =
        f.params.iter().map(|p| (p.value, namer.fresh(&sanitize(&p.name, "p")))).collect();
    let mut consts = HashMap::new();
    crate::reach::for_each_inst(&f.body, &mut |inst| {
        if let Op::Const(c) = inst.op {
            consts.insert(inst.results[0], c);
        }
    });
    let mut w = Writer { f, items, params, consts, out, depth: 0 };
    w.line(&describe(&f.name));
    let signature: Vec<String> =
        f.params.iter().map(|p| format!("{}: {}", w.name(p.value), f.ty(p.value).name())).collect();
    let head = format!("fn {}", items.functions[&id]);
    let tail = format!("{} {{", return_type(&f.result_types));
    w.out.push_str(&crate::signature(&head, &signature, &tail));
    w.out.push('\n');
    w.depth = 1;
    for (i, array) in f.locals.iter().enumerate() {
        // The language has no empty arrays; every access to one is written as the IR's
        // out-of-range behaviour.
        if array.len > 0 {
            let (elem, zero, len) = (array.elem.name(), zero(array.elem), array.len);
            w.line(&format!("var local{i}: [{elem}; {len}] = [{zero}; {len}];"));
        }
    }
    w.region(&f.body);
    if let Some(tail) = w.tuple(&f.body.yields) {
        w.line(&tail);
    }
    w.depth = 0;
    w.line("}");
}

/// The comment above a function.
fn describe(ir_name: &str) -> String {
    // Escaped: a line break in a name would end the comment.
    let name = ir_name.escape_debug().to_string();
    for (mode, what) in [("fwd_diff(", "forward-mode derivative (JVP)"), ("bwd_diff(", "reverse-mode derivative (VJP)")]
    {
        if let Some(inner) = name.strip_prefix(mode).and_then(|rest| rest.strip_suffix(')')) {
            return format!("// `{name}`: the {what} of `{inner}`.");
        }
    }
    format!("// `{name}`")
}

/// The zero of a type as a literal, how local arrays start.
fn zero(ty: Ty) -> &'static str {
    match ty {
        Ty::F32 => "0.0",
        Ty::I32 => "0",
        Ty::U32 => "0u",
        Ty::Bool => "false",
    }
}

struct Writer<'a> {
    f: &'a Function,
    items: &'a ItemNames<'a>,
    /// Parameter names; every other value is `v{n}`.
    params: HashMap<Value, String>,
    /// Values defined by `Const`, written inline where they are used.
    consts: HashMap<Value, Const>,
    out: &'a mut String,
    depth: usize,
}

impl Writer<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// The variable that holds `v`.
    fn name(&self, v: Value) -> String {
        self.params.get(&v).cloned().unwrap_or_else(|| format!("v{}", v.0))
    }

    /// `v` as an argument: its variable, or its literal.
    fn operand(&self, v: Value) -> String {
        match self.consts.get(&v) {
            Some(&c) => literal(c, false),
            None => self.name(v),
        }
    }

    /// `v` as the argument of a conversion, where an unsuffixed integer literal would take
    /// the conversion's target type.
    fn converted(&self, v: Value) -> String {
        match self.consts.get(&v) {
            Some(&c) => literal(c, true),
            None => self.name(v),
        }
    }

    /// `v` as an operand of an operator: a negative literal in parentheses.
    fn term(&self, v: Value) -> String {
        match self.consts.get(&v) {
            Some(&c) if is_negative(c) => format!("({})", literal(c, false)),
            _ => self.operand(v),
        }
    }

    fn call(&self, callee: &str, args: &[Value]) -> String {
        let args: Vec<String> = args.iter().map(|&a| self.operand(a)).collect();
        format!("{callee}({})", args.join(", "))
    }

    /// The expression of several values: nothing, the value, or a tuple.
    fn tuple(&self, values: &[Value]) -> Option<String> {
        match values {
            [] => None,
            [v] => Some(self.operand(*v)),
            _ => Some(format!("({})", values.iter().map(|&v| self.operand(v)).collect::<Vec<_>>().join(", "))),
        }
    }

    /// The pattern that binds `results`: `v4` or `(v4, v5)`.
    fn pattern(&self, results: &[Value]) -> String {
        match results {
            [v] => self.name(*v),
            _ => format!("({})", results.iter().map(|&v| self.name(v)).collect::<Vec<_>>().join(", ")),
        }
    }

    /// `let results = expr;`, or `expr;` without results.
    fn bind(&mut self, results: &[Value], expr: &str) {
        if results.is_empty() {
            self.line(&format!("{expr};"));
        } else {
            self.line(&format!("let {} = {expr};", self.pattern(results)));
        }
    }

    fn region(&mut self, region: &Region) {
        for inst in &region.insts {
            self.inst(inst);
        }
    }

    /// Writes a region as the inside of a block whose value is the region's yields.
    fn block(&mut self, region: &Region) {
        self.depth += 1;
        self.region(region);
        if let Some(value) = self.tuple(&region.yields) {
            self.line(&value);
        }
        self.depth -= 1;
    }

    fn inst(&mut self, inst: &Inst) {
        let results = &inst.results;
        let expr = match &inst.op {
            Op::Const(_) => return,
            Op::Unary(op, a) => self.unary(*op, *a),
            Op::Binary(op, a, b) => self.binary(*op, *a, *b),
            Op::Fma(a, b, c) => self.call("fma", &[*a, *b, *c]),
            Op::Cmp(op, a, b) => format!("{} {} {}", self.term(*a), comparison(*op), self.term(*b)),
            Op::Select(c, a, b) => self.call("select", &[*c, *a, *b]),
            Op::Convert(to, a) if self.f.ty(*a) == *to => self.operand(*a),
            Op::Convert(to, a) => format!("{}({})", to.name(), self.converted(*a)),
            Op::Bitcast(to, a) => self.bitcast(*to, *a),
            Op::Math(op, args) => self.call(op.name(), args),
            Op::Call(g, args) => self.call(&self.items.functions[g], args),
            Op::CallExtern(e, args) => self.call(&self.items.externs[e], args),
            Op::Load { buffer, index } => self.call(self.accessor(*buffer, |a| &a.load), &[*index]),
            Op::Store { buffer, index, value } => self.call(self.accessor(*buffer, |a| &a.store), &[*index, *value]),
            Op::AtomicAdd { buffer, index, value } => {
                self.call(self.accessor(*buffer, |a| &a.atomic_add), &[*index, *value])
            }
            Op::LocalLoad { array, index } => self.local_load(*array, *index),
            Op::LocalStore { array, index, value } => return self.local_store(*array, *index, *value),
            // Only floats carry derivatives; on other types both are the identity.
            Op::Detach(a) if self.f.ty(*a) == Ty::F32 => self.call("detach", &[*a]),
            Op::ReplaceGrad(a, b) if self.f.ty(*a) == Ty::F32 => self.call("replace_grad", &[*a, *b]),
            Op::Detach(a) | Op::ReplaceGrad(a, _) => self.operand(*a),
            Op::If { cond, then, els } => return self.if_(results, *cond, then, els),
            Op::Loop { init, body, max_iters } => return self.loop_(results, init, body, *max_iters),
        };
        self.bind(results, &expr);
    }

    fn unary(&self, op: UnaryOp, a: Value) -> String {
        match op {
            UnaryOp::Neg => format!("-{}", self.term(a)),
            UnaryOp::Not => format!("!{}", self.term(a)),
            UnaryOp::Abs => self.call("abs", &[a]),
            UnaryOp::Sqrt => self.call("sqrt", &[a]),
            UnaryOp::Floor => self.call("floor", &[a]),
            UnaryOp::Ceil => self.call("ceil", &[a]),
            UnaryOp::Trunc => self.call("trunc", &[a]),
            UnaryOp::Round => self.call("round", &[a]),
        }
    }

    fn binary(&self, op: BinaryOp, a: Value, b: Value) -> String {
        let operator = match op {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Xor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Min => return self.call("min", &[a, b]),
            BinaryOp::Max => return self.call("max", &[a, b]),
            // No built-in: the stdlib's `copysign` differs on -0.0 and NaN, so spell out the
            // IR's (the magnitude bits of `a`, the sign bit of `b`).
            BinaryOp::CopySign => {
                return format!(
                    "from_bits((to_bits({}) & 0x7FFFFFFFu) | (to_bits({}) & 0x80000000u))",
                    self.operand(a),
                    self.operand(b)
                )
            }
        };
        format!("{} {operator} {}", self.term(a), self.term(b))
    }

    /// Bit casts between f32 and the integers go through `to_bits`/`from_bits` (u32);
    /// between i32 and u32, the conversions keep the bits.
    fn bitcast(&self, to: Ty, a: Value) -> String {
        let x = self.converted(a);
        match (self.f.ty(a), to) {
            (Ty::F32, Ty::U32) => format!("to_bits({x})"),
            (Ty::F32, Ty::I32) => format!("i32(to_bits({x}))"),
            (Ty::U32, Ty::F32) => format!("from_bits({x})"),
            (Ty::I32, Ty::F32) => format!("from_bits(u32({x}))"),
            (Ty::I32, Ty::U32) => format!("u32({x})"),
            (Ty::U32, Ty::I32) => format!("i32({x})"),
            // The verifier admits no bool casts, so this is the identity.
            _ => self.operand(a),
        }
    }

    fn accessor(&self, buffer: u32, which: impl Fn(&BufferAccessors) -> &Option<String>) -> &str {
        let accessors = &self.items.buffers[&buffer];
        which(accessors).as_deref().expect("reach declares an accessor for every buffer operation")
    }

    /// `local[i]`, except where the IR reads 0: an index out of range (the language would
    /// read the last element).
    fn local_load(&self, array: u32, index: Value) -> String {
        let local = self.f.locals[array as usize];
        let zero = zero(local.elem);
        match self.consts.get(&index) {
            _ if local.len == 0 => zero.to_string(),
            Some(&Const::U32(i)) if i >= local.len => zero.to_string(),
            Some(&Const::U32(i)) => format!("local{array}[{i}u]"),
            _ => {
                let i = self.name(index);
                format!("select({i} < {}u, local{array}[{i}], {zero})", local.len)
            }
        }
    }

    fn local_store(&mut self, array: u32, index: Value, value: Value) {
        let len = self.f.locals[array as usize].len;
        let (i, value) = (self.operand(index), self.operand(value));
        match self.consts.get(&index) {
            Some(&Const::U32(k)) if k >= len => {
                self.line(&format!("// dropped: local{array}[{i}] = {value}; (out of range)"));
            }
            _ if len == 0 => self.line(&format!("// dropped: local{array}[{i}] = {value}; (empty array)")),
            _ => self.line(&format!("local{array}[{i}] = {value};")),
        }
    }

    fn if_(&mut self, results: &[Value], cond: Value, then: &Region, els: &Region) {
        let c = self.operand(cond);
        let (then_code, else_code) = (has_code(then), has_code(els));
        if results.is_empty() {
            match (then_code, else_code) {
                (false, false) => {}
                (true, false) => {
                    self.line(&format!("if {c} {{"));
                    self.block(then);
                    self.line("}");
                }
                (false, true) => {
                    self.line(&format!("if !{} {{", self.term(cond)));
                    self.block(els);
                    self.line("}");
                }
                (true, true) => {
                    self.line(&format!("if {c} {{"));
                    self.block(then);
                    self.line("} else {");
                    self.block(els);
                    self.line("}");
                }
            }
            return;
        }
        if !then_code && !else_code {
            let (a, b) = (self.tuple(&then.yields), self.tuple(&els.yields));
            let expr = format!("if {c} {{ {} }} else {{ {} }}", a.unwrap_or_default(), b.unwrap_or_default());
            return self.bind(results, &expr);
        }
        self.line(&format!("let {} = if {c} {{", self.pattern(results)));
        self.block(then);
        self.line("} else {");
        self.block(els);
        self.line("};");
    }

    /// The IR loop is a do-while over carried values: each carried value is a `var` named
    /// after the loop's result, bound to the body's parameter at the top of an iteration
    /// and assigned the next value at its end, before the exit test.
    fn loop_(&mut self, results: &[Value], init: &[Value], body: &Region, max_iters: Option<u32>) {
        for (&r, &i) in results.iter().zip(init) {
            self.line(&format!("var {}: {} = {};", self.name(r), self.f.ty(r).name(), self.operand(i)));
        }
        let bound = max_iters.map(|n| format!("@max_iters({n}) ")).unwrap_or_default();
        self.line(&format!("{bound}loop {{"));
        self.depth += 1;
        for (&p, &r) in body.params.iter().zip(results) {
            self.line(&format!("let {} = {};", self.name(p), self.name(r)));
        }
        self.region(body);
        let Some((&go_on, next)) = body.yields.split_first() else {
            unreachable!("the verifier requires a loop body to yield its continue flag")
        };
        for (&r, &n) in results.iter().zip(next) {
            self.line(&format!("{} = {};", self.name(r), self.operand(n)));
        }
        match self.consts.get(&go_on) {
            Some(Const::Bool(false)) => self.line("break;"),
            // An IR loop that never stops by itself (it breaks only through a bound it
            // records, if at all); without any `break` the checker would take everything
            // after the loop for unreachable code.
            Some(Const::Bool(true)) => self.line("if false { break; }"),
            _ => self.line(&format!("if !{} {{ break; }}", self.name(go_on))),
        }
        self.depth -= 1;
        self.line("}");
    }
}

fn comparison(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// Whether writing `region` gives any statement (constants are written where used).
fn has_code(region: &Region) -> bool {
    region.insts.iter().any(|inst| !matches!(inst.op, Op::Const(_)))
}
