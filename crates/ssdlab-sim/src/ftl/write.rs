//! Host writes: the write points (one for host data, one for GC copies per
//! die), dispatch of program units to the die that frees up first,
//! allocation of granules, programming completed units, coalescing in the
//! write buffer, flush, and the prefetching that keeps the hot path fed.

use super::blocks::BlockState;
use super::{Ftl, Release};
use crate::config::{GcMode, UNIT_BYTES};
use crate::error::{Result, SimError};
use crate::mem::{prefetch, prefetch_value, NONE};
use crate::nand::Nand;
use crate::pattern::DataPattern;
use crate::revmap::PAD;

#[derive(Clone, Copy, Debug)]
pub(super) struct WritePoint {
    /// Global block id, or NONE.
    pub(super) block: u32,
    /// Next granule offset to write in the block.
    pub(super) next: u32,
    /// Granules already programmed (a multiple of the program unit).
    pub(super) programmed: u32,
    /// Latest time at which data for the unit being filled is ready.
    pub(super) ready_ns: u64,
    /// Host bytes held in the buffer for the unit being filled.
    pub(super) host_bytes: u64,
    /// Granules the block holds (see `Ftl::cap`), fixed while it is open.
    pub(super) cap: u32,
}

impl WritePoint {
    pub(super) const EMPTY: WritePoint = WritePoint { block: NONE, next: 0, programmed: 0, ready_ns: 0, host_bytes: 0, cap: 0 };
    fn at(block: u32, cap: u32) -> WritePoint {
        WritePoint { block, cap, ..WritePoint::EMPTY }
    }
}

impl Ftl {
    /// Write one 4KB unit of `pattern` whose data is in the controller at
    /// `ready_ns`. Returns its head granule. Completed program units are
    /// programmed and their buffer release recorded in `self.releases`.
    pub fn write_unit(&mut self, lba: u64, ready_ns: u64, pattern: DataPattern, nand: &mut Nand) -> Result<u32> {
        let old = self.l2p.get(lba as usize);
        let n = self.granules_for(pattern);
        if old != NONE && self.in_open_host_unit(self.head_of(old)) && self.len_of(old) == n {
            // The unit's previous data is still in the write buffer, not yet
            // sent to a die: the new data replaces it there (small sequential
            // writes coalesce), costing no NAND space or program.
            let head = self.head_of(old);
            self.counters.host_units_written += 1;
            self.counters.host_units_coalesced += 1;
            if let Some(s) = self.shadow.as_mut() {
                s.write(lba, head);
            }
            self.releases.push(Release { at_ns: ready_ns, bytes: UNIT_BYTES, die: NONE });
            return Ok(head);
        }
        if old != NONE {
            self.invalidate(old, ready_ns);
        } else {
            self.mapped_lbas += 1;
            if self.perf_active && self.mapped_lbas > self.perf_limit_lbas {
                self.end_perf_mode();
            }
        }
        let head = self.place_unit(lba, n, ready_ns, nand, |s, head| s.write(lba, head))?;
        self.counters.host_units_written += 1;
        self.counters.stored_bytes_written += n as u64 * self.gran_bytes;
        Ok(head)
    }

    /// Does a write beside `lba` (in the same coarse map unit, not covering
    /// it) have to rewrite it (`ftl.max_map_entries`)? Yes when it holds data
    /// that has left the open host unit: data still there is assembled with
    /// the new data in the buffer.
    #[inline]
    pub fn needs_merge(&self, lba: u64) -> bool {
        let e = self.l2p.get(lba as usize);
        e != NONE && !self.in_open_host_unit(self.head_of(e))
    }

