//! Several submitters on one drive (fio's jobs that run at the same time),
//! one claim per test.

use crate::common::*;
use serde_json::{json, Value};
use ssdlab_sim::{PhaseResult, Simulator};

fn jobs(sim: &mut Simulator, vs: &[Value]) -> Vec<PhaseResult> {
    let ws: Vec<_> = vs.iter().map(|v| wl(sim, v.clone())).collect();
    sim.run_jobs(&ws, &mut |_| true).unwrap()
}

fn p999_us(r: &PhaseResult) -> f64 {
    r.stats.read.lat.percentile(99.9) as f64 / 1e3
}

const READER: &str = r#"{"name": "reader", "rw": "randread", "bs": "4k", "iodepth": 1, "runtime": "3s", "time_based": 1}"#;
const WRITER: &str = r#"{"name": "writer", "rw": "write", "bs": "128k", "iodepth": 4, "runtime": "3s", "time_based": 1}"#;

#[test]
fn a_qd1_reader_beside_a_sequential_writer_sees_the_writers_gc_in_its_latency_tail() {
    let mut base = realistic_drive(4, 48, 1.12, 3, json!({}));
    fill(&mut base);
    // Sequentially filled: a sequential writer finds whole blocks invalid (cheap GC).
    let mut seq_filled = base.clone();
    // Randomly overwritten: every victim holds valid data to move (GC at work).
    let mut dirty = base.clone();
    let cap = dirty.capacity_bytes();
    run(&mut dirty, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": cap}));
    let reader: Value = serde_json::from_str(READER).unwrap();
    let writer: Value = serde_json::from_str(WRITER).unwrap();
    let alone = run(&mut seq_filled.clone(), reader.clone());
    let quiet = jobs(&mut seq_filled, &[reader.clone(), writer.clone()]);
    let busy = jobs(&mut dirty, &[reader, writer]);
    println!(
        "reader p99.9: alone {:.0} us; beside the writer on a sequentially filled drive {:.0} us (GC moved {} B); \
         on a randomly written one {:.0} us (GC moved {} B)",
        p999_us(&alone),
        p999_us(&quiet[0]),
        quiet[0].ftl.gc_bytes_moved,
        p999_us(&busy[0]),
        busy[0].ftl.gc_bytes_moved
    );
    for (what, r) in [("alone", &alone), ("quiet", &quiet[0]), ("busy", &busy[0]), ("writer quiet", &quiet[1]), ("writer busy", &busy[1])] {
        let h = if r.stats.read.ios > 0 { &r.stats.read.lat } else { &r.stats.write.lat };
        println!(
            "{what}: n {} mean {:.0} p50 {} p90 {} p99 {} p99.9 {} p99.99 {} max {}",
            h.n,
            h.mean_ns() / 1e3,
            h.percentile(50.0) / 1000,
            h.percentile(90.0) / 1000,
            h.percentile(99.0) / 1000,
            h.percentile(99.9) / 1000,
            h.percentile(99.99) / 1000,
            h.max_ns / 1000
        );
    }
    let p99 = |r: &PhaseResult| r.stats.read.lat.percentile(99.0);
    assert!(quiet[0].ftl.gc_bytes_moved == 0 && busy[0].ftl.gc_bytes_moved > 0, "only the dirty drive's writer needs GC");
    assert!(p99(&quiet[0]) > 3 * p99(&alone), "the writer's programs delay the reader");
    assert!(p99(&busy[0]) as f64 > 1.05 * p99(&quiet[0]) as f64, "the writer's GC reaches the reader's tail: p99");
    assert!(p999_us(&busy[0]) > p999_us(&quiet[0]), "and p99.9");
    assert!(busy[1].stats.write.ios > 0 && busy[0].stats.read.ios > 0);
}

#[test]
fn two_submitters_share_the_32_ncq_tags_first_come_first_served() {
    let mut s = realistic_drive(4, 48, 1.12, 3, json!({}));
    fill(&mut s);
    let a = json!({"name": "a", "rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "1s", "time_based": 1});
    let b = json!({"name": "b", "rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "1s", "time_based": 1});
    let r = jobs(&mut s, &[a, b]);
    let (ia, ib) = (r[0].stats.read.ios as f64, r[1].stats.read.ios as f64);
    assert!((ia / ib - 1.0).abs() < 0.05, "equal submitters get equal shares: {ia} vs {ib}");
    // 64 commands queued for 32 tags: each waits for a tag about as long as it is served
    let one = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "1s", "time_based": 1}));
    let both = ia + ib;
    assert!((both / one.stats.read.ios as f64 - 1.0).abs() < 0.1, "the drive serves as many: {both} vs {}", one.stats.read.ios);
    assert!(r[0].stats.read.lat.mean_ns() > 1.7 * one.stats.read.lat.mean_ns());
}

#[test]
fn rate_iops_and_thinktime_pace_a_submitter() {
    let mut s = realistic_drive(4, 48, 1.12, 3, json!({}));
    fill(&mut s);
    let r = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 8, "runtime": "2s", "time_based": 1, "rate_iops": 1000}));
    assert!((1990..=2010).contains(&r.stats.read.ios), "{}", r.stats.read.ios);
    let r = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 1, "runtime": "1s", "time_based": 1, "rate": "4m"}));
    assert!((r.stats.read.bytes as i64 - (4 << 20)).abs() <= 8192, "{}", r.stats.read.bytes);
    let r = run(
        &mut s.clone(),
        json!({"rw": "randread", "bs": "4k", "iodepth": 1, "runtime": "1s", "time_based": 1,
                                        "thinktime": "10ms", "thinktime_blocks": 10}),
    );
    assert!((900..=1000).contains(&r.stats.read.ios), "10 I/Os per 10 ms and their service: {}", r.stats.read.ios);
}

