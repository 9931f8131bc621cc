//! The simulator: an ordinary value owning a drive's every part (controller,
//! FTL, NAND), which runs a whole phase per call (`phases`: a closed-loop
//! workload, idle time, a TRIM, a secure erase; `replay`: a trace) and keeps
//! its state between phases. Clone it to measure many times from one
//! preconditioned state. Each phase hands back a [`PhaseResult`] (`result`);
//! `jobs` runs several workloads at once, one submitter each, sharing the
//! drive's NCQ tags.

mod in_flight;
mod jobs;
mod pacing;
mod phases;
mod replay;
mod result;
mod submitter;

pub use phases::Progress;
pub use replay::{IoLogEntry, ReplayMode, ReplayOptions, REPLAY_OPTION_KEYS};
pub use result::PhaseResult;

use serde_json::{json, Value};

use crate::config::{memory_estimate_bytes, DriveConfig, Geometry, DEFAULT_MEMORY_LIMIT_BYTES, UNIT_BYTES};
use crate::controller::Controller;
use crate::error::{Result, SimError};
use crate::ftl::Ftl;
use crate::nand::Nand;
use crate::stats::SERIES_BYTES_PER_INTERVAL;

/// The latest simulated time a phase may reach (2^62 ns, about 146 years):
/// far beyond any run, and far enough below 2^64 that no sum of a time and a
/// latency overflows.
pub const MAX_SIM_TIME_NS: u64 = 1 << 62;

/// A duration in ns as text for messages: whole s, ms, us, or ns.
pub(crate) fn duration_text(ns: u64) -> String {
    if ns >= 1_000_000_000 && ns.is_multiple_of(1_000_000_000) {
        format!("{} s", ns / 1_000_000_000)
    } else if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 && ns.is_multiple_of(1_000_000) {
        format!("{} ms", ns / 1_000_000)
    } else if ns >= 1_000 && ns.is_multiple_of(1_000) {
        format!("{} us", ns / 1_000)
    } else {
        format!("{ns} ns")
    }
}

/// Options for building a simulator.
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub seed: u64,
    /// Checking mode: shadow model verified on every read and after every phase.
    pub check: bool,
    pub memory_limit_bytes: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { seed: 1, check: false, memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES }
    }
}

/// A simulated drive: its description, its parts and simulated time.
#[derive(Clone, Debug)]
pub struct Simulator {
    pub cfg: DriveConfig,
    pub geometry: Geometry,
    pub seed: u64,
    pub check: bool,
    pub nand: Nand,
    pub ftl: Ftl,
    /// The memory limit it was built with: the drive's tables and whatever
    /// grows with a phase (its per-interval series) must fit in it.
    pub memory_limit_bytes: u64,
    ctl: Controller,
    /// Simulated time: every phase starts here.
    pub now_ns: u64,
    /// When the last I/O of the last phase completed (idle detection).
    last_io_end_ns: u64,
    phase_count: u64,
    seq: u64,
}

impl Simulator {
    pub fn new(cfg: DriveConfig, opts: &SimOptions) -> Result<Simulator> {
        cfg.validate()?;
        let g = cfg.geometry();
        let need = memory_estimate_bytes(&g, opts.check);
        if need > opts.memory_limit_bytes {
            return Err(SimError::Memory {
                needed_bytes: need,
                limit_bytes: opts.memory_limit_bytes,
                detail: format!(
                    "{} GB raw NAND in {} slots of 4KB, {} user units{}",
                    g.raw_bytes() / 1_000_000_000,
                    g.raw_slots,
                    g.user_units,
                    if opts.check { ", checking mode" } else { "" }
                ),
            });
        }
        let mut nand = Nand::new(&cfg);
        nand.check = opts.check;
        let ftl = Ftl::new(&cfg, opts.check);
        let ctl = Controller::new(&cfg, &g);
        Ok(Simulator {
            geometry: g,
            seed: opts.seed,
            check: opts.check,
            nand,
            ftl,
            memory_limit_bytes: opts.memory_limit_bytes,
            ctl,
            now_ns: 0,
            last_io_end_ns: 0,
            phase_count: 0,
            seq: 0,
            cfg,
        })
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.cfg.drive.user_capacity_bytes
    }

    /// Bytes of RAM the FTL's tables use now (at most the memory estimate:
    /// the reverse map grows with the units stored).
    pub fn memory_in_use_bytes(&self) -> u64 {
        self.ftl.memory_in_use_bytes()
    }

    /// Bytes of the memory limit left beside the drive's tables (their
    /// estimate, reserved before allocation): what a phase's series may use.
    pub fn memory_budget_bytes(&self) -> u64 {
        self.memory_limit_bytes.saturating_sub(memory_estimate_bytes(&self.geometry, self.check))
    }

    /// Most intervals a phase's per-interval series may hold within the
    /// memory limit (at least 1).
    pub fn max_series_intervals(&self) -> u64 {
        (self.memory_budget_bytes() / SERIES_BYTES_PER_INTERVAL).max(1)
    }

