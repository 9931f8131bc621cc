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
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// Usable link bandwidth (SATA 3Gbps ~ 280e6, 6Gbps ~ 550e6).
    pub link_bytes_per_s: u64,
    /// Fixed link cost of every command (FIS exchange), ns.
    pub command_overhead_ns: u64,
    /// NCQ depth: commands the drive accepts at once (1..=32 on SATA).
    pub ncq_depth: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerSection {
    /// Controller processing per command (serialised: caps IOPS at 1e9/cost).
    pub command_cost_ns: u64,
    /// Buffer holding written data until it is transferred to a die (SRAM on
    /// DRAM-less controllers, DRAM cache otherwise). Writes are acknowledged
    /// once their data is in it.
    pub write_buffer_bytes: u64,
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
    /// Dies whose capacity is reserved (parity, metadata) and holds no user data.
    #[serde(default)]
    pub reserved_dies: u32,
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
    let map = g.user_units * 4 + g.raw_slots * 4;
    let blocks = g.total_blocks() * 32 + g.dies as u64 * (g.slots_per_block as u64 + 1) * 8;
    let check_bytes = if check { g.user_units * 8 + g.raw_slots * 8 } else { 0 };
    map + blocks + check_bytes + (1 << 20)
}

pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 8 << 30;

impl DriveConfig {
    pub fn from_toml_str(text: &str) -> Result<DriveConfig> {
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
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn from_json_str(text: &str) -> Result<DriveConfig> {
        let mut de = serde_json::Deserializer::from_str(text);
        let cfg: DriveConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            SimError::config(path_or_top(&path), explain_serde(&e.into_inner().to_string()))
        })?;
        cfg.validate()?;
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
        let dies = dies_total - n.reserved_dies;
        let slots_per_page = (n.page_size_bytes / UNIT_BYTES) as u32;
        let unit_slots = slots_per_page * n.planes_per_die;
        let slots_per_block = unit_slots * n.pages_per_block;
        let raw_slots = dies as u64 * n.blocks_per_plane as u64 * slots_per_block as u64;
        let user_units = self.drive.user_capacity_bytes.div_ceil(UNIT_BYTES);
        Geometry {
            channels: n.channels,
            dies,
            dies_total,
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
        if n.reserved_dies >= dies_total {
            return err("nand.reserved_dies", format!("{} reserved of {dies_total} dies leaves none for data", n.reserved_dies));
        }
        for (f, v) in [("nand.tr_ns", n.tr_ns), ("nand.tprog_ns", n.tprog_ns), ("nand.tbers_ns", n.tbers_ns)] {
            if v == 0 || v > 100_000_000 {
                return err(f, format!("{v} ns must be 1..=100000000 (tR is tens of us: 50000)"));
            }
        }
        if n.channel_bytes_per_s < 1_000_000 {
            return err("nand.channel_bytes_per_s", format!("{} must be at least 1e6 bytes/s (ONFI 2 sync: 200000000)", n.channel_bytes_per_s));
        }
        let g = self.geometry();
        if g.raw_slots > u32::MAX as u64 - 1 {
            return err("nand.blocks_per_plane", "raw NAND exceeds the 16 TB the 32-bit map supports".into());
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
        if c.write_buffer_bytes < g.unit_slots as u64 * UNIT_BYTES {
            return err(
                "controller.write_buffer_bytes",
                format!("{} must hold at least one program unit ({} B = page x planes)", c.write_buffer_bytes, g.unit_slots as u64 * UNIT_BYTES),
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
    "page_size_bytes", "tr_ns", "tprog_ns", "tbers_ns", "channel_bytes_per_s", "gc_threshold_blocks",
    "bg_gc_threshold_blocks", "idle_gc_delay_ns",
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
