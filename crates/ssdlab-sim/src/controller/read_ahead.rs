//! Reads: a request's die reads, issued at once across dies, and the
//! sequential-read prefetch ("NCQ streaming"): a detected sequential stream
//! is read ahead by `controller.readahead_bytes`, and read data streams to
//! the host as its die reads land.

use std::collections::VecDeque;

use super::Controller;
use crate::config::UNIT_BYTES;
use crate::error::Result;
use crate::ftl::Ftl;
use crate::nand::Nand;

/// Read-ahead state of the (single) sequential read stream.
#[derive(Clone, Debug, Default)]
pub(super) struct ReadAhead {
    /// Where a request must start (in bytes) to continue the stream: the
    /// detector compares host addresses at the sector level, so transfers
    /// smaller than a 4KB unit stream as well as larger ones.
    pub(super) next_off: u64,
    /// Where the next prefetch starts.
    pub(super) pre_end: u64,
    /// Bytes the host has read in the current stream, this request included.
    pub(super) stream_bytes: u64,
    /// Prefetched ranges and when their data is in the controller.
    pub(super) chunks: VecDeque<(u64, u64, u64)>,
}

impl Controller {
    /// NAND side of a host read on a controller without read-ahead: the
    /// request's die reads (at most `seq_read_max_dies` at once); returns
    /// when all its data is in the controller.
    pub(super) fn read_data(&mut self, ftl: &mut Ftl, nand: &mut Nand, first: u64, n: u64, t: u64) -> Result<u64> {
        let c = &self.cfg;
        let (r, unmapped) = ftl.read_units(first, n, t, nand, c.seq_read_max_dies)?;
        let mut ready = r;
        if unmapped > 0 && c.unmapped_read_ns > 0 {
            ready = ready.max(t + unmapped * c.unmapped_read_ns);
        }
        Ok(ready)
    }

    /// Issue the die reads of LBAs `from..to` at `t` (at most
    /// `seq_read_max_dies` at once) and append them to `out` as pieces
    /// (first LBA, last LBA + 1, when the data is in the controller),
    /// contiguous from `from` to `to`; units answered without NAND are ready
    /// at `t` (never-written ones after `unmapped_read_ns` each).
    fn read_pieces(
        &mut self,
        ftl: &mut Ftl,
        nand: &mut Nand,
        from: u64,
        to: u64,
        t: u64,
        out: &mut VecDeque<(u64, u64, u64)>,
    ) -> Result<()> {
        let c = &self.cfg;
        let (_, unmapped) = ftl.read_units_p(from, to - from, t, nand, c.seq_read_max_dies, true)?;
        let floor = if unmapped > 0 && c.unmapped_read_ns > 0 { t + unmapped * c.unmapped_read_ns } else { t };
        let p = &ftl.read_pieces;
        if p.first().is_none_or(|q| q.0 > from) {
            out.push_back((from, p.first().map_or(to, |q| q.0), floor));
        }
        for (i, &(s, r)) in p.iter().enumerate() {
            let e = p.get(i + 1).map_or(to, |q| q.0);
            out.push_back((s, e, r.max(floor)));
        }
        Ok(())
    }

    /// NAND side of a host read on a controller with read-ahead ("NCQ
    /// streaming"). The request's data comes from die reads the read-ahead
    /// issued earlier when a detected sequential stream was prefetched, and
    /// for what the read-ahead does not hold, from its own die reads, all
    /// issued at once (at most `seq_read_max_dies` at a time): a large
    /// request spans many dies together. Its data streams to the host in LBA
    /// order as the die reads land, so the transfer overlaps the reads still
    /// in flight. With at least `readahead_min_qd` commands outstanding, a
    /// sequential request extends the read-ahead: die reads for the next
    /// window beyond it, issued now, so the drive runs ahead of the host by
    /// that window and no more. The window is what the stream has read so
    /// far, at most `readahead_bytes`. A stream is detected by host
    /// address, not by 4KB unit, so a stream of transfers smaller than a unit
    /// (ATTO's 0.5-2KB) is read ahead too, and a unit the host has read part
    /// of stays in the buffer for the rest of it. Returns the earliest start
    /// of the request's link transfer that never waits for data.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_stream(&mut self, ftl: &mut Ftl, nand: &mut Nand, first: u64, n: u64, off: u64, len: u64, t: u64) -> Result<u64> {
        let sequential = off == self.ra.next_off;
        // The window grows with the stream, up to `readahead_bytes`: it
        // prefetches no more than the stream has read so far, so two
        // adjacent small reads in a desktop's random ones cost two or three
        // units of die time, not a full window that delays the next random
        // read, while a long stream is a full window ahead after a few
        // requests (adaptive read-ahead, as operating systems ramp theirs).
        self.ra.stream_bytes = if sequential { self.ra.stream_bytes.saturating_add(len) } else { len };
        let ra_units = self.cfg.readahead_bytes.min(self.ra.stream_bytes).div_ceil(UNIT_BYTES);
        let end = first + n;
        let end_bytes = off + len;
        self.ra.next_off = end_bytes;
        // The read-ahead holds LBAs from its first piece to `pre_end`: a
        // sequential request starting there takes what it holds and reads
        // the rest itself.
        let hit = sequential && self.ra.chunks.front().is_some_and(|c| c.0 <= first) && self.ra.pre_end > first;
        let mut chunks = std::mem::take(&mut self.ra.chunks);
        if !hit {
            chunks.clear();
            self.ra.pre_end = first;
        }
        if self.ra.pre_end < end {
            self.read_pieces(ftl, nand, self.ra.pre_end, end, t, &mut chunks)?;
            self.ra.pre_end = end;
        }
        // The transfer starts late enough that each piece is in the
        // controller by the time the link reaches its first byte.
        let mut start = t;
        for &(s, e, r) in &chunks {
            if s < end && e > first {
                let before = (s * UNIT_BYTES).max(off) - off;
                start = start.max(r.saturating_sub(self.link_ns(before)));
            }
        }
        if ra_units > 0 && sequential && self.outstanding >= self.cfg.readahead_min_qd {
            let want_end = (end + ra_units).min(self.user_units);
            let from = self.ra.pre_end.max(end);
            if want_end > from {
                self.read_pieces(ftl, nand, from, want_end, t, &mut chunks)?;
                self.ra.pre_end = want_end;
            }
        }
        // Data the host has asked for leaves the read-ahead buffer; a unit
        // the host has read only part of stays for the rest of it.
        while chunks.front().is_some_and(|c| c.1 * UNIT_BYTES <= end_bytes) {
            chunks.pop_front();
        }
        self.ra.chunks = chunks;
        Ok(start)
    }
}
