//! Storage Bench workload generators (STORAGE_BENCH.md).
//!
//! The reviewers' desktop traces were never released; these generators produce
//! synthetic traces that match every published figure: exact read and write
//! counts, bytes where published (to within one 512-byte sector), the size mix
//! and the sequential share to a fraction of a point, the average queue depth
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
//! - **timing and queue depth**: episodes separated by idle gaps: QD1 chains
//!   (each I/O issued after the previous one completed, plus think time) and
//!   bursts (a quick ramp 1, 2, ..., P, then I/Os issued as others complete at
//!   depth P, then a drain). Each record's `queue_depth` is the number of I/Os
//!   outstanding at its issue including itself, and `recorded_latency_ns` makes
//!   the intervals `[time, time + latency)` reproduce exactly that count. Two
//!   feedback controllers choose chain vs burst and the burst depth so the QD1
//!   share and the average depth land on the targets; a third spreads idle time
//!   so the trace lasts about its (published or chosen) duration.
//!
//! Randomness is a private xoshiro256** seeded by splitmix64; no floating point
//! is used anywhere on the random path, so a seed gives bit-identical traces on
//! every machine (a test pins a digest). State is a few kilobytes whatever the
//! trace length; generation runs at roughly 7-10 million records/s on one core.
//!
//! # Sizes
//! Named size classes (exact sizes, counts of all operations in basis points,
//! and the share of each that are writes) are in each workload's table below;
//! published ones are matched exactly, unlisted remainders are chosen (see
//! each workload's doc). The `<4KB` class draws from 512B..3.5KB (mostly 512B
//! and 1KB: NTFS metadata records, small registry and log writes). The `other`
//! class draws odd sizes that are not any named bucket: 4.5KB, 5KB, 6KB, 7KB,
//! 10KB, 14KB, 20KB, 28KB, 36KB, 40KB, 48KB, 56KB, 60KB, 96KB, 192KB, 256KB,
//! 512KB and 1MB, weighted towards the small odd sizes and balanced so the
//! bucket's byte total is exact: where the published bytes leave the `other`
//! class little room (Heavy 2011), it is nearly all 4.5-7KB odd sizes with a
//! few large transfers; where they demand large transfers (The Destroyer's
//! writes), 256KB-1MB dominate.

use std::fmt;
use std::str::FromStr;

use super::stats::{SizeBucket, TraceStats};
use super::{TraceOp, TraceRecord};
use crate::pattern::DataPattern;

const KB: u64 = 1024;
/// Marker for the `<4KB` class in the class tables.
const U4: u64 = 0;
const BLOCK: u64 = 4096;
const SECTOR: u64 = 512;
const NS_PER_S: u64 = 1_000_000_000;

use crate::rng::{mix64, Rng};

// ------------------------------------------------------------------------
// Workloads
// ------------------------------------------------------------------------

/// The Storage Bench traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    Heavy2011,
    Light2011,
    Typical2010,
    HeavyMultitasking2010,
    Gaming2010,
    Destroyer2013,
}

impl Workload {
    pub const ALL: [Workload; 6] = [
        Workload::Heavy2011,
        Workload::Light2011,
        Workload::Typical2010,
        Workload::HeavyMultitasking2010,
        Workload::Gaming2010,
        Workload::Destroyer2013,
    ];

