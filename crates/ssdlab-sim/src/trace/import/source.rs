//! Opening a trace file as a stream of text lines: transparent gzip / bzip2 / xz
//! decompression (chosen by magic bytes, cross-checked against the extension)
//! and a line reader with 1-based line numbers and a bounded line length.
//!
//! Nothing here holds more than one line plus the decoders' fixed buffers: a
//! multi-gigabyte trace streams through in flat memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::num::FieldError;
use crate::trace::TraceError;

/// Longest accepted line. Real trace lines are under 200 bytes; a longer one
/// means a binary file or a wrong format, and must not grow memory without bound.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

const READ_BUFFER_BYTES: usize = 256 * 1024;

/// How the file is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        }
    }

    fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(b"BZh") {
            Compression::Bzip2
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    fn from_extension(path: &Path) -> Compression {
        let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("gz") => Compression::Gzip,
            Some("bz2") => Compression::Bzip2,
            Some("xz") => Compression::Xz,
            _ => Compression::None,
        }
    }
}

/// The file's display name in messages.
pub(crate) fn display_name(path: &Path) -> String {
    path.display().to_string()
}

fn file_error(file: &str, line: u64, message: String) -> TraceError {
    TraceError { file: file.to_string(), line, field: "file".to_string(), message }
}

/// Open `path` and return a decompressed byte stream. The compression is taken
/// from the magic bytes; a compression extension (.gz, .bz2, .xz) whose magic
/// is missing is an error (a mislabelled or truncated file).
fn open_stream(path: &Path) -> Result<Box<dyn BufRead + Send>, TraceError> {
    let file_name = display_name(path);
    let file = File::open(path).map_err(|e| file_error(&file_name, 0, format!("cannot open: {e}")))?;
    let mut raw = BufReader::with_capacity(READ_BUFFER_BYTES, file);
    let head = raw.fill_buf().map_err(|e| file_error(&file_name, 0, format!("cannot read: {e}")))?;
    let by_magic = Compression::from_magic(head);
    let by_extension = Compression::from_extension(path);
    if by_extension != Compression::None && by_magic != by_extension {
        return Err(file_error(
            &file_name,
            0,
            format!(
                "the name says {} but the file starts like {} data (magic bytes {:02x?})",
                by_extension.name(),
                by_magic.name(),
                &head[..head.len().min(6)]
            ),
        ));
    }
    Ok(match by_magic {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, flate2::bufread::MultiGzDecoder::new(raw))),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, bzip2::bufread::MultiBzDecoder::new(raw))),
        Compression::Xz => Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, xz2::bufread::XzDecoder::new_multi_decoder(raw))),
    })
}

/// One step of reading lines.
pub(crate) enum NextLine<'a> {
    /// A line of text, without its line terminator.
    Text {
        line_no: u64,
        text: &'a str,
    },
    /// A line that is not usable text (not UTF-8, or too long).
    Bad {
        line_no: u64,
        error: FieldError,
    },
    End,
}

/// Reads a (possibly compressed) text file line by line, reusing one buffer.
pub(crate) struct LineReader {
    inner: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line_no: u64,
    file: String,
}

impl LineReader {
    pub fn open(path: &Path) -> Result<LineReader, TraceError> {
        Ok(LineReader { inner: open_stream(path)?, buf: Vec::with_capacity(256), line_no: 0, file: display_name(path) })
    }

    /// The next line. A read or decompression error is fatal (`Err`); a line
    /// that is not text is returned as [`NextLine::Bad`] so it can be skipped.
    pub fn next_line(&mut self) -> Result<NextLine<'_>, TraceError> {
        self.buf.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let n = (&mut self.inner).take(limit).read_until(b'\n', &mut self.buf).map_err(|e| read_error(&self.file, self.line_no, e))?;
        if n == 0 {
            return Ok(NextLine::End);
        }
        self.line_no += 1;
        let line_no = self.line_no;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        } else if self.buf.len() > MAX_LINE_BYTES {
            self.discard_rest_of_line()?;
            return Ok(NextLine::Bad {
                line_no,
                error: FieldError::new(
                    "line",
                    format!("line longer than {MAX_LINE_BYTES} bytes: not a text trace of this format (binary or still-compressed data?)"),
                ),
            });
        }
        match std::str::from_utf8(&self.buf) {
            Ok(text) => Ok(NextLine::Text { line_no, text }),
            Err(e) => Ok(NextLine::Bad {
                line_no,
                error: FieldError::new(
                    "line",
                    format!("not UTF-8 text (bad byte at column {}): binary or still-compressed data?", e.valid_up_to() + 1),
                ),
            }),
        }
    }

    fn discard_rest_of_line(&mut self) -> Result<(), TraceError> {
        loop {
            let chunk = self.inner.fill_buf().map_err(|e| read_error(&self.file, self.line_no, e))?;
            if chunk.is_empty() {
                return Ok(());
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.inner.consume(i + 1);
                    return Ok(());
                }
                None => {
                    let len = chunk.len();
                    self.inner.consume(len);
                }
            }
        }
    }
}

/// A read or decompression error while reading the line after `line_no`.
fn read_error(file: &str, line_no: u64, e: std::io::Error) -> TraceError {
    file_error(file, line_no + 1, format!("read error (corrupt or truncated compressed data?): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_is_recognised_by_magic_bytes() {
        assert_eq!(Compression::from_magic(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::from_magic(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::from_magic(&[0xfd, b'7', b'z', b'X', b'Z', 0]), Compression::Xz);
        assert_eq!(Compression::from_magic(b"0,303567,3584,w,0.0"), Compression::None);
        assert_eq!(Compression::from_extension(Path::new("a/b.CSV.GZ")), Compression::Gzip);
        assert_eq!(Compression::from_extension(Path::new("trace.csv")), Compression::None);
    }
}
