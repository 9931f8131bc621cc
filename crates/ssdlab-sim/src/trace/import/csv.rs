//! ssdlab's own CSV, as `ssdlab trace generate --out FILE.csv` (and
//! [`crate::trace::export`]) writes it: the header
//! `time_ns,op,offset_bytes,length_bytes,iodepth,recorded_latency_ns,data_pattern`
//! on line 1, then one record per line with every field of a
//! [`TraceRecord`](crate::trace::TraceRecord): time in ns, op `read`,
//! `write`, `trim` or `sync` (`flush`), byte offset and length, the iodepth
//! at issue (0 = unknown), the recorded latency in ns (0 = none) and the
//! data pattern of a write. So a written trace reads back record for record.
//! There is one device, numbered 0.

use super::device::DeviceKey;
use super::line::{is_csv_header, FieldNames, NotIo, Parsed, RawIo};
use super::num::{parse_u64, quote, split_fields, FieldError};
use crate::pattern::DataPattern;
use crate::trace::TraceOp;

const FIELDS: [&str; 7] = ["time_ns", "op", "offset_bytes", "length_bytes", "iodepth", "recorded_latency_ns", "data_pattern"];

pub(crate) const NAMES: FieldNames =
    FieldNames { time: "time_ns", offset: "offset_bytes", size: "length_bytes", device: "device (always 0)" };

pub(crate) fn parse_line(line_no: u64, line: &str) -> Result<Parsed<'_>, FieldError> {
    if line_no == 1 && is_csv_header(line, &FIELDS) {
        return Ok(Parsed::NotIo(NotIo::Header));
    }
    let [time, op, offset, length, iodepth, latency, pattern] = split_fields(line, ',', &FIELDS, false)?;
    let op = match op.to_ascii_lowercase().as_str() {
        "read" => TraceOp::Read,
        "write" => TraceOp::Write,
        "trim" => TraceOp::Trim,
        "sync" | "flush" => TraceOp::Flush,
        _ => return Err(FieldError::new("op", format!("found {}, expected read, write, trim or sync", quote(op)))),
    };
    let iodepth = parse_u64(iodepth, "iodepth")?;
    let iodepth = u16::try_from(iodepth).map_err(|_| FieldError::new("iodepth", format!("found {iodepth}, expected at most 65535")))?;
    let data_pattern = DataPattern::parse(pattern).map_err(|m| FieldError::new("data_pattern", m))?;
    Ok(Parsed::Io(RawIo {
        time_ns: parse_u64(time, "time_ns")?,
        op,
        offset_bytes: parse_u64(offset, "offset_bytes")?,
        length_bytes: parse_u64(length, "length_bytes")?,
        device: DeviceKey::Number(0),
        recorded_latency_ns: parse_u64(latency, "recorded_latency_ns")?,
        iodepth,
        data_pattern: Some(data_pattern),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::export::CSV_HEADER;

    #[test]
    fn the_written_header_and_records_read_back() {
        assert!(is_csv_header(CSV_HEADER, &FIELDS));
        assert_eq!(parse_line(1, CSV_HEADER).unwrap(), Parsed::NotIo(NotIo::Header));
        assert_eq!(
            parse_line(2, "216,write,23190667264,8192,2,285781,ratio:0.5").unwrap(),
            Parsed::Io(RawIo {
                time_ns: 216,
                op: TraceOp::Write,
                offset_bytes: 23_190_667_264,
                length_bytes: 8192,
                device: DeviceKey::Number(0),
                recorded_latency_ns: 285_781,
                iodepth: 2,
                data_pattern: Some(DataPattern::Ratio { permille: 500 }),
            })
        );
        assert!(matches!(parse_line(3, "5,sync,0,0,1,0,incompressible").unwrap(), Parsed::Io(RawIo { op: TraceOp::Flush, .. })));
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(parse_line(2, "0,erase,0,4096,1,0,zeros").unwrap_err().field, "op");
        assert_eq!(parse_line(2, "0,read,0,4096,70000,0,zeros").unwrap_err().field, "iodepth");
        assert_eq!(parse_line(2, "0,read,0,4096,1,0,lumpy").unwrap_err().field, "data_pattern");
        assert_eq!(parse_line(2, "x,read,0,4096,1,0,zeros").unwrap_err().field, "time_ns");
        assert_eq!(parse_line(2, "0,read,0,4096,1,0").unwrap_err().field, "line");
    }
}
