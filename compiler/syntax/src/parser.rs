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
    let (tokens, mut diagnostics) = tokenize(source, file);
    let mut builder = Builder { file, next_id: 0, eof: source.len(), diagnostics: Vec::new() };
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

    pub fn import(&mut self, is_pub: bool, mut prefix: Vec<Ident>, tail: (Ident, Option<ImportNames>)) -> Option<ItemKind> {
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
                Diagnostic::new(Code::InvalidPluginMember, word.span, format!("expected `param` or `fn`, found `{}`", word.name))
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
        self.report(error.error);
    }

    fn report(&mut self, error: ParseError<usize, Tok<'_>, Infallible>) {
        let diagnostic = match error {
            ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
                Diagnostic::new(Code::UnexpectedToken, self.span(l, r), format!("unexpected {}", tok.describe()))
                    .with_label(expected_list(&expected))
            }
            ParseError::ExtraToken { token: (l, tok, r) } => {
                Diagnostic::new(Code::UnexpectedToken, self.span(l, r), format!("unexpected {}", tok.describe()))
            }
            ParseError::UnrecognizedEof { location, expected } => {
                let at = location.min(self.eof);
                Diagnostic::new(Code::UnexpectedEof, self.span(at, at), "unexpected end of file")
                    .with_label(expected_list(&expected))
            }
            ParseError::InvalidToken { location } => {
                Diagnostic::new(Code::InvalidToken, self.span(location, location + 1), "invalid token")
            }
            ParseError::User { error } => match error {},
        };
        // Recovery can report the same position twice; one diagnostic is enough.
        if !self.diagnostics.iter().any(|d| d.primary.span == diagnostic.primary.span) {
            self.diagnostics.push(diagnostic);
        }
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
    match names.len() {
        0 => "not expected here".to_string(),
        1 => format!("expected {}", names[0]),
        n if n <= 8 => format!("expected one of {}", names.join(", ")),
        _ => format!("expected one of {}, ...", names[..8].join(", ")),
    }
}