    /// The error of a per-interval series of `intervals` intervals of
    /// `interval_ns` that would not fit: `what` says whose and why, `remedy`
    /// which settings change it (the memory limit is always named).
    pub(crate) fn series_error(&self, what: String, intervals: u64, remedy: &str) -> SimError {
        SimError::Allocation {
            what: format!("{what}: a per-interval series of {intervals} intervals"),
            needed_bytes: intervals.saturating_mul(SERIES_BYTES_PER_INTERVAL),
            limit_bytes: self.memory_budget_bytes(),
            remedy: format!("{remedy}, or raise the memory limit (memory_limit_bytes / --memory-limit)"),
        }
    }

    /// Verify the FTL against the shadow model and the structural invariants.
    pub fn check_now(&self) -> Result<()> {
        self.ftl.check_all()?;
        if !self.nand.channels_consistent() || !self.ctl.is_consistent() {
            return Err(SimError::integrity(
                "a channel, the link, the write path, the encoder or the recycling path has overlapping reservations",
            ));
        }
        Ok(())
    }

    /// SMART-like figures: wear and lifetime writes.
    pub fn smart(&self) -> Value {
        let (sum, min, max) = self.ftl.erase_counts();
        let nblocks = self.ftl.blocks.len() as f64;
        let avg = sum as f64 / nblocks;
        let rated = self.cfg.nand.pe_cycles_rated as f64;
        let c = &self.ftl.counters;
        // An erase in SLC mode spends 1/slc_rating of a cell's life, not
        // 1/rating: counted in native cycles, it is rating/slc_rating of one.
        let slc_rated = self.cfg.nand.slc_pe_cycles_rated as f64;
        let sum = if c.slc_erases > 0 && slc_rated > 0.0 {
            (sum - c.slc_erases) as f64 + c.slc_erases as f64 * rated / slc_rated
        } else {
            sum as f64
        };
        let worn = sum / nblocks;
        // Lifetime: the rated P/E budget of the data blocks, spent at the write
        // amplification seen so far (1 before any write).
        let host = c.host_units_written * UNIT_BYTES;
        // Bytes programmed in SLC mode wear bits * rating / slc_rating of a
        // native byte each (an SLC block holds 1/bits of the data per erase).
        let nand_wear_bytes = if c.slc_bytes_programmed > 0 && slc_rated > 0.0 {
            let bits = self.cfg.nand.bits_per_cell.max(1) as f64;
            (c.nand_bytes_programmed - c.slc_bytes_programmed) as f64 + c.slc_bytes_programmed as f64 * bits * rated / slc_rated
        } else {
            c.nand_bytes_programmed as f64
        };
        let wa = if host == 0 { 1.0 } else { nand_wear_bytes / host as f64 };
        let waf = if host == 0 { 1.0 } else { c.nand_bytes_programmed as f64 / host as f64 };
        let block_bytes = self.geometry.slots_per_block as f64 * UNIT_BYTES as f64;
        let budget = rated * nblocks * block_bytes - sum * block_bytes;
        let endurance_host = (rated * nblocks * block_bytes / wa.max(1e-9)) as u64;
        let years = |gb_per_day: f64| (budget / wa.max(1e-9) / (gb_per_day * 1e9) / 365.0).max(0.0);
        let mut v = json!({
            "host_bytes_written": host,
            "nand_bytes_written": c.nand_bytes_programmed,
            "erase_count_avg": avg,
            "erase_count_min": min,
            "erase_count_max": max,
            "pe_cycles_rated": self.cfg.nand.pe_cycles_rated,
            "life_remaining_percent": (100.0 * (1.0 - worn / rated)).max(0.0),
            "waf_lifetime": waf,
            "endurance_host_bytes": endurance_host,
            "lifetime_years_at_10_gb_per_day": years(10.0),
            "lifetime_years_at_20_gb_per_day": years(20.0),
            "lifetime_years_at_50_gb_per_day": years(50.0),
            "mapped_bytes": self.ftl.mapped_units() * UNIT_BYTES,
            "sim_time_ns": self.now_ns,
        });
        if self.cfg.slc_cache.is_some() {
            let (bytes, blocks) = self.ftl.slc_usage();
            v["slc_cache_data_bytes"] = json!(bytes);
            v["slc_cache_blocks"] = json!(blocks);
            v["slc_block_erases"] = json!(c.slc_erases);
            v["slc_pe_cycles_rated"] = json!(self.cfg.nand.slc_pe_cycles_rated);
            v["slc_bytes_programmed"] = json!(c.slc_bytes_programmed);
            // What the lifetime figures spend: native-equivalent NAND bytes
            // per host byte.
            v["wear_amplification"] = json!(wa);
        }
        v
    }

    /// Bytes of host data held in SLC-mode blocks, not yet folded.
    pub fn ftl_slc_bytes(&self) -> u64 {
        self.ftl.slc_usage().0
    }
}
