//! MSR Cambridge block traces (SNIA IOTTA set 388; Narayanan et al., FAST '08).
//!
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no header:
//! Timestamp and ResponseTime in Windows FILETIME units (100 ns), Offset and
//! Size in bytes, Type `Read` or `Write`. The device is `Hostname_DiskNumber`
//! (e.g. `hm_0`, the name of the published file).

use super::device::DeviceKey;
use super::line::{is_csv_header, read_or_write, FieldNames, NotIo, Parsed, RawIo};
use super::num::{parse_u64, scale, split_fields, FieldError};

const FIELDS: [&str; 7] = ["Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"];

pub(crate) const NAMES: FieldNames = FieldNames { time: "Timestamp", offset: "Offset", size: "Size", device: "Hostname_DiskNumber" };

/// 100-ns FILETIME units per ns.
const NS_PER_FILETIME_UNIT: u64 = 100;

pub(crate) fn parse_line(line_no: u64, line: &str) -> Result<Parsed<'_>, FieldError> {
    if line_no == 1 && is_csv_header(line, &FIELDS) {
        return Ok(Parsed::NotIo(NotIo::Header));
    }
    let [time, host, disk, op, offset, size, response] = split_fields(line, ',', &FIELDS, false)?;
    let time_ns = scale(parse_u64(time, "Timestamp")?, NS_PER_FILETIME_UNIT, "Timestamp", "FILETIME units")?;
    if host.is_empty() {
        return Err(FieldError::new("Hostname", "empty, expected a host name such as 'hm'"));
    }
    let disk = parse_u64(disk, "DiskNumber")?;
    let op = read_or_write(op, "Type", "Read or Write")?;
    let recorded_latency_ns = scale(parse_u64(response, "ResponseTime")?, NS_PER_FILETIME_UNIT, "ResponseTime", "FILETIME units")?;
    Ok(Parsed::Io(RawIo {
        time_ns,
        op,
        offset_bytes: parse_u64(offset, "Offset")?,
        length_bytes: parse_u64(size, "Size")?,
        device: DeviceKey::HostDisk(host, disk),
        recorded_latency_ns,
        iodepth: 0,
        data_pattern: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;

    #[test]
    fn parses_a_published_line() {
        let p = parse_line(1, "128166385295514663,hm,0,Write,9056014336,2048,2833").unwrap();
        assert_eq!(
            p,
            Parsed::Io(RawIo {
                time_ns: 12_816_638_529_551_466_300,
                op: TraceOp::Write,
                offset_bytes: 9_056_014_336,
                length_bytes: 2048,
                device: DeviceKey::HostDisk("hm", 0),
                recorded_latency_ns: 283_300,
                iodepth: 0,
                data_pattern: None,
            })
        );
        assert_eq!(parse_line(1, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").unwrap(), Parsed::NotIo(NotIo::Header));
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_line(3, "128166385295514663,hm,0,Erase,9056014336,2048,2833").unwrap_err();
        assert_eq!(e.field, "Type");
        assert!(e.message.contains("'Erase'") && e.message.contains("Read or Write"));
        assert_eq!(parse_line(3, "1,hm,0,Read,-5,2048,1").unwrap_err().field, "Offset");
        assert_eq!(parse_line(3, "1,hm,0,Read,5,2048").unwrap_err().field, "line");
        // A header is only a header on line 1.
        assert!(parse_line(2, "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").is_err());
    }
}
