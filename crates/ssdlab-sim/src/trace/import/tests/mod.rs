//! Whole-pipeline tests on small inline traces written to temporary files.
//! (Per-line parsing is tested in each format's module; the published sample
//! traces in `tests/trace_import.rs`.)

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir =
            std::env::temp_dir().join(format!("ssdlab-import-test-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const TIB: u64 = 1 << 40;

fn opts(format: TraceFormat) -> ImportOptions {
    ImportOptions { format, ..ImportOptions::new(TIB) }
}

/// Import everything; panic on any error.
fn import(path: &Path, opts: &ImportOptions) -> (Vec<TraceRecord>, ImportReport) {
    let mut reader = open(path, opts).unwrap_or_else(|e| panic!("open: {e}"));
    let records: Vec<TraceRecord> = (&mut reader).map(|r| r.unwrap_or_else(|e| panic!("{e}"))).collect();
    let report = reader.report().clone();
    assert_eq!(
        report.lines,
        report.records + report.non_io_lines + report.filtered_other_devices + report.skipped_lines,
        "every line is accounted for: {report:?}"
    );
    assert_eq!(report.records, records.len() as u64);
    (records, report)
}

/// Import until the first error, which must come.
fn import_error(path: &Path, opts: &ImportOptions) -> TraceError {
    match open(path, opts) {
        Err(e) => e,
        Ok(reader) => {
            let mut errors = reader.filter_map(Result::err);
            let e = errors.next().expect("an error");
            assert!(errors.next().is_none(), "the reader stops after an error");
            e
        }
    }
}

fn summary(records: &[TraceRecord]) -> Vec<(u64, TraceOp, u64, u64)> {
    records.iter().map(|r| (r.time_ns, r.op, r.offset_bytes, r.length_bytes)).collect()
}

/// One small trace per format, each with 3 records: read 4 KiB at 8 KiB (t=0),
/// write 8 KiB at 1 MiB (t=+1.5 s), and a third per-format record.
const SAMPLES: [(TraceFormat, &str, &str); 8] = [
    (
        TraceFormat::Msr,
        "msr.csv",
        "128166385295514663,hm,0,Read,8192,4096,2833\n128166385310514663,hm,0,Write,1048576,8192,100\n128166385310514664,hm,0,Read,0,512,7\n",
    ),
    (
        TraceFormat::Systor17,
        "systor.csv",
        "Timestamp,Response,IOType,LUN,Offset,Size\n1455591804.000000000,0.000283300,R,0,8192,4096\n1455591805.500000000,0.000010000,W,0,1048576,8192\n1455591805.500000100,0.000000700,R,0,0,512\n",
    ),
    (TraceFormat::Umass, "spc.csv", "0,16,4096,r,10.000000\n0,2048,8192,W,11.5\n0,0,512,R,11.5000001\n"),
    (TraceFormat::Disksim, "trace.ascii", "1000 0 16 8 1\n1500001000 0 2048 16 0\n1500001100.4 0 0 1 1\n"),
    (TraceFormat::Tencent, "cbs.csv", "1538323199,16,8,0,1058\n1538323200.5,2048,16,1,1058\n1538323200.5000001,0,1,0,1058\n"),
    (
        TraceFormat::Blkparse,
        "blk.txt",
        "  8,0    3        1     0.000000000  1234  Q   R 16 + 8 [fio]\n  8,0    3        2     0.000001000  1234  D   R 16 + 8 [fio]\n  8,0    3        3     1.500001000  1234  D   W 2048 + 16 [fio]\n  8,0    3        4     1.500001100  1234  D   R 0 + 1 [fio]\n  8,0    3        5     1.600000000     0  C   R 0 + 1 [0]\n\nCPU3 (8,0):\n Reads Queued:           1,        4KiB\n",
    ),
    (
        TraceFormat::FioIolog,
        "fio.log",
        "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n5 /dev/sdb read 8192 4096\n1500005 /dev/sdb write 1048576 8192\n1500005 /dev/sdb read 0 512\n1600000 /dev/sdb close\n",
    ),
    (
        TraceFormat::Csv,
        "t.csv",
        "time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern\n7,read,8192,4096,0,283300,incompressible\n1500000007,write,1048576,8192,0,10000,incompressible\n1500000107,read,0,512,0,700,incompressible\n",
    ),
];

#[test]
fn every_format_imports_its_sample_with_rebased_times() {
    for (format, name, text) in SAMPLES {
        let dir = TempDir::new();
        let path = dir.file(name, text);
        let (records, report) = import(&path, &opts(format));
        assert_eq!(report.format, format);
        let s = summary(&records);
        assert_eq!(s.len(), 3, "{format}: {s:?}");
        assert_eq!(s[0], (0, TraceOp::Read, 8192, 4096), "{format}");
        assert_eq!(s[1], (1_500_000_000, TraceOp::Write, 1 << 20, 8192), "{format}");
        assert_eq!((s[2].1, s[2].2, s[2].3), (TraceOp::Read, 0, 512), "{format}");
        assert!(s[2].0 == 1_500_000_000 || s[2].0 == 1_500_000_100, "{format}: {s:?}");
        assert_eq!(report.devices_seen, 1, "{format}");
        assert!(report.time_origin_ns.is_some());
        assert!(report.has_timestamps, "{format}");
        assert_eq!(report.has_latency, matches!(format, TraceFormat::Msr | TraceFormat::Systor17 | TraceFormat::Csv));
        if report.has_latency {
            assert_eq!(records[0].recorded_latency_ns, 283_300, "{format}");
        }
        assert!(records.iter().all(|r| r.iodepth == 0 && r.data_pattern == DataPattern::Incompressible));
    }
}

#[test]
fn auto_detection_recognises_every_format() {
    for (format, name, text) in SAMPLES {
        let dir = TempDir::new();
        let path = dir.file(name, text);
        let (_, report) = import(&path, &opts(TraceFormat::Auto));
        assert_eq!(report.format, format, "{name}");
    }
    // The fio v2 and MQSim spellings too.
    let dir = TempDir::new();
    let path = dir.file("v2.log", "fio version 2 iolog\n/dev/sdb add\n/dev/sdb write 0 4096\n");
    assert_eq!(import(&path, &opts(TraceFormat::Auto)).1.format, TraceFormat::FioIolog);
    assert_eq!("mqsim".parse::<TraceFormat>(), Ok(TraceFormat::Disksim));
    assert_eq!("FIO-IOLOG".parse::<TraceFormat>(), Ok(TraceFormat::FioIolog));
    assert!("xyz".parse::<TraceFormat>().unwrap_err().contains("allowed"));
}

#[test]
fn undetectable_input_lists_every_format_and_why_it_does_not_fit() {
    let dir = TempDir::new();
    // The SSDsim `fin1` layout: tab-separated, not one of the supported formats.
    let path = dir.file("fin1", "0\t0\t0\t0\tWrite\t303552\t16\t1\n1\t26214000\t0\t0\tWrite\t303568\t16\t1\n");
    let e = import_error(&path, &opts(TraceFormat::Auto));
    assert_eq!((e.field.as_str(), e.line), ("format", 0));
    for f in TraceFormat::CONCRETE {
        assert!(e.message.contains(&format!("{f}: ")), "{f} missing in: {}", e.message);
    }
    assert!(e.message.contains("give the format explicitly"));
    let empty = dir.file("empty.csv", "");
    assert!(import_error(&empty, &opts(TraceFormat::Auto)).message.contains("no format fits"));
    // With the format given, an empty file is an empty trace.
    assert_eq!(import(&empty, &opts(TraceFormat::Msr)).0.len(), 0);
}

#[test]
fn ambiguous_detection_names_the_candidates() {
    let verdicts =
        vec![(TraceFormat::Msr, Err("line 1, field 'Type': no".to_string())), (TraceFormat::Umass, Ok(())), (TraceFormat::Tencent, Ok(()))];
    let e = detect::choose("t.csv", 5, verdicts).unwrap_err();
    assert_eq!(e.field, "format");
    assert!(e.message.contains("ambiguous") && e.message.contains("umass, tencent"), "{}", e.message);
    assert!(!e.message.contains("msr"));
    assert_eq!(detect::choose("t.csv", 5, vec![(TraceFormat::Msr, Err("x".into())), (TraceFormat::Umass, Ok(()))]), Ok(TraceFormat::Umass));
}

#[test]
fn a_malformed_line_names_file_line_and_field() {
    let dir = TempDir::new();
    let path = dir.file(
        "hm_0.csv",
        "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,0,Write,11855351808,512,2617\n128166385295515175,hm,0,Wrote,5548077056,4096,2320\n",
    );
    let e = import_error(&path, &opts(TraceFormat::Msr));
    assert_eq!(e.file, path.display().to_string());
    assert_eq!((e.line, e.field.as_str()), (3, "Type"));
    assert!(e.message.contains("'Wrote'") && e.message.contains("Read or Write"), "{}", e.message);
    let shown = e.to_string();
    assert!(shown.contains("hm_0.csv:3: field 'Type'"), "{shown}");
}

#[test]
fn skipped_lines_are_counted_with_line_numbers_and_reasons() {
    let dir = TempDir::new();
    let mut text = String::from("Timestamp,Response,IOType,LUN,Offset,Size\n");
    for i in 0..40u64 {
        if i % 2 == 1 {
            text.push_str(&format!("1455591804.{i:09},0.001,Q,0,4096,4096\n"));
        } else {
            text.push_str(&format!("1455591804.{i:09},0.001,R,0,4096,4096\n"));
        }
    }
    text.push_str("1455591805,0.001,W,0,4096,0\n\n");
    let path = dir.file("s.csv", text);
    let strict = import_error(&path, &opts(TraceFormat::Systor17));
    assert_eq!((strict.line, strict.field.as_str()), (3, "IOType"));
    let (records, report) = import(&path, &ImportOptions { skip_bad_lines: true, ..opts(TraceFormat::Systor17) });
    assert_eq!(records.len(), 20);
    assert_eq!(report.skipped_lines, 21); // 20 bad IOType + 1 zero-length
    assert_eq!(report.non_io_lines, 2); // header + blank line
    assert_eq!(report.skipped_examples.len(), MAX_SKIPPED_EXAMPLES);
    assert_eq!(report.skipped_examples[0].0, 3);
    assert_eq!(report.skipped_examples[1].0, 5);
    assert!(report.skipped_examples[0].1.contains("IOType") && report.skipped_examples[0].1.contains("'Q'"));
}

#[test]
fn a_zero_length_read_is_a_bad_line() {
    let dir = TempDir::new();
    let path = dir.file("z.ascii", "0 0 8 8 1\n10 0 8 0 1\n");
    let e = import_error(&path, &opts(TraceFormat::Disksim));
    assert_eq!((e.line, e.field.as_str()), (2, "size_sectors"));
}

mod placement;
mod sources;
