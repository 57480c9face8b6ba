//! Configs x workloads x repetitions as numbered runs, in a fair [`Order`], walked
//! lazily.
//!
//! Warm-up repetitions come first (rounds 1..=warmup) and are recorded with warmup=true.
//!
//! [`Matrix::iter`] computes each run from its position (one round of config x workload
//! pairs is held for the random order), so memory does not grow with the repetition
//! count; [`Matrix::new`] refuses more than [`MAX_RUNS`] runs.

use super::limits::MAX_RUNS;
pub use super::order::Order;
use anyhow::{bail, Result};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One run of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// 1-based position in the order of execution.
    pub run: u32,
    /// Index into the session's configs.
    pub config: usize,
    /// Index into the session's workloads.
    pub workload: usize,
    /// 1-based repetition of this config x workload, warm-ups included.
    pub repetition: u32,
    pub warmup: bool,
}

/// configs x workloads x (warm-up + repetitions) rounds in an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matrix {
    configs: usize,
    workloads: usize,
    repetitions: u32,
    warmup: u32,
    order: Order,
    seed: u64,
}

impl Matrix {
    /// A matrix of at most [`MAX_RUNS`] runs; more is refused with the counts and the fix.
    pub fn new(
        configs: usize,
        workloads: usize,
        repetitions: u32,
        warmup: u32,
        order: Order,
        seed: u64,
    ) -> Result<Matrix> {
        if configs == 0 || workloads == 0 || repetitions == 0 {
            bail!(
                "an empty matrix ({configs} config(s) x {workloads} workload(s) x {repetitions} \
                 repetition(s)): nothing to run"
            );
        }
        let rounds = u64::from(repetitions) + u64::from(warmup);
        let total = (configs as u64)
            .saturating_mul(workloads as u64)
            .saturating_mul(rounds);
        if total > u64::from(MAX_RUNS) {
            bail!(
                "{configs} config(s) x {workloads} workload(s) x {rounds} round(s) (repetitions \
                 + warm-up) = {total} runs, more than mmcab runs in one results directory \
                 ({MAX_RUNS}): lower the repetitions (--repeat or the plan's `repetitions`) or \
                 pick fewer configs or workloads (--config, --workload)"
            );
        }
        Ok(Matrix {
            configs,
            workloads,
            repetitions,
            warmup,
            order,
            seed,
        })
    }

