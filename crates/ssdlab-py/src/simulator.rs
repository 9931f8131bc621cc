//! The simulator: a drive that keeps its state between phases. A whole phase
//! runs in the engine per call with the GIL released; it comes back as a dict
//! (fio-shaped JSON) and numpy arrays of its per-interval series.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ssdlab_sim::config::DEFAULT_MEMORY_LIMIT_BYTES;
use ssdlab_sim::{PhaseResult, Progress, SimOptions};

use crate::convert::{to_py, to_value};
use crate::drive::{geometry_dict, PyDriveConfig};
use crate::errors::sim_err;
use crate::workload::PyWorkload;

type Series<'py> = Bound<'py, PyDict>;
type PhaseOut<'py> = (Bound<'py, PyAny>, Series<'py>);

fn phase_out<'py>(py: Python<'py>, r: &PhaseResult) -> PyResult<PhaseOut<'py>> {
    let d = PyDict::new(py);
    for (name, col) in r.series() {
        d.set_item(name, PyArray1::<u64>::from_vec(py, col))?;
    }
    // The latency histograms' non-empty buckets, beside the series (fio's
    // json+ bins, stddev and latency buckets are drawn from them).
    let st = &r.stats;
    d.set_item("lat_mean_ns", PyArray1::<u64>::from_vec(py, st.intervals.iter().map(|x| x.lat_mean_ns).collect()))?;
    for (dir, h) in [("read", &st.read.lat), ("write", &st.write.lat), ("trim", &st.trim.lat), ("sync", &st.sync.lat)] {
        let (mut lo, mut width, mut count) = (Vec::new(), Vec::new(), Vec::new());
        for (l, w, c) in h.buckets() {
            lo.push(l);
            width.push(w);
            count.push(c);
        }
        d.set_item(format!("{dir}_hist_lo_ns"), PyArray1::<u64>::from_vec(py, lo))?;
        d.set_item(format!("{dir}_hist_width_ns"), PyArray1::<u64>::from_vec(py, width))?;
        d.set_item(format!("{dir}_hist_count"), PyArray1::<u64>::from_vec(py, count))?;
    }
    Ok((to_py(py, &r.to_json())?, d))
}

/// The progress closure of a phase: with the GIL taken back, check for
/// signals (Ctrl-C) and call the user's callback. Returns false to stop the
/// phase, keeping the exception in `pending` to raise once the engine returns.
fn progress_callback(progress: &Option<PyObject>, pending: &mut Option<PyErr>, p: Progress) -> bool {
    Python::with_gil(|py| {
        if let Err(e) = py.check_signals() {
            *pending = Some(e);
            return false;
        }
        if let Some(f) = progress {
            match f.call1(py, (p.done_ns, p.total_ns, p.done_bytes, p.total_bytes)) {
                Err(e) => {
                    *pending = Some(e);
                    return false;
                }
                Ok(v) => {
                    // Only an explicit False stops the phase.
                    if let Ok(false) = v.extract::<bool>(py) {
                        return false;
                    }
                }
            }
        }
        true
    })
}

/// Attach what finished to an exception raised by a progress callback (e.g.
/// KeyboardInterrupt from Ctrl-C) as `partial_result = (result, series)`.
fn attach_partial(py: Python<'_>, err: PyErr, partial: PhaseOut<'_>) -> PyErr {
    if let Ok(t) = PyTuple::new(py, [partial.0, partial.1.into_any()]) {
        let _ = err.value(py).setattr("partial_result", t);
    }
    err
}

/// The phase's output, or the pending exception with it attached.
fn finish<'py>(py: Python<'py>, r: &PhaseResult, pending: Option<PyErr>) -> PyResult<PhaseOut<'py>> {
    let out = phase_out(py, r)?;
    match pending {
        Some(e) => Err(attach_partial(py, e, out)),
        None => Ok(out),
    }
}

