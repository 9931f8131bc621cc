//! The SLC cache: host data written into blocks in SLC mode (one bit per
//! cell: a third or a quarter of the block, at the SLC program time) while
//! the cache has room, and folded later into native TLC/QLC blocks. The
//! blocks are the `fast` blocks of performance mode, and folding reuses its
//! queue (`reorg`): a sealed SLC block is queued, and a fold is a GC of it
//! into the die's GC write point, which is always native.
//!
//! Room: a static part plus a dynamic part that shrinks in proportion as
//! native blocks fill with data (`slc_cache` in the drive file), and never
//! more SLC blocks than the die's free blocks can fold. Once a die finds no
//! room its cache is full: host writes go to native blocks, folding the
//! SLC blocks at `fold_units_per_host_unit` beside them, until idle time
//! (or, with `refill_while_writing`, the fold of the whole cache) gives the
//! cache back.
//!
//! A write-through buffer (`write_through_max_bytes`) is the static part
//! used another way: every small host write goes through it, never past
//! it. When a die's buffer is at its size, the die folds its SLC blocks as
//! the host writes into it (`fold_units_per_host_unit`), oldest first, and
//! folds the oldest whole before it opens another if that was not enough;
//! larger writes go to native blocks. Space GC then takes native victims
//! (the buffer's blocks only by what they hold): the buffer has its own
//! pace.

use super::Ftl;
use crate::config::DriveConfig;
use crate::error::Result;
use crate::nand::Nand;

/// The SLC cache's settings and state (absent: no SLC cache).
#[derive(Clone, Debug)]
pub(super) struct SlcCache {
    /// Bits per cell of the native mode: an SLC block holds 1/bits.
    pub(super) bits: u32,
    /// SLC blocks per die of the static part, and of the dynamic part on
    /// an empty die.
    static_blocks: u32,
    dynamic_blocks: u32,
    /// Fold units per host unit while full, in 1/1024ths, and each die's
    /// credit of them.
    fold_rate: u32,
    fold_credit: Vec<u32>,
    refill_while_writing: bool,
    /// Host writes of at most this many bytes always go through SLC
    /// blocks (0: no write-through).
    pub(super) write_through: u64,
    /// User capacity per die, granules (what the dynamic part shrinks by).
    user_grans_per_die: u64,
    /// Per die: SLC blocks in use (open, sealed or being folded), the valid
    /// granules they hold, and whether the cache is full (host writes go to
    /// native blocks until it is given back).
    pub(super) blocks: Vec<u32>,
    pub(super) valid: Vec<u64>,
    pub(super) full: Vec<bool>,
    /// Per die: idle time gave the cache back while the host block was a
    /// native one (the host's next writes go to SLC blocks again).
    pub(super) back: Vec<bool>,
}

impl SlcCache {
    pub(super) fn new(cfg: &DriveConfig, cap: u32, gran_bytes: u64) -> Option<SlcCache> {
        let sc = cfg.slc_cache.as_ref()?;
        let g = cfg.geometry();
        let dies = g.dies as u64;
        let user = cfg.drive.user_capacity_bytes as f64;
        // Capacities are of data held in SLC mode: a block holds `cap` granules.
        let blocks_for = |pct: f64| -> u32 {
            let bytes = user * pct / 100.0;
            (bytes / (dies as f64 * cap as f64 * gran_bytes as f64)).ceil() as u32
        };
        Some(SlcCache {
            bits: cfg.nand.bits_per_cell,
            static_blocks: blocks_for(sc.static_percent_of_capacity),
            dynamic_blocks: blocks_for(sc.dynamic_percent_of_capacity),
            fold_rate: (sc.fold_units_per_host_unit * 1024.0).round() as u32,
            fold_credit: vec![0; g.dies as usize],
            refill_while_writing: sc.refill_while_writing,
            write_through: sc.write_through_max_bytes,
            user_grans_per_die: (g.user_units * g.gran_per_slot as u64).div_ceil(dies).max(1),
            blocks: vec![0; g.dies as usize],
            valid: vec![0; g.dies as usize],
            full: vec![false; g.dies as usize],
            back: vec![false; g.dies as usize],
        })
    }

    pub(super) fn reset(&mut self) {
        self.blocks.iter_mut().for_each(|x| *x = 0);
        self.valid.iter_mut().for_each(|x| *x = 0);
        self.full.iter_mut().for_each(|x| *x = false);
        self.back.iter_mut().for_each(|x| *x = false);
    }
}

impl Ftl {
    /// SLC blocks die `d`'s cache may hold now: the static part, plus the
    /// dynamic part in proportion to the die's user capacity that native
    /// blocks do not hold yet (0 without a cache).
    pub(super) fn slc_size(&self, d: usize) -> u32 {
        let Some(c) = self.slc.as_ref() else { return 0 };
        let native = self.die_valid[d].saturating_sub(c.valid[d]);
        let left = c.user_grans_per_die.saturating_sub(native);
        c.static_blocks + (c.dynamic_blocks as u64 * left / c.user_grans_per_die) as u32
    }

    /// Is die `d`'s cache at its size while it is not full (idle time gave
    /// it back)? Its emptied SLC blocks are then what stands in the way.
    pub(super) fn slc_at_size(&self, d: usize) -> bool {
        let Some(c) = self.slc.as_ref() else { return false };
        !c.full[d] && c.blocks[d] >= self.slc_size(d)
    }

    /// Would die `d`'s cache take another block if it had one more erased
    /// block? (Its size allows it, and it is not full.)
    pub(super) fn slc_short_of_erased(&self, d: usize) -> bool {
        let Some(c) = self.slc.as_ref() else { return false };
        !c.full[d] && c.blocks[d] < self.slc_size(d) && self.dies[d].free.len() as u32 <= self.slc_erased_reserve(c, d)
    }

