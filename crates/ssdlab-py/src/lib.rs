//! Thin PyO3 binding of ssdlab-sim, imported as `ssdlab._core`: registration
//! and conversion only. Configuration crosses the boundary as plain data
//! (dicts, integers in ns and bytes) that the engine parses and validates
//! once; a whole phase runs inside Rust per call and comes back as a dict
//! plus numpy arrays.
//!
//! One file per area, in the order data flows:
//! 1. `errors`: every engine error kind as its own Python exception;
//! 2. `convert`: Python plain data <-> the engine's JSON values;
//! 3. `drive`: `DriveConfig` (a validated drive, parsed once), the document
//!    as written, provenance, the parts library;
//! 4. `workload`: `Workload` (a job parsed once) and the engine's parsers of
//!    sizes, durations and data patterns;
//! 5. `simulator`: `Simulator` (phases, replay, state, clone, checking mode);
//! 6. `trace`: trace statistics, the Storage Bench traces, trace export.

mod convert;
mod drive;
mod errors;
mod simulator;
mod trace;
mod workload;

use pyo3::prelude::*;

/// The engine's version.
#[pyfunction]
fn version() -> &'static str {
    ssdlab_sim::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    drive::register(m)?;
    workload::register(m)?;
    simulator::register(m)?;
    trace::register(m)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("UNIT_BYTES", ssdlab_sim::config::UNIT_BYTES)?;
    Ok(())
}
