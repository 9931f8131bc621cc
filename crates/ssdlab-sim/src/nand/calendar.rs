//! A calendar of a shared bus: its busy intervals, filled first-fit.

/// Busy intervals of a shared bus, sorted and disjoint; touching intervals merge.
/// Intervals that ended before the present are dropped from the front, so the
/// live part is short (the backlog of the dies on the bus) and a sorted vector
/// beats any tree.
#[derive(Clone, Debug, Default)]
pub struct Calendar {
    iv: Vec<(u64, u64)>,
    /// Index of the first live interval.
    head: usize,
    /// Total time reserved, ns.
    pub busy_ns: u64,
}

impl Calendar {
    /// Forget intervals that ended before `now`: no request can start before it.
    #[inline]
    pub fn advance(&mut self, now_ns: u64) {
        let n = self.iv.len();
        while self.head + 1 < n && self.iv[self.head].1 <= now_ns {
            self.head += 1;
        }
        if self.head > 64 && self.head * 2 > n {
            self.iv.drain(..self.head);
            self.head = 0;
        }
    }

    /// Reserve `dur` ns starting at the earliest time >= `earliest` that is free;
    /// returns the start.
    #[inline]
    pub fn reserve(&mut self, earliest: u64, dur: u64) -> u64 {
        self.busy_ns += dur;
        if dur == 0 {
            return earliest;
        }
        match self.iv.last_mut() {
            None => {
                self.iv.push((earliest, earliest + dur));
                return earliest;
            }
            Some(last) if earliest >= last.1 => {
                if earliest == last.1 {
                    last.1 += dur;
                } else {
                    self.iv.push((earliest, earliest + dur));
                }
                return earliest;
            }
            _ => {}
        }
        self.reserve_slow(earliest, dur)
    }

    fn reserve_slow(&mut self, earliest: u64, dur: u64) -> u64 {
        let live = &self.iv[self.head..];
        // First live interval ending after `earliest`.
        let mut i = self.head + live.partition_point(|&(_, e)| e <= earliest);
        let n = self.iv.len();
        let mut cand = earliest;
        while i < n {
            let (s, e) = self.iv[i];
            if cand + dur <= s {
                break;
            }
            if e > cand {
                cand = e;
            }
            i += 1;
        }
        let end = cand + dur;
        let merge_prev = i > self.head && self.iv[i - 1].1 == cand;
        let merge_next = i < n && self.iv[i].0 == end;
        match (merge_prev, merge_next) {
            (true, true) => {
                self.iv[i - 1].1 = self.iv[i].1;
                self.iv.remove(i);
            }
            (true, false) => self.iv[i - 1].1 = end,
            (false, true) => self.iv[i].0 = cand,
            (false, false) => self.insert(i, (cand, end)),
        }
        cand
    }

    /// Insert at `i`, moving the live intervals before it one place down
    /// into the dropped ones' room when they are fewer than those after it:
    /// bookings land a little way into the live part, so this halves the
    /// copying, which was a good part of the cost of booking.
    #[inline]
    fn insert(&mut self, i: usize, x: (u64, u64)) {
        if self.head > 0 && i - self.head < self.iv.len() - i {
            self.iv.copy_within(self.head..i, self.head - 1);
            self.head -= 1;
            self.iv[i - 1] = x;
        } else {
            self.iv.insert(i, x);
        }
    }

    /// True if the booked intervals are sorted and disjoint (checking mode).
    pub fn is_consistent(&self) -> bool {
        self.iv.iter().all(|&(s, e)| s < e) && self.iv.windows(2).all(|w| w[0].1 <= w[1].0)
    }

    /// `t` if nothing is booked at `t`, else the end of the busy run that
    /// holds it (touching bookings are one run).
    #[inline]
    pub fn free_from(&self, t: u64) -> u64 {
        let live = &self.iv[self.head..];
        let i = live.partition_point(|&(_, e)| e <= t);
        match live.get(i) {
            Some(&(s, e)) if s <= t => e,
            _ => t,
        }
    }

    /// When the last booked interval ends.
    pub fn busy_until(&self) -> u64 {
        self.iv.last().map(|x| x.1).unwrap_or(0)
    }

    /// Live intervals (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.iv.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
