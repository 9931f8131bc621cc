//! The checking mode's structural invariants of the FTL, and every LBA
//! against the shadow model.

use super::blocks::BlockState;
use super::Ftl;
use crate::error::{Result, SimError};
use crate::mem::NONE;
use crate::revmap::PAD;

impl Ftl {
    /// Verify the structural invariants and (in checking mode) every LBA against
    /// the shadow model.
    pub fn check_all(&self) -> Result<()> {
        if let Some(c) = self.map_cache.as_ref() {
            c.check()?;
        }
        let live_units = self.check_block_logs()?;
        self.check_die_counts()?;
        self.check_one_to_one(live_units)?;
        self.check_gc_buckets()?;
        self.check_slc_blocks()?;
        self.check_free_pools()?;
        if let Some(s) = self.shadow.as_ref() {
            s.verify_all(self.l2p.iter(), self.head_mask)?;
        }
        Ok(())
    }

    /// Walk every block's log: each entry whose head granule is live must be
    /// the unit its LBA maps to; valid counts are the live units' granules.
    /// Returns the live units counted.
    fn check_block_logs(&self) -> Result<u64> {
        let spb = self.spb as usize;
        let mut live_units = 0u64;
        for (b, blk) in self.blocks.iter().enumerate() {
            let b32 = b as u32;
            let base = b32 * self.spb;
            let mut off = 0u32;
            let mut live = 0u32;
            for i in 0..self.rev.entries(b32) {
                let e = self.rev.get(b32, i);
                if e == PAD {
                    off += 1;
                    continue;
                }
                let n = self.len_of(e);
                let head = base + off;
                if self.rev.is_live(head) {
                    let lba = self.head_of(e) as usize;
                    if lba >= self.l2p.len() || self.l2p.get(lba) != self.enc(head, n) {
                        let maps = self.l2p.try_get(lba).unwrap_or(NONE);
                        return Err(SimError::integrity(format!(
                            "granule {head} holds live LBA unit {lba} ({n} granules), which maps to entry {maps:#x}"
                        )));
                    }
                    live += n;
                    live_units += 1;
                }
                off += n;
            }
            if off as usize > spb {
                return Err(SimError::integrity(format!("block {b}: its log covers {off} granules of {spb}")));
            }
            if live != blk.valid {
                return Err(SimError::integrity(format!("block {b}: valid count {} but {live} live granules", blk.valid)));
            }
            if blk.state == BlockState::Free && self.rev.entries(b32) != 0 {
                return Err(SimError::integrity(format!("free block {b} holds {} logged units", self.rev.entries(b32))));
            }
        }
        Ok(live_units)
    }

    /// Each die's valid counter is the sum of its blocks'.
    fn check_die_counts(&self) -> Result<()> {
        for (d, &v) in self.die_valid.iter().enumerate() {
            let bpd = self.g.blocks_per_die as usize;
            let sum: u64 = self.blocks[d * bpd..(d + 1) * bpd].iter().map(|b| b.valid as u64).sum();
            if sum != v {
                return Err(SimError::integrity(format!("die {d}: valid counter {v} but blocks hold {sum}")));
            }
        }
        Ok(())
    }

    /// Every mapped LBA is mapped exactly once: live units map back to
    /// their LBAs (checked with the logs), so as many live units as mapped
    /// LBAs, and no live bit outside a logged unit, make the two a one-to-one
    /// match.
    fn check_one_to_one(&self, live_units: u64) -> Result<()> {
        let mapped = self.l2p.iter().filter(|&e| e != NONE).count() as u64;
        if mapped != live_units {
            return Err(SimError::integrity(format!("{mapped} LBA units are mapped but {live_units} live units are stored")));
        }
        if self.rev.live_count() != live_units {
            return Err(SimError::integrity(format!("{} live granules but {live_units} live units logged", self.rev.live_count())));
        }
        Ok(())
    }

    /// Bucket lists hold exactly the sealed blocks, at their valid counts.
    fn check_gc_buckets(&self) -> Result<()> {
        if !self.uses_buckets() {
            return Ok(());
        }
        let spb = self.spb as usize;
        let mut seen = 0usize;
        for (di, d) in self.dies.iter().enumerate() {
            for v in 0..=spb {
                let mut b = d.heads[v];
                let mut prev = NONE;
                while b != NONE {
                    let blk = &self.blocks[b as usize];
                    if blk.state != BlockState::Sealed || blk.valid as usize != v || blk.prev != prev || self.die_of_block(b) as usize != di
                    {
                        return Err(SimError::integrity(format!("block {b} misfiled in GC bucket {v} of die {di}")));
                    }
                    seen += 1;
                    prev = b;
                    b = blk.next;
                }
                if d.tails[v] != prev {
                    return Err(SimError::integrity(format!("bucket {v} of die {di}: tail mismatch")));
                }
            }
        }
        let sealed = self.blocks.iter().filter(|b| b.state == BlockState::Sealed).count();
        if seen != sealed {
            return Err(SimError::integrity(format!("{sealed} sealed blocks but {seen} in GC buckets")));
        }
        Ok(())
    }

    /// The SLC cache's counts are those of the blocks in SLC mode, and
    /// every sealed SLC block is queued for folding (or being folded):
    /// none is left behind, so none of its data is. A write-through buffer
    /// stays within its size.
    fn check_slc_blocks(&self) -> Result<()> {
        let Some(c) = self.slc.as_ref() else {
            return Ok(());
        };
        let bpd = self.g.blocks_per_die as usize;
        for d in 0..self.g.dies as usize {
            let in_use = || self.blocks[d * bpd..(d + 1) * bpd].iter().filter(|b| b.fast && b.state != BlockState::Free);
            let (n, v) = (in_use().count() as u32, in_use().map(|b| b.valid as u64).sum::<u64>());
            if n != c.blocks[d] || v != c.valid[d] {
                return Err(SimError::integrity(format!(
                    "die {d}: SLC cache counts {} blocks, {} granules, but SLC-mode blocks are {n}, holding {v}",
                    c.blocks[d], c.valid[d]
                )));
            }
            // A write-through buffer folds before it grows past its size.
            if c.write_through > 0 && c.blocks[d] > self.slc_size(d) {
                return Err(SimError::integrity(format!(
                    "die {d}: the SLC write-through buffer holds {} blocks, past its size of {}",
                    c.blocks[d],
                    self.slc_size(d)
                )));
            }
            for b in (d * bpd) as u32..((d + 1) * bpd) as u32 {
                let blk = &self.blocks[b as usize];
                if blk.fast && blk.state == BlockState::Sealed && !self.reorg[d].contains(&b) {
                    return Err(SimError::integrity(format!("die {d}: sealed SLC block {b} is not queued for folding")));
                }
                let gc_wp = self.dies[d].gc_wp.block;
                if blk.fast && b == gc_wp {
                    return Err(SimError::integrity(format!("die {d}: GC / folding writes into SLC block {b}")));
                }
            }
        }
        Ok(())
    }

    /// Every block in a die's free pool is free.
    fn check_free_pools(&self) -> Result<()> {
        for (di, d) in self.dies.iter().enumerate() {
            for &b in &d.free {
                if self.blocks[b as usize].state != BlockState::Free {
                    return Err(SimError::integrity(format!("die {di}: block {b} in free pool is not free")));
                }
            }
        }
        Ok(())
    }
}
