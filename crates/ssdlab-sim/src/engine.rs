//! The simulator: an ordinary value owning a drive's every part, which runs a
//! whole phase (a closed-loop workload, idle time, a TRIM, a secure erase) per
//! call and keeps its state between phases. Clone it to measure many times
//! from one preconditioned state.
//!
//! Command path: host queue (NCQ) -> link (command + data, half duplex) ->
//! controller (per-command cost on one of its command slots) -> write buffer /
//! FTL -> NAND dies and channels.

use crate::config::{memory_estimate_bytes, DriveConfig, Geometry, SECTOR_BYTES, UNIT_BYTES};
use crate::error::{Result, SimError};
use crate::ftl::{Ftl, FtlCounters, Release};
use crate::mem::NONE;
use crate::host::{unit_span, IoGen, Op, Workload};
use crate::nand::{Calendar, Nand, NandCounters};
use crate::pattern::DataPattern;
use crate::stats::{Dir, PhaseStats, PERCENTILES};
use crate::trace::{TraceOp, TraceRecord};
use serde_json::{json, Value};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Options for building a simulator.
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub seed: u64,
    /// Checking mode: shadow model verified on every read and after every phase.
    pub check: bool,
    pub memory_limit_bytes: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { seed: 1, check: false, memory_limit_bytes: crate::config::DEFAULT_MEMORY_LIMIT_BYTES }
    }
}

/// Write data waiting in the controller until its unit is sent to a die.
///
/// Space comes back in order of release time (then size). A deep buffer has
/// thousands of releases pending, but each die's come in time order (it
/// transfers its units in booking order), so they wait in one queue per die
/// and only the queues' first entries (and the few releases of data replaced
/// in the buffer) are kept in a heap.
#[derive(Clone, Debug)]
struct WriteBuffer {
    free_bytes: u64,
    /// Pending releases of the program units sent to each die, in time order.
    die_queues: Vec<VecDeque<(u64, u64)>>,
    /// (time, bytes, die or NONE): the first release of each non-empty die
    /// queue, and every release of replaced data.
    heads: BinaryHeap<Reverse<(u64, u64, u32)>>,
}

impl WriteBuffer {
    fn new(bytes: u64, dies: u32) -> WriteBuffer {
        WriteBuffer { free_bytes: bytes, die_queues: vec![VecDeque::new(); dies as usize], heads: BinaryHeap::new() }
    }

    #[inline]
    fn push(&mut self, r: Release) {
        if r.die == NONE {
            self.heads.push(Reverse((r.at_ns, r.bytes, NONE)));
            return;
        }
        let q = &mut self.die_queues[r.die as usize];
        debug_assert!(q.back().is_none_or(|&(at, _)| at <= r.at_ns));
        if q.is_empty() {
            self.heads.push(Reverse((r.at_ns, r.bytes, r.die)));
        }
        q.push_back((r.at_ns, r.bytes));
    }

    /// Remove the earliest pending release.
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        let Reverse((at, b, die)) = self.heads.pop()?;
        if die != NONE {
            let q = &mut self.die_queues[die as usize];
            q.pop_front();
            if let Some(&(at2, b2)) = q.front() {
                self.heads.push(Reverse((at2, b2, die)));
            }
        }
        Some((at, b))
    }

    /// Earliest time >= `t` at which `bytes` fit, or None if they cannot
    /// fit until data waiting in the buffer is sent to the dies.
    #[inline]
    fn admit(&mut self, t: u64, bytes: u64) -> Option<u64> {
        while let Some(&Reverse((at, _, _))) = self.heads.peek() {
            if at > t {
                break;
            }
            let (_, b) = self.pop()?;
            self.free_bytes += b;
        }
        let mut t = t;
        while self.free_bytes < bytes {
            let (at, b) = self.pop()?;
            self.free_bytes += b;
            t = t.max(at);
        }
        self.free_bytes -= bytes;
        Some(t)
    }
}

/// How a trace is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayMode {
    AsRecorded,
    AsFastAsPossible,
}

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    pub name: String,
    pub mode: ReplayMode,
    /// Queue depth for records that carry none (as fast as possible).
    pub queue_depth: u32,
    /// Shorten every gap between arrivals to at most this (The Destroyer: 25 ms).
    pub idle_cap_ns: Option<u64>,
    pub interval_ns: u64,
    /// Keep every I/O's submit and completion time in the result (small traces).
    pub io_log: bool,
    /// Replay at most this many records (fio's `number_ios`); 0 = all.
    pub max_records: u64,
    /// Replay only the records of the first this-much trace time, measured
    /// from the first record before any idle cap (fio's `runtime`).
    pub max_trace_ns: Option<u64>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            name: "replay".into(),
            mode: ReplayMode::AsRecorded,
            queue_depth: 1,
            idle_cap_ns: None,
            interval_ns: 1_000_000_000,
            io_log: false,
            max_records: 0,
            max_trace_ns: None,
        }
    }
}

