//! The map cache of a drive without DRAM for its map
//! (`controller.map_cache_bytes`; docs/model.md "Flash translation layer"):
//! random reads beyond the cached map's coverage pay a translation-page
//! read, a cache that holds the whole map costs nothing. One claim per test.

mod common;
use common::*;
use serde_json::{json, Value};
use ssdlab_sim::Simulator;

/// 32 dies of 8KB-page MLC (a translation page of 2048 entries maps 8 MiB),
/// 2 GiB written sequentially, with `controller` merged in.
fn written(controller: Value) -> Simulator {
    let e = json!({
        "controller": merged(json!({"command_cost_ns": 2_000, "command_slots": 8, "write_buffer_bytes": 64u64 << 20}), controller),
        "nand": {"channels": 8, "packages_per_channel": 4, "planes_per_die": 2, "page_size_bytes": 8192,
                 "tr_ns": 50_000, "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 400_000_000u64},
    });
    let mut s = sim(drive_with(32, 128, 256 * 4, 1.15, "greedy", e), 7, false);
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": "2g"}));
    s.idle(2_000_000_000).unwrap();
    s
}

fn merged(mut a: Value, b: Value) -> Value {
    merge(&mut a, &b);
    a
}

/// QD1 4KB random reads over the first `span` bytes: (IOPS, result).
fn qd1_reads(s: &Simulator, span: &str) -> (f64, ssdlab_sim::PhaseResult) {
    let r = run(&mut s.clone(), json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": span, "number_ios": 4000}));
    (r.iops(), r)
}

#[test]
fn qd1_random_reads_beyond_the_cached_maps_coverage_pay_a_map_read() {
    // 16 translation pages of 8KB (128 KiB) map 128 MiB.
    let dram = written(json!({}));
    let sram = written(json!({"map_cache_bytes": 16 * 8192}));
    let (d_in, _) = qd1_reads(&dram, "64m");
    let (d_out, _) = qd1_reads(&dram, "2g");
    let (s_in, _) = qd1_reads(&sram, "64m");
    let (s_out, r) = qd1_reads(&sram, "2g");
    println!("QD1 4KB reads, DRAM: 64 MiB {d_in:.0}, 2 GiB {d_out:.0} IOPS; 128 KiB map cache: {s_in:.0}, {s_out:.0} IOPS");
    println!("map pages read {}", r.ftl.map_page_reads);
    assert!((s_in / d_in - 1.0).abs() < 0.02, "within the coverage the cache costs nothing: {s_in:.0} against {d_in:.0}");
    assert!((d_out / d_in - 1.0).abs() < 0.05, "with DRAM the span does not matter: {d_out:.0} against {d_in:.0}");
    // Beyond it nearly every read first reads its translation page: about
    // twice the die time per request.
    assert!(s_out < 0.75 * d_out, "beyond the coverage reads slow down: {s_out:.0} against {d_out:.0}");
    assert!(r.ftl.map_page_reads > 3000, "nearly every read misses: {} map reads", r.ftl.map_page_reads);
}

#[test]
fn a_map_cache_holding_the_whole_map_gives_exactly_the_dram_results() {
    // 2.2 GiB of user space maps into 280 pages of 8KB.
    let dram = written(json!({}));
    let all = written(json!({"map_cache_bytes": 4u64 << 20}));
    let w = json!({"rw": "randrw", "bs": "4k", "iodepth": 8, "size": "2g", "number_ios": 20000});
    let (a, b) = (run(&mut dram.clone(), w.clone()), run(&mut all.clone(), w));
    assert_eq!(a.to_json().to_string(), b.to_json().to_string());
}

#[test]
fn random_writes_beyond_the_coverage_write_translation_pages_back() {
    let sram = written(json!({"map_cache_bytes": 16 * 8192}));
    let dram = written(json!({}));
    let w = json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": "2g", "number_ios": 50000});
    let (a, b) = (run(&mut dram.clone(), w.clone()), run(&mut sram.clone(), w));
    println!("WAF: DRAM {:.3}, map cache {:.3} ({} map pages written)", a.waf(), b.waf(), b.ftl.map_page_writes);
    assert!(b.ftl.map_page_writes > 10_000 && b.waf() > a.waf() + 1.0, "each evicted dirty page is a program");
}
