//! The front end never panics or hangs, whatever the input: random token soups, random text and
//! bytes, and randomly damaged versions of real programs all come back as diagnostics. Every
//! diagnostic points inside the source.
//!
//! The proptests run 22,000 cases in all (see the `CASES_*` constants); each goes through the
//! parser and the type checker.

mod syntax_samples;

use drs_diagnostics::Diagnostic;
use drs_sema::LoadOptions;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use std::sync::OnceLock;
use syntax_samples::{parse, valid_corpus, SAMPLES};

/// What the tests run on each input: the parser, then the whole checker (resolution, types,
/// flow) without a standard library. Returns the parser's diagnostics, which the recovery tests
/// look at; the checker's diagnostics are only required to point inside their files.
fn check_source(text: &str) -> Vec<Diagnostic> {
    let (_unit, diagnostics) = parse(text);
    check_program(text, &LoadOptions::default());
    diagnostics
}

/// Type-checks `text` as a program (with `options`) and checks every span of every diagnostic
/// against the file it names; a panic inside the checker fails the test case.
fn check_program(text: &str, options: &LoadOptions) {
    let checked = drs_sema::check_source("fuzz.drs", text, options);
    for d in &checked.diagnostics {
        for label in std::iter::once(&d.primary).chain(&d.secondary) {
            let file = &checked.sources.get(label.span.file).text;
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(
                start <= end && end <= file.len() && file.is_char_boundary(start) && file.is_char_boundary(end),
                "span {start}..{end} of `{}` is not within its file ({} bytes)",
                d.message,
                file.len()
            );
        }
    }
}

fn with_stdlib() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

/// Runs [`check_source`] and checks that every diagnostic lies within `text`.
fn check(text: &str) -> Result<(), TestCaseError> {
    let diagnostics = check_source(text);
    check_spans(text, &diagnostics)
}

fn check_spans(text: &str, diagnostics: &[Diagnostic]) -> Result<(), TestCaseError> {
    for d in diagnostics {
        for label in std::iter::once(&d.primary).chain(&d.secondary) {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            prop_assert!(
                start <= end && end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end),
                "span {start}..{end} of `{}` is not within the source ({} bytes)",
                d.message,
                text.len()
            );
        }
    }
    Ok(())
}

const CASES_TOKENS: u32 = 8_000;
const CASES_TEXT: u32 = 3_000;
const CASES_BYTES: u32 = 3_000;
const CASES_MUTATIONS: u32 = 8_000;

/// Tokens of the language and near misses: every keyword and punctuation mark, contextual
/// words, identifiers, literals of every form (and malformed ones), comments, attributes.
const VOCAB: &[&str] = &[
    // keywords
    "fn",
    "let",
    "var",
    "struct",
    "const",
    "import",
    "pub",
    "if",
    "else",
    "loop",
    "while",
    "for",
    "in",
    "break",
    "continue",
    "return",
    "true",
    "false",
    "impl",
    "extern",
    "type",
    "interface",
    "self",
    "fwd_diff",
    "bwd_diff",
    // contextual words and common names
    "bsdf",
    "emitter",
    "texture",
    "medium",
    "phase",
    "integrator",
    "param",
    "f32",
    "i32",
    "u32",
    "bool",
    "vec2",
    "vec3",
    "ivec3",
    "mat3",
    "Color",
    "Texture",
    "Bsdf",
    "x",
    "y",
    "a_b",
    "_",
    "_x",
    "Frame",
    "math",
    "prelude",
    "sqrt",
    "select",
    "detach",
    // literals
    "0",
    "1",
    "42",
    "1_000",
    "0xFF",
    "0xFFu",
    "0b101",
    "0b1u",
    "7u",
    "3i",
    "1.0",
    "0.5e-3",
    "1e3",
    "2.5E+10",
    "99999999999999999999",
    "0x",
    "0b",
    "1.",
    "1e",
    "0..n",
    "t.0.1",
    // punctuation
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "->",
    "@",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "&&",
    "||",
    "!",
    // attributes, comments and junk
    "@max_iters(4)",
    "@no_diff",
    "@custom_fwd(g)",
    "//",
    "// comment\n",
    "/*",
    "*/",
    "/* c */",
    "$",
    "#",
    "'",
    "\"",
    "\\",
    "é",
    "\u{0}",
    "\u{FEFF}",
    "🦀",
];