    /// Rewrite the mapped unit `lba`, unchanged, at the host write point
    /// once its data is in the controller at `ready_ns` (read back by the
    /// caller): a write to part of a coarse map unit keeps the unit in one
    /// place (`ftl.max_map_entries`). Returns its new head granule.
    pub fn merge_unit(&mut self, lba: u64, ready_ns: u64, nand: &mut Nand) -> Result<u32> {
        let old = self.l2p.get(lba as usize);
        if old == NONE {
            return Err(SimError::integrity(format!("map-unit merge of LBA unit {lba}, which holds no data")));
        }
        let n = self.len_of(old);
        // The data moved is what a read of the unit returns now.
        let saved = match self.shadow.as_ref() {
            Some(s) => {
                s.verify_read(lba, self.head_of(old))?;
                Some(s.slot(self.head_of(old)))
            }
            None => None,
        };
        self.invalidate(old, ready_ns);
        let head = self.place_unit(lba, n, ready_ns, nand, |s, head| {
            if let Some(v) = saved {
                s.place(head, v)
            }
        })?;
        self.counters.map_merge_bytes += n as u64 * self.gran_bytes;
        Ok(head)
    }

    /// Place `n` granules of unit `lba` at its die's host write point (the
    /// old entry already invalidated), record them in the map, the reverse
    /// map and the checking model (`shadow`), and program completed units.
    fn place_unit(
        &mut self,
        lba: u64,
        n: u32,
        ready_ns: u64,
        nand: &mut Nand,
        shadow: impl FnOnce(&mut crate::check::Shadow, u32),
    ) -> Result<u32> {
        let die = self.host_die_with_room(n)?;
        let unit_before = self.unit_div.div(self.dies[die as usize].host_wp.next);
        let block_before = self.dies[die as usize].host_wp.block;
        let head = self.alloc(die, false, n, ready_ns, nand)?;
        self.die_valid[die as usize] += n as u64;
        self.l2p.set(lba as usize, self.enc(head, n));
        if self.map_cache.is_some() {
            self.map_access(lba, 1, ready_ns, true, nand);
        }
        let b = self.spb_div.div(head);
        self.rev.push(b, self.enc(lba as u32, n));
        self.rev.set_live(head);
        self.blocks[b as usize].valid += n;
        if self.blocks[b as usize].fast {
            if let Some(c) = self.slc.as_mut() {
                c.valid[die as usize] += n as u64;
            }
        }
        if let Some(s) = self.shadow.as_mut() {
            shadow(s, head);
        }
        let wp = &mut self.dies[die as usize].host_wp;
        wp.host_bytes += UNIT_BYTES;
        if ready_ns > wp.ready_ns {
            wp.ready_ns = ready_ns;
        }
        // A unit completed by a write stays in the buffer until the next host
        // unit gets data (small writes to its last LBA still coalesce); then
        // it goes to its die.
        let wp = &self.dies[die as usize].host_wp;
        // Did this write complete one of the die's program units? A unit of
        // reduced data may run past the unit's end into the next one, which
        // then stays open on this die until its next turn: the host moves on
        // once a program unit is full, not only when a 4KB unit ends exactly
        // on a unit boundary (an incompressible stream out of step with the
        // boundaries would never reach one and would stay on one die).
        let filled = wp.block == NONE
            || if wp.block == block_before { self.unit_div.div(wp.next) > unit_before } else { self.unit_div.div(wp.next) > 0 };
        self.program_ready_units(die, false, ready_ns, nand, false)?;
        let w = self.waiting_die;
        if w != NONE && w != die {
            self.waiting_die = NONE;
            self.program_ready_units(w, false, ready_ns, nand, true)?;
        }
        if filled {
            self.waiting_die = die;
            self.host_die = self.next_host_die(die, ready_ns, nand);
        }
        Ok(head)
    }