    /// Command-line id.
    pub fn id(self) -> &'static str {
        match self {
            Workload::Heavy2011 => "heavy-2011",
            Workload::Light2011 => "light-2011",
            Workload::Typical2010 => "typical-2010",
            Workload::HeavyMultitasking2010 => "multitasking-2010",
            Workload::Gaming2010 => "gaming-2010",
            Workload::Destroyer2013 => "destroyer-2013",
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Heavy2011 => "Storage Bench 2011 Heavy",
            Workload::Light2011 => "Storage Bench 2011 Light",
            Workload::Typical2010 => "Storage Bench 2010 Typical",
            Workload::HeavyMultitasking2010 => "Storage Bench 2010 Heavy multitasking",
            Workload::Gaming2010 => "Storage Bench 2010 Gaming",
            Workload::Destroyer2013 => "Storage Bench 2013 The Destroyer",
        }
    }

    /// Parse an id (`heavy-2011`, `light-2011`, `typical-2010`,
    /// `multitasking-2010`, `gaming-2010`, `destroyer-2013`; case-insensitive).
    pub fn parse(name: &str) -> Result<Workload, String> {
        let t = name.trim().to_ascii_lowercase();
        Workload::ALL.iter().copied().find(|w| w.id() == t).ok_or_else(|| {
            let ids: Vec<&str> = Workload::ALL.iter().map(|w| w.id()).collect();
            format!("'{name}' is not a Storage Bench workload; allowed: {}", ids.join(", "))
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

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Workload::parse(s)
    }
}

// ------------------------------------------------------------------------
// Workload parameters
// ------------------------------------------------------------------------

/// Patterns used for writes.
const INC: DataPattern = DataPattern::Incompressible;
const R50: DataPattern = DataPattern::Ratio { permille: 500 };
const R30: DataPattern = DataPattern::Ratio { permille: 300 };
const ZER: DataPattern = DataPattern::Zeros;

#[derive(Debug)]
struct Spec {
    reads: u64,
    writes: u64,
    read_bytes: Option<u64>,
    write_bytes: Option<u64>,
    /// (size in bytes or `U4`, share of all operations in basis points, share
    /// of that class that are writes in permille). The `other` class takes the
    /// remainder of each direction.
    classes: &'static [(u64, u32, u32)],
    /// Average size of `<4KB` reads and writes (bytes, multiple of 512).
    under4k_avg: [u64; 2],
    /// Average size of `other` reads and writes when bytes are not published.
    other_avg: [u64; 2],
    /// Sequential share of all operations (basis points) and of writes.
    seq_bp: u64,
    write_seq_bp: u64,
    /// Average queue depth x 10^4 and share at QD1 (basis points).
    qd_avg_e4: u64,
    qd1_bp: u64,
    duration_s: u64,
    /// Chance (permille) that an I/O keeps the previous I/O's direction.
    stick_permille: u64,
    /// Run-start placement weights: reads (hot, read-back, near, uniform);
    /// writes (hot, append, near, uniform).
    read_loc: [(u8, u32); 4],
    write_loc: [(u8, u32); 4],
    /// Share of the drive holding the OS and applications (permille).
    hot_permille: u64,
    /// Data patterns of write runs below 32KB and from 32KB.
    small_patterns: &'static [(DataPattern, u32)],
    large_patterns: &'static [(DataPattern, u32)],
}

const HOT: u8 = 0;
const READBACK: u8 = 1;
const APPEND: u8 = 1;
const NEAR: u8 = 2;
const UNIFORM: u8 = 3;

/// Heavy 2011. Counts, bytes (48.63GB read, 106.32GB written), the finer size
/// breakdown (<4KB 7.8, 4KB 29.2, 8KB 3.5, 16KB 10.3, 32KB 10.8, 64KB 4.1,
/// 128KB 21.7 percent), 43% sequential, QD 4.625 with 59% at QD1 are
/// published. Chosen: the 12.6% remainder is 12KB 3.0%, 24KB 1.0% and 8.6%
/// `other`; the byte totals leave the remainder about 6-8KB on average, so
/// `other` is mostly odd 4.5-7KB transfers with a few large ones. 82% of the
/// 128KB transfers are writes (installs, downloads, file copies): writes
/// average 59.6KB, reads 22.4KB. Writes are 50% sequential, reads 37%.
/// Duration chosen: 4 hours of use.
/// Data (why): a heavy user's writes are dominated by large transfers of
/// already-compressed data (downloads, media, archives, installers), so large
/// write runs are 65% incompressible, 25% ratio:0.5 (executables and DLLs of
/// installs), 8% ratio:0.3 (documents, source and object files of the
/// compile), 2% zeros (preallocation); small writes (metadata, logs, browser
/// cache, registry) are 20% incompressible, 35% ratio:0.5, 30% ratio:0.3, 15%
/// zeros. By bytes that comes to about 62% incompressible, 26% ratio:0.5, 9%
/// ratio:0.3, 3% zeros (measured; checked by the tests).
const HEAVY_2011: Spec = Spec {
    reads: 2_168_893,
    writes: 1_783_447,
    read_bytes: Some(48_630_000_000),
    write_bytes: Some(106_320_000_000),
    classes: &[
        (U4, 780, 330),
        (4 * KB, 2920, 400),
        (8 * KB, 350, 400),
        (12 * KB, 300, 400),
        (16 * KB, 1030, 300),
        (24 * KB, 100, 400),
        (32 * KB, 1080, 250),
        (64 * KB, 410, 450),
        (128 * KB, 2170, 818),
    ],
    under4k_avg: [1536, 2048],
    other_avg: [0, 0],
    seq_bp: 4300,
    write_seq_bp: 5000,
    qd_avg_e4: 46250,
    qd1_bp: 5900,
    duration_s: 4 * 3600,
    stick_permille: 500,
    read_loc: [(HOT, 35), (READBACK, 20), (NEAR, 30), (UNIFORM, 15)],
    write_loc: [(HOT, 25), (APPEND, 35), (NEAR, 30), (UNIFORM, 10)],
    hot_permille: 250,
    small_patterns: &[(INC, 200), (R50, 350), (R30, 300), (ZER, 150)],
    large_patterns: &[(INC, 650), (R50, 250), (R30, 80), (ZER, 20)],
};

/// Light 2011. Counts, 4KB 27%, 16KB 8%, 32KB 6%, 64KB 5%, over 60%
/// sequential (60.5% chosen) and QD 2.2029 are published. Chosen remainder
/// (54%): <4KB 10%, 8KB 12%, 12KB 5%, 24KB 3%, 128KB 13%, other 11% (about
/// 60KB on average); that gives about 12.7GB read and 15.6GB written. QD1
/// share chosen 65%. Writes 62% sequential. Duration chosen: 2 hours.
/// Data: browsing, e-mail, office and some media: large write runs 50%
/// incompressible, 30% ratio:0.5, 18% ratio:0.3, 2% zeros; small ones 20/30/
/// 40/10. By bytes: about 46% incompressible, 29% ratio:0.5, 22% ratio:0.3,
/// 3% zeros (measured).
const LIGHT_2011: Spec = Spec {
    reads: 372_630,
    writes: 459_709,
    read_bytes: None,
    write_bytes: None,
    classes: &[
        (U4, 1000, 600),
        (4 * KB, 2700, 600),
        (8 * KB, 1200, 550),
        (12 * KB, 500, 500),
        (16 * KB, 800, 500),
        (24 * KB, 300, 500),
        (32 * KB, 600, 450),
        (64 * KB, 500, 450),
        (128 * KB, 1300, 600),
    ],
    under4k_avg: [1536, 1536],
    other_avg: [60 * KB, 60 * KB],
    seq_bp: 6050,
    write_seq_bp: 6200,
    qd_avg_e4: 22029,
    qd1_bp: 6500,
    duration_s: 2 * 3600,
    stick_permille: 500,
    read_loc: [(HOT, 45), (READBACK, 15), (NEAR, 30), (UNIFORM, 10)],
    write_loc: [(HOT, 35), (APPEND, 25), (NEAR, 30), (UNIFORM, 10)],
    hot_permille: 250,
    small_patterns: &[(INC, 200), (R50, 300), (R30, 400), (ZER, 100)],
    large_patterns: &[(INC, 500), (R50, 300), (R30, 180), (ZER, 20)],
};

/// 2010 Typical. Counts, about 5 minutes, 4KB just over 30% (30.5% chosen),
/// 16KB 11%, 32KB 22%, 64KB about 13%, under 30% sequential (29.3% chosen)
/// and QD 6.09 are published. Chosen remainder (23.5%): <4KB 5%, 8KB 7%,
/// 12KB 3%, 24KB 2%, 128KB 4%, other 2.5% (40KB average). QD1 share chosen
/// 45%. Data as Light 2011; by bytes about 44% incompressible, 31%
/// ratio:0.5, 22% ratio:0.3, 4% zeros (measured).
const TYPICAL_2010: Spec = Spec {
    reads: 37_501,
    writes: 20_268,
    read_bytes: None,
    write_bytes: None,
    classes: &[
        (U4, 500, 400),
        (4 * KB, 3050, 400),
        (8 * KB, 700, 400),
        (12 * KB, 300, 350),
        (16 * KB, 1100, 350),
        (24 * KB, 200, 300),
        (32 * KB, 2200, 250),
        (64 * KB, 1300, 300),
        (128 * KB, 400, 400),
    ],
    under4k_avg: [1536, 1536],
    other_avg: [40 * KB, 40 * KB],
    seq_bp: 2930,
    write_seq_bp: 3300,
    qd_avg_e4: 60900,
    qd1_bp: 4500,
    duration_s: 300,
    stick_permille: 500,
    read_loc: [(HOT, 45), (READBACK, 15), (NEAR, 25), (UNIFORM, 15)],
    write_loc: [(HOT, 35), (APPEND, 25), (NEAR, 30), (UNIFORM, 10)],
    hot_permille: 250,
    small_patterns: &[(INC, 200), (R50, 300), (R30, 400), (ZER, 100)],
    large_patterns: &[(INC, 500), (R50, 300), (R30, 180), (ZER, 20)],
};

/// 2010 Heavy multitasking. Counts, 22 minutes, 4KB about 30%, 16KB 12%,
/// 32KB 14%, 64KB 20%, about 44% sequential and QD 3.59 are published.
/// Chosen remainder (24%): <4KB 5%, 8KB 7%, 12KB 3%, 24KB 2%, 128KB 5%,
/// other 2% (40KB average). QD1 share chosen 55%. Data as Heavy 2011; by
/// bytes about 58% incompressible, 27% ratio:0.5, 11% ratio:0.3, 4% zeros
/// (measured).
const MULTITASKING_2010: Spec = Spec {
    reads: 128_895,
    writes: 72_411,
    read_bytes: None,
    write_bytes: None,
    classes: &[
        (U4, 500, 400),
        (4 * KB, 3000, 400),
        (8 * KB, 700, 400),
        (12 * KB, 300, 350),
        (16 * KB, 1200, 350),
        (24 * KB, 200, 300),
        (32 * KB, 1400, 300),
        (64 * KB, 2000, 300),
        (128 * KB, 500, 450),
    ],
    under4k_avg: [1536, 1536],
    other_avg: [40 * KB, 40 * KB],
    seq_bp: 4400,
    write_seq_bp: 4800,
    qd_avg_e4: 35900,
    qd1_bp: 5500,
    duration_s: 22 * 60,
    stick_permille: 500,
    read_loc: [(HOT, 35), (READBACK, 20), (NEAR, 30), (UNIFORM, 15)],
    write_loc: [(HOT, 25), (APPEND, 35), (NEAR, 30), (UNIFORM, 10)],
    hot_permille: 250,
    small_patterns: &[(INC, 200), (R50, 350), (R30, 300), (ZER, 150)],
    large_patterns: &[(INC, 650), (R50, 250), (R30, 80), (ZER, 20)],
};

/// 2010 Gaming. Counts, 4KB 20%, 32KB 20%, 64KB nearly 40% (39.5% chosen),
/// 69% sequential and QD 7.76 are published. Chosen remainder (20.5%): <4KB
/// 3%, 8KB 4%, 12KB 1.5%, 16KB 5%, 24KB 1.5%, 128KB 4%, other 1.5% (40KB
/// average); the few writes are mostly small (saves, shader caches, logs).
/// QD1 share chosen 35%; duration chosen 10 minutes. Reads come mostly from
/// the hot (installed game) region. Data: large write runs 40%
/// incompressible, 45% ratio:0.5, 13% ratio:0.3, 2% zeros; small ones
/// 15/35/40/10. By bytes about 38% incompressible, 44% ratio:0.5, 15%
/// ratio:0.3, 3% zeros (measured; few writes, so it varies by seed).
const GAMING_2010: Spec = Spec {
    reads: 75_206,
    writes: 4_592,
    read_bytes: None,
    write_bytes: None,
    classes: &[
        (U4, 300, 250),
        (4 * KB, 2000, 100),
        (8 * KB, 400, 100),
        (12 * KB, 150, 80),
        (16 * KB, 500, 60),
        (24 * KB, 150, 50),
        (32 * KB, 2000, 30),
        (64 * KB, 3950, 20),
        (128 * KB, 400, 50),
    ],
    under4k_avg: [1536, 1536],
    other_avg: [40 * KB, 40 * KB],
    seq_bp: 6900,
    write_seq_bp: 4000,
    qd_avg_e4: 77600,
    qd1_bp: 3500,
    duration_s: 600,
    stick_permille: 600,
    read_loc: [(HOT, 60), (READBACK, 5), (NEAR, 25), (UNIFORM, 10)],
    write_loc: [(HOT, 30), (APPEND, 30), (NEAR, 30), (UNIFORM, 10)],
    hot_permille: 300,
    small_patterns: &[(INC, 150), (R50, 350), (R30, 400), (ZER, 100)],
    large_patterns: &[(INC, 400), (R50, 450), (R30, 130), (ZER, 20)],
};

/// The Destroyer (2013). Counts (38.83M reads, 10.98M writes, used as exact),
/// bytes (1583.02GB read, 875.62GB written), QD about 5.5 and about 67%
/// sequential are published; no size mix was. Chosen: <4KB 4%, 4KB 32%, 8KB
/// 5%, 12KB 2%, 16KB 7%, 24KB 2%, 32KB 9%, 64KB 11%, 128KB 22%, other 6%
/// (the byte totals make reads' `other` about 87KB and writes' about 145KB on
/// average: VM images, video, large copies). QD1 share chosen 55%; writes 70%
/// sequential; duration chosen 12 hours. More fully random I/O than the
/// desktop traces (virtual machines). Data: large write runs 60%
/// incompressible, 25% ratio:0.5, 13% ratio:0.3, 2% zeros; small ones
/// 25/35/30/10. By bytes about 59% incompressible, 25% ratio:0.5, 14%
/// ratio:0.3, 2% zeros (measured).
const DESTROYER_2013: Spec = Spec {
    reads: 38_830_000,
    writes: 10_980_000,
    read_bytes: Some(1_583_020_000_000),
    write_bytes: Some(875_620_000_000),
    classes: &[
        (U4, 400, 130),
        (4 * KB, 3200, 140),
        (8 * KB, 500, 140),
        (12 * KB, 200, 140),
        (16 * KB, 700, 140),
        (24 * KB, 200, 140),
        (32 * KB, 900, 140),
        (64 * KB, 1100, 200),
        (128 * KB, 2200, 400),
    ],
    under4k_avg: [1536, 2048],
    other_avg: [0, 0],
    seq_bp: 6700,
    write_seq_bp: 7000,
    qd_avg_e4: 55000,
    qd1_bp: 5500,
    duration_s: 12 * 3600,
    stick_permille: 500,
    read_loc: [(HOT, 25), (READBACK, 20), (NEAR, 25), (UNIFORM, 30)],
    write_loc: [(HOT, 15), (APPEND, 25), (NEAR, 30), (UNIFORM, 30)],
    hot_permille: 300,
    small_patterns: &[(INC, 250), (R50, 350), (R30, 300), (ZER, 100)],
    large_patterns: &[(INC, 600), (R50, 250), (R30, 130), (ZER, 20)],
};

fn spec(w: Workload) -> &'static Spec {
    match w {
        Workload::Heavy2011 => &HEAVY_2011,
        Workload::Light2011 => &LIGHT_2011,
        Workload::Typical2010 => &TYPICAL_2010,
        Workload::HeavyMultitasking2010 => &MULTITASKING_2010,
        Workload::Gaming2010 => &GAMING_2010,
        Workload::Destroyer2013 => &DESTROYER_2013,
    }
}

