//! # ssdlab-sim: a deterministic discrete-event SSD simulator
//!
//! The pipeline, in the order data flows:
//! 1. [`config`]: a drive description (TOML/JSON, units in every field name), validated;
//!    [`library`]: the NAND parts and controller profiles a drive is composed from.
//! 2. [`host`]: workloads in fio's vocabulary (closed-loop) and trace playback.
//! 3. [`engine`]: the simulator value that owns every part and runs whole phases.
//! 4. [`ftl`]: page-level mapping at 4KB, write points, free pools, GC, TRIM;
//!    [`revmap`]: what each block holds (per-block unit logs, live bits).
//! 5. [`nand`]: dies, channels and the host link as timelines in integer ns.
//! 6. [`stats`]: per-interval and per-phase figures, latency histograms.
//! 7. [`check`]: the checking mode (shadow model, structural invariants).
//!
//! Time is `u64` nanoseconds; all randomness comes from one seed.

pub mod pattern;
pub mod trace;
pub mod check;
pub mod config;
pub mod engine;
pub mod error;
pub mod ftl;
pub mod host;
pub mod library;
pub mod mem;
pub mod nand;
pub mod revmap;
pub mod rng;
pub mod stats;

pub use config::{DriveConfig, GcMode, GcPolicy, Geometry, Interface};
pub use engine::{IoLogEntry, PhaseResult, Progress, ReplayMode, ReplayOptions, SimOptions, Simulator};
pub use error::{Result, SimError};
pub use host::Workload;
pub use pattern::DataPattern;

/// The engine's version, recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
