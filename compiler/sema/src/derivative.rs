//! The types of derivatives: which types carry derivatives, and the signatures of
//! `fwd_diff(f)` and `bwd_diff(f)` (also required of `@custom_fwd` / `@custom_bwd` functions).

use crate::program::{FnId, Program, Signature};
use crate::types::{Scalar, Type};
use drs_syntax::ast::DiffMode;

impl Program {
    /// f32, float vectors, Color, matrices, and aggregates with at least one such component.
    pub fn is_differentiable(&self, ty: &Type) -> bool {
        match ty {
            Type::Scalar(Scalar::F32) | Type::Vector(Scalar::F32, _) | Type::Color | Type::Matrix(_) => true,
            Type::Tuple(elems) => elems.iter().any(|t| self.is_differentiable(t)),
            Type::Array(elem, _) => self.is_differentiable(elem),
            Type::Struct(s) => self.structs[*s].fields.iter().any(|(_, t)| self.is_differentiable(t)),
            _ => false,
        }
    }
}

/// The signature of `fwd_diff(f)` or `bwd_diff(f)`, or why `f` has no derivative.
///
/// Forward: the primal arguments, then one tangent per differentiable parameter (not
/// `@no_diff`), returning `(y, dy)`. Reverse: the primal arguments and the adjoint of the
/// result, returning the parameters' adjoints (bare when there is one, else a tuple).
pub fn derivative_signature(program: &Program, f: FnId, mode: DiffMode) -> Result<Signature, String> {
    let def = &program.functions[f];
    if !program.is_differentiable(&def.ret) {
        return Err(format!("its result type `{}` carries no derivative", program.show(&def.ret)));
    }
    let primal: Vec<Type> = def.params.iter().map(|p| p.ty.clone()).collect();
    let differentiable: Vec<Type> =
        def.params.iter().filter(|p| !p.no_diff && program.is_differentiable(&p.ty)).map(|p| p.ty.clone()).collect();
    if differentiable.is_empty() {
        return Err("it has no differentiable parameter".to_string());
    }
    Ok(match mode {
        DiffMode::Fwd => {
            let mut params = primal;
            params.extend(differentiable);
            Signature { params, ret: Type::Tuple(vec![def.ret.clone(), def.ret.clone()]) }
        }
        DiffMode::Bwd => {
            let mut params = primal;
            params.push(def.ret.clone());
            let ret = if differentiable.len() == 1 {
                differentiable.into_iter().next().unwrap_or(Type::Error)
            } else {
                Type::Tuple(differentiable)
            };
            Signature { params, ret }
        }
    })
}

/// `(f32, vec3) -> Color`, for messages.
pub fn signature_text(program: &Program, sig: &Signature) -> String {
    let params: Vec<String> = sig.params.iter().map(|t| program.show(t)).collect();
    if sig.ret.is_unit() {
        format!("({})", params.join(", "))
    } else {
        format!("({}) -> {}", params.join(", "), program.show(&sig.ret))
    }
}
