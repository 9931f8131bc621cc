//! The page-level map at 4KB: map entries (head granule and length), what a
//! unit of each data pattern occupies once stored, invalidation, TRIM and
//! secure erase.

use super::blocks::{Block, BlockState};
use super::write::WritePoint;
use super::{Ftl, MAP_ENTRY_BYTES};
use crate::config::{LEN_SHIFT, UNIT_BYTES};
use crate::mem::NONE;
use crate::nand::Nand;
use crate::pattern::DataPattern;

impl Ftl {
    /// Bytes that reach the NAND for `bytes` of host data of `pattern`
    /// (after data reduction, with its metadata; `bytes` without it).
    #[inline]
    pub fn stored_bytes(&self, pattern: DataPattern, bytes: u64) -> u64 {
        if self.g.gran_per_slot == 1 {
            return bytes;
        }
        (self.granules_for(pattern) as u64 * self.gran_bytes * bytes).div_ceil(UNIT_BYTES)
    }

    /// Stored bytes of mapped unit `lba` (0 when unmapped).
    #[inline]
    pub fn unit_stored_bytes(&self, lba: u64) -> u64 {
        let e = self.l2p.get(lba as usize);
        if e == NONE {
            0
        } else {
            self.len_of(e) as u64 * self.gran_bytes
        }
    }

    /// Granules a 4KB unit of `pattern` occupies once stored.
    #[inline]
    pub fn granules_for(&self, pattern: DataPattern) -> u32 {
        match pattern {
            DataPattern::Incompressible => self.stored_granules[0],
            DataPattern::Repeated => self.stored_granules[1],
            DataPattern::Compressible => self.stored_granules[2],
            DataPattern::Zeros => self.stored_granules[3],
            DataPattern::Ratio { permille } => {
                if self.g.gran_per_slot == 1 {
                    1
                } else {
                    let bytes = UNIT_BYTES * permille as u64 / 1000 + self.ratio_meta_bytes;
                    (bytes.div_ceil(self.gran_bytes) as u32).clamp(1, self.g.gran_per_slot)
                }
            }
        }
    }

    /// A map entry (or a log entry, with an LBA for `x`) of a unit of `n` granules.
    #[inline(always)]
    pub(super) fn enc(&self, x: u32, n: u32) -> u32 {
        // Without data reduction every unit is one granule: nothing is added.
        debug_assert!(n >= 1 && (self.g.gran_per_slot > 1 || n == 1));
        x | (n - 1) << LEN_SHIFT
    }

    /// The head granule of a map entry (the LBA of a log entry).
    #[inline(always)]
    pub(super) fn head_of(&self, e: u32) -> u32 {
        e & self.head_mask
    }

    /// Granules of the unit of a map or log entry.
    #[inline(always)]
    pub(super) fn len_of(&self, e: u32) -> u32 {
        // `len_mask` is 0 without data reduction, whose entries use every bit.
        ((e >> LEN_SHIFT) & self.len_mask) + 1
    }

    /// Units currently mapped (valid user data).
    pub fn mapped_units(&self) -> u64 {
        self.blocks.iter().map(|b| b.valid as u64).sum()
    }

    /// Drop the unit of map entry `e`.
    #[inline]
    pub(super) fn invalidate(&mut self, e: u32, now_ns: u64) {
        let head = self.head_of(e);
        let n = self.len_of(e);
        self.rev.clear_live(head);
        let b = self.spb_div.div(head);
        let die = self.bpd_div.div(b) as usize;
        self.die_valid[die] -= n as u64;
        if self.blocks[b as usize].fast {
            if let Some(c) = self.slc.as_mut() {
                c.valid[die] -= n as u64;
            }
        }
        let sealed = self.blocks[b as usize].state == BlockState::Sealed;
        if sealed && self.uses_buckets() {
            self.bucket_remove(b);
            let blk = &mut self.blocks[b as usize];
            blk.valid -= n;
            blk.stamp_ns = now_ns;
            self.bucket_push(b);
        } else {
            let blk = &mut self.blocks[b as usize];
            blk.valid -= n;
            blk.stamp_ns = now_ns;
        }
    }

