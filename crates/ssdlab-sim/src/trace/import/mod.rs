//! Importers for public block-trace formats.
