//! What is in flight during a phase, and the busy time it adds up to: the
//! accounting that a workload (`phases.rs`), workloads side by side
//! (`jobs.rs`) and a trace replay (`replay.rs`) share. Each submitter counts
//! its commands in an [`IoTally`] and issues them through
//! [`Simulator::send_io`]; a workload and a replay keep theirs in flight in
//! a [`PhaseIo`], the submitters side by side in their group's events. Each
//! loop keeps only where its next command comes from and when.

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

/// One submitter's count of its commands: what it issued, what it has in
/// flight, their busy time and the figures of those that completed. Every
/// engine loop counts through it; only where its commands wait (a heap of
/// their own, or a group's events) differs.
pub(super) struct IoTally {
    busy: Busy,
    pub(super) stats: PhaseStats,
    /// Where its figures and series count from.
    pub(super) start_ns: u64,
    /// Commands issued and not completed, less any left to finish in the
    /// background.
    pub(super) in_flight: u32,
    pub(super) issued_bytes: u64,
    /// Reads, writes and TRIMs issued (flushes are not counted).
    pub(super) issued_ios: u64,
    /// The latest completion taken so far.
    pub(super) last_complete_ns: u64,
}

impl IoTally {
    /// Nothing issued yet at `start_ns`.
    pub(super) fn new(start_ns: u64, stats: PhaseStats) -> IoTally {
        IoTally { busy: Busy::default(), stats, start_ns, in_flight: 0, issued_bytes: 0, issued_ios: 0, last_complete_ns: start_ns }
    }

    /// A command moving `bytes`, issued at `submit_ns`, is in flight.
    #[inline]
    pub(super) fn start(&mut self, cmd: Command, submit_ns: u64, bytes: u64) {
        self.busy.start(cmd, submit_ns);
        self.in_flight += 1;
        self.issued_bytes += bytes;
    }

    /// A command issued at `submit_ns` completed at `t`: its busy time ends,
    /// and a read, write or TRIM goes into the figures and series (a flush's
    /// latency is its source's to count).
    #[inline]
    pub(super) fn complete(&mut self, cmd: Command, submit_ns: u64, bytes: u64, t: u64) {
        self.in_flight -= 1;
        self.last_complete_ns = self.last_complete_ns.max(t);
        self.busy.end(cmd, t);
        if let Some(dir) = cmd.dir() {
            self.stats.record(dir, bytes, t - submit_ns, t - self.start_ns);
        }
    }

    /// A command completing after its submitter's end no longer holds it
    /// back; it finishes in the background (`settle` ends its busy time).
    #[inline]
    pub(super) fn leave(&mut self) {
        self.in_flight -= 1;
    }

    /// The figures start again at `t` with `stats` (fio's reset of a job's
    /// statistics); what it issued and has in flight still counts.
    pub(super) fn restart(&mut self, t: u64, stats: PhaseStats) {
        self.stats = stats;
        self.busy = Busy::default();
        self.start_ns = t;
        self.last_complete_ns = t;
    }

    /// The figures once it ends at `end_ns`, the `pending` commands
    /// (command, submitted, completes) finishing in the background: busy
    /// until `end_ns` at most. Their series are closed.
    pub(super) fn settle(self, pending: impl Iterator<Item = (Command, u64, u64)>, end_ns: u64) -> PhaseStats {
        let IoTally { mut busy, mut stats, start_ns, .. } = self;
        for (cmd, submit_ns, complete_ns) in pending {
            busy.end(cmd, end_ns.min(complete_ns).max(submit_ns));
        }
        busy.write_to(&mut stats);
        stats.finish(end_ns - start_ns);
        stats
    }
}

/// When a phase next tells its progress callback how far it is, and the
/// totals it reports against: shared by every engine loop.
pub(super) struct ProgressClock {
    start_ns: u64,
    interval_ns: u64,
    next_ns: u64,
    /// The phase's length and bytes a progress callback is told (0: not known).
    total_ns: u64,
    total_bytes: u64,
}

impl ProgressClock {
    /// A phase from `start_ns`, told about once every `interval_ns`.
    pub(super) fn new(start_ns: u64, interval_ns: u64, total_ns: u64, total_bytes: u64) -> ProgressClock {
        ProgressClock { start_ns, interval_ns, next_ns: start_ns + interval_ns, total_ns, total_bytes }
    }

