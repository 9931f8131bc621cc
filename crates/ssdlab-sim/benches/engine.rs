//! Engine speed on a 256GB drive with 7% spare area (run: cargo bench -p ssdlab-sim).
//! Prints simulated I/Os per wall second for 4KB random writes at QD32 in GC
//! steady state (greedy), GB of simulated data per wall second for a 128KB
//! QD32 sequential fill, and bytes of RAM per 4KB of raw NAND.

use serde_json::json;
use ssdlab_sim::{DriveConfig, SimOptions, Simulator, Workload};
use std::time::Instant;

fn drive_256() -> DriveConfig {
    let cfg = json!({
        "drive": {"id": "bench-256", "name": "256GB 32-die 25nm MLC", "user_capacity_bytes": 256_000_000_000u64},
        "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 3000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 8000, "write_buffer_bytes": 4u64 << 20},
        "nand": {"channels": 8, "packages_per_channel": 4, "dies_per_package": 1, "planes_per_die": 2,
                 "blocks_per_plane": 2048, "pages_per_block": 256, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 4, "bg_gc_threshold_blocks": 8}
    });
    DriveConfig::from_json_str(&cfg.to_string()).unwrap()
}

fn main() {
    let only = std::env::args().nth(1).unwrap_or_default();
    let cfg = drive_256();
    let g = cfg.geometry();
    let t0 = Instant::now();
    let mut sim = Simulator::new(cfg, &SimOptions::default()).unwrap();
    println!("allocate: {:.2} s, spare {:.2}%", t0.elapsed().as_secs_f64(), g.spare_fraction() * 100.0);
    let cap = sim.capacity_bytes();
    let fill = Workload::from_json(&json!({"rw":"write","bs":"128k","iodepth":32}), cap).unwrap();
    let t = Instant::now();
    let r = sim.run(&fill, &mut |_| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!(
        "fill 128KB QD32: {:.1} GB simulated in {:.2} s wall = {:.1} GB/s simulated per wall second (drive: {:.0} MB/s)",
        r.stats.write.bytes as f64 / 1e9,
        w,
        r.stats.write.bytes as f64 / 1e9 / w,
        r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
    );
    if only == "fill" {
        return;
    }
    // Converge to GC steady state, then measure.
    let warm = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"io_size": cap}), cap).unwrap();
    let t = Instant::now();
    let r = sim.run(&warm, &mut |_| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!(
        "warm-up randwrite 1x capacity: {} I/Os in {:.2} s wall = {:.2} M I/O/s, WA {:.2}",
        r.stats.write.ios,
        w,
        r.stats.write.ios as f64 / w / 1e6,
        r.waf()
    );
    let meas = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"number_ios": 20_000_000u64}), cap).unwrap();
    let t = Instant::now();
    let r = sim.run(&meas, &mut |_| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!(
        "steady randwrite 4KB QD32: {} I/Os in {:.2} s wall = {:.2} M simulated I/O per wall second; WA {:.2}; drive {:.0} IOPS",
        r.stats.write.ios,
        w,
        r.stats.write.ios as f64 / w / 1e6,
        r.waf(),
        r.iops()
    );
    let est = ssdlab_sim::config::memory_estimate_bytes(&g, false);
    println!(
        "RAM in use: {:.2} bytes per 4KB of raw NAND (reserved at most: {:.2})",
        sim.memory_in_use_bytes() as f64 / g.raw_slots as f64,
        est as f64 / g.raw_slots as f64
    );
}
