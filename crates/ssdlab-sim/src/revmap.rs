//! The reverse map: what each block holds, for garbage collection.
//!
//! For each block, a log of the units written into it in the order they were
//! written (one 4-byte entry per unit: its LBA, and with data reduction its
//! length in granules), and for the whole drive a bitmap of the granules that
//! head a live unit. Garbage collection walks a victim's log from the start
//! (the running sum of the lengths gives each unit's granule) and moves the
//! units whose bit is set; an overwrite or a TRIM only clears a bit, which
//! lies in a table small enough to stay in cache.
//!
//! Each block's log has room for one entry per 4KB slot in a table laid out
//! like the blocks (so writing and walking a log are sequential accesses);
//! entries beyond that, when data reduction stores units in less than 4KB,
//! go to chunks of [`CHUNK`] entries from a pool whose pages the OS commits
//! on first touch. Incompressible data thus costs 4 bytes per 4KB of NAND
//! whatever the granule size, and 1KB granules cost RAM only for data that
//! really was stored in less than 4KB. The pool is sized for the worst case
//! (every unit one granule), which is what the memory estimate reserves
//! (`config::revmap_bytes_reserved`, from the same layout).

use crate::config::REVMAP_CHUNK_ENTRIES;
use crate::mem::{CowTable, NONE};

/// Entries per chunk (a power of two).
pub const CHUNK: u32 = REVMAP_CHUNK_ENTRIES;
/// Log entry of a padded (unused) granule.
pub const PAD: u32 = u32::MAX;

#[derive(Debug)]
pub struct RevMap {
    /// Entries each block keeps in `base` (its 4KB slots).
    per_base: u32,
    /// Overflow chunk slots per block: `ceil((granules - slots) / CHUNK)`.
    per_block: u32,
    /// Block `b`'s first `per_base` entries: `base[b * per_base ..]`.
    base: CowTable<u32>,
    /// `block * per_block + j` -> id of the block's j-th overflow chunk.
    table: Vec<u32>,
    /// Entries written to each block since its erase.
    len: Vec<u32>,
    /// Chunk `c` is `pool[c * CHUNK .. (c + 1) * CHUNK]`. Zeroed at allocation,
    /// so pages never handed out are never committed.
    pool: Vec<u32>,
    /// Chunks returned by erased blocks (reused last-in first-out, which keeps
    /// the touched part of the pool small), and chunks ever handed out.
    free: Vec<u32>,
    bump: u32,
    /// One bit per granule: set when it heads a live unit.
    live: CowTable<u64>,
}

impl RevMap {
    /// `slots_per_block` 4KB slots of `granules_per_block` granules each block.
    pub fn new(total_blocks: u32, slots_per_block: u32, granules_per_block: u32) -> RevMap {
        let per_block = (granules_per_block - slots_per_block).div_ceil(CHUNK);
        let chunks = total_blocks as usize * per_block as usize;
        let granules = total_blocks as usize * granules_per_block as usize;
        RevMap {
            per_base: slots_per_block,
            per_block,
            base: CowTable::new(total_blocks as usize * slots_per_block as usize, 0u32),
            table: vec![NONE; chunks],
            len: vec![0; total_blocks as usize],
            pool: vec![0; chunks * CHUNK as usize],
            free: Vec::new(),
            bump: 0,
            live: CowTable::new(granules.div_ceil(64), 0u64),
        }
    }

    /// Entries logged for block `b`.
    #[inline(always)]
    pub fn entries(&self, b: u32) -> u32 {
        self.len[b as usize]
    }

    /// Where in the pool overflow entry `i` (counted from the first entry
    /// past `per_base`) of block `b` lies.
    #[inline(always)]
    fn over(&self, b: u32, i: u32) -> usize {
        let c = self.table[(b * self.per_block + i / CHUNK) as usize];
        c as usize * CHUNK as usize + (i % CHUNK) as usize
    }

    /// Entry `i` of block `b`'s log.
    #[inline(always)]
    pub fn get(&self, b: u32, i: u32) -> u32 {
        if i < self.per_base {
            self.base.get((b * self.per_base + i) as usize)
        } else {
            self.pool[self.over(b, i - self.per_base)]
        }
    }

    /// Append entry `e` to block `b`'s log.
    #[inline(always)]
    pub fn push(&mut self, b: u32, e: u32) {
        let i = self.len[b as usize];
        self.len[b as usize] = i + 1;
        if i < self.per_base {
            self.base.set((b * self.per_base + i) as usize, e);
        } else {
            self.push_over(b, i - self.per_base, e);
        }
    }

