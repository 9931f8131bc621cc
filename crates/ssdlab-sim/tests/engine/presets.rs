//! The drive presets shipped in python/ssdlab/drives/: every file parses and
//! validates, its id is its file name, ids are unique, every number carries
//! its source or reason in a comment, and each drive fits in the default
//! memory limit. Plus the relationships the presets exist to reproduce
//! (docs/presets.md), on short runs of clean drives.

use serde_json::json;
use ssdlab_sim::{DriveConfig, SimOptions, Simulator, Workload};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The reviewed drives, by stable id.
const REVIEWED: &[&str] = &[
    "force-f120",
    "vertex2-25nm-120",
    "vertex2-hynix-120",
    "vertex3pro-200",
    "vertex3-120",
    "vertex3-240",
    "vertex3-480",
    "vertex4-128-fw13",
    "vertex4-128-fw14",
    "vertex4-128-fw15",
    "vertex4-256-fw13",
    "vertex4-256-fw14",
    "vertex4-256-fw15",
    "vertex4-64-fw15",
    "vertex4-512-fw15",
    "x25m-g2-160",
    "intel320-300",
    "intel510-250",
    "crucial-m4-256",
    "samsung830-256",
    "samsung840pro-256",
    "vector-256",
    "vector150-240",
    "neutron-240",
    "sandisk-extreme2-480",
    "dc-s3700-200",
];

fn drives_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/ssdlab/drives")
}

/// (file stem, text) of every preset, sorted by name.
fn presets() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(drives_dir())
        .expect("python/ssdlab/drives exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn load(id: &str) -> DriveConfig {
    let text = std::fs::read_to_string(drives_dir().join(format!("{id}.toml"))).unwrap();
    DriveConfig::from_toml_str(&text).unwrap()
}

/// A `key = value` line whose value is a number (not a string, bool or table).
fn is_numeric_assignment(line: &str) -> bool {
    let code = line.split('#').next().unwrap_or("");
    match code.split_once('=') {
        Some((k, v)) => {
            let k = k.trim();
            let v = v.trim();
            !k.is_empty() && !k.starts_with('[') && v.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+' || c == '.')
        }
        None => false,
    }
}

fn is_assignment(line: &str) -> bool {
    let t = line.trim_start();
    !t.starts_with('#') && !t.starts_with('[') && t.contains('=')
}

/// Numeric lines with no comment on the line or on the line right above
/// (`strict`), or, with `strict` false, none above the block of assignments
/// the line belongs to.
fn uncommented_numbers(text: &str, strict: bool) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !is_numeric_assignment(l) || l.contains('#') {
            continue;
        }
        let mut j = i;
        let mut ok = false;
        while j > 0 {
            j -= 1;
            let above = lines[j].trim_start();
            if above.starts_with('#') {
                ok = true;
                break;
            }
            if strict || !is_assignment(lines[j]) {
                break;
            }
        }
        if !ok {
            bad.push((i + 1, l.to_string()));
        }
    }
    bad
}

#[test]
fn every_preset_parses_validates_and_is_named_by_its_id() {
    let all = presets();
    for id in REVIEWED {
        assert!(all.iter().any(|(stem, _)| stem == id), "missing preset {id}.toml");
    }
    let mut ids = BTreeMap::new();
    for (stem, text) in &all {
        let cfg = DriveConfig::from_toml_str(text).unwrap_or_else(|e| panic!("{stem}.toml: {e}"));
        cfg.validate().unwrap();
        assert_eq!(&cfg.drive.id, stem, "{stem}.toml: drive.id must equal the file name");
        assert!(!cfg.drive.name.is_empty() && !cfg.drive.description.is_empty(), "{stem}: name and description");
        if let Some(prev) = ids.insert(cfg.drive.id.clone(), stem.clone()) {
            panic!("id {} used by {prev}.toml and {stem}.toml", cfg.drive.id);
        }
    }
}

