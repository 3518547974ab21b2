//! Scene parameters: the values of every plugin instance's params, stored in the buffers the
//! kernel reads (`{Plugin}.{param}[k]`, one element per instance), with Mitsuba-style keys
//! (`red.reflectance.value`) for reading and writing them between renders. A `Tensor` param
//! keeps every instance's data back to back in one buffer `{Plugin}.{param}`, with per-instance
//! offset and shape buffers (`drs_lower::TENSOR_BUFFERS`).

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use drs_lower::layout::{HostValue, Layout};
use drs_sema::program::{Derivation, FnId};

use crate::derive::derive;

/// One scene parameter (one param of one plugin instance).
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// Mitsuba-style key: the object's id (or its place in the scene) and the param name.
    pub key: String,
    pub layout: Layout,
    /// Whether derivatives with respect to it are computed (a differentiable param type and
    /// not `@no_diff`).
    pub differentiable: bool,
    /// The buffers holding its scalars and the instance's element in them. For a tensor, the
    /// data buffer alone: its elements are those of [`ParamStore::elements`].
    pub(crate) buffers: Vec<String>,
    pub(crate) instance: u32,
    /// For a `Tensor` param: its offset and shape buffers.
    pub(crate) tensor: Option<TensorBuffers>,
}

/// The per-instance buffers of a `Tensor` param: the offset of its first element in the data
/// buffer and its three dimensions.
#[derive(Clone, Debug)]
pub(crate) struct TensorBuffers {
    pub(crate) offset: String,
    pub(crate) shape: [String; 3],
}

/// The value of a `Tensor` param (Mitsuba's `TensorXf`): its shape (height, width, channels)
/// and its elements, row-major (`(y * width + x) * channels + c`).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorValue {
    shape: [u32; 3],
    data: Vec<f32>,
}

impl TensorValue {
    /// A tensor of `shape` (missing trailing dimensions are 1: `[n, 1, 1]` is a list of `n`);
    /// `data` must have one element per entry of the shape, and at least one.
    pub fn new(shape: [u32; 3], data: Vec<f32>) -> Result<TensorValue, String> {
        let len = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).filter(|&n| n <= u32::MAX as u64);
        match len {
            Some(0) => Err(format!("a tensor of shape {shape:?} is empty; tensors have at least one element")),
            Some(n) if n == data.len() as u64 => Ok(TensorValue { shape, data }),
            Some(n) => Err(format!("shape {shape:?} has {n} elements but {} values are given", data.len())),
            None => Err(format!("a tensor of shape {shape:?} is too large")),
        }
    }

    pub fn shape(&self) -> [u32; 3] {
        self.shape
    }

    pub fn data(&self) -> &[f32] {
        &self.data
    }
}

/// A parameter that cannot be set.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    #[error("the scene has no parameter `{0}`")]
    Unknown(String),
    #[error("parameter `{key}`: {message}")]
    Value { key: String, message: String },
}

/// All parameter buffers of a scene, by name, and the keyed parameters.
#[derive(Default)]
pub struct ParamStore {
    buffers: HashMap<String, Vec<AtomicU32>>,
    params: Vec<ParamInfo>,
    /// Keys of the parameters whose gradients the reverse pass reports.
    grad_enabled: Vec<String>,
    /// The `@derived` tensors, recomputed whenever their source changes. They are not scene
    /// parameters: neither listed nor settable.
    derived: Vec<DerivedTensor>,
    /// The `@derived(tabulate | mean, ..)` tensors, which the scene's kernels compute before
    /// every pass (`tabulate.rs`). Not scene parameters either.
    tables: Vec<TabulatedTensor>,
}

/// A `@derived` `Tensor` param of one instance and the key of the tensor it is computed from.
struct DerivedTensor {
    info: ParamInfo,
    source: String,
    derivation: Derivation,
}

/// A `@derived(tabulate | mean, METHOD, N)` `Tensor` param of one instance: `count` values of
/// the plugin method `method` for that instance, or with `mean` their mean.
pub(crate) struct TabulatedTensor {
    pub(crate) info: ParamInfo,
    pub(crate) method: FnId,
    pub(crate) count: u32,
    pub(crate) mean: bool,
}

