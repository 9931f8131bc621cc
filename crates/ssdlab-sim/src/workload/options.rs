//! The parsers of a workload's structured options: `random_distribution`'s
//! zones, `rw`'s modifier, `bssplit`, the bounds of a job's I/O and the data
//! pattern from fio's buffer options.

use super::{RwMode, FORCE_HINT, MAX_BSSPLIT_SIZES, MAX_CAPACITIES_PER_JOB};
use crate::config::SECTOR_BYTES;
use crate::error::Result;
use crate::parse::{as_text, parse_bool, parse_size, parse_u64, werr};
use crate::pattern::DataPattern;
use serde_json::Value;

/// fio's `random_distribution`: `random` (uniform), `zoned:A/R:...` (A% of
/// the accesses to the next R% of the region; both add up to 100) or
/// `zoned_abs:A/SIZE:...` (zones of absolute sizes from the region's start);
/// a last zone without a range (`20/`) takes the rest of the region.
pub(super) fn parse_zones(text: &str, size_bytes: u64, max_bs: u64, align: u64, capacity_bytes: u64) -> Result<Vec<(u32, u64, u64)>> {
    let t = text.trim();
    if t == "random" {
        return Ok(Vec::new());
    }
    let (kind, list) = t.split_once(':').unwrap_or((t, ""));
    if kind != "zoned" && kind != "zoned_abs" {
        return Err(werr(
            "random_distribution",
            format!("'{t}': the distributions are random (uniform), zipf, pareto, normal, zoned and zoned_abs"),
        ));
    }
    let mut zones = Vec::new();
    let (mut access, mut at) = (0u32, 0u64);
    for part in list.split(':').filter(|p| !p.trim().is_empty()) {
        let (a, r) = part.split_once('/').ok_or_else(|| werr("random_distribution", format!("'{part}' is not ACCESS/RANGE")))?;
        let a: u32 =
            a.trim().parse().ok().filter(|a| *a <= 100).ok_or_else(|| werr("random_distribution", format!("'{a}': a share 0..100")))?;
        let len = if r.trim().is_empty() {
            size_bytes.saturating_sub(at) // fio: a zone without a range takes the rest
        } else if kind == "zoned" {
            let pct: u64 =
                r.trim().parse().ok().filter(|p| *p <= 100).ok_or_else(|| werr("random_distribution", format!("'{r}': a share 0..100")))?;
            (size_bytes as u128 * pct as u128 / 100) as u64
        } else {
            parse_size("random_distribution", &Value::String(r.trim().into()), capacity_bytes)?
        };
        // zones start on the job's alignment, as its random offsets do
        let len = len / align * align;
        zones.push((a, at, len));
        access += a;
        at += len;
    }
    if access != 100 {
        return Err(werr("random_distribution", format!("'{t}': the access shares add up to {access}, not 100 (as fio requires)")));
    }
    if at > size_bytes {
        return Err(werr("random_distribution", format!("'{t}': the zones span {at} B, more than the region's {size_bytes} B")));
    }
    if let Some(z) = zones.iter().find(|z| z.0 > 0 && z.2 < max_bs) {
        return Err(werr("random_distribution", format!("a zone of {} B is smaller than the largest block size {max_bs} B", z.2)));
    }
    Ok(zones)
}

/// fio's `rw` modifier (`MODE:N`): on a sequential mode a size added to the
/// offset after each I/O (`read:-8k` reads backwards); on a random mode the
/// number of I/Os per random offset. Returns (bytes added, I/Os per offset).
pub(super) fn parse_rw_modifier(rw: RwMode, modifier: Option<&str>, capacity_bytes: u64) -> Result<(i64, u64)> {
    let Some(m) = modifier else { return Ok((0, 1)) };
    if rw.is_random() {
        let n =
            m.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                werr("rw", format!("':{m}': on a random mode the modifier is a count of I/Os per random offset (1 or more)"))
            })?;
        return Ok((0, n));
    }
    let (neg, mag) = match m.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, m),
    };
    let b = parse_size("rw", &Value::String(mag.into()), capacity_bytes)?;
    if b % SECTOR_BYTES != 0 || b > capacity_bytes {
        return Err(werr("rw", format!("':{m}': the offset step must be a multiple of 512 B within the drive")));
    }
    Ok((if neg { -(b as i64) } else { b as i64 }, 1))
}

