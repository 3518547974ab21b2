//! Runs the generated LALR parser over the token stream and turns its errors into diagnostics.

use crate::ast::*;
use crate::grammar::SourceUnitParser;
use crate::lexer::{tokenize, IntLit, Tok};
use drs_diagnostics::{Code, Diagnostic, FileId};
use lalrpop_util::{ErrorRecovery, ParseError};
use std::convert::Infallible;

/// Parses one file. Always returns an AST (possibly partial) together with every syntax error
/// found: the lexer skips invalid characters and the parser recovers at statements and items.
pub fn parse(source: &str, file: FileId) -> (SourceUnit, Vec<Diagnostic>) {
    let (mut tokens, mut diagnostics) = tokenize(source, file);
    // An integer literal too large for 64 bits is reported by the lexer; parse it as a `0` of
    // the same suffix so that the statement around it is still checked without cascades.
    for d in &diagnostics {
        if d.code == Code::InvalidLiteral {
            let (l, r) = (d.primary.span.start as usize, d.primary.span.end as usize);
            let suffix = match source.as_bytes().get(r.wrapping_sub(1)) {
                Some(b'u') => Some(IntSuffix::U32),
                Some(b'i') => Some(IntSuffix::I32),
                _ => None,
            };
            let at = tokens.partition_point(|t| t.0 < l);
            tokens.insert(at, (l, Tok::Int(IntLit { value: 0, suffix }), r));
        }
    }
    // Every token with its brace depth, to tell how far a recovery skipped.
    let mut depth = 0u32;
    let marks = tokens
        .iter()
        .map(|t| {
            let depth_before = depth;
            match t.1 {
                Tok::LBrace => depth += 1,
                Tok::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            Mark {
                at: t.0,
                depth_before,
                semi: matches!(t.1, Tok::Semi),
                closes_item: matches!(t.1, Tok::RBrace) && depth == 0,
            }
        })
        .collect();
    // Tokens that start a line, for the "missing `;`" hint.
    let newline_before = tokens
        .iter()
        .zip(std::iter::once(0).chain(tokens.iter().map(|t| t.2)))
        .filter(|(t, prev_end)| source.get(*prev_end..t.0).is_some_and(|gap| gap.contains('\n')))
        .map(|(t, _)| t.0)
        .collect();
    // The innermost `{` still open at the end of the file, for "unexpected end of file".
    let mut open = Vec::new();
    for t in &tokens {
        match t.1 {
            Tok::LBrace => open.push(t.0),
            Tok::RBrace => {
                open.pop();
            }
            _ => {}
        }
    }
    let unclosed = open.last().copied();
    let mut builder = Builder {
        file,
        next_id: 0,
        eof: source.len(),
        diagnostics: Vec::new(),
        marks,
        skip_until: None,
        newline_before,
        unclosed,
    };
    let result = SourceUnitParser::new().parse(&mut builder, tokens.into_iter().map(Ok::<_, Infallible>));
    let unit = match result {
        Ok(unit) => unit,
        Err(error) => {
            builder.report(error);
            SourceUnit::default()
        }
    };
    diagnostics.append(&mut builder.diagnostics);
    drs_diagnostics::sort(&mut diagnostics);
    (unit, diagnostics)
}

/// A token's position and brace depth, for error recovery.
struct Mark {
    at: usize,
    depth_before: u32,
    semi: bool,
    /// A `}` that ends a top-level item.
    closes_item: bool,
}

/// A plugin body member before the plugin is assembled.
pub enum Member {
    Param(PluginParam),
    Method(Method),
    /// Reported already; dropped.
    Invalid,
}

/// State shared by the grammar's actions: node ids, spans and the errors found so far.
pub struct Builder {
    file: FileId,
    next_id: u32,
    eof: usize,
    diagnostics: Vec<Diagnostic>,
    /// Every token with its brace depth.
    marks: Vec<Mark>,
    /// Errors up to this offset are not reported: the parser recovered at the item level in
    /// the middle of an item, and what it finds until the item's end are consequences.
    skip_until: Option<usize>,
    /// Start offsets of the tokens that begin a line (sorted).
    newline_before: Vec<usize>,
    /// The innermost `{` never closed, if any.
    unclosed: Option<usize>,
}

impl Builder {
    pub fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    pub fn expr(&mut self, kind: ExprKind, l: usize, r: usize) -> Expr {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        Expr { id, kind, span: self.span(l, r) }
    }

    pub fn binary(&mut self, op: BinOp, a: Expr, c: Expr, l: usize, r: usize) -> Expr {
        self.expr(ExprKind::Binary(op, Box::new(a), Box::new(c)), l, r)
    }

    pub fn tuple_index(&mut self, e: Expr, i: IntLit, il: usize, ir: usize, l: usize, r: usize) -> Expr {
        if i.suffix.is_some() || i.value > u32::MAX as u64 {
            self.diagnostics.push(
                Diagnostic::new(Code::InvalidTupleIndex, self.span(il, ir), "invalid tuple index")
                    .with_label("expected a plain index such as `0`"),
            );
        }
        self.expr(ExprKind::TupleIndex(Box::new(e), i.value.min(u32::MAX as u64) as u32, self.span(il, ir)), l, r)
    }

    pub fn field_shorthand(&mut self, name: Ident) -> FieldInit {
        let span = name.span;
        let path = Path { segments: vec![name.clone()], span };
        let value = self.expr(ExprKind::Path(path), span.start as usize, span.end as usize);
        FieldInit { name, value }
    }

    /// Assembles a block; a trailing block-like expression without semicolon is its value.
    pub fn block(&mut self, mut stmts: Vec<Stmt>, end: Option<Stmt>, l: usize, r: usize) -> Block {
        let mut tail = None;
        match end {
            Some(Stmt { kind: StmtKind::Expr { expr, semi: false }, .. }) => tail = Some(Box::new(expr)),
            Some(jump) => stmts.push(jump),
            None => {
                if let Some(Stmt { kind: StmtKind::Expr { semi: false, .. }, .. }) = stmts.last() {
                    if let Some(Stmt { kind: StmtKind::Expr { expr, .. }, .. }) = stmts.pop() {
                        tail = Some(Box::new(expr));
                    }
                }
            }
        }
        Block { stmts, tail, span: self.span(l, r) }
    }

    pub fn import(
        &mut self,
        is_pub: bool,
        mut prefix: Vec<Ident>,
        tail: (Ident, Option<ImportNames>),
    ) -> Option<ItemKind> {
        let (last, names) = tail;
        let last_span = last.span;
        let names = match names {
            None => {
                prefix.push(last);
                ImportNames::Module
            }
            Some(names) => names,
        };
        let (Some(first), Some(end)) = (prefix.first(), prefix.last()) else {
            self.diagnostics.push(
                Diagnostic::new(Code::UnexpectedToken, last_span, "expected a module name before this")
                    .with_help("write for example `import math::*;`"),
            );
            return None;
        };
        let module = Path { span: first.span.to(end.span), segments: prefix };
        Some(ItemKind::Import(Import { is_pub, module, names }))
    }

    pub fn plugin_param(&mut self, word: Ident, param: PluginParam) -> Member {
        if word.name == "param" {
            Member::Param(param)
        } else {
            self.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidPluginMember,
                    word.span,
                    format!("expected `param` or `fn`, found `{}`", word.name),
                )
                .with_label("a plugin holds parameters and methods")
                .with_help(format!("declare a parameter as `param {}: TYPE;`", param.name.name)),
            );
            Member::Invalid
        }
    }

    pub fn plugin(&mut self, kind: Ident, name: Ident, members: Vec<Member>) -> ItemKind {
        let mut params = Vec::new();
        let mut methods = Vec::new();
        for member in members {
            match member {
                Member::Param(p) => params.push(p),
                Member::Method(m) => methods.push(m),
                Member::Invalid => {}
            }
        }
        ItemKind::Plugin(PluginDecl { kind, name, params, methods })
    }

    pub fn recover(&mut self, error: ErrorRecovery<usize, Tok<'_>, Infallible>) {
        let error_at = match &error.error {
            ParseError::UnrecognizedToken { token: (l, ..), .. } | ParseError::ExtraToken { token: (l, ..) } => {
                Some(*l)
            }
            _ => None,
        };
        self.report(error.error);
        let Some(error_at) = error_at else { return };
        // The grammar recovers at a statement (skipping to its `;`) or at an item (skipping to
        // a token that may start one). Resuming anywhere but at a `;` is an item-level recovery;
        // if it resumed before the end of the item the error is in, the rest of that item is
        // parsed out of context: its errors are not reported.
        let resume = error.dropped_tokens.last().map_or(error_at, |t| t.2);
        let resume_index = self.marks.partition_point(|m| m.at < resume);
        if self.marks.get(resume_index).is_some_and(|m| m.semi) {
            return;
        }
        let error_index = self.marks.partition_point(|m| m.at < error_at);
        let item_end = self.marks[error_index..].iter().find(|m| m.closes_item || (m.semi && m.depth_before == 0));
        if let Some(end) = item_end.filter(|end| resume <= end.at) {
            self.skip_until = Some(self.skip_until.map_or(end.at, |u| u.max(end.at)));
        }
    }

    fn report(&mut self, error: ParseError<usize, Tok<'_>, Infallible>) {
        let diagnostic = match error {
            ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
                let mut d =
                    Diagnostic::new(Code::UnexpectedToken, self.span(l, r), format!("unexpected {}", tok.describe()))
                        .with_label(expected_list(&expected));
                let is_expected = |t: &str| expected.iter().any(|e| e.trim_matches('"') == t);
                let nested_index = match &tok {
                    Tok::Float(text) if is_expected("Int") && !is_expected("Float") => text.split_once('.'),
                    _ => None,
                };
                if let Some((a, b)) = nested_index {
                    d = d.with_help(format!(
                        "`{a}.{b}` is read as one float: write `(x.{a}).{b}` for an element of a nested tuple"
                    ));
                } else if matches!(tok, Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::EqEq | Tok::NotEq)
                    && !is_expected(tok.text())
                {
                    d = d.with_help("comparisons do not chain: combine them with `&&`, e.g. `a <= x && x <= b`");
                } else if is_expected(";") && self.newline_before.binary_search(&l).is_ok() {
                    d = d.with_help("a `;` may be missing at the end of the previous line");
                }
                d
            }
            ParseError::ExtraToken { token: (l, tok, r) } => {
                Diagnostic::new(Code::UnexpectedToken, self.span(l, r), format!("unexpected {}", tok.describe()))
            }
            ParseError::UnrecognizedEof { location, expected } => {
                let at = location.min(self.eof);
                let mut d = Diagnostic::new(Code::UnexpectedEof, self.span(at, at), "unexpected end of file")
                    .with_label(expected_list(&expected));
                if let Some(open) = self.unclosed.filter(|_| expected.iter().any(|e| e == "\"}\"")) {
                    d = d.with_secondary(self.span(open, open + 1), "this `{` is never closed");
                }
                d
            }
            ParseError::InvalidToken { location } => {
                Diagnostic::new(Code::InvalidToken, self.span(location, location + 1), "invalid token")
            }
            ParseError::User { error } => match error {},
        };
        // Recovery can report the same position twice; one diagnostic is enough.
        let start = diagnostic.primary.span.start as usize;
        if self.skip_until.is_some_and(|until| start <= until)
            || self.diagnostics.iter().any(|d| d.primary.span == diagnostic.primary.span)
        {
            return;
        }
        self.diagnostics.push(diagnostic);
    }
}

/// "expected one of `;`, `}`" from the parser's list of acceptable terminals.
fn expected_list(expected: &[String]) -> String {
    let names: Vec<String> = expected
        .iter()
        .map(|t| match t.as_str() {
            "Ident" => "identifier".to_string(),
            "Int" => "integer".to_string(),
            "Float" => "float".to_string(),
            quoted => format!("`{}`", quoted.trim_matches('"')),
        })
        .collect();
    let has = |t: &str| expected.iter().any(|e| e == t);
    if has("Int") && has("Float") && has("Ident") {
        return if has("\"let\"") {
            "expected a statement or an expression".to_string()
        } else {
            "expected an expression".to_string()
        };
    }
    match names.len() {
        0 => "not expected here".to_string(),
        1 => format!("expected {}", names[0]),
        n if n <= 8 => format!("expected one of {}", names.join(", ")),
        _ => format!("expected one of {}, ...", names[..8].join(", ")),
    }
}
