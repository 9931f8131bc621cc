//! Controller and firmware behaviours, one claim per test (docs/model.md).

use crate::common::*;
use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, Simulator};

/// A small 25nm-class drive: 8KB pages, 2 planes, 256 pages per block,
/// `dies` dies on up to 8 channels, 1/1.15 of raw NAND as user capacity.
fn realistic(dies: u32, blocks: u32, extra: Value) -> Simulator {
    realistic_a(dies, blocks, 1.15, extra)
}

fn realistic_a(dies: u32, blocks: u32, a: f64, extra: Value) -> Simulator {
    realistic_drive(dies, blocks, a, 11, extra)
}

fn mbps(r: &ssdlab_sim::PhaseResult) -> f64 {
    (r.stats.read.bytes + r.stats.write.bytes) as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

const REDUCTION: &str = r#"{"data_reduction": {"enabled": true, "metadata_bytes_per_unit": 64,
    "compressible_stored_fraction": 0.25, "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0}}"#;

#[test]
fn compressible_writes_touch_fewer_dies_on_a_reducing_controller() {
    let red: Value = serde_json::from_str(REDUCTION).unwrap();
    let s = realistic(8, 32, red);
    let span = s.capacity_bytes() / 4;
    let inc = run(&mut s.clone(), json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": span, "data_pattern": "incompressible"}));
    let rep = run(&mut s.clone(), json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": span, "data_pattern": "repeated"}));
    let prog = |r: &ssdlab_sim::PhaseResult| r.nand.unit_programs;
    println!("reducing: incompressible {:.0} MB/s WA {:.2}; repeated {:.0} MB/s WA {:.2}", mbps(&inc), inc.waf(), mbps(&rep), rep.waf());
    assert!(rep.waf() < 0.35, "repeated data should program a fraction of the host bytes: WA {}", rep.waf());
    assert!(inc.waf() > 0.99, "incompressible data is stored whole (the last units may still be in the buffer)");
    assert!(prog(&rep) * 3 < prog(&inc), "program operations: repeated {} vs incompressible {}", prog(&rep), prog(&inc));
    assert!(mbps(&rep) > 1.5 * mbps(&inc));
    assert!(rep.data_reduction_ratio() < 0.3 && (inc.data_reduction_ratio() - 1.0).abs() < 1e-9);
    // A controller without data reduction treats both alike.
    let p = realistic(8, 32, json!({}));
    let a = run(&mut p.clone(), json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": span, "data_pattern": "incompressible"}));
    let b = run(&mut p.clone(), json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": span, "data_pattern": "repeated"}));
    assert_eq!(a.waf(), b.waf());
    assert!((mbps(&a) / mbps(&b) - 1.0).abs() < 0.01);
}

/// Data reduced to a size that does not divide the program unit (3 of the
/// 16 1KB granules of the 25nm Vertex 2's program unit for a 4KB unit at
/// ratio 0.5) must not tie the writes after it to one die: one such unit,
/// then 64 MiB of incompressible 128KB writes at QD32, writes as fast as the
/// incompressible data alone (before, 80.2 against 122.6 MB/s).
#[test]
fn a_reduced_unit_out_of_step_with_the_program_unit_does_not_tie_writes_to_one_die() {
    use ssdlab_sim::trace::{TraceOp, TraceRecord};
    use ssdlab_sim::{DataPattern, ReplayMode, ReplayOptions};
    let s = sim(preset_config("vertex2-25nm-120"), 1, false);
    let write = |offset_bytes: u64, length_bytes: u64, data_pattern: DataPattern| TraceRecord {
        time_ns: 0,
        op: TraceOp::Write,
        offset_bytes,
        length_bytes,
        data_pattern,
        iodepth: 0,
        recorded_latency_ns: 0,
    };
    let opts = ReplayOptions { mode: ReplayMode::AsFastAsPossible, iodepth: 32, ..Default::default() };
    let rate = |first: DataPattern| {
        let mut recs = vec![write(0, 4096, first)];
        recs.extend((0..512u64).map(|i| write((1 << 20) + (i << 17), 128 << 10, DataPattern::Incompressible)));
        let r = s.clone().replay(&mut recs.into_iter().map(Ok), &opts, &mut |_| true).unwrap();
        (mbps(&r), r)
    };
    let (aligned, a) = rate(DataPattern::Incompressible);
    let (out_of_step, b) = rate(DataPattern::Ratio { permille: 500 });
    println!("incompressible throughout {aligned:.1} MB/s; after one ratio:0.5 unit {out_of_step:.1} MB/s");
    assert!(b.data_reduction_ratio() < a.data_reduction_ratio(), "the ratio:0.5 unit is stored smaller");
    assert!(out_of_step > 0.95 * aligned, "{out_of_step:.1} MB/s after one reduced unit, {aligned:.1} without");
}

/// A stream of incompressible units (4 granules of 1KB) that no longer
/// starts on a program-unit boundary, because one small unit of reduced data
/// came before it, still goes to every die in turn: the host moves on as soon
/// as a program unit is full, even when the last 4KB unit runs into the next.
/// (Out of step, such a stream stays so until a block's end pads it back; a
/// 512 KiB buffer keeps that from hiding in write-back.)
#[test]
fn a_reducing_controller_spreads_a_stream_out_of_step_with_its_program_units() {
    let mut extra: Value = serde_json::from_str(REDUCTION).unwrap();
    merge(&mut extra, &json!({"controller": {"write_buffer_bytes": 512u64 << 10}}));
    let s = realistic(8, 32, extra);
    let stream = json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": 1u64 << 20, "io_size": 16u64 << 20,
                        "data_pattern": "incompressible"});
    let aligned = run(&mut s.clone(), stream.clone());
    let mut shifted = s.clone();
    // One 4KB unit of compressible data: 1 KiB and 64 B of metadata, two granules.
    run(&mut shifted, json!({"rw": "write", "bs": "4k", "iodepth": 1, "number_ios": 1, "size": "4k", "data_pattern": "compressible"}));
    let out = run(&mut shifted, stream);
    println!("16MB incompressible stream: in step {:.0} MB/s, two granules out of step {:.0} MB/s", mbps(&aligned), mbps(&out));
    assert!(mbps(&out) > 0.9 * mbps(&aligned), "in step {:.0} MB/s, out of step {:.0}", mbps(&aligned), mbps(&out));
    // Eight dies at 16KB per 1.3 ms program are about 100 MB/s; one die, 12.6.
    assert!(mbps(&out) > 50.0, "{:.0} MB/s", mbps(&out));
}

fn recycling_drive() -> Simulator {
    realistic(8, 64, json!({"ftl": {"gc_mode": "lazy", "recycle_bytes_per_s": 64_000_000u64, "bg_gc_threshold_blocks": 4}}))
}

/// AS-SSD-style sequential write: 16MB transfers at QD1 over 256MB.
fn as_ssd_write(s: &mut Simulator) -> f64 {
    let r = run(s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "io_size": 256u64 << 20, "size": 256u64 << 20}));
    mbps(&r)
}

#[test]
fn trim_alone_does_not_restore_a_dirty_recycling_limited_drive() {
    let mut s = recycling_drive();
    let clean = as_ssd_write(&mut s.clone());
    // Dirty: every LBA written, then written again (the spare area fills too).
    fill(&mut s);
    fill(&mut s);
    let dirty = as_ssd_write(&mut s.clone());
    let mut t = s.clone();
    t.trim(0, None).unwrap();
    let trimmed = as_ssd_write(&mut t.clone());
    let mut e = t.clone();
    e.secure_erase().unwrap();
    let erased = as_ssd_write(&mut e);
    // A sequential pass after the TRIM, then idle time for the recycler.
    fill(&mut t);
    t.idle(30_000_000_000).unwrap();
    let after_pass = as_ssd_write(&mut t);
    println!("clean {clean:.0} dirty {dirty:.0} after TRIM {trimmed:.0} after secure erase {erased:.0} after a pass {after_pass:.0} MB/s");
    assert!(dirty < 0.7 * clean, "dirty {dirty} vs clean {clean}");
    assert!((trimmed / dirty - 1.0).abs() < 0.2, "TRIM restored the drive: {trimmed} vs dirty {dirty}");
    assert!((erased / clean - 1.0).abs() < 0.05, "secure erase: {erased} vs clean {clean}");
    assert!(after_pass > trimmed * 1.05, "a sequential pass should help somewhat: {after_pass} vs {trimmed}");
}

#[test]
fn a_deferred_trim_map_update_slows_the_next_write_by_the_map_it_writes() {
    // The ECC encoder (50e6 B/s) is the write bound, so the map's bytes add
    // their encoder time to the write that carries them.
    let mk = |deferred: bool| {
        let extra = json!({"controller": {"encode_bytes_per_s": 50_000_000u64}, "ftl": {"trim_map_deferred": deferred}});
        let mut s = realistic(8, 32, extra);
        fill(&mut s);
        s.trim(0, None).unwrap();
        s
    };
    let write = |s: &mut Simulator| run(s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "io_size": 64u64 << 20, "size": 64u64 << 20}));
    let (mut off, mut on) = (mk(false), mk(true));
    let (a, b) = (write(&mut off), write(&mut on));
    let map_bytes = on.capacity_bytes() / 4096 * 4;
    let extra_s = (b.duration_ns as f64 - a.duration_ns as f64) / 1e9;
    println!("after a full TRIM: {:.1} MB/s, deferred map {:.1} MB/s ({map_bytes} map bytes, +{extra_s:.3} s)", mbps(&a), mbps(&b));
    assert!((extra_s / (map_bytes as f64 / 50e6) - 1.0).abs() < 0.1, "{extra_s} s for {map_bytes} B");
    assert_eq!(b.ftl.map_page_writes, map_bytes.div_ceil(on.geometry.unit_slots as u64 * 4096));
    assert_eq!(b.ftl.nand_bytes_programmed - a.ftl.nand_bytes_programmed, map_bytes);
    // Written once: the next write, and one after a TRIM of unmapped
    // space, run as without the deferral.
    let (c, d) = (write(&mut off), write(&mut on));
    on.trim(128 << 20, Some(64 << 20)).unwrap();
    off.trim(128 << 20, Some(64 << 20)).unwrap();
    let (e, f) = (write(&mut off), write(&mut on));
    assert_eq!((c.duration_ns, e.duration_ns), (d.duration_ns, f.duration_ns));
    assert_eq!(d.ftl.map_page_writes + f.ftl.map_page_writes, 0);
}

