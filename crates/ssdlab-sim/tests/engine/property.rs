//! Property tests: random sequences of writes (aligned and not), TRIMs, reads,
//! idle time, flushes and secure erases on small drives under heavy GC
//! pressure, in checking mode. The shadow model (`LBA -> newest version`) is
//! compared on every read and after every phase; nothing may ever be lost,
//! stale or mixed up. A failure prints the seed and the op list to reproduce.

use crate::common::*;
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
enum Step {
    Write { first: u64, units: u64, bs_sectors: u64, align_sectors: u64, ios: u64, qd: u32, random: bool, data: &'static str },
    Trim { first: u64, units: u64 },
    Read { first: u64, units: u64, bs_units: u64, ios: u64, qd: u32 },
    Idle { ms: u64 },
    Flush,
    SecureErase,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0u64..1000, 1u64..1000, 1u64..65, prop_oneof![Just(1u64), Just(8u64)], 1u64..400, 1u32..33, any::<bool>(),
              prop_oneof![Just("incompressible"), Just("repeated"), Just("compressible"), Just("zeros"), Just("ratio:0.6")])
            .prop_map(|(first, units, bs_sectors, align_sectors, ios, qd, random, data)| Step::Write { first, units, bs_sectors, align_sectors, ios, qd, random, data }),
        2 => (0u64..1000, 1u64..1000).prop_map(|(first, units)| Step::Trim { first, units }),
        3 => (0u64..1000, 1u64..1000, 1u64..9, 1u64..200, 1u32..33)
            .prop_map(|(first, units, bs_units, ios, qd)| Step::Read { first, units, bs_units, ios, qd }),
        1 => (1u64..2000).prop_map(|ms| Step::Idle { ms }),
        1 => Just(Step::Flush),
        1 => Just(Step::SecureErase),
    ]
}

/// Every step in turn, a flush, then checking mode's full comparison against
/// the trivial model.
fn apply_all_and_check(sim: &mut ssdlab_sim::Simulator, steps: &[Step]) -> Result<(), String> {
    for s in steps {
        apply(sim, s);
    }
    sim.flush();
    sim.check_now().map_err(|e| format!("{e:?}"))
}

