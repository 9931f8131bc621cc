//! Nothing a user types makes the engine grow without bound or run for ever:
//! a phase's per-interval series, an I/O log and a trace's reorder window
//! are bounded by the memory limit (a typed error names the cause and the
//! settings that change it), and a job's runtime, io_size and number_ios by
//! documented maxima (unless `force`).

use crate::common::*;
use serde_json::json;
use ssdlab_sim::config::memory_estimate_bytes;
use ssdlab_sim::pattern::DataPattern;
use ssdlab_sim::stats::SERIES_BYTES_PER_INTERVAL;
use ssdlab_sim::trace::import::{open, ImportOptions, TraceFormat};
use ssdlab_sim::trace::{TraceError, TraceOp, TraceRecord};
use ssdlab_sim::workload::{MAX_CAPACITIES_PER_JOB, MAX_RUNTIME_NS};
use ssdlab_sim::{ReplayOptions, SimError, SimOptions, Simulator, Workload};

fn small() -> ssdlab_sim::DriveConfig {
    drive(4, 64, 64, 1.25, "greedy")
}

/// A simulator whose memory limit leaves room for `intervals` series intervals.
fn sim_with_room(intervals: u64) -> Simulator {
    let cfg = small();
    let need = memory_estimate_bytes(&cfg.geometry(), false);
    let opts = SimOptions { seed: 1, check: false, memory_limit_bytes: need + intervals * SERIES_BYTES_PER_INTERVAL };
    Simulator::new(cfg, &opts).unwrap()
}

fn rec(time_ns: u64, off: u64) -> Result<TraceRecord, TraceError> {
    Ok(TraceRecord {
        time_ns,
        op: TraceOp::Write,
        offset_bytes: off,
        length_bytes: 4096,
        data_pattern: DataPattern::Incompressible,
        iodepth: 0,
        recorded_latency_ns: 0,
    })
}

#[test]
fn a_stray_timestamp_is_refused_before_the_series_grows() {
    // The default limit, a trace whose last record is 2^61 ns (73 years) on:
    // before, a per-second series for all of it (tens of GB, then an abort).
    let mut s = sim(small(), 1, false);
    let mut records = vec![rec(0, 0), rec(1_000_000, 4096), rec(1 << 61, 8192)].into_iter();
    let e = s.replay(&mut records, &ReplayOptions::default(), &mut |_| true).unwrap_err();
    let SimError::Allocation { needed_bytes, limit_bytes, .. } = &e else { panic!("{e:?}") };
    assert!(needed_bytes > limit_bytes, "{e}");
    let m = e.to_string();
    for want in ["record 3", "intervals of 1 s", "idle_cap", "--idle-cap", "log_avg_msec", "--memory-limit", "timestamps"] {
        assert!(m.contains(want), "{want}: {m}");
    }
    // The simulator stays usable: the records before it were replayed.
    let r = run(&mut s, json!({"rw": "read", "bs": "4k", "number_ios": 10}));
    assert_eq!(r.stats.read.ios, 10);
    // With the gaps capped, the same trace replays.
    let opts = ReplayOptions { idle_cap_ns: Some(1_000_000), ..Default::default() };
    let mut records = vec![rec(0, 0), rec(1_000_000, 4096), rec(1 << 61, 8192)].into_iter();
    let r = s.replay(&mut records, &opts, &mut |_| true).unwrap();
    assert_eq!(r.stats.write.ios, 3);
}

#[test]
fn a_trace_past_the_latest_simulated_time_is_refused() {
    // Intervals long enough for the series, but 2^63 ns is past the latest time.
    let mut s = sim(small(), 1, false);
    let opts = ReplayOptions { interval_ns: 1 << 62, ..Default::default() };
    let mut records = vec![rec(0, 0), rec(1 << 63, 4096)].into_iter();
    let e = s.replay(&mut records, &opts, &mut |_| true).unwrap_err();
    assert!(matches!(e, SimError::Allocation { .. }), "{e:?}");
}

