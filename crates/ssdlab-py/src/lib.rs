//! Thin PyO3 binding of ssdlab-sim, imported as `ssdlab._core`.
//!
//! Configuration crosses the boundary as plain data (JSON text) that the engine
//! validates; a whole phase runs inside Rust per call and comes back as JSON plus
//! numpy arrays. Every engine error kind becomes its own Python exception class
//! (all subclasses of `SsdlabError`, itself a `ValueError`), keeping the engine's
//! wording and carrying the field it names as attributes.
//!
//! The layers, in the order data flows (one section each below):
//! 1. errors: `SimError` -> typed Python exceptions;
//! 2. drives: `validate_drive_toml`, `validate_drive_json`, `drive_geometry`,
//!    `drive_provenance`, `library_entries` (the parts library);
//! 3. workloads: `parse_workload`, `parse_size_bytes`, `parse_duration_ns`;
//! 4. the simulator: `Simulator` (phases, state, clone, checking mode);
//! 5. traces: `trace_stats`, `generated_trace_stats`, `published_stats`,
//!    `write_generated_trace`, `storage_bench_workloads`.

use std::io::Write;
use std::path::Path;

use numpy::PyArray1;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::{json, Value};

use ssdlab_sim::config::{memory_estimate_bytes, DEFAULT_MEMORY_LIMIT_BYTES, UNIT_BYTES};
use ssdlab_sim::engine::Progress;
use ssdlab_sim::host::{parse_size, parse_time_ns};
use ssdlab_sim::trace::generate as tgen;
use ssdlab_sim::trace::import as timport;
use ssdlab_sim::trace::stats::{TraceStats, TraceStatsBuilder};
use ssdlab_sim::trace::{TraceOp, TraceRecord};
use ssdlab_sim::{DataPattern, DriveConfig, PhaseResult, ReplayMode, ReplayOptions, SimError, SimOptions, Workload};

// ---------------------------------------------------------------------------
// 1. Errors
// ---------------------------------------------------------------------------

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
fn with_attrs(py: Python<'_>, err: PyErr, attrs: &[(&str, PyObject)]) -> PyErr {
    let value = err.value(py);
    for (k, v) in attrs {
        let _ = value.setattr(*k, v);
    }
    err
}

fn sim_err(e: SimError) -> PyErr {
    let msg = e.to_string();
    Python::with_gil(|py| match e {
        SimError::Config { field, .. } => {
            with_attrs(py, ConfigError::new_err(msg), &[("field", field.into_pyobject(py).unwrap().into_any().unbind())])
        }
        SimError::Workload { field, .. } => {
            with_attrs(py, WorkloadError::new_err(msg), &[("field", field.into_pyobject(py).unwrap().into_any().unbind())])
        }
        SimError::Memory { needed_bytes, limit_bytes, .. } => with_attrs(
            py,
            MemoryLimitError::new_err(msg),
            &[
                ("needed_bytes", needed_bytes.into_pyobject(py).unwrap().into_any().unbind()),
                ("limit_bytes", limit_bytes.into_pyobject(py).unwrap().into_any().unbind()),
            ],
        ),
        SimError::Integrity { .. } => IntegrityError::new_err(msg),
        SimError::Trace(t) => trace_err_py(py, t),
        SimError::Drive { .. } => DriveError::new_err(msg),
    })
}

fn trace_err_py(py: Python<'_>, t: ssdlab_sim::trace::TraceError) -> PyErr {
    let msg = t.to_string();
    with_attrs(
        py,
        TraceError::new_err(msg),
        &[
            ("file", t.file.into_pyobject(py).unwrap().into_any().unbind()),
            ("line", t.line.into_pyobject(py).unwrap().into_any().unbind()),
            ("field", t.field.into_pyobject(py).unwrap().into_any().unbind()),
        ],
    )
}

fn trace_err(t: ssdlab_sim::trace::TraceError) -> PyErr {
    Python::with_gil(|py| trace_err_py(py, t))
}

fn workload_err(field: &str, msg: impl Into<String>) -> PyErr {
    sim_err(SimError::workload(field, msg))
}

fn parse_json(what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what} is not valid JSON: {e}")))
}

// ---------------------------------------------------------------------------
// 2. Drives
// ---------------------------------------------------------------------------

/// Parse and validate a drive description in TOML; returns its canonical JSON.
#[pyfunction]
fn validate_drive_toml(text: &str) -> PyResult<String> {
    DriveConfig::from_toml_str(text).map(|c| c.to_json_string()).map_err(sim_err)
}

/// Parse and validate a drive description in JSON; returns its canonical JSON.
#[pyfunction]
fn validate_drive_json(text: &str) -> PyResult<String> {
    DriveConfig::from_json_str(text).map(|c| c.to_json_string()).map_err(sim_err)
}

