//! Trace playback (Storage Bench): records streamed from a file or a
//! generator are issued as recorded (idle gaps kept, or capped) or as fast as
//! possible, at the trace's own iodepth.

use serde_json::Value;

use super::in_flight::{Command, PhaseIo};
use super::{duration_text, PhaseResult, Progress, Simulator, MAX_SIM_TIME_NS};
use crate::error::{Result, SimError};
use crate::ftl::FtlCounters;
use crate::nand::NandCounters;
use crate::parse::{duration_ns_either, get, known_keys, object, werr};
use crate::stats::PhaseStats;
use crate::trace::source::TraceSource;
use crate::trace::{TraceError, TraceOp, TraceRecord};
use crate::workload::{Op, MAX_IODEPTH, MAX_LOG_AVG_MSEC};

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
    /// iodepth for records that carry none (as fast as possible).
    pub iodepth: u32,
    /// Shorten every gap between arrivals to at most this (The Destroyer: 25 ms).
    pub idle_cap_ns: Option<u64>,
    pub interval_ns: u64,
    /// Keep every I/O's submit and completion time in the result (small traces).
    pub io_log: bool,
    /// Replay at most this many records (fio's `number_ios`); 0 = all (as in fio).
    pub max_records: u64,
    /// Replay only the records of the first this-much trace time, measured
    /// from the first record before any idle cap (fio's `runtime`).
    pub max_trace_ns: Option<u64>,
    /// Before the replay, write (unmeasured) every LBA the trace reads
    /// before it writes it: a recorded desktop read files that were on its
    /// disk, and a trace replayed on an erased drive would otherwise read
    /// never-written LBAs, which some controllers answer slowly and others
    /// at once (docs/methodology.md, "Storage Bench").
    pub lay_down_reads: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            name: "replay".into(),
            mode: ReplayMode::AsRecorded,
            iodepth: 1,
            idle_cap_ns: None,
            interval_ns: 1_000_000_000,
            io_log: false,
            max_records: 0,
            max_trace_ns: None,
            lay_down_reads: false,
        }
    }
}

/// The keys of [`ReplayOptions::from_json`].
pub const REPLAY_OPTION_KEYS: &[&str] =
    &["name", "mode", "iodepth", "idle_cap", "idle_cap_ns", "log_avg_msec", "number_ios", "runtime", "runtime_ns", "lay_down_reads"];

impl ReplayOptions {
    /// Replay options from plain data: `name`, `mode` (`as-recorded` |
    /// `as-fast-as-possible`), `iodepth` (for records that carry none),
    /// `idle_cap` (a duration: longer gaps are shortened to it; or
    /// `idle_cap_ns`), `log_avg_msec`, `number_ios` (replay at most this many
    /// records), `runtime` (only the records of the first this-much trace
    /// time; or `runtime_ns`) and `lay_down_reads` (true: first write what the
    /// trace reads before writing). An error names the option.
    pub fn from_json(v: &Value) -> Result<ReplayOptions> {
        let o = object(v, "(options)")?;
        known_keys(o, REPLAY_OPTION_KEYS, "replay option")?;
        let mut opts = ReplayOptions::default();
        if let Some(n) = get(o, "name") {
            opts.name = n.as_str().map(str::to_string).unwrap_or_else(|| n.to_string());
        }
        if let Some(m) = get(o, "mode") {
            opts.mode = match m.as_str().unwrap_or("").to_ascii_lowercase().as_str() {
                "as-recorded" | "recorded" => ReplayMode::AsRecorded,
                "as-fast-as-possible" | "fast" => ReplayMode::AsFastAsPossible,
                other => return Err(werr("mode", format!("'{other}' is not allowed; use as-recorded or as-fast-as-possible"))),
            };
        }
        if let Some(q) = get(o, "iodepth") {
            let q = q
                .as_u64()
                .filter(|q| (1..=MAX_IODEPTH as u64).contains(q))
                .ok_or_else(|| werr("iodepth", format!("{q}: must be 1..={MAX_IODEPTH}")))?;
            opts.iodepth = q as u32;
        }
        opts.idle_cap_ns = duration_ns_either(o, "idle_cap", "idle_cap_ns")?;
        if let Some(n) = get(o, "number_ios") {
            // fio: number_ios = 0 (its default) sets no limit.
            opts.max_records =
                n.as_u64().ok_or_else(|| werr("number_ios", format!("{n}: must be a whole number of records (0: no limit, as in fio)")))?;
        }
        if let Some(ns) = duration_ns_either(o, "runtime", "runtime_ns")? {
            if ns == 0 {
                return Err(werr(if get(o, "runtime").is_some() { "runtime" } else { "runtime_ns" }, "must be longer than 0"));
            }
            opts.max_trace_ns = Some(ns);
        }
        if let Some(l) = get(o, "lay_down_reads") {
            opts.lay_down_reads = l.as_bool().ok_or_else(|| werr("lay_down_reads", format!("{l}: must be true or false")))?;
        }
        if let Some(l) = get(o, "log_avg_msec") {
            opts.interval_ns = l.as_u64().filter(|x| (1..=MAX_LOG_AVG_MSEC).contains(x)).ok_or_else(|| {
                werr("log_avg_msec", format!("{l}: must be a whole number of ms from 1 to {MAX_LOG_AVG_MSEC} (one year)"))
            })? * 1_000_000;
        }
        Ok(opts)
    }
}

