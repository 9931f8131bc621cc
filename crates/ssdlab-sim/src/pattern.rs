//! Data patterns carried with every write (see docs/methodology.md, "Data patterns").
//!
//! A non-reducing controller programs every byte whatever the pattern; a
//! data-reducing controller (SandForce DuraWrite) uses the pattern to decide how
//! many bytes reach the NAND.

use std::fmt;

/// What a write's data looks like to a compressing / deduplicating controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataPattern {
    /// Fresh random data for every write: cannot be reduced (AS-SSD, video, archives).
    Incompressible,
    /// One random buffer reused for every write (Iometer's default): each block is
    /// incompressible alone, but all blocks are alike, so a deduplicating controller
    /// stores almost none of it.
    Repeated,
    /// Highly compressible data (ATTO's pattern).
    Compressible,
    /// All zeros.
    Zeros,
    /// Compresses to `permille`/1000 of its size (1..=1000).
    Ratio { permille: u16 },
}

impl DataPattern {
    /// Parse the user-facing name: `incompressible`, `repeated`, `compressible`,
    /// `zeros`, or `ratio:R` with R in (0, 1].
    pub fn parse(s: &str) -> Result<DataPattern, String> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "incompressible" | "random" => Ok(DataPattern::Incompressible),
            "repeated" | "pseudo-random" | "pseudorandom" => Ok(DataPattern::Repeated),
            "compressible" => Ok(DataPattern::Compressible),
            "zeros" | "zero" => Ok(DataPattern::Zeros),
            _ => {
                if let Some(r) = t.strip_prefix("ratio:") {
                    let v: f64 = r.parse().map_err(|_| format!("'{s}': ratio:R needs a number R with 0 < R <= 1 (e.g. ratio:0.5)"))?;
                    if !(v > 0.0 && v <= 1.0) {
                        return Err(format!("'{s}': ratio:R needs 0 < R <= 1"));
                    }
                    let permille = (v * 1000.0).round().clamp(1.0, 1000.0) as u16;
                    Ok(DataPattern::Ratio { permille })
                } else {
                    Err(format!(
                        "'{s}' is not a data pattern; allowed: incompressible, repeated, compressible, zeros, ratio:R (0 < R <= 1)"
                    ))
                }
            }
        }
    }

    /// Compact code used in traces and arrays: 0 incompressible, 1 repeated,
    /// 2 compressible, 3 zeros, 1000+permille for ratio.
    pub fn code(self) -> u16 {
        match self {
            DataPattern::Incompressible => 0,
            DataPattern::Repeated => 1,
            DataPattern::Compressible => 2,
            DataPattern::Zeros => 3,
            DataPattern::Ratio { permille } => 1000 + permille,
        }
    }

    pub fn from_code(c: u16) -> Option<DataPattern> {
        match c {
            0 => Some(DataPattern::Incompressible),
            1 => Some(DataPattern::Repeated),
            2 => Some(DataPattern::Compressible),
            3 => Some(DataPattern::Zeros),
            1001..=2000 => Some(DataPattern::Ratio { permille: c - 1000 }),
            _ => None,
        }
    }
}

impl fmt::Display for DataPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataPattern::Incompressible => write!(f, "incompressible"),
            DataPattern::Repeated => write!(f, "repeated"),
            DataPattern::Compressible => write!(f, "compressible"),
            DataPattern::Zeros => write!(f, "zeros"),
            DataPattern::Ratio { permille } => write!(f, "ratio:{}", *permille as f64 / 1000.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_round_trip() {
        for s in ["incompressible", "repeated", "compressible", "zeros", "ratio:0.5"] {
            let p = DataPattern::parse(s).unwrap();
            assert_eq!(p.to_string(), s);
            assert_eq!(DataPattern::from_code(p.code()), Some(p));
        }
        assert!(DataPattern::parse("ratio:0").is_err());
        assert!(DataPattern::parse("bogus").unwrap_err().contains("allowed"));
    }
}