#[test]
fn raise_writes_one_parity_unit_per_stripe_of_data_units() {
    // One of the 8 dies holds parity: size the user capacity on the other 7.
    let mut s = realistic_a(8, 32, 1.15 * 8.0 / 7.0, json!({"nand": {"raise": true}}));
    assert_eq!(s.geometry.dies, 7);
    let r = fill(&mut s);
    let data = r.ftl.nand_bytes_programmed - r.ftl.parity_bytes;
    let ratio = r.ftl.parity_bytes as f64 / data as f64;
    assert!((ratio - 1.0 / 7.0).abs() < 0.002, "parity/data {ratio}");
}

#[test]
fn an_active_die_limit_caps_incompressible_write_speed() {
    let span = |s: &Simulator| s.capacity_bytes() / 4;
    let mut all = realistic(16, 32, json!({}));
    let mut half = realistic(16, 32, json!({"controller": {"max_active_dies": 8}}));
    let (sa, sh) = (span(&all), span(&half));
    let (a, b) = (seq_write_mbps(&mut all, sa, 32, "incompressible"), seq_write_mbps(&mut half, sh, 32, "incompressible"));
    println!("16 dies: {a:.0} MB/s; at most 8 active: {b:.0} MB/s");
    assert!(b < 0.6 * a && b > 0.4 * a);
}

