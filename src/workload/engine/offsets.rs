//! Where the next I/O goes: sequential, uniformly random (seeded xoshiro, aligned to bs,
//! may repeat like fio's norandommap), or a fixed pseudo-random permutation that touches
//! every block exactly once (iozone's random test).

use super::window::Window;
use crate::workload::result::Direction;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Sequential,
    Random,
    Permutation,
}

pub struct OffsetGen {
    order: Order,
    region_start: u64,
    bs: u64,
    blocks: u64,
    next_block: u64,
    permutation: Vec<u32>,
    rng: Xoshiro256PlusPlus,
    read_percent: u32,
    /// I/Os still to hand out (u64::MAX: until stopped by time).
    remaining: u64,
    /// `min_runtime`: once `remaining` is done, keep going (wrapping) until then.
    until: Option<Instant>,
    /// `until` has come and the I/O after it has been handed out.
    past_until: bool,
    /// The workload's shared time window, if it has one.
    window: Option<Window>,
    /// A sequential pass has wrapped back to the region's start since last asked.
    wrapped: bool,
    /// An I/O has been handed out (the next block 0 starts a new pass).
    passed: bool,
}

impl OffsetGen {
    /// `blocks` blocks of `bs` bytes from `region_start`; `ops` I/Os in total.
    pub fn new(
        order: Order,
        region_start: u64,
        bs: u64,
        blocks: u64,
        ops: u64,
        read_percent: u32,
        seed: u64,
    ) -> OffsetGen {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let permutation = if order == Order::Permutation {
            // Fisher-Yates over block indices; u32 keeps 2^32 blocks at 4 bytes each.
            let mut p: Vec<u32> = (0..blocks as u32).collect();
            for i in (1..p.len()).rev() {
                let j = below(&mut rng, i as u64 + 1) as usize;
                p.swap(i, j);
            }
            p
        } else {
            Vec::new()
        };
        OffsetGen {
            order,
            region_start,
            bs,
            blocks,
            next_block: 0,
            permutation,
            rng,
            read_percent,
            remaining: ops,
            until: None,
            past_until: false,
            window: None,
            wrapped: false,
            passed: false,
        }
    }

    /// Hand out I/Os until the workload's shared window ends (the generator then runs
    /// without an amount of its own: `ops` should be u64::MAX).
    pub fn in_window(mut self, window: Window) -> OffsetGen {
        self.window = Some(window);
        self
    }

    /// Keep handing out I/Os after the amount is done, until `until` (the job's
    /// `min_runtime` after its measurement began); the amount is then a floor.
    pub fn at_least_until(mut self, until: Option<Instant>) -> OffsetGen {
        self.until = until;
        self
    }

    /// The clone's end_fsync has returned: the shared window need not wait for it.
    pub fn window_flushed(&mut self) {
        if let Some(w) = &mut self.window {
            w.flushed();
        }
    }

    /// Whether a sequential pass wrapped back to the start of the region since the last
    /// call (a buffered job then drops its clean cache: re-reads would be page-cache hits).
    pub fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }

    /// The next I/O, or None when the amount of I/O is done.
    #[inline]
    pub fn next_io(&mut self) -> Option<(Direction, u64)> {
        if self.remaining == 0 {
            // Past the amount, until `until`; one more I/O is handed once the time has
            // come, so the last completes after it and the run measures at least that.
            match self.until {
                Some(t) if !self.past_until => self.past_until = Instant::now() >= t,
                _ => return None,
            }
        }
        if let Some(w) = &mut self.window {
            if !w.may_go_on() {
                return None;
            }
        }
        if self.remaining != u64::MAX && self.remaining > 0 {
            self.remaining -= 1;
        }
        let block = match self.order {
            Order::Sequential => {
                let b = self.next_block;
                self.next_block = if b + 1 == self.blocks { 0 } else { b + 1 };
                // Block 0 again, after the first pass.
                self.wrapped |= b == 0 && self.passed;
                self.passed = true;
                b
            }
            Order::Random => below(&mut self.rng, self.blocks),
            Order::Permutation => {
                let b = self.permutation[self.next_block as usize] as u64;
                self.next_block = (self.next_block + 1) % self.blocks;
                b
            }
        };
        let dir = match self.read_percent {
            100 => Direction::Read,
            0 => Direction::Write,
            p => {
                if below(&mut self.rng, 100) < p as u64 {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        };
        Some((dir, self.region_start + block * self.bs))
    }
}

/// Uniform integer in 0..n (Lemire's multiply-shift; bias below 2^-40 for our n).
#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps_inside_the_region() {
        let mut g = OffsetGen::new(Order::Sequential, 1000, 10, 3, 5, 100, 1);
        let offs: Vec<u64> = std::iter::from_fn(|| g.next_io().map(|(_, o)| o)).collect();
        assert_eq!(offs, vec![1000, 1010, 1020, 1000, 1010]);
    }

    #[test]
    fn a_minimum_runtime_keeps_going_past_the_amount_until_its_time() {
        let past = Instant::now();
        let mut g =
            OffsetGen::new(Order::Sequential, 0, 10, 3, 2, 100, 1).at_least_until(Some(past));
        assert_eq!(
            std::iter::from_fn(|| g.next_io()).count(),
            3,
            "time is up: the amount, and one I/O that ends after the time"
        );
        let until = Instant::now() + std::time::Duration::from_millis(30);
        let mut g =
            OffsetGen::new(Order::Sequential, 0, 10, 3, 2, 100, 1).at_least_until(Some(until));
        let offs: Vec<u64> = std::iter::from_fn(|| g.next_io().map(|(_, o)| o)).collect();
        assert!(Instant::now() >= until);
        assert!(offs.len() > 2, "{}", offs.len());
        assert_eq!(offs[..4], [0, 10, 20, 0], "wraps around its region");
    }

    #[test]
    fn a_wrap_is_reported_once_per_new_pass() {
        let mut g = OffsetGen::new(Order::Sequential, 0, 10, 2, 5, 100, 1);
        let wraps: Vec<bool> =
            std::iter::from_fn(|| g.next_io().map(|_| g.take_wrapped())).collect();
        assert_eq!(wraps, [false, false, true, false, true]);
    }

    #[test]
    fn random_is_aligned_inside_and_seeded() {
        let collect = |seed| {
            let mut g = OffsetGen::new(Order::Random, 4096, 4096, 100, 1000, 0, seed);
            std::iter::from_fn(move || g.next_io()).collect::<Vec<_>>()
        };
        let a = collect(5);
        assert_eq!(a, collect(5));
        assert_ne!(a, collect(6));
        for (d, o) in &a {
            assert_eq!(*d, Direction::Write);
            assert!(*o >= 4096 && *o < 4096 + 100 * 4096 && o % 4096 == 0);
        }
    }

    #[test]
    fn permutation_touches_every_block_once() {
        let mut g = OffsetGen::new(Order::Permutation, 0, 512, 1000, 1000, 100, 9);
        let mut seen: Vec<u64> = std::iter::from_fn(|| g.next_io().map(|(_, o)| o / 512)).collect();
        assert_ne!(seen[..10], (0..10).collect::<Vec<_>>()[..]);
        seen.sort();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut g = OffsetGen::new(Order::Random, 0, 512, 1 << 20, 10000, 70, 2);
        let reads = std::iter::from_fn(|| g.next_io())
            .filter(|(d, _)| *d == Direction::Read)
            .count();
        assert!((6500..7500).contains(&reads), "{reads}");
    }
}
