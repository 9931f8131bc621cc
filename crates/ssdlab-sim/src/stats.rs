//! Figures of a phase: per-direction totals, latency histograms, per-interval
//! series (IOPS and MB/s every second by default), busy time, and what the FTL
//! and NAND did meanwhile.

use serde::Serialize;

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of the log-linear histogram (values up to 2^64 ns).
pub const HIST_BUCKETS: usize = ((64 - SUB_BITS) as usize) * SUB as usize + 2 * SUB as usize;

/// Log-linear latency histogram: exact below 64 ns, then 32 buckets per power
/// of two (relative error under 3.2%).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    pub n: u64,
    pub sum_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; HIST_BUCKETS], n: 0, sum_ns: 0, min_ns: u64::MAX, max_ns: 0 }
    }
}

#[inline]
fn bucket_of(v: u64) -> usize {
    if v < 2 * SUB {
        v as usize
    } else {
        let m = 63 - v.leading_zeros();
        let shift = m - SUB_BITS;
        ((shift as u64) * SUB + (v >> shift)) as usize
    }
}

/// Lowest value that falls in bucket `i`, and the bucket's width.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        (i, 1)
    } else {
        let shift = i / SUB - 1;
        let mant = i - shift * SUB;
        (mant << shift, 1 << shift)
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.n += 1;
        self.sum_ns += v as u128;
        self.min_ns = self.min_ns.min(v);
        self.max_ns = self.max_ns.max(v);
    }

    pub fn clear(&mut self) {
        if self.n > 0 {
            self.counts.iter_mut().for_each(|c| *c = 0);
        }
        self.n = 0;
        self.sum_ns = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.sum_ns += o.sum_ns;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// The value below which `p` percent of samples fall (bucket midpoint,
    /// clamped to the observed min and max); 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, w) = bucket_range(i);
                return (lo + w / 2).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }

    /// The non-empty buckets in order: (lowest value, width, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| {
            let (lo, w) = bucket_range(i);
            (lo, w, *c)
        })
    }

    pub fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.n as f64
        }
    }
}

/// fio's percentile list.
pub const PERCENTILES: [f64; 17] = [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub lat: Histogram,
}

/// One interval of the per-interval series.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct IntervalStats {
    pub read_ios: u64,
    pub write_ios: u64,
    pub trim_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub lat_p999_ns: u64,
    pub lat_max_ns: u64,
    /// Mean completion latency of the interval (0 without I/O): fio's
    /// averaged latency logs.
    pub lat_mean_ns: u64,
}

/// Bytes one interval of a per-interval series costs from the engine to the
/// user: the engine's row (72 B), the ten columns handed out (80 B), and
/// their copies as numpy arrays and as JSON lists in a results document. The
/// series of a phase may hold at most the memory left by the drive's tables
/// within the memory limit divided by this.
pub const SERIES_BYTES_PER_INTERVAL: u64 = 512;

/// Everything a phase measured.
#[derive(Clone, Debug)]
pub struct PhaseStats {
    pub read: DirStats,
    pub write: DirStats,
    pub trim: DirStats,
    /// FLUSH CACHE commands the job waited for (fio's `sync`: count and
    /// latency; no bytes, not in the per-interval series).
    pub sync: DirStats,
    pub interval_ns: u64,
    pub intervals: Vec<IntervalStats>,
    cur_hist: Histogram,
    cur_index: usize,
    /// Time with at least one I/O outstanding.
    pub busy_time_ns: u64,
    pub read_busy_time_ns: u64,
    pub write_busy_time_ns: u64,
    /// Most intervals the series may hold (see [`SERIES_BYTES_PER_INTERVAL`]).
    max_intervals: usize,
    /// Intervals a completion (or the phase's end) past `max_intervals`
    /// asked for (0 when none did): the series stopped growing there and the
    /// phase must fail.
    overflow_intervals: u64,
}

