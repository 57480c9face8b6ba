//! Expand configs x workloads x repetitions into numbered runs, in a fair order.
//!
//! - `interleaved` (default): every round runs each workload under each config in turn
//!   (A B A B ...), so slow drift (temperature, wear, background work) hits all configs
//!   alike;
//! - `random`: each round in a seeded random order (same seed, same order);
//! - `blocked`: all runs of a config together (A A ... B B ...), only on request.
//!
//! Warm-up repetitions come first (rounds 1..=warmup) and are recorded with warmup=true.

use anyhow::{bail, Result};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Interleaved,
    Random,
    Blocked,
}

impl Order {
    pub fn parse(text: &str) -> Result<Order> {
        match text.trim().to_ascii_lowercase().as_str() {
            "interleaved" | "abab" => Ok(Order::Interleaved),
            "random" => Ok(Order::Random),
            "blocked" | "aabb" => Ok(Order::Blocked),
            other => bail!("order '{other}': use interleaved, random or blocked"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Random => "random",
            Order::Blocked => "blocked",
        }
    }
}

/// One run of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// 1-based position in the order of execution.
    pub run: u32,
    /// Index into the plan's configs.
    pub config: usize,
    /// Index into the plan's workloads.
    pub workload: usize,
    /// 1-based repetition of this config x workload, warm-ups included.
    pub repetition: u32,
    pub warmup: bool,
}

pub fn expand(
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

/// Fisher-Yates with an unbiased-enough multiply-shift bound (n is tiny).
fn shuffle<T>(items: &mut [T], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..items.len()).rev() {
        let j = ((rng.next_u64() as u128 * (i as u128 + 1)) >> 64) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn orders_parse() {
        assert_eq!(Order::parse("ABAB").unwrap(), Order::Interleaved);
        assert_eq!(Order::parse("random").unwrap(), Order::Random);
        assert!(Order::parse("sideways")
            .unwrap_err()
            .to_string()
            .contains("blocked"));
    }
}
