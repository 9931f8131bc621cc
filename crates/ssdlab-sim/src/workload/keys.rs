//! `Workload::from_json`: a job's fio-style keys parsed group by group (the
//! mode, the block sizes, the region, the limits, the queue, the flushes,
//! the pacing, flows and latency target), in a fixed order so a job with
//! several faults always gets the same one named first.

use super::options::{check_job_bounds, parse_bssplit, parse_data_pattern, parse_rw_modifier, parse_zones};
use super::{RwMode, Workload, FORCE_HINT, KEYS, MAX_FLOW_WEIGHT, MAX_IODEPTH, MAX_LOG_AVG_MSEC, MAX_RUNTIME_NS};
use crate::config::SECTOR_BYTES;
use crate::error::{Result, SimError};
use crate::parse::{as_text, known_keys, parse_bool, parse_size, parse_time_ns, parse_time_ns_f64, parse_u64, werr};
use crate::skew::Skew;
use serde_json::{Map, Value};

/// A job's keys (a null is an absent key) and the capacity that resolves
/// percentages and the default region.
struct Keys<'a> {
    obj: &'a Map<String, Value>,
    capacity_bytes: u64,
}

impl<'a> Keys<'a> {
    fn get(&self, k: &str) -> Option<&'a Value> {
        self.obj.get(k).filter(|v| !v.is_null())
    }
    fn size(&self, k: &str, v: &Value) -> Result<u64> {
        parse_size(k, v, self.capacity_bytes)
    }
    fn u64_or(&self, k: &str, default: u64) -> Result<u64> {
        Ok(self.get(k).map(|v| parse_u64(k, v)).transpose()?.unwrap_or(default))
    }
    fn time_ns_or_0(&self, k: &str) -> Result<u64> {
        Ok(self.get(k).map(|v| parse_time_ns(k, v)).transpose()?.unwrap_or(0))
    }
    fn bool_or(&self, k: &str, default: bool) -> Result<bool> {
        Ok(self.get(k).map(|v| parse_bool(k, v)).transpose()?.unwrap_or(default))
    }
}

/// `rw` (or `readwrite`) with fio's modifier: the mode, the bytes added to a
/// sequential offset after each I/O and the I/Os per random offset.
struct Mode {
    rw: RwMode,
    seq_add_bytes: i64,
    seq_nr: u64,
}

/// The block sizes of reads (and of writes when `write_bssplit` differs).
struct BlockSizes {
    sizes: Vec<(u64, u32)>,
    bs_range: Option<(u64, u64)>,
    write_sizes: Vec<(u64, u32)>,
}

impl BlockSizes {
    fn min_bs(&self) -> u64 {
        self.sizes.iter().chain(&self.write_sizes).map(|x| x.0).min().unwrap()
    }
    fn max_bs(&self) -> u64 {
        self.sizes.iter().chain(&self.write_sizes).map(|x| x.0).max().unwrap()
    }
}

/// Where the job's I/Os fall: the alignments, the offset and the size.
struct Region {
    blockalign_bytes: u64,
    write_blockalign_bytes: u64,
    offset_bytes: u64,
    size_bytes: u64,
}

/// When the job ends: a byte limit, a count of I/Os, a runtime.
struct Limits {
    io_limit_bytes: Option<u64>,
    number_ios: Option<u64>,
    runtime_ns: Option<u64>,
}

/// How the job paces itself: rates, think time, a start delay, a flow and a
/// latency target.
struct Pacing {
    rate_bytes_per_s: u64,
    rate_iops: u64,
    thinktime_ns: u64,
    thinktime_blocks: u64,
    startdelay_ns: u64,
    rate_poisson: bool,
}

/// Where random offsets fall: a skew, or zones of the region; and the bytes
/// after which a sequential stream starts again at its offset.
struct Distribution {
    skew: Option<Skew>,
    zones: Vec<(u32, u64, u64)>,
    loop_bytes: u64,
}

/// fio's flows and latency-target search.
struct FlowAndTarget {
    flow_id: u64,
    flow_weight: u32,
    flow_sleep_ns: u64,
    latency_target_ns: u64,
    latency_window_ns: u64,
    latency_percentile: f64,
    latency_run: bool,
}

