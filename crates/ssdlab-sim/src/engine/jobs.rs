//! Several submitters on one drive: fio's jobs that run at the same time.
//!
//! Each workload is a submitter with its own generator, queue depth, limits,
//! rate, think time and start delay, all sharing the drive's controller, FTL
//! and NAND. A submitter issues when it starts, when one of its I/Os completes
//! and when its pacing (rate, think time) allows; events are taken in time
//! order `(time_ns, seq)`, so every command reaches the drive in the order it
//! was issued. The drive's NCQ tags are one pool shared by all submitters:
//! a command the host issues while every tag is taken waits for the first tag
//! to free, first come first served across submitters (no submitter has a
//! reserved share), which is what a SATA host port does with its 32 tags.
//! On NVMe each submitter has its own submission/completion queue pair
//! (fio's jobs and `numjobs` clones each open their own, as Linux gives each
//! CPU one), holding at most `queue_depth - 1` commands; submitters beyond
//! `queue_count` share the queues in turn (job i on queue i mod
//! queue_count). The controller takes commands from the queues with NVMe's
//! default arbitration, round robin with a burst of one: commands are taken
//! in the order they arrive, and those arriving at the same instant (jobs
//! filling their queues at the start, or after a flush) one queue at a time
//! in turn.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::in_flight::{Busy, Command};
use super::phases::Progress;
use super::{PhaseResult, Simulator};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::stats::PhaseStats;
use crate::workload::{IoGen, Op, Workload};

/// What an event is: a command completing, or a submitter waking up (its
/// pacing allows it to issue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    Done(Command),
    Wake,
}

/// An event: an I/O or flush completing, or a submitter waking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time_ns: u64,
    seq: u64,
    job: u32,
    kind: EventKind,
    submit_ns: u64,
    bytes: u64,
}

impl Event {
    /// The command a completion stands for (a wake-up is never in flight).
    fn command(&self) -> Command {
        match self.kind {
            EventKind::Done(cmd) => cmd,
            EventKind::Wake => unreachable!("a wake-up is not a command in flight"),
        }
    }
}

/// One submitter's state.
struct Submitter<'w> {
    w: &'w Workload,
    gen: IoGen,
    stats: PhaseStats,
    busy: Busy,
    start_ns: u64,
    end_ns: Option<u64>,
    limit_bytes: u64,
    limit_ios: u64,
    issued_bytes: u64,
    issued_ios: u64,
    in_flight: u32,
    last_complete_ns: u64,
    /// Stopped by its runtime (I/O in flight past it is left to finish).
    timed_out: bool,
    wake_pending: bool,
    /// When think time lets it issue again.
    think_until_ns: u64,
    since_think: u64,
    writes_since_sync: u64,
    sync_due: bool,
    sync_in_flight: bool,
}

impl Submitter<'_> {
    fn done_issuing(&self) -> bool {
        self.timed_out || self.issued_bytes >= self.limit_bytes || self.issued_ios >= self.limit_ios
    }

    /// The earliest time pacing allows the next I/O (fio's linear rate).
    fn allowed_ns(&self) -> u64 {
        let w = self.w;
        let mut t = self.think_until_ns;
        if w.rate_bytes_per_s > 0 {
            let due = (self.issued_bytes as u128 * 1_000_000_000 / w.rate_bytes_per_s as u128) as u64;
            t = t.max(self.start_ns + due);
        }
        if w.rate_iops > 0 {
            let due = (self.issued_ios as u128 * 1_000_000_000 / w.rate_iops as u128) as u64;
            t = t.max(self.start_ns + due);
        }
        t
    }
}

