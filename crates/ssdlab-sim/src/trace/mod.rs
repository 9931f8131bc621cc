//! Block I/O traces: the record type shared by importers, generators, statistics
//! and playback.
//!
//! Pipeline: a source (an importer reading a real trace file, or a Storage Bench
//! generator) yields [`TraceRecord`]s in issue-time order as an iterator, so a
//! trace of hundreds of millions of I/Os streams through in flat memory:
//! - [`import`]: public trace formats, with their options;
//! - [`storage_bench`]: the Storage Bench traces' specs, published figures and generator;
//! - [`source`]: a trace given as plain data (a file with options, or a generated trace), opened;
//! - [`stats`]: the statistics of any such stream; [`summary`]: them as one document,
//!   side by side with the published figures;
//! - [`export`]: writing a trace (fio iolog, CSV);
//!
//! and playback ([`crate::engine`]) replays it against a simulated drive.

pub mod export;
pub mod import;
pub mod source;
pub mod stats;
pub mod storage_bench;
pub mod summary;

pub use crate::error::TraceError;
use crate::pattern::DataPattern;

/// What a trace record asks the drive to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceOp {
    Read,
    Write,
    Trim,
    Flush,
}

/// One I/O of a trace, normalised: byte offsets and lengths, nanoseconds since
/// the trace's first record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Issue time, ns since the start of the trace (first record at 0 after import).
    pub time_ns: u64,
    pub op: TraceOp,
    /// Byte offset on the drive (after device mapping / folding).
    pub offset_bytes: u64,
    /// Length in bytes (0 for flush).
    pub length_bytes: u64,
    /// Data pattern of a write (ignored for other ops).
    pub data_pattern: DataPattern,
    /// The iodepth at which the I/O was issued on the recording system (number of
    /// outstanding I/Os including this one), or 0 if the trace does not say.
    pub iodepth: u16,
    /// Response time recorded in the trace, if any (ns), else 0.
    pub recorded_latency_ns: u64,
}
