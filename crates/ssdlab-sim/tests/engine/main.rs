//! The engine's integration tests, one binary: each module is a test file
//! of its own (behaviour, physics, presets, parsers, replay, ...), built and
//! linked once instead of once per file.

mod behaviours;
mod common;
mod flush;
mod fuzz_parsers;
mod jobs;
mod limits;
mod map_cache;
mod nvme;
mod physics;
mod presets;
mod processor;
mod property;
mod reads;
mod recycle;
mod replay;
mod slc_cache;
mod storage_bench_generate;
mod stories_trim;
mod trace_import;
