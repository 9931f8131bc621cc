//! The controller's processor: command slots, per-command firmware time for
//! reads and writes, and per-command latency that holds no slot (docs/model.md
//! "Host interface"). One claim per test.

use crate::common::*;
use serde_json::{json, Value};
use ssdlab_sim::Simulator;

/// A 25nm-class drive of `dies` dies (8KB pages, 2 planes, tPROG 1.3 ms, 8
/// channels of 200 MB/s) behind a SATA 6Gbps-like link (2 us per command,
/// 550 MB/s), with `controller` merged into its controller section.
fn drive(dies: u32, controller: Value) -> Simulator {
    let mut e = json!({
        "controller": {"command_cost_ns": 10_000, "write_buffer_bytes": 16u64 << 20},
        "nand": {"channels": dies.min(8), "packages_per_channel": dies / dies.min(8), "planes_per_die": 2,
                 "page_size_bytes": 8192, "pages_per_block": 256, "tr_ns": 50_000, "tprog_ns": 1_300_000,
                 "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4}
    });
    merge(&mut e, &json!({ "controller": controller }));
    // 8KB x 2 planes holds 4x the 4KB slots per page of drive_with's layout.
    sim(drive_with(dies, 32, 256 * 4, 1.15, "greedy", e), 7, false)
}

/// 4KB random writes on the clean drive over 256MB: (IOPS, mean latency in us).
fn randwrite(s: &Simulator, qd: u32, ios: u64) -> (f64, f64) {
    let r = run(&mut s.clone(), json!({"rw": "randwrite", "bs": "4k", "iodepth": qd, "number_ios": ios, "size": "256m"}));
    (r.iops(), r.stats.write.lat.mean_ns() / 1e3)
}

/// 4KB random reads over 256MB written first: (IOPS, mean latency in us).
fn randread(s: &Simulator, qd: u32, ios: u64) -> (f64, f64) {
    let mut s = s.clone();
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "256m"}));
    s.idle(1_000_000_000).unwrap(); // the buffer's last programs finish
    let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": qd, "number_ios": ios, "size": "256m"}));
    (r.iops(), r.stats.read.lat.mean_ns() / 1e3)
}

fn near(a: f64, b: f64, tol: f64) -> bool {
    (a / b - 1.0).abs() < tol
}

#[test]
fn qd32_random_writes_run_above_qd3_on_a_drive_with_enough_dies() {
    // Three slots of 40 us: 75K IOPS once enough commands are outstanding.
    // At QD3 the rate is 3 / latency (Little's law), and each command's own
    // time (5 us latency + 2 us command + 40 us firmware + 7.45 us data, plus
    // waits for the others' transfers on the half-duplex link) is at least
    // 54.45 us: at most 55K IOPS.
    let cpu = json!({"command_cost_ns": 40_000, "command_slots": 3, "command_latency_ns": 5_000});
    // 32 dies program 32 x 16KB per 1.3 ms = 403 MB/s, above the 307 MB/s the slots allow.
    let wide = drive(32, cpu.clone());
    let (q3, l3) = randwrite(&wide, 3, 60_000);
    let (q32, _) = randwrite(&wide, 32, 60_000);
    println!("32 dies: QD3 {q3:.0} IOPS ({l3:.1} us), QD32 {q32:.0} IOPS");
    assert!(near(q3, 3e6 / l3, 0.01) && l3 >= 54.4, "QD3 is set by each command's latency: {q3:.0} IOPS, {l3:.1} us");
    assert!(near(q32, 3e6 / 40.0, 0.03), "QD32 is set by the slots: {q32:.0} IOPS");
    assert!(q32 > 1.25 * q3, "QD32 {q32:.0} must run well above QD3 {q3:.0}");
    // One slot of the same firmware: both depths stop at 1 / 40 us.
    let one = drive(32, json!({"command_cost_ns": 40_000, "command_latency_ns": 5_000}));
    let (o3, _) = randwrite(&one, 3, 30_000);
    let (o32, _) = randwrite(&one, 32, 30_000);
    assert!(near(o3, 25_000.0, 0.02) && near(o32, 25_000.0, 0.02), "one slot: QD3 {o3:.0}, QD32 {o32:.0}");
    // With 4 dies the NAND (4 x 16KB per 1.3 ms = 12.3K IOPS) binds both
    // depths once the 16MB buffer has filled: the slots do not help.
    let narrow = drive(4, cpu);
    let (n3, _) = randwrite(&narrow, 3, 60_000);
    let (n32, _) = randwrite(&narrow, 32, 60_000);
    println!("4 dies: QD3 {n3:.0} IOPS, QD32 {n32:.0} IOPS");
    assert!(near(n32, n3, 0.08) && n32 < 20_000.0, "die-bound: QD3 {n3:.0}, QD32 {n32:.0}");
}

