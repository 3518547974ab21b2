//! Arbitrary output variables (Mitsuba's `aov` integrator): the scene's list of AOVs
//! (`<string name="aovs" value="dd:depth,nn:sh_normal"/>`) and the film channels it gives. The
//! values come from the integrator's `sample_aovs` method, which returns them after the colour
//! and the valid flag in the order of [`TYPES`] (stdlib/integrators/aov.drs, `AOV_VALUES`).

/// The integrator method that returns the colour, the valid flag and the AOV values; a scene
/// whose integrator has it renders through it.
pub(crate) const AOV_METHOD: &str = "sample_aovs";

/// The AOV types in the order of `sample_aovs`'s values, with the suffixes of their channels
/// (Mitsuba's names).
const TYPES: [(&str, &[&str]); 6] = [
    ("depth", &["T"]),
    ("position", &["X", "Y", "Z"]),
    ("uv", &["U", "V"]),
    ("geo_normal", &["X", "Y", "Z"]),
    ("sh_normal", &["X", "Y", "Z"]),
    ("albedo", &["R", "G", "B"]),
];

/// The scene's AOV channels: their names and which of `sample_aovs`'s values each holds.
#[derive(Clone, Debug, PartialEq)]
pub struct AovChannels {
    pub names: Vec<String>,
    pub(crate) values: Vec<usize>,
}

/// The number of values `sample_aovs` returns after the colour and the valid flag.
pub(crate) fn value_count() -> usize {
    TYPES.iter().map(|(_, suffixes)| suffixes.len()).sum()
}

/// Parses Mitsuba's `aovs` list: `name:type` entries separated by commas (spaces around them
/// are ignored). Each gives the channels `name.SUFFIX`.
pub fn parse_aovs(list: &str) -> Result<AovChannels, String> {
    let mut channels = AovChannels { names: Vec::new(), values: Vec::new() };
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, kind) = match entry.split_once(':') {
            Some((name, kind)) if !name.trim().is_empty() && !kind.trim().is_empty() => (name.trim(), kind.trim()),
            _ => return Err(format!("AOV \"{entry}\" is not a `name:type` pair")),
        };
        let mut offset = 0;
        let mut found = false;
        for (type_name, suffixes) in TYPES {
            if type_name == kind {
                for (k, suffix) in suffixes.iter().enumerate() {
                    let channel = format!("{name}.{suffix}");
                    if channels.names.contains(&channel) {
                        return Err(format!("AOV \"{entry}\": channel \"{channel}\" is given twice"));
                    }
                    channels.names.push(channel);
                    channels.values.push(offset + k);
                }
                found = true;
            }
            offset += suffixes.len();
        }
        if !found {
            let known: Vec<&str> = TYPES.iter().map(|(t, _)| *t).collect();
            return Err(format!("AOV \"{entry}\": unknown type \"{kind}\" (expected one of: {})", known.join(", ")));
        }
    }
    if channels.names.is_empty() {
        return Err("no AOVs given: write `name:type` entries, e.g. \"dd:depth,nn:sh_normal\"".into());
    }
    Ok(channels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_give_channels_in_order() {
        let aovs = parse_aovs(" dd.y:depth, nn:sh_normal ,a:albedo,").unwrap();
        assert_eq!(aovs.names, ["dd.y.T", "nn.X", "nn.Y", "nn.Z", "a.R", "a.G", "a.B"]);
        assert_eq!(aovs.values, [0, 9, 10, 11, 12, 13, 14]);
        assert_eq!(value_count(), 15);
        assert_eq!(parse_aovs("p:position,t:uv,g:geo_normal").unwrap().values, [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn bad_lists_are_errors() {
        for (list, message) in [
            ("dd", "not a `name:type` pair"),
            (":depth", "not a `name:type` pair"),
            ("dd:distance", "unknown type \"distance\""),
            ("n:uv,n:uv", "given twice"),
            (" , ", "no AOVs given"),
        ] {
            let e = parse_aovs(list).unwrap_err();
            assert!(e.contains(message), "{list}: {e}");
        }
    }
}
