//! The streaming generator: each record drawn from small decks sampled
//! without replacement (direction, size class, sequential runs, placement),
//! then timed; flat memory, integer arithmetic only.

use super::sizes::{build_classes, Class, MAX_CLASSES};
use super::specs::{spec, Spec, APPEND, HOT, NEAR, READBACK};
use super::timing::Timing;
use super::{table_mean, StorageBench, BLOCK, KB, SECTOR};
use crate::pattern::DataPattern;
use crate::rng::{mix64, Rng};
use crate::trace::{TraceOp, TraceRecord};

/// Run-length multipliers (permille of the needed mean) and weights: many
/// isolated I/Os, some long streams.
const RUN_MULT: &[(u64, u32)] = &[(0, 30), (250, 15), (500, 15), (1000, 14), (2000, 12), (4000, 9), (8000, 5)];
const RUN_MULT_MEAN: u64 = table_mean(RUN_MULT);

#[derive(Clone, Debug)]
struct Dir {
    classes: Vec<Class>,
    rem_ops: u64,
    rem_seq: u64,
    run_left: u64,
    cur_class: usize,
    /// End of this direction's previous I/O.
    prev_end: Option<u64>,
    data_pattern: DataPattern,
}

const RECENT: usize = 64;
const WRITTEN: usize = 1024;
const HOT_SPOTS: u64 = 16384;

/// Service time of the recording system's drive (ns), before queueing.
#[inline]
fn service_ns(op: TraceOp, len: u64) -> u64 {
    match op {
        TraceOp::Read => 60_000 + len * 7 / 2,
        _ => 40_000 + len * 5,
    }
}

/// A streaming Storage Bench trace: yields exactly
/// [`StorageBench::records`] records in issue order.
#[derive(Clone, Debug)]
pub struct Generator {
    spec: &'static Spec,
    capacity: u64,
    rng: Rng,
    dirs: [Dir; 2],
    last_dir: usize,
    timing: Timing,
    recent: [u64; RECENT],
    n_recent: u64,
    written: [(u64, u64); WRITTEN],
    n_written: u64,
    cursor: u64,
    hot_end_block: u64,
    hot_seed: u64,
    left: u64,
}

/// The smallest drive a Storage Bench trace can be generated for.
pub const MIN_CAPACITY_BYTES: u64 = 1_000_000_000;

/// A streaming generator for trace `w` on a drive of `capacity_bytes`
/// (at least [`MIN_CAPACITY_BYTES`]), from `seed`. Panics on a smaller drive:
/// use [`try_generate`] for input that is not known to be valid.
pub fn generate(w: StorageBench, capacity_bytes: u64, seed: u64) -> Generator {
    Generator::new(w, capacity_bytes, seed)
}

/// [`generate`], with a smaller drive refused as a workload error.
pub fn try_generate(w: StorageBench, capacity_bytes: u64, seed: u64) -> crate::Result<Generator> {
    if capacity_bytes < MIN_CAPACITY_BYTES {
        return Err(crate::SimError::workload(
            "capacity_bytes",
            format!("{capacity_bytes} B: Storage Bench traces need a drive of at least 1 GB ({MIN_CAPACITY_BYTES} B)"),
        ));
    }
    Ok(Generator::new(w, capacity_bytes, seed))
}