/// A simulated drive that keeps its state between phases.
#[pyclass(module = "ssdlab._core", name = "Simulator")]
pub struct PySimulator {
    inner: ssdlab_sim::Simulator,
    drive: Py<PyDriveConfig>,
    memory_limit_bytes: u64,
}

impl PySimulator {
    fn duplicate(&self, py: Python<'_>) -> PySimulator {
        PySimulator { inner: self.inner.clone(), drive: self.drive.clone_ref(py), memory_limit_bytes: self.memory_limit_bytes }
    }
}

#[pymethods]
impl PySimulator {
    #[new]
    #[pyo3(signature = (drive, seed = 1, check = false, memory_limit_bytes = None))]
    fn new(drive: Py<PyDriveConfig>, seed: u64, check: bool, memory_limit_bytes: Option<u64>) -> PyResult<Self> {
        let limit = memory_limit_bytes.unwrap_or(DEFAULT_MEMORY_LIMIT_BYTES);
        let opts = SimOptions { seed, check, memory_limit_bytes: limit };
        let inner = ssdlab_sim::Simulator::new(drive.get().inner.clone(), &opts).map_err(sim_err)?;
        Ok(PySimulator { inner, drive, memory_limit_bytes: limit })
    }

    /// Run one closed-loop workload (parsed by `parse_workload`). The GIL is
    /// released while the engine runs; about once per interval of simulated
    /// time the binding takes it back to check for signals (Ctrl-C) and to
    /// call `progress(done_ns, total_ns, done_bytes, total_bytes)`.
    /// `progress` returning False stops the phase early: the result is marked
    /// interrupted and holds what finished. An exception raised by `progress`
    /// or by a signal handler (KeyboardInterrupt) also stops it, and is raised
    /// with the finished part attached as `partial_result`.
    #[pyo3(signature = (workload, progress = None))]
    fn run<'py>(&mut self, py: Python<'py>, workload: &PyWorkload, progress: Option<PyObject>) -> PyResult<PhaseOut<'py>> {
        let w = &workload.inner;
        let inner = &mut self.inner;
        let (res, pending) = py.allow_threads(move || {
            let mut pending: Option<PyErr> = None;
            let mut cb = |p: Progress| progress_callback(&progress, &mut pending, p);
            let res = inner.run(w, &mut cb);
            (res, pending)
        });
        finish(py, &res.map_err(sim_err)?, pending)
    }

    /// Run closed-loop workloads at the same time, one submitter each,
    /// sharing the drive (its NCQ tags first come first served): one result
    /// per workload, in order. Interruption stops all of them; a partial
    /// result is not attached (the phase is cut as a whole).
    #[pyo3(signature = (workloads, progress = None))]
    fn run_jobs<'py>(
        &mut self,
        py: Python<'py>,
        workloads: Vec<PyRef<'py, PyWorkload>>,
        progress: Option<PyObject>,
    ) -> PyResult<Vec<PhaseOut<'py>>> {
        let ws: Vec<ssdlab_sim::Workload> = workloads.iter().map(|w| w.inner.clone()).collect();
        let inner = &mut self.inner;
        let (res, pending) = py.allow_threads(move || {
            let mut pending: Option<PyErr> = None;
            let mut cb = |p: Progress| progress_callback(&progress, &mut pending, p);
            let res = inner.run_jobs(&ws, &mut cb);
            (res, pending)
        });
        let results = res.map_err(sim_err)?;
        if let Some(e) = pending {
            return Err(e);
        }
        results.iter().map(|r| phase_out(py, r)).collect()
    }

    /// Replay a trace against the drive (Storage Bench playback). `source`:
    /// `{"file": PATH, ...import options}` (the capacity defaults to the
    /// drive's) or `{"generated": ID, "seed": N}`; `options`: `name`, `mode`
    /// (`as-recorded` | `as-fast-as-possible`), `iodepth` (for records
    /// without one), `idle_cap` or `idle_cap_ns` (longer gaps are shortened
    /// to it), `log_avg_msec`, `number_ios`, `runtime` or `runtime_ns`,
    /// `lay_down_reads` (write first what the trace reads before writing it);
    /// both parsed by the engine. Returns the phase with `storage_bench` (data
    /// rates over busy time), `source` and, for a file, `import`. Progress and
    /// Ctrl-C as `run`.
    #[pyo3(signature = (source, options = None, progress = None))]
    fn replay<'py>(
        &mut self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyAny>>,
        progress: Option<PyObject>,
    ) -> PyResult<PhaseOut<'py>> {
        let opts = match options {
            Some(o) => to_value(o, "options")?,
            None => serde_json::Value::Object(Default::default()),
        };
        let src = to_value(source, "source")?;
        let inner = &mut self.inner;
        let (res, pending) = py.allow_threads(move || {
            let mut pending: Option<PyErr> = None;
            let mut cb = |p: Progress| progress_callback(&progress, &mut pending, p);
            let res = inner.replay_from_json(&src, &opts, &mut cb);
            (res, pending)
        });
        finish(py, &res.map_err(sim_err)?, pending)
    }

    /// The drive sits idle for `duration_ns`; background GC may use the time.
    fn idle<'py>(&mut self, py: Python<'py>, duration_ns: u64) -> PyResult<PhaseOut<'py>> {
        let inner = &mut self.inner;
        let r = py.allow_threads(move || inner.idle(duration_ns)).map_err(sim_err)?;
        phase_out(py, &r)
    }

    /// TRIM a byte range (the rest of the drive from `offset_bytes` when
    /// `length_bytes` is None).
    #[pyo3(signature = (offset_bytes = 0, length_bytes = None))]
    fn trim<'py>(&mut self, py: Python<'py>, offset_bytes: u64, length_bytes: Option<u64>) -> PyResult<PhaseOut<'py>> {
        let inner = &mut self.inner;
        let r = py.allow_threads(move || inner.trim(offset_bytes, length_bytes)).map_err(sim_err)?;
        phase_out(py, &r)
    }

    /// ATA secure erase: every block erased, mapping empty.
    fn secure_erase<'py>(&mut self, py: Python<'py>) -> PyResult<PhaseOut<'py>> {
        let inner = &mut self.inner;
        let r = py.allow_threads(move || inner.secure_erase()).map_err(sim_err)?;
        phase_out(py, &r)
    }

    /// Program partly filled units now (FLUSH CACHE).
    fn flush(&mut self) {
        self.inner.flush();
    }

    /// Verify the FTL against the shadow model (checking mode) and the
    /// structural invariants; raises IntegrityError.
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        let inner = &self.inner;
        py.allow_threads(move || inner.check_now()).map_err(sim_err)
    }

    /// An independent copy of the drive in its current state.
    fn clone(&self, py: Python<'_>) -> PySimulator {
        self.duplicate(py)
    }

    fn __copy__(&self, py: Python<'_>) -> PySimulator {
        self.duplicate(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PySimulator {
        self.duplicate(py)
    }

    /// SMART-like figures (wear, lifetime writes).
    fn smart<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.smart())
    }

    /// Simulated time, ns.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }

    #[getter]
    fn checking(&self) -> bool {
        self.inner.check
    }

    #[getter]
    fn memory_limit_bytes(&self) -> u64 {
        self.memory_limit_bytes
    }

    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.inner.capacity_bytes()
    }

    /// Bytes of RAM the simulated drive's tables use now.
    #[getter]
    fn memory_in_use_bytes(&self) -> u64 {
        self.inner.memory_in_use_bytes()
    }

    /// The drive description it was built from.
    #[getter]
    fn drive(&self, py: Python<'_>) -> Py<PyDriveConfig> {
        self.drive.clone_ref(py)
    }

    #[getter]
    fn geometry<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        geometry_dict(py, &self.inner.cfg)
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulator(drive={:?}, seed={}, check={}, now_ns={})",
            self.inner.cfg.drive.id, self.inner.seed, self.inner.check, self.inner.now_ns
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulator>()
}