/// Where each value of a drive description comes from (dotted key -> "part
/// ID", "profile ID", "drive file", "drive file (over ...)", "derived: ...",
/// "default"), and the keys the file overrides: `(provenance, overrides)`.
#[pyfunction]
fn drive_provenance(text: &str, is_json: bool) -> PyResult<(Vec<(String, String)>, Vec<(String, String, String)>)> {
    use ssdlab_sim::library;
    let doc: Value = if is_json {
        serde_json::from_str(text).map_err(|e| sim_err(SimError::config("(top level)", e.to_string())))?
    } else {
        let t: toml::Value = toml::from_str(text).map_err(|e| sim_err(SimError::config("(top level)", e.to_string())))?;
        serde_json::to_value(t).map_err(|e| sim_err(SimError::config("(top level)", e.to_string())))?
    };
    let c = library::compose(doc).map_err(sim_err)?;
    let cfg = DriveConfig::from_composed(c.clone()).map_err(sim_err)?;
    let full: Value = serde_json::from_str(&cfg.to_json_string()).expect("canonical JSON");
    let mut out = Vec::new();
    for (section, fields) in full.as_object().into_iter().flatten() {
        for (k, _) in fields.as_object().into_iter().flatten() {
            let key = format!("{section}.{k}");
            let from = match c.provenance.get(&key) {
                Some(f) => f.clone(),
                None if section == "host" && (k == "link_bytes_per_s" || k == "command_overhead_ns") => "derived: host.interface".into(),
                None => "default".into(),
            };
            out.push((key, from));
        }
    }
    let overrides = c.overrides.iter().map(|(k, v, from)| (k.clone(), v.to_string(), from.clone())).collect();
    Ok((out, overrides))
}

/// A TOML drive description as JSON text, as written (not composed).
#[pyfunction]
fn drive_document_json(text: &str) -> PyResult<String> {
    let t: toml::Value = toml::from_str(text).map_err(|e| sim_err(SimError::config("(top level)", e.to_string())))?;
    Ok(serde_json::to_string(&t).expect("TOML values serialise"))
}

/// The shared parts library: `(kind, id, name, text)` of every NAND part
/// (kind "part") and controller profile (kind "profile").
#[pyfunction]
fn library_entries() -> PyResult<Vec<(String, String, String, String)>> {
    use ssdlab_sim::library::{entries, Kind};
    let mut out = Vec::new();
    for (kind, label) in [(Kind::Controller, "profile"), (Kind::NandPart, "part")] {
        for e in entries(kind).map_err(sim_err)? {
            out.push((label.to_string(), e.id.clone(), e.name().to_string(), e.text.to_string()));
        }
    }
    Ok(out)
}

/// The stable hash of a drive description (16 hex digits of its canonical JSON).
#[pyfunction]
fn drive_hash(drive_json: &str) -> PyResult<String> {
    DriveConfig::from_json_str(drive_json).map(|c| c.hash_hex()).map_err(sim_err)
}

fn geometry_dict<'py>(py: Python<'py>, cfg: &DriveConfig) -> PyResult<Bound<'py, PyDict>> {
    let g = cfg.geometry();
    let d = PyDict::new(py);
    d.set_item("channels", g.channels)?;
    d.set_item("dies", g.dies)?;
    d.set_item("dies_total", g.dies_total)?;
    d.set_item("reserved_dies", cfg.nand.reserved_dies)?;
    d.set_item("planes_per_die", g.planes_per_die)?;
    d.set_item("pages_per_block", g.pages_per_block)?;
    d.set_item("page_size_bytes", cfg.nand.page_size_bytes)?;
    d.set_item("slots_per_page", g.slots_per_page)?;
    d.set_item("unit_slots", g.unit_slots)?;
    d.set_item("slots_per_block", g.slots_per_block)?;
    d.set_item("block_bytes", g.slots_per_block as u64 * UNIT_BYTES)?;
    d.set_item("blocks_per_die", g.blocks_per_die)?;
    d.set_item("total_blocks", g.total_blocks())?;
    d.set_item("raw_slots", g.raw_slots)?;
    d.set_item("user_units", g.user_units)?;
    d.set_item("spare_slots", g.spare_slots)?;
    d.set_item("raw_bytes", g.raw_bytes())?;
    d.set_item("user_bytes", cfg.drive.user_capacity_bytes)?;
    d.set_item("spare_bytes", g.spare_slots * UNIT_BYTES)?;
    d.set_item("spare_fraction", g.spare_fraction())?;
    d.set_item("memory_estimate_bytes", memory_estimate_bytes(&g, false))?;
    d.set_item("memory_estimate_check_bytes", memory_estimate_bytes(&g, true))?;
    Ok(d)
}

/// Geometry derived from a drive description (JSON): dies, raw and user bytes,
/// spare fraction, 4KB slots, blocks, and the simulator's memory estimate.
#[pyfunction]
fn drive_geometry<'py>(py: Python<'py>, drive_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = DriveConfig::from_json_str(drive_json).map_err(sim_err)?;
    geometry_dict(py, &cfg)
}