impl Generator {
    pub fn new(w: StorageBench, capacity_bytes: u64, seed: u64) -> Generator {
        assert!(capacity_bytes >= MIN_CAPACITY_BYTES, "Storage Bench traces need a drive of at least 1 GB");
        let s = spec(w);
        let total = s.reads + s.writes;
        let seq_total = total * s.seq_bp / 10_000;
        let seq_w = s.writes * s.write_seq_bp / 10_000;
        let seq_r = seq_total - seq_w;
        assert!(seq_r < s.reads && seq_w < s.writes);
        let mk = |d: usize, n: u64, seq: u64| Dir {
            classes: build_classes(s, d),
            rem_ops: n,
            rem_seq: seq,
            run_left: 0,
            cur_class: 0,
            prev_end: None,
            data_pattern: DataPattern::Incompressible,
        };
        let mut rng = Rng::new(seed ^ mix64(w as u64 + 1));
        let hot_seed = rng.next_u64();
        let blocks = capacity_bytes / BLOCK;
        let hot_end_block = blocks * s.hot_permille / 1000;
        Generator {
            spec: s,
            capacity: capacity_bytes,
            rng,
            dirs: [mk(0, s.reads, seq_r), mk(1, s.writes, seq_w)],
            last_dir: 0,
            timing: Timing::new(s),
            recent: [0; RECENT],
            n_recent: 0,
            written: [(0, 0); WRITTEN],
            n_written: 0,
            cursor: hot_end_block * BLOCK,
            hot_end_block,
            hot_seed,
            left: total,
        }
    }

    /// A size class, weighted by remaining count; at a run start also divided
    /// by the class's expected run length, so classes deplete evenly.
    fn pick_class(&mut self, d: usize, run_start: bool) -> usize {
        let dir = &self.dirs[d];
        let rem_runs = dir.rem_ops.saturating_sub(dir.rem_seq).max(1);
        let m_milli = dir.rem_seq * 1000 / rem_runs;
        let mut weights = [0u64; MAX_CLASSES];
        let mut total = 0;
        for (w, c) in weights.iter_mut().zip(&dir.classes) {
            *w = if run_start && c.remaining > 0 { c.remaining * (1 << 20) / (1000 + m_milli * c.run_factor / 100) } else { c.remaining };
            total += *w;
        }
        let mut r = self.rng.below(total);
        let mut last = 0;
        for (i, &w) in weights[..dir.classes.len()].iter().enumerate() {
            if w > 0 {
                last = i;
                if r < w {
                    return i;
                }
                r -= w;
            }
        }
        last
    }

    /// Fit a start offset so the transfer ends inside the drive.
    #[inline]
    fn fit(&self, off: u64, len: u64) -> u64 {
        if off + len <= self.capacity {
            off
        } else {
            (self.capacity - len) / SECTOR * SECTOR
        }
    }

    fn place(&mut self, d: usize, len: u64) -> u64 {
        let blocks = self.capacity / BLOCK;
        let s = self.spec;
        let loc = if d == 0 { &s.read_loc } else { &s.write_loc };
        let kind = loc[self.rng.weighted(loc)].0;
        let block = match (d, kind) {
            (_, HOT) => self.hot_block(),
            (0, READBACK) => {
                if self.n_written == 0 {
                    self.hot_block()
                } else {
                    let k = self.n_written.min(WRITTEN as u64);
                    let (off, l) = self.written[((self.n_written - 1 - self.rng.below(k)) % WRITTEN as u64) as usize];
                    let within = if self.rng.chance(1, 2) { 0 } else { self.rng.below(l / BLOCK + 1) };
                    off / BLOCK + within
                }
            }
            (_, APPEND) => self.cursor / BLOCK,
            (_, NEAR) => {
                let base = self.recent[self.rng.below(self.n_recent.clamp(1, RECENT as u64)) as usize] / BLOCK;
                let span = if self.rng.chance(3, 4) { 512 } else { 32768 };
                let delta = self.rng.below(span) + 1;
                if self.rng.chance(1, 2) {
                    base.saturating_sub(delta)
                } else {
                    base + delta
                }
            }
            _ => self.rng.below(blocks),
        };
        let mut off = (block % blocks) * BLOCK;
        if !len.is_multiple_of(BLOCK) && self.rng.chance(1, 2) {
            off += self.rng.below(BLOCK / SECTOR) * SECTOR;
        }
        off = self.fit(off, len);
        if Some(off) == self.dirs[d].prev_end {
            // Not sequential by construction.
            off = if off >= BLOCK { off - BLOCK } else { off + BLOCK };
        }
        off
    }

    #[inline]
    fn hot_block(&mut self) -> u64 {
        // Skewed popularity: index i is chosen with probability ~ log(K/i).
        let j = self.rng.below(HOT_SPOTS) + 1;
        let i = self.rng.below(j);
        let spot = mix64(self.hot_seed ^ i) % self.hot_end_block.max(1);
        spot + self.rng.below(64)
    }

