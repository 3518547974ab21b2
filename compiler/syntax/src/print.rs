//! The pretty printer: turns a syntax tree back into canonical `.drs` source.
//!
//! The output parses back to the same tree (ignoring spans and node ids). Parentheses are not
//! kept in the tree, so the printer inserts them exactly where the grammar needs them:
//!
//! * binary operators by [`BinOp::precedence`], left-associative; comparisons do not chain, so
//!   a comparison operand of a comparison is parenthesised (`(a < b) == c`);
//! * the operand of a unary operator when it is a binary expression (`-(a + b)`);
//! * the receiver of a postfix operation (`.f`, `.0`, `.m()`, `[i]`) when it is a unary or
//!   binary expression or a number literal, and a tuple index of a tuple index (`(t.0).1`,
//!   since `t.0.1` lexes `0.1` as a float);
//! * a callee that is not a primary expression (`(a.f)(x)`, `(f(a))(b)`);
//! * struct literals inside the condition of `if`/`while` and the bounds of `for`, where `{`
//!   starts the body;
//! * a block-like expression (`if`, loops, blocks) in the leftmost position of an expression
//!   statement, assignment or block tail that is not itself that block-like expression
//!   (`(if c { a } else { b }).x;`), which would otherwise end the statement.
//!
//! A block-like statement written without `;` is printed without it, except as the last
//! statement of a block without a value, where the parser would take it for the value (only
//! generated trees have that shape).
//!
//! Layout follows Rust: four spaces of indentation, one statement per line, a blank line between
//! items (runs of one-line imports, consts, extern types and extern fns stay together). A short
//! `if .. else ..` or `{ value }` used as a value stays on one line; a struct literal longer than
//! the line puts one field per line. Comments are not in the tree and are not printed; integer
//! literals are printed in decimal, except `u32` values above `0xFFFF` (likely bit patterns),
//! printed in hex; float literals as written.
//!
//! [`Printer`] is public so that later stages can print generated code (derivative functions,
//! single statements) with the same rules.

use crate::ast::*;

/// Prints a whole file: items separated by blank lines, ending with a newline (an empty file
/// prints as nothing).
pub fn print(unit: &SourceUnit) -> String {
    let mut p = Printer::new();
    p.unit(unit);
    p.finish()
}

/// Prints one item (with its attributes), without a trailing newline.
pub fn print_item(item: &Item) -> String {
    let mut p = Printer::new();
    p.item(item);
    p.finish()
}

/// Prints a function declaration (without attributes), without a trailing newline.
pub fn print_fn(decl: &FnDecl) -> String {
    let mut p = Printer::new();
    p.fn_decl(decl);
    p.finish()
}

/// Prints a block `{ ... }`, indented from column 0.
pub fn print_block(block: &Block) -> String {
    let mut p = Printer::new();
    p.block(block);
    p.finish()
}

/// Prints one statement as it would appear inside a block (with its `;`).
pub fn print_stmt(stmt: &Stmt) -> String {
    let mut p = Printer::new();
    p.stmt(stmt);
    p.finish()
}

/// Prints an expression as it would appear in a free position (e.g. a `let` initializer).
pub fn print_expr(e: &Expr) -> String {
    let mut p = Printer::new();
    p.expr(e);
    p.finish()
}

pub fn print_type(t: &TypeExpr) -> String {
    let mut p = Printer::new();
    p.ty(t);
    p.finish()
}

pub fn print_pattern(pat: &Pattern) -> String {
    let mut p = Printer::new();
    p.pattern(pat);
    p.finish()
}

/// Where an expression is printed; decides the parentheses its own syntax needs there.
#[derive(Clone, Copy, Default, Debug)]
struct Ctx {
    /// Inside an `if`/`while` condition or `for` bound: a struct literal needs parentheses.
    no_struct: bool,
    /// Leftmost position of an expression statement, assignment or block tail: a block-like
    /// expression needs parentheses.
    stmt_start: bool,
    /// The expression is a whole statement (or block tail) itself: a block-like expression is
    /// printed bare and an `if` is never folded onto one line.
    stmt_level: bool,
}

impl Ctx {
    fn no_struct() -> Ctx {
        Ctx { no_struct: true, ..Ctx::default() }
    }

    fn stmt_start() -> Ctx {
        Ctx { stmt_start: true, ..Ctx::default() }
    }

    /// The context of an operand that is not leftmost.
    fn inner(self) -> Ctx {
        Ctx { no_struct: self.no_struct, stmt_start: false, stmt_level: false }
    }

    /// The context of the leftmost operand.
    fn leftmost(self) -> Ctx {
        Ctx { stmt_level: false, ..self }
    }
}

/// Struct literals longer than this put one field per line.
const MAX_WIDTH: usize = 100;

/// An `if .. else ..` or a block expression `{ a }` is folded onto one line when it has at most
/// this many nodes ...
const INLINE_IF_MAX_NODES: usize = 16;
/// ... and its one-line form is at most this long.
const INLINE_IF_MAX_WIDTH: usize = 60;

/// Accumulates source text. Each method prints one construct at the current position; nested
/// lines are indented by [`Printer::indent`] levels of four spaces.
#[derive(Clone, Debug, Default)]
pub struct Printer {
    out: String,
    /// The indentation level of the line being written.
    pub indent: usize,
    /// Struct literals stay on one line (set while measuring one).
    flat: bool,
}

impl Printer {
    pub fn new() -> Printer {
        Printer::default()
    }

    /// A printer whose new lines start `indent` levels deep (to splice text into a block).
    pub fn with_indent(indent: usize) -> Printer {
        Printer { out: String::new(), indent, flat: false }
    }

