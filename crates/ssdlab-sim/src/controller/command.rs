//! Command processing: each host command's path through the controller
//! after the link (firmware cost on a command slot, then for a write its
//! data through the buffer, the write path and the ECC encoder to the FTL;
//! for a read the die reads, with or without read-ahead; for a TRIM the
//! unmapping of whole 4KB units).

use super::Controller;
use crate::config::UNIT_BYTES;
use crate::error::{Result, SimError};
use crate::ftl::Ftl;
use crate::nand::Nand;
use crate::pattern::DataPattern;
use crate::workload::{unit_span, Op};

impl Controller {
    /// Time the controller's write data path takes for `bytes` of host data
    /// (0 when not modelled).
    #[inline]
    fn write_path_ns(&self, bytes: u64) -> u64 {
        match self.cfg.max_write_bytes_per_s {
            0 => 0,
            r => (bytes * 1_000_000_000).div_ceil(r),
        }
    }

    /// Time the controller's ECC encoder takes for `stored` bytes, what
    /// reaches the NAND (0 when not modelled).
    #[inline]
    fn encode_ns(&self, stored: u64) -> u64 {
        match self.cfg.encode_bytes_per_s {
            0 => 0,
            r => (stored * 1_000_000_000).div_ceil(r),
        }
    }

    /// Time the controller's ECC encoder takes for `bytes` of host data of
    /// `pattern`: what it carries is what reaches the NAND.
    #[inline]
    fn encode_path_ns(&self, ftl: &Ftl, pattern: DataPattern, bytes: u64) -> u64 {
        self.encode_ns(ftl.stored_bytes(pattern, bytes))
    }

    /// Room in the write buffer for one 4KB unit from `t`, programming the
    /// completed units that wait in it when it is full.
    fn admit_unit(&mut self, ftl: &mut Ftl, nand: &mut Nand, t: u64) -> Result<u64> {
        match self.buffer.admit(t, UNIT_BYTES) {
            Some(t) => Ok(t),
            None => {
                // Full of completed units waiting for their die's next
                // data: send them now.
                ftl.program_waiting_units(t, nand)?;
                self.drain_releases(ftl);
                self.buffer.admit(t, UNIT_BYTES).ok_or_else(|| SimError::integrity("write buffer full with nothing scheduled to leave it"))
            }
        }
    }

    /// The map entries the TRIMs since the last write unmapped
    /// (`ftl.trim_map_deferred`), written from `t` ahead of the write's
    /// data: through the ECC encoder (the host data queues behind it) and
    /// programmed in program units, die after die. NAND writes the host did
    /// not ask for: counted as translation-page writes.
    fn write_trimmed_map(&mut self, ftl: &mut Ftl, nand: &mut Nand, t: u64) {
        let mut left = std::mem::take(&mut ftl.pending_map_bytes);
        let unit = ftl.program_unit_bytes();
        let mut die = 0;
        while left > 0 {
            let bytes = left.min(unit);
            left -= bytes;
            let ep = self.encode_ns(bytes);
            let ready = if ep > 0 { self.encode_path.reserve(t, ep) + ep } else { t };
            nand.program(die, ready, bytes);
            die = (die + 1) % ftl.g.dies;
            ftl.counters.map_page_writes += 1;
            ftl.counters.nand_bytes_programmed += bytes;
        }
    }

    /// Rewrite unit `lba` beside a write to part of its coarse map unit
    /// (`ftl.max_map_entries`) once the write's command is processed at
    /// `t`: into the buffer, its old data read back, through the ECC encoder
    /// again, and placed with the new data.
    fn merge_unit(&mut self, ftl: &mut Ftl, nand: &mut Nand, lba: u64, t: u64) -> Result<()> {
        let t_adm = self.admit_unit(ftl, nand, t)?;
        let mut ready = t_adm.max(ftl.read_for_rmw(lba, t, nand));
        let ep = self.encode_ns(ftl.unit_stored_bytes(lba));
        if ep > 0 {
            let es = self.encode_path.reserve(ready, ep);
            ready = ready.max(es + ep);
        }
        ftl.merge_unit(lba, ready, nand)?;
        if !ftl.releases.is_empty() {
            self.drain_releases(ftl);
        }
        Ok(())
    }

