//! Tencent Cloud Block Storage traces (SNIA IOTTA; Zhang et al., OSCA, ATC '20).
//!
//! `Timestamp,Offset,Size,IOType,VolumeID`, no header: Timestamp in Unix
//! seconds (1-s resolution), Offset and Size in 512-byte sectors, IOType
//! 0 = read and 1 = write. A file mixes thousands of volumes: select one with
//! `ImportOptions::device`. Rows of neighbouring seconds interleave, so the
//! reorder buffer sorts them.

use super::device::DeviceKey;
use super::line::{FieldNames, Parsed, RawIo};
use super::num::{parse_u64, quote, scale, seconds_to_ns, split_fields, FieldError, SECTOR_BYTES};
use crate::trace::TraceOp;

const FIELDS: [&str; 5] = ["Timestamp", "Offset", "Size", "IOType", "VolumeID"];

pub(crate) const NAMES: FieldNames = FieldNames { time: "Timestamp", offset: "Offset", size: "Size", device: "VolumeID" };

pub(crate) fn parse_line(line: &str) -> Result<Parsed<'_>, FieldError> {
    let [time, offset, size, op, volume] = split_fields(line, ',', &FIELDS, false)?;
    let op = match op {
        "0" => TraceOp::Read,
        "1" => TraceOp::Write,
        _ => return Err(FieldError::new("IOType", format!("found {}, expected 0 (read) or 1 (write)", quote(op)))),
    };
    Ok(Parsed::Io(RawIo {
        time_ns: seconds_to_ns(time, "Timestamp")?,
        offset_bytes: scale(parse_u64(offset, "Offset")?, SECTOR_BYTES, "Offset", "sectors")?,
        length_bytes: scale(parse_u64(size, "Size")?, SECTOR_BYTES, "Size", "sectors")?,
        op,
        device: DeviceKey::Number(parse_u64(volume, "VolumeID")?),
        recorded_latency_ns: 0,
        iodepth: 0,
        data_pattern: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_published_line() {
        assert_eq!(
            parse_line("1538323200,4247200,128,1,1058").unwrap(),
            Parsed::Io(RawIo {
                time_ns: 1_538_323_200_000_000_000,
                op: TraceOp::Write,
                offset_bytes: 4_247_200 * 512,
                length_bytes: 128 * 512,
                device: DeviceKey::Number(1058),
                recorded_latency_ns: 0,
                iodepth: 0,
                data_pattern: None,
            })
        );
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_line("1538323200,4247200,128,W,1058").unwrap_err();
        assert_eq!(e.field, "IOType");
        assert!(e.message.contains("'W'") && e.message.contains("0 (read)"), "{}", e.message);
        assert_eq!(parse_line("1538323200,4247200,128,1,vol").unwrap_err().field, "VolumeID");
    }
}
