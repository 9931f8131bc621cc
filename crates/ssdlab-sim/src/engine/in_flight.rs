//! What is in flight during a phase, and the busy time it adds up to: the
//! accounting that a workload (`phases.rs`), workloads side by side
//! (`jobs.rs`) and a trace replay (`replay.rs`) share. A workload and a
//! replay also share how a command is issued, completed and counted
//! ([`PhaseIo`]); each keeps only where its next command comes from and when.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Progress, Simulator};
use crate::error::Result;
use crate::pattern::DataPattern;
use crate::stats::{Dir, PhaseStats};
use crate::workload::Op;

/// The command an entry in flight stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Command {
    Read,
    Write,
    Trim,
    /// FLUSH CACHE: a job's `fsync=N` or a trace's flush.
    Flush,
}

impl Command {
    #[inline]
    pub(super) fn of(op: Op) -> Command {
        match op {
            Op::Read => Command::Read,
            Op::Write => Command::Write,
            Op::Trim => Command::Trim,
        }
    }

    /// The direction its data is counted under; a flush moves none.
    #[inline]
    pub(super) fn dir(self) -> Option<Dir> {
        match self {
            Command::Read => Some(Dir::Read),
            Command::Write => Some(Dir::Write),
            Command::Trim => Some(Dir::Trim),
            Command::Flush => None,
        }
    }

    /// Its own busy-time counter beside the overall one (reads and writes
    /// have one each; TRIM and flushes count only overall).
    #[inline]
    fn busy_slot(self) -> Option<usize> {
        match self {
            Command::Read => Some(1),
            Command::Write => Some(2),
            Command::Trim | Command::Flush => None,
        }
    }
}

/// An I/O in flight, ordered by completion time then submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct InFlight {
    pub(super) complete_ns: u64,
    pub(super) seq: u64,
    pub(super) submit_ns: u64,
    pub(super) bytes: u64,
    pub(super) cmd: Command,
}

/// Outstanding-I/O tracking for busy time (overall, reads, writes).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Busy {
    n: [u32; 3],
    since: [u64; 3],
    total: [u64; 3],
}

