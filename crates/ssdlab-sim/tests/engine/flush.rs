//! fio's `fsync=N` in a closed-loop job: a FLUSH CACHE after every N writes,
//! issued once the job's I/O in flight completed, which waits until the data
//! written before it is programmed (a partial program unit padded).

use crate::common::*;
use serde_json::json;

const TPROG_NS: u64 = 1_300_000;

fn drive() -> ssdlab_sim::Simulator {
    realistic_drive(8, 64, 1.2, 7, json!({}))
}

#[test]
fn a_flushed_qd1_write_waits_for_the_program() {
    let mut s = drive();
    let plain = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 1, "number_ios": 200}));
    assert_eq!(plain.stats.sync.ios, 0);
    assert!(plain.to_json().get("sync").is_none(), "a job without fsync has no sync section");
    let mut s = drive();
    let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 1, "number_ios": 200, "fsync": 1}));
    // One flush after every write but the last (the job ends there, as fio's).
    assert_eq!(r.stats.write.ios, 200);
    assert_eq!(r.stats.sync.ios, 199);
    let j = r.to_json();
    assert_eq!(j["sync"]["total_ios"], 199);
    assert_eq!(j["ssdlab"]["flushes"], 199);
    // The flush sends the padded unit (16KB over a 200 MB/s channel: 82 us)
    // and waits for its program.
    let sync_ns = r.stats.sync.lat.mean_ns();
    assert!(sync_ns > TPROG_NS as f64 && sync_ns < TPROG_NS as f64 + 150_000.0, "sync {sync_ns} ns");
    // The writes themselves are acknowledged from the buffer as before.
    let w_plain = plain.stats.write.lat.mean_ns();
    let w_sync = r.stats.write.lat.mean_ns();
    assert!((w_sync / w_plain - 1.0).abs() < 0.05, "write latency {w_sync} vs {w_plain}");
    // Each flush programs a whole (padded) 16KB unit: 4x the host bytes.
    assert!(r.ftl.padded_bytes >= 199 * 12288, "padded {}", r.ftl.padded_bytes);
    // fsync spreads the job over a program time per write.
    assert!(r.duration_ns > 199 * TPROG_NS);
}

#[test]
fn fsync_zero_is_no_fsync_and_fdatasync_is_the_same() {
    let job = json!({"rw": "randwrite", "bs": "4k", "iodepth": 4, "number_ios": 3000});
    let mut a = drive();
    let ra = run(&mut a, job.clone());
    let mut b = drive();
    let mut j0 = job.clone();
    j0["fsync"] = json!(0);
    let rb = run(&mut b, j0);
    assert_eq!(ra.to_json(), rb.to_json());
    let mut c = drive();
    let mut j1 = job.clone();
    j1["fsync"] = json!(16);
    let rc = run(&mut c, j1);
    let mut d = drive();
    let mut j2 = job;
    j2["fdatasync"] = json!(16);
    let rd = run(&mut d, j2);
    assert_eq!(rc.to_json(), rd.to_json());
    assert_eq!(rc.stats.sync.ios, 3000 / 16);
    // Deterministic.
    let mut e = drive();
    let mut j3 = json!({"rw": "randwrite", "bs": "4k", "iodepth": 4, "number_ios": 3000});
    j3["fsync"] = json!(16);
    assert_eq!(run(&mut e, j3).to_json(), rc.to_json());
}

#[test]
fn the_queue_drains_before_a_flush() {
    // QD8 with a flush every 8 writes: a batch of 8, a flush, a batch...
    let mut s = drive();
    let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 8, "number_ios": 800, "fsync": 8}));
    assert_eq!(r.stats.sync.ios, 99);
    // Every flush waits for the programs of its batch (two 16KB units at most
    // per die here): never faster than one program.
    assert!(r.stats.sync.lat.min_ns > TPROG_NS, "min sync {}", r.stats.sync.lat.min_ns);
    // Busy the whole time: writes, then the flush, back to back.
    assert!(r.stats.busy_time_ns as f64 > 0.99 * r.duration_ns as f64);
}

#[test]
fn a_flush_after_a_large_write_waits_for_every_unit() {
    // 1 MiB writes: 64 units of 16KB over 8 dies, 8 programs per die; the
    // flush waits for the last of them.
    let mut s = drive();
    let r = run(&mut s, json!({"rw": "write", "bs": "1m", "iodepth": 1, "number_ios": 20, "fsync": 1}));
    let small = run(&mut drive(), json!({"rw": "write", "bs": "4k", "iodepth": 1, "number_ios": 20, "fsync": 1}));
    assert!(
        r.stats.sync.lat.mean_ns() > 4.0 * small.stats.sync.lat.mean_ns(),
        "{} vs {}",
        r.stats.sync.lat.mean_ns(),
        small.stats.sync.lat.mean_ns()
    );
    // The job ends with its last write (no flush after it, as fio's): only
    // that write's last unit, held in the buffer, is left to program.
    let before = s.nand.counters.unit_programs;
    s.flush();
    assert_eq!(s.nand.counters.unit_programs, before + 1);
}

#[test]
fn bad_flush_periods_are_named() {
    let s = drive();
    for (k, v) in [("fsync", json!(-1)), ("fsync", json!("often")), ("fdatasync", json!(1.5))] {
        let e = ssdlab_sim::Workload::from_json(&json!({"rw": "write", k: v}), s.capacity_bytes()).unwrap_err().to_string();
        assert!(e.contains(&format!("'{k}'")) && e.contains("whole number >= 0"), "{e}");
    }
    let e =
        ssdlab_sim::Workload::from_json(&json!({"rw": "write", "fsync": 2, "fdatasync": 3}), s.capacity_bytes()).unwrap_err().to_string();
    assert!(e.contains("'fdatasync'"), "{e}");
}