impl Workload {
    /// Build a workload from fio-style keys; `capacity_bytes` resolves
    /// percentages and the default region.
    pub fn from_json(v: &Value, capacity_bytes: u64) -> Result<Workload> {
        let obj = v.as_object().ok_or_else(|| werr("(job)", "a workload is a mapping of fio-style keys"))?;
        known_keys(obj, KEYS, "workload key")?;
        let k = Keys { obj, capacity_bytes };
        let mode = parse_mode(&k)?;
        let bs = parse_block_sizes(&k)?;
        let region = parse_region(&k, &bs)?;
        let limits = parse_limits(&k, &bs, region.size_bytes)?;
        let (iodepth, rwmixread_percent) = parse_queue(&k)?;
        let data_pattern = parse_data_pattern(obj)?;
        let interval_ns = parse_interval_ns(&k)?;
        let randseed = k.get("randseed").map(|v| parse_u64("randseed", v)).transpose()?;
        let fsync_every = parse_flushes(&k)?;
        let name = k.get("name").map(as_text).unwrap_or_else(|| mode.rw.name().to_string());
        let pacing = parse_pacing(&k)?;
        let dist = parse_distribution(&k, &bs, &region)?;
        let pacing = parse_rate_process(&k, pacing, bs.min_bs())?;
        let flow = parse_flow_and_target(&k)?;
        Ok(Workload {
            name,
            rw: mode.rw,
            sizes: bs.sizes,
            blockalign_bytes: region.blockalign_bytes,
            offset_bytes: region.offset_bytes,
            size_bytes: region.size_bytes,
            io_limit_bytes: limits.io_limit_bytes,
            number_ios: limits.number_ios,
            runtime_ns: limits.runtime_ns,
            iodepth,
            rwmixread_percent,
            data_pattern,
            interval_ns,
            randseed,
            fsync_every,
            bs_range: bs.bs_range,
            seq_add_bytes: mode.seq_add_bytes,
            seq_nr: mode.seq_nr,
            rate_bytes_per_s: pacing.rate_bytes_per_s,
            rate_iops: pacing.rate_iops,
            thinktime_ns: pacing.thinktime_ns,
            thinktime_blocks: pacing.thinktime_blocks,
            startdelay_ns: pacing.startdelay_ns,
            zones: dist.zones,
            skew: dist.skew,
            write_sizes: bs.write_sizes,
            write_blockalign_bytes: region.write_blockalign_bytes,
            loop_bytes: dist.loop_bytes,
            rate_poisson: pacing.rate_poisson,
            flow_id: flow.flow_id,
            flow_weight: flow.flow_weight,
            flow_sleep_ns: flow.flow_sleep_ns,
            latency_target_ns: flow.latency_target_ns,
            latency_window_ns: flow.latency_window_ns,
            latency_percentile: flow.latency_percentile,
            latency_run: flow.latency_run,
        })
    }
}

fn parse_mode(k: &Keys<'_>) -> Result<Mode> {
    let rw_text = k
        .get("rw")
        .or(k.get("readwrite"))
        .map(as_text)
        .ok_or_else(|| werr("rw", "missing: give rw = read, write, randread, randwrite, readwrite, randrw, trim or randtrim"))?;
    let (mode_text, modifier) = match rw_text.trim().split_once(':') {
        Some((m, n)) => (m.trim().to_string(), Some(n.trim().to_string())),
        None => (rw_text.trim().to_string(), None),
    };
    let rw = RwMode::parse(&mode_text).ok_or_else(|| {
        werr(
            "rw",
            format!("'{rw_text}' is not allowed; use read, write, randread, randwrite, readwrite, randrw, trim, randtrim, trimwrite or randtrimwrite"),
        )
    })?;
    let (seq_add_bytes, seq_nr) = parse_rw_modifier(rw, modifier.as_deref(), k.capacity_bytes)?;
    Ok(Mode { rw, seq_add_bytes, seq_nr })
}

