//! Storage Bench workload generators (see STORAGE_BENCH.md).
