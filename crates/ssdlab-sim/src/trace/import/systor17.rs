//! SNIA SYSTOR '17 enterprise VDI traces (Lee et al., SYSTOR 2017).
//!
//! CSV with header `Timestamp,Response,IOType,LUN,Offset,Size`: Timestamp in
//! Unix epoch seconds with nanosecond digits, Response in seconds, IOType `R`
//! or `W`, Offset and Size in bytes. Rows are roughly in *completion* order,
//! not issue order: the reader's reorder buffer sorts them by Timestamp.

use super::device::DeviceKey;
use super::line::{is_csv_header, read_or_write, FieldNames, NotIo, Parsed, RawIo};
use super::num::{parse_u64, seconds_to_ns, split_fields, FieldError};

const FIELDS: [&str; 6] = ["Timestamp", "Response", "IOType", "LUN", "Offset", "Size"];

pub(crate) const NAMES: FieldNames = FieldNames { time: "Timestamp", offset: "Offset", size: "Size", device: "LUN" };

pub(crate) fn parse_line(line_no: u64, line: &str) -> Result<Parsed<'_>, FieldError> {
    if line_no == 1 && is_csv_header(line, &FIELDS) {
        return Ok(Parsed::NotIo(NotIo::Header));
    }
    let [time, response, op, lun, offset, size] = split_fields(line, ',', &FIELDS, false)?;
    Ok(Parsed::Io(RawIo {
        time_ns: seconds_to_ns(time, "Timestamp")?,
        recorded_latency_ns: seconds_to_ns(response, "Response")?,
        iodepth: 0,
        data_pattern: None,
        op: read_or_write(op, "IOType", "R or W")?,
        device: DeviceKey::Number(parse_u64(lun, "LUN")?),
        offset_bytes: parse_u64(offset, "Offset")?,
        length_bytes: parse_u64(size, "Size")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;

    #[test]
    fn parses_header_and_row() {
        assert_eq!(parse_line(1, "Timestamp,Response,IOType,LUN,Offset,Size").unwrap(), Parsed::NotIo(NotIo::Header));
        let p = parse_line(2, "1455591804.310701000,0.006475000,R,0,203468398592,32768").unwrap();
        assert_eq!(
            p,
            Parsed::Io(RawIo {
                time_ns: 1_455_591_804_310_701_000,
                op: TraceOp::Read,
                offset_bytes: 203_468_398_592,
                length_bytes: 32768,
                device: DeviceKey::Number(0),
                recorded_latency_ns: 6_475_000,
                iodepth: 0,
                data_pattern: None,
            })
        );
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_line(2, "1455591804.3107,0.1,X,0,0,4096").unwrap_err();
        assert_eq!((e.field, e.message.contains("R or W")), ("IOType", true));
        assert_eq!(parse_line(2, "1455591804,0.1s,R,0,0,4096").unwrap_err().field, "Response");
        assert_eq!(parse_line(2, "1455591804,0.1,R,zero,0,4096").unwrap_err().field, "LUN");
    }
}
