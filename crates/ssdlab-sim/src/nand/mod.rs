//! NAND array timing: dies, the channels they share, and calendars.
//!
//! Time is reserved, not stepped: an operation asks for a resource at the
//! earliest time it could start and gets back when it really starts. A die is
//! first-come-first-served (a die does one thing at a time, in order); a channel
//! bus and the host link are [`Calendar`]s that fill gaps, so a transfer booked
//! for later never blocks an earlier one that fits before it.

use crate::config::{DriveConfig, UNIT_BYTES};

mod calendar;
#[cfg(test)]
mod tests;

pub use calendar::Calendar;

#[derive(Clone, Debug, Default)]
pub struct Die {
    /// End of the last read booked on the die (reads stay in order among
    /// themselves when they pass queued work).
    pub read_until_ns: u64,
    /// End of the last program booked on the die (host or garbage
    /// collection): until then its page register holds that program's data.
    pub program_until_ns: u64,
    /// Time spent reading / programming / erasing (array busy), ns.
    pub read_busy_ns: u64,
    pub prog_busy_ns: u64,
    pub erase_busy_ns: u64,
}

/// Counters of NAND work, for write amplification, wear and power.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NandCounters {
    pub page_reads: u64,
    pub bytes_read: u64,
    pub unit_programs: u64,
    pub bytes_programmed: u64,
    pub block_erases: u64,
    pub channel_bytes: u64,
}

