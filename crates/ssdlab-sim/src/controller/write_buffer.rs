//! The write buffer: host data waits in the controller (SRAM, or the DRAM
//! cache) until its program unit is sent to a die; writes are acknowledged
//! once their data is in it (write-back).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::ftl::Release;
use crate::mem::NONE;

/// Write data waiting in the controller until its unit is sent to a die.
///
/// Space comes back in order of release time (then size). A deep buffer has
/// thousands of releases pending, but each die's come in time order (it
/// transfers its units in booking order), so they wait in one queue per die
/// and only the queues' first entries (and the few releases of data replaced
/// in the buffer) are kept in a heap.
#[derive(Clone, Debug)]
pub struct WriteBuffer {
    free_bytes: u64,
    /// Pending releases of the program units sent to each die, in time order.
    die_queues: Vec<VecDeque<(u64, u64)>>,
    /// (time, bytes, die or NONE): the first release of each non-empty die
    /// queue, and every release of replaced data.
    heads: BinaryHeap<Reverse<(u64, u64, u32)>>,
}

impl WriteBuffer {
    pub fn new(bytes: u64, dies: u32) -> WriteBuffer {
        WriteBuffer { free_bytes: bytes, die_queues: vec![VecDeque::new(); dies as usize], heads: BinaryHeap::new() }
    }

    #[inline]
    pub fn push(&mut self, r: Release) {
        if r.die == NONE {
            self.heads.push(Reverse((r.at_ns, r.bytes, NONE)));
            return;
        }
        let q = &mut self.die_queues[r.die as usize];
        debug_assert!(q.back().is_none_or(|&(at, _)| at <= r.at_ns));
        if q.is_empty() {
            self.heads.push(Reverse((r.at_ns, r.bytes, r.die)));
        }
        q.push_back((r.at_ns, r.bytes));
    }

    /// Remove the earliest pending release.
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        let Reverse((at, b, die)) = self.heads.pop()?;
        if die != NONE {
            let q = &mut self.die_queues[die as usize];
            q.pop_front();
            if let Some(&(at2, b2)) = q.front() {
                self.heads.push(Reverse((at2, b2, die)));
            }
        }
        Some((at, b))
    }

    /// Earliest time >= `t` at which `bytes` fit, or None if they cannot
    /// fit until data waiting in the buffer is sent to the dies.
    #[inline]
    pub fn admit(&mut self, t: u64, bytes: u64) -> Option<u64> {
        while let Some(&Reverse((at, _, _))) = self.heads.peek() {
            if at > t {
                break;
            }
            let (_, b) = self.pop()?;
            self.free_bytes += b;
        }
        let mut t = t;
        while self.free_bytes < bytes {
            let (at, b) = self.pop()?;
            self.free_bytes += b;
            t = t.max(at);
        }
        self.free_bytes -= bytes;
        Some(t)
    }
}
