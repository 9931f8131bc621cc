//! # ssdlab-sim: a deterministic discrete-event SSD simulator
//!
//! The pipeline, in the order data flows (one module each):
//! 1. [`config`]: a drive description (TOML/JSON, units in every field name):
//!    its sections, validation, the geometry it implies and the memory
//!    estimate; [`library`]: the NAND parts and controller profiles a drive is
//!    composed from.
//! 2. [`workload`]: the host's closed-loop job in fio's vocabulary (`rw`,
//!    `bs`, `iodepth`, `data_pattern`, ...) and its I/O generator; [`parse`]:
//!    sizes, durations and other values in that vocabulary; [`pattern`]: the
//!    data pattern every write carries.
//! 3. [`trace`]: block traces, the other source of host I/O: importers of
//!    public formats, the Storage Bench generators and their published
//!    figures, statistics, export.
//! 4. [`engine`]: the simulator value that owns every part and runs whole
//!    phases (a job, a trace replay, idle time, TRIM, secure erase), and the
//!    phase result with its JSON.
//! 5. [`controller`]: the host link and NCQ, command processing on the
//!    controller's command slots, the write buffer and read-ahead.
//! 6. [`ftl`]: page-level mapping at 4KB, blocks and pools, write points and
//!    die dispatch, reads and striping, garbage collection, performance mode,
//!    RAISE; [`revmap`]: what each block holds (per-block unit logs, live bits).
//! 7. [`nand`]: dies, channels and the recycling path as timelines in integer ns.
//! 8. [`stats`]: per-interval and per-phase figures, latency histograms.
//! 9. [`check`]: the checking mode's shadow model (the FTL's structural
//!    invariants are in `ftl`).
//!
//! Below them: [`error`] (one error type, a kind per Python exception),
//! [`rng`] (seeded randomness, forked per component) and [`mem`] (all of the
//! engine's `unsafe` code: huge-page tables and prefetch hints).
//!
//! Time is `u64` nanoseconds; all randomness comes from one seed.

pub mod check;
pub mod config;
pub mod controller;
pub mod engine;
pub mod error;
pub mod ftl;
pub mod library;
pub mod mem;
pub mod nand;
pub mod parse;
pub mod pattern;
pub mod revmap;
pub mod rng;
pub mod skew;
pub mod stats;
pub mod trace;
pub mod workload;

pub use config::{DriveConfig, GcMode, GcPolicy, Geometry, Interface};
pub use engine::{IoLogEntry, PhaseResult, Progress, ReplayMode, ReplayOptions, SimOptions, Simulator};
pub use error::{Result, SimError};
pub use pattern::DataPattern;
pub use trace::storage_bench::StorageBench;
pub use workload::Workload;

/// The engine's version, recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