#[test]
fn a_program_buffer_sized_for_small_units_binds_a_part_with_large_ones() {
    // 16 dies with 16KB program units (8KB pages, 2 planes, 1.3 ms): a
    // buffer for 8 programs in flight halves incompressible writes; one
    // for 16 (every die) is no limit (reads do not use it: the unit test
    // `nand::tests::the_program_buffer_holds_programs_not_reads`).
    let span = |s: &Simulator| s.capacity_bytes() / 4;
    let unit = 16384u64;
    let mut all = realistic(16, 32, json!({}));
    let mut eight = realistic(16, 32, json!({"controller": {"program_buffer_bytes": 8 * unit + unit / 2}}));
    let mut every = realistic(16, 32, json!({"controller": {"program_buffer_bytes": 16 * unit}}));
    let (sa, s8, s16) = (span(&all), span(&eight), span(&every));
    let a = seq_write_mbps(&mut all, sa, 32, "incompressible");
    let b = seq_write_mbps(&mut eight, s8, 32, "incompressible");
    let c = seq_write_mbps(&mut every, s16, 32, "incompressible");
    println!("16 dies of 16KB units: {a:.0} MB/s; buffer for 8 programs: {b:.0} MB/s; for 16: {c:.0} MB/s");
    assert!(b < 0.6 * a && b > 0.4 * a);
    assert_eq!(a, c, "a buffer with room for a program on every die changes nothing");
    // Refused when it cannot hold one program unit.
    let cfg = serde_json::to_string(&json!({
        "drive": {"id": "t", "name": "t", "user_capacity_bytes": 1u64 << 30},
        "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 3000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 10_000, "write_buffer_bytes": 4u64 << 20, "program_buffer_bytes": 8192},
        "nand": {"channels": 8, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 2,
                 "blocks_per_plane": 64, "page_size_bytes": 8192, "pages_per_block": 256, "tr_ns": 50_000,
                 "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4}
    }))
    .unwrap();
    let e = DriveConfig::from_json_str(&cfg).unwrap_err().to_string();
    assert!(e.contains("controller.program_buffer_bytes") && e.contains("16384 B = page x planes"), "{e}");
}

#[test]
fn read_ahead_off_below_qd3_slows_qd1_sequential_reads() {
    let base = json!({"controller": {"readahead_bytes": 1048576, "readahead_min_qd": 1}});
    let late = json!({"controller": {"readahead_bytes": 1048576, "readahead_min_qd": 3, "seq_read_max_dies": 4}});
    let mut results = Vec::new();
    for (label, extra) in [("read-ahead at QD1", base), ("read-ahead from QD3, 4-die pipeline", late)] {
        let mut s = realistic(8, 32, extra);
        fill(&mut s);
        let r1 = run(&mut s.clone(), json!({"rw": "read", "bs": "128k", "iodepth": 1, "io_size": 512u64 << 20}));
        let r4 = run(&mut s, json!({"rw": "read", "bs": "128k", "iodepth": 4, "io_size": 512u64 << 20}));
        println!("{label}: QD1 {:.0} MB/s, QD4 {:.0} MB/s", mbps(&r1), mbps(&r4));
        results.push((mbps(&r1), mbps(&r4)));
    }
    assert!(results[1].0 < 0.7 * results[0].0, "QD1 sequential reads should suffer without read-ahead");
    assert!(results[1].1 > 0.9 * results[0].1, "and recover at QD4");
}

#[test]
fn a_larger_write_buffer_absorbs_a_burst() {
    let burst = json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": 32u64 << 20});
    let mut small = realistic(4, 32, json!({}));
    let mut big = realistic(4, 32, json!({"controller": {"write_buffer_bytes": 64u64 << 20}}));
    let (a, b) = (mbps(&run(&mut small, burst.clone())), mbps(&run(&mut big, burst)));
    println!("32MB burst: 4MB buffer {a:.0} MB/s, 64MB buffer {b:.0} MB/s");
    assert!(b > 450.0, "the burst should go at link speed: {b}");
    assert!(a < 0.5 * b);
    // Sustained writes are bounded by the NAND either way.
    let long = json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": 1u64 << 30});
    let (c, d) = (mbps(&run(&mut small, long.clone())), mbps(&run(&mut big, long)));
    assert!(d < 1.2 * c, "steady state {c} vs {d}");
}

#[test]
fn reads_of_unwritten_lbas_are_answered_from_the_map_or_slower() {
    let job = json!({"rw": "randread", "bs": "4k", "iodepth": 1, "number_ios": 2000, "size": "64m"});
    let mut fast = realistic(8, 32, json!({}));
    let mut slow = realistic(8, 32, json!({"controller": {"unmapped_read_ns": 300_000}}));
    let mut written = realistic(8, 32, json!({}));
    run(&mut written, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "64m"}));
    let iops = |r: ssdlab_sim::PhaseResult| r.iops();
    let (f, s, w) = (iops(run(&mut fast, job.clone())), iops(run(&mut slow, job.clone())), iops(run(&mut written, job)));
    println!("QD1 4KB reads: unwritten (from map) {f:.0} IOPS, unwritten (slow firmware) {s:.0}, written {w:.0}");
    assert!(f > w && s < w);
}