    /// The die the next host program unit goes to once `die`'s is complete:
    /// the one that frees up first, in striping order from the next die on
    /// ties (so idle dies, and dies working at one pace, are used
    /// round-robin). The controller dispatches to dies that can take data
    /// rather than in a fixed order: a die busy with a long garbage collection
    /// is passed over instead of holding up the host while the others wait,
    /// and because its turn comes later, dies do not all run out of free
    /// blocks at the same moment.
    #[inline]
    fn next_host_die(&self, die: u32, now_ns: u64, nand: &Nand) -> u32 {
        let dies = self.g.dies;
        let mut d = if die + 1 == dies { 0 } else { die + 1 };
        // The next die in order, free now, is the first of the best: no scan.
        if nand.die_busy_until(d) <= now_ns && self.die_valid[d as usize] < self.die_room && d != die {
            return d;
        }
        // `die`'s completed unit waits in the buffer: its program comes first.
        let wp = &self.dies[die as usize].host_wp;
        let pending_ns = if wp.block != NONE { self.tprog_of(wp.block, nand) } else { 0 };
        // The earliest free die with room (first in order from `d` among
        // equals): the minimum first, over contiguous tables and without
        // branches (`die` apart, for its pending program), then where it is.
        let n = dies as usize;
        let (busy, valid, room) = (&nand.busy_until_ns[..n], &self.die_valid[..n], self.die_room);
        let free_at = |x: usize| if valid[x] < room { busy[x].max(now_ns) } else { u64::MAX };
        let min_over = |r: std::ops::Range<usize>| {
            busy[r.clone()].iter().zip(&valid[r]).map(|(&b, &v)| if v < room { b.max(now_ns) } else { u64::MAX }).min()
        };
        let own_ns = free_at(die as usize).saturating_add(pending_ns);
        let best_ns = own_ns.min(min_over(0..die as usize).unwrap_or(u64::MAX)).min(min_over(die as usize + 1..n).unwrap_or(u64::MAX));
        if best_ns == u64::MAX {
            return d;
        }
        for _ in 0..dies {
            let t = if d == die { own_ns } else { free_at(d as usize) };
            if t == best_ns {
                return d;
            }
            d = if d + 1 == dies { 0 } else { d + 1 };
        }
        unreachable!("the minimum is some die's")
    }

    /// The die the next host data goes to: the striping order, skipping a die
    /// whose valid data leaves it no room to clean into (possible when a
    /// workload's overwrites land unevenly).
    #[inline]
    fn host_die_with_room(&mut self, n: u32) -> Result<u32> {
        for _ in 0..self.g.dies {
            let d = self.host_die;
            let wp = &self.dies[d as usize].host_wp;
            // A unit already started on this die is finished there.
            if (wp.block != NONE && wp.next > wp.programmed) || self.die_valid[d as usize] + (n as u64) <= self.die_room {
                return Ok(d);
            }
            self.host_die = if d + 1 == self.g.dies { 0 } else { d + 1 };
        }
        Err(SimError::Drive { message: "every die is full of valid data: the drive holds more than its capacity".into() })
    }

    /// Allocate `n` contiguous granules on a write point of `die`, padding the
    /// rest of the block when they do not fit. Returns the first granule.
    #[inline]
    pub(super) fn alloc(&mut self, die: u32, gc: bool, n: u32, now_ns: u64, nand: &mut Nand) -> Result<u32> {
        let d = die as usize;
        if !gc && self.slc.as_ref().is_some_and(|c| c.back[d]) {
            self.leave_native_block(die, now_ns, nand)?;
        }
        let wp = if gc { self.dies[d].gc_wp } else { self.dies[d].host_wp };
        if wp.block != NONE && wp.next + n > wp.cap {
            // Pad the block's tail and close it.
            let cap = wp.cap;
            let pad = cap - wp.next;
            self.counters.padded_bytes += pad as u64 * self.gran_bytes;
            if gc {
                self.dies[d].gc_wp.next = cap;
            } else {
                self.dies[d].host_wp.next = cap;
            }
            self.program_ready_units(die, gc, now_ns, nand, true)?;
        }
        let wp = if gc { self.dies[d].gc_wp } else { self.dies[d].host_wp };
        if wp.block == NONE {
            let b = self.open_block(die, gc, now_ns, nand)?;
            let cap = self.cap(b);
            if gc {
                self.dies[d].gc_wp = WritePoint::at(b, cap);
            } else {
                self.dies[d].host_wp = WritePoint::at(b, cap);
            }
        }
        let wp = if gc { &mut self.dies[d].gc_wp } else { &mut self.dies[d].host_wp };
        let head = wp.block * self.spb + wp.next;
        wp.next += n;
        Ok(head)
    }

