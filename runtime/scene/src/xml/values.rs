//! Parsing of attribute text into numbers, colours and vectors, with Mitsuba's conventions:
//! lists are separated by commas and/or whitespace, a single value stands for all three
//! components where Mitsuba allows it.

use crate::math::Vec3;

/// Splits `"0.1, 0.2 0.3"` into its items.
pub(crate) fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()).collect()
}

pub(crate) fn parse_float(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("invalid number \"{text}\" (must be finite)")),
        Err(_) => Err(format!("invalid number \"{text}\"")),
    }
}

pub(crate) fn parse_integer(text: &str) -> Result<i64, String> {
    text.trim().parse::<i64>().map_err(|_| format!("invalid integer \"{text}\""))
}

pub(crate) fn parse_boolean(text: &str) -> Result<bool, String> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("true") => Ok(true),
        t if t.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(format!("invalid boolean \"{text}\" (expected \"true\" or \"false\")")),
    }
}

/// Exactly `N` numbers.
pub(crate) fn parse_floats<const N: usize>(text: &str) -> Result<[f64; N], String> {
    let items = tokens(text);
    if items.len() != N {
        return Err(format!("expected {N} numbers, found {} in \"{text}\"", items.len()));
    }
    let mut out = [0.0; N];
    for (o, item) in out.iter_mut().zip(items) {
        *o = parse_float(item)?;
    }
    Ok(out)
}

/// One number (repeated) or three.
pub(crate) fn parse_one_or_three(text: &str) -> Result<Vec3, String> {
    let items = tokens(text);
    match items.len() {
        1 => Ok([parse_float(items[0])?; 3]),
        3 => parse_floats::<3>(text),
        n => Err(format!("expected 1 or 3 numbers, found {n} in \"{text}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_accept_commas_and_whitespace() {
        assert_eq!(parse_one_or_three("0.1, 0.2 ,0.3").unwrap(), [0.1, 0.2, 0.3]);
        assert_eq!(parse_one_or_three("0.1 0.2\t0.3").unwrap(), [0.1, 0.2, 0.3]);
        assert_eq!(parse_one_or_three(" 0.5 ").unwrap(), [0.5; 3]);
        assert!(parse_one_or_three("1 2").is_err());
        assert_eq!(parse_floats::<2>("-1e3,+2").unwrap(), [-1000.0, 2.0]);
    }

    #[test]
    fn scalars_reject_garbage_and_non_finite_numbers() {
        assert_eq!(parse_float(" -1.5e3 ").unwrap(), -1500.0);
        assert!(parse_float("nan").is_err());
        assert!(parse_float("1e999").is_err());
        assert!(parse_float("1,5").is_err());
        assert_eq!(parse_integer(" 42 ").unwrap(), 42);
        assert!(parse_integer("4.0").is_err());
        assert!(parse_boolean("TRUE").unwrap());
        assert!(parse_boolean("yes").is_err());
    }
}