#[test]
fn a_read_decode_that_holds_the_die_sets_die_bound_read_rates_and_qd1_latency() {
    // 4 dies, one per channel: reads are die-bound, not link- or command-bound.
    let plain = realistic(4, 32, json!({}));
    let held = realistic(4, 32, json!({"controller": {"read_decode_bytes_per_s": 100_000_000u64}}));
    let mut out = vec![];
    for base in [plain, held] {
        let mut s = base;
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "256m"}));
        s.idle(1_000_000_000).unwrap(); // the buffer's last programs finish
        let rand = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 32, "number_ios": 20000, "size": "256m"}));
        let qd1 = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 1, "number_ios": 2000, "size": "256m"}));
        let seq = run(&mut s.clone(), json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": "256m"}));
        out.push((rand.iops(), qd1.iops(), mbps(&seq)));
    }
    let ((r0, q0, s0), (r1, q1, s1)) = (out[0], out[1]);
    println!("4 dies: QD32 4KB {r0:.0} -> {r1:.0} IOPS, QD1 {q0:.0} -> {q1:.0} IOPS, 128KB {s0:.0} -> {s1:.0} MB/s");
    // Die time per read: tR 50 us + transfer (20.5 us per 4KB, 82 us per
    // 16KB at 200 MB/s) + decode (41 us per 4KB, 164 us per 16KB at 100 MB/s).
    let near = |a: f64, b: f64| (a / b - 1.0).abs() < 0.08;
    assert!(near(r1 / r0, 70.5 / 111.5), "QD32 4KB ratio {}", r1 / r0);
    assert!(near(s1 / s0, 132.0 / 296.0), "128KB ratio {}", s1 / s0);
    assert!(near(r1, 4e6 / 111.5) && near(s1, 4.0 * 16384.0 / 296.0), "die-bound: {r1} IOPS, {s1} MB/s");
    // QD1: every read waits out the decode once (41 us more per read).
    assert!(near(1e6 / q1 - 1e6 / q0, 41.0), "QD1 latency grew {} us", 1e6 / q1 - 1e6 / q0);
}

#[test]
fn a_die_striped_stream_spreads_each_read_over_the_dies_its_bytes_span() {
    // SandForce-style striping: the stored stream goes to the 16 dies in
    // 512 B chunks in turn, so a 4KB read at an unaligned offset spans 9
    // chunks: 9 page reads of 455 B (tR 50 us + 2.3 us transfer each).
    let mut out = vec![];
    for stripe in [0u64, 512] {
        let mut s = realistic(16, 32, json!({"controller": {"die_stripe_bytes": stripe}}));
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "256m"}));
        s.idle(1_000_000_000).unwrap();
        let rand = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 32, "number_ios": 20000, "size": "256m"}));
        let qd1 = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 1, "number_ios": 2000, "size": "256m"}));
        let seq = run(&mut s.clone(), json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": "256m"}));
        // Overwrite 16MB at random: its LBAs no longer lie in stream order.
        run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": "16m", "io_size": 64u64 << 20}));
        s.idle(1_000_000_000).unwrap();
        let frag = run(&mut s, json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": "16m"}));
        out.push((rand.iops(), qd1.iops(), mbps(&seq), mbps(&frag)));
    }
    let ((r0, q0, s0, f0), (r1, q1, s1, f1)) = (out[0], out[1]);
    println!("16 dies, plain -> striped: QD32 4KB {r0:.0} -> {r1:.0} IOPS, QD1 {q0:.0} -> {q1:.0} IOPS, 128KB {s0:.0} -> {s1:.0} MB/s, 128KB of random-written data {f0:.0} -> {f1:.0} MB/s");
    let near = |a: f64, b: f64, tol: f64| (a / b - 1.0).abs() < tol;
    // Die-bound: 16 dies / (9 x 52.3 us) = 34.0K IOPS (unstriped, the host
    // and command cost bound it far higher).
    assert!(near(r1, 16e6 / (9.0 * 52.3), 0.08) && r0 > 2.5 * r1, "QD32 4KB: {r0} vs {r1}");
    // Sequential data: one page read per die per row either way.
    assert!(near(s1, s0, 0.03), "128KB: {s0} vs {s1}");
    // Data written at random costs a striped read per 4KB even when read in
    // order: as random 4KB reads, not as sequential ones.
    assert!(near(f1, r1 * 4096.0 / 1e6, 0.2) && f1 < 0.4 * f0, "fragmented 128KB: {f0} vs {f1}");
    // QD1: the 9 reads run in parallel, each with a shorter transfer.
    assert!(q1 > q0, "QD1: {q0} vs {q1}");
}

#[test]
fn reads_pass_queued_programs_and_garbage_collection_with_read_priority() {
    // A filled 4-die drive under random writes (foreground GC) with random
    // reads mixed in: first come, first served, a read waits for all the
    // copying booked on its die; with priority, for the operation in progress.
    let mut out = vec![];
    for prio in [false, true] {
        let mut s = realistic(4, 32, json!({"controller": {"read_priority": prio}}));
        fill(&mut s);
        run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": 256u64 << 20}));
        let r = run(&mut s, json!({"rw": "randrw", "rwmixread": 50, "bs": "4k", "iodepth": 8, "number_ios": 20000}));
        out.push((r.stats.read.lat.percentile(99.0) as f64 / 1e3, r.stats.read.lat.percentile(50.0) as f64 / 1e3, r.waf()));
    }
    let ((p0, m0, w0), (p1, m1, w1)) = (out[0], out[1]);
    println!("read latency p50 / p99: FCFS {m0:.0} / {p0:.0} us, priority {m1:.0} / {p1:.0} us (WA {w0:.2} / {w1:.2})");
    assert!(p1 < 0.5 * p0 && m1 <= m0, "p99 {p0} -> {p1} us, p50 {m0} -> {m1} us");
    // Priority moves work, it does not remove it: GC copies as much.
    assert!((w1 / w0 - 1.0).abs() < 0.1, "WA {w0} vs {w1}");
}

#[test]
fn sata_3gbps_caps_sequential_reads_near_280_mbps() {
    let mut s6 = realistic(16, 32, json!({"host": {"interface": "sata-6g", "link_bytes_per_s": 0, "command_overhead_ns": 0}}));
    let mut s3 = realistic(16, 32, json!({"host": {"interface": "sata-3g", "link_bytes_per_s": 0, "command_overhead_ns": 0}}));
    for s in [&mut s6, &mut s3] {
        fill(s);
    }
    let job = json!({"rw": "read", "bs": "128k", "iodepth": 32, "io_size": 1u64 << 30});
    let (a, b) = (mbps(&run(&mut s6, job.clone())), mbps(&run(&mut s3, job)));
    println!("sequential read: SATA 6Gbps {a:.0} MB/s, 3Gbps {b:.0} MB/s");
    assert!(b < 281.0 && b > 250.0 && a > 400.0);
}

