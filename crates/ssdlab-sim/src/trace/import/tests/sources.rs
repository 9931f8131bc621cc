//! Format specifics and sources: blkparse events, fio iolog v2, compressed
//! and binary files, data patterns, the reorder window, threads.

use super::*;

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
    let q = ImportOptions { blkparse_event: BlkparseEvent::Queue, ..opts(TraceFormat::Blkparse) };
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
        [(0, TraceOp::Write, 0, 4096), (0, TraceOp::Read, 4096, 4096), (0, TraceOp::Trim, 0, 4096), (0, TraceOp::Flush, 0, 0)]
    );
    assert_eq!(report.non_io_lines, 6); // header, 2 add, open, wait, close
    let sdc = ImportOptions { device: Some("/dev/sdc".into()), ..opts(TraceFormat::FioIolog) };
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
    assert!(e.message.contains("gzip") && e.message.contains("uncompressed"), "{}", e.message);
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
    let skip = ImportOptions { skip_bad_lines: true, ..opts(TraceFormat::Umass) };
    let (records, report) = import(&path, &skip);
    assert_eq!(summary(&records), [(0, TraceOp::Read, 4096, 4096), (1_000_000_000, TraceOp::Write, 4096, 4096)]);
    assert_eq!(report.skipped_lines, 2);
    assert_eq!(report.skipped_examples[1].0, 3);
    assert!(report.skipped_examples[1].1.contains("longer than"));
}

#[test]
fn data_pattern_is_applied_and_iodepth_can_be_inferred() {
    let (_, name, text) = SAMPLES[0];
    let dir = TempDir::new();
    let path = dir.file(name, text);
    let o = ImportOptions { data_pattern: DataPattern::Compressible, ..opts(TraceFormat::Msr) };
    let records: Vec<TraceRecord> = infer_iodepth(open(&path, &o).unwrap()).map(Result::unwrap).collect();
    assert_eq!(records[1].data_pattern, DataPattern::Compressible);
    // Line 3 is issued 100 ns after line 2 whose response time is 10 us.
    assert_eq!(records.iter().map(|r| r.iodepth).collect::<Vec<_>>(), [1, 1, 2]);
}

#[test]
fn a_zero_window_accepts_sorted_input_only() {
    let sorted = ImportOptions { reorder_window_records: 0, ..opts(TraceFormat::Umass) };
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