    #[inline(never)]
    fn push_over(&mut self, b: u32, j: u32, e: u32) {
        if j.is_multiple_of(CHUNK) {
            let c = self.free.pop().unwrap_or_else(|| {
                self.bump += 1;
                self.bump - 1
            });
            self.table[(b * self.per_block + j / CHUNK) as usize] = c;
        }
        let at = self.over(b, j);
        self.pool[at] = e;
    }

    /// Ask the CPU to start loading where entry `i` of block `b` is, or will be.
    #[inline(always)]
    pub fn prefetch(&self, b: u32, i: u32) {
        if i < self.per_base {
            self.base.prefetch((b * self.per_base + i) as usize);
        }
    }

    /// Block `b` was erased: its log is empty and its chunks go back to the pool.
    pub fn clear_block(&mut self, b: u32) {
        let used = self.len[b as usize].saturating_sub(self.per_base).div_ceil(CHUNK);
        for j in 0..used {
            let slot = (b * self.per_block + j) as usize;
            self.free.push(self.table[slot]);
            self.table[slot] = NONE;
        }
        self.len[b as usize] = 0;
    }

    /// Every block erased (secure erase).
    pub fn clear_all(&mut self) {
        self.table.iter_mut().for_each(|c| *c = NONE);
        self.len.iter_mut().for_each(|n| *n = 0);
        self.free.clear();
        self.bump = 0;
        self.live.fill(0);
    }

    #[inline(always)]
    pub fn is_live(&self, g: u32) -> bool {
        self.live.get((g / 64) as usize) >> (g % 64) & 1 != 0
    }

    #[inline(always)]
    pub fn set_live(&mut self, g: u32) {
        self.live.update((g / 64) as usize, |w| w | 1 << (g % 64));
    }

    #[inline(always)]
    pub fn clear_live(&mut self, g: u32) {
        self.live.update((g / 64) as usize, |w| w & !(1 << (g % 64)));
    }

    #[inline(always)]
    pub fn prefetch_live(&self, g: u32) {
        self.live.prefetch((g / 64) as usize);
    }

    /// Granules heading a live unit.
    pub fn live_count(&self) -> u64 {
        self.live.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Bytes of RAM in use: the tables, and the pool's chunks ever handed out.
    pub fn bytes_in_use(&self) -> u64 {
        ((self.base.len() + self.table.len() + self.len.len() + self.free.capacity()) * 4 + self.live.len() * 8) as u64
            + self.bump as u64 * CHUNK as u64 * 4
    }
}

impl Clone for RevMap {
    /// Copies only the chunks ever handed out: the rest of the pool stays
    /// uncommitted in the copy too.
    fn clone(&self) -> RevMap {
        let mut pool = vec![0u32; self.pool.len()];
        let used = self.bump as usize * CHUNK as usize;
        pool[..used].copy_from_slice(&self.pool[..used]);
        let base = self.base.clone();
        let live = self.live.clone();
        RevMap {
            per_base: self.per_base,
            per_block: self.per_block,
            base,
            table: self.table.clone(),
            len: self.len.clone(),
            pool,
            free: self.free.clone(),
            bump: self.bump,
            live,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_keep_their_entries_in_order_and_erased_blocks_return_their_chunks() {
        let mut r = RevMap::new(4, 64, 256);
        for i in 0..200 {
            r.push(1, i);
            r.push(3, 1000 + i);
        }
        assert_eq!(r.entries(1), 200);
        assert!((0..200).all(|i| r.get(1, i) == i && r.get(3, i) == 1000 + i));
        let used = r.bump;
        assert_eq!(used, 2 * 3); // 136 overflow entries each: 3 chunks
        r.clear_block(1);
        assert_eq!(r.entries(1), 0);
        // Block 2 reuses block 1's chunks: nothing more is handed out.
        for i in 0..200 {
            r.push(2, 7 * i);
        }
        assert_eq!(r.bump, used);
        assert!((0..200).all(|i| r.get(2, i) == 7 * i && r.get(3, i) == 1000 + i));
        let c = r.clone();
        assert!((0..200).all(|i| c.get(2, i) == 7 * i && c.get(3, i) == 1000 + i));
    }

    #[test]
    fn live_bits_are_per_granule() {
        let mut r = RevMap::new(2, 128, 128);
        r.set_live(5);
        r.set_live(64);
        r.set_live(255);
        assert!(r.is_live(5) && r.is_live(64) && r.is_live(255) && !r.is_live(6));
        r.clear_live(64);
        assert_eq!(r.live_count(), 2);
    }
}
