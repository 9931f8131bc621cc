//! Shared parts: NAND part files and controller profiles, and the composition
//! of a drive from them.
//!
//! A drive file names its controller profile (`drive.controller`) and its
//! NAND part (`drive.nand_part`) and gives only its counts (channels,
//! packages, dies, capacity). Composition starts from the profile's sections
//! (host link, controller and firmware, FTL, data reduction, controller
//! power), adds the part's (geometry, timings, endurance, per-operation
//! energy), derives what follows from both (the channel rate: the slower of
//! the controller's NAND bus and the part's interface), then lays the file's
//! own values on top. A value the file sets that the profile or part also
//! sets is an *override*: allowed in a user's "what if" file, refused in a
//! shipped preset (tests/presets.rs), and shown by `ssdlab drive show`.
//!
//! The library ships inside the engine (`library/nand/*.toml`,
//! `library/controllers/*.toml`), so Rust tests, examples and the Python
//! package compose drives alike.

use crate::error::{Result, SimError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Which kind of library file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    NandPart,
    Controller,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::NandPart => "part",
            Kind::Controller => "profile",
        }
    }
    /// The metadata table of a file of this kind.
    fn meta_table(self) -> &'static str {
        match self {
            Kind::NandPart => "part",
            Kind::Controller => "profile",
        }
    }
    /// The drive-file field that names a file of this kind.
    fn field(self) -> &'static str {
        match self {
            Kind::NandPart => "drive.nand_part",
            Kind::Controller => "drive.controller",
        }
    }
    /// The sections a file of this kind may define.
    fn sections(self) -> &'static [&'static str] {
        match self {
            Kind::NandPart => &["nand", "power"],
            Kind::Controller => &["host", "controller", "nand", "ftl", "data_reduction", "power", "slc_cache"],
        }
    }
}

macro_rules! lib_files {
    ($dir:literal: $($id:literal),* $(,)?) => {
        &[$(($id, include_str!(concat!("../library/", $dir, "/", $id, ".toml")))),*]
    };
}

/// The NAND parts shipped with the engine, by id.
pub const NAND_PARTS: &[(&str, &str)] = lib_files!("nand":
    "imft-34nm-l63b",
    "imft-25nm-l74a",
    "intel-25nm-het",
    "hynix-32nm",
    "toshiba-24nm-toggle",
    "toshiba-19nm-toggle",
    "samsung-2xnm-toggle1",
    "samsung-21nm-toggle2",
    "sandisk-19nm-abl",
    "samsung-128l-tlc",
    "imft-64l-qlc",
    "samsung-9xl-tlc",
    "samsung-9xl-qlc",
    "micron-64l-tlc",
    "kioxia-bics5-tlc",
    "generic-tlc",
    "generic-qlc",
);

/// The controller profiles (controller + firmware) shipped with the engine, by id.
pub const CONTROLLERS: &[(&str, &str)] = lib_files!("controllers":
    "generic-2011",
    "sf-1200",
    "sf-2281",
    "sf-2500",
    "everest2-fw13",
    "everest2-fw14",
    "everest2-fw15",
    "barefoot3",
    "barefoot3-m00",
    "marvell-9174-crucial",
    "marvell-9174-intel",
    "marvell-9187-sandisk",
    "intel-pc29as21ba0",
    "intel-pc29as21ba0-320",
    "intel-pc29as21ca0",
    "lamd-lm87800",
    "samsung-mcx",
    "samsung-mdx",
    "samsung-elpis",
    "samsung-pablo",
    "sm2263",
    "samsung-phoenix",
    "samsung-mkx",
    "sm2258",
    "wd-mp16",
    "generic-nvme",
);

fn files(kind: Kind) -> &'static [(&'static str, &'static str)] {
    match kind {
        Kind::NandPart => NAND_PARTS,
        Kind::Controller => CONTROLLERS,
    }
}

/// One library file, parsed.
#[derive(Clone, Debug)]
pub struct LibraryEntry {
    pub kind: Kind,
    pub id: String,
    /// The metadata table (`[part]` or `[profile]`): name, source, ranges.
    pub meta: Map<String, Value>,
    /// The drive sections the file defines.
    pub sections: Map<String, Value>,
    pub text: &'static str,
}

impl LibraryEntry {
    pub fn name(&self) -> &str {
        self.meta.get("name").and_then(Value::as_str).unwrap_or(&self.id)
    }
    /// The datasheet range `[min, max]` of a part value (`[part.range]`).
    pub fn range(&self, key: &str) -> Option<(f64, f64)> {
        let r = self.meta.get("range")?.get(key)?.as_array()?;
        Some((r.first()?.as_f64()?, r.get(1)?.as_f64()?))
    }
    /// A part's interface rate (`part.interface_bytes_per_s`).
    pub fn interface_bytes_per_s(&self) -> Option<u64> {
        self.meta.get("interface_bytes_per_s").and_then(Value::as_u64)
    }
}

