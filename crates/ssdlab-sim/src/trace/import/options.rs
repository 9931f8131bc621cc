//! How to import a trace: the format, device selection or mapping, placement
//! of out-of-range I/O, bad lines, the data pattern of writes, the reorder
//! window, the blkparse event; from code or from plain data
//! ([`ImportOptions::from_json`]).

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::config::DEFAULT_MEMORY_LIMIT_BYTES;
use crate::parse::{get, known_keys, parse_bytes, werr};
use crate::pattern::DataPattern;

/// A trace file format. [`TraceFormat::Auto`] detects it from the first lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    Auto,
    /// MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`).
    Msr,
    /// SNIA SYSTOR '17 CSV (`Timestamp,Response,IOType,LUN,Offset,Size`).
    Systor17,
    /// UMass / SPC CSV (`ASU,LBA,Size,Opcode,Timestamp`).
    Umass,
    /// DiskSim / MQSim ASCII (`time_ns device lba_sectors size_sectors type`).
    Disksim,
    /// Tencent CBS CSV (`Timestamp,Offset,Size,IOType,VolumeID`).
    Tencent,
    /// blkparse default text output.
    Blkparse,
    /// fio iolog version 2 or 3.
    FioIolog,
    /// ssdlab's own CSV, as `ssdlab trace generate --out FILE.csv` writes it
    /// (`time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern`).
    Csv,
}

impl TraceFormat {
    /// Every concrete format, in the order auto-detection reports them.
    pub const CONCRETE: [TraceFormat; 8] = [
        TraceFormat::Msr,
        TraceFormat::Systor17,
        TraceFormat::Umass,
        TraceFormat::Disksim,
        TraceFormat::Tencent,
        TraceFormat::Blkparse,
        TraceFormat::FioIolog,
        TraceFormat::Csv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Msr => "msr",
            TraceFormat::Systor17 => "systor17",
            TraceFormat::Umass => "umass",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Csv => "csv",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    /// The names of [`TraceFormat::name`], case-insensitive, plus `mqsim` for `disksim`.
    fn from_str(s: &str) -> Result<TraceFormat, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "mqsim" {
            return Ok(TraceFormat::Disksim);
        }
        std::iter::once(TraceFormat::Auto).chain(TraceFormat::CONCRETE).find(|f| f.name() == t).ok_or_else(|| {
            format!(
                "'{s}' is not a trace format; allowed: auto, msr, systor17, umass, disksim (or mqsim), tencent, blkparse, fio-iolog, csv"
            )
        })
    }
}

/// How records of several devices share the simulated drive (when no single
/// device is selected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceMapping {
    /// All devices onto one LBA space, offsets unchanged.
    #[default]
    Merge,
    /// Device k (numbered 0, 1, ... in order of first appearance in the file)
    /// gets the region starting at `k * device_region_bytes`; an offset past the
    /// region is folded or rejected like one past the drive.
    Concatenate { device_region_bytes: u64 },
}

/// What to do with an I/O that ends past the drive's capacity (or its region).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutOfRange {
    /// Offset modulo capacity, then moved down so the I/O fits, keeping the
    /// original offset's alignment (up to 4 KiB).
    #[default]
    Fold,
    /// Stop with an error naming the line.
    Reject,
}

/// Which blkparse event is the I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BlkparseEvent {
    /// `D`: issued to the device driver (what the drive saw).
    #[default]
    Issue,
    /// `Q`: queued by the block layer (what the application asked for).
    Queue,
}

/// Default reorder window in records. The Tencent CBS sample needs 25,640
/// (rows of two adjacent seconds interleave); SYSTOR '17 samples need 57.
/// About 3 MB of memory.
pub const DEFAULT_REORDER_WINDOW_RECORDS: usize = 1 << 16;

/// Bytes one record held in the reorder window costs (checked against the
/// memory limit).
pub const REORDER_BYTES_PER_RECORD: u64 = size_of::<super::reorder::Pending>() as u64;

/// How to import a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportOptions {
    pub format: TraceFormat,
    /// Keep only this device (MSR `host_disk` e.g. `hm_0`, SYSTOR LUN, SPC ASU,
    /// DiskSim device, Tencent VolumeID, blkparse `maj,min`, fio file name).
    /// Records of other devices are counted in the report. With a device
    /// selected, `device_mapping` does not apply.
    pub device: Option<String>,
    pub device_mapping: DeviceMapping,
    /// Capacity of the simulated drive; must be > 0.
    pub drive_capacity_bytes: u64,
    pub out_of_range: OutOfRange,
    /// Skip malformed lines (counted, first few reported) instead of stopping.
    pub skip_bad_lines: bool,
    /// Data pattern given to every write (traces do not record contents).
    pub data_pattern: DataPattern,
    /// Most records held back to sort nearly-sorted input; 0 = input must be sorted.
    pub reorder_window_records: usize,
    pub blkparse_event: BlkparseEvent,
    /// What the import may hold at most (the reorder window's records);
    /// a replay sets what the simulator's limit leaves beside the drive.
    pub memory_limit_bytes: u64,
}