    /// The text printed so far.
    pub fn as_str(&self) -> &str {
        &self.out
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// Appends raw text.
    pub fn write(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Starts a new line at the current indentation.
    pub fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    // ------------------------------------------------------------------------------ items

    pub fn unit(&mut self, unit: &SourceUnit) {
        let mut prev: Option<(Option<u8>, bool)> = None;
        for item in &unit.items {
            let mut p = Printer::with_indent(self.indent);
            p.item(item);
            let one_line = !p.out.contains('\n');
            let group = group_of(item);
            if prev.is_some() {
                // A blank line between items, except within a run of one-line items of the
                // same group (imports, consts, extern types, extern fns).
                let together = prev == Some((group, true)) && group.is_some() && one_line;
                self.out.push_str(if together { "\n" } else { "\n\n" });
            }
            self.out.push_str(&p.out);
            prev = Some((group, one_line));
        }
        if !unit.items.is_empty() {
            self.out.push('\n');
        }
    }

    pub fn item(&mut self, item: &Item) {
        for attr in &item.attrs {
            self.attr(attr);
            self.newline();
        }
        match &item.kind {
            ItemKind::Import(import) => self.import(import),
            ItemKind::Fn(decl) => self.fn_decl(decl),
            ItemKind::Struct(s) => {
                self.write("struct ");
                self.write(&s.name.name);
                if s.fields.is_empty() {
                    self.write(" {}");
                    return;
                }
                self.write(" {");
                self.indent += 1;
                for field in &s.fields {
                    self.newline();
                    self.write(&field.name.name);
                    self.write(": ");
                    self.ty(&field.ty);
                    self.write(",");
                }
                self.indent -= 1;
                self.newline();
                self.write("}");
            }
            ItemKind::Const(c) => {
                self.write("const ");
                self.write(&c.name.name);
                self.write(": ");
                self.ty(&c.ty);
                self.write(" = ");
                self.expr(&c.value);
                self.write(";");
            }
            ItemKind::Plugin(p) => {
                self.write(&p.kind.name);
                self.write(" ");
                self.write(&p.name.name);
                if p.params.is_empty() && p.methods.is_empty() {
                    self.write(" {}");
                    return;
                }
                self.write(" {");
                self.indent += 1;
                for param in &p.params {
                    self.newline();
                    self.plugin_param(param);
                }
                if !p.params.is_empty() && !p.methods.is_empty() {
                    self.out.push('\n');
                }
                self.methods(&p.methods);
                self.indent -= 1;
                self.newline();
                self.write("}");
            }
            ItemKind::Interface(i) => {
                self.write("interface ");
                self.write(&i.kind.name);
                self.members(&i.methods);
            }
            ItemKind::Impl(i) => {
                self.write("impl ");
                self.write(&i.ty.name);
                self.members(&i.methods);
            }
            ItemKind::ExternType(name) => {
                self.write("extern type ");
                self.write(&name.name);
                self.write(";");
            }
        }
    }

    pub fn import(&mut self, import: &Import) {
        if import.is_pub {
            self.write("pub ");
        }
        self.write("import ");
        self.path(&import.module);
        match &import.names {
            ImportNames::Module => {}
            ImportNames::Glob(_) => self.write("::*"),
            ImportNames::List(names) => {
                self.write("::{");
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        self.write(", ");
                    }
                    self.write(&name.name);
                }
                self.write("}");
            }
        }
        self.write(";");
    }

    /// ` { methods }` of an interface or impl.
    fn members(&mut self, methods: &[Method]) {
        if methods.is_empty() {
            self.write(" {}");
            return;
        }
        self.write(" {");
        self.indent += 1;
        self.methods(methods);
        self.indent -= 1;
        self.newline();
        self.write("}");
    }

    /// Methods, each on a new line; a blank line separates them when one has a body or
    /// attributes.
    fn methods(&mut self, methods: &[Method]) {
        for (i, method) in methods.iter().enumerate() {
            if i > 0 {
                let prev = &methods[i - 1];
                let spaced = |m: &Method| m.decl.body.is_some() || !m.attrs.is_empty();
                if spaced(prev) || spaced(method) {
                    self.out.push('\n');
                }
            }
            self.newline();
            self.method(method);
        }
    }

    pub fn method(&mut self, method: &Method) {
        for attr in &method.attrs {
            self.attr(attr);
            self.newline();
        }
        self.fn_decl(&method.decl);
    }

    pub fn plugin_param(&mut self, param: &PluginParam) {
        for attr in &param.attrs {
            self.attr(attr);
            self.write(" ");
        }
        self.write("param ");
        self.write(&param.name.name);
        self.write(": ");
        self.ty(&param.ty);
        if let Some(default) = &param.default {
            self.write(" = ");
            self.expr(default);
        }
        self.write(";");
    }

    /// `[extern ]fn name(params)[ -> R]` followed by the body or `;`.
    pub fn fn_decl(&mut self, decl: &FnDecl) {
        if decl.is_extern {
            self.write("extern ");
        }
        self.write("fn ");
        self.write(&decl.name.name);
        self.write("(");
        for (i, param) in decl.params.iter().enumerate() {
            if i > 0 {
                self.write(", ");
            }
            self.param(param);
        }
        self.write(")");
        if let Some(ret) = &decl.ret {
            self.write(" -> ");
            self.ty(ret);
        }
        match &decl.body {
            Some(body) => {
                self.write(" ");
                self.block(body);
            }
            None => self.write(";"),
        }
    }

