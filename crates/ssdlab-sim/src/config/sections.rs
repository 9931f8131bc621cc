//! The sections of a drive description, one struct each, with units last in
//! every field name and serde defaults for the optional fields.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveSection {
    /// Stable id, e.g. `generic-mlc-120`.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Capacity the host sees, in bytes (a "120GB" drive is 120e9 B).
    pub user_capacity_bytes: u64,
    /// Controller profile (controller + firmware) the drive is built from
    /// (`library/controllers/ID.toml`): its host, controller, FTL, data
    /// reduction and controller power values (see [`crate::library`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// NAND part the drive is built from (`library/nand/ID.toml`): geometry
    /// of a die, timings, endurance, per-operation energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nand_part: Option<String>,
}

pub(super) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerSection {
    /// Firmware time per command: the processor time one command holds a
    /// command slot for (command decode, map lookup or update, buffer and DMA
    /// set-up). With `command_slots` slots, throughput is at most
    /// `command_slots` x 1e9 / cost commands per second, and every command's
    /// latency includes its cost once. Reads and writes use it unless their
    /// own cost is given; also TRIM and FLUSH.
    pub command_cost_ns: u64,
    /// Firmware time per read command (map lookup, ECC and decompression
    /// set-up); `command_cost_ns` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_cost_read_ns: Option<u64>,
    /// Firmware time per write command (buffer allocation, map update,
    /// compression set-up); `command_cost_ns` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_cost_write_ns: Option<u64>,
    /// Commands the controller processes at once: its cores, or the depth of
    /// its firmware pipeline. Each command holds one slot (the earliest free)
    /// for its cost, after it has crossed the link, so up to this many
    /// commands' firmware time overlaps with each other and with die work.
    /// 1: one command at a time (throughput 1e9 / cost). 1..=16.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub command_slots: u32,
    /// Time every command takes that holds neither a command slot nor the
    /// link: the controller's SATA front end handing the command FIS to the
    /// firmware, DMA engine set-up, posting the completion (Set Device Bits
    /// FIS) and the host adapter's turnaround (fetching the command and its
    /// data over PCIe, raising the interrupt). It lengthens every command's
    /// latency, so it lowers QD1-QD3 rates, but commands overlap in it: it
    /// never caps throughput. 0: none (at most 1 ms).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub command_latency_ns: u64,
    /// Throughput of the controller's write data path (DMA set-up, buffer
    /// and map work per host byte), bytes/s of host data; written data passes
    /// it after the link, as a resource booked in time. A controller-and-
    /// firmware value, shared by every drive with them. 0: not modelled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_write_bytes_per_s: u64,
    /// Throughput of the controller's ECC encoder on the way to the NAND,
    /// bytes/s of data that reaches the NAND: with data reduction the stored
    /// bytes (reduced data and its metadata), so reducible data passes it
    /// faster than incompressible data. Booked like `max_write_bytes_per_s`,
    /// after it. 0: not modelled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub encode_bytes_per_s: u64,
    /// Per-die read pipeline: the controller ECC-decodes a page read from a
    /// die into its buffer before it issues that die's next operation, so the
    /// die is held for the decode (bytes / this rate) after the transfer.
    /// Applies to host reads, read-ahead and GC copies. 0: decode overlapped
    /// with the die's next operation (not modelled).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_decode_bytes_per_s: u64,
    /// Fixed part of that decode, per page read: the ECC decoder's latency
    /// (syndrome, error location and correction of a strong BCH code) during
    /// which the die waits for its next command, whatever the bytes. Added
    /// to the per-byte part. 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_decode_ns: u64,
    /// Stored data is striped across the data dies in chunks of this many
    /// bytes (SandForce: one 512 B ECC codeword per die in turn), so a read
    /// touches every die its stored bytes span: a 4KB unit at an unaligned
    /// stream offset spans 4096 / 512 + 1 = 9 dies, each a page read for its
    /// share. Sequential data costs one page read per die per row, as without
    /// striping. 0: each program unit lies on one die.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub die_stripe_bytes: u64,
    /// Buffer holding written data until it is transferred to a die (SRAM on
    /// DRAM-less controllers, the DRAM write cache otherwise). Writes are
    /// acknowledged once their data is in it (write-back): bursts up to its
    /// size are absorbed; steady state is bounded by the NAND.
    pub write_buffer_bytes: u64,
    /// Map cache of a drive without DRAM for its whole map: SRAM or the
    /// host memory buffer holding this many bytes of translation pages (the
    /// map's NAND pages, 4 B per 4KB entry), least recently used evicted
    /// first. A lookup or update whose page is not cached reads it from its
    /// die; evicting a changed page programs it back. 0 (absent): the whole
    /// map in DRAM, at no cost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub map_cache_bytes: u64,
    /// How many dies the controller can keep busy at once (0, or at least
    /// the drive's dies: no limit).
    #[serde(default)]
    pub max_active_dies: u32,
    /// Program buffer: controller memory that holds each program unit's
    /// data from the start of its transfer to a die until the die reports the
    /// program done (a controller without DRAM keeps it to rewrite a failed
    /// program elsewhere). Programs in flight at once (host, parity and GC
    /// copies) are at most this / the program unit (page x planes): a buffer
    /// sized for small units binds drives whose part has larger ones. Reads
    /// and erases do not use it. 0: not modelled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub program_buffer_bytes: u64,
    /// Host reads go ahead of the programs, erases and garbage-collection
    /// work queued on their die: a read waits for the operation in progress
    /// (at most half a program time, its mean remainder) and for earlier
    /// reads, and the queued work moves back by the read's time. false: a
    /// read waits for everything booked on its die (first come, first served).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub read_priority: bool,
    /// Sequential-read prefetch: die reads issued for this many bytes beyond
    /// each request of a detected sequential stream (0: off). With it, read
    /// data streams to the host as its die reads land; without it, a
    /// request's data crosses the link once all of it is read.
    #[serde(default)]
    pub readahead_bytes: u64,
    /// Read-ahead only when at least this many commands are outstanding
    /// (the firmware's NCQ-streaming threshold).
    #[serde(default = "one")]
    pub readahead_min_qd: u32,
    /// Die reads one read request (or read-ahead extension) keeps in flight
    /// at once (0: no cap).
    #[serde(default)]
    pub seq_read_max_dies: u32,
    /// Extra time to answer a read of never-written / trimmed LBAs per 4KB
    /// (0: answered from the map at once).
    #[serde(default)]
    pub unmapped_read_ns: u64,
    /// A write is acknowledged only once each of its 4KB units has crossed
    /// its channel into the die that will program it: a die busy with an
    /// operation (a program, an erase) takes no new data until it is done.
    /// A controller without DRAM and without power-loss capacitors keeps no
    /// acknowledged data in volatile memory. false: write-back (acknowledged
    /// once the data is in `write_buffer_bytes`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_ack_at_die: bool,
    /// Only writes of at least one whole program unit are acknowledged at
    /// the die (as `write_ack_at_die`): the firmware streams them to their
    /// dies as they arrive, while shorter writes, which must wait for the
    /// rest of their program unit, are acknowledged from the write buffer.
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_ack_at_die_whole_units: bool,
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl ControllerSection {
    /// Firmware time of a read command.
    pub fn read_cost_ns(&self) -> u64 {
        self.command_cost_read_ns.unwrap_or(self.command_cost_ns)
    }
    /// Firmware time of a write command.
    pub fn write_cost_ns(&self) -> u64 {
        self.command_cost_write_ns.unwrap_or(self.command_cost_ns)
    }
}

/// SandForce-style data reduction (DuraWrite): what reaches the NAND per 4KB
/// written, by data pattern. Stored data is allocated in 1KB granules, at
/// least one per 4KB unit (so the best reduction is 4:1 in NAND space).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataReductionSection {
    pub enabled: bool,
    /// Metadata the controller stores with every 4KB unit, bytes.
    pub metadata_bytes_per_unit: u64,
    /// Stored fraction of `compressible` data (0..1).
    pub compressible_stored_fraction: f64,
    /// Stored fraction of `repeated` data: deduplicated, so near 0.
    pub repeated_stored_fraction: f64,
    /// Stored fraction of all-zero data.
    pub zeros_stored_fraction: f64,
}

