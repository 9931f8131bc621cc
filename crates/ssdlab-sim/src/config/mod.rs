//! Drive description: parsed from TOML (presets, user files) or JSON (the Python
//! binding's dicts), validated here, with units last in every field name.
//!
//! - `sections`: the sections of a description (drive, host, controller, NAND,
//!   FTL, data reduction, power), one struct each;
//! - `validate`: every rule, with one error naming the field, the value and
//!   what is allowed;
//! - `geometry`: what follows from a description ([`Geometry`]: dies, slots,
//!   spare area), the map-format limits and the memory estimate.
//!
//! A description may name a controller profile and a NAND part of the
//! [`crate::library`]; it is composed with them before it is parsed.

mod geometry;
mod host;
mod sections;
#[cfg(test)]
mod tests;
mod validate;
mod wording;

pub use geometry::{
    map_unit_units, memory_estimate_bytes, revmap_bytes_reserved, Geometry, DEFAULT_MEMORY_LIMIT_BYTES, LEN_SHIFT, REVMAP_CHUNK_ENTRIES,
};
pub use host::*;
pub use sections::*;

use crate::error::{Result, SimError};
use serde::{Deserialize, Serialize};
use wording::{explain_serde, path_or_top};

/// The mapping unit of the FTL: 4KB.
pub const UNIT_BYTES: u64 = 4096;
pub use crate::parse::SECTOR_BYTES;

/// Where each value of a drive comes from, by dotted key, and the keys its
/// document overrides: (key, the library's value as JSON text, where). See
/// [`DriveConfig::provenance`].
pub type Provenance = (Vec<(String, String)>, Vec<(String, String, String)>);

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    pub drive: DriveSection,
    pub host: HostSection,
    pub controller: ControllerSection,
    pub nand: NandSection,
    pub ftl: FtlSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_reduction: Option<DataReductionSection>,
    #[serde(default)]
    pub power: PowerSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheSection>,
}

