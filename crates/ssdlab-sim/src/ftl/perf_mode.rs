//! Performance mode (Vertex 4 firmware 1.4+): blocks written in a fast,
//! lower-pages-only mode while the drive is less than half full, and their
//! reorganisation into normal blocks once it fills past that.

use super::blocks::BlockState;
use super::Ftl;
use crate::nand::Nand;

impl Ftl {
    /// Granules a block holds: half (whole program units) in performance
    /// mode, 1/bits in SLC mode.
    #[inline]
    pub(super) fn cap(&self, b: u32) -> u32 {
        if self.blocks[b as usize].fast {
            self.fast_cap
        } else {
            self.spb
        }
    }

    #[inline]
    pub(super) fn tprog_of(&self, b: u32, nand: &Nand) -> u64 {
        if self.blocks[b as usize].fast {
            self.fast_tprog_ns
        } else {
            nand.tprog_ns
        }
    }

    /// Reorganisation work left (performance mode ended, fast blocks remain).
    pub fn reorg_pending(&self) -> usize {
        self.reorg.iter().map(|r| r.len()).sum()
    }

    /// Performance mode ends: every block written in fast mode is queued for
    /// rewriting in normal mode.
    pub(super) fn end_perf_mode(&mut self) {
        self.perf_active = false;
        self.late_fast.iter_mut().for_each(|n| *n = 0);
        self.idle_room.iter_mut().for_each(|n| *n = false);
        for b in 0..self.blocks.len() as u32 {
            let blk = &self.blocks[b as usize];
            if blk.fast && blk.state == BlockState::Sealed {
                let d = self.die_of_block(b) as usize;
                self.reorg[d].push(b);
            }
        }
        for r in &mut self.reorg {
            r.reverse(); // oldest first when popped
        }
    }

    /// Performance mode follows the fill level both ways: once TRIM leaves
    /// no more than `perf_mode_fill_percent` of the LBAs holding data, the
    /// drive is "50% or less full" again and writes in the fast mode (OCZ,
    /// June 2012: drives "transition back and forth from performance to
    /// storage mode"). Fast blocks still queued for reorganisation need no
    /// rewrite now: they are queued again when the mode next ends.
    pub(super) fn resume_perf_mode(&mut self) {
        if self.perf_tprog_ns > 0 && !self.perf_active && self.mapped_lbas <= self.perf_limit_lbas {
            self.perf_active = true;
            self.reorg.iter_mut().for_each(|r| r.clear());
            self.late_fast.iter_mut().for_each(|n| *n = 0);
        }
    }

    /// Does a host block opened now on `die` take the fast mode? While
    /// performance mode lasts; past it (`ftl.perf_mode_after_idle`) once
    /// idle time has found the reorganisation of the switch done, while the
    /// die holds more free blocks than it keeps for normal writes; the first
    /// normal block ends that until the next idle. A busy drive that wrote
    /// fast at half density without idle time would only clean sooner.
    #[inline]
    pub(super) fn opens_fast(&self, die: u32) -> bool {
        let d = die as usize;
        (self.perf_active && (!self.small_only || self.small_write))
            || (self.after_idle
                && self.idle_room[d]
                && self.dies[d].free.len() > self.after_idle_reserve
                && self.reorg[d].len() <= self.late_fast[d])
    }

    /// The host write command whose units are placed next covers `bytes`
    /// from byte `offset`. With `ftl.perf_mode_small_random_writes_only`,
    /// only a command shorter than one die's program unit that does not
    /// continue the previous write opens a block in the fast mode: a random
    /// small write cannot fill a program unit by itself, while a long write,
    /// or a run of small ones in sequence, streams whole units at full
    /// density.
    #[inline]
    pub fn host_write(&mut self, offset: u64, bytes: u64) {
        self.small_write = bytes < self.unit_bytes && offset != self.last_write_end;
        self.last_write_end = offset + bytes;
        self.write_bytes = bytes;
    }

    /// Is the reorganisation `die` has queued only of blocks written fast
    /// past the fill limit? Then it waits for idle time instead of slowing
    /// host writes (space GC still takes them as any victim, by what they
    /// hold).
    #[inline]
    pub(super) fn reorg_can_wait(&self, die: u32) -> bool {
        let d = die as usize;
        self.after_idle && !self.reorg[d].is_empty() && self.reorg[d].len() <= self.late_fast[d]
    }
}
