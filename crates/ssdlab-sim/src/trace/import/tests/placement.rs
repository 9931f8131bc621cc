//! Placement of records on the drive: folding, device selection and
//! concatenation, reordering.

use super::*;

#[test]
fn out_of_range_io_is_folded_or_rejected() {
    let dir = TempDir::new();
    // Capacity 1 MiB. Line 1 fits; line 2 starts past the end; line 3 straddles
    // the end at a 512-byte-aligned offset; line 4 fits exactly at the end.
    let path = dir.file("f.csv", "0,0,4096,w,0\n0,2056,4096,w,1\n0,2047,4096,r,2\n0,2040,4096,r,3\n");
    let capacity = 1 << 20;
    let fold = ImportOptions { drive_capacity_bytes: capacity, ..opts(TraceFormat::Umass) };
    let (records, report) = import(&path, &fold);
    let offsets: Vec<u64> = records.iter().map(|r| r.offset_bytes).collect();
    // 2056*512 = 1 MiB + 4096 -> 4096; 2047*512 = 1 MiB - 512 -> moved down to
    // 1 MiB - 4096 (still 512-aligned); 2040*512 = 1 MiB - 4096 fits.
    assert_eq!(offsets, [0, 4096, capacity - 4096, capacity - 4096]);
    assert_eq!(report.folded, 2);
    assert!(records.iter().all(|r| r.offset_bytes + r.length_bytes <= capacity));

    let reject = ImportOptions { out_of_range: OutOfRange::Reject, ..fold.clone() };
    let e = import_error(&path, &reject);
    assert_eq!((e.line, e.field.as_str()), (2, "LBA"));
    assert!(e.message.contains("reject") && e.message.contains("1048576"), "{}", e.message);

    // An I/O longer than the drive cannot be folded.
    let tiny = ImportOptions { drive_capacity_bytes: 2048, ..fold };
    let e = import_error(&path, &tiny);
    assert_eq!((e.line, e.field.as_str()), (1, "Size"));
}

#[test]
fn fold_keeps_alignment_up_to_4k() {
    let names = &umass::NAMES;
    let cap = 10_000_000;
    for offset in [12_345_678u64, 40_000_000, 99_999_488, 10_000_000] {
        let (folded, did) = fit(offset, 4096, cap, OutOfRange::Fold, "drive", names).ok().unwrap();
        assert!(did && folded + 4096 <= cap);
        let align = (1u64 << offset.trailing_zeros()).min(4096);
        assert_eq!(folded % align, 0, "offset {offset} -> {folded}");
    }
    assert_eq!(fit(cap - 4096, 4096, cap, OutOfRange::Reject, "drive", names).ok(), Some((cap - 4096, false)));
}

#[test]
fn one_device_can_be_selected_and_the_others_are_counted() {
    let dir = TempDir::new();
    let path = dir.file(
        "luns.csv",
        "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.001,R,0,0,4096\n1.1,0.001,W,3,4096,4096\n1.2,0.001,R,3,8192,4096\n1.3,0.001,R,0,0,4096\n",
    );
    let one = ImportOptions { device: Some("3".into()), ..opts(TraceFormat::Systor17) };
    let (records, report) = import(&path, &one);
    assert_eq!(summary(&records), [(0, TraceOp::Write, 4096, 4096), (100_000_000, TraceOp::Read, 8192, 4096)]);
    assert_eq!((report.filtered_other_devices, report.devices_seen), (2, 2));
    assert_eq!(report.device_names, ["0", "3"]);

    let missing = ImportOptions { device: Some("7".into()), ..opts(TraceFormat::Systor17) };
    let e = import_error(&path, &missing);
    assert_eq!(e.field, "device");
    assert!(e.message.contains("'7'") && e.message.contains("0, 3"), "{}", e.message);

    let not_a_lun = ImportOptions { device: Some("sda".into()), ..opts(TraceFormat::Systor17) };
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
        let o = ImportOptions { device: Some(device.into()), ..opts(TraceFormat::Msr) };
        let (records, report) = import(&path, &o);
        assert_eq!((records.len(), report.filtered_other_devices), (expected, 2), "{device}");
    }
}

#[test]
fn concatenation_gives_each_device_its_own_region() {
    let dir = TempDir::new();
    // Devices in order of appearance: 5 -> region 0, 2 -> region 1.
    let path = dir.file("multi.ascii", "0 5 8 8 1\n10 2 8 8 0\n20 5 16 8 1\n30 2 2056 8 1\n");
    let region = 1u64 << 20;
    let o = ImportOptions { device_mapping: DeviceMapping::Concatenate { device_region_bytes: region }, ..opts(TraceFormat::Disksim) };
    let (records, report) = import(&path, &o);
    let offsets: Vec<u64> = records.iter().map(|r| r.offset_bytes).collect();
    // Line 4: sector 2056 = 1 MiB + 4 KiB, past its region: folded to 4 KiB in region 1.
    assert_eq!(offsets, [4096, region + 4096, 8192, region + 4096]);
    assert_eq!(report.folded, 1);
    assert_eq!(report.device_names, ["5", "2"]);
    let merged = import(&path, &opts(TraceFormat::Disksim)).0;
    assert_eq!(merged.iter().map(|r| r.offset_bytes).collect::<Vec<_>>(), [4096, 4096, 8192, 2056 * 512]);
    let bad = ImportOptions { device_mapping: DeviceMapping::Concatenate { device_region_bytes: 0 }, ..o };
    assert_eq!(import_error(&path, &bad).field, "device_region_bytes");
    let zero = ImportOptions { drive_capacity_bytes: 0, ..opts(TraceFormat::Disksim) };
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
        records.iter().map(|r| (r.time_ns, r.offset_bytes)).collect::<Vec<_>>(),
        [(0, 1536), (100_000_000, 512), (400_000_000, 0), (800_000_000, 1024), (900_000_000, 2048)]
    );
    assert_eq!(report.reordered_records, 2);
    assert_eq!(report.time_origin_ns, Some(10_100_000_000));
    // A window of 1 record cannot move line 5 (t=10.1) before t=10.2, already passed on.
    let small = ImportOptions { reorder_window_records: 1, ..opts(TraceFormat::Systor17) };
    let e = import_error(&path, &small);
    assert_eq!((e.line, e.field.as_str()), (5, "Timestamp"));
    assert!(e.message.contains("reorder_window_records = 1"), "{}", e.message);
    let skip = ImportOptions { skip_bad_lines: true, ..small };
    let (records, report) = import(&path, &skip);
    assert_eq!((records.len(), report.skipped_lines), (4, 1));
}