#[test]
fn random_writes_draw_more_power_than_idle() {
    let mut s = realistic(8, 32, json!({}));
    fill(&mut s);
    let w = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "5s"}));
    let i = s.idle(5_000_000_000).unwrap();
    let (pw, pi) = (w.power["avg_w"].as_f64().unwrap(), i.power["avg_w"].as_f64().unwrap());
    println!("random write {pw:.2} W, idle {pi:.2} W");
    assert!(pw > pi + 0.5 && pi >= 0.5);
}

#[test]
fn lifetime_shrinks_with_write_amplification() {
    let mut seq = realistic(8, 32, json!({}));
    fill(&mut seq);
    fill(&mut seq);
    let mut rnd = realistic(8, 32, json!({}));
    fill(&mut rnd);
    let cap = rnd.capacity_bytes();
    run(&mut rnd, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": cap}));
    let y = |s: &Simulator| s.smart()["lifetime_years_at_20_gb_per_day"].as_f64().unwrap();
    let wa = |s: &Simulator| s.smart()["waf_lifetime"].as_f64().unwrap();
    println!("sequential: WA {:.2}, {:.1} years; random: WA {:.2}, {:.1} years", wa(&seq), y(&seq), wa(&rnd), y(&rnd));
    assert!(wa(&rnd) > wa(&seq) && y(&rnd) < y(&seq));
}

#[test]
fn more_spare_area_raises_steady_state_random_write_iops() {
    let mut s = realistic(8, 32, json!({}));
    let cap = s.capacity_bytes();
    let mut results = Vec::new();
    for span in [cap, cap / 4096 * 3 / 4 * 4096] {
        let mut t = s.clone();
        run(&mut t, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span}));
        run(&mut t, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span, "io_size": 2 * span}));
        let r = run(&mut t, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span, "runtime": "10s"}));
        results.push((r.iops(), r.waf()));
    }
    let _ = &mut s;
    println!(
        "default spare: {:.0} IOPS WA {:.2}; 25% over-provisioning: {:.0} IOPS WA {:.2}",
        results[0].0, results[0].1, results[1].0, results[1].1
    );
    assert!(results[1].0 > 1.5 * results[0].0 && results[1].1 < results[0].1);
}

#[test]
fn performance_mode_is_fast_until_half_full_then_reorganises() {
    // Vertex 4 firmware 1.4: fast (lower-page) writes below 50% fill.
    let perf = json!({"ftl": {"perf_mode_tprog_ns": 450_000, "perf_mode_fill_percent": 50}});
    let mut p = realistic(8, 64, perf);
    let mut n = realistic(8, 64, json!({}));
    let cap = p.capacity_bytes();
    let first_third = json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": cap / 3 / 4096 * 4096});
    let (fast, normal) = (mbps(&run(&mut p, first_third.clone())), mbps(&run(&mut n, first_third)));
    assert!(p.ftl.perf_active);
    // Cross 50%: the reorganisation starts and slows host writes.
    let second = json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": cap / 3 / 4096 * 4096, "size": cap / 3 / 4096 * 4096});
    let crossing = mbps(&run(&mut p, second.clone()));
    let normal2 = mbps(&run(&mut n, second));
    assert!(!p.ftl.perf_active);
    let pending = p.ftl.reorg_pending();
    // Given idle time, the reorganisation completes and speed is normal again.
    p.idle(120_000_000_000).unwrap();
    let last = json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": 2 * (cap / 3 / 4096 * 4096), "size": cap / 4 / 4096 * 4096});
    let after = mbps(&run(&mut p, last.clone()));
    let normal3 = mbps(&run(&mut n, last));
    println!("perf mode {fast:.0} vs normal {normal:.0} MB/s; crossing 50%: {crossing:.0} vs {normal2:.0} ({pending} blocks to reorganise); after: {after:.0} vs {normal3:.0}");
    assert!(fast > 1.5 * normal);
    assert!(crossing < 0.8 * normal2);
    assert_eq!(p.ftl.reorg_pending(), 0);
    assert!((after / normal3 - 1.0).abs() < 0.1);
}

#[test]
fn small_random_writes_only_take_the_fast_mode_when_the_firmware_keeps_it_for_them() {
    // Vertex 4 fw1.3: 4KB random writes rated beyond what the dies program
    // at full density, 128KB sequential writes at it. 4 dies: 16KB per
    // 1.38 ms at full density is 47 MB/s (11.6K IOPS of 4KB), in lower pages
    // (450 us) 123 MB/s; the command cost (10 us) allows 100K IOPS.
    let none = json!({});
    let all = json!({"ftl": {"perf_mode_tprog_ns": 450_000, "perf_mode_fill_percent": 50}});
    let small = json!({"ftl": {"perf_mode_tprog_ns": 450_000, "perf_mode_fill_percent": 50, "perf_mode_small_random_writes_only": true}});
    let mut rates = Vec::new();
    for cfg in [none, all, small] {
        let s = realistic(4, 64, cfg);
        let span = s.capacity_bytes() / 8 / 4096 * 4096;
        let rate = |job: Value| {
            let mut a = s.clone();
            let r = mbps(&run(&mut a, job));
            a.check_now().unwrap();
            r
        };
        let random = rate(json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span, "io_size": 2 * span}));
        let seq = rate(json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": 2 * span}));
        let seq_small = rate(json!({"rw": "write", "bs": "4k", "iodepth": 32, "size": span}));
        rates.push((random, seq, seq_small));
    }
    println!(
        "random 4KB / sequential 128KB / sequential 4KB MB/s: no fast mode {:?}, every write {:?}, small random writes only {:?}",
        rates[0], rates[1], rates[2]
    );
    let [(r_none, s_none, q_none), (r_all, s_all, _), (r_small, s_small, q_small)] = [rates[0], rates[1], rates[2]];
    // Random writes as fast as with the whole performance mode ...
    assert!(r_small > 1.8 * r_none && (r_small / r_all - 1.0).abs() < 0.05);
    // ... sequential ones, long or short, at full density, as with none.
    assert!(s_all > 1.8 * s_none && (s_small / s_none - 1.0).abs() < 0.03);
    assert!((q_small / q_none - 1.0).abs() < 0.03);
    // Refused without a performance mode to restrict, naming the field.
    let mut cfg = serde_json::to_value(drive(4, 64, 64, 1.15, "greedy")).unwrap();
    cfg["ftl"]["perf_mode_small_random_writes_only"] = json!(true);
    let e = DriveConfig::from_json_str(&cfg.to_string()).unwrap_err().to_string();
    assert!(e.contains("ftl.perf_mode_small_random_writes_only") && e.contains("perf_mode_tprog_ns"), "{e}");
}

