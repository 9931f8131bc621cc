use super::*;

/// 4 dies on 4 channels, 16KB program units (8KB pages, 2 planes), with
/// `controller` fields beside a 10 us command cost and a 1 MiB buffer.
fn four_dies(controller: serde_json::Value) -> DriveConfig {
    let mut ctl = serde_json::json!({"command_cost_ns": 10_000, "write_buffer_bytes": 1u64 << 20});
    ctl.as_object_mut().unwrap().extend(controller.as_object().unwrap().clone());
    DriveConfig::from_json_str(
        &serde_json::json!({
            "drive": {"id": "t", "name": "t", "user_capacity_bytes": 1u64 << 30},
            "host": {"link_bytes_per_s": 550_000_000u64, "command_overhead_ns": 3000, "ncq_depth": 32},
            "controller": ctl,
            "nand": {"channels": 4, "packages_per_channel": 1, "dies_per_package": 1, "planes_per_die": 2,
                     "blocks_per_plane": 256, "page_size_bytes": 8192, "pages_per_block": 256, "tr_ns": 50_000,
                     "tprog_ns": 1_300_000, "tbers_ns": 3_000_000, "channel_bytes_per_s": 200_000_000u64},
            "ftl": {"gc_policy": "greedy", "gc_threshold_blocks": 2, "bg_gc_threshold_blocks": 4}
        })
        .to_string(),
    )
    .unwrap()
}

#[test]
fn the_program_buffer_holds_programs_not_reads() {
    // 4 dies on 4 channels, 16KB program units (8KB pages, 2 planes),
    // a program buffer of one unit: the second die's program waits for
    // the first's to end; a read on a third die does not.
    let cfg = four_dies(serde_json::json!({"program_buffer_bytes": 16384}));
    let mut nand = Nand::new(&cfg);
    let (_, done0) = nand.program(0, 0, 16384);
    assert_eq!(done0, nand.xfer_ns(16384) + 1_300_000);
    let (_, done1) = nand.program(1, 0, 16384);
    assert_eq!(done1, done0 + nand.xfer_ns(16384) + 1_300_000, "waits for room in the buffer");
    assert_eq!(nand.read(2, 0, 4096), 50_000 + nand.xfer_ns(4096), "a read does not");
    // A GC copy holds it too.
    let end = nand.copy_through_controller(3, 0, 1, 16384, 1_300_000);
    assert!(end > done1, "copy left the controller at {end}, before {done1}");
    // No buffer, or room for every die: no wait.
    let mut c2 = cfg.clone();
    c2.controller.program_buffer_bytes = 4 * 16384;
    let mut nand = Nand::new(&c2);
    nand.program(0, 0, 16384);
    assert_eq!(nand.program(1, 0, 16384).1, done0);
}

#[test]
fn cache_programming_overlaps_the_next_transfer_with_the_program() {
    let mut cfg = four_dies(serde_json::json!({}));
    let mut nand = Nand::new(&cfg);
    let x = nand.xfer_ns(16384);
    let (_, d0) = nand.program(0, 0, 16384);
    assert_eq!(nand.program(0, 0, 16384).1, d0 + x + 1_300_000, "without it: transfer, then program");
    cfg.nand.cache_program = true;
    let mut nand = Nand::new(&cfg);
    let (_, d0) = nand.program(0, 0, 16384);
    let (xe, d1) = nand.program(0, 0, 16384);
    assert_eq!((xe, d1), (d0, d0 + 1_300_000), "the transfer ends as the first program does");
}

#[test]
fn calendar_fills_gaps_and_merges() {
    let mut c = Calendar::default();
    assert_eq!(c.reserve(100, 50), 100); // [100,150)
    assert_eq!(c.reserve(0, 50), 0); // fits before: [0,50)
    assert_eq!(c.reserve(20, 40), 50); // gap [50,100) fits 40 -> [50,90)
    assert_eq!(c.reserve(60, 20), 150); // [90,100) too small -> after 150
    assert!(c.is_consistent());
    assert_eq!(c.busy_until(), 170);
    c.advance(160);
    assert_eq!(c.reserve(160, 10), 170);
}

