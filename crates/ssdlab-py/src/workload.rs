//! Workloads and values in fio's vocabulary: a job parsed once by the engine
//! into a `Workload` (which `Simulator.run` takes as it is), and the sizes,
//! durations and data patterns the engine parses for every caller.

use pyo3::prelude::*;
use serde_json::Value;

use ssdlab_sim::parse::{parse_size, parse_time_ns};
use ssdlab_sim::{DataPattern, SimError, Workload};

use crate::convert::{to_py, to_value};
use crate::errors::sim_err;

/// A validated fio-style job (immutable): what `Simulator.run` runs.
#[pyclass(module = "ssdlab._core", name = "Workload", frozen)]
pub struct PyWorkload {
    pub inner: Workload,
}

#[pymethods]
impl PyWorkload {
    /// The normalised job: every size in bytes, every time in ns.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.to_json())
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn iodepth(&self) -> u32 {
        self.inner.iodepth
    }

    fn __repr__(&self) -> String {
        format!("Workload({})", self.inner.to_json())
    }
}

/// Parse fio-style job keys (a dict) against a drive capacity, once.
/// Raises WorkloadError naming the key.
#[pyfunction]
fn parse_workload(job: &Bound<'_, PyAny>, capacity_bytes: u64) -> PyResult<PyWorkload> {
    let v = to_value(job, "job")?;
    Workload::from_json(&v, capacity_bytes).map(|inner| PyWorkload { inner }).map_err(sim_err)
}

/// Parse a size the way workloads do (fio suffixes k/m/g/t = powers of 1024,
/// or a percentage of `capacity_bytes`). `field` names it in errors.
#[pyfunction]
#[pyo3(signature = (text, capacity_bytes = 0, field = "size"))]
fn parse_size_bytes(text: &str, capacity_bytes: u64, field: &str) -> PyResult<u64> {
    parse_size(field, &Value::String(text.to_string()), capacity_bytes).map_err(sim_err)
}

/// Parse a duration the way workloads do (ns, us, ms, s, m, h; a bare number
/// is seconds). `field` names it in errors.
#[pyfunction]
#[pyo3(signature = (text, field = "runtime"))]
fn parse_duration_ns(text: &str, field: &str) -> PyResult<u64> {
    parse_time_ns(field, &Value::String(text.to_string())).map_err(sim_err)
}

/// Normalise a data-pattern name (`incompressible`, `repeated`, `compressible`,
/// `zeros`, `ratio:R`).
#[pyfunction]
fn parse_data_pattern(text: &str) -> PyResult<String> {
    DataPattern::parse(text).map(|p| p.to_string()).map_err(|m| sim_err(SimError::workload("data_pattern", m)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWorkload>()?;
    m.add_function(wrap_pyfunction!(parse_workload, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_data_pattern, m)?)?;
    Ok(())
}