    /// An interval has passed since the last report.
    #[inline]
    pub(super) fn due(&self, t: u64) -> bool {
        t >= self.next_ns
    }

    /// Tell `progress` the phase is at `t` with `done_bytes` issued; false
    /// when the callback asks to stop.
    pub(super) fn tell(&mut self, t: u64, done_bytes: u64, progress: &mut dyn FnMut(Progress) -> bool) -> bool {
        self.next_ns = t + self.interval_ns;
        progress(Progress { done_ns: t - self.start_ns, total_ns: self.total_ns, done_bytes, total_bytes: self.total_bytes })
    }
}

/// A workload's or a trace's commands in flight during a phase, in the
/// order they complete, with their count and the phase's progress.
pub(super) struct PhaseIo {
    heap: BinaryHeap<Reverse<InFlight>>,
    pub(super) tally: IoTally,
    /// Commands the drive's queue holds: the controller sees at most this
    /// many outstanding.
    queue_slots: u32,
    /// The latest completion of all issued.
    pub(super) max_complete_ns: u64,
    clock: ProgressClock,
    /// The progress callback stopped the phase.
    pub(super) interrupted: bool,
}

impl PhaseIo {
    /// Nothing in flight yet at `start_ns`; room for `depth` commands.
    pub(super) fn new(start_ns: u64, stats: PhaseStats, queue_slots: u32, depth: usize, total_ns: u64, total_bytes: u64) -> PhaseIo {
        PhaseIo {
            heap: BinaryHeap::with_capacity(depth),
            clock: ProgressClock::new(start_ns, stats.interval_ns, total_ns, total_bytes),
            tally: IoTally::new(start_ns, stats),
            queue_slots,
            max_complete_ns: start_ns,
            interrupted: false,
        }
    }

    /// Commands in flight.
    #[inline]
    pub(super) fn in_flight(&self) -> u32 {
        self.tally.in_flight
    }

    /// When the first command in flight completes.
    #[inline]
    pub(super) fn next_completion_ns(&self) -> Option<u64> {
        self.heap.peek().map(|x| x.0.complete_ns)
    }

    /// A command already counted in the tally, issued at `submit_ns`, waits
    /// until `complete_ns`, in order after those pushed before it (`seq`).
    #[inline]
    pub(super) fn push(&mut self, seq: &mut u64, cmd: Command, submit_ns: u64, complete_ns: u64, bytes: u64) {
        *seq += 1;
        self.heap.push(Reverse(InFlight { complete_ns, seq: *seq, submit_ns, bytes, cmd }));
        self.max_complete_ns = self.max_complete_ns.max(complete_ns);
    }

    /// About once an interval, tell `progress` how far the phase is at `t`.
    /// False when the phase stops here: its series overflowed (an error
    /// once it ends), or the callback asked to stop (`interrupted`).
    #[inline]
    pub(super) fn report(&mut self, t: u64, progress: &mut dyn FnMut(Progress) -> bool) -> bool {
        if !self.clock.due(t) {
            return true;
        }
        if self.tally.stats.overflowed() {
            return false;
        }
        if !self.clock.tell(t, self.tally.issued_bytes, progress) {
            self.interrupted = true;
            return false;
        }
        true
    }
}

impl Simulator {
    /// Send a read, write or TRIM to the controller and count it in
    /// `tally`: issued by the host at `t`, reaching the drive at `t_dev`
    /// (later when the drive's queue was full), with `outstanding` commands
    /// in the drive's queues, this one included. Every engine loop issues
    /// its I/O here; it is in flight until the time returned.
    #[inline]
    pub(super) fn send_io(
        &mut self,
        tally: &mut IoTally,
        (op, off, len): (Op, u64, u64),
        outstanding: u32,
        t: u64,
        t_dev: u64,
        pattern: DataPattern,
    ) -> Result<u64> {
        self.ctl.outstanding = outstanding;
        let c = self.ctl.submit(&mut self.ftl, &mut self.nand, op, off, len, t_dev, pattern)?;
        tally.issued_ios += 1;
        tally.start(Command::of(op), t, len);
        Ok(c)
    }

