//! The per-line parser of each format behind one enum; everything after
//! parsing (device selection, placement, reordering, rebasing) is shared.

use super::device::DeviceKind;
use super::line::{FieldNames, NotIo, Parsed};
use super::num::FieldError;
use super::{blkparse, csv, disksim, fio_iolog, msr, systor17, tencent, umass, ImportOptions, TraceFormat};

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
    Csv,
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
            TraceFormat::Blkparse => LineParser::Blkparse(blkparse::Parser::new(opts.blkparse_event)),
            TraceFormat::FioIolog => LineParser::FioIolog(fio_iolog::Parser::default()),
            TraceFormat::Csv => LineParser::Csv,
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
            LineParser::Csv => csv::parse_line(line_no, line),
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
            LineParser::Csv => &csv::NAMES,
        }
    }

    pub fn device_kind(&self) -> DeviceKind {
        match self {
            LineParser::Msr => DeviceKind::HostDisk,
            LineParser::Systor17 | LineParser::Umass | LineParser::Disksim | LineParser::Tencent | LineParser::Csv => DeviceKind::Number,
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
        matches!(self, LineParser::Msr | LineParser::Systor17 | LineParser::Csv)
    }
}