// ------------------------------------------------------------------------
// Published figures
// ------------------------------------------------------------------------

/// How a published figure was worded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qualifier {
    /// A plain figure or "about": within the tolerance either side.
    About,
    /// "under", "nearly": below the figure, by at most the tolerance.
    Under,
    /// "over", "just over": above the figure, by at most the tolerance.
    Over,
}

/// One published percentage (or other figure) and how it was worded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub qualifier: Qualifier,
}

impl Figure {
    pub const fn about(value: f64) -> Figure {
        Figure {
            value,
            qualifier: Qualifier::About,
        }
    }
    pub const fn under(value: f64) -> Figure {
        Figure {
            value,
            qualifier: Qualifier::Under,
        }
    }
    pub const fn over(value: f64) -> Figure {
        Figure {
            value,
            qualifier: Qualifier::Over,
        }
    }

    /// Does `measured` match, with `tolerance` in the figure's unit?
    pub fn check(&self, measured: f64, tolerance: f64) -> bool {
        match self.qualifier {
            Qualifier::About => (measured - self.value).abs() <= tolerance,
            Qualifier::Under => measured < self.value && measured >= self.value - tolerance,
            Qualifier::Over => measured > self.value && measured <= self.value + tolerance,
        }
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.qualifier {
            Qualifier::About => write!(f, "{}", self.value),
            Qualifier::Under => write!(f, "<{}", self.value),
            Qualifier::Over => write!(f, ">{}", self.value),
        }
    }
}