/// fio's `bssplit`: `SIZE/PERCENT:SIZE/PERCENT:...`. As in fio the
/// percentages add up to 100 (more is an error) and a size with no
/// percentage (`4k/` or `4k`) gets an equal share of what the others leave
/// (fio's integer division); unlike fio, a sum below 100 with no such size is
/// an error too (fio would silently give the rest to one size). Sizes with
/// weight 0 are dropped; at most [`MAX_BSSPLIT_SIZES`] sizes.
pub(super) fn parse_bssplit(text: &str, capacity_bytes: u64) -> Result<Vec<(u64, u32)>> {
    let parts: Vec<&str> = text.split(':').filter(|p| !p.trim().is_empty()).collect();
    if parts.len() > MAX_BSSPLIT_SIZES {
        return Err(werr("bssplit", format!("{} sizes: at most {MAX_BSSPLIT_SIZES} (fio's limit)", parts.len())));
    }
    let mut entries: Vec<(u64, Option<u32>)> = Vec::with_capacity(parts.len());
    for part in parts {
        let (b, w) = match part.split_once('/') {
            Some((b, w)) => (b, Some(w.trim())),
            None => (part, None),
        };
        let bytes = parse_size("bssplit", &Value::String(b.into()), capacity_bytes)?;
        let weight = match w {
            None | Some("") => None,
            Some(w) => Some(
                w.parse::<u32>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| werr("bssplit", format!("'{w}' in '{part}' is not a whole percentage 0..100")))?,
            ),
        };
        entries.push((bytes, weight));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 {
        return Err(werr("bssplit", format!("'{text}': the percentages add up to {given}, more than 100")));
    }
    if blanks == 0 && given != 100 {
        return Err(werr(
            "bssplit",
            format!(
                "'{text}': the percentages add up to {given}, not 100 (as in fio; a size without a percentage, e.g. 4k/, shares the rest)"
            ),
        ));
    }
    let share = (100 - given).checked_div(blanks).unwrap_or(0);
    let sizes: Vec<(u64, u32)> = entries.into_iter().map(|(b, w)| (b, w.unwrap_or(share))).filter(|e| e.1 > 0).collect();
    if sizes.is_empty() {
        return Err(werr("bssplit", "no size has a weight above 0"));
    }
    Ok(sizes)
}

/// The documented maxima of a job's io_size and number of I/Os (without
/// `force`; the runtime's is checked as it is parsed).
pub(super) fn check_job_bounds(io_limit: Option<(u64, String)>, number_ios: Option<u64>, min_bs: u64, capacity_bytes: u64) -> Result<()> {
    let max_bytes = capacity_bytes.saturating_mul(MAX_CAPACITIES_PER_JOB);
    if let Some((b, text)) = io_limit.filter(|b| b.0 > max_bytes) {
        return Err(werr(
            "io_size",
            format!("'{text}' ({b} B) is more than the maximum of {MAX_CAPACITIES_PER_JOB} x the drive's capacity ({max_bytes} B) per job; {FORCE_HINT}"),
        ));
    }
    let max_ios = max_bytes / min_bs.max(1);
    if let Some(n) = number_ios.filter(|n| *n > max_ios) {
        return Err(werr(
            "number_ios",
            format!(
                "{n} I/Os is more than the maximum of {max_ios} per job ({MAX_CAPACITIES_PER_JOB} x the drive's capacity in I/Os of the smallest block size, {min_bs} B); {FORCE_HINT}"
            ),
        ));
    }
    Ok(())
}

/// Our `data_pattern` key, or fio's buffer options, to a data pattern.
pub(super) fn parse_data_pattern(obj: &serde_json::Map<String, Value>) -> Result<DataPattern> {
    let get = |k: &str| obj.get(k).filter(|v| !v.is_null());
    if let Some(d) = get("data_pattern") {
        return DataPattern::parse(&as_text(d)).map_err(|m| werr("data_pattern", m));
    }
    if let Some(z) = get("zero_buffers") {
        if parse_bool("zero_buffers", z)? {
            return Ok(DataPattern::Zeros);
        }
    }
    if let Some(p) = get("buffer_compress_percentage") {
        let pct = parse_u64("buffer_compress_percentage", p)?;
        if pct > 99 {
            return Err(werr("buffer_compress_percentage", format!("{pct}: must be 0..=99")));
        }
        if pct == 0 {
            return Ok(DataPattern::Incompressible);
        }
        return Ok(DataPattern::Ratio { permille: (1000 - pct * 10) as u16 });
    }
    let refill = get("refill_buffers").map(|v| parse_bool("refill_buffers", v)).transpose()?.unwrap_or(false);
    let scramble = get("scramble_buffers").map(|v| parse_bool("scramble_buffers", v)).transpose()?.unwrap_or(true);
    if !refill && !scramble {
        return Ok(DataPattern::Repeated);
    }
    Ok(DataPattern::Incompressible)
}
