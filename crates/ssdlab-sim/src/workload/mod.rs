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

use crate::config::UNIT_BYTES;
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
mod keys;
mod options;
#[cfg(test)]
mod tests;

pub use gen::IoGen;