fn toml_to_json(text: &str) -> std::result::Result<Value, String> {
    let v: toml::Value = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text.as_bytes()[..s.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
        let msg = crate::parse::one_line(e.message());
        match line {
            Some(l) => format!("{msg} (line {l})"),
            None => msg,
        }
    })?;
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// Parse a library file; a broken shipped file is a packaging bug named by id.
fn parse_entry(kind: Kind, id: &str, text: &'static str) -> Result<LibraryEntry> {
    let field = format!("{} {id}", kind.label());
    let doc = toml_to_json(text).map_err(|e| SimError::config(&field, e))?;
    let Value::Object(mut top) = doc else { unreachable!("a TOML document is a table") };
    let meta = match top.remove(kind.meta_table()) {
        Some(Value::Object(m)) => m,
        _ => return Err(SimError::config(&field, format!("missing the [{}] table", kind.meta_table()))),
    };
    if meta.get("id").and_then(Value::as_str) != Some(id) {
        return Err(SimError::config(&field, format!("[{}] id must be '{id}' (its file name)", kind.meta_table())));
    }
    for k in top.keys() {
        if !kind.sections().contains(&k.as_str()) {
            return Err(SimError::config(
                &field,
                format!("section [{k}] is not for a {}; allowed: {}", kind.label(), kind.sections().join(", ")),
            ));
        }
    }
    Ok(LibraryEntry { kind, id: id.to_string(), meta, sections: top, text })
}

/// A library file by id.
pub fn entry(kind: Kind, id: &str) -> Result<LibraryEntry> {
    match files(kind).iter().find(|(i, _)| *i == id) {
        Some((i, text)) => parse_entry(kind, i, text),
        None => {
            let known: Vec<&str> = files(kind).iter().map(|(i, _)| *i).collect();
            Err(SimError::config(kind.field(), format!("unknown {} '{id}'; known: {}", kind.label(), known.join(", "))))
        }
    }
}

/// Every library file of a kind, parsed.
pub fn entries(kind: Kind) -> Result<Vec<LibraryEntry>> {
    files(kind).iter().map(|(i, t)| parse_entry(kind, i, t)).collect()
}

/// Where each value of a composed drive came from, by dotted key.
pub type Provenance = BTreeMap<String, String>;

/// A drive document (TOML or JSON, as a JSON value) composed with the
/// profile and part it names.
#[derive(Clone, Debug)]
pub struct Composed {
    pub doc: Value,
    pub provenance: Provenance,
    /// Keys the file sets that its profile or part also sets: (key, what the
    /// library says, where).
    pub overrides: Vec<(String, Value, String)>,
}

fn leaves(prefix: &str, v: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
    for (k, x) in v {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match x {
            Value::Object(m) => leaves(&key, m, out),
            Value::Null if prefix.is_empty() => {}
            _ => out.push((key, x.clone())),
        }
    }
}

fn set_leaf(doc: &mut Map<String, Value>, key: &str, v: Value) {
    // Leaf keys are section.field: `compose` refuses a section that is not a table.
    let Some((section, field)) = key.split_once('.') else { return };
    let s = doc.entry(section.to_string()).or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = s {
        m.insert(field.to_string(), v);
    }
}

fn get_leaf<'a>(doc: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    let (section, field) = key.split_once('.')?;
    doc.get(section)?.get(field)
}

fn named(doc: &Map<String, Value>, kind: Kind) -> Result<Option<String>> {
    let key = &kind.field()["drive.".len()..];
    match doc.get("drive").and_then(|d| d.get(key)) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(SimError::config(kind.field(), format!("must be a string (a {} id), not {other}", kind.label()))),
    }
}

/// Every top-level value of a drive document is a section (or null).
fn check_sections(file: &Map<String, Value>) -> Result<()> {
    for (k, v) in file {
        if !v.is_object() && !v.is_null() {
            let mut shown = v.to_string();
            if shown.chars().count() > 40 {
                shown = format!("{}...", shown.chars().take(40).collect::<String>());
            }
            return Err(SimError::config(k, format!("must be a section, a table of fields ([{k}] in TOML), not {shown}")));
        }
    }
    Ok(())
}

/// The channel runs at the slower of the controller's NAND bus (the
/// profile's nand.channel_bytes_per_s) and the part's interface.
fn channel_rate(p: &LibraryEntry, base: &mut Map<String, Value>, provenance: &mut Provenance) {
    let Some(rate) = p.interface_bytes_per_s() else {
        return;
    };
    let key = "nand.channel_bytes_per_s";
    match get_leaf(base, key).and_then(Value::as_u64) {
        Some(bus) if bus > rate => {
            set_leaf(base, key, Value::from(rate));
            provenance.insert(key.into(), format!("derived: part {} interface {rate} B/s, below the controller's bus {bus}", p.id));
        }
        Some(bus) => {
            let by = provenance.get(key).cloned().unwrap_or_default();
            provenance.insert(key.into(), format!("{by} (controller bus {bus} B/s, within part {} interface {rate})", p.id));
        }
        None => {
            set_leaf(base, key, Value::from(rate));
            provenance.insert(key.into(), format!("part {} interface", p.id));
        }
    }
}

