//! DiskSim / MQSim ASCII traces, as shipped with MQSim and SSDsim.
//!
//! Whitespace-separated `time_ns device lba_sectors size_sectors type`, with
//! type 1 = read and 0 = write (MQSim: `Request_Arrival_Time(ns) Device_Number
//! Starting_Logical_Sector_Address Request_Size_In_Sectors Type`). Times are
//! nanoseconds, integer or decimal (some converted traces carry floating-point
//! artefacts); a fractional part is truncated. Original DiskSim traces in
//! milliseconds are not this format.

use super::device::DeviceKey;
use super::line::{FieldNames, Parsed, RawIo};
use super::num::{parse_scaled, parse_u64, quote, scale, split_whitespace, FieldError, SECTOR_BYTES};
use crate::trace::TraceOp;

const FIELDS: [&str; 5] = ["time_ns", "device", "lba_sectors", "size_sectors", "type"];

pub(crate) const NAMES: FieldNames = FieldNames { time: "time_ns", offset: "lba_sectors", size: "size_sectors", device: "device" };

pub(crate) fn parse_line(line: &str) -> Result<Parsed<'_>, FieldError> {
    let [time, device, lba, size, op] = split_whitespace(line, &FIELDS)?;
    let op = match op {
        "1" => TraceOp::Read,
        "0" => TraceOp::Write,
        _ => return Err(FieldError::new("type", format!("found {}, expected 1 (read) or 0 (write)", quote(op)))),
    };
    Ok(Parsed::Io(RawIo {
        time_ns: parse_scaled(time, 0, "time_ns", "a non-negative number of nanoseconds")?,
        device: DeviceKey::Number(parse_u64(device, "device")?),
        offset_bytes: scale(parse_u64(lba, "lba_sectors")?, SECTOR_BYTES, "lba_sectors", "sectors")?,
        length_bytes: scale(parse_u64(size, "size_sectors")?, SECTOR_BYTES, "size_sectors", "sectors")?,
        op,
        recorded_latency_ns: 0,
        iodepth: 0,
        data_pattern: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_integer_and_decimal_times() {
        let Parsed::Io(io) = parse_line("78643005 0 303574 7 0").unwrap() else { panic!() };
        assert_eq!((io.time_ns, io.op, io.offset_bytes, io.length_bytes), (78_643_005, TraceOp::Write, 303_574 * 512, 3584));
        let Parsed::Io(io) = parse_line("11413000.75\t3  657728 16 1").unwrap() else { panic!() };
        assert_eq!((io.time_ns, io.op, io.device), (11_413_000, TraceOp::Read, DeviceKey::Number(3)));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(parse_line("0 0 1 8 2").unwrap_err().field, "type");
        assert_eq!(parse_line("0 0 1 eight 1").unwrap_err().field, "size_sectors");
        assert_eq!(parse_line("-3 0 1 8 1").unwrap_err().field, "time_ns");
        assert_eq!(parse_line("0 0 1 8").unwrap_err().field, "line");
    }
}