#[test]
fn every_number_has_its_source_or_reason_beside_it() {
    for (stem, text) in presets() {
        // The generic drive predates the presets and documents blocks of
        // lines with one comment; the reviewed drives comment every line.
        let strict = stem != "generic-mlc-120";
        let bad = uncommented_numbers(&text, strict);
        assert!(bad.is_empty(), "{stem}.toml: numbers without a comment on or right above them: {bad:?}");
        assert!(text.trim_start().starts_with('#'), "{stem}.toml: start with a comment naming the drive and the sources");
    }
}

#[test]
fn every_preset_builds_within_the_default_memory_limit() {
    for (stem, text) in presets() {
        let cfg = DriveConfig::from_toml_str(&text).unwrap();
        let sim = Simulator::new(cfg, &SimOptions::default()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(sim.capacity_bytes() > 0);
    }
}

fn inc_write_mbps(id: &str, bytes: u64) -> f64 {
    let mut s = Simulator::new(load(id), &SimOptions::default()).unwrap();
    let w = Workload::from_json(
        &json!({"rw": "write", "bs": "128k", "iodepth": 32, "io_size": bytes, "data_pattern": "incompressible"}),
        s.capacity_bytes(),
    )
    .unwrap();
    let r = s.run(&w, &mut |_| true).unwrap();
    r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

fn rep_qd1_write_mbps(id: &str, bytes: u64) -> f64 {
    let mut s = Simulator::new(load(id), &SimOptions::default()).unwrap();
    let w = Workload::from_json(
        &json!({"rw": "write", "bs": "128k", "iodepth": 1, "io_size": bytes, "data_pattern": "repeated"}),
        s.capacity_bytes(),
    )
    .unwrap();
    let r = s.run(&w, &mut |_| true).unwrap();
    r.stats.write.bytes as f64 / (r.duration_ns as f64 / 1e9) / 1e6
}

fn clean_iops(id: &str, job: serde_json::Value) -> f64 {
    let mut s = Simulator::new(load(id), &SimOptions::default()).unwrap();
    let w = Workload::from_json(&job, s.capacity_bytes()).unwrap();
    let r = s.run(&w, &mut |_| true).unwrap();
    r.stats.write.ios as f64 / (r.duration_ns as f64 / 1e9)
}

#[test]
fn vertex4_fw13_writes_4kb_random_data_as_fw14_does_and_sequential_data_at_full_density() {
    // Page 002: the 128GB's random ratings (85K write IOPS) did not change
    // with fw1.4, while its sequential rating went from 200 to 420 MB/s.
    let random = json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "size": "8g", "runtime": "5s", "data_pattern": "repeated"});
    let (r13, r14) = (clean_iops("vertex4-128-fw13", random.clone()), clean_iops("vertex4-128-fw14", random));
    let (s13, s14) = (inc_write_mbps("vertex4-128-fw13", 2 << 30), inc_write_mbps("vertex4-128-fw14", 2 << 30));
    println!("vertex4-128 4KB random write QD32: fw1.3 {r13:.0}, fw1.4 {r14:.0} IOPS; 128KB sequential: {s13:.1}, {s14:.1} MB/s");
    assert!((r13 / r14 - 1.0).abs() < 0.05 && r13 > 80_000.0);
    assert!((s13 / 200.0 - 1.0).abs() < 0.15 && s14 > 2.0 * s13);
}

#[test]
fn sf1200_variants_match_on_reducible_data_and_keep_the_published_order_on_incompressible() {
    let span = 2u64 << 30;
    let ids = ["force-f120", "vertex2-25nm-120", "vertex2-hynix-120"];
    let inc: Vec<f64> = ids.iter().map(|id| inc_write_mbps(id, span)).collect();
    let rep: Vec<f64> = ids.iter().map(|id| rep_qd1_write_mbps(id, span)).collect();
    println!("incompressible {inc:?} MB/s; repeated QD1 {rep:?} MB/s");
    // Published: 136.6 > 118.5 > 95.8 MB/s (34nm, 25nm, Hynix).
    assert!(inc[0] > inc[1] && inc[1] > inc[2], "{inc:?}");
    // Published: 214.8 / 221.8 / 221.3 MB/s: the same controller-bound speed
    // (the published figures themselves spread by 3.3%).
    assert!(rep.iter().all(|&r| (r / rep[0] - 1.0).abs() < 0.05), "{rep:?}");
}

