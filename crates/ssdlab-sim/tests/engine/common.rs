//! Small drives for tests, built in code so each test states its geometry.
#![allow(dead_code)]

use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, SimOptions, Simulator, Workload};

/// A drive of `dies` dies with `blocks` blocks of `pages` 4KB pages each (one
/// plane), whose user capacity is raw / `a` (a = physical / user pages).
pub fn drive(dies: u32, blocks: u32, pages: u32, a: f64, policy: &str) -> DriveConfig {
    drive_with(dies, blocks, pages, a, policy, json!({}))
}

/// Like [`drive`], with `extra` merged section by section (e.g.
/// `{"controller": {"max_active_dies": 2}, "data_reduction": {...}}`).
pub fn drive_with(dies: u32, blocks: u32, pages: u32, a: f64, policy: &str, extra: Value) -> DriveConfig {
    let raw_units = dies as u64 * blocks as u64 * pages as u64;
    let user_units = (raw_units as f64 / a).floor() as u64;
    let cfg = json!({
        "drive": {"id": "test", "name": "test drive", "user_capacity_bytes": user_units * 4096},
        "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 2000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1u64 << 20},
        "nand": {"channels": dies.min(4), "packages_per_channel": (dies / dies.min(4)), "dies_per_package": 1,
                 "planes_per_die": 1, "blocks_per_plane": blocks, "pages_per_block": pages,
                 "page_size_bytes": 4096, "tr_ns": 50_000, "tprog_ns": 900_000, "tbers_ns": 3_000_000,
                 "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": policy, "gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4}
    });
    let mut cfg = cfg;
    merge(&mut cfg, &extra);
    DriveConfig::from_json_str(&cfg.to_string()).unwrap()
}

/// A shipped preset (`python/ssdlab/drives/ID.toml`, composed with its
/// controller profile and NAND part).
pub fn preset_config(id: &str) -> DriveConfig {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../python/ssdlab/drives/{id}.toml"));
    DriveConfig::from_toml_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

pub fn merge(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// Sequential write throughput in MB/s of a 128KB QD`qd` pass over `bytes`.
pub fn seq_write_mbps(sim: &mut Simulator, bytes: u64, qd: u32, data: &str) -> f64 {
    let r = run(sim, json!({"rw": "write", "bs": "128k", "iodepth": qd, "io_size": bytes, "data_pattern": data}));
    r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

pub fn sim(cfg: DriveConfig, seed: u64, check: bool) -> Simulator {
    Simulator::new(cfg, &SimOptions { seed, check, ..Default::default() }).unwrap()
}

pub fn wl(sim: &Simulator, v: Value) -> Workload {
    Workload::from_json(&v, sim.capacity_bytes()).unwrap()
}

pub fn run(sim: &mut Simulator, v: Value) -> ssdlab_sim::PhaseResult {
    let w = wl(sim, v);
    sim.run(&w, &mut |_| true).unwrap()
}

/// Sequential 128KB QD32 fill of the whole drive.
pub fn fill(sim: &mut Simulator) -> ssdlab_sim::PhaseResult {
    run(sim, json!({"rw": "write", "bs": "128k", "iodepth": 32}))
}

/// A 25nm-class drive (8KB pages, 2 planes, 256 pages per block, 1.3 ms
/// programs, 8 channels) of `dies` dies and `blocks` blocks per plane, whose
/// user capacity is raw / `a`, with `extra` merged section by section.
pub fn realistic_drive(dies: u32, blocks: u32, a: f64, seed: u64, extra: Value) -> Simulator {
    let mut e = json!({
        "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 3000},
        "controller": {"command_cost_ns": 10_000, "write_buffer_bytes": 4u64 << 20},
        "nand": {"channels": dies.min(8), "packages_per_channel": dies / dies.min(8), "planes_per_die": 2,
                 "page_size_bytes": 8192, "pages_per_block": 256, "tr_ns": 50_000, "tprog_ns": 1_300_000,
                 "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4}
    });
    merge(&mut e, &extra);
    // drive_with() sizes capacity from 4KB pages x 1 plane; with 8KB x 2
    // planes a block holds 4x the slots, so pass 4x the pages to keep `a`.
    sim(drive_with(dies, blocks, 256 * 4, a, "greedy", e), seed, false)
}
