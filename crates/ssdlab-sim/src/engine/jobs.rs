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
//!
//! fio's ways of shaping a job's issuing run here too: a rate paced
//! linearly or as a poisson process, flows (jobs of one `flow_id` held to
//! the ratio of their weights) and the latency-target search for the
//! deepest queue that meets a latency, each as fio 3.33 does it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::in_flight::{Command, ProgressClock};
use super::pacing::{Flow, Quiesce, Verdict};
use super::phases::Progress;
use super::submitter::{Event, EventKind, Submitter};
use super::{PhaseResult, Simulator};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::ftl::FtlCounters;
use crate::nand::NandCounters;
use crate::stats::PhaseStats;
use crate::workload::{Op, Workload};

/// The submitters of a run and what they share: the events ahead in time
/// order, the drive's queues and fio's flows.
struct Group<'w> {
    subs: Vec<Submitter<'w>>,
    heap: BinaryHeap<Reverse<Event>>,
    /// SATA: one NCQ for every submitter. NVMe: a queue pair per
    /// submitter, submitters beyond `queue_count` sharing them in turn.
    queues: Vec<NcqSlots>,
    /// Commands the drive's queues hold together.
    max_outstanding: u32,
    flows: Vec<Flow>,
    in_flight_total: u32,
    max_complete: u64,
    /// I/Os completing after their submitter's runtime: they finish in the
    /// background, as in `run`.
    late: Vec<Event>,
    max_intervals: u64,
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
        for w in ws {
            if w.offset_bytes + w.size_bytes > self.capacity_bytes() {
                return Err(SimError::workload("size", format!("job '{}': region beyond the drive's capacity", w.name)));
            }
        }
        let before = self.snapshot();
        let start = self.now_ns.max(self.last_io_end_ns);
        let mut g = self.group(ws, start);
        let round_robin = self.cfg.host.is_nvme();
        let interval = ws.iter().map(|w| w.interval_ns).min().unwrap_or(1_000_000_000);
        let total_ns = ws.iter().filter_map(|w| w.runtime_ns.map(|r| r + w.startdelay_ns)).max().unwrap_or(0);
        let total_bytes: u64 = if ws.iter().all(|w| w.runtime_ns.is_none()) { ws.iter().filter_map(|w| w.io_limit_bytes).sum() } else { 0 };
        let mut clock = ProgressClock::new(start, interval, total_ns, total_bytes);
        let mut interrupted = false;
        let mut ready: Vec<usize> = Vec::with_capacity(ws.len());
        while let Some(Reverse(ev)) = g.heap.pop() {
            let t = ev.time_ns;
            let j = ev.job as usize;
            ready.clear();
            if g.take(ev) {
                ready.push(j);
            }
            if round_robin {
                // Every queue with a command at this instant is served in
                // turn, one command each (NVMe round-robin arbitration,
                // burst 1).
                while g.heap.peek().is_some_and(|e| e.0.time_ns == t) {
                    let Some(Reverse(e)) = g.heap.pop() else { break };
                    if g.take(e) && !ready.contains(&(e.job as usize)) {
                        ready.push(e.job as usize);
                    }
                }
            }
            if ready.is_empty() {
                continue;
            }
            if clock.due(t) {
                if g.subs.iter().any(|s| s.io.stats.overflowed()) {
                    break;
                }
                let done_bytes = g.subs.iter().map(|s| s.io.issued_bytes).sum();
                if !clock.tell(t, done_bytes, progress) {
                    interrupted = true;
                    break;
                }
            }
            for &k in &ready {
                g.check_latency(k, t);
            }
            g.issue_ready(self, &ready, round_robin, t)?;
            if !g.flows.is_empty() {
                for k in 0..g.subs.len() {
                    g.leave_flow(&mut self.seq, k, t);
                }
            }
            if (ev.seq & 15) == 0 {
                self.nand.advance(t);
                self.ctl.advance(t);
            }
        }
        self.finish_group(g, start, before, interrupted)
    }

    /// The submitters of `ws` from `start` (each after its start delay),
    /// each with a wake-up booked at its start.
    fn group<'w>(&mut self, ws: &'w [Workload], start: u64) -> Group<'w> {
        let max_intervals = self.max_series_intervals();
        let seed = self.seed ^ self.phase_count.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let host = &self.cfg.host;
        let nq = (host.queues() as usize).min(ws.len());
        let per_queue = host.queue_slots();
        let max_outstanding = (nq as u64 * per_queue as u64).min(u32::MAX as u64) as u32;
        let total_depth: u32 = ws.iter().map(|w| w.iodepth).sum();
        let queues: Vec<NcqSlots> = (0..nq)
            .map(|q| {
                let depth: u32 = ws.iter().enumerate().filter(|(i, _)| i % nq == q).map(|(_, w)| w.iodepth).sum();
                NcqSlots::new(depth, per_queue, start)
            })
            .collect();
        let job_seed = |i: usize| seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
        // fio's flows: one per flow_id among the jobs with a weight.
        let mut flow_ids: Vec<u64> = Vec::new();
        for w in ws.iter().filter(|w| w.flow_weight > 0) {
            if !flow_ids.contains(&w.flow_id) {
                flow_ids.push(w.flow_id);
            }
        }
        let flows: Vec<Flow> = flow_ids
            .iter()
            .map(|&id| Flow {
                counter: 1,
                total_weight: ws.iter().filter(|w| w.flow_weight > 0 && w.flow_id == id).map(|w| w.flow_weight as u64).sum(),
            })
            .collect();
        let subs: Vec<Submitter<'_>> = ws
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let flow = (w.flow_weight > 0).then(|| flow_ids.iter().position(|&f| f == w.flow_id).unwrap_or(0));
                Submitter::new(w, job_seed(i), start + w.startdelay_ns, max_intervals, flow)
            })
            .collect();
        let mut g = Group {
            subs,
            heap: BinaryHeap::with_capacity(total_depth as usize + ws.len()),
            queues,
            max_outstanding,
            flows,
            in_flight_total: 0,
            max_complete: start,
            late: Vec::new(),
            max_intervals,
        };
        for i in 0..g.subs.len() {
            let s0 = g.subs[i].io.start_ns;
            g.book(&mut self.seq, s0, i, EventKind::Wake, s0, 0);
        }
        g
    }

    /// Each submitter's result: its figures up to its end, which is its
    /// runtime when I/O was still in flight at the deadline, else its last
    /// completion (as `run`).
    fn finish_group(
        &mut self,
        g: Group<'_>,
        start: u64,
        before: (FtlCounters, NandCounters),
        interrupted: bool,
    ) -> Result<Vec<PhaseResult>> {
        let Group { subs, heap, late, max_complete, .. } = g;
        let mut settled = Vec::with_capacity(subs.len());
        for (i, s) in subs.into_iter().enumerate() {
            let pending: Vec<Event> =
                heap.iter().map(|r| r.0).chain(late.iter().copied()).filter(|e| e.job as usize == i && e.kind != EventKind::Wake).collect();
            let end = match s.end_ns {
                Some(e) if !interrupted && (s.timed_out || !pending.is_empty()) => e,
                _ => s.io.last_complete_ns,
            };
            // Its figures never end before they start (a completion or the
            // runtime comes after the start).
            let span = s.io.start_ns..end.max(s.io.start_ns);
            let search = s.latency.as_ref().map(|l| (l.qd, s.latency_fatal));
            let stats = s.io.settle(pending.iter().map(|e| (e.command(), e.submit_ns, e.time_ns)), span.end);
            settled.push((s.w, search, span, stats));
        }
        let phase_end = settled.iter().map(|x| x.2.end).max().unwrap_or(start);
        self.now_ns = phase_end;
        self.last_io_end_ns = max_complete;
        let mut out = Vec::with_capacity(settled.len());
        for (w, search, span, stats) in settled {
            let mut r = self.finish_phase(w.name.clone(), "workload", span, stats, before, interrupted)?;
            r.iodepth = w.iodepth;
            r.latency_search = search;
            r.data_pattern = Some(w.data_pattern);
            out.push(r);
        }
        Ok(out)
    }
}