#[test]
fn a_start_delay_starts_a_submitter_later_and_results_repeat_for_a_seed() {
    let mut s = realistic_drive(4, 48, 1.12, 3, json!({}));
    fill(&mut s);
    let a = json!({"name": "a", "rw": "randread", "bs": "4k", "runtime": "1s", "time_based": 1});
    let b = json!({"name": "b", "rw": "randread", "bs": "4k", "runtime": "1s", "time_based": 1, "startdelay": "500ms"});
    let r1 = jobs(&mut s.clone(), &[a.clone(), b.clone()]);
    let r2 = jobs(&mut s.clone(), &[a, b]);
    assert_eq!(r1[1].start_ns, r1[0].start_ns + 500_000_000);
    assert_eq!(r1[0].stats.read.ios, r2[0].stats.read.ios);
    assert_eq!(r1[1].stats.read.lat.percentile(99.0), r2[1].stats.read.lat.percentile(99.0));
}

#[test]
fn jobs_of_one_flow_issue_in_the_ratio_of_their_weights() {
    // fio's examples/flow.fio: a writer of weight 1 and a reader of weight 8
    let mut s = realistic_drive(4, 48, 1.12, 3, json!({}));
    let job = |name: &str, rw: &str, flow: u32| {
        json!({"name": name, "rw": rw, "bs": "8k", "iodepth": 16, "runtime": "1s", "time_based": 1,
               "flow": flow, "flow_sleep": "1ms"})
    };
    let r = jobs(&mut s, &[job("w", "write", 1), job("r", "randread", 8)]);
    let ratio = r[1].stats.read.ios as f64 / r[0].stats.write.ios as f64;
    assert!((ratio - 8.0).abs() < 0.4, "reads per write {ratio}");
}

#[test]
fn the_latency_search_settles_on_a_shallower_queue_for_a_tighter_target() {
    let mut base = realistic_drive(4, 48, 1.12, 3, json!({}));
    fill(&mut base);
    let depth = |target: &str| {
        let v = json!({"rw": "randread", "bs": "4k", "iodepth": 32, "runtime": "20s", "time_based": 1,
                       "latency_target": target, "latency_window": "100ms", "latency_percentile": 99});
        let r = jobs(&mut base.clone(), &[v]).remove(0);
        r.latency_search.unwrap()
    };
    let (loose, tight) = (depth("100ms"), depth("400us"));
    assert_eq!(loose, (32, false));
    assert!(tight.0 < loose.0 && !tight.1, "{tight:?}");
}