#[test]
fn a_series_is_bounded_by_what_the_limit_leaves_beside_the_drive() {
    let s = sim_with_room(1000);
    assert_eq!(s.max_series_intervals(), 1000);
    // Up front: a runtime whose series cannot fit.
    let mut s = sim_with_room(1000);
    let w = wl(&s, json!({"rw": "randread", "bs": "4k", "runtime": "2s", "log_avg_msec": 1}));
    let e = s.run(&w, &mut |_| true).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, SimError::Allocation { .. }), "{e:?}");
    for want in ["job 'randread'", "runtime of 2 s", "intervals of 1 ms", "2000 intervals", "log_avg_msec", "--memory-limit"] {
        assert!(m.contains(want), "{want}: {m}");
    }
    assert_eq!(s.now_ns, 0, "nothing ran");
    // One that fits runs.
    let w = wl(&s, json!({"rw": "randread", "bs": "4k", "runtime": "0.5s", "log_avg_msec": 1}));
    assert_eq!(s.run(&w, &mut |_| true).unwrap().stats.intervals.len(), 500);
    // While running: a transfer that outlasts the series ends in the same
    // error (its length was not known up front), and the simulator goes on.
    let mut s = sim_with_room(20);
    let w = wl(&s, json!({"rw": "write", "bs": "128k", "io_size": "64m", "log_avg_msec": 1}));
    let e = s.run(&w, &mut |_| true).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, SimError::Allocation { .. }), "{e:?}");
    assert!(m.contains("job 'write': after") && m.contains("io_size") && m.contains("--memory-limit"), "{m}");
    assert!(s.now_ns > 0);
    let r = run(&mut s, json!({"rw": "read", "bs": "4k", "number_ios": 10}));
    assert_eq!(r.stats.read.ios, 10);
}

#[test]
fn the_replay_series_is_checked_while_replaying() {
    // Issue times fit (the up-front check), completions run past the bound.
    let mut s = sim_with_room(3);
    let opts = ReplayOptions { interval_ns: 1_000_000, mode: ssdlab_sim::ReplayMode::AsFastAsPossible, ..Default::default() };
    let mut records = (0..20_000u64).map(|i| rec(0, (i % 1000) * 4096));
    let e = s.replay(&mut records, &opts, &mut |_| true).unwrap_err();
    assert!(matches!(e, SimError::Allocation { .. }) && e.to_string().contains("after"), "{e:?}");
}

#[test]
fn an_io_log_is_bounded_by_the_limit() {
    let mut s = sim_with_room(2);
    let opts = ReplayOptions { io_log: true, ..Default::default() };
    let mut records = (0..100u64).map(|i| rec(i * 1000, i * 4096));
    let e = s.replay(&mut records, &opts, &mut |_| true).unwrap_err();
    assert!(e.to_string().contains("I/O log"), "{e}");
}

