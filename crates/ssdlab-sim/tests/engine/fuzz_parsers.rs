//! A small random-input loop on the engine's parsers: mutated
//! drive files (TOML and JSON, presets and a small drive), jobs, replay
//! options and trace lines of every format. Whatever comes in, the answer is
//! a value or an error naming a field on one line, never a panic; what
//! parses runs a few I/Os on a simulator built within a small memory limit.
//! Deterministic: the engine's splitmix64 generator with fixed seeds.

use crate::common::*;
use serde_json::{json, Map, Value};
use ssdlab_sim::rng::Rng;
use ssdlab_sim::trace::import::{open, ImportOptions, TraceFormat};
use ssdlab_sim::{DriveConfig, ReplayOptions, SimOptions, Simulator, Workload};
use std::path::PathBuf;

const ROUNDS: usize = 300;

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "512",
    "4096",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "0.5",
    "-0.0",
    "99999999999999999999.5",
];
const TOKENS: &[&str] = &[
    "",
    " ",
    "x",
    "4k",
    "1000t",
    "75%",
    "150%",
    "nan",
    "inf",
    "60s",
    "1000000000000",
    "-1s",
    "0s",
    "4k/50:64k/50",
    "4k/",
    "4k/200",
    "true",
    "ratio:0.5",
    "ratio:0",
    "zeros",
    "R",
    "W",
    "Read",
    "Write",
    "read",
    "write",
    "sync",
    "D",
    "Q",
    "+",
    "\u{e9}",
    "\t",
    "\r",
];

fn pick<'a>(rng: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[rng.below(xs.len() as u64) as usize]
}

fn token(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => pick(rng, NUMBERS).to_string(),
        1 => pick(rng, TOKENS).to_string(),
        2 => rng.next_u64().to_string(),
        _ => (0..rng.below(8)).map(|_| char::from(32 + rng.below(95) as u8)).collect(),
    }
}

fn value(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => json!(rng.next_u64()),
        1 => json!(-(rng.below(1 << 40) as i64)),
        2 => json!(f64::from_bits(rng.next_u64() & !(0x7ff << 52)) * 1e6),
        3 => json!(rng.below(2) == 0),
        4 => Value::Null,
        5 => json!([token(rng)]),
        6 => json!({"k": token(rng)}),
        _ => {
            let t = token(rng);
            t.parse::<u64>().map(Value::from).unwrap_or(Value::String(t))
        }
    }
}

/// One mutation of a JSON document of sections: a value nudged, replaced or
/// dropped, a key added, or a section replaced.
fn mutate(rng: &mut Rng, doc: &mut Map<String, Value>) {
    let sections: Vec<String> = doc.keys().cloned().collect();
    let sec = &sections[rng.below(sections.len() as u64) as usize];
    let Some(Value::Object(body)) = doc.get_mut(sec) else { return };
    let keys: Vec<String> = body.keys().cloned().collect();
    if keys.is_empty() {
        return;
    }
    let key = keys[rng.below(keys.len() as u64) as usize].clone();
    match rng.below(6) {
        0..=1 => {
            let nudged = match &body[&key] {
                Value::Number(n) if n.is_u64() => {
                    let v = n.as_u64().unwrap();
                    json!(
                        v.saturating_mul([0, 2, 1000, 1 << 20, 1 << 32, u64::MAX][rng.below(6) as usize])
                            / [1, 3, 1000][rng.below(3) as usize]
                    )
                }
                Value::Bool(b) => json!(!b),
                _ => value(rng),
            };
            body.insert(key, nudged);
        }
        2 => {
            body.insert(key, value(rng));
        }
        3 => {
            body.remove(&key);
        }
        4 => {
            body.insert(token(rng), value(rng));
        }
        _ => {
            doc.insert(sec.clone(), value(rng));
        }
    }
}

fn to_toml(doc: &Map<String, Value>) -> String {
    let mut out = String::new();
    for (sec, body) in doc {
        out.push_str(&format!("[{sec}]\n"));
        if let Value::Object(m) = body {
            for (k, v) in m {
                out.push_str(&format!("{k} = {v}\n"));
            }
        }
    }
    out
}

