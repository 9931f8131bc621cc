//! Steady-state 4KB QD32 random writes (greedy GC) with the drive of
//! `benchmarks/engine_speed.py`, for profiling without Python.
//!
//! Run: cargo run --release --example prof -- [plain|behaviours] [capacity_gb] [measured_ios]
//! (defaults: plain, 256, 20000000; `DIES=n BPP=n CHANNELS=n` in the
//! environment override the die count, blocks per plane and channels, e.g. to
//! tell per-die costs from map costs, and `OFF=dr,raise,rec,tok,buf` turns
//! off behaviours of the `behaviours` drive one by one: data reduction,
//! RAISE, the recycling path, the active-die limit, the 64MB buffer).
//! Prints the wall time of each phase and the measured simulated I/Os per
//! wall second with the WA reached; the CPU time of the thread is printed
//! too, as it is less disturbed by other load, and a digest of each phase's
//! full result (equal digests: equal results).

use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, SimOptions, Simulator, Workload};
use std::time::Instant;

/// `drive(capacity_gb, behaviours)` of benchmarks/engine_speed.py.
fn drive(capacity_gb: u64, behaviours: bool) -> Value {
    let dies: u64 = std::env::var("DIES").map(|v| v.parse().unwrap()).unwrap_or(if capacity_gb >= 256 { 32 } else { 8 });
    let channels: u64 = std::env::var("CHANNELS").map(|v| v.parse().unwrap()).unwrap_or(8);
    let bpp: u64 = std::env::var("BPP").map(|v| v.parse().unwrap()).unwrap_or(2048);
    let mut d = json!({
        "drive": {"id": "bench", "name": format!("{capacity_gb}GB 25nm MLC"), "user_capacity_bytes": capacity_gb * 1_000_000_000},
        "host": {"interface": "sata-6g", "ncq_depth": 32},
        "controller": {"command_cost_ns": 8000, "write_buffer_bytes": 4u64 << 20},
        "nand": {"channels": channels, "packages_per_channel": dies / channels, "dies_per_package": 1, "planes_per_die": 2,
                 "blocks_per_plane": bpp, "pages_per_block": 256, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
        "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 4, "bg_gc_threshold_blocks": 8}
    });
    let off = std::env::var("OFF").unwrap_or_default();
    if behaviours {
        // RAISE takes one die's capacity: the user capacity shrinks by a die so
        // the data dies keep the same 7% spare area.
        d["nand"]["raise"] = json!(true);
        d["drive"]["user_capacity_bytes"] = json!(capacity_gb * 1_000_000_000 / dies * (dies - 1) / 512 * 512);
        d["data_reduction"] = json!({"enabled": true, "metadata_bytes_per_unit": 64, "compressible_stored_fraction": 0.3,
                                     "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0});
        d["ftl"]["recycle_bytes_per_s"] = json!(40_000_000u64 * dies);
        let c = d["controller"].as_object_mut().unwrap();
        c.insert("max_active_dies".into(), json!(dies * 3 / 4));
        c.insert("readahead_bytes".into(), json!(1u64 << 20));
        c.insert("readahead_min_qd".into(), json!(1));
        c.insert("seq_read_max_dies".into(), json!(16));
        c.insert("unmapped_read_ns".into(), json!(20_000));
        c.insert("write_buffer_bytes".into(), json!(64u64 << 20));
        for k in off.split(',') {
            match k {
                "dr" => {
                    d.as_object_mut().unwrap().remove("data_reduction");
                }
                "raise" => {
                    d["nand"]["raise"] = json!(false);
                }
                "rec" => {
                    d["ftl"]["recycle_bytes_per_s"] = json!(0);
                }
                "tok" => {
                    d["controller"]["max_active_dies"] = json!(0);
                }
                "buf" => {
                    d["controller"]["write_buffer_bytes"] = json!(4u64 << 20);
                }
                _ => {}
            }
        }
    }
    d
}

/// CPU time this thread has used, s.
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    #[allow(unsafe_code)]
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts)
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// FNV-1a of a result's JSON, as 16 hex digits.
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "plain".into());
    let behaviours = match kind.as_str() {
        "plain" => false,
        "behaviours" => true,
        other => panic!("first argument '{other}': plain or behaviours"),
    };
    let gb: u64 = args.next().map(|s| s.parse().unwrap()).unwrap_or(256);
    let measured_ios: u64 = args.next().map(|s| s.parse().unwrap()).unwrap_or(20_000_000);
    let cfg = DriveConfig::from_json_str(&drive(gb, behaviours).to_string()).unwrap();
    let mut sim = Simulator::new(cfg, &SimOptions::default()).unwrap();
    let cap = sim.capacity_bytes();
    let phase = |sim: &mut Simulator, w: Value, label: &str| {
        let w = Workload::from_json(&w, cap).unwrap();
        let t = Instant::now();
        let cpu0_s = thread_cpu_s();
        let r = sim.run(&w, &mut |_| true).unwrap();
        let wall_s = t.elapsed().as_secs_f64();
        let cpu_s = thread_cpu_s() - cpu0_s;
        println!(
            "{kind} {gb}GB {label}: {} I/Os in {wall_s:.2} s wall = {:.3} M I/O per wall s ({:.3} M per CPU s); WA {:.3}; drive {:.0} IOPS; digest {}",
            r.stats.write.ios,
            r.stats.write.ios as f64 / wall_s / 1e6,
            r.stats.write.ios as f64 / cpu_s / 1e6,
            r.waf(),
            r.iops(),
            digest(&r.to_json().to_string())
        );
    };
    phase(&mut sim, json!({"rw":"write","bs":"128k","iodepth":32}), "fill 128KB QD32");
    phase(&mut sim, json!({"rw":"randwrite","bs":"4k","iodepth":32,"io_size": cap}), "randwrite warm-up 1x capacity");
    phase(&mut sim, json!({"rw":"randwrite","bs":"4k","iodepth":32,"number_ios": measured_ios}), "randwrite steady state");
}
