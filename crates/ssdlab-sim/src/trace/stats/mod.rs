//! Trace statistics (size mix, sequential share, iodepth), computed in one
//! streaming pass in flat memory.
//!
//! Definitions (docs/storage-bench.md):
//! - *operations* for the size mix and the sequential share are reads and
//!   writes (trims and flushes are counted separately);
//! - an I/O is *sequential* if it starts exactly where the previous I/O of the
//!   same direction ended (the first read and the first write are not);
//! - *iodepth* of a record is the number of outstanding I/Os at its issue,
//!   itself included. It comes from the records' `iodepth` field when any
//!   record carries one; otherwise, when latencies are recorded, it is derived
//!   from the intervals `[time, time + recorded_latency)` of all records (a heap
//!   of completion times, bounded by [`MAX_TRACKED_OUTSTANDING`]); otherwise it
//!   is unknown (`None`);
//! - *duration* is last minus first issue time;
//! - *busy time* (when latencies are recorded) is the time with at least one
//!   outstanding I/O, for all I/Os and for reads and writes separately. It
//!   assumes records come in issue-time order, as every source yields them.
//!
//! No per-LBA state is kept: the footprint is summarised by the lowest offset and
//! highest end touched.

mod builder;

pub use builder::TraceStatsBuilder;

use std::fmt;

use serde_json::{json, Map, Value};

use super::TraceRecord;
use crate::pattern::DataPattern;

/// Size buckets of the size mix. Named sizes are exact (`K4` is exactly 4096
/// bytes); `Under4K` is everything shorter than 4096 bytes; `Other` is every
/// other length (odd sizes between the named ones, and anything above 128KB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SizeBucket {
    Under4K,
    K4,
    K8,
    K12,
    K16,
    K24,
    K32,
    K64,
    K128,
    Other,
}

/// Number of size buckets.
pub const N_SIZE_BUCKETS: usize = 10;

/// The latency-derived iodepth tracks at most this many outstanding I/Os;
/// beyond it the earliest completion is dropped and the result is flagged
/// `saturated` (only pathological latencies get there).
pub const MAX_TRACKED_OUTSTANDING: usize = 1 << 16;

impl SizeBucket {
    pub const ALL: [SizeBucket; N_SIZE_BUCKETS] = [
        SizeBucket::Under4K,
        SizeBucket::K4,
        SizeBucket::K8,
        SizeBucket::K12,
        SizeBucket::K16,
        SizeBucket::K24,
        SizeBucket::K32,
        SizeBucket::K64,
        SizeBucket::K128,
        SizeBucket::Other,
    ];

    /// The bucket of a transfer length in bytes.
    #[inline]
    pub fn of(len: u64) -> SizeBucket {
        match len {
            0..=4095 => SizeBucket::Under4K,
            4096 => SizeBucket::K4,
            8192 => SizeBucket::K8,
            12288 => SizeBucket::K12,
            16384 => SizeBucket::K16,
            24576 => SizeBucket::K24,
            32768 => SizeBucket::K32,
            65536 => SizeBucket::K64,
            131072 => SizeBucket::K128,
            _ => SizeBucket::Other,
        }
    }

    /// The exact size in bytes of a named bucket (`None` for `Under4K`, `Other`).
    pub fn exact_bytes(self) -> Option<u64> {
        match self {
            SizeBucket::Under4K | SizeBucket::Other => None,
            SizeBucket::K4 => Some(4096),
            SizeBucket::K8 => Some(8192),
            SizeBucket::K12 => Some(12288),
            SizeBucket::K16 => Some(16384),
            SizeBucket::K24 => Some(24576),
            SizeBucket::K32 => Some(32768),
            SizeBucket::K64 => Some(65536),
            SizeBucket::K128 => Some(131072),
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// JSON key: the exact size in bytes, or `lt4096` / `other`.
    pub fn key(self) -> &'static str {
        match self {
            SizeBucket::Under4K => "lt4096",
            SizeBucket::K4 => "4096",
            SizeBucket::K8 => "8192",
            SizeBucket::K12 => "12288",
            SizeBucket::K16 => "16384",
            SizeBucket::K24 => "24576",
            SizeBucket::K32 => "32768",
            SizeBucket::K64 => "65536",
            SizeBucket::K128 => "131072",
            SizeBucket::Other => "other",
        }
    }

    /// Human label (KB = 1024 B).
    pub fn label(self) -> &'static str {
        match self {
            SizeBucket::Under4K => "<4KB",
            SizeBucket::K4 => "4KB",
            SizeBucket::K8 => "8KB",
            SizeBucket::K12 => "12KB",
            SizeBucket::K16 => "16KB",
            SizeBucket::K24 => "24KB",
            SizeBucket::K32 => "32KB",
            SizeBucket::K64 => "64KB",
            SizeBucket::K128 => "128KB",
            SizeBucket::Other => "other",
        }
    }
}

