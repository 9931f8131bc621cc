//! Host workloads in fio's vocabulary: what a closed-loop job asks of the drive.
//!
//! A [`Workload`] is parsed from plain key/value data (the CLI's flags, a job
//! file, a Python dict): `rw`, `bs`/`bssplit`, `blockalign`, `offset`, `size`,
//! `io_size`, `number_ios`, `runtime`, `time_based`, `iodepth`, `rwmixread`,
//! `data_pattern` (or fio's buffer options), `log_avg_msec`, `randseed`, `name`,
//! `fsync` / `fdatasync` (a FLUSH CACHE after every N writes, as fio's),
//! `bsrange` (`MIN-MAX`: sizes drawn as fio draws them) and fio's `rw`
//! modifier (`read:-8k`: bytes added to a sequential offset after each I/O;
//! `randread:8`: I/Os per random offset, the rest sequential after it).
//! Sizes take fio's suffixes (k, m, g, t: powers of 1024) or a percentage of
//! the drive (`75%`); times take ns, us, ms, s, m, h (a bare number is seconds,
//! as in fio).

use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use crate::error::{Result, SimError};
use crate::parse::{as_text, known_keys, parse_bool, parse_size, parse_time_ns, parse_time_ns_f64, parse_u64, werr};
use crate::pattern::DataPattern;
use crate::rng::Rng;
use crate::skew::{Skew, SkewGen};
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
    /// fio `trimwrite`: each block is trimmed, then written, in order.
    TrimWrite,
    /// fio `randtrimwrite`: the same at random offsets.
    RandTrimWrite,
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
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
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
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim | RwMode::RandTrimWrite)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
}

/// Most I/Os one job keeps in flight: as many as the largest NVMe queue
/// holds (65536 entries).
pub const MAX_IODEPTH: u32 = 65_536;

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
    /// fio `bsrange=MIN-MAX`: sizes drawn between the two (None: `sizes`).
    pub bs_range: Option<(u64, u64)>,
    /// fio's `rw=MODE:N` on a sequential mode: bytes added to the offset
    /// after each I/O (negative: backwards). 0: none.
    pub seq_add_bytes: i64,
    /// fio's `rw=MODE:N` on a random mode: I/Os per random offset (the others
    /// follow it sequentially). 1: every I/O at a new offset.
    pub seq_nr: u64,
    /// fio `rate` (bytes per second over the job's I/O; 0: no limit) and
    /// `rate_iops`: the job issues no faster (fio's linear rate process).
    pub rate_bytes_per_s: u64,
    pub rate_iops: u64,
    /// fio `thinktime` (0: none): after every `thinktime_blocks` I/Os issued
    /// the job issues nothing for this long (its I/O in flight goes on).
    pub thinktime_ns: u64,
    pub thinktime_blocks: u64,
    /// fio `startdelay`: the job starts this long after the others of its group.
    pub startdelay_ns: u64,
    /// fio `random_distribution=zoned` / `zoned_abs`: (share of accesses in
    /// percent, zone start and length in bytes within the region), in order.
    /// Empty: uniform.
    pub zones: Vec<(u32, u64, u64)>,
    /// fio `random_distribution=zipf|pareto|normal` (None: uniform or zoned).
    pub skew: Option<Skew>,
    /// fio's write sizes when they differ from the read sizes (`bs=R,W`,
    /// `bssplit=READ,WRITE` on a mixed job) and their alignment (fio's
    /// `blockalign` is per direction, the smallest size by default). Empty:
    /// `sizes` for every direction.
    pub write_sizes: Vec<(u64, u32)>,
    pub write_blockalign_bytes: u64,
    /// fio's loop of a sequential job (`loops` over an `io_size`, or
    /// `io_size` with `time_based`): after this many bytes the stream
    /// restarts at the region's start. 0: it only wraps at the region's end.
    pub loop_bytes: u64,
    /// fio `rate_process=poisson`: exponential gaps around the rate instead
    /// of a fixed schedule.
    pub rate_poisson: bool,
    /// fio `flow_id`, `flow` (the job's weight, 0: not in a flow) and
    /// `flow_sleep`: jobs of one flow issue in the ratio of their weights.
    pub flow_id: u64,
    pub flow_weight: u32,
    pub flow_sleep_ns: u64,
    /// fio `latency_target` (0: none), `latency_window`,
    /// `latency_percentile` and `latency_run`: the search for the deepest
    /// queue that keeps that share of I/Os within the target.
    pub latency_target_ns: u64,
    pub latency_window_ns: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
}

