//! `.drs` identifiers for IR names: functions (`Frame::to_local` → `Frame__to_local`),
//! host functions, buffers (`Diffuse.reflectance[0]` → `Diffuse_reflectance_0`) and
//! parameters (`wo.x` → `wo_x`), made unique and kept clear of everything the written code
//! must still be able to name.

use std::collections::HashSet;

/// The language's keywords (spec/lexical.md); never identifiers.
const KEYWORDS: &[&str] = &[
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
];

/// Built-in type names: found before any item as constructors and in type positions, so an
/// item with one of these names could not be called.
const BUILTIN_TYPES: &[&str] = &[
    "f32",
    "i32",
    "u32",
    "bool",
    "vec2",
    "vec3",
    "vec4",
    "ivec2",
    "ivec3",
    "ivec4",
    "uvec2",
    "uvec3",
    "uvec4",
    "bvec2",
    "bvec3",
    "bvec4",
    "mat3",
    "mat4",
    "Color",
    "Texture",
    "Bsdf",
    "Emitter",
    "Medium",
    "PhaseFunction",
    "Integrator",
];

/// The built-in functions the written code calls. An item or local with one of these names
/// would hide the built-in (spec/semantics.md § Name lookup).
pub(crate) const USED_BUILTINS: &[&str] = &[
    "abs",
    "sqrt",
    "floor",
    "ceil",
    "trunc",
    "round",
    "min",
    "max",
    "fma",
    "select",
    "to_bits",
    "from_bits",
    "detach",
    "replace_grad",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "exp2",
    "log",
    "log2",
    "pow",
];

/// Names the writer gives to SSA values (`v12`) and local arrays (`local0`).
fn is_generated_local(name: &str) -> bool {
    ["v", "local"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Whether `name` may not be used for an item or a parameter at all.
fn is_reserved(name: &str) -> bool {
    KEYWORDS.contains(&name)
        || BUILTIN_TYPES.contains(&name)
        || USED_BUILTINS.contains(&name)
        || is_generated_local(name)
}

/// An identifier made of the ASCII letters, digits and underscores of `text`; every run of
/// other characters becomes one `_` (none at the end), and a leading digit gets a `_` before
/// it. Empty results become `fallback`.
pub(crate) fn sanitize(text: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut replaced = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            if replaced && !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            replaced = false;
            out.push(c);
        } else {
            replaced = true;
        }
    }
    if out.is_empty() || out == "_" {
        return fallback.to_string();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The identifier of an IR function name: `Frame::to_local` → `Frame__to_local`,
/// `fwd_diff(f)` → `f__fwd`, `bwd_diff(Frame::to_local)` → `Frame__to_local__bwd`.
pub(crate) fn function_ident(ir_name: &str) -> String {
    for (mode, suffix) in [("fwd_diff(", "__fwd"), ("bwd_diff(", "__bwd")] {
        if let Some(inner) = ir_name.strip_prefix(mode).and_then(|rest| rest.strip_suffix(')')) {
            return function_ident(inner) + suffix;
        }
    }
    sanitize(&ir_name.replace("::", "__"), "function")
}

/// Hands out distinct identifiers within one scope.
#[derive(Clone, Debug, Default)]
pub(crate) struct Namer {
    taken: HashSet<String>,
}

impl Namer {
    /// A new identifier based on `base` (already an identifier): `base` itself if free and
    /// not reserved (else `base_`), then `base_2`, `base_3`, ….
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let first = if is_reserved(base) { format!("{base}_") } else { base.to_string() };
        let mut name = first;
        let mut n = 1;
        while self.taken.contains(&name) || is_reserved(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ir_names_become_recognisable_identifiers() {
        assert_eq!(function_ident("Frame::to_local"), "Frame__to_local");
        assert_eq!(function_ident("fwd_diff(shade)"), "shade__fwd");
        assert_eq!(function_ident("bwd_diff(Frame::to_local)"), "Frame__to_local__bwd");
        assert_eq!(function_ident("__drs_sin"), "__drs_sin");
        assert_eq!(sanitize("Diffuse.reflectance[0]", "buffer"), "Diffuse_reflectance_0");
        assert_eq!(sanitize("wo.x", "p"), "wo_x");
        assert_eq!(sanitize("si.p.x", "p"), "si_p_x");
        assert_eq!(sanitize("a__b", "p"), "a__b");
        assert_eq!(sanitize("0.x", "p"), "_0_x");
        assert_eq!(sanitize("", "p"), "p");
        assert_eq!(sanitize("_", "p"), "p");
        assert_eq!(sanitize("[]", "p"), "p");
    }

    #[test]
    fn fresh_names_are_distinct_and_not_reserved() {
        let mut n = Namer::default();
        assert_eq!(n.fresh("x"), "x");
        assert_eq!(n.fresh("x"), "x_2");
        assert_eq!(n.fresh("x"), "x_3");
        assert_eq!(n.fresh("self"), "self_");
        assert_eq!(n.fresh("self"), "self_2");
        assert_eq!(n.fresh("v12"), "v12_");
        assert_eq!(n.fresh("local3"), "local3_");
        assert_eq!(n.fresh("vec3"), "vec3_");
        assert_eq!(n.fresh("select"), "select_");
        assert_eq!(n.fresh("value"), "value");
        assert_eq!(n.fresh("v"), "v");
    }
}
