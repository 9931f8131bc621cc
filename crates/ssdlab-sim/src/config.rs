//! Drive description: parsed from TOML (presets, user files) or JSON (the Python
//! binding's dicts), validated here, with units last in every field name.
//!
//! Validation gives one error naming the field, the value and what is allowed.
//! Geometry that follows from the description (dies, slots, spare area) is
//! derived once in [`Geometry`].

use crate::error::{Result, SimError};
use serde::{Deserialize, Serialize};

/// The mapping unit of the FTL: 4KB.
pub const UNIT_BYTES: u64 = 4096;
/// Host sector size: offsets and lengths must be multiples of it.
pub const SECTOR_BYTES: u64 = 512;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    pub drive: DriveSection,
    pub host: HostSection,
    pub controller: ControllerSection,
    pub nand: NandSection,
    pub ftl: FtlSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_reduction: Option<DataReductionSection>,
    #[serde(default)]
    pub power: PowerSection,
}

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

/// Host link presets (MODEL.md "Host interface").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum Interface {
    /// SATA 3Gbps: 300 MB/s after 8b/10b, about 280e6 B/s usable.
    #[serde(rename = "sata-3g")]
    Sata3g,
    /// SATA 6Gbps: 600 MB/s after 8b/10b, about 550e6 B/s usable.
    #[serde(rename = "sata-6g")]
    Sata6g,
}

