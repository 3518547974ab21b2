//! Syntactic facts about bodies that the lowering needs before it lowers them: which locals a
//! loop assigns (its carried values), which jumps it contains, whether an operand has effects.

use drs_sema::program::{BodyInfo, LocalId, Resolution};
use drs_syntax::ast::{Block, Expr, ExprKind, Stmt, StmtKind};
use std::collections::BTreeSet;

/// A node met by [`walk_block`], with its loop depth relative to the start of the walk
/// (0 outside any loop that the walked code contains).
pub(crate) enum Node<'a> {
    Stmt(&'a Stmt),
    Expr(&'a Expr),
}

pub(crate) fn walk_block<'a>(block: &'a Block, depth: u32, f: &mut dyn FnMut(Node<'a>, u32)) {
    for s in &block.stmts {
        walk_stmt(s, depth, f);
    }
    if let Some(tail) = &block.tail {
        walk_expr(tail, depth, f);
    }
}

pub(crate) fn walk_stmt<'a>(stmt: &'a Stmt, depth: u32, f: &mut dyn FnMut(Node<'a>, u32)) {
    f(Node::Stmt(stmt), depth);
    match &stmt.kind {
        StmtKind::Let { init, .. } => {
            if let Some(e) = init {
                walk_expr(e, depth, f);
            }
        }
        StmtKind::Assign { target, value, .. } => {
            walk_expr(target, depth, f);
            walk_expr(value, depth, f);
        }
        StmtKind::Expr { expr, .. } => walk_expr(expr, depth, f),
        StmtKind::Return(Some(e)) => walk_expr(e, depth, f),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => {}
    }
}

pub(crate) fn walk_expr<'a>(e: &'a Expr, depth: u32, f: &mut dyn FnMut(Node<'a>, u32)) {
    f(Node::Expr(e), depth);
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Path(_) | ExprKind::Derivative { .. } => {}
        ExprKind::Unary(_, x) | ExprKind::Field(x, _) | ExprKind::TupleIndex(x, ..) | ExprKind::ArrayRepeat(x, _) => {
            walk_expr(x, depth, f)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            walk_expr(a, depth, f);
            walk_expr(b, depth, f);
        }
        ExprKind::Call { callee, args } => {
            walk_expr(callee, depth, f);
            args.iter().for_each(|a| walk_expr(a, depth, f));
        }
        ExprKind::MethodCall { receiver, args, .. } => {
            walk_expr(receiver, depth, f);
            args.iter().for_each(|a| walk_expr(a, depth, f));
        }
        ExprKind::Tuple(elems) | ExprKind::Array(elems) => elems.iter().for_each(|a| walk_expr(a, depth, f)),
        ExprKind::StructLit { fields, .. } => fields.iter().for_each(|fi| walk_expr(&fi.value, depth, f)),
        ExprKind::Block(b) => walk_block(b, depth, f),
        ExprKind::If { cond, then, els } => {
            walk_expr(cond, depth, f);
            walk_block(then, depth, f);
            if let Some(els) = els {
                walk_expr(els, depth, f);
            }
        }
        ExprKind::Loop { body, .. } => walk_block(body, depth + 1, f),
        // The condition is evaluated by the loop but a jump in it belongs to the outer code.
        ExprKind::While { cond, body, .. } => {
            walk_expr(cond, depth, f);
            walk_block(body, depth + 1, f);
        }
        ExprKind::For { start, end, body, .. } => {
            walk_expr(start, depth, f);
            walk_expr(end, depth, f);
            walk_block(body, depth + 1, f);
        }
    }
}

/// The jumps in some code: `break`/`continue` that leave it at depth 0 (target the loop that
/// the code is the body of), and `return` anywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Jumps {
    pub(crate) breaks: bool,
    pub(crate) continues: bool,
    pub(crate) returns: bool,
}

impl Jumps {
    pub(crate) fn any(self) -> bool {
        self.breaks || self.continues || self.returns
    }

    fn note(&mut self, node: &Node<'_>, depth: u32) {
        if let Node::Stmt(s) = node {
            match s.kind {
                StmtKind::Break if depth == 0 => self.breaks = true,
                StmtKind::Continue if depth == 0 => self.continues = true,
                StmtKind::Return(_) => self.returns = true,
                _ => {}
            }
        }
    }
}

pub(crate) fn block_jumps(block: &Block) -> Jumps {
    let mut j = Jumps::default();
    walk_block(block, 0, &mut |n, d| j.note(&n, d));
    j
}

