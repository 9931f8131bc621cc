//! Drives: a validated drive description as a value (`DriveConfig`, parsed
//! once and shared by everything that needs it: the canonical JSON, the hash,
//! the geometry, the simulators built from it), the document as written, where
//! each value comes from, and the shared parts library.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use ssdlab_sim::config::DEFAULT_MEMORY_LIMIT_BYTES;
use ssdlab_sim::library::{self, Kind};
use ssdlab_sim::DriveConfig;

use crate::convert::{to_py, to_value};
use crate::errors::sim_err;

/// A validated drive description (immutable).
#[pyclass(module = "ssdlab._core", name = "DriveConfig", frozen)]
pub struct PyDriveConfig {
    pub inner: DriveConfig,
    json: String,
    hash: String,
}

impl PyDriveConfig {
    fn new(inner: DriveConfig) -> PyDriveConfig {
        PyDriveConfig { json: inner.to_json_string(), hash: inner.hash_hex(), inner }
    }
}

#[pymethods]
impl PyDriveConfig {
    /// Parse and validate a drive description in TOML.
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<PyDriveConfig> {
        DriveConfig::from_toml_str(text).map(PyDriveConfig::new).map_err(sim_err)
    }

    /// Parse and validate a drive description in JSON.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<PyDriveConfig> {
        DriveConfig::from_json_str(text).map(PyDriveConfig::new).map_err(sim_err)
    }

    /// Canonical JSON (what the hash is computed from).
    #[getter]
    fn json(&self) -> &str {
        &self.json
    }

    /// Stable hash of the canonical JSON (16 hex digits).
    #[getter]
    fn hash(&self) -> &str {
        &self.hash
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.drive.id
    }

    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.inner.drive.user_capacity_bytes
    }

    /// Geometry derived from the description: dies, raw and user bytes, spare
    /// fraction, 4KB slots, blocks, and the simulator's memory estimates.
    #[getter]
    fn geometry<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        geometry_dict(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("DriveConfig({:?}, hash={:?})", self.inner.drive.id, self.hash)
    }
}

pub fn geometry_dict<'py>(py: Python<'py>, cfg: &DriveConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in cfg.geometry_fields() {
        d.set_item(k, to_py(py, &v)?)?;
    }
    Ok(d)
}

/// A TOML drive description as a dict, as written (not composed).
#[pyfunction]
fn drive_document<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &library::toml_document(text).map_err(sim_err)?)
}

/// Where each value of a drive document (a dict) comes from (dotted key ->
/// "part ID", "profile ID", "drive file", "drive file (over ...)", "derived:
/// ...", "default"), and the keys the document overrides:
/// `(provenance, overrides)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn drive_provenance(doc: &Bound<'_, PyAny>) -> PyResult<(Vec<(String, String)>, Vec<(String, String, String)>)> {
    DriveConfig::provenance(to_value(doc, "drive")?).map_err(sim_err)
}

/// The shared parts library: `(kind, id, name, text)` of every NAND part
/// (kind "part") and controller profile (kind "profile").
#[pyfunction]
fn library_entries() -> PyResult<Vec<(String, String, String, String)>> {
    let mut out = Vec::new();
    for (kind, label) in [(Kind::Controller, "profile"), (Kind::NandPart, "part")] {
        for e in library::entries(kind).map_err(sim_err)? {
            out.push((label.to_string(), e.id.clone(), e.name().to_string(), e.text.to_string()));
        }
    }
    Ok(out)
}

/// The engine's default memory limit in bytes.
#[pyfunction]
fn default_memory_limit_bytes() -> u64 {
    DEFAULT_MEMORY_LIMIT_BYTES
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDriveConfig>()?;
    m.add_function(wrap_pyfunction!(drive_document, m)?)?;
    m.add_function(wrap_pyfunction!(drive_provenance, m)?)?;
    m.add_function(wrap_pyfunction!(library_entries, m)?)?;
    m.add_function(wrap_pyfunction!(default_memory_limit_bytes, m)?)?;
    Ok(())
}
