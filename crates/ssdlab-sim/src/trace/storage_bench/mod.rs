//! Storage Bench traces (docs/storage-bench.md): the traces' specs (`specs`), their
//! published figures (`published`) and the streaming generator (`generator`,
//! with its size classes in `sizes` and its timing in `timing`).
//!
//!
//! The reviewers' desktop traces were never released; these generators produce
//! synthetic traces that match every published figure: exact read and write
//! counts, bytes where published (to within one 512-byte sector), the size mix
//! and the sequential share to a fraction of a point, the iodepth mean
//! (and share at QD1 where published) to well under 2%.
//!
//! # How a trace is built (streaming, flat memory, integer arithmetic only)
//! Every record is drawn from a few small "decks" sampled *without
//! replacement*, which is what makes the totals exact:
//! - **direction**: remaining reads vs remaining writes, with some stickiness
//!   (a lazy Markov chain whose stationary mix is the deck's);
//! - **size**: per direction, an exact count per size class; the two variable
//!   classes (`<4KB` and `other`) are "flex" buckets with an exact byte total
//!   whose draws are steered so the total comes out to the byte;
//! - **sequential runs**: per direction, the exact number of sequential I/Os is
//!   shared among runs (a run = one randomly placed start plus followers that
//!   each begin where the previous I/O of that direction ended). Run lengths
//!   are heavy-tailed and grow with transfer size (large transfers stream);
//!   the size class sticks within a run;
//! - **placement of run starts** (desktop locality): hot OS/application files
//!   in the first part of the drive (skewed popularity), read-back of recently
//!   written files, pseudo-random near recent I/O (clustered), new files
//!   appended in the data area, and some fully random I/O; offsets are 4KB
//!   aligned except that odd and sub-4KB transfers may start on any 512B
//!   boundary;
//! - **timing and iodepth**: episodes separated by idle gaps: QD1 chains
//!   (each I/O issued after the previous one completed, plus think time) and
//!   bursts (a quick ramp 1, 2, ..., P, then I/Os issued as others complete at
//!   depth P, then a drain). Each record's `iodepth` is the number of I/Os
//!   outstanding at its issue including itself, and `recorded_latency_ns` makes
//!   the intervals `[time, time + latency)` reproduce exactly that count. Two
//!   feedback controllers choose chain vs burst and the burst depth so the QD1
//!   share and the average depth land on the targets; a third spreads idle time
//!   so the trace lasts about its (published or chosen) duration.
//!
//! Randomness is the engine's xoshiro256** seeded by splitmix64; no floating point
//! is used anywhere on the random path, so a seed gives bit-identical traces on
//! every machine (a test pins a digest). State is a few kilobytes whatever the
//! trace length; generation runs at roughly 7-10 million records/s on one core.

mod generator;
mod published;
mod sizes;
mod specs;
mod timing;

pub use generator::{generate, try_generate, Generator, MIN_CAPACITY_BYTES};
pub use published::{
    published, Comparison, Figure, PublishedStats, Qualifier, BYTES_TOLERANCE_RELATIVE, DURATION_TOLERANCE_RELATIVE,
    IODEPTH_TOLERANCE_RELATIVE, PERCENT_TOLERANCE_POINTS,
};

use std::fmt;
use std::str::FromStr;

use self::specs::spec;

const KB: u64 = 1024;
/// Marker for the `<4KB` class in the class tables.
const U4: u64 = 0;
const BLOCK: u64 = 4096;
const SECTOR: u64 = 512;
const NS_PER_S: u64 = 1_000_000_000;

/// The Storage Bench traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StorageBench {
    Heavy2011,
    Light2011,
    Typical2010,
    HeavyMultitasking2010,
    Gaming2010,
    Destroyer2013,
}

impl StorageBench {
    pub const ALL: [StorageBench; 6] = [
        StorageBench::Heavy2011,
        StorageBench::Light2011,
        StorageBench::Typical2010,
        StorageBench::HeavyMultitasking2010,
        StorageBench::Gaming2010,
        StorageBench::Destroyer2013,
    ];

    /// Command-line id.
    pub fn id(self) -> &'static str {
        match self {
            StorageBench::Heavy2011 => "heavy-2011",
            StorageBench::Light2011 => "light-2011",
            StorageBench::Typical2010 => "typical-2010",
            StorageBench::HeavyMultitasking2010 => "multitasking-2010",
            StorageBench::Gaming2010 => "gaming-2010",
            StorageBench::Destroyer2013 => "destroyer-2013",
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            StorageBench::Heavy2011 => "Storage Bench 2011 Heavy",
            StorageBench::Light2011 => "Storage Bench 2011 Light",
            StorageBench::Typical2010 => "Storage Bench 2010 Typical",
            StorageBench::HeavyMultitasking2010 => "Storage Bench 2010 Heavy multitasking",
            StorageBench::Gaming2010 => "Storage Bench 2010 Gaming",
            StorageBench::Destroyer2013 => "Storage Bench 2013 The Destroyer",
        }
    }

    /// Parse an id (`heavy-2011`, `light-2011`, `typical-2010`,
    /// `multitasking-2010`, `gaming-2010`, `destroyer-2013`; case-insensitive).
    pub fn parse(name: &str) -> Result<StorageBench, String> {
        let t = name.trim().to_ascii_lowercase();
        StorageBench::ALL.iter().copied().find(|w| w.id() == t).ok_or_else(|| {
            let ids: Vec<&str> = StorageBench::ALL.iter().map(|w| w.id()).collect();
            format!("'{name}' is not a Storage Bench trace; allowed: {}", ids.join(", "))
        })
    }

    /// Number of records the generator yields.
    pub fn records(self) -> u64 {
        let s = spec(self);
        s.reads + s.writes
    }

    /// Duration the generated trace is spread over (s): published for the 2010
    /// Typical and Heavy multitasking traces, chosen for the others.
    pub fn duration_s(self) -> u64 {
        spec(self).duration_s
    }
}

impl fmt::Display for StorageBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for StorageBench {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StorageBench::parse(s)
    }
}

/// Weighted mean of a (value, weight) table, rounded down.
const fn table_mean(t: &[(u64, u32)]) -> u64 {
    let (mut sum, mut w, mut i) = (0u64, 0u64, 0);
    while i < t.len() {
        sum += t[i].0 * t[i].1 as u64;
        w += t[i].1 as u64;
        i += 1;
    }
    sum / w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ids() {
        for w in StorageBench::ALL {
            assert_eq!(StorageBench::parse(w.id()).unwrap(), w);
            assert_eq!(w.to_string().parse::<StorageBench>().unwrap(), w);
        }
        let e = StorageBench::parse("heavy").unwrap_err();
        assert!(e.contains("heavy-2011") && e.contains("destroyer-2013"), "{e}");
    }
}