pub(crate) fn expr_jumps(e: &Expr) -> Jumps {
    let mut j = Jumps::default();
    walk_expr(e, 0, &mut |n, d| j.note(&n, d));
    j
}

/// A block in a function's tail position: its statements and the expression that gives its
/// value, which is a final `return`'s operand when the block ends with one.
pub(crate) fn tail_parts(block: &Block) -> (&[Stmt], Option<&Expr>) {
    match (block.stmts.split_last(), &block.tail) {
        (Some((Stmt { kind: StmtKind::Return(value), .. }, rest)), None) => (rest, value.as_ref()),
        _ => (&block.stmts[..], block.tail.as_deref()),
    }
}

/// `if c { ..; return e; }` (no `else`): in tail position the statements after it become its
/// `else` region. Gives the condition and the `then` block.
pub(crate) fn tail_returning_if(stmt: &Stmt) -> Option<(&Expr, &Block)> {
    match &stmt.kind {
        StmtKind::Expr { expr: Expr { kind: ExprKind::If { cond, then, els: None }, .. }, .. }
            if then.tail.is_none() && matches!(then.stmts.last(), Some(Stmt { kind: StmtKind::Return(_), .. })) =>
        {
            Some((cond, then))
        }
        _ => None,
    }
}

/// Whether a function body has a `return` that the tail-position lowering does not turn into a
/// branch value (see [`tail_parts`] and [`tail_returning_if`]), which then needs the `returned`
/// flag and return-value slots.
pub(crate) fn returns_outside_tail(body: &Block) -> bool {
    let (stmts, tail) = tail_parts(body);
    let stmt_returns = |stmt: &Stmt| match tail_returning_if(stmt) {
        Some((cond, then)) => expr_jumps(cond).returns || returns_outside_tail(then),
        None => {
            let mut j = Jumps::default();
            walk_stmt(stmt, 0, &mut |n, d| j.note(&n, d));
            j.returns
        }
    };
    stmts.iter().any(stmt_returns) || tail.is_some_and(|t| expr_jumps(t).returns)
}

/// The local at the root of an assignment target (`x` in `x.a[i].y = ..`).
pub(crate) fn place_root(info: &BodyInfo, target: &Expr) -> Option<LocalId> {
    match &target.kind {
        ExprKind::Path(_) => match info.resolutions.get(&target.id) {
            Some(Resolution::Local(l)) => Some(*l),
            _ => None,
        },
        ExprKind::Field(base, _) | ExprKind::TupleIndex(base, ..) | ExprKind::Index(base, _) => place_root(info, base),
        _ => None,
    }
}

/// The locals that some code assigns (whole or in part), anywhere in it.
pub(crate) fn assigned_locals<'a>(info: &BodyInfo, code: impl IntoIterator<Item = Code<'a>>) -> BTreeSet<LocalId> {
    let mut out = BTreeSet::new();
    let mut visit = |n: Node<'_>, _| {
        if let Node::Stmt(Stmt { kind: StmtKind::Assign { target, .. }, .. }) = n {
            if let Some(l) = place_root(info, target) {
                out.insert(l);
            }
        }
    };
    for c in code {
        match c {
            Code::Block(b) => walk_block(b, 0, &mut visit),
            Code::Expr(e) => walk_expr(e, 0, &mut visit),
        }
    }
    out
}

/// A piece of code to analyse.
#[derive(Clone, Copy)]
pub(crate) enum Code<'a> {
    Block(&'a Block),
    Expr(&'a Expr),
}

/// Whether evaluating `e` may have an effect other than producing its value: a call of a
/// user or extern function or of a plugin method, a loop, or a statement (an assignment or a
/// jump). Built-in functions, constructors, operators and tensor reads have none.
pub(crate) fn has_effects(info: &BodyInfo, e: &Expr) -> bool {
    let mut effects = false;
    walk_expr(e, 0, &mut |n, _| match n {
        Node::Stmt(_) => effects = true,
        Node::Expr(x) => match &x.kind {
            ExprKind::MethodCall { .. } if info.tensor_methods.contains_key(&x.id) => {}
            ExprKind::MethodCall { .. }
            | ExprKind::Loop { .. }
            | ExprKind::While { .. }
            | ExprKind::For { .. }
            | ExprKind::Derivative { .. } => effects = true,
            ExprKind::Call { callee, .. }
                if !matches!(
                    info.resolutions.get(&callee.id),
                    Some(Resolution::Builtin(_) | Resolution::Constructor(_))
                ) =>
            {
                effects = true
            }
            _ => {}
        },
    });
    effects
}