/// `bsrange`, else `bssplit`, else `bs` (4 KiB by default), and `write_bssplit`.
fn parse_block_sizes(k: &Keys<'_>) -> Result<BlockSizes> {
    let mut sizes = Vec::new();
    let mut bs_range = None;
    if let Some(range) = k.get("bsrange") {
        let text = as_text(range);
        let (lo, hi) = text.split_once('-').ok_or_else(|| werr("bsrange", format!("'{text}' is not MIN-MAX, e.g. 4k-64k")))?;
        let lo = k.size("bsrange", &Value::String(lo.trim().into()))?;
        let hi = k.size("bsrange", &Value::String(hi.trim().into()))?;
        if lo == 0 || hi < lo {
            return Err(werr("bsrange", format!("'{text}': give MIN-MAX with 0 < MIN <= MAX")));
        }
        sizes.push((lo, 1));
        if hi > lo {
            sizes.push((hi, 1));
            bs_range = Some((lo, hi));
        }
    } else if let Some(split) = k.get("bssplit") {
        sizes = parse_bssplit(&as_text(split), k.capacity_bytes)?;
    } else {
        let bs = match k.get("bs") {
            Some(b) => k.size("bs", b)?,
            None => 4096,
        };
        sizes.push((bs, 1));
    }
    let field = if k.get("bsrange").is_some() {
        "bsrange"
    } else if k.get("bssplit").is_some() {
        "bssplit"
    } else {
        "bs"
    };
    check_block_sizes(field, &sizes)?;
    let write_sizes = match k.get("write_bssplit") {
        Some(split) => parse_bssplit(&as_text(split), k.capacity_bytes).map_err(|e| match e {
            SimError::Workload { message, .. } => werr("write_bssplit", message),
            e => e,
        })?,
        None => Vec::new(),
    };
    check_block_sizes("write_bssplit", &write_sizes)?;
    Ok(BlockSizes { sizes, bs_range, write_sizes })
}

fn check_block_sizes(field: &str, sizes: &[(u64, u32)]) -> Result<()> {
    for &(b, _) in sizes {
        if b == 0 || b % SECTOR_BYTES != 0 || b > (64 << 20) {
            return Err(werr(field, format!("{b} bytes: block sizes must be multiples of 512 B from 512 B to 64 MiB")));
        }
    }
    Ok(())
}

/// `blockalign` (the smallest read size by default), `offset` and `size`.
fn parse_region(k: &Keys<'_>, bs: &BlockSizes) -> Result<Region> {
    let capacity_bytes = k.capacity_bytes;
    let read_min_bs = bs.sizes.iter().map(|x| x.0).min().unwrap();
    let blockalign_bytes = match k.get("blockalign") {
        Some(a) => k.size("blockalign", a)?,
        None => read_min_bs,
    };
    let write_blockalign_bytes = match (k.get("blockalign"), bs.write_sizes.iter().map(|x| x.0).min()) {
        (None, Some(b)) => b,
        _ => blockalign_bytes,
    };
    if blockalign_bytes == 0 || blockalign_bytes % SECTOR_BYTES != 0 {
        return Err(werr("blockalign", format!("{blockalign_bytes}: must be a positive multiple of 512 B")));
    }
    let offset_bytes = match k.get("offset") {
        Some(o) => k.size("offset", o)?,
        None => 0,
    };
    if offset_bytes % SECTOR_BYTES != 0 || offset_bytes >= capacity_bytes {
        return Err(werr("offset", format!("{offset_bytes}: must be a multiple of 512 B below the capacity ({capacity_bytes} B)")));
    }
    let size_bytes = match k.get("size") {
        Some(s) => k.size("size", s)?,
        None => capacity_bytes - offset_bytes,
    };
    if size_bytes == 0 || offset_bytes + size_bytes > capacity_bytes {
        return Err(werr(
            "size",
            format!("offset {offset_bytes} + size {size_bytes} must be within the drive's {capacity_bytes} B (and size > 0)"),
        ));
    }
    let max_bs = bs.max_bs();
    if size_bytes < max_bs {
        return Err(werr("size", format!("{size_bytes} B is smaller than the largest block size {max_bs} B")));
    }
    Ok(Region { blockalign_bytes, write_blockalign_bytes, offset_bytes, size_bytes })
}