    /// Does die `d`'s next host block go in SLC mode? Marks the cache full
    /// when it has no room.
    pub(super) fn slc_has_room(&mut self, d: usize) -> bool {
        let Some(c) = self.slc.as_ref() else { return false };
        if c.full[d] {
            return false;
        }
        let room = c.blocks[d] < self.slc_size(d) && self.dies[d].free.len() as u32 > self.slc_erased_reserve(c, d);
        if !room {
            if let Some(c) = self.slc.as_mut() {
                c.full[d] = true;
            }
        }
        room
    }

    /// Is the SLC cache a write-through buffer for small writes?
    #[inline]
    pub(super) fn slc_write_through(&self) -> bool {
        self.slc.as_ref().is_some_and(|c| c.write_through > 0)
    }

    /// With a write-through buffer: does the host block die `die` opens
    /// now go in SLC mode? Yes for a small write, once the buffer has
    /// room for one more block: folding its oldest blocks makes it.
    /// (A large write, or no block left to fold: a native block.)
    pub(super) fn slc_through_opens(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<bool> {
        let d = die as usize;
        let wt = self.slc.as_ref().map_or(0, |c| c.write_through);
        if self.write_bytes > wt {
            return Ok(false);
        }
        // Bounded: each pass erases a victim (a fold, or a GC victim the
        // die was cleaning) or stops.
        for _ in 0..=self.g.blocks_per_die {
            if self.slc.as_ref().is_some_and(|c| c.blocks[d] < self.slc_size(d)) {
                return Ok(true);
            }
            if !self.fold_oldest_slc_block(die, now_ns, nand)? {
                break;
            }
        }
        Ok(false)
    }

    /// Is die `d`'s write-through buffer at its size (its folding paced
    /// by the host's writes into it)?
    #[inline]
    fn slc_through_at_size(&self, d: usize) -> bool {
        self.slc.as_ref().is_some_and(|c| c.write_through > 0 && c.blocks[d] >= self.slc_size(d))
    }

    /// Erased blocks die `d` keeps back from its cache: folding every SLC
    /// block (one more included) needs 1/bits of a native block each,
    /// beyond the blocks GC keeps in reserve.
    fn slc_erased_reserve(&self, c: &SlcCache, d: usize) -> u32 {
        self.gc_threshold + 2 + (c.blocks[d] + 1).div_ceil(c.bits)
    }

    /// A block of die `d` leaves SLC use (folded and erased).
    pub(super) fn slc_block_erased(&mut self, d: usize) {
        if let Some(c) = self.slc.as_mut() {
            c.blocks[d] -= 1;
            if c.refill_while_writing && c.blocks[d] == 0 {
                c.full[d] = false;
            }
        }
    }

    /// Idle time gives the cache back: host writes land in SLC again as
    /// far as folding has made room.
    pub(super) fn slc_idle(&mut self) {
        let Some(c) = self.slc.as_mut() else { return };
        c.full.iter_mut().for_each(|x| *x = false);
        if c.write_through > 0 {
            return;
        }
        for (d, die) in self.dies.iter().enumerate() {
            let b = die.host_wp.block;
            c.back[d] = b != super::NONE && !self.blocks[b as usize].fast;
        }
    }

    /// Program units to fold before this host program unit on die `d` (the
    /// host unit's block `b`): only while the cache is full and the host
    /// writes to native blocks, or while a write-through buffer at its size
    /// takes the host's writes.
    #[inline]
    pub(super) fn fold_count(&mut self, d: usize, b: u32) -> u32 {
        let fast = self.blocks[b as usize].fast;
        // A write-through buffer at its size folds as the host writes into it.
        let through = fast && self.slc_through_at_size(d);
        match self.slc.as_mut() {
            None => self.reorg_rate,
            Some(c) if (c.full[d] && !fast) || through => {
                let k = c.fold_credit[d] + c.fold_rate;
                c.fold_credit[d] = k % 1024;
                k / 1024
            }
            Some(_) => 0,
        }
    }

    /// Bytes of host data the SLC blocks hold now, and SLC blocks in use.
    pub fn slc_usage(&self) -> (u64, u64) {
        match self.slc.as_ref() {
            None => (0, 0),
            Some(c) => (c.valid.iter().sum::<u64>() * self.gran_bytes, c.blocks.iter().map(|&b| b as u64).sum()),
        }
    }

    /// Page read time of granule `gran`: its page type's, or SLC mode's.
    #[inline]
    pub(super) fn tr_of(&self, gran: u32, nand: &Nand) -> u64 {
        if !self.typed_reads {
            return nand.tr_ns;
        }
        let b = self.spb_div.div(gran);
        if self.blocks[b as usize].fast && self.slc_tr_ns > 0 {
            return self.slc_tr_ns;
        }
        if self.tr_types.is_empty() {
            return nand.tr_ns;
        }
        let page = self.read_div.div(self.spb_div.rem(gran));
        self.tr_types[(page % self.tr_types.len() as u32) as usize]
    }

    /// Die read time of a whole program unit of block `b` (a GC or fold
    /// read): one read per page of it.
    pub(super) fn unit_read_ns(&self, b: u32, nand: &Nand) -> u64 {
        let pages = self.unit / self.read_unit;
        if self.blocks[b as usize].fast && self.slc_tr_ns > 0 {
            return pages as u64 * self.slc_tr_ns;
        }
        if self.tr_types.is_empty() || pages == 1 {
            return pages as u64 * nand.tr_ns;
        }
        (0..pages).map(|p| self.tr_types[(p % self.tr_types.len() as u32) as usize]).sum()
    }
}
