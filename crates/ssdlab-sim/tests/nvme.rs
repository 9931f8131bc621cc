//! The NVMe host over PCIe: the link from its generation and lanes, full
//! duplex, per-command TLP traffic, and a queue pair per job (docs/model.md
//! "Host interface"). One claim per test.

mod common;
use common::*;
use serde_json::{json, Value};
use ssdlab_sim::config::{pcie_command_overhead_ns, pcie_link_bytes_per_s};
use ssdlab_sim::{DriveConfig, Simulator};

/// `host` fields of an NVMe link (the SATA fields of `drive_with` cleared).
fn nvme_host(gen: u32, lanes: u32, queue_count: u32, queue_depth: u32) -> Value {
    json!({"interface": "nvme", "pcie_gen": gen, "pcie_lanes": lanes, "queue_count": queue_count,
           "queue_depth": queue_depth, "link_bytes_per_s": 0, "command_overhead_ns": 0, "ncq_depth": 0})
}

/// 32 dies of 8KB-page MLC on 8 fast channels, with `host` and `controller`
/// merged in.
fn drive(host: Value, controller: Value) -> Simulator {
    let e = json!({
        "host": host,
        "controller": merged(json!({"command_cost_ns": 2_000, "command_slots": 8, "write_buffer_bytes": 64u64 << 20}), controller),
        "nand": {"channels": 8, "packages_per_channel": 4, "planes_per_die": 2, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 800_000_000u64},
    });
    sim(drive_with(32, 64, 256 * 4, 1.15, "greedy", e), 7, false)
}

fn merged(mut a: Value, b: Value) -> Value {
    merge(&mut a, &b);
    a
}

fn config_error(host: Value) -> String {
    let mut e = json!({
        "drive": {"id": "t", "name": "t", "user_capacity_bytes": 1u64 << 30},
        "host": {"ncq_depth": 32},
        "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1u64 << 20},
        "nand": {"channels": 4, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 1, "blocks_per_plane": 512,
                 "pages_per_block": 256, "page_size_bytes": 4096, "tr_ns": 50_000, "tprog_ns": 900_000, "tbers_ns": 3_000_000,
                 "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 2}
    });
    e["host"] = host;
    DriveConfig::from_json_str(&e.to_string()).unwrap_err().to_string()
}

#[test]
fn the_pcie_link_rate_follows_from_generation_lanes_encoding_and_tlp_overhead() {
    // 8 GT/s x 4 lanes x 128/130 / 8 = 3.938e9 B/s raw; 256 B of every 280
    // (24 B of framing, header and LCRC per TLP) is payload: 3.601e9.
    assert_eq!(pcie_link_bytes_per_s(3, 4), Some(3_600_879_120));
    assert_eq!(pcie_link_bytes_per_s(4, 4), Some(7_201_758_241));
    assert_eq!(pcie_link_bytes_per_s(5, 4), Some(14_403_516_483));
    assert_eq!(pcie_link_bytes_per_s(3, 1), Some(900_219_780));
    assert_eq!(pcie_link_bytes_per_s(3, 3), None);
    assert_eq!(pcie_link_bytes_per_s(2, 4), None);
    // 232 B of doorbells, SQE, CQE and interrupt per command: 59 ns at gen 3 x4.
    assert_eq!(pcie_command_overhead_ns(3, 4), Some(59));
}

#[test]
fn a_wrong_nvme_host_field_gets_one_error_naming_it_and_what_is_allowed() {
    let ok = json!({"interface": "nvme", "pcie_gen": 4, "pcie_lanes": 4, "queue_count": 8, "queue_depth": 1024});
    let with = |k: &str, v: Value| {
        let mut h = ok.clone();
        h[k] = v;
        config_error(h)
    };
    let e = with("ncq_depth", json!(32));
    assert!(e.contains("host.ncq_depth") && e.contains("queue_count"), "{e}");
    let e = with("pcie_lanes", json!(3));
    assert!(e.contains("host.pcie_lanes") && e.contains("1, 2, 4, 8, 16"), "{e}");
    let e = with("pcie_gen", json!(2));
    assert!(e.contains("host.pcie_gen") && e.contains("3, 4, 5"), "{e}");
    let e = with("queue_depth", json!(65_537));
    assert!(e.contains("host.queue_depth") && e.contains("2..=65536"), "{e}");
    let e = with("queue_count", json!(0));
    assert!(e.contains("host.queue_count") && e.contains("1..=65535"), "{e}");
    let mut h = ok.clone();
    h.as_object_mut().unwrap().remove("queue_depth");
    let e = config_error(h);
    assert!(e.contains("host.queue_depth") && e.contains("missing"), "{e}");
    let e = config_error(json!({"interface": "sata-6g", "ncq_depth": 32, "pcie_lanes": 4}));
    assert!(e.contains("host.pcie_lanes") && e.contains("nvme"), "{e}");
    let e = config_error(json!({"interface": "sata-6g"}));
    assert!(e.contains("host.ncq_depth"), "{e}");
}

#[test]
fn sequential_reads_are_capped_by_the_lanes_the_link_has() {
    // The dies and channels (8 x 800 MB/s) outrun a gen 3 x1 link (900 MB/s
    // of payload) but not x4 (3.6 GB/s).
    let rate = |lanes: u32| {
        let mut s = drive(nvme_host(3, lanes, 8, 1024), json!({}));
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "1g"}));
        s.idle(1_000_000_000).unwrap();
        let r = run(&mut s, json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": "1g"}));
        r.stats.read.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
    };
    let (x1, x4) = (rate(1), rate(4));
    println!("128KB QD32 reads: gen 3 x1 {x1:.0} MB/s, x4 {x4:.0} MB/s");
    assert!(x1 < 900.3 && x1 > 0.95 * 900.2, "x1 runs at its link: {x1:.0} MB/s");
    assert!(x4 > 2.5 * x1, "x4 is not link-bound at x1's rate: {x4:.0} MB/s");
}