/// `io_size`, `number_ios`, `runtime` and `time_based`, within the maxima
/// unless `force`.
fn parse_limits(k: &Keys<'_>, bs: &BlockSizes, size_bytes: u64) -> Result<Limits> {
    let io_limit = match k.get("io_size").or(k.get("io_limit")) {
        Some(s) => Some(k.size("io_size", s)?),
        None => None,
    };
    // fio: number_ios = 0 (its default) sets no limit.
    let number_ios = k.get("number_ios").map(|v| parse_u64("number_ios", v)).transpose()?.filter(|n| *n > 0);
    let force = k.bool_or("force", false)?;
    let runtime_ns = match k.get("runtime") {
        Some(v) if !force && parse_time_ns_f64("runtime", v)? > MAX_RUNTIME_NS as f64 => {
            return Err(werr(
                "runtime",
                format!(
                    "'{}' is more than the maximum of 7 days ({} s) of simulated time per job; {FORCE_HINT}",
                    as_text(v),
                    MAX_RUNTIME_NS / 1_000_000_000
                ),
            ));
        }
        Some(v) => Some(parse_time_ns("runtime", v)?),
        None => None,
    };
    if runtime_ns == Some(0) {
        return Err(werr("runtime", "must be longer than 0"));
    }
    if !force {
        let io_text = k.get("io_size").or(k.get("io_limit")).map(as_text).unwrap_or_default();
        check_job_bounds(io_limit.map(|b| (b, io_text)), number_ios, bs.min_bs(), k.capacity_bytes)?;
    }
    let time_based = k.get("time_based").map(|v| parse_bool("time_based", v)).transpose()?;
    // fio: without a byte/count limit a job does one pass over its region;
    // a runtime makes it time based unless io_size says otherwise.
    let io_limit_bytes = match (io_limit, number_ios, runtime_ns, time_based) {
        (Some(l), _, _, _) => Some(l),
        (None, Some(_), _, _) => None,
        (None, None, Some(_), Some(false)) => Some(size_bytes),
        (None, None, Some(_), _) => None,
        (None, None, None, Some(true)) => {
            return Err(werr("time_based", "time_based needs a runtime"));
        }
        (None, None, None, _) => Some(size_bytes),
    };
    Ok(Limits { io_limit_bytes, number_ios, runtime_ns })
}

/// `iodepth` and the read share of a mix (`rwmixread` or `rwmixwrite`).
fn parse_queue(k: &Keys<'_>) -> Result<(u32, u32)> {
    let iodepth = k.u64_or("iodepth", 1)?;
    if iodepth == 0 || iodepth > MAX_IODEPTH as u64 {
        return Err(werr(
            "iodepth",
            format!(
                "{iodepth}: must be 1..={MAX_IODEPTH} (a SATA drive's NCQ takes up to 32 at once, an NVMe queue queue_depth - 1; more wait in the host queue)"
            ),
        ));
    }
    let rwmixread_percent = match (k.get("rwmixread"), k.get("rwmixwrite")) {
        (Some(v), _) => parse_u64("rwmixread", v)?,
        (None, Some(v)) => 100u64.saturating_sub(parse_u64("rwmixwrite", v)?),
        _ => 50,
    };
    if rwmixread_percent > 100 {
        return Err(werr("rwmixread", format!("{rwmixread_percent}: must be 0..=100")));
    }
    Ok((iodepth as u32, rwmixread_percent as u32))
}

/// `log_avg_msec` (1 s by default), in ns.
fn parse_interval_ns(k: &Keys<'_>) -> Result<u64> {
    let interval_ms = k.u64_or("log_avg_msec", 1000)?;
    if !(1..=MAX_LOG_AVG_MSEC).contains(&interval_ms) {
        return Err(werr("log_avg_msec", format!("{interval_ms}: must be from 1 ms to {MAX_LOG_AVG_MSEC} ms (one year)")));
    }
    Ok(interval_ms * 1_000_000)
}

/// `fsync` or `fdatasync`: a FLUSH CACHE after every N writes (0: none).
fn parse_flushes(k: &Keys<'_>) -> Result<u64> {
    let flush_period = |key: &str| -> Result<u64> {
        match k.get(key) {
            None => Ok(0),
            Some(v) => parse_u64(key, v).map_err(|_| {
                werr(
                    key,
                    format!("'{}' is not allowed: give a whole number >= 0 (a FLUSH CACHE after every N writes; 0: none)", as_text(v)),
                )
            }),
        }
    };
    let fsync = flush_period("fsync")?;
    let fdatasync = flush_period("fdatasync")?;
    if fsync > 0 && fdatasync > 0 && fsync != fdatasync {
        return Err(werr(
            "fdatasync",
            format!("{fdatasync} with fsync = {fsync}: on a block device both are a FLUSH CACHE; give one of them"),
        ));
    }
    Ok(fsync.max(fdatasync))
}

