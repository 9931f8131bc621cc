//! A bounded reorder buffer: turns a stream that is *nearly* sorted by time
//! (SYSTOR '17 rows are in completion order, Tencent rows interleave seconds)
//! into one sorted by `(time_ns, line)`, holding at most `window` records.
//!
//! A record that arrives earlier than one already emitted cannot be placed any
//! more: [`ReorderBuffer::push`] refuses it, and the reader reports its line.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::pattern::DataPattern;
use crate::trace::TraceOp;

/// A parsed, placed record waiting for its turn. Times are in the trace's own
/// clock (ns), not yet rebased.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub time_ns: u64,
    /// 1-based line number: unique, so `(time_ns, line)` is a total order and
    /// records with equal times keep their file order.
    pub line: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    pub recorded_latency_ns: u64,
    pub iodepth: u16,
    pub data_pattern: Option<DataPattern>,
}

impl Pending {
    fn key(&self) -> (u64, u64) {
        (self.time_ns, self.line)
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

pub(crate) struct ReorderBuffer {
    heap: BinaryHeap<Reverse<Pending>>,
    window: usize,
    last_out_ns: Option<u64>,
}

impl ReorderBuffer {
    /// `window` = most records held back; 0 means the input must already be sorted.
    pub fn new(window: usize) -> ReorderBuffer {
        ReorderBuffer { heap: BinaryHeap::with_capacity(window.min(1 << 16) + 1), window, last_out_ns: None }
    }

    /// Queue a record, or return the time of the already-emitted record that it
    /// should have preceded.
    pub fn push(&mut self, p: Pending) -> Result<(), u64> {
        match self.last_out_ns {
            Some(last) if p.time_ns < last => Err(last),
            _ => {
                self.heap.push(Reverse(p));
                Ok(())
            }
        }
    }

    /// The earliest record, if more than `window` are held.
    pub fn pop_ready(&mut self) -> Option<Pending> {
        if self.heap.len() > self.window {
            self.pop_any()
        } else {
            None
        }
    }

    /// The earliest record held (used once the input has ended).
    pub fn pop_any(&mut self) -> Option<Pending> {
        let Reverse(p) = self.heap.pop()?;
        self.last_out_ns = Some(p.time_ns);
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ns: u64, line: u64) -> Pending {
        Pending {
            time_ns,
            line,
            op: TraceOp::Read,
            offset_bytes: 0,
            length_bytes: 512,
            recorded_latency_ns: 0,
            iodepth: 0,
            data_pattern: None,
        }
    }

    fn drain(buf: &mut ReorderBuffer, out: &mut Vec<(u64, u64)>) {
        while let Some(p) = buf.pop_ready() {
            out.push(p.key());
        }
    }

    #[test]
    fn sorts_within_the_window_and_keeps_file_order_for_ties() {
        let mut buf = ReorderBuffer::new(2);
        let mut out = Vec::new();
        for (i, t) in [5, 3, 5, 4, 9, 8, 10].into_iter().enumerate() {
            buf.push(rec(t, i as u64 + 1)).unwrap();
            drain(&mut buf, &mut out);
        }
        while let Some(p) = buf.pop_any() {
            out.push(p.key());
        }
        assert_eq!(out, [(3, 2), (4, 4), (5, 1), (5, 3), (8, 6), (9, 5), (10, 7)]);
    }

    #[test]
    fn a_record_later_than_the_window_can_fix_is_refused() {
        let mut buf = ReorderBuffer::new(1);
        buf.push(rec(10, 1)).unwrap();
        buf.push(rec(20, 2)).unwrap();
        assert_eq!(buf.pop_ready().unwrap().time_ns, 10);
        assert_eq!(buf.push(rec(5, 3)), Err(10));
        // Equal to the last emitted time is fine (ties go in file order).
        assert_eq!(buf.push(rec(10, 4)), Ok(()));
    }
}
