//! The `.drs` front end up to the syntax tree: tokens ([`lexer`]), the parser generated from
//! `grammar.lalrpop` ([`parse`]), the [`ast`] and a pretty printer ([`print`]) whose output
//! parses back to the same tree.

pub mod ast;
pub mod lexer;
mod parser;
pub mod print;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused_parens)]
    grammar
);

pub use parser::parse;