impl Default for PhaseStats {
    fn default() -> Self {
        PhaseStats {
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            sync: DirStats::default(),
            interval_ns: 1,
            intervals: Vec::new(),
            cur_hist: Histogram::default(),
            cur_index: 0,
            busy_time_ns: 0,
            read_busy_time_ns: 0,
            write_busy_time_ns: 0,
            max_intervals: usize::MAX,
            overflow_intervals: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl PhaseStats {
    pub fn new(interval_ns: u64) -> PhaseStats {
        PhaseStats { interval_ns: interval_ns.max(1), ..Default::default() }
    }

    /// The same, with a series of at most `max_intervals` intervals (at least 1).
    pub fn bounded(interval_ns: u64, max_intervals: u64) -> PhaseStats {
        PhaseStats { max_intervals: usize::try_from(max_intervals.max(1)).unwrap_or(usize::MAX), ..PhaseStats::new(interval_ns) }
    }

    /// Most intervals the series may hold.
    pub fn max_intervals(&self) -> u64 {
        self.max_intervals as u64
    }

    /// True once a completion, or the phase's end, fell past the most
    /// intervals the series may hold: what was recorded is incomplete.
    pub fn overflowed(&self) -> bool {
        self.overflow_intervals > 0
    }

    /// The most intervals a completion or the phase's end asked for past the
    /// bound (0 when none did).
    pub fn overflow_intervals(&self) -> u64 {
        self.overflow_intervals
    }

    /// Close intervals before the one containing `rel_ns`.
    #[inline]
    fn roll_to(&mut self, idx: usize) {
        while self.cur_index < idx {
            self.close_current();
        }
    }

    fn close_current(&mut self) {
        while self.intervals.len() <= self.cur_index {
            self.intervals.push(IntervalStats::default());
        }
        let h = &self.cur_hist;
        let iv = &mut self.intervals[self.cur_index];
        iv.lat_p50_ns = h.percentile(50.0);
        iv.lat_p99_ns = h.percentile(99.0);
        iv.lat_p999_ns = h.percentile(99.9);
        iv.lat_max_ns = h.max_ns;
        iv.lat_mean_ns = h.mean_ns().round() as u64;
        self.cur_hist.clear();
        self.cur_index += 1;
    }

    /// Record a completed I/O; `rel_complete_ns` is its completion time
    /// relative to the phase start.
    #[inline]
    pub fn record(&mut self, dir: Dir, bytes: u64, lat_ns: u64, rel_complete_ns: u64) {
        let idx = usize::try_from(rel_complete_ns / self.interval_ns).unwrap_or(usize::MAX);
        if idx > self.cur_index {
            if idx >= self.max_intervals {
                self.overflow_intervals = self.overflow_intervals.max((idx as u64).saturating_add(1));
                return;
            }
            self.roll_to(idx);
        }
        while self.intervals.len() <= idx {
            self.intervals.push(IntervalStats::default());
        }
        let iv = &mut self.intervals[idx];
        let d = match dir {
            Dir::Read => {
                iv.read_ios += 1;
                iv.read_bytes += bytes;
                &mut self.read
            }
            Dir::Write => {
                iv.write_ios += 1;
                iv.write_bytes += bytes;
                &mut self.write
            }
            Dir::Trim => {
                iv.trim_ios += 1;
                &mut self.trim
            }
        };
        d.ios += 1;
        d.bytes += bytes;
        d.lat.record(lat_ns);
        if idx == self.cur_index {
            self.cur_hist.record(lat_ns);
        }
    }

    /// Record a completed FLUSH CACHE of the job (fio's `sync` latency).
    #[inline]
    pub fn record_sync(&mut self, lat_ns: u64) {
        self.sync.ios += 1;
        self.sync.lat.record(lat_ns);
    }

    /// Close the series at `rel_end_ns` (the phase length): a trailing partial
    /// interval is kept only if it is at least half an interval long.
    pub fn finish(&mut self, rel_end_ns: u64) {
        let full = usize::try_from(rel_end_ns / self.interval_ns).unwrap_or(usize::MAX);
        let rem = rel_end_ns % self.interval_ns;
        let n = if rem * 2 >= self.interval_ns { full.saturating_add(1) } else { full };
        let mut n = n.max(1);
        if n > self.max_intervals {
            self.overflow_intervals = self.overflow_intervals.max(n as u64);
            n = self.max_intervals;
        }
        self.roll_to(n.max(self.cur_index));
        if self.intervals.len() < n {
            self.intervals.resize(n, IntervalStats::default());
        }
        // Completions after the end (in-flight at stop) are not in the series.
        self.intervals.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_contiguous_and_accurate() {
        let mut prev_hi = 0;
        for i in 0..HIST_BUCKETS - 2 * SUB as usize {
            let (lo, w) = bucket_range(i);
            assert_eq!(lo, prev_hi, "bucket {i}");
            prev_hi = lo + w;
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(lo + w - 1), i);
        }
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 0.035, "{p50}");
        let p99 = h.percentile(99.0) as f64;
        assert!((p99 / 99_000_000.0 - 1.0).abs() < 0.035, "{p99}");
        assert_eq!(h.max_ns, 100_000_000);
    }

    #[test]
    fn intervals_follow_completion_time() {
        let mut s = PhaseStats::new(1000);
        s.record(Dir::Write, 4096, 10, 10);
        s.record(Dir::Write, 4096, 10, 999);
        s.record(Dir::Read, 4096, 30, 2500);
        s.finish(3000);
        assert_eq!(s.intervals.len(), 3);
        assert_eq!(s.intervals[0].write_ios, 2);
        assert_eq!(s.intervals[1].write_ios + s.intervals[1].read_ios, 0);
        assert_eq!(s.intervals[2].read_ios, 1);
        assert_eq!(s.intervals[2].lat_max_ns, 30);
    }
}