impl NandCounters {
    pub fn since(&self, b: &NandCounters) -> NandCounters {
        NandCounters {
            page_reads: self.page_reads - b.page_reads,
            bytes_read: self.bytes_read - b.bytes_read,
            unit_programs: self.unit_programs - b.unit_programs,
            bytes_programmed: self.bytes_programmed - b.bytes_programmed,
            block_erases: self.block_erases - b.block_erases,
            channel_bytes: self.channel_bytes - b.channel_bytes,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Nand {
    pub dies: Vec<Die>,
    /// When each die is free of the work booked on it (apart from [`Die`]:
    /// the FTL scans it to pick the next die, so it is kept contiguous).
    pub busy_until_ns: Vec<u64>,
    pub channels: Vec<Calendar>,
    channel_of_die: Vec<u32>,
    pub tr_ns: u64,
    pub tprog_ns: u64,
    pub tbers_ns: u64,
    /// Cache programming: a program's data moves into the die's cache
    /// register while the die still programs the previous data.
    cache_program: bool,
    channel_bytes_per_s: u64,
    /// Controller ECC decode rate that holds the die after a read (0: none).
    decode_bytes_per_s: u64,
    /// Fixed decode latency per page read that holds the die (0: none).
    decode_fixed_ns: u64,
    /// Reads pass queued non-read work, waiting at most this long for the
    /// operation in progress (`controller.read_priority`; u64::MAX: off).
    read_pass_wait_ns: u64,
    pub counters: NandCounters,
    /// The controller's block recycling path (`ftl.recycle_bytes_per_s`):
    /// one engine for every die, booked in time.
    pub recycle_path: Calendar,
    /// Checking mode: assert that no die starts an operation before its last ends.
    pub check: bool,
    /// Active-die limit: when each of the controller's die slots frees up,
    /// in ascending order (empty: no limit). Slots are interchangeable, so
    /// only these times matter, not which slot has which.
    tokens: Vec<u64>,
    /// Program buffer (`controller.program_buffer_bytes`): when each of the
    /// program units it holds frees up, in ascending order (empty: not
    /// modelled, or room for a program on every die).
    prog_tokens: Vec<u64>,
    /// Independent plane reads (`nand.independent_plane_reads`): planes a
    /// die (0: off).
    planes: u32,
    /// When each plane of each die (die * planes + plane) ends its last read.
    plane_read_until_ns: Vec<u64>,
    /// When each die ends the last program, erase or copy booked on it: the
    /// work a plane read waits for (reads on other planes it does not).
    array_until_ns: Vec<u64>,
}

impl Nand {
    pub fn new(cfg: &DriveConfig) -> Nand {
        let g = cfg.geometry();
        let n = g.dies + g.parity_dies;
        let plane_reads = if cfg.nand.independent_plane_reads && cfg.nand.planes_per_die > 1 { cfg.nand.planes_per_die } else { 0 };
        Nand {
            dies: vec![Die::default(); n as usize],
            busy_until_ns: vec![0; n as usize],
            channels: vec![Calendar::default(); g.channels as usize],
            channel_of_die: (0..n).map(|d| g.channel_of(d)).collect(),
            tr_ns: cfg.nand.tr_ns,
            tprog_ns: cfg.nand.tprog_ns,
            tbers_ns: cfg.nand.tbers_ns,
            cache_program: cfg.nand.cache_program,
            channel_bytes_per_s: cfg.nand.channel_bytes_per_s,
            decode_bytes_per_s: cfg.controller.read_decode_bytes_per_s,
            decode_fixed_ns: cfg.controller.read_decode_ns,
            read_pass_wait_ns: if cfg.controller.read_priority { cfg.nand.tprog_ns / 2 } else { u64::MAX },
            counters: NandCounters::default(),
            recycle_path: Calendar::default(),
            check: false,
            // A controller that can keep at least every die busy has no limit
            // on this drive (a profile's limit applies to every capacity).
            tokens: match cfg.controller.max_active_dies {
                k if k >= n => Vec::new(),
                k => vec![0; k as usize],
            },
            prog_tokens: match cfg.controller.program_buffer_bytes / Nand::unit_bytes(g.unit_slots) {
                k if k >= n as u64 => Vec::new(),
                k => vec![0; k as usize],
            },
            planes: plane_reads,
            plane_read_until_ns: vec![0; (n * plane_reads) as usize],
            array_until_ns: vec![0; if plane_reads > 0 { n as usize } else { 0 }],
        }
    }

    /// With an active-die limit, the earliest start >= `t` at which one of the
    /// controller's die slots is free, and which slot (`acquire_in`).
    #[inline]
    fn acquire(&self, t: u64) -> (usize, u64) {
        acquire_in(&self.tokens, t)
    }

    /// The slot taken by `acquire` is busy until `end` (later than it was
    /// free): move it up to keep the times sorted.
    #[inline]
    fn release(&mut self, slot: usize, end: u64) {
        release_in(&mut self.tokens, slot, end)
    }

    /// For a program: the earliest start >= `t` at which both an active-die
    /// slot and room in the program buffer are free, and which of each.
    #[inline]
    fn acquire_program(&self, t: u64) -> (usize, usize, u64) {
        if self.prog_tokens.is_empty() {
            let (tok, s) = self.acquire(t);
            return (tok, usize::MAX, s);
        }
        let s = self.acquire(t).1.max(acquire_in(&self.prog_tokens, t).1);
        let (tok, _) = self.acquire(s);
        let (ptok, _) = acquire_in(&self.prog_tokens, s);
        (tok, ptok, s)
    }

    /// Both slots of `acquire_program` are busy until the program ends.
    #[inline]
    fn release_program(&mut self, tok: usize, ptok: usize, end: u64) {
        self.release(tok, end);
        release_in(&mut self.prog_tokens, ptok, end);
    }

    #[inline]
    pub fn xfer_ns(&self, bytes: u64) -> u64 {
        (bytes * 1_000_000_000).div_ceil(self.channel_bytes_per_s)
    }

    /// How long the die is held after a read of `bytes` while the controller
    /// decodes it (`controller.read_decode_ns` plus bytes at
    /// `controller.read_decode_bytes_per_s`).
    #[inline]
    pub fn decode_ns(&self, bytes: u64) -> u64 {
        self.decode_fixed_ns
            + match self.decode_bytes_per_s {
                0 => 0,
                r => (bytes * 1_000_000_000).div_ceil(r),
            }
    }

    /// Forget channel bookings no request can reach any more. A transfer
    /// starts at or after `now_ns` and after the work already booked on its
    /// die, so nothing that ends before the least busy die of a channel is
    /// free matters to that channel: its calendar keeps only the backlog
    /// between its dies, not all the dies' backlog ahead of the host.
    /// A read with priority starts within `read_pass_wait_ns` of `now_ns`
    /// even on a die with more work booked, so the horizon is no later.
    pub fn advance(&mut self, now_ns: u64) {
        let mut horizon = [u64::MAX; 64];
        let pass = now_ns.saturating_add(self.read_pass_wait_ns);
        for (d, &busy) in self.busy_until_ns.iter().enumerate() {
            let h = &mut horizon[self.channel_of_die[d] as usize];
            *h = (*h).min(busy.min(pass));
            // A plane read starts once its plane is free, maybe before the
            // die's other work ends.
            if self.planes > 0 {
                let p0 = d * self.planes as usize;
                for &u in &self.plane_read_until_ns[p0..p0 + self.planes as usize] {
                    *h = (*h).min(u);
                }
            }
        }
        for (c, cal) in self.channels.iter_mut().enumerate() {
            cal.advance(now_ns.max(horizon[c]));
        }
        // A recycling booking starts at or after `now_ns`.
        self.recycle_path.advance(now_ns);
    }

    /// Read a page (all planes at once when `bytes` spans them) and move `bytes`
    /// out over the channel; the die holds the data in its register until then,
    /// and stays held while the controller decodes it (when that is modelled).
    /// Returns when the data is decoded in the controller.
    ///
    /// With read priority, a read passes the programs, erases and GC work
    /// queued on its die: it waits for the operation in progress (at most
    /// half a program time: its mean remainder; the engine keeps no per-die
    /// operation list) and for earlier reads, and the queued work ends later
    /// by the read's time. Completion times already given for the passed
    /// work are not revised (their buffer space is freed a read's time early).
    #[inline]
    pub fn read(&mut self, die: u32, earliest_ns: u64, bytes: u64) -> u64 {
        self.read_t(die, earliest_ns, bytes, self.tr_ns)
    }

    /// [`Nand::read`] of a page whose read time is `tr_ns` (its page type's,
    /// or SLC mode's).
    #[inline]
    pub fn read_t(&mut self, die: u32, earliest_ns: u64, bytes: u64, tr_ns: u64) -> u64 {
        let x = self.xfer_ns(bytes);
        let dec = self.decode_ns(bytes);
        let busy = self.busy_until_ns[die as usize];
        let at = earliest_ns.max(self.dies[die as usize].read_until_ns).max(busy.min(earliest_ns.saturating_add(self.read_pass_wait_ns)));
        // Passing queued work, the read takes the die's slot (the queued
        // work holds one); otherwise it needs a slot of its own.
        let (tok, start) = if at < busy { (usize::MAX, at) } else { self.acquire(at) };
        let ready = start + tr_ns;
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(ready, x);
        let end = xs + x + dec;
        self.release(tok, end);
        let d = &mut self.dies[die as usize];
        d.read_busy_ns += tr_ns;
        d.read_until_ns = end;
        self.busy_until_ns[die as usize] = if start < busy { busy + (end - start) } else { end };
        if self.planes > 0 {
            // Queued programs and erases it passed move back by its time.
            if start < self.array_until_ns[die as usize] {
                self.array_until_ns[die as usize] += end - start;
            }
            // A read of the whole die holds every plane.
            let p0 = (die * self.planes) as usize;
            for u in &mut self.plane_read_until_ns[p0..p0 + self.planes as usize] {
                *u = (*u).max(end);
            }
        }
        self.counters.page_reads += 1;
        self.counters.bytes_read += bytes;
        self.counters.channel_bytes += bytes;
        end
    }

    /// [`Nand::read_t`] of one page on plane `plane`: with independent plane
    /// reads it waits only for earlier reads of that plane and for the die's
    /// programs, erases and copies (with read priority, for the one in
    /// progress: it passes the queued ones, which end later by the time the
    /// die's reads grow by), so reads of other planes overlap it; the
    /// transfer still takes the channel. Without them, a whole-die read.
    #[inline]
    pub fn read_plane_t(&mut self, die: u32, plane: u32, earliest_ns: u64, bytes: u64, tr_ns: u64) -> u64 {
        if self.planes == 0 {
            return self.read_t(die, earliest_ns, bytes, tr_ns);
        }
        let x = self.xfer_ns(bytes);
        let dec = self.decode_ns(bytes);
        let p = (die * self.planes + plane % self.planes) as usize;
        let array = self.array_until_ns[die as usize];
        let at = earliest_ns.max(self.plane_read_until_ns[p]).max(array.min(earliest_ns.saturating_add(self.read_pass_wait_ns)));
        let (tok, start) = if at < array { (usize::MAX, at) } else { self.acquire(at) };
        let ready = start + tr_ns;
        let ch = self.channel_of_die[die as usize] as usize;
        let xs = self.channels[ch].reserve(ready, x);
        let end = xs + x + dec;
        self.release(tok, end);
        self.plane_read_until_ns[p] = end;
        let d = &mut self.dies[die as usize];
        d.read_busy_ns += tr_ns;
        // Queued work passed moves back by what this read adds to the die's
        // reads (overlapping reads of other planes count once).
        let shift = end.saturating_sub(start.max(d.read_until_ns));
        d.read_until_ns = d.read_until_ns.max(end);
        let b = &mut self.busy_until_ns[die as usize];
        if start < array {
            *b += shift;
            self.array_until_ns[die as usize] += shift;
        } else {
            // Programs and erases wait for every plane's reads.
            *b = (*b).max(end);
        }
        self.counters.page_reads += 1;
        self.counters.bytes_read += bytes;
        self.counters.channel_bytes += bytes;
        end
    }

    /// The die's programs, erases and copies end at `end` (independent plane
    /// reads wait for them).
    #[inline]
    fn array_busy(&mut self, die: u32, end: u64) {
        if let Some(a) = self.array_until_ns.get_mut(die as usize) {
            *a = end;
        }
    }

    /// Move `bytes` into the die over the channel, then program them.
    /// Returns (transfer end: the data has left the controller's buffer, program end).
    #[inline]
    pub fn program(&mut self, die: u32, earliest_ns: u64, bytes: u64) -> (u64, u64) {
        self.program_t(die, earliest_ns, bytes, self.tprog_ns)
    }

    /// Program with a given program time (fast modes).
    #[inline]
    pub fn program_t(&mut self, die: u32, earliest_ns: u64, bytes: u64, tprog_ns: u64) -> (u64, u64) {
        let x = self.xfer_ns(bytes);
        let ch = self.channel_of_die[die as usize] as usize;
        let busy = self.busy_until_ns[die as usize];
        // With cache programming the transfer may end as the die finishes
        // its previous operation.
        let free = if self.cache_program { busy.saturating_sub(x) } else { busy };
        let (tok, ptok, s0) = self.acquire_program(earliest_ns.max(free));
        let xs = self.channels[ch].reserve(s0, x);
        let xe = xs + x;
        let done = xe.max(busy) + tprog_ns;
        self.release_program(tok, ptok, done);
        let d = &mut self.dies[die as usize];
        d.prog_busy_ns += tprog_ns;
        d.program_until_ns = done;
        self.busy_until_ns[die as usize] = done;
        self.array_busy(die, done);
        self.counters.unit_programs += 1;
        self.counters.bytes_programmed += bytes;
        self.counters.channel_bytes += bytes;
        (xe, done)
    }

    /// Garbage-collection copy of one program unit: `reads` page reads on the
    /// die, the data out to the controller and back over the channel (one
    /// booking; the die is held for the controller's decode after it), then the
    /// program. Returns when the data left the controller.
    #[inline]
    pub fn copy_through_controller(&mut self, die: u32, earliest_ns: u64, reads: u64, bytes: u64, tprog_ns: u64) -> u64 {
        self.copy_through_controller_ns(die, earliest_ns, reads, reads * self.tr_ns, bytes, tprog_ns)
    }

    /// [`Nand::copy_through_controller`] whose `reads` page reads take
    /// `read_ns` in all (pages of several types, or SLC-mode pages).
    #[inline]
    pub fn copy_through_controller_ns(&mut self, die: u32, earliest_ns: u64, reads: u64, read_ns: u64, bytes: u64, tprog_ns: u64) -> u64 {
        let x = self.xfer_ns(bytes);
        let dec = self.decode_ns(bytes);
        let ch = self.channel_of_die[die as usize] as usize;
        let (tok, ptok, s0) = self.acquire_program(earliest_ns.max(self.busy_until_ns[die as usize]));
        let s0 = s0 + read_ns;
        let xs = self.channels[ch].reserve(s0, 2 * x);
        let xe = xs + 2 * x + dec;
        let done = xe + tprog_ns;
        self.release_program(tok, ptok, done);
        let d = &mut self.dies[die as usize];
        d.read_busy_ns += read_ns;
        d.prog_busy_ns += tprog_ns;
        d.program_until_ns = done;
        self.busy_until_ns[die as usize] = done;
        self.array_busy(die, done);
        let c = &mut self.counters;
        c.page_reads += reads;
        c.bytes_read += bytes;
        c.unit_programs += 1;
        c.bytes_programmed += bytes;
        c.channel_bytes += 2 * bytes;
        xe
    }

    /// Pass one of the die's blocks through the controller's recycling path
    /// for `dur_ns`: booked on the path (shared by every die) at the first
    /// free time once the die is free, the die held from then until the
    /// path is done with its block. Returns when it is.
    #[inline]
    pub fn recycle(&mut self, die: u32, earliest_ns: u64, dur_ns: u64) -> u64 {
        // The recycling engine works beside the host path: it holds the die
        // but not one of the controller's active-die slots.
        let free = earliest_ns.max(self.busy_until_ns[die as usize]);
        let s = self.recycle_path.reserve(free, dur_ns);
        self.busy_until_ns[die as usize] = s + dur_ns;
        self.array_busy(die, s + dur_ns);
        self.dies[die as usize].read_busy_ns += dur_ns;
        s + dur_ns
    }

    #[inline]
    pub fn erase(&mut self, die: u32, earliest_ns: u64) -> u64 {
        self.erase_t(die, earliest_ns, self.tbers_ns)
    }

    /// Erase a block whose erase time is `tbers_ns` (SLC mode's).
    #[inline]
    pub fn erase_t(&mut self, die: u32, earliest_ns: u64, tbers_ns: u64) -> u64 {
        let (tok, s) = self.acquire(earliest_ns.max(self.busy_until_ns[die as usize]));
        self.release(tok, s + tbers_ns);
        self.busy_until_ns[die as usize] = s + tbers_ns;
        self.array_busy(die, s + tbers_ns);
        self.dies[die as usize].erase_busy_ns += tbers_ns;
        self.counters.block_erases += 1;
        s + tbers_ns
    }

    pub fn die_busy_until(&self, die: u32) -> u64 {
        self.busy_until_ns[die as usize]
    }

    /// When the die's page register is free of the last program booked on it.
    pub fn die_program_until(&self, die: u32) -> u64 {
        self.dies[die as usize].program_until_ns
    }

    pub fn unit_bytes(unit_slots: u32) -> u64 {
        unit_slots as u64 * UNIT_BYTES
    }

    pub fn channels_consistent(&self) -> bool {
        self.channels.iter().all(|c| c.is_consistent()) && self.recycle_path.is_consistent()
    }
}

/// With a limit of `tokens.len()` (none when empty), the earliest start >=
/// `t` at which one of the slots is free, and which slot. Operations are
/// booked out of time order, so the slot taken is the one that freed last
/// before `t` (best fit), leaving earlier-free slots to earlier work; if none
/// is free by `t`, the one that frees first.
#[inline]
fn acquire_in(tokens: &[u64], t: u64) -> (usize, u64) {
    if tokens.is_empty() {
        return (usize::MAX, t);
    }
    match tokens.partition_point(|&free| free <= t) {
        0 => (0, tokens[0]),
        i => (i - 1, t),
    }
}

/// The slot taken by `acquire_in` is busy until `end` (later than it was
/// free): move it up to keep the times sorted.
#[inline]
fn release_in(tokens: &mut [u64], slot: usize, end: u64) {
    if slot != usize::MAX {
        let mut i = slot;
        while i + 1 < tokens.len() && tokens[i + 1] < end {
            tokens[i] = tokens[i + 1];
            i += 1;
        }
        tokens[i] = end;
    }
}
