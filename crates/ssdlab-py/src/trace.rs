//! Traces: statistics of a trace file or of a generated Storage Bench trace
//! side by side with the published figures, the Storage Bench traces, and
//! writing a generated trace. The work streams in the engine with the GIL
//! released, taking it back now and then to check for Ctrl-C.

use std::path::Path;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use ssdlab_sim::trace::export::{write_trace, ExportFormat};
use ssdlab_sim::trace::storage_bench::{published, try_generate, StorageBench};
use ssdlab_sim::trace::summary::{file_summary, generated_summary};
use ssdlab_sim::SimError;

use crate::convert::{to_py, to_value};
use crate::errors::sim_err;

fn bench(id: &str) -> PyResult<StorageBench> {
    StorageBench::parse(id).map_err(|m| sim_err(SimError::workload("bench", m)))
}

/// A `keep_going` callback for the engine: checks for signals with the GIL
/// taken back; false (stop) once one is pending, kept in `pending`.
fn signals(pending: &mut Option<PyErr>) -> bool {
    Python::with_gil(|py| match py.check_signals() {
        Ok(()) => true,
        Err(e) => {
            *pending = Some(e);
            false
        }
    })
}

/// Import a trace file (streaming; gzip/bzip2/xz by magic bytes) and summarise
/// it. `options` keys: capacity_bytes (required), format, device,
/// device_mapping (merge|concatenate), device_region_bytes, out_of_range
/// (fold|reject), skip_bad_lines, data_pattern, reorder_window_records,
/// blkparse_event (D|Q), compare_with (a Storage Bench id),
/// memory_limit_bytes (what the import may hold; default 8 GiB). Returns
/// `{"file", "stats", "import", "published"?, "comparison"?}`.
#[pyfunction]
fn trace_stats<'py>(py: Python<'py>, path: &str, options: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let opts = to_value(options, "options")?;
    let mut pending = None;
    let res = py.allow_threads(|| file_summary(Path::new(path), &opts, &mut || signals(&mut pending)));
    match (res.map_err(sim_err)?, pending) {
        (Some(v), _) => to_py(py, &v),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("stopped only by a signal"),
    }
}

/// Generate a Storage Bench trace (streaming, not stored) and summarise it,
/// side by side with the published figures: `{"bench", "name",
/// "capacity_bytes", "seed", "stats", "published", "comparison"}`.
#[pyfunction]
fn generated_trace_stats<'py>(py: Python<'py>, bench_id: &str, capacity_bytes: u64, seed: u64) -> PyResult<Bound<'py, PyAny>> {
    let b = bench(bench_id)?;
    let mut pending = None;
    let res = py.allow_threads(|| generated_summary(b, capacity_bytes, seed, &mut || signals(&mut pending)));
    match (res.map_err(sim_err)?, pending) {
        (Some(v), _) => to_py(py, &v),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("stopped only by a signal"),
    }
}

/// The published statistics of a Storage Bench trace (docs/storage-bench.md).
#[pyfunction]
fn published_stats<'py>(py: Python<'py>, bench_id: &str) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &published(bench(bench_id)?).to_json())
}

/// The Storage Bench traces: `[{"id", "name", "records", "duration_s"}]`.
#[pyfunction]
fn storage_bench_traces<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    let list: Vec<serde_json::Value> = StorageBench::ALL
        .iter()
        .map(|w| serde_json::json!({"id": w.id(), "name": w.name(), "records": w.records(), "duration_s": w.duration_s()}))
        .collect();
    to_py(py, &serde_json::Value::Array(list))
}

/// Write a generated Storage Bench trace to `path`: `fio-iolog` (fio iolog
/// version 3, replayable on a real device with `fio --read_iolog=FILE
/// --replay_redirect=/dev/sdX`) or `csv` (every field of a record); `format`
/// None takes it from the extension (.csv; .iolog or .log), an unknown one
/// being a TraceError. Returns the number of records written.
#[pyfunction]
#[pyo3(signature = (bench_id, capacity_bytes, seed, path, format = None))]
fn write_generated_trace(
    py: Python<'_>,
    bench_id: &str,
    capacity_bytes: u64,
    seed: u64,
    path: &str,
    format: Option<&str>,
) -> PyResult<u64> {
    let fmt = ExportFormat::for_path(Path::new(path), format).map_err(|e| sim_err(SimError::Trace(e)))?;
    let gen = try_generate(bench(bench_id)?, capacity_bytes, seed).map_err(sim_err)?;
    let mut pending = None;
    let res = py.allow_threads(|| write_trace(gen, Path::new(path), fmt, &mut || signals(&mut pending)));
    match (res.map_err(|e| PyOSError::new_err(format!("{path}: {e}")))?, pending) {
        (Some(n), _) => Ok(n),
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("stopped only by a signal"),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(generated_trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(published_stats, m)?)?;
    m.add_function(wrap_pyfunction!(storage_bench_traces, m)?)?;
    m.add_function(wrap_pyfunction!(write_generated_trace, m)?)?;
    Ok(())
}