/// Energy and power (issue: power model); all optional with era-typical defaults.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerSection {
    /// Controller + DRAM + link when nothing is outstanding.
    pub idle_mw: u64,
    /// Extra controller + link power while an I/O is outstanding.
    pub active_mw: u64,
    /// Array read of one page (all planes of a multi-plane read count once).
    pub read_uj_per_page: f64,
    /// Program of one program unit (a page on every plane).
    pub program_uj_per_unit: f64,
    pub erase_uj_per_block: f64,
    /// NAND bus transfers.
    pub transfer_pj_per_byte: f64,
}

impl Default for PowerSection {
    fn default() -> Self {
        // ONFI MLC currents at 3.3 V (Micron L74A datasheet typ): read 25 mA
        // for tR, program 25 mA for tPROG, erase 25 mA for tBERS; bus I/O
        // about 20 pJ/B at 1.8-3.3 V; a 2011 SATA controller 0.5 W idle,
        // +1 W active.
        PowerSection {
            idle_mw: 500,
            active_mw: 1000,
            read_uj_per_page: 4.1,
            program_uj_per_unit: 107.0,
            erase_uj_per_block: 250.0,
            transfer_pj_per_byte: 20.0,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandSection {
    pub channels: u32,
    pub packages_per_channel: u32,
    pub dies_per_package: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Data bytes per page (spare bytes for ECC not included): 4096, 8192, 16384.
    pub page_size_bytes: u64,
    /// Page read time (array to register).
    pub tr_ns: u64,
    /// Page program time.
    pub tprog_ns: u64,
    /// Block erase time.
    pub tbers_ns: u64,
    /// Channel (NAND bus) transfer rate shared by the dies on the channel.
    pub channel_bytes_per_s: u64,
    /// Dies whose capacity is reserved (metadata) and holds no user data.
    #[serde(default)]
    pub reserved_dies: u32,
    /// RAISE (SandForce): one die's capacity holds parity, and every stripe of
    /// data program units across the data dies costs one parity program.
    #[serde(default)]
    pub raise: bool,
    /// Rated program/erase cycles per block.
    #[serde(default = "default_pe_cycles")]
    pub pe_cycles_rated: u32,
    /// Bits stored per cell (2 MLC, 3 TLC, 4 QLC): the pages of a wordline,
    /// and how many times fewer bytes a block holds in SLC mode. 0: not
    /// stated (a 2D MLC part of the older presets: none of the fields below).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub bits_per_cell: u32,
    /// One-shot programming (3D TLC/QLC): the `bits_per_cell` pages of a
    /// wordline, on every plane, are programmed together in one `tprog_ns`,
    /// so a program unit is page x planes x bits per cell. false: a unit is
    /// a page on every plane (2D MLC).
    #[serde(default, skip_serializing_if = "is_false")]
    pub one_shot_program: bool,
    /// Cache programming (ONFI PROGRAM PAGE CACHE, Toggle's equivalent):
    /// the next program's data crosses the channel into the die's cache
    /// register while the die still programs, so back-to-back host programs
    /// cost the program time, not transfer plus program. false: transfer,
    /// then program.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cache_program: bool,
    /// Independent plane reads: a read of one page on one plane holds only
    /// that plane, so reads of different planes of a die overlap (each plane
    /// its own page). Programs and erases still hold the whole die, and reads
    /// wait for them (or pass queued ones, with read priority). false: every
    /// read holds the whole die.
    #[serde(default, skip_serializing_if = "is_false")]
    pub independent_plane_reads: bool,
    /// Read time of each page type of a wordline, lower page first (LSB,
    /// CSB, MSB, TSB): `bits_per_cell` values. Empty: `tr_ns` for every page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tr_page_types_ns: Vec<u64>,
    /// SLC mode (one bit per cell, the SLC cache's blocks): page read,
    /// page program (a page on every plane) and block erase times, and the
    /// rated P/E cycles of a block used only in SLC mode. 0: no SLC mode.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slc_tr_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slc_tprog_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slc_tbers_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub slc_pe_cycles_rated: u32,
}

/// The SLC cache (pseudo-SLC write cache of TLC/QLC drives), a firmware
/// behaviour of the controller profile. Host data lands in blocks written
/// in SLC mode while the cache has room; the data is later folded (copied
/// into native TLC/QLC blocks) by the die, in idle time and, once the cache
/// is full, while the host writes directly to native blocks.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheSection {
    /// Static part: SLC-mode data the drive always has room for (carved from
    /// the spare area), as a percentage of the user capacity.
    #[serde(default)]
    pub static_percent_of_capacity: f64,
    /// Dynamic part on an empty drive (free native blocks used at one bit
    /// per cell), as a percentage of the user capacity; it shrinks in
    /// proportion as native blocks fill with data.
    #[serde(default)]
    pub dynamic_percent_of_capacity: f64,
    /// Once the cache is full, program units folded per host program unit
    /// written directly to native blocks (folding competing with the host
    /// for the dies; a fraction folds one unit every few host units). 0: no
    /// folding while the host writes (only when a die needs the space, or
    /// in idle time).
    #[serde(default)]
    pub fold_units_per_host_unit: f64,
    /// Once folding while writing has emptied a die's cache, host writes
    /// land in SLC again (a mid-fill refill). false: only idle time gives
    /// the cache back once it is full.
    #[serde(default)]
    pub refill_while_writing: bool,
    /// A write-through buffer for small writes: every host write of at
    /// most this many bytes goes through SLC blocks (the static part: the
    /// buffer's size), which the die folds into native blocks as it takes
    /// more, at `fold_units_per_host_unit` once the buffer is at its size;
    /// larger writes go straight to native blocks. The cache is then never
    /// full for small writes: they cost an SLC program and a fold each. 0:
    /// off (host writes fill the cache, then go to native blocks).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_through_max_bytes: u64,
}

fn default_pe_cycles() -> u32 {
    3000
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Victim = block with the fewest valid pages.
    Greedy,
    /// Victim maximises (1-u)/(2u) * age (Rosenblum & Ousterhout, LFS 1992).
    CostBenefit,
    /// Victim = oldest written block (least recently written; Desnoyers' LRW/FIFO).
    Fifo,
}

/// When foreground garbage collection does its work.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// Once a die is at the threshold, every host program unit on it is
    /// preceded by the GC work that keeps the free pool level: steady,
    /// evenly spread stalls.
    #[default]
    Paced,
    /// Clean whole victims only when a block is needed: higher peaks, deeper
    /// valleys (long stalls while a die copies a whole block).
    Lazy,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlSection {
    pub gc_policy: GcPolicy,
    /// `paced` (default) or `lazy` foreground GC.
    #[serde(default)]
    pub gc_mode: GcMode,
    /// Foreground GC runs on a die when its free blocks fall below this; host
    /// writes to that die wait behind it.
    pub gc_threshold_blocks: u32,
    /// Background (idle) GC cleans a die until it has this many free blocks.
    #[serde(default)]
    pub bg_gc_threshold_blocks: u32,
    /// How long the drive must be idle before background GC starts.
    #[serde(default = "default_idle_gc_delay")]
    pub idle_gc_delay_ns: u64,
    /// SandForce-style block recycling path, bytes/s for the whole
    /// controller (0: off; or set `recycle_bytes_per_s_per_die` instead).
    /// Returning a block to the pre-erased pool passes the whole block
    /// through one controller-wide recycling engine, booked in time like
    /// the link: block_bytes / the path's rate per victim, shared by every
    /// die (a die waits while the path serves the others), then the erase,
    /// on top of moving the block's valid data through its die.
    ///
    /// The path charges the block size, not the valid data moved: docs/model.md
    /// says every write waits for a block to be recycled and recycling runs
    /// at a fixed rate (about 80 MB/s on the SF-1200), so a drive writing
    /// into recycled blocks writes at about this rate whatever the blocks
    /// held. docs/drives.md's SF-1200 figures need exactly that: the dirty drive
    /// (victims stale from the second pass, 0 bytes moved) writes at 70.3
    /// MB/s and after a full TRIM (victims hold only TRIMmed data) at 71.0,
    /// against 131.7 clean; charged per valid byte moved, both would run at
    /// the clean rate. TRIM only unmaps; it frees no pre-erased block.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recycle_bytes_per_s: u64,
    /// The recycling path's rate for each die the controller drives at once
    /// (0: not given). The path's rate is this times the drive's dies, at
    /// most `controller.max_active_dies`: the engine interleaves its work
    /// over the dies it keeps active, so a controller that drives twice the
    /// dies recycles twice as fast, and one at its active-die limit gains
    /// nothing from more dies. The SF-2281's recycling-bound writes scale
    /// with its dies (Vertex 3 120GB, 16 dies: 132 MB/s on its second pass
    /// after torture and TRIM, 100-130 after the dirty fill and TRIM; 240GB,
    /// 32: at least 198), while every SF-1200 120GB drive, 16 or 32 dies but
    /// 16 active, sits at the same 70-80 MB/s. Exclusive with `recycle_bytes_per_s`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recycle_bytes_per_s_per_die: u64,
    /// Entries the logical-to-physical map can hold (0: no limit). A drive
    /// whose user LBA space needs more entries at 4KB maps coarser units, the
    /// smallest power of two times 4KB that fits (8KB, 16KB, ...; at most
    /// 64KB). A write that covers only part of such a unit rewrites the rest
    /// of it with its new data, so the unit stays in one place: the other 4KB
    /// units of it whose data has left the write buffer are read (as for a
    /// sub-4KB write) and programmed again beside the new data, and the
    /// firmware spends a read command's time on that internal read. Reads
    /// are unchanged (each 4KB is located within its unit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_map_entries: u64,
    /// A TRIM's map work waits for the next write (SandForce SF-2000): the
    /// TRIM completes once the firmware has noted the range, and the map
    /// entries it unmapped (4 B each, per map unit) are written to the NAND
    /// with the next write command, ahead of its data, through the ECC
    /// encoder and in program units spread over the dies. Off: a TRIM's map
    /// work costs nothing after the command. Only timing: the unmapping
    /// itself takes effect at once either way.
    #[serde(default, skip_serializing_if = "is_false")]
    pub trim_map_deferred: bool,
    /// Performance mode (Vertex 4 firmware 1.4+): while fewer than
    /// `perf_mode_fill_percent` of the user LBAs hold data, blocks are written
    /// in a fast mode (lower pages only: half the block, this program time);
    /// crossing it starts a one-time reorganisation that rewrites every
    /// fast-mode block in normal mode, in the background of host I/O. 0: off.
    #[serde(default)]
    pub perf_mode_tprog_ns: u64,
    #[serde(default = "fifty")]
    pub perf_mode_fill_percent: u32,
    /// GC units moved per host program unit while the reorganisation runs.
    #[serde(default = "two")]
    pub perf_mode_reorg_units_per_host_unit: u32,
    /// Performance mode outlives the fill limit where idle time makes room
    /// for it: once the reorganisation is done, a host block opens in the
    /// fast mode while its die holds more free blocks than the idle GC's
    /// target (`bg_gc_threshold_blocks`). Such blocks are reorganised in
    /// idle time, or beside host writes once the die is down to that
    /// target. Needs `perf_mode_tprog_ns`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub perf_mode_after_idle: bool,
    /// Performance mode takes only small random writes: a host block opens
    /// in the fast mode only for a write command shorter than one die's
    /// program unit that does not continue the previous write (Vertex 4
    /// firmware 1.3: 4KB random writes rated beyond what the dies program at
    /// full density, sequential writes at it). Needs `perf_mode_tprog_ns`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub perf_mode_small_random_writes_only: bool,
}

fn fifty() -> u32 {
    50
}

fn two() -> u32 {
    2
}

fn default_idle_gc_delay() -> u64 {
    100_000_000
}