#[test]
fn calendar_never_overlaps_random() {
    let mut r = crate::rng::Rng::new(3);
    let mut c = Calendar::default();
    let mut booked = Vec::new();
    for _ in 0..2000 {
        let e = r.below(100_000);
        let d = 1 + r.below(300);
        let s = c.reserve(e, d);
        assert!(s >= e);
        booked.push((s, s + d));
    }
    booked.sort();
    for w in booked.windows(2) {
        assert!(w[0].1 <= w[1].0, "{:?}", w);
    }
    assert!(c.is_consistent());
}

#[test]
fn calendar_with_advance_matches_first_fit() {
    // Dropping past intervals (and inserting into their room) must not
    // change any booking: each request gets the first gap that fits.
    let mut r = crate::rng::Rng::new(5);
    let mut c = Calendar::default();
    let mut booked: Vec<(u64, u64)> = Vec::new();
    let mut now = 0;
    for k in 0..20_000 {
        if k % 16 == 0 {
            now += r.below(2_000);
            c.advance(now);
        }
        let e = now + r.below(50_000);
        let d = 1 + r.below(300);
        let mut want = e;
        booked.sort();
        for &(s, end) in &booked {
            if want + d <= s {
                break;
            }
            want = want.max(end);
        }
        assert_eq!(c.reserve(e, d), want);
        booked.push((want, want + d));
        booked.retain(|&(_, end)| end > now);
    }
    assert!(c.is_consistent());
}

#[test]
fn independent_plane_reads_overlap_across_planes_and_wait_for_programs() {
    let mut cfg = four_dies(serde_json::json!({}));
    let x = |n: &Nand| n.xfer_ns(4096);
    // Off: two reads of one die, one a plane, take turns.
    let mut nand = Nand::new(&cfg);
    let a = nand.read_plane_t(0, 0, 0, 4096, 50_000);
    assert_eq!(a, 50_000 + x(&nand));
    assert_eq!(nand.read_plane_t(0, 1, 0, 4096, 50_000), a + 50_000 + x(&nand), "whole-die reads in turn");
    cfg.nand.independent_plane_reads = true;
    let mut nand = Nand::new(&cfg);
    let a = nand.read_plane_t(0, 0, 0, 4096, 50_000);
    // The other plane senses at the same time; only the transfer waits for the channel.
    assert_eq!(nand.read_plane_t(0, 1, 0, 4096, 50_000), a + x(&nand), "the other plane reads alongside");
    // The same plane waits for its own read.
    assert_eq!(nand.read_plane_t(0, 0, 0, 4096, 50_000), a + 50_000 + x(&nand));
    // A program waits for every plane's reads. With read priority (the
    // default) a plane read passes it after at most half a program, and
    // the program ends later by the read's time.
    let busy = nand.die_busy_until(0);
    let (_, done) = nand.program(0, 0, 16384);
    assert!(done >= busy + 1_300_000, "program at {done} before the reads ended at {busy}");
    let r = nand.read_plane_t(0, 1, 0, 4096, 50_000);
    assert_eq!(r, 650_000 + 50_000 + x(&nand));
    assert_eq!(nand.die_busy_until(0), done + 50_000 + x(&nand));
    // A whole-die read holds both planes.
    let mut nand = Nand::new(&cfg);
    let w = nand.read(0, 0, 16384);
    assert_eq!(nand.read_plane_t(0, 1, 0, 4096, 50_000), w + 50_000 + x(&nand));
    // Without read priority a plane read waits for the die's program.
    cfg.controller.read_priority = false;
    let mut nand = Nand::new(&cfg);
    let (_, done) = nand.program(0, 0, 16384);
    assert_eq!(nand.read_plane_t(0, 1, 0, 4096, 50_000), done + 50_000 + x(&nand));
}