impl ReplayOptions {
    /// Commands a replay keeps in flight while record `r` waits: the
    /// trace's iodepth at it when it has one, else the drive's queue (as
    /// recorded) or `iodepth` (as fast as possible); never more than the
    /// drive's queue of `queue_slots` takes.
    fn depth_of(&self, r: &TraceRecord, queue_slots: u32) -> u32 {
        let depth = match self.mode {
            ReplayMode::AsRecorded if r.iodepth > 0 => (r.iodepth as u32).max(1),
            ReplayMode::AsRecorded => queue_slots,
            ReplayMode::AsFastAsPossible if r.iodepth > 0 => r.iodepth as u32,
            ReplayMode::AsFastAsPossible => self.iodepth.max(1),
        };
        depth.min(queue_slots.max(1))
    }
}

/// Where a replay's commands come from: the trace's records in order, until
/// it ends or the options cut it, each timed from the first record with
/// idle gaps capped.
struct TraceFeed<'r> {
    records: &'r mut dyn Iterator<Item = std::result::Result<TraceRecord, TraceError>>,
    /// Records read so far.
    index: u64,
    /// The first record's timestamp, the latest since it, and that latest
    /// once gaps are capped.
    first_ns: Option<u64>,
    prev_ns: u64,
    warped_ns: u64,
    /// The trace ended or was cut: nothing more is read.
    cut: bool,
}

