//! Checking mode: a trivial model of what the drive must hold (`LBA -> newest
//! write version`, or nothing after TRIM) fed the same operations as the FTL,
//! and compared with it on every read and after every phase.

use crate::error::{Result, SimError};
use crate::mem::NONE;

#[derive(Clone, Debug)]
pub struct Shadow {
    /// Newest version written to each LBA unit; 0 = unmapped (never written or trimmed).
    lba_ver: Vec<u64>,
    /// Version of the data stored at each head granule, and the LBA unit it
    /// belongs to (as the FTL reported its writes and moves).
    slot_ver: Vec<u64>,
    slot_lba: Vec<u32>,
    counter: u64,
}

impl Shadow {
    pub fn new(user_units: u64, raw_slots: u64) -> Shadow {
        Shadow {
            lba_ver: vec![0; user_units as usize],
            slot_ver: vec![0; raw_slots as usize],
            slot_lba: vec![NONE; raw_slots as usize],
            counter: 0,
        }
    }

    pub fn write(&mut self, lba: u64, slot: u32) {
        self.counter += 1;
        self.lba_ver[lba as usize] = self.counter;
        self.slot_ver[slot as usize] = self.counter;
        self.slot_lba[slot as usize] = lba as u32;
    }

    pub fn moved(&mut self, from: u32, to: u32) {
        self.slot_ver[to as usize] = self.slot_ver[from as usize];
        self.slot_lba[to as usize] = self.slot_lba[from as usize];
    }

    /// The version and LBA unit of the data at `slot`.
    pub fn slot(&self, slot: u32) -> (u64, u32) {
        (self.slot_ver[slot as usize], self.slot_lba[slot as usize])
    }

    /// Data of `v` (as [`Shadow::slot`] gave it) now lies at `slot`.
    pub fn place(&mut self, slot: u32, v: (u64, u32)) {
        self.slot_ver[slot as usize] = v.0;
        self.slot_lba[slot as usize] = v.1;
    }

    pub fn trim(&mut self, lba: u64) {
        self.lba_ver[lba as usize] = 0;
    }

    pub fn clear(&mut self) {
        self.lba_ver.iter_mut().for_each(|v| *v = 0);
    }

    /// What a read of `lba` would return must be the newest data written to it.
    /// `slot` is the head granule `lba` maps to, or NONE.
    pub fn verify_read(&self, lba: u64, slot: u32) -> Result<()> {
        let want = self.lba_ver[lba as usize];
        if want == 0 {
            if slot != NONE {
                return Err(SimError::integrity(format!(
                    "LBA unit {lba} was trimmed or never written but maps to slot {slot} (stale data returned)"
                )));
            }
            return Ok(());
        }
        if slot == NONE {
            return Err(SimError::integrity(format!("LBA unit {lba} lost: version {want} written, now unmapped")));
        }
        if self.slot_lba[slot as usize] != lba as u32 {
            return Err(SimError::integrity(format!(
                "LBA unit {lba} maps to slot {slot}, which holds LBA unit {} (data mixed up)",
                self.slot_lba[slot as usize]
            )));
        }
        let got = self.slot_ver[slot as usize];
        if got != want {
            return Err(SimError::integrity(format!("LBA unit {lba}: read version {got}, newest written is {want} (stale data)")));
        }
        Ok(())
    }

    /// Every LBA against the FTL's map (entries masked by `head_mask` give the head granule).
    pub fn verify_all(&self, l2p: impl Iterator<Item = u32>, head_mask: u32) -> Result<()> {
        for (lba, e) in l2p.enumerate() {
            self.verify_read(lba as u64, if e == NONE { NONE } else { e & head_mask })?;
        }
        Ok(())
    }
}