/// The published statistics of a trace (STORAGE_BENCH.md), as data.
#[derive(Clone, Debug, PartialEq)]
pub struct PublishedStats {
    pub workload: Workload,
    pub reads: u64,
    pub writes: u64,
    /// GB = 10^9 B.
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    /// Share of operations per size bucket, percent.
    pub size_mix_percent: Vec<(SizeBucket, Figure)>,
    pub sequential_percent: Option<Figure>,
    pub avg_queue_depth: Option<Figure>,
    pub qd1_percent: Option<Figure>,
    pub duration_s: Option<Figure>,
}

/// Tolerances of STORAGE_BENCH.md.
pub const PERCENT_TOLERANCE_POINTS: f64 = 1.0;
pub const QUEUE_DEPTH_TOLERANCE_RELATIVE: f64 = 0.02;
pub const BYTES_TOLERANCE_RELATIVE: f64 = 0.001;
/// "About N minutes": within 5%.
pub const DURATION_TOLERANCE_RELATIVE: f64 = 0.05;

/// One published figure against a measured one.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub figure: String,
    pub published: String,
    pub measured: f64,
    pub ok: bool,
}

impl PublishedStats {
    /// Compare every published figure with `stats`, with the tolerances above
    /// (counts exact).
    pub fn compare(&self, stats: &TraceStats) -> Vec<Comparison> {
        let mut out = Vec::new();
        let mut push = |figure: String, published: String, measured: f64, ok: bool| {
            out.push(Comparison {
                figure,
                published,
                measured,
                ok,
            })
        };
        push(
            "reads".into(),
            self.reads.to_string(),
            stats.reads as f64,
            stats.reads == self.reads,
        );
        push(
            "writes".into(),
            self.writes.to_string(),
            stats.writes as f64,
            stats.writes == self.writes,
        );
        for (name, p, m) in [
            ("read_bytes", self.read_bytes, stats.read_bytes),
            ("write_bytes", self.write_bytes, stats.write_bytes),
        ] {
            if let Some(p) = p {
                let ok = (m as f64 - p as f64).abs() <= p as f64 * BYTES_TOLERANCE_RELATIVE;
                push(name.into(), p.to_string(), m as f64, ok);
            }
        }
        for (b, fig) in &self.size_mix_percent {
            let m = stats.size_share_percent(*b);
            push(
                format!("size_mix_percent[{}]", b.label()),
                fig.to_string(),
                m,
                fig.check(m, PERCENT_TOLERANCE_POINTS),
            );
        }
        if let Some(fig) = self.sequential_percent {
            let m = stats.sequential_share_percent();
            push(
                "sequential_share_percent".into(),
                fig.to_string(),
                m,
                fig.check(m, PERCENT_TOLERANCE_POINTS),
            );
        }
        if let Some(fig) = self.avg_queue_depth {
            let m = stats.avg_queue_depth().unwrap_or(f64::NAN);
            let ok = m.is_finite() && fig.check(m, fig.value * QUEUE_DEPTH_TOLERANCE_RELATIVE);
            push("avg_queue_depth".into(), fig.to_string(), m, ok);
        }
        if let Some(fig) = self.qd1_percent {
            let m = stats.qd1_share_percent().unwrap_or(f64::NAN);
            let ok = m.is_finite() && fig.check(m, PERCENT_TOLERANCE_POINTS);
            push("qd1_share_percent".into(), fig.to_string(), m, ok);
        }
        if let Some(fig) = self.duration_s {
            let m = stats.duration_ns() as f64 / 1e9;
            push(
                "duration_s".into(),
                fig.to_string(),
                m,
                fig.check(m, fig.value * DURATION_TOLERANCE_RELATIVE),
            );
        }
        out
    }
}

/// The published figures of a workload. Heavy 2011 gives the finer breakdown
/// (the coarser one said 4KB 28%, 16KB 10%, 32KB 10%, 64KB 4%, 42% sequential;
/// STORAGE_BENCH.md says to match the finer one). The Destroyer's counts were
/// published in millions (38.83M, 10.98M) and are used as exact.
pub fn published(w: Workload) -> PublishedStats {
    use SizeBucket::*;
    let s = spec(w);
    let a = Figure::about;
    let (mix, seq, qd, qd1, dur) = match w {
        Workload::Heavy2011 => (
            vec![
                (Under4K, a(7.8)),
                (K4, a(29.2)),
                (K8, a(3.5)),
                (K16, a(10.3)),
                (K32, a(10.8)),
                (K64, a(4.1)),
                (K128, a(21.7)),
            ],
            Some(a(43.0)),
            Some(a(4.625)),
            Some(a(59.0)),
            None,
        ),
        Workload::Light2011 => (
            vec![(K4, a(27.0)), (K16, a(8.0)), (K32, a(6.0)), (K64, a(5.0))],
            Some(Figure::over(60.0)),
            Some(a(2.2029)),
            None,
            None,
        ),
        Workload::Typical2010 => (
            vec![(K4, Figure::over(30.0)), (K16, a(11.0)), (K32, a(22.0)), (K64, a(13.0))],
            Some(Figure::under(30.0)),
            Some(a(6.09)),
            None,
            Some(a(300.0)),
        ),
        Workload::HeavyMultitasking2010 => (
            vec![(K4, a(30.0)), (K16, a(12.0)), (K32, a(14.0)), (K64, a(20.0))],
            Some(a(44.0)),
            Some(a(3.59)),
            None,
            Some(a(1320.0)),
        ),
        Workload::Gaming2010 => (
            vec![(K4, a(20.0)), (K32, a(20.0)), (K64, Figure::under(40.0))],
            Some(a(69.0)),
            Some(a(7.76)),
            None,
            None,
        ),
        Workload::Destroyer2013 => (vec![], Some(a(67.0)), Some(a(5.5)), None, None),
    };
    PublishedStats {
        workload: w,
        reads: s.reads,
        writes: s.writes,
        read_bytes: s.read_bytes,
        write_bytes: s.write_bytes,
        size_mix_percent: mix,
        sequential_percent: seq,
        avg_queue_depth: qd,
        qd1_percent: qd1,
        duration_s: dur,
    }
}

// ------------------------------------------------------------------------
// Size classes
// ------------------------------------------------------------------------

const UNDER4K_SIZES: &[(u64, u32)] = &[
    (512, 30),
    (1024, 30),
    (1536, 6),
    (2048, 12),
    (2560, 4),
    (3072, 8),
    (3584, 10),
];

const OTHER_SIZES: &[(u64, u32)] = &[
    (4608, 5),
    (5120, 8),
    (6144, 8),
    (7168, 6),
    (10 * KB, 8),
    (14 * KB, 5),
    (20 * KB, 8),
    (28 * KB, 6),
    (36 * KB, 3),
    (40 * KB, 4),
    (48 * KB, 5),
    (56 * KB, 3),
    (60 * KB, 3),
    (96 * KB, 4),
    (192 * KB, 3),
    (256 * KB, 5),
    (512 * KB, 4),
    (1024 * KB, 3),
];

