//! fio's skewed random distributions (`random_distribution=zipf|pareto|normal`):
//! which block of a job's region a random I/O goes to, drawn as fio draws it
//! (lib/zipf.c, lib/gauss.c of fio 3.33), from the job's own random stream.
//! fio then scatters the block index by a multiplicative hash so that the hot
//! blocks are spread over the region, and shifts it by an offset (random, or
//! the distribution's centre). Powers go through `libm` so that a seed gives
//! the same blocks on every machine.

use crate::error::Result;
use crate::parse::werr;
use crate::rng::Rng;

/// fio's defaults when the value is left out (`zipf`, `pareto` alone).
const DEFAULT_ZIPF_THETA: f64 = 1.1;
const DEFAULT_PARETO_H: f64 = 0.2;
/// fio sums the zeta series over at most this many terms.
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's normal: the mean of this many uniform draws.
const GAUSS_ITERS: u64 = 12;
/// fio's `__hash_u64`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// A skewed distribution and its optional centre (0..=1 of the region).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skew {
    pub kind: SkewKind,
    pub center: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SkewKind {
    /// Zipf with exponent theta (not 1).
    Zipf(f64),
    /// Pareto with power h in (0, 1).
    Pareto(f64),
    /// Normal with a deviation in percent of the region, 0..100.
    Normal(f64),
}

impl Skew {
    /// `zipf[:THETA[:CENTER]]`, `pareto[:H[:CENTER]]`, `normal[:DEV[:CENTER]]`;
    /// None for any other distribution.
    pub fn parse(text: &str) -> Result<Option<Skew>> {
        let t = text.trim();
        let mut parts = t.split(':');
        let name = parts.next().unwrap_or("");
        let (default, what) = match name {
            "zipf" => (DEFAULT_ZIPF_THETA, "a zipf theta"),
            "pareto" => (DEFAULT_PARETO_H, "a pareto power"),
            "normal" => (0.0, "a normal deviation (percent)"),
            _ => return Ok(None),
        };
        let num = |s: Option<&str>, what: &str| -> Result<Option<f64>> {
            match s.map(str::trim) {
                None | Some("") => Ok(None),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| werr("random_distribution", format!("'{t}': '{v}' is not {what}"))),
            }
        };
        let value = num(parts.next(), what)?.unwrap_or(default);
        let center = num(parts.next(), "a centre between 0 and 1")?;
        if parts.next().is_some() {
            return Err(werr("random_distribution", format!("'{t}': at most a value and a centre follow '{name}'")));
        }
        if let Some(c) = center {
            if !(0.0..=1.0).contains(&c) {
                return Err(werr("random_distribution", format!("'{t}': the centre {c} is outside 0..1 (as fio requires)")));
            }
        }
        let kind = match name {
            "zipf" if value == 1.0 || value <= 0.0 => {
                return Err(werr("random_distribution", format!("'{t}': a zipf theta above 0 (fio refuses 1)")));
            }
            "zipf" => SkewKind::Zipf(value),
            "pareto" if value <= 0.0 || value >= 1.0 => {
                return Err(werr("random_distribution", format!("'{t}': a pareto power between 0 and 1, exclusive (as fio requires)")));
            }
            "pareto" => SkewKind::Pareto(value),
            _ if !(0.0..100.0).contains(&value) => {
                return Err(werr(
                    "random_distribution",
                    format!("'{t}': a normal deviation of 0 up to 100 percent, 100 excluded (as fio requires)"),
                ));
            }
            _ => SkewKind::Normal(value),
        };
        Ok(Some(Skew { kind, center }))
    }

    /// The fio text of this distribution (the normalised job).
    pub fn text(&self) -> String {
        let (name, v) = match self.kind {
            SkewKind::Zipf(v) => ("zipf", v),
            SkewKind::Pareto(v) => ("pareto", v),
            SkewKind::Normal(v) => ("normal", v),
        };
        match self.center {
            Some(c) => format!("{name}:{v}:{c}"),
            None => format!("{name}:{v}"),
        }
    }
}

/// A skewed draw over `nranges` blocks, ready to draw.
#[derive(Clone, Debug)]
pub struct SkewGen {
    kind: SkewKind,
    nranges: u64,
    rand_off: u64,
    /// Zipf: the zeta sums over 2 and over n terms.
    zeta2: f64,
    zetan: f64,
    /// Pareto: ln(h) / ln(1 - h).
    pareto_pow: f64,
    /// Normal: the deviation in blocks.
    stddev: u64,
}

/// A uniform draw in [0, 1] as fio's 32-bit generator gives it.
#[inline]
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 32) as f64 / u32::MAX as f64
}

