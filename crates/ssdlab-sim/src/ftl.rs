//! Flash translation layer: page-level mapping at 4KB, host program units
//! dispatched across dies (to the die that frees up first), per-die
//! free-block pools, garbage collection (greedy,
//! cost-benefit, FIFO), TRIM and secure erase.
//!
//! Layout: the FTL allocates *granules*: a 4KB slot, or a 1KB quarter of one
//! when data reduction packs compressed units (`gran_per_slot` = 4). A 4KB
//! logical unit occupies 1..=gran_per_slot consecutive granules, starting at
//! its head granule. The map entry of an LBA is its head granule, with the
//! unit's length in the top bits when granules are smaller than 4KB
//! ([`LEN_SHIFT`]); what each block holds is in the [`RevMap`].
//! `granule = block * granules_per_block + offset`,
//! `block = die * blocks_per_die + local`. A block here is the multi-plane block
//! set (one block per plane, erased together), programmed a unit (one page on
//! every plane) at a time, in order.
//!
//! The FTL changes the mapping at the moment a command is processed and books
//! the NAND work it implies on the [`Nand`] timelines; host writes therefore
//! wait behind foreground GC booked on the same die.

use crate::check::Shadow;
use crate::config::{DriveConfig, GcMode, GcPolicy, Geometry, UNIT_BYTES};
use crate::pattern::DataPattern;
use crate::error::{Result, SimError};
use crate::nand::Nand;
use crate::revmap::{RevMap, PAD};
use std::collections::VecDeque;

pub const NONE: u32 = u32::MAX;
/// With data reduction, map and log entries carry the unit's length in
/// granules, minus one, from this bit up (so heads and LBAs stay below 2^30).
pub const LEN_SHIFT: u32 = 30;
/// 4KB units of a GC victim whose map entries are prefetched together when
/// a step runs past what was prefetched for it.
const GC_PREFETCH_UNITS: u32 = 8;