    pub fn param(&mut self, param: &Param) {
        for attr in &param.attrs {
            self.attr(attr);
            self.write(" ");
        }
        self.write(&param.name.name);
        if let Some(ty) = &param.ty {
            self.write(": ");
            self.ty(ty);
        }
    }

    pub fn attr(&mut self, attr: &Attribute) {
        self.write("@");
        self.write(&attr.name.name);
        if attr.args.is_empty() {
            return;
        }
        self.write("(");
        for (i, arg) in attr.args.iter().enumerate() {
            if i > 0 {
                self.write(", ");
            }
            match arg {
                AttrArg::Path(path) => self.path(path),
                AttrArg::Int(value, _) => self.write(&value.to_string()),
            }
        }
        self.write(")");
    }

    pub fn path(&mut self, path: &Path) {
        for (i, segment) in path.segments.iter().enumerate() {
            if i > 0 {
                self.write("::");
            }
            self.write(&segment.name);
        }
    }

    // ------------------------------------------------------------------------------ types

    pub fn ty(&mut self, t: &TypeExpr) {
        match &t.kind {
            TypeExprKind::Named { path, args } => {
                self.path(path);
                if !args.is_empty() {
                    self.write("<");
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            self.write(", ");
                        }
                        self.ty(arg);
                    }
                    // `>>` would lex as a shift.
                    if self.out.ends_with('>') {
                        self.write(" ");
                    }
                    self.write(">");
                }
            }
            TypeExprKind::Tuple(elems) => {
                self.write("(");
                for (i, elem) in elems.iter().enumerate() {
                    if i > 0 {
                        self.write(", ");
                    }
                    self.ty(elem);
                }
                if elems.len() == 1 {
                    self.write(",");
                }
                self.write(")");
            }
            TypeExprKind::Array { elem, len } => {
                self.write("[");
                self.ty(elem);
                self.write("; ");
                self.array_len(len);
                self.write("]");
            }
        }
    }

    fn array_len(&mut self, len: &ArrayLen) {
        match len {
            ArrayLen::Literal(n, _) => self.write(&n.to_string()),
            ArrayLen::Const(path) => self.path(path),
        }
    }

    pub fn pattern(&mut self, pat: &Pattern) {
        match &pat.kind {
            PatternKind::Bind(name) => self.write(&name.name),
            PatternKind::Wildcard => self.write("_"),
            PatternKind::Tuple(elems) => {
                self.write("(");
                for (i, elem) in elems.iter().enumerate() {
                    if i > 0 {
                        self.write(", ");
                    }
                    self.pattern(elem);
                }
                if elems.len() == 1 {
                    self.write(",");
                }
                self.write(")");
            }
        }
    }

    // ------------------------------------------------------------------------- statements

    /// `{}` when empty, otherwise one statement per line and the tail last.
    pub fn block(&mut self, block: &Block) {
        if block.stmts.is_empty() && block.tail.is_none() {
            self.write("{}");
            return;
        }
        self.write("{");
        self.indent += 1;
        for (i, stmt) in block.stmts.iter().enumerate() {
            self.newline();
            self.stmt(stmt);
            // The parser would read a last block-like statement without `;` as the block's
            // value (a tree it never builds itself); keep it a statement.
            let last = i + 1 == block.stmts.len() && block.tail.is_none();
            if last && matches!(stmt.kind, StmtKind::Expr { semi: false, .. }) && !self.out.ends_with(';') {
                self.write(";");
            }
        }
        if let Some(tail) = &block.tail {
            self.newline();
            self.stmt_expr(tail);
        }
        self.indent -= 1;
        self.newline();
        self.write("}");
    }

    pub fn stmt(&mut self, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Let { mutable, pattern, ty, init } => {
                self.write(if *mutable { "var " } else { "let " });
                self.pattern(pattern);
                if let Some(ty) = ty {
                    self.write(": ");
                    self.ty(ty);
                }
                if let Some(init) = init {
                    self.write(" = ");
                    self.expr(init);
                }
                self.write(";");
            }
            StmtKind::Assign { target, op, value } => {
                self.expr_in(target, Ctx::stmt_start());
                self.write(" ");
                if let Some(op) = op {
                    self.write(op.symbol());
                }
                self.write("= ");
                self.expr(value);
                self.write(";");
            }
            StmtKind::Expr { expr, semi } => {
                self.stmt_expr(expr);
                // A block-like statement may go without `;`; anything else needs one.
                if *semi || !expr.is_block_like() {
                    self.write(";");
                }
            }
            StmtKind::Break => self.write("break;"),
            StmtKind::Continue => self.write("continue;"),
            StmtKind::Return(value) => {
                self.write("return");
                if let Some(value) = value {
                    self.write(" ");
                    self.expr(value);
                }
                self.write(";");
            }
        }
    }

    /// An expression that is a whole statement or a block tail (without `;`).
    pub fn stmt_expr(&mut self, e: &Expr) {
        if e.is_block_like() {
            self.expr_bare(e, Ctx { stmt_level: true, ..Ctx::default() });
        } else {
            self.expr_in(e, Ctx::stmt_start());
        }
    }

    // ------------------------------------------------------------------------ expressions

    /// Prints an expression in a free position (an initializer, an argument, ...).
    pub fn expr(&mut self, e: &Expr) {
        self.expr_in(e, Ctx::default());
    }

    /// Prints `e` in `ctx`, in parentheses when its own syntax would not parse there.
    fn expr_in(&mut self, e: &Expr, ctx: Ctx) {
        self.operand(e, ctx, false);
    }

    /// Prints `e` in parentheses when `parens`, otherwise in `ctx`.
    fn operand(&mut self, e: &Expr, ctx: Ctx, parens: bool) {
        if parens {
            self.write("(");
            self.expr_bare(e, Ctx::default());
            self.write(")");
        } else if (ctx.stmt_start && e.is_block_like())
            || (ctx.no_struct && matches!(e.kind, ExprKind::StructLit { .. }))
        {
            self.operand(e, ctx, true);
        } else {
            self.expr_bare(e, ctx);
        }
    }

    /// Prints `e` itself; its operands get the parentheses they need.
    fn expr_bare(&mut self, e: &Expr, ctx: Ctx) {
        match &e.kind {
            ExprKind::Lit(lit) => self.lit(lit),
            ExprKind::Path(path) => self.path(path),
            ExprKind::Unary(op, operand) => {
                self.write(op.symbol());
                let parens = matches!(operand.kind, ExprKind::Binary(..));
                self.operand(operand, ctx.inner(), parens);
            }
            ExprKind::Binary(op, lhs, rhs) => {
                let prec = op.precedence();
                let lhs_parens = match lhs.kind {
                    ExprKind::Binary(l, ..) => l.precedence() < prec || (l.precedence() == prec && op.is_comparison()),
                    _ => false,
                };
                let rhs_parens = match rhs.kind {
                    ExprKind::Binary(r, ..) => r.precedence() <= prec,
                    _ => false,
                };
                self.operand(lhs, ctx.leftmost(), lhs_parens);
                self.write(" ");
                self.write(op.symbol());
                self.write(" ");
                self.operand(rhs, ctx.inner(), rhs_parens);
            }
            ExprKind::Call { callee, args } => {
                self.operand(callee, ctx.leftmost(), !is_primary(callee));
                self.args(args);
            }
            ExprKind::MethodCall { receiver, method, args } => {
                self.operand(receiver, ctx.leftmost(), receiver_needs_parens(receiver));
                self.write(".");
                self.write(&method.name);
                self.args(args);
            }
            ExprKind::Field(receiver, field) => {
                self.operand(receiver, ctx.leftmost(), receiver_needs_parens(receiver));
                self.write(".");
                self.write(&field.name);
            }
            ExprKind::TupleIndex(receiver, index, _) => {
                let parens = receiver_needs_parens(receiver) || matches!(receiver.kind, ExprKind::TupleIndex(..));
                self.operand(receiver, ctx.leftmost(), parens);
                self.write(".");
                self.write(&index.to_string());
            }
            ExprKind::Index(base, index) => {
                self.operand(base, ctx.leftmost(), receiver_needs_parens(base));
                self.write("[");
                self.expr(index);
                self.write("]");
            }
            ExprKind::Tuple(elems) => {
                self.write("(");
                self.comma_list(elems);
                if elems.len() == 1 {
                    self.write(",");
                }
                self.write(")");
            }
            ExprKind::Array(elems) => {
                self.write("[");
                self.comma_list(elems);
                self.write("]");
            }
            ExprKind::ArrayRepeat(elem, len) => {
                self.write("[");
                self.expr(elem);
                self.write("; ");
                self.array_len(len);
                self.write("]");
            }
            ExprKind::StructLit { path, fields } => {
                self.path(path);
                if fields.is_empty() {
                    self.write(" {}");
                    return;
                }
                // One line when it fits, otherwise one field per line.
                if !self.flat {
                    let mut flat = Printer { out: String::new(), indent: self.indent, flat: true };
                    flat.struct_fields_flat(fields);
                    if !flat.out.contains('\n') && self.column() + flat.out.len() <= MAX_WIDTH {
                        self.write(&flat.out);
                        return;
                    }
                    self.write(" {");
                    self.indent += 1;
                    for field in fields {
                        self.newline();
                        self.field_init(field);
                        self.write(",");
                    }
                    self.indent -= 1;
                    self.newline();
                    self.write("}");
                    return;
                }
                self.struct_fields_flat(fields);
            }
            ExprKind::Block(block) => {
                if !ctx.stmt_level {
                    if let Some(line) = inline_block(e) {
                        self.write(&line);
                        return;
                    }
                }
                self.block(block)
            }
            ExprKind::If { .. } => {
                if !ctx.stmt_level {
                    if let Some(line) = inline_if(e) {
                        self.write(&line);
                        return;
                    }
                }
                self.if_expr(e);
            }
            ExprKind::Loop { attrs, body } => {
                self.loop_attrs(attrs);
                self.write("loop ");
                self.block(body);
            }
            ExprKind::While { attrs, cond, body } => {
                self.loop_attrs(attrs);
                self.write("while ");
                self.expr_in(cond, Ctx::no_struct());
                self.write(" ");
                self.block(body);
            }
            ExprKind::For { attrs, var, start, end, body } => {
                self.loop_attrs(attrs);
                self.write("for ");
                self.write(&var.name);
                self.write(" in ");
                self.expr_in(start, Ctx::no_struct());
                self.write("..");
                self.expr_in(end, Ctx::no_struct());
                self.write(" ");
                self.block(body);
            }
            ExprKind::Derivative { mode, target } => {
                self.write(match mode {
                    DiffMode::Fwd => "fwd_diff(",
                    DiffMode::Bwd => "bwd_diff(",
                });
                self.path(target);
                self.write(")");
            }
        }
    }

    /// ` { a: x, b }`
    fn struct_fields_flat(&mut self, fields: &[FieldInit]) {
        self.write(" { ");
        for (i, field) in fields.iter().enumerate() {
            if i > 0 {
                self.write(", ");
            }
            self.field_init(field);
        }
        self.write(" }");
    }

    /// `name: value`, or `name` alone for `name: name`.
    fn field_init(&mut self, field: &FieldInit) {
        self.write(&field.name.name);
        let shorthand = matches!(&field.value.kind,
            ExprKind::Path(p) if p.segments.len() == 1 && p.segments[0].name == field.name.name);
        if !shorthand {
            self.write(": ");
            self.expr(&field.value);
        }
    }

    /// The column where the next character goes.
    fn column(&self) -> usize {
        self.out.len() - self.out.rfind('\n').map_or(0, |i| i + 1)
    }

    /// `if c { .. } else if d { .. } else { .. }` over several lines.
    fn if_expr(&mut self, e: &Expr) {
        let ExprKind::If { cond, then, els } = &e.kind else {
            return self.expr(e);
        };
        self.write("if ");
        self.expr_in(cond, Ctx::no_struct());
        self.write(" ");
        self.block(then);
        if let Some(els) = els {
            self.write(" else ");
            match &els.kind {
                ExprKind::Block(block) => self.block(block),
                ExprKind::If { .. } => self.if_expr(els),
                // Not produced by the parser: make it the value of an else block.
                _ => {
                    let block = Block { stmts: Vec::new(), tail: Some(els.clone()), span: els.span };
                    self.block(&block);
                }
            }
        }
    }

    fn loop_attrs(&mut self, attrs: &[Attribute]) {
        for attr in attrs {
            self.attr(attr);
            self.write(" ");
        }
    }

    fn args(&mut self, args: &[Expr]) {
        self.write("(");
        self.comma_list(args);
        self.write(")");
    }

    fn comma_list(&mut self, elems: &[Expr]) {
        for (i, elem) in elems.iter().enumerate() {
            if i > 0 {
                self.write(", ");
            }
            self.expr(elem);
        }
    }

    pub fn lit(&mut self, lit: &Lit) {
        match lit {
            Lit::Int { value, suffix } => {
                // Large `u32` values are most likely bit patterns: show them in hex.
                if *suffix == Some(IntSuffix::U32) && *value > 0xFFFF {
                    self.write(&format!("{value:#X}").replace("0X", "0x"));
                } else {
                    self.write(&value.to_string());
                }
                match suffix {
                    Some(IntSuffix::U32) => self.write("u"),
                    Some(IntSuffix::I32) => self.write("i"),
                    None => {}
                }
            }
            Lit::Float(text) => {
                self.write(text);
                // Generated code may hold `1` for `1.0`: keep it a float.
                if !text.is_empty() && text.bytes().all(|c| c.is_ascii_digit() || c == b'_') {
                    self.write(".0");
                }
            }
            Lit::Bool(b) => self.write(if *b { "true" } else { "false" }),
        }
    }
}

