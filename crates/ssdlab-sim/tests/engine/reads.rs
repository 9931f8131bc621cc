//! Read behaviour on the shipped presets: a read-ahead is die
//! reads issued ahead of the host, so at QD1 a drive runs ahead by its
//! window and no more; a large request is split into die reads that run
//! together, its data streaming to the host as they land; the QD threshold
//! of NCQ streaming stays a firmware parameter. Each test prints its figures.

use crate::common::{preset_config as load, run};
use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, PhaseResult, SimOptions, Simulator};

/// The preset, with its first `span` written by one sequential 128KB QD32
/// pass (the CLI's `--precondition filled --size SPAN`).
fn filled(cfg: DriveConfig, span: &str) -> Simulator {
    let mut s = Simulator::new(cfg, &SimOptions { seed: 1, ..Default::default() }).unwrap();
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span}));
    s
}

fn mbps(r: &PhaseResult) -> f64 {
    r.stats.read.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

/// Sequential read MB/s of `bs` requests at `qd` over the first 1GB.
fn seq_read(s: &Simulator, bs: &str, qd: u32) -> f64 {
    let job: Value = json!({"rw": "read", "bs": bs, "iodepth": qd, "size": "1g", "io_size": "1g"});
    mbps(&run(&mut s.clone(), job))
}

fn link_mbps(cfg: &DriveConfig) -> f64 {
    cfg.host.link_bytes_per_s as f64 / 1e6
}

#[test]
fn vertex4_fw15_qd1_sequential_reads_stay_below_the_link_and_qd32_reaches_it() {
    let cfg = load("vertex4-256-fw15");
    let link = link_mbps(&cfg);
    let s = filled(cfg, "2g");
    let (q1, q32) = (seq_read(&s, "128k", 1), seq_read(&s, "128k", 32));
    println!("vertex4-256-fw15 128KB sequential read: QD1 {q1:.1} MB/s, QD32 {q32:.1} MB/s, link {link:.0} MB/s");
    assert!(q1 < 0.93 * link, "QD1 {q1:.1} should stay below the link {link:.0}");
    assert!(q1 < 0.93 * q32, "QD1 {q1:.1} should stay below QD32 {q32:.1}");
    assert!(q32 > 0.97 * link, "QD32 {q32:.1} should reach the link {link:.0}");
}

#[test]
fn a_16mb_read_on_fw13_beats_the_128kb_qd1_read() {
    let s = filled(load("vertex4-256-fw13"), "2g");
    let (small, large) = (seq_read(&s, "128k", 1), seq_read(&s, "16m", 1));
    println!("vertex4-256-fw13 sequential read QD1: 128KB {small:.1} MB/s, 16MB {large:.1} MB/s");
    assert!(large > 1.5 * small, "16MB QD1 {large:.1} should be much better than 128KB QD1 {small:.1}");
    // Still capped at 8 dies at a time: below what fw1.5 reaches uncapped.
    let f15 = filled(load("vertex4-256-fw15"), "2g");
    let uncapped = seq_read(&f15, "16m", 1);
    println!("vertex4-256-fw15 16MB QD1: {uncapped:.1} MB/s");
    assert!(large < 0.9 * uncapped, "the 8-die cap should still show: fw1.3 {large:.1}, fw1.5 {uncapped:.1}");
}

#[test]
fn fw13_128kb_reads_are_slow_at_qd1_and_qd2_and_recover_from_qd3() {
    let s = filled(load("vertex4-256-fw13"), "2g");
    let q: Vec<f64> = [1, 2, 3, 4, 32].iter().map(|&qd| seq_read(&s, "128k", qd)).collect();
    println!(
        "vertex4-256-fw13 128KB sequential read QD1 {:.1}, QD2 {:.1}, QD3 {:.1}, QD4 {:.1}, QD32 {:.1} MB/s",
        q[0], q[1], q[2], q[3], q[4]
    );
    assert!(q[0] < 0.5 * q[4] && q[1] < 0.7 * q[4], "QD1-2 should be slow");
    assert!(q[0] < q[1], "QD2 should recover part of it");
    assert!(q[2] > 0.9 * q[4], "read-ahead from QD3 should recover: QD3 {:.1}", q[2]);
    // The threshold is the firmware's: from QD1 the same drive is fast at QD1.
    let mut cfg = load("vertex4-256-fw13");
    cfg.controller.readahead_min_qd = 1;
    let early = seq_read(&filled(cfg, "2g"), "128k", 1);
    println!("  with read-ahead from QD1: QD1 {early:.1} MB/s");
    assert!(early > 1.5 * q[0]);
}

#[test]
fn at_qd1_a_read_ahead_runs_ahead_by_its_window_only() {
    // The fw1.5 drive with windows of 64KB, 128KB and 1MB, and with the
    // read-ahead off at QD1: a window that covers few dies bounds QD1 by
    // the die reads it keeps in flight, a large one leaves the link and the
    // per-command time.
    let mut rates = Vec::new();
    for (label, bytes, min_qd) in [("off at QD1", 1u64 << 20, 2u32), ("64KB", 64 << 10, 1), ("128KB", 128 << 10, 1), ("1MB", 1 << 20, 1)] {
        let mut cfg = load("vertex4-256-fw15");
        cfg.controller.readahead_bytes = bytes;
        cfg.controller.readahead_min_qd = min_qd;
        let r = seq_read(&filled(cfg, "2g"), "128k", 1);
        println!("vertex4-256-fw15, read-ahead {label}: 128KB QD1 {r:.1} MB/s");
        rates.push(r);
    }
    assert!(rates[1] > 1.1 * rates[0], "a 64KB window should hide part of the die time");
    assert!(rates[1] < 0.75 * rates[3], "but not all of it");
    assert!(rates[2] > rates[1] && rates[3] >= rates[2]);
}

#[test]
fn streamed_reads_are_deterministic() {
    let s = filled(load("vertex4-256-fw13"), "1g");
    let job = json!({"rw": "read", "bs": "16m", "iodepth": 2, "size": "1g", "io_size": "512m"});
    let (a, b) = (run(&mut s.clone(), job.clone()), run(&mut s.clone(), job));
    println!("16MB QD2 twice: {} and {} ns", a.duration_ns, b.duration_ns);
    assert_eq!(a.duration_ns, b.duration_ns);
    assert_eq!(format!("{:?}", a.stats), format!("{:?}", b.stats));
}

/// A stream of transfers smaller than a 4KB unit (ATTO's 0.5-2KB) is a
/// stream too: the detector compares host addresses, and the unit a request
/// read part of stays in the read-ahead buffer for the next request. Each
/// unit comes from the NAND once, and the rate is the controller's, not one
/// die read per request queued on the same die.
#[test]
fn sub_4kb_sequential_reads_stream_from_the_read_ahead() {
    let s = filled(load("neutron-240"), "2g");
    let job = |bs: &str| json!({"rw": "read", "bs": bs, "iodepth": 4, "size": "64m", "io_size": "64m"});
    for bs in ["512", "1k", "2k"] {
        let r = run(&mut s.clone(), job(bs));
        let units = r.stats.read.bytes / 4096;
        let mb = mbps(&r);
        println!("neutron-240 {bs} sequential read QD4: {mb:.1} MB/s, {} NAND bytes read for {units} units", r.nand.bytes_read);
        assert!(
            r.nand.bytes_read <= (units + 512) * 4096 * 2,
            "each unit should be read from the NAND about once, read {} B",
            r.nand.bytes_read
        );
        let r4k = run(&mut s.clone(), job("4k"));
        let iops = r.stats.read.ios as f64 / (r.duration_ns as f64 / 1e9);
        let iops_4k = r4k.stats.read.ios as f64 / (r4k.duration_ns as f64 / 1e9);
        assert!(iops > 0.95 * iops_4k, "{bs}: {iops:.0} IOPS should be at least the 4KB stream's {iops_4k:.0} (controller-bound)");
    }
    // Without read-ahead every request reads its unit from the die.
    let mut cfg = load("neutron-240");
    cfg.controller.readahead_bytes = 0;
    let plain = filled(cfg, "2g");
    let r = run(&mut plain.clone(), job("512"));
    let units = r.stats.read.bytes / 4096;
    println!("neutron-240 without read-ahead, 512 B QD4: {:.1} MB/s, {} NAND bytes read", mbps(&r), r.nand.bytes_read);
    assert!(r.nand.bytes_read >= units * 8 * 4096, "without read-ahead each 512 B request reads its unit");
}

/// The Vertex 4 64GB fw1.5 with a 64 MiB sequential write just done (its
/// 8 dies drain the 64 MiB buffer at about 200 MB/s in performance mode, for
/// about 300 ms), then `idle_ns` of idle: 64 MiB read back in 16 MiB
/// requests at QD1 (AS-SSD's sequential read), then written again likewise
/// (its sequential write), with the buffer `short` bytes under 64 MiB.
fn read_then_write_after_a_write(idle_ns: u64, short: u64) -> (f64, f64) {
    let mut cfg = load("vertex4-64-fw15");
    cfg.controller.write_buffer_bytes -= short;
    let mut s = Simulator::new(cfg, &SimOptions { seed: 1, ..Default::default() }).unwrap();
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "64m"}));
    if idle_ns > 0 {
        s.idle(idle_ns).unwrap();
    }
    let r = run(&mut s, json!({"rw": "read", "bs": "16m", "iodepth": 1, "size": "64m", "io_size": "64m"}));
    let w = run(&mut s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "64m", "io_size": "64m"}));
    (mbps(&r), w.stats.write.bytes as f64 / (w.duration_ns as f64 / 1e9) / 1e6)
}

#[test]
fn data_still_in_the_write_buffer_is_read_from_it_not_from_the_dies_behind_its_programs() {
    // Read right after the write, most of the data is still in the buffer waiting for its die: it is answered
    // from there, so the read is about as fast as once the buffer has drained, and it books no die reads behind
    // the pending programs that would hold up the write after it.
    let (r_now, w_now) = read_then_write_after_a_write(0, 0);
    let (r_later, w_later) = read_then_write_after_a_write(1_000_000_000, 0);
    let (_, w_short) = read_then_write_after_a_write(0, 32 * 1024);
    println!(
        "vertex4-64-fw15 16MB QD1: read right after a 64 MiB write {r_now:.1} MB/s, after 1 s idle {r_later:.1}; \
              the write after it {w_now:.1} MB/s ({w_later:.1} after idle), {w_short:.1} with 32 KiB less buffer"
    );
    assert!(r_now > 0.95 * r_later, "read right after {r_now:.1} should be within 5% of after idle {r_later:.1}");
    // the write needs the buffer back: 32 KiB of it short costs a wait for one unit, not for the reads' die time
    assert!(w_short > 0.85 * w_now, "write with 32 KiB less buffer {w_short:.1} should be near {w_now:.1}");
}