/// TOML values with no JSON counterpart (nan, inf, dates) would reach the
/// fields as null or as serde's private datetime key: name them here instead.
fn reject_non_numbers(v: &toml::Value, path: &str) -> Result<()> {
    let at = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match v {
        toml::Value::Float(f) if !f.is_finite() => {
            Err(SimError::config(path_or_top(path), format!("{f} is not a finite number: give a finite value")))
        }
        toml::Value::Datetime(d) => Err(SimError::config(
            path_or_top(path),
            format!("{d} is a TOML date/time: no drive field takes one (give a number or a string)"),
        )),
        toml::Value::Table(t) => t.iter().try_for_each(|(k, x)| reject_non_numbers(x, &at(k))),
        toml::Value::Array(a) => a.iter().enumerate().try_for_each(|(i, x)| reject_non_numbers(x, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

impl DriveConfig {
    pub fn from_toml_str(text: &str) -> Result<DriveConfig> {
        if let Ok(doc) = toml::from_str::<toml::Value>(text) {
            reject_non_numbers(&doc, "")?;
            if let Ok(v) = serde_json::to_value(&doc) {
                if crate::library::names_parts(&v) {
                    return Self::from_composed(crate::library::compose(v)?);
                }
            }
        }
        let de = toml::Deserializer::new(text);
        let cfg: DriveConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            let line = inner.span().map(|s| text.as_bytes()[..s.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
            let msg = match line {
                Some(l) => format!("{} (line {l})", explain_serde(&msg)),
                None => explain_serde(&msg),
            };
            SimError::config(path_or_top(&path), msg)
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Fill fields that follow from a preset (`host.interface`, and on NVMe
    /// `host.pcie_gen` and `host.pcie_lanes`).
    pub fn normalize(&mut self) -> Result<()> {
        let h = &mut self.host;
        match h.interface {
            Some(Interface::Nvme) => {
                let gens = PCIE_GENS.iter().map(|g| g.0.to_string()).collect::<Vec<_>>().join(", ");
                let lanes = PCIE_LANES.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ");
                let Some(gen) = h.pcie_gen else {
                    return Err(SimError::config("host.pcie_gen", format!("missing: an NVMe drive needs its PCIe generation ({gens})")));
                };
                if !PCIE_GENS.iter().any(|g| g.0 == gen) {
                    return Err(SimError::config("host.pcie_gen", format!("{gen} is not a PCIe generation the link knows: {gens}")));
                }
                let Some(n) = h.pcie_lanes else {
                    return Err(SimError::config("host.pcie_lanes", format!("missing: an NVMe drive needs its PCIe lane count ({lanes})")));
                };
                let (Some(rate), Some(oh)) = (pcie_link_bytes_per_s(gen, n), pcie_command_overhead_ns(gen, n)) else {
                    return Err(SimError::config("host.pcie_lanes", format!("{n} lanes: a PCIe link has {lanes}")));
                };
                if h.link_bytes_per_s == 0 {
                    h.link_bytes_per_s = rate;
                }
                if h.command_overhead_ns == 0 {
                    h.command_overhead_ns = oh;
                }
            }
            Some(i) => {
                if h.link_bytes_per_s == 0 {
                    h.link_bytes_per_s = i.link_bytes_per_s().unwrap_or(0);
                }
                if h.command_overhead_ns == 0 {
                    h.command_overhead_ns = i.command_overhead_ns().unwrap_or(0);
                }
            }
            None => {
                if h.link_bytes_per_s == 0 {
                    return Err(SimError::config(
                        "host.link_bytes_per_s",
                        "is 0 or missing: the link speed in bytes/s is needed (1e6..1e11; SATA 6Gbps is about 550000000); give it and command_overhead_ns, or host.interface = \"sata-3g\", \"sata-6g\" or \"nvme\"",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Switch the host link to a SATA preset (the same drive on SATA 3Gbps
    /// and 6Gbps); an NVMe link is set by `host.pcie_gen` and `host.pcie_lanes`.
    pub fn set_interface(&mut self, i: Interface) {
        if let (Some(rate), Some(oh)) = (i.link_bytes_per_s(), i.command_overhead_ns()) {
            self.host.interface = Some(i);
            self.host.link_bytes_per_s = rate;
            self.host.command_overhead_ns = oh;
        }
    }

    pub fn from_json_str(text: &str) -> Result<DriveConfig> {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if crate::library::names_parts(&v) {
                return Self::from_composed(crate::library::compose(v)?);
            }
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let cfg: DriveConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            SimError::config(path_or_top(&path), explain_serde(&e.into_inner().to_string()))
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// A drive from a document composed with its profile and part; an error
    /// names the field and, for a library value, where it came from.
    pub fn from_composed(c: crate::library::Composed) -> Result<DriveConfig> {
        let cfg: DriveConfig = serde_path_to_error::deserialize(&c.doc).map_err(|e| {
            let path = path_or_top(&e.path().to_string());
            let msg = explain_serde(&e.into_inner().to_string());
            match c.provenance.get(&path) {
                Some(from) => SimError::config(&path, format!("{msg} (value from {from})")),
                None => SimError::config(&path, msg),
            }
        })?;
        let mut cfg = cfg;
        cfg.normalize()?;
        cfg.validate().map_err(|e| match e {
            SimError::Config { field, message } => match c.provenance.get(&field) {
                Some(from) if from != "drive file" => SimError::Config { message: format!("{message} (value from {from})"), field },
                _ => SimError::Config { field, message },
            },
            other => other,
        })?;
        Ok(cfg)
    }

    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("config serialises")
    }

    /// Stable 64-bit FNV-1a hash of the canonical JSON form, as 16 hex digits.
    pub fn hash_hex(&self) -> String {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in self.to_json_string().bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        format!("{h:016x}")
    }

    /// Where each value of a composed drive comes from, by dotted key ("part
    /// ID", "profile ID", "drive file", "drive file (over ...)", "derived: ...",
    /// "default"), in the canonical order of the drive's fields; and the keys the
    /// document overrides: (key, the library's value as JSON text, where).
    pub fn provenance(doc: serde_json::Value) -> Result<Provenance> {
        let c = crate::library::compose(doc)?;
        let cfg = DriveConfig::from_composed(c.clone())?;
        let full: serde_json::Value = serde_json::from_str(&cfg.to_json_string()).expect("canonical JSON");
        let mut out = Vec::new();
        for (section, fields) in full.as_object().into_iter().flatten() {
            for (k, _) in fields.as_object().into_iter().flatten() {
                let key = format!("{section}.{k}");
                let from = match c.provenance.get(&key) {
                    Some(f) => f.clone(),
                    None if section == "host" && (k == "link_bytes_per_s" || k == "command_overhead_ns") => {
                        if cfg.host.is_nvme() {
                            "derived: host.pcie_gen, host.pcie_lanes".into()
                        } else {
                            "derived: host.interface".into()
                        }
                    }
                    None => "default".into(),
                };
                out.push((key, from));
            }
        }
        let overrides = c.overrides.iter().map(|(k, v, from)| (k.clone(), v.to_string(), from.clone())).collect();
        Ok((out, overrides))
    }
}