    /// Submit one host I/O at `t`; returns its completion time. The FTL and
    /// the NAND are the simulator's, lent for the command (the hot path: one
    /// call per I/O, so no bundle is built for it).
    #[allow(clippy::too_many_arguments)]
    pub fn submit(&mut self, ftl: &mut Ftl, nand: &mut Nand, op: Op, off: u64, len: u64, t: u64, pattern: DataPattern) -> Result<u64> {
        let c = &self.cfg;
        let cost = match op {
            Op::Read => c.read_cost_ns(),
            Op::Write => c.write_cost_ns(),
            Op::Trim => c.command_cost_ns,
        };
        let (first, n) = unit_span(off, len);
        let merge = self.merge_plan(ftl, op, first, n);
        let merge_cost = merge.map_units * self.cfg.read_cost_ns();
        let t2 = self.command(t, cost + merge_cost, op == Op::Trim);
        match op {
            Op::Write => self.write_data(ftl, nand, &merge, off, len, t2, pattern),
            Op::Read => self.read_command(ftl, nand, first, n, off, len, t2),
            Op::Trim => {
                // Only whole 4KB units can be unmapped.
                let a = off.div_ceil(UNIT_BYTES);
                let b = (off + len) / UNIT_BYTES;
                if b > a {
                    ftl.map_access(a, b - a, t2, true, nand);
                    ftl.trim_units(a, b - a, t2);
                }
                Ok(t2)
            }
        }
    }

    /// A write to part of a coarse map unit rewrites the rest of it
    /// (`ftl.max_map_entries`): the span of whole map units it touches, which
    /// units beside the write to merge (decided once, as the command
    /// arrives) and the map units with data to merge, each charged the
    /// firmware's internal read, a read command's time.
    #[inline]
    fn merge_plan(&self, ftl: &Ftl, op: Op, first: u64, n: u64) -> MergePlan {
        let (span_lo, span_hi) = match op {
            Op::Write if self.map_unit > 1 => {
                let m = self.map_unit;
                (first / m * m, ((first + n).div_ceil(m) * m).min(self.user_units))
            }
            _ => (first, first + n),
        };
        let mut plan = MergePlan { first, n, span_lo, span_hi, merge: 0, map_units: 0 };
        for l in (span_lo..first).chain(first + n..span_hi) {
            if ftl.needs_merge(l) {
                plan.merge |= 1 << plan.beside(l);
            }
        }
        let head = plan.merge & ((1 << (first - span_lo)) - 1) != 0;
        let tail = plan.merge >> (first - span_lo) != 0;
        plan.map_units =
            if span_lo / self.map_unit == (span_hi - 1) / self.map_unit { (head || tail) as u64 } else { head as u64 + tail as u64 };
        plan
    }

