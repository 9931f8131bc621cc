//! The SLC cache of TLC/QLC drives: writes land in SLC-mode blocks while the
//! cache has room, fast; then directly in native blocks, slow; idle time
//! folds the SLC data into native blocks and gives the cache back; a
//! firmware that folds while it writes refills the cache mid-fill. Also the
//! NAND part's one-shot programs and page-type reads, and the errors.

use crate::common::*;
use serde_json::{json, Value};
use ssdlab_sim::{DriveConfig, Simulator};

/// A small TLC drive: 4 dies, 1 plane, 4KB pages, 48 pages (16 wordlines)
/// a block, one-shot programs of a wordline (12KB) in 1.5 ms, SLC mode
/// 100 us a page; the SLC cache from `slc` (none if null).
fn tlc_drive(blocks: u32, slc: Value, extra: Value) -> DriveConfig {
    let mut e = json!({
        "host": {"link_bytes_per_s": 4_000_000_000u64, "command_overhead_ns": 1000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 2000, "write_buffer_bytes": 1u64 << 20},
        "nand": {"bits_per_cell": 3, "one_shot_program": true, "tprog_ns": 1_500_000, "tr_ns": 60_000,
                 "tr_page_types_ns": [40_000, 60_000, 80_000], "slc_tprog_ns": 100_000, "slc_tr_ns": 30_000,
                 "slc_tbers_ns": 2_000_000, "channel_bytes_per_s": 1_000_000_000u64},
    });
    if !slc.is_null() {
        e["slc_cache"] = slc;
    }
    merge(&mut e, &extra);
    drive_with(4, blocks, 48, 1.12, "greedy", e)
}

fn default_slc() -> Value {
    json!({"static_percent_of_capacity": 2.0, "dynamic_percent_of_capacity": 20.0})
}

