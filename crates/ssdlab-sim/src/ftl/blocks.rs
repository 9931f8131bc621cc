//! Blocks and their pools: block states, the per-die free pool and open
//! write points' state, the GC buckets (sealed blocks by valid count, in
//! doubly linked lists, for greedy and cost-benefit victim selection) and
//! the FIFO order, sealing, opening and wear.

use super::Ftl;
use crate::config::{GcMode, GcPolicy};
use crate::error::{Result, SimError};
use crate::mem::NONE;
use crate::nand::Nand;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Open,
    Sealed,
    Victim,
}

#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// Valid granules.
    pub valid: u32,
    pub erase_count: u32,
    pub state: BlockState,
    /// Written in performance (fast, lower-pages-only) mode: half capacity.
    pub fast: bool,
    pub(super) prev: u32,
    pub(super) next: u32,
    /// Last time its valid count changed.
    pub(super) stamp_ns: u64,
    /// When it was sealed (filled): the age of its data, for cost-benefit.
    pub(super) sealed_ns: u64,
}

impl Ftl {
    #[inline]
    pub(super) fn uses_buckets(&self) -> bool {
        self.policy != GcPolicy::Fifo
    }

    #[inline]
    pub(super) fn bucket_remove(&mut self, b: u32) {
        let blk = self.blocks[b as usize];
        let die = self.die_of_block(b) as usize;
        let v = blk.valid as usize;
        if blk.prev == NONE {
            self.dies[die].heads[v] = blk.next;
        } else {
            self.blocks[blk.prev as usize].next = blk.next;
        }
        if blk.next == NONE {
            self.dies[die].tails[v] = blk.prev;
        } else {
            self.blocks[blk.next as usize].prev = blk.prev;
        }
    }

    #[inline]
    pub(super) fn bucket_push(&mut self, b: u32) {
        let die = self.die_of_block(b) as usize;
        let v = self.blocks[b as usize].valid;
        let d = &mut self.dies[die];
        let tail = d.tails[v as usize];
        if v < d.min_hint {
            d.min_hint = v;
        }
        d.tails[v as usize] = b;
        if tail == NONE {
            d.heads[v as usize] = b;
        } else {
            self.blocks[tail as usize].next = b;
        }
        let blk = &mut self.blocks[b as usize];
        blk.prev = tail;
        blk.next = NONE;
    }

    pub(super) fn seal(&mut self, b: u32, now_ns: u64) {
        self.blocks[b as usize].state = BlockState::Sealed;
        self.blocks[b as usize].sealed_ns = now_ns;
        if self.uses_buckets() {
            self.bucket_push(b);
        } else {
            let die = self.die_of_block(b) as usize;
            self.dies[die].fifo.push_back(b);
        }
    }

    /// Take a free block of `die` for a write point. Foreground GC first when
    /// the pool is at or below the threshold (host allocations only).
    pub(super) fn open_block(&mut self, die: u32, for_gc: bool, now_ns: u64, nand: &mut Nand) -> Result<u32> {
        if !for_gc {
            // Lazy GC cleans whole victims only now, when a block is needed;
            // paced GC has kept the pool up and cleans here only if it fell behind.
            let floor = match self.gc_mode {
                GcMode::Lazy => self.gc_threshold as usize,
                GcMode::Paced => 1,
            };
            let mut guard = 0u32;
            while self.dies[die as usize].free.len() <= floor {
                if !self.gc_victim_step(die, now_ns, nand, u64::MAX, true)? {
                    break;
                }
                guard += 1;
                if guard > 4 * self.g.blocks_per_die {
                    return Err(SimError::integrity(format!("die {die}: foreground GC made no progress")));
                }
            }
        }
        if self.slc.is_some() && !for_gc {
            // TRIMmed space belongs to the dynamic cache: its blocks are
            // erased as the cache needs them.
            while self.slc_at_size(die as usize) && self.erase_empty_slc_block(die, now_ns, nand)? {}
            while self.slc_short_of_erased(die as usize) && self.erase_empty_block(die, now_ns, nand)? {}
        }
        let fast = if for_gc {
            false
        } else if self.slc_write_through() {
            self.slc_through_opens(die, now_ns, nand)?
        } else if self.slc.is_some() {
            self.slc_has_room(die as usize)
        } else {
            self.opens_fast(die)
        };
        let b = self.dies[die as usize].free.pop_front().ok_or_else(|| SimError::Drive {
            message: format!("die {die} has no free block: its valid data exceeds its capacity (spare area too small for this workload)"),
        })?;
        let blk = &mut self.blocks[b as usize];
        debug_assert_eq!(blk.state, BlockState::Free);
        blk.state = BlockState::Open;
        blk.valid = 0;
        blk.stamp_ns = now_ns;
        if let Some(c) = self.slc.as_mut() {
            blk.fast = fast;
            if fast {
                c.blocks[die as usize] += 1;
            }
        } else {
            blk.fast = fast || (for_gc && self.perf_active);
            if fast && !self.perf_active {
                self.late_fast_open[die as usize] = b;
            } else if !for_gc && !self.perf_active {
                self.idle_room[die as usize] = false;
            }
        }
        Ok(b)
    }

    pub fn free_blocks(&self, die: u32) -> usize {
        self.dies[die as usize].free.len()
    }

    pub fn erase_counts(&self) -> (u64, u32, u32) {
        let mut sum = 0u64;
        let mut max = 0u32;
        let mut min = u32::MAX;
        for b in &self.blocks {
            sum += b.erase_count as u64;
            max = max.max(b.erase_count);
            min = min.min(b.erase_count);
        }
        (sum, min, max)
    }
}