/// What a progress callback is told.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done_ns: u64,
    /// Phase length in simulated ns when known (runtime), else 0.
    pub total_ns: u64,
    pub done_bytes: u64,
    pub total_bytes: u64,
}

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
    pub pattern: Option<DataPattern>,
    pub smart: Value,
    pub io_log: Vec<IoLogEntry>,
    /// Average power and energy of the phase.
    pub power: Value,
}

fn dir_json(d: &crate::stats::DirStats, dur_ns: u64) -> Value {
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
        json!({
            "jobname": self.name,
            "kind": self.kind,
            "start_ns": self.start_ns,
            "duration_ns": self.duration_ns,
            "iodepth": self.iodepth,
            "data_pattern": self.pattern.map(|p| p.to_string()),
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
                "smart": self.smart,
            }
        })
    }

    /// Storage Bench figures (STORAGE_BENCH.md): data rate = bytes / busy
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
        let col = |f: fn(&crate::stats::IntervalStats) -> u64| iv.iter().map(f).collect::<Vec<u64>>();
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

/// An I/O in flight, ordered by completion time then submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    complete_ns: u64,
    seq: u64,
    submit_ns: u64,
    bytes: u64,
    dir: u8,
}

/// Outstanding-I/O tracking for busy time (overall, reads, writes).
#[derive(Clone, Copy, Debug, Default)]
struct Busy {
    n: [u32; 3],
    since: [u64; 3],
    total: [u64; 3],
}

impl Busy {
    /// `dir`: 0 other (trim, flush), 1 read, 2 write.
    #[inline]
    fn start(&mut self, dir: usize, t: u64) {
        self.bump(0, t);
        if dir != 0 {
            self.bump(dir, t);
        }
    }
    #[inline]
    fn bump(&mut self, k: usize, t: u64) {
        if self.n[k] == 0 {
            self.since[k] = t;
        }
        self.n[k] += 1;
    }
    #[inline]
    fn end(&mut self, dir: usize, t: u64) {
        self.drop_one(0, t);
        if dir != 0 {
            self.drop_one(dir, t);
        }
    }
    #[inline]
    fn drop_one(&mut self, k: usize, t: u64) {
        self.n[k] -= 1;
        if self.n[k] == 0 {
            self.total[k] += t - self.since[k];
        }
    }
}

/// One I/O of a replay, when `ReplayOptions::io_log` asks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoLogEntry {
    pub submit_ns: u64,
    pub complete_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub length_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct Simulator {
    pub cfg: DriveConfig,
    pub geometry: Geometry,
    pub seed: u64,
    pub check: bool,
    pub nand: Nand,
    pub ftl: Ftl,
    link: Calendar,
    /// The controller's write data path when it has a throughput ceiling.
    write_path: Calendar,
    /// The controller's NAND-side write path (ECC encoder) when modelled.
    encode_path: Calendar,
    /// When each of the controller's command slots is next free
    /// (`controller.command_slots` entries).
    ctrl_free_ns: Vec<u64>,
    buffer: WriteBuffer,
    /// Simulated time: every phase starts here.
    pub now_ns: u64,
    /// When the last I/O of the last phase completed (idle detection).
    last_io_end_ns: u64,
    phase_count: u64,
    seq: u64,
    /// Commands outstanding at the drive when the current one arrived.
    outstanding: u32,
    ra: ReadAhead,
}

/// Read-ahead state of the (single) sequential read stream.
#[derive(Clone, Debug, Default)]
struct ReadAhead {
    next_lba: u64,
    /// Where the next prefetch starts.
    pre_end: u64,
    /// Prefetched ranges and when their data is in the controller.
    chunks: VecDeque<(u64, u64, u64)>,
}

impl Simulator {
    pub fn new(cfg: DriveConfig, opts: &SimOptions) -> Result<Simulator> {
        cfg.validate()?;
        let g = cfg.geometry();
        let need = memory_estimate_bytes(&g, opts.check);
        if need > opts.memory_limit_bytes {
            return Err(SimError::Memory {
                needed_bytes: need,
                limit_bytes: opts.memory_limit_bytes,
                detail: format!(
                    "{} GB raw NAND in {} slots of 4KB, {} user units{}",
                    g.raw_bytes() / 1_000_000_000,
                    g.raw_slots,
                    g.user_units,
                    if opts.check { ", checking mode" } else { "" }
                ),
            });
        }
        let mut nand = Nand::new(&cfg);
        nand.check = opts.check;
        let ftl = Ftl::new(&cfg, opts.check);
        let buffer = WriteBuffer::new(cfg.controller.write_buffer_bytes, g.dies);
        Ok(Simulator {
            geometry: g,
            seed: opts.seed,
            check: opts.check,
            nand,
            ftl,
            link: Calendar::default(),
            write_path: Calendar::default(),
            encode_path: Calendar::default(),
            ctrl_free_ns: vec![0; cfg.controller.command_slots.max(1) as usize],
            buffer,
            now_ns: 0,
            last_io_end_ns: 0,
            phase_count: 0,
            seq: 0,
            outstanding: 0,
            ra: ReadAhead { next_lba: u64::MAX, ..Default::default() },
            cfg,
        })
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.cfg.drive.user_capacity_bytes
    }

