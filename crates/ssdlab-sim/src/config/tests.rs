//! Parsing and validation of drive descriptions.

use super::*;

pub const SMALL: &str = r#"
[drive]
id = "t"
name = "test"
user_capacity_bytes = 100_000_256
[host]
link_bytes_per_s = 550_000_000
command_overhead_ns = 2000
ncq_depth = 32
[controller]
command_cost_ns = 5000
write_buffer_bytes = 1048576
[nand]
channels = 2
packages_per_channel = 1
dies_per_package = 2
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 64
page_size_bytes = 8192
tr_ns = 50000
tprog_ns = 1300000
tbers_ns = 3000000
channel_bytes_per_s = 200000000
[ftl]
gc_policy = "greedy"
gc_threshold_blocks = 2
"#;

#[test]
fn parses_and_derives_geometry() {
    let c = DriveConfig::from_toml_str(SMALL).unwrap();
    let g = c.geometry();
    assert_eq!(g.dies, 4);
    assert_eq!(g.unit_slots, 4);
    assert_eq!(g.slots_per_block, 256);
    assert_eq!(g.raw_slots, 4 * 64 * 256);
    assert_eq!(c.hash_hex(), DriveConfig::from_json_str(&c.to_json_string()).unwrap().hash_hex());
}

#[test]
fn missing_field_is_named() {
    let t = SMALL.replace("tr_ns = 50000\n", "");
    let e = DriveConfig::from_toml_str(&t).unwrap_err().to_string();
    assert!(e.contains("nand") && e.contains("tr_ns") && e.contains("missing"), "{e}");
}

#[test]
fn wrong_unit_gets_a_hint() {
    let t = SMALL.replace("tr_ns = 50000", "tr_us = 50");
    let e = DriveConfig::from_toml_str(&t).unwrap_err().to_string();
    assert!(e.contains("wrong unit") && e.contains("tr_ns"), "{e}");
}

#[test]
fn read_and_write_costs_default_to_the_command_cost_and_are_validated() {
    let c = DriveConfig::from_toml_str(SMALL).unwrap();
    assert_eq!((c.controller.read_cost_ns(), c.controller.write_cost_ns()), (5000, 5000));
    assert!(!c.to_json_string().contains("command_cost_read_ns"), "absent options stay absent (stable hash)");
    let t = SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_cost_read_ns = 20000\ncommand_cost_write_ns = 90000");
    let c = DriveConfig::from_toml_str(&t).unwrap();
    assert_eq!((c.controller.read_cost_ns(), c.controller.write_cost_ns()), (20000, 90000));
    let e =
        DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_cost_write_ns = 20000000"))
            .unwrap_err()
            .to_string();
    assert!(e.contains("controller.command_cost_write_ns"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nmax_write_bytes_per_s = 1000"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.max_write_bytes_per_s"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nmax_write_mb_per_s = 450"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrong unit") && e.contains("max_write_bytes_per_s"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nencode_bytes_per_s = 5"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.encode_bytes_per_s"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nread_decode_ns = 2000000"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.read_decode_ns"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\nread_decode_bytes_per_s = 10"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.read_decode_bytes_per_s"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ndie_stripe_bytes = 100000"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.die_stripe_bytes") && e.contains("128..65536"), "{e}");
}

#[test]
fn command_slots_and_latency_default_to_one_and_none_and_are_validated() {
    let c = DriveConfig::from_toml_str(SMALL).unwrap();
    assert_eq!((c.controller.command_slots, c.controller.command_latency_ns), (1, 0));
    let j = c.to_json_string();
    assert!(!j.contains("command_slots") && !j.contains("command_latency_ns"), "defaults stay absent (stable hash)");
    let t = SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_slots = 3\ncommand_latency_ns = 4000");
    let c = DriveConfig::from_toml_str(&t).unwrap();
    assert_eq!((c.controller.command_slots, c.controller.command_latency_ns), (3, 4000));
    for bad in ["command_slots = 0", "command_slots = 17"] {
        let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", &format!("command_cost_ns = 5000\n{bad}")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("controller.command_slots") && e.contains("1..=16"), "{e}");
    }
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_latency_ns = 2000000"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("controller.command_latency_ns") && e.contains("1 ms"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("command_cost_ns = 5000", "command_cost_ns = 5000\ncommand_latency_us = 4"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrong unit") && e.contains("command_latency_ns"), "{e}");
}

#[test]
fn data_reduction_beyond_1_tib_of_raw_nand_is_refused_with_the_field_named() {
    let red = "\n[data_reduction]\nenabled = true\nmetadata_bytes_per_unit = 64\ncompressible_stored_fraction = 0.3\nrepeated_stored_fraction = 0.0\nzeros_stored_fraction = 0.0\n";
    let big = SMALL.replace("blocks_per_plane = 64", "blocks_per_plane = 300000");
    assert!(DriveConfig::from_toml_str(&big).is_ok(), "a plain drive of 1.2 TiB raw is fine");
    let e = DriveConfig::from_toml_str(&format!("{big}{red}")).unwrap_err().to_string();
    assert!(e.contains("nand.blocks_per_plane") && e.contains("1 TiB"), "{e}");
    assert!(DriveConfig::from_toml_str(&format!("{SMALL}{red}")).is_ok());
}

