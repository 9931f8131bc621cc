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
use super::phases::Progress;
use super::{PhaseResult, Simulator};
use crate::controller::NcqSlots;
use crate::error::{Result, SimError};
use crate::rng::Rng;
use crate::stats::PhaseStats;
use crate::workload::{IoGen, Op, Workload};

/// `-ln(u)` for `u` in (0, 1] from IEEE basic operations only (exact
/// exponent split, then the atanh series of the mantissa), so that the same
/// seed gives the same gaps on every machine, unlike the platform's `ln`.
fn neg_ln(u: f64) -> f64 {
    let bits = u.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let (mut term, mut sum, mut k) = (s, 0.0, 1.0);
    // s <= 1/3: 30 terms are far below one ulp.
    for _ in 0..30 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    -(e as f64 * std::f64::consts::LN_2 + 2.0 * sum)
}

/// fio's poisson rate process: the next I/O is due an exponential gap after
/// the last one's due time, its mean the rate's interval in whole us (fio's
/// `1000000 / iops`, iops from `rate` over the smallest block size), the
/// gap truncated to whole us as fio's does.
struct Poisson {
    rng: Rng,
    mean_us: u64,
    due_ns: u64,
}

impl Poisson {
    fn new(w: &Workload, seed: u64) -> Option<Poisson> {
        if !w.rate_poisson {
            return None;
        }
        let min_bs = w.sizes.iter().chain(&w.write_sizes).map(|x| x.0).min().unwrap_or(4096);
        let iops = if w.rate_bytes_per_s > 0 { w.rate_bytes_per_s / min_bs } else { w.rate_iops };
        Some(Poisson { rng: Rng::fork(w.randseed.unwrap_or(seed), "poisson-rate"), mean_us: 1_000_000 / iops.max(1), due_ns: 0 })
    }

    fn advance(&mut self) {
        let u = ((self.rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        let gap_us = (self.mean_us as f64 * neg_ln(u)) as u64;
        self.due_ns = self.due_ns.saturating_add(gap_us.saturating_mul(1000));
    }
}

/// A flow of fio's token-based balancing: every member's I/Os issued, plus
/// one (fio's counter starts at 1), and the weights of the members still
/// running.
struct Flow {
    counter: u64,
    total_weight: u64,
}

/// Why a submitter waits for its in-flight I/O to drain (fio's
/// `io_u_quiesce`) before going on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quiesce {
    /// Held back by its flow, with `flow_sleep`: drain, then sleep.
    Flow,
    /// The latency search lowered the depth: drain, then a new window.
    RampDown,
    /// The latency search found its depth: drain, reset the statistics,
    /// then one more window at that depth.
    FinalRun,
}

/// fio's latency-target search (`lat_target_*` in fio's io_u.c): the depth
/// in use, the bounds of the bisection and the current window.
struct LatencySearch {
    qd: u32,
    high: u32,
    low: u32,
    stable: u32,
    window_start_ns: u64,
    completed: u64,
    window_first: u64,
    failed: u64,
    end_run: bool,
}

/// What a window that met the target leads to.
enum Verdict {
    /// Keep searching at the new depth.
    Continue,
    /// The depth settled: one more window at it, from fresh statistics.
    FinalRun,
    /// The final window at the settled depth met the target too: stop.
    Done,
}

impl LatencySearch {
    /// fio starts at depth 1 and may go up to `iodepth`.
    fn new(iodepth: u32, t: u64) -> LatencySearch {
        LatencySearch {
            qd: 1,
            high: iodepth,
            low: 1,
            stable: 0,
            window_start_ns: t,
            completed: 0,
            window_first: 0,
            failed: 0,
            end_run: false,
        }
    }

    fn new_window(&mut self, t: u64) {
        self.window_start_ns = t;
        self.window_first = self.completed;
        self.failed = 0;
    }

    /// A window (or, at percentile 100, one I/O) missed the target: halve
    /// towards the lowest depth that met it. False at depth 1: nothing lower.
    fn ramp_down(&mut self) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        true
    }

    /// A window met the target: double until a depth fails, then bisect
    /// (fio raises the upper bound by one after three such windows in a
    /// row one below it, so the search does not stop short of the target).
    fn success(&mut self, iodepth: u32, latency_run: bool) -> Verdict {
        let qd0 = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != iodepth { (self.qd + self.high) / 2 } else { self.qd.saturating_mul(2) };
        self.qd = self.qd.min(iodepth);
        if !latency_run && self.qd == qd0 {
            if self.end_run {
                return Verdict::Done;
            }
            self.end_run = true;
            return Verdict::FinalRun;
        }
        Verdict::Continue
    }
}

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
    /// What it had issued when its rate's schedule began (fio restarts the
    /// schedule when the latency search resets the statistics; the job's
    /// own bounds still count from its start).
    rate_base: (u64, u64),
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
    poisson: Option<Poisson>,
    /// Index of its flow (None: in no flow), I/Os it counted in it, whether
    /// it has left it, and whether it waits for another member to issue.
    flow: Option<usize>,
    flow_count: u64,
    flow_left: bool,
    flow_waiting: bool,
    /// When flow_sleep lets it try again.
    flow_until_ns: u64,
    quiesce: Option<Quiesce>,
    latency: Option<LatencySearch>,
    /// Stopped by the latency search (done, or the target missed at depth 1).
    stopped: bool,
    latency_fatal: bool,
}

impl Submitter<'_> {
    fn done_issuing(&self) -> bool {
        self.timed_out || self.stopped || self.issued_bytes >= self.limit_bytes || self.issued_ios >= self.limit_ios
    }

    /// I/Os it may have in flight: its iodepth, or the latency search's depth.
    fn depth(&self) -> u32 {
        self.latency.as_ref().map_or(self.w.iodepth, |l| l.qd)
    }

    /// The earliest time pacing allows the next I/O (fio's linear rate, or
    /// its poisson process).
    fn allowed_ns(&self) -> u64 {
        let w = self.w;
        let mut t = self.think_until_ns.max(self.flow_until_ns);
        if let Some(p) = &self.poisson {
            return t.max(self.start_ns.saturating_add(p.due_ns));
        }
        if w.rate_bytes_per_s > 0 {
            let due = ((self.issued_bytes - self.rate_base.0) as u128 * 1_000_000_000 / w.rate_bytes_per_s as u128) as u64;
            t = t.max(self.start_ns + due);
        }
        if w.rate_iops > 0 {
            let due = ((self.issued_ios - self.rate_base.1) as u128 * 1_000_000_000 / w.rate_iops as u128) as u64;
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
            stats.busy_time_ns = s.busy.total[0];
            stats.read_busy_time_ns = s.busy.total[1];
            stats.write_busy_time_ns = s.busy.total[2];
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

#[cfg(test)]
mod tests {
    use super::neg_ln;

    #[test]
    fn neg_ln_is_the_natural_log_to_the_last_bits() {
        for k in 1..=1000u64 {
            let u = k as f64 / 1000.0;
            let want = -u.ln();
            assert!((neg_ln(u) - want).abs() <= 1e-13 * want.max(1.0), "{u}");
        }
        let tiny = 1.0 / (1u64 << 53) as f64;
        assert!((neg_ln(tiny) - 53.0 * std::f64::consts::LN_2).abs() < 1e-12);
        assert_eq!(neg_ln(1.0), 0.0);
    }
}
