//! Writing a trace: fio iolog version 3 (replayable on a real device with
//! `fio --read_iolog=FILE --replay_redirect=/dev/sdX`; ssdlab reads it back,
//! without the iodepth, recorded latency and data pattern the format does not
//! carry) or CSV with every field of a record.

use std::fmt;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::str::FromStr;

use super::summary::CHECK_EVERY_RECORDS;
use super::{TraceError, TraceOp, TraceRecord};

/// Name of the target file in written fio iologs (`--replay_redirect` sends it
/// to a real device).
pub const IOLOG_FILE: &str = "/dev/ssdlab-target";

/// The CSV header: every field of a [`TraceRecord`].
pub const CSV_HEADER: &str = "time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern";

/// A format traces are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// fio iolog version 3: timestamps in microseconds, target [`IOLOG_FILE`].
    FioIolog,
    /// [`CSV_HEADER`], then one line per record.
    Csv,
}

impl FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<ExportFormat, String> {
        match s {
            "csv" => Ok(ExportFormat::Csv),
            "fio-iolog" | "iolog" => Ok(ExportFormat::FioIolog),
            other => Err(format!("'{other}' is not allowed; use fio-iolog or csv")),
        }
    }
}

/// The file name endings each written format takes, for messages.
pub const EXPORT_EXTENSIONS: &str = ".csv (csv), .iolog or .log (fio-iolog)";

impl ExportFormat {
    /// The format to write `path` in: `format` when given (any name), else
    /// the one its extension names (`.csv`: csv; `.iolog`, `.log`:
    /// fio-iolog). An unknown or missing extension is an error listing the
    /// allowed ones: never a silent default.
    pub fn for_path(path: &Path, format: Option<&str>) -> Result<ExportFormat, TraceError> {
        let error = |message: String| TraceError { file: path.display().to_string(), line: 0, field: "format".into(), message };
        if let Some(f) = format {
            return f.parse().map_err(error);
        }
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("csv") => Ok(ExportFormat::Csv),
            Some("iolog" | "log") => Ok(ExportFormat::FioIolog),
            Some(other) => Err(error(format!(
                "the extension '.{other}' names no format ssdlab writes; allowed: {EXPORT_EXTENSIONS}; or give the format (format= / --format: csv or fio-iolog)"
            ))),
            None => Err(error(format!(
                "the name has no extension to choose the format by; allowed: {EXPORT_EXTENSIONS}; or give the format (format= / --format: csv or fio-iolog)"
            ))),
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExportFormat::FioIolog => "fio-iolog",
            ExportFormat::Csv => "csv",
        })
    }
}

fn op_name(op: TraceOp) -> &'static str {
    match op {
        TraceOp::Read => "read",
        TraceOp::Write => "write",
        TraceOp::Trim => "trim",
        TraceOp::Flush => "sync",
    }
}

fn write_record(out: &mut impl Write, format: ExportFormat, r: &TraceRecord) -> std::io::Result<()> {
    match format {
        ExportFormat::Csv => writeln!(
            out,
            "{},{},{},{},{},{},{}",
            r.time_ns,
            op_name(r.op),
            r.offset_bytes,
            r.length_bytes,
            r.iodepth,
            r.recorded_latency_ns,
            r.data_pattern
        ),
        ExportFormat::FioIolog if r.op == TraceOp::Flush => writeln!(out, "{} {IOLOG_FILE} sync", r.time_ns / 1000),
        ExportFormat::FioIolog => {
            writeln!(out, "{} {IOLOG_FILE} {} {} {}", r.time_ns / 1000, op_name(r.op), r.offset_bytes, r.length_bytes)
        }
    }
}

/// Write `records` to `path` in `format`, calling `keep_going` every
/// [`CHECK_EVERY_RECORDS`] records. Returns the records written, or None
/// when `keep_going` stopped it (the file is then incomplete).
pub fn write_trace(
    records: impl Iterator<Item = TraceRecord>,
    path: &Path,
    format: ExportFormat,
    keep_going: &mut dyn FnMut() -> bool,
) -> std::io::Result<Option<u64>> {
    let f = std::fs::File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, f);
    match format {
        ExportFormat::Csv => writeln!(out, "{CSV_HEADER}")?,
        ExportFormat::FioIolog => {
            writeln!(out, "fio version 3 iolog")?;
            writeln!(out, "0 {IOLOG_FILE} add")?;
            writeln!(out, "0 {IOLOG_FILE} open")?;
        }
    }
    let mut n = 0u64;
    let mut last_us = 0u64;
    for rec in records {
        write_record(&mut out, format, &rec)?;
        last_us = rec.time_ns / 1000;
        n += 1;
        if n.is_multiple_of(CHECK_EVERY_RECORDS) && !keep_going() {
            return Ok(None);
        }
    }
    if format == ExportFormat::FioIolog {
        writeln!(out, "{last_us} {IOLOG_FILE} close")?;
    }
    out.flush()?;
    Ok(Some(n))
}
