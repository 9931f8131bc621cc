//! Host workloads in fio's vocabulary: what a closed-loop job asks of the drive.
//!
//! A [`Workload`] is parsed from plain key/value data (the CLI's flags, a job
//! file, a Python dict): `rw`, `bs`/`bssplit`, `blockalign`, `offset`, `size`,
//! `io_size`, `number_ios`, `runtime`, `time_based`, `iodepth`, `rwmixread`,
//! `data_pattern` (or fio's buffer options), `log_avg_msec`, `randseed`, `name`,
//! `fsync` / `fdatasync` (a FLUSH CACHE after every N writes, as fio's).
//! Sizes take fio's suffixes (k, m, g, t: powers of 1024) or a percentage of
//! the drive (`75%`); times take ns, us, ms, s, m, h (a bare number is seconds,
//! as in fio).

use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use crate::error::Result;
use crate::parse::{as_text, known_keys, parse_bool, parse_size, parse_time_ns, parse_time_ns_f64, parse_u64, werr};
use crate::pattern::DataPattern;
use crate::rng::Rng;
use serde_json::{json, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `readwrite` / `rw`).
    ReadWrite,
    RandRw,
    Trim,
    RandTrim,
}

impl RwMode {
    pub fn parse(s: &str) -> Option<RwMode> {
        Some(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "readwrite" | "rw" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "readwrite",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub name: String,
    pub rw: RwMode,
    /// Transfer sizes and their weights (fio `bssplit`; one entry for `bs`).
    pub sizes: Vec<(u64, u32)>,
    pub blockalign_bytes: u64,
    pub offset_bytes: u64,
    /// Length of the region I/O falls in.
    pub size_bytes: u64,
    /// Stop after this many bytes (None: no byte limit).
    pub io_limit_bytes: Option<u64>,
    pub number_ios: Option<u64>,
    pub runtime_ns: Option<u64>,
    pub iodepth: u32,
    pub rwmixread_percent: u32,
    pub data_pattern: DataPattern,
    pub interval_ns: u64,
    pub randseed: Option<u64>,
    /// fio `fsync=N` (or `fdatasync=N`, the same on a block device): after
    /// every N writes issued the job waits for its outstanding I/Os, issues a
    /// FLUSH CACHE and waits for it before issuing more. 0: never.
    pub fsync_every: u64,
}

/// The longest simulated runtime a job may ask for without `force`: 7 days
/// (the span of a week-long trace such as MSR Cambridge). Beyond it a typo
/// (`runtime = 1000000000000`) would run for ever without a word.
pub const MAX_RUNTIME_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;

/// The most data a job may move without `force`, in drive capacities:
/// `io_size` up to this many times the capacity, `number_ios` up to that
/// many bytes in I/Os of the job's smallest block size.
pub const MAX_CAPACITIES_PER_JOB: u64 = 100;

/// The longest series interval (`log_avg_msec`): one year.
pub const MAX_LOG_AVG_MSEC: u64 = 365 * 24 * 3600 * 1000;

/// The most sizes a `bssplit` may list (fio's limit).
pub const MAX_BSSPLIT_SIZES: usize = 64;

/// What `force = true` lets through, for messages.
const FORCE_HINT: &str = "give force = true (ssdlab run --force) to run it anyway";

/// Every key a job may have (anything else is an error naming it).
pub const KEYS: &[&str] = &[
    "name",
    "rw",
    "readwrite",
    "bs",
    "bssplit",
    "blockalign",
    "offset",
    "size",
    "io_size",
    "io_limit",
    "number_ios",
    "runtime",
    "time_based",
    "iodepth",
    "rwmixread",
    "rwmixwrite",
    "data_pattern",
    "refill_buffers",
    "scramble_buffers",
    "buffer_compress_percentage",
    "zero_buffers",
    "log_avg_msec",
    "randseed",
    "fsync",
    "fdatasync",
    "force",
];

impl Workload {
    /// Build a workload from fio-style keys; `capacity_bytes` resolves
    /// percentages and the default region.
    pub fn from_json(v: &Value, capacity_bytes: u64) -> Result<Workload> {
        let obj = v.as_object().ok_or_else(|| werr("(job)", "a workload is a mapping of fio-style keys"))?;
        known_keys(obj, KEYS, "workload key")?;
        let get = |k: &str| obj.get(k).filter(|v| !v.is_null());
        let rw_text = get("rw")
            .or(get("readwrite"))
            .map(as_text)
            .ok_or_else(|| werr("rw", "missing: give rw = read, write, randread, randwrite, readwrite, randrw, trim or randtrim"))?;
        let rw = RwMode::parse(rw_text.trim()).ok_or_else(|| {
            werr("rw", format!("'{rw_text}' is not allowed; use read, write, randread, randwrite, readwrite, randrw, trim or randtrim"))
        })?;
        let mut sizes = Vec::new();
        if let Some(split) = get("bssplit") {
            sizes = parse_bssplit(&as_text(split), capacity_bytes)?;
        } else {
            let bs = match get("bs") {
                Some(b) => parse_size("bs", b, capacity_bytes)?,
                None => 4096,
            };
            sizes.push((bs, 1));
        }
        for &(b, _) in &sizes {
            if b == 0 || b % SECTOR_BYTES != 0 || b > (64 << 20) {
                return Err(werr(
                    if get("bssplit").is_some() { "bssplit" } else { "bs" },
                    format!("{b} bytes: block sizes must be multiples of 512 B from 512 B to 64 MiB"),
                ));
            }
        }
        let min_bs = sizes.iter().map(|x| x.0).min().unwrap();
        let max_bs = sizes.iter().map(|x| x.0).max().unwrap();
        let blockalign_bytes = match get("blockalign") {
            Some(a) => parse_size("blockalign", a, capacity_bytes)?,
            None => min_bs,
        };
        if blockalign_bytes == 0 || blockalign_bytes % SECTOR_BYTES != 0 {
            return Err(werr("blockalign", format!("{blockalign_bytes}: must be a positive multiple of 512 B")));
        }
        let offset_bytes = match get("offset") {
            Some(o) => parse_size("offset", o, capacity_bytes)?,
            None => 0,
        };
        if offset_bytes % SECTOR_BYTES != 0 || offset_bytes >= capacity_bytes {
            return Err(werr("offset", format!("{offset_bytes}: must be a multiple of 512 B below the capacity ({capacity_bytes} B)")));
        }
        let size_bytes = match get("size") {
            Some(s) => parse_size("size", s, capacity_bytes)?,
            None => capacity_bytes - offset_bytes,
        };
        if size_bytes == 0 || offset_bytes + size_bytes > capacity_bytes {
            return Err(werr(
                "size",
                format!("offset {offset_bytes} + size {size_bytes} must be within the drive's {capacity_bytes} B (and size > 0)"),
            ));
        }
        if size_bytes < max_bs {
            return Err(werr("size", format!("{size_bytes} B is smaller than the largest block size {max_bs} B")));
        }
        let io_limit = match get("io_size").or(get("io_limit")) {
            Some(s) => Some(parse_size("io_size", s, capacity_bytes)?),
            None => None,
        };
        // fio: number_ios = 0 (its default) sets no limit.
        let number_ios = get("number_ios").map(|v| parse_u64("number_ios", v)).transpose()?.filter(|n| *n > 0);
        let force = get("force").map(|v| parse_bool("force", v)).transpose()?.unwrap_or(false);
        let runtime_ns = match get("runtime") {
            Some(v) if !force && parse_time_ns_f64("runtime", v)? > MAX_RUNTIME_NS as f64 => {
                return Err(werr(
                    "runtime",
                    format!(
                        "'{}' is more than the maximum of 7 days ({} s) of simulated time per job; {FORCE_HINT}",
                        as_text(v),
                        MAX_RUNTIME_NS / 1_000_000_000
                    ),
                ));
            }
            Some(v) => Some(parse_time_ns("runtime", v)?),
            None => None,
        };
        if runtime_ns == Some(0) {
            return Err(werr("runtime", "must be longer than 0"));
        }
        if !force {
            let io_text = get("io_size").or(get("io_limit")).map(as_text).unwrap_or_default();
            check_job_bounds(io_limit.map(|b| (b, io_text)), number_ios, min_bs, capacity_bytes)?;
        }
        let time_based = get("time_based").map(|v| parse_bool("time_based", v)).transpose()?;
        // fio: without a byte/count limit a job does one pass over its region;
        // a runtime makes it time based unless io_size says otherwise.
        let io_limit_bytes = match (io_limit, number_ios, runtime_ns, time_based) {
            (Some(l), _, _, _) => Some(l),
            (None, Some(_), _, _) => None,
            (None, None, Some(_), Some(false)) => Some(size_bytes),
            (None, None, Some(_), _) => None,
            (None, None, None, Some(true)) => {
                return Err(werr("time_based", "time_based needs a runtime"));
            }
            (None, None, None, _) => Some(size_bytes),
        };
        let iodepth = match get("iodepth") {
            Some(v) => parse_u64("iodepth", v)?,
            None => 1,
        };
        if iodepth == 0 || iodepth > 256 {
            return Err(werr(
                "iodepth",
                format!("{iodepth}: must be 1..=256 (the drive's NCQ takes up to 32 at once; more wait in the host queue)"),
            ));
        }
        let rwmixread_percent = match (get("rwmixread"), get("rwmixwrite")) {
            (Some(v), _) => parse_u64("rwmixread", v)?,
            (None, Some(v)) => 100u64.saturating_sub(parse_u64("rwmixwrite", v)?),
            _ => 50,
        };
        if rwmixread_percent > 100 {
            return Err(werr("rwmixread", format!("{rwmixread_percent}: must be 0..=100")));
        }
        let data_pattern = parse_data_pattern(obj)?;
        let interval_ns = match get("log_avg_msec") {
            Some(v) => parse_u64("log_avg_msec", v)?,
            None => 1000,
        };
        if !(1..=MAX_LOG_AVG_MSEC).contains(&interval_ns) {
            return Err(werr("log_avg_msec", format!("{interval_ns}: must be from 1 ms to {MAX_LOG_AVG_MSEC} ms (one year)")));
        }
        let interval_ns = interval_ns * 1_000_000;
        let randseed = get("randseed").map(|v| parse_u64("randseed", v)).transpose()?;
        let flush_period = |k: &str| -> Result<u64> {
            match get(k) {
                None => Ok(0),
                Some(v) => parse_u64(k, v).map_err(|_| {
                    werr(
                        k,
                        format!("'{}' is not allowed: give a whole number >= 0 (a FLUSH CACHE after every N writes; 0: none)", as_text(v)),
                    )
                }),
            }
        };
        let fsync = flush_period("fsync")?;
        let fdatasync = flush_period("fdatasync")?;
        if fsync > 0 && fdatasync > 0 && fsync != fdatasync {
            return Err(werr(
                "fdatasync",
                format!("{fdatasync} with fsync = {fsync}: on a block device both are a FLUSH CACHE; give one of them"),
            ));
        }
        let fsync_every = fsync.max(fdatasync);
        let name = get("name").map(as_text).unwrap_or_else(|| rw.name().to_string());
        Ok(Workload {
            name,
            rw,
            sizes,
            blockalign_bytes,
            offset_bytes,
            size_bytes,
            io_limit_bytes,
            number_ios,
            runtime_ns,
            iodepth: iodepth as u32,
            rwmixread_percent: rwmixread_percent as u32,
            data_pattern,
            interval_ns,
            randseed,
            fsync_every,
        })
    }

    /// The normalised job: every size in bytes, every time in ns.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "rw": self.rw.name(),
            "sizes": self.sizes.iter().map(|(b, wt)| json!({"bytes": b, "weight": wt})).collect::<Vec<_>>(),
            "blockalign_bytes": self.blockalign_bytes,
            "offset_bytes": self.offset_bytes,
            "size_bytes": self.size_bytes,
            "io_limit_bytes": self.io_limit_bytes,
            "number_ios": self.number_ios,
            "runtime_ns": self.runtime_ns,
            "iodepth": self.iodepth,
            "rwmixread_percent": self.rwmixread_percent,
            "data_pattern": self.data_pattern.to_string(),
            "interval_ns": self.interval_ns,
            "randseed": self.randseed,
            "fsync": self.fsync_every,
        })
    }
}