    /// Idle time gave die `die`'s cache back while its host block is a
    /// native one: at the block's next unit boundary its programmed units
    /// are sealed as they are (the rest stays erased until GC takes the
    /// block), so that the host's next writes open an SLC block rather
    /// than fill the native one first.
    #[cold]
    fn leave_native_block(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<()> {
        let d = die as usize;
        let wp = self.dies[d].host_wp;
        let native = wp.block != NONE && !self.blocks[wp.block as usize].fast;
        if native && self.unit_div.rem(wp.next) != 0 {
            return Ok(());
        }
        if let Some(c) = self.slc.as_mut() {
            c.back[d] = false;
        }
        // (An SLC block whose data is all TRIMmed counts against the size
        // until the new block's allocation erases it.)
        let room = self.slc.as_ref().is_some_and(|c| {
            !c.full[d] && (c.blocks[d] < self.slc_size(d) || self.reorg[d].iter().any(|&b| self.blocks[b as usize].valid == 0))
        });
        if !native || !room {
            return Ok(());
        }
        self.program_ready_units(die, false, now_ns, nand, true)?;
        // (The programs may have filled and sealed the block already.)
        let b = self.dies[d].host_wp.block;
        if b != NONE {
            self.dies[d].host_wp = WritePoint::EMPTY;
            self.seal(b, now_ns);
        }
        Ok(())
    }

    /// Program the complete units of a write point; seal its block when full.
    /// Returns whether anything was programmed.
    /// Host units wait one unit in the buffer (see `write_unit`) unless
    /// `force` or the block is full.
    fn program_ready_units(&mut self, die: u32, gc: bool, now_ns: u64, nand: &mut Nand, force: bool) -> Result<bool> {
        if gc {
            return Ok(self.program_gc_units(die, now_ns, nand));
        }
        let d = die as usize;
        let mut any = false;
        loop {
            let wp = self.dies[d].host_wp;
            if wp.block == NONE || wp.next < wp.programmed + self.unit {
                break;
            }
            if !force && wp.next == wp.programmed + self.unit && wp.next < wp.cap {
                break;
            }
            if self.gc_mode == GcMode::Paced && self.dies[d].free.len() <= self.gc_threshold as usize {
                self.gc_paced(die, now_ns, nand)?;
            }
            // Performance-mode reorganisation (unless it waits for idle
            // time), or folding once the SLC cache is full, runs alongside
            // host writes.
            for _ in 0..if self.reorg_can_wait(die) { 0 } else { self.fold_count(d, self.dies[d].host_wp.block) } {
                if self.reorg[d].is_empty() && self.dies[d].victim == NONE {
                    break;
                }
                self.gc_victim_step(die, now_ns, nand, 0, false)?;
            }
            self.prefetch_next_dies(die);
            let wp = self.dies[d].host_wp;
            let bytes = self.unit as u64 * self.gran_bytes;
            let t = wp.ready_ns.max(now_ns);
            let tprog = self.tprog_of(wp.block, nand);
            let (xe, done) = nand.program_t(die, t, bytes, tprog);
            if done > self.host_durable_ns {
                self.host_durable_ns = done;
            }
            self.counters.nand_bytes_programmed += bytes;
            if self.slc.is_some() && self.blocks[wp.block as usize].fast {
                self.counters.slc_bytes_programmed += bytes;
            }
            self.raise_parity(t, nand);
            // Until its transfer to the die ends, the unit's data is in the buffer.
            let first = wp.block * self.spb + wp.programmed;
            let pending = &mut self.pending[d];
            while pending.front().is_some_and(|&(_, at)| at <= t) {
                pending.pop_front();
            }
            pending.push_back((first, xe));
            let wpm = &mut self.dies[d].host_wp;
            wpm.programmed += self.unit;
            self.releases.push(Release { at_ns: xe, bytes: wpm.host_bytes, die });
            wpm.host_bytes = 0;
            wpm.ready_ns = 0;
            any = true;
            self.close_if_full(d, false, t);
        }
        Ok(any)
    }

    /// Seal the write point's block once all of it is programmed (a block
    /// written in fast mode after performance mode ended is queued for
    /// reorganisation).
    #[inline]
    fn close_if_full(&mut self, d: usize, gc: bool, t: u64) {
        let wp = if gc { &mut self.dies[d].gc_wp } else { &mut self.dies[d].host_wp };
        if wp.programmed < wp.cap {
            return;
        }
        let b = wp.block;
        *wp = WritePoint::EMPTY;
        self.seal(b, t);
        if self.blocks[b as usize].fast && !self.perf_active {
            self.reorg[d].insert(0, b);
            // Written fast past the fill limit (see `opens_fast`): queued
            // last, after the switch's reorganisation.
            if !gc && self.late_fast_open[d] == b {
                self.late_fast[d] += 1;
                self.late_fast_open[d] = NONE;
            }
        }
    }

    /// `program_ready_units` for the GC write point, which only programs
    /// (one unit at a time as GC fills it; the hot path of cleaning).
    #[inline]
    pub(super) fn program_gc_units(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> bool {
        let d = die as usize;
        let mut any = false;
        loop {
            let wp = self.dies[d].gc_wp;
            if wp.block == NONE || wp.next < wp.programmed + self.unit {
                break;
            }
            let bytes = self.unit as u64 * self.gran_bytes;
            let t = wp.ready_ns.max(now_ns);
            let tprog = self.tprog_of(wp.block, nand);
            let reads = std::mem::take(&mut self.dies[d].gc_pending_reads);
            self.dies[d].gc_last_read = NONE;
            nand.copy_through_controller_ns(die, t, reads, reads * self.dies[d].victim_read_ns, bytes, tprog);
            self.counters.nand_bytes_programmed += bytes;
            self.raise_parity(t, nand);
            let wpm = &mut self.dies[d].gc_wp;
            wpm.programmed += self.unit;
            wpm.ready_ns = 0;
            any = true;
            self.close_if_full(d, true, t);
        }
        any
    }

    /// Warm the cache lines a write of `lba` will touch: its map entry (stage
    /// 0), once that is cached the old unit's live bit and block (1), and once
    /// that is cached the block's neighbours in its GC bucket and the tail of
    /// the bucket it moves to (2).
    #[inline]
    pub fn prefetch_write(&self, lba: u64, stage: u8) {
        if stage == 0 {
            self.l2p.prefetch(lba as usize);
            return;
        }
        let old = self.l2p.get(lba as usize);
        if old == NONE {
            return;
        }
        let b = self.spb_div.div(self.head_of(old));
        if stage == 1 {
            self.rev.prefetch_live(self.head_of(old));
            prefetch(&self.blocks, b as usize);
        } else if self.uses_buckets() {
            // The block's neighbours in its GC bucket, which unlinking it touches.
            let blk = &self.blocks[b as usize];
            if blk.state == BlockState::Sealed {
                prefetch(&self.blocks, blk.prev as usize);
                prefetch(&self.blocks, blk.next as usize);
                // And the tail of the bucket it moves to, which it is linked after.
                let v = blk.valid.saturating_sub(self.len_of(old)) as usize;
                let tail = self.dies[self.die_of_block(b) as usize].tails.get(v).copied().unwrap_or(NONE);
                prefetch(&self.blocks, tail as usize);
            }
        }
    }

    /// Warm what the next dies in striping order use at their next host
    /// program (a few host writes from now, after which every other die has
    /// had its turn, so none of it is still in cache): the FTL state of the
    /// die after next, and for the next die, whose state was fetched at the
    /// program before, its victim, write points and where their logs continue.
    #[inline]
    fn prefetch_next_dies(&self, die: u32) {
        let dies = self.g.dies;
        let next = if die + 1 == dies { 0 } else { die + 1 };
        let after = if next + 1 == dies { 0 } else { next + 1 };
        prefetch_value(&self.dies[after as usize]);
        let dn = &self.dies[next as usize];
        if dn.victim != NONE {
            prefetch(&self.blocks, dn.victim as usize);
            self.rev.prefetch(dn.victim, dn.victim_entry);
            self.rev.prefetch_live(dn.victim * self.spb + dn.victim_next);
        }
        for (b, off) in [(dn.gc_wp.block, dn.gc_wp.next), (dn.host_wp.block, dn.host_wp.next)] {
            if b != NONE {
                prefetch(&self.blocks, b as usize);
                self.rev.prefetch(b, self.rev.entries(b));
                self.rev.prefetch_live(b * self.spb + off);
            }
        }
    }

    /// Is the granule in the host write point's unit still being filled?
    #[inline]
    fn in_open_host_unit(&self, gran: u32) -> bool {
        let die = self.die_of_slot(gran) as usize;
        let wp = &self.dies[die].host_wp;
        wp.block == self.spb_div.div(gran) && self.spb_div.rem(gran) >= wp.programmed
    }

    /// Is the granule's data still in the controller at `now_ns`: its unit
    /// not yet programmed, or booked on its die but not yet sent to it (the
    /// die still busy with earlier work)?
    #[inline]
    pub fn is_buffered(&mut self, gran: u32, now_ns: u64) -> bool {
        let die = self.die_of_slot(gran) as usize;
        let b = self.spb_div.div(gran);
        let off = self.spb_div.rem(gran);
        let first = gran - self.unit_div.rem(off);
        let d = &self.dies[die];
        if (d.host_wp.block == b && off >= d.host_wp.programmed) || (d.gc_wp.block == b && off >= d.gc_wp.programmed) {
            return true;
        }
        let pending = &mut self.pending[die];
        while pending.front().is_some_and(|&(_, xe)| xe <= now_ns) {
            pending.pop_front();
        }
        pending.iter().any(|&(g, xe)| g == first && xe > now_ns)
    }

    /// Program the completed host units that wait in the buffer (when the
    /// buffer is full).
    pub fn program_waiting_units(&mut self, now_ns: u64, nand: &mut Nand) -> Result<()> {
        for die in 0..self.g.dies {
            self.program_ready_units(die, false, now_ns, nand, true)?;
        }
        Ok(())
    }

    /// Program every partly filled unit now, padding it (a flush): the FTL
    /// pads a partial program unit with filler granules (counted in
    /// `padded_bytes`) and programs the whole unit, at the unit's full
    /// transfer and program time; the next write starts a new unit, on the
    /// die that frees up first (the padded unit now programs on its own). A
    /// unit completed by the writes but held back for coalescing is
    /// programmed too.
    pub fn flush(&mut self, now_ns: u64, nand: &mut Nand) {
        let mut padded_host_die = false;
        for die in 0..self.g.dies {
            for gc in [false, true] {
                let d = &mut self.dies[die as usize];
                let wp = if gc { &mut d.gc_wp } else { &mut d.host_wp };
                if wp.block == NONE || wp.next == wp.programmed {
                    continue;
                }
                // Pad the unit being filled; program it and any waiting one.
                let target = wp.next.div_ceil(self.unit) * self.unit;
                let pad = target - wp.next;
                wp.next = target;
                wp.ready_ns = wp.ready_ns.max(now_ns);
                let b = wp.block;
                for _ in 0..pad {
                    self.rev.push(b, PAD);
                }
                self.counters.padded_bytes += pad as u64 * self.gran_bytes;
                padded_host_die |= !gc && pad > 0 && die == self.host_die;
                // Cannot fail: no block is opened when units are only programmed.
                let _ = self.program_ready_units(die, gc, now_ns, nand, true);
            }
        }
        // A stream of small flushed writes stripes over the dies as a
        // stream of whole units does, instead of padding one die's units.
        if padded_host_die {
            self.host_die = self.next_host_die(self.host_die, now_ns, nand);
        }
    }
}
