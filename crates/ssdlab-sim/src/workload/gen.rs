//! The I/O generator of a workload: one I/O at a time, in fio's order and
//! with fio's draws (sizes, offsets, zones and skews, modifiers, loops).

use super::{Op, RwMode, Workload};
use crate::rng::Rng;
use crate::skew::SkewGen;

/// Generates the I/Os of a workload, one at a time.
#[derive(Clone, Debug)]
pub struct IoGen {
    rw: RwMode,
    sizes: Vec<(u64, u32)>,
    start: u64,
    len: u64,
    align: u64,
    cursor: u64,
    mix: u32,
    rng: Rng,
    bs_range: Option<(u64, u64)>,
    seq_add: i64,
    seq_nr: u64,
    /// I/Os still to follow the last random offset sequentially.
    seq_left: u64,
    /// End of the last random I/O (where a sequential follower starts).
    last_end: u64,
    /// The write that follows a trim of the same block (trimwrite).
    pending_write: Option<(u64, u64)>,
    /// Zones of a zoned distribution: (index, share) for the draw, and each
    /// zone's (start, length) within the region.
    zone_weights: Vec<(usize, u32)>,
    zones: Vec<(u64, u64)>,
    /// A zipf, pareto or normal draw of the block (None: uniform or zoned).
    skew: Option<SkewGen>,
    /// Write sizes and alignment of a job whose directions differ (empty:
    /// `sizes`, `align`).
    write_sizes: Vec<(u64, u32)>,
    write_align: u64,
    /// A sequential stream restarts at the region's start after this many
    /// bytes (0: never); bytes issued in the current loop.
    loop_bytes: u64,
    in_loop: u64,
    /// Any of the above in use: the I/Os come from `next_io_extended`.
    extended: bool,
}

impl IoGen {
    pub fn new(w: &Workload, seed: u64) -> IoGen {
        let mut g = IoGen {
            rw: w.rw,
            sizes: w.sizes.clone(),
            start: w.offset_bytes,
            len: w.size_bytes,
            align: w.blockalign_bytes,
            cursor: 0,
            mix: w.rwmixread_percent,
            rng: Rng::fork(w.randseed.unwrap_or(seed), "host-io"),
            bs_range: w.bs_range,
            seq_add: w.seq_add_bytes,
            seq_nr: w.seq_nr.max(1),
            seq_left: 0,
            last_end: 0,
            pending_write: None,
            zone_weights: w.zones.iter().enumerate().map(|(i, z)| (i, z.0)).collect(),
            zones: w.zones.iter().map(|z| (z.1, z.2)).collect(),
            skew: None,
            write_sizes: w.write_sizes.clone(),
            write_align: w.write_blockalign_bytes,
            loop_bytes: w.loop_bytes,
            in_loop: 0,
            extended: w.bs_range.is_some()
                || !w.write_sizes.is_empty()
                || w.loop_bytes > 0
                || w.seq_add_bytes != 0
                || w.seq_nr > 1
                || !w.zones.is_empty()
                || w.skew.is_some()
                || matches!(w.rw, RwMode::TrimWrite | RwMode::RandTrimWrite),
        };
        if let Some(skew) = w.skew {
            // fio draws over the region's blocks of the alignment
            g.skew = Some(SkewGen::new(skew, w.size_bytes.div_ceil(w.blockalign_bytes.max(1)), &mut g.rng));
        }
        g
    }

    #[inline]
    fn pick_size(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        if let Some((lo, hi)) = self.bs_range {
            // fio's draw: MIN + a uniform share of MAX, aligned down to MIN
            // and capped at MAX (integers here, fio uses a double).
            let v = lo + self.rng.below(hi);
            return (v - v % lo).min(hi);
        }
        self.sizes[self.rng.weighted(&self.sizes)].0
    }

