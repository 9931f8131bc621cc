//! The streaming accumulator behind [`TraceStats`]: one pass over the
//! records in flat memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{BusyTimes, IodepthSource, IodepthStats, SizeBucket, TraceStats, MAX_TRACKED_OUTSTANDING, N_SIZE_BUCKETS};
use crate::trace::{TraceOp, TraceRecord};

/// Union length of intervals arriving in start order.
#[derive(Clone, Copy, Debug, Default)]
struct BusyAcc {
    start: u64,
    end: u64,
    open: bool,
    total: u64,
}

impl BusyAcc {
    #[inline]
    fn add(&mut self, t: u64, lat: u64) {
        if lat == 0 {
            return;
        }
        let e = t.saturating_add(lat);
        if self.open && t <= self.end {
            if e > self.end {
                self.end = e;
            }
        } else {
            if self.open {
                self.total += self.end - self.start;
            }
            self.start = t;
            self.end = e;
            self.open = true;
        }
    }
    fn finish(self) -> u64 {
        self.total + if self.open { self.end - self.start } else { 0 }
    }
}

/// Streaming accumulator behind [`TraceStats`]: constant memory apart from the
/// completion-time heap (bounded by [`MAX_TRACKED_OUTSTANDING`]) and one entry
/// per distinct data pattern.
#[derive(Clone, Debug)]
pub struct TraceStatsBuilder {
    s: TraceStats,
    /// End of the previous read / write / trim.
    last_end: [Option<u64>; 3],
    qd_rec_n: u64,
    qd_rec_sum: u64,
    qd_rec_one: u64,
    qd_rec_max: u64,
    any_latency: bool,
    lat_heap: BinaryHeap<Reverse<u64>>,
    lat_qd_sum: u64,
    lat_qd_one: u64,
    lat_qd_max: u64,
    lat_saturated: bool,
    busy_all: BusyAcc,
    busy_read: BusyAcc,
    busy_write: BusyAcc,
}

impl Default for TraceStatsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceStatsBuilder {
    pub fn new() -> Self {
        TraceStatsBuilder {
            s: TraceStats {
                records: 0,
                reads: 0,
                writes: 0,
                trims: 0,
                flushes: 0,
                read_bytes: 0,
                write_bytes: 0,
                trim_bytes: 0,
                read_size_counts: [0; N_SIZE_BUCKETS],
                write_size_counts: [0; N_SIZE_BUCKETS],
                sequential_reads: 0,
                sequential_writes: 0,
                iodepth: None,
                first_time_ns: None,
                last_time_ns: None,
                write_bytes_by_pattern: Vec::new(),
                lowest_offset_bytes: None,
                highest_end_bytes: None,
                busy: None,
            },
            last_end: [None; 3],
            qd_rec_n: 0,
            qd_rec_sum: 0,
            qd_rec_one: 0,
            qd_rec_max: 0,
            any_latency: false,
            lat_heap: BinaryHeap::new(),
            lat_qd_sum: 0,
            lat_qd_one: 0,
            lat_qd_max: 0,
            lat_saturated: false,
            busy_all: BusyAcc::default(),
            busy_read: BusyAcc::default(),
            busy_write: BusyAcc::default(),
        }
    }

    pub fn push(&mut self, r: &TraceRecord) {
        let s = &mut self.s;
        s.records += 1;
        let t = r.time_ns;
        s.first_time_ns = Some(s.first_time_ns.map_or(t, |x| x.min(t)));
        s.last_time_ns = Some(s.last_time_ns.map_or(t, |x| x.max(t)));

        let end = r.offset_bytes.saturating_add(r.length_bytes);
        let dir = match r.op {
            TraceOp::Read => {
                s.reads += 1;
                s.read_bytes += r.length_bytes;
                s.read_size_counts[SizeBucket::of(r.length_bytes).index()] += 1;
                Some(0)
            }
            TraceOp::Write => {
                s.writes += 1;
                s.write_bytes += r.length_bytes;
                s.write_size_counts[SizeBucket::of(r.length_bytes).index()] += 1;
                match s.write_bytes_by_pattern.iter_mut().find(|(p, _)| *p == r.data_pattern) {
                    Some(e) => e.1 += r.length_bytes,
                    None => s.write_bytes_by_pattern.push((r.data_pattern, r.length_bytes)),
                }
                Some(1)
            }
            TraceOp::Trim => {
                s.trims += 1;
                s.trim_bytes += r.length_bytes;
                Some(2)
            }
            TraceOp::Flush => {
                s.flushes += 1;
                None
            }
        };
        if let Some(d) = dir {
            if self.last_end[d] == Some(r.offset_bytes) {
                match d {
                    0 => s.sequential_reads += 1,
                    1 => s.sequential_writes += 1,
                    _ => {}
                }
            }
            self.last_end[d] = Some(end);
            if r.length_bytes > 0 {
                s.lowest_offset_bytes = Some(s.lowest_offset_bytes.map_or(r.offset_bytes, |x| x.min(r.offset_bytes)));
                s.highest_end_bytes = Some(s.highest_end_bytes.map_or(end, |x| x.max(end)));
            }
        }
        self.count_depth_and_busy(r);
    }