    pub fn configs(&self) -> usize {
        self.configs
    }
    pub fn workloads(&self) -> usize {
        self.workloads
    }
    pub fn repetitions(&self) -> u32 {
        self.repetitions
    }
    pub fn warmup(&self) -> u32 {
        self.warmup
    }
    pub fn order(&self) -> Order {
        self.order
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Number of runs (at most [`MAX_RUNS`], so it fits the `run` column).
    pub fn len(&self) -> u32 {
        (self.configs * self.workloads) as u32 * (self.repetitions + self.warmup)
    }

    /// Never true: [`Matrix::new`] refuses empty matrices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The runs in order of execution, computed one at a time.
    pub fn iter(&self) -> Slots {
        Slots {
            matrix: *self,
            next: 0,
            round: Vec::new(),
            rng: Xoshiro256PlusPlus::seed_from_u64(self.seed),
        }
    }
}

impl IntoIterator for &Matrix {
    type Item = Slot;
    type IntoIter = Slots;
    fn into_iter(self) -> Slots {
        self.iter()
    }
}

/// Iterator over the runs of a [`Matrix`]; see [`Matrix::iter`].
pub struct Slots {
    matrix: Matrix,
    /// 0-based index of the next run.
    next: u32,
    /// The (config, workload) pairs of the current round (interleaved and random).
    round: Vec<(usize, usize)>,
    /// Carries on from round to round, as the order was first defined.
    rng: Xoshiro256PlusPlus,
}

impl Iterator for Slots {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        let m = self.matrix;
        if self.next >= m.len() {
            return None;
        }
        let i = self.next as usize;
        let rounds = (m.repetitions + m.warmup) as usize;
        let (config, workload, repetition) = match m.order {
            Order::Blocked => (
                i / (m.workloads * rounds),
                i / rounds % m.workloads,
                (i % rounds) as u32 + 1,
            ),
            Order::Interleaved | Order::Random => {
                let per_round = m.configs * m.workloads;
                let k = i % per_round;
                if k == 0 {
                    self.new_round();
                }
                let (c, w) = self.round[k];
                (c, w, (i / per_round) as u32 + 1)
            }
        };
        self.next += 1;
        Some(Slot {
            run: self.next,
            config,
            workload,
            repetition,
            warmup: repetition <= m.warmup,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.matrix.len() - self.next) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Slots {}

impl Slots {
    /// Every workload under each config in turn, shuffled for the random order.
    fn new_round(&mut self) {
        let (configs, workloads) = (self.matrix.configs, self.matrix.workloads);
        self.round.clear();
        self.round
            .extend((0..workloads).flat_map(|w| (0..configs).map(move |c| (c, w))));
        if self.matrix.order == Order::Random {
            shuffle(&mut self.round, &mut self.rng);
        }
    }
}

/// Fisher-Yates with an unbiased-enough multiply-shift bound (n is small).
fn shuffle<T>(items: &mut [T], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..items.len()).rev() {
        let j = ((rng.next_u64() as u128 * (i as u128 + 1)) >> 64) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expansion as it was first written (every run in a Vec): the reference the lazy
    /// walk must reproduce run for run.
    fn eager(
        configs: usize,
        workloads: usize,
        repetitions: u32,
        warmup: u32,
        order: Order,
        seed: u64,
    ) -> Vec<Slot> {
        let rounds = warmup + repetitions;
        let mut slots = Vec::new();
        let mut push = |config, workload, repetition: u32| {
            slots.push(Slot {
                run: 0,
                config,
                workload,
                repetition,
                warmup: repetition <= warmup,
            })
        };
        match order {
            Order::Blocked => {
                for c in 0..configs {
                    for w in 0..workloads {
                        for r in 1..=rounds {
                            push(c, w, r);
                        }
                    }
                }
            }
            Order::Interleaved | Order::Random => {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                for r in 1..=rounds {
                    let mut round: Vec<(usize, usize)> = (0..workloads)
                        .flat_map(|w| (0..configs).map(move |c| (c, w)))
                        .collect();
                    if order == Order::Random {
                        shuffle(&mut round, &mut rng);
                    }
                    for (c, w) in round {
                        push(c, w, r);
                    }
                }
            }
        }
        for (i, slot) in slots.iter_mut().enumerate() {
            slot.run = i as u32 + 1;
        }
        slots
    }

    fn expand(c: usize, w: usize, r: u32, warmup: u32, order: Order, seed: u64) -> Vec<Slot> {
        Matrix::new(c, w, r, warmup, order, seed)
            .unwrap()
            .iter()
            .collect()
    }

    fn labels(slots: &[Slot]) -> String {
        slots
            .iter()
            .map(|s| {
                format!(
                    "{}{}{}",
                    (b'A' + s.config as u8) as char,
                    s.workload,
                    s.repetition
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn lazy_walk_equals_the_eager_expansion_for_every_order() {
        for order in Order::ALL {
            for (c, w, r, warmup) in [(1, 1, 1, 0), (2, 3, 4, 1), (3, 2, 5, 2), (4, 1, 3, 0)] {
                for seed in [1, 7, 42, u64::MAX] {
                    let m = Matrix::new(c, w, r, warmup, order, seed).unwrap();
                    let lazy: Vec<Slot> = m.iter().collect();
                    assert_eq!(
                        lazy,
                        eager(c, w, r, warmup, order, seed),
                        "{order} {c}x{w}x{r}+{warmup} seed {seed}"
                    );
                    assert_eq!(lazy.len(), m.len() as usize);
                    assert_eq!(m.iter().len(), lazy.len());
                }
            }
        }
    }

    #[test]
    fn interleaved_alternates_configs() {
        let slots = expand(2, 2, 2, 0, Order::Interleaved, 1);
        assert_eq!(labels(&slots), "A01 B01 A11 B11 A02 B02 A12 B12");
        assert_eq!(
            slots.iter().map(|s| s.run).collect::<Vec<_>>(),
            (1..=8).collect::<Vec<_>>()
        );
    }

    #[test]
    fn blocked_groups_by_config() {
        let slots = expand(2, 1, 3, 0, Order::Blocked, 1);
        assert_eq!(labels(&slots), "A01 A02 A03 B01 B02 B03");
    }

    #[test]
    fn warmups_come_first_and_are_marked() {
        let slots = expand(2, 1, 2, 1, Order::Interleaved, 1);
        assert_eq!(labels(&slots), "A01 B01 A02 B02 A03 B03");
        assert!(slots[0].warmup && slots[1].warmup && !slots[2].warmup);
    }

    #[test]
    fn random_is_seeded_and_balanced_per_round() {
        let a = expand(3, 2, 4, 0, Order::Random, 42);
        let b = expand(3, 2, 4, 0, Order::Random, 42);
        let c = expand(3, 2, 4, 0, Order::Random, 43);
        assert_eq!(a, b);
        assert_ne!(labels(&a), labels(&c));
        assert_ne!(
            labels(&a),
            labels(&expand(3, 2, 4, 0, Order::Interleaved, 42))
        );
        for round in a.chunks(6) {
            let mut pairs: Vec<_> = round.iter().map(|s| (s.config, s.workload)).collect();
            pairs.sort();
            assert_eq!(pairs, vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
        }
    }

    #[test]
    fn a_large_matrix_is_walked_without_holding_it() {
        // A million runs: counting them allocates one round, not a million slots.
        let m = Matrix::new(2, 5, 99_990, 10, Order::Random, 3).unwrap();
        assert_eq!(m.len(), 1_000_000);
        let mut it = m.iter();
        let last = it.by_ref().last().unwrap();
        assert_eq!(last.run, 1_000_000);
        assert_eq!(last.repetition, 100_000);
        assert!(it.next().is_none());
    }

    #[test]
    fn too_many_runs_are_refused_with_the_fix() {
        let err = Matrix::new(10, 10, 10_000, 1_000, Order::Interleaved, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("= 1100000 runs"), "{err}");
        assert!(
            err.contains("--repeat") && err.contains("`repetitions`"),
            "{err}"
        );
        assert!(Matrix::new(
            usize::MAX,
            usize::MAX,
            u32::MAX,
            u32::MAX,
            Order::Blocked,
            1
        )
        .is_err());
        assert!(Matrix::new(1, 1, 0, 0, Order::Blocked, 1).is_err());
    }
}
