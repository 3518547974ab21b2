//! Typing of the built-in functions and of constructors of built-in types
//! (spec/builtins.md lists them).

use crate::program::Program;
use crate::types::{Scalar, Type};
use drs_diagnostics::{Code, Diagnostic, Span};

/// An argument as the checker saw it.
pub struct Arg {
    pub ty: Type,
    pub span: Span,
}

/// Elementwise float functions of one argument: `T -> T` for f32, float vectors and Color.
const FLOAT_UNARY: &[&str] = &[
    "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2", "log", "log2",
    "floor", "ceil", "round", "trunc", "fract", "saturate",
];

pub const ALL: &[&str] = &[
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "exp",
    "exp2",
    "log",
    "log2",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "saturate",
    "abs",
    "sign",
    "atan2",
    "pow",
    "step",
    "min",
    "max",
    "clamp",
    "lerp",
    "smoothstep",
    "fma",
    "isnan",
    "isinf",
    "isfinite",
    "select",
    "dot",
    "length",
    "length_squared",
    "distance",
    "normalize",
    "cross",
    "reflect",
    "refract",
    "transpose",
    "determinant",
    "inverse",
    "to_bits",
    "from_bits",
    "detach",
    "replace_grad",
];

pub fn is_builtin(name: &str) -> bool {
    ALL.contains(&name)
}

fn is_float_elementwise(t: &Type) -> bool {
    matches!(t, Type::Scalar(Scalar::F32) | Type::Vector(Scalar::F32, _) | Type::Color)
}

fn is_signed_elementwise(t: &Type) -> bool {
    is_float_elementwise(t) || matches!(t, Type::Scalar(Scalar::I32) | Type::Vector(Scalar::I32, _))
}

fn is_numeric_elementwise(t: &Type) -> bool {
    is_float_elementwise(t) || t.is_integer_valued()
}

fn is_float_vector(t: &Type) -> bool {
    matches!(t, Type::Vector(Scalar::F32, _))
}