    /// Bytes of RAM the FTL's tables use now (at most the memory estimate:
    /// the reverse map grows with the units stored).
    pub fn memory_in_use_bytes(&self) -> u64 {
        self.ftl.memory_in_use_bytes()
    }

    #[inline]
    fn link_ns(&self, bytes: u64) -> u64 {
        (bytes * 1_000_000_000).div_ceil(self.cfg.host.link_bytes_per_s)
    }

    /// Command phase common to every I/O: after the command latency (no
    /// resource held) the command crosses the link, then the controller
    /// processes it for `cost_ns` on the earliest free of its command slots.
    /// Returns when the controller is done.
    #[inline]
    fn command(&mut self, t: u64, cost_ns: u64) -> u64 {
        let oh = self.cfg.host.command_overhead_ns;
        let s = self.link.reserve(t + self.cfg.controller.command_latency_ns, oh);
        let t1 = s + oh;
        let slots = &mut self.ctrl_free_ns;
        let mut k = 0;
        for i in 1..slots.len() {
            if slots[i] < slots[k] {
                k = i;
            }
        }
        let t2 = t1.max(slots[k]) + cost_ns;
        slots[k] = t2;
        t2
    }

    /// Time the controller's write data path takes for `bytes` of host data
    /// (0 when not modelled).
    #[inline]
    fn write_path_ns(&self, bytes: u64) -> u64 {
        match self.cfg.controller.max_write_bytes_per_s {
            0 => 0,
            r => (bytes * 1_000_000_000).div_ceil(r),
        }
    }

    /// Time the controller's ECC encoder takes for `bytes` of host data of
    /// `pattern`: what it carries is what reaches the NAND (0 when not modelled).
    #[inline]
    fn encode_path_ns(&self, pattern: DataPattern, bytes: u64) -> u64 {
        match self.cfg.controller.encode_bytes_per_s {
            0 => 0,
            r => (self.ftl.stored_bytes(pattern, bytes) * 1_000_000_000).div_ceil(r),
        }
    }

    #[inline]
    fn drain_releases(&mut self) {
        for r in self.ftl.releases.drain(..) {
            self.buffer.push(r);
        }
    }

    /// Submit one host I/O at `t`; returns its completion time.
    fn submit(&mut self, op: Op, off: u64, len: u64, t: u64, pattern: DataPattern) -> Result<u64> {
        let c = &self.cfg.controller;
        let cost = match op {
            Op::Read => c.read_cost_ns(),
            Op::Write => c.write_cost_ns(),
            Op::Trim => c.command_cost_ns,
        };
        let t2 = self.command(t, cost);
        let (first, n) = unit_span(off, len);
        match op {
            Op::Write => {
                let end = off + len;
                let mut t_data = t2;
                for lba in first..first + n {
                    let u0 = lba * UNIT_BYTES;
                    let lo = off.max(u0);
                    let hi = end.min(u0 + UNIT_BYTES);
                    let partial = hi - lo < UNIT_BYTES;
                    let t_adm = match self.buffer.admit(t2, UNIT_BYTES) {
                        Some(t) => t,
                        None => {
                            // Full of completed units waiting for their die's
                            // next data: send them now.
                            self.ftl.program_waiting_units(t2, &mut self.nand)?;
                            self.drain_releases();
                            self.buffer.admit(t2, UNIT_BYTES).ok_or_else(|| {
                                SimError::integrity("write buffer full with nothing scheduled to leave it")
                            })?
                        }
                    };
                    let xs = self.link.reserve(t_adm.max(t_data), self.link_ns(hi - lo));
                    t_data = xs + self.link_ns(hi - lo);
                    let wp = self.write_path_ns(hi - lo);
                    if wp > 0 {
                        // The controller's write path (DMA set-up, buffer
                        // and map work per host byte) takes the data as it
                        // streams in, at its own rate, shared by every write.
                        let ws = self.write_path.reserve(xs, wp);
                        t_data = t_data.max(ws + wp);
                    }
                    let ep = self.encode_path_ns(pattern, hi - lo);
                    if ep > 0 {
                        // Then the ECC encoder, at its own rate, on what
                        // reaches the NAND: data reduction shrinks its work.
                        let es = self.encode_path.reserve(xs, ep);
                        t_data = t_data.max(es + ep);
                    }
                    let mut ready = t_data;
                    if partial {
                        ready = ready.max(self.ftl.read_for_rmw(lba, t2, &mut self.nand));
                    }
                    self.ftl.write_unit(lba, ready, pattern, &mut self.nand)?;
                    if !self.ftl.releases.is_empty() {
                        self.drain_releases();
                    }
                }
                Ok(t_data)
            }
            Op::Read => {
                let x = self.link_ns(len);
                let start = if self.cfg.controller.readahead_bytes == 0 {
                    // Store and forward: the data crosses the link once all
                    // of it is in the controller.
                    self.read_data(first, n, t2)?
                } else {
                    self.read_stream(first, n, off, t2)?
                };
                let xs = self.link.reserve(start, x);
                Ok(xs + x)
            }
            Op::Trim => {
                // Only whole 4KB units can be unmapped.
                let a = off.div_ceil(UNIT_BYTES);
                let b = (off + len) / UNIT_BYTES;
                if b > a {
                    self.ftl.trim_units(a, b - a, t2);
                }
                Ok(t2)
            }
        }
    }