/// A class of variable sizes with an exact count and byte total.
#[derive(Clone, Debug)]
struct Flex {
    n: u64,
    bytes: u64,
    sizes: &'static [(u64, u32)],
    min: u64,
    max: u64,
    other: bool,
}

impl Flex {
    fn new(n: u64, bytes: u64, sizes: &'static [(u64, u32)], other: bool) -> Flex {
        let min = sizes.iter().map(|x| x.0).min().unwrap();
        let max = sizes.iter().map(|x| x.0).max().unwrap();
        let bytes = if n == 0 { 0 } else { bytes / SECTOR * SECTOR };
        assert!(
            n == 0 || (bytes >= n * min && bytes <= n * max),
            "size class infeasible: {n} transfers totalling {bytes} bytes ({} on average) with sizes {min}..{max}",
            bytes.checked_div(n).unwrap_or(0)
        );
        Flex {
            n,
            bytes,
            sizes,
            min,
            max,
            other,
        }
    }

    /// Is `s` a size this class may produce (a multiple of 512 in the class's
    /// bucket)?
    fn valid(&self, s: u64) -> bool {
        s.is_multiple_of(SECTOR)
            && s >= SECTOR
            && if self.other {
                s > BLOCK && SizeBucket::of(s) == SizeBucket::Other
            } else {
                s < BLOCK
            }
    }

    /// A size drawn so that the mean of the remaining draws stays on target.
    fn balanced(&self, rng: &mut Rng) -> u64 {
        let a = self.bytes / self.n;
        let (mut wl, mut sl, mut wh, mut sh) = (0u128, 0u128, 0u128, 0u128);
        for &(s, w) in self.sizes {
            if s <= a {
                wl += w as u128;
                sl += w as u128 * s as u128;
            } else {
                wh += w as u128;
                sh += w as u128 * s as u128;
            }
        }
        let high = if wl == 0 {
            true
        } else if wh == 0 {
            false
        } else {
            // P(high) = (a - mean_low) / (mean_high - mean_low)
            let num = (a as u128 * wl - sl) * wh;
            let den = sh * wl - sl * wh;
            rng.chance((num * (1u128 << 32) / den) as u64, 1 << 32)
        };
        let total: u64 = self
            .sizes
            .iter()
            .filter(|x| (x.0 > a) == high)
            .map(|x| x.1 as u64)
            .sum();
        let mut r = rng.below(total);
        for &(s, w) in self.sizes {
            if (s > a) == high {
                if r < w as u64 {
                    return s;
                }
                r -= w as u64;
            }
        }
        unreachable!()
    }

    fn draw(&mut self, rng: &mut Rng) -> u64 {
        debug_assert!(self.n > 0);
        let s = if self.n == 1 {
            self.bytes
        } else {
            let c = self.balanced(rng);
            let rest = self.n - 1;
            let lo = self.bytes.saturating_sub(rest * self.max).max(self.min);
            let hi = self.bytes.saturating_sub(rest * self.min).min(self.max).max(lo);
            let c = c.clamp(lo, hi);
            let ok = |s: u64| self.valid(s) && (rest > 1 || self.valid(self.bytes - s));
            if ok(c) {
                c
            } else {
                // Nudge to the nearest size that keeps the rest feasible.
                let mut found = c;
                let mut d = SECTOR;
                while d <= self.max {
                    if c + d <= hi && ok(c + d) {
                        found = c + d;
                        break;
                    }
                    if c >= lo + d && ok(c - d) {
                        found = c - d;
                        break;
                    }
                    d += SECTOR;
                }
                found
            }
        };
        self.n -= 1;
        self.bytes -= s;
        s
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Fixed(u64),
    Flex(Flex),
}

#[derive(Clone, Debug)]
struct Class {
    kind: Kind,
    remaining: u64,
    /// Run-length multiplier, hundredths (large transfers stream longer).
    run_factor: u64,
    /// Nominal size, for the pattern choice and run factor.
    nominal: u64,
}

impl Class {
    #[inline]
    fn draw(&mut self, rng: &mut Rng) -> u64 {
        self.remaining -= 1;
        match &mut self.kind {
            Kind::Fixed(s) => *s,
            Kind::Flex(f) => f.draw(rng),
        }
    }
}

fn run_factor(size: u64) -> u64 {
    match size {
        0..=4095 => 30,
        4096 => 50,
        4097..=16384 => 80,
        16385..=32768 => 120,
        32769..=65536 => 200,
        _ => 300,
    }
}

/// Per-direction class tables with exact counts and bytes.
fn build_classes(s: &Spec, dir: usize) -> Vec<Class> {
    let total = s.reads + s.writes;
    let n_dir = if dir == 0 { s.reads } else { s.writes };
    let bytes_target = if dir == 0 { s.read_bytes } else { s.write_bytes };
    let mut classes = Vec::new();
    let mut used_n = 0u64;
    let mut used_bytes = 0u64;
    for &(size, bp, wpm) in s.classes {
        let tot = total * bp as u64 / 10_000;
        let w = tot * wpm as u64 / 1000;
        let n = if dir == 0 { tot - w } else { w };
        used_n += n;
        let kind = if size == U4 {
            let b = n * s.under4k_avg[dir];
            used_bytes += b / SECTOR * SECTOR;
            Kind::Flex(Flex::new(n, b, UNDER4K_SIZES, false))
        } else {
            used_bytes += n * size;
            Kind::Fixed(size)
        };
        let nominal = if size == U4 { s.under4k_avg[dir] } else { size };
        classes.push(Class {
            kind,
            remaining: n,
            run_factor: run_factor(nominal),
            nominal,
        });
    }
    assert!(used_n <= n_dir, "size classes exceed the direction's count");
    assert!(classes.len() < MAX_CLASSES);
    let n = n_dir - used_n;
    let bytes = match bytes_target {
        // Round the total to whole sectors (the published figure is rounded anyway).
        Some(b) => ((b + SECTOR / 2) / SECTOR * SECTOR)
            .checked_sub(used_bytes)
            .expect("named size classes exceed the byte total"),
        None => n * s.other_avg[dir],
    };
    let f = Flex::new(n, bytes, OTHER_SIZES, true);
    let nominal = bytes.checked_div(n).unwrap_or(0);
    classes.push(Class {
        kind: Kind::Flex(f),
        remaining: n,
        run_factor: 150,
        nominal,
    });
    classes
}

// ------------------------------------------------------------------------
// Generator state
// ------------------------------------------------------------------------

/// Run-length multipliers (permille of the needed mean) and weights: many
/// isolated I/Os, some long streams.
const RUN_MULT: &[(u64, u32)] = &[
    (0, 30),
    (250, 15),
    (500, 15),
    (1000, 14),
    (2000, 12),
    (4000, 9),
    (8000, 5),
];
const RUN_MULT_MEAN: u64 = table_mean(RUN_MULT);

#[derive(Clone, Debug)]
struct Dir {
    classes: Vec<Class>,
    rem_ops: u64,
    rem_seq: u64,
    run_left: u64,
    cur_class: usize,
    /// End of this direction's previous I/O.
    prev_end: Option<u64>,
    pattern: DataPattern,
}

/// Upper bound on size classes per direction.
const MAX_CLASSES: usize = 16;
const RECENT: usize = 64;
const WRITTEN: usize = 1024;
const HOT_SPOTS: u64 = 16384;

/// Bursts: ramp inter-arrival bound (ns).
const IA_MAX: u64 = 8_000;
const MAX_QD: usize = 32;

const CHAIN_LEN: &[(u64, u32)] = &[(1, 25), (2, 15), (3, 10), (5, 15), (8, 12), (16, 10), (32, 8), (64, 5)];
const P_MULT: &[(u64, u32)] = &[(500, 20), (750, 25), (1000, 25), (1500, 20), (2000, 10)];
const STEADY_MULT: &[(u64, u32)] = &[(0, 20), (500, 20), (1000, 20), (2000, 20), (4000, 20)];
/// Idle-gap multipliers (permille of the mean gap): mostly short pauses, a few
/// long idle periods.
const GAP_MULT: &[(u64, u32)] = &[(50, 40), (200, 25), (600, 15), (1500, 10), (4000, 7), (12000, 3)];
const GAP_MULT_MEAN: u64 = table_mean(GAP_MULT);

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

#[derive(Clone, Copy, Debug)]
enum Episode {
    None,
    Chain { left: u64 },
    Ramp { i: u64, p: u64, steady: u64 },
    Steady { p: u64, left: u64 },
}

#[derive(Clone, Debug)]
struct Timing {
    out: [u64; MAX_QD + 8],
    n_out: usize,
    last_issue: u64,
    max_completion: u64,
    episode: Episode,
    episodes: u64,
    idle_total: u64,
    emitted: u64,
    q1: u64,
    qd_sum: u64,
    /// Burst-depth gain (permille), adapted to hit the average depth.
    gain: u64,
    total: u64,
    qd_avg_e4: u64,
    qd1_bp: u64,
    non1_target_milli: u64,
    duration_ns: u64,
}

impl Timing {
    fn new(s: &Spec) -> Timing {
        Timing {
            out: [0; MAX_QD + 8],
            n_out: 0,
            last_issue: 0,
            max_completion: 0,
            episode: Episode::None,
            episodes: 0,
            idle_total: 0,
            emitted: 0,
            q1: 0,
            qd_sum: 0,
            gain: 1000,
            total: s.reads + s.writes,
            qd_avg_e4: s.qd_avg_e4,
            qd1_bp: s.qd1_bp,
            non1_target_milli: (s.qd_avg_e4 - s.qd1_bp) * 1000 / (10_000 - s.qd1_bp),
            duration_ns: s.duration_s * NS_PER_S,
        }
    }

