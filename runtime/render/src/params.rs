//! Scene parameters: the values of every plugin instance's params, stored in the buffers the
//! kernel reads (`{Plugin}.{param}[k]`, one element per instance), with Mitsuba-style keys
//! (`red.reflectance.value`) for reading and writing them between renders.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use drs_lower::layout::{HostValue, Layout};

/// One scene parameter (one param of one plugin instance).
#[derive(Clone, Debug)]
pub struct ParamInfo {
    /// Mitsuba-style key: the object's id (or its place in the scene) and the param name.
    pub key: String,
    pub layout: Layout,
    /// Whether derivatives with respect to it are computed (a differentiable param type and
    /// not `@no_diff`).
    pub differentiable: bool,
    /// The buffers holding its scalars and the instance's element in them.
    pub(crate) buffers: Vec<String>,
    pub(crate) instance: u32,
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

    pub(crate) fn add(&mut self, info: ParamInfo) {
        self.params.push(info);
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
        let bits: Vec<u32> =
            info.buffers.iter().map(|b| self.buffer(b)[info.instance as usize].load(Ordering::Relaxed)).collect();
        Ok(info.layout.unflatten(&bits))
    }

    pub fn set(&mut self, key: &str, value: &HostValue) -> Result<(), ParamError> {
        let info = self.find(key)?.clone();
        let bits = info.layout.flatten(value).map_err(|message| ParamError::Value { key: key.to_owned(), message })?;
        self.write(&info.buffers, info.instance, &bits);
        Ok(())
    }

    /// Sets a parameter from text as `drsc eval` reads values (`0.5`, `[1.0, 0.2, 0.2]`).
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ParamError> {
        let info = self.find(key)?;
        let value = info.layout.parse(text).map_err(|message| ParamError::Value { key: key.to_owned(), message })?;
        self.set(key, &value)
    }
}

impl fmt::Display for ParamInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} : {}", self.key, self.layout.describe())
    }
}
