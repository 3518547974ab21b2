//! What a set of root functions needs: the module functions they call, transitively (callees
//! first, since that reads naturally), and the host functions and buffer operations used.

use crate::WriteError;
use drs_ir::{FuncId, Inst, Module, Op, Region};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How a buffer is used by the written functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BufferUse {
    pub(crate) load: bool,
    pub(crate) store: bool,
    pub(crate) atomic_add: bool,
}

pub(crate) struct Reach {
    /// Every function to write, each after the functions it calls.
    pub(crate) order: Vec<FuncId>,
    pub(crate) externs: BTreeSet<u32>,
    pub(crate) buffers: BTreeMap<u32, BufferUse>,
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    /// On the current call path.
    Open,
    Done,
}

/// Collects what `roots` need, verifying each function on the way (so that writing can
/// index values, functions, externs and buffers freely). Recursion is an error: the
/// language rejects it.
pub(crate) fn reach(module: &Module, roots: &[FuncId]) -> Result<Reach, WriteError> {
    let mut walk = Walk {
        module,
        marks: HashMap::new(),
        path: Vec::new(),
        reach: Reach { order: Vec::new(), externs: BTreeSet::new(), buffers: BTreeMap::new() },
    };
    for &root in roots {
        if root.0 as usize >= module.functions.len() {
            return Err(WriteError::UnknownFunction(root));
        }
        walk.visit(root)?;
    }
    Ok(walk.reach)
}

struct Walk<'m> {
    module: &'m Module,
    marks: HashMap<FuncId, Mark>,
    path: Vec<FuncId>,
    reach: Reach,
}

impl Walk<'_> {
    fn visit(&mut self, f: FuncId) -> Result<(), WriteError> {
        match self.marks.get(&f) {
            Some(Mark::Done) => return Ok(()),
            Some(Mark::Open) => {
                let start = self.path.iter().position(|&g| g == f).unwrap_or(0);
                let cycle = self.path[start..].iter().chain([&f]);
                let names = cycle.map(|&g| self.module.function(g).name.clone()).collect();
                return Err(WriteError::Recursion(names));
            }
            None => {}
        }
        let function = self.module.function(f);
        drs_ir::verify_function(self.module, function).map_err(WriteError::InvalidIr)?;
        self.marks.insert(f, Mark::Open);
        self.path.push(f);
        let mut callees = Vec::new();
        for_each_inst(&function.body, &mut |inst| match &inst.op {
            Op::Call(g, _) => callees.push(*g),
            Op::CallExtern(e, _) => {
                self.reach.externs.insert(*e);
            }
            Op::Load { buffer, .. } => self.reach.buffers.entry(*buffer).or_default().load = true,
            Op::Store { buffer, .. } => self.reach.buffers.entry(*buffer).or_default().store = true,
            Op::AtomicAdd { buffer, .. } => self.reach.buffers.entry(*buffer).or_default().atomic_add = true,
            _ => {}
        });
        for g in callees {
            self.visit(g)?;
        }
        self.path.pop();
        self.marks.insert(f, Mark::Done);
        self.reach.order.push(f);
        Ok(())
    }
}

/// Calls `visit` on every instruction of `region` and of the regions nested in it, in order.
pub(crate) fn for_each_inst<'r>(region: &'r Region, visit: &mut impl FnMut(&'r Inst)) {
    for inst in &region.insts {
        visit(inst);
        match &inst.op {
            Op::If { then, els, .. } => {
                for_each_inst(then, visit);
                for_each_inst(els, visit);
            }
            Op::Loop { body, .. } => for_each_inst(body, visit),
            _ => {}
        }
    }
}
