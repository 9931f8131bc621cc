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
use crate::skew::Skew;
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

/// Units (4KB) touched by a byte range.
#[inline]
pub fn unit_span(off: u64, len: u64) -> (u64, u64) {
    let first = off / UNIT_BYTES;
    let last = (off + len - 1) / UNIT_BYTES;
    (first, last - first + 1)
}

mod gen;
mod options;
#[cfg(test)]
mod tests;

pub use gen::IoGen;
use options::{check_job_bounds, parse_bssplit, parse_data_pattern, parse_rw_modifier, parse_zones};
