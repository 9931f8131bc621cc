//! Write amplification against the analytic model of Desnoyers, "Analytic
//! modeling of SSD write performance" (SYSTOR 2012): with uniform random
//! writes and FIFO (LRW) cleaning, WA = a / (a + W0(-a e^-a)), a = physical /
//! user pages.

use crate::common::*;
use serde_json::json;

/// Principal branch of Lambert W on [-1/e, 0), by Halley iteration.
fn lambert_w0(x: f64) -> f64 {
    let mut w = if x < -0.3 { -1.0 + (2.0 * (1.0 + std::f64::consts::E * x)).sqrt() } else { x };
    for _ in 0..100 {
        let ew = w.exp();
        let f = w * ew - x;
        let wn = w - f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
        if (wn - w).abs() < 1e-15 {
            return wn;
        }
        w = wn;
    }
    w
}

fn desnoyers_wa(a: f64) -> f64 {
    a / (a + lambert_w0(-a * (-a).exp()))
}

/// Steady-state WA of uniform 4KB random writes after a sequential fill.
fn measured_wa(a: f64, policy: &str) -> f64 {
    let mut s = sim(drive(4, 2048, 64, a, policy), 42, false);
    fill(&mut s);
    let cap = s.capacity_bytes();
    // Converge: write the user capacity 4 times, then measure over 4 more.
    run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": cap * 4}));
    let r = run(&mut s, json!({"rw": "randwrite", "bs": "4k", "iodepth": 32, "io_size": cap * 4}));
    r.waf()
}

#[test]
fn analytic_model_values() {
    for (a, wa) in [(1.10, 5.677), (1.20, 3.188), (1.50, 1.716)] {
        assert!((desnoyers_wa(a) - wa).abs() < 0.002, "a={a}: {}", desnoyers_wa(a));
    }
}

#[test]
fn fifo_write_amplification_matches_desnoyers_within_3_percent() {
    for a in [1.10, 1.20, 1.50] {
        let want = desnoyers_wa(a);
        let got = measured_wa(a, "fifo");
        let err = (got / want - 1.0).abs();
        println!("a={a}: FIFO WA measured {got:.3}, Desnoyers {want:.3}, error {:.2}%", err * 100.0);
        assert!(err < 0.03, "a={a}: measured WA {got:.3} vs analytic {want:.3}");
    }
}

#[test]
fn greedy_beats_fifo_at_every_spare_factor() {
    for a in [1.10, 1.20, 1.50] {
        let fifo = measured_wa(a, "fifo");
        let greedy = measured_wa(a, "greedy");
        let cb = measured_wa(a, "cost-benefit");
        println!("a={a}: FIFO {fifo:.3}, greedy {greedy:.3}, cost-benefit {cb:.3}");
        assert!(greedy < fifo, "a={a}: greedy {greedy:.3} should be below FIFO {fifo:.3}");
        assert!(cb < fifo, "a={a}: cost-benefit {cb:.3} should be below FIFO {fifo:.3}");
    }
}
