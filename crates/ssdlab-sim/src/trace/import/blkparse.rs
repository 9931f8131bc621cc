//! `blkparse` text output in its default format (blktrace, Linux):
//!
//! ```text
//!   8,0    3        5     0.000010000  1234  D   W 223490 + 8 [kjournald]
//! ```
//! `maj,min cpu sequence seconds.nanoseconds pid action RWBS sector + nsectors [process]`.
//!
//! One action is taken as the I/O: `D` (issued to the driver, the default) or
//! `Q` (queued by the block layer). Every other event line (`Q`, `G`, `M`, `I`,
//! `C`, `P`, `U`, messages, ...) is counted as a non-I/O line, as is the
//! summary text blkparse prints at the end. The RWBS field gives the operation:
//! `R` read, `W` write, `D` discard (-> trim), `F` flush; a leading `F` is a
//! pre-flush (`FWS` with no data is a flush; with data, a write); `N` (no
//! data) events are not I/O. Custom `-f` formats are not supported.

use super::device::DeviceKey;
use super::line::{FieldNames, NotIo, Parsed, RawIo};
use super::num::{parse_u64, quote, scale, seconds_to_ns, FieldError, SECTOR_BYTES};
use super::BlkparseEvent;
use crate::trace::TraceOp;

pub(crate) const NAMES: FieldNames = FieldNames { time: "time", offset: "sector", size: "nsectors", device: "maj,min" };

#[derive(Clone, Debug)]
pub(crate) struct Parser {
    action: &'static str,
}

/// What the RWBS field says about the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rwbs {
    Data { op: TraceOp, preflush: bool },
    Flush,
    NoData,
}

fn parse_rwbs(text: &str) -> Result<Rwbs, FieldError> {
    let b = text.as_bytes();
    let (preflush, op) = match b {
        [b'F', second @ (b'R' | b'W' | b'D' | b'N' | b'F'), ..] => (true, *second),
        [first, ..] => (false, *first),
        [] => (false, b' '),
    };
    Ok(match op {
        b'R' => Rwbs::Data { op: TraceOp::Read, preflush },
        b'W' => Rwbs::Data { op: TraceOp::Write, preflush },
        b'D' => Rwbs::Data { op: TraceOp::Trim, preflush },
        b'F' => Rwbs::Flush,
        b'N' if preflush => Rwbs::Flush,
        b'N' => Rwbs::NoData,
        _ => {
            return Err(FieldError::new(
                "rwbs",
                format!("found {}, expected RWBS flags starting with R, W, D (discard), F (flush) or N", quote(text)),
            ))
        }
    })
}

/// `maj,min` with decimal numbers.
fn is_device(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    token.split_once(',').is_some_and(|(maj, min)| digits(maj) && digits(min))
}

impl Parser {
    pub fn new(event: BlkparseEvent) -> Parser {
        Parser {
            action: match event {
                BlkparseEvent::Issue => "D",
                BlkparseEvent::Queue => "Q",
            },
        }
    }

