//! Importers for public block-trace formats, as streaming iterators of
//! [`TraceRecord`]s.
//!
//! Pipeline, in the order data flows (one module each):
//! 1. `source`: open the file, decompress gzip / bzip2 / xz (by magic
//!    bytes, checked against the extension), split into numbered lines.
//! 2. `detect`: with `format = auto`, try every format's parser on the first
//!    lines; exactly one must fit.
//! 3. One parser per format (`msr`, `systor17`, `umass`, `disksim`, `tencent`,
//!    `blkparse`, `fio_iolog`, `csv`): a line -> time (ns, trace clock), op,
//!    byte offset and length, device, recorded latency (and, in ssdlab's own
//!    CSV, the iodepth and data pattern).
//! 4. Device selection or mapping (`device`): keep one device, or merge all
//!    devices onto one LBA space, or give each device its own region.
//! 5. Placement: an I/O past the drive's capacity is folded back or rejected.
//! 6. `reorder`: a bounded buffer sorts nearly-sorted input by time.
//! 7. Rebase: the first record is at time 0.
//!
//! Memory stays flat whatever the file size: one line, the reorder window, the
//! decoders' buffers and the set of device ids. Every line is accounted for in
//! the [`ImportReport`]: a record, a non-I/O line (header, blank, other event),
//! a record of another device, or a skipped bad line.
//!
//! ```no_run
//! use std::path::Path;
//! use ssdlab_sim::trace::import::{open, ImportOptions};
//! let mut opts = ImportOptions::new(256 << 30); // a 256 GiB drive
//! opts.device = Some("hm_0".into());
//! let mut reader = open(Path::new("hm_0.csv.gz"), &opts)?;
//! for record in &mut reader {
//!     let record = record?;
//!     // replay record ...
//! }
//! println!("{:?}", reader.report());
//! # Ok::<(), ssdlab_sim::trace::TraceError>(())
//! ```

mod blkparse;
mod csv;
mod detect;
mod device;
mod disksim;
mod fio_iolog;
mod iodepth;
mod line;
mod msr;
mod num;
mod options;
mod parser;
mod reorder;
mod source;
mod systor17;
mod tencent;
#[cfg(test)]
mod tests;
mod umass;

pub use iodepth::{infer_iodepth, InferIodepth};
pub use options::{
    BlkparseEvent, DeviceMapping, ImportOptions, OutOfRange, TraceFormat, DEFAULT_REORDER_WINDOW_RECORDS, IMPORT_OPTION_KEYS,
    REORDER_BYTES_PER_RECORD,
};

use std::path::Path;

use serde_json::{json, Value};

use self::device::{DeviceId, DeviceTable, MAX_TRACKED_DEVICES};
use self::line::{FieldNames, NotIo, Parsed, RawIo};
use self::num::FieldError;
use self::parser::LineParser;
use self::reorder::{Pending, ReorderBuffer};
use self::source::{display_name, LineReader, NextLine};
use crate::pattern::DataPattern;
use crate::trace::{TraceError, TraceOp, TraceRecord};

/// How many skipped lines are kept as examples in the report.
pub const MAX_SKIPPED_EXAMPLES: usize = 16;

/// What an import did. Complete once the reader is exhausted; then
/// `lines == records + non_io_lines + filtered_other_devices + skipped_lines`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReport {
    /// The format read (detected when the options said auto).
    pub format: TraceFormat,
    /// Lines read from the (decompressed) file.
    pub lines: u64,
    /// Records yielded.
    pub records: u64,
    /// Header, blank, file-management and non-selected event lines.
    pub non_io_lines: u64,
    /// Records of devices other than the selected one.
    pub filtered_other_devices: u64,
    /// Malformed lines skipped (`skip_bad_lines`), and the first
    /// [`MAX_SKIPPED_EXAMPLES`] of them as (line, reason).
    pub skipped_lines: u64,
    pub skipped_examples: Vec<(u64, String)>,
    /// Records whose offset was folded into the drive (or device region).
    pub folded: u64,
    /// Distinct devices in the file (including filtered ones).
    pub devices_seen: u64,
    /// True if there were more than 1,048,576 devices and counting stopped.
    pub devices_seen_truncated: bool,
    /// The first 64 device names, in order of first appearance (= their
    /// region index with [`DeviceMapping::Concatenate`]).
    pub device_names: Vec<String>,
    /// Records that came after a later-timestamped one in the file and were
    /// moved into time order by the reorder buffer.
    pub reordered_records: u64,
    /// False for fio iolog v2: every record is at time 0.
    pub has_timestamps: bool,
    /// True when `recorded_latency_ns` is filled from the trace (MSR, SYSTOR '17).
    pub has_latency: bool,
    /// The trace-clock time (ns) that became time 0.
    pub time_origin_ns: Option<u64>,
}