/// The engine's default memory limit in bytes.
#[pyfunction]
fn default_memory_limit_bytes() -> u64 {
    DEFAULT_MEMORY_LIMIT_BYTES
}

// ---------------------------------------------------------------------------
// 3. Workloads
// ---------------------------------------------------------------------------

fn workload_json(w: &Workload) -> Value {
    json!({
        "name": w.name,
        "rw": w.rw.name(),
        "sizes": w.sizes.iter().map(|(b, wt)| json!({"bytes": b, "weight": wt})).collect::<Vec<_>>(),
        "blockalign_bytes": w.blockalign_bytes,
        "offset_bytes": w.offset_bytes,
        "size_bytes": w.size_bytes,
        "io_limit_bytes": w.io_limit_bytes,
        "number_ios": w.number_ios,
        "runtime_ns": w.runtime_ns,
        "iodepth": w.iodepth,
        "rwmixread_percent": w.rwmixread_percent,
        "data_pattern": w.pattern.to_string(),
        "interval_ns": w.interval_ns,
        "randseed": w.randseed,
    })
}

fn workload_from(text: &str, capacity_bytes: u64) -> PyResult<Workload> {
    let v = parse_json("the workload", text)?;
    Workload::from_json(&v, capacity_bytes).map_err(sim_err)
}

/// Validate fio-style workload keys (JSON object) against a drive capacity;
/// returns the normalised workload (every size in bytes, every time in ns).
#[pyfunction]
fn parse_workload(workload_json_text: &str, capacity_bytes: u64) -> PyResult<String> {
    let w = workload_from(workload_json_text, capacity_bytes)?;
    Ok(workload_json(&w).to_string())
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
    DataPattern::parse(text).map(|p| p.to_string()).map_err(|m| workload_err("data", m))
}

// ---------------------------------------------------------------------------
// 4. The simulator
// ---------------------------------------------------------------------------

type Series<'py> = Bound<'py, PyDict>;

fn phase_out<'py>(py: Python<'py>, r: &PhaseResult) -> PyResult<(String, Series<'py>)> {
    let d = PyDict::new(py);
    for (name, col) in r.series() {
        d.set_item(name, PyArray1::<u64>::from_vec(py, col))?;
    }
    Ok((r.to_json().to_string(), d))
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

fn replay_options(text: &str) -> PyResult<ReplayOptions> {
    let v = parse_json("the replay options", text)?;
    let o = v.as_object().ok_or_else(|| workload_err("(options)", "replay options are a JSON object"))?;
    const KEYS: &[&str] = &["name", "mode", "queue_depth", "idle_cap", "log_avg_msec", "number_ios", "runtime"];
    for k in o.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(workload_err(k, format!("unknown replay option; allowed: {}", KEYS.join(", "))));
        }
    }
    let mut opts = ReplayOptions::default();
    if let Some(n) = opt_str(o, "name") {
        opts.name = n.as_str().map(str::to_string).unwrap_or_else(|| n.to_string());
    }
    if let Some(m) = opt_str(o, "mode") {
        opts.mode = match m.as_str().unwrap_or("").to_ascii_lowercase().as_str() {
            "as-recorded" | "recorded" => ReplayMode::AsRecorded,
            "as-fast-as-possible" | "fast" => ReplayMode::AsFastAsPossible,
            other => {
                return Err(workload_err("mode", format!("'{other}' is not allowed; use as-recorded or as-fast-as-possible")))
            }
        };
    }
    if let Some(q) = opt_str(o, "queue_depth") {
        let q = q.as_u64().filter(|q| (1..=256).contains(q)).ok_or_else(|| workload_err("queue_depth", format!("{q}: must be 1..=256")))?;
        opts.queue_depth = q as u32;
    }
    if let Some(c) = opt_str(o, "idle_cap") {
        opts.idle_cap_ns = Some(parse_time_ns("idle_cap", c).map_err(sim_err)?);
    }
    if let Some(n) = opt_str(o, "number_ios") {
        opts.max_records = n
            .as_u64()
            .filter(|x| *x > 0)
            .ok_or_else(|| workload_err("number_ios", format!("{n}: must be a whole number of records >= 1")))?;
    }
    if let Some(r) = opt_str(o, "runtime") {
        let ns = parse_time_ns("runtime", r).map_err(sim_err)?;
        if ns == 0 {
            return Err(workload_err("runtime", "must be longer than 0"));
        }
        opts.max_trace_ns = Some(ns);
    }
    if let Some(l) = opt_str(o, "log_avg_msec") {
        let ms = l.as_u64().filter(|x| *x > 0).ok_or_else(|| workload_err("log_avg_msec", format!("{l}: must be a whole number of ms >= 1")))?;
        opts.interval_ns = ms * 1_000_000;
    }
    Ok(opts)
}

/// A simulated drive that keeps its state between phases.
#[pyclass(module = "ssdlab._core", name = "Simulator")]
struct PySimulator {
    inner: ssdlab_sim::Simulator,
    drive_json: String,
    drive_hash: String,
    memory_limit_bytes: u64,
}