/// Where the iodepths came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IodepthSource {
    /// The records' `iodepth` field (records with 0 there are not counted).
    Recorded,
    /// Outstanding count at each issue from `[time, time + recorded_latency)`.
    FromLatencies,
}

impl IodepthSource {
    pub fn name(self) -> &'static str {
        match self {
            IodepthSource::Recorded => "recorded",
            IodepthSource::FromLatencies => "from_latencies",
        }
    }
}

/// Queue-depth summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IodepthStats {
    pub source: IodepthSource,
    /// Records with an iodepth.
    pub samples: u64,
    /// Sum of the iodepths.
    pub sum: u64,
    /// Records issued at iodepth 1.
    pub at_qd1: u64,
    pub max: u64,
    /// The latency-derived count hit [`MAX_TRACKED_OUTSTANDING`].
    pub saturated: bool,
}

impl IodepthStats {
    pub fn avg(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum as f64 / self.samples as f64
        }
    }
    pub fn iodepth1_share_percent(&self) -> f64 {
        pct(self.at_qd1, self.samples)
    }
}

/// Time with at least one outstanding I/O, from recorded latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyTimes {
    pub all_ns: u64,
    pub read_ns: u64,
    pub write_ns: u64,
}

/// Summary of a trace. Build with [`TraceStats::compute`] or a
/// [`TraceStatsBuilder`].
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStats {
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Reads per [`SizeBucket`] (indexed by `SizeBucket::index`).
    pub read_size_counts: [u64; N_SIZE_BUCKETS],
    /// Writes per [`SizeBucket`].
    pub write_size_counts: [u64; N_SIZE_BUCKETS],
    pub sequential_reads: u64,
    pub sequential_writes: u64,
    pub iodepth: Option<IodepthStats>,
    pub first_time_ns: Option<u64>,
    pub last_time_ns: Option<u64>,
    /// Write bytes per data pattern, in order of first appearance.
    pub write_bytes_by_pattern: Vec<(DataPattern, u64)>,
    pub lowest_offset_bytes: Option<u64>,
    pub highest_end_bytes: Option<u64>,
    /// `None` when no record carries a latency.
    pub busy: Option<BusyTimes>,
}

fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

impl TraceStats {
    /// One streaming pass over a trace.
    pub fn compute<I: IntoIterator<Item = TraceRecord>>(records: I) -> TraceStats {
        let mut b = TraceStatsBuilder::new();
        for r in records {
            b.push(&r);
        }
        b.finish()
    }

    /// Reads plus writes.
    pub fn data_ops(&self) -> u64 {
        self.reads + self.writes
    }

    pub fn duration_ns(&self) -> u64 {
        match (self.first_time_ns, self.last_time_ns) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        }
    }

    /// Reads and writes of this bucket.
    pub fn size_count(&self, b: SizeBucket) -> u64 {
        self.read_size_counts[b.index()] + self.write_size_counts[b.index()]
    }

    /// Share of reads and writes in a size bucket, percent.
    pub fn size_share_percent(&self, b: SizeBucket) -> f64 {
        pct(self.size_count(b), self.data_ops())
    }

    /// Sequential reads and writes as a percentage of reads and writes.
    pub fn sequential_share_percent(&self) -> f64 {
        pct(self.sequential_reads + self.sequential_writes, self.data_ops())
    }
    pub fn sequential_read_share_percent(&self) -> f64 {
        pct(self.sequential_reads, self.reads)
    }
    pub fn sequential_write_share_percent(&self) -> f64 {
        pct(self.sequential_writes, self.writes)
    }

    pub fn iodepth_mean(&self) -> Option<f64> {
        self.iodepth.map(|q| q.avg())
    }
    pub fn iodepth1_share_percent(&self) -> Option<f64> {
        self.iodepth.map(|q| q.iodepth1_share_percent())
    }

    /// Share of write bytes carrying this pattern, percent.
    pub fn pattern_share_percent(&self, p: DataPattern) -> f64 {
        let b = self.write_bytes_by_pattern.iter().find(|(q, _)| *q == p).map(|x| x.1).unwrap_or(0);
        pct(b, self.write_bytes)
    }

    /// Machine-readable summary; every key names its unit.
    pub fn to_json(&self) -> Value {
        let mut mix = Map::new();
        let mut rc = Map::new();
        let mut wc = Map::new();
        for b in SizeBucket::ALL {
            mix.insert(b.key().to_string(), json!(self.size_share_percent(b)));
            rc.insert(b.key().to_string(), json!(self.read_size_counts[b.index()]));
            wc.insert(b.key().to_string(), json!(self.write_size_counts[b.index()]));
        }
        let mut pat = Map::new();
        for (p, bytes) in &self.write_bytes_by_pattern {
            pat.insert(p.to_string(), json!(pct(*bytes, self.write_bytes)));
        }
        let q = self.iodepth;
        json!({
            "records": self.records,
            "reads": self.reads,
            "writes": self.writes,
            "trims": self.trims,
            "flushes": self.flushes,
            "read_bytes": self.read_bytes,
            "write_bytes": self.write_bytes,
            "trim_bytes": self.trim_bytes,
            "first_time_ns": self.first_time_ns,
            "last_time_ns": self.last_time_ns,
            "duration_ns": self.duration_ns(),
            "size_mix_percent": Value::Object(mix),
            "read_size_counts": Value::Object(rc),
            "write_size_counts": Value::Object(wc),
            "sequential_share_percent": self.sequential_share_percent(),
            "sequential_read_share_percent": self.sequential_read_share_percent(),
            "sequential_write_share_percent": self.sequential_write_share_percent(),
            "iodepth_source": q.map(|q| q.source.name()),
            "iodepth_mean": q.map(|q| q.avg()),
            "iodepth1_share_percent": q.map(|q| q.iodepth1_share_percent()),
            "iodepth_max": q.map(|q| q.max),
            "iodepth_saturated": q.map(|q| q.saturated),
            "write_bytes_share_percent_by_pattern": Value::Object(pat),
            "lowest_offset_bytes": self.lowest_offset_bytes,
            "highest_end_bytes": self.highest_end_bytes,
            "busy_time_ns": self.busy.map(|b| b.all_ns),
            "read_busy_time_ns": self.busy.map(|b| b.read_ns),
            "write_busy_time_ns": self.busy.map(|b| b.write_ns),
        })
    }
}

