//! The host section: the link (SATA or NVMe over PCIe), its derived rates
//! and the device queues.

use super::sections::is_zero_u32;
use serde::{Deserialize, Serialize};

/// Host link presets (docs/model.md "Host interface").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum Interface {
    /// SATA 3Gbps: 300 MB/s after 8b/10b, about 280e6 B/s usable.
    #[serde(rename = "sata-3g")]
    Sata3g,
    /// SATA 6Gbps: 600 MB/s after 8b/10b, about 550e6 B/s usable.
    #[serde(rename = "sata-6g")]
    Sata6g,
    /// NVMe over PCIe: the link follows from `pcie_gen` and `pcie_lanes`
    /// ([`pcie_link_bytes_per_s`]), full duplex, with `queue_count`
    /// submission/completion queue pairs of `queue_depth` entries.
    #[serde(rename = "nvme")]
    Nvme,
}

impl Interface {
    /// Usable link rate of a SATA preset (None for NVMe: see [`pcie_link_bytes_per_s`]).
    pub fn link_bytes_per_s(self) -> Option<u64> {
        match self {
            Interface::Sata3g => Some(280_000_000),
            Interface::Sata6g => Some(550_000_000),
            Interface::Nvme => None,
        }
    }
    /// Command, DMA-setup and status FISes at the link's frame rate (None
    /// for NVMe: see [`pcie_command_overhead_ns`]).
    pub fn command_overhead_ns(self) -> Option<u64> {
        match self {
            Interface::Sata3g => Some(5_000),
            Interface::Sata6g => Some(3_000),
            Interface::Nvme => None,
        }
    }
}

/// PCIe generations the host link knows: (generation, transfers per second
/// per lane). Gen 3 to 5 all use 128b/130b encoding (PCIe Base
/// Specification 3.0 section 4.2.2; 4.0 and 5.0 keep it).
pub const PCIE_GENS: [(u32, u64); 3] = [(3, 8_000_000_000), (4, 16_000_000_000), (5, 32_000_000_000)];
/// Lane counts a PCIe link may have (x1, x2, x4, x8, x16).
pub const PCIE_LANES: [u32; 5] = [1, 2, 4, 8, 16];
/// Max payload size of a TLP: 256 B, what PC root ports commonly set.
pub const PCIE_MAX_PAYLOAD_BYTES: u64 = 256;
/// Link bytes around every TLP at gen 3 and later: 4 B STP framing token
/// (with the sequence number), a 16 B header (4 DW: 64-bit host addresses)
/// and a 4 B LCRC.
pub const PCIE_TLP_OVERHEAD_BYTES: u64 = 24;
/// Link bytes of an NVMe command's own TLPs: SQ tail doorbell write (24 +
/// 4), 64 B SQE fetch (read request 24, completion 20 + 64: its header is
/// 3 DW), 16 B CQE write (24 + 16), MSI-X interrupt write (24 + 4), CQ head
/// doorbell write (24 + 4). The PRP list of a transfer past two pages is
/// counted per command on top ([`pcie_prp_list_bytes`]).
pub const NVME_COMMAND_TLP_BYTES: u64 = 28 + 24 + 84 + 40 + 28 + 28;

/// Raw bytes/s of a PCIe link after 128b/130b encoding, or None for a
/// generation or lane count it does not have.
pub fn pcie_raw_bytes_per_s(gen: u32, lanes: u32) -> Option<u64> {
    let gt = PCIE_GENS.iter().find(|g| g.0 == gen)?.1;
    if !PCIE_LANES.contains(&lanes) {
        return None;
    }
    Some((gt as u128 * lanes as u128 * 128 / (130 * 8)) as u64)
}

/// Usable data bytes/s of a PCIe link: the raw rate times the share of a
/// full-size TLP that is payload (256 / (256 + 24)). Gen 3 x4: 3.60e9.
pub fn pcie_link_bytes_per_s(gen: u32, lanes: u32) -> Option<u64> {
    pcie_raw_bytes_per_s(gen, lanes)?;
    let gt = PCIE_GENS.iter().find(|g| g.0 == gen)?.1;
    let payload = PCIE_MAX_PAYLOAD_BYTES as u128;
    Some((gt as u128 * lanes as u128 * 128 * payload / (130 * 8 * (payload + PCIE_TLP_OVERHEAD_BYTES as u128))) as u64)
}

/// Link time of an NVMe command's own TLPs at the raw rate. Gen 3 x4: 59 ns.
pub fn pcie_command_overhead_ns(gen: u32, lanes: u32) -> Option<u64> {
    let raw = pcie_raw_bytes_per_s(gen, lanes)?;
    Some((NVME_COMMAND_TLP_BYTES * 1_000_000_000).div_ceil(raw))
}

/// Link bytes of the PRP list an NVMe command of `len` bytes needs: none up
/// to two 4KB pages (PRP1 and PRP2 in the SQE), else 8 B per page fetched
/// in one read request and its completion (24 + 20 B of TLP overhead).
pub fn pcie_prp_list_bytes(len: u64) -> u64 {
    let pages = len.div_ceil(4096);
    if pages <= 2 {
        0
    } else {
        pages * 8 + 24 + 20
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostSection {
    /// Link preset; sets `link_bytes_per_s` and `command_overhead_ns` unless
    /// they are given (`nvme`: from `pcie_gen` and `pcie_lanes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<Interface>,
    /// Usable link bandwidth (SATA 3Gbps ~ 280e6, 6Gbps ~ 550e6; PCIe gen 3
    /// x4 3.60e9 per direction).
    #[serde(default)]
    pub link_bytes_per_s: u64,
    /// Fixed link cost of every command (SATA: FIS exchange; NVMe: the
    /// doorbell, SQE, CQE and interrupt TLPs), ns.
    #[serde(default)]
    pub command_overhead_ns: u64,
    /// SATA NCQ depth: commands the drive accepts at once (1..=32). Not on
    /// NVMe, which has `queue_count` and `queue_depth`.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub ncq_depth: u32,
    /// NVMe: PCIe generation of the link (3, 4, 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_gen: Option<u32>,
    /// NVMe: PCIe lanes (1, 2, 4, 8, 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_lanes: Option<u32>,
    /// NVMe: I/O submission/completion queue pairs the controller supports
    /// (1..=65535); each host job gets one, jobs beyond it share them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_count: Option<u32>,
    /// NVMe: entries per queue (2..=65536). A queue holds at most
    /// `queue_depth - 1` commands (it is full when its tail is one behind
    /// its head).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
}

impl HostSection {
    /// NVMe over PCIe (several queues, full-duplex link).
    pub fn is_nvme(&self) -> bool {
        self.interface == Some(Interface::Nvme)
    }
    /// Commands one queue holds at the drive: SATA's NCQ depth, or an NVMe
    /// queue's entries minus one.
    pub fn queue_slots(&self) -> u32 {
        if self.is_nvme() {
            self.queue_depth.unwrap_or(2).saturating_sub(1).max(1)
        } else {
            self.ncq_depth
        }
    }
    /// Device queues: 1 on SATA (one NCQ), `queue_count` on NVMe.
    pub fn queues(&self) -> u32 {
        if self.is_nvme() {
            self.queue_count.unwrap_or(1).max(1)
        } else {
            1
        }
    }
}
