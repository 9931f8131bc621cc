//! A submitter of several-job runs (one fio job or `numjobs` clone) and
//! the events of the run's loop: a command completing, or a submitter
//! waking when its pacing lets it issue.

use super::in_flight::{Command, IoTally};
use super::pacing::{LatencySearch, Poisson, Quiesce};
use crate::stats::PhaseStats;
use crate::workload::{IoGen, Workload};

/// What an event is: a command completing, or a submitter waking up (its
/// pacing allows it to issue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EventKind {
    Done(Command),
    Wake,
}

/// An event: an I/O or flush completing, or a submitter waking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Event {
    pub(super) time_ns: u64,
    pub(super) seq: u64,
    pub(super) job: u32,
    pub(super) kind: EventKind,
    pub(super) submit_ns: u64,
    pub(super) bytes: u64,
}

impl Event {
    /// The command a completion stands for (a wake-up is never in flight).
    pub(super) fn command(&self) -> Command {
        match self.kind {
            EventKind::Done(cmd) => cmd,
            EventKind::Wake => unreachable!("a wake-up is not a command in flight"),
        }
    }
}

/// One submitter's state.
pub(super) struct Submitter<'w> {
    pub(super) w: &'w Workload,
    pub(super) gen: IoGen,
    /// What it issued and has in flight, and its figures (counted from its
    /// start, or from the latency search's final run).
    pub(super) io: IoTally,
    pub(super) end_ns: Option<u64>,
    pub(super) limit_bytes: u64,
    pub(super) limit_ios: u64,
    /// What it had issued when its rate's schedule began (fio restarts the
    /// schedule when the latency search resets the statistics; the job's
    /// own bounds still count from its start).
    pub(super) rate_base: (u64, u64),
    /// Stopped by its runtime (I/O in flight past it is left to finish).
    pub(super) timed_out: bool,
    pub(super) wake_pending: bool,
    /// When think time lets it issue again.
    pub(super) think_until_ns: u64,
    pub(super) since_think: u64,
    pub(super) writes_since_sync: u64,
    pub(super) sync_due: bool,
    pub(super) sync_in_flight: bool,
    pub(super) poisson: Option<Poisson>,
    /// Index of its flow (None: in no flow), I/Os it counted in it, whether
    /// it has left it, and whether it waits for another member to issue.
    pub(super) flow: Option<usize>,
    pub(super) flow_count: u64,
    pub(super) flow_left: bool,
    pub(super) flow_waiting: bool,
    /// When flow_sleep lets it try again.
    pub(super) flow_until_ns: u64,
    pub(super) quiesce: Option<Quiesce>,
    pub(super) latency: Option<LatencySearch>,
    /// Stopped by the latency search (done, or the target missed at depth 1).
    pub(super) stopped: bool,
    pub(super) latency_fatal: bool,
}

impl<'w> Submitter<'w> {
    /// Submitter of job `w` (seeded `seed`), starting at `start_ns`, in
    /// fio flow `flow` if any.
    pub(super) fn new(w: &'w Workload, seed: u64, start_ns: u64, max_intervals: u64, flow: Option<usize>) -> Submitter<'w> {
        Submitter {
            w,
            gen: IoGen::new(w, seed),
            io: IoTally::new(start_ns, PhaseStats::bounded(w.interval_ns, max_intervals)),
            end_ns: w.runtime_ns.map(|r| start_ns.saturating_add(r)),
            limit_bytes: w.io_limit_bytes.unwrap_or(u64::MAX),
            limit_ios: w.number_ios.unwrap_or(u64::MAX),
            rate_base: (0, 0),
            timed_out: false,
            wake_pending: true,
            think_until_ns: start_ns,
            since_think: 0,
            writes_since_sync: 0,
            sync_due: false,
            sync_in_flight: false,
            poisson: Poisson::new(w, seed),
            flow,
            flow_count: 0,
            flow_left: false,
            flow_waiting: false,
            flow_until_ns: start_ns,
            quiesce: None,
            latency: (w.latency_target_ns > 0).then(|| LatencySearch::new(w.iodepth, start_ns)),
            stopped: false,
            latency_fatal: false,
        }
    }
}

impl Submitter<'_> {
    pub(super) fn done_issuing(&self) -> bool {
        self.timed_out || self.stopped || self.io.issued_bytes >= self.limit_bytes || self.io.issued_ios >= self.limit_ios
    }

    /// I/Os it may have in flight: its iodepth, or the latency search's depth.
    pub(super) fn depth(&self) -> u32 {
        self.latency.as_ref().map_or(self.w.iodepth, |l| l.qd)
    }

    /// The earliest time pacing allows the next I/O (fio's linear rate, or
    /// its poisson process).
    pub(super) fn allowed_ns(&self) -> u64 {
        let w = self.w;
        let mut t = self.think_until_ns.max(self.flow_until_ns);
        if let Some(p) = &self.poisson {
            return t.max(self.io.start_ns.saturating_add(p.due_ns));
        }
        if w.rate_bytes_per_s > 0 {
            let due = ((self.io.issued_bytes - self.rate_base.0) as u128 * 1_000_000_000 / w.rate_bytes_per_s as u128) as u64;
            t = t.max(self.io.start_ns + due);
        }
        if w.rate_iops > 0 {
            let due = ((self.io.issued_ios - self.rate_base.1) as u128 * 1_000_000_000 / w.rate_iops as u128) as u64;
            t = t.max(self.io.start_ns + due);
        }
        t
    }
}