    fn pattern_for(&mut self, nominal: u64) -> DataPattern {
        let t = if nominal < 32 * KB { self.spec.small_patterns } else { self.spec.large_patterns };
        t[self.rng.weighted(t)].0
    }

    /// Begin a new run in direction `d` with class `c` and first size `len`.
    fn start_run(&mut self, d: usize, c: usize, len: u64) -> u64 {
        let (k, nominal) = {
            let dir = &self.dirs[d];
            let rem_runs = dir.rem_ops.saturating_sub(dir.rem_seq);
            let cls = &dir.classes[c];
            let k = if rem_runs <= 1 {
                dir.rem_seq
            } else {
                let m_milli = dir.rem_seq * 1000 / rem_runs;
                let mult = RUN_MULT[self.rng.weighted(RUN_MULT)].0;
                let x = m_milli * cls.run_factor * mult / (100 * RUN_MULT_MEAN);
                (x / 1000 + (self.rng.below(1000) < x % 1000) as u64).min(dir.rem_seq)
            };
            (k, cls.nominal)
        };
        let off = self.place(d, len);
        if d == 1 {
            self.dirs[1].data_pattern = self.pattern_for(nominal);
            let run_bytes = ((k + 1) * len).min(256 << 20);
            self.written[(self.n_written % WRITTEN as u64) as usize] = (off, run_bytes);
            self.n_written += 1;
            if off == self.cursor {
                let gap = self.rng.below(16) * BLOCK;
                self.cursor = off + run_bytes + gap;
                if self.cursor + (1 << 20) >= self.capacity {
                    self.cursor = self.hot_end_block * BLOCK;
                }
            }
        }
        self.dirs[d].run_left = k;
        self.dirs[d].cur_class = c;
        off
    }
}

impl Iterator for Generator {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Direction: sticky, else by the remaining counts.
        let (rr, rw) = (self.dirs[0].rem_ops, self.dirs[1].rem_ops);
        let d = if self.dirs[self.last_dir].rem_ops > 0 && self.rng.chance(self.spec.stick_permille, 1000) {
            self.last_dir
        } else if self.rng.below(rr + rw) < rr {
            0
        } else {
            1
        };
        self.last_dir = d;

        let (len, off) = if self.dirs[d].run_left > 0 {
            let cur = self.dirs[d].cur_class;
            let c = if self.dirs[d].classes[cur].remaining > 0 { cur } else { self.pick_class(d, false) };
            let len = self.dirs[d].classes[c].draw(&mut self.rng);
            let next = self.dirs[d].prev_end.unwrap_or(0);
            if next + len <= self.capacity {
                let dir = &mut self.dirs[d];
                dir.run_left -= 1;
                dir.rem_seq -= 1;
                dir.cur_class = c;
                (len, next)
            } else {
                // The stream ran into the end of the drive: start afresh.
                self.dirs[d].run_left = 0;
                let off = self.start_run(d, c, len);
                (len, off)
            }
        } else {
            let c = self.pick_class(d, true);
            let len = self.dirs[d].classes[c].draw(&mut self.rng);
            let off = self.start_run(d, c, len);
            (len, off)
        };
        let dir = &mut self.dirs[d];
        dir.rem_ops -= 1;
        dir.prev_end = Some(off + len);
        let data_pattern = dir.data_pattern;
        self.recent[(self.n_recent % RECENT as u64) as usize] = off;
        self.n_recent += 1;

        let op = if d == 0 { TraceOp::Read } else { TraceOp::Write };
        let (time_ns, iodepth, lat) = self.timing.next(&mut self.rng, service_ns(op, len));
        Some(TraceRecord {
            time_ns,
            op,
            offset_bytes: off,
            length_bytes: len,
            data_pattern: if d == 1 { data_pattern } else { DataPattern::Incompressible },
            iodepth,
            recorded_latency_ns: lat,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Generator {}
