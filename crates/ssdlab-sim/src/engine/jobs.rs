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

use super::in_flight::{Busy, Command};
use super::pacing::{Flow, LatencySearch, Poisson, Quiesce, Verdict};
use super::phases::Progress;
use super::submitter::{Event, EventKind, Submitter};
use super::{PhaseResult, Simulator};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::stats::PhaseStats;
use crate::workload::{IoGen, Op, Workload};

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
        let job_seed = |i: usize| seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
        // fio's flows: one per flow_id among the jobs with a weight.
        let mut flow_ids: Vec<u64> = Vec::new();
        for w in ws.iter().filter(|w| w.flow_weight > 0) {
            if !flow_ids.contains(&w.flow_id) {
                flow_ids.push(w.flow_id);
            }
        }
        let mut flows: Vec<Flow> = flow_ids
            .iter()
            .map(|&id| Flow {
                counter: 1,
                total_weight: ws.iter().filter(|w| w.flow_weight > 0 && w.flow_id == id).map(|w| w.flow_weight as u64).sum(),
            })
            .collect();
        let mut subs: Vec<Submitter<'_>> = ws
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let s0 = start + w.startdelay_ns;
                Submitter {
                    w,
                    gen: IoGen::new(w, job_seed(i)),
                    stats: PhaseStats::bounded(w.interval_ns, max_intervals),
                    busy: Busy::default(),
                    start_ns: s0,
                    end_ns: w.runtime_ns.map(|r| s0.saturating_add(r)),
                    limit_bytes: w.io_limit_bytes.unwrap_or(u64::MAX),
                    limit_ios: w.number_ios.unwrap_or(u64::MAX),
                    issued_bytes: 0,
                    issued_ios: 0,
                    rate_base: (0, 0),
                    in_flight: 0,
                    last_complete_ns: s0,
                    timed_out: false,
                    wake_pending: true,
                    think_until_ns: s0,
                    since_think: 0,
                    writes_since_sync: 0,
                    sync_due: false,
                    sync_in_flight: false,
                    poisson: Poisson::new(w, job_seed(i)),
                    flow: (w.flow_weight > 0).then(|| flow_ids.iter().position(|&f| f == w.flow_id).unwrap_or(0)),
                    flow_count: 0,
                    flow_left: false,
                    flow_waiting: false,
                    flow_until_ns: s0,
                    quiesce: None,
                    latency: (w.latency_target_ns > 0).then(|| LatencySearch::new(w.iodepth, s0)),
                    stopped: false,
                    latency_fatal: false,
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
                            Some(dir) => {
                                s.stats.record(dir, ev.bytes, t - ev.submit_ns, t - s.start_ns);
                                if let Some(l) = s.latency.as_mut() {
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
                            }
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
        // The members of flow `f` waiting for another to issue try again at `t`.
        macro_rules! wake_flow {
            ($f:expr, $t:expr) => {{
                let f: usize = $f;
                let t: u64 = $t;
                for (k, o) in subs.iter_mut().enumerate() {
                    if o.flow == Some(f) && o.flow_waiting {
                        o.flow_waiting = false;
                        self.seq += 1;
                        heap.push(Reverse(Event {
                            time_ns: t,
                            seq: self.seq,
                            job: k as u32,
                            kind: EventKind::Wake,
                            submit_ns: t,
                            bytes: 0,
                        }));
                    }
                }
            }};
        }
        // A submitter that has finished leaves its flow (fio's flow_exit_job):
        // its count and weight no longer hold the others back.
        macro_rules! leave_flow {
            ($j:expr, $t:expr) => {{
                let j: usize = $j;
                let s = &mut subs[j];
                if let Some(f) = s.flow.filter(|_| !s.flow_left && (s.timed_out || (s.done_issuing() && s.in_flight == 0))) {
                    s.flow_left = true;
                    flows[f].counter -= s.flow_count;
                    flows[f].total_weight -= s.w.flow_weight as u64;
                    wake_flow!(f, $t);
                }
            }};
        }
        // fio's check of a latency-target window once it has lasted
        // latency_window (lat_target_check): the share of the window's I/Os
        // within the target decides whether the depth goes up or down.
        macro_rules! check_latency {
            ($j:expr, $t:expr) => {{
                let s = &mut subs[$j];
                let t: u64 = $t;
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
            }};
        }
        // Submitter `j` issues one command at `t` if its depth, limits and
        // pacing allow; false when it cannot (it has booked its wake-up).
        macro_rules! issue_one {
            ($j:expr, $t:expr) => {{
                let j: usize = $j;
                let t: u64 = $t;
                let s = &mut subs[j];
                if let Some(q) = s.quiesce.filter(|_| s.in_flight == 0) {
                    // Drained: what the submitter waited for happens now.
                    s.quiesce = None;
                    match q {
                        Quiesce::Flow => s.flow_until_ns = t + s.w.flow_sleep_ns,
                        Quiesce::RampDown => {
                            if let Some(l) = s.latency.as_mut() {
                                l.new_window(t);
                            }
                        }
                        Quiesce::FinalRun => {
                            // fio resets the job's statistics, its clock and
                            // its rate schedule for the run at the depth it
                            // found (not the bytes it may still issue).
                            s.stats = PhaseStats::bounded(s.w.interval_ns, max_intervals);
                            s.busy = Busy::default();
                            s.start_ns = t;
                            s.end_ns = s.w.runtime_ns.map(|r| t.saturating_add(r));
                            s.last_complete_ns = t;
                            s.rate_base = (s.issued_bytes, s.issued_ios);
                            if let Some(p) = s.poisson.as_mut() {
                                p.due_ns = 0;
                            }
                            if let Some(l) = s.latency.as_mut() {
                                l.new_window(t);
                            }
                        }
                    }
                }
                if s.quiesce.is_some() || s.in_flight >= s.depth() || s.done_issuing() || s.sync_in_flight {
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
                    } else if s.flow.is_some_and(|f| {
                        // fio holds a job back while its share of the flow's
                        // I/Os is above its share of the weights.
                        s.flow_count as u128 * flows[f].total_weight as u128 > s.w.flow_weight as u128 * flows[f].counter as u128
                    }) {
                        if s.w.flow_sleep_ns == 0 {
                            s.flow_waiting = true;
                        } else if s.in_flight > 0 {
                            s.quiesce = Some(Quiesce::Flow);
                        } else {
                            s.flow_until_ns = t + s.w.flow_sleep_ns;
                            if !s.wake_pending {
                                s.wake_pending = true;
                                self.seq += 1;
                                heap.push(Reverse(Event {
                                    time_ns: s.flow_until_ns,
                                    seq: self.seq,
                                    job: j as u32,
                                    kind: EventKind::Wake,
                                    submit_ns: s.flow_until_ns,
                                    bytes: 0,
                                }));
                            }
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
                        if let Some(p) = s.poisson.as_mut() {
                            p.advance();
                        }
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
                        if let Some(f) = s.flow {
                            s.flow_count += 1;
                            flows[f].counter += 1;
                            wake_flow!(f, t);
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
            for &k in &ready {
                check_latency!(k, t);
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
            if !flows.is_empty() {
                for k in 0..subs.len() {
                    leave_flow!(k, t);
                }
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
            s.busy.write_to(&mut stats);
            stats.finish(end - s.start_ns);
            let mut r = self.finish_phase(s.w.name.clone(), "workload", s.start_ns..end, stats, before, interrupted)?;
            r.iodepth = s.w.iodepth;
            r.latency_search = s.latency.as_ref().map(|l| (l.qd, s.latency_fatal));
            r.data_pattern = Some(s.w.data_pattern);
            out.push(r);
        }
        Ok(out)
    }
}