impl Busy {
    #[inline]
    pub(super) fn start(&mut self, cmd: Command, t: u64) {
        self.bump(0, t);
        if let Some(k) = cmd.busy_slot() {
            self.bump(k, t);
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
    pub(super) fn end(&mut self, cmd: Command, t: u64) {
        self.drop_one(0, t);
        if let Some(k) = cmd.busy_slot() {
            self.drop_one(k, t);
        }
    }
    #[inline]
    fn drop_one(&mut self, k: usize, t: u64) {
        self.n[k] -= 1;
        if self.n[k] == 0 {
            self.total[k] += t - self.since[k];
        }
    }

    /// Hand the busy times to a phase's figures.
    pub(super) fn write_to(&self, stats: &mut PhaseStats) {
        stats.busy_time_ns = self.total[0];
        stats.read_busy_time_ns = self.total[1];
        stats.write_busy_time_ns = self.total[2];
    }
}

/// The commands one submitter has in flight during a phase (a job's, or a
/// trace's), and the figures of those that completed.
pub(super) struct PhaseIo {
    heap: BinaryHeap<Reverse<InFlight>>,
    busy: Busy,
    pub(super) stats: PhaseStats,
    pub(super) start_ns: u64,
    /// Commands the drive's queue holds: the controller sees at most this
    /// many outstanding.
    queue_slots: u32,
    pub(super) issued_bytes: u64,
    /// Reads, writes and TRIMs issued (flushes are not counted).
    pub(super) issued_ios: u64,
    /// The latest completion taken so far, and the latest of all issued.
    pub(super) last_complete_ns: u64,
    pub(super) max_complete_ns: u64,
    next_progress_ns: u64,
    /// The phase's length and bytes a progress callback is told (0: not known).
    total_ns: u64,
    total_bytes: u64,
    /// The progress callback stopped the phase.
    pub(super) interrupted: bool,
}

impl PhaseIo {
    /// Nothing in flight yet at `start_ns`; room for `depth` commands.
    pub(super) fn new(start_ns: u64, stats: PhaseStats, queue_slots: u32, depth: usize, total_ns: u64, total_bytes: u64) -> PhaseIo {
        PhaseIo {
            heap: BinaryHeap::with_capacity(depth),
            busy: Busy::default(),
            next_progress_ns: start_ns + stats.interval_ns,
            stats,
            start_ns,
            queue_slots,
            issued_bytes: 0,
            issued_ios: 0,
            last_complete_ns: start_ns,
            max_complete_ns: start_ns,
            total_ns,
            total_bytes,
            interrupted: false,
        }
    }

    #[inline]
    pub(super) fn in_flight(&self) -> usize {
        self.heap.len()
    }

    /// When the first command in flight completes.
    #[inline]
    pub(super) fn next_completion_ns(&self) -> Option<u64> {
        self.heap.peek().map(|x| x.0.complete_ns)
    }

    /// About once an interval, tell `progress` how far the phase is at `t`.
    /// False when the phase stops here: its series overflowed (an error
    /// once it ends), or the callback asked to stop (`interrupted`).
    #[inline]
    pub(super) fn report(&mut self, t: u64, progress: &mut dyn FnMut(Progress) -> bool) -> bool {
        if t < self.next_progress_ns {
            return true;
        }
        if self.stats.overflowed() {
            return false;
        }
        self.next_progress_ns = t + self.stats.interval_ns;
        let p =
            Progress { done_ns: t - self.start_ns, total_ns: self.total_ns, done_bytes: self.issued_bytes, total_bytes: self.total_bytes };
        if !progress(p) {
            self.interrupted = true;
            return false;
        }
        true
    }
}

impl Simulator {
    /// Send a read, write or TRIM to the controller, issued by the host at
    /// `t` and reaching the drive at `t_dev` (later when the drive's queue
    /// was full). It is in flight until the time returned.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn issue(&mut self, io: &mut PhaseIo, op: Op, off: u64, len: u64, t: u64, t_dev: u64, pattern: DataPattern) -> Result<u64> {
        self.ctl.outstanding = (io.heap.len() as u32 + 1).min(io.queue_slots);
        let c = self.ctl.submit(&mut self.ftl, &mut self.nand, op, off, len, t_dev, pattern)?;
        io.issued_ios += 1;
        self.put_in_flight(io, Command::of(op), t, c, len);
        Ok(c)
    }

    /// A command issued at `submit_ns` is in flight until `complete_ns` (a
    /// flush comes here directly: when it completes is its source's model).
    #[inline]
    pub(super) fn put_in_flight(&mut self, io: &mut PhaseIo, cmd: Command, submit_ns: u64, complete_ns: u64, bytes: u64) {
        io.busy.start(cmd, submit_ns);
        self.seq += 1;
        io.heap.push(Reverse(InFlight { complete_ns, seq: self.seq, submit_ns, bytes, cmd }));
        io.issued_bytes += bytes;
        io.max_complete_ns = io.max_complete_ns.max(complete_ns);
    }

    /// Take the first command to complete out of flight, unless it completes
    /// after `deadline_ns`: its busy time ends, and a read, write or TRIM
    /// goes into the figures and series (a flush's latency is its source's
    /// to count).
    #[inline]
    pub(super) fn complete_next(&mut self, io: &mut PhaseIo, deadline_ns: Option<u64>) -> Option<InFlight> {
        let done = io.heap.peek()?.0;
        if deadline_ns.is_some_and(|e| done.complete_ns > e) {
            return None;
        }
        io.heap.pop();
        let t = done.complete_ns;
        io.last_complete_ns = io.last_complete_ns.max(t);
        io.busy.end(done.cmd, t);
        if done.seq & 15 == 0 {
            self.nand.advance(t);
            self.ctl.advance(t);
        }
        if let Some(dir) = done.cmd.dir() {
            io.stats.record(dir, done.bytes, t - done.submit_ns, t - io.start_ns);
        }
        Some(done)
    }

    /// End the phase's I/O at `end_ns`: commands still in flight finish in
    /// the background (busy until `end_ns` at most), and the drive's time
    /// moves on to it. Returns the figures with their series closed.
    pub(super) fn settle(&mut self, io: PhaseIo, end_ns: u64) -> PhaseStats {
        let PhaseIo { heap, mut busy, mut stats, start_ns, max_complete_ns, .. } = io;
        for Reverse(f) in heap.iter() {
            busy.end(f.cmd, end_ns.min(f.complete_ns).max(f.submit_ns));
        }
        busy.write_to(&mut stats);
        stats.finish(end_ns - start_ns);
        self.now_ns = end_ns;
        self.last_io_end_ns = max_complete_ns;
        stats
    }
}
