//! What a phase produced, and its JSON: fio's result shape
//! (`read/write/trim.{iops, bw_bytes, io_bytes, clat_ns.percentile}`) plus
//! ssdlab's figures (WAF, NAND, GC, energy, SMART) with a unit in every key,
//! the Storage Bench figures and the per-interval series.

use serde_json::{json, Value};

use super::replay::IoLogEntry;
#[cfg(doc)]
use super::Simulator;
use crate::config::UNIT_BYTES;
use crate::ftl::FtlCounters;
use crate::nand::NandCounters;
use crate::pattern::DataPattern;
use crate::stats::{DirStats, IntervalStats, PhaseStats, PERCENTILES};
use crate::trace::import::ImportReport;

/// Everything a phase produced.
#[derive(Clone, Debug)]
pub struct PhaseResult {
    pub name: String,
    pub kind: &'static str,
    pub start_ns: u64,
    pub duration_ns: u64,
    pub stats: PhaseStats,
    pub ftl: FtlCounters,
    pub nand: NandCounters,
    pub interrupted: bool,
    pub iodepth: u32,
    pub data_pattern: Option<DataPattern>,
    pub smart: Value,
    pub io_log: Vec<IoLogEntry>,
    /// Average power and energy of the phase.
    pub power: Value,
    /// A replay's trace source as it was given (see [`Simulator::replay_from_json`]).
    pub source: Option<Value>,
    /// A replayed file's import report.
    pub import: Option<ImportReport>,
    /// fio's latency-target search: the depth it ended at, and whether the
    /// target was missed at depth 1 (fio fails the job).
    pub latency_search: Option<(u32, bool)>,
}

fn dir_json(d: &DirStats, dur_ns: u64) -> Value {
    let secs = dur_ns as f64 / 1e9;
    let mut pct = serde_json::Map::new();
    for p in PERCENTILES {
        pct.insert(format!("{p:.6}"), json!(d.lat.percentile(p)));
    }
    json!({
        "io_bytes": d.bytes,
        "total_ios": d.ios,
        "bw_bytes": if secs > 0.0 { d.bytes as f64 / secs } else { 0.0 },
        "iops": if secs > 0.0 { d.ios as f64 / secs } else { 0.0 },
        "clat_ns": {
            "min": if d.lat.n > 0 { d.lat.min_ns } else { 0 },
            "max": d.lat.max_ns,
            "mean": d.lat.mean_ns(),
            "percentile": pct,
        }
    })
}

/// fio's `sync` section of a job: the FLUSH CACHE commands and their latency.
fn sync_json(d: &DirStats) -> Value {
    let mut pct = serde_json::Map::new();
    for p in PERCENTILES {
        pct.insert(format!("{p:.6}"), json!(d.lat.percentile(p)));
    }
    json!({
        "total_ios": d.ios,
        "lat_ns": {
            "min": if d.lat.n > 0 { d.lat.min_ns } else { 0 },
            "max": d.lat.max_ns,
            "mean": d.lat.mean_ns(),
            "N": d.lat.n,
            "percentile": pct,
        }
    })
}

impl PhaseResult {
    pub fn host_bytes_written(&self) -> u64 {
        self.ftl.host_units_written * UNIT_BYTES
    }

    /// NAND bytes programmed / host bytes written in this phase (below 1 on a
    /// data-reducing controller writing reducible data).
    pub fn waf(&self) -> f64 {
        let h = self.host_bytes_written();
        if h == 0 {
            0.0
        } else {
            self.ftl.nand_bytes_programmed as f64 / h as f64
        }
    }

    /// Bytes stored after data reduction / host bytes written (1 without reduction).
    pub fn data_reduction_ratio(&self) -> f64 {
        let h = self.host_bytes_written();
        if h == 0 {
            1.0
        } else {
            self.ftl.stored_bytes_written as f64 / h as f64
        }
    }

    /// NAND bytes programmed / bytes stored: the amplification of GC (and
    /// padding, parity) on its own.
    pub fn gc_amplification(&self) -> f64 {
        if self.ftl.stored_bytes_written == 0 {
            0.0
        } else {
            self.ftl.nand_bytes_programmed as f64 / self.ftl.stored_bytes_written as f64
        }
    }

    pub fn iops(&self) -> f64 {
        let s = self.duration_ns as f64 / 1e9;
        if s == 0.0 {
            0.0
        } else {
            (self.stats.read.ios + self.stats.write.ios + self.stats.trim.ios) as f64 / s
        }
    }