impl PySimulator {
    fn duplicate(&self) -> PySimulator {
        PySimulator {
            inner: self.inner.clone(),
            drive_json: self.drive_json.clone(),
            drive_hash: self.drive_hash.clone(),
            memory_limit_bytes: self.memory_limit_bytes,
        }
    }
}

/// Attach what finished to an exception raised by a progress callback (e.g.
/// KeyboardInterrupt from Ctrl-C) as `partial_result = (result_json, series)`.
fn attach_partial(py: Python<'_>, err: PyErr, partial: (String, Series<'_>)) -> PyErr {
    let tuple = PyTuple::new(py, [partial.0.into_pyobject(py).unwrap().into_any(), partial.1.into_any()]);
    if let Ok(t) = tuple {
        let _ = err.value(py).setattr("partial_result", t);
    }
    err
}

#[pymethods]
impl PySimulator {
    #[new]
    #[pyo3(signature = (drive_json, seed = 1, check = false, memory_limit_bytes = None))]
    fn new(drive_json: &str, seed: u64, check: bool, memory_limit_bytes: Option<u64>) -> PyResult<Self> {
        let cfg = DriveConfig::from_json_str(drive_json).map_err(sim_err)?;
        let limit = memory_limit_bytes.unwrap_or(DEFAULT_MEMORY_LIMIT_BYTES);
        let canonical = cfg.to_json_string();
        let hash = cfg.hash_hex();
        let opts = SimOptions { seed, check, memory_limit_bytes: limit };
        let inner = ssdlab_sim::Simulator::new(cfg, &opts).map_err(sim_err)?;
        Ok(PySimulator { inner, drive_json: canonical, drive_hash: hash, memory_limit_bytes: limit })
    }

