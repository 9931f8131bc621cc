//! Key figures of a drive preset, simulated, beside the published ones.
//!
//! Run: `cargo run --release --example preset_check -- python/ssdlab/drives/ID.toml [more.toml ...]`
//!
//! Tests (METHODOLOGY.md conditions; MB/s = 1e6 B/s):
//! - rated-style, clean drive: 128KB sequential read and write QD32 for 60 s
//!   with `repeated` data (the read over 8 GiB written first); 4KB random
//!   write QD32 over 8 GiB for 60 s (`repeated`); 4KB random read QD32 over the
//!   8 GiB written.
//! - Iometer 128KB sequential write QD1 for 60 s after a fill (one 128KB QD32
//!   incompressible pass over the drive), `repeated` and `incompressible`.
//! - AS-SSD sequential write, 16MB transfers QD1 over a 1 GiB file,
//!   incompressible: clean / dirty (filled twice) / dirty then full TRIM.
//! - 128KB sequential read after the fill at QD 1, 2, 4, 8, 16, 32.
//! - Average power: idle, sequential write, random write.
//!
//! Published figures are those of the shared calibration table
//! (spec/calibration.csv), keyed here by preset id. Measured figures should
//! land within 10%, rated (spec sheet) figures within 15%.

use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, PhaseResult, SimOptions, Simulator, Workload};
use std::time::Instant;