    /// NAND side of a host read on a controller without read-ahead: the
    /// request's die reads (at most `seq_read_max_dies` at once); returns
    /// when all its data is in the controller.
    fn read_data(&mut self, first: u64, n: u64, t: u64) -> Result<u64> {
        let c = &self.cfg.controller;
        let (r, unmapped) = self.ftl.read_units(first, n, t, &mut self.nand, c.seq_read_max_dies)?;
        let mut ready = r;
        if unmapped > 0 && c.unmapped_read_ns > 0 {
            ready = ready.max(t + unmapped * c.unmapped_read_ns);
        }
        Ok(ready)
    }

    /// Issue the die reads of LBAs `from..to` at `t` (at most
    /// `seq_read_max_dies` at once) and append them to `out` as pieces
    /// (first LBA, last LBA + 1, when the data is in the controller),
    /// contiguous from `from` to `to`; units answered without NAND are ready
    /// at `t` (never-written ones after `unmapped_read_ns` each).
    fn read_pieces(&mut self, from: u64, to: u64, t: u64, out: &mut VecDeque<(u64, u64, u64)>) -> Result<()> {
        let c = &self.cfg.controller;
        let (_, unmapped) = self.ftl.read_units_p(from, to - from, t, &mut self.nand, c.seq_read_max_dies, true)?;
        let floor = if unmapped > 0 && c.unmapped_read_ns > 0 { t + unmapped * c.unmapped_read_ns } else { t };
        let p = &self.ftl.read_pieces;
        if p.first().is_none_or(|q| q.0 > from) {
            out.push_back((from, p.first().map_or(to, |q| q.0), floor));
        }
        for (i, &(s, r)) in p.iter().enumerate() {
            let e = p.get(i + 1).map_or(to, |q| q.0);
            out.push_back((s, e, r.max(floor)));
        }
        Ok(())
    }

    /// NAND side of a host read on a controller with read-ahead ("NCQ
    /// streaming"). The request's data comes from die reads the read-ahead
    /// issued earlier when a detected sequential stream was prefetched, and
    /// for what the read-ahead does not hold, from its own die reads, all
    /// issued at once (at most `seq_read_max_dies` at a time): a large
    /// request spans many dies together. Its data streams to the host in LBA
    /// order as the die reads land, so the transfer overlaps the reads still
    /// in flight. With at least `readahead_min_qd` commands outstanding, a
    /// sequential request extends the read-ahead: die reads for the next
    /// `readahead_bytes` beyond it, issued now, so the drive runs ahead of
    /// the host by that window and no more. Returns the earliest start of the
    /// request's link transfer that never waits for data.
    fn read_stream(&mut self, first: u64, n: u64, off: u64, t: u64) -> Result<u64> {
        let ra_units = self.cfg.controller.readahead_bytes / UNIT_BYTES;
        let sequential = first == self.ra.next_lba;
        let end = first + n;
        self.ra.next_lba = end;
        // The read-ahead holds LBAs from its first piece to `pre_end`: a
        // sequential request starting there takes what it holds and reads
        // the rest itself.
        let hit = sequential && self.ra.chunks.front().is_some_and(|c| c.0 <= first) && self.ra.pre_end > first;
        let mut chunks = std::mem::take(&mut self.ra.chunks);
        if !hit {
            chunks.clear();
            self.ra.pre_end = first;
        }
        if self.ra.pre_end < end {
            self.read_pieces(self.ra.pre_end, end, t, &mut chunks)?;
            self.ra.pre_end = end;
        }
        // The transfer starts late enough that each piece is in the
        // controller by the time the link reaches its first byte.
        let mut start = t;
        for &(s, e, r) in &chunks {
            if s < end && e > first {
                let before = (s * UNIT_BYTES).max(off) - off;
                start = start.max(r.saturating_sub(self.link_ns(before)));
            }
        }
        if ra_units > 0 && sequential && self.outstanding >= self.cfg.controller.readahead_min_qd {
            let want_end = (end + ra_units).min(self.geometry.user_units);
            let from = self.ra.pre_end.max(end);
            if want_end > from {
                self.read_pieces(from, want_end, t, &mut chunks)?;
                self.ra.pre_end = want_end;
            }
        }
        // Data the host has asked for leaves the read-ahead buffer.
        while chunks.front().is_some_and(|c| c.1 <= end) {
            chunks.pop_front();
        }
        self.ra.chunks = chunks;
        Ok(start)
    }

