//! Values in fio's vocabulary, parsed once by the engine for every caller
//! (jobs, replay and import options, the CLI through the binding): sizes
//! with fio's suffixes or a percentage of the drive, durations, booleans and
//! whole numbers. A value may be JSON text or a JSON number; an error names
//! the field.

use serde_json::{Map, Value};

use crate::error::{Result, SimError};

/// Host sector size: offsets and lengths must be multiples of it (defined
/// here, where sizes are parsed, so `parse` depends on nothing above it).
pub const SECTOR_BYTES: u64 = 512;

pub(crate) fn werr(field: &str, msg: impl Into<String>) -> SimError {
    SimError::workload(field, msg)
}

/// A message as one line: its lines trimmed and joined with "; " (a
/// parser's message may span several).
pub fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parse a size: plain bytes, or with fio's suffixes (k, m, g, t; optional
/// "b"/"ib"; powers of 1024), or a percentage of `capacity_bytes`.
pub fn parse_size(field: &str, v: &Value, capacity_bytes: u64) -> Result<u64> {
    let s = as_text(v);
    let t = s.trim().to_ascii_lowercase().replace('_', "");
    let bad = || {
        werr(
            field,
            format!("'{s}' is not a size: give bytes or a number with k, m, g or t (powers of 1024, as fio), or a percentage like 75%"),
        )
    };
    if let Some(p) = t.strip_suffix('%') {
        let pct: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&pct) {
            return Err(werr(field, format!("'{s}': a percentage must be 0..100")));
        }
        let bytes = (capacity_bytes as f64 * pct / 100.0) as u64;
        return Ok(bytes / SECTOR_BYTES * SECTOR_BYTES);
    }
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suf) = t.split_at(digits_end);
    let mult: u64 = match suf.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    if num.contains('.') {
        let f: f64 = num.parse().map_err(|_| bad())?;
        Ok((f * mult as f64).round() as u64)
    } else {
        let n: u64 = num.parse().map_err(|_| bad())?;
        n.checked_mul(mult).ok_or_else(bad)
    }
}

/// Parse a duration into ns: a bare number is seconds (fio's default unit).
/// A duration past 2^64 ns (about 584 years) is an error.
pub fn parse_time_ns(field: &str, v: &Value) -> Result<u64> {
    let ns = parse_time_ns_f64(field, v)?;
    if ns >= u64::MAX as f64 {
        return Err(werr(field, format!("'{}' is too long: durations go up to 2^64 ns (about 584 years)", as_text(v))));
    }
    Ok(ns as u64)
}

/// A duration as [`parse_time_ns`] reads it, in ns as a float (rounded to
/// whole ns, not bounded): for checks against a maximum before converting.
pub fn parse_time_ns_f64(field: &str, v: &Value) -> Result<f64> {
    let s = as_text(v);
    let t = s.trim().to_ascii_lowercase();
    let bad = || werr(field, format!("'{s}' is not a duration: use e.g. 60s, 500ms, 100us, 2m, 1h (a bare number is seconds)"));
    let digits_end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suf) = t.split_at(digits_end);
    let mult: f64 = match suf.trim() {
        "" | "s" | "sec" => 1e9,
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(bad()),
    };
    let f: f64 = num.parse().map_err(|_| bad())?;
    if f.is_nan() || f < 0.0 {
        return Err(bad());
    }
    Ok((f * mult).round())
}

pub fn parse_bool(field: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => Ok(n.as_u64().unwrap_or(0) != 0),
        Value::String(s) => match s.trim() {
            "1" | "true" | "yes" => Ok(true),
            "0" | "false" | "no" => Ok(false),
            _ => Err(werr(field, format!("'{s}' is not a boolean (0/1, true/false)"))),
        },
        _ => Err(werr(field, "expected a boolean")),
    }
}

pub fn parse_u64(field: &str, v: &Value) -> Result<u64> {
    let s = as_text(v);
    s.trim().replace('_', "").parse::<u64>().map_err(|_| werr(field, format!("'{s}' is not a whole number")))
}

/// A JSON object's value for `key`, absent when missing or null.
pub fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

/// The object of an options document, or an error naming `what`.
pub fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| werr(what, "expected a mapping of keys to values"))
}

/// The names other layers once used for a key, and its one name now.
pub fn renamed_key(key: &str) -> Option<&'static str> {
    match key {
        "data" | "pattern" | "write_pattern" => Some("data_pattern"),
        "queue_depth" | "qd" => Some("iodepth"),
        "stripe_bytes" => Some("die_stripe_bytes"),
        _ => None,
    }
}

/// Refuse a key outside `allowed`, listing them (a key renamed since is
/// named with its new name).
pub fn known_keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<()> {
    for k in obj.keys() {
        if let (Some(new), false) = (renamed_key(k), allowed.contains(&k.as_str())) {
            return Err(werr(k, format!("unknown {what}: the name is '{new}'")));
        }
        if !allowed.contains(&k.as_str()) {
            return Err(werr(k, format!("unknown {what}; allowed: {}", allowed.join(", "))));
        }
    }
    Ok(())
}

/// A byte count: a JSON whole number, or a size as [`parse_size`] reads it.
pub fn parse_bytes(field: &str, v: &Value, capacity_bytes: u64) -> Result<u64> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| werr(field, format!("{n} is not a whole number of bytes"))),
        other => parse_size(field, other, capacity_bytes),
    }
}

/// A duration in ns given either as `field` (fio's text, or a number of
/// seconds) or as `field_ns` (whole ns); not both. None when neither is given.
pub fn duration_ns_either(obj: &Map<String, Value>, field: &str, field_ns: &str) -> Result<Option<u64>> {
    match (get(obj, field), get(obj, field_ns)) {
        (Some(_), Some(_)) => Err(werr(field_ns, format!("give '{field}' or '{field_ns}', not both"))),
        (Some(v), None) => parse_time_ns(field, v).map(Some),
        (None, Some(v)) => v.as_u64().map(Some).ok_or_else(|| werr(field_ns, format!("{v}: must be a whole number of ns"))),
        (None, None) => Ok(None),
    }
}