/// (preset id, test key, published value, "measured" | "rated", note).
/// Test keys: seq_read_rated, seq_write_rated (MB/s), rr_rated, rw_rated
/// (IOPS), iometer_rep, iometer_inc, asssd_clean, asssd_dirty, asssd_trim,
/// seq_read_qd1 (MB/s).
const PUBLISHED: &[(&str, &str, f64, &str, &str)] = &[
    ("force-f120", "iometer_rep", 214.8, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("force-f120", "iometer_inc", 136.6, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("vertex2-25nm-120", "iometer_rep", 221.8, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("vertex2-25nm-120", "iometer_inc", 118.5, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("vertex2-hynix-120", "iometer_rep", 221.3, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("vertex2-hynix-120", "iometer_inc", 95.8, "measured", "AnandTech Vertex 3 120GB review (2011)"),
    ("force-f120", "asssd_clean", 131.7, "measured", "AnandTech Vertex 3 Pro preview (2011), 'SF-1200 120GB'"),
    ("force-f120", "asssd_dirty", 70.3, "measured", "AnandTech Vertex 3 Pro preview (2011), 'SF-1200 120GB'"),
    ("force-f120", "asssd_trim", 71.0, "measured", "AnandTech Vertex 3 Pro preview (2011), 'SF-1200 120GB'"),
    ("vertex3pro-200", "asssd_clean", 229.5, "measured", "AnandTech Vertex 3 Pro preview (2011)"),
    ("vertex3pro-200", "asssd_dirty", 230.0, "measured", "AnandTech Vertex 3 Pro preview (2011)"),
    ("vertex3pro-200", "asssd_trim", 198.2, "measured", "AnandTech Vertex 3 Pro preview (2011)"),
    ("samsung830-256", "seq_read_qd1", 470.0, "measured", "Tom's Hardware 840 Pro review (2012); approximate"),
    ("force-f120", "seq_read_rated", 285.0, "rated", "Corsair spec"),
    ("force-f120", "seq_write_rated", 275.0, "rated", "Corsair spec"),
    ("vertex2-25nm-120", "seq_read_rated", 280.0, "rated", "OCZ spec"),
    ("vertex2-25nm-120", "seq_write_rated", 270.0, "rated", "OCZ spec"),
    ("vertex3-120", "seq_read_rated", 550.0, "rated", "OCZ spec"),
    ("vertex3-120", "seq_write_rated", 500.0, "rated", "OCZ spec"),
    ("vertex3-120", "rr_rated", 20000.0, "rated", "OCZ spec"),
    ("vertex3-120", "rw_rated", 60000.0, "rated", "OCZ spec"),
    ("vertex3-240", "seq_read_rated", 550.0, "rated", "OCZ spec"),
    ("vertex3-240", "seq_write_rated", 520.0, "rated", "OCZ spec"),
    ("vertex3-240", "rr_rated", 40000.0, "rated", "OCZ spec"),
    ("vertex3-240", "rw_rated", 60000.0, "rated", "OCZ spec"),
    ("vertex3-480", "seq_read_rated", 530.0, "rated", "OCZ spec"),
    ("vertex3-480", "seq_write_rated", 450.0, "rated", "OCZ spec"),
    ("vertex3-480", "rr_rated", 50000.0, "rated", "OCZ spec"),
    ("vertex3-480", "rw_rated", 40000.0, "rated", "OCZ spec"),
    ("vertex4-64-fw15", "seq_read_rated", 460.0, "rated", "OCZ spec (fw1.4 figure; no fw1.5 rating published)"),
    ("vertex4-64-fw15", "seq_write_rated", 220.0, "rated", "OCZ spec (fw1.4 figure; no fw1.5 rating published)"),
    ("vertex4-64-fw15", "rr_rated", 70000.0, "rated", "OCZ spec (fw1.4 figure)"),
    ("vertex4-64-fw15", "rw_rated", 50000.0, "rated", "OCZ spec (fw1.4 figure)"),
    ("vertex4-128-fw13", "seq_read_rated", 535.0, "rated", "OCZ spec"),
    ("vertex4-128-fw13", "seq_write_rated", 200.0, "rated", "OCZ spec"),
    ("vertex4-128-fw14", "seq_read_rated", 550.0, "rated", "OCZ spec"),
    ("vertex4-128-fw14", "seq_write_rated", 420.0, "rated", "OCZ spec"),
    ("vertex4-128-fw14", "rr_rated", 90000.0, "rated", "OCZ spec"),
    ("vertex4-128-fw14", "rw_rated", 85000.0, "rated", "OCZ spec"),
    ("vertex4-128-fw15", "seq_read_rated", 560.0, "rated", "OCZ spec"),
    ("vertex4-128-fw15", "seq_write_rated", 430.0, "rated", "OCZ spec"),
    ("vertex4-256-fw13", "seq_read_rated", 535.0, "rated", "OCZ spec"),
    ("vertex4-256-fw13", "seq_write_rated", 380.0, "rated", "OCZ spec"),
    ("vertex4-256-fw14", "seq_read_rated", 550.0, "rated", "OCZ spec"),
    ("vertex4-256-fw14", "seq_write_rated", 465.0, "rated", "OCZ spec"),
    ("vertex4-256-fw14", "rr_rated", 90000.0, "rated", "OCZ spec"),
    ("vertex4-256-fw14", "rw_rated", 85000.0, "rated", "OCZ spec"),
    ("vertex4-256-fw15", "seq_read_rated", 560.0, "rated", "OCZ spec"),
    ("vertex4-256-fw15", "seq_write_rated", 510.0, "rated", "OCZ spec"),
    ("vertex4-512-fw15", "seq_read_rated", 560.0, "rated", "OCZ spec"),
    ("vertex4-512-fw15", "seq_write_rated", 510.0, "rated", "OCZ spec"),
    ("vertex4-512-fw15", "rr_rated", 95000.0, "rated", "OCZ spec (fw1.4 figure)"),
    ("vertex4-512-fw15", "rw_rated", 85000.0, "rated", "OCZ spec (fw1.4 figure)"),
    ("x25m-g2-160", "seq_read_rated", 250.0, "rated", "Intel spec"),
    ("x25m-g2-160", "seq_write_rated", 100.0, "rated", "Intel spec"),
    ("x25m-g2-160", "rr_rated", 35000.0, "rated", "Intel spec"),
    ("x25m-g2-160", "rw_rated", 8600.0, "rated", "Intel spec"),
    ("intel320-300", "seq_read_rated", 270.0, "rated", "Intel spec"),
    ("intel320-300", "seq_write_rated", 205.0, "rated", "Intel spec"),
    ("intel320-300", "rr_rated", 39500.0, "rated", "Intel spec"),
    ("intel510-250", "rr_rated", 20000.0, "rated", "Intel spec"),
    ("crucial-m4-256", "seq_read_rated", 415.0, "rated", "Crucial spec"),
    ("crucial-m4-256", "seq_write_rated", 260.0, "rated", "Crucial spec"),
    ("crucial-m4-256", "rr_rated", 40000.0, "rated", "Crucial spec"),
    ("crucial-m4-256", "rw_rated", 50000.0, "rated", "Crucial spec"),
    ("samsung840pro-256", "seq_read_rated", 540.0, "rated", "Samsung spec"),
    ("samsung840pro-256", "seq_write_rated", 520.0, "rated", "Samsung spec"),
    ("samsung840pro-256", "rr_rated", 100000.0, "rated", "Samsung spec"),
    ("samsung840pro-256", "rw_rated", 90000.0, "rated", "Samsung spec"),
    ("vector-256", "seq_read_rated", 550.0, "rated", "OCZ spec"),
    ("vector-256", "seq_write_rated", 530.0, "rated", "OCZ spec"),
    ("vector-256", "rr_rated", 100000.0, "rated", "OCZ spec"),
    ("vector-256", "rw_rated", 95000.0, "rated", "OCZ spec"),
    ("sandisk-extreme2-480", "seq_read_rated", 550.0, "rated", "SanDisk spec (240GB figures; same family)"),
    ("sandisk-extreme2-480", "seq_write_rated", 510.0, "rated", "SanDisk spec (240GB figures; same family)"),
    ("sandisk-extreme2-480", "rr_rated", 95000.0, "rated", "SanDisk spec (240GB figures; same family)"),
    ("sandisk-extreme2-480", "rw_rated", 78000.0, "rated", "SanDisk spec (240GB figures; same family)"),
];

const GIB: u64 = 1 << 30;

fn wl(sim: &Simulator, v: Value) -> Workload {
    Workload::from_json(&v, sim.capacity_bytes()).expect("workload")
}

fn run(sim: &mut Simulator, v: Value) -> PhaseResult {
    let w = wl(sim, v);
    sim.run(&w, &mut |_| true).expect("phase")
}

fn mbps(r: &PhaseResult) -> f64 {
    (r.stats.read.bytes + r.stats.write.bytes) as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

fn watts(r: &PhaseResult) -> f64 {
    r.power["avg_w"].as_f64().unwrap_or(0.0)
}

fn gc_note(r: &PhaseResult) -> String {
    format!("WA {:.2}, {} GC victims, {} MB moved", r.waf(), r.ftl.gc_victims, r.ftl.gc_bytes_moved / 1_000_000)
}

struct Report {
    id: String,
    misses: u32,
}

impl Report {
    fn figure(&mut self, key: &str, label: &str, sim: f64, unit: &str, extra: &str) {
        let mut line = format!("{label:<58} {sim:>9.1} {unit:<5}");
        for &(id, k, v, kind, note) in PUBLISHED {
            if id == self.id && k == key {
                let err = 100.0 * (sim / v - 1.0);
                let tol = if kind == "measured" { 10.0 } else { 15.0 };
                let ok = err.abs() <= tol;
                if !ok {
                    self.misses += 1;
                }
                line += &format!(" | {kind} {v:.1} ({note}) {err:+.1}% {}", if ok { "ok" } else { "MISS" });
            }
        }
        if !extra.is_empty() {
            line += &format!("  [{extra}]");
        }
        println!("{line}");
    }
}

fn check(path: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cfg = DriveConfig::from_toml_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t0 = Instant::now();
    let g = cfg.geometry();
    println!("== {} ({})", cfg.drive.id, cfg.drive.name);
    println!(
        "   {} dies ({} data{}), {:.1} GB raw data NAND, {:.1} GB user, spare {:.1}% of user; link {:.0} MB/s",
        g.dies_total,
        g.dies,
        if g.parity_dies > 0 { " + 1 RAISE parity" } else { "" },
        g.raw_bytes() as f64 / 1e9,
        cfg.drive.user_capacity_bytes as f64 / 1e9,
        100.0 * g.spare_fraction(),
        cfg.host.link_bytes_per_s as f64 / 1e6
    );
    let mut rep = Report { id: cfg.drive.id.clone(), misses: 0 };
    let fresh = Simulator::new(cfg, &SimOptions::default()).expect("simulator");
    let cap = fresh.capacity_bytes();
    let span8 = (8 * GIB).min(cap / 2 / 4096 * 4096);

    // ---- rated-style figures on a clean drive ----
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "runtime": "60s", "data": "repeated"}));
        let extra = format!("WA {:.2}, {:.2} W", r.waf(), watts(&r));
        rep.figure("seq_write_rated", "128KB seq write QD32 60s clean, repeated", mbps(&r), "MB/s", &extra);
    }
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "runtime": "60s", "data": "incompressible"}));
        rep.figure("-", "128KB seq write QD32 60s clean, incompressible", mbps(&r), "MB/s", &format!("WA {:.2}", r.waf()));
    }
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span8, "runtime": "60s", "data": "repeated"}));
        let extra = format!("{:.1} MB/s, WA {:.2}, {:.2} W", mbps(&r), r.waf(), watts(&r));
        rep.figure("rw_rated", "4KB random write QD32 8GiB 60s clean, repeated", r.iops(), "IOPS", &extra);
    }
    {
        let mut s = fresh.clone();
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span8, "data": "repeated"}));
        let r = run(&mut s, json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": span8, "runtime": "60s"}));
        rep.figure("seq_read_rated", "128KB seq read QD32 60s, 8GiB written (repeated)", mbps(&r), "MB/s", "");
        let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 32, "size": span8, "runtime": "20s"}));
        rep.figure("rr_rated", "4KB random read QD32 over the 8GiB written", r.iops(), "IOPS", &format!("{:.1} MB/s", mbps(&r)));
        let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": span8, "runtime": "5s"}));
        rep.figure("-", "4KB random read QD1 over the 8GiB written", r.iops(), "IOPS", &format!("{:.1} MB/s", mbps(&r)));
    }
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": span8, "runtime": "5s"}));
        rep.figure("-", "4KB random read QD1 of never-written LBAs", r.iops(), "IOPS", "");
        let r = s.idle(10_000_000_000).expect("idle");
        rep.figure("-", "idle power", watts(&r), "W", "");
    }
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data": "incompressible"}));
        rep.figure("asssd_clean", "AS-SSD seq write 16MB QD1 1GiB, clean", mbps(&r), "MB/s", "");
    }

    // ---- filled ----
    // The fill, one tenth of the drive at a time (shows a performance mode
    // ending, or a steady drive).
    let mut filled = fresh;
    let tf = Instant::now();
    let tenth = cap / 10 / (128 << 10) * (128 << 10);
    let (mut bytes, mut ns, mut prog, mut host) = (0u64, 0u64, 0u64, 0u64);
    let mut tenths = Vec::new();
    for i in 0..10u64 {
        let size = if i == 9 { cap - 9 * tenth } else { tenth };
        let r = run(&mut filled, json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": i * tenth, "size": size, "data": "incompressible"}));
        bytes += r.stats.write.bytes;
        ns += r.duration_ns;
        prog += r.ftl.nand_bytes_programmed;
        host += r.host_bytes_written();
        tenths.push(format!("{:.0}", mbps(&r)));
    }
    let extra = format!("WA {:.2}, by tenth {}, {:.1}s wall", prog as f64 / host as f64, tenths.join(" "), tf.elapsed().as_secs_f64());
    rep.figure("-", "fill: 128KB seq write QD32 whole drive, incompressible", bytes as f64 / (ns as f64 / 1e9) / 1e6, "MB/s", &extra);
    for data in ["repeated", "incompressible"] {
        let mut s = filled.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 1, "runtime": "60s", "data": data}));
        let key = if data == "repeated" { "iometer_rep" } else { "iometer_inc" };
        rep.figure(key, &format!("Iometer 128KB seq write QD1 60s after fill, {data}"), mbps(&r), "MB/s", &format!("WA {:.2}", r.waf()));
    }
    {
        let mut s = filled.clone();
        // Past the spare area: 1.5 x the spare written at random (at most 64 GiB).
        let spare = g.raw_bytes().saturating_sub(cap);
        let amount = (spare * 3 / 2).min(64 * GIB) / 4096 * 4096;
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": amount, "data": "incompressible"}));
        let extra = format!("{:.1} GB written, WA {:.2}, {:.2} W", amount as f64 / 1e9, r.waf(), watts(&r));
        rep.figure("-", "4KB random write QD32 whole drive after fill, incompr.", r.iops(), "IOPS", &extra);
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "5s", "data": "incompressible"}));
        rep.figure("-", "  ... the next 5s", r.iops(), "IOPS", &format!("WA {:.2}", r.waf()));
        s.idle(60_000_000_000).expect("idle");
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "5s", "data": "incompressible"}));
        rep.figure("-", "  ... 5s after 60s idle (idle GC)", r.iops(), "IOPS", &format!("{} GC victims", r.ftl.gc_victims));
    }
    for qd in [1u32, 2, 4, 8, 16, 32] {
        let r = run(&mut filled, json!({"rw": "read", "bs": "128k", "iodepth": qd, "runtime": if qd == 1 { "20s" } else { "5s" }}));
        let key = if qd == 1 { "seq_read_qd1" } else { "-" };
        rep.figure(key, &format!("128KB seq read QD{qd} after fill"), mbps(&r), "MB/s", "");
    }

    // ---- dirty: every LBA and the spare area written ----
    let mut dirty = filled;
    run(&mut dirty, json!({"rw": "write", "bs": "128k", "iodepth": 32, "data": "incompressible"}));
    {
        let mut s = dirty.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data": "incompressible"}));
        rep.figure("asssd_dirty", "AS-SSD seq write 16MB QD1 1GiB, dirty", mbps(&r), "MB/s", &gc_note(&r));
    }
    dirty.trim(0, None).expect("trim");
    let r = run(&mut dirty, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data": "incompressible"}));
    rep.figure("asssd_trim", "AS-SSD seq write 16MB QD1 1GiB, dirty then full TRIM", mbps(&r), "MB/s", &gc_note(&r));
    println!("   {} misses; {:.1}s wall", rep.misses, t0.elapsed().as_secs_f64());
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: preset_check DRIVE.toml [DRIVE.toml ...]");
        std::process::exit(2);
    }
    for p in &paths {
        check(p);
    }
}