impl ParamStore {
    /// Writes the scalars of instance `instance` into the buffers `names`, growing them.
    pub(crate) fn write(&mut self, names: &[String], instance: u32, bits: &[u32]) {
        for (name, &b) in names.iter().zip(bits) {
            let buffer = self.buffers.entry(name.clone()).or_default();
            while buffer.len() <= instance as usize {
                buffer.push(AtomicU32::new(0));
            }
            buffer[instance as usize].store(b, Ordering::Relaxed);
        }
    }

    /// Makes `bits` the whole content of buffer `name` (scene data kernels read, not a parameter).
    pub(crate) fn set_buffer(&mut self, name: &str, bits: Vec<u32>) {
        self.buffers.insert(name.to_owned(), bits.into_iter().map(AtomicU32::new).collect());
    }

    pub(crate) fn add(&mut self, info: ParamInfo) {
        self.params.push(info);
    }

    /// Adds a `Tensor` parameter (its `tensor` buffers set) with its first value, placed after
    /// the data of the instances added before.
    pub(crate) fn add_tensor(&mut self, info: ParamInfo, value: &TensorValue) -> Result<(), ParamError> {
        let slots = info.tensor.as_ref().ok_or_else(|| not_a_tensor(&info))?;
        let data = self.buffers.entry(info.buffers[0].clone()).or_default();
        let offset = u32::try_from(data.len())
            .ok()
            .filter(|o| o.checked_add(value.data.len() as u32).is_some())
            .ok_or_else(|| ParamError::Value { key: info.key.clone(), message: "too much tensor data".into() })?;
        data.extend(value.data.iter().map(|v| AtomicU32::new(v.to_bits())));
        let names: Vec<String> = std::iter::once(slots.offset.clone()).chain(slots.shape.iter().cloned()).collect();
        let [h, w, c] = value.shape;
        self.write(&names, info.instance, &[offset, h, w, c]);
        self.params.push(info);
        Ok(())
    }

    /// Adds the `@derived` tensor param `info`, computed from the tensor param `source` (added
    /// before) and recomputed whenever that changes.
    pub(crate) fn add_derived(
        &mut self,
        info: ParamInfo,
        source: &str,
        derivation: &Derivation,
    ) -> Result<(), ParamError> {
        let value = derive(derivation, &self.tensor(source)?)
            .map_err(|message| ParamError::Value { key: source.to_owned(), message })?;
        self.add_tensor(info, &value)?;
        let info = self.params.pop().expect("add_tensor added it");
        self.derived.push(DerivedTensor { info, source: source.to_owned(), derivation: derivation.clone() });
        Ok(())
    }

    /// Adds the `@derived(tabulate | mean, ..)` tensor param `info` of `count` values of
    /// `method` (or their mean), zeros until the scene's kernels compute them.
    pub(crate) fn add_table(
        &mut self,
        info: ParamInfo,
        method: FnId,
        count: u32,
        mean: bool,
    ) -> Result<(), ParamError> {
        let len = crate::tabulate::tabulated_len(count, mean);
        let zeros = TensorValue::new([len, 1, 1], vec![0.0; len as usize])
            .map_err(|message| ParamError::Value { key: info.key.clone(), message })?;
        self.add_tensor(info, &zeros)?;
        let info = self.params.pop().expect("add_tensor added it");
        self.tables.push(TabulatedTensor { info, method, count, mean });
        Ok(())
    }

    pub(crate) fn tables(&self) -> &[TabulatedTensor] {
        &self.tables
    }

    /// Overwrites the elements of `info` (a scalar param's scalars or a tensor's data, in the
    /// order of [`Self::elements`]) with `bits`. The buffers are atomic, so `&self` suffices
    /// where the size stays the same, as for the tables made before a pass.
    pub(crate) fn store(&self, info: &ParamInfo, bits: impl IntoIterator<Item = u32>) {
        for ((buffer, index), b) in self.elements(info).into_iter().zip(bits) {
            if let Some(slot) = self.buffers.get(buffer).and_then(|b| b.get(index)) {
                slot.store(b, Ordering::Relaxed);
            }
        }
    }

    /// The new values of the tensors derived from `source` if it took the value `value`.
    fn rederive(&self, source: &str, value: &TensorValue) -> Result<Vec<(ParamInfo, TensorValue)>, ParamError> {
        self.derived
            .iter()
            .filter(|d| d.source == source)
            .map(|d| {
                let derived = derive(&d.derivation, value)
                    .map_err(|message| ParamError::Value { key: source.to_owned(), message })?;
                Ok((d.info.clone(), derived))
            })
            .collect()
    }