    fn idle_gap(&mut self, rng: &mut Rng) -> u64 {
        let remaining = self.total - self.emitted;
        let nonidle = self.max_completion.saturating_sub(self.idle_total);
        let est_nonidle = (nonidle as u128 * remaining as u128 / self.emitted.max(1) as u128) as u64;
        let est_eps = remaining * self.episodes / self.emitted.max(1) + 1;
        let budget = self
            .duration_ns
            .saturating_sub(self.max_completion)
            .saturating_sub(est_nonidle);
        let mean = budget / est_eps;
        let m = pick(GAP_MULT, rng);
        let gap = (mean as u128 * m as u128 / GAP_MULT_MEAN as u128) as u64;
        let gap = gap.max(1_000 + rng.below(1_000));
        self.idle_total += gap;
        gap
    }

    fn start_episode(&mut self, rng: &mut Rng) -> u64 {
        let t0 = if self.emitted == 0 {
            0
        } else {
            self.max_completion + self.idle_gap(rng)
        };
        self.episodes += 1;
        let want_chain = self.q1 * 10_000 < self.qd1_bp * self.emitted;
        let chain = if want_chain {
            rng.chance(15, 16)
        } else {
            rng.chance(1, 4)
        };
        if chain {
            let v = pick(CHAIN_LEN, rng);
            let n = (v * (500 + rng.below(1000)) / 1000).clamp(1, ((self.total - self.emitted) / 4).max(1));
            self.episode = Episode::Chain { left: n };
        } else {
            // Integral control of the burst depth on the running average.
            if self.qd_sum * 10_000 < self.qd_avg_e4 * self.emitted {
                self.gain = (self.gain * 1020 / 1000).min(4000);
            } else {
                self.gain = (self.gain * 980 / 1000).max(300);
            }
            // Plus a proportional term that works off the running deficit
            // (in milli-QD summed over records) within about two bursts.
            let base = (self.non1_target_milli * self.gain / 1000) as i128;
            let deficit_milli = (self.qd_avg_e4 as i128 * self.emitted as i128 - self.qd_sum as i128 * 10_000) / 10;
            let burst_len = 3 * self.non1_target_milli as i128 / 1000 + 1;
            let center = (base + deficit_milli / (2 * burst_len)).clamp(1_500, 32_000) as u64;
            let m = pick(P_MULT, rng);
            let p = ((center * m + 500_000) / 1_000_000).clamp(2, MAX_QD as u64);
            let sm = pick(STEADY_MULT, rng);
            let remaining = self.total - self.emitted;
            let steady = (p * sm / 1000 + rng.below(p)).min(remaining / 4);
            self.episode = Episode::Ramp { i: 1, p, steady };
        }
        t0
    }

    #[inline]
    fn min_out(&self) -> u64 {
        let mut m = u64::MAX;
        for &c in &self.out[..self.n_out] {
            m = m.min(c);
        }
        m
    }

    #[inline]
    fn retire(&mut self, t: u64) {
        let mut i = 0;
        while i < self.n_out {
            if self.out[i] <= t {
                self.n_out -= 1;
                self.out[i] = self.out[self.n_out];
            } else {
                i += 1;
            }
        }
    }