/// MB/s of each `seg` bytes of a sequential 128KB QD32 pass over the drive.
fn fill_segments(sim: &mut Simulator, seg: u64) -> Vec<f64> {
    let cap = sim.capacity_bytes() / seg * seg;
    (0..cap / seg)
        .map(|i| {
            let r = run(sim, json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": i * seg, "size": seg}));
            r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
        })
        .collect()
}

#[test]
fn writes_are_fast_while_the_slc_cache_lasts_then_run_at_the_native_speed() {
    let mut s = sim(tlc_drive(96, default_slc(), json!({})), 1, true);
    let seg = 1 << 20;
    let v = fill_segments(&mut s, seg);
    eprintln!("{v:.1?}");
    let first = v[1];
    let last = v[v.len() / 2];
    assert!(first > 3.0 * last, "in cache {first:.1} MB/s, after {last:.1}: {v:.1?}");
    // The step comes where the cache is full: 22% of the capacity in SLC.
    let cap_mib = s.capacity_bytes() as f64 / seg as f64;
    let step = v.iter().position(|&x| x < 0.5 * (first + last)).unwrap() as f64;
    assert!((step / cap_mib - 0.22).abs() < 0.06, "step at {step} of {cap_mib:.0} MiB: {v:.1?}");
    s.check_now().unwrap();
}

#[test]
fn idle_time_folds_the_slc_data_and_gives_the_cache_back() {
    let mut s = sim(tlc_drive(96, default_slc(), json!({})), 2, true);
    let seg = 1 << 20;
    // Past the cache: 24 MiB of the 64.
    for i in 0..24 {
        run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": i * seg, "size": seg}));
    }
    let slow = seq_write_mbps(&mut s, 2 << 20, 32, "incompressible");
    assert!(s.ftl_slc_bytes() > 8 << 20, "{} B in SLC", s.ftl_slc_bytes());
    s.idle(5_000_000_000).unwrap();
    assert_eq!(s.ftl_slc_bytes(), 0, "idle time folds every SLC block");
    let fast = seq_write_mbps(&mut s, 2 << 20, 32, "incompressible");
    assert!(fast > 3.0 * slow, "after idle {fast:.1} MB/s, before {slow:.1}");
    s.check_now().unwrap();
}

#[test]
fn a_firmware_that_folds_while_it_writes_refills_the_cache_mid_fill() {
    let slc = json!({"static_percent_of_capacity": 2.0, "dynamic_percent_of_capacity": 10.0,
                     "fold_units_per_host_unit": 0.5, "refill_while_writing": true});
    let mut s = sim(tlc_drive(96, slc, json!({})), 3, true);
    let v = fill_segments(&mut s, 1 << 20);
    eprintln!("{v:.1?}");
    let fast = v[1];
    // Fast, then slow, then fast again before the end.
    let slow_at = v.iter().position(|&x| x < 0.4 * fast).unwrap();
    assert!(v[slow_at..].iter().any(|&x| x > 0.8 * fast), "no refill: {v:.1?}");
    s.check_now().unwrap();
    // Without folding while writing, the cache stays full until idle.
    let slc = json!({"static_percent_of_capacity": 2.0, "dynamic_percent_of_capacity": 10.0});
    let mut s = sim(tlc_drive(96, slc, json!({})), 3, true);
    let v = fill_segments(&mut s, 1 << 20);
    let slow_at = v.iter().position(|&x| x < 0.4 * fast).unwrap();
    assert!(v[slow_at..].iter().all(|&x| x < 0.8 * fast), "refilled without folding: {v:.1?}");
}

#[test]
fn a_fold_the_host_interrupted_keeps_no_emptied_slc_block_from_the_cache() {
    // 6 MiB in SLC, then (with `pause`) idle time just past the idle delay:
    // every die starts folding and the host comes back mid-block. A pass
    // from LBA 0 then rewrites that data: its emptied SLC blocks are erased
    // as the cache needs them, paused fold or not, so the pass's first 16
    // MiB (past the cache's 14) take as long either way. (With the emptied
    // blocks kept until the paused fold ends, they took 1.5 times as long.)
    let seg = 1 << 20;
    let secs: Vec<f64> = [false, true]
        .iter()
        .map(|&pause| {
            let mut s = sim(tlc_drive(96, default_slc(), json!({})), 5, true);
            for i in 0..6 {
                run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "offset": i * seg, "size": seg}));
            }
            let before = s.ftl_slc_bytes();
            if pause {
                s.idle(103_000_000).unwrap();
                let after = s.ftl_slc_bytes();
                assert!(after > 0 && after < before, "a fold under way: {before} B in SLC, then {after}");
            }
            let v = fill_segments(&mut s, seg);
            s.check_now().unwrap();
            eprintln!("pause {pause}: {v:.1?}");
            v[..16].iter().map(|mbps| seg as f64 / 1e6 / mbps).sum()
        })
        .collect();
    assert!(secs[1] < 1.1 * secs[0], "16 MiB after a paused fold took {:.3} s, without one {:.3}", secs[1], secs[0]);
}

#[test]
fn after_a_trim_of_a_worn_drive_the_cache_takes_its_whole_size_and_folds_only_in_idle() {
    // A static cache folded in idle time only (WD's). Random writes over
    // the full drive leave each die cleaning a victim when the host stops;
    // a TRIM of everything then empties every block. The write after it
    // fills the whole cache (the empty blocks are erased for it beside the
    // paused victims, not counted as a full cache), and past the cache it
    // writes native blocks without folding the SLC data: the TRIMmed
    // blocks cost one erase each.
    let slc = json!({"static_percent_of_capacity": 10.0, "dynamic_percent_of_capacity": 0.0});
    let mut s = sim(tlc_drive(96, slc, json!({"ftl": {"gc_mode": "paced", "gc_threshold_blocks": 4}})), 6, true);
    let cap = s.capacity_bytes();
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32}));
    run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "number_ios": 20_000}));
    s.trim(0, Some(cap)).unwrap();
    // Idle time gives the cache back, too short to erase the TRIMmed blocks.
    s.idle(120_000_000).unwrap();
    let slc_bytes = |s: &Simulator| s.smart()["slc_bytes_programmed"].as_u64().unwrap_or(0);
    let before = slc_bytes(&s);
    let half = cap / 2 / (1 << 20) * (1 << 20);
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": half}));
    let cached = slc_bytes(&s) - before;
    let size = cap / 10;
    assert!(cached as f64 > 0.9 * size as f64, "{cached} B written in SLC after the TRIM, the cache is {size} B");
    assert!(s.ftl_slc_bytes() as f64 > 0.9 * size as f64, "{} B left in SLC: folded while writing", s.ftl_slc_bytes());
    s.check_now().unwrap();
}

