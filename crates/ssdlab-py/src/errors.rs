//! Errors: every engine error kind becomes its own Python exception class (all
//! subclasses of `SsdlabError`, itself a `ValueError`), keeping the engine's
//! wording and carrying what it names as attributes (`field`; `file`, `line`;
//! `needed_bytes`, `limit_bytes`).

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::BoundObject;

use ssdlab_sim::trace::TraceError as SimTraceError;
use ssdlab_sim::SimError;

create_exception!(ssdlab._core, SsdlabError, PyValueError, "Base class of every ssdlab error.");
create_exception!(ssdlab._core, ConfigError, SsdlabError, "A drive description is wrong; `.field` names the field.");
create_exception!(ssdlab._core, WorkloadError, SsdlabError, "A workload or phase is wrong; `.field` names the field.");
create_exception!(
    ssdlab._core,
    MemoryLimitError,
    SsdlabError,
    "Simulating the drive would need more RAM than the limit; `.needed_bytes`, `.limit_bytes`."
);
create_exception!(
    ssdlab._core,
    IntegrityError,
    SsdlabError,
    "The checking mode found lost, stale or mixed-up data, or a broken invariant."
);
create_exception!(
    ssdlab._core,
    TraceError,
    SsdlabError,
    "A trace could not be read; `.file`, `.line` (0 if not about one line) and `.field`."
);
create_exception!(ssdlab._core, DriveError, SsdlabError, "The simulated drive cannot do what was asked.");

/// Set attributes on a fresh exception instance (best effort: an attribute
/// that cannot be set leaves the message intact).
fn with_attrs<'py>(py: Python<'py>, err: PyErr, attrs: Vec<(&str, Bound<'py, PyAny>)>) -> PyErr {
    let value = err.value(py);
    for (k, v) in attrs {
        let _ = value.setattr(k, v);
    }
    err
}

fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Bound<'py, PyAny> {
    match v.into_pyobject(py) {
        Ok(b) => b.into_any().into_bound(),
        Err(_) => py.None().into_bound(py),
    }
}

/// The Python exception of an engine error.
pub fn sim_err(e: SimError) -> PyErr {
    let msg = e.to_string();
    Python::with_gil(|py| match e {
        SimError::Config { field, .. } => with_attrs(py, ConfigError::new_err(msg), vec![("field", obj(py, field))]),
        SimError::Workload { field, .. } => with_attrs(py, WorkloadError::new_err(msg), vec![("field", obj(py, field))]),
        SimError::Memory { needed_bytes, limit_bytes, .. } => with_attrs(
            py,
            MemoryLimitError::new_err(msg),
            vec![("needed_bytes", obj(py, needed_bytes)), ("limit_bytes", obj(py, limit_bytes))],
        ),
        SimError::Allocation { needed_bytes, limit_bytes, .. } => with_attrs(
            py,
            MemoryLimitError::new_err(msg),
            vec![("needed_bytes", obj(py, needed_bytes)), ("limit_bytes", obj(py, limit_bytes))],
        ),
        SimError::Integrity { .. } => IntegrityError::new_err(msg),
        SimError::Trace(t) => trace_err(py, t),
        SimError::Drive { .. } => DriveError::new_err(msg),
    })
}

fn trace_err(py: Python<'_>, t: SimTraceError) -> PyErr {
    let msg = t.to_string();
    with_attrs(py, TraceError::new_err(msg), vec![("file", obj(py, t.file)), ("line", obj(py, t.line)), ("field", obj(py, t.field))])
}

/// Register the exception classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SsdlabError", py.get_type::<SsdlabError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("MemoryLimitError", py.get_type::<MemoryLimitError>())?;
    m.add("IntegrityError", py.get_type::<IntegrityError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("DriveError", py.get_type::<DriveError>())?;
    Ok(())
}