    /// Issue time, queue depth and latency of the next I/O.
    fn next(&mut self, rng: &mut Rng, service: u64) -> (u64, u16, u64) {
        let fresh = matches!(self.episode, Episode::None);
        let t0 = if fresh { Some(self.start_episode(rng)) } else { None };
        let jitter = |rng: &mut Rng, x: u64| x * (750 + rng.below(500)) / 1000;
        let (t, lat, next) = match self.episode {
            Episode::None => unreachable!(),
            Episode::Chain { left } => {
                let t = match t0 {
                    Some(t) => t,
                    None => {
                        let think = match rng.below(20) {
                            0 => rng.below(5_000_000),
                            1..=5 => rng.below(500_000),
                            _ => rng.below(50_000),
                        };
                        self.max_completion + 2_000 + think
                    }
                };
                let lat = jitter(rng, service).max(1);
                let next = if left > 1 {
                    Episode::Chain { left: left - 1 }
                } else {
                    Episode::None
                };
                (t, lat, next)
            }
            Episode::Ramp { i, p, steady } => {
                let t = match t0 {
                    Some(t) => t,
                    None => self.last_issue + 1 + rng.below(IA_MAX),
                };
                let lat = (p - i) * IA_MAX + jitter(rng, service * (3 + p) / 4);
                let next = if i < p {
                    Episode::Ramp { i: i + 1, p, steady }
                } else if steady > 0 {
                    Episode::Steady { p, left: steady }
                } else {
                    Episode::None
                };
                (t, lat, next)
            }
            Episode::Steady { p, left } => {
                let t = self.min_out();
                let lat = jitter(rng, service * (3 + p) / 4).max(1);
                let next = if left > 1 {
                    Episode::Steady { p, left: left - 1 }
                } else {
                    Episode::None
                };
                (t, lat, next)
            }
        };
        self.episode = next;
        self.retire(t);
        if self.n_out == self.out.len() {
            // Cannot happen (depth <= 32); keep the bound regardless.
            let m = self.min_out();
            self.retire(m);
        }
        let qd = self.n_out as u64 + 1;
        self.out[self.n_out] = t + lat;
        self.n_out += 1;
        self.last_issue = t;
        self.max_completion = self.max_completion.max(t + lat);
        self.emitted += 1;
        self.qd_sum += qd;
        if qd == 1 {
            self.q1 += 1;
        }
        (t, qd as u16, lat)
    }
}

/// Weighted pick from a (value, weight) table.
#[inline]
fn pick(table: &[(u64, u32)], rng: &mut Rng) -> u64 {
    table[rng.weighted(table)].0
}

/// Service time of the recording system's drive (ns), before queueing.
#[inline]
fn service_ns(op: TraceOp, len: u64) -> u64 {
    match op {
        TraceOp::Read => 60_000 + len * 7 / 2,
        _ => 40_000 + len * 5,
    }
}

/// A streaming Storage Bench trace: yields exactly
/// [`Workload::records`] records in issue order.
#[derive(Clone, Debug)]
pub struct Generator {
    spec: &'static Spec,
    capacity: u64,
    rng: Rng,
    dirs: [Dir; 2],
    last_dir: usize,
    timing: Timing,
    recent: [u64; RECENT],
    n_recent: u64,
    written: [(u64, u64); WRITTEN],
    n_written: u64,
    cursor: u64,
    hot_end_block: u64,
    hot_seed: u64,
    left: u64,
}

/// The smallest drive a Storage Bench trace can be generated for.
pub const MIN_CAPACITY_BYTES: u64 = 1_000_000_000;

/// A streaming generator for workload `w` on a drive of `capacity_bytes`
/// (at least [`MIN_CAPACITY_BYTES`]), from `seed`. Panics on a smaller drive:
/// use [`try_generate`] for input that is not known to be valid.
pub fn generate(w: Workload, capacity_bytes: u64, seed: u64) -> Generator {
    Generator::new(w, capacity_bytes, seed)
}

/// [`generate`], with a smaller drive refused as a workload error.
pub fn try_generate(w: Workload, capacity_bytes: u64, seed: u64) -> crate::Result<Generator> {
    if capacity_bytes < MIN_CAPACITY_BYTES {
        return Err(crate::SimError::workload(
            "capacity_bytes",
            format!("{capacity_bytes} B: Storage Bench traces need a drive of at least 1 GB ({MIN_CAPACITY_BYTES} B)"),
        ));
    }
    Ok(Generator::new(w, capacity_bytes, seed))
}

impl Generator {
    pub fn new(w: Workload, capacity_bytes: u64, seed: u64) -> Generator {
        assert!(capacity_bytes >= MIN_CAPACITY_BYTES, "Storage Bench traces need a drive of at least 1 GB");
        let s = spec(w);
        let total = s.reads + s.writes;
        let seq_total = total * s.seq_bp / 10_000;
        let seq_w = s.writes * s.write_seq_bp / 10_000;
        let seq_r = seq_total - seq_w;
        assert!(seq_r < s.reads && seq_w < s.writes);
        let mk = |d: usize, n: u64, seq: u64| Dir {
            classes: build_classes(s, d),
            rem_ops: n,
            rem_seq: seq,
            run_left: 0,
            cur_class: 0,
            prev_end: None,
            pattern: DataPattern::Incompressible,
        };
        let mut rng = Rng::new(seed ^ mix64(w as u64 + 1));
        let hot_seed = rng.next_u64();
        let blocks = capacity_bytes / BLOCK;
        let hot_end_block = blocks * s.hot_permille / 1000;
        Generator {
            spec: s,
            capacity: capacity_bytes,
            rng,
            dirs: [mk(0, s.reads, seq_r), mk(1, s.writes, seq_w)],
            last_dir: 0,
            timing: Timing::new(s),
            recent: [0; RECENT],
            n_recent: 0,
            written: [(0, 0); WRITTEN],
            n_written: 0,
            cursor: hot_end_block * BLOCK,
            hot_end_block,
            hot_seed,
            left: total,
        }
    }

    /// A size class, weighted by remaining count; at a run start also divided
    /// by the class's expected run length, so classes deplete evenly.
    fn pick_class(&mut self, d: usize, run_start: bool) -> usize {
        let dir = &self.dirs[d];
        let rem_runs = dir.rem_ops.saturating_sub(dir.rem_seq).max(1);
        let m_milli = dir.rem_seq * 1000 / rem_runs;
        let mut weights = [0u64; MAX_CLASSES];
        let mut total = 0;
        for (w, c) in weights.iter_mut().zip(&dir.classes) {
            *w = if run_start && c.remaining > 0 {
                c.remaining * (1 << 20) / (1000 + m_milli * c.run_factor / 100)
            } else {
                c.remaining
            };
            total += *w;
        }
        let mut r = self.rng.below(total);
        let mut last = 0;
        for (i, &w) in weights[..dir.classes.len()].iter().enumerate() {
            if w > 0 {
                last = i;
                if r < w {
                    return i;
                }
                r -= w;
            }
        }
        last
    }

    /// Fit a start offset so the transfer ends inside the drive.
    #[inline]
    fn fit(&self, off: u64, len: u64) -> u64 {
        if off + len <= self.capacity {
            off
        } else {
            (self.capacity - len) / SECTOR * SECTOR
        }
    }