impl Workload {
    /// Whether the job paces itself (rate, think time, a start delay): it
    /// runs as a submitter of [`crate::Simulator::run_jobs`].
    pub fn paced(&self) -> bool {
        self.rate_bytes_per_s > 0
            || self.rate_iops > 0
            || self.thinktime_ns > 0
            || self.startdelay_ns > 0
            || self.flow_weight > 0
            || self.latency_target_ns > 0
    }
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
    "bsrange",
    "rate",
    "rate_iops",
    "thinktime",
    "thinktime_blocks",
    "startdelay",
    "random_distribution",
    "write_bssplit",
    "loop_bytes",
    "rate_process",
    "flow",
    "flow_id",
    "flow_sleep",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "force",
];

/// fio's most weight a job may have in a flow (`FLOW_MAX_WEIGHT`).
pub const MAX_FLOW_WEIGHT: u64 = 1000;

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
        let (mode_text, modifier) = match rw_text.trim().split_once(':') {
            Some((m, n)) => (m.trim().to_string(), Some(n.trim().to_string())),
            None => (rw_text.trim().to_string(), None),
        };
        let rw = RwMode::parse(&mode_text).ok_or_else(|| {
            werr(
                "rw",
                format!("'{rw_text}' is not allowed; use read, write, randread, randwrite, readwrite, randrw, trim, randtrim, trimwrite or randtrimwrite"),
            )
        })?;
        let (seq_add_bytes, seq_nr) = parse_rw_modifier(rw, modifier.as_deref(), capacity_bytes)?;
        let mut sizes = Vec::new();
        let mut bs_range = None;
        if let Some(range) = get("bsrange") {
            let text = as_text(range);
            let (lo, hi) = text.split_once('-').ok_or_else(|| werr("bsrange", format!("'{text}' is not MIN-MAX, e.g. 4k-64k")))?;
            let lo = parse_size("bsrange", &Value::String(lo.trim().into()), capacity_bytes)?;
            let hi = parse_size("bsrange", &Value::String(hi.trim().into()), capacity_bytes)?;
            if lo == 0 || hi < lo {
                return Err(werr("bsrange", format!("'{text}': give MIN-MAX with 0 < MIN <= MAX")));
            }
            sizes.push((lo, 1));
            if hi > lo {
                sizes.push((hi, 1));
                bs_range = Some((lo, hi));
            }
        } else if let Some(split) = get("bssplit") {
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
                    if get("bsrange").is_some() {
                        "bsrange"
                    } else if get("bssplit").is_some() {
                        "bssplit"
                    } else {
                        "bs"
                    },
                    format!("{b} bytes: block sizes must be multiples of 512 B from 512 B to 64 MiB"),
                ));
            }
        }
        let write_sizes = match get("write_bssplit") {
            Some(split) => parse_bssplit(&as_text(split), capacity_bytes).map_err(|e| match e {
                SimError::Workload { message, .. } => werr("write_bssplit", message),
                e => e,
            })?,
            None => Vec::new(),
        };
        for &(b, _) in &write_sizes {
            if b == 0 || b % SECTOR_BYTES != 0 || b > (64 << 20) {
                return Err(werr("write_bssplit", format!("{b} bytes: block sizes must be multiples of 512 B from 512 B to 64 MiB")));
            }
        }
        let read_min_bs = sizes.iter().map(|x| x.0).min().unwrap();
        let min_bs = sizes.iter().chain(&write_sizes).map(|x| x.0).min().unwrap();
        let max_bs = sizes.iter().chain(&write_sizes).map(|x| x.0).max().unwrap();
        let blockalign_bytes = match get("blockalign") {
            Some(a) => parse_size("blockalign", a, capacity_bytes)?,
            None => read_min_bs,
        };
        let write_blockalign_bytes = match (get("blockalign"), write_sizes.iter().map(|x| x.0).min()) {
            (None, Some(b)) => b,
            _ => blockalign_bytes,
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
        if iodepth == 0 || iodepth > MAX_IODEPTH as u64 {
            return Err(werr(
                "iodepth",
                format!(
                    "{iodepth}: must be 1..={MAX_IODEPTH} (a SATA drive's NCQ takes up to 32 at once, an NVMe queue queue_depth - 1; more wait in the host queue)"
                ),
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
        let rate_bytes_per_s = get("rate").map(|v| parse_size("rate", v, capacity_bytes)).transpose()?.unwrap_or(0);
        let rate_iops = get("rate_iops").map(|v| parse_u64("rate_iops", v)).transpose()?.unwrap_or(0);
        let thinktime_ns = get("thinktime").map(|v| parse_time_ns("thinktime", v)).transpose()?.unwrap_or(0);
        let thinktime_blocks = get("thinktime_blocks").map(|v| parse_u64("thinktime_blocks", v)).transpose()?.unwrap_or(1);
        if thinktime_blocks == 0 {
            return Err(werr("thinktime_blocks", "must be 1 or more"));
        }
        let startdelay_ns = get("startdelay").map(|v| parse_time_ns("startdelay", v)).transpose()?.unwrap_or(0);
        let skew = get("random_distribution").map(|v| Skew::parse(&as_text(v))).transpose()?.flatten();
        let zones = match get("random_distribution") {
            Some(v) if skew.is_none() => parse_zones(&as_text(v), size_bytes, max_bs, blockalign_bytes, capacity_bytes)?,
            _ => Vec::new(),
        };
        let loop_bytes = get("loop_bytes").map(|v| parse_size("loop_bytes", v, capacity_bytes)).transpose()?.unwrap_or(0);
        let rate_poisson = match get("rate_process").map(as_text).as_deref().map(str::trim) {
            None | Some("linear") => false,
            Some("poisson") => true,
            Some(other) => return Err(werr("rate_process", format!("'{other}' is not allowed; use linear or poisson"))),
        };
        if rate_poisson {
            let iops = if rate_bytes_per_s > 0 { rate_bytes_per_s / min_bs } else { rate_iops };
            if iops == 0 {
                return Err(werr(
                    "rate_process",
                    "poisson needs a rate of at least one I/O of the smallest block size per second (rate or rate_iops)",
                ));
            }
        }
        let flow_weight = get("flow").map(|v| parse_u64("flow", v)).transpose()?.unwrap_or(0);
        if flow_weight > MAX_FLOW_WEIGHT {
            return Err(werr("flow", format!("{flow_weight}: must be 0..={MAX_FLOW_WEIGHT} (fio's limit; 0: not in a flow)")));
        }
        let flow_id = get("flow_id").map(|v| parse_u64("flow_id", v)).transpose()?.unwrap_or(0);
        let flow_sleep_ns = get("flow_sleep").map(|v| parse_time_ns("flow_sleep", v)).transpose()?.unwrap_or(0);
        let latency_target_ns = get("latency_target").map(|v| parse_time_ns("latency_target", v)).transpose()?.unwrap_or(0);
        let latency_window_ns = get("latency_window").map(|v| parse_time_ns("latency_window", v)).transpose()?.unwrap_or(0);
        let latency_percentile = match get("latency_percentile") {
            None => 100.0,
            Some(v) => as_text(v)
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| werr("latency_percentile", format!("'{}': give a percentage 0..100", as_text(v))))?,
        };
        let latency_run = get("latency_run").map(|v| parse_bool("latency_run", v)).transpose()?.unwrap_or(false);
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
            bs_range,
            seq_add_bytes,
            seq_nr,
            rate_bytes_per_s,
            rate_iops,
            thinktime_ns,
            thinktime_blocks,
            startdelay_ns,
            zones,
            skew,
            write_sizes,
            write_blockalign_bytes,
            loop_bytes,
            rate_poisson,
            flow_id,
            flow_weight: flow_weight as u32,
            flow_sleep_ns,
            latency_target_ns,
            latency_window_ns,
            latency_percentile,
            latency_run,
        })
    }

    /// The normalised job: every size in bytes, every time in ns.
    pub fn to_json(&self) -> Value {
        let mut j = json!({
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
        });
        // fio's later options appear only when a job sets them, so that the
        // normalised form of every other job stays as it was.
        let extra = [
            ("bsrange", self.bs_range.map(|(a, b)| json!([a, b]))),
            ("rw_seq_add_bytes", (self.seq_add_bytes != 0).then(|| json!(self.seq_add_bytes))),
            ("rw_seq_nr", (self.seq_nr > 1).then(|| json!(self.seq_nr))),
            ("rate_bytes_per_s", (self.rate_bytes_per_s > 0).then(|| json!(self.rate_bytes_per_s))),
            ("rate_iops", (self.rate_iops > 0).then(|| json!(self.rate_iops))),
            ("thinktime_ns", (self.thinktime_ns > 0).then(|| json!(self.thinktime_ns))),
            ("thinktime_blocks", (self.thinktime_ns > 0).then(|| json!(self.thinktime_blocks))),
            ("startdelay_ns", (self.startdelay_ns > 0).then(|| json!(self.startdelay_ns))),
            ("zones", (!self.zones.is_empty()).then(|| json!(self.zones))),
            ("random_distribution", self.skew.map(|s| json!(s.text()))),
            ("write_sizes", (!self.write_sizes.is_empty()).then(|| json!(self.write_sizes))),
            ("loop_bytes", (self.loop_bytes > 0).then(|| json!(self.loop_bytes))),
            ("rate_process", self.rate_poisson.then(|| json!("poisson"))),
            (
                "flow",
                (self.flow_weight > 0).then(|| json!({"id": self.flow_id, "weight": self.flow_weight, "sleep_ns": self.flow_sleep_ns})),
            ),
            (
                "latency_target",
                (self.latency_target_ns > 0).then(|| {
                    json!({"target_ns": self.latency_target_ns, "window_ns": self.latency_window_ns,
                           "percentile": self.latency_percentile, "run": self.latency_run})
                }),
            ),
        ];
        for (k, v) in extra {
            if let Some(v) = v {
                j[k] = v;
            }
        }
        j
    }
}

