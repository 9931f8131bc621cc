//! Every rule a drive must obey: one error naming the field, the value and
//! what is allowed.

use super::geometry::{LEN_SHIFT, MAX_MAP_UNIT_UNITS};
use super::{DriveConfig, SECTOR_BYTES, UNIT_BYTES};
use crate::error::{Result, SimError};

/// Range of `ftl.recycle_bytes_per_s` when on: 1 MB/s to 100 GB/s.
const RECYCLE_MIN: u64 = 1_000_000;
const RECYCLE_MAX: u64 = 100_000_000_000;
/// Lower bound of `ftl.recycle_bytes_per_s_per_die`: 0.1 MB/s a die.
const RECYCLE_PER_DIE_MIN: u64 = 100_000;
/// The largest write an SLC write-through buffer may take (16 MiB).
const MAX_WRITE_THROUGH_BYTES: u64 = 16 << 20;

impl DriveConfig {
    /// Every rule a drive must obey, with the field named in the error: the
    /// sections in a fixed order, so a drive with several faults always gets
    /// the same one named first.
    pub fn validate(&self) -> Result<()> {
        self.check_drive()?;
        self.check_host()?;
        self.check_controller_costs()?;
        self.check_nand_part()?;
        self.check_data_reduction()?;
        self.check_controller_reads()?;
        self.check_power()?;
        self.check_geometry()?;
        self.check_nand_cells()?;
        self.check_slc_cache()?;
        self.check_perf_mode()?;
        self.check_recycle()?;
        self.check_map_and_gc()?;
        self.check_controller_buffers()?;
        Ok(())
    }

