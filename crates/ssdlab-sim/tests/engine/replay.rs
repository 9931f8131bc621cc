//! Trace playback: the sample real traces (tests/data/traces) import and
//! replay; counts and bytes match a separate parse of the raw files; busy time
//! follows its definition (time with at least one I/O outstanding), checked
//! against the union of the I/O intervals computed here from the per-I/O log.

use crate::common::*;
use serde_json::json;
use ssdlab_sim::trace::import::{open, ImportOptions};
use ssdlab_sim::trace::TraceOp;
use ssdlab_sim::{IoLogEntry, ReplayMode, ReplayOptions};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// The sample traces, `tests/data/traces` at the repository's root.
fn traces_dir() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces");
    assert!(p.join("README.md").is_file(), "sample traces not found at {}", p.display());
    p
}

fn raw_lines(path: &PathBuf) -> Vec<String> {
    let f = std::fs::File::open(path).unwrap();
    let r: Box<dyn Read> = match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => Box::new(flate2::read::MultiGzDecoder::new(f)),
        Some("bz2") => Box::new(bzip2::read::MultiBzDecoder::new(f)),
        _ => Box::new(f),
    };
    BufReader::new(r).lines().map(|l| l.unwrap()).filter(|l| !l.trim().is_empty()).collect()
}

/// (reads, writes, read bytes, write bytes) from the raw file, parsed here.
fn raw_counts(path: &PathBuf, fmt: &str) -> (u64, u64, u64, u64) {
    let (mut r, mut w, mut rb, mut wb) = (0, 0, 0, 0);
    for line in raw_lines(path) {
        let (is_read, bytes): (bool, u64) = match fmt {
            "msr" => {
                let f: Vec<&str> = line.split(',').collect();
                (f[3] == "Read", f[5].parse().unwrap())
            }
            "systor17" => {
                if line.starts_with("Timestamp") {
                    continue;
                }
                let f: Vec<&str> = line.split(',').collect();
                (f[2] == "R", f[5].parse().unwrap())
            }
            "tencent" => {
                let f: Vec<&str> = line.split(',').collect();
                (f[3] == "0", f[2].parse::<u64>().unwrap() * 512)
            }
            "disksim" => {
                let f: Vec<&str> = line.split_whitespace().collect();
                (f[4] == "1", f[3].parse::<u64>().unwrap() * 512)
            }
            _ => unreachable!(),
        };
        if is_read {
            r += 1;
            rb += bytes;
        } else {
            w += 1;
            wb += bytes;
        }
    }
    (r, w, rb, wb)
}