impl Interface {
    pub fn link_bytes_per_s(self) -> u64 {
        match self {
            Interface::Sata3g => 280_000_000,
            Interface::Sata6g => 550_000_000,
        }
    }
    /// Command, DMA-setup and status FISes at the link's frame rate.
    pub fn command_overhead_ns(self) -> u64 {
        match self {
            Interface::Sata3g => 5_000,
            Interface::Sata6g => 3_000,
        }
    }
    pub fn parse(s: &str) -> Option<Interface> {
        match s {
            "sata-3g" | "sata3g" | "sata2" => Some(Interface::Sata3g),
            "sata-6g" | "sata6g" | "sata3" => Some(Interface::Sata6g),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// Link preset; sets the two fields below unless they are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<Interface>,
    /// Usable link bandwidth (SATA 3Gbps ~ 280e6, 6Gbps ~ 550e6).
    #[serde(default)]
    pub link_bytes_per_s: u64,
    /// Fixed link cost of every command (FIS exchange), ns.
    #[serde(default)]
    pub command_overhead_ns: u64,
    /// NCQ depth: commands the drive accepts at once (1..=32 on SATA).
    pub ncq_depth: u32,
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
    /// How many dies the controller can keep busy at once (0, or at least
    /// the drive's dies: no limit).
    #[serde(default)]
    pub max_active_dies: u32,
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

/// Range of `ftl.recycle_bytes_per_s` when on: 1 MB/s to 100 GB/s.
const RECYCLE_MIN: u64 = 1_000_000;
const RECYCLE_MAX: u64 = 100_000_000_000;

fn is_zero(v: &u64) -> bool {
    *v == 0
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
    /// controller (0: off). Returning a block to the pre-erased pool passes
    /// the whole block through one controller-wide recycling engine, booked
    /// in time like the link: block_bytes / this rate per victim, shared by
    /// every die (a die waits while the path serves the others), then the
    /// erase, on top of moving the block's valid data through its die.
    ///
    /// The path charges the block size, not the valid data moved: MODEL.md
    /// says every write waits for a block to be recycled and recycling runs
    /// at a fixed rate (about 80 MB/s on the SF-1200), so a drive writing
    /// into recycled blocks writes at about this rate whatever the blocks
    /// held. DRIVES.md's SF-1200 figures need exactly that: the dirty drive
    /// (victims stale from the second pass, 0 bytes moved) writes at 70.3
    /// MB/s and after a full TRIM (victims hold only TRIMmed data) at 71.0,
    /// against 131.7 clean; charged per valid byte moved, both would run at
    /// the clean rate. TRIM only unmaps; it frees no pre-erased block.
    /// Controller-wide, not per die: the path is a controller engine, so a
    /// drive with twice the dies does not recycle twice as fast.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recycle_bytes_per_s: u64,
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

/// Everything derived from a validated description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub channels: u32,
    /// Dies that hold user data (total minus reserved).
    pub dies: u32,
    pub dies_total: u32,
    /// Dies holding RAISE parity (after the data dies in die numbering).
    pub parity_dies: u32,
    /// FTL allocation granules per 4KB slot: 1, or 4 (1KB granules) when data
    /// reduction packs compressed units.
    pub gran_per_slot: u32,
    pub planes_per_die: u32,
    /// 4KB slots per page.
    pub slots_per_page: u32,
    /// Slots programmed at once: a page on every plane (multi-plane program).
    pub unit_slots: u32,
    /// A GC block is the set of one block per plane erased together.
    pub blocks_per_die: u32,
    pub slots_per_block: u32,
    pub pages_per_block: u32,
    pub raw_slots: u64,
    pub user_units: u64,
    pub spare_slots: u64,
}

impl Geometry {
    pub fn raw_bytes(&self) -> u64 {
        self.raw_slots * UNIT_BYTES
    }
    /// Spare area as a fraction of user capacity (the "7%" of a 128GiB/120GB drive).
    pub fn spare_fraction(&self) -> f64 {
        self.spare_slots as f64 / self.user_units as f64
    }
    pub fn total_blocks(&self) -> u64 {
        self.dies as u64 * self.blocks_per_die as u64
    }
    pub fn channel_of(&self, die: u32) -> u32 {
        die % self.channels
    }
}

/// Bytes of RAM the engine needs per 4KB of raw NAND in normal mode, and the
/// extra in checking mode; used for the estimate before allocation.
pub fn memory_estimate_bytes(g: &Geometry, check: bool) -> u64 {
    let gpb = g.slots_per_block as u64 * g.gran_per_slot as u64;
    // The reverse map at its largest (every unit one granule): what it uses
    // grows with the units written, so this is an upper bound.
    let map = g.user_units * 4 + crate::revmap::RevMap::bytes_reserved(g.total_blocks(), g.slots_per_block as u64, gpb);
    let blocks = g.total_blocks() * 40 + g.dies as u64 * (gpb + 1) * 8;
    let check_bytes = if check { g.user_units * 8 + g.raw_slots * 12 * g.gran_per_slot as u64 } else { 0 };
    map + blocks + check_bytes + (1 << 20)
}

pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 8 << 30;

impl DriveConfig {
    pub fn from_toml_str(text: &str) -> Result<DriveConfig> {
        if let Ok(doc) = toml::from_str::<toml::Value>(text) {
            if let Ok(v) = serde_json::to_value(&doc) {
                if crate::library::names_parts(&v) {
                    return Self::from_composed(crate::library::compose(v)?);
                }
            }
        }
        let de = toml::Deserializer::new(text);
        let cfg: DriveConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            let line = inner
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = match line {
                Some(l) => format!("{} (line {l})", explain_serde(&msg)),
                None => explain_serde(&msg),
            };
            SimError::config(path_or_top(&path), msg)
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Fill fields that follow from a preset (`host.interface`).
    pub fn normalize(&mut self) -> Result<()> {
        let h = &mut self.host;
        match h.interface {
            Some(i) => {
                if h.link_bytes_per_s == 0 {
                    h.link_bytes_per_s = i.link_bytes_per_s();
                }
                if h.command_overhead_ns == 0 {
                    h.command_overhead_ns = i.command_overhead_ns();
                }
            }
            None => {
                if h.link_bytes_per_s == 0 {
                    return Err(SimError::config(
                        "host.link_bytes_per_s",
                        "missing: give host.interface = \"sata-3g\" or \"sata-6g\", or link_bytes_per_s and command_overhead_ns",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Switch the host link (the same drive on SATA 3Gbps and 6Gbps).
    pub fn set_interface(&mut self, i: Interface) {
        self.host.interface = Some(i);
        self.host.link_bytes_per_s = i.link_bytes_per_s();
        self.host.command_overhead_ns = i.command_overhead_ns();
    }

    pub fn from_json_str(text: &str) -> Result<DriveConfig> {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if crate::library::names_parts(&v) {
                return Self::from_composed(crate::library::compose(v)?);
            }
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let cfg: DriveConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            SimError::config(path_or_top(&path), explain_serde(&e.into_inner().to_string()))
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// A drive from a document composed with its profile and part; an error
    /// names the field and, for a library value, where it came from.
    pub fn from_composed(c: crate::library::Composed) -> Result<DriveConfig> {
        let cfg: DriveConfig = serde_path_to_error::deserialize(&c.doc).map_err(|e| {
            let path = path_or_top(&e.path().to_string());
            let msg = explain_serde(&e.into_inner().to_string());
            match c.provenance.get(&path) {
                Some(from) => SimError::config(&path, format!("{msg} (value from {from})")),
                None => SimError::config(&path, msg),
            }
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate().map_err(|e| match e {
            SimError::Config { field, message } => match c.provenance.get(&field) {
                Some(from) if from != "drive file" => SimError::Config { message: format!("{message} (value from {from})"), field },
                _ => SimError::Config { field, message },
            },
            other => other,
        })?;
        Ok(cfg)
    }

    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("config serialises")
    }

    /// Stable 64-bit FNV-1a hash of the canonical JSON form, as 16 hex digits.
    pub fn hash_hex(&self) -> String {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in self.to_json_string().bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        format!("{h:016x}")
    }

    pub fn geometry(&self) -> Geometry {
        let n = &self.nand;
        let dies_total = n.channels * n.packages_per_channel * n.dies_per_package;
        let parity_dies = u32::from(n.raise);
        let dies = dies_total - n.reserved_dies - parity_dies;
        let slots_per_page = (n.page_size_bytes / UNIT_BYTES) as u32;
        let unit_slots = slots_per_page * n.planes_per_die;
        let slots_per_block = unit_slots * n.pages_per_block;
        let raw_slots = dies as u64 * n.blocks_per_plane as u64 * slots_per_block as u64;
        let user_units = self.drive.user_capacity_bytes.div_ceil(UNIT_BYTES);
        let gran_per_slot = if self.data_reduction.as_ref().is_some_and(|d| d.enabled) { 4 } else { 1 };
        Geometry {
            channels: n.channels,
            dies,
            dies_total,
            parity_dies,
            gran_per_slot,
            planes_per_die: n.planes_per_die,
            slots_per_page,
            unit_slots,
            blocks_per_die: n.blocks_per_plane,
            slots_per_block,
            pages_per_block: n.pages_per_block,
            raw_slots,
            user_units,
            spare_slots: raw_slots.saturating_sub(user_units),
        }
    }

    /// Every rule a drive must obey, with the field named in the error.
    pub fn validate(&self) -> Result<()> {
        let err = |f: &str, m: String| Err(SimError::config(f, m));
        let d = &self.drive;
        if d.id.is_empty() || !d.id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return err("drive.id", format!("'{}' must be non-empty letters, digits, '-', '_' or '.'", d.id));
        }
        if d.user_capacity_bytes == 0 || d.user_capacity_bytes % SECTOR_BYTES != 0 {
            return err(
                "drive.user_capacity_bytes",
                format!("{} must be a positive multiple of {SECTOR_BYTES} (bytes, e.g. 120000000000 for 120GB)", d.user_capacity_bytes),
            );
        }
        if (d.user_capacity_bytes / UNIT_BYTES) > u32::MAX as u64 - 1 {
            return err("drive.user_capacity_bytes", format!("{} is larger than the 16 TB the 32-bit map supports", d.user_capacity_bytes));
        }
        let h = &self.host;
        if h.link_bytes_per_s < 1_000_000 || h.link_bytes_per_s > 100_000_000_000 {
            return err("host.link_bytes_per_s", format!("{} is outside 1e6..1e11 bytes/s (SATA 6Gbps is about 550000000)", h.link_bytes_per_s));
        }
        if h.command_overhead_ns > 10_000_000 {
            return err("host.command_overhead_ns", format!("{} ns is more than 10 ms per command", h.command_overhead_ns));
        }
        if h.ncq_depth == 0 || h.ncq_depth > 256 {
            return err("host.ncq_depth", format!("{} must be 1..=32 for SATA (at most 256)", h.ncq_depth));
        }
        let c = &self.controller;
        if c.command_cost_ns > 10_000_000 {
            return err("controller.command_cost_ns", format!("{} ns is more than 10 ms per command", c.command_cost_ns));
        }
        for (f, v) in [("controller.command_cost_read_ns", c.command_cost_read_ns), ("controller.command_cost_write_ns", c.command_cost_write_ns)] {
            if let Some(v) = v {
                if v > 10_000_000 {
                    return err(f, format!("{v} ns is more than 10 ms per command (leave it out to use command_cost_ns)"));
                }
            }
        }
        if c.command_slots == 0 || c.command_slots > 16 {
            return err(
                "controller.command_slots",
                format!("{} must be 1..=16 (commands processed at once: the controller's cores or firmware pipeline depth)", c.command_slots),
            );
        }
        if c.command_latency_ns > 1_000_000 {
            return err("controller.command_latency_ns", format!("{} ns is more than 1 ms per command", c.command_latency_ns));
        }
        if c.max_write_bytes_per_s != 0 && (c.max_write_bytes_per_s < 1_000_000 || c.max_write_bytes_per_s > 100_000_000_000) {
            return err(
                "controller.max_write_bytes_per_s",
                format!("{} is outside 1e6..1e11 bytes/s (0 means no ceiling; SF-2281 about 450000000)", c.max_write_bytes_per_s),
            );
        }
        if c.encode_bytes_per_s != 0 && (c.encode_bytes_per_s < 1_000_000 || c.encode_bytes_per_s > 100_000_000_000) {
            return err(
                "controller.encode_bytes_per_s",
                format!("{} is outside 1e6..1e11 bytes/s (0: not modelled)", c.encode_bytes_per_s),
            );
        }
        if c.read_decode_ns > 1_000_000 {
            return err("controller.read_decode_ns", format!("{} ns is more than 1 ms per page read (0: none)", c.read_decode_ns));
        }
        if c.read_decode_bytes_per_s != 0 && (c.read_decode_bytes_per_s < 1_000_000 || c.read_decode_bytes_per_s > 100_000_000_000) {
            return err(
                "controller.read_decode_bytes_per_s",
                format!("{} is outside 1e6..1e11 bytes/s (0 means the decode is overlapped)", c.read_decode_bytes_per_s),
            );
        }
        if c.die_stripe_bytes != 0 && !(128..=65_536).contains(&c.die_stripe_bytes) {
            return err(
                "controller.die_stripe_bytes",
                format!("{} is outside 128..65536 bytes (0 means each program unit lies on one die; SandForce 512)", c.die_stripe_bytes),
            );
        }
        let n = &self.nand;
        for (f, v) in [
            ("nand.channels", n.channels),
            ("nand.packages_per_channel", n.packages_per_channel),
            ("nand.dies_per_package", n.dies_per_package),
            ("nand.planes_per_die", n.planes_per_die),
            ("nand.blocks_per_plane", n.blocks_per_plane),
            ("nand.pages_per_block", n.pages_per_block),
        ] {
            if v == 0 {
                return err(f, "0 is not allowed: must be at least 1".into());
            }
        }
        if n.channels > 64 {
            return err("nand.channels", format!("{} channels: at most 64", n.channels));
        }
        if n.planes_per_die > 8 {
            return err("nand.planes_per_die", format!("{}: at most 8", n.planes_per_die));
        }
        if n.page_size_bytes < UNIT_BYTES || n.page_size_bytes % UNIT_BYTES != 0 || n.page_size_bytes > 65536 {
            return err("nand.page_size_bytes", format!("{} must be a multiple of 4096 up to 65536 (4096, 8192, 16384)", n.page_size_bytes));
        }
        let dies_total = n.channels * n.packages_per_channel * n.dies_per_package;
        if n.reserved_dies + u32::from(n.raise) >= dies_total {
            return err(
                "nand.reserved_dies",
                format!("{} reserved{} of {dies_total} dies leaves none for data", n.reserved_dies, if n.raise { " + 1 RAISE parity" } else { "" }),
            );
        }
        for (f, v) in [("nand.tr_ns", n.tr_ns), ("nand.tprog_ns", n.tprog_ns), ("nand.tbers_ns", n.tbers_ns)] {
            if v == 0 || v > 100_000_000 {
                return err(f, format!("{v} ns must be 1..=100000000 (tR is tens of us: 50000)"));
            }
        }
        if n.channel_bytes_per_s < 1_000_000 {
            return err("nand.channel_bytes_per_s", format!("{} must be at least 1e6 bytes/s (ONFI 2 sync: 200000000)", n.channel_bytes_per_s));
        }
        if let Some(dr) = &self.data_reduction {
            for (f, v) in [
                ("data_reduction.compressible_stored_fraction", dr.compressible_stored_fraction),
                ("data_reduction.repeated_stored_fraction", dr.repeated_stored_fraction),
                ("data_reduction.zeros_stored_fraction", dr.zeros_stored_fraction),
            ] {
                if !(0.0..=1.0).contains(&v) {
                    return err(f, format!("{v} must be a fraction 0..=1"));
                }
            }
            if dr.metadata_bytes_per_unit > 1024 {
                return err("data_reduction.metadata_bytes_per_unit", format!("{} must be at most 1024", dr.metadata_bytes_per_unit));
            }
        }
        if c.max_active_dies > 4096 {
            return err(
                "controller.max_active_dies",
                format!("{} is more than 4096 (0, or at least the drive's {dies_total} dies, means no limit)", c.max_active_dies),
            );
        }
        if c.readahead_bytes > (64 << 20) || c.readahead_bytes % UNIT_BYTES != 0 {
            return err("controller.readahead_bytes", format!("{} must be a multiple of 4096 up to 64 MiB (0: off)", c.readahead_bytes));
        }
        if c.unmapped_read_ns > 10_000_000 {
            return err("controller.unmapped_read_ns", format!("{} ns is more than 10 ms", c.unmapped_read_ns));
        }
        let p = &self.power;
        for (f, v) in [
            ("power.read_uj_per_page", p.read_uj_per_page),
            ("power.program_uj_per_unit", p.program_uj_per_unit),
            ("power.erase_uj_per_block", p.erase_uj_per_block),
            ("power.transfer_pj_per_byte", p.transfer_pj_per_byte),
        ] {
            if !(v >= 0.0 && v < 1e6) {
                return err(f, format!("{v} must be a non-negative energy"));
            }
        }
        let g = self.geometry();
        if g.raw_slots * g.gran_per_slot as u64 > u32::MAX as u64 - 2 {
            return err("nand.blocks_per_plane", "raw NAND exceeds the 16 TB the 32-bit map supports".into());
        }
        if g.gran_per_slot > 1 && g.raw_slots * g.gran_per_slot as u64 >= 1 << crate::ftl::LEN_SHIFT {
            return err(
                "nand.blocks_per_plane",
                format!(
                    "raw NAND of {} B exceeds the 1 TiB the map supports with data reduction (1KB granules, 30-bit granule numbers)",
                    g.raw_bytes()
                ),
            );
        }
        if g.user_units >= g.raw_slots {
            return err(
                "drive.user_capacity_bytes",
                format!(
                    "{} B is not smaller than the raw NAND of the data dies ({} B = {} dies x {} blocks x {} slots x 4096 B)",
                    d.user_capacity_bytes,
                    g.raw_bytes(),
                    g.dies,
                    g.blocks_per_die,
                    g.slots_per_block
                ),
            );
        }
        let f = &self.ftl;
        if f.perf_mode_tprog_ns > 0 && (f.perf_mode_fill_percent == 0 || f.perf_mode_fill_percent > 100) {
            return err("ftl.perf_mode_fill_percent", format!("{} must be 1..=100", f.perf_mode_fill_percent));
        }
        if f.perf_mode_tprog_ns > 0 && f.perf_mode_tprog_ns >= n.tprog_ns {
            return err("ftl.perf_mode_tprog_ns", format!("{} must be faster than nand.tprog_ns ({})", f.perf_mode_tprog_ns, n.tprog_ns));
        }
        if f.recycle_bytes_per_s != 0 && !(RECYCLE_MIN..=RECYCLE_MAX).contains(&f.recycle_bytes_per_s) {
            return err(
                "ftl.recycle_bytes_per_s",
                format!(
                    "{} is outside 1e6..=1e11 bytes/s for the whole controller (0: no recycling path; the SF-1200 presets use 71e6)",
                    f.recycle_bytes_per_s
                ),
            );
        }
        if f.gc_threshold_blocks < 1 {
            return err("ftl.gc_threshold_blocks", "must be at least 1 free block per die".into());
        }
        // Per die the FTL needs an open host block, an open GC block and the
        // foreground-GC reserve beyond the user data.
        let spare_blocks_per_die = g.spare_slots / g.slots_per_block as u64 / g.dies as u64;
        let need = f.gc_threshold_blocks as u64 + 2;
        if spare_blocks_per_die < need {
            return err(
                "drive.user_capacity_bytes",
                format!(
                    "spare area is {spare_blocks_per_die} blocks per die ({} B in all); the FTL needs at least {need} per die (gc_threshold_blocks + an open host block + an open GC block): lower the user capacity or add blocks",
                    g.spare_slots * UNIT_BYTES
                ),
            );
        }
        if f.gc_threshold_blocks as u64 >= g.blocks_per_die as u64 / 2 {
            return err("ftl.gc_threshold_blocks", format!("{} must be below half the blocks per die ({})", f.gc_threshold_blocks, g.blocks_per_die));
        }
        if f.bg_gc_threshold_blocks as u64 > spare_blocks_per_die {
            return err(
                "ftl.bg_gc_threshold_blocks",
                format!("{} exceeds the spare blocks per die ({spare_blocks_per_die}); idle GC could never reach it", f.bg_gc_threshold_blocks),
            );
        }
        if c.write_buffer_bytes < 2 * g.unit_slots as u64 * UNIT_BYTES {
            return err(
                "controller.write_buffer_bytes",
                format!("{} must hold at least two program units ({} B = 2 x page x planes)", c.write_buffer_bytes, 2 * g.unit_slots as u64 * UNIT_BYTES),
            );
        }
        Ok(())
    }
}

fn path_or_top(p: &str) -> String {
    if p.is_empty() || p == "." {
        "(top level)".to_string()
    } else {
        p.to_string()
    }
}

/// Units we recognise in field names, for the "wrong unit" hint.
const UNIT_SUFFIXES: &[&str] = &["_ns", "_us", "_ms", "_s", "_bytes", "_kb", "_mb", "_gb", "_bytes_per_s", "_mb_per_s", "_blocks", "_percent"];

const KNOWN_FIELDS: &[&str] = &[
    "user_capacity_bytes", "link_bytes_per_s", "command_overhead_ns", "command_cost_ns", "write_buffer_bytes",
    "command_cost_read_ns", "command_cost_write_ns", "command_latency_ns", "max_write_bytes_per_s",
    "read_decode_bytes_per_s", "read_decode_ns", "encode_bytes_per_s", "die_stripe_bytes",
    "page_size_bytes", "tr_ns", "tprog_ns", "tbers_ns", "channel_bytes_per_s", "gc_threshold_blocks",
    "bg_gc_threshold_blocks", "idle_gc_delay_ns", "recycle_bytes_per_s", "readahead_bytes", "unmapped_read_ns",
    "metadata_bytes_per_unit", "idle_mw", "active_mw", "read_uj_per_page", "program_uj_per_unit", "erase_uj_per_block",
    "transfer_pj_per_byte",
];

fn stem(name: &str) -> &str {
    let mut best = name;
    for s in UNIT_SUFFIXES {
        if let Some(b) = name.strip_suffix(s) {
            if b.len() < best.len() {
                best = b;
            }
        }
    }
    best
}

/// Turn serde's wording into ours and add a hint when a field has the wrong unit.
fn explain_serde(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            let name = &rest[..end];
            if name == "recycle_bytes_per_s_per_die" {
                return "unknown field 'recycle_bytes_per_s_per_die': the recycling path is controller-wide now; \
                        use 'recycle_bytes_per_s' (bytes/s for the whole controller, not per die)"
                    .into();
            }
            let s = stem(name);
            for k in KNOWN_FIELDS {
                if stem(k) == s && *k != name {
                    return format!("unknown field '{name}': wrong unit? this field is '{k}'");
                }
            }
            let allowed = rest[end + 1..].trim_start_matches(", ").replace('`', "'");
            return format!("unknown field '{name}'; {allowed}");
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        if let Some(end) = rest.find('`') {
            return format!("missing required field '{}'", &rest[..end]);
        }
    }
    msg.replace('`', "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SMALL: &str = r#"
[drive]
id = "t"
name = "test"
user_capacity_bytes = 100_000_256
[host]
link_bytes_per_s = 550_000_000
command_overhead_ns = 2000
ncq_depth = 32
[controller]
command_cost_ns = 5000
write_buffer_bytes = 1048576
[nand]
channels = 2
packages_per_channel = 1
dies_per_package = 2
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
page_size_bytes = 8192
tr_ns = 50000
tprog_ns = 1300000
tbers_ns = 3000000
channel_bytes_per_s = 200000000
[ftl]
gc_policy = "greedy"
gc_threshold_blocks = 2
"#;

    #[test]
    fn parses_and_derives_geometry() {
        let c = DriveConfig::from_toml_str(SMALL).unwrap();
        let g = c.geometry();
        assert_eq!(g.dies, 4);
        assert_eq!(g.unit_slots, 4);
        assert_eq!(g.slots_per_block, 256);
        assert_eq!(g.raw_slots, 4 * 64 * 256);
        assert_eq!(c.hash_hex(), DriveConfig::from_json_str(&c.to_json_string()).unwrap().hash_hex());
    }

    #[test]
    fn missing_field_is_named() {
        let t = SMALL.replace("tr_ns = 50000\n", "");
        let e = DriveConfig::from_toml_str(&t).unwrap_err().to_string();
        assert!(e.contains("nand") && e.contains("tr_ns") && e.contains("missing"), "{e}");
    }

    #[test]
    fn wrong_unit_gets_a_hint() {
        let t = SMALL.replace("tr_ns = 50000", "tr_us = 50");
        let e = DriveConfig::from_toml_str(&t).unwrap_err().to_string();
        assert!(e.contains("wrong unit") && e.contains("tr_ns"), "{e}");
    }

    #[test]
    fn read_and_write_costs_default_to_the_command_cost_and_are_validated() {
        let c = DriveConfig::from_toml_str(SMALL).unwrap();
        assert_eq!((c.controller.read_cost_ns(), c.controller.write_cost_ns()), (5000, 5000));
        assert!(!c.to_json_string().contains("command_cost_read_ns"), "absent options stay absent (stable hash)");
        let t = SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_cost_read_ns = 20000\ncommand_cost_write_ns = 90000");
        let c = DriveConfig::from_toml_str(&t).unwrap();
        assert_eq!((c.controller.read_cost_ns(), c.controller.write_cost_ns()), (20000, 90000));
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_cost_write_ns = 20000000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.command_cost_write_ns"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nmax_write_bytes_per_s = 1000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.max_write_bytes_per_s"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nmax_write_mb_per_s = 450"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("wrong unit") && e.contains("max_write_bytes_per_s"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nencode_bytes_per_s = 5"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.encode_bytes_per_s"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nread_decode_ns = 2000000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.read_decode_ns"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nread_decode_bytes_per_s = 10"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.read_decode_bytes_per_s"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ndie_stripe_bytes = 100000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.die_stripe_bytes") && e.contains("128..65536"), "{e}");
    }

    #[test]
    fn command_slots_and_latency_default_to_one_and_none_and_are_validated() {
        let c = DriveConfig::from_toml_str(SMALL).unwrap();
        assert_eq!((c.controller.command_slots, c.controller.command_latency_ns), (1, 0));
        let j = c.to_json_string();
        assert!(!j.contains("command_slots") && !j.contains("command_latency_ns"), "defaults stay absent (stable hash)");
        let t = SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_slots = 3\ncommand_latency_ns = 4000");
        let c = DriveConfig::from_toml_str(&t).unwrap();
        assert_eq!((c.controller.command_slots, c.controller.command_latency_ns), (3, 4000));
        for bad in ["command_slots = 0", "command_slots = 17"] {
            let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", &format!("command_cost_ns = 5000\n{bad}")))
                .unwrap_err()
                .to_string();
            assert!(e.contains("controller.command_slots") && e.contains("1..=16"), "{e}");
        }
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_latency_ns = 2000000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.command_latency_ns") && e.contains("1 ms"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_latency_us = 4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("wrong unit") && e.contains("command_latency_ns"), "{e}");
    }

    #[test]
    fn data_reduction_beyond_1_tib_of_raw_nand_is_refused_with_the_field_named() {
        let red = "\n[data_reduction]\nenabled = true\nmetadata_bytes_per_unit = 64\ncompressible_stored_fraction = 0.3\nrepeated_stored_fraction = 0.0\nzeros_stored_fraction = 0.0\n";
        let big = SMALL.replace("blocks_per_plane = 64", "blocks_per_plane = 300000");
        assert!(DriveConfig::from_toml_str(&big).is_ok(), "a plain drive of 1.2 TiB raw is fine");
        let e = DriveConfig::from_toml_str(&format!("{big}{red}")).unwrap_err().to_string();
        assert!(e.contains("nand.blocks_per_plane") && e.contains("1 TiB"), "{e}");
        assert!(DriveConfig::from_toml_str(&format!("{SMALL}{red}")).is_ok());
    }

    #[test]
    fn the_recycling_path_rate_is_range_checked_and_the_per_die_field_points_to_it() {
        let with = |v: &str| SMALL.replace("gc_threshold_blocks = 2", &format!("gc_threshold_blocks = 2\nrecycle_bytes_per_s = {v}"));
        let c = DriveConfig::from_toml_str(&with("80_000_000")).unwrap();
        assert_eq!(c.ftl.recycle_bytes_per_s, 80_000_000);
        assert_eq!(DriveConfig::from_toml_str(&with("0")).unwrap().ftl.recycle_bytes_per_s, 0);
        assert!(!DriveConfig::from_toml_str(SMALL).unwrap().to_json_string().contains("recycle"), "off stays absent (stable hash)");
        for bad in ["999_999", "100_000_000_001"] {
            let e = DriveConfig::from_toml_str(&with(bad)).unwrap_err().to_string();
            assert!(e.contains("ftl.recycle_bytes_per_s") && e.contains("1e6..=1e11"), "{e}");
        }
        let e = DriveConfig::from_toml_str(&SMALL.replace("gc_threshold_blocks = 2", "gc_threshold_blocks = 2\nrecycle_bytes_per_s_per_die = 5_000_000"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("recycle_bytes_per_s_per_die") && e.contains("'recycle_bytes_per_s'") && e.contains("controller-wide"), "{e}");
    }

    #[test]
    fn zero_dies_and_oversized_capacity_are_refused() {
        let e = DriveConfig::from_toml_str(&SMALL.replace("channels = 2", "channels = 0")).unwrap_err().to_string();
        assert!(e.contains("nand.channels") && e.contains("0"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("100_000_256", "300_000_256")).unwrap_err().to_string();
        assert!(e.contains("drive.user_capacity_bytes") && e.contains("raw NAND"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("100_000_256", "260_000_256")).unwrap_err().to_string();
        assert!(e.contains("spare area"), "{e}");
        let e = DriveConfig::from_toml_str(&SMALL.replace("\"greedy\"", "\"lru\"")).unwrap_err().to_string();
        assert!(e.contains("ftl.gc_policy") && e.contains("greedy"), "{e}");
    }
}
