//! Flash translation layer: page-level mapping at 4KB, host program units
//! dispatched across dies (to the die that frees up first), per-die
//! free-block pools, garbage collection (greedy, cost-benefit, FIFO), TRIM
//! and secure erase. One [`Ftl`] value; its methods are split by concern:
//! - `map_cache`: the translation pages a drive without DRAM for its map caches;
//! - `mapping`: map entries, stored size per data pattern, invalidation, TRIM, secure erase;
//! - `blocks`: block states, free pools, GC buckets and FIFO order, sealing, opening, wear;
//! - `write`: write points, die dispatch, allocation, programming, coalescing, flush;
//! - `read`: page reads across dies, die striping, read-modify-write;
//! - `gc`: victim selection, paced / lazy / background GC, the recycling path;
//! - `perf_mode`: performance mode and its reorganisation;
//! - `raise`: RAISE parity;
//! - `invariants`: the checking mode's structural checks.
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
//! the NAND work it implies on the [`Nand`](crate::nand::Nand) timelines; host writes therefore
//! wait behind foreground GC booked on the same die.

mod blocks;
mod gc;
mod invariants;
mod map_cache;
mod mapping;
mod perf_mode;
mod raise;
mod read;
mod slc;
mod write;

pub use blocks::{Block, BlockState};
pub use map_cache::{MapCache, MAP_ENTRY_BYTES};

use std::collections::VecDeque;

use self::write::WritePoint;
use crate::check::Shadow;
use crate::config::{DriveConfig, GcMode, GcPolicy, Geometry, LEN_SHIFT, UNIT_BYTES};
use crate::mem::{CowTable, NONE};
use crate::revmap::RevMap;

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

/// The FTL state of one die: its free pool, its write points, its GC buckets
/// or FIFO order, and the victim being cleaned.
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
    /// Die read time of one program unit of the victim (its pages' reads).
    victim_read_ns: u64,
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
    /// Stored bytes rewritten beside writes to part of their coarse map unit
    /// (`ftl.max_map_entries`).
    pub map_merge_bytes: u64,
    pub gc_victims: u64,
    pub fg_gc_victims: u64,
    pub bg_gc_victims: u64,
    pub erases: u64,
    /// Erases of blocks in SLC mode (of `erases`): they wear the cells
    /// against the part's SLC-mode rating.
    pub slc_erases: u64,
    /// Host bytes programmed into blocks in SLC mode (of
    /// `nand_bytes_programmed`).
    pub slc_bytes_programmed: u64,
    /// Translation pages read from and programmed to the NAND by the map
    /// cache (`controller.map_cache_bytes`).
    pub map_page_reads: u64,
    pub map_page_writes: u64,
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
            map_merge_bytes: self.map_merge_bytes - b.map_merge_bytes,
            gc_victims: self.gc_victims - b.gc_victims,
            fg_gc_victims: self.fg_gc_victims - b.fg_gc_victims,
            bg_gc_victims: self.bg_gc_victims - b.bg_gc_victims,
            erases: self.erases - b.erases,
            slc_erases: self.slc_erases - b.slc_erases,
            slc_bytes_programmed: self.slc_bytes_programmed - b.slc_bytes_programmed,
            map_page_reads: self.map_page_reads - b.map_page_reads,
            map_page_writes: self.map_page_writes - b.map_page_writes,
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

