//! Shared field parsers: integers, exact decimal-to-integer scaling (no floating
//! point), unit conversions with overflow checks, and field splitting.
//!
//! Every parser returns a [`FieldError`] naming the field and saying what was
//! found and what was expected; the reader adds the file name and line number.

/// What is wrong with one field of one line. The reader turns it into a
/// [`TraceError`](crate::trace::TraceError) by adding the file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &'static str, message: impl Into<String>) -> FieldError {
        FieldError { field, message: message.into() }
    }
}

/// Bytes per sector in every sector-addressed format (SPC, DiskSim, Tencent, blkparse).
pub(crate) const SECTOR_BYTES: u64 = 512;

/// The text of a field as quoted in a message: bounded so one huge field cannot
/// make a huge message.
pub(crate) fn quote(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    if text.chars().count() <= MAX_CHARS {
        format!("'{text}'")
    } else {
        let head: String = text.chars().take(MAX_CHARS).collect();
        format!("'{head}...'")
    }
}

/// A non-negative decimal integer (ASCII digits only).
pub(crate) fn parse_u64(text: &str, field: &'static str) -> Result<u64, FieldError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FieldError::new(field, format!("found {}, expected a non-negative integer", quote(text))));
    }
    text.parse::<u64>().map_err(|_| FieldError::new(field, format!("found {}, which does not fit in 64 bits", quote(text))))
}

/// A non-negative decimal number (`12`, `12.5`, `.5`, `12.`) scaled by
/// `10^frac_digits` into an integer, exactly: `parse_scaled("1.25", 3)` is 1250.
/// Digits beyond `frac_digits` are truncated (e.g. sub-nanosecond digits).
/// `what` describes the expected value for the error message.
pub(crate) fn parse_scaled(text: &str, frac_digits: u32, field: &'static str, what: &str) -> Result<u64, FieldError> {
    let bad = || FieldError::new(field, format!("found {}, expected {what}", quote(text)));
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty()) || !digits_ok(int_part) || !digits_ok(frac_part) {
        return Err(bad());
    }
    let overflow = || FieldError::new(field, format!("found {}, which overflows 64-bit {what}", quote(text)));
    let scale = 10u64.pow(frac_digits);
    let int_value = if int_part.is_empty() { 0 } else { int_part.parse::<u64>().map_err(|_| overflow())? };
    let mut frac_value = 0u64;
    let mut taken = 0u32;
    for b in frac_part.bytes().take(frac_digits as usize) {
        frac_value = frac_value * 10 + u64::from(b - b'0');
        taken += 1;
    }
    frac_value *= 10u64.pow(frac_digits - taken);
    int_value.checked_mul(scale).and_then(|v| v.checked_add(frac_value)).ok_or_else(overflow)
}

/// Decimal seconds -> integer nanoseconds, exactly (sub-ns digits truncated).
pub(crate) fn seconds_to_ns(text: &str, field: &'static str) -> Result<u64, FieldError> {
    parse_scaled(text, 9, field, "a non-negative decimal number of seconds (e.g. 12.5)")
}

/// `value * factor`, or an error naming the field when it overflows 64 bits.
pub(crate) fn scale(value: u64, factor: u64, field: &'static str, unit: &str) -> Result<u64, FieldError> {
    value.checked_mul(factor).ok_or_else(|| FieldError::new(field, format!("{value} {unit} overflows 64 bits when converted")))
}

/// Split `line` on `sep` into exactly `N` trimmed fields (or at least `N` when
/// `extra_ok`, ignoring the rest). `names` are the field names, for the message.
pub(crate) fn split_fields<'a, const N: usize>(
    line: &'a str,
    sep: char,
    names: &[&'static str; N],
    extra_ok: bool,
) -> Result<[&'a str; N], FieldError> {
    let mut out = [""; N];
    let mut count = 0usize;
    for part in line.split(sep) {
        if count < N {
            out[count] = part.trim();
        }
        count += 1;
    }
    if count < N || (count > N && !extra_ok) {
        let sep_name = if sep == ',' { "comma-separated" } else { "separated" };
        return Err(FieldError::new(
            "line",
            format!("found {count} {sep_name} field(s), expected {}{N}: {}", if extra_ok { "at least " } else { "" }, names.join(",")),
        ));
    }
    Ok(out)
}

/// Split `line` on ASCII whitespace into exactly `N` fields.
pub(crate) fn split_whitespace<'a, const N: usize>(line: &'a str, names: &[&'static str; N]) -> Result<[&'a str; N], FieldError> {
    let mut out = [""; N];
    let mut count = 0usize;
    for part in line.split_ascii_whitespace() {
        if count < N {
            out[count] = part;
        }
        count += 1;
    }
    if count != N {
        return Err(FieldError::new("line", format!("found {count} whitespace-separated field(s), expected {N}: {}", names.join(" "))));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_seconds_convert_to_ns_exactly() {
        assert_eq!(seconds_to_ns("1455591804.310701000", "t").unwrap(), 1_455_591_804_310_701_000);
        assert_eq!(seconds_to_ns("0.000000", "t").unwrap(), 0);
        assert_eq!(seconds_to_ns("12", "t").unwrap(), 12_000_000_000);
        assert_eq!(seconds_to_ns("12.", "t").unwrap(), 12_000_000_000);
        assert_eq!(seconds_to_ns(".5", "t").unwrap(), 500_000_000);
        assert_eq!(seconds_to_ns("0.1", "t").unwrap(), 100_000_000);
        // A float would give 0.3 s = 299_999_999 ns on some paths; integers cannot.
        assert_eq!(seconds_to_ns("0.3", "t").unwrap(), 300_000_000);
        // Sub-ns digits are truncated.
        assert_eq!(seconds_to_ns("1.0000000019", "t").unwrap(), 1_000_000_001);
    }

    #[test]
    fn bad_numbers_name_the_field_and_the_text() {
        let e = seconds_to_ns("-1.5", "Timestamp").unwrap_err();
        assert_eq!(e.field, "Timestamp");
        assert!(e.message.contains("'-1.5'") && e.message.contains("seconds"), "{}", e.message);
        for bad in ["", ".", "1.2.3", "1e5", "abc", " 1"] {
            assert!(seconds_to_ns(bad, "t").is_err(), "{bad:?} accepted");
        }
        let e = parse_u64("12x", "Offset").unwrap_err();
        assert!(e.message.contains("'12x'") && e.message.contains("integer"));
        let e = parse_u64("99999999999999999999", "Offset").unwrap_err();
        assert!(e.message.contains("64 bits"));
        assert!(seconds_to_ns("99999999999.0", "t").unwrap_err().message.contains("overflows"));
        assert!(scale(u64::MAX / 2, 512, "LBA", "sectors").is_err());
    }

    #[test]
    fn field_splitting_counts_fields() {
        let f = split_fields("a, b ,c", ',', &["A", "B", "C"], false).unwrap();
        assert_eq!(f, ["a", "b", "c"]);
        let e = split_fields("a,b", ',', &["A", "B", "C"], false).unwrap_err();
        assert!(e.message.contains("found 2") && e.message.contains("A,B,C"), "{}", e.message);
        assert!(split_fields("a,b,c,d", ',', &["A", "B", "C"], false).is_err());
        assert_eq!(split_fields("a,b,c,d", ',', &["A", "B", "C"], true).unwrap(), ["a", "b", "c"]);
        assert_eq!(split_whitespace(" 1\t2  3 ", &["x", "y", "z"]).unwrap(), ["1", "2", "3"]);
        assert!(split_whitespace("1 2", &["x", "y", "z"]).is_err());
    }
}
