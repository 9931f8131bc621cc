//! fio iolog, versions 2 and 3 (`read_iolog=` / `write_iolog=` files).
//!
//! The first line is `fio version 2 iolog` or `fio version 3 iolog`. Then:
//! - v2: `filename action offset length`, or `filename add|open|close`;
//! - v3: `timestamp filename action offset length`, or `timestamp filename add|open|close`.
//!
//! Actions `read`, `write`, `trim` carry byte offset and length; `sync` and
//! `datasync` become flushes; `add`/`open`/`close` (file management) and `wait`
//! are counted as non-I/O lines. The v3 timestamp is in **microseconds** since
//! the start of the run: fio writes it with `utime_since_now()` and replays the
//! gaps as microsecond delays (iolog.c). v2 has no timestamps: every record is
//! at time 0 and the report says `has_timestamps = false` (v2 `wait` delays are
//! not interpreted). The device is the file name.

use super::device::DeviceKey;
use super::line::{FieldNames, NotIo, Parsed, RawIo};
use super::num::{parse_u64, quote, scale, FieldError};
use crate::trace::TraceOp;

pub(crate) const NAMES: FieldNames = FieldNames { time: "timestamp", offset: "offset", size: "length", device: "filename" };

const HEADER_V2: &str = "fio version 2 iolog";
const HEADER_V3: &str = "fio version 3 iolog";
const NS_PER_US: u64 = 1_000;

#[derive(Clone, Debug, Default)]
pub(crate) struct Parser {
    /// 2 or 3 once the header line has been read.
    version: Option<u8>,
}

impl Parser {
    pub fn has_timestamps(&self) -> bool {
        self.version == Some(3)
    }

    pub fn parse_line<'a>(&mut self, line: &'a str) -> Result<Parsed<'a>, FieldError> {
        let Some(version) = self.version else {
            let t = line.trim();
            self.version = Some(if t.starts_with(HEADER_V2) {
                2
            } else if t.starts_with(HEADER_V3) {
                3
            } else {
                return Err(FieldError::new(
                    "header",
                    format!("found {}, expected '{HEADER_V2}' or '{HEADER_V3}' as the first line", quote(t)),
                ));
            });
            return Ok(Parsed::NotIo(NotIo::Header));
        };
        let mut tokens = line.split_ascii_whitespace();
        let time_ns = if version == 3 {
            let t = tokens.next().unwrap_or("");
            scale(parse_u64(t, "timestamp")?, NS_PER_US, "timestamp", "microseconds")?
        } else {
            0
        };
        let (Some(filename), Some(action)) = (tokens.next(), tokens.next()) else {
            return Err(FieldError::new(
                "line",
                if version == 3 {
                    "expected 'timestamp filename action [offset length]'"
                } else {
                    "expected 'filename action [offset length]'"
                },
            ));
        };
        let (offset, length) = (tokens.next(), tokens.next());
        if let Some(extra) = tokens.next() {
            return Err(FieldError::new("line", format!("unexpected field {} after the length", quote(extra))));
        }
        let op = match action {
            "add" | "open" | "close" => {
                if offset.is_some() {
                    return Err(FieldError::new("line", format!("file action '{action}' takes no offset or length")));
                }
                return Ok(Parsed::NotIo(NotIo::Event));
            }
            "wait" => return Ok(Parsed::NotIo(NotIo::Event)),
            "read" => TraceOp::Read,
            "write" => TraceOp::Write,
            "trim" => TraceOp::Trim,
            "sync" | "datasync" => TraceOp::Flush,
            _ => {
                return Err(FieldError::new(
                    "action",
                    format!("found {}, expected read, write, trim, sync, datasync, wait, add, open or close", quote(action)),
                ))
            }
        };
        let (offset_bytes, length_bytes) = if op == TraceOp::Flush {
            (0, 0)
        } else {
            let (Some(offset), Some(length)) = (offset, length) else {
                return Err(FieldError::new(
                    if offset.is_none() { "offset" } else { "length" },
                    format!("missing: '{action}' needs an offset and a length in bytes"),
                ));
            };
            (parse_u64(offset, "offset")?, parse_u64(length, "length")?)
        };
        Ok(Parsed::Io(RawIo {
            time_ns,
            op,
            offset_bytes,
            length_bytes,
            device: DeviceKey::Name(filename),
            recorded_latency_ns: 0,
            iodepth: 0,
            data_pattern: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(text: &'static str) -> Result<Vec<Parsed<'static>>, FieldError> {
        let mut p = Parser::default();
        text.lines().map(|l| p.parse_line(l)).collect()
    }

    #[test]
    fn version_2_has_no_times() {
        let out = parse_all(
            "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 4096 8192\n/dev/sdb read 0 512\n/dev/sdb sync 0 0\n/dev/sdb trim 8192 4096\n/dev/sdb close",
        )
        .unwrap();
        let ios: Vec<_> = out
            .iter()
            .filter_map(|p| match p {
                Parsed::Io(io) => Some((io.time_ns, io.op, io.offset_bytes, io.length_bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(
            ios,
            [(0, TraceOp::Write, 4096, 8192), (0, TraceOp::Read, 0, 512), (0, TraceOp::Flush, 0, 0), (0, TraceOp::Trim, 8192, 4096)]
        );
        assert_eq!(out.iter().filter(|p| **p == Parsed::NotIo(NotIo::Event)).count(), 3);
    }

    #[test]
    fn version_3_times_are_microseconds() {
        let out = parse_all("fio version 3 iolog\n2 /dev/nvme0n1 add\n872 /dev/nvme0n1 open\n878 /dev/nvme0n1 write 0 16384\n10001677 /dev/nvme0n1 datasync 0 0").unwrap();
        let Parsed::Io(w) = out[3] else { panic!("{:?}", out[3]) };
        assert_eq!((w.time_ns, w.op, w.length_bytes, w.device), (878_000, TraceOp::Write, 16384, DeviceKey::Name("/dev/nvme0n1")));
        let Parsed::Io(s) = out[4] else { panic!() };
        assert_eq!((s.time_ns, s.op), (10_001_677_000, TraceOp::Flush));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(parse_all("fio version 1 iolog").unwrap_err().field, "header");
        assert_eq!(parse_all("fio version 2 iolog\nf erase 0 1").unwrap_err().field, "action");
        assert_eq!(parse_all("fio version 2 iolog\nf read 0").unwrap_err().field, "length");
        assert_eq!(parse_all("fio version 2 iolog\nf read x 1").unwrap_err().field, "offset");
        assert_eq!(parse_all("fio version 3 iolog\nsoon f read 0 1").unwrap_err().field, "timestamp");
        assert_eq!(parse_all("fio version 3 iolog\n1 f add 0").unwrap_err().field, "line");
    }
}
