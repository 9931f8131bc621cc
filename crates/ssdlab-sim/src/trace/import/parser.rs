//! The per-line parser of each format behind one enum, and the types a line
//! parses into. Each format module turns one line into a [`Parsed`] with
//! absolute times in its own clock (ns) and byte offsets; everything after that
//! (device selection, placement, reordering, rebasing) is shared.

use super::device::{DeviceKey, DeviceKind};
use super::num::FieldError;
use super::{
    blkparse, disksim, fio_iolog, msr, systor17, tencent, umass, ImportOptions, TraceFormat,
};
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

/// The line parser of one concrete format (with the little state some keep).
#[derive(Clone, Debug)]
pub(crate) enum LineParser {
    Msr,
    Systor17,
    Umass,
    Disksim,
    Tencent,
    Blkparse(blkparse::Parser),
    FioIolog(fio_iolog::Parser),
}

impl LineParser {
    /// The parser for `format`, which must not be [`TraceFormat::Auto`].
    pub fn new(format: TraceFormat, opts: &ImportOptions) -> LineParser {
        match format {
            TraceFormat::Msr => LineParser::Msr,
            TraceFormat::Systor17 => LineParser::Systor17,
            TraceFormat::Umass => LineParser::Umass,
            TraceFormat::Disksim => LineParser::Disksim,
            TraceFormat::Tencent => LineParser::Tencent,
            TraceFormat::Blkparse => {
                LineParser::Blkparse(blkparse::Parser::new(opts.blkparse_event))
            }
            TraceFormat::FioIolog => LineParser::FioIolog(fio_iolog::Parser::default()),
            TraceFormat::Auto => unreachable!("auto-detection resolves the format before parsing"),
        }
    }

    /// Parse line `line_no` (1-based) of the decompressed text.
    pub fn parse<'a>(&mut self, line_no: u64, line: &'a str) -> Result<Parsed<'a>, FieldError> {
        if line.trim().is_empty() {
            return Ok(Parsed::NotIo(NotIo::Blank));
        }
        match self {
            LineParser::Msr => msr::parse_line(line_no, line),
            LineParser::Systor17 => systor17::parse_line(line_no, line),
            LineParser::Umass => umass::parse_line(line),
            LineParser::Disksim => disksim::parse_line(line),
            LineParser::Tencent => tencent::parse_line(line),
            LineParser::Blkparse(p) => p.parse_line(line),
            LineParser::FioIolog(p) => p.parse_line(line),
        }
    }

    pub fn names(&self) -> &'static FieldNames {
        match self {
            LineParser::Msr => &msr::NAMES,
            LineParser::Systor17 => &systor17::NAMES,
            LineParser::Umass => &umass::NAMES,
            LineParser::Disksim => &disksim::NAMES,
            LineParser::Tencent => &tencent::NAMES,
            LineParser::Blkparse(_) => &blkparse::NAMES,
            LineParser::FioIolog(_) => &fio_iolog::NAMES,
        }
    }

    pub fn device_kind(&self) -> DeviceKind {
        match self {
            LineParser::Msr => DeviceKind::HostDisk,
            LineParser::Systor17
            | LineParser::Umass
            | LineParser::Disksim
            | LineParser::Tencent => DeviceKind::Number,
            LineParser::Blkparse(_) | LineParser::FioIolog(_) => DeviceKind::Name,
        }
    }

    /// False only for fio iolog v2, whose records carry no time (all at 0).
    pub fn has_timestamps(&self) -> bool {
        match self {
            LineParser::FioIolog(p) => p.has_timestamps(),
            _ => true,
        }
    }

    /// True when records carry the response time measured on the traced system.
    pub fn has_latency(&self) -> bool {
        matches!(self, LineParser::Msr | LineParser::Systor17)
    }
}

/// Parse a read/write letter or word, case-insensitively, for formats that
/// spell the operation out (`R`/`W`, `Read`/`Write`).
pub(crate) fn read_or_write(
    text: &str,
    field: &'static str,
    expected: &str,
) -> Result<TraceOp, FieldError> {
    if text.eq_ignore_ascii_case("r") || text.eq_ignore_ascii_case("read") {
        Ok(TraceOp::Read)
    } else if text.eq_ignore_ascii_case("w") || text.eq_ignore_ascii_case("write") {
        Ok(TraceOp::Write)
    } else {
        Err(FieldError::new(
            field,
            format!("found {}, expected {expected}", super::num::quote(text)),
        ))
    }
}

/// True when `line`'s comma-separated fields are exactly `names` (ignoring case
/// and spaces): the header line of a CSV format.
pub(crate) fn is_csv_header(line: &str, names: &[&str]) -> bool {
    let mut fields = line.split(',');
    names.iter().all(|n| {
        fields
            .next()
            .is_some_and(|f| f.trim().eq_ignore_ascii_case(n))
    }) && fields.next().is_none()
}