#[derive(Clone, Debug)]
pub struct Ftl {
    pub g: Geometry,
    policy: GcPolicy,
    gc_mode: GcMode,
    gc_threshold: u32,
    bg_gc_threshold: u32,
    /// LBA unit -> map entry (head granule, and length; see [`LEN_SHIFT`]), or NONE.
    l2p: CowTable<u32>,
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
    /// When the last program of a host program unit booked so far ends: from
    /// then on every host write sent to the dies is on the NAND (what a
    /// FLUSH CACHE waits for once it has sent the buffer's data).
    pub host_durable_ns: u64,
    /// The die reads of the last [`Ftl::read_units_p`] with pieces: (first
    /// LBA, done), in LBA order.
    pub read_pieces: Vec<(u64, u64)>,
    /// Per die, the host program units booked on it whose data has not yet
    /// left the write buffer: (first granule, when the transfer to the die
    /// ends), in booking order. A read of them is answered from the buffer.
    /// (Apart from the die state the hot paths walk.)
    pending: Vec<VecDeque<(u32, u64)>>,
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
    die_stripe_bytes: u64,
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
    /// Granules a block written in a fast mode holds (performance mode's
    /// half block, or SLC mode's 1/bits), and its program time per unit.
    fast_cap: u32,
    fast_tprog_ns: u64,
    /// The SLC cache (none: the drive has none).
    slc: Option<slc::SlcCache>,
    /// Page reads: granules per page on every plane (a multi-plane read),
    /// whether read times depend on the page (its type, or SLC mode), each
    /// page type's read time (lower page first) and SLC mode's.
    read_unit: u32,
    read_div: Divisor,
    /// Independent plane reads: granules per page of one plane (a read
    /// within one plane's page holds only that plane); 0: off.
    plane_grans: u32,
    typed_reads: bool,
    tr_types: Vec<u64>,
    slc_tr_ns: u64,
    slc_tbers_ns: u64,
    /// The cached part of the map when it is not all in DRAM
    /// (`controller.map_cache_bytes`); None: the whole map in DRAM.
    pub map_cache: Option<MapCache>,
    /// Fast mode past the fill limit in the room idle GC made
    /// (`ftl.perf_mode_after_idle`): on, the free blocks a die keeps for
    /// normal writes (the idle GC's target), and per die how many of the
    /// blocks queued for reorganisation were written that way (the first
    /// ones of `reorg`, taken last).
    after_idle: bool,
    after_idle_reserve: usize,
    late_fast: Vec<usize>,
    late_fast_open: Vec<u32>,
    /// Per die, whether idle time found its reorganisation done since its
    /// free blocks were last down to the reserve.
    idle_room: Vec<bool>,
    /// Performance mode for small random writes only
    /// (`ftl.perf_mode_small_random_writes_only`), the program unit in bytes
    /// that sets "small", whether the host write being placed is small and
    /// random, and where the previous host write ended (bytes).
    small_only: bool,
    unit_bytes: u64,
    small_write: bool,
    last_write_end: u64,
    /// Bytes of the host write being placed (what an SLC write-through
    /// buffer tells small writes by).
    write_bytes: u64,
    /// A TRIM's map work waits for the next write (`ftl.trim_map_deferred`):
    /// on, and the map bytes the TRIMs since the last write changed.
    trim_map_deferred: bool,
    pub pending_map_bytes: u64,
}

/// Granules a 4KB unit takes when stored, per kind of data (incompressible,
/// repeated, compressible, zeros, and whole), with data reduction's metadata
/// per unit; and that metadata.
fn stored_granules(cfg: &DriveConfig, k: u32, gran_bytes: u64) -> ([u32; 5], u64) {
    let (meta, fr) = match cfg.data_reduction.as_ref().filter(|d| d.enabled) {
        Some(d) => (d.metadata_bytes_per_unit, [1.0, d.repeated_stored_fraction, d.compressible_stored_fraction, d.zeros_stored_fraction]),
        None => (0, [1.0; 4]),
    };
    let gran_of = |f: f64| -> u32 {
        let bytes = (f * UNIT_BYTES as f64).round() as u64 + meta;
        (bytes.div_ceil(gran_bytes) as u32).clamp(1, k)
    };
    ([gran_of(fr[0]), gran_of(fr[1]), gran_of(fr[2]), gran_of(fr[3]), k], meta)
}

/// The room of a block written in a fast mode and its program time per
/// program unit: SLC mode holds one bit of the cell's `bits`; performance
/// mode the lower half of an MLC block. Whole program units either way.
fn fast_mode(cfg: &DriveConfig, spb: u32, unit: u32, read_unit: u32) -> (u32, u64) {
    if cfg.slc_cache.is_some() {
        let bits = cfg.nand.bits_per_cell;
        ((spb / bits / unit).max(1) * unit, cfg.nand.slc_tprog_ns * (unit / read_unit) as u64)
    } else {
        ((spb / 2 / unit).max(1) * unit, cfg.ftl.perf_mode_tprog_ns)
    }
}

impl DieFtl {
    /// Die `d` with all its blocks free and nothing open.
    fn new(d: u32, g: &Geometry, spb: u32) -> DieFtl {
        DieFtl {
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
            victim_read_ns: 0,
        }
    }
}