    /// The tensor parameter `key`'s data and shape.
    pub fn tensor(&self, key: &str) -> Result<TensorValue, ParamError> {
        let info = self.find(key)?;
        let shape = self.tensor_shape(key)?;
        let data = self.elements(info).iter().map(|&(b, i)| f32::from_bits(self.load(b, i))).collect();
        Ok(TensorValue { shape, data })
    }

    /// The tensor parameter `key`'s shape (height, width, channels).
    pub fn tensor_shape(&self, key: &str) -> Result<[u32; 3], ParamError> {
        let info = self.find(key)?;
        let slots = info.tensor.as_ref().ok_or_else(|| not_a_tensor(info))?;
        Ok(slots.shape.clone().map(|b| self.load(&b, info.instance as usize)))
    }

    /// Replaces the tensor parameter `key`'s data and shape (the shape may change; the other
    /// instances' data moves as needed). The kernel is not recompiled.
    pub fn set_tensor(&mut self, key: &str, value: &TensorValue) -> Result<(), ParamError> {
        let info = self.find(key)?.clone();
        let derived = self.rederive(key, value)?;
        self.replace_tensor(&info, value)?;
        for (info, value) in derived {
            self.replace_tensor(&info, &value)?;
        }
        Ok(())
    }

    /// Replaces the data and shape of the tensor param `info`.
    fn replace_tensor(&mut self, info: &ParamInfo, value: &TensorValue) -> Result<(), ParamError> {
        let key = info.key.as_str();
        let slots = info.tensor.as_ref().ok_or_else(|| not_a_tensor(info))?;
        let (data_name, instance) = (info.buffers[0].as_str(), info.instance as usize);
        let offsets: Vec<u32> = self.buffer(&slots.offset).iter().map(|o| o.load(Ordering::Relaxed)).collect();
        let lens: Vec<u32> =
            (0..offsets.len()).map(|k| slots.shape.iter().map(|b| self.load(b, k)).product()).collect();
        let old = self.buffers.remove(data_name).unwrap_or_default();
        let mut data: Vec<AtomicU32> = Vec::with_capacity(old.len() + value.data.len());
        let mut new_offsets = Vec::with_capacity(offsets.len());
        for (k, (&offset, &len)) in offsets.iter().zip(&lens).enumerate() {
            new_offsets.push(data.len());
            if k == instance {
                data.extend(value.data.iter().map(|v| AtomicU32::new(v.to_bits())));
            } else {
                let range = offset as usize..offset as usize + len as usize;
                match old.get(range) {
                    Some(kept) => data.extend(kept.iter().map(|v| AtomicU32::new(v.load(Ordering::Relaxed)))),
                    None => {
                        self.buffers.insert(data_name.to_owned(), old);
                        return Err(ParamError::Value {
                            key: key.to_owned(),
                            message: format!("the data of instance {k} is not in its buffer"),
                        });
                    }
                }
            }
        }
        if u32::try_from(data.len()).is_err() {
            self.buffers.insert(data_name.to_owned(), old);
            return Err(ParamError::Value { key: key.to_owned(), message: "too much tensor data".into() });
        }
        self.buffers.insert(data_name.to_owned(), data);
        for (k, offset) in new_offsets.into_iter().enumerate() {
            self.write(std::slice::from_ref(&slots.offset), k as u32, &[offset as u32]);
        }
        let [h, w, c] = value.shape;
        self.write(&slots.shape, info.instance, &[h, w, c]);
        Ok(())
    }