const SEPARATORS: &[&str] = &["", " ", " ", " ", "\n", "\t"];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec((select(VOCAB), select(SEPARATORS)), 0..160).prop_map(|parts| {
        let mut text = String::new();
        for (token, sep) in parts {
            text.push_str(token);
            text.push_str(sep);
        }
        text
    })
}

/// Programs to damage: the stdlib files, else (or also, when few) the embedded samples.
fn mutation_sources() -> &'static [String] {
    static SOURCES: OnceLock<Vec<String>> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let mut sources: Vec<String> =
            syntax_samples::drs_files_under(&syntax_samples::workspace_root().join("stdlib"))
                .iter()
                .filter_map(|path| std::fs::read_to_string(path).ok())
                .collect();
        if sources.len() < 4 {
            sources.extend(SAMPLES.iter().map(|(_, text)| text.to_string()).filter(|t| !t.trim().is_empty()));
        }
        sources
    })
}

/// One damage done to a program.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteToken(Index),
    DuplicateToken(Index),
    SwapTokens(Index, Index),
    InsertToken(Index, &'static str),
    ReplaceToken(Index, &'static str),
    DeleteChar(Index),
    InsertChar(Index, char),
    DeleteRange(Index, usize),
    Truncate(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let chars = select(
        &[
            '{', '}', '(', ')', ';', ',', '.', ':', '<', '>', '=', '-', '/', '*', '@', '0', 'x', ' ', '\n', '"', 'é',
            '\0',
        ][..],
    );
    prop_oneof![
        3 => any::<Index>().prop_map(Mutation::DeleteToken),
        2 => any::<Index>().prop_map(Mutation::DuplicateToken),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        3 => (any::<Index>(), select(VOCAB)).prop_map(|(a, t)| Mutation::InsertToken(a, t)),
        2 => (any::<Index>(), select(VOCAB)).prop_map(|(a, t)| Mutation::ReplaceToken(a, t)),
        2 => any::<Index>().prop_map(Mutation::DeleteChar),
        2 => (any::<Index>(), chars).prop_map(|(a, c)| Mutation::InsertChar(a, c)),
        1 => (any::<Index>(), 1..200usize).prop_map(|(a, n)| Mutation::DeleteRange(a, n)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
    ]
}

/// Splits `text` into pieces that each end with one token (and start with the whitespace and
/// comments before it); the rest of the text is the last piece.
fn token_pieces(text: &str) -> Vec<String> {
    let (tokens, _) = drs_syntax::lexer::tokenize(text, drs_diagnostics::FileId(0));
    let mut pieces = Vec::with_capacity(tokens.len() + 1);
    let mut at = 0;
    for (_, _, end) in tokens {
        pieces.push(text[at..end].to_string());
        at = end;
    }
    pieces.push(text[at..].to_string());
    pieces
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let mut pieces = token_pieces(text);
    let n = pieces.len();
    match mutation {
        Mutation::DeleteToken(i) => {
            pieces.remove(i.index(n));
        }
        Mutation::DuplicateToken(i) => {
            let i = i.index(n);
            let copy = pieces[i].clone();
            pieces.insert(i, copy);
        }
        Mutation::SwapTokens(a, b) => pieces.swap(a.index(n), b.index(n)),
        Mutation::InsertToken(i, token) => pieces.insert(i.index(n + 1), format!(" {token}")),
        Mutation::ReplaceToken(i, token) => pieces[i.index(n)] = format!(" {token}"),
        Mutation::DeleteChar(i) => {
            let mut chars: Vec<char> = text.chars().collect();
            if !chars.is_empty() {
                chars.remove(i.index(chars.len()));
            }
            return chars.into_iter().collect();
        }
        Mutation::InsertChar(i, c) => {
            let mut chars: Vec<char> = text.chars().collect();
            chars.insert(i.index(chars.len() + 1), *c);
            return chars.into_iter().collect();
        }
        Mutation::DeleteRange(i, len) => {
            let chars: Vec<char> = text.chars().collect();
            let start = i.index(chars.len() + 1);
            let end = (start + len).min(chars.len());
            return chars[..start].iter().chain(&chars[end..]).collect();
        }
        Mutation::Truncate(i) => {
            let chars: Vec<char> = text.chars().collect();
            return chars[..i.index(chars.len() + 1)].iter().collect();
        }
    }
    pieces.concat()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES_TOKENS))]
    #[test]
    fn token_soup_never_panics(text in token_soup()) {
        check(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES_TEXT))]
    #[test]
    fn random_text_never_panics(text in any::<String>()) {
        check(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES_BYTES))]
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check(&String::from_utf8_lossy(&bytes))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES_MUTATIONS))]
    #[test]
    fn damaged_programs_never_panic(
        source in any::<Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let sources = mutation_sources();
        let mut text = sources[source.index(sources.len())].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        check(&text)?;
        // Damaged real programs also go through the checker with the standard library.
        check_program(&text, &with_stdlib());
    }
}