/// `rate`, `rate_iops`, `thinktime`, `thinktime_blocks` and `startdelay`
/// (`rate_process` comes after the distribution, see [`parse_rate_process`]).
fn parse_pacing(k: &Keys<'_>) -> Result<Pacing> {
    let rate_bytes_per_s = k.get("rate").map(|v| k.size("rate", v)).transpose()?.unwrap_or(0);
    let rate_iops = k.u64_or("rate_iops", 0)?;
    let thinktime_ns = k.time_ns_or_0("thinktime")?;
    let thinktime_blocks = k.u64_or("thinktime_blocks", 1)?;
    if thinktime_blocks == 0 {
        return Err(werr("thinktime_blocks", "must be 1 or more"));
    }
    let startdelay_ns = k.time_ns_or_0("startdelay")?;
    Ok(Pacing { rate_bytes_per_s, rate_iops, thinktime_ns, thinktime_blocks, startdelay_ns, rate_poisson: false })
}

/// `random_distribution` (a skew, or zones of the region) and `loop_bytes`.
fn parse_distribution(k: &Keys<'_>, bs: &BlockSizes, region: &Region) -> Result<Distribution> {
    let skew = k.get("random_distribution").map(|v| Skew::parse(&as_text(v))).transpose()?.flatten();
    let zones = match k.get("random_distribution") {
        Some(v) if skew.is_none() => parse_zones(&as_text(v), region.size_bytes, bs.max_bs(), region.blockalign_bytes, k.capacity_bytes)?,
        _ => Vec::new(),
    };
    let loop_bytes = k.get("loop_bytes").map(|v| k.size("loop_bytes", v)).transpose()?.unwrap_or(0);
    Ok(Distribution { skew, zones, loop_bytes })
}

/// `rate_process`: linear, or poisson (which needs a rate).
fn parse_rate_process(k: &Keys<'_>, pacing: Pacing, min_bs: u64) -> Result<Pacing> {
    let rate_poisson = match k.get("rate_process").map(as_text).as_deref().map(str::trim) {
        None | Some("linear") => false,
        Some("poisson") => true,
        Some(other) => return Err(werr("rate_process", format!("'{other}' is not allowed; use linear or poisson"))),
    };
    if rate_poisson {
        let iops = if pacing.rate_bytes_per_s > 0 { pacing.rate_bytes_per_s / min_bs } else { pacing.rate_iops };
        if iops == 0 {
            return Err(werr(
                "rate_process",
                "poisson needs a rate of at least one I/O of the smallest block size per second (rate or rate_iops)",
            ));
        }
    }
    Ok(Pacing { rate_poisson, ..pacing })
}

/// `flow`, `flow_id`, `flow_sleep` and the `latency_*` keys.
fn parse_flow_and_target(k: &Keys<'_>) -> Result<FlowAndTarget> {
    let flow_weight = k.u64_or("flow", 0)?;
    if flow_weight > MAX_FLOW_WEIGHT {
        return Err(werr("flow", format!("{flow_weight}: must be 0..={MAX_FLOW_WEIGHT} (fio's limit; 0: not in a flow)")));
    }
    let flow_id = k.u64_or("flow_id", 0)?;
    let flow_sleep_ns = k.time_ns_or_0("flow_sleep")?;
    let latency_target_ns = k.time_ns_or_0("latency_target")?;
    let latency_window_ns = k.time_ns_or_0("latency_window")?;
    let latency_percentile = match k.get("latency_percentile") {
        None => 100.0,
        Some(v) => as_text(v)
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .ok_or_else(|| werr("latency_percentile", format!("'{}': give a percentage 0..100", as_text(v))))?,
    };
    let latency_run = k.bool_or("latency_run", false)?;
    Ok(FlowAndTarget {
        flow_id,
        flow_weight: flow_weight as u32,
        flow_sleep_ns,
        latency_target_ns,
        latency_window_ns,
        latency_percentile,
        latency_run,
    })
}
