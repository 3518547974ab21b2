//! What each plugin accepts: parameters with kinds, defaults, ranges and choices, child slots,
//! and rules between parameters. The runtime registers one [`PluginSchema`] per `.drs` plugin
//! next to the [built-in ones](Schema::builtin) for the plugins it implements natively.

mod builtin;

use std::collections::BTreeMap;
use std::fmt;

use crate::desc::Category;
use crate::value::Value;

/// The kind of value a parameter takes, and so which scene values it accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// `<float>`, or an `<integer>` (converted).
    Float,
    /// `<integer>`; a range keeps it within `i32`/`u32` where the plugin needs that.
    Integer,
    Boolean,
    String,
    /// A `<string>` naming a file; resolved against the scene directory and checked to exist.
    Filename,
    /// `<rgb>`, a uniform `<spectrum>`, or a `<float>` (a uniform spectrum).
    Color,
    /// A float or a float-valued texture object (`Texture<f32>` in `.drs`).
    FloatTexture,
    /// A colour (as [`ParamKind::Color`]) or a texture object (`Texture<Color>` in `.drs`).
    ColorTexture,
    /// `<point>` (a `<vector>` is accepted, as Mitsuba does).
    Point,
    /// `<vector>` (a `<point>` is accepted).
    Vector,
    Transform,
    /// A nested or referenced object of this category passed by name.
    Object(Category),
}

impl ParamKind {
    /// How messages name what the parameter expects.
    pub fn describe(&self) -> String {
        match self {
            ParamKind::Float => "a <float>".into(),
            ParamKind::Integer => "an <integer>".into(),
            ParamKind::Boolean => "a <boolean>".into(),
            ParamKind::String => "a <string>".into(),
            ParamKind::Filename => "a file name (<string>)".into(),
            ParamKind::Color => "a colour (<rgb>, <spectrum> or <float>)".into(),
            ParamKind::FloatTexture => "a <float> or a texture".into(),
            ParamKind::ColorTexture => "a colour (<rgb>, <spectrum> or <float>) or a texture".into(),
            ParamKind::Point => "a <point>".into(),
            ParamKind::Vector => "a <vector>".into(),
            ParamKind::Transform => "a <transform>".into(),
            ParamKind::Object(category) => format!("a <{category}>"),
        }
    }

    fn is_numeric(&self) -> bool {
        matches!(
            self,
            ParamKind::Float
                | ParamKind::Integer
                | ParamKind::Color
                | ParamKind::FloatTexture
                | ParamKind::ColorTexture
        )
    }
}

/// One end of a [`Range`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub value: f64,
    pub inclusive: bool,
}

/// The values a numeric parameter may take; for colours it applies to each component.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Range {
    pub min: Option<Bound>,
    pub max: Option<Bound>,
}

impl Range {
    /// `x >= min`.
    pub fn at_least(min: f64) -> Self {
        Range { min: Some(Bound { value: min, inclusive: true }), max: None }
    }

    /// `x > min`.
    pub fn above(min: f64) -> Self {
        Range { min: Some(Bound { value: min, inclusive: false }), max: None }
    }

    /// `min <= x <= max`.
    pub fn between(min: f64, max: f64) -> Self {
        Range { min: Some(Bound { value: min, inclusive: true }), max: Some(Bound { value: max, inclusive: true }) }
    }

    /// `min < x < max`.
    pub fn strictly_between(min: f64, max: f64) -> Self {
        Range { min: Some(Bound { value: min, inclusive: false }), max: Some(Bound { value: max, inclusive: false }) }
    }

    /// What `.drs` `i32` parameters hold.
    pub fn i32() -> Self {
        Self::between(i32::MIN.into(), i32::MAX.into())
    }

    /// What `.drs` `u32` parameters hold.
    pub fn u32() -> Self {
        Self::between(0.0, u32::MAX.into())
    }

