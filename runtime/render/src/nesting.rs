//! Plugins that hold plugins of their own kind (`twosided`, `blendbsdf` and `mask` nest BSDFs)
//! make a linked kernel recursive: the dispatch of `bsdf::eval` calls `TwoSided::eval`, which
//! calls the dispatch again for its nested BSDF. Backends compile no recursion, and a scene's
//! nesting is finite, so the linker unrolls it: every function on a call cycle gets one copy
//! per nesting level, a call that closes a cycle (into the cycle's *head*, the function the
//! kernel's entry reaches first) goes one level deeper, and beyond the scene's deepest nesting
//! it reaches a stub that returns zeros, the results of the null instance. The language has no
//! recursion of its own, so every cycle runs through a dispatch and the levels are exactly the
//! nesting levels of plugin instances. Each level costs a copy of the nesting plugins'
//! methods, so the scene's real depth (usually 1) keeps kernels small.

use std::collections::{HashMap, HashSet};

use drs_ir::{Builder, Const, FuncId, Function, Module, Op, Signatures};
use drs_opt::util::{callees, walk_insts_mut};

/// `module` with its call cycles unrolled to `max_nesting` levels below the entry's: how deep
/// plugins nest in plugins of their own kind (`twosided` around `diffuse` is 1, `twosided`
/// around `blendbsdf` around `diffuse` 2). Function 0, the entry, stays first. A module
/// without cycles is returned as it is.
pub fn unroll_cycles(mut module: Module, max_nesting: usize) -> Module {
    let calls: Vec<Vec<FuncId>> = module.functions.iter().map(|f| callees(&f.body)).collect();
    let component = strongly_connected_components(&calls);
    let mut size = vec![0usize; calls.len()];
    for &c in &component {
        size[c] += 1;
    }
    let cyclic: Vec<bool> =
        (0..calls.len()).map(|f| size[component[f]] > 1 || calls[f].contains(&FuncId(f as u32))).collect();
    if !cyclic.contains(&true) {
        return module;
    }
    let heads = back_edge_targets(&calls, FuncId(0));
    let originals = module.functions.clone();

    // (function, level) -> its copy; level 0 is the function itself.
    let mut versions: HashMap<(FuncId, usize), FuncId> = HashMap::new();
    let mut stubs: HashMap<FuncId, FuncId> = HashMap::new();
    let mut pending: Vec<(FuncId, usize)> = Vec::new();
    for f in (0..calls.len()).filter(|&f| cyclic[f]) {
        let id = FuncId(f as u32);
        versions.insert((id, 0), id);
        pending.push((id, 0));
    }
    while let Some((f, level)) = pending.pop() {
        let this = versions[&(f, level)];
        let mut targets = HashMap::new();
        for &g in &calls[f.0 as usize] {
            let same_cycle = cyclic[g.0 as usize] && component[g.0 as usize] == component[f.0 as usize];
            if !same_cycle {
                continue;
            }
            let deeper = level + usize::from(heads.contains(&g));
            let target = if deeper > max_nesting {
                *stubs.entry(g).or_insert_with(|| module.add_function(null_stub(&originals[g.0 as usize])))
            } else {
                *versions.entry((g, deeper)).or_insert_with(|| {
                    let mut copy = originals[g.0 as usize].clone();
                    copy.name = format!("{}#{deeper}", copy.name);
                    pending.push((g, deeper));
                    module.add_function(copy)
                })
            };
            targets.insert(g, target);
        }
        walk_insts_mut(&mut module.function_mut(this).body, &mut |inst| {
            if let Op::Call(g, _) = &mut inst.op {
                if let Some(&t) = targets.get(g) {
                    *g = t;
                }
            }
        });
    }
    module
}

/// A function with `f`'s signature that returns zeros.
fn null_stub(f: &Function) -> Function {
    let mut stub = Function::new(format!("{}#null", f.name));
    for p in &f.params {
        let ty = f.value_types[p.value.0 as usize];
        stub.add_param(p.name.clone(), ty);
    }
    stub.result_types = f.result_types.clone();
    let signatures = Signatures::default();
    let mut b = Builder::new(&mut stub, &signatures);
    let zeros = f.result_types.iter().map(|&ty| b.konst(Const::from_bits(ty, 0))).collect();
    b.finish(zeros);
    stub
}

/// The component index of every function (Tarjan's algorithm, iterative).
fn strongly_connected_components(calls: &[Vec<FuncId>]) -> Vec<usize> {
    let n = calls.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut component = vec![usize::MAX; n];
    let mut next_index = 0;
    let mut components = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (function, position in its callee list)
        let mut frames = vec![(root, 0)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = frames.last_mut() {
            if let Some(&w) = calls[v].get(*k) {
                *k += 1;
                let w = w.0 as usize;
                if index[w] == usize::MAX {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = components;
                    if w == v {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    component
}

/// The functions that a depth-first walk of the calls from `entry` reaches again while they
/// are still being walked: every cycle runs through one of them.
fn back_edge_targets(calls: &[Vec<FuncId>], entry: FuncId) -> HashSet<FuncId> {
    let mut heads = HashSet::new();
    let mut state = vec![0u8; calls.len()]; // 0 unseen, 1 on the path, 2 done
    let mut frames = vec![(entry.0 as usize, 0)];
    state[entry.0 as usize] = 1;
    while let Some(&mut (v, ref mut k)) = frames.last_mut() {
        if let Some(&w) = calls[v].get(*k) {
            *k += 1;
            match state[w.0 as usize] {
                0 => {
                    state[w.0 as usize] = 1;
                    frames.push((w.0 as usize, 0));
                }
                1 => {
                    heads.insert(w);
                }
                _ => {}
            }
            continue;
        }
        state[v] = 2;
        frames.pop();
    }
    heads
}