    pub fn parse_line<'a>(&self, line: &'a str) -> Result<Parsed<'a>, FieldError> {
        let mut tokens = line.split_ascii_whitespace();
        let device = tokens.next().unwrap_or("");
        if !is_device(device) {
            return Ok(Parsed::NotIo(NotIo::Text));
        }
        let mut head = [""; 6];
        for (i, slot) in head.iter_mut().enumerate() {
            *slot = tokens.next().ok_or_else(|| {
                FieldError::new(
                    "line",
                    format!("event line has {} field(s), expected at least 7: maj,min cpu sequence time pid action rwbs", i + 1),
                )
            })?;
        }
        let [_cpu, _sequence, time, _pid, action, rwbs] = head;
        if action != self.action {
            return Ok(Parsed::NotIo(NotIo::Event));
        }
        let time_ns = seconds_to_ns(time, "time")?;
        let kind = parse_rwbs(rwbs)?;
        // `sector + nsectors`, when present.
        let sector_text = tokens.next();
        let extent = match (sector_text, tokens.next(), tokens.next()) {
            (Some(sector), Some("+"), Some(count)) => {
                let sector = parse_u64(sector, "sector")?;
                let count = parse_u64(count, "nsectors")?;
                Some((scale(sector, SECTOR_BYTES, "sector", "sectors")?, scale(count, SECTOR_BYTES, "nsectors", "sectors")?))
            }
            _ => None,
        };
        let (op, offset_bytes, length_bytes) = match (kind, extent) {
            (Rwbs::NoData, _) => return Ok(Parsed::NotIo(NotIo::Event)),
            (Rwbs::Flush, _) => (TraceOp::Flush, 0, 0),
            // An empty pre-flush write is how the kernel sends a cache flush.
            (Rwbs::Data { op: TraceOp::Write, preflush: true }, None | Some((_, 0))) => (TraceOp::Flush, 0, 0),
            (Rwbs::Data { op, .. }, Some((offset, length))) => (op, offset, length),
            (Rwbs::Data { .. }, None) => {
                return Err(FieldError::new(
                    "sector",
                    format!("found {}, expected 'SECTOR + NSECTORS' after the RWBS field", quote(sector_text.unwrap_or(""))),
                ))
            }
        };
        Ok(Parsed::Io(RawIo {
            time_ns,
            op,
            offset_bytes,
            length_bytes,
            device: DeviceKey::Name(device),
            recorded_latency_ns: 0,
            iodepth: 0,
            data_pattern: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io<'a>(p: &Parser, line: &'a str) -> RawIo<'a> {
        match p.parse_line(line).unwrap() {
            Parsed::Io(io) => io,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn takes_issue_events_and_counts_the_rest_as_events() {
        let p = Parser::new(BlkparseEvent::Issue);
        let r = io(&p, "  8,0    3        5     0.000010000  1234  D   W 223490 + 8 [kjournald]");
        assert_eq!(
            (r.time_ns, r.op, r.offset_bytes, r.length_bytes, r.device),
            (10_000, TraceOp::Write, 223_490 * 512, 4096, DeviceKey::Name("8,0"))
        );
        assert_eq!(io(&p, "8,16 0 9 1.5 77 D RA 100 + 256 [cat]").op, TraceOp::Read);
        assert_eq!(io(&p, "8,16 0 9 1.5 77 D DS 100 + 2048 [fstrim]").op, TraceOp::Trim);
        assert_eq!(io(&p, "8,16 0 9 1.5 77 D FWS 0 + 0 [jbd2]").op, TraceOp::Flush);
        assert_eq!(io(&p, "8,16 0 9 1.5 77 D FWS [jbd2]").op, TraceOp::Flush);
        assert_eq!(io(&p, "8,16 0 9 1.5 77 D FN [kworker]").op, TraceOp::Flush);
        let fua = io(&p, "8,16 0 9 1.5 77 D WFS 64 + 8 [jbd2]");
        assert_eq!((fua.op, fua.length_bytes), (TraceOp::Write, 4096));
        let preflush_write = io(&p, "8,16 0 9 1.5 77 D FWFS 64 + 8 [jbd2]");
        assert_eq!(preflush_write.op, TraceOp::Write);
        for other in [
            "8,0 3 1 0.000000000 1234 Q W 223490 + 8 [kjournald]",
            "8,0 3 6 0.000300000 0 C W 223490 + 8 [0]",
            "8,0 3 0 0.000000000 0 m N cfq1234 insert_request",
            "8,0 3 7 0.1 0 D N 0 (12 34) [sg_inq]",
        ] {
            assert_eq!(p.parse_line(other).unwrap(), Parsed::NotIo(NotIo::Event), "{other}");
        }
        for text in ["CPU0 (8,0):", " Reads Queued:           0,        0KiB", "Total (8,0):"] {
            assert_eq!(p.parse_line(text).unwrap(), Parsed::NotIo(NotIo::Text), "{text}");
        }
    }

    #[test]
    fn queue_events_can_be_taken_instead() {
        let p = Parser::new(BlkparseEvent::Queue);
        assert_eq!(io(&p, "8,0 3 1 0.25 1234 Q R 8 + 8 [dd]").time_ns, 250_000_000);
        assert_eq!(p.parse_line("8,0 3 5 0.5 1234 D R 8 + 8 [dd]").unwrap(), Parsed::NotIo(NotIo::Event));
    }

    #[test]
    fn errors_name_the_field() {
        let p = Parser::new(BlkparseEvent::Issue);
        assert_eq!(p.parse_line("8,0 3 5 0.1 1 D W x + 8 [a]").unwrap_err().field, "sector");
        assert_eq!(p.parse_line("8,0 3 5 0.1 1 D W 8 + y [a]").unwrap_err().field, "nsectors");
        assert_eq!(p.parse_line("8,0 3 5 0.1 1 D W [a]").unwrap_err().field, "sector");
        assert_eq!(p.parse_line("8,0 3 5 0.1 1 D X 8 + 8 [a]").unwrap_err().field, "rwbs");
        assert_eq!(p.parse_line("8,0 3 5 zero 1 D W 8 + 8 [a]").unwrap_err().field, "time");
        assert_eq!(p.parse_line("8,0 3 5 0.1").unwrap_err().field, "line");
    }
}
