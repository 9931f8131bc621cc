//! serde's errors reworded for a drive file: the field's path (or the top
//! level), the types a file may hold instead of Rust's, and a hint when a
//! field's name has the wrong unit.

pub(super) fn path_or_top(p: &str) -> String {
    if p.is_empty() || p == "." {
        "(top level)".to_string()
    } else {
        p.to_string()
    }
}

/// Units we recognise in field names, for the "wrong unit" hint.
const UNIT_SUFFIXES: &[&str] =
    &["_ns", "_us", "_ms", "_s", "_bytes", "_kb", "_mb", "_gb", "_bytes_per_s", "_mb_per_s", "_blocks", "_percent"];

const KNOWN_FIELDS: &[&str] = &[
    "user_capacity_bytes",
    "link_bytes_per_s",
    "command_overhead_ns",
    "command_cost_ns",
    "write_buffer_bytes",
    "command_cost_read_ns",
    "command_cost_write_ns",
    "command_latency_ns",
    "max_write_bytes_per_s",
    "read_decode_bytes_per_s",
    "read_decode_ns",
    "encode_bytes_per_s",
    "die_stripe_bytes",
    "page_size_bytes",
    "tr_ns",
    "tprog_ns",
    "tbers_ns",
    "channel_bytes_per_s",
    "gc_threshold_blocks",
    "bg_gc_threshold_blocks",
    "idle_gc_delay_ns",
    "recycle_bytes_per_s",
    "recycle_bytes_per_s_per_die",
    "readahead_bytes",
    "unmapped_read_ns",
    "map_cache_bytes",
    "metadata_bytes_per_unit",
    "idle_mw",
    "active_mw",
    "read_uj_per_page",
    "program_uj_per_unit",
    "erase_uj_per_block",
    "transfer_pj_per_byte",
];

fn stem(name: &str) -> &str {
    let mut best = name;
    for s in UNIT_SUFFIXES {
        if let Some(b) = name.strip_suffix(s) {
            if b.len() < best.len() {
                best = b;
            }
        }
    }
    best
}

/// Turn serde's wording into ours and add a hint when a field has the wrong unit.
pub(super) fn explain_serde(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            let name = &rest[..end];
            let s = stem(name);
            for k in KNOWN_FIELDS {
                if stem(k) == s && *k != name {
                    return format!("unknown field '{name}': wrong unit? this field is '{k}'");
                }
            }
            let allowed = rest[end + 1..].trim_start_matches(", ").replace('`', "'");
            return format!("unknown field '{name}'; {allowed}");
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        if let Some(end) = rest.find('`') {
            return format!("missing required field '{}'", &rest[..end]);
        }
    }
    let mut out = msg.replace('`', "'");
    // serde names Rust types; say what a drive file may hold instead.
    for (ty, words) in [
        ("u64", "a whole number >= 0"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u16", "a whole number from 0 to 65535"),
        ("u8", "a whole number from 0 to 255"),
        ("i64", "a whole number"),
        ("f64", "a number"),
        ("a boolean", "true or false"),
    ] {
        if let Some(head) = out.strip_suffix(&format!("expected {ty}")) {
            out = format!("{head}expected {words}");
            break;
        }
    }
    crate::parse::one_line(&out)
}
