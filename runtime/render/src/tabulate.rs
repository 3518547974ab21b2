//! `@derived(tabulate, METHOD, N)` and `@derived(mean, METHOD, N)` tensors (spec/plugins.md §
//! Derived tensors): the runtime links the plugin's method `METHOD(x: f32) -> f32` as a kernel
//! of its own and evaluates it for every instance at N equally spaced x from 0 to 1; the
//! tensor holds those values, or their mean. It does so before every render and reverse pass,
//! from the params' values at that moment, so a table follows every change of the params it
//! is made from (as Mitsuba's plugins rebuild their tables when their parameters change); a
//! table costs N calls of its method per instance, far less than a pass.

use std::collections::BTreeMap;
use std::sync::Arc;

use drs_cranelift::{Buffer, Lanes, Options};
use drs_sema::program::FnId;

use crate::error::RenderError;
use crate::kernel::Kernel;
use crate::link::EntryMode;
use crate::params::TabulatedTensor;
use crate::scene::Scene;

/// The arguments of a tabulated method's kernel that make the tables of `instances`, `count`
/// entries each, column-major: each instance `count` times, then for each the points
/// i / (count - 1). The results are the tables back to back.
pub fn table_arguments(instances: &[u32], count: u32) -> Vec<u32> {
    let points = (0..count).map(|i| (i as f32 / (count - 1) as f32).to_bits());
    let mut args: Vec<u32> = instances.iter().flat_map(|&k| std::iter::repeat_n(k, count as usize)).collect();
    args.extend(instances.iter().flat_map(|_| points.clone()));
    args
}

/// The number of values of a tabulated tensor of `count` points: `count`, or 1 for `mean`.
pub fn tabulated_len(count: u32, mean: bool) -> u32 {
    if mean {
        1
    } else {
        count
    }
}

/// The data of a tabulated tensor from its method's `values` (f32 bits) at the points: the
/// values themselves, or for `mean` their mean (summed in f64) as the only element.
pub fn tabulated_data(values: &[u32], mean: bool) -> Vec<u32> {
    if !mean {
        return values.to_vec();
    }
    let sum: f64 = values.iter().map(|&v| f32::from_bits(v) as f64).sum();
    vec![((sum / values.len() as f64) as f32).to_bits()]
}

impl Scene {
    /// Computes the scene's `@derived(tabulate | mean, ..)` tensors from the current param
    /// values, compiling their methods on first use. [`Scene::render`] and
    /// [`Scene::backward`] call it first; call it to compile those kernels ahead of a pass.
    pub fn update_tables(&self) -> Result<(), RenderError> {
        let mut groups: BTreeMap<(FnId, u32), Vec<&TabulatedTensor>> = BTreeMap::new();
        for table in self.params.tables() {
            groups.entry((table.method, table.count)).or_default().push(table);
        }
        for ((method, count), tables) in groups {
            let kernel = self.table_kernel(method)?;
            let entry = kernel.jit.function_by_id(kernel.entry).map_err(|e| RenderError::Kernel(e.to_string()))?;
            let instances: Vec<u32> = tables.iter().map(|t| t.info.instance).collect();
            let args = table_arguments(&instances, count);
            let count = count as usize;
            let n = tables.len() * count;
            let mut results = vec![0u32; n];
            let buffers: Vec<Buffer> =
                kernel.buffers.iter().map(|name| Buffer::new(self.params.buffer(name))).collect();
            entry
                .call_batch(n, &args, &mut results, &buffers, &kernel.externs)
                .map_err(|e| RenderError::Kernel(e.to_string()))?;
            for (table, values) in tables.iter().zip(results.chunks_exact(count)) {
                self.params.store(&table.info, tabulated_data(values, table.mean));
            }
        }
        Ok(())
    }

    /// The kernel of a tabulated method, linked and compiled on first use.
    fn table_kernel(&self, method: FnId) -> Result<Arc<Kernel>, RenderError> {
        let mut kernels = self.table_kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kernels.get(&method) {
            return Ok(k.clone());
        }
        let kernel =
            Arc::new(self.link_and_compile(method, EntryMode::Primal, Options::new(Lanes::X4), &[false, false])?);
        kernels.insert(method, kernel.clone());
        Ok(kernel)
    }
}