    /// Run one closed-loop workload (fio-style keys as a JSON object). The GIL
    /// is released while the engine runs; about once per interval of
    /// simulated time the binding takes it back to check for signals (Ctrl-C)
    /// and to call `progress(done_ns, total_ns, done_bytes, total_bytes)`.
    /// `progress` returning False stops the phase early: the result is marked
    /// interrupted and holds what finished. An exception raised by `progress`
    /// or by a signal handler (KeyboardInterrupt) also stops it, and is raised
    /// with the finished part attached as `partial_result`.
    #[pyo3(signature = (workload_json, progress = None))]
    fn run<'py>(
        &mut self,
        py: Python<'py>,
        workload_json: &str,
        progress: Option<PyObject>,
    ) -> PyResult<(String, Series<'py>)> {
        let w = workload_from(workload_json, self.inner.capacity_bytes())?;
        let inner = &mut self.inner;
        let (res, pending) = py.allow_threads(move || {
            let mut pending: Option<PyErr> = None;
            let mut cb = |p: Progress| progress_callback(&progress, &mut pending, p);
            let res = inner.run(&w, &mut cb);
            (res, pending)
        });
        let r = res.map_err(sim_err)?;
        let out = phase_out(py, &r)?;
        match pending {
            Some(e) => Err(attach_partial(py, e, out)),
            None => Ok(out),
        }
    }

    /// Replay a trace against the drive (Storage Bench playback).
    /// `source_json`: `{"file": PATH, ...trace options of trace_stats}` (the
    /// capacity defaults to the drive's) or `{"generated": WORKLOAD_ID,
    /// "seed": N}`. `options_json`: `name`, `mode` (`as-recorded` |
    /// `as-fast-as-possible`), `queue_depth` (for records without one),
    /// `idle_cap` (a duration: longer gaps are shortened to it),
    /// `log_avg_msec`, `number_ios` (replay at most this many records) and
    /// `runtime` (only the first this-much trace time). Returns the phase JSON with `storage_bench` (data rates
    /// over busy time) and, for a file, `import`. Progress and Ctrl-C as `run`.
    #[pyo3(signature = (source_json, options_json = "{}", progress = None))]
    fn replay<'py>(
        &mut self,
        py: Python<'py>,
        source_json: &str,
        options_json: &str,
        progress: Option<PyObject>,
    ) -> PyResult<(String, Series<'py>)> {
        let opts = replay_options(options_json)?;
        let src = parse_json("the trace source", source_json)?;
        let so = src.as_object().ok_or_else(|| workload_err("(source)", "a trace source is a JSON object"))?;
        let cap = self.inner.capacity_bytes();
        let mut records: ReplaySource =
            match (opt_str(so, "file"), opt_str(so, "generated")) {
                (Some(f), None) => {
                    let path = f.as_str().ok_or_else(|| workload_err("file", "expected a path"))?.to_string();
                    let mut keys: Vec<&str> = TRACE_OPTION_KEYS.iter().copied().filter(|k| *k != "compare_with").collect();
                    keys.push("file");
                    let iopts = import_options(so, &keys, Some(cap))?;
                    ReplaySource::File(Box::new(timport::open(Path::new(&path), &iopts).map_err(trace_err)?))
                }
                (None, Some(g)) => {
                    for k in so.keys() {
                        if !["generated", "seed"].contains(&k.as_str()) {
                            return Err(workload_err(k, "unknown key for a generated trace; allowed: generated, seed"));
                        }
                    }
                    let seed = opt_str(so, "seed").map(|v| v.as_u64().ok_or_else(|| workload_err("seed", "expected a whole number"))).transpose()?;
                    let (_, gen) = generator(g.as_str().unwrap_or(""), cap, seed.unwrap_or(self.inner.seed))?;
                    ReplaySource::Generated(Box::new(gen))
                }
                _ => return Err(workload_err("(source)", "give exactly one of 'file' or 'generated'")),
            };
        let inner = &mut self.inner;
        let (res, pending, records) = py.allow_threads(move || {
            let mut pending: Option<PyErr> = None;
            let mut cb = |p: Progress| progress_callback(&progress, &mut pending, p);
            let res = inner.replay(&mut records, &opts, &mut cb);
            (res, pending, records)
        });
        let r = res.map_err(sim_err)?;
        let mut v = r.to_json();
        v["storage_bench"] = r.storage_bench_json();
        v["source"] = src.clone();
        if let ReplaySource::File(reader) = &records {
            v["import"] = report_json(reader.report());
        }
        let d = PyDict::new(py);
        for (name, col) in r.series() {
            d.set_item(name, PyArray1::<u64>::from_vec(py, col))?;
        }
        let out = (v.to_string(), d);
        match pending {
            Some(e) => Err(attach_partial(py, e, out)),
            None => Ok(out),
        }
    }

    /// The drive sits idle for `duration_ns`; background GC may use the time.
    fn idle<'py>(&mut self, py: Python<'py>, duration_ns: u64) -> PyResult<(String, Series<'py>)> {
        let inner = &mut self.inner;
        let r = py.allow_threads(move || inner.idle(duration_ns)).map_err(sim_err)?;
        phase_out(py, &r)
    }

    /// TRIM a byte range (the rest of the drive from `offset_bytes` when
    /// `length_bytes` is None).
    #[pyo3(signature = (offset_bytes = 0, length_bytes = None))]
    fn trim<'py>(
        &mut self,
        py: Python<'py>,
        offset_bytes: u64,
        length_bytes: Option<u64>,
    ) -> PyResult<(String, Series<'py>)> {
        let cap = self.inner.capacity_bytes();
        if offset_bytes > cap {
            return Err(workload_err("trim", format!("offset {offset_bytes} is past the drive's {cap} B")));
        }
        let inner = &mut self.inner;
        let r = py.allow_threads(move || inner.trim(offset_bytes, length_bytes)).map_err(sim_err)?;
        phase_out(py, &r)
    }

    /// ATA secure erase: every block erased, mapping empty.
    fn secure_erase<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Series<'py>)> {
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
    fn clone(&self) -> PySimulator {
        self.duplicate()
    }

    fn __copy__(&self) -> PySimulator {
        self.duplicate()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PySimulator {
        self.duplicate()
    }

    /// SMART-like figures (wear, lifetime writes) as JSON.
    fn smart(&self) -> String {
        self.inner.smart().to_string()
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

    /// Canonical JSON of the drive description.
    #[getter]
    fn drive_json(&self) -> String {
        self.drive_json.clone()
    }

    #[getter]
    fn drive_hash(&self) -> String {
        self.drive_hash.clone()
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

// ---------------------------------------------------------------------------
// 5. Traces
// ---------------------------------------------------------------------------

/// Where a replay's records come from.
enum ReplaySource {
    File(Box<timport::TraceReader>),
    Generated(Box<tgen::Generator>),
}

impl Iterator for ReplaySource {
    type Item = Result<TraceRecord, ssdlab_sim::trace::TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            ReplaySource::File(r) => r.next(),
            ReplaySource::Generated(g) => g.next().map(Ok),
        }
    }
}

/// Records between two signal checks while streaming a trace.
const SIGNAL_CHECK_RECORDS: u64 = 1 << 18;

fn opt_str<'a>(o: &'a serde_json::Map<String, Value>, k: &str) -> Option<&'a Value> {
    o.get(k).filter(|v| !v.is_null())
}

fn json_u64(field: &str, v: &Value, capacity_bytes: u64) -> PyResult<u64> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| workload_err(field, format!("{n} is not a whole number of bytes"))),
        other => parse_size(field, other, capacity_bytes).map_err(sim_err),
    }
}

const TRACE_OPTION_KEYS: &[&str] = &[
    "format",
    "device",
    "device_mapping",
    "device_region_bytes",
    "out_of_range",
    "skip_bad_lines",
    "capacity_bytes",
    "data",
    "reorder_window_records",
    "blkparse_event",
    "compare_with",
];

