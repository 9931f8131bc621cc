//! Iodepth at issue, inferred from issue times and recorded response times.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::trace::stats::MAX_TRACKED_OUTSTANDING;
use crate::trace::{TraceError, TraceRecord};

/// Fills `iodepth` of each record with the number of I/Os outstanding on
/// the traced system when it was issued, itself included: those issued earlier
/// whose `time_ns + recorded_latency_ns` is later than this issue time.
/// Records without a recorded latency count only themselves (iodepth 1
/// when alone). Input must be in time order, as [`TraceReader`](super::TraceReader)
/// yields it; memory is one entry per outstanding I/O, at most
/// [`MAX_TRACKED_OUTSTANDING`] (beyond it the earliest completion is dropped;
/// the iodepth saturates at 65535 anyway).
pub fn infer_iodepth<I>(records: I) -> InferIodepth<I::IntoIter>
where
    I: IntoIterator<Item = Result<TraceRecord, TraceError>>,
{
    InferIodepth { records: records.into_iter(), completions_ns: BinaryHeap::new() }
}

/// The iterator of [`infer_iodepth`].
pub struct InferIodepth<I> {
    records: I,
    completions_ns: BinaryHeap<Reverse<u64>>,
}

impl<I> Iterator for InferIodepth<I>
where
    I: Iterator<Item = Result<TraceRecord, TraceError>>,
{
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = match self.records.next()? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        while self.completions_ns.peek().is_some_and(|Reverse(done)| *done <= record.time_ns) {
            self.completions_ns.pop();
        }
        record.iodepth = u16::try_from(self.completions_ns.len() + 1).unwrap_or(u16::MAX);
        if record.recorded_latency_ns > 0 {
            if self.completions_ns.len() >= MAX_TRACKED_OUTSTANDING {
                self.completions_ns.pop();
            }
            self.completions_ns.push(Reverse(record.time_ns.saturating_add(record.recorded_latency_ns)));
        }
        Some(Ok(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::DataPattern;
    use crate::trace::TraceOp;

    fn rec(time_ns: u64, recorded_latency_ns: u64) -> Result<TraceRecord, TraceError> {
        Ok(TraceRecord {
            time_ns,
            op: TraceOp::Read,
            offset_bytes: 0,
            length_bytes: 4096,
            data_pattern: DataPattern::Incompressible,
            iodepth: 0,
            recorded_latency_ns,
        })
    }

    #[test]
    fn counts_overlapping_requests() {
        // [0,100) [10,30) [20,25) [30,..) [100,..): depths 1 2 3 2 1.
        let input = vec![rec(0, 100), rec(10, 20), rec(20, 5), rec(30, 1), rec(100, 0)];
        let depths: Vec<u16> = infer_iodepth(input).map(|r| r.unwrap().iodepth).collect();
        assert_eq!(depths, [1, 2, 3, 2, 1]);
    }
}
