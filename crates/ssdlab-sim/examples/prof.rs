use serde_json::json;
use ssdlab_sim::{DriveConfig, SimOptions, Simulator, Workload};
use std::time::Instant;
fn main() {
    let gb: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(32);
    let blocks = 2048u64; let ppc = gb / 64;
    let cfg = json!({
        "drive": {"id": "p", "name": "p", "user_capacity_bytes": gb * 1_000_000_000u64},
        "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 3000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 8000, "write_buffer_bytes": 4u64 << 20},
        "nand": {"channels": 8, "packages_per_channel": ppc, "dies_per_package": 1, "planes_per_die": 2,
                 "blocks_per_plane": blocks, "pages_per_block": 256, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 4, "bg_gc_threshold_blocks": 8}
    });
    let cfg = DriveConfig::from_json_str(&cfg.to_string()).unwrap();
    let mut sim = Simulator::new(cfg, &SimOptions::default()).unwrap();
    let cap = sim.capacity_bytes();
    let fill = Workload::from_json(&json!({"rw":"write","bs":"128k","iodepth":32}), cap).unwrap();
    sim.run(&fill, &mut |_| true).unwrap();
    let warm = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"io_size": cap}), cap).unwrap();
    sim.run(&warm, &mut |_| true).unwrap();
    let meas = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"number_ios": 5_000_000u64}), cap).unwrap();
    let t = Instant::now();
    let r = sim.run(&meas, &mut |_| true).unwrap();
    let w = t.elapsed().as_secs_f64();
    println!("{:.2} M IO/s WA {:.2}", r.stats.write.ios as f64 / w / 1e6, r.waf());
}
