//! Key figures of a drive preset, simulated, beside the published ones.
//!
//! Run: `cargo run --release --example preset_check -- python/ssdlab/drives/ID.toml [more.toml ...]`
//!
//! Tests (docs/methodology.md conditions; MB/s = 1e6 B/s):
//! - rated-style, clean drive: 128KB sequential read and write QD32 for 60 s
//!   with `repeated` data (the read over 8 GiB written first); 4KB random
//!   write QD32 over 8 GiB for 60 s (`repeated`); 4KB random read QD32 over
//!   8 GiB filled (one incompressible sequential pass, docs/methodology.md).
//! - Iometer 128KB sequential write QD1 for 60 s after a fill (one 128KB QD32
//!   incompressible pass over the drive), `repeated` and `incompressible`.
//! - AS-SSD sequential write, 16MB transfers QD1 over a 1 GiB file,
//!   incompressible: clean / dirty (filled twice) / dirty then full TRIM.
//! - 128KB sequential read after the fill at QD 1, 2, 4, 8, 16, 32.
//! - Average power: idle, sequential write, random write.
//!
//! Published figures are those of `ssdlab calibrate`'s table
//! (python/ssdlab/suite/published.csv), which holds every row of tests/data/calibration.csv. Measured figures should
//! land within 10%, rated (spec sheet) figures within 15%.

use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, PhaseResult, SimOptions, Simulator, Workload};
use std::time::Instant;

/// The published figures: the calibration table `ssdlab calibrate` runs
/// (python/ssdlab/suite/published.csv), read at start-up so both tools check
/// the same numbers. Test keys below: seq_read_rated, seq_write_rated (MB/s),
/// rr_rated, rw_rated (IOPS), iometer_rep, iometer_inc, asssd_clean,
/// asssd_dirty, asssd_trim, seq_read_qd1 (MB/s).
struct Published {
    drive_id: String,
    key: &'static str,
    value: f64,
    kind: String,
    source: String,
}

/// The test key of this example that measures a (suite test, measure) row.
fn key_of(suite_test: &str, measure: &str) -> Option<&'static str> {
    Some(match (suite_test, measure) {
        ("rated", "sequential read") => "seq_read_rated",
        ("rated", "sequential write") => "seq_write_rated",
        ("rated", "4KB random read") => "rr_rated",
        ("rated", "4KB random write") => "rw_rated",
        ("corners-seq-write-128k", "repeated") => "iometer_rep",
        ("corners-seq-write-128k", "incompressible") => "iometer_inc",
        ("resiliency", "clean") => "asssd_clean",
        ("resiliency", "dirty") => "asssd_dirty",
        ("resiliency", "dirty, after TRIM") => "asssd_trim",
        ("corners-seq-read-128k", "incompressible") => "seq_read_qd1",
        _ => return None,
    })
}

/// One CSV record (RFC 4180 quoting: "" inside a quoted field is a quote).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

fn published() -> Vec<Published> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/ssdlab/suite/published.csv");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header = csv_fields(lines.next().expect("header"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{path}: no column {name}"));
    let (d, v, k, s, t, m) = (col("drive_id"), col("value"), col("kind"), col("source"), col("suite_test"), col("measure"));
    lines
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f = csv_fields(l);
            key_of(&f[t], &f[m]).map(|key| Published {
                drive_id: f[d].clone(),
                key,
                value: f[v].parse().unwrap_or_else(|_| panic!("{path}: value {}", f[v])),
                kind: f[k].clone(),
                source: f[s].clone(),
            })
        })
        .collect()
}

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
    published: Vec<Published>,
}

