//! Calls: of functions and methods with bodies (`Call`), of `extern fn`s (`CallExtern`), of
//! plugin methods (with the instance as hidden first argument), and through plugin
//! references and textures (`CallExtern` of `{kind}::{method}` with the handle first, which
//! the runtime linker replaces with a dispatch on the instance's plugin type).

use crate::func::{FnLowerer, LResult};
use crate::layout::flat_types;
use drs_ir::{FuncId, Ty, Value};
use drs_sema::program::{FnId, FnOwner, Resolution};
use drs_sema::types::Type;
use drs_syntax::ast::{DiffMode, Expr, ExprKind, Ident};

#[derive(Clone, Copy)]
enum Callee {
    Function(FuncId),
    Extern(u32),
}

impl FnLowerer<'_, '_> {
    pub(crate) fn call_expr(&mut self, e: &Expr, callee: &Expr, args: &[Expr]) -> LResult<Vec<Value>> {
        if let ExprKind::Derivative { mode, .. } = callee.kind {
            return self.derivative_call(e, callee, mode, args);
        }
        match self.info.resolutions.get(&callee.id) {
            Some(Resolution::Fn(f)) => {
                let f = *f;
                let mut values = Vec::new();
                for a in args {
                    values.extend(self.lower_expr(a)?);
                }
                self.call_fn(f, values, e)
            }
            Some(Resolution::Builtin(name)) => self.builtin_call(e, name, args),
            Some(Resolution::Constructor(ty)) => self.constructor(e, ty, args),
            _ => Err(self.internal(callee.span, "a call of something that is not a function")),
        }
    }

    /// `fwd_diff(f)(args)` / `bwd_diff(f)(args)`: a call of `f`'s custom derivative when it has
    /// one, else of the derivative the autodiff generates after all functions are lowered.
    fn derivative_call(&mut self, e: &Expr, callee: &Expr, mode: DiffMode, args: &[Expr]) -> LResult<Vec<Value>> {
        let Some(Resolution::Fn(f)) = self.info.resolutions.get(&callee.id) else {
            return Err(self.internal(callee.span, "an unresolved derivative"));
        };
        let f = *f;
        let mut values = Vec::new();
        for a in args {
            values.extend(self.lower_expr(a)?);
        }
        let def = &self.program.functions[f];
        let custom = match mode {
            DiffMode::Fwd => def.custom_fwd,
            DiffMode::Bwd => def.custom_bwd,
        };
        if let Some(g) = custom {
            return self.call_fn(g, values, e);
        }
        if let FnOwner::Plugin(p) = def.owner {
            match self.plugin {
                Some((q, instance)) if q == p => values.insert(0, instance),
                _ => return Err(self.internal(e.span, "a plugin method differentiated from outside its plugin")),
            }
        }
        let results = self.tys(self.ty_of(e)?);
        let id = self.m.derivative_id(f, mode);
        self.emit_call(Callee::Function(id), values, results)
    }

    /// `x.m(args)`: the receiver is the first argument.
    pub(crate) fn method_call(
        &mut self,
        e: &Expr,
        receiver: &Expr,
        method: &Ident,
        args: &[Expr],
    ) -> LResult<Vec<Value>> {
        if let Some(&m) = self.info.tensor_methods.get(&e.id) {
            let [index] = args else { return Err(self.internal(e.span, "a tensor method without one argument")) };
            return self.tensor_method(m, receiver, index);
        }
        let f =
            *self.info.method_targets.get(&e.id).ok_or_else(|| self.internal(method.span, "an unresolved method"))?;
        let receiver_ty = self.ty_of(receiver)?;
        let mut values = self.lower_expr(receiver)?;
        for a in args {
            values.extend(self.lower_expr(a)?);
        }
        let program = self.program;
        let def = &program.functions[f];
        let FnOwner::Interface(kind) = def.owner else { return self.call_fn(f, values, e) };
        // Through a plugin reference or a texture: `Texture<f32>.eval` is the interface's
        // `eval_1`.
        let name = match receiver_ty {
            Type::Texture(value) if def.name == "eval" && **value == Type::F32 => "eval_1",
            _ => def.name.as_str(),
        };
        let mut params = vec![Ty::U32];
        for p in &def.params {
            params.extend(flat_types(program, &p.ty));
        }
        let results = self.tys(self.ty_of(e)?);
        let ext = self
            .m
            .extern_id(&format!("{}::{name}", kind.keyword()), params, results.clone())
            .map_err(|m| self.internal(method.span, m))?;
        self.emit_call(Callee::Extern(ext), values, results)
    }

    /// Calls `.drs` function `f` with flattened arguments.
    fn call_fn(&mut self, f: FnId, mut args: Vec<Value>, e: &Expr) -> LResult<Vec<Value>> {
        let def = &self.program.functions[f];
        let results = self.tys(&def.ret);
        if def.is_extern {
            let ext = *self.m.fn_externs.get(&f).ok_or_else(|| self.internal(e.span, "an undeclared extern"))?;
            return self.emit_call(Callee::Extern(ext), args, results);
        }
        if let FnOwner::Plugin(p) = def.owner {
            // A sibling method: the same instance.
            match self.plugin {
                Some((q, instance)) if q == p => args.insert(0, instance),
                _ => return Err(self.internal(e.span, "a plugin method called from outside its plugin")),
            }
        }
        let id = *self.m.fn_ids.get(&f).ok_or_else(|| self.internal(e.span, "a call of a function without body"))?;
        self.emit_call(Callee::Function(id), args, results)
    }

    fn emit_call(&mut self, callee: Callee, args: Vec<Value>, results: Vec<Ty>) -> LResult<Vec<Value>> {
        if self.maybe_jumped {
            // In the middle of an expression after a jump: a call may have effects (or not
            // terminate on the values computed after the jump), so it runs only if none
            // happened.
            let tys = results.clone();
            return self.guarded(&tys, move |lw| Ok(lw.emit_call_now(callee, args, &results)));
        }
        Ok(self.emit_call_now(callee, args, &results))
    }

    fn emit_call_now(&mut self, callee: Callee, args: Vec<Value>, results: &[Ty]) -> Vec<Value> {
        match callee {
            Callee::Function(f) => self.e.call(f, args, results),
            Callee::Extern(x) => self.e.call_extern(x, args, results),
        }
    }
}