#[test]
fn past_the_fill_limit_idle_time_makes_room_for_fast_writes_again() {
    // Vertex 4 fw1.5 / Barefoot 3: once the reorganisation is done, writes
    // go to fast blocks while a die holds more free blocks than idle GC keeps.
    let base = json!({"ftl": {"perf_mode_tprog_ns": 450_000, "perf_mode_fill_percent": 50, "bg_gc_threshold_blocks": 4}});
    let mut after_idle = base.clone();
    after_idle["ftl"]["perf_mode_after_idle"] = json!(true);
    let mut rates = Vec::new();
    for cfg in [base, after_idle] {
        let mut s = realistic(8, 64, cfg);
        let cap = s.capacity_bytes() / 4096 * 4096;
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": cap}));
        s.idle(120_000_000_000).unwrap();
        assert_eq!(s.ftl.reorg_pending(), 0);
        rates.push(mbps(&run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": cap / 32 / 4096 * 4096}))));
        s.check_now().unwrap();
    }
    println!("after idle, past the fill limit: {:.0} MB/s normal mode, {:.0} with fast writes in idle-made room", rates[0], rates[1]);
    assert!(rates[1] > 1.2 * rates[0]);
}

#[test]
fn separate_read_and_write_command_costs_cap_reads_and_writes_independently() {
    // 16 dies deliver far more than either cap: reads 1e9/25us = 40K IOPS,
    // writes 1e9/100us = 10K IOPS.
    let costs = json!({"controller": {"command_cost_ns": 5_000, "command_cost_read_ns": 25_000, "command_cost_write_ns": 100_000}});
    let s = realistic(16, 64, costs);
    let span = s.capacity_bytes() / 4 / 4096 * 4096;
    let mut a = s.clone();
    let w = run(&mut a, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span, "runtime": "2s"}));
    run(&mut a, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span}));
    let r = run(&mut a, json!({"rw": "randread", "bs": "4k", "iodepth": 32, "size": span, "runtime": "2s"}));
    println!("split costs: random write {:.0} IOPS, random read {:.0} IOPS", w.iops(), r.iops());
    assert!((w.iops() / 10_000.0 - 1.0).abs() < 0.03, "writes capped at 10K IOPS: {}", w.iops());
    assert!((r.iops() / 40_000.0 - 1.0).abs() < 0.03, "reads capped at 40K IOPS: {}", r.iops());
    // Without the split both use command_cost_ns (5 us), as before.
    let mut b = realistic(16, 64, json!({"controller": {"command_cost_ns": 100_000}}));
    run(&mut b, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span}));
    let r = run(&mut b, json!({"rw": "randread", "bs": "4k", "iodepth": 32, "size": span, "runtime": "2s"}));
    assert!((r.iops() / 10_000.0 - 1.0).abs() < 0.03, "one cost for both: {}", r.iops());
}

#[test]
fn a_controller_write_ceiling_caps_sequential_writes_below_the_link() {
    // 16 dies at 8KB x 2 planes per 1.3 ms program 400 MB/s; the link 550.
    let plain = realistic(16, 64, json!({"controller": {"write_buffer_bytes": 64u64 << 20}}));
    let capped = realistic(16, 64, json!({"controller": {"write_buffer_bytes": 64u64 << 20, "max_write_bytes_per_s": 300_000_000u64}}));
    let w = json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": 32u64 << 20});
    let a = mbps(&run(&mut plain.clone(), w.clone()));
    let b = mbps(&run(&mut capped.clone(), w.clone()));
    println!("write ceiling: burst into the buffer {a:.0} MB/s without, {b:.0} MB/s with a 300 MB/s ceiling");
    assert!(a > 500.0, "a 32 MiB burst into a 64 MiB buffer goes at link speed: {a}");
    assert!((b / 300.0 - 1.0).abs() < 0.03, "the ceiling holds the burst at 300 MB/s: {b}");
    // Reads do not pass the write path.
    let read = |s: &Simulator| {
        let mut c = s.clone();
        run(&mut c, json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": 256u64 << 20}));
        c.idle(1_000_000_000).unwrap();
        mbps(&run(&mut c, json!({"rw": "read", "bs": "128k", "iodepth": 32, "io_size": 256u64 << 20, "size": 256u64 << 20})))
    };
    let (ra, rb) = (read(&plain), read(&capped));
    assert!(rb > 500.0 && (rb / ra - 1.0).abs() < 0.01, "reads are not capped by the write ceiling: {rb} vs {ra}");
}

#[test]
fn host_writes_pass_over_a_die_busy_with_lazy_garbage_collection() {
    // Lazy GC cleans whole victims on a die when it needs a block, a long
    // stretch of copying. The controller sends host data to the dies that
    // can take it meanwhile, so the drive keeps completing writes more of the
    // time. (This drive at WA ~10 has its dies cleaning ~90% of the time, so
    // some 100 ms windows still see every die cleaning at once: 100 of 200
    // here; 163 of 200 when host units went to the dies in a fixed order.)
    let mut s = realistic(16, 32, json!({"ftl": {"gc_mode": "lazy"}, "controller": {"write_buffer_bytes": 2u64 << 20}}));
    let cap = s.capacity_bytes();
    fill(&mut s);
    run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": cap}));
    let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "20s", "log_avg_msec": 100}));
    let iv = &r.stats.intervals;
    let idle = iv.iter().filter(|x| x.write_ios == 0).count();
    println!("{} intervals of 100 ms, {} without a completed write; {:.0} IOPS, WA {:.2}", iv.len(), idle, r.iops(), r.waf());
    assert!(r.waf() > 2.0, "the drive should be in GC steady state");
    assert!(idle * 10 < iv.len() * 6, "{idle} of {} intervals completed no write", iv.len());
}

