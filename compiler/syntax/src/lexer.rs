//! Tokens of the `.drs` language (logos) and the token stream the parser reads.

use crate::ast::IntSuffix;
use drs_diagnostics::{Code, Diagnostic, FileId, Span};
use logos::{FilterResult, Logos};

/// An integer literal's value and suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntLit {
    pub value: u64,
    pub suffix: Option<IntSuffix>,
}

/// Why a piece of input is not a token.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexError {
    #[default]
    InvalidChar,
    UnterminatedComment,
    InvalidNumber,
    /// `0xFFi`: the `i` suffix is for decimal literals only.
    SignedRadixSuffix,
}

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok<'s> {
    // A block comment is skipped by its callback; the variant is never produced.
    #[token("/*", block_comment)]
    BlockComment,

    #[token("fn")]
    Fn,
    #[token("let")]
    Let,
    #[token("var")]
    Var,
    #[token("struct")]
    Struct,
    #[token("const")]
    Const,
    #[token("import")]
    Import,
    #[token("pub")]
    Pub,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("loop")]
    Loop,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("return")]
    Return,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("impl")]
    Impl,
    #[token("extern")]
    Extern,
    #[token("type")]
    Type,
    #[token("interface")]
    Interface,
    #[token("self")]
    SelfValue,
    #[token("fwd_diff")]
    FwdDiff,
    #[token("bwd_diff")]
    BwdDiff,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'s str),
    #[token("_", priority = 3)]
    Underscore,
    #[regex(r"[0-9][0-9_]*[ui]?", |lex| int_literal(lex.slice()))]
    #[regex(r"0x[0-9a-fA-F_]+u?", |lex| int_literal(lex.slice()))]
    #[regex(r"0[xb][0-9a-fA-F_]+i", signed_radix_suffix)]
    #[regex(r"0b[01_]+u?", |lex| int_literal(lex.slice()))]
    Int(IntLit),
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice())]
    Float(&'s str),

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("@")]
    At,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("%=")]
    PercentAssign,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
}

fn block_comment<'s>(lex: &mut logos::Lexer<'s, Tok<'s>>) -> FilterResult<(), LexError> {
    match lex.remainder().find("*/") {
        Some(end) => {
            lex.bump(end + 2);
            FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            FilterResult::Error(LexError::UnterminatedComment)
        }
    }
}

fn signed_radix_suffix<'s>(_: &mut logos::Lexer<'s, Tok<'s>>) -> Result<IntLit, LexError> {
    Err(LexError::SignedRadixSuffix)
}

fn int_literal(text: &str) -> Result<IntLit, LexError> {
    let (body, suffix) = match text.as_bytes().last() {
        Some(b'u') => (&text[..text.len() - 1], Some(IntSuffix::U32)),
        Some(b'i') => (&text[..text.len() - 1], Some(IntSuffix::I32)),
        _ => (text, None),
    };
    let digits: String = body.chars().filter(|&c| c != '_').collect();
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        u64::from_str_radix(hex, 16)
    } else if let Some(bin) = digits.strip_prefix("0b") {
        u64::from_str_radix(bin, 2)
    } else {
        digits.parse()
    };
    value.map(|value| IntLit { value, suffix }).map_err(|_| LexError::InvalidNumber)
}

