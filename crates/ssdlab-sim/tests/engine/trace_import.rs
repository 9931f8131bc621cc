//! The importers against the published sample traces in `tests/data/traces/`
//! at the repository's root (see its README.md). Every expected figure is
//! computed here, independently of the importer, by a few lines of plain std
//! parsing of the raw file (after decompressing it with flate2 / bzip2
//! directly), and checked again against the counts the README states.
//!
//! The directory is `../../tests/data/traces` from this crate. A missing
//! directory fails the tests: it does not skip them.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use ssdlab_sim::trace::import::{open, ImportOptions, ImportReport, TraceFormat};
use ssdlab_sim::trace::{TraceOp, TraceRecord};

fn traces_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces");
    assert!(dir.join("README.md").is_file(), "sample traces not found at {}", dir.display());
    dir
}

fn sample(rel: &str) -> PathBuf {
    let path = traces_dir().join(rel);
    assert!(path.is_file(), "missing sample trace {}", path.display());
    path
}

/// The raw text of a sample, decompressed here by the compression crates directly.
fn raw_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let mut text = String::new();
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => {
            flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text).unwrap();
        }
        Some("bz2") => {
            bzip2::read::BzDecoder::new(&bytes[..]).read_to_string(&mut text).unwrap();
        }
        _ => text = String::from_utf8(bytes).unwrap(),
    }
    text
}

/// Figures a test computes from the raw file, and the same from imported records.
#[derive(Debug, Default, PartialEq, Eq)]
struct Figures {
    records: u64,
    reads: u64,
    writes: u64,
    read_bytes: u64,
    write_bytes: u64,
    /// After rebasing: the first record is at 0, the last at (max - min) of the raw times.
    first_time_ns: u64,
    last_time_ns: u64,
    latency_sum_ns: u64,
}

/// One raw row as a test reads it: (time in ns in the file's clock, is_read, bytes, latency ns).
type Row = (u64, bool, u64, u64);

fn figures_of_rows(rows: &[Row]) -> Figures {
    let min = rows.iter().map(|r| r.0).min().unwrap();
    let max = rows.iter().map(|r| r.0).max().unwrap();
    let mut f = Figures { records: rows.len() as u64, first_time_ns: 0, last_time_ns: max - min, ..Figures::default() };
    for &(_, is_read, bytes, latency) in rows {
        if is_read {
            f.reads += 1;
            f.read_bytes += bytes;
        } else {
            f.writes += 1;
            f.write_bytes += bytes;
        }
        f.latency_sum_ns += latency;
    }
    f
}

fn figures_of_records(records: &[TraceRecord]) -> Figures {
    let mut f = Figures {
        records: records.len() as u64,
        first_time_ns: records.first().map_or(0, |r| r.time_ns),
        last_time_ns: records.last().map_or(0, |r| r.time_ns),
        ..Figures::default()
    };
    for r in records {
        match r.op {
            TraceOp::Read => {
                f.reads += 1;
                f.read_bytes += r.length_bytes;
            }
            TraceOp::Write => {
                f.writes += 1;
                f.write_bytes += r.length_bytes;
            }
            other => panic!("unexpected {other:?} in a read/write trace"),
        }
        f.latency_sum_ns += r.recorded_latency_ns;
    }
    f
}

/// Rows that come after a later-timestamped row in the file.
fn late_rows(rows: &[Row]) -> u64 {
    let mut max = 0;
    let mut late = 0;
    for (i, r) in rows.iter().enumerate() {
        if i > 0 && r.0 < max {
            late += 1;
        }
        max = max.max(r.0);
    }
    late
}

/// Decimal seconds to ns, written separately from the importer's parser.
fn seconds_ns(text: &str) -> u64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac = format!("{frac:0<9}");
    int.parse::<u64>().unwrap() * 1_000_000_000 + frac[..9].parse::<u64>().unwrap()
}

const PETABYTE: u64 = 1 << 50;

fn import(path: &Path, opts: &ImportOptions) -> (Vec<TraceRecord>, ImportReport) {
    let mut reader = open(path, opts).unwrap_or_else(|e| panic!("open: {e}"));
    let records: Vec<TraceRecord> = (&mut reader).map(|r| r.unwrap_or_else(|e| panic!("{e}"))).collect();
    let report = reader.report().clone();
    assert!(records.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "records in time order");
    assert_eq!(report.lines, report.records + report.non_io_lines + report.filtered_other_devices + report.skipped_lines);
    assert_eq!((report.skipped_lines, report.folded), (0, 0));
    (records, report)
}

