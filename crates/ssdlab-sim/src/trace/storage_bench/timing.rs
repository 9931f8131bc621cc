//! Issue times and iodepth: episodes separated by idle gaps, either QD1
//! chains or bursts (ramp, steady depth, drain), steered by feedback
//! controllers onto the published iodepth mean, QD1 share and duration.

use super::specs::Spec;
use super::{table_mean, NS_PER_S};
use crate::rng::Rng;

/// Bursts: ramp inter-arrival bound (ns).
const IA_MAX: u64 = 8_000;
const MAX_QD: usize = 32;

const CHAIN_LEN: &[(u64, u32)] = &[(1, 25), (2, 15), (3, 10), (5, 15), (8, 12), (16, 10), (32, 8), (64, 5)];
const P_MULT: &[(u64, u32)] = &[(500, 20), (750, 25), (1000, 25), (1500, 20), (2000, 10)];
const STEADY_MULT: &[(u64, u32)] = &[(0, 20), (500, 20), (1000, 20), (2000, 20), (4000, 20)];
/// Idle-gap multipliers (permille of the mean gap): mostly short pauses, a few
/// long idle periods.
const GAP_MULT: &[(u64, u32)] = &[(50, 40), (200, 25), (600, 15), (1500, 10), (4000, 7), (12000, 3)];
const GAP_MULT_MEAN: u64 = table_mean(GAP_MULT);

#[derive(Clone, Copy, Debug)]
enum Episode {
    None,
    Chain { left: u64 },
    Ramp { i: u64, p: u64, steady: u64 },
    Steady { p: u64, left: u64 },
}

#[derive(Clone, Debug)]
pub(super) struct Timing {
    out: [u64; MAX_QD + 8],
    n_out: usize,
    last_issue: u64,
    max_completion: u64,
    episode: Episode,
    episodes: u64,
    idle_total: u64,
    emitted: u64,
    q1: u64,
    qd_sum: u64,
    /// Burst-depth gain (permille), adapted to hit the average depth.
    gain: u64,
    total: u64,
    iodepth_mean_e4: u64,
    iodepth1_bp: u64,
    non1_target_milli: u64,
    duration_ns: u64,
}

impl Timing {
    pub(super) fn new(s: &Spec) -> Timing {
        Timing {
            out: [0; MAX_QD + 8],
            n_out: 0,
            last_issue: 0,
            max_completion: 0,
            episode: Episode::None,
            episodes: 0,
            idle_total: 0,
            emitted: 0,
            q1: 0,
            qd_sum: 0,
            gain: 1000,
            total: s.reads + s.writes,
            iodepth_mean_e4: s.iodepth_mean_e4,
            iodepth1_bp: s.iodepth1_bp,
            non1_target_milli: (s.iodepth_mean_e4 - s.iodepth1_bp) * 1000 / (10_000 - s.iodepth1_bp),
            duration_ns: s.duration_s * NS_PER_S,
        }
    }

    fn idle_gap(&mut self, rng: &mut Rng) -> u64 {
        let remaining = self.total - self.emitted;
        let nonidle = self.max_completion.saturating_sub(self.idle_total);
        let est_nonidle = (nonidle as u128 * remaining as u128 / self.emitted.max(1) as u128) as u64;
        let est_eps = remaining * self.episodes / self.emitted.max(1) + 1;
        let budget = self.duration_ns.saturating_sub(self.max_completion).saturating_sub(est_nonidle);
        let mean = budget / est_eps;
        let m = pick(GAP_MULT, rng);
        let gap = (mean as u128 * m as u128 / GAP_MULT_MEAN as u128) as u64;
        let gap = gap.max(1_000 + rng.below(1_000));
        self.idle_total += gap;
        gap
    }