/// fio's `random_distribution`: `random` (uniform), `zoned:A/R:...` (A% of
/// the accesses to the next R% of the region; both add up to 100) or
/// `zoned_abs:A/SIZE:...` (zones of absolute sizes from the region's start);
/// a last zone without a range (`20/`) takes the rest of the region.
fn parse_zones(text: &str, size_bytes: u64, max_bs: u64, align: u64, capacity_bytes: u64) -> Result<Vec<(u32, u64, u64)>> {
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
fn parse_rw_modifier(rw: RwMode, modifier: Option<&str>, capacity_bytes: u64) -> Result<(i64, u64)> {
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
    bs_range: Option<(u64, u64)>,
    seq_add: i64,
    seq_nr: u64,
    /// I/Os still to follow the last random offset sequentially.
    seq_left: u64,
    /// End of the last random I/O (where a sequential follower starts).
    last_end: u64,
    /// The write that follows a trim of the same block (trimwrite).
    pending_write: Option<(u64, u64)>,
    /// Zones of a zoned distribution: (index, share) for the draw, and each
    /// zone's (start, length) within the region.
    zone_weights: Vec<(usize, u32)>,
    zones: Vec<(u64, u64)>,
    /// A zipf, pareto or normal draw of the block (None: uniform or zoned).
    skew: Option<SkewGen>,
    /// Write sizes and alignment of a job whose directions differ (empty:
    /// `sizes`, `align`).
    write_sizes: Vec<(u64, u32)>,
    write_align: u64,
    /// A sequential stream restarts at the region's start after this many
    /// bytes (0: never); bytes issued in the current loop.
    loop_bytes: u64,
    in_loop: u64,
    /// Any of the above in use: the I/Os come from `next_io_extended`.
    extended: bool,
}

impl IoGen {
    pub fn new(w: &Workload, seed: u64) -> IoGen {
        let mut g = IoGen {
            rw: w.rw,
            sizes: w.sizes.clone(),
            start: w.offset_bytes,
            len: w.size_bytes,
            align: w.blockalign_bytes,
            cursor: 0,
            mix: w.rwmixread_percent,
            rng: Rng::fork(w.randseed.unwrap_or(seed), "host-io"),
            bs_range: w.bs_range,
            seq_add: w.seq_add_bytes,
            seq_nr: w.seq_nr.max(1),
            seq_left: 0,
            last_end: 0,
            pending_write: None,
            zone_weights: w.zones.iter().enumerate().map(|(i, z)| (i, z.0)).collect(),
            zones: w.zones.iter().map(|z| (z.1, z.2)).collect(),
            skew: None,
            write_sizes: w.write_sizes.clone(),
            write_align: w.write_blockalign_bytes,
            loop_bytes: w.loop_bytes,
            in_loop: 0,
            extended: w.bs_range.is_some()
                || !w.write_sizes.is_empty()
                || w.loop_bytes > 0
                || w.seq_add_bytes != 0
                || w.seq_nr > 1
                || !w.zones.is_empty()
                || w.skew.is_some()
                || matches!(w.rw, RwMode::TrimWrite | RwMode::RandTrimWrite),
        };
        if let Some(skew) = w.skew {
            // fio draws over the region's blocks of the alignment
            g.skew = Some(SkewGen::new(skew, w.size_bytes.div_ceil(w.blockalign_bytes.max(1)), &mut g.rng));
        }
        g
    }

    #[inline]
    fn pick_size(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        if let Some((lo, hi)) = self.bs_range {
            // fio's draw: MIN + a uniform share of MAX, aligned down to MIN
            // and capped at MAX (integers here, fio uses a double).
            let v = lo + self.rng.below(hi);
            return (v - v % lo).min(hi);
        }
        self.sizes[self.rng.weighted(&self.sizes)].0
    }

    /// The next I/O: operation, byte offset, length.
    #[inline]
    pub fn next_io(&mut self) -> (Op, u64, u64) {
        if self.extended {
            return self.next_io_extended();
        }
        // The plain job (no fio modifier, range, zones or trimwrite): the
        // engine's hot path, kept as short as it always was.
        let op = self.pick_op();
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

    /// The direction of the next I/O (a mixed job draws it by `rwmixread`).
    #[inline(always)]
    fn pick_op(&mut self) -> Op {
        match self.rw {
            RwMode::Read | RwMode::RandRead => Op::Read,
            RwMode::Write | RwMode::RandWrite => Op::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => Op::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.rng.percent(self.mix) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }

    /// [`IoGen::next_io`] with fio's later options: `rw` modifiers, `bsrange`,
    /// zoned distributions, trimwrite.
    fn next_io_extended(&mut self) -> (Op, u64, u64) {
        if let Some((off, bs)) = self.pending_write.take() {
            return (Op::Write, off, bs);
        }
        let op = self.pick_op();
        let (bs, align) = if op == Op::Write && !self.write_sizes.is_empty() {
            let i = if self.write_sizes.len() == 1 { 0 } else { self.rng.weighted(&self.write_sizes) };
            (self.write_sizes[i].0, self.write_align)
        } else {
            (self.pick_size(), self.align)
        };
        let (off, bs) = if self.rw.is_random() {
            if self.seq_nr > 1 && self.seq_left > 0 && self.last_end + bs <= self.start + self.len {
                self.seq_left -= 1;
                let off = self.last_end;
                self.last_end += bs;
                (off, bs)
            } else {
                let (zstart, zlen) = if self.zones.is_empty() {
                    (0, self.len)
                } else {
                    self.zones[self.zone_weights[self.rng.weighted(&self.zone_weights)].0]
                };
                let slots = (zlen - bs) / align + 1;
                let pick = match self.skew.as_mut() {
                    Some(g) => g.next(&mut self.rng) % slots,
                    None => self.rng.below(slots),
                };
                let off = self.start + zstart + pick * align;
                if self.seq_nr > 1 {
                    self.seq_left = self.seq_nr - 1;
                    self.last_end = off + bs;
                }
                (off, bs)
            }
        } else {
            // fio runs each loop from the job's offset again.
            if self.loop_bytes > 0 && self.in_loop >= self.loop_bytes {
                self.cursor = 0;
                self.in_loop = 0;
            }
            if self.cursor >= self.len {
                self.cursor = 0;
            }
            let left = self.len - self.cursor;
            let o = self.start + self.cursor;
            let bs = if left < bs { left } else { bs };
            self.cursor += bs;
            self.in_loop += bs;
            if self.seq_add != 0 {
                self.cursor = self.step_cursor(o - self.start, bs);
            }
            (o, bs)
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            self.pending_write = Some((off, bs));
        }
        (op, off, bs)
    }

    /// fio's holed or backwards sequential I/O: the next offset is the end
    /// of this I/O plus the step; past either end of the region it wraps (to
    /// the start going forwards, to the end plus the step going backwards).
    fn step_cursor(&self, rel: u64, bs: u64) -> u64 {
        let next = rel as i128 + bs as i128 + self.seq_add as i128;
        if next < 0 || next >= self.len as i128 {
            if self.seq_add > 0 {
                0
            } else {
                (self.len as i128 + self.seq_add as i128).max(0) as u64
            }
        } else {
            next as u64
        }
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

    fn ios(job: Value, n: usize) -> Vec<(Op, u64, u64)> {
        let w = Workload::from_json(&job, CAP).unwrap();
        let mut g = IoGen::new(&w, 7);
        (0..n).map(|_| g.next_io()).collect()
    }

    #[test]
    fn each_loop_of_a_sequential_job_restarts_at_the_offset() {
        let job = json!({"rw": "write", "bs": "1m", "size": "8m", "offset": "4m", "loop_bytes": "3m"});
        let got: Vec<u64> = ios(job, 7).iter().map(|x| x.1 >> 20).collect();
        assert_eq!(got, vec![4, 5, 6, 4, 5, 6, 4]);
    }

    #[test]
    fn a_mixed_job_draws_its_write_sizes_from_their_own_split() {
        let v = ios(json!({"rw": "randrw", "bssplit": "64k/40:1m/60", "write_bssplit": "1m/100", "size": "64m"}), 4000);
        // writes are all 1 MiB, aligned to it (fio's blockalign per direction)
        assert!(v.iter().filter(|x| x.0 == Op::Write).all(|x| x.2 == 1 << 20 && x.1 % (1 << 20) == 0));
        let reads: Vec<_> = v.iter().filter(|x| x.0 == Op::Read).collect();
        let small = reads.iter().filter(|x| x.2 == 65536).count() as f64 / reads.len() as f64;
        assert!((small - 0.4).abs() < 0.04, "{small}");
        assert!(Workload::from_json(&json!({"rw": "randrw", "write_bssplit": "1m/50"}), CAP).is_err());
    }

    #[test]
    fn a_negative_rw_modifier_reads_backwards_as_fio_does() {
        // fio's backwards-read example: the first block, then from the end down
        let got: Vec<u64> = ios(json!({"rw":"read:-8k","bs":"4k","size":"128m"}), 4).iter().map(|x| x.1).collect();
        let end = 128u64 << 20;
        assert_eq!(got, vec![0, end - 8192, end - 12288, end - 16384]);
    }

    #[test]
    fn a_positive_rw_modifier_leaves_holes_and_a_random_one_runs_sequentially() {
        let got: Vec<u64> = ios(json!({"rw":"write:112k","bs":"16k","size":"1m"}), 3).iter().map(|x| x.1).collect();
        assert_eq!(got, vec![0, 128 << 10, 256 << 10]);
        let r = ios(json!({"rw":"randread:4","bs":"4k","size":"1g"}), 8);
        assert_eq!(r[1].1, r[0].1 + 4096);
        assert_eq!(r[3].1, r[0].1 + 3 * 4096);
        assert_eq!(r[5].1, r[4].1 + 4096);
        let e = Workload::from_json(&json!({"rw":"randread:x"}), CAP).unwrap_err().to_string();
        assert!(e.contains("'rw'") && e.contains("count"), "{e}");
    }

    #[test]
    fn trimwrite_trims_each_block_then_writes_it() {
        let got = ios(json!({"rw":"trimwrite","bs":"64k","size":"1m"}), 4);
        assert_eq!(got, vec![(Op::Trim, 0, 65536), (Op::Write, 0, 65536), (Op::Trim, 65536, 65536), (Op::Write, 65536, 65536)]);
    }

    #[test]
    fn bsrange_draws_multiples_of_the_minimum_up_to_the_maximum() {
        let got = ios(json!({"rw":"randread","bsrange":"4k-16k","size":"1g"}), 4000);
        let mut seen = std::collections::BTreeMap::new();
        for (_, _, b) in got {
            assert!(b % 4096 == 0 && (4096..=16384).contains(&b), "{b}");
            *seen.entry(b).or_insert(0u32) += 1;
        }
        // fio's draw gives each of the four sizes a quarter
        assert_eq!(seen.len(), 4);
        assert!(seen.values().all(|n| (850..1150).contains(n)), "{seen:?}");
    }

    #[test]
    fn skewed_distributions_stay_in_the_region_and_heat_a_few_blocks() {
        for d in ["zipf:1.2", "pareto:0.8", "normal:10", "zipf:0.9:0.25"] {
            let got = ios(json!({"rw":"randrw","bs":"4k","offset":"1m","size":"64m","random_distribution":d}), 20000);
            assert!(got.iter().all(|x| x.1 >= 1 << 20 && x.1 + 4096 <= 65 << 20 && x.1 % 4096 == 0), "{d}");
            let mut hits = std::collections::HashMap::new();
            for x in &got {
                *hits.entry(x.1).or_insert(0u32) += 1;
            }
            // uniform: 20000 draws over 16384 blocks hit about 11,000 of them
            assert!(hits.len() < 9_000, "{d}: {} blocks hit", hits.len());
        }
        let a = ios(json!({"rw":"randread","bs":"4k","size":"64m","random_distribution":"zipf:1.2"}), 1000);
        let b = ios(json!({"rw":"randread","bs":"4k","size":"64m","random_distribution":"zipf:1.2"}), 1000);
        assert_eq!(a, b, "a seed gives the same offsets");
    }

    #[test]
    fn zoned_distributions_put_their_share_of_accesses_in_each_zone() {
        let got = ios(json!({"rw":"randread","bs":"4k","size":"1g","random_distribution":"zoned:60/10:30/20:10/70"}), 10000);
        let gib = 1u64 << 30;
        let first = got.iter().filter(|x| x.1 < gib / 10 / 4096 * 4096).count();
        let second = got.iter().filter(|x| x.1 >= gib / 10 / 4096 * 4096 && x.1 < (gib / 10 + gib / 5) / 4096 * 4096).count();
        assert!((5800..6200).contains(&first) && (2800..3200).contains(&second), "{first} {second}");
        let abs = ios(json!({"rw":"randread","bs":"4k","size":"1g","random_distribution":"zoned_abs:50/1m:50/10m"}), 2000);
        assert!(abs.iter().all(|x| x.1 + 4096 <= 11 << 20));
        assert!(abs.iter().filter(|x| x.1 < 1 << 20).count() > 900);
        let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"zipf:1"}), CAP).unwrap_err().to_string();
        assert!(e.contains("random_distribution") && e.contains("zipf"), "{e}");
        let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"lognormal:3"}), CAP).unwrap_err().to_string();
        assert!(e.contains("zipf, pareto, normal"), "{e}");
        let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"zoned:50/50:40/50"}), CAP).unwrap_err().to_string();
        assert!(e.contains("not 100"), "{e}");
    }
}