#[test]
fn the_recycling_path_rate_is_range_checked_and_given_one_way() {
    let with = |v: &str| SMALL.replace("gc_threshold_blocks = 2", &format!("gc_threshold_blocks = 2\nrecycle_bytes_per_s = {v}"));
    let c = DriveConfig::from_toml_str(&with("80_000_000")).unwrap();
    assert_eq!(c.ftl.recycle_bytes_per_s, 80_000_000);
    assert_eq!(c.recycle_path_bytes_per_s(), 80_000_000);
    assert_eq!(DriveConfig::from_toml_str(&with("0")).unwrap().ftl.recycle_bytes_per_s, 0);
    assert!(!DriveConfig::from_toml_str(SMALL).unwrap().to_json_string().contains("recycle"), "off stays absent (stable hash)");
    for bad in ["999_999", "100_000_000_001"] {
        let e = DriveConfig::from_toml_str(&with(bad)).unwrap_err().to_string();
        assert!(e.contains("ftl.recycle_bytes_per_s") && e.contains("1e6..=1e11"), "{e}");
    }
    let per_die =
        |v: &str| SMALL.replace("gc_threshold_blocks = 2", &format!("gc_threshold_blocks = 2\nrecycle_bytes_per_s_per_die = {v}"));
    let c = DriveConfig::from_toml_str(&per_die("5_000_000")).unwrap();
    let g = c.geometry();
    assert_eq!(c.recycle_path_bytes_per_s(), 5_000_000 * (g.dies + g.parity_dies) as u64, "every die driven at once");
    let limited =
        DriveConfig::from_toml_str(&per_die("5_000_000").replace("command_cost_ns = 5000", "command_cost_ns = 5000\nmax_active_dies = 2"))
            .unwrap();
    assert_eq!(limited.recycle_path_bytes_per_s(), 10_000_000, "at most the active-die limit");
    for bad in ["99_999", "100_000_000_001"] {
        let e = DriveConfig::from_toml_str(&per_die(bad)).unwrap_err().to_string();
        assert!(e.contains("ftl.recycle_bytes_per_s_per_die") && e.contains("1e5..=1e11"), "{e}");
    }
    let both = per_die("5_000_000").replace("gc_threshold_blocks = 2", "gc_threshold_blocks = 2\nrecycle_bytes_per_s = 80_000_000");
    let e = DriveConfig::from_toml_str(&both).unwrap_err().to_string();
    assert!(e.contains("ftl.recycle_bytes_per_s_per_die") && e.contains("one way"), "{e}");
}

#[test]
fn zero_dies_and_oversized_capacity_are_refused() {
    let e = DriveConfig::from_toml_str(&SMALL.replace("channels = 2", "channels = 0")).unwrap_err().to_string();
    assert!(e.contains("nand.channels") && e.contains("0"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("100_000_256", "300_000_256")).unwrap_err().to_string();
    assert!(e.contains("drive.user_capacity_bytes") && e.contains("raw NAND"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("100_000_256", "260_000_256")).unwrap_err().to_string();
    assert!(e.contains("spare area"), "{e}");
    let e = DriveConfig::from_toml_str(&SMALL.replace("\"greedy\"", "\"lru\"")).unwrap_err().to_string();
    assert!(e.contains("ftl.gc_policy") && e.contains("greedy"), "{e}");
}

#[test]
fn a_map_entry_limit_sets_the_map_unit_and_one_too_small_is_refused_by_name() {
    let with = |v: &str| SMALL.replace("gc_threshold_blocks = 2", &format!("gc_threshold_blocks = 2\nmax_map_entries = {v}"));
    let units = DriveConfig::from_toml_str(SMALL).unwrap().geometry().user_units;
    assert_eq!(DriveConfig::from_toml_str(SMALL).unwrap().geometry().map_unit_units, 1);
    assert!(!DriveConfig::from_toml_str(SMALL).unwrap().to_json_string().contains("max_map_entries"), "absent stays absent (stable hash)");
    for (entries, unit) in [(units, 1), (units - 1, 2), (units.div_ceil(2), 2), (units.div_ceil(2) - 1, 4), (units.div_ceil(16), 16)] {
        let c = DriveConfig::from_toml_str(&with(&entries.to_string())).unwrap();
        assert_eq!(c.geometry().map_unit_units, unit, "{entries} entries for {units} units");
        assert!(c.geometry_fields().contains(&("map_unit_bytes", (unit as u64 * 4096).into())));
    }
    let e = DriveConfig::from_toml_str(&with(&(units.div_ceil(16) - 1).to_string())).unwrap_err().to_string();
    assert!(e.contains("ftl.max_map_entries") && e.contains("64 KiB") && e.contains(&units.div_ceil(16).to_string()), "{e}");
}