#[test]
fn with_one_slot_throughput_is_one_over_the_command_cost() {
    // Separate costs: 50 us per write, 80 us per read. 32 dies, so neither
    // the NAND nor the link (9.4 us per 4KB command) is the limit.
    let costs = json!({"command_cost_ns": 10_000, "command_cost_write_ns": 50_000, "command_cost_read_ns": 80_000});
    let one = drive(32, costs.clone());
    let (w, _) = randwrite(&one, 32, 20_000);
    let (r, _) = randread(&one, 32, 20_000);
    println!("1 slot: writes {w:.0} IOPS, reads {r:.0} IOPS");
    assert!(near(w, 1e9 / 50_000.0, 0.01), "writes {w:.0} IOPS, want 20000");
    assert!(near(r, 1e9 / 80_000.0, 0.01), "reads {r:.0} IOPS, want 12500");
    // Four slots: four commands' firmware runs at once.
    let mut four = costs;
    four["command_slots"] = json!(4);
    let four = drive(32, four);
    let (w4, _) = randwrite(&four, 32, 40_000);
    let (r4, _) = randread(&four, 32, 40_000);
    println!("4 slots: writes {w4:.0} IOPS, reads {r4:.0} IOPS");
    assert!(near(w4, 4e9 / 50_000.0, 0.03), "writes {w4:.0} IOPS, want 80000");
    assert!(near(r4, 4e9 / 80_000.0, 0.03), "reads {r4:.0} IOPS, want 50000");
}

#[test]
fn qd1_latency_includes_the_command_cost_and_the_command_latency() {
    // More slots do not hide a command's own firmware time: at QD1 every
    // command waits for its cost and its latency once.
    let lat = |cost_w: u64, cost_r: u64, latency: u64| {
        let s = drive(
            32,
            json!({"command_cost_ns": 10_000, "command_cost_write_ns": cost_w, "command_cost_read_ns": cost_r,
                                 "command_slots": 2, "command_latency_ns": latency}),
        );
        (randwrite(&s, 1, 5_000).1, randread(&s, 1, 5_000).1)
    };
    let (w0, r0) = lat(20_000, 30_000, 0);
    let (w1, r1) = lat(60_000, 90_000, 0);
    let (w2, r2) = lat(20_000, 30_000, 7_000);
    println!("QD1 write {w0:.2} -> {w1:.2} / {w2:.2} us, read {r0:.2} -> {r1:.2} / {r2:.2} us");
    // A write: 2 us command + cost + 7.45 us data on the link.
    assert!((w0 - (2.0 + 20.0 + 7.45)).abs() < 0.1, "QD1 write latency {w0:.2} us");
    assert!((w1 - w0 - 40.0).abs() < 0.1, "40 us more firmware per write: {:.2} us more", w1 - w0);
    assert!((r1 - r0 - 60.0).abs() < 0.5, "60 us more firmware per read: {:.2} us more", r1 - r0);
    assert!((w2 - w0 - 7.0).abs() < 0.1 && (r2 - r0 - 7.0).abs() < 0.5, "7 us latency: +{:.2} / +{:.2} us", w2 - w0, r2 - r0);
}

/// A command's link time goes with its data, and a command waits only for
/// the device's data burst in progress (SATA's host yields the link), not
/// for transfers booked ahead of it. Before, each command's FIS had to fit
/// the gaps left by the data of the commands queued before it, and a loaded
/// link settled into fragment patterns that idled the command slots, picked
/// by microseconds of history: the Vertex 4 256GB fw1.4's 4KB random writes
/// right after a fill ran at 81.3K, 90.9K, 78.5K, 81.3K and 90.9K IOPS with
/// tPROG x0.996, x0.998, x1, x1.002 and x1.004.
#[test]
fn random_writes_do_not_jump_between_rates_as_tprog_moves_by_a_fraction_of_a_percent() {
    let mut base = preset_config("vertex4-256-fw14");
    base.ftl.perf_mode_tprog_ns = 0; // MLC programs throughout: one tPROG
    let tprog = base.nand.tprog_ns;
    let slots = 1e9 * base.controller.command_slots as f64 / base.controller.write_cost_ns() as f64;
    let iops: Vec<f64> = [996u64, 998, 1000, 1002, 1004]
        .iter()
        .map(|&f| {
            let mut cfg = base.clone();
            cfg.nand.tprog_ns = tprog * f / 1000;
            let mut s = sim(cfg, 1, false);
            run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "4g"}));
            let job = json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": "4g", "runtime": "1s",
                             "data_pattern": "incompressible"});
            run(&mut s, job).iops()
        })
        .collect();
    println!("vertex4-256-fw14 4KB random writes after a 4GB fill, tPROG x0.996..x1.004: {iops:.0?} IOPS; slots {slots:.0}");
    let (lo, hi) = iops.iter().fold((f64::MAX, 0f64), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(hi / lo < 1.01, "a 0.8% range of tPROG moved the rate from {lo:.0} to {hi:.0} IOPS");
    assert!(lo > 0.99 * slots, "the command slots ({slots:.0} IOPS) should set the pace: {lo:.0}");
}
