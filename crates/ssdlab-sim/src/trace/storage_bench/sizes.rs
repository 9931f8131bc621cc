//! Size classes: per direction, an exact count per named size, and two
//! "flex" classes (`<4KB` and `other`) with an exact count and byte total
//! whose draws are steered so the total comes out to the byte.
//!
//! Named size classes (exact sizes, counts of all operations in basis points,
//! and the share of each that are writes) are in each trace's spec (`specs`);
//! published ones are matched exactly, unlisted remainders are chosen (see
//! each spec's doc). The `<4KB` class draws from 512B..3.5KB (mostly 512B
//! and 1KB: NTFS metadata records, small registry and log writes). The `other`
//! class draws odd sizes that are not any named bucket: 4.5KB, 5KB, 6KB, 7KB,
//! 10KB, 14KB, 20KB, 28KB, 36KB, 40KB, 48KB, 56KB, 60KB, 96KB, 192KB, 256KB,
//! 512KB and 1MB, weighted towards the small odd sizes and balanced so the
//! bucket's byte total is exact: where the published bytes leave the `other`
//! class little room (Heavy 2011), it is nearly all 4.5-7KB odd sizes with a
//! few large transfers; where they demand large transfers (The Destroyer's
//! writes), 256KB-1MB dominate.

use super::specs::Spec;
use super::{BLOCK, KB, SECTOR, U4};
use crate::rng::Rng;
use crate::trace::stats::SizeBucket;

/// Upper bound on size classes per direction.
pub(super) const MAX_CLASSES: usize = 16;

const UNDER4K_SIZES: &[(u64, u32)] = &[(512, 30), (1024, 30), (1536, 6), (2048, 12), (2560, 4), (3072, 8), (3584, 10)];

const OTHER_SIZES: &[(u64, u32)] = &[
    (4608, 5),
    (5120, 8),
    (6144, 8),
    (7168, 6),
    (10 * KB, 8),
    (14 * KB, 5),
    (20 * KB, 8),
    (28 * KB, 6),
    (36 * KB, 3),
    (40 * KB, 4),
    (48 * KB, 5),
    (56 * KB, 3),
    (60 * KB, 3),
    (96 * KB, 4),
    (192 * KB, 3),
    (256 * KB, 5),
    (512 * KB, 4),
    (1024 * KB, 3),
];

/// A class of variable sizes with an exact count and byte total.
#[derive(Clone, Debug)]
struct Flex {
    n: u64,
    bytes: u64,
    sizes: &'static [(u64, u32)],
    min: u64,
    max: u64,
    other: bool,
}

impl Flex {
    fn new(n: u64, bytes: u64, sizes: &'static [(u64, u32)], other: bool) -> Flex {
        let min = sizes.iter().map(|x| x.0).min().unwrap();
        let max = sizes.iter().map(|x| x.0).max().unwrap();
        let bytes = if n == 0 { 0 } else { bytes / SECTOR * SECTOR };
        assert!(
            n == 0 || (bytes >= n * min && bytes <= n * max),
            "size class infeasible: {n} transfers totalling {bytes} bytes ({} on average) with sizes {min}..{max}",
            bytes.checked_div(n).unwrap_or(0)
        );
        Flex { n, bytes, sizes, min, max, other }
    }

    /// Is `s` a size this class may produce (a multiple of 512 in the class's
    /// bucket)?
    fn valid(&self, s: u64) -> bool {
        s.is_multiple_of(SECTOR) && s >= SECTOR && if self.other { s > BLOCK && SizeBucket::of(s) == SizeBucket::Other } else { s < BLOCK }
    }

    /// A size drawn so that the mean of the remaining draws stays on target.
    fn balanced(&self, rng: &mut Rng) -> u64 {
        let a = self.bytes / self.n;
        let (mut wl, mut sl, mut wh, mut sh) = (0u128, 0u128, 0u128, 0u128);
        for &(s, w) in self.sizes {
            if s <= a {
                wl += w as u128;
                sl += w as u128 * s as u128;
            } else {
                wh += w as u128;
                sh += w as u128 * s as u128;
            }
        }
        let high = if wl == 0 {
            true
        } else if wh == 0 {
            false
        } else {
            // P(high) = (a - mean_low) / (mean_high - mean_low)
            let num = (a as u128 * wl - sl) * wh;
            let den = sh * wl - sl * wh;
            rng.chance((num * (1u128 << 32) / den) as u64, 1 << 32)
        };
        let total: u64 = self.sizes.iter().filter(|x| (x.0 > a) == high).map(|x| x.1 as u64).sum();
        let mut r = rng.below(total);
        for &(s, w) in self.sizes {
            if (s > a) == high {
                if r < w as u64 {
                    return s;
                }
                r -= w as u64;
            }
        }
        unreachable!()
    }