    /// The next I/O: operation, byte offset, length.
    #[inline]
    pub fn next_io(&mut self) -> (Op, u64, u64) {
        if self.extended {
            return self.next_io_extended();
        }
        // The plain job (no fio modifier, range, zones or trimwrite): the
        // engine's hot path, kept as short as it always was.
        let op = self.pick_op();
        let bs = self.pick_size();
        let off = if self.rw.is_random() {
            let slots = (self.len - bs) / self.align + 1;
            self.start + self.rng.below(slots) * self.align
        } else {
            if self.cursor >= self.len {
                self.cursor = 0;
            }
            // The last I/O of a pass covers what is left of the region.
            let left = self.len - self.cursor;
            let o = self.start + self.cursor;
            let bs = if left < bs { left } else { bs };
            self.cursor += bs;
            return (op, o, bs);
        };
        (op, off, bs)
    }

    /// The direction of the next I/O (a mixed job draws it by `rwmixread`).
    #[inline(always)]
    fn pick_op(&mut self) -> Op {
        match self.rw {
            RwMode::Read | RwMode::RandRead => Op::Read,
            RwMode::Write | RwMode::RandWrite => Op::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => Op::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.rng.percent(self.mix) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }

    /// [`IoGen::next_io`] with fio's later options: `rw` modifiers, `bsrange`,
    /// zoned distributions, trimwrite.
    fn next_io_extended(&mut self) -> (Op, u64, u64) {
        if let Some((off, bs)) = self.pending_write.take() {
            return (Op::Write, off, bs);
        }
        let op = self.pick_op();
        let (bs, align) = if op == Op::Write && !self.write_sizes.is_empty() {
            let i = if self.write_sizes.len() == 1 { 0 } else { self.rng.weighted(&self.write_sizes) };
            (self.write_sizes[i].0, self.write_align)
        } else {
            (self.pick_size(), self.align)
        };
        let (off, bs) = if self.rw.is_random() {
            if self.seq_nr > 1 && self.seq_left > 0 && self.last_end + bs <= self.start + self.len {
                self.seq_left -= 1;
                let off = self.last_end;
                self.last_end += bs;
                (off, bs)
            } else {
                let (zstart, zlen) = if self.zones.is_empty() {
                    (0, self.len)
                } else {
                    self.zones[self.zone_weights[self.rng.weighted(&self.zone_weights)].0]
                };
                let slots = (zlen - bs) / align + 1;
                let pick = match self.skew.as_mut() {
                    Some(g) => g.next(&mut self.rng) % slots,
                    None => self.rng.below(slots),
                };
                let off = self.start + zstart + pick * align;
                if self.seq_nr > 1 {
                    self.seq_left = self.seq_nr - 1;
                    self.last_end = off + bs;
                }
                (off, bs)
            }
        } else {
            // fio runs each loop from the job's offset again.
            if self.loop_bytes > 0 && self.in_loop >= self.loop_bytes {
                self.cursor = 0;
                self.in_loop = 0;
            }
            if self.cursor >= self.len {
                self.cursor = 0;
            }
            let left = self.len - self.cursor;
            let o = self.start + self.cursor;
            let bs = if left < bs { left } else { bs };
            self.cursor += bs;
            self.in_loop += bs;
            if self.seq_add != 0 {
                self.cursor = self.step_cursor(o - self.start, bs);
            }
            (o, bs)
        };
        if matches!(self.rw, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            self.pending_write = Some((off, bs));
        }
        (op, off, bs)
    }

    /// fio's holed or backwards sequential I/O: the next offset is the end
    /// of this I/O plus the step; past either end of the region it wraps (to
    /// the start going forwards, to the end plus the step going backwards).
    fn step_cursor(&self, rel: u64, bs: u64) -> u64 {
        let next = rel as i128 + bs as i128 + self.seq_add as i128;
        if next < 0 || next >= self.len as i128 {
            if self.seq_add > 0 {
                0
            } else {
                (self.len as i128 + self.seq_add as i128).max(0) as u64
            }
        } else {
            next as u64
        }
    }
}
