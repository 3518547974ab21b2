//! Parser/printer round trips: for every valid `.drs` file and the embedded samples,
//! `parse(print(parse(x)))` is the tree of `parse(x)` (ignoring spans and node ids) and printing
//! is idempotent. Randomly generated syntax trees must survive `parse(print(tree))` as well,
//! which checks that the printer puts parentheses wherever the grammar needs them.

mod syntax_samples;

use drs_syntax::ast::*;
use drs_syntax::print::print;
use syntax_samples::{display, first_difference, parse, same_tree, valid_corpus, SAMPLES};

/// Checks one program; returns a description of what went wrong.
fn round_trip(name: &str, text: &str) -> Result<(), String> {
    let (unit, diags) = parse(text);
    if !diags.is_empty() {
        return Err(format!("{name}: does not parse cleanly:\n{diags:#?}"));
    }
    let printed = print(&unit);
    let (again, diags) = parse(&printed);
    if !diags.is_empty() {
        return Err(format!("{name}: the printed program does not parse:\n{diags:#?}\n--- printed ---\n{printed}"));
    }
    if let Err(diff) = same_tree(&unit, &again) {
        return Err(format!(
            "{name}: the printed program parses to a different tree: {diff}\n--- printed ---\n{printed}"
        ));
    }
    let reprinted = print(&again);
    if reprinted != printed {
        return Err(format!(
            "{name}: printing is not idempotent: {}\n--- first ---\n{printed}\n--- second ---\n{reprinted}",
            first_difference(&printed, &reprinted)
        ));
    }
    Ok(())
}

