//! The `mmc_test` key of a job with `engine = "mmc_test"`: which of the kernel's mmc_test
//! performance tests runs (drivers/mmc/core/mmc_test.c, `mmc_test_cases[]`; the same
//! tests and names in Linux 6.12 and 7.x). The engine finds the test's number in the
//! card's debugfs `testlist` by its name, so a kernel that numbers them otherwise still
//! runs the test the plan names.
//!
//! What each test does, and where it writes (the data guard's areas), from the driver's
//! source (`mmc_test_area_init`, `mmc_test_rw_multiple`, `mmc_test_rnd_perf`):
//! - `seq-read`, `seq-write`, `read`, `write`: the "test area", `max_sz` bytes at half
//!   the capacity (about 4 MiB, a multiple of the card's preferred erase size, at most
//!   128 MiB), erased and filled by the read tests' preparation too;
//! - `rand-read`, `rand-write`: 10 s per transfer size at random places between a quarter
//!   and half the capacity (reads write nothing);
//! - `blocking-*`, `nonblock-*`: 128 MiB (at most half the capacity) from a quarter of
//!   the capacity rounded down to 32 MiB (the driver's `0xffff0000` sectors), erased
//!   before the writes; the reads write nothing.

use serde::{Deserialize, Serialize};

/// One of mmc_test's performance tests, by the plan's word for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MmcTestCase {
    /// "Consecutive read performance by transfer size".
    #[serde(rename = "seq-read")]
    SeqRead,
    /// "Consecutive write performance by transfer size".
    #[serde(rename = "seq-write")]
    SeqWrite,
    /// "Single read performance by transfer size".
    #[serde(rename = "read")]
    Read,
    /// "Single write performance by transfer size".
    #[serde(rename = "write")]
    Write,
    /// "Random read performance by transfer size" (10 s per size).
    #[serde(rename = "rand-read")]
    RandRead,
    /// "Random write performance by transfer size" (twice 10 s per size).
    #[serde(rename = "rand-write")]
    RandWrite,
    /// "Read performance with blocking req 4k to 4MB".
    #[serde(rename = "blocking-read")]
    BlockingRead,
    /// "Write performance with blocking req 4k to 4MB".
    #[serde(rename = "blocking-write")]
    BlockingWrite,
    /// "Read performance with non-blocking req 4k to 4MB".
    #[serde(rename = "nonblock-read")]
    NonblockRead,
    /// "Write performance with non-blocking req 4k to 4MB".
    #[serde(rename = "nonblock-write")]
    NonblockWrite,
}

/// Where a test writes (see the module's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmcTestArea {
    /// The test area at half the capacity (`mmc_test_area_init`).
    Half,
    /// Random places between a quarter and half the capacity (`mmc_test_rnd_perf`).
    RandomQuarter,
    /// 128 MiB from a quarter of the capacity (`mmc_test_rw_multiple`).
    Multiple,
}

impl MmcTestCase {
    pub const ALL: [MmcTestCase; 10] = [
        MmcTestCase::SeqRead,
        MmcTestCase::SeqWrite,
        MmcTestCase::Read,
        MmcTestCase::Write,
        MmcTestCase::RandRead,
        MmcTestCase::RandWrite,
        MmcTestCase::BlockingRead,
        MmcTestCase::BlockingWrite,
        MmcTestCase::NonblockRead,
        MmcTestCase::NonblockWrite,
    ];