/// Length of the union of [submit, complete) intervals of the selected I/Os.
fn union_ns(log: &[IoLogEntry], keep: impl Fn(&IoLogEntry) -> bool) -> u64 {
    let mut iv: Vec<(u64, u64)> = log.iter().filter(|e| keep(e)).map(|e| (e.submit_ns, e.complete_ns)).collect();
    iv.sort();
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in iv {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

fn replay_and_check(rel: &str, fmt: &str, mode: ReplayMode) {
    let path = traces_dir().join(rel);
    let mut s = sim(drive(8, 512, 256, 1.15, "greedy"), 3, false);
    fill(&mut s);
    let mut opts = ImportOptions::new(s.capacity_bytes());
    opts.format = fmt.parse().unwrap();
    let mut reader = open(&path, &opts).unwrap();
    let ro = ReplayOptions { mode, iodepth: 4, io_log: true, ..Default::default() };
    let r = s.replay(&mut reader, &ro, &mut |_| true).unwrap();
    let (rr, ww, rb, wb) = raw_counts(&path, fmt);
    assert_eq!((r.stats.read.ios, r.stats.write.ios), (rr, ww), "{rel}: read/write counts");
    assert_eq!((r.stats.read.bytes, r.stats.write.bytes), (rb, wb), "{rel}: bytes");
    let log = &r.io_log;
    assert_eq!(log.len() as u64, rr + ww);
    assert_eq!(r.stats.busy_time_ns, union_ns(log, |_| true), "{rel}: busy time");
    assert_eq!(r.stats.read_busy_time_ns, union_ns(log, |e| e.op == TraceOp::Read), "{rel}: read busy time");
    assert_eq!(r.stats.write_busy_time_ns, union_ns(log, |e| e.op == TraceOp::Write), "{rel}: write busy time");
    assert!(r.stats.busy_time_ns <= r.duration_ns);
    assert!(log.iter().all(|e| e.complete_ns > e.submit_ns));
    let sb = r.storage_bench_json();
    let rate = sb["data_rate_mb_per_s"].as_f64().unwrap();
    let want = (rb + wb) as f64 / (r.stats.busy_time_ns as f64 / 1e9) / 1e6;
    assert!((rate - want).abs() < 1e-9 * want.max(1.0), "{rate} vs {want}");
    if mode == ReplayMode::AsRecorded {
        // Never issued before its timestamp (trace time relative to the first record).
        let mut reader = open(&path, &opts).unwrap();
        let t0 = log[0].submit_ns;
        let mut first = None;
        for (e, rec) in log.iter().zip(&mut reader) {
            let rec = rec.unwrap();
            let f = *first.get_or_insert(rec.time_ns);
            assert!(e.submit_ns - t0 >= rec.time_ns - f, "{rel}: issued early");
        }
    } else {
        // As fast as possible at QD 4: never more than 4 outstanding.
        let mut ev: Vec<(u64, i32)> = log.iter().flat_map(|e| [(e.submit_ns, 1), (e.complete_ns, -1)]).collect();
        ev.sort_by_key(|&(t, d)| (t, d));
        let mut n = 0;
        for (_, d) in ev {
            n += d;
            assert!(n <= 4, "{rel}: iodepth {n} > 4");
        }
    }
}

#[test]
fn msr_cambridge_replays_as_recorded() {
    replay_and_check("msr_cambridge_hm0_sample/msr-cambridge1-sample.csv", "msr", ReplayMode::AsRecorded);
}

#[test]
fn systor17_replays_both_ways() {
    for f in ["systor17-traces-sample.csv.gz", "systor17-additional-sample.csv.gz"] {
        replay_and_check(&format!("snia_systor17_sample/{f}"), "systor17", ReplayMode::AsRecorded);
        replay_and_check(&format!("snia_systor17_sample/{f}"), "systor17", ReplayMode::AsFastAsPossible);
    }
}

#[test]
fn tencent_cbs_replays_as_fast_as_possible() {
    replay_and_check("tencent_cbs_sample/cloud_storage-sample.bz2", "tencent", ReplayMode::AsFastAsPossible);
}

#[test]
fn umass_financial1_and_websearch_replay() {
    replay_and_check("umass_financial1_first10k/example.ascii", "disksim", ReplayMode::AsRecorded);
    replay_and_check("umass_websearch_mqsim_small/wsrch-small.trace", "disksim", ReplayMode::AsRecorded);
}

/// A replay stopped by its progress callback counts the I/Os still in
/// flight as busy up to where it stopped, as a workload does: busy time is
/// the union of the I/O intervals cut at the phase's end.
#[test]
fn an_interrupted_replay_is_busy_until_it_stops() {
    let path = traces_dir().join("tencent_cbs_sample/cloud_storage-sample.bz2");
    let mut s = sim(drive(8, 512, 256, 1.15, "greedy"), 3, false);
    fill(&mut s);
    let mut opts = ImportOptions::new(s.capacity_bytes());
    opts.format = "tencent".parse().unwrap();
    let mut reader = open(&path, &opts).unwrap();
    let ro = ReplayOptions { mode: ReplayMode::AsFastAsPossible, iodepth: 8, io_log: true, interval_ns: 1_000_000, ..Default::default() };
    let mut calls = 0;
    let r = s
        .replay(&mut reader, &ro, &mut |_| {
            calls += 1;
            calls < 3
        })
        .unwrap();
    assert!(r.interrupted);
    let end = r.start_ns + r.duration_ns;
    assert!(r.io_log.iter().any(|e| e.complete_ns > end), "I/O in flight at the stop");
    let cut: Vec<IoLogEntry> = r.io_log.iter().map(|e| IoLogEntry { complete_ns: e.complete_ns.min(end), ..*e }).collect();
    assert_eq!(r.stats.busy_time_ns, union_ns(&cut, |_| true));
    assert_eq!(r.stats.read_busy_time_ns, union_ns(&cut, |e| e.op == TraceOp::Read));
    assert_eq!(r.stats.write_busy_time_ns, union_ns(&cut, |e| e.op == TraceOp::Write));
    assert!(r.stats.busy_time_ns > 0 && r.stats.busy_time_ns <= r.duration_ns);
}

/// Idle gaps in an as-recorded replay let idle-time GC refill the free pool.
#[test]
fn idle_gaps_in_a_replay_let_background_gc_work() {
    use ssdlab_sim::trace::TraceRecord;
    use ssdlab_sim::DataPattern;
    let mut s = sim(drive(4, 256, 64, 1.15, "greedy"), 5, true);
    fill(&mut s);
    // Random writes until the free pools are down to the GC threshold.
    let cap = s.capacity_bytes();
    run(&mut s, serde_json::json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": 2 * cap}));
    let cap_units = s.capacity_bytes() / 4096;
    // Bursts of random 4KB writes separated by 2 s of idle.
    let mut recs = Vec::new();
    let mut x: u64 = 12345;
    for burst in 0..10u64 {
        for i in 0..500u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            recs.push(TraceRecord {
                time_ns: burst * 2_000_000_000 + i * 20_000,
                op: TraceOp::Write,
                offset_bytes: (x >> 33) % cap_units * 4096,
                length_bytes: 4096,
                data_pattern: DataPattern::Incompressible,
                iodepth: 0,
                recorded_latency_ns: 0,
            });
        }
    }
    let as_rec = {
        let mut s2 = s.clone();
        let mut it = recs.clone().into_iter().map(Ok);
        s2.replay(&mut it, &ReplayOptions::default(), &mut |_| true).unwrap()
    };
    let capped = {
        // The same trace with every gap capped at 1 ms: no idle long enough for GC.
        let mut s2 = s.clone();
        let mut it = recs.into_iter().map(Ok);
        let o = ReplayOptions { idle_cap_ns: Some(1_000_000), ..Default::default() };
        s2.replay(&mut it, &o, &mut |_| true).unwrap()
    };
    assert!(as_rec.ftl.bg_gc_victims > 0, "no idle-time GC in a replay with 2 s gaps");
    assert_eq!(capped.ftl.bg_gc_victims, 0, "idle-time GC without idle time");
    println!("durations: as recorded {} ns, capped {} ns", as_rec.duration_ns, capped.duration_ns);
    assert!(capped.duration_ns < as_rec.duration_ns / 2);
    // Busy time is lower when idle GC did the cleaning between bursts.
    println!("write busy: with idle {} ns, gaps capped {} ns", as_rec.stats.write_busy_time_ns, capped.stats.write_busy_time_ns);
    assert!(as_rec.stats.write_busy_time_ns < capped.stats.write_busy_time_ns);
}

#[test]
fn a_replay_stops_at_its_record_or_trace_time_limit() {
    let path = traces_dir().join("umass_financial1_first10k/example.ascii");
    let s = sim(drive(8, 512, 256, 1.15, "greedy"), 3, false);
    let mut opts = ImportOptions::new(s.capacity_bytes());
    opts.format = "disksim".parse().unwrap();
    let records: Vec<_> = open(&path, &opts).unwrap().map(|r| r.unwrap()).collect();
    let io = |r: &ssdlab_sim::PhaseResult| r.stats.read.ios + r.stats.write.ios;
    let data = |n: usize| records[..n].iter().filter(|r| r.op != TraceOp::Trim && r.op != TraceOp::Flush).count() as u64;
    // Record limit (fio's number_ios): exactly the first 1000 records.
    let ro = ReplayOptions { max_records: 1000, ..Default::default() };
    let r = s.clone().replay(&mut open(&path, &opts).unwrap(), &ro, &mut |_| true).unwrap();
    assert_eq!(io(&r), data(1000));
    // Trace-time limit (fio's runtime): the records before the cut.
    let t0 = records[0].time_ns;
    let cut_ns = (records[records.len() / 2].time_ns - t0).max(1);
    let before = records.iter().position(|r| r.time_ns - t0 >= cut_ns).unwrap();
    let ro = ReplayOptions { max_trace_ns: Some(cut_ns), ..Default::default() };
    let r = s.clone().replay(&mut open(&path, &opts).unwrap(), &ro, &mut |_| true).unwrap();
    assert_eq!(io(&r), data(before));
    assert!(before > 100 && before < records.len(), "{before} of {}", records.len());
    // No limit: every record.
    let r = s.clone().replay(&mut open(&path, &opts).unwrap(), &ReplayOptions::default(), &mut |_| true).unwrap();
    assert_eq!(io(&r), data(records.len()));
}

#[test]
fn replay_options_and_sources_parse_from_plain_data_once_in_the_engine() {
    let o = ReplayOptions::from_json(&json!({
        "name": "x", "mode": "as-fast-as-possible", "iodepth": 8, "idle_cap": "25ms",
        "runtime_ns": 1_000_000_000u64, "number_ios": 5, "log_avg_msec": 100
    }))
    .unwrap();
    assert_eq!(
        (o.mode, o.iodepth, o.idle_cap_ns, o.max_trace_ns, o.max_records, o.interval_ns),
        (ReplayMode::AsFastAsPossible, 8, Some(25_000_000), Some(1_000_000_000), 5, 100_000_000)
    );
    assert_eq!(ReplayOptions::from_json(&json!({"idle_cap": 0.025})).unwrap().idle_cap_ns, Some(25_000_000));
    for (bad, field) in [
        (json!({"queue_depth": 8}), "'iodepth'"),
        (json!({"idle_cap": "25ms", "idle_cap_ns": 1}), "'idle_cap_ns'"),
        (json!({"mode": "slowly"}), "'mode'"),
        (json!({"runtime": "0s"}), "'runtime'"),
    ] {
        let e = ReplayOptions::from_json(&bad).unwrap_err().to_string();
        assert!(e.contains(field), "{bad}: {e}");
    }
    // The same generated trace, replayed from plain data or from the struct.
    let mut a = sim(drive(8, 512, 256, 1.15, "greedy"), 3, false);
    let mut b = a.clone();
    let opts = ReplayOptions { iodepth: 4, idle_cap_ns: Some(25_000_000), max_records: 2000, ..Default::default() };
    let src =
        ssdlab_sim::trace::source::TraceSource::from_json(&json!({"generated": "typical-2010", "seed": 3}), a.capacity_bytes(), 1).unwrap();
    let ra = a.replay(&mut src.open().unwrap(), &opts, &mut |_| true).unwrap();
    let rb = b
        .replay_from_json(
            &json!({"generated": "typical-2010", "seed": 3}),
            &json!({"name": "replay", "iodepth": 4, "idle_cap": "25ms", "number_ios": 2000}),
            &mut |_| true,
        )
        .unwrap();
    let mut ja = ra.to_json();
    ja["source"] = json!({"generated": "typical-2010", "seed": 3});
    assert_eq!(ja, rb.to_json());
}