#[test]
fn a_reorder_window_beyond_the_limit_is_refused() {
    let dir = std::env::temp_dir().join(format!("ssdlab-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.disksim");
    std::fs::write(&path, "0 0 0 8 0\n").unwrap();
    let opts = ImportOptions { format: TraceFormat::Disksim, reorder_window_records: usize::MAX / 2, ..ImportOptions::new(1 << 30) };
    let e = open(&path, &opts).err().unwrap();
    assert_eq!(e.field, "reorder_window_records");
    assert!(e.message.contains("memory limit") && e.message.contains("--memory-limit"), "{}", e.message);
    let opts = ImportOptions { memory_limit_bytes: 1000, ..opts };
    let e = open(&path, &ImportOptions { reorder_window_records: 1000, ..opts }).err().unwrap();
    assert_eq!(e.field, "reorder_window_records");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_job_beyond_the_documented_maxima_needs_force() {
    let cap = 120_000_000_000u64;
    let err = |v: serde_json::Value| Workload::from_json(&v, cap).unwrap_err();
    // runtime: 7 days at most.
    let e = err(json!({"rw": "randwrite", "runtime": 1_000_000_000_000u64}));
    let SimError::Workload { field, message } = &e else { panic!("{e:?}") };
    assert_eq!(field, "runtime");
    assert!(message.contains("7 days") && message.contains("604800 s") && message.contains("--force"), "{message}");
    assert!(Workload::from_json(&json!({"rw": "randwrite", "runtime": "7d"}), cap).is_err(), "no 'd' unit");
    let w = Workload::from_json(&json!({"rw": "randwrite", "runtime": "168h"}), cap).unwrap();
    assert_eq!(w.runtime_ns, Some(MAX_RUNTIME_NS));
    let w = Workload::from_json(&json!({"rw": "randwrite", "runtime": "720h", "force": true}), cap).unwrap();
    assert_eq!(w.runtime_ns, Some(30 * 24 * 3600 * 1_000_000_000));
    // io_size: 100 x the capacity at most.
    let e = err(json!({"rw": "write", "io_size": "1000t"}));
    assert!(
        matches!(&e, SimError::Workload { field, message } if field == "io_size" && message.contains("100 x the drive's capacity") && message.contains("12000000000000 B")),
        "{e}"
    );
    assert!(Workload::from_json(&json!({"rw": "write", "io_size": MAX_CAPACITIES_PER_JOB * cap}), cap).is_ok());
    assert!(Workload::from_json(&json!({"rw": "write", "io_size": "1000t", "force": 1}), cap).is_ok());
    // number_ios: that many bytes in I/Os of the smallest block size.
    let e = err(json!({"rw": "randread", "bssplit": "4k/50:64k/50", "number_ios": 10_000_000_000u64}));
    assert!(
        matches!(&e, SimError::Workload { field, message } if field == "number_ios" && message.contains("2929687500") && message.contains("4096 B")),
        "{e}"
    );
    assert!(Workload::from_json(&json!({"rw": "randread", "number_ios": 2_929_687_500u64}), cap).is_ok());
    assert!(err(json!({"rw": "write", "force": "maybe"})).to_string().contains("'force'"));
}

#[test]
fn number_ios_zero_means_no_limit_as_in_fio() {
    let cap = 1u64 << 30;
    let w = Workload::from_json(&json!({"rw": "write", "number_ios": 0}), cap).unwrap();
    assert_eq!(w.number_ios, None);
    assert_eq!(w.io_limit_bytes, Some(cap), "one pass over the region, as without number_ios");
    let w = Workload::from_json(&json!({"rw": "randread", "number_ios": "0", "runtime": "1s"}), cap).unwrap();
    assert_eq!((w.number_ios, w.io_limit_bytes), (None, None), "time based");
    let mut s = sim(small(), 1, false);
    let r = run(&mut s, json!({"rw": "write", "bs": "128k", "number_ios": 0}));
    assert_eq!(r.stats.write.bytes, s.capacity_bytes());
    let o = ReplayOptions::from_json(&json!({"number_ios": 0})).unwrap();
    assert_eq!(o.max_records, 0, "0 replays every record");
}

#[test]
fn bssplit_percentages_add_up_to_100_as_in_fio() {
    let cap = 1u64 << 30;
    let parse = |s: &str| Workload::from_json(&json!({"rw": "randread", "bssplit": s}), cap);
    assert_eq!(parse("4k/10:64k/50:32k/40").unwrap().sizes, vec![(4096, 10), (65536, 50), (32768, 40)]);
    // fio: a size without a percentage shares the rest evenly.
    assert_eq!(parse("4k/50:1k/:32k/").unwrap().sizes, vec![(4096, 50), (1024, 25), (32768, 25)]);
    assert_eq!(parse("4k:8k").unwrap().sizes, vec![(4096, 50), (8192, 50)]);
    assert_eq!(parse("4k/100:8k/0").unwrap().sizes, vec![(4096, 100)]);
    for (text, want) in [
        ("4k/50:64k/40", "add up to 90, not 100"),
        ("4k/50:64k/60", "add up to 110, more than 100"),
        ("4k/60:8k/60:16k/", "add up to 120, more than 100"),
        ("4k/x", "'x' in '4k/x' is not a whole percentage"),
        ("4k/-5:8k/", "not a whole percentage"),
        ("4k/0:8k/0", "add up to 0, not 100"),
    ] {
        let e = parse(text).unwrap_err();
        let SimError::Workload { field, message } = &e else { panic!("{e:?}") };
        assert_eq!(field, "bssplit");
        assert!(message.contains(want), "{text}: {message}");
    }
    let many = (0..65).map(|_| "4k/").collect::<Vec<_>>().join(":");
    assert!(parse(&many).unwrap_err().to_string().contains("at most 64"));
}

#[test]
fn a_series_interval_is_at_most_a_year() {
    let e = Workload::from_json(&json!({"rw": "write", "log_avg_msec": u64::MAX}), 1 << 30).unwrap_err();
    assert!(e.to_string().contains("log_avg_msec"), "{e}");
    let e = ReplayOptions::from_json(&json!({"log_avg_msec": u64::MAX})).unwrap_err();
    assert!(e.to_string().contains("log_avg_msec"), "{e}");
}

#[test]
fn idle_time_cannot_overflow_the_clock() {
    let mut s = sim(small(), 1, false);
    let e = s.idle(u64::MAX).unwrap_err();
    assert!(matches!(&e, SimError::Workload { field, .. } if field == "idle"), "{e:?}");
    s.idle(1_000_000_000).unwrap();
}