    fn start_episode(&mut self, rng: &mut Rng) -> u64 {
        let t0 = if self.emitted == 0 { 0 } else { self.max_completion + self.idle_gap(rng) };
        self.episodes += 1;
        let want_chain = self.q1 * 10_000 < self.iodepth1_bp * self.emitted;
        let chain = if want_chain { rng.chance(15, 16) } else { rng.chance(1, 4) };
        if chain {
            let v = pick(CHAIN_LEN, rng);
            let n = (v * (500 + rng.below(1000)) / 1000).clamp(1, ((self.total - self.emitted) / 4).max(1));
            self.episode = Episode::Chain { left: n };
        } else {
            // Integral control of the burst depth on the running average.
            if self.qd_sum * 10_000 < self.iodepth_mean_e4 * self.emitted {
                self.gain = (self.gain * 1020 / 1000).min(4000);
            } else {
                self.gain = (self.gain * 980 / 1000).max(300);
            }
            // Plus a proportional term that works off the running deficit
            // (in milli-QD summed over records) within about two bursts.
            let base = (self.non1_target_milli * self.gain / 1000) as i128;
            let deficit_milli = (self.iodepth_mean_e4 as i128 * self.emitted as i128 - self.qd_sum as i128 * 10_000) / 10;
            let burst_len = 3 * self.non1_target_milli as i128 / 1000 + 1;
            let center = (base + deficit_milli / (2 * burst_len)).clamp(1_500, 32_000) as u64;
            let m = pick(P_MULT, rng);
            let p = ((center * m + 500_000) / 1_000_000).clamp(2, MAX_QD as u64);
            let sm = pick(STEADY_MULT, rng);
            let remaining = self.total - self.emitted;
            let steady = (p * sm / 1000 + rng.below(p)).min(remaining / 4);
            self.episode = Episode::Ramp { i: 1, p, steady };
        }
        t0
    }

    #[inline]
    fn min_out(&self) -> u64 {
        let mut m = u64::MAX;
        for &c in &self.out[..self.n_out] {
            m = m.min(c);
        }
        m
    }

    #[inline]
    fn retire(&mut self, t: u64) {
        let mut i = 0;
        while i < self.n_out {
            if self.out[i] <= t {
                self.n_out -= 1;
                self.out[i] = self.out[self.n_out];
            } else {
                i += 1;
            }
        }
    }

    /// Issue time, iodepth and latency of the next I/O.
    pub(super) fn next(&mut self, rng: &mut Rng, service: u64) -> (u64, u16, u64) {
        let fresh = matches!(self.episode, Episode::None);
        let t0 = if fresh { Some(self.start_episode(rng)) } else { None };
        let jitter = |rng: &mut Rng, x: u64| x * (750 + rng.below(500)) / 1000;
        let (t, lat, next) = match self.episode {
            Episode::None => unreachable!(),
            Episode::Chain { left } => {
                let t = match t0 {
                    Some(t) => t,
                    None => {
                        let think = match rng.below(20) {
                            0 => rng.below(5_000_000),
                            1..=5 => rng.below(500_000),
                            _ => rng.below(50_000),
                        };
                        self.max_completion + 2_000 + think
                    }
                };
                let lat = jitter(rng, service).max(1);
                let next = if left > 1 { Episode::Chain { left: left - 1 } } else { Episode::None };
                (t, lat, next)
            }
            Episode::Ramp { i, p, steady } => {
                let t = match t0 {
                    Some(t) => t,
                    None => self.last_issue + 1 + rng.below(IA_MAX),
                };
                let lat = (p - i) * IA_MAX + jitter(rng, service * (3 + p) / 4);
                let next = if i < p {
                    Episode::Ramp { i: i + 1, p, steady }
                } else if steady > 0 {
                    Episode::Steady { p, left: steady }
                } else {
                    Episode::None
                };
                (t, lat, next)
            }
            Episode::Steady { p, left } => {
                let t = self.min_out();
                let lat = jitter(rng, service * (3 + p) / 4).max(1);
                let next = if left > 1 { Episode::Steady { p, left: left - 1 } } else { Episode::None };
                (t, lat, next)
            }
        };
        self.episode = next;
        self.retire(t);
        if self.n_out == self.out.len() {
            // Cannot happen (depth <= 32); keep the bound regardless.
            let m = self.min_out();
            self.retire(m);
        }
        let qd = self.n_out as u64 + 1;
        self.out[self.n_out] = t + lat;
        self.n_out += 1;
        self.last_issue = t;
        self.max_completion = self.max_completion.max(t + lat);
        self.emitted += 1;
        self.qd_sum += qd;
        if qd == 1 {
            self.q1 += 1;
        }
        (t, qd as u16, lat)
    }
}

/// Weighted pick from a (value, weight) table.
#[inline]
fn pick(table: &[(u64, u32)], rng: &mut Rng) -> u64 {
    table[rng.weighted(table)].0
}
