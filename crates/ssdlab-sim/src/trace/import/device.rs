//! Devices (disk, volume, LUN, ASU, file) named by trace records: the key a
//! parser borrows from a line, the owned id, device selection, and the table
//! that numbers devices in order of first appearance.

use std::collections::HashMap;
use std::fmt;

/// The device of one record, borrowed from the line (no allocation per record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeviceKey<'a> {
    /// LUN, ASU, DiskSim device, Tencent volume.
    Number(u64),
    /// blkparse `maj,min`, fio file name.
    Name(&'a str),
    /// MSR Cambridge host name and disk number (`hm`, 0), shown as `hm_0`.
    HostDisk(&'a str, u64),
}

/// Which kind of key a format uses (to parse a user's device selection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeviceKind {
    Number,
    Name,
    HostDisk,
}

/// An owned device id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum DeviceId {
    Number(u64),
    Name(Box<str>),
    HostDisk(Box<str>, u64),
}

impl DeviceId {
    pub fn from_key(key: DeviceKey<'_>) -> DeviceId {
        match key {
            DeviceKey::Number(n) => DeviceId::Number(n),
            DeviceKey::Name(s) => DeviceId::Name(s.into()),
            DeviceKey::HostDisk(h, d) => DeviceId::HostDisk(h.into(), d),
        }
    }

    pub fn matches(&self, key: DeviceKey<'_>) -> bool {
        match (self, key) {
            (DeviceId::Number(a), DeviceKey::Number(b)) => *a == b,
            (DeviceId::Name(a), DeviceKey::Name(b)) => &**a == b,
            (DeviceId::HostDisk(h, d), DeviceKey::HostDisk(kh, kd)) => *d == kd && &**h == kh,
            _ => false,
        }
    }

    /// Parse a user's device selection for a format whose records carry `kind`.
    /// `what` names the device in that format ("LUN", "VolumeID", ...).
    pub fn parse_selection(kind: DeviceKind, text: &str, what: &str) -> Result<DeviceId, String> {
        let t = text.trim();
        match kind {
            DeviceKind::Number => t
                .parse::<u64>()
                .map(DeviceId::Number)
                .map_err(|_| format!("device '{text}' is not valid here: the {what} is a non-negative integer")),
            DeviceKind::Name if !t.is_empty() => Ok(DeviceId::Name(t.into())),
            DeviceKind::Name => Err(format!("device '{text}' is empty: give the {what}")),
            DeviceKind::HostDisk => t
                .rfind(['_', ','])
                .and_then(|i| {
                    let (host, disk) = (&t[..i], &t[i + 1..]);
                    let disk = disk.parse::<u64>().ok()?;
                    (!host.is_empty()).then(|| DeviceId::HostDisk(host.into(), disk))
                })
                .ok_or_else(|| format!("device '{text}' is not valid here: the {what} is HOST_DISK, e.g. hm_0")),
        }
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceId::Number(n) => write!(f, "{n}"),
            DeviceId::Name(s) => write!(f, "{s}"),
            DeviceId::HostDisk(h, d) => write!(f, "{h}_{d}"),
        }
    }
}

/// How many distinct devices are tracked (numbered and counted). Beyond this the
/// count stops and concatenation refuses to go on: memory stays bounded.
pub(crate) const MAX_TRACKED_DEVICES: usize = 1 << 20;

/// How many bytes of device names are kept (a name can be a whole 64 KiB
/// line): past this, counting stops as past [`MAX_TRACKED_DEVICES`].
pub(crate) const MAX_TRACKED_DEVICE_NAME_BYTES: usize = 64 << 20;

/// How many device names the report lists.
pub(crate) const MAX_LISTED_DEVICES: usize = 64;

/// Numbers devices 0, 1, 2, ... in order of first appearance in the file.
#[derive(Default)]
pub(crate) struct DeviceTable {
    index: HashMap<DeviceId, u32>,
    last: Option<(DeviceId, u32)>,
    listed: Vec<String>,
    full: bool,
    name_bytes: usize,
}

impl DeviceTable {
    /// The device's number (assigned on first sight), or `None` once more than
    /// [`MAX_TRACKED_DEVICES`] distinct devices have been seen.
    pub fn lookup(&mut self, key: DeviceKey<'_>) -> Option<u32> {
        if let Some((id, k)) = &self.last {
            if id.matches(key) {
                return Some(*k);
            }
        }
        let id = DeviceId::from_key(key);
        let k = match self.index.get(&id) {
            Some(&k) => k,
            None => {
                let name_bytes = match &id {
                    DeviceId::Number(_) => 0,
                    DeviceId::Name(s) | DeviceId::HostDisk(s, _) => s.len(),
                };
                if self.index.len() >= MAX_TRACKED_DEVICES || self.name_bytes + name_bytes > MAX_TRACKED_DEVICE_NAME_BYTES {
                    self.full = true;
                    return None;
                }
                self.name_bytes += name_bytes;
                let k = self.index.len() as u32;
                if self.listed.len() < MAX_LISTED_DEVICES {
                    self.listed.push(id.to_string());
                }
                self.index.insert(id.clone(), k);
                k
            }
        };
        self.last = Some((id, k));
        Some(k)
    }

    pub fn count(&self) -> u64 {
        self.index.len() as u64
    }

    /// True when devices beyond [`MAX_TRACKED_DEVICES`] (or
    /// [`MAX_TRACKED_DEVICE_NAME_BYTES`] of names) were not counted.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The first [`MAX_LISTED_DEVICES`] device names, in order of appearance.
    pub fn listed(&self) -> &[String] {
        &self.listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_parses_per_kind() {
        assert_eq!(DeviceId::parse_selection(DeviceKind::Number, "7", "LUN"), Ok(DeviceId::Number(7)));
        assert!(DeviceId::parse_selection(DeviceKind::Number, "x", "LUN").unwrap_err().contains("LUN"));
        let hm = DeviceId::parse_selection(DeviceKind::HostDisk, "hm_0", "disk").unwrap();
        assert!(hm.matches(DeviceKey::HostDisk("hm", 0)));
        assert!(!hm.matches(DeviceKey::HostDisk("hm", 1)));
        let src = DeviceId::parse_selection(DeviceKind::HostDisk, "src1,2", "disk").unwrap();
        assert_eq!(src.to_string(), "src1_2");
        assert!(DeviceId::parse_selection(DeviceKind::HostDisk, "hm", "disk").is_err());
        let dev = DeviceId::parse_selection(DeviceKind::Name, "8,16", "device").unwrap();
        assert!(dev.matches(DeviceKey::Name("8,16")) && !dev.matches(DeviceKey::Name("8,0")));
    }

    #[test]
    fn table_numbers_devices_in_order_of_appearance() {
        let mut t = DeviceTable::default();
        assert_eq!(t.lookup(DeviceKey::Number(40)), Some(0));
        assert_eq!(t.lookup(DeviceKey::Number(3)), Some(1));
        assert_eq!(t.lookup(DeviceKey::Number(40)), Some(0));
        assert_eq!(t.lookup(DeviceKey::Number(3)), Some(1));
        assert_eq!(t.count(), 2);
        assert_eq!(t.listed(), ["40", "3"]);
    }
}