#[test]
fn the_full_duplex_link_carries_reads_and_writes_at_once() {
    // On gen 3 x1 a reader and a writer side by side move more than the
    // link's one-way rate (900 MB/s): each direction has all of it.
    let mut s = drive(nvme_host(3, 1, 8, 1024), json!({}));
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "1g"}));
    s.idle(1_000_000_000).unwrap();
    let r = wl(&s, json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": "1g", "runtime": "200ms"}));
    let w = wl(&s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": "1g", "size": "1g", "runtime": "200ms"}));
    let rs = s.run_jobs(&[r, w], &mut |_| true).unwrap();
    let mbps = |r: &ssdlab_sim::PhaseResult| (r.stats.read.bytes + r.stats.write.bytes) as f64 / (r.duration_ns as f64 / 1e9) / 1e6;
    let (rd, wr) = (mbps(&rs[0]), mbps(&rs[1]));
    println!("gen 3 x1, 128KB QD32 reader and writer side by side: {rd:.0} + {wr:.0} MB/s");
    assert!(rd + wr > 1.2 * 900.2, "reads and writes together exceed one direction: {rd:.0} + {wr:.0} MB/s");
}

#[test]
fn each_job_gets_its_own_queue_and_jobs_beyond_the_queue_count_share_them() {
    // Four readers at QD16 on queues of 8 entries (7 commands each): with 4
    // queues 28 commands are at the drive, with 1 queue only 7.
    let ios = |queues: u32| {
        let mut s = drive(nvme_host(4, 4, queues, 8), json!({}));
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "1g"}));
        s.idle(1_000_000_000).unwrap();
        let w = wl(&s, json!({"rw": "randread", "bs": "4k", "iodepth": 16, "size": "1g", "runtime": "200ms"}));
        let rs = s.run_jobs(&[w.clone(), w.clone(), w.clone(), w], &mut |_| true).unwrap();
        rs.iter().map(|r| r.iops()).collect::<Vec<f64>>()
    };
    let (four, one) = (ios(4), ios(1));
    let (a, b) = (four.iter().sum::<f64>(), one.iter().sum::<f64>());
    println!("4 jobs x QD16, queues of 8: 4 queues {four:?} = {a:.0} IOPS; 1 queue {one:?} = {b:.0} IOPS");
    assert!(a > 2.5 * b, "four queues hold four times the commands: {a:.0} against {b:.0} IOPS");
    // Round robin: the jobs on separate queues get even shares.
    let (lo, hi) = four.iter().fold((f64::MAX, 0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    assert!(hi / lo < 1.05, "round-robin arbitration serves each queue alike: {four:?}");
}

#[test]
fn one_job_may_keep_up_to_a_queues_entries_minus_one_in_flight() {
    // QD1000 on a queue of 1024 entries: more outstanding reads than SATA's
    // 32 keep more of the 32 dies busy.
    let mut s = drive(nvme_host(4, 4, 1, 1024), json!({"command_cost_ns": 500, "command_slots": 16}));
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "1g"}));
    s.idle(1_000_000_000).unwrap();
    let at = |s: &Simulator, qd: u32| {
        run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": qd, "size": "1g", "runtime": "100ms"})).iops()
    };
    let (q32, q1000) = (at(&s, 32), at(&s, 1000));
    println!("4KB random reads: QD32 {q32:.0}, QD1000 {q1000:.0} IOPS");
    assert!(q1000 > 1.3 * q32, "QD1000 {q1000:.0} must run above QD32 {q32:.0}");
}
