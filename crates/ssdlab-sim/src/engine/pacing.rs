//! fio's ways of pacing a job's issuing, as fio 3.33 does them: the poisson
//! rate process, flows (token balancing between jobs of one `flow_id`) and
//! the latency-target search for the deepest queue meeting a latency.

use crate::rng::Rng;
use crate::workload::Workload;

/// `-ln(u)` for `u` in (0, 1] from IEEE basic operations only (exact
/// exponent split, then the atanh series of the mantissa), so that the same
/// seed gives the same gaps on every machine, unlike the platform's `ln`.
pub(super) fn neg_ln(u: f64) -> f64 {
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
pub(super) struct Poisson {
    pub(super) rng: Rng,
    pub(super) mean_us: u64,
    pub(super) due_ns: u64,
}

impl Poisson {
    pub(super) fn new(w: &Workload, seed: u64) -> Option<Poisson> {
        if !w.rate_poisson {
            return None;
        }
        let min_bs = w.sizes.iter().chain(&w.write_sizes).map(|x| x.0).min().unwrap_or(4096);
        let iops = if w.rate_bytes_per_s > 0 { w.rate_bytes_per_s / min_bs } else { w.rate_iops };
        Some(Poisson { rng: Rng::fork(w.randseed.unwrap_or(seed), "poisson-rate"), mean_us: 1_000_000 / iops.max(1), due_ns: 0 })
    }

    pub(super) fn advance(&mut self) {
        let u = ((self.rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        let gap_us = (self.mean_us as f64 * neg_ln(u)) as u64;
        self.due_ns = self.due_ns.saturating_add(gap_us.saturating_mul(1000));
    }
}

/// A flow of fio's token-based balancing: every member's I/Os issued, plus
/// one (fio's counter starts at 1), and the weights of the members still
/// running.
pub(super) struct Flow {
    pub(super) counter: u64,
    pub(super) total_weight: u64,
}

/// Why a submitter waits for its in-flight I/O to drain (fio's
/// `io_u_quiesce`) before going on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Quiesce {
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
pub(super) struct LatencySearch {
    pub(super) qd: u32,
    pub(super) high: u32,
    pub(super) low: u32,
    pub(super) stable: u32,
    pub(super) window_start_ns: u64,
    pub(super) completed: u64,
    pub(super) window_first: u64,
    pub(super) failed: u64,
    pub(super) end_run: bool,
}

/// What a window that met the target leads to.
pub(super) enum Verdict {
    /// Keep searching at the new depth.
    Continue,
    /// The depth settled: one more window at it, from fresh statistics.
    FinalRun,
    /// The final window at the settled depth met the target too: stop.
    Done,
}

impl LatencySearch {
    /// fio starts at depth 1 and may go up to `iodepth`.
    pub(super) fn new(iodepth: u32, t: u64) -> LatencySearch {
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

    pub(super) fn new_window(&mut self, t: u64) {
        self.window_start_ns = t;
        self.window_first = self.completed;
        self.failed = 0;
    }

    /// A window (or, at percentile 100, one I/O) missed the target: halve
    /// towards the lowest depth that met it. False at depth 1: nothing lower.
    pub(super) fn ramp_down(&mut self) -> bool {
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
    pub(super) fn success(&mut self, iodepth: u32, latency_run: bool) -> Verdict {
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