fn apply(sim: &mut ssdlab_sim::Simulator, s: &Step) {
    let cap_units = sim.capacity_bytes() / 4096;
    let span = |first: u64, units: u64| {
        let f = first % cap_units;
        let u = units.min(cap_units - f).max(1);
        (f * 4096, u * 4096)
    };
    match *s {
        Step::Write { first, units, bs_sectors, align_sectors, ios, qd, random, data } => {
            let (off, len) = span(first, units);
            let bs = (bs_sectors * 512).min(len);
            let align = (align_sectors * 512).min(bs);
            let bs = bs / align * align;
            run(
                sim,
                json!({"rw": if random {"randwrite"} else {"write"}, "bs": bs, "blockalign": align,
                            "offset": off, "size": len, "number_ios": ios, "iodepth": qd, "data_pattern": data}),
            );
        }
        Step::Trim { first, units } => {
            let (off, len) = span(first, units);
            sim.trim(off, Some(len)).unwrap();
        }
        Step::Read { first, units, bs_units, ios, qd } => {
            let (off, len) = span(first, units);
            let bs = (bs_units * 4096).min(len);
            run(sim, json!({"rw": "randread", "bs": bs, "offset": off, "size": len, "number_ios": ios, "iodepth": qd}));
        }
        Step::Idle { ms } => {
            sim.idle(ms * 1_000_000).unwrap();
        }
        Step::Flush => sim.flush(),
        Step::SecureErase => {
            sim.secure_erase().unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Greedy, FIFO and cost-benefit GC on a drive with 12% spare, 2 dies of 48 blocks.
    #[test]
    fn ftl_never_loses_or_mixes_up_data(
        policy in prop_oneof![Just("greedy"), Just("fifo"), Just("cost-benefit")],
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        // 2 dies x 48 blocks x 16 pages of 4KB = 1536 units raw, a = 1.12.
        let mut sim = sim(drive(2, 48, 16, 1.12, policy), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// A data-reducing controller (1KB granules, units of 1-4 granules) with
    /// RAISE, lazy GC, a recycling path and die-striped reads (SandForce):
    /// mixed data patterns never lose data, with writes acknowledged in the
    /// buffer, at the die, or at the die only for whole program units, and
    /// with or without a TRIM's map work deferred to the next write.
    #[test]
    fn reducing_controller_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        ack in 0..3u8,
        deferred in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let extra = json!({
            "data_reduction": {"enabled": true, "metadata_bytes_per_unit": 64, "compressible_stored_fraction": 0.3,
                               "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0},
            "nand": {"raise": true},
            "ftl": {"gc_mode": "lazy", "recycle_bytes_per_s": 150_000_000u64, "trim_map_deferred": deferred},
            "controller": {"max_active_dies": 2, "readahead_bytes": 65536, "readahead_min_qd": 2, "seq_read_max_dies": 2,
                           "die_stripe_bytes": 512, "write_ack_at_die": ack == 1, "write_ack_at_die_whole_units": ack == 2}
        });
        let mut sim = sim(drive_with(3, 48, 16, 1.12 * 3.0 / 2.0, "greedy", extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Performance mode (half-capacity fast blocks, then a reorganisation
    /// once 30% of the LBAs hold data) with paced GC.
    #[test]
    fn performance_mode_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let extra = json!({"ftl": {"perf_mode_tprog_ns": 400_000, "perf_mode_fill_percent": 30}});
        let mut sim = sim(drive_with(2, 48, 16, 1.12, "cost-benefit", extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// The same with the fast mode for small random writes only
    /// (`perf_mode_small_random_writes_only`): blocks of both modes side by side.
    #[test]
    fn performance_mode_for_small_random_writes_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let extra = json!({"ftl": {"perf_mode_tprog_ns": 400_000, "perf_mode_fill_percent": 30,
                                   "perf_mode_small_random_writes_only": true}});
        let mut sim = sim(drive_with(2, 48, 16, 1.12, "greedy", extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// The same with the fast mode past the fill limit in room idle time
    /// made (`perf_mode_after_idle`), greedy GC.
    #[test]
    fn performance_mode_after_idle_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let extra = json!({"ftl": {"perf_mode_tprog_ns": 400_000, "perf_mode_fill_percent": 30,
                                   "perf_mode_after_idle": true, "bg_gc_threshold_blocks": 3}});
        let mut sim = sim(drive_with(2, 48, 16, 1.2, "greedy", extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// A TLC drive (one-shot programs of a wordline, page-type reads) behind
    /// an SLC cache: writes into SLC blocks, folding while writing, in idle
    /// time and for space, GC of native blocks, TRIM of data in either, with
    /// and without a mid-fill refill, with and without independent plane
    /// reads.
    #[test]
    fn slc_cache_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        fold in prop_oneof![Just(0.0f64), Just(0.5f64), Just(2.0f64)],
        refill in any::<bool>(),
        plane_reads in any::<bool>(),
        ack_whole_units in any::<bool>(),
        policy in prop_oneof![Just("greedy"), Just("fifo"), Just("cost-benefit")],
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        // With independent plane reads: two planes, each reading its own page.
        let planes = if plane_reads { 2 } else { 1 };
        let extra = json!({
            "nand": {"bits_per_cell": 3, "one_shot_program": true, "tprog_ns": 1_500_000,
                     "tr_page_types_ns": [40_000, 50_000, 70_000], "slc_tprog_ns": 100_000, "slc_tr_ns": 30_000,
                     "planes_per_die": planes, "independent_plane_reads": plane_reads},
            "slc_cache": {"static_percent_of_capacity": 3.0, "dynamic_percent_of_capacity": 25.0,
                          "fold_units_per_host_unit": fold, "refill_while_writing": refill},
            "controller": {"write_ack_at_die_whole_units": ack_whole_units}
        });
        // 2 dies x 48 blocks x 48 pages of 4KB, a = 1.12.
        let mut sim = sim(drive_with(2, 48, 48, 1.12, policy, extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// An SLC cache whose folds the host keeps interrupting: idle time just
    /// past the idle delay (100 ms) starts a fold on each die and the next
    /// write pauses it mid-block, while rewrites and TRIMs empty SLC blocks
    /// that the cache then erases beside the paused fold.
    #[test]
    fn slc_cache_with_paused_folds_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        fold in prop_oneof![Just(0.0f64), Just(0.5f64)],
        policy in prop_oneof![Just("greedy"), Just("fifo"), Just("cost-benefit")],
        steps in proptest::collection::vec(prop_oneof![
            4 => step(),
            2 => (101u64..106).prop_map(|ms| Step::Idle { ms }),
        ], 1..40),
    ) {
        let extra = json!({
            "nand": {"bits_per_cell": 3, "one_shot_program": true, "tprog_ns": 1_500_000,
                     "slc_tprog_ns": 100_000, "slc_tr_ns": 30_000},
            "slc_cache": {"static_percent_of_capacity": 3.0, "dynamic_percent_of_capacity": 25.0,
                          "fold_units_per_host_unit": fold}
        });
        // 2 dies x 48 blocks x 48 pages of 4KB, a = 1.12.
        let mut sim = sim(drive_with(2, 48, 48, 1.12, policy, extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// An SLC write-through buffer for small writes on an MLC drive: writes
    /// of at most 8KB through SLC blocks, larger ones to native blocks, the
    /// buffer folded as the host writes into it (or only when it must make
    /// room), in idle time and by space GC, with every GC policy.
    #[test]
    fn slc_write_through_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        fold in prop_oneof![Just(0.0f64), Just(0.5f64), Just(1.0f64)],
        policy in prop_oneof![Just("greedy"), Just("fifo"), Just("cost-benefit")],
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let extra = json!({
            "nand": {"bits_per_cell": 2, "tprog_ns": 1_200_000, "slc_tprog_ns": 300_000},
            "slc_cache": {"static_percent_of_capacity": 6.0, "fold_units_per_host_unit": fold,
                          "write_through_max_bytes": 8192}
        });
        // 2 dies x 48 blocks x 48 pages of 4KB, a = 1.12.
        let mut sim = sim(drive_with(2, 48, 48, 1.12, policy, extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

/// A long deterministic run under heavy pressure with every policy: writes
/// many times the capacity mixed with TRIMs and reads, checked throughout.
#[test]
fn long_mixed_run_stays_consistent() {
    for policy in ["greedy", "fifo", "cost-benefit"] {
        let mut s = sim(drive(4, 64, 16, 1.12, policy), 9, true);
        fill(&mut s);
        for round in 0..20u64 {
            run(
                &mut s,
                json!({"rw": "randrw", "rwmixread": 30, "bssplit": "4k/60:8k/20:512/10:64k/10", "blockalign": 512,
                               "number_ios": 3000, "iodepth": 8 + round}),
            );
            let cap = s.capacity_bytes();
            let off = (round * 7919 % (cap / 4096 / 2)) * 4096;
            s.trim(off, Some(cap / 8 / 4096 * 4096)).unwrap();
            if round % 5 == 4 {
                s.idle(2_000_000_000).unwrap();
            }
        }
        s.check_now().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// A map of too few entries for the drive (`ftl.max_map_entries`): units
    /// of 8KB, 16KB or 64KB, each write to part of one rewriting the rest of
    /// it, with and without data reduction, die striping and lazy GC.
    #[test]
    fn coarse_map_units_never_lose_or_mix_up_data(
        seed in any::<u64>(),
        units_per_entry in prop_oneof![Just(2u64), Just(4u64), Just(16u64)],
        reducing in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        // 3 dies x 48 blocks x 16 pages; user units = floor(2304 / 1.2).
        let user_units = (3.0f64 * 48.0 * 16.0 / 1.2).floor() as u64;
        let mut extra = json!({"ftl": {"max_map_entries": user_units.div_ceil(units_per_entry)}});
        if reducing {
            merge(&mut extra, &json!({
                "data_reduction": {"enabled": true, "metadata_bytes_per_unit": 64, "compressible_stored_fraction": 0.3,
                                   "repeated_stored_fraction": 0.0, "zeros_stored_fraction": 0.0},
                "ftl": {"gc_mode": "lazy", "recycle_bytes_per_s": 150_000_000u64},
                "controller": {"die_stripe_bytes": 512}
            }));
        }
        let cfg = drive_with(3, 48, 16, 1.2, "greedy", extra);
        prop_assert_eq!(cfg.geometry().map_unit_units as u64, units_per_entry);
        let mut sim = sim(cfg, seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// A map cache of one or two translation pages (4KB pages of 1024
    /// entries: the drive's map is two pages), so lookups, updates, GC moves
    /// and TRIMs load and evict pages all the time; with a coarse map too.
    #[test]
    fn a_map_cache_never_loses_or_mixes_up_data(
        seed in any::<u64>(),
        pages in 1u64..3,
        policy in prop_oneof![Just("greedy"), Just("fifo")],
        coarse in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let user_units = (3.0f64 * 48.0 * 16.0 / 1.2).floor() as u64;
        let mut extra = json!({"controller": {"map_cache_bytes": pages * 4096}});
        if coarse {
            merge(&mut extra, &json!({"ftl": {"max_map_entries": user_units.div_ceil(2)}}));
        }
        let mut sim = sim(drive_with(3, 48, 16, 1.2, policy, extra), seed, true);
        let checked = apply_all_and_check(&mut sim, &steps);
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}