impl ImportReport {
    /// The report as JSON (skipped lines as `{"line", "reason"}`).
    pub fn to_json(&self) -> Value {
        json!({
            "format": self.format.name(),
            "lines": self.lines,
            "records": self.records,
            "non_io_lines": self.non_io_lines,
            "filtered_other_devices": self.filtered_other_devices,
            "skipped_lines": self.skipped_lines,
            "skipped_examples": self.skipped_examples.iter().map(|(l, m)| json!({"line": l, "reason": m})).collect::<Vec<_>>(),
            "folded": self.folded,
            "devices_seen": self.devices_seen,
            "devices_seen_truncated": self.devices_seen_truncated,
            "device_names": self.device_names,
            "reordered_records": self.reordered_records,
            "has_timestamps": self.has_timestamps,
            "has_latency": self.has_latency,
            "time_origin_ns": self.time_origin_ns,
        })
    }
}
/// Open a trace file for streaming import.
///
/// Fails at once if the file cannot be opened, the options are invalid, or
/// auto-detection cannot decide; errors in the records come from the iterator.
pub fn open(path: &Path, opts: &ImportOptions) -> Result<TraceReader, TraceError> {
    let file = display_name(path);
    let option_error = |field: &str, message: String| TraceError { file: file.clone(), line: 0, field: field.to_string(), message };
    opts.validate().map_err(|(field, message)| option_error(field, message))?;
    let format = match opts.format {
        TraceFormat::Auto => detect::detect(path, opts)?,
        format => format,
    };
    let parser = LineParser::new(format, opts);
    let selector = match &opts.device {
        Some(d) => Some(
            DeviceId::parse_selection(parser.device_kind(), d, parser.names().device)
                .map_err(|m| option_error("device", format!("{m} (format {format})")))?,
        ),
        None => None,
    };
    let lines = LineReader::open(path)?;
    let report = ImportReport {
        format,
        lines: 0,
        records: 0,
        non_io_lines: 0,
        filtered_other_devices: 0,
        skipped_lines: 0,
        skipped_examples: Vec::new(),
        folded: 0,
        devices_seen: 0,
        devices_seen_truncated: false,
        device_names: Vec::new(),
        reordered_records: 0,
        has_timestamps: parser.has_timestamps(),
        has_latency: parser.has_latency(),
        time_origin_ns: None,
    };
    Ok(TraceReader {
        lines,
        parser,
        pipeline: Pipeline {
            file,
            selector,
            device_mapping: opts.device_mapping,
            drive_capacity_bytes: opts.drive_capacity_bytes,
            out_of_range: opts.out_of_range,
            skip_bad_lines: opts.skip_bad_lines,
            data_pattern: opts.data_pattern,
            devices: DeviceTable::default(),
            reorder: ReorderBuffer::new(opts.reorder_window_records),
            reorder_window_records: opts.reorder_window_records,
            max_time_seen_ns: None,
            report,
        },
        state: State::Reading,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Reading,
    /// Input ended: emptying the reorder buffer.
    Draining,
    Done,
}

/// A streaming trace import: yields records in time order, then `None`.
/// After an error it yields `None`.
pub struct TraceReader {
    lines: LineReader,
    parser: LineParser,
    pipeline: Pipeline,
    state: State,
}

impl TraceReader {
    /// What the import did so far; complete once the iterator returned `None`.
    pub fn report(&self) -> &ImportReport {
        &self.pipeline.report
    }

    fn fail(&mut self, e: TraceError) -> Option<Result<TraceRecord, TraceError>> {
        self.state = State::Done;
        Some(Err(e))
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.state {
                State::Done => return None,
                State::Draining => match self.pipeline.reorder.pop_any() {
                    Some(p) => return Some(Ok(self.pipeline.emit(p))),
                    None => {
                        self.state = State::Done;
                        return self.pipeline.finish().err().map(Err);
                    }
                },
                State::Reading => {
                    if let Some(p) = self.pipeline.reorder.pop_ready() {
                        return Some(Ok(self.pipeline.emit(p)));
                    }
                    let step = match self.lines.next_line() {
                        Err(e) => return self.fail(e),
                        Ok(NextLine::End) => {
                            self.state = State::Draining;
                            continue;
                        }
                        Ok(NextLine::Bad { line_no, error }) => {
                            self.pipeline.report.lines = line_no;
                            self.pipeline.bad_line(line_no, error)
                        }
                        Ok(NextLine::Text { line_no, text }) => {
                            self.pipeline.report.lines = line_no;
                            let parsed = self.parser.parse(line_no, text);
                            if matches!(parsed, Ok(Parsed::NotIo(NotIo::Header))) {
                                self.pipeline.report.has_timestamps = self.parser.has_timestamps();
                            }
                            self.pipeline.accept(line_no, parsed, self.parser.names())
                        }
                    };
                    if let Err(e) = step {
                        return self.fail(e);
                    }
                }
            }
        }
    }
}

/// Why a record cannot be used: a bad line can be skipped, a fatal one cannot
/// (the options do not fit the trace).
enum Fault {
    Bad(FieldError),
    Fatal(FieldError),
}

/// Everything after parsing: device selection and mapping, placement,
/// reordering, rebasing, and the report.
struct Pipeline {
    file: String,
    selector: Option<DeviceId>,
    device_mapping: DeviceMapping,
    drive_capacity_bytes: u64,
    out_of_range: OutOfRange,
    skip_bad_lines: bool,
    data_pattern: DataPattern,
    devices: DeviceTable,
    reorder: ReorderBuffer,
    reorder_window_records: usize,
    max_time_seen_ns: Option<u64>,
    report: ImportReport,
}

impl Pipeline {
    fn error(&self, line: u64, e: FieldError) -> TraceError {
        TraceError { file: self.file.clone(), line, field: e.field.to_string(), message: e.message }
    }

    /// Skip a bad line (counted) or turn it into the error that stops the import.
    fn bad_line(&mut self, line_no: u64, e: FieldError) -> Result<(), TraceError> {
        if !self.skip_bad_lines {
            return Err(self.error(line_no, e));
        }
        self.report.skipped_lines += 1;
        if self.report.skipped_examples.len() < MAX_SKIPPED_EXAMPLES {
            self.report.skipped_examples.push((line_no, format!("field '{}': {}", e.field, e.message)));
        }
        Ok(())
    }

    fn accept(&mut self, line_no: u64, parsed: Result<Parsed<'_>, FieldError>, names: &FieldNames) -> Result<(), TraceError> {
        match parsed {
            Err(e) => self.bad_line(line_no, e),
            Ok(Parsed::NotIo(_)) => {
                self.report.non_io_lines += 1;
                Ok(())
            }
            Ok(Parsed::Io(io)) => match self.accept_io(line_no, io, names) {
                Ok(()) => Ok(()),
                Err(Fault::Bad(e)) => self.bad_line(line_no, e),
                Err(Fault::Fatal(e)) => Err(self.error(line_no, e)),
            },
        }
    }

    fn accept_io(&mut self, line_no: u64, io: RawIo<'_>, names: &FieldNames) -> Result<(), Fault> {
        let device_index = self.devices.lookup(io.device);
        self.report.devices_seen = self.devices.count();
        self.report.devices_seen_truncated = self.devices.is_full();
        if self.report.device_names.len() < self.devices.listed().len() {
            self.report.device_names = self.devices.listed().to_vec();
        }
        if let Some(selector) = &self.selector {
            if !selector.matches(io.device) {
                self.report.filtered_other_devices += 1;
                return Ok(());
            }
        }
        let (offset_bytes, folded) = if io.op == TraceOp::Flush {
            (0, false)
        } else {
            if io.length_bytes == 0 {
                return Err(Fault::Bad(FieldError::new(names.size, "0 bytes: a read, write or trim needs a positive length")));
            }
            self.place(io.offset_bytes, io.length_bytes, device_index, names)?
        };
        if folded {
            self.report.folded += 1;
        }
        let pending = Pending {
            time_ns: io.time_ns,
            line: line_no,
            op: io.op,
            offset_bytes,
            length_bytes: if io.op == TraceOp::Flush { 0 } else { io.length_bytes },
            recorded_latency_ns: io.recorded_latency_ns,
            iodepth: io.iodepth,
            data_pattern: io.data_pattern,
        };
        if let Err(emitted_ns) = self.reorder.push(pending) {
            return Err(Fault::Bad(FieldError::new(
                names.time,
                format!(
                    "time {} ns is earlier than a record already passed on (at {} ns): the file is out of time order by more than reorder_window_records = {}; raise it",
                    io.time_ns, emitted_ns, self.reorder_window_records
                ),
            )));
        }
        match self.max_time_seen_ns {
            Some(max) if io.time_ns < max => self.report.reordered_records += 1,
            Some(max) if io.time_ns == max => {}
            _ => self.max_time_seen_ns = Some(io.time_ns),
        }
        Ok(())
    }

    /// The byte offset on the drive for an I/O, and whether it was folded.
    fn place(&self, offset_bytes: u64, length_bytes: u64, device_index: Option<u32>, names: &FieldNames) -> Result<(u64, bool), Fault> {
        let policy = self.out_of_range;
        let (offset_bytes, folded_in_region) = match (self.device_mapping, &self.selector) {
            (DeviceMapping::Concatenate { device_region_bytes }, None) => {
                let k = device_index.ok_or_else(|| {
                    Fault::Fatal(FieldError::new(
                        names.device,
                        format!("more than {MAX_TRACKED_DEVICES} distinct devices: too many to concatenate"),
                    ))
                })?;
                let (in_region, folded) = fit(offset_bytes, length_bytes, device_region_bytes, policy, "device region", names)?;
                let start = u64::from(k).checked_mul(device_region_bytes).and_then(|s| s.checked_add(in_region));
                let start = start.ok_or_else(|| {
                    Fault::Fatal(FieldError::new(
                        names.device,
                        format!("device number {k} times device_region_bytes = {device_region_bytes} overflows 64 bits"),
                    ))
                })?;
                (start, folded)
            }
            _ => (offset_bytes, false),
        };
        let (offset_bytes, folded) = fit(offset_bytes, length_bytes, self.drive_capacity_bytes, policy, "drive", names)?;
        Ok((offset_bytes, folded || folded_in_region))
    }

    /// Rebase a record's time and hand it out.
    fn emit(&mut self, p: Pending) -> TraceRecord {
        let origin = *self.report.time_origin_ns.get_or_insert(p.time_ns);
        self.report.records += 1;
        TraceRecord {
            // The reorder buffer emits in time order, so nothing precedes the origin.
            time_ns: p.time_ns - origin,
            op: p.op,
            offset_bytes: p.offset_bytes,
            length_bytes: p.length_bytes,
            data_pattern: p.data_pattern.unwrap_or(self.data_pattern),
            iodepth: p.iodepth,
            recorded_latency_ns: p.recorded_latency_ns,
        }
    }

    /// Checks once the input is exhausted.
    fn finish(&self) -> Result<(), TraceError> {
        match &self.selector {
            Some(selector) if self.report.records == 0 => Err(TraceError {
                file: self.file.clone(),
                line: 0,
                field: "device".into(),
                message: format!(
                    "no record of device '{selector}' in {} line(s); the file has {} device(s){}{}",
                    self.report.lines,
                    self.report.devices_seen,
                    if self.report.device_names.is_empty() { "" } else { ": " },
                    self.report.device_names.join(", ")
                ),
            }),
            _ => Ok(()),
        }
    }
}

/// Fit `[offset, offset + length)` into `[0, space)`: unchanged if it fits;
/// else folded (offset modulo space, moved down to fit, original alignment up
/// to 4 KiB kept) or rejected. An I/O longer than the space is always an error.
fn fit(
    offset_bytes: u64,
    length_bytes: u64,
    space_bytes: u64,
    policy: OutOfRange,
    space_name: &str,
    names: &FieldNames,
) -> Result<(u64, bool), Fault> {
    if length_bytes > space_bytes {
        return Err(Fault::Fatal(FieldError::new(
            names.size,
            format!("{length_bytes} bytes is longer than the whole {space_name} ({space_bytes} bytes)"),
        )));
    }
    if offset_bytes <= space_bytes - length_bytes {
        return Ok((offset_bytes, false));
    }
    match policy {
        OutOfRange::Reject => Err(Fault::Fatal(FieldError::new(
            names.offset,
            format!(
                "byte offset {offset_bytes} + length {length_bytes} ends past the {space_name} ({space_bytes} bytes) and out_of_range = reject"
            ),
        ))),
        OutOfRange::Fold => {
            const MAX_ALIGN_BYTES: u64 = 4096;
            let align = if offset_bytes == 0 {
                MAX_ALIGN_BYTES
            } else {
                (1u64 << offset_bytes.trailing_zeros()).min(MAX_ALIGN_BYTES)
            };
            let folded = (offset_bytes % space_bytes).min(space_bytes - length_bytes);
            Ok((folded - folded % align, true))
        }
    }
}
