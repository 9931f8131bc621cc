//! UMass Trace Repository / Storage Performance Council (SPC) format
//! (Financial1/2, WebSearch1-3).
//!
//! `ASU,LBA,Size,Opcode,Timestamp[,optional fields]`: LBA in 512-byte sectors
//! of the ASU (application storage unit = the device), Size in bytes, Opcode
//! `r`/`R`/`w`/`W`, Timestamp in seconds (decimal) from the start of the trace.
//! The SPC specification allows further optional fields; they are ignored.

use super::device::DeviceKey;
use super::line::{FieldNames, Parsed, RawIo};
use super::num::{parse_u64, quote, scale, seconds_to_ns, split_fields, FieldError, SECTOR_BYTES};
use crate::trace::TraceOp;

const FIELDS: [&str; 5] = ["ASU", "LBA", "Size", "Opcode", "Timestamp"];

pub(crate) const NAMES: FieldNames = FieldNames { time: "Timestamp", offset: "LBA", size: "Size", device: "ASU" };

pub(crate) fn parse_line(line: &str) -> Result<Parsed<'_>, FieldError> {
    let [asu, lba, size, op, time] = split_fields(line, ',', &FIELDS, true)?;
    let op = match op {
        "r" | "R" => TraceOp::Read,
        "w" | "W" => TraceOp::Write,
        _ => return Err(FieldError::new("Opcode", format!("found {}, expected r, R, w or W", quote(op)))),
    };
    Ok(Parsed::Io(RawIo {
        device: DeviceKey::Number(parse_u64(asu, "ASU")?),
        offset_bytes: scale(parse_u64(lba, "LBA")?, SECTOR_BYTES, "LBA", "sectors")?,
        length_bytes: parse_u64(size, "Size")?,
        op,
        time_ns: seconds_to_ns(time, "Timestamp")?,
        recorded_latency_ns: 0,
        iodepth: 0,
        data_pattern: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_first_financial1_record() {
        let p = parse_line("0,303567,3584,w,0.000000").unwrap();
        assert_eq!(
            p,
            Parsed::Io(RawIo {
                time_ns: 0,
                op: TraceOp::Write,
                offset_bytes: 303_567 * 512,
                length_bytes: 3584,
                device: DeviceKey::Number(0),
                recorded_latency_ns: 0,
                iodepth: 0,
                data_pattern: None,
            })
        );
        // Optional trailing SPC fields are allowed.
        let Parsed::Io(io) = parse_line("1,8,4096,R,12.000551,extra").unwrap() else { panic!() };
        assert_eq!((io.op, io.time_ns, io.offset_bytes), (TraceOp::Read, 12_000_551_000, 4096));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(parse_line("0,303567,3584,x,0.0").unwrap_err().field, "Opcode");
        assert_eq!(parse_line("0,303567,3584,w,yesterday").unwrap_err().field, "Timestamp");
        assert_eq!(parse_line("0,-1,3584,w,0").unwrap_err().field, "LBA");
    }
}