impl SkewGen {
    pub fn new(skew: Skew, nranges: u64, rng: &mut Rng) -> SkewGen {
        let n = nranges.max(1);
        // fio: a random offset unless a centre is given (for the normal
        // distribution the centre shifts from the middle).
        let random_off = rng.next_u64() >> 32;
        let rand_off = match (skew.kind, skew.center) {
            (SkewKind::Normal(_), None) => 0,
            (SkewKind::Normal(_), Some(c)) => (n as f64 * (c - 0.5)) as i64 as u64,
            (_, None) => random_off,
            (_, Some(c)) => (n as f64 * c) as u64,
        };
        let mut g = SkewGen { kind: skew.kind, nranges: n, rand_off, zeta2: 0.0, zetan: 0.0, pareto_pow: 0.0, stddev: 0 };
        match skew.kind {
            SkewKind::Zipf(theta) => {
                g.zeta2 = 1.0 + libm::pow(0.5, theta);
                g.zetan = (0..n.min(ZIPF_MAX_GEN)).map(|i| libm::pow(1.0 / (i + 1) as f64, theta)).sum();
            }
            SkewKind::Pareto(h) => g.pareto_pow = libm::log(h) / libm::log(1.0 - h),
            SkewKind::Normal(dev) => {
                if dev != 0.0 {
                    g.stddev = libm::ceil(n as f64 * dev / 100.0) as u64;
                    g.stddev = g.stddev.min(n / 2);
                }
            }
        }
        g
    }

    /// The next block index, 0..nranges.
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let n = self.nranges;
        let val = match self.kind {
            SkewKind::Zipf(theta) => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - libm::pow(2.0 / n as f64, 1.0 - theta)) / (1.0 - self.zeta2 / self.zetan);
                let u = unit(rng);
                let z = u * self.zetan;
                let v = if z < 1.0 {
                    1
                } else if z < 1.0 + libm::pow(0.5, theta) {
                    2
                } else {
                    1 + (n as f64 * libm::pow(eta * u - eta + 1.0, alpha)) as u64
                };
                v - 1
            }
            SkewKind::Pareto(_) => ((n - 1) as f64 * libm::pow(unit(rng), self.pareto_pow)) as u64,
            SkewKind::Normal(_) => {
                let mut sum = 0u64;
                for _ in 0..GAUSS_ITERS {
                    sum += rng.next_u64() % (n + 1);
                }
                sum = sum.div_ceil(GAUSS_ITERS);
                if self.stddev > 0 {
                    let r = (rng.next_u64() >> 32) as f64;
                    let mut dev = (self.stddev as f64 * (r / (u32::MAX as f64 + 1.0))) as i64 - (self.stddev / 2) as i64;
                    while dev + sum as i64 >= n as i64 {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev).max(0) as u64;
                }
                sum
            }
        };
        val.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(self.rand_off) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(text: &str, n: u64, draws: usize) -> Vec<u64> {
        let skew = Skew::parse(text).unwrap().unwrap();
        let mut rng = Rng::new(7);
        let mut g = SkewGen::new(skew, n, &mut rng);
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[g.next(&mut rng) as usize] += 1;
        }
        c
    }

    /// Share of the draws that land on the hottest `k` blocks.
    fn top_share(c: &[u64], k: usize) -> f64 {
        let mut s = c.to_vec();
        s.sort_unstable_by(|a, b| b.cmp(a));
        s[..k].iter().sum::<u64>() as f64 / c.iter().sum::<u64>() as f64
    }

    #[test]
    fn zipf_and_pareto_concentrate_the_accesses_as_their_parameter_says() {
        let n = 10_000;
        let uniform = 100.0 / n as f64;
        let z12 = top_share(&counts("zipf:1.2", n, 200_000), 100);
        let z08 = top_share(&counts("zipf:0.8", n, 200_000), 100);
        // pareto:0.9 is the 90/10 rule: nine draws in ten to a tenth of the blocks
        let p09 = top_share(&counts("pareto:0.9", n, 200_000), 1_000);
        // the hottest 1% of the blocks take far more than 1% of the draws,
        // and a larger theta concentrates more
        assert!(z12 > 0.5 && z12 > z08 && z08 > 5.0 * uniform, "{z12} {z08}");
        assert!((0.87..0.93).contains(&p09), "{p09}");
    }

    #[test]
    fn a_normal_distribution_is_spread_by_its_deviation_and_every_draw_is_in_range() {
        let n = 10_000;
        let narrow = top_share(&counts("normal:0", n, 200_000), 2_000);
        let wide = top_share(&counts("normal:90", n, 200_000), 2_000);
        assert!(narrow > wide && narrow > 0.6, "{narrow} {wide}");
        assert_eq!(counts("normal:50:0.1", 7, 1000).iter().sum::<u64>(), 1000);
    }

    #[test]
    fn fios_limits_are_errors_naming_the_option() {
        for bad in ["zipf:1", "zipf:-2", "pareto:1.5", "normal:100", "zipf:1.2:1.5", "zipf:x", "pareto:0.5:0.5:1"] {
            let e = Skew::parse(bad).unwrap_err().to_string();
            assert!(e.contains("random_distribution"), "{bad}: {e}");
        }
        assert_eq!(Skew::parse("zipf").unwrap().unwrap().kind, SkewKind::Zipf(1.1));
        assert_eq!(Skew::parse("zoned:50/50:50/50").unwrap(), None);
    }
}