    /// A write's data from `t2`, after its command: unit by unit into the
    /// buffer, over the link, through the write path and the ECC encoder to
    /// the FTL, with the units beside it that its map units merge.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn write_data(
        &mut self,
        ftl: &mut Ftl,
        nand: &mut Nand,
        merge: &MergePlan,
        off: u64,
        len: u64,
        t2: u64,
        pattern: DataPattern,
    ) -> Result<u64> {
        let (first, n) = (merge.first, merge.n);
        let end = off + len;
        if ftl.pending_map_bytes > 0 {
            self.write_trimmed_map(ftl, nand, t2);
        }
        ftl.host_write(off, len);
        let mut t_data = t2;
        // The command's own link time goes with its first data.
        let mut oh = self.command_link_ns(len);
        // With `write_ack_at_die` (or a write of whole program units with
        // `write_ack_at_die_whole_units`): when the last unit reached its die.
        let at_die = self.cfg.write_ack_at_die || (self.cfg.write_ack_at_die_whole_units && len >= ftl.program_unit_bytes());
        let mut t_ack = 0u64;
        for lba in merge.span_lo..merge.span_hi {
            if lba < first || lba >= first + n {
                if merge.merge >> merge.beside(lba) & 1 != 0 {
                    self.merge_unit(ftl, nand, lba, t2)?;
                }
                continue;
            }
            let u0 = lba * UNIT_BYTES;
            let lo = off.max(u0);
            let hi = end.min(u0 + UNIT_BYTES);
            let partial = hi - lo < UNIT_BYTES;
            let t_adm = self.admit_unit(ftl, nand, t2)?;
            let x = self.link_ns(hi - lo);
            let xs = self.link.reserve(t_adm.max(t_data), oh + x) + oh;
            oh = 0;
            t_data = xs + x;
            let wp = self.write_path_ns(hi - lo);
            if wp > 0 {
                // The controller's write path (DMA set-up, buffer
                // and map work per host byte) takes the data as it
                // streams in, at its own rate, shared by every write.
                let ws = self.write_path.reserve(xs, wp);
                t_data = t_data.max(ws + wp);
            }
            let ep = self.encode_path_ns(ftl, pattern, hi - lo);
            if ep > 0 {
                // Then the ECC encoder, at its own rate, on what
                // reaches the NAND: data reduction shrinks its work.
                let es = self.encode_path.reserve(xs, ep);
                t_data = t_data.max(es + ep);
            }
            let mut ready = t_data;
            if partial {
                ready = ready.max(ftl.read_for_rmw(lba, t2, nand));
            }
            let head = ftl.write_unit(lba, ready, pattern, nand)?;
            if !ftl.releases.is_empty() {
                self.drain_releases(ftl);
            }
            if at_die {
                // Acknowledged once the unit's stored bytes are in its die's
                // page register, over the channel. The register is free
                // between programs: the data waits for the program in
                // progress, at most one program time (the firmware hands
                // host data to the die between the garbage-collection
                // programs queued on it; the unit's own program comes once
                // it is full).
                let die = ftl.die_of_slot(head);
                let wait = nand.die_program_until(die).saturating_sub(ready).min(nand.tprog_ns);
                t_ack = t_ack.max(ready + wait + nand.xfer_ns(ftl.unit_stored_bytes(lba)));
            }
        }
        Ok(t_data.max(t_ack))
    }

    /// A read from `t2`, after its command: the dies' reads, then the data
    /// over the link.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn read_command(&mut self, ftl: &mut Ftl, nand: &mut Nand, first: u64, n: u64, off: u64, len: u64, t2: u64) -> Result<u64> {
        let x = self.link_ns(len);
        // A drive without DRAM for its map may have to read the
        // request's translation pages first.
        let t2 = ftl.map_access(first, n, t2, false, nand);
        let start = if self.cfg.readahead_bytes == 0 {
            // Store and forward: the data crosses the link once all
            // of it is in the controller.
            self.read_data(ftl, nand, first, n, t2)?
        } else {
            self.read_stream(ftl, nand, first, n, off, len, t2)?
        };
        // The command's own link time goes with its data.
        let oh = self.command_link_ns(len);
        if self.duplex {
            // Read data flows device to host, beside the writes.
            let xs = self.link_up.reserve(start, oh + x);
            return Ok(xs + oh + x);
        }
        let xs = self.link.reserve(start, oh + x);
        self.device_bursts.reserve(xs + oh, x);
        Ok(xs + oh + x)
    }
}

/// The units a write merges beside it in its partial map units (at most
/// 2 x 15, one bit each), over the span of whole map units it touches.
struct MergePlan {
    first: u64,
    n: u64,
    span_lo: u64,
    span_hi: u64,
    merge: u64,
    map_units: u64,
}

impl MergePlan {
    /// The bit of unit `l`, beside the write, in `merge`.
    #[inline]
    fn beside(&self, l: u64) -> u64 {
        if l < self.first {
            l - self.span_lo
        } else {
            l - (self.first + self.n) + (self.first - self.span_lo)
        }
    }
}
