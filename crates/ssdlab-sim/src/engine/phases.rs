//! The phases a simulator runs, each in one call: a closed-loop workload in
//! fio's vocabulary (`run`), idle time, a TRIM, a secure erase, a flush; and
//! what every phase shares (busy time, power, the phase result).

use std::collections::VecDeque;
use std::ops::Range;

use serde_json::{json, Value};

use super::in_flight::{Command, PhaseIo};
use super::{duration_text, PhaseResult, Simulator, MAX_SIM_TIME_NS};
use crate::config::{SECTOR_BYTES, UNIT_BYTES};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::ftl::{Ftl, FtlCounters};
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

/// I/Os a job generates at a time, two batches before they issue.
const LOOK_AHEAD: usize = 8;

/// Where a closed-loop job's commands come from: its generator, read ahead
/// of issuing, its limits, the drive's queue it waits for and its
/// `fsync=N` count.
struct JobSource<'w> {
    w: &'w Workload,
    gen: IoGen,
    ahead: VecDeque<(Op, u64, u64)>,
    slots: NcqSlots,
    limit_bytes: u64,
    limit_ios: u64,
    writes_since_sync: u64,
    /// N writes issued since the last sync: the next command is a flush.
    sync_due: bool,
}

impl<'w> JobSource<'w> {
    /// Job `w`'s source, seeded `seed`, from `start_ns` on a drive whose
    /// queue holds `queue_slots` commands.
    fn new(w: &'w Workload, seed: u64, queue_slots: u32, start_ns: u64) -> JobSource<'w> {
        JobSource {
            w,
            gen: IoGen::new(w, seed),
            ahead: VecDeque::with_capacity(3 * LOOK_AHEAD),
            // Device-side NCQ slots when the host queues more than the drive takes.
            slots: NcqSlots::new(w.iodepth, queue_slots, start_ns),
            limit_bytes: w.io_limit_bytes.unwrap_or(u64::MAX),
            limit_ios: w.number_ios.unwrap_or(u64::MAX),
            writes_since_sync: 0,
            sync_due: false,
        }
    }

    #[inline]
    fn done_issuing(&self, io: &PhaseIo) -> bool {
        io.tally.issued_bytes >= self.limit_bytes || io.tally.issued_ios >= self.limit_ios
    }

    /// The next I/O. They are generated a batch at a time, two batches
    /// before they are issued: a new batch has its map entries prefetched,
    /// and the batch before it then the live bits and blocks of the data its
    /// writes replace, all at once so that the cache misses overlap.
    #[inline]
    fn next_io(&mut self, ftl: &Ftl) -> (Op, u64, u64) {
        let ahead = &mut self.ahead;
        if ahead.len() <= 2 * LOOK_AHEAD {
            for m in ahead.range(..ahead.len().saturating_sub(LOOK_AHEAD)) {
                if m.0 == Op::Write {
                    ftl.prefetch_write(m.1 / UNIT_BYTES, 2);
                }
            }
            for m in ahead.range(ahead.len().saturating_sub(LOOK_AHEAD)..) {
                if m.0 == Op::Write {
                    ftl.prefetch_write(m.1 / UNIT_BYTES, 1);
                }
            }
            for _ in 0..LOOK_AHEAD {
                let nxt = self.gen.next_io();
                ftl.prefetch_write(nxt.1 / UNIT_BYTES, 0);
                ahead.push_back(nxt);
            }
        }
        ahead.pop_front().unwrap()
    }
}

impl Simulator {
    /// The job issues its next I/O at `t`.
    #[inline]
    fn issue_next(&mut self, job: &mut JobSource<'_>, io: &mut PhaseIo, t: u64) -> Result<()> {
        let cmd = job.next_io(&self.ftl);
        let t_dev = job.slots.admit(t);
        let c = self.issue(io, cmd, t, t_dev, job.w.data_pattern)?;
        job.slots.release(c);
        if job.w.fsync_every > 0 && cmd.0 == Op::Write {
            job.writes_since_sync += 1;
            if job.writes_since_sync == job.w.fsync_every {
                job.writes_since_sync = 0;
                job.sync_due = true;
            }
        }
        Ok(())
    }

    /// The job fills its queue at `t` (at its start, and after a sync), as
    /// far as its limits and `fsync=N` let it.
    fn fill_queue(&mut self, job: &mut JobSource<'_>, io: &mut PhaseIo, t: u64) -> Result<()> {
        for _ in 0..job.w.iodepth {
            if job.done_issuing(io) || job.sync_due {
                break;
            }
            self.issue_next(job, io, t)?;
        }
        Ok(())
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

    /// Refuse a job whose runtime alone needs more than `max_intervals`
    /// intervals of series, before anything runs.
    fn check_runtime_series(&self, w: &Workload, max_intervals: u64) -> Result<()> {
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
        Ok(())
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
        self.check_runtime_series(w, max_intervals)?;
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let seed = self.seed ^ self.phase_count.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let end = w.runtime_ns.map(|r| start.saturating_add(r));
        let ncq = self.cfg.host.queue_slots();
        let total_bytes = if w.runtime_ns.is_none() { w.io_limit_bytes.unwrap_or(0) } else { 0 };
        let stats = PhaseStats::bounded(w.interval_ns, max_intervals);
        let mut io = PhaseIo::new(start, stats, ncq, w.iodepth as usize + 1, w.runtime_ns.unwrap_or(0), total_bytes);
        let mut job = JobSource::new(w, seed, ncq, start);
        self.fill_queue(&mut job, &mut io, start)?;
        while let Some(done) = self.complete_next(&mut io, end) {
            let t = done.complete_ns;
            if done.cmd == Command::Flush {
                // fio reports the latency of a job's syncs.
                io.tally.stats.record_sync(t - done.submit_ns);
            }
            if !io.report(t, progress) {
                break;
            }
            if job.done_issuing(&io) {
                continue;
            }
            if job.sync_due {
                // fio `fsync=N`: after every N writes issued the job stops
                // issuing, waits for what is in flight, then sends a FLUSH
                // CACHE and waits for it (fio's async engines quiesce before
                // a sync); the queue refills when it completes. No flush
                // once the job has issued all it will.
                if io.in_flight() == 0 {
                    let c = self.send_sync(&mut io.tally, t);
                    io.push(&mut self.seq, Command::Flush, t, c, 0);
                    job.sync_due = false;
                }
            } else if done.cmd == Command::Flush {
                self.fill_queue(&mut job, &mut io, t)?;
            } else {
                self.issue_next(&mut job, &mut io, t)?;
            }
        }
        // fio: a job with both a byte/count limit and a runtime ends at
        // whichever comes first. The runtime ended it only if I/O was still
        // in flight at the deadline; when the transfer finished first
        // (nothing left in flight) the phase ends at its last completion.
        let interrupted = io.interrupted;
        let phase_end = match end {
            Some(e) if !interrupted && io.in_flight() > 0 => e,
            _ => io.tally.last_complete_ns,
        };
        let max_complete = io.max_complete_ns;
        let stats = self.settle(io, phase_end);
        let duration = phase_end - start;
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