    /// Average power of a phase from what the NAND did and how long the
    /// drive was busy (POWER section of the drive file).
    fn power_json(&self, nand: &NandCounters, duration_ns: u64, busy_ns: u64) -> Value {
        let p = &self.cfg.power;
        let secs = duration_ns as f64 / 1e9;
        let static_j = p.idle_mw as f64 / 1e3 * secs + p.active_mw as f64 / 1e3 * (busy_ns.min(duration_ns) as f64 / 1e9);
        let nand_j = nand.page_reads as f64 * p.read_uj_per_page * 1e-6
            + nand.unit_programs as f64 * p.program_uj_per_unit * 1e-6
            + nand.block_erases as f64 * p.erase_uj_per_block * 1e-6
            + nand.channel_bytes as f64 * p.transfer_pj_per_byte * 1e-12;
        let total = static_j + nand_j;
        json!({
            "energy_j": total,
            "nand_energy_j": nand_j,
            "avg_w": if secs > 0.0 { total / secs } else { p.idle_mw as f64 / 1e3 },
        })
    }

    fn check_range(&self, field: &str, off: u64, len: u64) -> Result<()> {
        if off % SECTOR_BYTES != 0 || len % SECTOR_BYTES != 0 || off + len > self.capacity_bytes() {
            return Err(SimError::workload(
                field,
                format!("offset {off} + length {len} must be multiples of 512 B within {} B", self.capacity_bytes()),
            ));
        }
        Ok(())
    }

    fn snapshot(&self) -> (FtlCounters, NandCounters) {
        (self.ftl.counters, self.nand.counters)
    }

    fn finish_phase(
        &mut self,
        name: String,
        kind: &'static str,
        start: u64,
        duration: u64,
        stats: PhaseStats,
        before: (FtlCounters, NandCounters),
        interrupted: bool,
    ) -> Result<PhaseResult> {
        let (f0, n0) = before;
        let ftl = self.ftl.counters.since(&f0);
        let nand = self.nand.counters.since(&n0);
        let power = self.power_json(&nand, duration, stats.busy_time_ns);
        if self.check {
            self.check_now()?;
        }
        self.phase_count += 1;
        Ok(PhaseResult {
            name,
            kind,
            start_ns: start,
            duration_ns: duration,
            stats,
            ftl,
            nand,
            interrupted,
            iodepth: 0,
            pattern: None,
            smart: self.smart(),
            io_log: Vec::new(),
            power,
        })
    }

    /// Verify the FTL against the shadow model and the structural invariants.
    pub fn check_now(&self) -> Result<()> {
        self.ftl.check_all()?;
        if !self.nand.channels_consistent() || !self.link.is_consistent() || !self.write_path.is_consistent() || !self.encode_path.is_consistent() {
            return Err(SimError::integrity("a channel, the link, the write path, the encoder or the recycling path has overlapping reservations"));
        }
        Ok(())
    }