/// Items of the same group that fit on one line are printed without blank lines between them.
fn group_of(item: &Item) -> Option<u8> {
    if !item.attrs.is_empty() {
        return None;
    }
    match &item.kind {
        ItemKind::Import(_) => Some(0),
        ItemKind::Const(_) => Some(1),
        ItemKind::ExternType(_) => Some(2),
        ItemKind::Fn(decl) if decl.body.is_none() => Some(3),
        _ => None,
    }
}

/// Whether `e` may be called without parentheses (the grammar calls primary expressions only).
fn is_primary(e: &Expr) -> bool {
    !matches!(
        e.kind,
        ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Call { .. }
            | ExprKind::MethodCall { .. }
            | ExprKind::Field(..)
            | ExprKind::TupleIndex(..)
            | ExprKind::Index(..)
    )
}

/// Whether the receiver of `.f`, `.0`, `.m()` or `[i]` needs parentheses: operators bind
/// looser than postfix operations, and a number literal would swallow the dot.
fn receiver_needs_parens(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Unary(..) | ExprKind::Binary(..) | ExprKind::Lit(Lit::Int { .. } | Lit::Float(_)))
}

fn count_nodes(e: &Expr, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let block = |b: &Block, budget: &mut usize| {
        if !b.stmts.is_empty() {
            *budget = 0;
        } else if let Some(tail) = &b.tail {
            count_nodes(tail, budget);
        }
    };
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Path(_) | ExprKind::Derivative { .. } => {}
        ExprKind::Unary(_, x) | ExprKind::Field(x, _) | ExprKind::TupleIndex(x, _, _) | ExprKind::ArrayRepeat(x, _) => {
            count_nodes(x, budget)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            count_nodes(a, budget);
            count_nodes(b, budget);
        }
        ExprKind::Call { callee: x, args } | ExprKind::MethodCall { receiver: x, args, .. } => {
            count_nodes(x, budget);
            args.iter().for_each(|a| count_nodes(a, budget));
        }
        ExprKind::Tuple(elems) | ExprKind::Array(elems) => elems.iter().for_each(|a| count_nodes(a, budget)),
        ExprKind::StructLit { fields, .. } => fields.iter().for_each(|f| count_nodes(&f.value, budget)),
        ExprKind::If { cond, then, els } => {
            count_nodes(cond, budget);
            block(then, budget);
            if let Some(els) = els {
                count_nodes(els, budget);
            }
        }
        ExprKind::Block(b) => block(b, budget),
        // Loops are never folded onto one line.
        ExprKind::Loop { .. } | ExprKind::While { .. } | ExprKind::For { .. } => *budget = 0,
    }
}