/// An error's message is one line.
fn one_line(e: &impl std::fmt::Display) {
    let m = e.to_string();
    assert!(!m.trim().is_empty() && !m.contains('\n'), "{m:?}");
}

/// A drive that parses builds within 64 MiB (or says it needs more) and runs a few I/Os.
fn exercise(cfg: DriveConfig) {
    let opts = SimOptions { seed: 1, check: false, memory_limit_bytes: 64 << 20 };
    match Simulator::new(cfg, &opts) {
        Err(e) => one_line(&e),
        Ok(mut s) => {
            assert!(s.memory_in_use_bytes() <= 64 << 20);
            for job in [
                json!({"rw": "randwrite", "bs": "4k", "iodepth": 8, "number_ios": 100}),
                json!({"rw": "read", "bs": "128k", "number_ios": 8}),
            ] {
                match Workload::from_json(&job, s.capacity_bytes()) {
                    Ok(w) => {
                        if let Err(e) = s.run(&w, &mut |_| true) {
                            one_line(&e)
                        }
                    }
                    Err(e) => one_line(&e),
                }
            }
        }
    }
}

fn bases() -> Vec<Map<String, Value>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/ssdlab/drives");
    let preset = std::fs::read_to_string(dir.join("generic-mlc-120.toml")).unwrap();
    let preset = ssdlab_sim::library::toml_document(&preset).unwrap();
    let small: Value = serde_json::from_str(&drive(4, 64, 64, 1.25, "greedy").to_json_string()).unwrap();
    [preset, small].into_iter().map(|v| v.as_object().unwrap().clone()).collect()
}

#[test]
fn mutated_drive_files_parse_or_name_a_field() {
    let mut rng = Rng::new(19);
    let bases = bases();
    for round in 0..ROUNDS {
        let mut doc = bases[round % bases.len()].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut doc);
        }
        let mut text = if round % 2 == 0 { Value::Object(doc.clone()).to_string() } else { to_toml(&doc) };
        if rng.below(4) == 0 {
            let cut = rng.below(text.len() as u64 + 1) as usize;
            text = String::from_utf8_lossy(&text.as_bytes()[..cut]).into_owned();
        }
        let parsed = if round % 2 == 0 { DriveConfig::from_json_str(&text) } else { DriveConfig::from_toml_str(&text) };
        match parsed {
            Ok(cfg) => exercise(cfg),
            Err(e) => one_line(&e),
        }
    }
}

/// Keys a job does not know (old names, misspellings): each must be an error naming it.
const UNKNOWN_JOB_KEYS: &[&str] = &["qd", "queue_depth", "pattern", "rw_mix"];
const RW: &[&str] = &["read", "write", "randread", "randwrite", "readwrite", "randrw", "trim", "randtrim"];

#[test]
fn random_jobs_and_replay_options_parse_or_name_a_field() {
    let mut rng = Rng::new(20);
    let cfg = drive(4, 64, 64, 1.25, "greedy");
    let limit = ssdlab_sim::config::memory_estimate_bytes(&cfg.geometry(), false) + (4 << 20);
    let mut s = Simulator::new(cfg, &SimOptions { seed: 1, check: false, memory_limit_bytes: limit }).unwrap();
    let job_keys: Vec<&str> = ssdlab_sim::workload::KEYS.iter().chain(UNKNOWN_JOB_KEYS).copied().collect();
    for _ in 0..ROUNDS {
        let mut job = Map::new();
        job.insert("rw".into(), json!(pick(&mut rng, RW)));
        for _ in 0..rng.below(5) {
            let k = pick(&mut rng, &job_keys);
            job.insert(k.into(), value(&mut rng));
        }
        match Workload::from_json(&Value::Object(job), s.capacity_bytes()) {
            Err(e) => one_line(&e),
            Ok(mut w) => {
                // At most a few MB of transfer, whatever the keys say.
                let biggest = w.sizes.iter().map(|x| x.0).max().unwrap();
                w.number_ios = Some((8u64 << 20).div_ceil(biggest).min(200));
                if let Err(e) = s.run(&w, &mut |_| true) {
                    one_line(&e)
                }
            }
        }
        let mut o = Map::new();
        for _ in 0..rng.below(4) {
            let k = pick(&mut rng, ssdlab_sim::engine::REPLAY_OPTION_KEYS);
            o.insert(k.into(), value(&mut rng));
        }
        if let Err(e) = ReplayOptions::from_json(&Value::Object(o)) {
            one_line(&e)
        }
    }
}