/// The reverse map keeps an entry per unit stored, not per 1KB granule: a
/// reducing drive holding incompressible data needs about the RAM of a plain
/// drive, repeated data (a granule per unit) needs more, and either stays
/// within the estimate reserved before allocation.
#[test]
fn a_reducing_drive_takes_ram_for_the_units_it_stores_not_for_every_granule() {
    let red: Value = serde_json::from_str(REDUCTION).unwrap();
    let fill = |s: &mut Simulator, data: &str| {
        run(s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "data_pattern": data}));
        run(s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": s.capacity_bytes(), "data_pattern": data}));
        s.check_now().unwrap();
        s.memory_in_use_bytes()
    };
    let plain = fill(&mut realistic(8, 32, json!({})), "incompressible");
    let s = realistic(8, 32, red);
    let g = s.cfg.geometry();
    let reserved = ssdlab_sim::config::memory_estimate_bytes(&g, false);
    let inc = fill(&mut s.clone(), "incompressible");
    let rep = fill(&mut s.clone(), "repeated");
    let per4k = |b: u64| b as f64 / g.raw_slots as f64;
    println!(
        "B per 4KB: plain {:.2}, reducing incompressible {:.2}, repeated {:.2}, reserved {:.2}",
        per4k(plain),
        per4k(inc),
        per4k(rep),
        per4k(reserved)
    );
    // A reverse-map entry per 1KB granule would cost 12 B per 4KB more than a
    // plain drive; what remains here is the per-block and per-die tables,
    // sized by granules (live bits, GC buckets), which a small drive feels most.
    assert!(
        per4k(inc) < per4k(plain) + 2.0,
        "incompressible data on a reducing drive: {:.2} B per 4KB vs plain {:.2}",
        per4k(inc),
        per4k(plain)
    );
    assert!(rep > inc + inc / 4, "units of one granule need more entries: {rep} vs {inc}");
    assert!(rep < reserved && inc < reserved);
}

/// fio: a job with both a transfer limit (`io_size`) and a `runtime` ends at
/// whichever comes first. A transfer that finishes early ends the phase at its
/// last completion (so its rate is bytes over the time it took, as without a
/// runtime), and a runtime that runs out first ends it at the deadline.
#[test]
fn a_job_ends_when_its_transfer_ends_or_its_runtime_runs_out_whichever_first() {
    let base = sim(drive(4, 64, 64, 1.25, "greedy"), 3, false);
    let size_bytes = 8u64 << 20;
    let job = |runtime: Option<&str>| {
        let mut j =
            json!({"rw": "write", "bs": "64k", "iodepth": 4, "size": size_bytes, "io_size": size_bytes, "data_pattern": "incompressible"});
        if let Some(r) = runtime {
            j["runtime"] = json!(r);
        }
        j
    };
    let no_runtime = run(&mut base.clone(), job(None));
    let size_bound = run(&mut base.clone(), job(Some("10s")));
    println!("8 MiB at QD4: {} ns without a runtime, {} ns with runtime=10s", no_runtime.duration_ns, size_bound.duration_ns);
    assert!(no_runtime.duration_ns < 1_000_000_000, "the transfer takes well under the runtime here");
    assert_eq!(size_bound.duration_ns, no_runtime.duration_ns, "the transfer ended first: the phase ends with it");
    assert_eq!(size_bound.stats.write.bytes, size_bytes);
    assert_eq!(size_bound.to_json()["write"]["bw_bytes"], no_runtime.to_json()["write"]["bw_bytes"]);
    // The runtime runs out first: the phase is exactly the runtime, the transfer unfinished.
    let time_bound = run(&mut base.clone(), job(Some("5ms")));
    assert_eq!(time_bound.duration_ns, 5_000_000);
    assert!(time_bound.stats.write.bytes < size_bytes);
}

/// 8 dies of 64 blocks with `ftl.max_map_entries` at half the drive's 4KB
/// units (map units of 8KB), or without a limit (`limit` false).
fn map_limited(limit: bool) -> Simulator {
    let units = realistic(8, 64, json!({})).capacity_bytes() / 4096;
    let entries = if limit { units.div_ceil(2) } else { 0 };
    realistic(8, 64, json!({"ftl": {"max_map_entries": entries}}))
}

fn iops(r: &ssdlab_sim::PhaseResult) -> f64 {
    (r.stats.read.ios + r.stats.write.ios) as f64 / (r.duration_ns as f64 / 1e9)
}

