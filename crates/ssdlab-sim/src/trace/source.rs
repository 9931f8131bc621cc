//! A trace given as plain data, opened as one stream of records: a file with
//! its import options (`{"file": PATH, ...options}`), or a generated Storage
//! Bench trace (`{"generated": ID, "seed": N}`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::import::{self, ImportOptions, ImportReport, TraceReader, IMPORT_OPTION_KEYS};
use super::storage_bench::{try_generate, Generator, StorageBench};
use super::{TraceError, TraceRecord};
use crate::error::Result;
use crate::parse::{get, known_keys, object, werr};

/// Where a trace's records come from.
#[derive(Clone, Debug)]
pub enum TraceSource {
    File { path: PathBuf, options: ImportOptions },
    Generated { bench: StorageBench, capacity_bytes: u64, seed: u64 },
}

impl TraceSource {
    /// `{"file": PATH, ...}` with the import options of
    /// [`ImportOptions::from_json`] (the capacity defaults to
    /// `capacity_bytes`), or `{"generated": ID, "seed": N}` (the seed defaults
    /// to `default_seed`) for a drive of `capacity_bytes`.
    pub fn from_json(v: &Value, capacity_bytes: u64, default_seed: u64) -> Result<TraceSource> {
        let o = object(v, "(source)")?;
        match (get(o, "file"), get(o, "generated")) {
            (Some(f), None) => {
                let path = f.as_str().ok_or_else(|| werr("file", "expected a path"))?;
                let mut keys: Vec<&str> = IMPORT_OPTION_KEYS.to_vec();
                keys.push("file");
                let options = ImportOptions::from_json(o, &keys, Some(capacity_bytes))?;
                Ok(TraceSource::File { path: PathBuf::from(path), options })
            }
            (None, Some(g)) => {
                known_keys(o, &["generated", "seed"], "key for a generated trace")?;
                let seed = get(o, "seed").map(|v| v.as_u64().ok_or_else(|| werr("seed", "expected a whole number"))).transpose()?;
                let bench = StorageBench::parse(g.as_str().unwrap_or("")).map_err(|m| werr("generated", m))?;
                Ok(TraceSource::Generated { bench, capacity_bytes, seed: seed.unwrap_or(default_seed) })
            }
            _ => Err(werr("(source)", "give exactly one of 'file' or 'generated'")),
        }
    }

    /// Start streaming the records.
    pub fn open(&self) -> Result<Records> {
        Ok(match self {
            TraceSource::File { path, options } => Records::File(Box::new(import::open(Path::new(path), options)?)),
            TraceSource::Generated { bench, capacity_bytes, seed } => {
                Records::Generated(Box::new(try_generate(*bench, *capacity_bytes, *seed)?))
            }
        })
    }
}

/// The records of a [`TraceSource`], in issue order.
pub enum Records {
    File(Box<TraceReader>),
    Generated(Box<Generator>),
}

impl Records {
    /// What the import of a file did (complete once the records ran out).
    pub fn import_report(&self) -> Option<&ImportReport> {
        match self {
            Records::File(r) => Some(r.report()),
            Records::Generated(_) => None,
        }
    }
}

impl Iterator for Records {
    type Item = std::result::Result<TraceRecord, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Records::File(r) => r.next(),
            Records::Generated(g) => g.next().map(Ok),
        }
    }
}