/// Valid lines of each format.
const SAMPLES: &[(TraceFormat, &str, &[&str])] = &[
    (TraceFormat::Msr, ",", &["128166385295514663,hm,0,Read,8192,4096,2833", "128166385310514663,hm,0,Write,1048576,8192,100"]),
    (
        TraceFormat::Systor17,
        ",",
        &["Timestamp,Response,IOType,LUN,Offset,Size", "1455591804.0,0.0002833,R,0,8192,4096", "1455591805.5,0.00001,W,0,1048576,8192"],
    ),
    (TraceFormat::Umass, ",", &["0,16,4096,r,10.000000", "0,2048,8192,W,11.5"]),
    (TraceFormat::Disksim, " ", &["1000 0 16 8 1", "1500001000 0 2048 16 0"]),
    (TraceFormat::Tencent, ",", &["1538323199,16,8,0,1058", "1538323200,2048,16,1,1058"]),
    (
        TraceFormat::Blkparse,
        " ",
        &[
            "  8,0    3        2     0.000001000  1234  D   R 16 + 8 [fio]",
            "  8,0    3        3     1.500001000  1234  D   W 2048 + 16 [fio]",
        ],
    ),
    (
        TraceFormat::FioIolog,
        " ",
        &["fio version 3 iolog", "0 /dev/sdb add", "5 /dev/sdb read 8192 4096", "1500005 /dev/sdb write 1048576 8192"],
    ),
    (
        TraceFormat::Csv,
        ",",
        &[
            "time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern",
            "7,read,8192,4096,1,283300,zeros",
            "15,write,0,512,2,0,ratio:0.5",
        ],
    ),
];

#[test]
fn mutated_trace_lines_give_records_or_name_a_line() {
    let dir = std::env::temp_dir().join(format!("ssdlab-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(21);
    let cfg = drive(4, 64, 64, 1.25, "greedy");
    let limit = ssdlab_sim::config::memory_estimate_bytes(&cfg.geometry(), false) + (4 << 20);
    let base = Simulator::new(cfg, &SimOptions { seed: 1, check: false, memory_limit_bytes: limit }).unwrap();
    for round in 0..ROUNDS * 2 {
        let (format, sep, lines) = SAMPLES[round % SAMPLES.len()];
        let mut lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(lines.len() as u64) as usize;
            let mut parts: Vec<String> = if sep == " " {
                lines[i].split_whitespace().map(str::to_string).collect()
            } else {
                lines[i].split(sep).map(str::to_string).collect()
            };
            match rng.below(3) {
                0 if !parts.is_empty() => {
                    let j = rng.below(parts.len() as u64) as usize;
                    parts[j] = token(&mut rng);
                }
                1 => parts.push(token(&mut rng)),
                _ => lines.push(lines[i].clone()),
            }
            lines[i] = parts.join(sep);
        }
        let path = dir.join("t.trace");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let mut opts = ImportOptions::new(base.capacity_bytes());
        opts.format = if rng.below(2) == 0 { TraceFormat::Auto } else { format };
        opts.skip_bad_lines = rng.below(2) == 0;
        match open(&path, &opts) {
            Err(e) => one_line(&e),
            Ok(reader) => {
                let mut s = base.clone();
                let mut reader = reader;
                if let Err(e) = s.replay(&mut reader, &ReplayOptions::default(), &mut |_| true) {
                    one_line(&e)
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