impl Tok<'_> {
    /// How the token is shown in "expected ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(name) => format!("identifier `{name}`"),
            Tok::Int(lit) => format!("integer `{}`", lit.value),
            Tok::Float(text) => format!("float `{text}`"),
            other => format!("`{}`", other.text()),
        }
    }

    /// The fixed text of a keyword or punctuation token.
    pub fn text(&self) -> &str {
        match self {
            Tok::BlockComment => "/*",
            Tok::Fn => "fn",
            Tok::Let => "let",
            Tok::Var => "var",
            Tok::Struct => "struct",
            Tok::Const => "const",
            Tok::Import => "import",
            Tok::Pub => "pub",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::Loop => "loop",
            Tok::While => "while",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Return => "return",
            Tok::True => "true",
            Tok::False => "false",
            Tok::Impl => "impl",
            Tok::Extern => "extern",
            Tok::Type => "type",
            Tok::Interface => "interface",
            Tok::SelfValue => "self",
            Tok::FwdDiff => "fwd_diff",
            Tok::BwdDiff => "bwd_diff",
            Tok::Ident(s) | Tok::Float(s) => s,
            Tok::Int(_) => "integer",
            Tok::Underscore => "_",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Colon => ":",
            Tok::ColonColon => "::",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::Arrow => "->",
            Tok::At => "@",
            Tok::Assign => "=",
            Tok::PlusAssign => "+=",
            Tok::MinusAssign => "-=",
            Tok::StarAssign => "*=",
            Tok::SlashAssign => "/=",
            Tok::PercentAssign => "%=",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
        }
    }
}

/// A token with its byte range, as the parser consumes it.
pub type Spanned<'s> = (usize, Tok<'s>, usize);

/// Splits `source` into tokens. Invalid input becomes a diagnostic and is left out of the
/// token list, so parsing goes on and later errors are still found.
pub fn tokenize(source: &str, file: FileId) -> (Vec<Spanned<'_>>, Vec<Diagnostic>) {
    let mut tokens = Vec::new();
    let mut diagnostics = Vec::new();
    let mut lexer = Tok::lexer(source);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        match result {
            Ok(tok) => tokens.push((range.start, tok, range.end)),
            Err(err) => {
                let span = Span::new(file, range.start, range.end);
                let slice = lexer.slice();
                diagnostics.push(match err {
                    LexError::InvalidChar => {
                        let shown: String = slice.chars().take(1).collect();
                        Diagnostic::new(
                            Code::InvalidToken,
                            span,
                            format!("invalid character `{}`", shown.escape_debug()),
                        )
                        .with_label("not part of any token")
                    }
                    LexError::UnterminatedComment => Diagnostic::new(
                        Code::UnterminatedComment,
                        Span::new(file, range.start, range.start + 2),
                        "unterminated block comment",
                    )
                    .with_label("this comment is never closed")
                    .with_help("close it with `*/`"),
                    LexError::InvalidNumber => {
                        Diagnostic::new(Code::InvalidLiteral, span, format!("invalid number literal `{slice}`"))
                            .with_label("does not fit in 64 bits")
                    }
                    LexError::SignedRadixSuffix => {
                        Diagnostic::new(Code::InvalidLiteral, span, format!("invalid number literal `{slice}`"))
                            .with_label("the `i` suffix is only for decimal literals")
                            .with_help(
                                "hexadecimal and binary literals are u32 (`0xFFu`) or take their type from the context",
                            )
                    }
                });
            }
        }
    }
    (tokens, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let (t, d) = tokenize(s, FileId(0));
        assert!(d.is_empty(), "{d:?}");
        t.into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn numbers_ranges_and_comments() {
        assert_eq!(
            toks("0..n /* c */ 1.5e3 // x\n 7u 0xFFu _ a_b"),
            vec![
                Tok::Int(IntLit { value: 0, suffix: None }),
                Tok::DotDot,
                Tok::Ident("n"),
                Tok::Float("1.5e3"),
                Tok::Int(IntLit { value: 7, suffix: Some(IntSuffix::U32) }),
                Tok::Int(IntLit { value: 255, suffix: Some(IntSuffix::U32) }),
                Tok::Underscore,
                Tok::Ident("a_b"),
            ]
        );
    }

    #[test]
    fn errors_are_reported_and_lexing_goes_on() {
        let (t, d) = tokenize("a $ b /* open", FileId(0));
        assert_eq!(t.len(), 2);
        assert_eq!(d.iter().map(|d| d.code).collect::<Vec<_>>(), vec![Code::InvalidToken, Code::UnterminatedComment]);
    }
}
