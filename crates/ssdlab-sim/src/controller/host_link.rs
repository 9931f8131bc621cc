//! The host link and the device queues: every command crosses the link
//! (SATA, half duplex: command FISes and data share it; NVMe over PCIe,
//! full duplex: host-to-device and device-to-host traffic each have the
//! whole rate), then waits for one of the controller's command slots. A
//! SATA drive takes at most `host.ncq_depth` commands at once; an NVMe
//! queue at most `host.queue_depth - 1`; the rest wait in the host.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Controller;

impl Controller {
    #[inline]
    pub(super) fn link_ns(&self, bytes: u64) -> u64 {
        (bytes * 1_000_000_000).div_ceil(self.host.link_bytes_per_s)
    }

    /// Link time of a command's own traffic for `len` bytes of data: SATA's
    /// FISes, or NVMe's doorbell/SQE/CQE/interrupt TLPs and, past two
    /// pages, its PRP list (at the raw rate: those bytes include their TLP
    /// overhead).
    #[inline]
    pub(super) fn command_link_ns(&self, len: u64) -> u64 {
        let oh = self.host.command_overhead_ns;
        if !self.duplex {
            return oh;
        }
        let prp = crate::config::pcie_prp_list_bytes(len);
        if prp == 0 {
            return oh;
        }
        let raw = self.host.link_bytes_per_s as u128
            * (crate::config::PCIE_MAX_PAYLOAD_BYTES + crate::config::PCIE_TLP_OVERHEAD_BYTES) as u128
            / crate::config::PCIE_MAX_PAYLOAD_BYTES as u128;
        oh + (prp as u128 * 1_000_000_000).div_ceil(raw.max(1)) as u64
    }

    /// Command phase common to every I/O: after the command latency (no
    /// resource held) the command's FIS crosses the link, then the
    /// controller processes it for `cost_ns` on the earliest free of its
    /// command slots. Returns when the controller is done.
    ///
    /// SATA is half duplex and the host yields the link to the device: a
    /// command waits for the device's data burst in progress (read data),
    /// not for transfers that have not started. Its link time
    /// (`host.command_overhead_ns`: FISes and handshakes) is booked with its
    /// data (in `submit`), or here for a command that moves none
    /// (`link_now`). Booked here ahead of the data of the commands queued
    /// before it, a command had to fit the gaps their transfers left: a
    /// loaded link settled into fragment patterns that idled the command
    /// slots (a Vertex 4 256GB's 4KB random writes ran at 78.5K or 90.9K
    /// IOPS as a 0.2% change of tPROG set the pattern at the phase start).
    #[inline]
    pub fn command(&mut self, t: u64, cost_ns: u64, link_now: bool) -> u64 {
        // PCIe is full duplex: no yielding to the device's bursts.
        let t0 = if self.duplex { t + self.cfg.command_latency_ns } else { self.device_bursts.free_from(t + self.cfg.command_latency_ns) };
        let t1 = if link_now {
            let oh = self.host.command_overhead_ns;
            self.link.reserve(t0, oh) + oh
        } else {
            t0
        };
        let slots = &mut self.slots_free_ns;
        let mut k = 0;
        for i in 1..slots.len() {
            if slots[i] < slots[k] {
                k = i;
            }
        }
        let t2 = t1.max(slots[k]) + cost_ns;
        slots[k] = t2;
        t2
    }
}

/// Device-side NCQ slots when the host queues more commands than the drive
/// takes (`iodepth` > `ncq_depth`): a command waits in the host's queue until
/// a slot frees.
#[derive(Clone, Debug)]
pub struct NcqSlots {
    /// When each slot is next free; empty when every command fits.
    free: BinaryHeap<Reverse<u64>>,
    queued: bool,
}

impl NcqSlots {
    /// Slots for `iodepth` outstanding commands on a drive taking `ncq_depth`, all free at `start_ns`.
    pub fn new(iodepth: u32, ncq_depth: u32, start_ns: u64) -> NcqSlots {
        let queued = iodepth > ncq_depth;
        let mut free = BinaryHeap::new();
        if queued {
            for _ in 0..ncq_depth {
                free.push(Reverse(start_ns));
            }
        }
        NcqSlots { free, queued }
    }

    /// When a command the host issues at `t` reaches the drive.
    #[inline]
    pub fn admit(&mut self, t: u64) -> u64 {
        if self.queued {
            self.free.pop().map(|r| r.0).unwrap_or(t).max(t)
        } else {
            t
        }
    }

    /// The command holding a slot completes at `done_ns`.
    #[inline]
    pub fn release(&mut self, done_ns: u64) {
        if self.queued {
            self.free.push(Reverse(done_ns));
        }
    }
}