    /// The recorded iodepth, and the iodepth and busy time that the recorded
    /// latencies give (commands still outstanding at `r`'s time).
    fn count_depth_and_busy(&mut self, r: &TraceRecord) {
        let t = r.time_ns;
        if r.iodepth > 0 {
            let q = r.iodepth as u64;
            self.qd_rec_n += 1;
            self.qd_rec_sum += q;
            self.qd_rec_one += (q == 1) as u64;
            self.qd_rec_max = self.qd_rec_max.max(q);
        }

        // Iodepth and busy time from recorded latencies.
        let lat = r.recorded_latency_ns;
        if lat > 0 {
            self.any_latency = true;
        }
        while let Some(&Reverse(c)) = self.lat_heap.peek() {
            if c <= t {
                self.lat_heap.pop();
            } else {
                break;
            }
        }
        let q = self.lat_heap.len() as u64 + 1;
        self.lat_qd_sum += q;
        self.lat_qd_one += (q == 1) as u64;
        self.lat_qd_max = self.lat_qd_max.max(q);
        if lat > 0 {
            if self.lat_heap.len() >= MAX_TRACKED_OUTSTANDING {
                self.lat_heap.pop();
                self.lat_saturated = true;
            }
            self.lat_heap.push(Reverse(t.saturating_add(lat)));
        }
        self.busy_all.add(t, lat);
        match r.op {
            TraceOp::Read => self.busy_read.add(t, lat),
            TraceOp::Write => self.busy_write.add(t, lat),
            _ => {}
        }
    }

    pub fn finish(self) -> TraceStats {
        let mut s = self.s;
        s.iodepth = if self.qd_rec_n > 0 {
            Some(IodepthStats {
                source: IodepthSource::Recorded,
                samples: self.qd_rec_n,
                sum: self.qd_rec_sum,
                at_qd1: self.qd_rec_one,
                max: self.qd_rec_max,
                saturated: false,
            })
        } else if self.any_latency {
            Some(IodepthStats {
                source: IodepthSource::FromLatencies,
                samples: s.records,
                sum: self.lat_qd_sum,
                at_qd1: self.lat_qd_one,
                max: self.lat_qd_max,
                saturated: self.lat_saturated,
            })
        } else {
            None
        };
        if self.any_latency {
            s.busy =
                Some(BusyTimes { all_ns: self.busy_all.finish(), read_ns: self.busy_read.finish(), write_ns: self.busy_write.finish() });
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::DataPattern;

    fn rec(t: u64, op: TraceOp, off: u64, len: u64, qd: u16, lat: u64) -> TraceRecord {
        TraceRecord {
            time_ns: t,
            op,
            offset_bytes: off,
            length_bytes: len,
            data_pattern: DataPattern::Incompressible,
            iodepth: qd,
            recorded_latency_ns: lat,
        }
    }

    #[test]
    fn busy_union() {
        let mut b = BusyAcc::default();
        b.add(0, 10);
        b.add(5, 10); // -> [0,15)
        b.add(20, 5); // [20,25)
        b.add(21, 1);
        assert_eq!(b.finish(), 20);
    }

    #[test]
    fn unknown_iodepth() {
        let s = TraceStats::compute(vec![rec(0, TraceOp::Read, 0, 4096, 0, 0)]);
        assert_eq!(s.iodepth, None);
        assert_eq!(s.busy, None);
        assert!(s.to_json()["iodepth_mean"].is_null());
        assert!(s.to_string().contains("unknown"));
    }
}
