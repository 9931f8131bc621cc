//! RAISE (SandForce): one die's capacity holds parity, and every stripe of
//! data program units across the data dies costs one parity program.

use super::Ftl;
use crate::nand::Nand;

impl Ftl {
    /// RAISE: one parity program unit per stripe of data program units.
    #[inline]
    pub(super) fn raise_parity(&mut self, t: u64, nand: &mut Nand) {
        if self.g.parity_dies == 0 {
            return;
        }
        self.raise_count += 1;
        if self.raise_count >= self.g.dies {
            self.raise_count = 0;
            let bytes = self.unit as u64 * self.gran_bytes;
            nand.program(self.g.dies, t, bytes);
            self.counters.nand_bytes_programmed += bytes;
            self.counters.parity_bytes += bytes;
        }
    }
}
