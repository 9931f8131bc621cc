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
        let dir = std::env::temp_dir().join(format!(
            "ssdlab-import-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
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
    ImportOptions {
        format,
        ..ImportOptions::new(TIB)
    }
}

/// Import everything; panic on any error.
fn import(path: &Path, opts: &ImportOptions) -> (Vec<TraceRecord>, ImportReport) {
    let mut reader = open(path, opts).unwrap_or_else(|e| panic!("open: {e}"));
    let records: Vec<TraceRecord> = (&mut reader)
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect();
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
    records
        .iter()
        .map(|r| (r.time_ns, r.op, r.offset_bytes, r.length_bytes))
        .collect()
}

/// One small trace per format, each with 3 records: read 4 KiB at 8 KiB (t=0),
/// write 8 KiB at 1 MiB (t=+1.5 s), and a third per-format record.
const SAMPLES: [(TraceFormat, &str, &str); 7] = [
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
        assert_eq!(
            s[1],
            (1_500_000_000, TraceOp::Write, 1 << 20, 8192),
            "{format}"
        );
        assert_eq!(
            (s[2].1, s[2].2, s[2].3),
            (TraceOp::Read, 0, 512),
            "{format}"
        );
        assert!(
            s[2].0 == 1_500_000_000 || s[2].0 == 1_500_000_100,
            "{format}: {s:?}"
        );
        assert_eq!(report.devices_seen, 1, "{format}");
        assert!(report.time_origin_ns.is_some());
        assert!(report.has_timestamps, "{format}");
        assert_eq!(
            report.has_latency,
            matches!(format, TraceFormat::Msr | TraceFormat::Systor17)
        );
        if report.has_latency {
            assert_eq!(records[0].recorded_latency_ns, 283_300, "{format}");
        }
        assert!(records
            .iter()
            .all(|r| r.iodepth == 0 && r.data_pattern == DataPattern::Incompressible));
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
    let path = dir.file(
        "v2.log",
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdb write 0 4096\n",
    );
    assert_eq!(
        import(&path, &opts(TraceFormat::Auto)).1.format,
        TraceFormat::FioIolog
    );
    assert_eq!("mqsim".parse::<TraceFormat>(), Ok(TraceFormat::Disksim));
    assert_eq!(
        "FIO-IOLOG".parse::<TraceFormat>(),
        Ok(TraceFormat::FioIolog)
    );
    assert!("csv"
        .parse::<TraceFormat>()
        .unwrap_err()
        .contains("allowed"));
}

#[test]
fn undetectable_input_lists_every_format_and_why_it_does_not_fit() {
    let dir = TempDir::new();
    // The SSDsim `fin1` layout: tab-separated, not one of the supported formats.
    let path = dir.file(
        "fin1",
        "0\t0\t0\t0\tWrite\t303552\t16\t1\n1\t26214000\t0\t0\tWrite\t303568\t16\t1\n",
    );
    let e = import_error(&path, &opts(TraceFormat::Auto));
    assert_eq!((e.field.as_str(), e.line), ("format", 0));
    for f in TraceFormat::CONCRETE {
        assert!(
            e.message.contains(&format!("{f}: ")),
            "{f} missing in: {}",
            e.message
        );
    }
    assert!(e.message.contains("give the format explicitly"));
    let empty = dir.file("empty.csv", "");
    assert!(import_error(&empty, &opts(TraceFormat::Auto))
        .message
        .contains("no format fits"));
    // With the format given, an empty file is an empty trace.
    assert_eq!(import(&empty, &opts(TraceFormat::Msr)).0.len(), 0);
}

#[test]
fn ambiguous_detection_names_the_candidates() {
    let verdicts = vec![
        (
            TraceFormat::Msr,
            Err("line 1, field 'Type': no".to_string()),
        ),
        (TraceFormat::Umass, Ok(())),
        (TraceFormat::Tencent, Ok(())),
    ];
    let e = detect::choose("t.csv", 5, verdicts).unwrap_err();
    assert_eq!(e.field, "format");
    assert!(
        e.message.contains("ambiguous") && e.message.contains("umass, tencent"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("msr"));
    assert_eq!(
        detect::choose(
            "t.csv",
            5,
            vec![
                (TraceFormat::Msr, Err("x".into())),
                (TraceFormat::Umass, Ok(()))
            ]
        ),
        Ok(TraceFormat::Umass)
    );
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
    assert!(
        e.message.contains("'Wrote'") && e.message.contains("Read or Write"),
        "{}",
        e.message
    );
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
    let (records, report) = import(
        &path,
        &ImportOptions {
            skip_bad_lines: true,
            ..opts(TraceFormat::Systor17)
        },
    );
    assert_eq!(records.len(), 20);
    assert_eq!(report.skipped_lines, 21); // 20 bad IOType + 1 zero-length
    assert_eq!(report.non_io_lines, 2); // header + blank line
    assert_eq!(report.skipped_examples.len(), MAX_SKIPPED_EXAMPLES);
    assert_eq!(report.skipped_examples[0].0, 3);
    assert_eq!(report.skipped_examples[1].0, 5);
    assert!(
        report.skipped_examples[0].1.contains("IOType")
            && report.skipped_examples[0].1.contains("'Q'")
    );
}

#[test]
fn a_zero_length_read_is_a_bad_line() {
    let dir = TempDir::new();
    let path = dir.file("z.ascii", "0 0 8 8 1\n10 0 8 0 1\n");
    let e = import_error(&path, &opts(TraceFormat::Disksim));
    assert_eq!((e.line, e.field.as_str()), (2, "size_sectors"));
}

#[test]
fn out_of_range_io_is_folded_or_rejected() {
    let dir = TempDir::new();
    // Capacity 1 MiB. Line 1 fits; line 2 starts past the end; line 3 straddles
    // the end at a 512-byte-aligned offset; line 4 fits exactly at the end.
    let path = dir.file(
        "f.csv",
        "0,0,4096,w,0\n0,2056,4096,w,1\n0,2047,4096,r,2\n0,2040,4096,r,3\n",
    );
    let capacity = 1 << 20;
    let fold = ImportOptions {
        drive_capacity_bytes: capacity,
        ..opts(TraceFormat::Umass)
    };
    let (records, report) = import(&path, &fold);
    let offsets: Vec<u64> = records.iter().map(|r| r.offset_bytes).collect();
    // 2056*512 = 1 MiB + 4096 -> 4096; 2047*512 = 1 MiB - 512 -> moved down to
    // 1 MiB - 4096 (still 512-aligned); 2040*512 = 1 MiB - 4096 fits.
    assert_eq!(offsets, [0, 4096, capacity - 4096, capacity - 4096]);
    assert_eq!(report.folded, 2);
    assert!(records
        .iter()
        .all(|r| r.offset_bytes + r.length_bytes <= capacity));

    let reject = ImportOptions {
        out_of_range: OutOfRange::Reject,
        ..fold.clone()
    };
    let e = import_error(&path, &reject);
    assert_eq!((e.line, e.field.as_str()), (2, "LBA"));
    assert!(
        e.message.contains("reject") && e.message.contains("1048576"),
        "{}",
        e.message
    );

    // An I/O longer than the drive cannot be folded.
    let tiny = ImportOptions {
        drive_capacity_bytes: 2048,
        ..fold
    };
    let e = import_error(&path, &tiny);
    assert_eq!((e.line, e.field.as_str()), (1, "Size"));
}

#[test]
fn fold_keeps_alignment_up_to_4k() {
    let names = &umass::NAMES;
    let cap = 10_000_000;
    for offset in [12_345_678u64, 40_000_000, 99_999_488, 10_000_000] {
        let (folded, did) = fit(offset, 4096, cap, OutOfRange::Fold, "drive", names)
            .ok()
            .unwrap();
        assert!(did && folded + 4096 <= cap);
        let align = (1u64 << offset.trailing_zeros()).min(4096);
        assert_eq!(folded % align, 0, "offset {offset} -> {folded}");
    }
    assert_eq!(
        fit(cap - 4096, 4096, cap, OutOfRange::Reject, "drive", names).ok(),
        Some((cap - 4096, false))
    );
}

#[test]
fn one_device_can_be_selected_and_the_others_are_counted() {
    let dir = TempDir::new();
    let path = dir.file(
        "luns.csv",
        "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.001,R,0,0,4096\n1.1,0.001,W,3,4096,4096\n1.2,0.001,R,3,8192,4096\n1.3,0.001,R,0,0,4096\n",
    );
    let one = ImportOptions {
        device: Some("3".into()),
        ..opts(TraceFormat::Systor17)
    };
    let (records, report) = import(&path, &one);
    assert_eq!(
        summary(&records),
        [
            (0, TraceOp::Write, 4096, 4096),
            (100_000_000, TraceOp::Read, 8192, 4096)
        ]
    );
    assert_eq!((report.filtered_other_devices, report.devices_seen), (2, 2));
    assert_eq!(report.device_names, ["0", "3"]);

    let missing = ImportOptions {
        device: Some("7".into()),
        ..opts(TraceFormat::Systor17)
    };
    let e = import_error(&path, &missing);
    assert_eq!(e.field, "device");
    assert!(
        e.message.contains("'7'") && e.message.contains("0, 3"),
        "{}",
        e.message
    );

    let not_a_lun = ImportOptions {
        device: Some("sda".into()),
        ..opts(TraceFormat::Systor17)
    };
    let e = import_error(&path, &not_a_lun);
    assert_eq!((e.field.as_str(), e.line), ("device", 0));
    assert!(e.message.contains("LUN"), "{}", e.message);
}

#[test]
fn msr_devices_are_selected_as_host_underscore_disk() {
    let dir = TempDir::new();
    let path = dir.file(
        "msr.csv",
        "128166385295514663,hm,0,Read,0,4096,1\n128166385295514664,hm,1,Read,0,4096,1\n128166385295514665,src1,0,Write,0,4096,1\n",
    );
    for (device, expected) in [("hm_1", 1), ("src1_0", 1), ("hm_0", 1)] {
        let o = ImportOptions {
            device: Some(device.into()),
            ..opts(TraceFormat::Msr)
        };
        let (records, report) = import(&path, &o);
        assert_eq!(
            (records.len(), report.filtered_other_devices),
            (expected, 2),
            "{device}"
        );
    }
}

#[test]
fn concatenation_gives_each_device_its_own_region() {
    let dir = TempDir::new();
    // Devices in order of appearance: 5 -> region 0, 2 -> region 1.
    let path = dir.file(
        "multi.ascii",
        "0 5 8 8 1\n10 2 8 8 0\n20 5 16 8 1\n30 2 2056 8 1\n",
    );
    let region = 1u64 << 20;
    let o = ImportOptions {
        device_mapping: DeviceMapping::Concatenate {
            device_region_bytes: region,
        },
        ..opts(TraceFormat::Disksim)
    };
    let (records, report) = import(&path, &o);
    let offsets: Vec<u64> = records.iter().map(|r| r.offset_bytes).collect();
    // Line 4: sector 2056 = 1 MiB + 4 KiB, past its region: folded to 4 KiB in region 1.
    assert_eq!(offsets, [4096, region + 4096, 8192, region + 4096]);
    assert_eq!(report.folded, 1);
    assert_eq!(report.device_names, ["5", "2"]);
    let merged = import(&path, &opts(TraceFormat::Disksim)).0;
    assert_eq!(
        merged.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(),
        [4096, 4096, 8192, 2056 * 512]
    );
    let bad = ImportOptions {
        device_mapping: DeviceMapping::Concatenate {
            device_region_bytes: 0,
        },
        ..o
    };
    assert_eq!(import_error(&path, &bad).field, "device_region_bytes");
    let zero = ImportOptions {
        drive_capacity_bytes: 0,
        ..opts(TraceFormat::Disksim)
    };
    assert_eq!(import_error(&path, &zero).field, "drive_capacity_bytes");
}

#[test]
fn unsorted_rows_are_sorted_within_the_window() {
    let dir = TempDir::new();
    let path = dir.file(
        "u.csv",
        "Timestamp,Response,IOType,LUN,Offset,Size\n10.5,0.001,R,0,0,512\n10.2,0.001,R,0,512,512\n10.9,0.001,W,0,1024,512\n10.1,0.001,R,0,1536,512\n11.0,0.001,R,0,2048,512\n",
    );
    let (records, report) = import(&path, &opts(TraceFormat::Systor17));
    assert_eq!(
        records
            .iter()
            .map(|r| (r.time_ns, r.offset_bytes))
            .collect::<Vec<_>>(),
        [
            (0, 1536),
            (100_000_000, 512),
            (400_000_000, 0),
            (800_000_000, 1024),
            (900_000_000, 2048)
        ]
    );
    assert_eq!(report.reordered_records, 2);
    assert_eq!(report.time_origin_ns, Some(10_100_000_000));
    // A window of 1 record cannot move line 5 (t=10.1) before t=10.2, already passed on.
    let small = ImportOptions {
        reorder_window_records: 1,
        ..opts(TraceFormat::Systor17)
    };
    let e = import_error(&path, &small);
    assert_eq!((e.line, e.field.as_str()), (5, "Timestamp"));
    assert!(
        e.message.contains("reorder_window_records = 1"),
        "{}",
        e.message
    );
    let skip = ImportOptions {
        skip_bad_lines: true,
        ..small
    };
    let (records, report) = import(&path, &skip);
    assert_eq!((records.len(), report.skipped_lines), (4, 1));
}

#[test]
fn blkparse_takes_d_events_by_default_and_q_on_request() {
    let (_, _, text) = SAMPLES[5];
    let dir = TempDir::new();
    let path = dir.file("blk.txt", text);
    let (records, report) = import(&path, &opts(TraceFormat::Blkparse));
    assert_eq!(records.len(), 3);
    // Q, C, blank line and 2 summary lines are not I/O.
    assert_eq!(report.non_io_lines, 5);
    assert_eq!(report.device_names, ["8,0"]);
    let q = ImportOptions {
        blkparse_event: BlkparseEvent::Queue,
        ..opts(TraceFormat::Blkparse)
    };
    let (records, report) = import(&path, &q);
    assert_eq!(summary(&records), [(0, TraceOp::Read, 8192, 4096)]);
    assert_eq!(report.non_io_lines, 7);
}

#[test]
fn fio_v2_has_no_timestamps_and_says_so() {
    let dir = TempDir::new();
    let path = dir.file(
        "v2.log",
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdc read 4096 4096\n/dev/sdb wait 1000 0\n/dev/sdb trim 0 4096\n/dev/sdb sync 0 0\n/dev/sdb close\n",
    );
    let (records, report) = import(&path, &opts(TraceFormat::FioIolog));
    assert!(!report.has_timestamps);
    assert_eq!(
        summary(&records),
        [
            (0, TraceOp::Write, 0, 4096),
            (0, TraceOp::Read, 4096, 4096),
            (0, TraceOp::Trim, 0, 4096),
            (0, TraceOp::Flush, 0, 0)
        ]
    );
    assert_eq!(report.non_io_lines, 6); // header, 2 add, open, wait, close
    let sdc = ImportOptions {
        device: Some("/dev/sdc".into()),
        ..opts(TraceFormat::FioIolog)
    };
    assert_eq!(import(&path, &sdc).0.len(), 1);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut e = ::bzip2::write::BzEncoder::new(Vec::new(), ::bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut std::io::BufReader::new(bytes), &mut out).unwrap();
    out
}

#[test]
fn compressed_files_give_the_same_records() {
    let dir = TempDir::new();
    let mut text = String::new();
    for i in 0..5000u64 {
        text.push_str(&format!("{} {} {} 8 {}\n", i * 1000, i % 3, i * 8, i % 2));
    }
    let plain = dir.file("t.ascii", &text);
    let expected = import(&plain, &opts(TraceFormat::Auto)).0;
    assert_eq!(expected.len(), 5000);
    // Two gzip members back to back are one stream (as `cat a.gz b.gz`).
    let half = text.len() / 2;
    let cut = text[..half].rfind('\n').unwrap() + 1;
    let mut two_members = gzip(&text.as_bytes()[..cut]);
    two_members.extend(gzip(&text.as_bytes()[cut..]));
    for (name, bytes) in [
        ("t.ascii.gz", gzip(text.as_bytes())),
        ("t2.ascii.gz", two_members),
        ("t.ascii.bz2", bzip2(text.as_bytes())),
        ("t.ascii.xz", xz(text.as_bytes())),
        // Magic bytes decide when the name does not say.
        ("t.gz.data", gzip(text.as_bytes())),
    ] {
        let path = dir.file(name, bytes);
        let (records, report) = import(&path, &opts(TraceFormat::Auto));
        assert_eq!(report.format, TraceFormat::Disksim, "{name}");
        assert_eq!(records, expected, "{name}");
    }
}

#[test]
fn a_compression_extension_without_its_magic_is_an_error() {
    let dir = TempDir::new();
    let path = dir.file("t.csv.gz", "0,8,4096,r,0\n");
    let e = open(&path, &opts(TraceFormat::Umass)).err().expect("error");
    assert_eq!(e.field, "file");
    assert!(
        e.message.contains("gzip") && e.message.contains("uncompressed"),
        "{}",
        e.message
    );
    let truncated = gzip(b"0,8,4096,r,0\n0,8,4096,r,1\n");
    let path = dir.file("cut.csv.gz", &truncated[..truncated.len() - 6]);
    let e = import_error(&path, &opts(TraceFormat::Umass));
    assert_eq!(e.field, "file");
    assert!(e.message.contains("read error"), "{}", e.message);
}

#[test]
fn binary_or_overlong_lines_are_bad_lines() {
    let dir = TempDir::new();
    let mut bytes = b"0,8,4096,r,0\n".to_vec();
    bytes.extend([0xff, 0xfe, b'\n']);
    bytes.extend(vec![b'7'; source::MAX_LINE_BYTES + 10]);
    bytes.extend(b"\n0,8,4096,w,1\r\n");
    let path = dir.file("bin.csv", &bytes);
    let e = import_error(&path, &opts(TraceFormat::Umass));
    assert_eq!((e.line, e.field.as_str()), (2, "line"));
    assert!(e.message.contains("UTF-8"));
    let skip = ImportOptions {
        skip_bad_lines: true,
        ..opts(TraceFormat::Umass)
    };
    let (records, report) = import(&path, &skip);
    assert_eq!(
        summary(&records),
        [
            (0, TraceOp::Read, 4096, 4096),
            (1_000_000_000, TraceOp::Write, 4096, 4096)
        ]
    );
    assert_eq!(report.skipped_lines, 2);
    assert_eq!(report.skipped_examples[1].0, 3);
    assert!(report.skipped_examples[1].1.contains("longer than"));
}

#[test]
fn data_pattern_is_applied_and_iodepth_can_be_inferred() {
    let (_, name, text) = SAMPLES[0];
    let dir = TempDir::new();
    let path = dir.file(name, text);
    let o = ImportOptions {
        data_pattern: DataPattern::Compressible,
        ..opts(TraceFormat::Msr)
    };
    let records: Vec<TraceRecord> = infer_iodepth(open(&path, &o).unwrap())
        .map(Result::unwrap)
        .collect();
    assert_eq!(records[1].data_pattern, DataPattern::Compressible);
    // Line 3 is issued 100 ns after line 2 whose response time is 10 us.
    assert_eq!(
        records.iter().map(|r| r.iodepth).collect::<Vec<_>>(),
        [1, 1, 2]
    );
}

#[test]
fn a_zero_window_accepts_sorted_input_only() {
    let sorted = ImportOptions {
        reorder_window_records: 0,
        ..opts(TraceFormat::Umass)
    };
    let dir = TempDir::new();
    let path = dir.file("s.csv", "0,8,4096,r,1\n0,8,4096,r,1\n0,8,4096,r,2\n");
    assert_eq!(import(&path, &sorted).0.len(), 3);
    let path = dir.file("u.csv", "0,8,4096,r,1\n0,8,4096,r,2\n0,8,4096,r,1.5\n");
    assert_eq!(import_error(&path, &sorted).line, 3);
}

#[test]
fn a_reader_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<TraceReader>();
}
