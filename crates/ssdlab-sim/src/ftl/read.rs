//! Host reads: the page reads of a request issued in order across dies (at
//! most `seq_read_max_dies` at once), die striping of stored data
//! (SandForce), and read-modify-write of partly written units.

use super::Ftl;
use crate::error::Result;
use crate::mem::NONE;
use crate::nand::Nand;

/// The page reads of one request, issued in order: each starts once its
/// die is free and, with a cap of `cap` dies (`seq_read_max_dies`), once the
/// read `cap` places earlier is done; `ready_ns` is when all are done.
struct ReadIssue {
    earliest_ns: u64,
    ready_ns: u64,
    cap: usize,
    issued: usize,
    window: [u64; 64],
}

impl ReadIssue {
    fn new(earliest_ns: u64, max_dies: u32) -> ReadIssue {
        ReadIssue { earliest_ns, ready_ns: earliest_ns, cap: (max_dies as usize).min(64), issued: 0, window: [0; 64] }
    }

    #[inline]
    fn issue(&mut self, nand: &mut Nand, die: u32, plane: Option<u32>, bytes: u64, tr_ns: u64) -> u64 {
        let mut t = self.earliest_ns;
        if self.cap > 0 && self.issued >= self.cap {
            t = t.max(self.window[(self.issued - self.cap) % 64]);
        }
        let done = match plane {
            Some(p) => nand.read_plane_t(die, p, t, bytes, tr_ns),
            None => nand.read_t(die, t, bytes, tr_ns),
        };
        if self.cap > 0 {
            self.window[self.issued % 64] = done;
        }
        self.issued += 1;
        self.ready_ns = self.ready_ns.max(done);
        done
    }
}

impl Ftl {
    /// Read units `lba..lba+n`; returns when all their data is in the
    /// controller, and how many of them are unmapped. Granules in the same
    /// program unit of a die are read with one (multi-plane) read; with die
    /// striping, each run of data contiguous in the stored stream is read
    /// from the dies it spans (`read_striped`).
    /// `max_dies` > 0 caps how many dies the request pipelines across.
    pub fn read_units(&mut self, lba: u64, n: u64, earliest_ns: u64, nand: &mut Nand, max_dies: u32) -> Result<(u64, u64)> {
        self.read_units_p(lba, n, earliest_ns, nand, max_dies, false)
    }

    /// [`Ftl::read_units`], and with `pieces` the die reads in LBA order in
    /// [`Ftl::read_pieces`]: (first LBA whose data the read carries, when it
    /// is done). A striped run is one piece, done when all its reads are.
    pub fn read_units_p(&mut self, lba: u64, n: u64, earliest_ns: u64, nand: &mut Nand, max_dies: u32, pieces: bool) -> Result<(u64, u64)> {
        self.read_pieces.clear();
        let mut reads = ReadIssue::new(earliest_ns, max_dies);
        let mut cur_lba = 0u64;
        let mut run_lba = 0u64;
        let mut cur_unit = NONE;
        let mut cur_grans = 0u64;
        // Granules of the read unit the current read covers: [first, end).
        let mut cur_span = (u32::MAX, 0u32);
        let mut unmapped = 0u64;
        // Striped: the current run of data contiguous in the stored stream
        // (home die of its first unit, bytes) and the granule after its end.
        let striped = self.die_stripe_bytes > 0;
        let mut run = (NONE, 0u64);
        let mut run_end = NONE;
        for l in lba..lba + n {
            let e = self.l2p.get(l as usize);
            let head = if e == NONE { NONE } else { self.head_of(e) };
            if let Some(s) = self.shadow.as_ref() {
                s.verify_read(l, head)?;
            }
            if head == NONE || self.is_buffered(head, earliest_ns) {
                // Answered from the map or from the buffer.
                unmapped += (head == NONE) as u64;
                run_end = NONE;
                continue;
            }
            let len = self.len_of(e);
            if striped {
                // The stream continues where the last unit ended, or at the
                // start of a program unit when the last one ended a unit.
                let next = head == run_end || (run_end != NONE && self.unit_div.rem(run_end) == 0 && self.unit_div.rem(head) == 0);
                if !next && run.1 > 0 {
                    self.issue_striped_run(run, run_lba, &mut reads, nand, pieces);
                    run.1 = 0;
                }
                if run.1 == 0 {
                    run.0 = self.die_of_slot(head);
                    run_lba = l;
                }
                run.1 += len as u64 * self.gran_bytes;
                run_end = head + len;
                continue;
            }
            // One (multi-plane) read per page on every plane.
            let u = self.read_div.div(head);
            if u != cur_unit {
                if cur_unit != NONE {
                    self.issue_page_read(cur_unit, cur_span, cur_grans, cur_lba, &mut reads, nand, pieces);
                }
                cur_unit = u;
                cur_lba = l;
                cur_grans = 0;
                cur_span = (u32::MAX, 0);
            }
            cur_grans += len as u64;
            let off = head - u * self.read_unit;
            cur_span = (cur_span.0.min(off), cur_span.1.max(off + len));
        }
        if cur_unit != NONE {
            self.issue_page_read(cur_unit, cur_span, cur_grans, cur_lba, &mut reads, nand, pieces);
        }
        if run.1 > 0 {
            self.issue_striped_run(run, run_lba, &mut reads, nand, pieces);
        }
        Ok((reads.ready_ns, unmapped))
    }