impl ImportOptions {
    /// Defaults: auto-detected format, all devices merged, fold, stop at the first
    /// bad line, incompressible writes, a reorder window of
    /// [`DEFAULT_REORDER_WINDOW_RECORDS`], blkparse `D` events.
    pub fn new(drive_capacity_bytes: u64) -> ImportOptions {
        ImportOptions {
            format: TraceFormat::Auto,
            device: None,
            device_mapping: DeviceMapping::Merge,
            drive_capacity_bytes,
            out_of_range: OutOfRange::Fold,
            skip_bad_lines: false,
            data_pattern: DataPattern::Incompressible,
            reorder_window_records: DEFAULT_REORDER_WINDOW_RECORDS,
            blkparse_event: BlkparseEvent::Issue,
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
        }
    }

    pub(super) fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.drive_capacity_bytes == 0 {
            return Err(("drive_capacity_bytes", "must be > 0".into()));
        }
        let window_bytes = (self.reorder_window_records as u64).saturating_mul(REORDER_BYTES_PER_RECORD);
        if window_bytes > self.memory_limit_bytes {
            return Err((
                "reorder_window_records",
                format!(
                    "{} records of {REORDER_BYTES_PER_RECORD} B each ({window_bytes} B) is more than the memory limit of {} B allows; use a smaller window (the default {DEFAULT_REORDER_WINDOW_RECORDS} fits every sample trace) or raise the limit (memory_limit_bytes / --memory-limit)",
                    self.reorder_window_records, self.memory_limit_bytes
                ),
            ));
        }
        if let DeviceMapping::Concatenate { device_region_bytes } = self.device_mapping {
            if device_region_bytes == 0 {
                return Err(("device_region_bytes", "must be > 0 to concatenate devices".into()));
            }
        }
        Ok(())
    }
}

/// The keys of [`ImportOptions::from_json`].
pub const IMPORT_OPTION_KEYS: &[&str] = &[
    "format",
    "device",
    "device_mapping",
    "device_region_bytes",
    "out_of_range",
    "skip_bad_lines",
    "capacity_bytes",
    "data_pattern",
    "reorder_window_records",
    "blkparse_event",
];

impl ImportOptions {
    /// Import options from plain data: `capacity_bytes` (or
    /// `default_capacity_bytes`), `format`, `device`, `device_mapping`
    /// (merge | concatenate), `device_region_bytes`, `out_of_range` (fold |
    /// reject), `skip_bad_lines`, `data_pattern`, `reorder_window_records`,
    /// `blkparse_event` (D | Q). Keys outside `allowed` are refused; an error
    /// names the option.
    pub fn from_json(o: &Map<String, Value>, allowed: &[&str], default_capacity_bytes: Option<u64>) -> crate::Result<ImportOptions> {
        known_keys(o, allowed, "trace option")?;
        let capacity = match (get(o, "capacity_bytes"), default_capacity_bytes) {
            (Some(v), _) => parse_bytes("capacity_bytes", v, 0)?,
            (None, Some(c)) => c,
            (None, None) => return Err(werr("capacity_bytes", "missing: the capacity of the drive the trace is placed on")),
        };
        if capacity == 0 {
            return Err(werr("capacity_bytes", "must be > 0"));
        }
        let mut opts = ImportOptions::new(capacity);
        if let Some(f) = get(o, "format") {
            let s = f.as_str().unwrap_or_default();
            opts.format = s.parse().map_err(|m: String| werr("format", m))?;
        }
        if let Some(d) = get(o, "device") {
            opts.device = Some(match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        match get(o, "device_mapping").map(|v| v.as_str().unwrap_or("").to_ascii_lowercase()) {
            None => {}
            Some(m) if m == "merge" => opts.device_mapping = DeviceMapping::Merge,
            Some(m) if m == "concatenate" => {
                let r =
                    get(o, "device_region_bytes").ok_or_else(|| werr("device_region_bytes", "needed with device_mapping = concatenate"))?;
                opts.device_mapping = DeviceMapping::Concatenate { device_region_bytes: parse_bytes("device_region_bytes", r, capacity)? };
            }
            Some(m) => return Err(werr("device_mapping", format!("'{m}' is not allowed; use merge or concatenate"))),
        }
        match get(o, "out_of_range").map(|v| v.as_str().unwrap_or("").to_ascii_lowercase()) {
            None => {}
            Some(m) if m == "fold" => opts.out_of_range = OutOfRange::Fold,
            Some(m) if m == "reject" => opts.out_of_range = OutOfRange::Reject,
            Some(m) => return Err(werr("out_of_range", format!("'{m}' is not allowed; use fold or reject"))),
        }
        if let Some(v) = get(o, "skip_bad_lines") {
            opts.skip_bad_lines = v.as_bool().ok_or_else(|| werr("skip_bad_lines", "expected true or false"))?;
        }
        if let Some(v) = get(o, "data_pattern") {
            opts.data_pattern = DataPattern::parse(v.as_str().unwrap_or("")).map_err(|m| werr("data_pattern", m))?;
        }
        if let Some(v) = get(o, "reorder_window_records") {
            opts.reorder_window_records =
                v.as_u64().ok_or_else(|| werr("reorder_window_records", "expected a whole number of records"))? as usize;
        }
        match get(o, "blkparse_event").map(|v| v.as_str().unwrap_or("").to_ascii_uppercase()) {
            None => {}
            Some(m) if m == "D" => opts.blkparse_event = BlkparseEvent::Issue,
            Some(m) if m == "Q" => opts.blkparse_event = BlkparseEvent::Queue,
            Some(m) => return Err(werr("blkparse_event", format!("'{m}' is not allowed; use D (issue) or Q (queue)"))),
        }
        Ok(opts)
    }
}