impl Simulator {
    /// Run closed-loop workloads at the same time, one submitter each (see
    /// the module doc), and return one result per workload in order. Every
    /// result carries the drive's activity (FTL, NAND, SMART) of the whole
    /// group; the I/O figures and series are the submitter's own.
    pub fn run_jobs(&mut self, ws: &[Workload], progress: &mut dyn FnMut(Progress) -> bool) -> Result<Vec<PhaseResult>> {
        if ws.is_empty() {
            return Err(SimError::workload("jobs", "no job to run"));
        }
        if ws.len() > u32::MAX as usize {
            return Err(SimError::workload("jobs", "too many jobs"));
        }
        let max_intervals = self.max_series_intervals();
        for w in ws {
            if w.offset_bytes + w.size_bytes > self.capacity_bytes() {
                return Err(SimError::workload("size", format!("job '{}': region beyond the drive's capacity", w.name)));
            }
        }
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let seed = self.seed ^ self.phase_count.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        // SATA: one NCQ for every submitter. NVMe: a queue pair per
        // submitter, submitters beyond `queue_count` sharing them in turn.
        let host = &self.cfg.host;
        let nq = (host.queues() as usize).min(ws.len());
        let per_queue = host.queue_slots();
        let max_outstanding = (nq as u64 * per_queue as u64).min(u32::MAX as u64) as u32;
        let round_robin = host.is_nvme();
        let total_depth: u32 = ws.iter().map(|w| w.iodepth).sum();
        let mut queues: Vec<NcqSlots> = (0..nq)
            .map(|q| {
                let depth: u32 = ws.iter().enumerate().filter(|(i, _)| i % nq == q).map(|(_, w)| w.iodepth).sum();
                NcqSlots::new(depth, per_queue, start)
            })
            .collect();
        let mut subs: Vec<Submitter<'_>> = ws
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let s0 = start + w.startdelay_ns;
                Submitter {
                    w,
                    gen: IoGen::new(w, seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03)),
                    stats: PhaseStats::bounded(w.interval_ns, max_intervals),
                    busy: Busy::default(),
                    start_ns: s0,
                    end_ns: w.runtime_ns.map(|r| s0.saturating_add(r)),
                    limit_bytes: w.io_limit_bytes.unwrap_or(u64::MAX),
                    limit_ios: w.number_ios.unwrap_or(u64::MAX),
                    issued_bytes: 0,
                    issued_ios: 0,
                    in_flight: 0,
                    last_complete_ns: s0,
                    timed_out: false,
                    wake_pending: true,
                    think_until_ns: s0,
                    since_think: 0,
                    writes_since_sync: 0,
                    sync_due: false,
                    sync_in_flight: false,
                }
            })
            .collect();
        let mut heap: BinaryHeap<Reverse<Event>> = BinaryHeap::with_capacity(total_depth as usize + ws.len());
        for (i, s) in subs.iter().enumerate() {
            self.seq += 1;
            heap.push(Reverse(Event {
                time_ns: s.start_ns,
                seq: self.seq,
                job: i as u32,
                kind: EventKind::Wake,
                submit_ns: s.start_ns,
                bytes: 0,
            }));
        }
        let interval = ws.iter().map(|w| w.interval_ns).min().unwrap_or(1_000_000_000);
        let total_ns = ws.iter().filter_map(|w| w.runtime_ns.map(|r| r + w.startdelay_ns)).max().unwrap_or(0);
        let total_bytes: u64 = if ws.iter().all(|w| w.runtime_ns.is_none()) { ws.iter().filter_map(|w| w.io_limit_bytes).sum() } else { 0 };
        let mut next_progress = start + interval;
        let mut interrupted = false;
        let mut max_complete = start;
        let mut in_flight_total: u32 = 0;
        // I/Os completing after their submitter's runtime: they finish in the
        // background, as in `run`.
        let mut late: Vec<Event> = Vec::new();

        // One event's bookkeeping: the submitter woke, or one of its I/Os
        // completed. Returns false for a completion past its runtime (left
        // to finish in the background).
        macro_rules! take {
            ($ev:expr) => {{
                let ev: Event = $ev;
                let t = ev.time_ns;
                let j = ev.job as usize;
                if ev.kind == EventKind::Wake {
                    subs[j].wake_pending = false;
                    true
                } else {
                    in_flight_total -= 1;
                    let s = &mut subs[j];
                    s.in_flight -= 1;
                    if s.end_ns.is_some_and(|e| t > e) {
                        s.timed_out = true;
                        late.push(ev);
                        false
                    } else {
                        s.last_complete_ns = t;
                        let cmd = ev.command();
                        s.busy.end(cmd, t);
                        match cmd.dir() {
                            Some(dir) => s.stats.record(dir, ev.bytes, t - ev.submit_ns, t - s.start_ns),
                            None => {
                                s.sync_in_flight = false;
                                s.stats.record_sync(t - ev.submit_ns);
                            }
                        }
                        true
                    }
                }
            }};
        }
        // Submitter `j` issues one command at `t` if its depth, limits and
        // pacing allow; false when it cannot (it has booked its wake-up).
        macro_rules! issue_one {
            ($j:expr, $t:expr) => {{
                let j: usize = $j;
                let t: u64 = $t;
                let s = &mut subs[j];
                if s.in_flight >= s.w.iodepth || s.done_issuing() || s.sync_in_flight {
                    false
                } else if s.end_ns.is_some_and(|e| t >= e) {
                    s.timed_out = true;
                    false
                } else if s.sync_due {
                    if s.in_flight == 0 {
                        let c = self.ctl.sync_command(&mut self.ftl, &mut self.nand, t);
                        s.busy.start(Command::Flush, t);
                        s.sync_due = false;
                        s.sync_in_flight = true;
                        s.in_flight += 1;
                        in_flight_total += 1;
                        self.seq += 1;
                        heap.push(Reverse(Event {
                            time_ns: c,
                            seq: self.seq,
                            job: j as u32,
                            kind: EventKind::Done(Command::Flush),
                            submit_ns: t,
                            bytes: 0,
                        }));
                        max_complete = max_complete.max(c);
                    }
                    false
                } else {
                    let allowed = s.allowed_ns();
                    if allowed > t {
                        if !s.wake_pending {
                            s.wake_pending = true;
                            self.seq += 1;
                            heap.push(Reverse(Event {
                                time_ns: allowed,
                                seq: self.seq,
                                job: j as u32,
                                kind: EventKind::Wake,
                                submit_ns: allowed,
                                bytes: 0,
                            }));
                        }
                        false
                    } else {
                        let (op, off, len) = s.gen.next_io();
                        let q = &mut queues[j % nq];
                        let t_dev = q.admit(t);
                        self.ctl.outstanding = (in_flight_total + 1).min(max_outstanding);
                        let c = self.ctl.submit(&mut self.ftl, &mut self.nand, op, off, len, t_dev, s.w.data_pattern)?;
                        q.release(c);
                        let cmd = Command::of(op);
                        s.busy.start(cmd, t);
                        s.in_flight += 1;
                        in_flight_total += 1;
                        s.issued_bytes += len;
                        s.issued_ios += 1;
                        self.seq += 1;
                        heap.push(Reverse(Event {
                            time_ns: c,
                            seq: self.seq,
                            job: j as u32,
                            kind: EventKind::Done(cmd),
                            submit_ns: t,
                            bytes: len,
                        }));
                        max_complete = max_complete.max(c);
                        if s.w.fsync_every > 0 && op == Op::Write {
                            s.writes_since_sync += 1;
                            if s.writes_since_sync == s.w.fsync_every {
                                s.writes_since_sync = 0;
                                s.sync_due = !s.done_issuing();
                            }
                        }
                        if s.w.thinktime_ns > 0 {
                            s.since_think += 1;
                            if s.since_think >= s.w.thinktime_blocks {
                                s.since_think = 0;
                                s.think_until_ns = t + s.w.thinktime_ns;
                            }
                        }
                        true
                    }
                }
            }};
        }

        let mut ready: Vec<usize> = Vec::with_capacity(ws.len());
        while let Some(Reverse(ev)) = heap.pop() {
            let t = ev.time_ns;
            let j = ev.job as usize;
            ready.clear();
            if take!(ev) {
                ready.push(j);
            }
            if round_robin {
                // Every queue with a command at this instant is served in
                // turn, one command each (NVMe round-robin arbitration,
                // burst 1).
                while heap.peek().is_some_and(|e| e.0.time_ns == t) {
                    let Some(Reverse(e)) = heap.pop() else { break };
                    if take!(e) && !ready.contains(&(e.job as usize)) {
                        ready.push(e.job as usize);
                    }
                }
            }
            if ready.is_empty() {
                continue;
            }
            if t >= next_progress {
                if subs.iter().any(|s| s.stats.overflowed()) {
                    break;
                }
                next_progress = t + interval;
                let done_bytes = subs.iter().map(|s| s.issued_bytes).sum();
                if !progress(Progress { done_ns: t - start, total_ns, done_bytes, total_bytes }) {
                    interrupted = true;
                    break;
                }
            }
            if round_robin {
                loop {
                    let mut any = false;
                    for &k in &ready {
                        any |= issue_one!(k, t);
                    }
                    if !any {
                        break;
                    }
                }
            } else {
                while issue_one!(j, t) {}
            }
            if (ev.seq & 15) == 0 {
                self.nand.advance(t);
                self.ctl.advance(t);
            }
        }

        // Each submitter's end: its runtime when I/O was still in flight at
        // the deadline, else its last completion (as `run`).
        let mut ends = Vec::with_capacity(subs.len());
        for (i, s) in subs.iter_mut().enumerate() {
            let pending: Vec<Event> =
                heap.iter().map(|r| r.0).chain(late.iter().copied()).filter(|e| e.job as usize == i && e.kind != EventKind::Wake).collect();
            let end = match s.end_ns {
                Some(e) if !interrupted && (s.timed_out || !pending.is_empty()) => e,
                _ => s.last_complete_ns,
            };
            for e in &pending {
                s.busy.end(e.command(), end.min(e.time_ns).max(e.submit_ns));
            }
            ends.push(end.max(s.start_ns));
        }
        let phase_end = ends.iter().copied().max().unwrap_or(start);
        self.now_ns = phase_end;
        self.last_io_end_ns = max_complete;
        let mut out = Vec::with_capacity(subs.len());
        for (s, end) in subs.into_iter().zip(ends) {
            let mut stats = s.stats;
            stats.busy_time_ns = s.busy.total[0];
            stats.read_busy_time_ns = s.busy.total[1];
            stats.write_busy_time_ns = s.busy.total[2];
            stats.finish(end - s.start_ns);
            let mut r = self.finish_phase(s.w.name.clone(), "workload", s.start_ns..end, stats, before, interrupted)?;
            r.iodepth = s.w.iodepth;
            r.data_pattern = Some(s.w.data_pattern);
            out.push(r);
        }
        Ok(out)
    }
}