#[test]
fn corpus_files_round_trip() {
    let files = valid_corpus();
    let mut failures = Vec::new();
    for path in &files {
        let name = display(path);
        match std::fs::read_to_string(path) {
            Ok(text) => {
                if let Err(e) = round_trip(&name, &text) {
                    failures.push(e);
                }
            }
            Err(e) => failures.push(format!("{name}: cannot read: {e}")),
        }
    }
    eprintln!("round-tripped {} corpus files", files.len());
    assert!(failures.is_empty(), "{} of {} files failed:\n\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn embedded_samples_round_trip() {
    let failures: Vec<String> = SAMPLES.iter().filter_map(|(name, text)| round_trip(name, text).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The samples together cover every kind of node of the syntax tree.
#[test]
fn embedded_samples_cover_every_construct() {
    let all: String = SAMPLES
        .iter()
        .map(|(_, text)| {
            let (unit, _) = parse(text);
            format!("{unit:?}")
        })
        .collect();
    let constructs = [
        "Import(",
        "Module",
        "Glob(",
        "List(",
        "Fn(",
        "Struct(",
        "Const(",
        "Plugin(",
        "Interface(",
        "Impl(",
        "ExternType(",
        "is_extern: true",
        "is_pub: true",
        "Named {",
        "Tuple(",
        "Array {",
        "Literal(",
        "Const(Path",
        "args: [Path(",
        "Int(3, @",
        "Let {",
        "mutable: true",
        "mutable: false",
        "Assign {",
        "op: Some(",
        "op: None",
        "semi: true",
        "semi: false",
        "Break",
        "Continue",
        "Return(Some",
        "Return(None",
        "Bind(",
        "Wildcard",
        "Lit(",
        "Float(",
        "Bool(",
        "suffix: Some(U32)",
        "suffix: Some(I32)",
        "suffix: None",
        "Path(",
        "Unary(Neg",
        "Unary(Not",
        "Binary(",
        "Call {",
        "MethodCall {",
        "Field(",
        "TupleIndex(",
        "Index(",
        "ArrayRepeat(",
        "StructLit {",
        "Block(",
        "If {",
        "els: Some",
        "els: None",
        "Loop {",
        "While {",
        "For {",
        "Derivative { mode: Fwd",
        "Derivative { mode: Bwd",
        "default: Some",
        "default: None",
        "tail: Some",
        "tail: None",
        "ty: None",
    ];
    let ops = [
        "Add", "Sub", "Mul", "Div", "Rem", "BitAnd", "BitOr", "BitXor", "Shl", "Shr", "Eq", "Ne", "Lt", "Le", "Gt",
        "Ge", "And", "Or",
    ];
    let missing: Vec<String> = constructs
        .iter()
        .map(|c| c.to_string())
        .chain(ops.iter().map(|op| format!("Binary({op},")))
        .filter(|c| !all.contains(c.as_str()))
        .collect();
    assert!(missing.is_empty(), "no sample contains {missing:?}");
}

// ------------------------------------------------------------------------ random trees

/// A small deterministic random generator (xorshift64*), so that failures are reproducible
/// from the printed seed.
struct Gen {
    state: u64,
}

const NAMES: &[&str] = &["a", "b", "x", "y0", "vec3", "Color", "Frame", "bsdf", "param", "f32", "Texture", "_t", "N"];
const FLOATS: &[&str] = &["1.0", "0.5", "0.5e-3", "2E3", "1_000.5", "3.25e+2", "1e3", "0.0"];
const OPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::And,
    BinOp::Or,
];

fn sp() -> Span {
    Span::default()
}

fn mk(kind: ExprKind) -> Expr {
    Expr { id: NodeId(0), kind, span: sp() }
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen { state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn many<T>(&mut self, max: usize, mut f: impl FnMut(&mut Gen) -> T) -> Vec<T> {
        let n = self.below(max + 1);
        (0..n).map(|_| f(self)).collect()
    }

    fn ident(&mut self) -> Ident {
        Ident { name: self.pick(NAMES).to_string(), span: sp() }
    }

    fn path(&mut self) -> Path {
        let n = if self.chance(80) { 1 } else { 2 };
        Path { segments: (0..n).map(|_| self.ident()).collect(), span: sp() }
    }

    fn attr(&mut self) -> Attribute {
        let args = if self.chance(50) {
            Vec::new()
        } else {
            self.many(2, |g| if g.chance(50) { AttrArg::Path(g.path()) } else { AttrArg::Int(g.next() % 100, sp()) })
        };
        Attribute { name: self.ident(), args, span: sp() }
    }

    fn array_len(&mut self) -> ArrayLen {
        if self.chance(50) {
            ArrayLen::Literal(self.next() % 64, sp())
        } else {
            ArrayLen::Const(self.path())
        }
    }

    fn ty(&mut self, depth: usize) -> TypeExpr {
        let kind = match if depth == 0 { 0 } else { self.below(4) } {
            0 | 1 => {
                let args = if depth > 0 && self.chance(25) { self.many(2, |g| g.ty(depth - 1)) } else { Vec::new() };
                TypeExprKind::Named { path: self.path(), args }
            }
            2 => TypeExprKind::Tuple(self.many(3, |g| g.ty(depth - 1))),
            _ => TypeExprKind::Array { elem: Box::new(self.ty(depth - 1)), len: self.array_len() },
        };
        TypeExpr { kind, span: sp() }
    }

    fn pattern(&mut self, depth: usize) -> Pattern {
        let kind = match if depth == 0 { self.below(2) } else { self.below(4) } {
            0 => PatternKind::Bind(self.ident()),
            1 => PatternKind::Wildcard,
            _ => PatternKind::Tuple(self.many(3, |g| g.pattern(depth - 1))),
        };
        Pattern { kind, span: sp() }
    }

    fn lit(&mut self) -> Lit {
        match self.below(3) {
            0 => {
                let value = match self.below(3) {
                    0 => self.next() % 10,
                    1 => self.next() % 100_000,
                    _ => self.next(),
                };
                let suffix = *self.pick(&[None, None, Some(IntSuffix::U32), Some(IntSuffix::I32)]);
                Lit::Int { value, suffix }
            }
            1 => Lit::Float(self.pick(FLOATS).to_string()),
            _ => Lit::Bool(self.chance(50)),
        }
    }

    fn leaf(&mut self) -> Expr {
        match self.below(8) {
            0..=2 => mk(ExprKind::Lit(self.lit())),
            3..=5 => mk(ExprKind::Path(self.path())),
            6 => {
                let mode = if self.chance(50) { DiffMode::Fwd } else { DiffMode::Bwd };
                mk(ExprKind::Derivative { mode, target: self.path() })
            }
            _ => {
                if self.chance(50) {
                    mk(ExprKind::Tuple(Vec::new()))
                } else {
                    let name = Ident { name: "self".into(), span: sp() };
                    mk(ExprKind::Path(Path { segments: vec![name], span: sp() }))
                }
            }
        }
    }

    fn loop_attrs(&mut self) -> Vec<Attribute> {
        if self.chance(70) {
            Vec::new()
        } else {
            self.many(2, |g| g.attr())
        }
    }

    fn if_expr(&mut self, depth: usize) -> Expr {
        let cond = Box::new(self.expr(depth - 1));
        let then = self.block(depth - 1);
        let els = match self.below(3) {
            0 => None,
            2 if depth >= 2 => Some(Box::new(self.if_expr(depth - 1))),
            _ => Some(Box::new(mk(ExprKind::Block(self.block(depth - 1))))),
        };
        mk(ExprKind::If { cond, then, els })
    }

    fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.chance(20) {
            return self.leaf();
        }
        let d = depth - 1;
        match self.below(22) {
            0..=2 => {
                let op = *self.pick(OPS);
                mk(ExprKind::Binary(op, Box::new(self.expr(d)), Box::new(self.expr(d))))
            }
            3 | 4 => {
                let op = if self.chance(50) { UnOp::Neg } else { UnOp::Not };
                mk(ExprKind::Unary(op, Box::new(self.expr(d))))
            }
            5 => mk(ExprKind::Call { callee: Box::new(self.expr(d)), args: self.many(3, |g| g.expr(d)) }),
            6 => mk(ExprKind::MethodCall {
                receiver: Box::new(self.expr(d)),
                method: self.ident(),
                args: self.many(2, |g| g.expr(d)),
            }),
            7 => mk(ExprKind::Field(Box::new(self.expr(d)), self.ident())),
            8 => {
                let index = if self.chance(80) { self.below(4) as u32 } else { self.next() as u32 };
                mk(ExprKind::TupleIndex(Box::new(self.expr(d)), index, sp()))
            }
            9 => mk(ExprKind::Index(Box::new(self.expr(d)), Box::new(self.expr(d)))),
            10 => mk(ExprKind::Tuple(self.many(3, |g| g.expr(d)))),
            11 => mk(ExprKind::Array(self.many(3, |g| g.expr(d)))),
            12 => mk(ExprKind::ArrayRepeat(Box::new(self.expr(d)), self.array_len())),
            13 => {
                let fields = self.many(3, |g| {
                    let name = g.ident();
                    let value = if g.chance(30) {
                        mk(ExprKind::Path(Path { segments: vec![name.clone()], span: sp() }))
                    } else {
                        g.expr(d)
                    };
                    FieldInit { name, value }
                });
                mk(ExprKind::StructLit { path: self.path(), fields })
            }
            14 => mk(ExprKind::Block(self.block(d))),
            15 | 16 => self.if_expr(depth),
            17 => mk(ExprKind::Loop { attrs: self.loop_attrs(), body: self.block(d) }),
            18 => mk(ExprKind::While { attrs: self.loop_attrs(), cond: Box::new(self.expr(d)), body: self.block(d) }),
            19 => mk(ExprKind::For {
                attrs: self.loop_attrs(),
                var: self.ident(),
                start: Box::new(self.expr(d)),
                end: Box::new(self.expr(d)),
                body: self.block(d),
            }),
            _ => self.leaf(),
        }
    }

    fn stmt(&mut self, depth: usize) -> Stmt {
        let kind = match self.below(10) {
            0 | 1 => {
                let mutable = self.chance(50);
                let ty = if self.chance(40) { Some(self.ty(2)) } else { None };
                let init = if !mutable || self.chance(70) { Some(self.expr(depth)) } else { None };
                StmtKind::Let { mutable, pattern: self.pattern(2), ty, init }
            }
            2 => {
                let op = *self.pick(&[
                    None,
                    Some(BinOp::Add),
                    Some(BinOp::Sub),
                    Some(BinOp::Mul),
                    Some(BinOp::Div),
                    Some(BinOp::Rem),
                ]);
                StmtKind::Assign { target: self.expr(depth), op, value: self.expr(depth) }
            }
            3..=6 => {
                let expr = self.expr(depth);
                let semi = !expr.is_block_like() || self.chance(30);
                StmtKind::Expr { expr, semi }
            }
            7 => StmtKind::Break,
            8 => StmtKind::Continue,
            _ => StmtKind::Return(if self.chance(60) { Some(self.expr(depth)) } else { None }),
        };
        Stmt { kind, span: sp() }
    }

    fn block(&mut self, depth: usize) -> Block {
        let stmts = if depth == 0 { Vec::new() } else { self.many(3, |g| g.stmt(depth - 1)) };
        let tail = if depth > 0 && self.chance(50) { Some(Box::new(self.expr(depth - 1))) } else { None };
        canonical_block(stmts, tail)
    }

    fn fn_decl(&mut self, depth: usize, body: bool) -> FnDecl {
        let params = self.many(3, |g| {
            if g.chance(15) {
                Param { attrs: Vec::new(), name: Ident { name: "self".into(), span: sp() }, ty: None, span: sp() }
            } else {
                let attrs = if g.chance(20) { vec![g.attr()] } else { Vec::new() };
                Param { attrs, name: g.ident(), ty: Some(g.ty(2)), span: sp() }
            }
        });
        FnDecl {
            is_extern: self.chance(10),
            name: self.ident(),
            params,
            ret: if self.chance(60) { Some(self.ty(2)) } else { None },
            body: if body { Some(self.block(depth)) } else { None },
            span: sp(),
        }
    }

    fn methods(&mut self, depth: usize) -> Vec<Method> {
        self.many(3, |g| {
            let attrs = if g.chance(20) { g.many(2, |g| g.attr()) } else { Vec::new() };
            let body = g.chance(70);
            Method { attrs, decl: g.fn_decl(depth, body) }
        })
    }

    fn item(&mut self, depth: usize) -> Item {
        let kind = match self.below(10) {
            0 => {
                let mut module = self.path();
                if self.chance(30) {
                    module.segments.push(self.ident());
                }
                let names = match self.below(3) {
                    0 => ImportNames::Module,
                    1 => ImportNames::Glob(sp()),
                    _ => ImportNames::List(self.many(3, |g| g.ident())),
                };
                ItemKind::Import(Import { is_pub: self.chance(30), module, names })
            }
            1..=3 => {
                let body = self.chance(85);
                ItemKind::Fn(self.fn_decl(depth, body))
            }
            4 => ItemKind::Struct(StructDecl {
                name: self.ident(),
                fields: self.many(3, |g| FieldDecl { name: g.ident(), ty: g.ty(2), span: sp() }),
            }),
            5 => ItemKind::Const(ConstDecl { name: self.ident(), ty: self.ty(2), value: self.expr(depth) }),
            6 => ItemKind::Plugin(PluginDecl {
                kind: self.ident(),
                name: self.ident(),
                params: self.many(3, |g| PluginParam {
                    attrs: if g.chance(20) { vec![g.attr()] } else { Vec::new() },
                    name: g.ident(),
                    ty: g.ty(2),
                    default: if g.chance(50) { Some(g.expr(2)) } else { None },
                    span: sp(),
                }),
                methods: self.methods(depth),
            }),
            7 => ItemKind::Interface(InterfaceDecl { kind: self.ident(), methods: self.methods(depth) }),
            8 => ItemKind::Impl(ImplDecl { ty: self.ident(), methods: self.methods(depth) }),
            _ => ItemKind::ExternType(self.ident()),
        };
        let attrs = if self.chance(15) { self.many(2, |g| g.attr()) } else { Vec::new() };
        Item { attrs, kind, span: sp() }
    }

    fn unit(&mut self, depth: usize) -> SourceUnit {
        SourceUnit { items: self.many(4, |g| g.item(depth)) }
    }
}

/// A block as the parser builds it: a trailing block-like statement without `;` is the block's
/// value, so such a statement gets a `;` when the block has no tail.
fn canonical_block(mut stmts: Vec<Stmt>, tail: Option<Box<Expr>>) -> Block {
    if tail.is_none() {
        if let Some(Stmt { kind: StmtKind::Expr { semi, .. }, .. }) = stmts.last_mut() {
            *semi = true;
        }
    }
    Block { stmts, tail, span: sp() }
}

/// `parse(print(tree))` gives back `tree` for random trees. The seeds are fixed so that the
/// test is deterministic; a failure names its seed.
#[test]
fn random_trees_round_trip() {
    const CASES: u64 = 4000;
    let mut failures = Vec::new();
    for seed in 0..CASES {
        let depth = 1 + (seed % 5) as usize;
        let unit = Gen::new(seed).unit(depth);
        let printed = print(&unit);
        let (again, diags) = parse(&printed);
        if !diags.is_empty() {
            failures.push(format!("seed {seed}: the print does not parse:\n{diags:#?}\n--- printed ---\n{printed}"));
        } else if let Err(diff) = same_tree(&unit, &again) {
            failures
                .push(format!("seed {seed}: the print parses to a different tree: {diff}\n--- printed ---\n{printed}"));
        } else if print(&again) != printed {
            failures.push(format!("seed {seed}: printing is not idempotent\n--- printed ---\n{printed}"));
        }
        if failures.len() >= 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Single expressions, deeper than in whole programs, printed in a `let` and as a statement.
#[test]
fn random_expressions_round_trip() {
    const CASES: u64 = 6000;
    let mut failures = Vec::new();
    for seed in 0..CASES {
        let mut gen = Gen::new(seed ^ 0xABCD_0000);
        let e = gen.expr(2 + (seed % 6) as usize);
        let stmt = gen.stmt(3);
        let init = Stmt {
            kind: StmtKind::Let { mutable: false, pattern: gen.pattern(0), ty: None, init: Some(e.clone()) },
            span: sp(),
        };
        let tail = if gen.chance(50) { Some(Box::new(e)) } else { None };
        let body = canonical_block(vec![init, stmt], tail);
        let decl =
            FnDecl { is_extern: false, name: gen.ident(), params: Vec::new(), ret: None, body: Some(body), span: sp() };
        let unit = SourceUnit { items: vec![Item { attrs: Vec::new(), kind: ItemKind::Fn(decl), span: sp() }] };
        let printed = print(&unit);
        let (again, diags) = parse(&printed);
        if !diags.is_empty() {
            failures.push(format!("seed {seed}: the print does not parse:\n{diags:#?}\n--- printed ---\n{printed}"));
        } else if let Err(diff) = same_tree(&unit, &again) {
            failures
                .push(format!("seed {seed}: the print parses to a different tree: {diff}\n--- printed ---\n{printed}"));
        }
        if failures.len() >= 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
