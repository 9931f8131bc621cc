use super::*;
use serde_json::json;

const CAP: u64 = 120_000_000_000;

#[test]
fn fio_vocabulary() {
    let w = Workload::from_json(&json!({"rw":"randwrite","bs":"4k","iodepth":32,"runtime":"60s","size":"8g"}), CAP).unwrap();
    assert_eq!(w.sizes, vec![(4096, 1)]);
    assert_eq!(w.size_bytes, 8 << 30);
    assert_eq!(w.runtime_ns, Some(60_000_000_000));
    assert_eq!(w.io_limit_bytes, None);
    assert_eq!(w.data_pattern, DataPattern::Incompressible);
    let w = Workload::from_json(&json!({"rw":"write","bs":"128k"}), CAP).unwrap();
    assert_eq!(w.io_limit_bytes, Some(CAP));
    let w = Workload::from_json(&json!({"rw":"randrw","bssplit":"4k/50:64k/50","rwmixread":70,"size":"75%","scramble_buffers":0}), CAP)
        .unwrap();
    assert_eq!(w.sizes.len(), 2);
    assert_eq!(w.data_pattern, DataPattern::Repeated);
    assert_eq!(w.size_bytes, 90_000_000_000);
}

#[test]
fn bad_input_names_the_field() {
    let e = Workload::from_json(&json!({"rw":"randwrit"}), CAP).unwrap_err().to_string();
    assert!(e.contains("'rw'") && e.contains("randwrite"), "{e}");
    let e = Workload::from_json(&json!({"rw":"write","bs":"4q"}), CAP).unwrap_err().to_string();
    assert!(e.contains("'bs'"), "{e}");
    let e = Workload::from_json(&json!({"rw":"write","iodepth":0}), CAP).unwrap_err().to_string();
    assert!(e.contains("iodepth"), "{e}");
    let e = Workload::from_json(&json!({"rw":"write","runtime":"5 parsecs"}), CAP).unwrap_err().to_string();
    assert!(e.contains("runtime"), "{e}");
    let e = Workload::from_json(&json!({"rw":"write","depth":3}), CAP).unwrap_err().to_string();
    assert!(e.contains("'depth'") && e.contains("iodepth"), "{e}");
    let e = Workload::from_json(&json!({"rw":"write","size":"200g"}), CAP).unwrap_err().to_string();
    assert!(e.contains("'size'"), "{e}");
}

#[test]
fn the_data_pattern_has_one_name_and_old_names_point_to_it() {
    let w = Workload::from_json(&json!({"rw":"write","data_pattern":"ratio:0.5"}), CAP).unwrap();
    assert_eq!(w.data_pattern, DataPattern::Ratio { permille: 500 });
    assert_eq!(w.to_json()["data_pattern"], "ratio:0.5");
    for old in ["data", "pattern", "write_pattern"] {
        let e = Workload::from_json(&json!({"rw":"write", old: "zeros"}), CAP).unwrap_err().to_string();
        assert!(e.contains(&format!("'{old}'")) && e.contains("'data_pattern'"), "{e}");
    }
    let e = Workload::from_json(&json!({"rw":"write","data_pattern":"lumpy"}), CAP).unwrap_err().to_string();
    assert!(e.contains("'data_pattern'"), "{e}");
}

#[test]
fn a_sequential_pass_covers_the_region_exactly() {
    let w = Workload::from_json(&json!({"rw":"write","bs":"128k","offset":"4k","size":"300k"}), CAP).unwrap();
    let mut g = IoGen::new(&w, 1);
    let ios: Vec<(u64, u64)> = (0..4)
        .map(|_| {
            let (_, o, l) = g.next_io();
            (o, l)
        })
        .collect();
    assert_eq!(ios, vec![(4096, 131072), (4096 + 131072, 131072), (4096 + 262144, 45056), (4096, 131072)]);
}

#[test]
fn random_offsets_stay_aligned_in_region() {
    let w = Workload::from_json(&json!({"rw":"randread","bs":"16k","blockalign":"4k","offset":"1m","size":"1m"}), CAP).unwrap();
    let mut g = IoGen::new(&w, 1);
    for _ in 0..10_000 {
        let (_, o, l) = g.next_io();
        assert!(o >= 1 << 20 && o + l <= 2 << 20 && o % 4096 == 0);
    }
}

fn ios(job: Value, n: usize) -> Vec<(Op, u64, u64)> {
    let w = Workload::from_json(&job, CAP).unwrap();
    let mut g = IoGen::new(&w, 7);
    (0..n).map(|_| g.next_io()).collect()
}

#[test]
fn each_loop_of_a_sequential_job_restarts_at_the_offset() {
    let job = json!({"rw": "write", "bs": "1m", "size": "8m", "offset": "4m", "loop_bytes": "3m"});
    let got: Vec<u64> = ios(job, 7).iter().map(|x| x.1 >> 20).collect();
    assert_eq!(got, vec![4, 5, 6, 4, 5, 6, 4]);
}