/// Checks a call of built-in `name` and returns its result type.
pub fn check_call(program: &Program, name: &str, args: &[Arg], span: Span) -> Result<Type, Diagnostic> {
    let show = |t: &Type| program.show(t);
    let arity = |n: usize| -> Result<(), Diagnostic> {
        if args.len() == n {
            Ok(())
        } else {
            Err(Diagnostic::new(
                Code::ArgumentCount,
                span,
                format!("`{name}` takes {n} argument{}, {} given", if n == 1 { "" } else { "s" }, args.len()),
            )
            .with_label(format!("expected {n}")))
        }
    };
    // Any Error argument: the mistake was reported already.
    if args.iter().any(|a| a.ty.is_error()) {
        return Ok(fallback_result(name, args));
    }
    let want = |arg: &Arg, what: &str| -> Diagnostic {
        let mut d = Diagnostic::new(
            Code::TypeMismatch,
            arg.span,
            format!("`{name}` expects {what}, found `{}`", show(&arg.ty)),
        )
        .with_label(format!("expected {what}"));
        if arg.ty.is_integer_valued() && what.contains("f32") {
            d.code = Code::IntFloatMix;
            d = d.with_help("convert explicitly, e.g. `f32(x)`, or write a float literal such as `2.0`");
        }
        d
    };
    let same = |a: &Arg, b: &Arg| -> Result<(), Diagnostic> {
        if b.ty.fits(&a.ty) {
            Ok(())
        } else {
            let mut d = Diagnostic::new(
                Code::TypeMismatch,
                b.span,
                format!("`{name}` expects arguments of the same type, found `{}` and `{}`", show(&a.ty), show(&b.ty)),
            )
            .with_label(format!("expected `{}`", show(&a.ty)));
            if a.ty.element_scalar().is_some_and(|s| s == Scalar::F32)
                != b.ty.element_scalar().is_some_and(|s| s == Scalar::F32)
                && a.ty.element_scalar().is_some_and(Scalar::is_numeric)
                && b.ty.element_scalar().is_some_and(Scalar::is_numeric)
            {
                d.code = Code::IntFloatMix;
                d = d.with_help("integers and floats do not mix implicitly: convert with `f32(..)` or write `2.0`");
            }
            Err(d)
        }
    };
    // A T argument, or an f32 scalar when T is float-valued (for lerp's t, clamp's bounds, ...).
    let same_or_scalar = |a: &Arg, b: &Arg| -> Result<(), Diagnostic> {
        match a.ty.element_scalar() {
            Some(s) if b.ty == Type::Scalar(s) => Ok(()),
            _ => same(a, b),
        }
    };
    match name {
        n if FLOAT_UNARY.contains(&n) => {
            arity(1)?;
            if is_float_elementwise(&args[0].ty) {
                Ok(args[0].ty.clone())
            } else {
                Err(want(&args[0], "f32, a float vector or Color"))
            }
        }
        "abs" => {
            arity(1)?;
            if is_numeric_elementwise(&args[0].ty) {
                Ok(args[0].ty.clone())
            } else {
                Err(want(&args[0], "a number, vector or Color"))
            }
        }
        "sign" => {
            arity(1)?;
            if is_signed_elementwise(&args[0].ty) {
                Ok(args[0].ty.clone())
            } else {
                Err(want(&args[0], "a signed number or vector"))
            }
        }
        "atan2" | "pow" | "step" => {
            arity(2)?;
            if !is_float_elementwise(&args[0].ty) {
                return Err(want(&args[0], "f32, a float vector or Color"));
            }
            same(&args[0], &args[1])?;
            Ok(args[0].ty.clone())
        }
        "min" | "max" => {
            arity(2)?;
            if !is_numeric_elementwise(&args[0].ty) {
                return Err(want(&args[0], "a number, vector or Color"));
            }
            same(&args[0], &args[1])?;
            Ok(args[0].ty.clone())
        }
        "clamp" => {
            arity(3)?;
            if !is_numeric_elementwise(&args[0].ty) {
                return Err(want(&args[0], "a number, vector or Color"));
            }
            same_or_scalar(&args[0], &args[1])?;
            same_or_scalar(&args[0], &args[2])?;
            Ok(args[0].ty.clone())
        }
        "lerp" | "fma" => {
            arity(3)?;
            if !is_float_elementwise(&args[0].ty) {
                return Err(want(&args[0], "f32, a float vector or Color"));
            }
            same(&args[0], &args[1])?;
            if name == "lerp" {
                same_or_scalar(&args[0], &args[2])?;
            } else {
                same(&args[0], &args[2])?;
            }
            Ok(args[0].ty.clone())
        }
        "smoothstep" => {
            arity(3)?;
            if !is_float_elementwise(&args[2].ty) {
                return Err(want(&args[2], "f32, a float vector or Color"));
            }
            same_or_scalar(&args[2], &args[0])?;
            same_or_scalar(&args[2], &args[1])?;
            Ok(args[2].ty.clone())
        }
        "isnan" | "isinf" | "isfinite" => {
            arity(1)?;
            if args[0].ty == Type::F32 {
                Ok(Type::BOOL)
            } else {
                Err(want(&args[0], "f32"))
            }
        }
        "select" => {
            arity(3)?;
            if args[0].ty != Type::BOOL {
                return Err(want(&args[0], "a bool condition"));
            }
            same(&args[1], &args[2])?;
            Ok(args[1].ty.clone())
        }
        "dot" | "distance" => {
            arity(2)?;
            if !is_float_vector(&args[0].ty) {
                return Err(want(&args[0], "a float vector"));
            }
            same(&args[0], &args[1])?;
            Ok(Type::F32)
        }
        "length" | "length_squared" | "normalize" => {
            arity(1)?;
            if !is_float_vector(&args[0].ty) {
                return Err(want(&args[0], "a float vector"));
            }
            Ok(if name == "normalize" { args[0].ty.clone() } else { Type::F32 })
        }
        "cross" | "reflect" => {
            arity(2)?;
            for a in args {
                if a.ty != Type::Vector(Scalar::F32, 3) {
                    return Err(want(a, "vec3"));
                }
            }
            Ok(Type::Vector(Scalar::F32, 3))
        }
        "refract" => {
            arity(3)?;
            for a in &args[..2] {
                if a.ty != Type::Vector(Scalar::F32, 3) {
                    return Err(want(a, "vec3"));
                }
            }
            if args[2].ty != Type::F32 {
                return Err(want(&args[2], "an f32 ratio of indices of refraction"));
            }
            Ok(Type::Vector(Scalar::F32, 3))
        }
        "transpose" | "inverse" | "determinant" => {
            arity(1)?;
            if !matches!(args[0].ty, Type::Matrix(_)) {
                return Err(want(&args[0], "mat3 or mat4"));
            }
            Ok(if name == "determinant" { Type::F32 } else { args[0].ty.clone() })
        }
        "to_bits" => {
            arity(1)?;
            if args[0].ty != Type::F32 {
                return Err(want(&args[0], "f32"));
            }
            Ok(Type::U32)
        }
        "from_bits" => {
            arity(1)?;
            if args[0].ty != Type::U32 {
                return Err(want(&args[0], "u32"));
            }
            Ok(Type::F32)
        }
        "detach" | "replace_grad" => {
            arity(if name == "detach" { 1 } else { 2 })?;
            if !program.is_differentiable(&args[0].ty) {
                return Err(Diagnostic::new(
                    Code::NotDifferentiable,
                    args[0].span,
                    format!("`{name}` of a `{}`, which carries no derivative", show(&args[0].ty)),
                )
                .with_label("not differentiable")
                .with_help("derivatives flow through f32, float vectors, Color, matrices and aggregates of them"));
            }
            if name == "replace_grad" {
                same(&args[0], &args[1])?;
            }
            Ok(args[0].ty.clone())
        }
        _ => unreachable!("`{name}` is listed as a built-in but has no typing rule"),
    }
}