/// Import with auto-detection and check it found `format`.
fn import_auto(path: &Path, format: TraceFormat) -> (Vec<TraceRecord>, ImportReport) {
    let (records, report) = import(path, &ImportOptions::new(PETABYTE));
    assert_eq!(report.format, format, "{}", path.display());
    (records, report)
}

#[test]
fn msr_cambridge_hm0_sample() {
    let path = sample("msr_cambridge_hm0_sample/msr-cambridge1-sample.csv");
    let rows: Vec<Row> = raw_text(&path)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse::<u64>().unwrap() * 100, f[3] == "Read", f[5].parse().unwrap(), f[6].parse::<u64>().unwrap() * 100)
        })
        .collect();
    let expected = figures_of_rows(&rows);
    // The README's figures: 1,000 requests, 508 R / 492 W, 127.2 s.
    assert_eq!((expected.records, expected.reads, expected.writes), (1000, 508, 492));
    assert_eq!(expected.last_time_ns / 100_000_000, 1272);

    let (records, report) = import_auto(&path, TraceFormat::Msr);
    assert_eq!(figures_of_records(&records), expected);
    assert!(report.has_latency && report.has_timestamps);
    assert_eq!(report.device_names, ["hm_0"]);

    // The README: the union of [issue, issue + ResponseTime] is 0.534 s.
    let mut busy_ns = 0;
    let mut covered_until_ns = 0;
    for r in &records {
        let end = r.time_ns + r.recorded_latency_ns;
        if end > covered_until_ns {
            busy_ns += end - r.time_ns.max(covered_until_ns);
            covered_until_ns = end;
        }
    }
    assert_eq!((busy_ns + 500_000) / 1_000_000, 534, "busy time {busy_ns} ns");
}

#[test]
fn snia_systor17_samples_are_sorted_by_timestamp() {
    for (name, reads, writes, span_ms) in
        [("systor17-traces-sample.csv.gz", 826, 173, 2447), ("systor17-additional-sample.csv.gz", 700, 299, 1330)]
    {
        let path = sample(&format!("snia_systor17_sample/{name}"));
        let text = raw_text(&path);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("Timestamp,Response,IOType,LUN,Offset,Size"));
        let rows: Vec<Row> = lines
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (seconds_ns(f[0]), f[2] == "R", f[5].parse().unwrap(), seconds_ns(f[1]))
            })
            .collect();
        let expected = figures_of_rows(&rows);
        assert_eq!((expected.records, expected.reads, expected.writes), (999, reads, writes), "{name}");
        assert_eq!(expected.last_time_ns / 1_000_000, span_ms, "{name}");

        let (records, report) = import_auto(&path, TraceFormat::Systor17);
        assert_eq!(figures_of_records(&records), expected, "{name}");
        assert_eq!(report.non_io_lines, 1, "the header");
        assert_eq!(report.reordered_records, late_rows(&rows), "{name}");
        assert!(report.reordered_records > 200, "{name}: the rows are not in issue order");
        // Sorting is a permutation: the multiset of (time, offset) is unchanged.
        let min = rows.iter().map(|r| r.0).min().unwrap();
        let mut raw_times: Vec<u64> = rows.iter().map(|r| r.0 - min).collect();
        raw_times.sort_unstable();
        assert_eq!(records.iter().map(|r| r.time_ns).collect::<Vec<_>>(), raw_times, "{name}");
    }
}