#[test]
fn a_mixed_job_draws_its_write_sizes_from_their_own_split() {
    let v = ios(json!({"rw": "randrw", "bssplit": "64k/40:1m/60", "write_bssplit": "1m/100", "size": "64m"}), 4000);
    // writes are all 1 MiB, aligned to it (fio's blockalign per direction)
    assert!(v.iter().filter(|x| x.0 == Op::Write).all(|x| x.2 == 1 << 20 && x.1 % (1 << 20) == 0));
    let reads: Vec<_> = v.iter().filter(|x| x.0 == Op::Read).collect();
    let small = reads.iter().filter(|x| x.2 == 65536).count() as f64 / reads.len() as f64;
    assert!((small - 0.4).abs() < 0.04, "{small}");
    assert!(Workload::from_json(&json!({"rw": "randrw", "write_bssplit": "1m/50"}), CAP).is_err());
}

#[test]
fn a_negative_rw_modifier_reads_backwards_as_fio_does() {
    // fio's backwards-read example: the first block, then from the end down
    let got: Vec<u64> = ios(json!({"rw":"read:-8k","bs":"4k","size":"128m"}), 4).iter().map(|x| x.1).collect();
    let end = 128u64 << 20;
    assert_eq!(got, vec![0, end - 8192, end - 12288, end - 16384]);
}

#[test]
fn a_positive_rw_modifier_leaves_holes_and_a_random_one_runs_sequentially() {
    let got: Vec<u64> = ios(json!({"rw":"write:112k","bs":"16k","size":"1m"}), 3).iter().map(|x| x.1).collect();
    assert_eq!(got, vec![0, 128 << 10, 256 << 10]);
    let r = ios(json!({"rw":"randread:4","bs":"4k","size":"1g"}), 8);
    assert_eq!(r[1].1, r[0].1 + 4096);
    assert_eq!(r[3].1, r[0].1 + 3 * 4096);
    assert_eq!(r[5].1, r[4].1 + 4096);
    let e = Workload::from_json(&json!({"rw":"randread:x"}), CAP).unwrap_err().to_string();
    assert!(e.contains("'rw'") && e.contains("count"), "{e}");
}

#[test]
fn trimwrite_trims_each_block_then_writes_it() {
    let got = ios(json!({"rw":"trimwrite","bs":"64k","size":"1m"}), 4);
    assert_eq!(got, vec![(Op::Trim, 0, 65536), (Op::Write, 0, 65536), (Op::Trim, 65536, 65536), (Op::Write, 65536, 65536)]);
}

#[test]
fn bsrange_draws_multiples_of_the_minimum_up_to_the_maximum() {
    let got = ios(json!({"rw":"randread","bsrange":"4k-16k","size":"1g"}), 4000);
    let mut seen = std::collections::BTreeMap::new();
    for (_, _, b) in got {
        assert!(b % 4096 == 0 && (4096..=16384).contains(&b), "{b}");
        *seen.entry(b).or_insert(0u32) += 1;
    }
    // fio's draw gives each of the four sizes a quarter
    assert_eq!(seen.len(), 4);
    assert!(seen.values().all(|n| (850..1150).contains(n)), "{seen:?}");
}

#[test]
fn skewed_distributions_stay_in_the_region_and_heat_a_few_blocks() {
    for d in ["zipf:1.2", "pareto:0.8", "normal:10", "zipf:0.9:0.25"] {
        let got = ios(json!({"rw":"randrw","bs":"4k","offset":"1m","size":"64m","random_distribution":d}), 20000);
        assert!(got.iter().all(|x| x.1 >= 1 << 20 && x.1 + 4096 <= 65 << 20 && x.1 % 4096 == 0), "{d}");
        let mut hits = std::collections::HashMap::new();
        for x in &got {
            *hits.entry(x.1).or_insert(0u32) += 1;
        }
        // uniform: 20000 draws over 16384 blocks hit about 11,000 of them
        assert!(hits.len() < 9_000, "{d}: {} blocks hit", hits.len());
    }
    let a = ios(json!({"rw":"randread","bs":"4k","size":"64m","random_distribution":"zipf:1.2"}), 1000);
    let b = ios(json!({"rw":"randread","bs":"4k","size":"64m","random_distribution":"zipf:1.2"}), 1000);
    assert_eq!(a, b, "a seed gives the same offsets");
}

#[test]
fn zoned_distributions_put_their_share_of_accesses_in_each_zone() {
    let got = ios(json!({"rw":"randread","bs":"4k","size":"1g","random_distribution":"zoned:60/10:30/20:10/70"}), 10000);
    let gib = 1u64 << 30;
    let first = got.iter().filter(|x| x.1 < gib / 10 / 4096 * 4096).count();
    let second = got.iter().filter(|x| x.1 >= gib / 10 / 4096 * 4096 && x.1 < (gib / 10 + gib / 5) / 4096 * 4096).count();
    assert!((5800..6200).contains(&first) && (2800..3200).contains(&second), "{first} {second}");
    let abs = ios(json!({"rw":"randread","bs":"4k","size":"1g","random_distribution":"zoned_abs:50/1m:50/10m"}), 2000);
    assert!(abs.iter().all(|x| x.1 + 4096 <= 11 << 20));
    assert!(abs.iter().filter(|x| x.1 < 1 << 20).count() > 900);
    let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"zipf:1"}), CAP).unwrap_err().to_string();
    assert!(e.contains("random_distribution") && e.contains("zipf"), "{e}");
    let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"lognormal:3"}), CAP).unwrap_err().to_string();
    assert!(e.contains("zipf, pareto, normal"), "{e}");
    let e = Workload::from_json(&json!({"rw":"randread","random_distribution":"zoned:50/50:40/50"}), CAP).unwrap_err().to_string();
    assert!(e.contains("not 100"), "{e}");
}