#[test]
fn a_map_too_small_for_the_drive_makes_each_4kb_write_rewrite_its_8kb_unit() {
    let mut coarse = map_limited(true);
    let mut fine = map_limited(false);
    let span = json!({"size": "64m", "data_pattern": "incompressible"});
    let mut results = Vec::new();
    for s in [&mut coarse, &mut fine] {
        let mut w = json!({"rw": "write", "bs": "128k", "iodepth": 32});
        merge(&mut w, &span);
        run(s, w);
        let mut w = json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "number_ios": 20_000, "blockalign": "4k"});
        merge(&mut w, &span);
        let rw = run(s, w);
        let mut w = json!({"rw": "randwrite", "bs": "8k", "iodepth": 32, "number_ios": 10_000, "blockalign": "8k"});
        merge(&mut w, &span);
        let rw8 = run(s, w);
        let mut w = json!({"rw": "randread", "bs": "4k", "iodepth": 32, "number_ios": 20_000});
        merge(&mut w, &span);
        let rr = run(s, w);
        results.push((rw, rw8, rr));
    }
    let ((cw, cw8, cr), (fw, fw8, fr)) = (&results[0], &results[1]);
    let host = cw.stats.write.bytes as f64;
    println!(
        "4KB random writes into written 8KB units: {:.0} IOPS, {:.2} B merged per host B, {} reads; 4KB map: {:.0} IOPS, {} B merged",
        iops(cw),
        cw.ftl.map_merge_bytes as f64 / host,
        cw.ftl.rmw_reads,
        iops(fw),
        fw.ftl.map_merge_bytes
    );
    // Nearly every 4KB write finds the other half of its unit on NAND: it is
    // read and programmed again (its stored 4KB), at a read command's extra
    // firmware time and twice the programs.
    assert!(cw.ftl.map_merge_bytes as f64 > 0.9 * host, "{} merged of {host}", cw.ftl.map_merge_bytes);
    assert!(cw.ftl.rmw_reads as f64 > 0.9 * cw.stats.write.ios as f64);
    assert_eq!(fw.ftl.map_merge_bytes, 0);
    assert!(iops(cw) < 0.8 * iops(fw), "{} vs {}", iops(cw), iops(fw));
    // Whole 8KB units merge nothing; reads are the same.
    assert_eq!(cw8.ftl.map_merge_bytes, 0);
    assert_eq!(fw8.ftl.map_merge_bytes, 0);
    assert!((iops(cr) / iops(fr) - 1.0).abs() < 0.02, "{} vs {}", iops(cr), iops(fr));
}

#[test]
fn a_coarse_map_unit_with_nothing_written_beside_the_write_merges_nothing() {
    // Clean drive, 4KB writes to the first half of 8KB units only: the other
    // halves hold no data, so nothing is read or rewritten.
    let mut s = map_limited(true);
    let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "blockalign": "8k", "size": "64m", "iodepth": 32, "number_ios": 5_000}));
    assert_eq!(r.ftl.map_merge_bytes, 0);
    assert_eq!(r.ftl.rmw_reads, 0);
}

/// `controller.write_ack_at_die`: a write is acknowledged once its data is
/// in its die's page register, not once it is in the controller's buffer.
/// At low queue depth that adds the channel transfer (and any program in
/// progress on the die) to every write; at high queue depth the dies bind
/// either way, so the rate barely moves.
#[test]
fn writes_acknowledged_at_the_die_cost_low_queue_depths_most() {
    let job = |qd: u32| json!({"rw": "randwrite", "bs": "4k", "iodepth": qd, "size": 1u64 << 30, "runtime": "500ms"});
    let back = realistic(8, 64, json!({}));
    let at_die = realistic(8, 64, json!({"controller": {"write_ack_at_die": true}}));
    let (b1, d1) = (run(&mut back.clone(), job(1)), run(&mut at_die.clone(), job(1)));
    let (b32, d32) = (run(&mut back.clone(), job(32)), run(&mut at_die.clone(), job(32)));
    println!("QD1 {:.1} -> {:.1} MB/s; QD32 {:.1} -> {:.1} MB/s", mbps(&b1), mbps(&d1), mbps(&b32), mbps(&d32));
    // QD1: each write now also waits for a 4KB channel transfer (20 us at
    // 200 MB/s) on top of its link and firmware time.
    assert!(mbps(&d1) < 0.85 * mbps(&b1), "QD1 should lose the channel transfer per write");
    // QD32: the dies bind; acknowledging at the die costs little.
    assert!(mbps(&d32) > 0.9 * mbps(&b32), "QD32 should stay die-bound");
    // Only the acknowledgement moves: the NAND work per host byte is the same.
    assert!((d32.waf() - b32.waf()).abs() < 0.02, "WA {} vs {}", d32.waf(), b32.waf());
}

/// `controller.write_ack_at_die_whole_units`: only a write of at least one
/// program unit (16 KiB here: 8KB pages on 2 planes) waits for its dies; a
/// shorter one is acknowledged from the buffer, exactly as write-back.
#[test]
fn only_writes_of_whole_program_units_are_acknowledged_at_the_die() {
    let small = json!({"rw": "randwrite", "bs": "4k", "iodepth": 1, "size": 1u64 << 30, "runtime": "300ms"});
    let large = json!({"rw": "write", "bs": "128k", "iodepth": 1, "size": 1u64 << 30, "runtime": "300ms"});
    let back = realistic(8, 64, json!({}));
    let at_die = realistic(8, 64, json!({"controller": {"write_ack_at_die": true}}));
    let whole = realistic(8, 64, json!({"controller": {"write_ack_at_die_whole_units": true}}));
    let (sb, sd, sw) = (run(&mut back.clone(), small.clone()), run(&mut at_die.clone(), small.clone()), run(&mut whole.clone(), small));
    let (lb, ld, lw) = (run(&mut back.clone(), large.clone()), run(&mut at_die.clone(), large.clone()), run(&mut whole.clone(), large));
    println!(
        "4KB QD1 {:.1} / {:.1} / {:.1} MB/s; 128KB QD1 {:.1} / {:.1} / {:.1} MB/s (write-back / at the die / whole units)",
        mbps(&sb),
        mbps(&sd),
        mbps(&sw),
        mbps(&lb),
        mbps(&ld),
        mbps(&lw)
    );
    // Below a program unit: the same run as write-back, to the nanosecond.
    assert_eq!((sw.stats.write.bytes, sw.duration_ns), (sb.stats.write.bytes, sb.duration_ns));
    assert!(mbps(&sd) < 0.85 * mbps(&sb), "the check that acknowledging at the die costs 4KB writes");
    // Whole program units: acknowledged at the die, as with `write_ack_at_die`.
    assert_eq!((lw.stats.write.bytes, lw.duration_ns), (ld.stats.write.bytes, ld.duration_ns));
    assert!(mbps(&lw) < 0.95 * mbps(&lb), "QD1 large writes should wait for their dies");
}
