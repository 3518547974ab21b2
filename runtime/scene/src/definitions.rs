//! `$name` parameters in attribute values: the caller's definitions (`-D name=value`), which
//! win over the scene's `<default name value>`.

use std::collections::{BTreeMap, BTreeSet};

/// Values for `$name` parameters given by the caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Definitions {
    values: BTreeMap<String, String>,
}

impl Definitions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Defines `$name`; a later definition of the same name replaces the earlier one.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.values.insert(name.into(), value.into());
        self
    }

    /// Adds a `name=value` definition as given on a command line.
    pub fn parse_assignment(&mut self, assignment: &str) -> Result<&mut Self, String> {
        let Some((name, value)) = assignment.split_once('=') else {
            return Err(format!("definition \"{assignment}\" is not of the form name=value"));
        };
        if !is_parameter_name(name) {
            return Err(format!(
                "definition \"{assignment}\": \"{name}\" is not a parameter name (letters, digits and _)"
            ));
        }
        Ok(self.set(name, value))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

fn is_parameter_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(is_name_byte)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The parameters in force while loading: the caller's, then the scene's defaults.
pub(crate) struct Substitution<'a> {
    caller: &'a Definitions,
    defaults: BTreeMap<String, String>,
    used: BTreeSet<String>,
}

impl<'a> Substitution<'a> {
    pub fn new(caller: &'a Definitions) -> Self {
        Substitution { caller, defaults: BTreeMap::new(), used: BTreeSet::new() }
    }

    /// A `<default>`: takes effect unless the caller or an earlier default defined the name.
    pub fn add_default(&mut self, name: &str, value: &str) {
        if self.caller.get(name).is_none() && !self.defaults.contains_key(name) {
            self.defaults.insert(name.to_owned(), value.to_owned());
        }
    }

    fn lookup(&self, name: &str) -> Option<&str> {
        self.caller.get(name).or_else(|| self.defaults.get(name).map(String::as_str))
    }

    /// Replaces every `$name` in `text`; `\$` stands for a literal `$`. Like Mitsuba, the
    /// longest defined name that starts at the `$` wins, so `$res_x` works next to `$res`.
    /// On failure returns the message and the byte offset of the offending `$`.
    pub fn apply(&mut self, text: &str) -> Result<String, (String, usize)> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(['$', '\\']) {
            out.push_str(&rest[..i]);
            let at = text.len() - rest.len() + i;
            if rest[i..].starts_with("\\$") {
                out.push('$');
                rest = &rest[i + 2..];
                continue;
            }
            if rest.as_bytes()[i] == b'\\' {
                out.push('\\');
                rest = &rest[i + 1..];
                continue;
            }
            let after = &rest[i + 1..];
            let run = after.bytes().take_while(|&b| is_name_byte(b)).count();
            let defined = (1..=run).rev().find_map(|len| self.lookup(&after[..len]).map(|v| (len, v.to_owned())));
            let Some((len, value)) = defined else {
                let message = if run == 0 {
                    "\"$\" is not followed by a parameter name (write \"\\$\" for a dollar sign)".to_owned()
                } else {
                    format!("undefined parameter \"${}\"", &after[..run])
                };
                return Err((message, at));
            };
            self.used.insert(after[..len].to_owned());
            out.push_str(&value);
            rest = &after[len..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Caller definitions that no attribute used, as `name=value`.
    pub fn unused_caller_definitions(&self) -> Vec<String> {
        self.caller.values.iter().filter(|(k, _)| !self.used.contains(*k)).map(|(k, v)| format!("{k}={v}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_defined_name_wins_and_escapes_stay_literal() {
        let mut caller = Definitions::new();
        caller.set("res", "64").set("res_x", "128");
        let mut s = Substitution::new(&caller);
        s.add_default("spp", "16");
        s.add_default("res", "1");
        assert_eq!(s.apply("$res_x/$res/$spp/\\$res/a\\b").unwrap(), "128/64/16/$res/a\\b");
        assert_eq!(s.apply("$resolution").unwrap(), "64olution");
        assert_eq!(s.apply("x $nope").unwrap_err(), ("undefined parameter \"$nope\"".to_owned(), 2));
        assert!(s.apply("5$").is_err());
    }

    #[test]
    fn assignments_parse_and_unused_ones_are_reported() {
        let mut d = Definitions::new();
        d.parse_assignment("spp=4").unwrap().parse_assignment("name=a=b").unwrap();
        assert_eq!(d.get("name"), Some("a=b"));
        assert!(d.parse_assignment("novalue").is_err());
        assert!(d.parse_assignment("bad name=1").is_err());
        let mut s = Substitution::new(&d);
        s.apply("$spp").unwrap();
        assert_eq!(s.unused_caller_definitions(), vec!["name=a=b".to_owned()]);
    }
}
