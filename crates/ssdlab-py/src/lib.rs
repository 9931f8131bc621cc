//! Thin PyO3 binding of ssdlab-sim.