#[test]
fn mutation_sources_are_valid() {
    // The mutation test starts from programs that are fine, so that damage is what it tests.
    for text in mutation_sources() {
        let diagnostics = check_source(text);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    }
}

#[test]
fn valid_corpus_files_have_sane_diagnostics() {
    for path in valid_corpus() {
        let text = std::fs::read_to_string(&path).expect("readable");
        check(&text).unwrap_or_else(|e| panic!("{}: {e}", syntax_samples::display(&path)));
    }
}

/// Error recovery: independent syntax errors are all reported in one run.
#[test]
fn several_errors_are_reported_at_once() {
    let text = "\
fn a() -> f32 {
    let x = ;
    x
}

fn b() {
    let y = 1 + * 2;
    y = y +;
}

struct S { a: f32 b: f32 }

fn c() -> i32 { return 1 }

fn d() {
    if { }
    for in 0..3 {}
}

fn e() -> i32 { 1 + }
";
    let diagnostics = check_source(text);
    check_spans(text, &diagnostics).unwrap();
    let lines: Vec<usize> =
        diagnostics.iter().map(|d| text[..d.primary.span.start as usize].matches('\n').count() + 1).collect();
    let mut distinct = lines.clone();
    distinct.dedup();
    assert!(distinct.len() >= 4, "expected errors on several lines, got lines {lines:?}:\n{diagnostics:#?}");
    // The error in `fn a` does not hide the ones after it, up to the last function.
    assert!(lines.contains(&2), "{lines:?}");
    assert!(lines.iter().any(|&l| l >= 16), "{lines:?}");
}

/// A lexical error and a syntax error in the same file are both reported.
#[test]
fn lexical_and_syntax_errors_together() {
    let text = "fn f() { let a = 1 $ 2; }\nfn g() { let = 3; }\nconst X: u32 = 99999999999999999999999;\n/* open";
    let diagnostics = check_source(text);
    check_spans(text, &diagnostics).unwrap();
    assert!(diagnostics.len() >= 3, "{diagnostics:#?}");
}

#[test]
fn edge_inputs() {
    for text in [
        "",
        " ",
        "\n",
        "fn",
        "fn f(",
        "{",
        "}",
        "/*",
        "*/",
        "//",
        "@",
        "\u{FEFF}fn f() {}",
        "fn f() { ((((((((((",
        "))))))))",
    ] {
        check(text).unwrap();
    }
    // Deep nesting stays within the parser's (heap-allocated) stacks.
    let deep = format!("fn f() {{ let x = {}1{}; }}", "(".repeat(2000), ")".repeat(2000));
    assert!(check_source(&deep).is_empty());
    let unary = format!("fn f() {{ let x = {}1; }}", "-".repeat(1000));
    assert!(check_source(&unary).is_empty());
    let unclosed = format!("fn f() {{ let x = {}", "[".repeat(2000));
    check(&unclosed).unwrap();
}