#[test]
fn flushed_small_writes_stripe_over_the_dies_and_their_slc_caches() {
    // Each flushed 4KB write pads and programs SLC pages (two here). Twice
    // what one die's share of the cache holds in flushes, then more: striped
    // over the 4 dies, they all still land in SLC (a 100 us program), where
    // one die taking them all would have run out and programmed TLC (1.5 ms).
    let slc = json!({"static_percent_of_capacity": 10.0, "dynamic_percent_of_capacity": 0.0});
    let mut s = sim(tlc_drive(96, slc, json!({})), 7, true);
    let per_die_pages = s.capacity_bytes() / 10 / 4 / 4096;
    let job = |n: u64| json!({"rw": "randwrite", "bs": "4k", "iodepth": 1, "number_ios": n, "fsync": 1});
    run(&mut s, job(per_die_pages));
    let slc_bytes = s.smart()["slc_bytes_programmed"].as_u64().unwrap();
    assert!(slc_bytes > s.capacity_bytes() / 10 / 4, "{slc_bytes} B in SLC: past one die's share");
    let r = run(&mut s, job(per_die_pages / 4));
    let sync_ns = r.stats.sync.lat.mean_ns();
    assert!(sync_ns < 400_000.0, "{sync_ns:.0} ns a flush after {per_die_pages} flushed writes");
    s.check_now().unwrap();
}

#[test]
fn trim_and_rewrites_of_slc_data_lose_nothing_through_folding_and_gc() {
    let mut s = sim(tlc_drive(64, default_slc(), json!({})), 4, true);
    let cap = s.capacity_bytes();
    for round in 0..6u64 {
        run(&mut s, json!({"rw": "randwrite", "bs": "16k", "iodepth": 16, "number_ios": 1500}));
        s.trim((round * 4096 * 997) % (cap / 2) / 4096 * 4096, Some(cap / 6 / 4096 * 4096)).unwrap();
        run(&mut s, json!({"rw": "randread", "bs": "8k", "iodepth": 8, "number_ios": 500}));
        if round % 2 == 1 {
            s.idle(1_000_000_000).unwrap();
        }
        s.check_now().unwrap();
    }
}

#[test]
fn page_types_read_at_their_own_speed_and_slc_pages_faster() {
    // One page type slow, two fast: the spread is the part's, the mean the
    // three's (60 us).
    // QD1 4KB random reads of data folded into TLC: the mean of the three
    // page types; of data still in SLC: SLC's read time.
    let mean_read_us = |s: &mut Simulator| {
        let r = run(s, json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": 2 << 20, "number_ios": 400}));
        r.stats.read.lat.mean_ns() / 1e3
    };
    let mut s = sim(tlc_drive(96, default_slc(), json!({"nand": {"tr_page_types_ns": [120_000, 30_000, 30_000]}})), 5, false);
    run(&mut s, json!({"rw": "write", "bs": "128k", "iodepth": 32, "size": 2 << 20}));
    s.flush();
    // Shorter than the idle delay: the programs end, nothing is folded.
    s.idle(50_000_000).unwrap();
    assert!(s.ftl_slc_bytes() >= 2 << 20);
    let slc = mean_read_us(&mut s);
    s.idle(5_000_000_000).unwrap();
    let tlc = mean_read_us(&mut s);
    let r = run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 1, "size": 2 << 20, "number_ios": 400}));
    let (p10, p90) = (r.stats.read.lat.percentile(10.0) as f64 / 1e3, r.stats.read.lat.percentile(90.0) as f64 / 1e3);
    assert!(p90 - p10 > 80.0, "page types 120 / 30 / 30 us: 10th {p10:.1}, 90th {p90:.1} us");
    assert!(tlc - slc > 20.0 && tlc - slc < 40.0, "TLC {tlc:.1} us, SLC {slc:.1} us: the page types' mean 60 against 30");
}

