//! One error type for the engine; each kind becomes its own Python exception.
//! A trace's read errors ([`TraceError`], re-exported by `trace`) are one kind.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A drive description is wrong: which field, what value, what is allowed.
    Config { field: String, message: String },
    /// A workload / phase description is wrong.
    Workload { field: String, message: String },
    /// The simulation would need more memory than the limit allows.
    Memory { needed_bytes: u64, limit_bytes: u64, detail: String },
    /// The checking mode found lost, stale or mixed-up data, or a broken invariant.
    Integrity { message: String },
    /// Something that grows with the input (a phase's per-interval series,
    /// its I/O log) would need more memory than the limit leaves for it once
    /// the drive's tables are counted: `what` says what and why, `remedy`
    /// which settings change it.
    Allocation { what: String, needed_bytes: u64, limit_bytes: u64, remedy: String },
    /// A trace could not be read.
    Trace(TraceError),
    /// The drive cannot do what was asked (e.g. out of space it cannot reclaim).
    Drive { message: String },
}

impl SimError {
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError::Config { field: field.into(), message: message.into() }
    }
    pub fn workload(field: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError::Workload { field: field.into(), message: message.into() }
    }
    pub fn integrity(message: impl Into<String>) -> SimError {
        SimError::Integrity { message: message.into() }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config { field, message } => write!(f, "drive field '{}': {}", printable(field), printable(message)),
            SimError::Workload { field, message } => write!(f, "workload field '{}': {}", printable(field), printable(message)),
            SimError::Memory { needed_bytes, limit_bytes, detail } => write!(
                f,
                "simulating this drive needs about {} of RAM ({detail}), more than the limit of {}; raise the limit (memory_limit_bytes / --memory-limit) or simulate a smaller drive",
                human_bytes(*needed_bytes),
                human_bytes(*limit_bytes)
            ),
            SimError::Allocation { what, needed_bytes, limit_bytes, remedy } => write!(
                f,
                "{} would need about {} of RAM, more than the {} the memory limit leaves beside the drive's tables; {remedy}",
                printable(what),
                human_bytes(*needed_bytes),
                human_bytes(*limit_bytes)
            ),
            SimError::Integrity { message } => write!(f, "integrity check failed: {message}"),
            SimError::Trace(e) => write!(f, "{e}"),
            SimError::Drive { message } => write!(f, "{}", printable(message)),
        }
    }
}

impl std::error::Error for SimError {}

fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.2} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{b} B")
    }
}

impl From<TraceError> for SimError {
    fn from(e: TraceError) -> Self {
        SimError::Trace(e)
    }
}

pub type Result<T> = std::result::Result<T, SimError>;

/// An error reading a trace: names the file, line, field and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    /// 1-based line number, 0 when the error is not about one line.
    pub line: u64,
    pub field: String,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (file, field, message) = (printable(&self.file), printable(&self.field), printable(&self.message));
        if self.line > 0 {
            write!(f, "{file}:{}: field '{field}': {message}", self.line)
        } else {
            write!(f, "{file}: {field}: {message}")
        }
    }
}

impl std::error::Error for TraceError {}

/// Text for a one-line message: control characters a user typed (a newline
/// in a key or a value) shown escaped (`\n`), the rest as it is.
fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        s.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect::<String>().into()
    } else {
        s.into()
    }
}