/// A large table filled with `value`, backed by transparent huge pages where
/// the OS offers them (the maps are hundreds of MB and touched at random, so
/// TLB misses would otherwise dominate). Results do not depend on it.
pub fn big_table<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 << 20 {
            let p = v.as_mut_ptr() as usize;
            let huge = 2usize << 20;
            let start = (p + huge - 1) & !(huge - 1);
            let end = (p + bytes) & !(huge - 1);
            if end > start {
                // SAFETY: advice on memory this Vec owns; failure is harmless.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v.resize(n, value);
    v
}

/// Division by a constant of the drive, by shift when it is a power of two
/// (it nearly always is: the hot paths divide by granules per block, per
/// program unit and blocks per die).
#[derive(Clone, Copy, Debug)]
struct Divisor {
    d: u32,
    shift: u32,
}

impl Divisor {
    fn new(d: u32) -> Divisor {
        Divisor { d, shift: if d.is_power_of_two() { d.trailing_zeros() } else { u32::MAX } }
    }
    #[inline(always)]
    fn div(self, x: u32) -> u32 {
        if self.shift != u32::MAX {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline(always)]
    fn rem(self, x: u32) -> u32 {
        if self.shift != u32::MAX {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

/// Ask the CPU to start loading `v[i]` (no effect on results).
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < v.len() {
        // SAFETY: the pointer is inside the slice; prefetch never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch(v.as_ptr().add(i) as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

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
    prev: u32,
    next: u32,
    /// Last time its valid count changed.
    stamp_ns: u64,
    /// When it was sealed (filled): the age of its data, for cost-benefit.
    sealed_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct WritePoint {
    /// Global block id, or NONE.
    block: u32,
    /// Next granule offset to write in the block.
    next: u32,
    /// Granules already programmed (a multiple of the program unit).
    programmed: u32,
    /// Latest time at which data for the unit being filled is ready.
    ready_ns: u64,
    /// Host bytes held in the buffer for the unit being filled.
    host_bytes: u64,
    /// Granules the block holds (see `Ftl::cap`), fixed while it is open.
    cap: u32,
}

impl WritePoint {
    const EMPTY: WritePoint = WritePoint { block: NONE, next: 0, programmed: 0, ready_ns: 0, host_bytes: 0, cap: 0 };
    fn at(block: u32, cap: u32) -> WritePoint {
        WritePoint { block, cap, ..WritePoint::EMPTY }
    }
}

#[derive(Clone, Debug)]
struct DieFtl {
    free: VecDeque<u32>,
    host_wp: WritePoint,
    gc_wp: WritePoint,
    /// Sealed blocks by valid count: heads/tails of doubly linked lists,
    /// ordered by last modification (oldest first).
    heads: Vec<u32>,
    tails: Vec<u32>,
    min_hint: u32,
    /// Sealed blocks in the order they were sealed (FIFO policy).
    fifo: VecDeque<u32>,
    /// Victim being cleaned: its next log entry to look at and that entry's
    /// granule offset, and the entry (and offset) up to which the map entries
    /// of its units have been prefetched.
    victim: u32,
    victim_entry: u32,
    victim_next: u32,
    victim_warm: u32,
    victim_warm_off: u32,
    /// Victim page (unit) last read for GC, and reads owed by the GC unit being filled.
    gc_last_read: u32,
    gc_pending_reads: u64,
    /// Valid slots of the victim when chosen, and paced-GC credit (1/65536 units).
    victim_valid0: u32,
    gc_credit: u64,
}

/// What the FTL did, for write amplification and the SMART-like figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_units_written: u64,
    pub host_units_trimmed: u64,
    /// NAND bytes programmed (host data, GC copies, padding, RAISE parity).
    pub nand_bytes_programmed: u64,
    /// Bytes of host data as stored after data reduction.
    pub stored_bytes_written: u64,
    pub gc_units_moved: u64,
    pub gc_bytes_moved: u64,
    pub padded_bytes: u64,
    pub parity_bytes: u64,
    pub rmw_reads: u64,
    /// Host units that replaced data still in the write buffer.
    pub host_units_coalesced: u64,
    pub gc_victims: u64,
    pub fg_gc_victims: u64,
    pub bg_gc_victims: u64,
    pub erases: u64,
}

impl FtlCounters {
    /// What happened since `before`.
    pub fn since(&self, b: &FtlCounters) -> FtlCounters {
        FtlCounters {
            host_units_written: self.host_units_written - b.host_units_written,
            host_units_trimmed: self.host_units_trimmed - b.host_units_trimmed,
            nand_bytes_programmed: self.nand_bytes_programmed - b.nand_bytes_programmed,
            stored_bytes_written: self.stored_bytes_written - b.stored_bytes_written,
            gc_units_moved: self.gc_units_moved - b.gc_units_moved,
            gc_bytes_moved: self.gc_bytes_moved - b.gc_bytes_moved,
            padded_bytes: self.padded_bytes - b.padded_bytes,
            parity_bytes: self.parity_bytes - b.parity_bytes,
            rmw_reads: self.rmw_reads - b.rmw_reads,
            host_units_coalesced: self.host_units_coalesced - b.host_units_coalesced,
            gc_victims: self.gc_victims - b.gc_victims,
            fg_gc_victims: self.fg_gc_victims - b.fg_gc_victims,
            bg_gc_victims: self.bg_gc_victims - b.bg_gc_victims,
            erases: self.erases - b.erases,
        }
    }
}

/// Host data that leaves the write buffer: the space it held is released at
/// `at_ns`. `die` is the die a program unit was sent to (its releases come in
/// time order), or NONE for data replaced in the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Release {
    pub at_ns: u64,
    pub bytes: u64,
    pub die: u32,
}

/// The page reads of one request, issued in order: each starts once its
/// die is free and, with a cap of `cap` dies (`seq_read_max_dies`), once the
/// read `cap` places earlier is done; `ready_ns` is when all are done.
struct ReadIssue {
    earliest_ns: u64,
    ready_ns: u64,
    cap: usize,
    issued: usize,
    window: [u64; 64],
}

impl ReadIssue {
    fn new(earliest_ns: u64, max_dies: u32) -> ReadIssue {
        ReadIssue { earliest_ns, ready_ns: earliest_ns, cap: (max_dies as usize).min(64), issued: 0, window: [0; 64] }
    }

    #[inline]
    fn issue(&mut self, nand: &mut Nand, die: u32, bytes: u64) -> u64 {
        let mut t = self.earliest_ns;
        if self.cap > 0 && self.issued >= self.cap {
            t = t.max(self.window[(self.issued - self.cap) % 64]);
        }
        let done = nand.read(die, t, bytes);
        if self.cap > 0 {
            self.window[self.issued % 64] = done;
        }
        self.issued += 1;
        self.ready_ns = self.ready_ns.max(done);
        done
    }
}

#[derive(Clone, Debug)]
pub struct Ftl {
    pub g: Geometry,
    policy: GcPolicy,
    gc_mode: GcMode,
    gc_threshold: u32,
    bg_gc_threshold: u32,
    /// LBA unit -> map entry (head granule, and length; see [`LEN_SHIFT`]), or NONE.
    l2p: Vec<u32>,
    rev: RevMap,
    /// Head granule of a map entry: the entry masked below the length bits.
    head_mask: u32,
    /// The length bits of an entry, shifted down (0: none, every unit one granule).
    len_mask: u32,
    pub blocks: Vec<Block>,
    dies: Vec<DieFtl>,
    host_die: u32,
    /// The die whose completed host unit waits in the buffer (see `write_unit`).
    waiting_die: u32,
    pub counters: FtlCounters,
    pub shadow: Option<Shadow>,
    /// Host units programmed into NAND whose buffer space is freed later.
    pub releases: Vec<Release>,
    /// The die reads of the last [`Ftl::read_units_p`] with pieces: (first
    /// LBA, done), in LBA order.
    pub read_pieces: Vec<(u64, u64)>,
    /// Granules per block, per program unit.
    spb: u32,
    unit: u32,
    spb_div: Divisor,
    unit_div: Divisor,
    bpd_div: Divisor,
    gran_bytes: u64,
    /// Granules a 4KB unit of each pattern occupies (index: pattern slot, see `pattern_index`).
    stored_granules: [u32; 5],
    ratio_meta_bytes: u64,
    /// Controller-wide recycling path rate, bytes/s (0: off).
    recycle_bytes_per_s: u64,
    /// Die striping of stored data for reads (`controller.die_stripe_bytes`; 0: off).
    stripe_bytes: u64,
    /// RAISE: data program units since the last parity program.
    raise_count: u32,
    /// Valid granules per die, and the most a die may hold while keeping
    /// the blocks GC needs to work (threshold + open host + open GC block).
    die_valid: Vec<u64>,
    die_room: u64,
    /// Performance mode: fast program time (0: no such mode), whether it is
    /// on, LBAs holding data and the count that ends it, and per die the
    /// fast-mode blocks still to reorganise and the pace.
    perf_tprog_ns: u64,
    pub perf_active: bool,
    mapped_lbas: u64,
    perf_limit_lbas: u64,
    reorg: Vec<Vec<u32>>,
    reorg_rate: u32,
}

impl Ftl {
    pub fn new(cfg: &DriveConfig, check: bool) -> Ftl {
        let g = cfg.geometry();
        let k = g.gran_per_slot;
        let spb = g.slots_per_block * k;
        let gran_bytes = UNIT_BYTES / k as u64;
        let (meta, fr) = match cfg.data_reduction.as_ref().filter(|d| d.enabled) {
            Some(d) => (d.metadata_bytes_per_unit, [1.0, d.repeated_stored_fraction, d.compressible_stored_fraction, d.zeros_stored_fraction]),
            None => (0, [1.0; 4]),
        };
        let gran_of = |f: f64| -> u32 {
            let bytes = (f * UNIT_BYTES as f64).round() as u64 + meta;
            (bytes.div_ceil(gran_bytes) as u32).clamp(1, k)
        };
        let stored_granules = [gran_of(fr[0]), gran_of(fr[1]), gran_of(fr[2]), gran_of(fr[3]), k];
        let nblocks = g.total_blocks() as usize;
        let blocks = vec![
            Block { valid: 0, erase_count: 0, state: BlockState::Free, fast: false, prev: NONE, next: NONE, stamp_ns: 0, sealed_ns: 0 };
            nblocks
        ];
        let dies = (0..g.dies)
            .map(|d| DieFtl {
                free: (0..g.blocks_per_die).map(|b| d * g.blocks_per_die + b).collect(),
                host_wp: WritePoint::EMPTY,
                gc_wp: WritePoint::EMPTY,
                heads: vec![NONE; spb as usize + 1],
                tails: vec![NONE; spb as usize + 1],
                min_hint: 0,
                fifo: VecDeque::new(),
                victim: NONE,
                victim_entry: 0,
                victim_next: 0,
                victim_warm: 0,
                victim_warm_off: 0,
                gc_last_read: NONE,
                gc_pending_reads: 0,
                victim_valid0: 0,
                gc_credit: 0,
            })
            .collect();
        Ftl {
            policy: cfg.ftl.gc_policy,
            gc_mode: cfg.ftl.gc_mode,
            gc_threshold: cfg.ftl.gc_threshold_blocks,
            bg_gc_threshold: cfg.ftl.bg_gc_threshold_blocks,
            l2p: big_table(g.user_units as usize, NONE),
            rev: RevMap::new(g.total_blocks() as u32, g.slots_per_block, spb),
            head_mask: if k == 1 { u32::MAX } else { (1 << LEN_SHIFT) - 1 },
            len_mask: if k == 1 { 0 } else { u32::MAX >> LEN_SHIFT },
            blocks,
            dies,
            host_die: 0,
            waiting_die: NONE,
            counters: FtlCounters::default(),
            shadow: if check { Some(Shadow::new(g.user_units, g.raw_slots * k as u64)) } else { None },
            releases: Vec::new(),
            read_pieces: Vec::new(),
            spb,
            unit: g.unit_slots * k,
            spb_div: Divisor::new(spb),
            unit_div: Divisor::new(g.unit_slots * k),
            bpd_div: Divisor::new(g.blocks_per_die),
            gran_bytes,
            stored_granules,
            ratio_meta_bytes: meta,
            recycle_bytes_per_s: cfg.ftl.recycle_bytes_per_s,
            stripe_bytes: cfg.controller.die_stripe_bytes,
            raise_count: 0,
            die_valid: vec![0; g.dies as usize],
            perf_tprog_ns: cfg.ftl.perf_mode_tprog_ns,
            perf_active: cfg.ftl.perf_mode_tprog_ns > 0,
            mapped_lbas: 0,
            perf_limit_lbas: g.user_units * cfg.ftl.perf_mode_fill_percent as u64 / 100,
            reorg: vec![Vec::new(); g.dies as usize],
            reorg_rate: cfg.ftl.perf_mode_reorg_units_per_host_unit.max(1),
            die_room: (g.blocks_per_die as u64 - cfg.ftl.gc_threshold_blocks as u64 - 2) * spb as u64,
            g,
        }
    }

    #[inline]
    fn die_of_block(&self, b: u32) -> u32 {
        self.bpd_div.div(b)
    }

    #[inline]
    pub fn die_of_slot(&self, slot: u32) -> u32 {
        self.bpd_div.div(self.spb_div.div(slot))
    }

    /// Bytes that reach the NAND for `bytes` of host data of `pattern`
    /// (after data reduction, with its metadata; `bytes` without it).
    #[inline]
    pub fn stored_bytes(&self, pattern: DataPattern, bytes: u64) -> u64 {
        if self.g.gran_per_slot == 1 {
            return bytes;
        }
        (self.granules_for(pattern) as u64 * self.gran_bytes * bytes).div_ceil(UNIT_BYTES)
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
    fn enc(&self, x: u32, n: u32) -> u32 {
        // Without data reduction every unit is one granule: nothing is added.
        debug_assert!(n >= 1 && (self.g.gran_per_slot > 1 || n == 1));
        x | (n - 1) << LEN_SHIFT
    }

    /// The head granule of a map entry (the LBA of a log entry).
    #[inline(always)]
    fn head_of(&self, e: u32) -> u32 {
        e & self.head_mask
    }

    /// Granules of the unit of a map or log entry.
    #[inline(always)]
    fn len_of(&self, e: u32) -> u32 {
        // `len_mask` is 0 without data reduction, whose entries use every bit.
        ((e >> LEN_SHIFT) & self.len_mask) + 1
    }

    /// Bytes of RAM the FTL's tables use now (the reverse map grows with
    /// the units written; see [`RevMap`]).
    pub fn memory_in_use_bytes(&self) -> u64 {
        let dies: usize = self.dies.iter().map(|d| (d.heads.len() + d.tails.len()) * 4 + d.free.capacity() * 4 + d.fifo.capacity() * 4).sum();
        (self.l2p.len() * 4 + self.blocks.len() * std::mem::size_of::<Block>() + dies) as u64 + self.rev.bytes_in_use()
    }

    /// Granules a block holds: half (whole program units) in performance mode.
    #[inline]
    fn cap(&self, b: u32) -> u32 {
        if self.blocks[b as usize].fast {
            (self.spb / 2 / self.unit).max(1) * self.unit
        } else {
            self.spb
        }
    }

    #[inline]
    fn tprog_of(&self, b: u32, nand: &Nand) -> u64 {
        if self.blocks[b as usize].fast {
            self.perf_tprog_ns
        } else {
            nand.tprog_ns
        }
    }

    /// Reorganisation work left (performance mode ended, fast blocks remain).
    pub fn reorg_pending(&self) -> usize {
        self.reorg.iter().map(|r| r.len()).sum()
    }

    pub fn gran_bytes(&self) -> u64 {
        self.gran_bytes
    }

    /// Warm the cache lines a write of `lba` will touch: its map entry (stage
    /// 0), once that is cached the old unit's live bit and block (1), and once
    /// that is cached the block's neighbours in its GC bucket and the tail of
    /// the bucket it moves to (2).
    #[inline]
    pub fn prefetch_write(&self, lba: u64, stage: u8) {
        if stage == 0 {
            prefetch(&self.l2p, lba as usize);
            return;
        }
        let old = self.l2p[lba as usize];
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

    pub fn free_blocks(&self, die: u32) -> usize {
        self.dies[die as usize].free.len()
    }

    /// Units currently mapped (valid user data).
    pub fn mapped_units(&self) -> u64 {
        self.blocks.iter().map(|b| b.valid as u64).sum()
    }

    // ----- bucket lists (greedy / cost-benefit victim selection) -----

    #[inline]
    fn uses_buckets(&self) -> bool {
        self.policy != GcPolicy::Fifo
    }

    #[inline]
    fn bucket_remove(&mut self, b: u32) {
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
    fn bucket_push(&mut self, b: u32) {
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

    // ----- invalidation -----

    /// Drop the unit of map entry `e`.
    #[inline]
    fn invalidate(&mut self, e: u32, now_ns: u64) {
        let head = self.head_of(e);
        let n = self.len_of(e);
        self.rev.clear_live(head);
        let b = self.spb_div.div(head);
        self.die_valid[self.bpd_div.div(b) as usize] -= n as u64;
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

    // ----- block allocation -----

    fn seal(&mut self, b: u32, now_ns: u64) {
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
    fn open_block(&mut self, die: u32, for_gc: bool, now_ns: u64, nand: &mut Nand) -> Result<u32> {
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
        let b = self.dies[die as usize].free.pop_front().ok_or_else(|| SimError::Drive {
            message: format!(
                "die {die} has no free block: its valid data exceeds its capacity (spare area too small for this workload)"
            ),
        })?;
        let blk = &mut self.blocks[b as usize];
        debug_assert_eq!(blk.state, BlockState::Free);
        blk.state = BlockState::Open;
        blk.valid = 0;
        blk.stamp_ns = now_ns;
        blk.fast = self.perf_active;
        Ok(b)
    }

    // ----- host writes -----

    /// Write one 4KB unit of `pattern` whose data is in the controller at
    /// `ready_ns`. Returns its head granule. Completed program units are
    /// programmed and their buffer release recorded in `self.releases`.
    pub fn write_unit(&mut self, lba: u64, ready_ns: u64, pattern: DataPattern, nand: &mut Nand) -> Result<u32> {
        let old = self.l2p[lba as usize];
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
        let die = self.host_die_with_room(n)?;
        let unit_before = self.unit_div.div(self.dies[die as usize].host_wp.next);
        let was_open = self.dies[die as usize].host_wp.block != NONE;
        let head = self.alloc(die, false, n, ready_ns, nand)?;
        self.die_valid[die as usize] += n as u64;
        self.l2p[lba as usize] = self.enc(head, n);
        let b = self.spb_div.div(head);
        self.rev.push(b, self.enc(lba as u32, n));
        self.rev.set_live(head);
        self.blocks[b as usize].valid += n;
        self.counters.host_units_written += 1;
        self.counters.stored_bytes_written += n as u64 * self.gran_bytes;
        if let Some(s) = self.shadow.as_mut() {
            s.write(lba, head);
        }
        let wp = &mut self.dies[die as usize].host_wp;
        wp.host_bytes += UNIT_BYTES;
        if ready_ns > wp.ready_ns {
            wp.ready_ns = ready_ns;
        }
        // A unit completed by a write stays in the buffer until the next host
        // unit gets data (small writes to its last LBA still coalesce); then
        // it goes to its die.
        let next = self.dies[die as usize].host_wp.next;
        let filled = !was_open || self.unit_div.div(next) > unit_before || self.dies[die as usize].host_wp.block == NONE;
        self.program_ready_units(die, false, ready_ns, nand, false)?;
        let w = self.waiting_die;
        if w != NONE && w != die {
            self.waiting_die = NONE;
            self.program_ready_units(w, false, ready_ns, nand, true)?;
        }
        if filled && self.unit_div.rem(next) == 0 {
            self.waiting_die = die;
            self.host_die = self.next_host_die(die, ready_ns, nand);
        }
        Ok(head)
    }

    /// Performance mode ends: every block written in fast mode is queued for
    /// rewriting in normal mode.
    fn end_perf_mode(&mut self) {
        self.perf_active = false;
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
        let mut best = d;
        let mut best_ns = u64::MAX;
        for _ in 0..dies {
            let t = nand.die_busy_until(d).max(now_ns) + if d == die { pending_ns } else { 0 };
            if t < best_ns && self.die_valid[d as usize] < self.die_room {
                best = d;
                best_ns = t;
            }
            d = if d + 1 == dies { 0 } else { d + 1 };
        }
        best
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
    fn alloc(&mut self, die: u32, gc: bool, n: u32, now_ns: u64, nand: &mut Nand) -> Result<u32> {
        let d = die as usize;
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
            // Performance-mode reorganisation runs alongside host writes.
            for _ in 0..self.reorg_rate {
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
            let xe = nand.program_t(die, t, bytes, tprog).0;
            self.counters.nand_bytes_programmed += bytes;
            self.raise_parity(t, nand);
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
        }
    }

    /// `program_ready_units` for the GC write point, which only programs
    /// (one unit at a time as GC fills it; the hot path of cleaning).
    #[inline]
    fn program_gc_units(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> bool {
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
            nand.copy_through_controller(die, t, reads, bytes, tprog);
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
        let lines = std::mem::size_of::<DieFtl>().div_ceil(64);
        let p = &self.dies[after as usize] as *const DieFtl as *const u8;
        for i in 0..lines {
            // SAFETY: prefetch never faults; the addresses lie within the DieFtl.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                std::arch::x86_64::_mm_prefetch(p.add(i * 64) as *const i8, std::arch::x86_64::_MM_HINT_T0);
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = (p, i);
        }
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

    /// RAISE: one parity program unit per stripe of data program units.
    #[inline]
    fn raise_parity(&mut self, t: u64, nand: &mut Nand) {
        if self.g.parity_dies == 0 {
            return;
        }
        self.raise_count += 1;
        if self.raise_count >= self.g.dies {
            self.raise_count = 0;
            let bytes = self.unit as u64 * self.gran_bytes;
            nand.program(self.g.dies, t, bytes);
            self.counters.nand_bytes_programmed += bytes;
            self.counters.parity_bytes += bytes;
        }
    }

    /// Is the granule in the host write point's unit still being filled?
    #[inline]
    fn in_open_host_unit(&self, gran: u32) -> bool {
        let die = self.die_of_slot(gran) as usize;
        let wp = &self.dies[die].host_wp;
        wp.block == self.spb_div.div(gran) && self.spb_div.rem(gran) >= wp.programmed
    }

    /// Is the granule's data still in the controller (its unit not yet programmed)?
    #[inline]
    pub fn is_buffered(&self, gran: u32) -> bool {
        let die = self.die_of_slot(gran) as usize;
        let b = self.spb_div.div(gran);
        let off = self.spb_div.rem(gran);
        let d = &self.dies[die];
        (d.host_wp.block == b && off >= d.host_wp.programmed) || (d.gc_wp.block == b && off >= d.gc_wp.programmed)
    }

    /// Program the completed host units that wait in the buffer (when the
    /// buffer is full).
    pub fn program_waiting_units(&mut self, now_ns: u64, nand: &mut Nand) -> Result<()> {
        for die in 0..self.g.dies {
            self.program_ready_units(die, false, now_ns, nand, true)?;
        }
        Ok(())
    }

    /// Program every partly filled unit now, padding it (a flush).
    pub fn flush(&mut self, now_ns: u64, nand: &mut Nand) {
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
                // Cannot fail: no block is opened when units are only programmed.
                let _ = self.program_ready_units(die, gc, now_ns, nand, true);
            }
        }
    }

    // ----- reads -----

    /// Read units `lba..lba+n`; returns when all their data is in the
    /// controller, and how many of them are unmapped. Granules in the same
    /// program unit of a die are read with one (multi-plane) read; with die
    /// striping, each run of data contiguous in the stored stream is read
    /// from the dies it spans (`read_striped`).
    /// `max_dies` > 0 caps how many dies the request pipelines across.
    pub fn read_units(&mut self, lba: u64, n: u64, earliest_ns: u64, nand: &mut Nand, max_dies: u32) -> Result<(u64, u64)> {
        self.read_units_p(lba, n, earliest_ns, nand, max_dies, false)
    }

    /// [`Ftl::read_units`], and with `pieces` the die reads in LBA order in
    /// [`Ftl::read_pieces`]: (first LBA whose data the read carries, when it
    /// is done). A striped run is one piece, done when all its reads are.
    pub fn read_units_p(&mut self, lba: u64, n: u64, earliest_ns: u64, nand: &mut Nand, max_dies: u32, pieces: bool) -> Result<(u64, u64)> {
        self.read_pieces.clear();
        let mut reads = ReadIssue::new(earliest_ns, max_dies);
        let mut cur_lba = 0u64;
        let mut run_lba = 0u64;
        let mut cur_unit = NONE;
        let mut cur_grans = 0u64;
        let mut unmapped = 0u64;
        // Striped: the current run of data contiguous in the stored stream
        // (home die of its first unit, bytes) and the granule after its end.
        let striped = self.stripe_bytes > 0;
        let mut run = (NONE, 0u64);
        let mut run_end = NONE;
        for l in lba..lba + n {
            let e = self.l2p[l as usize];
            let head = if e == NONE { NONE } else { self.head_of(e) };
            if let Some(s) = self.shadow.as_ref() {
                s.verify_read(l, head)?;
            }
            if head == NONE || self.is_buffered(head) {
                // Answered from the map or from the buffer.
                unmapped += (head == NONE) as u64;
                run_end = NONE;
                continue;
            }
            let len = self.len_of(e);
            if striped {
                // The stream continues where the last unit ended, or at the
                // start of a program unit when the last one ended a unit.
                let next = head == run_end || (run_end != NONE && self.unit_div.rem(run_end) == 0 && self.unit_div.rem(head) == 0);
                if !next && run.1 > 0 {
                    let done = self.read_striped(run.0, run.1, &mut reads, nand);
                    if pieces {
                        self.read_pieces.push((run_lba, done));
                    }
                    run.1 = 0;
                }
                if run.1 == 0 {
                    run.0 = self.die_of_slot(head);
                    run_lba = l;
                }
                run.1 += len as u64 * self.gran_bytes;
                run_end = head + len;
                continue;
            }
            let u = self.unit_div.div(head);
            if u != cur_unit {
                if cur_unit != NONE {
                    let done = reads.issue(nand, self.die_of_slot(cur_unit * self.unit), cur_grans * self.gran_bytes);
                    if pieces {
                        self.read_pieces.push((cur_lba, done));
                    }
                }
                cur_unit = u;
                cur_lba = l;
                cur_grans = 0;
            }
            cur_grans += len as u64;
        }
        if cur_unit != NONE {
            let done = reads.issue(nand, self.die_of_slot(cur_unit * self.unit), cur_grans * self.gran_bytes);
            if pieces {
                self.read_pieces.push((cur_lba, done));
            }
        }
        if run.1 > 0 {
            let done = self.read_striped(run.0, run.1, &mut reads, nand);
            if pieces {
                self.read_pieces.push((run_lba, done));
            }
        }
        Ok((reads.ready_ns, unmapped))
    }

    /// Read `bytes` contiguous in the stored stream that begin on `die`, with
    /// the stream striped across the data dies in `stripe_bytes` chunks: at
    /// an unaligned offset they span bytes / stripe + 1 chunks, so that many
    /// dies (at most all) each read their share, a page read per program
    /// unit of it.
    fn read_striped(&self, die: u32, bytes: u64, reads: &mut ReadIssue, nand: &mut Nand) -> u64 {
        let mut done = 0;
        let dies = self.g.dies as u64;
        let k = (bytes / self.stripe_bytes + 1).min(dies);
        let unit_bytes = self.unit as u64 * self.gran_bytes;
        let mut d = die;
        for i in 0..k {
            let mut share = bytes / k + (i < bytes % k) as u64;
            while share > 0 {
                let b = share.min(unit_bytes);
                done = done.max(reads.issue(nand, d, b));
                share -= b;
            }
            d = if d + 1 == self.g.dies { 0 } else { d + 1 };
        }
        done
    }

    /// Read-modify-write of a partly written unit: read the old data first.
    pub fn read_for_rmw(&mut self, lba: u64, earliest_ns: u64, nand: &mut Nand) -> u64 {
        let e = self.l2p[lba as usize];
        if e == NONE || self.is_buffered(self.head_of(e)) {
            return earliest_ns;
        }
        let head = self.head_of(e);
        self.counters.rmw_reads += 1;
        let bytes = self.len_of(e) as u64 * self.gran_bytes;
        let die = self.die_of_slot(head);
        if self.stripe_bytes > 0 {
            let mut reads = ReadIssue::new(earliest_ns, 0);
            self.read_striped(die, bytes, &mut reads, nand);
            return reads.ready_ns;
        }
        nand.read(die, earliest_ns, bytes)
    }

    // ----- TRIM and secure erase -----

    pub fn trim_units(&mut self, lba: u64, n: u64, now_ns: u64) {
        for l in lba..lba + n {
            let e = self.l2p[l as usize];
            if e != NONE {
                self.invalidate(e, now_ns);
                self.l2p[l as usize] = NONE;
                self.mapped_lbas -= 1;
                self.counters.host_units_trimmed += 1;
            }
            if let Some(s) = self.shadow.as_mut() {
                s.trim(l);
            }
        }
        self.resume_perf_mode();
    }

    /// Performance mode follows the fill level both ways: once TRIM leaves
    /// no more than `perf_mode_fill_percent` of the LBAs holding data, the
    /// drive is "50% or less full" again and writes in the fast mode (OCZ,
    /// June 2012: drives "transition back and forth from performance to
    /// storage mode"). Fast blocks still queued for reorganisation need no
    /// rewrite now: they are queued again when the mode next ends.
    fn resume_perf_mode(&mut self) {
        if self.perf_tprog_ns > 0 && !self.perf_active && self.mapped_lbas <= self.perf_limit_lbas {
            self.perf_active = true;
            self.reorg.iter_mut().for_each(|r| r.clear());
        }
    }

    /// Erase every block that is not already erased; forget the mapping.
    /// Returns when the last die finishes.
    pub fn secure_erase(&mut self, now_ns: u64, nand: &mut Nand) -> u64 {
        let mut done = now_ns;
        for b in 0..self.blocks.len() as u32 {
            let blk = &mut self.blocks[b as usize];
            if blk.state != BlockState::Free {
                blk.erase_count += 1;
                self.counters.erases += 1;
                done = done.max(nand.erase(b / self.g.blocks_per_die, now_ns));
            }
            *blk = Block { valid: 0, erase_count: blk.erase_count, state: BlockState::Free, fast: false, prev: NONE, next: NONE, stamp_ns: now_ns, sealed_ns: now_ns };
        }
        self.l2p.iter_mut().for_each(|x| *x = NONE);
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
        self.mapped_lbas = 0;
        self.perf_active = self.perf_tprog_ns > 0;
        self.reorg.iter_mut().for_each(|r| r.clear());
        self.host_die = 0;
        self.waiting_die = NONE;
        if let Some(s) = self.shadow.as_mut() {
            s.clear();
        }
        done
    }

    // ----- garbage collection -----

    /// Paced foreground GC: before each host program unit on a die short of
    /// free blocks, move as many GC units as keep the pool level: cleaning a
    /// victim with `v` valid of `spb` slots frees `spb - v` slots for `v`
    /// moves, so each host unit owes `v / (spb - v)` GC units.
    fn gc_paced(&mut self, die: u32, now_ns: u64, nand: &mut Nand) -> Result<()> {
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
        // Performance-mode reorganisation first: fast blocks, whatever they hold.
        while let Some(b) = self.reorg[d].pop() {
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
        if v == NONE {
            if !self.gc_can_gain(die) {
                return false;
            }
            v = self.select_victim(die, now_ns);
            if v == NONE {
                return false;
            }
        }
        self.dies[d].victim = v;
        self.dies[d].victim_entry = 0;
        self.dies[d].victim_next = 0;
        self.dies[d].victim_warm = 0;
        self.dies[d].victim_warm_off = 0;
        self.dies[d].victim_valid0 = self.blocks[v as usize].valid;
        if self.recycle_bytes_per_s > 0 {
            // The controller's recycling path processes the whole block at
            // its fixed rate, whatever it holds (stale or TRIMmed data
            // included; config.rs, `ftl.recycle_bytes_per_s`).
            let bytes = self.spb as u64 * self.gran_bytes;
            nand.recycle(die, now_ns, bytes * 1_000_000_000 / self.recycle_bytes_per_s);
        }
        self.dies[d].gc_last_read = NONE;
        self.counters.gc_victims += 1;
        if foreground {
            self.counters.fg_gc_victims += 1;
        } else {
            self.counters.bg_gc_victims += 1;
        }
        true
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

    // A block's log is walked in three places (here, `gc_victim_step` and
    // `check_all`), each stepping over padding and summing lengths itself:
    // one shared cursor step measured 6% slower on the GC path.

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
                prefetch(&self.l2p, l as usize);
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
            self.l2p[lba as usize] = self.enc(new, n);
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
        self.blocks[victim as usize].valid -= moved_grans;
        self.counters.gc_units_moved += moved_units;
        self.counters.gc_bytes_moved += moved_grans as u64 * self.gran_bytes;
        self.dies[d].victim_entry = i;
        self.dies[d].victim_next = off;
        if i >= total {
            // Erase the victim and return it to the pool.
            debug_assert_eq!(self.blocks[victim as usize].valid, 0);
            nand.erase(die, now_ns);
            self.rev.clear_block(victim);
            let blk = &mut self.blocks[victim as usize];
            blk.erase_count += 1;
            blk.state = BlockState::Free;
            blk.valid = 0;
            self.counters.erases += 1;
            self.dies[d].free.push_back(victim);
            self.dies[d].victim = NONE;
        }
        Ok(true)
    }

    /// Background GC while the drive is idle in `[from_ns, until_ns)`: each die
    /// cleans until it holds `bg_gc_threshold_blocks` free blocks or its time is up.
    pub fn background_gc(&mut self, from_ns: u64, until_ns: u64, nand: &mut Nand) -> Result<()> {
        if (self.bg_gc_threshold == 0 && self.reorg_pending() == 0) || until_ns <= from_ns {
            return Ok(());
        }
        for die in 0..self.g.dies {
            loop {
                let start = nand.die_busy_until(die).max(from_ns);
                if start >= until_ns {
                    break;
                }
                let d = &self.dies[die as usize];
                if d.victim == NONE && d.free.len() >= self.bg_gc_threshold as usize && self.reorg[die as usize].is_empty() {
                    break;
                }
                if !self.gc_victim_step(die, start, nand, until_ns, false)? {
                    break;
                }
            }
        }
        Ok(())
    }

    // ----- wear -----

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

    // ----- checking mode -----

    /// Verify the structural invariants and (in checking mode) every LBA against
    /// the shadow model.
    pub fn check_all(&self) -> Result<()> {
        let spb = self.spb as usize;
        // Walk every block's log: each entry whose head granule is live must be
        // the unit its LBA maps to; valid counts are the live units' granules.
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
                    if lba >= self.l2p.len() || self.l2p[lba] != self.enc(head, n) {
                        let maps = self.l2p.get(lba).copied().unwrap_or(NONE);
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
        for (d, &v) in self.die_valid.iter().enumerate() {
            let bpd = self.g.blocks_per_die as usize;
            let sum: u64 = self.blocks[d * bpd..(d + 1) * bpd].iter().map(|b| b.valid as u64).sum();
            if sum != v {
                return Err(SimError::integrity(format!("die {d}: valid counter {v} but blocks hold {sum}")));
            }
        }
        // Every mapped LBA is mapped exactly once: live units map back to
        // their LBAs (above), so as many live units as mapped LBAs, and no live
        // bit outside a logged unit, make the two a one-to-one match.
        let mapped = self.l2p.iter().filter(|&&e| e != NONE).count() as u64;
        if mapped != live_units {
            return Err(SimError::integrity(format!("{mapped} LBA units are mapped but {live_units} live units are stored")));
        }
        if self.rev.live_count() != live_units {
            return Err(SimError::integrity(format!("{} live granules but {live_units} live units logged", self.rev.live_count())));
        }
        // Bucket lists hold exactly the sealed blocks, at their valid counts.
        if self.uses_buckets() {
            let mut seen = 0usize;
            for (di, d) in self.dies.iter().enumerate() {
                for v in 0..=spb {
                    let mut b = d.heads[v];
                    let mut prev = NONE;
                    while b != NONE {
                        let blk = &self.blocks[b as usize];
                        if blk.state != BlockState::Sealed || blk.valid as usize != v || blk.prev != prev || self.die_of_block(b) as usize != di {
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
        }
        for (di, d) in self.dies.iter().enumerate() {
            for &b in &d.free {
                if self.blocks[b as usize].state != BlockState::Free {
                    return Err(SimError::integrity(format!("die {di}: block {b} in free pool is not free")));
                }
            }
        }
        if let Some(s) = self.shadow.as_ref() {
            s.verify_all(&self.l2p, self.head_mask)?;
        }
        Ok(())
    }
}