/// Compose a drive document with the profile and part it names (none: the
/// document as it is, every value from the file).
pub fn compose(doc: Value) -> Result<Composed> {
    let Value::Object(file) = doc else {
        return Err(SimError::config("(top level)", "a drive description is a table of sections"));
    };
    check_sections(&file)?;
    let profile = named(&file, Kind::Controller)?.map(|id| entry(Kind::Controller, &id)).transpose()?;
    let part = named(&file, Kind::NandPart)?.map(|id| entry(Kind::NandPart, &id)).transpose()?;
    let mut base = Map::new();
    let mut provenance = Provenance::new();
    for e in [&profile, &part].into_iter().flatten() {
        let mut ls = Vec::new();
        leaves("", &e.sections, &mut ls);
        for (k, v) in ls {
            if let Some(prev) = provenance.get(&k) {
                return Err(SimError::config(
                    k,
                    format!("set by both {prev} and {} {}: the library must give each value one home", e.kind.label(), e.id),
                ));
            }
            provenance.insert(k.clone(), format!("{} {}", e.kind.label(), e.id));
            set_leaf(&mut base, &k, v);
        }
    }
    if let Some(p) = &part {
        channel_rate(p, &mut base, &mut provenance);
    }
    // A drive file that puts the profile's controller behind the other kind
    // of host (NVMe instead of SATA, or back) replaces the profile's whole
    // host section: a SATA NCQ depth says nothing about NVMe queues.
    // A profile without an interface is a SATA one (the link given as rates).
    let is_nvme = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| s == "nvme");
    let file_nvme = is_nvme(file.get("host").and_then(|h| h.get("interface")));
    let base_nvme = is_nvme(get_leaf(&base, "host.interface")).unwrap_or(false);
    if file_nvme.is_some_and(|f| f != base_nvme) && base.contains_key("host") {
        base.remove("host");
        provenance.retain(|k, _| !k.starts_with("host."));
    }
    let mut overrides = Vec::new();
    let mut ls = Vec::new();
    leaves("", &file, &mut ls);
    for (k, v) in ls {
        if let Some(lib) = get_leaf(&base, &k) {
            let from = provenance.get(&k).cloned().unwrap_or_default();
            if *lib != v {
                provenance.insert(k.clone(), format!("drive file (over {from}: {lib})"));
            }
            overrides.push((k.clone(), lib.clone(), from));
        } else {
            provenance.insert(k.clone(), "drive file".into());
        }
        set_leaf(&mut base, &k, v);
    }
    // A bare `[section]` with no fields (or a null one) still exists in the document.
    for (k, v) in &file {
        if !base.contains_key(k) && (v.is_object() || v.is_null()) {
            base.insert(k.clone(), v.clone());
        }
    }
    Ok(Composed { doc: Value::Object(base), provenance, overrides })
}

/// A TOML drive description as written (not composed), as a JSON value.
pub fn toml_document(text: &str) -> Result<Value> {
    toml_to_json(text).map_err(|e| SimError::config("(top level)", e))
}

/// Compose a TOML drive description.
pub fn compose_toml(text: &str) -> Result<Composed> {
    compose(toml_to_json(text).map_err(|e| SimError::config("(top level)", e))?)
}

/// Whether a drive document names a profile or a part (otherwise it is
/// parsed as it is, with TOML line numbers in its errors).
pub fn names_parts(doc: &Value) -> bool {
    doc.get("drive").is_some_and(|d| d.get("controller").is_some() || d.get("nand_part").is_some())
}

/// Check every library file: parses, ids match, each part value within its
/// datasheet range, a profile's and a part's sections disjoint.
pub fn check_library() -> Result<()> {
    let parts = entries(Kind::NandPart)?;
    let profiles = entries(Kind::Controller)?;
    for p in &parts {
        let mut ls = Vec::new();
        leaves("", &p.sections, &mut ls);
        for (k, v) in &ls {
            let field = k.split_once('.').map(|x| x.1).unwrap_or(k);
            if let (Some((lo, hi)), Some(x)) = (p.range(field), v.as_f64()) {
                if x < lo || x > hi {
                    return Err(SimError::config(format!("part {} {k}", p.id), format!("{x} is outside the datasheet range {lo}..{hi}")));
                }
            }
        }
        for (key, _) in p.meta.get("range").and_then(Value::as_object).into_iter().flatten() {
            if !ls.iter().any(|(k, _)| k.ends_with(&format!(".{key}"))) {
                return Err(SimError::config(format!("part {} range.{key}", p.id), "a range for a value the part does not set"));
            }
        }
    }
    for pr in &profiles {
        let mut ls = Vec::new();
        leaves("", &pr.sections, &mut ls);
        for p in &parts {
            let mut pl = Vec::new();
            leaves("", &p.sections, &mut pl);
            if let Some((k, _)) = ls.iter().find(|(k, _)| pl.iter().any(|(q, _)| q == k)) {
                return Err(SimError::config(
                    k.clone(),
                    format!("set by both profile {} and part {}: each value has one home", pr.id, p.id),
                ));
            }
        }
    }
    Ok(())
}