    /// The (multi-plane) read of read unit `unit` for `grans` granules within
    /// `span` of it, the first of them LBA `lba`'s.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn issue_page_read(&mut self, unit: u32, span: (u32, u32), grans: u64, lba: u64, reads: &mut ReadIssue, nand: &mut Nand, pieces: bool) {
        let g = unit * self.read_unit;
        let plane = self.one_plane(span);
        let done = reads.issue(nand, self.die_of_slot(g), plane, grans * self.gran_bytes, self.tr_of(g, nand));
        if pieces {
            self.read_pieces.push((lba, done));
        }
    }

    /// The reads of a striped run (home die, bytes) whose first LBA is `lba`.
    #[inline]
    fn issue_striped_run(&mut self, run: (u32, u64), lba: u64, reads: &mut ReadIssue, nand: &mut Nand, pieces: bool) {
        let done = self.read_striped(run.0, run.1, reads, nand);
        if pieces {
            self.read_pieces.push((lba, done));
        }
    }

    /// Read `bytes` contiguous in the stored stream that begin on `die`, with
    /// the stream striped across the data dies in `die_stripe_bytes` chunks: at
    /// an unaligned offset they span bytes / stripe + 1 chunks, so that many
    /// dies (at most all) each read their share, a page read per program
    /// unit of it.
    fn read_striped(&self, die: u32, bytes: u64, reads: &mut ReadIssue, nand: &mut Nand) -> u64 {
        let mut done = 0;
        let dies = self.g.dies as u64;
        let k = (bytes / self.die_stripe_bytes + 1).min(dies);
        let unit_bytes = self.unit as u64 * self.gran_bytes;
        let mut d = die;
        for i in 0..k {
            let mut share = bytes / k + (i < bytes % k) as u64;
            while share > 0 {
                let b = share.min(unit_bytes);
                done = done.max(reads.issue(nand, d, None, b, nand.tr_ns));
                share -= b;
            }
            d = if d + 1 == self.g.dies { 0 } else { d + 1 };
        }
        done
    }

    /// With independent plane reads, the plane whose page holds granules
    /// `span` of a read unit (planes in order, a page each), if one does.
    #[inline]
    fn one_plane(&self, span: (u32, u32)) -> Option<u32> {
        let k = self.plane_grans;
        (k > 0 && span.0 / k == (span.1 - 1) / k).then(|| span.0 / k)
    }

    /// Read-modify-write of a partly written unit: read the old data first.
    pub fn read_for_rmw(&mut self, lba: u64, earliest_ns: u64, nand: &mut Nand) -> u64 {
        let e = self.l2p.get(lba as usize);
        if e == NONE || self.is_buffered(self.head_of(e), earliest_ns) {
            return earliest_ns;
        }
        let head = self.head_of(e);
        self.counters.rmw_reads += 1;
        let bytes = self.len_of(e) as u64 * self.gran_bytes;
        let die = self.die_of_slot(head);
        if self.die_stripe_bytes > 0 {
            let mut reads = ReadIssue::new(earliest_ns, 0);
            self.read_striped(die, bytes, &mut reads, nand);
            return reads.ready_ns;
        }
        let tr = self.tr_of(head, nand);
        nand.read_t(die, earliest_ns, bytes, tr)
    }
}