/// The result type to continue with when an argument already had an error.
fn fallback_result(name: &str, args: &[Arg]) -> Type {
    match name {
        "isnan" | "isinf" | "isfinite" => Type::BOOL,
        "dot" | "distance" | "length" | "length_squared" | "determinant" | "from_bits" => Type::F32,
        "to_bits" => Type::U32,
        "select" => args.get(1).map_or(Type::Error, |a| a.ty.clone()),
        "smoothstep" => args.get(2).map_or(Type::Error, |a| a.ty.clone()),
        _ => args.first().map_or(Type::Error, |a| a.ty.clone()),
    }
}

/// Checks `T(args)` for a built-in type T: conversions, splats, and assembling vectors,
/// colours and matrices.
pub fn check_constructor(program: &Program, target: &Type, args: &[Arg], span: Span) -> Result<(), Diagnostic> {
    if args.iter().any(|a| a.ty.is_error()) {
        return Ok(());
    }
    let show = |t: &Type| program.show(t);
    let target_name = show(target);
    let bad = |msg: String| {
        Diagnostic::new(Code::InvalidConstructor, span, msg)
            .with_label(format!("cannot build a `{target_name}` from these arguments"))
    };
    let conversion_error = |from: &Type| {
        let help = if from.element_scalar() == Some(Scalar::Bool) {
            "conversions exist between f32, i32 and u32 (and vectors of the same size); turn a bool into a number with `select(b, 1.0, 0.0)`"
        } else {
            "conversions exist between f32, i32 and u32 (and vectors of the same size); compare to get a bool, e.g. `x != 0.0`"
        };
        Diagnostic::new(Code::InvalidConversion, span, format!("cannot convert `{}` to `{target_name}`", show(from)))
            .with_label("no such conversion")
            .with_help(help)
    };
    match target {
        Type::Scalar(to) => {
            let [arg] = args else { return Err(bad(format!("`{target_name}(..)` takes one argument"))) };
            match &arg.ty {
                Type::Scalar(from) if from.is_numeric() && to.is_numeric() => Ok(()),
                Type::Scalar(from) if from == to => Ok(()),
                other => Err(conversion_error(other)),
            }
        }
        Type::Vector(elem, n) => {
            if let [arg] = args {
                match &arg.ty {
                    // Splat.
                    Type::Scalar(s) if s == elem => return Ok(()),
                    // Elementwise conversion.
                    Type::Vector(s, m) if m == n && (s == elem || (s.is_numeric() && elem.is_numeric())) => {
                        return Ok(())
                    }
                    Type::Color if *n == 3 && *elem == Scalar::F32 => return Ok(()),
                    Type::Vector(_, m) if m == n => return Err(conversion_error(&arg.ty)),
                    _ => {}
                }
            }
            let mut count = 0;
            for arg in args {
                match &arg.ty {
                    Type::Scalar(s) if s == elem => count += 1,
                    Type::Vector(s, m) if s == elem => count += *m as usize,
                    other => {
                        let mut d = Diagnostic::new(
                            Code::InvalidConstructor,
                            arg.span,
                            format!(
                                "`{target_name}` is built from `{}` values and vectors, found `{}`",
                                elem.name(),
                                show(other)
                            ),
                        )
                        .with_label(format!(
                            "expected `{}` or a `{}` vector",
                            elem.name(),
                            elem.name()
                        ));
                        if other.element_scalar().is_some_and(|s| s.is_numeric()) && elem.is_numeric() {
                            d.code = Code::IntFloatMix;
                            d = d.with_help(format!("convert explicitly, e.g. `{}(x)`", elem.name()));
                        }
                        return Err(d);
                    }
                }
            }
            if count == *n as usize {
                Ok(())
            } else {
                Err(bad(format!("`{target_name}` needs {n} components, {count} given")))
            }
        }
        Type::Color => match args {
            [a] if a.ty == Type::F32 || a.ty == Type::Vector(Scalar::F32, 3) || a.ty == Type::Color => Ok(()),
            [a, b, c] if [a, b, c].iter().all(|x| x.ty == Type::F32) => Ok(()),
            _ => {
                let found: Vec<String> = args.iter().map(|a| show(&a.ty)).collect();
                let mut d =
                    bad(format!("`Color` takes (f32), (f32, f32, f32) or (vec3), found ({})", found.join(", ")));
                if matches!(args.len(), 1 | 3) && args.iter().any(|a| a.ty.is_integer_valued()) {
                    // Right shape, but integers where channels are f32.
                    d.code = Code::IntFloatMix;
                    d = d.with_help("integer values need an explicit `f32(..)`; write literals as `1.0`");
                }
                Err(d)
            }
        },
        Type::Matrix(n) => match args {
            [a] if a.ty == Type::F32 => Ok(()),
            [a] if a.ty == Type::Matrix(3) || a.ty == Type::Matrix(4) => Ok(()),
            cols if cols.len() == *n as usize && cols.iter().all(|c| c.ty == Type::Vector(Scalar::F32, *n)) => Ok(()),
            _ => Err(bad(format!(
                "`mat{n}` takes one f32 (a multiple of the identity), a matrix, or {n} `vec{n}` columns"
            ))),
        },
        _ => Err(bad(format!("`{target_name}` has no constructor"))),
    }
}