#[test]
fn tencent_cbs_sample() {
    let path = sample("tencent_cbs_sample/cloud_storage-sample.bz2");
    let text = raw_text(&path);
    let parsed: Vec<(Row, u64)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t = f[0].parse::<u64>().unwrap() * 1_000_000_000;
            ((t, f[3] == "0", f[2].parse::<u64>().unwrap() * 512, 0), f[4].parse().unwrap())
        })
        .collect();
    let rows: Vec<Row> = parsed.iter().map(|p| p.0).collect();
    let expected = figures_of_rows(&rows);
    assert_eq!((expected.records, expected.reads, expected.writes), (50_000, 24_521, 25_479));
    let volumes: HashSet<u64> = parsed.iter().map(|p| p.1).collect();
    assert_eq!(volumes.len(), 2038);

    let (records, report) = import_auto(&path, TraceFormat::Tencent);
    assert_eq!(figures_of_records(&records), expected);
    assert_eq!(report.devices_seen, 2038);
    assert_eq!(report.reordered_records, late_rows(&rows));
    assert!(!report.has_latency);

    // One volume, as the README suggests.
    let volume_rows: Vec<Row> = parsed.iter().filter(|p| p.1 == 1125).map(|p| p.0).collect();
    let opts = ImportOptions { device: Some("1125".into()), ..ImportOptions::new(PETABYTE) };
    let (records, report) = import(&path, &opts);
    assert_eq!(figures_of_records(&records), figures_of_rows(&volume_rows));
    assert_eq!(report.filtered_other_devices, 50_000 - volume_rows.len() as u64);
}

/// Rows of a DiskSim/MQSim ASCII file, parsed here with std only.
fn disksim_rows(path: &Path) -> Vec<(Row, u64)> {
    raw_text(path)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            ((f[0], f[4] == 1, f[3] * 512, 0), f[1])
        })
        .collect()
}

#[test]
fn umass_financial1_first10k_is_write_heavy() {
    let path = sample("umass_financial1_first10k/example.ascii");
    let parsed = disksim_rows(&path);
    let rows: Vec<Row> = parsed.iter().map(|p| p.0).collect();
    let expected = figures_of_rows(&rows);
    assert_eq!((expected.records, expected.reads, expected.writes), (10_000, 4_078, 5_922));
    assert_eq!(expected.last_time_ns / 100_000_000, 2596);

    let (records, report) = import_auto(&path, TraceFormat::Disksim);
    assert_eq!(figures_of_records(&records), expected);
    assert_eq!(report.devices_seen, 22);

    // Folded onto a 128 MiB drive (the excerpt reaches 489 MiB): every I/O
    // inside, and exactly the ones that ended past 128 MiB were moved.
    let capacity = 128u64 << 20;
    let past_end = raw_text(&path)
        .lines()
        .filter(|l| {
            let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (f[2] + f[3]) * 512 > capacity
        })
        .count() as u64;
    assert!(past_end > 0);
    let mut reader = open(&path, &ImportOptions::new(capacity)).unwrap();
    let folded: Vec<TraceRecord> = (&mut reader).map(Result::unwrap).collect();
    assert_eq!(reader.report().folded, past_end);
    assert!(folded.iter().all(|r| r.offset_bytes + r.length_bytes <= capacity));
    assert_eq!(figures_of_records(&folded), expected);
}

#[test]
fn umass_websearch_mqsim_small_is_read_heavy() {
    let path = sample("umass_websearch_mqsim_small/wsrch-small.trace");
    let parsed = disksim_rows(&path);
    let rows: Vec<Row> = parsed.iter().map(|p| p.0).collect();
    let expected = figures_of_rows(&rows);
    assert_eq!((expected.records, expected.reads, expected.writes), (24_783, 24_779, 4));
    assert_eq!(expected.last_time_ns / 10_000_000, 6005);

    let (records, report) = import_auto(&path, TraceFormat::Disksim);
    assert_eq!(figures_of_records(&records), expected);
    assert_eq!(report.devices_seen, 6);
    // The MQSim spelling of the format name works too, with one device selected.
    let device_rows: Vec<Row> = parsed.iter().filter(|p| p.1 == 1).map(|p| p.0).collect();
    let opts = ImportOptions { format: "mqsim".parse().unwrap(), device: Some("1".into()), ..ImportOptions::new(PETABYTE) };
    assert_eq!(figures_of_records(&import(&path, &opts).0), figures_of_rows(&device_rows));
}

#[test]
fn the_preprocessed_fin1_variant_is_not_a_supported_format() {
    let path = sample("umass_financial1_first10k/fin1");
    let e = open(&path, &ImportOptions::new(PETABYTE)).err().expect("fin1 must not be detected");
    assert_eq!(e.field, "format");
    assert!(e.message.contains("no format fits") && e.message.contains("disksim: line 1"), "{}", e.message);
}