    pub fn contains(&self, x: f64) -> bool {
        let above_min = self.min.is_none_or(|b| if b.inclusive { x >= b.value } else { x > b.value });
        let below_max = self.max.is_none_or(|b| if b.inclusive { x <= b.value } else { x < b.value });
        above_min && below_max
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (Some(lo), Some(hi)) => write!(
                f,
                "in {}{}, {}{}",
                if lo.inclusive { '[' } else { '(' },
                lo.value,
                hi.value,
                if hi.inclusive { ']' } else { ')' }
            ),
            (Some(lo), None) => write!(f, "{} {}", if lo.inclusive { ">=" } else { ">" }, lo.value),
            (None, Some(hi)) => write!(f, "{} {}", if hi.inclusive { "<=" } else { "<" }, hi.value),
            (None, None) => write!(f, "any number"),
        }
    }
}

/// One parameter of a plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSchema {
    pub name: String,
    pub kind: ParamKind,
    pub default: Option<Value>,
    pub required: bool,
    pub range: Option<Range>,
    /// For strings: the accepted values (compared ignoring ASCII case, stored as listed here).
    pub choices: Vec<String>,
    /// For floats: names that a `<string>` may give instead of the number (compared ignoring
    /// ASCII case), as Mitsuba's `int_ior="water"`. The scene holds the number.
    pub named_values: Vec<(String, f64)>,
}

impl ParamSchema {
    /// An optional parameter without a default: absent from the object unless the scene gives it.
    pub fn new(name: impl Into<String>, kind: ParamKind) -> Self {
        ParamSchema {
            name: name.into(),
            kind,
            default: None,
            required: false,
            range: None,
            choices: Vec::new(),
            named_values: Vec::new(),
        }
    }

    pub fn default(mut self, value: impl Into<Value>) -> Self {
        self.default = Some(value.into());
        self
    }

    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    pub fn range(mut self, range: Range) -> Self {
        self.range = Some(range);
        self
    }

    pub fn choices(mut self, choices: &[&str]) -> Self {
        self.choices = choices.iter().map(|c| c.to_string()).collect();
        self
    }

    pub fn named_values<'a>(mut self, names: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        self.named_values = names.into_iter().map(|(name, value)| (name.to_owned(), value)).collect();
        self
    }

    /// What the parameter expects, for messages.
    pub fn describe(&self) -> String {
        match self.named_values.is_empty() {
            true => self.kind.describe(),
            false => format!("{} or the name of a value (<string>)", self.kind.describe()),
        }
    }
}

/// How many nested objects of one category a plugin takes without a parameter name
/// (a shape's BSDF, a sensor's film). Such children may still carry a `name` attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildSlot {
    pub category: Category,
    /// `None`: any number.
    pub max: Option<usize>,
}

/// A constraint between parameters, checked after defaults are applied.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// At most one of the two may be given.
    Exclusive(String, String),
    /// The first (a number) must be smaller than the second.
    Less(String, String),
    /// The vector or point parameter, when given, must not be zero.
    NonZero(String),
}

/// What one plugin type accepts.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginSchema {
    pub category: Category,
    pub plugin: String,
    pub params: Vec<ParamSchema>,
    pub slots: Vec<ChildSlot>,
    pub rules: Vec<Rule>,
    /// Mitsuba parameters that drs knows but does not implement, with the reason shown.
    pub unsupported: Vec<(String, String)>,
}

impl PluginSchema {
    pub fn new(category: Category, plugin: impl Into<String>) -> Self {
        PluginSchema {
            category,
            plugin: plugin.into(),
            params: Vec::new(),
            slots: Vec::new(),
            rules: Vec::new(),
            unsupported: Vec::new(),
        }
    }

    pub fn param(mut self, param: ParamSchema) -> Self {
        self.params.push(param);
        self
    }

    pub fn slot(mut self, category: Category, max: Option<usize>) -> Self {
        self.slots.push(ChildSlot { category, max });
        self
    }

    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    pub fn unsupported(mut self, name: &str, reason: &str) -> Self {
        self.unsupported.push((name.to_owned(), reason.to_owned()));
        self
    }

    pub fn find_param(&self, name: &str) -> Option<&ParamSchema> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn find_slot(&self, category: Category) -> Option<&ChildSlot> {
        self.slots.iter().find(|s| s.category == category)
    }