    /// Run a closed-loop workload. `progress` is called about once per
    /// interval of simulated time; returning false stops the phase early (the
    /// result is then marked interrupted and holds what finished).
    pub fn run(&mut self, w: &Workload, progress: &mut dyn FnMut(Progress) -> bool) -> Result<PhaseResult> {
        if w.offset_bytes + w.size_bytes > self.capacity_bytes() {
            return Err(SimError::workload("size", "region beyond the drive's capacity"));
        }
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let seed = self.seed ^ self.phase_count.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut gen = IoGen::new(w, seed);
        let mut stats = PhaseStats::new(w.interval_ns);
        let end = w.runtime_ns.map(|r| start + r);
        let limit_bytes = w.io_limit_bytes.unwrap_or(u64::MAX);
        let limit_ios = w.number_ios.unwrap_or(u64::MAX);
        let ncq = self.cfg.host.ncq_depth;
        // Device-side NCQ slots when the host queues more than the drive takes.
        let mut ncq_free: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
        if w.iodepth > ncq {
            for _ in 0..ncq {
                ncq_free.push(Reverse(start));
            }
        }
        let mut heap: BinaryHeap<Reverse<InFlight>> = BinaryHeap::with_capacity(w.iodepth as usize + 1);
        let mut issued_bytes = 0u64;
        let mut issued_ios = 0u64;
        let mut busy = Busy::default();
        let mut next_progress = start + w.interval_ns;
        let mut interrupted = false;
        let mut last_complete = start;
        let mut max_complete = start;
        let total_bytes = if w.runtime_ns.is_none() { w.io_limit_bytes.unwrap_or(0) } else { 0 };

        // Look ahead: the I/Os are generated a batch at a time, two batches
        // before they are issued. A new batch has its map entries prefetched,
        // and the batch before it then the live bits and blocks of
        // the data its writes replace, all at once so that the misses overlap.
        const BATCH: usize = 8;
        let mut ahead: VecDeque<(Op, u64, u64)> = VecDeque::with_capacity(3 * BATCH);
        macro_rules! issue {
            ($t:expr) => {{
                let t: u64 = $t;
                if ahead.len() <= 2 * BATCH {
                    for m in ahead.range(..ahead.len().saturating_sub(BATCH)) {
                        if m.0 == Op::Write {
                            self.ftl.prefetch_write(m.1 / UNIT_BYTES, 2);
                        }
                    }
                    for m in ahead.range(ahead.len().saturating_sub(BATCH)..) {
                        if m.0 == Op::Write {
                            self.ftl.prefetch_write(m.1 / UNIT_BYTES, 1);
                        }
                    }
                    for _ in 0..BATCH {
                        let nxt = gen.next_io();
                        self.ftl.prefetch_write(nxt.1 / UNIT_BYTES, 0);
                        ahead.push_back(nxt);
                    }
                }
                let (op, off, len) = ahead.pop_front().unwrap();
                let t_dev = if w.iodepth > ncq { ncq_free.pop().map(|r| r.0).unwrap_or(t).max(t) } else { t };
                self.outstanding = (heap.len() as u32 + 1).min(ncq);
                let c = self.submit(op, off, len, t_dev, w.pattern)?;
                if w.iodepth > ncq {
                    ncq_free.push(Reverse(c));
                }
                let dir = match op {
                    Op::Read => 1u8,
                    Op::Write => 2u8,
                    Op::Trim => 0u8,
                };
                busy.start(dir as usize, t);
                self.seq += 1;
                heap.push(Reverse(InFlight { complete_ns: c, seq: self.seq, submit_ns: t, bytes: len, dir }));
                issued_bytes += len;
                issued_ios += 1;
                if c > max_complete {
                    max_complete = c;
                }
            }};
        }

        for _ in 0..w.iodepth {
            if issued_bytes >= limit_bytes || issued_ios >= limit_ios {
                break;
            }
            issue!(start);
        }
        while let Some(Reverse(io)) = heap.pop() {
            let t = io.complete_ns;
            if let Some(e) = end {
                if t > e {
                    heap.push(Reverse(io));
                    break;
                }
            }
            last_complete = t;
            busy.end(io.dir as usize, t);
            if io.seq & 15 == 0 {
                self.nand.advance(t);
                self.link.advance(t);
                self.write_path.advance(t);
                self.encode_path.advance(t);
            }
            let dir = match io.dir {
                1 => Dir::Read,
                2 => Dir::Write,
                _ => Dir::Trim,
            };
            stats.record(dir, io.bytes, t - io.submit_ns, t - start);
            if t >= next_progress {
                next_progress = t + w.interval_ns;
                let p = Progress {
                    done_ns: t - start,
                    total_ns: w.runtime_ns.unwrap_or(0),
                    done_bytes: issued_bytes,
                    total_bytes,
                };
                if !progress(p) {
                    interrupted = true;
                    break;
                }
            }
            if issued_bytes < limit_bytes && issued_ios < limit_ios {
                issue!(t);
            }
        }
        // fio: a job with both a byte/count limit and a runtime ends at
        // whichever comes first. The runtime ended it only if I/O was still
        // in flight at the deadline; when the transfer finished first (the
        // heap ran empty) the phase ends at its last completion.
        let transfer_done = heap.is_empty();
        let phase_end = match end {
            Some(e) if !interrupted && !transfer_done => e,
            _ => last_complete,
        };
        // I/Os still in flight finish in the background after the phase.
        for Reverse(io) in heap.iter() {
            busy.end(io.dir as usize, phase_end.min(io.complete_ns).max(io.submit_ns));
        }
        stats.busy_time_ns = busy.total[0];
        stats.read_busy_time_ns = busy.total[1];
        stats.write_busy_time_ns = busy.total[2];
        let duration = phase_end - start;
        stats.finish(duration);
        self.now_ns = phase_end;
        self.last_io_end_ns = max_complete;
        let mut r = self.finish_phase(w.name.clone(), "workload", start, duration, stats, before, interrupted)?;
        r.iodepth = w.iodepth;
        r.pattern = Some(w.pattern);
        Ok(r)
    }

