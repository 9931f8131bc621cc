//! The map cache of a drive without DRAM for its whole map
//! (`controller.map_cache_bytes`: the controller's SRAM or the host memory
//! buffer). The logical-to-physical map lives in NAND as translation pages,
//! 4 B per map entry, a NAND page each; the cache holds whole translation
//! pages, least recently used evicted first. A lookup or update of an entry
//! whose page is not cached reads the page from its die first (tR and its
//! transfer, booked like any read: it competes with host I/O); evicting a
//! page changed since it was read programs it back on its die. A page never
//! written back holds no entry on the NAND (the firmware's directory of
//! translation pages says so), so loading it costs no read.
//!
//! The cache changes only timing: the engine's map (`Ftl::l2p`) stays the
//! one record of where data is, so nothing can be lost through it.

use super::Ftl;
use crate::error::{Result, SimError};
use crate::mem::NONE;
use crate::nand::Nand;

/// Bytes of one map entry in a translation page.
pub const MAP_ENTRY_BYTES: u64 = 4;

const CACHED: u8 = 1;
const DIRTY: u8 = 2;
/// Written back at least once: loading it reads the NAND.
const ON_NAND: u8 = 4;

#[derive(Clone, Debug)]
pub struct MapCache {
    /// 4KB units one translation page maps (entries x the map unit).
    units_per_page: u64,
    page_bytes: u64,
    capacity: u32,
    dies: u32,
    /// Per translation page: its neighbours in the LRU list (most recent at
    /// `head`) and its state bits.
    prev: Vec<u32>,
    next: Vec<u32>,
    flags: Vec<u8>,
    head: u32,
    tail: u32,
    len: u32,
    /// Translation pages read from and programmed to the NAND.
    pub page_reads: u64,
    pub page_writes: u64,
}

impl MapCache {
    /// A cache of `cache_bytes` for a map of `user_units` 4KB units in map
    /// entries of `map_unit` units, in NAND pages of `page_bytes`.
    pub fn new(cache_bytes: u64, user_units: u64, map_unit: u64, page_bytes: u64, dies: u32) -> MapCache {
        let units_per_page = page_bytes / MAP_ENTRY_BYTES * map_unit;
        let pages = user_units.div_ceil(units_per_page) as usize;
        MapCache {
            units_per_page,
            page_bytes,
            capacity: (cache_bytes / page_bytes).max(1).min(u32::MAX as u64 - 1) as u32,
            dies,
            prev: vec![NONE; pages],
            next: vec![NONE; pages],
            flags: vec![0; pages],
            head: NONE,
            tail: NONE,
            len: 0,
            page_reads: 0,
            page_writes: 0,
        }
    }

    /// Translation page holding the entry of 4KB unit `lba`.
    #[inline]
    pub fn page_of(&self, lba: u64) -> u32 {
        (lba / self.units_per_page) as u32
    }

    /// Die holding translation page `p`: pages are spread over the dies in turn.
    #[inline]
    fn die_of(&self, p: u32) -> u32 {
        p % self.dies
    }

    fn unlink(&mut self, p: u32) {
        let (a, b) = (self.prev[p as usize], self.next[p as usize]);
        if a == NONE {
            self.head = b;
        } else {
            self.next[a as usize] = b;
        }
        if b == NONE {
            self.tail = a;
        } else {
            self.prev[b as usize] = a;
        }
    }

    fn push_front(&mut self, p: u32) {
        self.prev[p as usize] = NONE;
        self.next[p as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = p;
        } else {
            self.tail = p;
        }
        self.head = p;
    }

    /// Make translation page `p` cached and most recent at `t`, changed if
    /// `dirty`; returns when its entries can be used (after its read on a
    /// miss). An eviction's write-back is booked but not waited for.
    pub fn touch(&mut self, p: u32, t: u64, dirty: bool, nand: &mut Nand) -> u64 {
        let f = self.flags[p as usize];
        let mut ready = t;
        if f & CACHED != 0 {
            if self.head != p {
                self.unlink(p);
                self.push_front(p);
            }
        } else {
            if self.len == self.capacity {
                let v = self.tail;
                self.unlink(v);
                self.len -= 1;
                let vf = self.flags[v as usize];
                if vf & DIRTY != 0 {
                    nand.program(self.die_of(v), t, self.page_bytes);
                    self.page_writes += 1;
                    self.flags[v as usize] = ON_NAND;
                } else {
                    self.flags[v as usize] = vf & ON_NAND;
                }
            }
            if f & ON_NAND != 0 {
                ready = nand.read(self.die_of(p), t, self.page_bytes);
                self.page_reads += 1;
            }
            self.flags[p as usize] = f | CACHED;
            self.push_front(p);
            self.len += 1;
        }
        if dirty {
            self.flags[p as usize] |= DIRTY;
        }
        ready
    }

    /// Bytes of RAM its tables use (9 per translation page).
    pub fn bytes(&self) -> u64 {
        self.flags.len() as u64 * 9
    }

    /// Empty, with no page on the NAND (secure erase).
    pub fn reset(&mut self) {
        self.prev.fill(NONE);
        self.next.fill(NONE);
        self.flags.fill(0);
        self.head = NONE;
        self.tail = NONE;
        self.len = 0;
    }

    /// The LRU list holds exactly the cached pages, within the capacity,
    /// and only cached pages are dirty.
    pub fn check(&self) -> Result<()> {
        let mut n = 0u32;
        let mut p = self.head;
        let mut last = NONE;
        while p != NONE {
            if self.flags[p as usize] & CACHED == 0 || self.prev[p as usize] != last {
                return Err(SimError::integrity(format!("map cache: translation page {p} is listed but not cached, or mislinked")));
            }
            n += 1;
            if n > self.len {
                return Err(SimError::integrity("map cache: the LRU list is longer than its count"));
            }
            last = p;
            p = self.next[p as usize];
        }
        let cached = self.flags.iter().filter(|f| **f & CACHED != 0).count() as u32;
        let stray = self.flags.iter().any(|f| *f & DIRTY != 0 && *f & CACHED == 0);
        if n != self.len || cached != self.len || last != self.tail || self.len > self.capacity || stray {
            return Err(SimError::integrity(format!(
                "map cache: {n} pages listed, {cached} cached, count {}, capacity {}{}",
                self.len,
                self.capacity,
                if stray { ", a dirty page not cached" } else { "" }
            )));
        }
        Ok(())
    }
}

impl Ftl {
    /// The map entries of units `lba..lba + n` are needed at `t` (a host
    /// read looks them up; `dirty`: a write, TRIM or GC move changes them):
    /// returns when they are in the controller. Without a map cache, `t`.
    #[inline]
    pub fn map_access(&mut self, lba: u64, n: u64, t: u64, dirty: bool, nand: &mut Nand) -> u64 {
        let Some(c) = self.map_cache.as_mut() else { return t };
        let (r0, w0) = (c.page_reads, c.page_writes);
        let mut ready = t;
        for p in c.page_of(lba)..=c.page_of(lba + n.max(1) - 1) {
            ready = ready.max(c.touch(p, t, dirty, nand));
        }
        // Translation-page programs are NAND writes the host did not ask
        // for: they count in the write amplification.
        let written = c.page_writes - w0;
        self.counters.map_page_reads += c.page_reads - r0;
        self.counters.map_page_writes += written;
        self.counters.nand_bytes_programmed += written * c.page_bytes;
        ready
    }
}
