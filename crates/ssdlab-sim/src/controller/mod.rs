//! The controller between the host and the FTL: the host link and the NCQ
//! (`host_link`), command processing on the controller's command slots
//! (`command`), the write buffer (`write_buffer`) and reads with read-ahead
//! (`read_ahead`).
//!
//! Command path: host queue (SATA's NCQ, or an NVMe submission queue) ->
//! link (command + data; SATA half duplex, PCIe full duplex) ->
//! controller (per-command cost on one of its command slots) -> write buffer /
//! FTL -> NAND dies and channels. The controller owns the resources booked in
//! time on that path (the link, the write data path, the ECC encoder, the
//! command slots) and the buffer; the FTL and the NAND are handed to it per
//! command.

mod command;
mod host_link;
mod read_ahead;
mod write_buffer;

pub use host_link::NcqSlots;

use self::read_ahead::ReadAhead;
use self::write_buffer::WriteBuffer;
use crate::config::{ControllerSection, DriveConfig, Geometry, HostSection};
use crate::ftl::Ftl;
use crate::nand::{Calendar, Nand};

#[derive(Clone, Debug)]
pub struct Controller {
    cfg: ControllerSection,
    host: HostSection,
    user_units: u64,
    /// 4KB units per map entry (`ftl.max_map_entries`; 1: the 4KB map).
    map_unit: u64,
    dies: u32,
    link: Calendar,
    /// NVMe's PCIe link is full duplex: `link` carries host to device
    /// (commands, write data), this device to host (read data,
    /// completions). Unused on SATA, whose one link carries both.
    link_up: Calendar,
    /// Full-duplex PCIe (NVMe) rather than half-duplex SATA.
    duplex: bool,
    /// The device's data bursts on the link (read data), which a command
    /// waits for (`command`).
    device_bursts: Calendar,
    /// The controller's write data path when it has a throughput ceiling.
    write_path: Calendar,
    /// The controller's NAND-side write path (ECC encoder) when modelled.
    encode_path: Calendar,
    /// When each of the controller's command slots is next free
    /// (`controller.command_slots` entries).
    slots_free_ns: Vec<u64>,
    buffer: WriteBuffer,
    /// Commands outstanding at the drive when the current one arrived.
    pub outstanding: u32,
    ra: ReadAhead,
}

impl Controller {
    pub fn new(cfg: &DriveConfig, g: &Geometry) -> Controller {
        Controller {
            cfg: cfg.controller.clone(),
            host: cfg.host.clone(),
            user_units: g.user_units,
            map_unit: g.map_unit_units as u64,
            dies: g.dies,
            link: Calendar::default(),
            link_up: Calendar::default(),
            duplex: cfg.host.is_nvme(),
            device_bursts: Calendar::default(),
            write_path: Calendar::default(),
            encode_path: Calendar::default(),
            slots_free_ns: vec![0; cfg.controller.command_slots.max(1) as usize],
            buffer: WriteBuffer::new(cfg.controller.write_buffer_bytes, g.dies),
            outstanding: 0,
            ra: ReadAhead { next_off: u64::MAX, ..Default::default() },
        }
    }

    /// Host data the FTL has sent to the dies frees its buffer space.
    #[inline]
    pub fn drain_releases(&mut self, ftl: &mut Ftl) {
        for r in ftl.releases.drain(..) {
            self.buffer.push(r);
        }
    }

    /// A FLUSH CACHE command at `t`: partly filled units are programmed now.
    /// Returns when the controller has processed it.
    pub fn flush_command(&mut self, ftl: &mut Ftl, nand: &mut Nand, t: u64) -> u64 {
        let t2 = self.command(t, self.cfg.command_cost_ns, true);
        ftl.flush(t2, nand);
        self.drain_releases(ftl);
        t2
    }

    /// A FLUSH CACHE the host waits for (fio's `fsync=N`): processed as
    /// [`Controller::flush_command`], and complete once every host program
    /// unit sent to the dies before it, and those it sent, is programmed.
    pub fn sync_command(&mut self, ftl: &mut Ftl, nand: &mut Nand, t: u64) -> u64 {
        let t2 = self.flush_command(ftl, nand, t);
        t2.max(ftl.host_durable_ns)
    }

    /// Forget reservations that end before `t` (results do not depend on it).
    #[inline]
    pub fn advance(&mut self, t: u64) {
        self.link.advance(t);
        self.link_up.advance(t);
        self.device_bursts.advance(t);
        self.write_path.advance(t);
        self.encode_path.advance(t);
    }

    /// The buffer is empty again (secure erase).
    pub fn reset_buffer(&mut self) {
        self.buffer = WriteBuffer::new(self.cfg.write_buffer_bytes, self.dies);
    }

    /// No two reservations overlap on the link, the write path or the encoder.
    pub fn is_consistent(&self) -> bool {
        self.link.is_consistent()
            && self.link_up.is_consistent()
            && self.device_bursts.is_consistent()
            && self.write_path.is_consistent()
            && self.encode_path.is_consistent()
    }
}
