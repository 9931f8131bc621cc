//! Garbage collection: victim selection (greedy, cost-benefit, FIFO), paced
//! and lazy foreground GC, background (idle) GC, the controller-wide
//! recycling path, and the prefetching of a victim's map entries.
//!
//! A block's log is walked in three places (`warm_victim`, `gc_victim_step`
//! and `check_all`), each stepping over padding and summing lengths itself:
//! one shared cursor step measured 6% slower on the GC path.

use super::blocks::BlockState;
use super::Ftl;
use crate::config::GcPolicy;
use crate::error::Result;
use crate::mem::NONE;
use crate::nand::Nand;
use crate::revmap::PAD;

/// 4KB units of a GC victim whose map entries are prefetched together when
/// a step runs past what was prefetched for it.
const GC_PREFETCH_UNITS: u32 = 8;

impl Ftl {
    /// Paced foreground GC: before each host program unit on a die short of
    /// free blocks, move as many GC units as keep the pool level: cleaning a
    /// victim with `v` valid of `spb` slots frees `spb - v` slots for `v`
    /// moves, so each host unit owes `v / (spb - v)` GC units.
    pub(super) fn gc_paced(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<()> {
        let d = die as usize;
        const SCALE: u64 = 1 << 16;
        if self.dies[d].victim == NONE && !self.gc_start_victim(die, now_ns, true, nand) {
            return Ok(());
        }
        let v = self.dies[d].victim_valid0 as u64;
        let gain = self.spb as u64 - v;
        self.dies[d].gc_credit += if gain == 0 { 4 * SCALE } else { (v * SCALE).div_ceil(gain) };
        // Prefetch the map entries of every unit the steps below move (one
        // 4KB unit more for the last step's overshoot), all at once so that
        // their misses overlap. What was prefetched at the die's last visit
        // has been evicted by the other dies' work since.
        let steps = (self.dies[d].gc_credit / SCALE) as u32;
        self.dies[d].victim_warm = self.dies[d].victim_entry;
        self.dies[d].victim_warm_off = self.dies[d].victim_next;
        self.warm_victim(d, steps * self.unit + self.g.gran_per_slot);
        while self.dies[d].gc_credit >= SCALE {
            if self.dies[d].victim == NONE && !self.gc_start_victim(die, now_ns, true, nand) {
                self.dies[d].gc_credit = 0;
                break;
            }
            self.gc_victim_step(die, now_ns, nand, 0, false)?;
            self.dies[d].gc_credit -= SCALE;
        }
        Ok(())
    }

    /// Choose the next victim of `die`; false if cleaning could gain nothing.
    fn gc_start_victim(&mut self, die: u32, now_ns: u64, foreground: bool, nand: &mut Nand) -> bool {
        let d = die as usize;
        let mut v = NONE;
        // Performance-mode reorganisation first: fast blocks, whatever they
        // hold (those written fast past the fill limit in idle time only).
        // A write-through SLC buffer folds at its own pace: space GC takes
        // its blocks only by what they hold.
        // With an SLC cache, a block holding nothing valid (TRIMmed) goes
        // before a fold while the host writes: it frees a whole block for
        // one erase, and folding beside host writes is the cache's own
        // policy (`fold_units_per_host_unit`).
        if foreground && self.slc.is_some() && !self.slc_write_through() && self.uses_buckets() {
            let b = self.dies[d].heads[0];
            if b != NONE {
                self.bucket_remove(b);
                self.blocks[b as usize].state = BlockState::Victim;
                v = b;
            }
        }
        let reorg_now = v == NONE && (!foreground || !(self.reorg_can_wait(die) || self.slc_write_through()));
        while let Some(b) = if reorg_now { self.reorg[d].pop() } else { None } {
            let blk = &self.blocks[b as usize];
            if blk.fast && blk.state == BlockState::Sealed {
                if self.uses_buckets() {
                    self.bucket_remove(b);
                } else if let Some(i) = self.dies[d].fifo.iter().position(|&x| x == b) {
                    self.dies[d].fifo.remove(i);
                }
                self.blocks[b as usize].state = BlockState::Victim;
                v = b;
                break;
            }
        }
        self.late_fast[d] = self.late_fast[d].min(self.reorg[d].len());
        if v == NONE {
            if !self.gc_can_gain(die) {
                return false;
            }
            v = self.select_victim(die, now_ns);
            if v == NONE {
                return false;
            }
        }
        self.begin_victim(die, v, now_ns, foreground, nand);
        true
    }

    /// Erase a sealed block of `die` that holds no valid data (TRIMmed or
    /// rewritten), now: an SLC cache needs erased blocks for its room, and
    /// an empty block costs one erase. False if the die has none.
    pub(super) fn erase_empty_block(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<bool> {
        let d = die as usize;
        if !self.uses_buckets() || self.dies[d].heads[0] == NONE {
            return Ok(false);
        }
        if self.dies[d].victim != NONE && self.slc_write_through() {
            return Ok(false);
        }
        let v = self.dies[d].heads[0];
        self.bucket_remove(v);
        if self.dies[d].victim != NONE {
            // Beside a victim the die was cleaning (paused by the host): the
            // erase needs no GC slot. Waiting for the victim would count the
            // cache full while empty blocks wait, as after a TRIM. (A
            // write-through buffer makes its room by folding instead.)
            self.erase_empty_now(die, v, now_ns, nand);
            return Ok(true);
        }
        self.blocks[v as usize].state = BlockState::Victim;
        self.begin_victim(die, v, now_ns, true, nand);
        self.gc_victim_step(die, now_ns, nand, u64::MAX, true)
    }

    /// Erase an SLC block of `die` whose data is all invalid (TRIMmed or
    /// rewritten), now: it still counts against the cache's size until it
    /// is folded, and folding it is one erase. False if there is none.
    pub(super) fn erase_empty_slc_block(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<bool> {
        let d = die as usize;
        let Some(i) = self.reorg[d].iter().position(|&b| {
            let blk = &self.blocks[b as usize];
            blk.fast && blk.valid == 0 && blk.state == BlockState::Sealed
        }) else {
            return Ok(false);
        };
        let v = self.reorg[d].remove(i);
        if self.dies[d].victim != NONE {
            // Nothing to move: the erase needs no GC slot, so a fold the
            // die paused (the host came back mid-block) stays as it was.
            self.unlist_slc_block(die, v);
            self.erase_empty_now(die, v, now_ns, nand);
            return Ok(true);
        }
        self.clean_slc_block_now(die, v, now_ns, nand)
    }

    /// Erase `v`, a sealed SLC block of `die` holding no valid data and
    /// already out of its lists, beside the die's victim: the erase (and
    /// the recycling path's pass over the block, as for a victim) without
    /// the victim's slot.
    fn erase_empty_now(&mut self, die: u32, v: u32, now_ns: u64, nand: &mut Nand) {
        debug_assert_eq!(self.blocks[v as usize].valid, 0);
        self.recycle_block_pass(die, now_ns, nand);
        self.counters.gc_victims += 1;
        self.counters.fg_gc_victims += 1;
        self.erase_block(die, v, now_ns, nand);
    }

    /// Fold the oldest SLC block of `die` whole, now (a write-through
    /// buffer at its size makes room); a victim the die was cleaning is
    /// finished first. False if the die has no sealed SLC block to fold.
    pub(super) fn fold_oldest_slc_block(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<bool> {
        let d = die as usize;
        if self.dies[d].victim != NONE {
            return self.gc_victim_step(die, now_ns, nand, u64::MAX, true);
        }
        // Entries of blocks space GC took since are dropped on the way.
        let v = loop {
            let Some(b) = self.reorg[d].pop() else {
                return Ok(false);
            };
            let blk = &self.blocks[b as usize];
            if blk.fast && blk.state == BlockState::Sealed {
                break b;
            }
        };
        self.clean_slc_block_now(die, v, now_ns, nand)
    }

    /// Clean the SLC block `v`, already taken off the die's fold list, whole
    /// and now: out of its GC list, the die's victim, every page moved.
    fn clean_slc_block_now(&mut self, die: u32, v: u32, now_ns: u64, nand: &mut Nand) -> Result<bool> {
        self.unlist_slc_block(die, v);
        self.blocks[v as usize].state = BlockState::Victim;
        self.begin_victim(die, v, now_ns, true, nand);
        self.gc_victim_step(die, now_ns, nand, u64::MAX, true)
    }

    /// Take `v`, an SLC block just removed from the die's `reorg` list, out
    /// of its GC list as well.
    fn unlist_slc_block(&mut self, die: u32, v: u32) {
        let d = die as usize;
        self.late_fast[d] = self.late_fast[d].min(self.reorg[d].len());
        if self.uses_buckets() {
            self.bucket_remove(v);
        } else if let Some(j) = self.dies[d].fifo.iter().position(|&x| x == v) {
            self.dies[d].fifo.remove(j);
        }
    }

    /// The controller's recycling path (when there is one: a rate above 0)
    /// processes the whole block at its fixed rate, whatever it holds
    /// (stale or TRIMmed data included; `ftl.recycle_bytes_per_s`).
    fn recycle_block_pass(&mut self, die: u32, now_ns: u64, nand: &mut Nand) {
        let block_bytes = self.spb as u64 * self.gran_bytes;
        if let Some(ns) = (block_bytes * 1_000_000_000).checked_div(self.recycle_bytes_per_s) {
            nand.recycle(die, now_ns, ns);
        }
    }

    /// Make `v` (taken out of its list) the die's victim.
    fn begin_victim(&mut self, die: u32, v: u32, now_ns: u64, foreground: bool, nand: &mut Nand) {
        let d = die as usize;
        self.dies[d].victim = v;
        self.dies[d].victim_entry = 0;
        self.dies[d].victim_next = 0;
        self.dies[d].victim_warm = 0;
        self.dies[d].victim_warm_off = 0;
        self.dies[d].victim_valid0 = self.blocks[v as usize].valid;
        self.dies[d].victim_read_ns = self.unit_read_ns(v, nand);
        self.recycle_block_pass(die, now_ns, nand);
        self.dies[d].gc_last_read = NONE;
        self.counters.gc_victims += 1;
        if foreground {
            self.counters.fg_gc_victims += 1;
        } else {
            self.counters.bg_gc_victims += 1;
        }
    }

    fn select_victim(&mut self, die: u32, now_ns: u64) -> u32 {
        let spb = self.spb;
        let d = die as usize;
        let b = match self.policy {
            GcPolicy::Fifo => match self.dies[d].fifo.pop_front() {
                Some(b) => b,
                None => return NONE,
            },
            GcPolicy::Greedy => {
                let mut v = self.dies[d].min_hint;
                while v <= spb && self.dies[d].heads[v as usize] == NONE {
                    v += 1;
                }
                if v > spb {
                    return NONE;
                }
                self.dies[d].min_hint = v;
                let b = self.dies[d].heads[v as usize];
                self.bucket_remove(b);
                b
            }
            GcPolicy::CostBenefit => {
                // Within a bucket the head is the least recently modified block,
                // so it has the best score of its bucket.
                let mut best = NONE;
                let (mut bn, mut bd) = (0u128, 1u128);
                for v in 0..spb {
                    let h = self.dies[d].heads[v as usize];
                    if h == NONE {
                        continue;
                    }
                    if v == 0 {
                        best = h;
                        break;
                    }
                    let age = (now_ns.saturating_sub(self.blocks[h as usize].sealed_ns) + 1) as u128;
                    let num = (spb - v) as u128 * age;
                    let den = 2 * v as u128;
                    if best == NONE || num * bd > bn * den {
                        best = h;
                        bn = num;
                        bd = den;
                    }
                }
                if best == NONE {
                    return NONE;
                }
                self.bucket_remove(best);
                best
            }
        };
        self.blocks[b as usize].state = BlockState::Victim;
        b
    }

    /// Would cleaning the best victim of `die` gain space?
    fn gc_can_gain(&self, die: u32) -> bool {
        let d = &self.dies[die as usize];
        if d.victim != NONE {
            return true;
        }
        match self.policy {
            // FIFO cleans in order even a fully valid block (it only moves to
            // the tail), so it can gain if any sealed block holds invalid data.
            GcPolicy::Fifo => d.fifo.iter().any(|&b| self.blocks[b as usize].valid < self.spb),
            _ => (0..self.spb).any(|v| d.heads[v as usize] != NONE),
        }
    }

    /// Prefetch the map entries of the victim's live units of die `d` from
    /// where prefetching stopped, until `grans` more live granules are covered.
    /// The entries lie anywhere in the l2p table: fetched together, their
    /// cache and TLB misses overlap instead of stalling the moves one by one.
    fn warm_victim(&mut self, d: usize, grans: u32) {
        let victim = self.dies[d].victim;
        let base = victim * self.spb;
        let total = self.rev.entries(victim);
        let mut w = self.dies[d].victim_warm;
        let mut off = self.dies[d].victim_warm_off;
        let mut left = grans;
        // The LBAs are gathered first so that the prefetches go out back to
        // back, within reach of one another in the CPU's reorder window. A
        // dead unit's LBA is written too but not counted (no branch to
        // mispredict on the live bit).
        let mut lbas = [0u32; 32];
        while w < total && left > 0 {
            let mut k = 0usize;
            let end = total.min(w + lbas.len() as u32);
            while w < end && left > 0 {
                let e = self.rev.get(victim, w);
                w += 1;
                if e == PAD {
                    off += 1;
                    continue;
                }
                let n = self.len_of(e);
                let live = self.rev.is_live(base + off) as u32;
                lbas[k & 31] = self.head_of(e);
                k += live as usize;
                left = left.saturating_sub(n * live);
                off += n;
            }
            for &l in &lbas[..k] {
                self.l2p.prefetch(l as usize);
            }
        }
        self.dies[d].victim_warm = w;
        self.dies[d].victim_warm_off = off;
    }

    /// Clean on `die`: relocate valid data of the current victim (choosing one if
    /// needed) into the die's GC write point, then erase it. With `whole`, runs
    /// until a victim is erased; otherwise stops after one program unit once the
    /// die is booked past `until_ns`. Returns false if nothing can be gained.
    ///
    /// Each GC program unit costs, on the die, one page read per victim page it
    /// draws from, the data's round trip through the controller (out and back
    /// in over the channel, for ECC), and one program.
    pub fn gc_victim_step(&mut self, die: u32, now_ns: u64, nand: &mut Nand, until_ns: u64, whole: bool) -> Result<bool> {
        let d = die as usize;
        if self.dies[d].victim == NONE && !self.gc_start_victim(die, now_ns, whole, nand) {
            return Ok(false);
        }
        let victim = self.dies[d].victim;
        let base = victim * self.spb;
        let total = self.rev.entries(victim);
        let batch = GC_PREFETCH_UNITS * self.g.gran_per_slot;
        let mut i = self.dies[d].victim_entry;
        let mut off = self.dies[d].victim_next;
        let mut warm = self.dies[d].victim_warm;
        // Granules and units moved in this call: the victim's valid count
        // and the counters are brought up to date once, at the end (nothing
        // called from the loop reads them).
        let mut moved_grans = 0u32;
        let mut moved_units = 0u64;
        while i < total {
            if warm <= i {
                self.warm_victim(d, batch);
                warm = self.dies[d].victim_warm;
            }
            let e = self.rev.get(victim, i);
            i += 1;
            if e == PAD {
                off += 1;
                continue;
            }
            let n = self.len_of(e);
            let head = base + off;
            off += n;
            if !self.rev.is_live(head) {
                continue; // overwritten or trimmed since
            }
            let lba = self.head_of(e);
            // A new victim page to read?
            let vu = self.unit_div.div(head - base);
            let dd = &mut self.dies[d];
            dd.gc_pending_reads += (vu != dd.gc_last_read) as u64;
            dd.gc_last_read = vu;
            // The GC write point's unit has room nearly always: take it here
            // rather than through `alloc`'s padding and opening checks.
            let gw = &mut dd.gc_wp;
            let (new, nb) = if gw.block != NONE && gw.next + n <= gw.cap {
                let h = gw.block * self.spb + gw.next;
                gw.next += n;
                (h, gw.block)
            } else {
                dd.victim_entry = i;
                dd.victim_next = off;
                let h = self.alloc(die, true, n, now_ns, nand)?;
                (h, self.spb_div.div(h))
            };
            self.rev.clear_live(head);
            moved_grans += n;
            moved_units += 1;
            self.rev.push(nb, e);
            self.rev.set_live(new);
            self.l2p.set(lba as usize, self.enc(new, n));
            if self.map_cache.is_some() {
                self.map_access(lba as u64, 1, now_ns, true, nand);
            }
            self.blocks[nb as usize].valid += n;
            if let Some(s) = self.shadow.as_mut() {
                s.moved(head, new);
            }
            let gw = &self.dies[d].gc_wp;
            let unit_done = gw.block == NONE || gw.next >= gw.programmed + self.unit;
            if unit_done && self.program_gc_units(die, now_ns, nand) && !whole && nand.die_busy_until(die) >= until_ns {
                break;
            }
        }
        self.count_moved(d, victim, moved_grans, moved_units);
        self.dies[d].victim_entry = i;
        self.dies[d].victim_next = off;
        if i >= total {
            self.erase_victim(die, victim, now_ns, nand);
        }
        Ok(true)
    }

    /// The victim's valid count, the SLC cache's and the GC counters after
    /// `moved_units` units of `moved_grans` granules left `victim`.
    fn count_moved(&mut self, d: usize, victim: u32, moved_grans: u32, moved_units: u64) {
        self.blocks[victim as usize].valid -= moved_grans;
        if self.blocks[victim as usize].fast {
            if let Some(c) = self.slc.as_mut() {
                c.valid[d] -= moved_grans as u64;
            }
        }
        self.counters.gc_units_moved += moved_units;
        self.counters.gc_bytes_moved += moved_grans as u64 * self.gran_bytes;
    }

    /// Erase `victim`, all its data moved, and return it to its die's pool.
    fn erase_victim(&mut self, die: u32, victim: u32, now_ns: u64, nand: &mut Nand) {
        self.erase_block(die, victim, now_ns, nand);
        self.dies[die as usize].victim = NONE;
    }

    /// Erase `victim` (no valid data left in it) and return it to its
    /// die's pool.
    fn erase_block(&mut self, die: u32, victim: u32, now_ns: u64, nand: &mut Nand) {
        let d = die as usize;
        debug_assert_eq!(self.blocks[victim as usize].valid, 0);
        let slc = self.slc.is_some() && self.blocks[victim as usize].fast;
        if slc {
            self.slc_block_erased(d);
        }
        nand.erase_t(die, now_ns, if slc && self.slc_tbers_ns > 0 { self.slc_tbers_ns } else { nand.tbers_ns });
        self.rev.clear_block(victim);
        let blk = &mut self.blocks[victim as usize];
        blk.erase_count += 1;
        blk.state = BlockState::Free;
        blk.valid = 0;
        self.counters.erases += 1;
        self.counters.slc_erases += slc as u64;
        self.dies[d].free.push_back(victim);
    }

    /// Does idle time on `die` still have a block holding no valid data to
    /// erase? Only with an SLC cache: its room is counted in erased blocks,
    /// while its dynamic size counts TRIMmed space as free, so the firmware
    /// erases such blocks when idle to give that space back as cache (an
    /// empty block costs one erase, nothing moved).
    fn idle_erase_wanted(&self, die: u32) -> bool {
        self.slc.is_some() && self.uses_buckets() && self.dies[die as usize].heads[0] != NONE
    }

    /// Background GC while the drive is idle in `[from_ns, until_ns)`: each die
    /// cleans until it holds `bg_gc_threshold_blocks` free blocks or its time is up.
    pub fn background_gc(&mut self, from_ns: u64, until_ns: u64, nand: &mut Nand) -> Result<()> {
        if until_ns <= from_ns {
            return Ok(());
        }
        self.slc_idle();
        if self.bg_gc_threshold == 0 && self.reorg_pending() == 0 {
            return Ok(());
        }
        for die in 0..self.g.dies {
            loop {
                let start = nand.die_busy_until(die).max(from_ns);
                if start >= until_ns {
                    break;
                }
                let d = &self.dies[die as usize];
                if d.victim == NONE
                    && d.free.len() >= self.bg_gc_threshold as usize
                    && self.reorg[die as usize].is_empty()
                    && !self.idle_erase_wanted(die)
                {
                    break;
                }
                if !self.gc_victim_step(die, start, nand, until_ns, false)? {
                    break;
                }
            }
            // Idle time that finds the reorganisation done lets the die
            // write fast again (`opens_fast`).
            if self.after_idle && !self.perf_active && self.reorg[die as usize].len() <= self.late_fast[die as usize] {
                self.idle_room[die as usize] = true;
            }
        }
        Ok(())
    }
}
