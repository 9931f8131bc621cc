//! The SandForce block recycling path (docs/model.md, "Block recycling path";
//! `ftl.recycle_bytes_per_s`), one claim per test.

use crate::common::*;
use serde_json::{json, Value};
use ssdlab_sim::{PhaseResult, Simulator};

/// A 25nm-class drive (8KB pages, 2 planes, 256 pages per block) of `dies`
/// dies with 64 blocks per plane, 1/1.15 of raw NAND as user capacity, lazy
/// GC, and a recycling path of `recycle` bytes/s for the whole controller.
fn drive(dies: u32, recycle: u64, extra: Value) -> Simulator {
    let mut e = json!({"ftl": {"gc_mode": "lazy", "recycle_bytes_per_s": recycle}});
    merge(&mut e, &extra);
    realistic_drive(dies, 64, 1.15, 5, e)
}

fn mbps(r: &PhaseResult) -> f64 {
    r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

/// AS-SSD-style sequential write: 16MB transfers at QD1 over 256MB.
fn as_ssd_write(s: &mut Simulator) -> PhaseResult {
    run(s, json!({"rw": "write", "bs": "16m", "iodepth": 1, "io_size": 256u64 << 20, "size": 256u64 << 20}))
}

/// Every LBA written twice: the spare area holds stale data and no block is
/// pre-erased beyond the GC reserve (docs/methodology.md's "dirty").
fn dirty(s: &mut Simulator) {
    fill(s);
    fill(s);
}

#[test]
fn the_recycling_path_is_shared_so_twice_the_dies_do_not_recycle_twice_as_fast() {
    const R: u64 = 40_000_000;
    let mut rates = Vec::new();
    for dies in [8, 16] {
        let mut s = drive(dies, R, json!({}));
        let clean = mbps(&as_ssd_write(&mut s.clone()));
        dirty(&mut s);
        let r = as_ssd_write(&mut s);
        println!(
            "{dies} dies: clean {clean:.1} MB/s, dirty {:.1} MB/s ({} victims, {} B moved)",
            mbps(&r),
            r.ftl.gc_victims,
            r.ftl.gc_bytes_moved
        );
        assert!(r.ftl.gc_victims > 0, "the dirty write must recycle blocks");
        rates.push((clean, mbps(&r)));
    }
    let ((c8, d8), (c16, d16)) = (rates[0], rates[1]);
    assert!(c16 > 1.6 * c8, "clean, the dies set the pace: 16 dies {c16:.1} vs 8 dies {c8:.1} MB/s");
    assert!(d16 < 1.15 * d8, "the path is controller-wide: 16 dies dirty {d16:.1} vs 8 dies {d8:.1} MB/s");
    assert!(d8 < 0.6 * c8, "8 dies dirty should be bound by the path: {d8:.1} vs clean {c8:.1}");
    assert!((d8 / (R as f64 / 1e6) - 1.0).abs() < 0.1, "dirty 8 dies {d8:.1} MB/s vs the path's {} MB/s", R / 1_000_000);
}

#[test]
fn a_victim_with_no_valid_data_moves_nothing_but_still_waits_for_the_recycling_path() {
    // docs/model.md: recycling runs at a fixed rate and a full TRIM does not
    // restore the pre-erased pool; the path charges whole blocks, whatever
    // they hold, and the copy of valid data (none here) comes on top.
    const R: u64 = 40_000_000;
    let mut s = drive(8, R, json!({}));
    let clean = mbps(&as_ssd_write(&mut s.clone()));
    dirty(&mut s);
    s.trim(0, None).unwrap();
    let r = as_ssd_write(&mut s);
    let after = mbps(&r);
    println!(
        "clean {clean:.1} MB/s; after a full TRIM of the dirty drive {after:.1} MB/s, {} victims, {} B moved",
        r.ftl.gc_victims, r.ftl.gc_bytes_moved
    );
    assert!(r.ftl.gc_victims > 0);
    assert_eq!(r.ftl.gc_bytes_moved, 0, "every victim held only TRIMmed data");
    assert!((after / (R as f64 / 1e6) - 1.0).abs() < 0.1, "after TRIM {after:.1} MB/s: the path's {} MB/s", R / 1_000_000);
    assert!(after < 0.6 * clean, "after TRIM {after:.1} vs clean {clean:.1}");
}

#[test]
fn without_a_recycling_path_a_victim_with_no_valid_data_costs_only_its_erase() {
    let mut s = drive(8, 0, json!({}));
    let clean = mbps(&as_ssd_write(&mut s.clone()));
    dirty(&mut s);
    s.trim(0, None).unwrap();
    let r = as_ssd_write(&mut s);
    let after = mbps(&r);
    println!("no path: clean {clean:.1} MB/s; after a full TRIM of the dirty drive {after:.1} MB/s, {} victims", r.ftl.gc_victims);
    assert!(r.ftl.gc_victims > 0 && r.ftl.gc_bytes_moved == 0);
    // One 3 ms erase per 4MB block written, beside the programs of the other dies.
    assert!(after > 0.95 * clean, "after TRIM {after:.1} vs clean {clean:.1}");
}

#[test]
fn the_dirty_write_rate_follows_the_recycling_path_rate() {
    let dirty_rate = |r: u64| {
        let mut s = drive(8, r, json!({}));
        dirty(&mut s);
        mbps(&as_ssd_write(&mut s))
    };
    let (a, b) = (dirty_rate(20_000_000), dirty_rate(40_000_000));
    println!("dirty: path 20 MB/s -> {a:.1} MB/s, path 40 MB/s -> {b:.1} MB/s");
    assert!((b / a - 2.0).abs() < 0.15, "{b:.1} / {a:.1}");
}

#[test]
fn a_path_rated_per_die_recycles_in_step_with_the_dies_the_controller_drives() {
    // `ftl.recycle_bytes_per_s_per_die`: the path's rate is this times the
    // dies driven at once, so twice the dies recycle twice as fast until the
    // active-die limit, and past it more dies add nothing.
    const PER_DIE: u64 = 4_000_000;
    let dirty_rate = |dies: u32, active: u32| {
        let mut s = drive(dies, 0, json!({"ftl": {"recycle_bytes_per_s_per_die": PER_DIE}, "controller": {"max_active_dies": active}}));
        dirty(&mut s);
        let r = as_ssd_write(&mut s);
        assert!(r.ftl.gc_victims > 0, "the dirty write must recycle blocks");
        mbps(&r)
    };
    let (d8, d16, d16_at_8) = (dirty_rate(8, 0), dirty_rate(16, 0), dirty_rate(16, 8));
    println!("dirty, {} MB/s a die: 8 dies {d8:.1}, 16 dies {d16:.1}, 16 dies with 8 active {d16_at_8:.1} MB/s", PER_DIE / 1_000_000);
    let path8 = (8 * PER_DIE) as f64 / 1e6;
    assert!((d8 / path8 - 1.0).abs() < 0.1, "8 dies dirty {d8:.1} MB/s vs the path's {path8} MB/s");
    assert!((d16 / d8 - 2.0).abs() < 0.2, "16 dies recycle twice as fast as 8: {d16:.1} vs {d8:.1} MB/s");
    assert!((d16_at_8 / d8 - 1.0).abs() < 0.1, "8 of 16 dies active recycle as 8 dies: {d16_at_8:.1} vs {d8:.1} MB/s");
}

#[test]
fn the_sandforce_presets_recycle_at_their_rate_per_active_die() {
    // The SF-2000's 8.25e6 B/s a die: 132e6 on the 16-die 120GB it was set
    // on (132 MB/s on its second pass after torture and TRIM, page 000),
    // twice that on the 32-die drives and on the 480GB (32 of 64 dies
    // active). Every SF-1200 drive drives 16 dies: 71e6.
    let rate = |id: &str| preset_config(id).recycle_path_bytes_per_s();
    assert_eq!(rate("vertex3pro-200"), 264_000_000);
    assert_eq!(rate("vertex3-240"), 264_000_000);
    assert_eq!(rate("vertex3-480"), 264_000_000);
    assert_eq!(rate("vertex3-120"), 132_000_000);
    for id in ["force-f120", "vertex2-25nm-120", "vertex2-hynix-120"] {
        assert_eq!(rate(id), 71_000_000, "{id}");
    }
}