    /// Replay a trace against the drive (Storage Bench playback).
    ///
    /// `AsRecorded` issues each I/O at its timestamp (gaps longer than
    /// `idle_cap_ns` shortened to it), or later if the trace's own queue depth
    /// (or the drive's NCQ) is full, so idle gaps happen and idle-time GC can
    /// use them. `AsFastAsPossible` ignores timestamps and keeps the trace's
    /// queue depth (or `queue_depth` when the trace has none). Records stream
    /// through: memory does not grow with the trace.
    pub fn replay(
        &mut self,
        records: &mut dyn Iterator<Item = std::result::Result<TraceRecord, crate::trace::TraceError>>,
        opts: &ReplayOptions,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let mut stats = PhaseStats::new(opts.interval_ns.max(1));
        let ncq = self.cfg.host.ncq_depth;
        let cap = self.capacity_bytes();
        let mut heap: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
        let mut busy = Busy::default();
        let mut pending: Option<TraceRecord> = None;
        let mut index: u64 = 0;
        let mut first_trace_ns: Option<u64> = None;
        let mut prev_trace_ns = 0u64;
        let mut warped_ns = 0u64; // trace time after capping gaps
        let mut last_done = start;
        let mut max_complete = start;
        let mut next_progress = start + stats.interval_ns;
        let mut interrupted = false;
        let mut issued_bytes = 0u64;
        let delay = self.cfg.ftl.idle_gc_delay_ns;
        let mut clock = start;
        let mut log = Vec::new();
        // The trace is cut here (a record or time limit): nothing more is read.
        let mut cut = false;
        loop {
            if pending.is_none() && !cut {
                if opts.max_records > 0 && index >= opts.max_records {
                    cut = true;
                    continue;
                }
                match records.next() {
                    None => cut = true,
                    Some(Err(e)) => return Err(SimError::Trace(e)),
                    Some(Ok(r)) => {
                        index += 1;
                        if r.op != TraceOp::Flush && (r.length_bytes == 0 || r.offset_bytes + r.length_bytes > cap) {
                            return Err(SimError::workload(
                                "trace",
                                format!(
                                    "record {index}: offset {} + length {} is outside the drive's {cap} B (import with folding, or pick a larger drive)",
                                    r.offset_bytes, r.length_bytes
                                ),
                            ));
                        }
                        let t0 = *first_trace_ns.get_or_insert(r.time_ns);
                        let t = r.time_ns.saturating_sub(t0);
                        if opts.max_trace_ns.is_some_and(|m| t >= m) {
                            cut = true;
                            continue;
                        }
                        let gap = t.saturating_sub(prev_trace_ns);
                        prev_trace_ns = prev_trace_ns.max(t);
                        warped_ns += opts.idle_cap_ns.map_or(gap, |c| gap.min(c));
                        let mut r = r;
                        r.time_ns = warped_ns;
                        pending = Some(r);
                    }
                }
            }
            // When may the pending record go?
            let can_issue = pending.map(|r| {
                let limit = match opts.mode {
                    ReplayMode::AsRecorded => if r.queue_depth > 0 { (r.queue_depth as u32).max(1) } else { ncq },
                    ReplayMode::AsFastAsPossible => if r.queue_depth > 0 { r.queue_depth as u32 } else { opts.queue_depth.max(1) },
                }
                .min(ncq.max(1));
                (heap.len() as u32) < limit
            });
            let issue_at = match (pending, opts.mode) {
                (Some(r), ReplayMode::AsRecorded) => Some(start + r.time_ns),
                (Some(_), ReplayMode::AsFastAsPossible) => Some(last_done.max(start)),
                (None, _) => None,
            };
            let next_completion = heap.peek().map(|x| x.0.complete_ns);
            let do_issue = match (can_issue, issue_at, next_completion) {
                (Some(true), Some(ti), Some(tc)) => ti <= tc,
                (Some(true), Some(_), None) => true,
                _ => false,
            };
            if do_issue {
                let r = pending.take().unwrap();
                let mut t = issue_at.unwrap().max(clock);
                if heap.is_empty() {
                    // Idle gap: idle-time GC may work in it.
                    if t > last_done + delay {
                        self.ftl.background_gc(last_done + delay, t, &mut self.nand)?;
                    }
                }
                t = t.max(start);
                self.outstanding = (heap.len() as u32 + 1).min(ncq);
                let (dir, c) = match r.op {
                    TraceOp::Read => (1u8, self.submit(Op::Read, r.offset_bytes, r.length_bytes, t, r.pattern)?),
                    TraceOp::Write => (2u8, self.submit(Op::Write, r.offset_bytes, r.length_bytes, t, r.pattern)?),
                    TraceOp::Trim => (0u8, self.submit(Op::Trim, r.offset_bytes, r.length_bytes, t, r.pattern)?),
                    TraceOp::Flush => {
                        let t2 = self.command(t, self.cfg.controller.command_cost_ns);
                        self.ftl.flush(t2, &mut self.nand);
                        self.drain_releases();
                        (3u8, t2.max(self.busiest_die()))
                    }
                };
                clock = t;
                if opts.io_log {
                    log.push(IoLogEntry { submit_ns: t, complete_ns: c, op: r.op, offset_bytes: r.offset_bytes, length_bytes: r.length_bytes });
                }
                busy.start(match dir { 1 | 2 => dir as usize, _ => 0 }, t);
                self.seq += 1;
                heap.push(Reverse(InFlight { complete_ns: c, seq: self.seq, submit_ns: t, bytes: r.length_bytes, dir }));
                issued_bytes += r.length_bytes;
                max_complete = max_complete.max(c);
                continue;
            }
            match heap.pop() {
                Some(Reverse(io)) => {
                    let t = io.complete_ns;
                    last_done = last_done.max(t);
                    clock = clock.max(t);
                    busy.end(match io.dir { 1 | 2 => io.dir as usize, _ => 0 }, t);
                    let dir = match io.dir {
                        1 => Some(Dir::Read),
                        2 => Some(Dir::Write),
                        0 => Some(Dir::Trim),
                        _ => None,
                    };
                    if let Some(d) = dir {
                        stats.record(d, io.bytes, t - io.submit_ns, t - start);
                    }
                    if io.seq & 15 == 0 {
                        self.nand.advance(t);
                        self.link.advance(t);
                        self.write_path.advance(t);
                        self.encode_path.advance(t);
                    }
                    if t >= next_progress {
                        next_progress = t + stats.interval_ns;
                        let p = Progress { done_ns: t - start, total_ns: 0, done_bytes: issued_bytes, total_bytes: 0 };
                        if !progress(p) {
                            interrupted = true;
                            break;
                        }
                    }
                }
                None => {
                    if pending.is_none() {
                        break;
                    }
                }
            }
        }
        stats.busy_time_ns = busy.total[0];
        stats.read_busy_time_ns = busy.total[1];
        stats.write_busy_time_ns = busy.total[2];
        let end = last_done.max(start);
        stats.finish(end - start);
        self.now_ns = end;
        self.last_io_end_ns = max_complete;
        let mut r = self.finish_phase(opts.name.clone(), "replay", start, end - start, stats, before, interrupted)?;
        r.iodepth = opts.queue_depth;
        r.io_log = log;
        Ok(r)
    }