    /// Checks that the schema is coherent: unique names, defaults of the declared kind,
    /// within range and choices, rules naming declared parameters.
    fn check(&self) -> Result<(), SchemaError> {
        let fail =
            |message: String| Err(SchemaError { message: format!("{} \"{}\": {message}", self.category, self.plugin) });
        for (i, p) in self.params.iter().enumerate() {
            if self.params[..i].iter().any(|q| q.name == p.name) {
                return fail(format!("parameter \"{}\" is declared twice", p.name));
            }
            if p.required && p.default.is_some() {
                return fail(format!("parameter \"{}\" is required and has a default", p.name));
            }
            if p.range.is_some() && !p.kind.is_numeric() {
                return fail(format!("parameter \"{}\" has a range but is not numeric", p.name));
            }
            if !p.choices.is_empty() && p.kind != ParamKind::String {
                return fail(format!("parameter \"{}\" has choices but is not a string", p.name));
            }
            if !p.named_values.is_empty() && p.kind != ParamKind::Float {
                return fail(format!("parameter \"{}\" has named values but is not a float", p.name));
            }
            if let Some(default) = &p.default {
                if let Err(problem) = crate::validate::check_default(p, default) {
                    return fail(format!("default of parameter \"{}\": {problem}", p.name));
                }
            }
        }
        for (i, s) in self.slots.iter().enumerate() {
            if self.slots[..i].iter().any(|t| t.category == s.category) {
                return fail(format!("child slot <{}> is declared twice", s.category));
            }
        }
        for rule in &self.rules {
            let names: &[&String] = match rule {
                Rule::Exclusive(a, b) | Rule::Less(a, b) => &[a, b],
                Rule::NonZero(a) => &[a],
            };
            if let Some(missing) = names.iter().find(|n| self.find_param(n).is_none()) {
                return fail(format!("a rule names the undeclared parameter \"{missing}\""));
            }
        }
        Ok(())
    }
}

/// A schema that cannot be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid plugin schema: {}", self.message)
    }
}

impl std::error::Error for SchemaError {}

/// The registry of plugin schemas, keyed by category and plugin type name.
#[derive(Clone, Debug)]
pub struct Schema {
    plugins: BTreeMap<(Category, String), PluginSchema>,
}

impl Default for Schema {
    fn default() -> Self {
        Self::new()
    }
}

impl Schema {
    /// Only the scene root: every plugin must be registered.
    pub fn new() -> Self {
        let mut plugins = BTreeMap::new();
        let root = builtin::scene_root();
        plugins.insert((root.category, root.plugin.clone()), root);
        Schema { plugins }
    }

    /// The scene root and the plugins the runtime implements natively (shapes, the perspective
    /// sensor, `hdrfilm`, reconstruction filters, samplers, emitters). BSDFs, textures and
    /// integrators come from `.drs` plugins and are registered by the runtime.
    pub fn builtin() -> Self {
        let mut schema = Self::new();
        for plugin in builtin::native_plugins() {
            schema.register(plugin).expect("the built-in plugin schemas are coherent and distinct");
        }
        schema
    }

    /// Adds a plugin. Fails when the schema is incoherent, when the plugin is already
    /// registered, or for the scene root (which is fixed).
    pub fn register(&mut self, plugin: PluginSchema) -> Result<(), SchemaError> {
        if plugin.category == Category::Scene {
            return Err(SchemaError { message: "the scene root cannot be registered".into() });
        }
        plugin.check()?;
        let key = (plugin.category, plugin.plugin.clone());
        if self.plugins.contains_key(&key) {
            return Err(SchemaError {
                message: format!("{} \"{}\" is already registered", plugin.category, plugin.plugin),
            });
        }
        self.plugins.insert(key, plugin);
        Ok(())
    }

    pub fn get(&self, category: Category, plugin: &str) -> Option<&PluginSchema> {
        self.plugins.get(&(category, plugin.to_owned()))
    }

    /// The registered plugin type names of one category, sorted.
    pub fn plugin_names(&self, category: Category) -> impl Iterator<Item = &str> {
        self.plugins.keys().filter(move |(c, _)| *c == category).map(|(_, name)| name.as_str())
    }
}