    fn place(&mut self, d: usize, len: u64) -> u64 {
        let blocks = self.capacity / BLOCK;
        let s = self.spec;
        let loc = if d == 0 { &s.read_loc } else { &s.write_loc };
        let kind = loc[self.rng.weighted(loc)].0;
        let block = match (d, kind) {
            (_, HOT) => self.hot_block(),
            (0, READBACK) => {
                if self.n_written == 0 {
                    self.hot_block()
                } else {
                    let k = self.n_written.min(WRITTEN as u64);
                    let (off, l) = self.written[((self.n_written - 1 - self.rng.below(k)) % WRITTEN as u64) as usize];
                    let within = if self.rng.chance(1, 2) {
                        0
                    } else {
                        self.rng.below(l / BLOCK + 1)
                    };
                    off / BLOCK + within
                }
            }
            (_, APPEND) => self.cursor / BLOCK,
            (_, NEAR) => {
                let base = self.recent[self.rng.below(self.n_recent.clamp(1, RECENT as u64)) as usize] / BLOCK;
                let span = if self.rng.chance(3, 4) { 512 } else { 32768 };
                let delta = self.rng.below(span) + 1;
                if self.rng.chance(1, 2) {
                    base.saturating_sub(delta)
                } else {
                    base + delta
                }
            }
            _ => self.rng.below(blocks),
        };
        let mut off = (block % blocks) * BLOCK;
        if !len.is_multiple_of(BLOCK) && self.rng.chance(1, 2) {
            off += self.rng.below(BLOCK / SECTOR) * SECTOR;
        }
        off = self.fit(off, len);
        if Some(off) == self.dirs[d].prev_end {
            // Not sequential by construction.
            off = if off >= BLOCK { off - BLOCK } else { off + BLOCK };
        }
        off
    }

    #[inline]
    fn hot_block(&mut self) -> u64 {
        // Skewed popularity: index i is chosen with probability ~ log(K/i).
        let j = self.rng.below(HOT_SPOTS) + 1;
        let i = self.rng.below(j);
        let spot = mix64(self.hot_seed ^ i) % self.hot_end_block.max(1);
        spot + self.rng.below(64)
    }

    fn pattern_for(&mut self, nominal: u64) -> DataPattern {
        let t = if nominal < 32 * KB {
            self.spec.small_patterns
        } else {
            self.spec.large_patterns
        };
        t[self.rng.weighted(t)].0
    }

    /// Begin a new run in direction `d` with class `c` and first size `len`.
    fn start_run(&mut self, d: usize, c: usize, len: u64) -> u64 {
        let (k, nominal) = {
            let dir = &self.dirs[d];
            let rem_runs = dir.rem_ops.saturating_sub(dir.rem_seq);
            let cls = &dir.classes[c];
            let k = if rem_runs <= 1 {
                dir.rem_seq
            } else {
                let m_milli = dir.rem_seq * 1000 / rem_runs;
                let mult = RUN_MULT[self.rng.weighted(RUN_MULT)].0;
                let x = m_milli * cls.run_factor * mult / (100 * RUN_MULT_MEAN);
                (x / 1000 + (self.rng.below(1000) < x % 1000) as u64).min(dir.rem_seq)
            };
            (k, cls.nominal)
        };
        let off = self.place(d, len);
        if d == 1 {
            self.dirs[1].pattern = self.pattern_for(nominal);
            let run_bytes = ((k + 1) * len).min(256 << 20);
            self.written[(self.n_written % WRITTEN as u64) as usize] = (off, run_bytes);
            self.n_written += 1;
            if off == self.cursor {
                let gap = self.rng.below(16) * BLOCK;
                self.cursor = off + run_bytes + gap;
                if self.cursor + (1 << 20) >= self.capacity {
                    self.cursor = self.hot_end_block * BLOCK;
                }
            }
        }
        self.dirs[d].run_left = k;
        self.dirs[d].cur_class = c;
        off
    }
}

impl Iterator for Generator {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Direction: sticky, else by the remaining counts.
        let (rr, rw) = (self.dirs[0].rem_ops, self.dirs[1].rem_ops);
        let d = if self.dirs[self.last_dir].rem_ops > 0 && self.rng.chance(self.spec.stick_permille, 1000) {
            self.last_dir
        } else if self.rng.below(rr + rw) < rr {
            0
        } else {
            1
        };
        self.last_dir = d;

        let (len, off) = if self.dirs[d].run_left > 0 {
            let cur = self.dirs[d].cur_class;
            let c = if self.dirs[d].classes[cur].remaining > 0 {
                cur
            } else {
                self.pick_class(d, false)
            };
            let len = self.dirs[d].classes[c].draw(&mut self.rng);
            let next = self.dirs[d].prev_end.unwrap_or(0);
            if next + len <= self.capacity {
                let dir = &mut self.dirs[d];
                dir.run_left -= 1;
                dir.rem_seq -= 1;
                dir.cur_class = c;
                (len, next)
            } else {
                // The stream ran into the end of the drive: start afresh.
                self.dirs[d].run_left = 0;
                let off = self.start_run(d, c, len);
                (len, off)
            }
        } else {
            let c = self.pick_class(d, true);
            let len = self.dirs[d].classes[c].draw(&mut self.rng);
            let off = self.start_run(d, c, len);
            (len, off)
        };
        let dir = &mut self.dirs[d];
        dir.rem_ops -= 1;
        dir.prev_end = Some(off + len);
        let pattern = dir.pattern;
        self.recent[(self.n_recent % RECENT as u64) as usize] = off;
        self.n_recent += 1;

        let op = if d == 0 { TraceOp::Read } else { TraceOp::Write };
        let (time_ns, queue_depth, lat) = self.timing.next(&mut self.rng, service_ns(op, len));
        Some(TraceRecord {
            time_ns,
            op,
            offset_bytes: off,
            length_bytes: len,
            pattern: if d == 1 { pattern } else { DataPattern::Incompressible },
            queue_depth,
            recorded_latency_ns: lat,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Generator {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ids() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.id()).unwrap(), w);
            assert_eq!(w.to_string().parse::<Workload>().unwrap(), w);
        }
        let e = Workload::parse("heavy").unwrap_err();
        assert!(e.contains("heavy-2011") && e.contains("destroyer-2013"), "{e}");
    }

    #[test]
    fn class_tables_are_feasible_and_exact() {
        for w in Workload::ALL {
            let s = spec(w);
            for d in 0..2 {
                let cls = build_classes(s, d);
                let n: u64 = cls.iter().map(|c| c.remaining).sum();
                assert_eq!(n, if d == 0 { s.reads } else { s.writes }, "{w} dir {d}");
            }
        }
    }

    #[test]
    fn flex_hits_total_exactly() {
        let mut rng = Rng::new(7);
        let mut f = Flex::new(1000, 1000 * 6000, OTHER_SIZES, true);
        let want = f.bytes;
        let mut got = 0;
        for _ in 0..1000 {
            let s = f.draw(&mut rng);
            assert!(f.valid(s), "{s}");
            got += s;
        }
        assert_eq!(got, want);
        let mut f = Flex::new(333, 333 * 1536, UNDER4K_SIZES, false);
        let mut got = 0;
        for _ in 0..333 {
            let s = f.draw(&mut rng);
            assert!(s < 4096 && s.is_multiple_of(512));
            got += s;
        }
        assert_eq!(got, 333 * 1536);
    }

    #[test]
    fn rng_is_stable() {
        // splitmix64-seeded xoshiro256**, checked against an independent
        // implementation: traces must not change silently.
        let mut r = Rng::new(1);
        let v: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(v, [0xb3f2af6d0fc710c5, 0x853b559647364cea, 0x92f89756082a4514]);
        let mut r = Rng::new(9);
        for n in [1u64, 2, 3, 1000, u64::MAX] {
            for _ in 0..1000 {
                assert!(r.below(n) < n);
            }
        }
        assert_eq!(r.below(0), 0);
    }
}
