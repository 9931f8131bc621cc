//! What a line of a trace parses into (an I/O as written, or why it is not
//! one), the names a format gives its fields, and the small helpers several
//! formats share. Each format module turns one line into a [`Parsed`] with
//! absolute times in its own clock (ns) and byte offsets.

use super::device::DeviceKey;
use super::num::{quote, FieldError};
use crate::pattern::DataPattern;
use crate::trace::TraceOp;

/// One I/O as written in the trace, before placement and rebasing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawIo<'a> {
    /// Issue time in the trace's own clock, converted to ns.
    pub time_ns: u64,
    pub op: TraceOp,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    pub device: DeviceKey<'a>,
    /// Response time recorded in the trace, 0 when the format has none.
    pub recorded_latency_ns: u64,
    /// Iodepth at issue recorded in the trace, 0 when the format has none.
    pub iodepth: u16,
    /// The data pattern of a write when the trace records it (ssdlab's own
    /// CSV), else None (the import options' pattern applies).
    pub data_pattern: Option<DataPattern>,
}

/// A line that is not an I/O. Each is counted in the report (`non_io_lines`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotIo {
    /// Empty or whitespace-only line.
    Blank,
    /// The format's header line.
    Header,
    /// A record of the format that is not an I/O to replay: a blkparse event
    /// other than the selected action, a fio file action (`add`/`open`/`close`)
    /// or `wait`.
    Event,
    /// Free text the format allows between records (blkparse's summary section).
    Text,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed<'a> {
    Io(RawIo<'a>),
    NotIo(NotIo),
}

/// The names a format gives the fields that shared checks report errors on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldNames {
    pub time: &'static str,
    pub offset: &'static str,
    pub size: &'static str,
    /// What the format calls a device, for messages ("LUN", "VolumeID", ...).
    pub device: &'static str,
}

/// Parse a read/write letter or word, case-insensitively, for formats that
/// spell the operation out (`R`/`W`, `Read`/`Write`).
pub(crate) fn read_or_write(text: &str, field: &'static str, expected: &str) -> Result<TraceOp, FieldError> {
    if text.eq_ignore_ascii_case("r") || text.eq_ignore_ascii_case("read") {
        Ok(TraceOp::Read)
    } else if text.eq_ignore_ascii_case("w") || text.eq_ignore_ascii_case("write") {
        Ok(TraceOp::Write)
    } else {
        Err(FieldError::new(field, format!("found {}, expected {expected}", quote(text))))
    }
}

/// True when `line`'s comma-separated fields are exactly `names` (ignoring case
/// and spaces): the header line of a CSV format.
pub(crate) fn is_csv_header(line: &str, names: &[&str]) -> bool {
    let mut fields = line.split(',');
    names.iter().all(|n| fields.next().is_some_and(|f| f.trim().eq_ignore_ascii_case(n))) && fields.next().is_none()
}