    fn draw(&mut self, rng: &mut Rng) -> u64 {
        debug_assert!(self.n > 0);
        let s = if self.n == 1 {
            self.bytes
        } else {
            let c = self.balanced(rng);
            let rest = self.n - 1;
            let lo = self.bytes.saturating_sub(rest * self.max).max(self.min);
            let hi = self.bytes.saturating_sub(rest * self.min).min(self.max).max(lo);
            let c = c.clamp(lo, hi);
            let ok = |s: u64| self.valid(s) && (rest > 1 || self.valid(self.bytes - s));
            if ok(c) {
                c
            } else {
                // Nudge to the nearest size that keeps the rest feasible.
                let mut found = c;
                let mut d = SECTOR;
                while d <= self.max {
                    if c + d <= hi && ok(c + d) {
                        found = c + d;
                        break;
                    }
                    if c >= lo + d && ok(c - d) {
                        found = c - d;
                        break;
                    }
                    d += SECTOR;
                }
                found
            }
        };
        self.n -= 1;
        self.bytes -= s;
        s
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Fixed(u64),
    Flex(Flex),
}

#[derive(Clone, Debug)]
pub(super) struct Class {
    kind: Kind,
    pub(super) remaining: u64,
    /// Run-length multiplier, hundredths (large transfers stream longer).
    pub(super) run_factor: u64,
    /// Nominal size, for the pattern choice and run factor.
    pub(super) nominal: u64,
}

impl Class {
    #[inline]
    pub(super) fn draw(&mut self, rng: &mut Rng) -> u64 {
        self.remaining -= 1;
        match &mut self.kind {
            Kind::Fixed(s) => *s,
            Kind::Flex(f) => f.draw(rng),
        }
    }
}

fn run_factor(size: u64) -> u64 {
    match size {
        0..=4095 => 30,
        4096 => 50,
        4097..=16384 => 80,
        16385..=32768 => 120,
        32769..=65536 => 200,
        _ => 300,
    }
}

/// Per-direction class tables with exact counts and bytes.
pub(super) fn build_classes(s: &Spec, dir: usize) -> Vec<Class> {
    let total = s.reads + s.writes;
    let n_dir = if dir == 0 { s.reads } else { s.writes };
    let bytes_target = if dir == 0 { s.read_bytes } else { s.write_bytes };
    let mut classes = Vec::new();
    let mut used_n = 0u64;
    let mut used_bytes = 0u64;
    for &(size, bp, wpm) in s.classes {
        let tot = total * bp as u64 / 10_000;
        let w = tot * wpm as u64 / 1000;
        let n = if dir == 0 { tot - w } else { w };
        used_n += n;
        let kind = if size == U4 {
            let b = n * s.under4k_avg[dir];
            used_bytes += b / SECTOR * SECTOR;
            Kind::Flex(Flex::new(n, b, UNDER4K_SIZES, false))
        } else {
            used_bytes += n * size;
            Kind::Fixed(size)
        };
        let nominal = if size == U4 { s.under4k_avg[dir] } else { size };
        classes.push(Class { kind, remaining: n, run_factor: run_factor(nominal), nominal });
    }
    assert!(used_n <= n_dir, "size classes exceed the direction's count");
    assert!(classes.len() < MAX_CLASSES);
    let n = n_dir - used_n;
    let bytes = match bytes_target {
        // Round the total to whole sectors (the published figure is rounded anyway).
        Some(b) => ((b + SECTOR / 2) / SECTOR * SECTOR).checked_sub(used_bytes).expect("named size classes exceed the byte total"),
        None => n * s.other_avg[dir],
    };
    let f = Flex::new(n, bytes, OTHER_SIZES, true);
    let nominal = bytes.checked_div(n).unwrap_or(0);
    classes.push(Class { kind: Kind::Flex(f), remaining: n, run_factor: 150, nominal });
    classes
}

#[cfg(test)]
mod tests {
    use super::super::specs::spec;
    use super::super::StorageBench;
    use super::*;

    #[test]
    fn class_tables_are_feasible_and_exact() {
        for w in StorageBench::ALL {
            let s = spec(w);
            for d in 0..2 {
                let cls = build_classes(s, d);
                let n: u64 = cls.iter().map(|c| c.remaining).sum();
                assert_eq!(n, if d == 0 { s.reads } else { s.writes }, "{w} dir {d}");
            }
        }
    }

    #[test]
    fn flex_hits_total_exactly() {
        let mut rng = Rng::new(7);
        let mut f = Flex::new(1000, 1000 * 6000, OTHER_SIZES, true);
        let want = f.bytes;
        let mut got = 0;
        for _ in 0..1000 {
            let s = f.draw(&mut rng);
            assert!(f.valid(s), "{s}");
            got += s;
        }
        assert_eq!(got, want);
        let mut f = Flex::new(333, 333 * 1536, UNDER4K_SIZES, false);
        let mut got = 0;
        for _ in 0..333 {
            let s = f.draw(&mut rng);
            assert!(s < 4096 && s.is_multiple_of(512));
            got += s;
        }
        assert_eq!(got, 333 * 1536);
    }
}
