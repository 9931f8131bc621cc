//! The phases a simulator runs, each in one call: a closed-loop workload in
//! fio's vocabulary (`run`), idle time, a TRIM, a secure erase, a flush; and
//! what every phase shares (busy time, power, the phase result).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::Range;

use serde_json::{json, Value};

use super::in_flight::{Busy, Command, InFlight};
use super::{duration_text, PhaseResult, Simulator, MAX_SIM_TIME_NS};
use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::ftl::FtlCounters;
use crate::nand::NandCounters;
use crate::pattern::DataPattern;
use crate::stats::{Dir, PhaseStats};
use crate::workload::{IoGen, Op, Workload};

/// What a progress callback is told.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done_ns: u64,
    /// Phase length in simulated ns when known (runtime), else 0.
    pub total_ns: u64,
    pub done_bytes: u64,
    pub total_bytes: u64,
}

impl Simulator {
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
        if !off.is_multiple_of(SECTOR_BYTES) || !len.is_multiple_of(SECTOR_BYTES) || off + len > self.capacity_bytes() {
            return Err(SimError::workload(
                field,
                format!("offset {off} + length {len} must be multiples of 512 B within {} B", self.capacity_bytes()),
            ));
        }
        Ok(())
    }

    pub(super) fn snapshot(&self) -> (FtlCounters, NandCounters) {
        (self.ftl.counters, self.nand.counters)
    }

    /// The result of a phase over `span` (simulated ns) that began at `before`.
    pub(super) fn finish_phase(
        &mut self,
        name: String,
        kind: &'static str,
        span: Range<u64>,
        stats: PhaseStats,
        before: (FtlCounters, NandCounters),
        interrupted: bool,
    ) -> Result<PhaseResult> {
        let (start, duration) = (span.start, span.end - span.start);
        if stats.overflowed() {
            return Err(self.series_error(
                format!(
                    "phase '{name}': {} of simulated time in intervals of {}",
                    duration_text(duration),
                    duration_text(stats.interval_ns)
                ),
                stats.overflow_intervals(),
                "run it in shorter phases",
            ));
        }
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
            data_pattern: None,
            smart: self.smart(),
            io_log: Vec::new(),
            power,
            source: None,
            import: None,
            latency_search: None,
        })
    }

    /// Run a closed-loop workload. `progress` is called about once per
    /// interval of simulated time; returning false stops the phase early (the
    /// result is then marked interrupted and holds what finished).
    pub fn run(&mut self, w: &Workload, progress: &mut dyn FnMut(Progress) -> bool) -> Result<PhaseResult> {
        if w.paced() {
            // A job that paces itself is a submitter of its own.
            return Ok(self.run_jobs(std::slice::from_ref(w), progress)?.remove(0));
        }
        if w.offset_bytes + w.size_bytes > self.capacity_bytes() {
            return Err(SimError::workload("size", "region beyond the drive's capacity"));
        }
        let max_intervals = self.max_series_intervals();
        if let Some(r) = w.runtime_ns {
            let n = r.div_ceil(w.interval_ns.max(1));
            if n > max_intervals {
                return Err(self.series_error(
                    format!("job '{}': its runtime of {} in intervals of {}", w.name, duration_text(r), duration_text(w.interval_ns)),
                    n,
                    "lengthen the interval (log_avg_msec / --log-avg-msec), shorten the runtime",
                ));
            }
        }
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let seed = self.seed ^ self.phase_count.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut gen = IoGen::new(w, seed);
        let mut stats = PhaseStats::bounded(w.interval_ns, max_intervals);
        let end = w.runtime_ns.map(|r| start.saturating_add(r));
        let limit_bytes = w.io_limit_bytes.unwrap_or(u64::MAX);
        let limit_ios = w.number_ios.unwrap_or(u64::MAX);
        let ncq = self.cfg.host.queue_slots();
        // Device-side NCQ slots when the host queues more than the drive takes.
        let mut ncq_slots = NcqSlots::new(w.iodepth, ncq, start);
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
        let sync_every = w.fsync_every;
        let mut writes_since_sync = 0u64;
        let mut sync_due = false;
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
                let t_dev = ncq_slots.admit(t);
                self.ctl.outstanding = (heap.len() as u32 + 1).min(ncq);
                let c = self.ctl.submit(&mut self.ftl, &mut self.nand, op, off, len, t_dev, w.data_pattern)?;
                ncq_slots.release(c);
                let cmd = Command::of(op);
                busy.start(cmd, t);
                self.seq += 1;
                heap.push(Reverse(InFlight { complete_ns: c, seq: self.seq, submit_ns: t, bytes: len, cmd }));
                issued_bytes += len;
                issued_ios += 1;
                if c > max_complete {
                    max_complete = c;
                }
                if sync_every > 0 && op == Op::Write {
                    writes_since_sync += 1;
                    if writes_since_sync == sync_every {
                        writes_since_sync = 0;
                        sync_due = true;
                    }
                }
            }};
        }
        // fio `fsync=N`: after every N writes issued the job stops issuing,
        // waits for what is in flight, then sends a FLUSH CACHE and waits for
        // it (fio's async engines quiesce before a sync); the queue refills
        // when it completes. No flush once the job has issued all it will.
        macro_rules! sync {
            ($t:expr) => {{
                let t: u64 = $t;
                let c = self.ctl.sync_command(&mut self.ftl, &mut self.nand, t);
                busy.start(Command::Flush, t);
                self.seq += 1;
                heap.push(Reverse(InFlight { complete_ns: c, seq: self.seq, submit_ns: t, bytes: 0, cmd: Command::Flush }));
                sync_due = false;
                if c > max_complete {
                    max_complete = c;
                }
            }};
        }

        for _ in 0..w.iodepth {
            if issued_bytes >= limit_bytes || issued_ios >= limit_ios || sync_due {
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
            busy.end(io.cmd, t);
            if io.seq & 15 == 0 {
                self.nand.advance(t);
                self.ctl.advance(t);
            }
            match io.cmd.dir() {
                Some(dir) => stats.record(dir, io.bytes, t - io.submit_ns, t - start),
                None => stats.record_sync(t - io.submit_ns),
            }
            if t >= next_progress {
                if stats.overflowed() {
                    break;
                }
                next_progress = t + w.interval_ns;
                let p = Progress { done_ns: t - start, total_ns: w.runtime_ns.unwrap_or(0), done_bytes: issued_bytes, total_bytes };
                if !progress(p) {
                    interrupted = true;
                    break;
                }
            }
            if issued_bytes < limit_bytes && issued_ios < limit_ios {
                if sync_every == 0 {
                    issue!(t);
                } else if sync_due {
                    if heap.is_empty() {
                        sync!(t);
                    }
                } else if io.cmd == Command::Flush {
                    // The flush is done: the queue refills.
                    for _ in 0..w.iodepth {
                        if issued_bytes >= limit_bytes || issued_ios >= limit_ios || sync_due {
                            break;
                        }
                        issue!(t);
                    }
                } else {
                    issue!(t);
                }
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
            busy.end(io.cmd, phase_end.min(io.complete_ns).max(io.submit_ns));
        }
        stats.busy_time_ns = busy.total[0];
        stats.read_busy_time_ns = busy.total[1];
        stats.write_busy_time_ns = busy.total[2];
        let duration = phase_end - start;
        stats.finish(duration);
        self.now_ns = phase_end;
        self.last_io_end_ns = max_complete;
        if stats.overflowed() {
            return Err(self.series_error(
                format!(
                    "job '{}': after {} of simulated time in intervals of {}",
                    w.name,
                    duration_text(max_complete.max(phase_end) - start),
                    duration_text(w.interval_ns)
                ),
                stats.overflow_intervals(),
                "lengthen the interval (log_avg_msec / --log-avg-msec), move less data (io_size, number_ios)",
            ));
        }
        let mut r = self.finish_phase(w.name.clone(), "workload", start..start + duration, stats, before, interrupted)?;
        r.iodepth = w.iodepth;
        r.data_pattern = Some(w.data_pattern);
        Ok(r)
    }

    /// The drive sits idle for `duration_ns`; background GC may use the time.
    pub fn idle(&mut self, duration_ns: u64) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let end = start.checked_add(duration_ns).filter(|e| *e <= MAX_SIM_TIME_NS).ok_or_else(|| {
            SimError::workload(
                "idle",
                format!(
                    "{}: the drive's simulated time ({}) would pass {} (2^62 ns)",
                    duration_text(duration_ns),
                    duration_text(start),
                    duration_text(MAX_SIM_TIME_NS)
                ),
            )
        })?;
        let from = start + self.cfg.ftl.idle_gc_delay_ns;
        self.ftl.background_gc(from, end, &mut self.nand)?;
        self.now_ns = end;
        let stats = PhaseStats::bounded(duration_ns.max(1), self.max_series_intervals());
        self.finish_phase(format!("idle {}s", duration_ns as f64 / 1e9), "idle", start..start + duration_ns, stats, before, false)
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
        let mut stats = PhaseStats::bounded(1_000_000_000, self.max_series_intervals());
        let mut t = start;
        let chunk = 2u64 << 30;
        let mut o = off;
        while o < off + len {
            let l = chunk.min(off + len - o);
            let c = self.ctl.submit(&mut self.ftl, &mut self.nand, Op::Trim, o, l, t, DataPattern::Incompressible)?;
            stats.record(Dir::Trim, l, c - t, c - start);
            t = c;
            o += l;
        }
        stats.busy_time_ns = t - start;
        stats.finish(t - start);
        self.now_ns = t;
        self.last_io_end_ns = t;
        self.finish_phase("trim".into(), "trim", start..t, stats, before, false)
    }

    /// ATA secure erase: every block erased, mapping empty.
    pub fn secure_erase(&mut self) -> Result<PhaseResult> {
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns).max(self.busiest_die());
        let done = self.ftl.secure_erase(start, &mut self.nand);
        self.ctl.reset_buffer();
        self.now_ns = done;
        self.last_io_end_ns = done;
        let stats = PhaseStats::bounded(1_000_000_000, self.max_series_intervals());
        self.finish_phase("secure erase".into(), "secure_erase", start..done, stats, before, false)
    }

    /// Program partly filled units now (what a FLUSH CACHE command does).
    pub fn flush(&mut self) {
        let t = self.now_ns.max(self.last_io_end_ns);
        self.ftl.flush(t, &mut self.nand);
        self.ctl.drain_releases(&mut self.ftl);
    }

    pub(super) fn busiest_die(&self) -> u64 {
        self.nand.busy_until_ns.iter().copied().max().unwrap_or(0)
    }
}