impl Report {
    fn figure(&mut self, key: &str, label: &str, sim: f64, unit: &str, extra: &str) {
        let mut line = format!("{label:<58} {sim:>9.1} {unit:<5}");
        for p in &self.published {
            let (v, kind, note) = (p.value, p.kind.as_str(), p.source.as_str());
            if p.drive_id == self.id && p.key == key {
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
    let mut rep = Report { id: cfg.drive.id.clone(), misses: 0, published: published() };
    let fresh = Simulator::new(cfg, &SimOptions::default()).expect("simulator");
    let cap = fresh.capacity_bytes();
    let span8 = (8 * GIB).min(cap / 2 / 4096 * 4096);

    // ---- rated-style figures on a clean drive ----
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "runtime": "60s", "data_pattern": "repeated"}));
        let extra = format!("WA {:.2}, {:.2} W", r.waf(), watts(&r));
        rep.figure("seq_write_rated", "128KB seq write QD32 60s clean, repeated", mbps(&r), "MB/s", &extra);
    }
    {
        let mut s = fresh.clone();
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "runtime": "60s", "data_pattern": "incompressible"}));
        rep.figure("-", "128KB seq write QD32 60s clean, incompressible", mbps(&r), "MB/s", &format!("WA {:.2}", r.waf()));
    }
    {
        let mut s = fresh.clone();
        let r =
            run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": span8, "runtime": "60s", "data_pattern": "repeated"}));
        let extra = format!("{:.1} MB/s, WA {:.2}, {:.2} W", mbps(&r), r.waf(), watts(&r));
        rep.figure("rw_rated", "4KB random write QD32 8GiB 60s clean, repeated", r.iops(), "IOPS", &extra);
    }
    {
        let mut s = fresh.clone();
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span8, "data_pattern": "repeated"}));
        let r = run(&mut s, json!({"rw": "read", "bs": "128k", "iodepth": 32, "size": span8, "runtime": "60s"}));
        rep.figure("seq_read_rated", "128KB seq read QD32 60s, 8GiB written (repeated)", mbps(&r), "MB/s", "");
    }
    {
        // Random reads of a `filled` span: one incompressible sequential pass.
        let mut s = fresh.clone();
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": span8, "data_pattern": "incompressible"}));
        let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 32, "size": span8, "runtime": "20s"}));
        rep.figure("rr_rated", "4KB random read QD32 over 8GiB filled (incompr.)", r.iops(), "IOPS", &format!("{:.1} MB/s", mbps(&r)));
        let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": span8, "runtime": "5s"}));
        rep.figure("-", "4KB random read QD1 over 8GiB filled (incompr.)", r.iops(), "IOPS", &format!("{:.1} MB/s", mbps(&r)));
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
        let r =
            run(&mut s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data_pattern": "incompressible"}));
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
        let r = run(
            &mut filled,
            json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": i * tenth, "size": size, "data_pattern": "incompressible"}),
        );
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
        let r = run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 1, "runtime": "60s", "data_pattern": data}));
        let key = if data == "repeated" { "iometer_rep" } else { "iometer_inc" };
        rep.figure(key, &format!("Iometer 128KB seq write QD1 60s after fill, {data}"), mbps(&r), "MB/s", &format!("WA {:.2}", r.waf()));
    }
    {
        let mut s = filled.clone();
        // Past the spare area: 1.5 x the spare written at random (at most 64 GiB).
        let spare = g.raw_bytes().saturating_sub(cap);
        let amount = (spare * 3 / 2).min(64 * GIB) / 4096 * 4096;
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": amount, "data_pattern": "incompressible"}));
        let extra = format!("{:.1} GB written, WA {:.2}, {:.2} W", amount as f64 / 1e9, r.waf(), watts(&r));
        rep.figure("-", "4KB random write QD32 whole drive after fill, incompr.", r.iops(), "IOPS", &extra);
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "5s", "data_pattern": "incompressible"}));
        rep.figure("-", "  ... the next 5s", r.iops(), "IOPS", &format!("WA {:.2}", r.waf()));
        s.idle(60_000_000_000).expect("idle");
        let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "runtime": "5s", "data_pattern": "incompressible"}));
        rep.figure("-", "  ... 5s after 60s idle (idle GC)", r.iops(), "IOPS", &format!("{} GC victims", r.ftl.gc_victims));
    }
    for qd in [1u32, 2, 4, 8, 16, 32] {
        let r = run(&mut filled, json!({"rw": "read", "bs": "128k", "iodepth": qd, "runtime": if qd == 1 { "20s" } else { "5s" }}));
        let key = if qd == 1 { "seq_read_qd1" } else { "-" };
        rep.figure(key, &format!("128KB seq read QD{qd} after fill"), mbps(&r), "MB/s", "");
    }

    // ---- dirty: every LBA and the spare area written ----
    let mut dirty = filled;
    run(&mut dirty, json!({"rw": "write", "bs": "128k", "iodepth": 32, "data_pattern": "incompressible"}));
    {
        let mut s = dirty.clone();
        let r =
            run(&mut s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data_pattern": "incompressible"}));
        rep.figure("asssd_dirty", "AS-SSD seq write 16MB QD1 1GiB, dirty", mbps(&r), "MB/s", &gc_note(&r));
    }
    dirty.trim(0, None).expect("trim");
    let r =
        run(&mut dirty, json!({"rw": "write", "bs": "16m", "iodepth": 1, "size": "1g", "io_size": "1g", "data_pattern": "incompressible"}));
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