/// The one-line form `{ a }` of a small block expression that holds just a value, or `None`.
fn inline_block(e: &Expr) -> Option<String> {
    let mut budget = INLINE_IF_MAX_NODES + 1;
    count_nodes(e, &mut budget);
    if budget == 0 {
        return None;
    }
    let ExprKind::Block(block) = &e.kind else {
        return None;
    };
    let line = format!("{{ {} }}", one_line_branch(block)?);
    (line.len() <= INLINE_IF_MAX_WIDTH).then_some(line)
}

/// The value of a block without statements, printed on one line.
fn one_line_branch(b: &Block) -> Option<String> {
    let tail = b.tail.as_deref().filter(|_| b.stmts.is_empty())?;
    let mut p = Printer::new();
    p.stmt_expr(tail);
    Some(p.out).filter(|s| !s.contains('\n'))
}

/// The one-line form `if c { a } else { b }` of a small `if` with an `else` whose branches are
/// single expressions, or `None`.
fn inline_if(e: &Expr) -> Option<String> {
    let mut budget = INLINE_IF_MAX_NODES + 1;
    count_nodes(e, &mut budget);
    if budget == 0 {
        return None;
    }
    let one_line = |e: &Expr, ctx: Ctx| {
        let mut p = Printer::new();
        p.expr_in(e, ctx);
        Some(p.out).filter(|s| !s.contains('\n'))
    };
    let branch = one_line_branch;
    let mut line = String::new();
    let mut cur = e;
    loop {
        let ExprKind::If { cond, then, els } = &cur.kind else {
            return None;
        };
        line.push_str("if ");
        line.push_str(&one_line(cond, Ctx::no_struct())?);
        line.push_str(" { ");
        line.push_str(&branch(then)?);
        line.push_str(" } else ");
        match &els.as_ref()?.kind {
            ExprKind::Block(b) => {
                line.push_str("{ ");
                line.push_str(&branch(b)?);
                line.push_str(" }");
                break;
            }
            ExprKind::If { .. } => cur = els.as_ref()?,
            _ => return None,
        }
    }
    (line.len() <= INLINE_IF_MAX_WIDTH).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drs_diagnostics::FileId;

    fn parse_ok(src: &str) -> SourceUnit {
        let (unit, diags) = crate::parse(src, FileId(0));
        assert!(diags.is_empty(), "{src}\n{diags:#?}");
        unit
    }

    /// Strips spans and node ids from a debug dump.
    fn shape(unit: &SourceUnit) -> String {
        let text = format!("{unit:#?}");
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if (c == '#' || c == '@') && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                while chars.peek().is_some_and(|d| d.is_ascii_digit() || *d == '.') {
                    chars.next();
                }
                continue;
            }
            out.push(c);
        }
        out
    }

    /// Parses `src` as a `let` initializer, prints it back and checks that the print reparses to
    /// the same tree.
    fn expr(src: &str) -> String {
        let unit = parse_ok(&format!("fn f() {{ let x = {src}; }}"));
        let ItemKind::Fn(FnDecl { body: Some(body), .. }) = &unit.items[0].kind else { panic!() };
        let StmtKind::Let { init: Some(init), .. } = &body.stmts[0].kind else { panic!() };
        let printed = print_expr(init);
        let again = parse_ok(&format!("fn f() {{ let x = {printed}; }}"));
        assert_eq!(shape(&unit), shape(&again), "{src} printed as {printed}");
        printed
    }

    /// Parses a whole file, prints it, and checks the round trip and idempotence.
    fn file(src: &str) -> String {
        let unit = parse_ok(src);
        let printed = print(&unit);
        let again = parse_ok(&printed);
        assert_eq!(shape(&unit), shape(&again), "printed:\n{printed}");
        assert_eq!(print(&again), printed);
        printed
    }

    /// The body lines of `fn f() { body }` after printing, with the indentation removed.
    fn body(src: &str) -> String {
        let printed = file(&format!("fn f() {{\n{src}\n}}"));
        let lines: Vec<&str> = printed.lines().collect();
        let inner = &lines[1..lines.len() - 1];
        inner.iter().map(|l| l.strip_prefix("    ").unwrap_or(l)).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn binary_precedence_and_associativity() {
        assert_eq!(expr("a + b * c"), "a + b * c");
        assert_eq!(expr("(a + b) * c"), "(a + b) * c");
        assert_eq!(expr("(a - b) - c"), "a - b - c");
        assert_eq!(expr("a - (b - c)"), "a - (b - c)");
        assert_eq!(expr("a / (b * c)"), "a / (b * c)");
        assert_eq!(expr("((a | b) ^ c) & d"), "((a | b) ^ c) & d");
        assert_eq!(expr("a | b ^ c & d << e + f * g"), "a | b ^ c & d << e + f * g");
        assert_eq!(expr("(a << b) << c"), "a << b << c");
        assert_eq!(expr("a || b && c"), "a || b && c");
        assert_eq!(expr("(a || b) && c"), "(a || b) && c");
        assert_eq!(expr("a || (b || c)"), "a || (b || c)");
        assert_eq!(expr("a & (b == c)"), "a & (b == c)");
        assert_eq!(expr("(a == b) && (c < d)"), "a == b && c < d");
    }

    #[test]
    fn comparisons_do_not_chain() {
        assert_eq!(expr("(a < b) == c"), "(a < b) == c");
        assert_eq!(expr("a == (b < c)"), "a == (b < c)");
        assert_eq!(expr("(a == b) != (c == d)"), "(a == b) != (c == d)");
        assert_eq!(expr("a + 1 < b * 2"), "a + 1 < b * 2");
        let (_, diags) = crate::parse("fn f() { let x = a < b < c; }", FileId(0));
        assert!(!diags.is_empty());
    }

    #[test]
    fn unary_operators() {
        assert_eq!(expr("-(a + b)"), "-(a + b)");
        assert_eq!(expr("(-a) * b"), "-a * b");
        assert_eq!(expr("a - -b"), "a - -b");
        assert_eq!(expr("-(-a)"), "--a");
        assert_eq!(expr("!(a && b) || c"), "!(a && b) || c");
        assert_eq!(expr("-a.x"), "-a.x");
        assert_eq!(expr("(-a).x"), "(-a).x");
        assert_eq!(expr("(!a)[0]"), "(!a)[0]");
        assert_eq!(expr("(a + b).len()"), "(a + b).len()");
        assert_eq!(expr("-1"), "-1");
    }

    #[test]
    fn postfix_receivers_and_callees() {
        assert_eq!(expr("(t.0).1"), "(t.0).1");
        assert_eq!(expr("((t.0).1).2"), "((t.0).1).2");
        assert_eq!(expr("(t.0).x"), "t.0.x");
        assert_eq!(expr("t.x.0"), "t.x.0");
        assert_eq!(expr("(1).0"), "(1).0");
        assert_eq!(expr("(1.5).x"), "(1.5).x");
        assert_eq!(expr("(a.f)(x)"), "(a.f)(x)");
        assert_eq!(expr("(f(a))(b)"), "(f(a))(b)");
        assert_eq!(expr("(a[0])(b)"), "(a[0])(b)");
        assert_eq!(expr("fwd_diff(m::f)(x, 1.0)"), "fwd_diff(m::f)(x, 1.0)");
        assert_eq!(expr("Frame::to_local(f, v).xyz[2]"), "Frame::to_local(f, v).xyz[2]");
        assert_eq!(expr("S { a: 1 }.a"), "S { a: 1 }.a");
    }

    #[test]
    fn literals_tuples_arrays_structs() {
        assert_eq!(expr("0xFFu + 1_000 + 2i + 0b11"), "255u + 1000 + 2i + 3");
        assert_eq!(expr("0x3F800000u + 65535u + 4294967295u"), "0x3F800000u + 65535u + 0xFFFFFFFFu");
        assert_eq!(expr("1.5e-3 + 0.25 + 2E3"), "1.5e-3 + 0.25 + 2E3");
        assert_eq!(expr("((a))"), "a");
        assert_eq!(expr("(a,)"), "(a,)");
        assert_eq!(expr("((a, b),)"), "((a, b),)");
        assert_eq!(expr("()"), "()");
        assert_eq!(expr("[1; N]"), "[1; N]");
        assert_eq!(expr("[a, (b), [c]]"), "[a, b, [c]]");
        assert_eq!(expr("S { a: a, b: 1 + 2, c }"), "S { a, b: 1 + 2, c }");
        assert_eq!(expr("m::S {}"), "m::S {}");
        assert_eq!(expr("bwd_diff(f)"), "bwd_diff(f)");
    }

    #[test]
    fn struct_literals_in_conditions() {
        assert_eq!(body("if (S { a: 1 }).a == 1 {\n    x = 1;\n}"), "if (S { a: 1 }).a == 1 {\n    x = 1;\n}");
        assert_eq!(body("while x == (S {}) {}"), "while x == (S {}) {}");
        assert_eq!(body("while -(S {}).a {}"), "while -(S {}).a {}");
        assert_eq!(body("for i in (S { n }).n..f(S { n }) {}"), "for i in (S { n }).n..f(S { n }) {}");
        assert_eq!(body("if g([S {}]) {}"), "if g([S {}]) {}");
        assert_eq!(body("let b = S { a: 1 } == t;"), "let b = S { a: 1 } == t;");
        assert_eq!(
            body("if (Long { first_field: 1.0, second_field: 2.0, third_field: 3.0, fourth_field: S { a: 1 }, fifth: 5 }).a {}"),
            "if (Long {\n    first_field: 1.0,\n    second_field: 2.0,\n    third_field: 3.0,\n    fourth_field: S { a: 1 },\n    fifth: 5,\n}).a {}"
        );
    }

    #[test]
    fn block_like_at_statement_start() {
        assert_eq!(body("(if c { a } else { b }).x;"), "(if c { a } else { b }).x;");
        assert_eq!(body("(if c { a; } else { b }).x;"), "(if c {\n    a;\n} else {\n    b\n}).x;");
        assert_eq!(body("(if c { a } else { b })(x);"), "(if c { a } else { b })(x);");
        assert_eq!(body("(if c { a })[0] = 1;"), "(if c {\n    a\n})[0] = 1;");
        assert_eq!(body("({ a }) + 1;"), "({ a }) + 1;");
        assert_eq!(body("(loop {}).0 = 1;"), "(loop {}).0 = 1;");
        assert_eq!(body("let y = { a } + 1;"), "let y = { a } + 1;");
        assert_eq!(body("-{ a };"), "-{ a };");
        assert_eq!(body("{ a };"), "{\n    a\n};");
        assert_eq!(body("let y = { let t = a; t } + 1;"), "let y = {\n    let t = a;\n    t\n} + 1;");
        // A tail whose leftmost operand is block-like.
        assert_eq!(body("({ 1 }) * 2"), "({ 1 }) * 2");
        // Block-like statements, with and without `;`.
        assert_eq!(body("if c {}\n-x;"), "if c {}\n-x;");
        assert_eq!(body("loop {};\n(a, b);"), "loop {};\n(a, b);");
        assert_eq!(body("{}\n[1][0];"), "{}\n[1][0];");
        assert_eq!(body("@max_iters(4) while a < b {}"), "@max_iters(4) while a < b {}");
    }

    #[test]
    fn if_layout() {
        assert_eq!(expr("if a { 1.0 } else { 2.0 }"), "if a { 1.0 } else { 2.0 }");
        assert_eq!(expr("if a { 1 } else if b { 2 } else { 3 }"), "if a { 1 } else if b { 2 } else { 3 }");
        assert_eq!(expr("if a { 1 } else { 2 } + 1"), "if a { 1 } else { 2 } + 1");
        assert_eq!(expr("if a { x; 1 } else { 2 }"), "if a {\n    x;\n    1\n} else {\n    2\n}");
        assert_eq!(body("if a { 1 } else { 2 }"), "if a {\n    1\n} else {\n    2\n}");
        assert_eq!(
            body("let v = if if a { b } else { c } { 1 } else { 2 };"),
            "let v = if if a { b } else { c } { 1 } else { 2 };"
        );
    }

    #[test]
    fn statements() {
        assert_eq!(
            body("let (a, (b, _)): (f32, (i32, bool)) = t; var x: [vec3; N]; var (y,) = (1,); x[0].xy += v; return;"),
            "let (a, (b, _)): (f32, (i32, bool)) = t;\nvar x: [vec3; N];\nvar (y,) = (1,);\nx[0].xy += v;\nreturn;"
        );
        // `(p)` is a one-element tuple pattern (spec/syntax.md); it prints as `(p,)`.
        assert_eq!(
            body("let (a) = 1; let ((b, c)) = t; let (_) = 2; let () = ();"),
            "let (a,) = 1;\nlet ((b, c),) = t;\nlet (_,) = 2;\nlet () = ();"
        );
        assert_eq!(body("loop { break }"), "loop {\n    break;\n}");
        assert_eq!(body("for i in 0..n { continue; }"), "for i in 0..n {\n    continue;\n}");
        assert_eq!(body("return if a { 1 } else { 2 }"), "return if a { 1 } else { 2 };");
    }

    #[test]
    fn items() {
        let src = "import math; pub import a::b::*; import c::{x, y};
            const A: i32 = 1; const B: f32 = 2.0;
            @custom_fwd(f_fwd) fn f(@no_diff a: f32, b: Texture<Color>) -> (f32,) { (a,) }
            extern fn g(x: f32) -> f32;
            extern fn h() -> f32;
            struct S { a: f32, b: [i32; 4], }
            struct E {}
            const N: i32 = 4;
            extern type Sampler;
            bsdf Diffuse { @no_diff param r: Texture<Color> = 0.5; param k: f32; fn eval(self, x: f32) -> Color { r.eval(x) } fn h() {} }
            interface bsdf { fn eval(x: f32) -> Color; fn pdf() -> f32; }
            impl S { extern fn new() -> S; fn get(self) -> f32 { self.a } }";
        let expected = "import math;
pub import a::b::*;
import c::{x, y};

const A: i32 = 1;
const B: f32 = 2.0;

@custom_fwd(f_fwd)
fn f(@no_diff a: f32, b: Texture<Color>) -> (f32,) {
    (a,)
}

extern fn g(x: f32) -> f32;
extern fn h() -> f32;

struct S {
    a: f32,
    b: [i32; 4],
}

struct E {}

const N: i32 = 4;

extern type Sampler;

bsdf Diffuse {
    @no_diff param r: Texture<Color> = 0.5;
    param k: f32;

    fn eval(self, x: f32) -> Color {
        r.eval(x)
    }

    fn h() {}
}

interface bsdf {
    fn eval(x: f32) -> Color;
    fn pdf() -> f32;
}

impl S {
    extern fn new() -> S;

    fn get(self) -> f32 {
        self.a
    }
}
";
        assert_eq!(file(src), expected);
        assert_eq!(file(""), "");
    }

    #[test]
    fn nested_generic_types_do_not_close_with_a_shift() {
        let t = TypeExpr {
            kind: TypeExprKind::Named {
                path: Path { segments: vec![Ident { name: "A".into(), span: Span::default() }], span: Span::default() },
                args: vec![TypeExpr {
                    kind: TypeExprKind::Named {
                        path: Path {
                            segments: vec![Ident { name: "B".into(), span: Span::default() }],
                            span: Span::default(),
                        },
                        args: vec![TypeExpr { kind: TypeExprKind::Tuple(vec![]), span: Span::default() }],
                    },
                    span: Span::default(),
                }],
            },
            span: Span::default(),
        };
        assert_eq!(print_type(&t), "A<B<()> >");
    }

    #[test]
    fn generated_block_keeps_its_last_statement_a_statement() {
        let unit = parse_ok("fn f() { if c { 1.0 } else { 2.0 } }");
        let ItemKind::Fn(FnDecl { body: Some(body), .. }) = &unit.items[0].kind else { panic!() };
        let stmt = Stmt {
            kind: StmtKind::Expr { expr: (**body.tail.as_ref().unwrap()).clone(), semi: false },
            span: Span::default(),
        };
        let block = Block { stmts: vec![stmt], tail: None, span: Span::default() };
        assert_eq!(print_block(&block), "{\n    if c {\n        1.0\n    } else {\n        2.0\n    };\n}");
    }

    #[test]
    fn generated_float_text_stays_a_float() {
        let e = Expr { id: NodeId(0), kind: ExprKind::Lit(Lit::Float("2".into())), span: Span::default() };
        assert_eq!(print_expr(&e), "2.0");
    }
}