impl Ftl {
    pub fn new(cfg: &DriveConfig, check: bool) -> Ftl {
        let g = cfg.geometry();
        let k = g.gran_per_slot;
        let spb = g.slots_per_block * k;
        let gran_bytes = UNIT_BYTES / k as u64;
        let (stored_granules, meta) = stored_granules(cfg, k, gran_bytes);
        let nblocks = g.total_blocks() as usize;
        let unit = g.unit_slots * k;
        let read_unit = g.slots_per_page * g.planes_per_die * k;
        let (fast_cap, fast_tprog_ns) = fast_mode(cfg, spb, unit, read_unit);
        let blocks =
            vec![
                Block { valid: 0, erase_count: 0, state: BlockState::Free, fast: false, prev: NONE, next: NONE, stamp_ns: 0, sealed_ns: 0 };
                nblocks
            ];
        let dies = (0..g.dies).map(|d| DieFtl::new(d, &g, spb)).collect();
        Ftl {
            policy: cfg.ftl.gc_policy,
            gc_mode: cfg.ftl.gc_mode,
            gc_threshold: cfg.ftl.gc_threshold_blocks,
            bg_gc_threshold: cfg.ftl.bg_gc_threshold_blocks,
            l2p: CowTable::new(g.user_units as usize, NONE),
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
            host_durable_ns: 0,
            read_pieces: Vec::new(),
            pending: vec![VecDeque::new(); g.dies as usize],
            spb,
            unit: g.unit_slots * k,
            spb_div: Divisor::new(spb),
            unit_div: Divisor::new(g.unit_slots * k),
            bpd_div: Divisor::new(g.blocks_per_die),
            gran_bytes,
            stored_granules,
            ratio_meta_bytes: meta,
            recycle_bytes_per_s: cfg.recycle_path_bytes_per_s(),
            die_stripe_bytes: cfg.controller.die_stripe_bytes,
            raise_count: 0,
            die_valid: vec![0; g.dies as usize],
            perf_tprog_ns: cfg.ftl.perf_mode_tprog_ns,
            perf_active: cfg.ftl.perf_mode_tprog_ns > 0,
            mapped_lbas: 0,
            perf_limit_lbas: g.user_units * cfg.ftl.perf_mode_fill_percent as u64 / 100,
            reorg: vec![Vec::new(); g.dies as usize],
            reorg_rate: cfg.ftl.perf_mode_reorg_units_per_host_unit.max(1),
            after_idle: cfg.ftl.perf_mode_after_idle && cfg.ftl.perf_mode_tprog_ns > 0,
            after_idle_reserve: cfg.ftl.bg_gc_threshold_blocks as usize,
            late_fast: vec![0; g.dies as usize],
            late_fast_open: vec![NONE; g.dies as usize],
            small_only: cfg.ftl.perf_mode_small_random_writes_only && cfg.ftl.perf_mode_tprog_ns > 0,
            unit_bytes: (g.unit_slots * k) as u64 * gran_bytes,
            small_write: false,
            last_write_end: 0,
            write_bytes: 0,
            trim_map_deferred: cfg.ftl.trim_map_deferred,
            pending_map_bytes: 0,
            idle_room: vec![false; g.dies as usize],
            die_room: (g.blocks_per_die as u64 - cfg.ftl.gc_threshold_blocks as u64 - 2) * spb as u64,
            fast_cap,
            fast_tprog_ns,
            slc: slc::SlcCache::new(cfg, fast_cap, gran_bytes),
            read_unit,
            read_div: Divisor::new(read_unit),
            plane_grans: if cfg.nand.independent_plane_reads && g.planes_per_die > 1 { g.slots_per_page * k } else { 0 },
            typed_reads: !cfg.nand.tr_page_types_ns.is_empty() || (cfg.slc_cache.is_some() && cfg.nand.slc_tr_ns > 0),
            tr_types: cfg.nand.tr_page_types_ns.clone(),
            slc_tr_ns: if cfg.slc_cache.is_some() { cfg.nand.slc_tr_ns } else { 0 },
            slc_tbers_ns: if cfg.slc_cache.is_some() { cfg.nand.slc_tbers_ns } else { 0 },
            map_cache: (cfg.controller.map_cache_bytes > 0).then(|| {
                MapCache::new(cfg.controller.map_cache_bytes, g.user_units, g.map_unit_units as u64, cfg.nand.page_size_bytes, g.dies)
            }),
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

    /// Bytes of RAM the FTL's tables use now (the reverse map grows with
    /// the units written; see [`RevMap`]).
    pub fn memory_in_use_bytes(&self) -> u64 {
        let dies: usize =
            self.dies.iter().map(|d| (d.heads.len() + d.tails.len()) * 4 + d.free.capacity() * 4 + d.fifo.capacity() * 4).sum();
        let map_cache = self.map_cache.as_ref().map_or(0, |c| c.bytes());
        (self.l2p.len() * 4 + self.blocks.len() * size_of::<Block>() + dies) as u64 + self.rev.bytes_in_use() + map_cache
    }

    pub fn gran_bytes(&self) -> u64 {
        self.gran_bytes
    }

    /// Bytes of one program unit (page x planes, x bits per cell when
    /// programmed one-shot): what a die programs at once.
    pub fn program_unit_bytes(&self) -> u64 {
        self.unit as u64 * self.gran_bytes
    }
}