    /// A job's `fsync=N` FLUSH CACHE at `t`, counted in `tally`; in flight
    /// until the time returned.
    #[inline]
    pub(super) fn send_sync(&mut self, tally: &mut IoTally, t: u64) -> u64 {
        let c = self.ctl.sync_command(&mut self.ftl, &mut self.nand, t);
        tally.start(Command::Flush, t, 0);
        c
    }

    /// A workload's or a trace's read, write or TRIM `cmd` (as
    /// [`Simulator::send_io`]) goes in flight; returns when it completes.
    #[inline]
    pub(super) fn issue(&mut self, io: &mut PhaseIo, cmd: (Op, u64, u64), t: u64, t_dev: u64, pattern: DataPattern) -> Result<u64> {
        let outstanding = (io.tally.in_flight + 1).min(io.queue_slots);
        let c = self.send_io(&mut io.tally, cmd, outstanding, t, t_dev, pattern)?;
        io.push(&mut self.seq, Command::of(cmd.0), t, c, cmd.2);
        Ok(c)
    }

    /// Take the first command to complete out of flight, unless it completes
    /// after `deadline_ns`, and count it.
    #[inline]
    pub(super) fn complete_next(&mut self, io: &mut PhaseIo, deadline_ns: Option<u64>) -> Option<InFlight> {
        let done = io.heap.peek()?.0;
        if deadline_ns.is_some_and(|e| done.complete_ns > e) {
            return None;
        }
        io.heap.pop();
        let t = done.complete_ns;
        io.tally.complete(done.cmd, done.submit_ns, done.bytes, t);
        if done.seq & 15 == 0 {
            self.nand.advance(t);
            self.ctl.advance(t);
        }
        Some(done)
    }

    /// End the phase's I/O at `end_ns`: commands still in flight finish in
    /// the background (busy until `end_ns` at most), and the drive's time
    /// moves on to it. Returns the figures with their series closed.
    pub(super) fn settle(&mut self, io: PhaseIo, end_ns: u64) -> PhaseStats {
        let PhaseIo { heap, tally, max_complete_ns, .. } = io;
        let stats = tally.settle(heap.iter().map(|Reverse(f)| (f.cmd, f.submit_ns, f.complete_ns)), end_ns);
        self.now_ns = end_ns;
        self.last_io_end_ns = max_complete_ns;
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two reads overlapping a write, one read left in flight at the end:
    /// busy time counts the union of what was in flight, per direction too,
    /// and only completed commands reach the figures.
    #[test]
    fn tally_counts_busy_time_and_completions() {
        let mut io = IoTally::new(1_000, PhaseStats::new(1_000_000));
        io.start(Command::Read, 1_000, 4096);
        io.start(Command::Write, 1_500, 8192);
        io.start(Command::Read, 2_000, 4096);
        assert_eq!((io.in_flight, io.issued_bytes), (3, 16384));
        io.complete(Command::Read, 1_000, 4096, 3_000);
        io.complete(Command::Write, 1_500, 8192, 4_000);
        assert_eq!((io.in_flight, io.last_complete_ns), (1, 4_000));
        assert_eq!((io.stats.read.ios, io.stats.write.ios, io.stats.write.bytes), (1, 1, 8192));
        // The second read completes at 9_000, after the end at 6_000.
        let stats = io.settle([(Command::Read, 2_000, 9_000)].into_iter(), 6_000);
        assert_eq!((stats.busy_time_ns, stats.read_busy_time_ns, stats.write_busy_time_ns), (5_000, 5_000, 2_500));
        assert_eq!(stats.read.ios, 1);
    }

    /// A restart drops the figures and busy time but keeps what was issued;
    /// a command left to the background counts as in flight no more.
    #[test]
    fn tally_restart_keeps_issued_counts() {
        let mut io = IoTally::new(0, PhaseStats::new(1_000_000));
        io.start(Command::Write, 0, 4096);
        io.issued_ios += 1;
        io.complete(Command::Write, 0, 4096, 100);
        io.start(Command::Flush, 100, 0);
        io.leave();
        assert_eq!(io.in_flight, 0);
        io.restart(500, PhaseStats::new(1_000_000));
        assert_eq!((io.issued_bytes, io.issued_ios, io.start_ns, io.last_complete_ns), (4096, 1, 500, 500));
        assert_eq!(io.stats.write.ios, 0);
        let stats = io.settle(std::iter::empty(), 700);
        assert_eq!(stats.busy_time_ns, 0);
    }
}