impl Group<'_> {
    /// An event of submitter `job` at `time_ns`, in order after those booked before it.
    fn book(&mut self, seq: &mut u64, time_ns: u64, job: usize, kind: EventKind, submit_ns: u64, bytes: u64) {
        *seq += 1;
        self.heap.push(Reverse(Event { time_ns, seq: *seq, job: job as u32, kind, submit_ns, bytes }));
    }

    /// One event's bookkeeping: the submitter woke, or one of its I/Os
    /// completed. False for a completion past its runtime (left to finish
    /// in the background).
    fn take(&mut self, ev: Event) -> bool {
        let t = ev.time_ns;
        let j = ev.job as usize;
        if ev.kind == EventKind::Wake {
            self.subs[j].wake_pending = false;
            return true;
        }
        self.in_flight_total -= 1;
        let s = &mut self.subs[j];
        if s.end_ns.is_some_and(|e| t > e) {
            s.io.leave();
            s.timed_out = true;
            self.late.push(ev);
            return false;
        }
        let cmd = ev.command();
        s.io.complete(cmd, ev.submit_ns, ev.bytes, t);
        if cmd == Command::Flush {
            s.sync_in_flight = false;
            s.io.stats.record_sync(t - ev.submit_ns);
        } else if let Some(l) = s.latency.as_mut() {
            // fio judges each I/O's total latency against the target.
            if t - ev.submit_ns > s.w.latency_target_ns {
                if s.w.latency_percentile >= 100.0 {
                    if l.ramp_down() {
                        if s.quiesce != Some(Quiesce::FinalRun) {
                            s.quiesce = Some(Quiesce::RampDown);
                        }
                    } else {
                        // fio fails the job: the target missed at depth 1.
                        s.stopped = true;
                        s.latency_fatal = true;
                    }
                } else {
                    l.failed += 1;
                }
            }
            l.completed += 1;
        }
        true
    }

    /// The members of flow `f` waiting for another to issue try again at `t`.
    fn wake_flow(&mut self, seq: &mut u64, f: usize, t: u64) {
        for k in 0..self.subs.len() {
            let o = &mut self.subs[k];
            if o.flow == Some(f) && o.flow_waiting {
                o.flow_waiting = false;
                self.book(seq, t, k, EventKind::Wake, t, 0);
            }
        }
    }

    /// A submitter that has finished leaves its flow (fio's flow_exit_job):
    /// its count and weight no longer hold the others back.
    fn leave_flow(&mut self, seq: &mut u64, j: usize, t: u64) {
        let s = &mut self.subs[j];
        if let Some(f) = s.flow.filter(|_| !s.flow_left && (s.timed_out || (s.done_issuing() && s.io.in_flight == 0))) {
            s.flow_left = true;
            self.flows[f].counter -= s.flow_count;
            self.flows[f].total_weight -= s.w.flow_weight as u64;
            self.wake_flow(seq, f, t);
        }
    }

    /// fio's check of a latency-target window once it has lasted
    /// latency_window (lat_target_check): the share of the window's I/Os
    /// within the target decides whether the depth goes up or down.
    fn check_latency(&mut self, j: usize, t: u64) {
        let s = &mut self.subs[j];
        let (w, quiet) = (s.w, s.quiesce.is_none() && !s.stopped);
        if let Some(l) = s.latency.as_mut().filter(|l| quiet && t.saturating_sub(l.window_start_ns) >= w.latency_window_ns) {
            let ios = l.completed - l.window_first;
            // No I/O in the window fails it, as fio's 0/0 does.
            let met = ios > 0 && (ios - l.failed) as f64 / ios as f64 * 100.0 >= w.latency_percentile;
            if met {
                match l.success(w.iodepth, w.latency_run) {
                    Verdict::Continue => l.new_window(t),
                    Verdict::FinalRun => s.quiesce = Some(Quiesce::FinalRun),
                    Verdict::Done => s.stopped = true,
                }
            } else if l.ramp_down() {
                s.quiesce = Some(Quiesce::RampDown);
            }
        }
    }

    /// Submitter `j`, drained, does what it waited for at `t`.
    fn drained(&mut self, j: usize, t: u64) {
        let max_intervals = self.max_intervals;
        let s = &mut self.subs[j];
        let Some(q) = s.quiesce.filter(|_| s.io.in_flight == 0) else { return };
        s.quiesce = None;
        match q {
            Quiesce::Flow => s.flow_until_ns = t + s.w.flow_sleep_ns,
            Quiesce::RampDown => {
                if let Some(l) = s.latency.as_mut() {
                    l.new_window(t);
                }
            }
            Quiesce::FinalRun => {
                // fio resets the job's statistics, its clock and its rate
                // schedule for the run at the depth it found (not the bytes
                // it may still issue).
                s.io.restart(t, PhaseStats::bounded(s.w.interval_ns, max_intervals));
                s.end_ns = s.w.runtime_ns.map(|r| t.saturating_add(r));
                s.rate_base = (s.io.issued_bytes, s.io.issued_ios);
                if let Some(p) = s.poisson.as_mut() {
                    p.due_ns = 0;
                }
                if let Some(l) = s.latency.as_mut() {
                    l.new_window(t);
                }
            }
        }
    }

    /// The submitters `ready` at `t` issue what they may: on NVMe one
    /// command per queue in turn until none can (round robin, burst 1); on
    /// SATA the one submitter as many as it can.
    fn issue_ready(&mut self, sim: &mut Simulator, ready: &[usize], round_robin: bool, t: u64) -> Result<()> {
        if round_robin {
            loop {
                let mut any = false;
                for &k in ready {
                    any |= self.issue_one(sim, k, t)?;
                }
                if !any {
                    return Ok(());
                }
            }
        }
        while self.issue_one(sim, ready[0], t)? {}
        Ok(())
    }

    /// Submitter `j` issues one command at `t` if its depth, limits and
    /// pacing allow; false when it cannot (it has booked its wake-up).
    fn issue_one(&mut self, sim: &mut Simulator, j: usize, t: u64) -> Result<bool> {
        self.drained(j, t);
        let s = &mut self.subs[j];
        if s.quiesce.is_some() || s.io.in_flight >= s.depth() || s.done_issuing() || s.sync_in_flight {
            return Ok(false);
        }
        if s.end_ns.is_some_and(|e| t >= e) {
            s.timed_out = true;
            return Ok(false);
        }
        if s.sync_due {
            if s.io.in_flight == 0 {
                let c = sim.send_sync(&mut s.io, t);
                s.sync_due = false;
                s.sync_in_flight = true;
                self.in_flight_total += 1;
                self.book(&mut sim.seq, c, j, EventKind::Done(Command::Flush), t, 0);
                self.max_complete = self.max_complete.max(c);
            }
            return Ok(false);
        }
        let allowed = s.allowed_ns();
        if allowed > t {
            if !s.wake_pending {
                s.wake_pending = true;
                self.book(&mut sim.seq, allowed, j, EventKind::Wake, allowed, 0);
            }
            return Ok(false);
        }
        let flows = &self.flows;
        if s.flow.is_some_and(|f| {
            // fio holds a job back while its share of the flow's I/Os is
            // above its share of the weights.
            s.flow_count as u128 * flows[f].total_weight as u128 > s.w.flow_weight as u128 * flows[f].counter as u128
        }) {
            if s.w.flow_sleep_ns == 0 {
                s.flow_waiting = true;
            } else if s.io.in_flight > 0 {
                s.quiesce = Some(Quiesce::Flow);
            } else {
                s.flow_until_ns = t + s.w.flow_sleep_ns;
                if !s.wake_pending {
                    s.wake_pending = true;
                    let until = s.flow_until_ns;
                    self.book(&mut sim.seq, until, j, EventKind::Wake, until, 0);
                }
            }
            return Ok(false);
        }
        self.send(sim, j, t)?;
        Ok(true)
    }

    /// Submitter `j` sends its next I/O at `t`.
    fn send(&mut self, sim: &mut Simulator, j: usize, t: u64) -> Result<()> {
        let s = &mut self.subs[j];
        let (op, off, len) = s.gen.next_io();
        let nq = self.queues.len();
        let q = &mut self.queues[j % nq];
        let t_dev = q.admit(t);
        let outstanding = (self.in_flight_total + 1).min(self.max_outstanding);
        let c = sim.send_io(&mut s.io, (op, off, len), outstanding, t, t_dev, s.w.data_pattern)?;
        q.release(c);
        self.in_flight_total += 1;
        if let Some(p) = s.poisson.as_mut() {
            p.advance();
        }
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
        let flow = s.flow;
        self.book(&mut sim.seq, c, j, EventKind::Done(Command::of(op)), t, len);
        self.max_complete = self.max_complete.max(c);
        if let Some(f) = flow {
            self.subs[j].flow_count += 1;
            self.flows[f].counter += 1;
            self.wake_flow(&mut sim.seq, f, t);
        }
        Ok(())
    }
}