#[test]
fn vertex3_240_beats_the_120_on_incompressible_writes_but_not_by_the_die_ratio() {
    let span = 2u64 << 30;
    let (a, b) = (inc_write_mbps("vertex3-120", span), inc_write_mbps("vertex3-240", span));
    println!("Vertex 3 incompressible: 120GB {a:.0} MB/s, 240GB {b:.0} MB/s");
    // The 120GB (15 data dies) is die-bound; the 240GB (31) has dies to
    // spare and stops at the SF-2000's encoder (a model where both are
    // die-bound gives exactly the die ratio, 31/15 = 2.07).
    assert!(b > 1.2 * a, "twice the dies must still be clearly faster: {a} vs {b}");
    assert!(b < 1.8 * a, "the controller must bind the larger drive before its dies: {a} vs {b}");
}

#[test]
fn every_preset_is_a_profile_a_part_and_counts_with_no_override() {
    for (stem, text) in presets() {
        let c = ssdlab_sim::library::compose_toml(&text).unwrap_or_else(|e| panic!("{stem}.toml: {e}"));
        let cfg = DriveConfig::from_toml_str(&text).unwrap();
        assert!(cfg.drive.controller.is_some(), "{stem}.toml: name its controller profile (drive.controller)");
        assert!(cfg.drive.nand_part.is_some(), "{stem}.toml: name its NAND part (drive.nand_part)");
        // Beyond its name, capacity, part and profile, a preset gives only its counts.
        let doc: toml::Value = toml::from_str(&text).unwrap();
        for (section, fields) in doc.as_table().unwrap() {
            for (k, _) in fields.as_table().unwrap() {
                let key = format!("{section}.{k}");
                let count =
                    section == "drive" || ["nand.channels", "nand.packages_per_channel", "nand.dies_per_package"].contains(&key.as_str());
                assert!(
                    count || c.overrides.iter().any(|o| o.0 == key),
                    "{stem}.toml sets {key}: a controller or NAND value belongs in the profile or part, shared by every drive that uses it"
                );
            }
        }
        if let Some((key, lib, from)) = c.overrides.first() {
            panic!("{stem}.toml sets {key}, which {from} sets ({lib}): move the value to the profile or part, shared by every drive that uses it");
        }
    }
}

#[test]
fn the_library_is_consistent_and_every_file_is_listed() {
    use ssdlab_sim::library::{check_library, CONTROLLERS, NAND_PARTS};
    check_library().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("library");
    for (dir, listed) in [("nand", NAND_PARTS), ("controllers", CONTROLLERS)] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(listed.iter().any(|(id, _)| *id == stem), "library/{dir}/{stem}.toml is not listed in library.rs");
        }
    }
    // Every profile value carries its reason (a comment on or right above it).
    for (id, text) in CONTROLLERS {
        let bad = uncommented_numbers(text, false);
        assert!(bad.is_empty(), "profile {id}: numbers without a comment: {bad:?}");
    }
    for (id, text) in NAND_PARTS {
        assert!(text.contains("source = "), "part {id}: give the datasheet or the reason for its values (part.source)");
    }
}

#[test]
fn a_user_file_may_override_and_is_told_where_each_value_comes_from() {
    let text = std::fs::read_to_string(drives_dir().join("vertex3-120.toml")).unwrap()
        + "\n[controller]\n# what if: a faster read path\ncommand_cost_read_ns = 10000\n";
    let c = ssdlab_sim::library::compose_toml(&text).unwrap();
    assert_eq!(c.provenance["nand.tr_ns"], "part imft-25nm-l74a");
    assert!(c.provenance["controller.command_cost_read_ns"].starts_with("drive file (over profile sf-2281"), "{:?}", c.provenance);
    let cfg = DriveConfig::from_toml_str(&text).unwrap();
    assert_eq!(cfg.controller.command_cost_read_ns, Some(10_000));
    let e = DriveConfig::from_toml_str(&text.replace("controller = \"sf-2281\"", "controller = \"sf-9999\"")).unwrap_err();
    assert!(e.to_string().contains("drive.controller") && e.to_string().contains("sf-2281"), "{e}");
}