/// fio's `bssplit`: `SIZE/PERCENT:SIZE/PERCENT:...`. As in fio the
/// percentages add up to 100 (more is an error) and a size with no
/// percentage (`4k/` or `4k`) gets an equal share of what the others leave
/// (fio's integer division); unlike fio, a sum below 100 with no such size is
/// an error too (fio would silently give the rest to one size). Sizes with
/// weight 0 are dropped; at most [`MAX_BSSPLIT_SIZES`] sizes.
fn parse_bssplit(text: &str, capacity_bytes: u64) -> Result<Vec<(u64, u32)>> {
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
fn check_job_bounds(io_limit: Option<(u64, String)>, number_ios: Option<u64>, min_bs: u64, capacity_bytes: u64) -> Result<()> {
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
fn parse_data_pattern(obj: &serde_json::Map<String, Value>) -> Result<DataPattern> {
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

/// Generates the I/Os of a workload, one at a time.
#[derive(Clone, Debug)]
pub struct IoGen {
    rw: RwMode,
    sizes: Vec<(u64, u32)>,
    start: u64,
    len: u64,
    align: u64,
    cursor: u64,
    mix: u32,
    rng: Rng,
}

impl IoGen {
    pub fn new(w: &Workload, seed: u64) -> IoGen {
        IoGen {
            rw: w.rw,
            sizes: w.sizes.clone(),
            start: w.offset_bytes,
            len: w.size_bytes,
            align: w.blockalign_bytes,
            cursor: 0,
            mix: w.rwmixread_percent,
            rng: Rng::fork(w.randseed.unwrap_or(seed), "host-io"),
        }
    }

    #[inline]
    fn pick_size(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        self.sizes[self.rng.weighted(&self.sizes)].0
    }

    /// The next I/O: operation, byte offset, length.
    #[inline]
    pub fn next_io(&mut self) -> (Op, u64, u64) {
        let op = match self.rw {
            RwMode::Read | RwMode::RandRead => Op::Read,
            RwMode::Write | RwMode::RandWrite => Op::Write,
            RwMode::Trim | RwMode::RandTrim => Op::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.rng.percent(self.mix) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let bs = self.pick_size();
        let off = if self.rw.is_random() {
            let slots = (self.len - bs) / self.align + 1;
            self.start + self.rng.below(slots) * self.align
        } else {
            if self.cursor >= self.len {
                self.cursor = 0;
            }
            // The last I/O of a pass covers what is left of the region.
            let left = self.len - self.cursor;
            let o = self.start + self.cursor;
            let bs = if left < bs { left } else { bs };
            self.cursor += bs;
            return (op, o, bs);
        };
        (op, off, bs)
    }
}

/// Units (4KB) touched by a byte range.
#[inline]
pub fn unit_span(off: u64, len: u64) -> (u64, u64) {
    let first = off / UNIT_BYTES;
    let last = (off + len - 1) / UNIT_BYTES;
    (first, last - first + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CAP: u64 = 120_000_000_000;

    #[test]
    fn fio_vocabulary() {
        let w = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"runtime":"60s","size":"8g"}), CAP).unwrap();
        assert_eq!(w.sizes, vec![(4096, 1)]);
        assert_eq!(w.size_bytes, 8 << 30);
        assert_eq!(w.runtime_ns, Some(60_000_000_000));
        assert_eq!(w.io_limit_bytes, None);
        assert_eq!(w.data_pattern, DataPattern::Incompressible);
        let w = Workload::from_json(&json!({"rw":"write","bs":"128k"}), CAP).unwrap();
        assert_eq!(w.io_limit_bytes, Some(CAP));
        let w = Workload::from_json(&json!({"rw":"randrw","bssplit":"4k/50:64k/50","rwmixread":70,"size":"75%","scramble_buffers":0}), CAP)
            .unwrap();
        assert_eq!(w.sizes.len(), 2);
        assert_eq!(w.data_pattern, DataPattern::Repeated);
        assert_eq!(w.size_bytes, 90_000_000_000);
    }

    #[test]
    fn bad_input_names_the_field() {
        let e = Workload::from_json(&json!({"rw":"randwrit"}), CAP).unwrap_err().to_string();
        assert!(e.contains("'rw'") && e.contains("randwrite"), "{e}");
        let e = Workload::from_json(&json!({"rw":"write","bs":"4q"}), CAP).unwrap_err().to_string();
        assert!(e.contains("'bs'"), "{e}");
        let e = Workload::from_json(&json!({"rw":"write","iodepth":0}), CAP).unwrap_err().to_string();
        assert!(e.contains("iodepth"), "{e}");
        let e = Workload::from_json(&json!({"rw":"write","runtime":"5 parsecs"}), CAP).unwrap_err().to_string();
        assert!(e.contains("runtime"), "{e}");
        let e = Workload::from_json(&json!({"rw":"write","depth":3}), CAP).unwrap_err().to_string();
        assert!(e.contains("'depth'") && e.contains("iodepth"), "{e}");
        let e = Workload::from_json(&json!({"rw":"write","size":"200g"}), CAP).unwrap_err().to_string();
        assert!(e.contains("'size'"), "{e}");
    }

    #[test]
    fn the_data_pattern_has_one_name_and_old_names_point_to_it() {
        let w = Workload::from_json(&json!({"rw":"write","data_pattern":"ratio:0.5"}), CAP).unwrap();
        assert_eq!(w.data_pattern, DataPattern::Ratio { permille: 500 });
        assert_eq!(w.to_json()["data_pattern"], "ratio:0.5");
        for old in ["data", "pattern", "write_pattern"] {
            let e = Workload::from_json(&json!({"rw":"write", old: "zeros"}), CAP).unwrap_err().to_string();
            assert!(e.contains(&format!("'{old}'")) && e.contains("'data_pattern'"), "{e}");
        }
        let e = Workload::from_json(&json!({"rw":"write","data_pattern":"lumpy"}), CAP).unwrap_err().to_string();
        assert!(e.contains("'data_pattern'"), "{e}");
    }

    #[test]
    fn a_sequential_pass_covers_the_region_exactly() {
        let w = Workload::from_json(&json!({"rw":"write","bs":"128k","offset":"4k","size":"300k"}), CAP).unwrap();
        let mut g = IoGen::new(&w, 1);
        let ios: Vec<(u64, u64)> = (0..4)
            .map(|_| {
                let (_, o, l) = g.next_io();
                (o, l)
            })
            .collect();
        assert_eq!(ios, vec![(4096, 131072), (4096 + 131072, 131072), (4096 + 262144, 45056), (4096, 131072)]);
    }

    #[test]
    fn random_offsets_stay_aligned_in_region() {
        let w = Workload::from_json(&json!({"rw":"randread","bs":"16k","blockalign":"4k","offset":"1m","size":"1m"}), CAP).unwrap();
        let mut g = IoGen::new(&w, 1);
        for _ in 0..10_000 {
            let (_, o, l) = g.next_io();
            assert!(o >= 1 << 20 && o + l <= 2 << 20 && o % 4096 == 0);
        }
    }
}