fn gb(b: u64) -> String {
    format!("{:.3} GB", b as f64 / 1e9)
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{:<28} {:>16} {:>16} {:>16}", "", "all", "reads", "writes")?;
        writeln!(f, "{:<28} {:>16} {:>16} {:>16}", "operations", self.data_ops(), self.reads, self.writes)?;
        writeln!(
            f,
            "{:<28} {:>16} {:>16} {:>16}",
            "bytes (GB = 1e9 B)",
            gb(self.read_bytes + self.write_bytes),
            gb(self.read_bytes),
            gb(self.write_bytes)
        )?;
        writeln!(
            f,
            "{:<28} {:>15.2}% {:>15.2}% {:>15.2}%",
            "sequential",
            self.sequential_share_percent(),
            self.sequential_read_share_percent(),
            self.sequential_write_share_percent()
        )?;
        writeln!(f, "size mix (share of each column's operations; KB = 1024 B)")?;
        let share = |counts: &[u64], i: usize| {
            let total: u64 = counts.iter().sum();
            if total == 0 {
                0.0
            } else {
                100.0 * counts[i] as f64 / total as f64
            }
        };
        for b in SizeBucket::ALL {
            writeln!(
                f,
                "  {:<26} {:>15.2}% {:>15.2}% {:>15.2}%",
                b.label(),
                self.size_share_percent(b),
                share(&self.read_size_counts, b.index()),
                share(&self.write_size_counts, b.index())
            )?;
        }
        if self.trims + self.flushes > 0 {
            writeln!(f, "{:<28} {:>16} ({})", "trims", self.trims, gb(self.trim_bytes))?;
            writeln!(f, "{:<28} {:>16}", "flushes", self.flushes)?;
        }
        match self.iodepth {
            Some(q) => {
                writeln!(f, "{:<28} {:>16.4} ({})", "iodepth mean", q.avg(), q.source.name())?;
                writeln!(f, "{:<28} {:>15.2}%", "issued at iodepth 1", q.iodepth1_share_percent())?;
                writeln!(f, "{:<28} {:>16}{}", "iodepth max", q.max, if q.saturated { " (saturated)" } else { "" })?;
            }
            None => writeln!(f, "{:<28} {:>16}", "iodepth mean", "unknown")?,
        }
        writeln!(f, "{:<28} {:>14.3} s", "duration", self.duration_ns() as f64 / 1e9)?;
        if let Some(b) = self.busy {
            writeln!(
                f,
                "{:<28} {:>14.3} s {:>14.3} s {:>14.3} s",
                "busy time (recorded)",
                b.all_ns as f64 / 1e9,
                b.read_ns as f64 / 1e9,
                b.write_ns as f64 / 1e9
            )?;
        }
        if !self.write_bytes_by_pattern.is_empty() {
            writeln!(f, "write bytes by data pattern")?;
            for (p, b) in &self.write_bytes_by_pattern {
                writeln!(f, "  {:<26} {:>15.2}%", p.to_string(), pct(*b, self.write_bytes))?;
            }
        }
        if let (Some(lo), Some(hi)) = (self.lowest_offset_bytes, self.highest_end_bytes) {
            writeln!(f, "{:<28} {} .. {} bytes", "offsets touched", lo, hi)?;
        }
        Ok(())
    }
}