#[test]
fn an_slc_cache_needs_a_part_with_an_slc_mode_and_bad_values_are_named() {
    let bad = |slc: Value, nand: Value| {
        let mut e = json!({"nand": {"bits_per_cell": 3, "one_shot_program": true}, "slc_cache": slc});
        merge(&mut e, &json!({"nand": nand}));
        let raw = 4 * 64 * 48;
        let mut cfg = json!({
            "drive": {"id": "t", "name": "t", "user_capacity_bytes": raw / 10 * 8 * 4096},
            "host": {"link_bytes_per_s": 550_000_000u64, "ncq_depth": 32},
            "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1u64 << 20},
            "nand": {"channels": 4, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 1,
                     "blocks_per_plane": 64, "pages_per_block": 48, "page_size_bytes": 4096, "tr_ns": 50_000,
                     "tprog_ns": 1_500_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
            "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 2}
        });
        merge(&mut cfg, &e);
        DriveConfig::from_json_str(&cfg.to_string()).unwrap_err().to_string()
    };
    let e = bad(default_slc(), json!({}));
    assert!(e.contains("slc_cache") && e.contains("slc_tprog_ns"), "{e}");
    let e = bad(json!({"dynamic_percent_of_capacity": 140.0}), json!({"slc_tprog_ns": 100_000}));
    assert!(e.contains("slc_cache.dynamic_percent_of_capacity") && e.contains("0..=100"), "{e}");
    let e = bad(default_slc(), json!({"slc_tprog_ns": 100_000, "pages_per_block": 50}));
    assert!(e.contains("nand.one_shot_program") && e.contains("multiple"), "{e}");
    let e = bad(default_slc(), json!({"slc_tprog_ns": 100_000, "tr_page_types_ns": [1, 2]}));
    assert!(e.contains("nand.tr_page_types_ns") && e.contains("bits_per_cell = 3"), "{e}");
}

/// A small MLC drive (4 dies, 1 plane, 4KB pages, 64 pages a block,
/// tPROG 1.2 ms, SLC mode 300 us), with an SLC write-through buffer for
/// writes of at most 16KB when `through`, without an SLC region otherwise.
fn mlc_drive(through: bool) -> DriveConfig {
    let mut e = json!({
        "host": {"link_bytes_per_s": 4_000_000_000u64, "command_overhead_ns": 1000, "ncq_depth": 32},
        "controller": {"command_cost_ns": 2000, "write_buffer_bytes": 1u64 << 20},
        "nand": {"bits_per_cell": 2, "tprog_ns": 1_200_000, "tr_ns": 60_000, "slc_tprog_ns": 300_000,
                 "channel_bytes_per_s": 1_000_000_000u64},
    });
    if through {
        e["slc_cache"] = json!({"static_percent_of_capacity": 3.0, "fold_units_per_host_unit": 1.0,
                                "write_through_max_bytes": 16384});
    }
    drive_with(4, 128, 64, 1.14, "greedy", e)
}

#[test]
fn small_writes_go_through_a_write_through_buffer_and_cost_a_fold_each() {
    let slc_bytes = |s: &Simulator| s.smart()["slc_bytes_programmed"].as_u64().unwrap_or(0);
    let iops = |r: &ssdlab_sim::PhaseResult| r.stats.write.ios as f64 / (r.duration_ns as f64 / 1e9);
    let job = json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "number_ios": 12_000});
    // On a clean drive (no GC yet) every 4KB write costs an SLC program
    // and a fold (an SLC read and an MLC program) instead of an MLC
    // program: slower than the same drive writing them to MLC directly.
    let mut s = sim(mlc_drive(true), 5, true);
    let through = iops(&run(&mut s, job.clone()));
    let mut d = sim(mlc_drive(false), 5, true);
    let direct = iops(&run(&mut d, job.clone()));
    assert!(through < 0.9 * direct, "through SLC {through:.0} IOPS, direct {direct:.0}");
    // Every one went through SLC (less what the 1 MiB write buffer holds).
    let small = 12_000u64 * 4096;
    assert!(slc_bytes(&s) + (1 << 20) >= small, "{} B programmed in SLC for {small} B", slc_bytes(&s));
    // 128KB writes go to native blocks: in SLC only what fills the SLC
    // blocks the 4KB writes left open (a block on each of the 4 dies).
    let before = slc_bytes(&s);
    fill(&mut s);
    let open_slc = 4 * 32 * 4096 + (1 << 20);
    assert!(slc_bytes(&s) - before <= open_slc, "a 128KB fill put {} B in SLC", slc_bytes(&s) - before);
    // On the filled drive too: the buffer stays within its size (checked in
    // checking mode) however much goes through it.
    let before = slc_bytes(&s);
    run(&mut s, job);
    assert!(slc_bytes(&s) - before + (1 << 20) >= small, "{} B through SLC", slc_bytes(&s) - before);
    let in_buffer = s.ftl_slc_bytes();
    assert!(in_buffer > 0 && in_buffer <= s.capacity_bytes() * 4 / 100, "{in_buffer} B in the buffer");
    s.check_now().unwrap();
    // Idle time folds what the buffer holds, but for the blocks still
    // open for writing (one a die).
    s.idle(5_000_000_000).unwrap();
    let left = s.ftl_slc_bytes();
    assert!(left < in_buffer && left <= 4 * 32 * 4096, "{left} B left in SLC after idle, {in_buffer} before");
    s.check_now().unwrap();
}

