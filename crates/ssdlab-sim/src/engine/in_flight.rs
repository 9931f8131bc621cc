//! What is in flight during a phase, and the busy time it adds up to: the
//! accounting that a workload (`phases.rs`), workloads side by side
//! (`jobs.rs`) and a trace replay (`replay.rs`) share.

use crate::stats::Dir;
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
    pub(super) total: [u64; 3],
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
}