    /// The plan word.
    pub fn as_str(self) -> &'static str {
        match self {
            MmcTestCase::SeqRead => "seq-read",
            MmcTestCase::SeqWrite => "seq-write",
            MmcTestCase::Read => "read",
            MmcTestCase::Write => "write",
            MmcTestCase::RandRead => "rand-read",
            MmcTestCase::RandWrite => "rand-write",
            MmcTestCase::BlockingRead => "blocking-read",
            MmcTestCase::BlockingWrite => "blocking-write",
            MmcTestCase::NonblockRead => "nonblock-read",
            MmcTestCase::NonblockWrite => "nonblock-write",
        }
    }

    /// The test's name in `mmc_test_cases[]`, as the debugfs `testlist` prints it.
    pub fn kernel_name(self) -> &'static str {
        match self {
            MmcTestCase::SeqRead => "Consecutive read performance by transfer size",
            MmcTestCase::SeqWrite => "Consecutive write performance by transfer size",
            MmcTestCase::Read => "Single read performance by transfer size",
            MmcTestCase::Write => "Single write performance by transfer size",
            MmcTestCase::RandRead => "Random read performance by transfer size",
            MmcTestCase::RandWrite => "Random write performance by transfer size",
            MmcTestCase::BlockingRead => "Read performance with blocking req 4k to 4MB",
            MmcTestCase::BlockingWrite => "Write performance with blocking req 4k to 4MB",
            MmcTestCase::NonblockRead => "Read performance with non-blocking req 4k to 4MB",
            MmcTestCase::NonblockWrite => "Write performance with non-blocking req 4k to 4MB",
        }
    }

    /// Its number in Linux 6.12 and 7.x (`mmc_test_cases[]` index + 1), what `testlist`
    /// is checked against.
    pub fn number(self) -> u32 {
        match self {
            MmcTestCase::Read => 27,
            MmcTestCase::Write => 28,
            MmcTestCase::SeqRead => 30,
            MmcTestCase::SeqWrite => 31,
            MmcTestCase::RandRead => 33,
            MmcTestCase::RandWrite => 34,
            MmcTestCase::BlockingWrite => 37,
            MmcTestCase::NonblockWrite => 38,
            MmcTestCase::BlockingRead => 39,
            MmcTestCase::NonblockRead => 40,
        }
    }

    /// Whether its timed transfers write.
    pub fn writes(self) -> bool {
        matches!(
            self,
            MmcTestCase::SeqWrite
                | MmcTestCase::Write
                | MmcTestCase::RandWrite
                | MmcTestCase::BlockingWrite
                | MmcTestCase::NonblockWrite
        )
    }

    /// Whether anything of the test writes to the card: its timed writes, or the read
    /// tests' preparation (erase and fill of the test area).
    pub fn writes_card(self) -> bool {
        self.writes() || self.area() == MmcTestArea::Half
    }

    pub fn is_random(self) -> bool {
        matches!(self, MmcTestCase::RandRead | MmcTestCase::RandWrite)
    }

    pub fn area(self) -> MmcTestArea {
        match self {
            MmcTestCase::SeqRead
            | MmcTestCase::SeqWrite
            | MmcTestCase::Read
            | MmcTestCase::Write => MmcTestArea::Half,
            MmcTestCase::RandRead | MmcTestCase::RandWrite => MmcTestArea::RandomQuarter,
            _ => MmcTestArea::Multiple,
        }
    }

    /// The plan words, for messages.
    pub fn words() -> String {
        MmcTestCase::ALL
            .iter()
            .map(|c| format!("\"{}\"", c.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_round_trips_through_its_plan_word() {
        for case in MmcTestCase::ALL {
            let text = format!("c = \"{}\"", case.as_str());
            #[derive(Deserialize)]
            struct T {
                c: MmcTestCase,
            }
            let t: T = toml::from_str(&text).unwrap();
            assert_eq!(t.c, case);
        }
    }

    #[test]
    fn read_tests_of_the_test_area_write_the_card_in_their_preparation() {
        assert!(MmcTestCase::SeqRead.writes_card());
        assert!(!MmcTestCase::SeqRead.writes());
        assert!(!MmcTestCase::RandRead.writes_card());
        assert!(!MmcTestCase::BlockingRead.writes_card());
        assert!(MmcTestCase::NonblockWrite.writes_card());
    }

    #[test]
    fn numbers_are_distinct() {
        let mut n: Vec<u32> = MmcTestCase::ALL.iter().map(|c| c.number()).collect();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), MmcTestCase::ALL.len());
    }
}