    /// `drive`: its id and user capacity.
    fn check_drive(&self) -> Result<()> {
        let d = &self.drive;
        if d.id.is_empty() || !d.id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return err("drive.id", format!("'{}' must be non-empty letters, digits, '-', '_' or '.'", d.id));
        }
        if d.user_capacity_bytes == 0 || !d.user_capacity_bytes.is_multiple_of(SECTOR_BYTES) {
            return err(
                "drive.user_capacity_bytes",
                format!("{} must be a positive multiple of {SECTOR_BYTES} (bytes, e.g. 120000000000 for 120GB)", d.user_capacity_bytes),
            );
        }
        if (d.user_capacity_bytes / UNIT_BYTES) > u32::MAX as u64 - 1 {
            return err("drive.user_capacity_bytes", format!("{} is larger than the 16 TB the 32-bit map supports", d.user_capacity_bytes));
        }
        Ok(())
    }

    /// `host`: the link, and NCQ (SATA) or queue pairs (NVMe).
    fn check_host(&self) -> Result<()> {
        let h = &self.host;
        if h.link_bytes_per_s < 1_000_000 || h.link_bytes_per_s > 100_000_000_000 {
            return err(
                "host.link_bytes_per_s",
                format!("{} is outside 1e6..1e11 bytes/s (SATA 6Gbps is about 550000000)", h.link_bytes_per_s),
            );
        }
        if h.command_overhead_ns > 10_000_000 {
            return err("host.command_overhead_ns", format!("{} ns is more than 10 ms per command", h.command_overhead_ns));
        }
        if h.is_nvme() {
            if h.ncq_depth != 0 {
                return err(
                    "host.ncq_depth",
                    format!("{}: NCQ is SATA's; an NVMe drive has queue_count and queue_depth instead: leave ncq_depth out", h.ncq_depth),
                );
            }
            match h.queue_count {
                None => return err("host.queue_count", "missing: an NVMe drive needs its I/O queue pairs (1..=65535)".into()),
                Some(q) if !(1..=65_535).contains(&q) => {
                    return err("host.queue_count", format!("{q} must be 1..=65535 (I/O submission/completion queue pairs)"))
                }
                _ => {}
            }
            match h.queue_depth {
                None => return err("host.queue_depth", "missing: an NVMe drive needs its entries per queue (2..=65536)".into()),
                Some(d) if !(2..=65_536).contains(&d) => {
                    return err("host.queue_depth", format!("{d} must be 2..=65536 (entries per queue; a queue holds one fewer commands)"))
                }
                _ => {}
            }
        } else {
            for (f, given) in [
                ("host.pcie_gen", h.pcie_gen.is_some()),
                ("host.pcie_lanes", h.pcie_lanes.is_some()),
                ("host.queue_count", h.queue_count.is_some()),
                ("host.queue_depth", h.queue_depth.is_some()),
            ] {
                if given {
                    return err(f, "is an NVMe field: give host.interface = \"nvme\", or leave it out (SATA has ncq_depth)".into());
                }
            }
            if h.ncq_depth == 0 {
                return err("host.ncq_depth", "missing or 0: a SATA drive needs its NCQ depth, 1..=32".into());
            }
            if h.ncq_depth > 256 {
                return err("host.ncq_depth", format!("{} must be 1..=32 for SATA (at most 256)", h.ncq_depth));
            }
        }
        Ok(())
    }

    /// `controller`: per-command costs, throughput ceilings and the die stripe.
    fn check_controller_costs(&self) -> Result<()> {
        let c = &self.controller;
        if c.command_cost_ns > 10_000_000 {
            return err("controller.command_cost_ns", format!("{} ns is more than 10 ms per command", c.command_cost_ns));
        }
        for (f, v) in
            [("controller.command_cost_read_ns", c.command_cost_read_ns), ("controller.command_cost_write_ns", c.command_cost_write_ns)]
        {
            if let Some(v) = v {
                if v > 10_000_000 {
                    return err(f, format!("{v} ns is more than 10 ms per command (leave it out to use command_cost_ns)"));
                }
            }
        }
        if c.command_slots == 0 || c.command_slots > 16 {
            return err(
                "controller.command_slots",
                format!(
                    "{} must be 1..=16 (commands processed at once: the controller's cores or firmware pipeline depth)",
                    c.command_slots
                ),
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
        Ok(())
    }

    /// `nand`: counts, bounds that keep the geometry exact, page size and timings.
    fn check_nand_part(&self) -> Result<()> {
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
        if !(1..=1_000_000).contains(&n.pe_cycles_rated) {
            // a drive rated for no cycles would start worn out ("life remaining 0%")
            return err("nand.pe_cycles_rated", format!("{}: must be 1..=1000000 (MLC of 2011: 3000-5000)", n.pe_cycles_rated));
        }
        if n.planes_per_die > 8 {
            return err("nand.planes_per_die", format!("{}: at most 8", n.planes_per_die));
        }
        // Bounds that keep the geometry's products exact (and far beyond any drive).
        for (f, v, max) in [
            ("nand.packages_per_channel", n.packages_per_channel, 64),
            ("nand.dies_per_package", n.dies_per_package, 64),
            ("nand.pages_per_block", n.pages_per_block, 65_536),
            ("nand.blocks_per_plane", n.blocks_per_plane, 1 << 20),
        ] {
            if v > max {
                return err(f, format!("{v}: at most {max}"));
            }
        }
        if n.page_size_bytes < UNIT_BYTES || !n.page_size_bytes.is_multiple_of(UNIT_BYTES) || n.page_size_bytes > 65536 {
            return err(
                "nand.page_size_bytes",
                format!("{} must be a multiple of 4096 up to 65536 (4096, 8192, 16384)", n.page_size_bytes),
            );
        }
        let dies_total = n.channels * n.packages_per_channel * n.dies_per_package;
        if n.reserved_dies + u32::from(n.raise) >= dies_total {
            return err(
                "nand.reserved_dies",
                format!(
                    "{} reserved{} of {dies_total} dies leaves none for data",
                    n.reserved_dies,
                    if n.raise { " + 1 RAISE parity" } else { "" }
                ),
            );
        }
        for (f, v) in [("nand.tr_ns", n.tr_ns), ("nand.tprog_ns", n.tprog_ns), ("nand.tbers_ns", n.tbers_ns)] {
            if v == 0 || v > 100_000_000 {
                return err(f, format!("{v} ns must be 1..=100000000 (tR is tens of us: 50000)"));
            }
        }
        if n.channel_bytes_per_s < 1_000_000 {
            return err(
                "nand.channel_bytes_per_s",
                format!("{} must be at least 1e6 bytes/s (ONFI 2 sync: 200000000)", n.channel_bytes_per_s),
            );
        }
        Ok(())
    }

    /// `data_reduction`, when given: fractions and metadata.
    fn check_data_reduction(&self) -> Result<()> {
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
        Ok(())
    }

    /// `controller`: the active-die limit, read-ahead and unmapped reads.
    fn check_controller_reads(&self) -> Result<()> {
        let c = &self.controller;
        let n = &self.nand;
        let dies_total = n.channels * n.packages_per_channel * n.dies_per_package;
        if c.max_active_dies > 4096 {
            return err(
                "controller.max_active_dies",
                format!("{} is more than 4096 (0, or at least the drive's {dies_total} dies, means no limit)", c.max_active_dies),
            );
        }
        if c.readahead_bytes > (64 << 20) || !c.readahead_bytes.is_multiple_of(UNIT_BYTES) {
            return err("controller.readahead_bytes", format!("{} must be a multiple of 4096 up to 64 MiB (0: off)", c.readahead_bytes));
        }
        if c.unmapped_read_ns > 10_000_000 {
            return err("controller.unmapped_read_ns", format!("{} ns is more than 10 ms", c.unmapped_read_ns));
        }
        Ok(())
    }

    /// `power`: energies.
    fn check_power(&self) -> Result<()> {
        let p = &self.power;
        for (f, v) in [
            ("power.read_uj_per_page", p.read_uj_per_page),
            ("power.program_uj_per_unit", p.program_uj_per_unit),
            ("power.erase_uj_per_block", p.erase_uj_per_block),
            ("power.transfer_pj_per_byte", p.transfer_pj_per_byte),
        ] {
            if !(0.0..1e6).contains(&v) {
                return err(f, format!("{v} must be a non-negative energy"));
            }
        }
        Ok(())
    }

    /// The derived geometry: within the map's reach, with spare area.
    fn check_geometry(&self) -> Result<()> {
        let d = &self.drive;
        let g = self.geometry();
        if g.raw_slots * g.gran_per_slot as u64 > u32::MAX as u64 - 2 {
            return err("nand.blocks_per_plane", "raw NAND exceeds the 16 TB the 32-bit map supports".into());
        }
        if g.gran_per_slot > 1 && g.raw_slots * g.gran_per_slot as u64 >= 1 << LEN_SHIFT {
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
        Ok(())
    }

    /// `nand`: cell bits, one-shot programs, plane reads and per-page-type and SLC-mode timings.
    fn check_nand_cells(&self) -> Result<()> {
        let n = &self.nand;
        if n.bits_per_cell > 4 {
            return err("nand.bits_per_cell", format!("{} must be 0 (not stated), 1, 2 (MLC), 3 (TLC) or 4 (QLC)", n.bits_per_cell));
        }
        if n.one_shot_program && (n.bits_per_cell < 2 || !n.pages_per_block.is_multiple_of(n.bits_per_cell)) {
            return err(
                "nand.one_shot_program",
                format!(
                    "needs nand.bits_per_cell 2..=4 and nand.pages_per_block a multiple of it (got {} bits, {} pages)",
                    n.bits_per_cell, n.pages_per_block
                ),
            );
        }
        if n.independent_plane_reads && n.planes_per_die < 2 {
            return err(
                "nand.independent_plane_reads",
                format!("needs nand.planes_per_die 2 or more (got {}): a one-plane die reads one page at a time", n.planes_per_die),
            );
        }
        if !n.tr_page_types_ns.is_empty() {
            if n.tr_page_types_ns.len() != n.bits_per_cell as usize {
                return err(
                    "nand.tr_page_types_ns",
                    format!(
                        "has {} values; give one per page type of a wordline, nand.bits_per_cell = {} (or leave it out: tr_ns for every page)",
                        n.tr_page_types_ns.len(),
                        n.bits_per_cell
                    ),
                );
            }
            if let Some(v) = n.tr_page_types_ns.iter().find(|&&v| v == 0 || v > 10_000_000) {
                return err("nand.tr_page_types_ns", format!("{v} ns must be 1..=10000000 (a page read)"));
            }
        }
        for (fld, v, of) in [
            ("nand.slc_tr_ns", n.slc_tr_ns, n.tr_ns),
            ("nand.slc_tprog_ns", n.slc_tprog_ns, n.tprog_ns),
            ("nand.slc_tbers_ns", n.slc_tbers_ns, n.tbers_ns),
        ] {
            if v > of.max(1) * 4 {
                return err(
                    fld,
                    format!("{v} ns is more than 4 times the native time ({of} ns); SLC mode is the faster one (0: no SLC mode)"),
                );
            }
        }
        Ok(())
    }

    /// `slc_cache`, when given: it needs an SLC mode.
    fn check_slc_cache(&self) -> Result<()> {
        let n = &self.nand;
        if let Some(sc) = &self.slc_cache {
            if n.slc_tprog_ns == 0 || n.bits_per_cell < 2 {
                return err("slc_cache", "needs a NAND part with an SLC mode: nand.bits_per_cell 2..=4 and nand.slc_tprog_ns > 0".into());
            }
            for (fld, v) in [
                ("slc_cache.static_percent_of_capacity", sc.static_percent_of_capacity),
                ("slc_cache.dynamic_percent_of_capacity", sc.dynamic_percent_of_capacity),
            ] {
                if !(0.0..=100.0).contains(&v) {
                    return err(fld, format!("{v} must be a percentage 0..=100 of the user capacity"));
                }
            }
            if !(0.0..=64.0).contains(&sc.fold_units_per_host_unit) {
                return err("slc_cache.fold_units_per_host_unit", format!("{} must be 0..=64", sc.fold_units_per_host_unit));
            }
            if self.ftl.perf_mode_tprog_ns > 0 {
                return err("slc_cache", "cannot be combined with ftl.perf_mode_tprog_ns (both write blocks in a fast mode)".into());
            }
            let wt = sc.write_through_max_bytes;
            if wt > 0 && !(512..=MAX_WRITE_THROUGH_BYTES).contains(&wt) {
                return err(
                    "slc_cache.write_through_max_bytes",
                    format!("{wt} must be 0 (no write-through) or 512..={MAX_WRITE_THROUGH_BYTES} bytes (the largest write that goes through SLC)"),
                );
            }
            if wt > 0 && (sc.static_percent_of_capacity <= 0.0 || sc.dynamic_percent_of_capacity != 0.0 || sc.refill_while_writing) {
                return err(
                    "slc_cache.write_through_max_bytes",
                    "needs a fixed buffer: slc_cache.static_percent_of_capacity above 0, dynamic_percent_of_capacity 0 and refill_while_writing false".into(),
                );
            }
        }
        Ok(())
    }

    /// `ftl`: the performance mode.
    fn check_perf_mode(&self) -> Result<()> {
        let n = &self.nand;
        let f = &self.ftl;
        if f.perf_mode_tprog_ns > 0 && (f.perf_mode_fill_percent == 0 || f.perf_mode_fill_percent > 100) {
            return err("ftl.perf_mode_fill_percent", format!("{} must be 1..=100", f.perf_mode_fill_percent));
        }
        if f.perf_mode_after_idle && f.perf_mode_tprog_ns == 0 {
            return err("ftl.perf_mode_after_idle", "needs a performance mode (ftl.perf_mode_tprog_ns above 0)".to_string());
        }
        if f.perf_mode_small_random_writes_only && f.perf_mode_tprog_ns == 0 {
            return err("ftl.perf_mode_small_random_writes_only", "needs a performance mode (ftl.perf_mode_tprog_ns above 0)".to_string());
        }
        if f.perf_mode_tprog_ns > 0 && f.perf_mode_tprog_ns >= n.tprog_ns {
            return err("ftl.perf_mode_tprog_ns", format!("{} must be faster than nand.tprog_ns ({})", f.perf_mode_tprog_ns, n.tprog_ns));
        }
        Ok(())
    }

    /// `ftl`: the recycling path's rate, one way.
    fn check_recycle(&self) -> Result<()> {
        let f = &self.ftl;
        if f.recycle_bytes_per_s != 0 && !(RECYCLE_MIN..=RECYCLE_MAX).contains(&f.recycle_bytes_per_s) {
            return err(
                "ftl.recycle_bytes_per_s",
                format!(
                    "{} is outside 1e6..=1e11 bytes/s for the whole controller (0: no recycling path; the SF-1200 presets use 71e6)",
                    f.recycle_bytes_per_s
                ),
            );
        }
        if f.recycle_bytes_per_s_per_die != 0 {
            if f.recycle_bytes_per_s != 0 {
                return err(
                    "ftl.recycle_bytes_per_s_per_die",
                    "is set beside ftl.recycle_bytes_per_s; give the path's rate one way: for the whole controller or per active die"
                        .into(),
                );
            }
            if !(RECYCLE_PER_DIE_MIN..=RECYCLE_MAX).contains(&f.recycle_bytes_per_s_per_die) {
                return err(
                    "ftl.recycle_bytes_per_s_per_die",
                    format!(
                        "{} is outside 1e5..=1e11 bytes/s per active die (0: not given; the SF-1200 profile uses 4437500)",
                        f.recycle_bytes_per_s_per_die
                    ),
                );
            }
        }
        Ok(())
    }

    /// `ftl`: the map's reach and the GC thresholds against the spare area.
    fn check_map_and_gc(&self) -> Result<()> {
        let d = &self.drive;
        let f = &self.ftl;
        let g = self.geometry();
        if g.map_unit_units > MAX_MAP_UNIT_UNITS {
            return err(
                "ftl.max_map_entries",
                format!(
                    "{} entries cannot map {} B of user LBA space in units of at most {} KiB; allowed: 0 (no limit) or at least {}",
                    f.max_map_entries,
                    d.user_capacity_bytes,
                    MAX_MAP_UNIT_UNITS as u64 * UNIT_BYTES / 1024,
                    g.user_units.div_ceil(MAX_MAP_UNIT_UNITS as u64)
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
            return err(
                "ftl.gc_threshold_blocks",
                format!("{} must be below half the blocks per die ({})", f.gc_threshold_blocks, g.blocks_per_die),
            );
        }
        if f.bg_gc_threshold_blocks as u64 > spare_blocks_per_die {
            return err(
                "ftl.bg_gc_threshold_blocks",
                format!(
                    "{} exceeds the spare blocks per die ({spare_blocks_per_die}); idle GC could never reach it",
                    f.bg_gc_threshold_blocks
                ),
            );
        }
        Ok(())
    }

    /// `controller`: the program buffer, map cache and write buffer against the program unit.
    fn check_controller_buffers(&self) -> Result<()> {
        let c = &self.controller;
        let n = &self.nand;
        let g = self.geometry();
        let unit_bytes = g.unit_slots as u64 * UNIT_BYTES;
        if c.program_buffer_bytes != 0 && !(unit_bytes..=1 << 30).contains(&c.program_buffer_bytes) {
            return err(
                "controller.program_buffer_bytes",
                format!(
                    "{} must hold at least one program unit ({unit_bytes} B = page x planes) and at most 1 GiB, or be 0 (not modelled)",
                    c.program_buffer_bytes
                ),
            );
        }
        if c.map_cache_bytes != 0 && !(n.page_size_bytes..=1 << 32).contains(&c.map_cache_bytes) {
            return err(
                "controller.map_cache_bytes",
                format!(
                    "{} must hold at least one translation page ({} B, a NAND page) and at most 4 GiB, or be 0 (the whole map in DRAM)",
                    c.map_cache_bytes, n.page_size_bytes
                ),
            );
        }
        if c.write_buffer_bytes < 2 * g.unit_slots as u64 * UNIT_BYTES {
            return err(
                "controller.write_buffer_bytes",
                format!(
                    "{} must hold at least two program units ({} B = 2 x page x planes)",
                    c.write_buffer_bytes,
                    2 * g.unit_slots as u64 * UNIT_BYTES
                ),
            );
        }
        Ok(())
    }
}

/// The error of a rule broken: the field and what is allowed.
fn err(f: &str, m: String) -> Result<()> {
    Err(SimError::config(f, m))
}