    /// The drive sits idle for `duration_ns`; background GC may use the time.
    pub fn idle(&mut self, duration_ns: u64) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let end = start + duration_ns;
        let from = start + self.cfg.ftl.idle_gc_delay_ns;
        self.ftl.background_gc(from, end, &mut self.nand)?;
        self.now_ns = end;
        let stats = PhaseStats::new(duration_ns.max(1));
        self.finish_phase(format!("idle {}s", duration_ns as f64 / 1e9), "idle", start, duration_ns, stats, before, false)
    }

    /// TRIM a byte range (the whole drive when `len` is None), as one command
    /// per 2 GiB range like an OS issuing a full-drive TRIM.
    pub fn trim(&mut self, off: u64, len: Option<u64>) -> Result<PhaseResult> {
        if off > self.capacity_bytes() {
            return Err(SimError::workload("trim", format!("offset {off} is beyond the drive's {} B", self.capacity_bytes())));
        }
        let len = len.unwrap_or(self.capacity_bytes() - off);
        self.check_range("trim", off, len)?;
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let mut stats = PhaseStats::new(1_000_000_000);
        let mut t = start;
        let chunk = 2u64 << 30;
        let mut o = off;
        while o < off + len {
            let l = chunk.min(off + len - o);
            let c = self.submit(Op::Trim, o, l, t, DataPattern::Incompressible)?;
            stats.record(Dir::Trim, l, c - t, c - start);
            t = c;
            o += l;
        }
        stats.busy_time_ns = t - start;
        stats.finish(t - start);
        self.now_ns = t;
        self.last_io_end_ns = t;
        self.finish_phase("trim".into(), "trim", start, t - start, stats, before, false)
    }

    /// ATA secure erase: every block erased, mapping empty.
    pub fn secure_erase(&mut self) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns).max(self.busiest_die());
        let done = self.ftl.secure_erase(start, &mut self.nand);
        self.buffer = WriteBuffer::new(self.cfg.controller.write_buffer_bytes, self.geometry.dies);
        self.now_ns = done;
        self.last_io_end_ns = done;
        let stats = PhaseStats::new(1_000_000_000);
        self.finish_phase("secure erase".into(), "secure_erase", start, done - start, stats, before, false)
    }

    /// Program partly filled units now (what a FLUSH CACHE command does).
    pub fn flush(&mut self) {
        let t = self.now_ns.max(self.last_io_end_ns);
        self.ftl.flush(t, &mut self.nand);
        self.drain_releases();
    }

    fn busiest_die(&self) -> u64 {
        self.nand.dies.iter().map(|d| d.busy_until_ns).max().unwrap_or(0)
    }

    /// SMART-like figures: wear and lifetime writes.
    pub fn smart(&self) -> Value {
        let (sum, min, max) = self.ftl.erase_counts();
        let nblocks = self.ftl.blocks.len() as f64;
        let avg = sum as f64 / nblocks;
        let rated = self.cfg.nand.pe_cycles_rated as f64;
        let c = &self.ftl.counters;
        // Lifetime: the rated P/E budget of the data blocks, spent at the write
        // amplification seen so far (1 before any write).
        let host = c.host_units_written * UNIT_BYTES;
        let wa = if host == 0 { 1.0 } else { c.nand_bytes_programmed as f64 / host as f64 };
        let block_bytes = self.geometry.slots_per_block as f64 * UNIT_BYTES as f64;
        let budget = rated * nblocks * block_bytes - sum as f64 * block_bytes;
        let endurance_host = (rated * nblocks * block_bytes / wa.max(1e-9)) as u64;
        let years = |gb_per_day: f64| (budget / wa.max(1e-9) / (gb_per_day * 1e9) / 365.0).max(0.0);
        json!({
            "host_bytes_written": host,
            "nand_bytes_written": c.nand_bytes_programmed,
            "erase_count_avg": avg,
            "erase_count_min": min,
            "erase_count_max": max,
            "pe_cycles_rated": self.cfg.nand.pe_cycles_rated,
            "life_remaining_percent": (100.0 * (1.0 - avg / rated)).max(0.0),
            "waf_lifetime": wa,
            "endurance_host_bytes": endurance_host,
            "lifetime_years_at_10_gb_per_day": years(10.0),
            "lifetime_years_at_20_gb_per_day": years(20.0),
            "lifetime_years_at_50_gb_per_day": years(50.0),
            "mapped_bytes": self.ftl.mapped_units() * UNIT_BYTES,
            "sim_time_ns": self.now_ns,
        })
    }
}