fn import_options(
    o: &serde_json::Map<String, Value>,
    allowed: &[&str],
    default_capacity_bytes: Option<u64>,
) -> PyResult<timport::ImportOptions> {
    for k in o.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(workload_err(k, format!("unknown trace option; allowed: {}", allowed.join(", "))));
        }
    }
    let capacity = match (opt_str(o, "capacity_bytes"), default_capacity_bytes) {
        (Some(v), _) => json_u64("capacity_bytes", v, 0)?,
        (None, Some(c)) => c,
        (None, None) => {
            return Err(workload_err("capacity_bytes", "missing: the capacity of the drive the trace is placed on"))
        }
    };
    if capacity == 0 {
        return Err(workload_err("capacity_bytes", "must be > 0"));
    }
    let mut opts = timport::ImportOptions::new(capacity);
    if let Some(f) = opt_str(o, "format") {
        let s = f.as_str().unwrap_or_default();
        opts.format = s.parse().map_err(|m: String| workload_err("format", m))?;
    }
    if let Some(d) = opt_str(o, "device") {
        opts.device = Some(match d {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    match opt_str(o, "device_mapping").map(|v| v.as_str().unwrap_or("").to_ascii_lowercase()) {
        None => {}
        Some(m) if m == "merge" => opts.device_mapping = timport::DeviceMapping::Merge,
        Some(m) if m == "concatenate" => {
            let r = opt_str(o, "device_region_bytes")
                .ok_or_else(|| workload_err("device_region_bytes", "needed with device_mapping = concatenate"))?;
            opts.device_mapping =
                timport::DeviceMapping::Concatenate { device_region_bytes: json_u64("device_region_bytes", r, capacity)? };
        }
        Some(m) => return Err(workload_err("device_mapping", format!("'{m}' is not allowed; use merge or concatenate"))),
    }
    match opt_str(o, "out_of_range").map(|v| v.as_str().unwrap_or("").to_ascii_lowercase()) {
        None => {}
        Some(m) if m == "fold" => opts.out_of_range = timport::OutOfRange::Fold,
        Some(m) if m == "reject" => opts.out_of_range = timport::OutOfRange::Reject,
        Some(m) => return Err(workload_err("out_of_range", format!("'{m}' is not allowed; use fold or reject"))),
    }
    if let Some(v) = opt_str(o, "skip_bad_lines") {
        opts.skip_bad_lines = v.as_bool().ok_or_else(|| workload_err("skip_bad_lines", "expected true or false"))?;
    }
    if let Some(v) = opt_str(o, "data") {
        opts.write_pattern = DataPattern::parse(v.as_str().unwrap_or("")).map_err(|m| workload_err("data", m))?;
    }
    if let Some(v) = opt_str(o, "reorder_window_records") {
        opts.reorder_window_records = v
            .as_u64()
            .ok_or_else(|| workload_err("reorder_window_records", "expected a whole number of records"))?
            as usize;
    }
    match opt_str(o, "blkparse_event").map(|v| v.as_str().unwrap_or("").to_ascii_uppercase()) {
        None => {}
        Some(m) if m == "D" => opts.blkparse_event = timport::BlkparseEvent::Issue,
        Some(m) if m == "Q" => opts.blkparse_event = timport::BlkparseEvent::Queue,
        Some(m) => return Err(workload_err("blkparse_event", format!("'{m}' is not allowed; use D (issue) or Q (queue)"))),
    }
    Ok(opts)
}

fn report_json(r: &timport::ImportReport) -> Value {
    json!({
        "format": r.format.name(),
        "lines": r.lines,
        "records": r.records,
        "non_io_lines": r.non_io_lines,
        "filtered_other_devices": r.filtered_other_devices,
        "skipped_lines": r.skipped_lines,
        "skipped_examples": r.skipped_examples.iter().map(|(l, m)| json!({"line": l, "reason": m})).collect::<Vec<_>>(),
        "folded": r.folded,
        "devices_seen": r.devices_seen,
        "devices_seen_truncated": r.devices_seen_truncated,
        "device_names": r.device_names,
        "reordered_records": r.reordered_records,
        "has_timestamps": r.has_timestamps,
        "has_latency": r.has_latency,
        "time_origin_ns": r.time_origin_ns,
    })
}

fn parse_bench(id: &str) -> PyResult<tgen::Workload> {
    tgen::Workload::parse(id).map_err(|m| workload_err("workload", m))
}

fn published_json(p: &tgen::PublishedStats) -> Value {
    let fig = |f: &tgen::Figure| {
        json!({
            "value": f.value,
            "qualifier": match f.qualifier {
                tgen::Qualifier::About => "about",
                tgen::Qualifier::Under => "under",
                tgen::Qualifier::Over => "over",
            },
            "text": f.to_string(),
        })
    };
    let mut mix = serde_json::Map::new();
    for (b, f) in &p.size_mix_percent {
        mix.insert(b.key().to_string(), fig(f));
    }
    json!({
        "workload": p.workload.id(),
        "name": p.workload.name(),
        "reads": p.reads,
        "writes": p.writes,
        "read_bytes": p.read_bytes,
        "write_bytes": p.write_bytes,
        "size_mix_percent": Value::Object(mix),
        "sequential_share_percent": p.sequential_percent.as_ref().map(fig),
        "avg_queue_depth": p.avg_queue_depth.as_ref().map(fig),
        "qd1_share_percent": p.qd1_percent.as_ref().map(fig),
        "duration_s": p.duration_s.as_ref().map(fig),
    })
}

fn comparison_json(p: &tgen::PublishedStats, s: &TraceStats) -> Value {
    Value::Array(
        p.compare(s)
            .into_iter()
            .map(|c| {
                json!({
                    "figure": c.figure,
                    "published": c.published,
                    "measured": if c.measured.is_finite() { json!(c.measured) } else { Value::Null },
                    "ok": c.ok,
                })
            })
            .collect(),
    )
}

fn stats_json(s: &TraceStats) -> Value {
    let mut v = s.to_json();
    v["summary_text"] = Value::String(s.to_string());
    v
}

/// Import a trace file (streaming; gzip/bzip2/xz by magic bytes) and summarise
/// it. `options_json` keys: capacity_bytes (required), format, device,
/// device_mapping (merge|concatenate), device_region_bytes, out_of_range
/// (fold|reject), skip_bad_lines, data, reorder_window_records, blkparse_event
/// (D|Q), compare_with (a Storage Bench workload id). Returns JSON
/// `{"file", "stats", "import", "published"?, "comparison"?}`.
#[pyfunction]
fn trace_stats(py: Python<'_>, path: &str, options_json: &str) -> PyResult<String> {
    let v = parse_json("the trace options", options_json)?;
    let o = v.as_object().ok_or_else(|| workload_err("(options)", "trace options are a JSON object"))?;
    let opts = import_options(o, TRACE_OPTION_KEYS, None)?;
    let compare = opt_str(o, "compare_with").map(|v| parse_bench(v.as_str().unwrap_or(""))).transpose()?;
    let p = Path::new(path);
    let out: Result<(TraceStats, timport::ImportReport), PyErr> = py.allow_threads(|| {
        let mut reader = timport::open(p, &opts).map_err(trace_err)?;
        let mut b = TraceStatsBuilder::new();
        let mut n = 0u64;
        for rec in &mut reader {
            let rec = rec.map_err(trace_err)?;
            b.push(&rec);
            n += 1;
            if n % SIGNAL_CHECK_RECORDS == 0 {
                Python::with_gil(|py| py.check_signals())?;
            }
        }
        Ok((b.finish(), reader.report().clone()))
    });
    let (stats, report) = out?;
    let mut res = json!({
        "file": path,
        "stats": stats_json(&stats),
        "import": report_json(&report),
    });
    if let Some(w) = compare {
        let p = tgen::published(w);
        res["published"] = published_json(&p);
        res["comparison"] = comparison_json(&p, &stats);
    }
    Ok(res.to_string())
}

fn generator(workload_id: &str, capacity_bytes: u64, seed: u64) -> PyResult<(tgen::Workload, tgen::Generator)> {
    let w = parse_bench(workload_id)?;
    let g = tgen::try_generate(w, capacity_bytes, seed).map_err(sim_err)?;
    Ok((w, g))
}

/// Generate a Storage Bench trace (streaming, not stored) and summarise it,
/// side by side with the published figures. Returns JSON
/// `{"workload", "name", "capacity_bytes", "seed", "stats", "published", "comparison"}`.
#[pyfunction]
fn generated_trace_stats(py: Python<'_>, workload_id: &str, capacity_bytes: u64, seed: u64) -> PyResult<String> {
    let (w, gen) = generator(workload_id, capacity_bytes, seed)?;
    let stats: PyResult<TraceStats> = py.allow_threads(|| {
        let mut b = TraceStatsBuilder::new();
        for (n, rec) in gen.enumerate() {
            b.push(&rec);
            if (n as u64 + 1) % SIGNAL_CHECK_RECORDS == 0 {
                Python::with_gil(|py| py.check_signals())?;
            }
        }
        Ok(b.finish())
    });
    let stats = stats?;
    let p = tgen::published(w);
    Ok(json!({
        "workload": w.id(),
        "name": w.name(),
        "capacity_bytes": capacity_bytes,
        "seed": seed,
        "stats": stats_json(&stats),
        "published": published_json(&p),
        "comparison": comparison_json(&p, &stats),
    })
    .to_string())
}

/// The published statistics of a Storage Bench workload (STORAGE_BENCH.md).
#[pyfunction]
fn published_stats(workload_id: &str) -> PyResult<String> {
    Ok(published_json(&tgen::published(parse_bench(workload_id)?)).to_string())
}

/// The Storage Bench workloads: `[{"id", "name", "records", "duration_s"}]`.
#[pyfunction]
fn storage_bench_workloads() -> String {
    Value::Array(
        tgen::Workload::ALL
            .iter()
            .map(|w| json!({"id": w.id(), "name": w.name(), "records": w.records(), "duration_s": w.duration_s()}))
            .collect(),
    )
    .to_string()
}

/// Name of the target file in written fio iologs (`--replay_redirect` sends it
/// to a real device).
const IOLOG_FILE: &str = "/dev/ssdlab-target";

fn op_name(op: TraceOp) -> &'static str {
    match op {
        TraceOp::Read => "read",
        TraceOp::Write => "write",
        TraceOp::Trim => "trim",
        TraceOp::Flush => "sync",
    }
}

fn write_record(out: &mut impl Write, csv: bool, r: &TraceRecord) -> std::io::Result<()> {
    if csv {
        writeln!(
            out,
            "{},{},{},{},{},{},{}",
            r.time_ns,
            op_name(r.op),
            r.offset_bytes,
            r.length_bytes,
            r.queue_depth,
            r.recorded_latency_ns,
            r.pattern
        )
    } else if r.op == TraceOp::Flush {
        writeln!(out, "{} {IOLOG_FILE} sync", r.time_ns / 1000)
    } else {
        writeln!(out, "{} {IOLOG_FILE} {} {} {}", r.time_ns / 1000, op_name(r.op), r.offset_bytes, r.length_bytes)
    }
}

/// Write a generated Storage Bench trace to `path`. `format`:
/// - `fio-iolog`: fio iolog version 3 (timestamps in microseconds, target file
///   `/dev/ssdlab-target`); replay on a real device with
///   `fio --read_iolog=FILE --replay_redirect=/dev/sdX`, and ssdlab reads it
///   back (queue depth, recorded latency and data pattern are not in the format);
/// - `csv`: a header line then
///   `time_ns,op,offset_bytes,length_bytes,queue_depth,recorded_latency_ns,data_pattern`,
///   every field the generator produces.
///
/// Returns the number of records written.
#[pyfunction]
#[pyo3(signature = (workload_id, capacity_bytes, seed, path, format = "fio-iolog"))]
fn write_generated_trace(
    py: Python<'_>,
    workload_id: &str,
    capacity_bytes: u64,
    seed: u64,
    path: &str,
    format: &str,
) -> PyResult<u64> {
    let csv = match format {
        "csv" => true,
        "fio-iolog" | "iolog" => false,
        other => return Err(workload_err("format", format!("'{other}' is not allowed; use fio-iolog or csv"))),
    };
    let (_, gen) = generator(workload_id, capacity_bytes, seed)?;
    let path_owned = path.to_string();
    py.allow_threads(move || {
        let io = |e: std::io::Error| PyOSError::new_err(format!("{path_owned}: {e}"));
        let f = std::fs::File::create(&path_owned).map_err(io)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
        if csv {
            writeln!(out, "time_ns,op,offset_bytes,length_bytes,queue_depth,recorded_latency_ns,data_pattern").map_err(io)?;
        } else {
            writeln!(out, "fio version 3 iolog").map_err(io)?;
            writeln!(out, "0 {IOLOG_FILE} add").map_err(io)?;
            writeln!(out, "0 {IOLOG_FILE} open").map_err(io)?;
        }
        let mut n = 0u64;
        let mut last_us = 0u64;
        for rec in gen {
            write_record(&mut out, csv, &rec).map_err(io)?;
            last_us = rec.time_ns / 1000;
            n += 1;
            if n % SIGNAL_CHECK_RECORDS == 0 {
                Python::with_gil(|py| py.check_signals())?;
            }
        }
        if !csv {
            writeln!(out, "{last_us} {IOLOG_FILE} close").map_err(io)?;
        }
        out.flush().map_err(io)?;
        Ok(n)
    })
}

// ---------------------------------------------------------------------------

/// The engine's version.
#[pyfunction]
fn version() -> &'static str {
    ssdlab_sim::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SsdlabError", py.get_type::<SsdlabError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("MemoryLimitError", py.get_type::<MemoryLimitError>())?;
    m.add("IntegrityError", py.get_type::<IntegrityError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("DriveError", py.get_type::<DriveError>())?;
    m.add_class::<PySimulator>()?;
    m.add_function(wrap_pyfunction!(validate_drive_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_drive_json, m)?)?;
    m.add_function(wrap_pyfunction!(drive_hash, m)?)?;
    m.add_function(wrap_pyfunction!(drive_provenance, m)?)?;
    m.add_function(wrap_pyfunction!(library_entries, m)?)?;
    m.add_function(wrap_pyfunction!(drive_document_json, m)?)?;
    m.add_function(wrap_pyfunction!(drive_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(default_memory_limit_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_workload, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_data_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(generated_trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(published_stats, m)?)?;
    m.add_function(wrap_pyfunction!(storage_bench_workloads, m)?)?;
    m.add_function(wrap_pyfunction!(write_generated_trace, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("UNIT_BYTES", UNIT_BYTES)?;
    Ok(())
}
