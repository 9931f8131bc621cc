//! Format auto-detection: every format's own line parser reads the first
//! non-blank lines; a format fits when it accepts them all and finds at least
//! one record, header or event of its own. Exactly one format must fit.

use std::path::Path;

use super::line::{NotIo, Parsed};
use super::parser::LineParser;
use super::source::{display_name, LineReader, NextLine};
use super::{ImportOptions, TraceFormat};
use crate::trace::TraceError;

/// Non-blank lines looked at.
const SAMPLE_LINES: usize = 64;

/// A sampled line: its number and text, or why it is not text.
type SampleLine = (u64, Result<String, String>);

pub(crate) fn detect(path: &Path, opts: &ImportOptions) -> Result<TraceFormat, TraceError> {
    let sample = read_sample(path)?;
    let verdicts = TraceFormat::CONCRETE.iter().map(|&f| (f, judge(f, &sample, opts))).collect();
    choose(&display_name(path), sample.len(), verdicts)
}

fn read_sample(path: &Path) -> Result<Vec<SampleLine>, TraceError> {
    let mut reader = LineReader::open(path)?;
    let mut sample = Vec::new();
    while sample.len() < SAMPLE_LINES {
        match reader.next_line()? {
            NextLine::End => break,
            NextLine::Text { text, .. } if text.trim().is_empty() => {}
            NextLine::Text { line_no, text } => sample.push((line_no, Ok(text.to_string()))),
            NextLine::Bad { line_no, error } => sample.push((line_no, Err(error.message))),
        }
    }
    Ok(sample)
}

/// Does `format` fit the sample? `Err` says why not.
fn judge(format: TraceFormat, sample: &[SampleLine], opts: &ImportOptions) -> Result<(), String> {
    let mut parser = LineParser::new(format, opts);
    let mut evidence = false;
    for (line_no, text) in sample {
        let text = text.as_ref().map_err(|m| format!("line {line_no}: {m}"))?;
        match parser.parse(*line_no, text) {
            Ok(Parsed::Io(_) | Parsed::NotIo(NotIo::Header | NotIo::Event)) => evidence = true,
            Ok(Parsed::NotIo(NotIo::Blank | NotIo::Text)) => {}
            Err(e) => return Err(format!("line {line_no}, field '{}': {}", e.field, e.message)),
        }
    }
    if evidence {
        Ok(())
    } else {
        Err(format!("no record of this format in the first {} line(s)", sample.len()))
    }
}

/// The one format that fits, or an error listing why none or several fit.
pub(crate) fn choose(file: &str, sample_lines: usize, verdicts: Vec<(TraceFormat, Result<(), String>)>) -> Result<TraceFormat, TraceError> {
    let fitting: Vec<TraceFormat> = verdicts.iter().filter(|(_, v)| v.is_ok()).map(|(f, _)| *f).collect();
    let message = match fitting.as_slice() {
        [one] => return Ok(*one),
        [] => format!(
            "cannot detect the trace format from the first {sample_lines} non-blank line(s): no format fits ({}); give the format explicitly",
            verdicts
                .iter()
                .filter_map(|(f, v)| v.as_ref().err().map(|why| format!("{f}: {why}")))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        several => format!(
            "ambiguous trace format: the first {sample_lines} non-blank line(s) fit {}; give one of them as the format",
            several.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
        ),
    };
    Err(TraceError { file: file.to_string(), line: 0, field: "format".into(), message })
}
