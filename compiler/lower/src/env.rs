//! The environment: the current SSA values of every local variable of the function being
//! lowered, and of the pseudo-locals the lowering adds (jump flags, return-value slots).
//!
//! A *slot* holds one variable. Assignments rebind a slot to new values; control flow
//! snapshots the environment before a branch and merges the slots that changed
//! (`control.rs`).

use drs_ir::{Ty, Value};

/// Index of a slot: the `LocalId` of a local, or a pseudo-local after all locals.
pub(crate) type SlotId = usize;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SlotState {
    /// Not in scope (not declared yet, or its block has ended).
    Undeclared,
    /// Declared by `var x;` and not assigned yet.
    Unassigned,
    Bound(Vec<Value>),
}

pub(crate) struct Env {
    /// The IR types of each slot's scalars.
    types: Vec<Vec<Ty>>,
    states: Vec<SlotState>,
}

/// The states of all slots at one point.
pub(crate) type Snapshot = Vec<SlotState>;

impl Env {
    /// An environment with one undeclared slot per local, of the given scalar types.
    pub(crate) fn new(local_types: Vec<Vec<Ty>>) -> Self {
        let states = vec![SlotState::Undeclared; local_types.len()];
        Env { types: local_types, states }
    }

    /// Adds a pseudo-local (undeclared until bound).
    pub(crate) fn add_slot(&mut self, types: Vec<Ty>) -> SlotId {
        self.types.push(types);
        self.states.push(SlotState::Undeclared);
        self.states.len() - 1
    }

    pub(crate) fn types(&self, slot: SlotId) -> &[Ty] {
        &self.types[slot]
    }

    pub(crate) fn state(&self, slot: SlotId) -> &SlotState {
        &self.states[slot]
    }

    pub(crate) fn values(&self, slot: SlotId) -> Option<&[Value]> {
        match &self.states[slot] {
            SlotState::Bound(v) => Some(v),
            _ => None,
        }
    }

    pub(crate) fn is_declared(&self, slot: SlotId) -> bool {
        self.states[slot] != SlotState::Undeclared
    }

    pub(crate) fn bind(&mut self, slot: SlotId, values: Vec<Value>) {
        debug_assert_eq!(values.len(), self.types[slot].len(), "slot {slot} bound to the wrong number of values");
        self.states[slot] = SlotState::Bound(values);
    }

    pub(crate) fn declare_unassigned(&mut self, slot: SlotId) {
        self.states[slot] = SlotState::Unassigned;
    }

    pub(crate) fn undeclare(&mut self, slot: SlotId) {
        self.states[slot] = SlotState::Undeclared;
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.states.clone()
    }

    /// Returns to a snapshot; slots added since are undeclared.
    pub(crate) fn restore(&mut self, snapshot: &Snapshot) {
        self.states.clone_from(snapshot);
        self.states.resize(self.types.len(), SlotState::Undeclared);
    }
}