    /// fio-shaped figures plus ours (units in every key we add).
    pub fn to_json(&self) -> Value {
        let d = self.duration_ns;
        let mut v = json!({
            "jobname": self.name,
            "kind": self.kind,
            "start_ns": self.start_ns,
            "duration_ns": self.duration_ns,
            "iodepth": self.iodepth,
            "data_pattern": self.data_pattern.map(|p| p.to_string()),
            "interrupted": self.interrupted,
            "read": dir_json(&self.stats.read, d),
            "write": dir_json(&self.stats.write, d),
            "trim": dir_json(&self.stats.trim, d),
            "busy_time_ns": self.stats.busy_time_ns,
            "read_busy_time_ns": self.stats.read_busy_time_ns,
            "write_busy_time_ns": self.stats.write_busy_time_ns,
            "interval_ns": self.stats.interval_ns,
            "storage_bench": self.storage_bench_json(),
            "ssdlab": {
                "host_bytes_written": self.host_bytes_written(),
                "host_bytes_trimmed": self.ftl.host_units_trimmed * UNIT_BYTES,
                "nand_bytes_programmed": self.ftl.nand_bytes_programmed,
                "nand_bytes_read": self.nand.bytes_read,
                "waf": self.waf(),
                "data_reduction_ratio": self.data_reduction_ratio(),
                "gc_amplification": self.gc_amplification(),
                "stored_bytes_written": self.ftl.stored_bytes_written,
                "parity_bytes": self.ftl.parity_bytes,
                "gc_bytes_moved": self.ftl.gc_bytes_moved,
                "gc_victims": self.ftl.gc_victims,
                "fg_gc_victims": self.ftl.fg_gc_victims,
                "bg_gc_victims": self.ftl.bg_gc_victims,
                "block_erases": self.ftl.erases,
                "padded_bytes": self.ftl.padded_bytes,
                "power": self.power,
                "rmw_reads": self.ftl.rmw_reads,
                "host_bytes_coalesced": self.ftl.host_units_coalesced * UNIT_BYTES,
                "map_merge_bytes": self.ftl.map_merge_bytes,
                "smart": self.smart,
            }
        });
        if self.ftl.map_page_reads + self.ftl.map_page_writes > 0 {
            // Only a drive with a map cache has these: every other result
            // stays exactly as it was.
            v["ssdlab"]["map_page_reads"] = json!(self.ftl.map_page_reads);
            v["ssdlab"]["map_page_writes"] = json!(self.ftl.map_page_writes);
        }
        if self.stats.sync.ios > 0 {
            // Only a job that flushed has the section: every other result
            // stays exactly as it was.
            v["sync"] = sync_json(&self.stats.sync);
            v["ssdlab"]["flushes"] = json!(self.stats.sync.ios);
        }
        if let Some(src) = &self.source {
            v["source"] = src.clone();
        }
        if let Some(report) = &self.import {
            v["import"] = report.to_json();
        }
        if let Some((depth, failed)) = self.latency_search {
            v["latency_search"] = json!({"depth": depth, "failed": failed});
        }
        v
    }

    /// Storage Bench figures (docs/storage-bench.md): data rate = bytes / busy
    /// time, where busy time counts only time with an I/O outstanding.
    pub fn storage_bench_json(&self) -> Value {
        let st = &self.stats;
        let rate = |bytes: u64, busy: u64| if busy == 0 { 0.0 } else { bytes as f64 / (busy as f64 / 1e9) / 1e6 };
        let ios = st.read.ios + st.write.ios + st.trim.ios;
        json!({
            "busy_time_ns": st.busy_time_ns,
            "read_busy_time_ns": st.read_busy_time_ns,
            "write_busy_time_ns": st.write_busy_time_ns,
            "data_rate_mb_per_s": rate(st.read.bytes + st.write.bytes, st.busy_time_ns),
            "read_data_rate_mb_per_s": rate(st.read.bytes, st.read_busy_time_ns),
            "write_data_rate_mb_per_s": rate(st.write.bytes, st.write_busy_time_ns),
            "iops": if st.busy_time_ns == 0 { 0.0 } else { ios as f64 / (st.busy_time_ns as f64 / 1e9) },
            "read_lat_mean_ns": st.read.lat.mean_ns(),
            "read_lat_p99_ns": st.read.lat.percentile(99.0),
            "write_lat_mean_ns": st.write.lat.mean_ns(),
            "write_lat_p99_ns": st.write.lat.percentile(99.0),
        })
    }

    /// Per-interval series as named integer columns.
    pub fn series(&self) -> Vec<(&'static str, Vec<u64>)> {
        let iv = &self.stats.intervals;
        let i = self.stats.interval_ns;
        let col = |f: fn(&IntervalStats) -> u64| iv.iter().map(f).collect::<Vec<u64>>();
        vec![
            ("time_ns", (1..=iv.len() as u64).map(|k| k * i).collect()),
            ("read_ios", col(|x| x.read_ios)),
            ("write_ios", col(|x| x.write_ios)),
            ("trim_ios", col(|x| x.trim_ios)),
            ("read_bytes", col(|x| x.read_bytes)),
            ("write_bytes", col(|x| x.write_bytes)),
            ("lat_p50_ns", col(|x| x.lat_p50_ns)),
            ("lat_p99_ns", col(|x| x.lat_p99_ns)),
            ("lat_p999_ns", col(|x| x.lat_p999_ns)),
            ("lat_max_ns", col(|x| x.lat_max_ns)),
        ]
    }
}