impl TraceFeed<'_> {
    /// The next record, its time that since the first (gaps capped); None
    /// once the trace ends or is cut. A record outside the drive of
    /// `capacity_bytes` is an error naming it.
    fn next(&mut self, opts: &ReplayOptions, capacity_bytes: u64) -> Result<Option<TraceRecord>> {
        if self.cut || (opts.max_records > 0 && self.index >= opts.max_records) {
            self.cut = true;
            return Ok(None);
        }
        let r = match self.records.next() {
            None => {
                self.cut = true;
                return Ok(None);
            }
            Some(r) => r.map_err(SimError::Trace)?,
        };
        self.index += 1;
        if r.op != TraceOp::Flush && (r.length_bytes == 0 || r.offset_bytes + r.length_bytes > capacity_bytes) {
            return Err(SimError::workload(
                "trace",
                format!(
                    "record {}: offset {} + length {} is outside the drive's {capacity_bytes} B (import with folding, or pick a larger drive)",
                    self.index, r.offset_bytes, r.length_bytes
                ),
            ));
        }
        let t0 = *self.first_ns.get_or_insert(r.time_ns);
        let t = r.time_ns.saturating_sub(t0);
        if opts.max_trace_ns.is_some_and(|m| t >= m) {
            self.cut = true;
            return Ok(None);
        }
        let gap = t.saturating_sub(self.prev_ns);
        self.prev_ns = self.prev_ns.max(t);
        self.warped_ns = self.warped_ns.saturating_add(opts.idle_cap_ns.map_or(gap, |c| gap.min(c)));
        Ok(Some(TraceRecord { time_ns: self.warped_ns, ..r }))
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

impl Simulator {
    /// Replay a trace's records on the drive, as one phase.
    ///
    /// `AsRecorded` issues each I/O at its timestamp (gaps longer than
    /// `idle_cap_ns` shortened to it), or later if the trace's own iodepth
    /// (or the drive's NCQ) is full, so idle gaps happen and idle-time GC can
    /// use them. `AsFastAsPossible` ignores timestamps and keeps the trace's
    /// iodepth (or `iodepth` when the trace has none). Records stream
    /// through: memory does not grow with the trace.
    pub fn replay(
        &mut self,
        records: &mut dyn Iterator<Item = std::result::Result<TraceRecord, TraceError>>,
        opts: &ReplayOptions,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let max_intervals = self.max_series_intervals();
        let interval_ns = opts.interval_ns.max(1);
        let ncq = self.cfg.host.queue_slots();
        let cap = self.capacity_bytes();
        let mut io = PhaseIo::new(start, PhaseStats::bounded(interval_ns, max_intervals), ncq, 0, 0, 0);
        let mut pending: Option<TraceRecord> = None;
        let mut feed = TraceFeed { records, index: 0, first_ns: None, prev_ns: 0, warped_ns: 0, cut: false };
        let delay = self.cfg.ftl.idle_gc_delay_ns;
        let mut clock = start;
        let mut log = Vec::new();
        loop {
            if pending.is_none() {
                pending = feed.next(opts, cap)?;
                if let Some(r) = pending {
                    // The series must reach this record's issue time: refuse
                    // before anything grows (a stray timestamp years away).
                    let needed = r.time_ns / interval_ns + 1;
                    if needed > max_intervals || start.checked_add(r.time_ns).is_none_or(|at| at > MAX_SIM_TIME_NS) {
                        return Err(self.record_too_late(&io, opts, feed.index, r.time_ns, needed));
                    }
                }
            }
            // The pending record goes once the depth allows it, at its time
            // (as recorded) or at once (as fast as possible), unless a
            // command in flight completes first.
            let issue_at = pending.filter(|r| io.in_flight() < opts.depth_of(r, ncq)).map(|r| match opts.mode {
                ReplayMode::AsRecorded => start + r.time_ns,
                ReplayMode::AsFastAsPossible => io.tally.last_complete_ns,
            });
            if let Some(at) = issue_at.filter(|&at| io.next_completion_ns().is_none_or(|tc| at <= tc)) {
                let r = pending.take().unwrap();
                let mut t = at.max(clock);
                if io.in_flight() == 0 {
                    // Idle gap: idle-time GC may work in it.
                    let from = io.tally.last_complete_ns + delay;
                    if t > from {
                        self.ftl.background_gc(from, t, &mut self.nand)?;
                    }
                }
                t = t.max(start);
                let c = self.issue_record(&mut io, &r, t)?;
                clock = t;
                if opts.io_log {
                    let e =
                        IoLogEntry { submit_ns: t, complete_ns: c, op: r.op, offset_bytes: r.offset_bytes, length_bytes: r.length_bytes };
                    self.log_io(&mut log, e, &io, opts)?;
                }
                continue;
            }
            // A trace's flush moves no data and has no latency series of its own.
            match self.complete_next(&mut io, None) {
                Some(done) => {
                    clock = clock.max(done.complete_ns);
                    if !io.report(done.complete_ns, progress) {
                        break;
                    }
                }
                None => {
                    if pending.is_none() {
                        break;
                    }
                }
            }
        }
        self.finish_replay(io, opts, start, before, log)
    }

    /// The replay's result once its last command completed: the series
    /// within its bound, and the I/O log.
    fn finish_replay(
        &mut self,
        io: PhaseIo,
        opts: &ReplayOptions,
        start: u64,
        before: (FtlCounters, NandCounters),
        log: Vec<IoLogEntry>,
    ) -> Result<PhaseResult> {
        let interval_ns = opts.interval_ns.max(1);
        let end = io.tally.last_complete_ns;
        let interrupted = io.interrupted;
        let stats = self.settle(io, end);
        if stats.overflowed() {
            return Err(self.series_error(
                format!("phase '{}': after {} of simulated time in intervals of {}", opts.name, duration_text(end - start), duration_text(interval_ns)),
                stats.overflow_intervals(),
                "cut idle gaps (idle_cap / --idle-cap), replay less of the trace (runtime, number_ios / --runtime, --number-ios), lengthen the interval (log_avg_msec / --log-avg-msec)",
            ));
        }
        let mut r = self.finish_phase(opts.name.clone(), "replay", start..end, stats, before, interrupted)?;
        r.iodepth = opts.iodepth;
        r.io_log = log;
        Ok(r)
    }

    /// Keep entry `e` in the replay's I/O log. An entry costs its own size:
    /// the log holds as many as fit in what the memory limit leaves beside
    /// the drive's tables; past that the replay ends with the error, the
    /// drive's time where it got to.
    fn log_io(&mut self, log: &mut Vec<IoLogEntry>, e: IoLogEntry, io: &PhaseIo, opts: &ReplayOptions) -> Result<()> {
        if log.len() as u64 >= self.memory_budget_bytes() / size_of::<IoLogEntry>() as u64 {
            self.now_ns = io.tally.last_complete_ns;
            self.last_io_end_ns = io.max_complete_ns;
            return Err(SimError::Allocation {
                what: format!("phase '{}': an I/O log of more than {} entries", opts.name, log.len()),
                needed_bytes: (log.len() as u64 + 1) * size_of::<IoLogEntry>() as u64,
                limit_bytes: self.memory_budget_bytes(),
                remedy: "replay less of the trace with the I/O log on (number_ios, runtime), or raise the memory limit (memory_limit_bytes / --memory-limit)".into(),
            });
        }
        log.push(e);
        Ok(())
    }

    /// Issue trace record `r` at `t`; returns when it completes.
    fn issue_record(&mut self, io: &mut PhaseIo, r: &TraceRecord, t: u64) -> Result<u64> {
        let op = match r.op {
            TraceOp::Read => Op::Read,
            TraceOp::Write => Op::Write,
            TraceOp::Trim => Op::Trim,
            TraceOp::Flush => {
                // A trace's flush completes once every die is idle.
                let c = self.ctl.flush_command(&mut self.ftl, &mut self.nand, t).max(self.busiest_die());
                io.tally.start(Command::Flush, t, 0);
                io.push(&mut self.seq, Command::Flush, t, c, 0);
                return Ok(c);
            }
        };
        self.issue(io, (op, r.offset_bytes, r.length_bytes), t, t, r.data_pattern)
    }

    /// The error of a record `index` (in time order) that issues `at_ns`
    /// into the replay, past what its series of `needed` intervals may
    /// hold; the drive's time stays where the replay got to.
    fn record_too_late(&mut self, io: &PhaseIo, opts: &ReplayOptions, index: u64, at_ns: u64, needed: u64) -> SimError {
        self.now_ns = io.tally.last_complete_ns;
        self.last_io_end_ns = io.max_complete_ns;
        self.series_error(
            format!(
                "phase '{}': record {index} (in time order) comes {} after the first{}, so in intervals of {}",
                opts.name,
                duration_text(at_ns),
                if opts.idle_cap_ns.is_some() { " once idle gaps are capped" } else { "" },
                duration_text(io.tally.stats.interval_ns)
            ),
            needed,
            "check the trace's timestamps, cut idle gaps (idle_cap / --idle-cap), replay less of the trace (runtime, number_ios / --runtime, --number-ios), lengthen the interval (log_avg_msec / --log-avg-msec)",
        )
    }

    /// Replay a trace given as plain data: `source` as
    /// [`TraceSource::from_json`] (on this drive, the simulator's seed by
    /// default), `options` as [`ReplayOptions::from_json`]. The result carries
    /// the source as given and, for a file, its import report.
    pub fn replay_from_json(&mut self, source: &Value, options: &Value, progress: &mut dyn FnMut(Progress) -> bool) -> Result<PhaseResult> {
        let opts = ReplayOptions::from_json(options)?;
        let mut src = TraceSource::from_json(source, self.capacity_bytes(), self.seed)?;
        if let TraceSource::File { options, .. } = &mut src {
            options.memory_limit_bytes = self.memory_budget_bytes();
        }
        if opts.lay_down_reads {
            let mut scan = src.open()?;
            self.lay_down_reads(&mut scan, &opts, progress)?;
        }
        let mut records = src.open()?;
        let mut r = self.replay(&mut records, &opts, progress)?;
        r.source = Some(source.clone());
        r.import = records.import_report().cloned();
        Ok(r)
    }

    /// Write, unmeasured and as fast as the drive takes it (1 MiB writes at
    /// QD32, in LBA order), every 4KB unit the trace (as `opts` cuts it) reads
    /// before it writes or trims it and the drive does not hold yet: the files
    /// the recorded desktop read were on its disk. Their data is the trace's
    /// own mix: each write's pattern in proportion to the bytes the trace
    /// writes with it (incompressible for a trace that writes nothing).
    fn lay_down_reads(
        &mut self,
        records: &mut dyn Iterator<Item = std::result::Result<TraceRecord, TraceError>>,
        opts: &ReplayOptions,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Result<()> {
        const UNIT: u64 = crate::config::UNIT_BYTES;
        const MAX_UNITS: usize = 256; // 1 MiB per write
        let cap = self.capacity_bytes();
        let units = cap.div_ceil(UNIT) as usize;
        let mut touched = vec![0u64; units.div_ceil(64)];
        let mut lay = vec![0u64; units.div_ceil(64)];
        // Bytes the trace writes with each pattern, in order of first use.
        let mut mix: Vec<(crate::pattern::DataPattern, u64)> = Vec::new();
        let mut first_ns = None;
        for (n, r) in records.enumerate() {
            let r = r.map_err(SimError::Trace)?;
            let t0 = *first_ns.get_or_insert(r.time_ns);
            if (opts.max_records > 0 && n as u64 >= opts.max_records)
                || opts.max_trace_ns.is_some_and(|m| r.time_ns.saturating_sub(t0) >= m)
            {
                break;
            }
            // Out-of-range records are the replay's to report.
            if r.op == TraceOp::Flush || r.length_bytes == 0 || r.offset_bytes + r.length_bytes > cap {
                continue;
            }
            let (a, b) = ((r.offset_bytes / UNIT) as usize, (r.offset_bytes + r.length_bytes).div_ceil(UNIT) as usize);
            if r.op == TraceOp::Write {
                match mix.iter_mut().find(|(p, _)| *p == r.data_pattern) {
                    Some((_, bytes)) => *bytes += r.length_bytes,
                    None => mix.push((r.data_pattern, r.length_bytes)),
                }
            }
            for u in a..b {
                let (w, bit) = (u / 64, 1u64 << (u % 64));
                if touched[w] & bit == 0 {
                    touched[w] |= bit;
                    // What the drive already holds (a filled drive) needs no laying down.
                    if r.op == TraceOp::Read && self.ftl.unit_stored_bytes(u as u64) == 0 {
                        lay[w] |= bit;
                    }
                }
            }
        }
        if mix.is_empty() {
            mix.push((crate::pattern::DataPattern::Incompressible, 1));
        }
        let mut extents: Vec<(u64, u64)> = Vec::new();
        let mut u = 0usize;
        while u < units {
            if lay[u / 64] == 0 {
                u = (u / 64 + 1) * 64;
                continue;
            }
            if lay[u / 64] & (1u64 << (u % 64)) == 0 {
                u += 1;
                continue;
            }
            let start = u;
            while u < units && u - start < MAX_UNITS && lay[u / 64] & (1u64 << (u % 64)) != 0 {
                u += 1;
            }
            let off = start as u64 * UNIT;
            extents.push((off, (u as u64 * UNIT).min(cap) - off));
        }
        if extents.is_empty() {
            return Ok(());
        }
        let patterns = mix_in_proportion(&mix, &extents);
        let mut writes = extents.into_iter().zip(patterns).map(|((offset_bytes, length_bytes), data_pattern)| {
            Ok(TraceRecord { time_ns: 0, op: TraceOp::Write, offset_bytes, length_bytes, data_pattern, iodepth: 0, recorded_latency_ns: 0 })
        });
        let lay_opts = ReplayOptions {
            name: format!("{}: lay down the data it reads", opts.name),
            mode: ReplayMode::AsFastAsPossible,
            iodepth: 32,
            ..ReplayOptions::default()
        };
        self.replay(&mut writes, &lay_opts, progress)?;
        Ok(())
    }
}

/// One pattern per extent such that the bytes laid down with each pattern
/// follow `mix`'s shares (bytes per pattern) as closely as whole extents
/// allow: each extent takes the pattern furthest behind its share once the
/// extent is counted (the first such on a tie), so the choice is
/// deterministic and spread over the LBAs rather than in runs.
fn mix_in_proportion(mix: &[(crate::pattern::DataPattern, u64)], extents: &[(u64, u64)]) -> Vec<crate::pattern::DataPattern> {
    let total: i128 = mix.iter().map(|&(_, b)| b as i128).sum::<i128>().max(1);
    let mut laid = vec![0i128; mix.len()];
    let mut done = 0i128;
    extents
        .iter()
        .map(|&(_, len)| {
            done += len as i128;
            // behind_i = share_i x done - laid_i, scaled by `total`
            let behind = |i: usize| mix[i].1 as i128 * done - laid[i] * total;
            let i = (1..mix.len()).fold(0, |best, i| if behind(i) > behind(best) { i } else { best });
            laid[i] += len as i128;
            mix[i].0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::mix_in_proportion;
    use crate::pattern::DataPattern;

    #[test]
    fn laid_down_data_follows_the_traces_write_mix_by_bytes() {
        let mix = [(DataPattern::Incompressible, 62), (DataPattern::Ratio { permille: 500 }, 26), (DataPattern::Zeros, 12)];
        let extents: Vec<(u64, u64)> = (0..1000u64).map(|i| (i << 20, 4096 * (1 + i % 7))).collect();
        let got = mix_in_proportion(&mix, &extents);
        let total: u64 = extents.iter().map(|e| e.1).sum();
        for (p, w) in mix {
            let bytes: u64 = extents.iter().zip(&got).filter(|(_, g)| **g == p).map(|(e, _)| e.1).sum();
            let share = bytes as f64 / total as f64;
            assert!((share - w as f64 / 100.0).abs() < 0.005, "{p:?}: {share:.4} of the bytes for {w}%");
        }
        // interleaved, not in runs: no pattern holds more than a few extents in a row
        let longest = got.chunk_by(|a, b| a == b).map(<[_]>::len).max().unwrap();
        assert!(longest <= 8, "a run of {longest} extents of one pattern");
        // one pattern: all of it
        assert!(mix_in_proportion(&[(DataPattern::Zeros, 5)], &extents).iter().all(|p| *p == DataPattern::Zeros));
    }
}
