//! A trace's statistics as one document: a file's (with its import report)
//! or a generated Storage Bench trace's, each side by side with the published
//! figures when there are some.

use std::path::Path;

use serde_json::{json, Value};

use super::import::{self, ImportOptions, IMPORT_OPTION_KEYS};
use super::stats::{TraceStats, TraceStatsBuilder};
use super::storage_bench::{published, try_generate, StorageBench};
use super::TraceRecord;
use crate::error::Result;
use crate::parse::{get, object, parse_bytes, werr};

/// Records between two calls of the `keep_going` callback while streaming.
pub const CHECK_EVERY_RECORDS: u64 = 1 << 18;

/// Statistics as JSON, with the text summary under `summary_text`.
pub fn stats_json(s: &TraceStats) -> Value {
    let mut v = s.to_json();
    v["summary_text"] = Value::String(s.to_string());
    v
}

/// Summarise records, calling `keep_going` every [`CHECK_EVERY_RECORDS`];
/// None once it returns false.
fn summarise<E>(
    records: impl Iterator<Item = std::result::Result<TraceRecord, E>>,
    keep_going: &mut dyn FnMut() -> bool,
) -> std::result::Result<Option<TraceStats>, E> {
    let mut b = TraceStatsBuilder::new();
    let mut n = 0u64;
    for rec in records {
        b.push(&rec?);
        n += 1;
        if n.is_multiple_of(CHECK_EVERY_RECORDS) && !keep_going() {
            return Ok(None);
        }
    }
    Ok(Some(b.finish()))
}

/// Import a trace file (streaming; gzip/bzip2/xz by magic bytes) and
/// summarise it. `options`: the import options of [`ImportOptions::from_json`]
/// (`capacity_bytes` required), `compare_with` (a Storage Bench id) and
/// `memory_limit_bytes` (what the import may hold; default 8 GiB).
/// Returns `{"file", "stats", "import", "published"?, "comparison"?}`, or
/// None when `keep_going` stopped it.
pub fn file_summary(path: &Path, options: &Value, keep_going: &mut dyn FnMut() -> bool) -> Result<Option<Value>> {
    let o = object(options, "(options)")?;
    let mut keys: Vec<&str> = IMPORT_OPTION_KEYS.to_vec();
    keys.push("compare_with");
    keys.push("memory_limit_bytes");
    let mut opts = ImportOptions::from_json(o, &keys, None)?;
    if let Some(v) = get(o, "memory_limit_bytes") {
        opts.memory_limit_bytes = parse_bytes("memory_limit_bytes", v, 0)?;
    }
    let compare =
        get(o, "compare_with").map(|v| StorageBench::parse(v.as_str().unwrap_or("")).map_err(|m| werr("compare_with", m))).transpose()?;
    let mut reader = import::open(path, &opts)?;
    let Some(stats) = summarise(&mut reader, keep_going)? else {
        return Ok(None);
    };
    let mut res = json!({
        "file": path.to_string_lossy(),
        "stats": stats_json(&stats),
        "import": reader.report().to_json(),
    });
    if let Some(w) = compare {
        let p = published(w);
        res["published"] = p.to_json();
        res["comparison"] = p.compare_json(&stats);
    }
    Ok(Some(res))
}

/// Generate a Storage Bench trace (streaming, not stored) and summarise it
/// side by side with the published figures: `{"bench", "name",
/// "capacity_bytes", "seed", "stats", "published", "comparison"}`, or None
/// when `keep_going` stopped it.
pub fn generated_summary(
    bench: StorageBench,
    capacity_bytes: u64,
    seed: u64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Option<Value>> {
    let gen = try_generate(bench, capacity_bytes, seed)?;
    let Some(stats) = summarise(gen.map(Ok::<_, std::convert::Infallible>), keep_going).unwrap_or_else(|e| match e {}) else {
        return Ok(None);
    };
    let p = published(bench);
    Ok(Some(json!({
        "bench": bench.id(),
        "name": bench.name(),
        "capacity_bytes": capacity_bytes,
        "seed": seed,
        "stats": stats_json(&stats),
        "published": p.to_json(),
        "comparison": p.compare_json(&stats),
    })))
}