#[test]
fn a_write_through_buffer_needs_a_fixed_size_and_a_sane_threshold() {
    let base = |slc: Value| {
        let e = json!({"nand": {"bits_per_cell": 2, "slc_tprog_ns": 300_000}, "slc_cache": slc});
        let mut cfg = json!({
            "drive": {"id": "t", "name": "t", "user_capacity_bytes": 4u64 * 64 * 64 / 10 * 8 * 4096},
            "host": {"link_bytes_per_s": 550_000_000u64, "ncq_depth": 32},
            "controller": {"command_cost_ns": 4000, "write_buffer_bytes": 1u64 << 20},
            "nand": {"channels": 4, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 1,
                     "blocks_per_plane": 64, "pages_per_block": 64, "page_size_bytes": 4096, "tr_ns": 50_000,
                     "tprog_ns": 900_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
            "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 2}
        });
        merge(&mut cfg, &e);
        DriveConfig::from_json_str(&cfg.to_string()).map(|_| ()).map_err(|e| e.to_string())
    };
    let e =
        base(json!({"static_percent_of_capacity": 1.0, "dynamic_percent_of_capacity": 5.0, "write_through_max_bytes": 4096})).unwrap_err();
    assert!(e.contains("slc_cache.write_through_max_bytes") && e.contains("dynamic_percent_of_capacity 0"), "{e}");
    let e = base(json!({"static_percent_of_capacity": 1.0, "write_through_max_bytes": 100})).unwrap_err();
    assert!(e.contains("slc_cache.write_through_max_bytes") && e.contains("512..="), "{e}");
    base(json!({"static_percent_of_capacity": 1.0, "write_through_max_bytes": 4096})).unwrap();
}

#[test]
fn writes_after_idle_gave_the_cache_back_go_to_slc_not_to_the_open_native_block() {
    // Past a static cache folded in idle time only, each die's host block
    // is a native one, part written. Once idle time has folded the cache,
    // the next writes open SLC blocks at once (the native block is sealed
    // as far as it is programmed) instead of filling the native block
    // first: a read of them right after is an SLC read.
    let slc = json!({"static_percent_of_capacity": 10.0, "dynamic_percent_of_capacity": 0.0});
    let mut s = sim(tlc_drive(96, slc, json!({})), 8, true);
    let cap = s.capacity_bytes();
    let slc_bytes = |s: &Simulator| s.smart()["slc_bytes_programmed"].as_u64().unwrap_or(0);
    for round in 0..4u64 {
        // a write that ends part-way into a native block on some die
        let size = (cap / 3 + round * 60 * 1024) / 4096 * 4096;
        run(&mut s, json!({"rw": "write", "bs": "4k", "iodepth": 8, "offset": round * 4096 * 11, "size": size}));
        s.idle(5_000_000_000).unwrap();
        let before = slc_bytes(&s);
        let small = 256 * 1024;
        run(&mut s, json!({"rw": "write", "bs": "4k", "iodepth": 1, "offset": cap / 2, "size": small, "fsync": 16}));
        let cached = slc_bytes(&s) - before;
        assert!(cached >= small, "round {round}: {cached} B of {small} written in SLC after idle time");
        run(&mut s, json!({"rw": "randread", "bs": "4k", "iodepth": 4, "number_ios": 2000}));
        s.check_now().unwrap();
    }
}