    /// The buffer and element of each scalar of a parameter, in order: one element per
    /// buffer at the instance's index, or a tensor's range of its data buffer.
    pub(crate) fn elements<'a>(&self, info: &'a ParamInfo) -> Vec<(&'a str, usize)> {
        match &info.tensor {
            None => info.buffers.iter().map(|b| (b.as_str(), info.instance as usize)).collect(),
            Some(slots) => {
                let k = info.instance as usize;
                let offset = self.load(&slots.offset, k) as usize;
                let len: usize = slots.shape.iter().map(|b| self.load(b, k) as usize).product();
                (offset..offset + len).map(|i| (info.buffers[0].as_str(), i)).collect()
            }
        }
    }

    /// Element `index` of buffer `name` (0 where it has none).
    fn load(&self, name: &str, index: usize) -> u32 {
        self.buffer(name).get(index).map_or(0, |v| v.load(Ordering::Relaxed))
    }

    /// The buffer named `name` (empty if no instance wrote it).
    pub(crate) fn buffer(&self, name: &str) -> &[AtomicU32] {
        self.buffers.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn params(&self) -> &[ParamInfo] {
        &self.params
    }

    fn find(&self, key: &str) -> Result<&ParamInfo, ParamError> {
        self.params.iter().find(|p| p.key == key).ok_or_else(|| ParamError::Unknown(key.to_owned()))
    }

    pub fn get(&self, key: &str) -> Result<HostValue, ParamError> {
        let info = self.find(key)?;
        if info.tensor.is_some() {
            return Err(a_tensor(info));
        }
        let bits: Vec<u32> =
            info.buffers.iter().map(|b| self.buffer(b)[info.instance as usize].load(Ordering::Relaxed)).collect();
        Ok(info.layout.unflatten(&bits))
    }

    pub fn set(&mut self, key: &str, value: &HostValue) -> Result<(), ParamError> {
        let info = self.find(key)?.clone();
        if info.tensor.is_some() {
            return Err(a_tensor(&info));
        }
        let bits = info.layout.flatten(value).map_err(|message| ParamError::Value { key: key.to_owned(), message })?;
        self.write(&info.buffers, info.instance, &bits);
        Ok(())
    }

    /// The parameter's scalars as f32 (each scalar of its layout, in order; a tensor's data).
    pub fn values(&self, key: &str) -> Result<Vec<f32>, ParamError> {
        let info = self.find(key)?;
        Ok(self.elements(info).iter().map(|&(b, i)| f32::from_bits(self.load(b, i))).collect())
    }

    /// Sets the parameter's scalars from f32 values (as [`values`](Self::values) returns them);
    /// only for parameters made of f32 scalars.
    pub fn set_values(&mut self, key: &str, values: &[f32]) -> Result<(), ParamError> {
        let info = self.find(key)?.clone();
        let fail = |message: String| ParamError::Value { key: key.to_owned(), message };
        if !info.layout.scalar_types().iter().all(|&t| t == drs_ir::Ty::F32) {
            return Err(fail(format!("a {} is not made of f32 scalars", info.layout.describe())));
        }
        let count = self.elements(&info).len();
        if values.len() != count {
            return Err(fail(format!("expected {count} values, got {}", values.len())));
        }
        let derived = match self.derived.iter().any(|d| d.source == key) {
            true => self.rederive(key, &TensorValue { shape: self.tensor_shape(key)?, data: values.to_vec() })?,
            false => Vec::new(),
        };
        self.store(&info, values.iter().map(|v| v.to_bits()));
        for (info, value) in derived {
            self.replace_tensor(&info, &value)?;
        }
        Ok(())
    }

    /// Asks the reverse pass for the gradient of `key` (Mitsuba's `dr.enable_grad`).
    pub fn enable_grad(&mut self, key: &str) -> Result<(), ParamError> {
        let info = self.find(key)?;
        if !info.differentiable {
            return Err(ParamError::Value {
                key: key.to_owned(),
                message: format!(
                    "a {} parameter has no derivatives (it is @no_diff or not of a differentiable type)",
                    info.layout.describe()
                ),
            });
        }
        if !self.grad_enabled.iter().any(|k| k == key) {
            self.grad_enabled.push(key.to_owned());
        }
        Ok(())
    }

    /// Stops computing the gradient of `key`.
    pub fn disable_grad(&mut self, key: &str) {
        self.grad_enabled.retain(|k| k != key);
    }

    /// The parameters whose gradients the reverse pass reports, in the order they were enabled.
    pub fn grad_enabled(&self) -> impl Iterator<Item = &ParamInfo> {
        self.grad_enabled.iter().filter_map(|k| self.find(k).ok())
    }

    /// Sets a parameter from text as `drsc eval` reads values (`0.5`, `[1.0, 0.2, 0.2]`).
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ParamError> {
        let info = self.find(key)?;
        let value = info.layout.parse(text).map_err(|message| ParamError::Value { key: key.to_owned(), message })?;
        self.set(key, &value)
    }
}

fn not_a_tensor(info: &ParamInfo) -> ParamError {
    ParamError::Value { key: info.key.clone(), message: format!("a {} is not a tensor", info.layout.describe()) }
}

fn a_tensor(info: &ParamInfo) -> ParamError {
    ParamError::Value { key: info.key.clone(), message: "a tensor: use `tensor` and `set_tensor`".into() }
}

impl fmt::Display for ParamInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} : {}", self.key, self.layout.describe())
    }
}
