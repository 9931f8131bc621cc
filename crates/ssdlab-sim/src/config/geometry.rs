//! What follows from a validated description: the geometry the FTL lays out
//! (dies, blocks, 4KB slots, spare area), the map-format limits it implies,
//! and the RAM the engine will need for it (checked before anything is
//! allocated).

use serde_json::Value;

use super::{DriveConfig, UNIT_BYTES};

/// With data reduction, map and log entries carry the unit's length in
/// granules, minus one, from this bit up (so heads and LBAs stay below 2^30).
pub const LEN_SHIFT: u32 = 30;

/// Entries per overflow chunk of the reverse map's per-block logs (a power of
/// two; see `revmap`).
pub const REVMAP_CHUNK_ENTRIES: u32 = 64;

/// The default memory limit: drives needing more RAM are refused.
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 8 << 30;

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
    /// 4KB units per map entry: 1, or the power of two that fits the user
    /// LBA space into `ftl.max_map_entries` (a coarser map unit).
    pub map_unit_units: u32,
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

/// Bytes the reverse map can grow to (every granule a unit of its own):
/// the per-block logs at one entry per 4KB slot, the overflow chunks for
/// smaller units and their tables, the log lengths and the live bits.
pub fn revmap_bytes_reserved(total_blocks: u64, slots_per_block: u64, granules_per_block: u64) -> u64 {
    let chunk = REVMAP_CHUNK_ENTRIES as u64;
    let chunks = total_blocks * (granules_per_block - slots_per_block).div_ceil(chunk);
    let granules = total_blocks * granules_per_block;
    total_blocks * slots_per_block * 4 + chunks * 4 * 2 + total_blocks * 4 + granules.div_ceil(64) * 8 + chunks * chunk * 4
}

/// Bytes of RAM the engine needs per 4KB of raw NAND in normal mode, and the
/// extra in checking mode; used for the estimate before allocation.
pub fn memory_estimate_bytes(g: &Geometry, check: bool) -> u64 {
    let gpb = g.slots_per_block as u64 * g.gran_per_slot as u64;
    // The reverse map at its largest (every unit one granule): what it uses
    // grows with the units written, so this is an upper bound.
    let map = g.user_units * 4 + revmap_bytes_reserved(g.total_blocks(), g.slots_per_block as u64, gpb);
    let blocks = g.total_blocks() * 40 + g.dies as u64 * (gpb + 1) * 8;
    let check_bytes = if check { g.user_units * 8 + g.raw_slots * 12 * g.gran_per_slot as u64 } else { 0 };
    map + blocks + check_bytes + (1 << 20)
}

/// Largest map unit a drive may need, in 4KB units (64KB).
pub const MAX_MAP_UNIT_UNITS: u32 = 16;

/// 4KB units per map entry for `user_units` of user LBA space and a map of
/// at most `max_entries` entries (0: no limit): the smallest power of two
/// that fits. Past [`MAX_MAP_UNIT_UNITS`] validation refuses the drive.
pub fn map_unit_units(user_units: u64, max_entries: u64) -> u32 {
    let mut m = 1u32;
    if max_entries == 0 {
        return m;
    }
    while user_units.div_ceil(m as u64) > max_entries && m <= MAX_MAP_UNIT_UNITS {
        m *= 2;
    }
    m
}

impl DriveConfig {
    pub fn geometry(&self) -> Geometry {
        let n = &self.nand;
        let dies_total = n.channels * n.packages_per_channel * n.dies_per_package;
        let parity_dies = u32::from(n.raise);
        let dies = dies_total - n.reserved_dies - parity_dies;
        let slots_per_page = (n.page_size_bytes / UNIT_BYTES) as u32;
        let plane_set_slots = slots_per_page * n.planes_per_die;
        // One-shot programming: a wordline's pages (one per bit of a cell) go
        // in one program on every plane.
        let unit_slots = if n.one_shot_program { plane_set_slots * n.bits_per_cell.max(1) } else { plane_set_slots };
        let slots_per_block = plane_set_slots * n.pages_per_block;
        // Saturating: validation refuses a product this large by name.
        let raw_slots = (dies as u64).saturating_mul(n.blocks_per_plane as u64).saturating_mul(slots_per_block as u64);
        let user_units = self.drive.user_capacity_bytes.div_ceil(UNIT_BYTES);
        let map_unit_units = map_unit_units(user_units, self.ftl.max_map_entries);
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
            map_unit_units,
        }
    }

    /// The recycling path's rate in bytes/s for the whole controller (0: no
    /// path): `ftl.recycle_bytes_per_s`, or `ftl.recycle_bytes_per_s_per_die`
    /// times the dies the controller drives at once (data and parity dies,
    /// at most `controller.max_active_dies`).
    pub fn recycle_path_bytes_per_s(&self) -> u64 {
        let f = &self.ftl;
        if f.recycle_bytes_per_s_per_die == 0 {
            return f.recycle_bytes_per_s;
        }
        let g = self.geometry();
        let driven = match self.controller.max_active_dies {
            0 => g.dies + g.parity_dies,
            k => k.min(g.dies + g.parity_dies),
        };
        f.recycle_bytes_per_s_per_die.saturating_mul(driven as u64)
    }
}

impl DriveConfig {
    /// The geometry and memory estimates as named values, in a fixed order:
    /// dies, blocks, slots, raw / user / spare bytes, spare fraction, and the
    /// RAM needed in normal and checking mode.
    pub fn geometry_fields(&self) -> Vec<(&'static str, Value)> {
        let g = self.geometry();
        vec![
            ("channels", g.channels.into()),
            ("dies", g.dies.into()),
            ("dies_total", g.dies_total.into()),
            ("reserved_dies", self.nand.reserved_dies.into()),
            ("planes_per_die", g.planes_per_die.into()),
            ("pages_per_block", g.pages_per_block.into()),
            ("page_size_bytes", self.nand.page_size_bytes.into()),
            ("slots_per_page", g.slots_per_page.into()),
            ("unit_slots", g.unit_slots.into()),
            ("slots_per_block", g.slots_per_block.into()),
            ("block_bytes", (g.slots_per_block as u64 * UNIT_BYTES).into()),
            ("blocks_per_die", g.blocks_per_die.into()),
            ("total_blocks", g.total_blocks().into()),
            ("raw_slots", g.raw_slots.into()),
            ("user_units", g.user_units.into()),
            ("spare_slots", g.spare_slots.into()),
            ("raw_bytes", g.raw_bytes().into()),
            ("user_bytes", self.drive.user_capacity_bytes.into()),
            ("spare_bytes", (g.spare_slots * UNIT_BYTES).into()),
            ("spare_fraction", g.spare_fraction().into()),
            ("map_unit_bytes", (g.map_unit_units as u64 * UNIT_BYTES).into()),
            ("memory_estimate_bytes", memory_estimate_bytes(&g, false).into()),
            ("memory_estimate_check_bytes", memory_estimate_bytes(&g, true).into()),
        ]
    }
}