    pub fn trim_units(&mut self, lba: u64, n: u64, now_ns: u64) {
        let trimmed0 = self.counters.host_units_trimmed;
        for l in lba..lba + n {
            let e = self.l2p.get(l as usize);
            if e != NONE {
                self.invalidate(e, now_ns);
                self.l2p.set(l as usize, NONE);
                self.mapped_lbas -= 1;
                self.counters.host_units_trimmed += 1;
            }
            if let Some(s) = self.shadow.as_mut() {
                s.trim(l);
            }
        }
        if self.trim_map_deferred {
            // Only entries that held data change; a unit of a coarse map
            // unit is one entry with its neighbours.
            let entries = (self.counters.host_units_trimmed - trimmed0).div_ceil(self.g.map_unit_units as u64);
            self.pending_map_bytes += entries * MAP_ENTRY_BYTES;
        }
        self.resume_perf_mode();
    }

    /// Erase every block that is not already erased; forget the mapping.
    /// Returns when the last die finishes.
    pub fn secure_erase(&mut self, now_ns: u64, nand: &mut Nand) -> u64 {
        let mut done = now_ns;
        let slc = self.slc.is_some();
        if let Some(c) = self.map_cache.as_mut() {
            c.reset();
        }
        for b in 0..self.blocks.len() as u32 {
            let blk = &mut self.blocks[b as usize];
            if blk.state != BlockState::Free {
                blk.erase_count += 1;
                self.counters.erases += 1;
                self.counters.slc_erases += (slc && blk.fast) as u64;
                done = done.max(nand.erase(b / self.g.blocks_per_die, now_ns));
            }
            *blk = Block {
                valid: 0,
                erase_count: blk.erase_count,
                state: BlockState::Free,
                fast: false,
                prev: NONE,
                next: NONE,
                stamp_ns: now_ns,
                sealed_ns: now_ns,
            };
        }
        self.l2p.fill(NONE);
        self.rev.clear_all();
        let bpd = self.g.blocks_per_die;
        for (d, die) in self.dies.iter_mut().enumerate() {
            let d = d as u32;
            // Least-worn blocks first.
            let mut ids: Vec<u32> = (d * bpd..(d + 1) * bpd).collect();
            ids.sort_by_key(|&b| (self.blocks[b as usize].erase_count, b));
            die.free = ids.into();
            die.host_wp = WritePoint::EMPTY;
            die.gc_wp = WritePoint::EMPTY;
            die.heads.iter_mut().for_each(|x| *x = NONE);
            die.tails.iter_mut().for_each(|x| *x = NONE);
            die.min_hint = 0;
            die.fifo.clear();
            die.victim = NONE;
            die.victim_entry = 0;
            die.victim_next = 0;
            die.victim_warm = 0;
            die.victim_warm_off = 0;
            die.gc_last_read = NONE;
            die.gc_pending_reads = 0;
            die.gc_credit = 0;
        }
        self.raise_count = 0;
        self.die_valid.iter_mut().for_each(|v| *v = 0);
        if let Some(c) = self.slc.as_mut() {
            c.reset();
        }
        self.mapped_lbas = 0;
        self.perf_active = self.perf_tprog_ns > 0;
        self.reorg.iter_mut().for_each(|r| r.clear());
        self.late_fast.iter_mut().for_each(|n| *n = 0);
        self.late_fast_open.iter_mut().for_each(|b| *b = NONE);
        self.idle_room.iter_mut().for_each(|n| *n = false);
        self.host_die = 0;
        self.waiting_die = NONE;
        if let Some(s) = self.shadow.as_mut() {
            s.clear();
        }
        done
    }
}
