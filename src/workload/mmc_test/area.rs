//! Where an mmc_test test writes on the card, worked out as the driver does
//! (drivers/mmc/core/mmc_test.c, Linux 6.12 and 7.x), so the data guard can check it
//! before the card is unbound: byte ranges `[start, end)` of the user area.

use crate::plan::mmc_test::{MmcTestArea, MmcTestCase};
use anyhow::{bail, Result};

const SECTOR: u64 = 512;
/// `TEST_AREA_MAX_SIZE`: 128 MiB.
const TEST_AREA_MAX: u64 = 128 << 20;

/// The test area of `mmc_test_area_init`: `max_sz`, about 4 MiB in steps of the card's
/// preferred erase size (`pref_erase`, sysfs `preferred_erase_size`), at most 128 MiB,
/// at half the capacity rounded down to a multiple of `max_sz`.
pub fn test_area(capacity: u64, pref_erase: u64) -> (u64, u64) {
    let step = pref_erase.max(SECTOR);
    let mut max_sz = step;
    while max_sz < 4 << 20 {
        max_sz += step;
    }
    while max_sz > TEST_AREA_MAX && max_sz > step {
        max_sz -= step;
    }
    let half = capacity / SECTOR / 2;
    let start = (half - half % (max_sz / SECTOR)) * SECTOR;
    (start, start + max_sz)
}

/// The byte ranges `case` writes on a card of `capacity` bytes with a preferred erase
/// size of `pref_erase` bytes; an error when the card cannot give the area.
pub fn writes(case: MmcTestCase, capacity: u64, pref_erase: u64) -> Result<Vec<(u64, u64)>> {
    if capacity < 64 << 20 {
        bail!(
            "mmc_test = \"{}\" needs a card of at least 64 MiB (its areas are at a quarter and \
             half the capacity); this one has {} bytes",
            case.as_str(),
            capacity
        );
    }
    let area = test_area(capacity, pref_erase);
    if area.1 > capacity {
        bail!(
            "mmc_test = \"{}\": the test area [{}, {}) does not fit the card's {} bytes",
            case.as_str(),
            area.0,
            area.1,
            capacity
        );
    }
    Ok(match case.area() {
        // Erased, then filled (the read tests) or written by size.
        MmcTestArea::Half => vec![area],
        MmcTestArea::RandomQuarter if case.writes() => {
            // rnd_addr = capacity / 4 sectors, plus pref_erase * ea (< range1) plus a
            // transfer: at most half the capacity and one area's transfer beyond.
            let quarter = capacity / SECTOR / 4 * SECTOR;
            vec![(quarter, (capacity / 2 + (area.1 - area.0)).min(capacity))]
        }
        MmcTestArea::Multiple if case.writes() => {
            // mmc_test_rw_multiple: size = min(128 MiB, capacity / 2), from capacity / 4
            // sectors rounded down to 0x10000 sectors (or 0x800 on a card under 128 MiB).
            let size = TEST_AREA_MAX.min(capacity / SECTOR / 2 * SECTOR);
            let quarter = capacity / SECTOR / 4;
            let start = if quarter & 0xffff_0000 != 0 {
                quarter & 0xffff_0000
            } else {
                quarter & 0xffff_f800
            } * SECTOR;
            vec![(start, start + size)]
        }
        // Reads that write nothing (their preparation neither erases nor fills).
        MmcTestArea::RandomQuarter | MmcTestArea::Multiple => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    #[test]
    fn the_test_area_is_about_4_mib_at_half_the_card() {
        // The simulated card's default 4 GiB with a 512 KiB erase size: 4 MiB at 2 GiB.
        assert_eq!(test_area(4 * GIB, 512 * 1024), (2 * GIB, 2 * GIB + 4 * MIB));
        // A 3 MiB preferred erase size: 6 MiB, at a multiple of 6 MiB below half.
        let (start, end) = test_area(4 * GIB, 3 * MIB);
        assert_eq!(end - start, 6 * MIB);
        assert_eq!(start % (6 * MIB), 0);
        assert!(start <= 2 * GIB && 2 * GIB - start < 6 * MIB);
    }

    #[test]
    fn reads_of_the_test_area_write_it_and_other_reads_write_nothing() {
        let w = writes(MmcTestCase::SeqRead, 4 * GIB, 512 * 1024).unwrap();
        assert_eq!(w, vec![(2 * GIB, 2 * GIB + 4 * MIB)]);
        assert!(writes(MmcTestCase::RandRead, 4 * GIB, 512 * 1024)
            .unwrap()
            .is_empty());
        assert!(writes(MmcTestCase::BlockingRead, 4 * GIB, 512 * 1024)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_multiple_tests_write_128_mib_from_a_quarter() {
        let w = writes(MmcTestCase::BlockingWrite, 4 * GIB, 512 * 1024).unwrap();
        assert_eq!(w, vec![(GIB, GIB + 128 * MIB)]);
        let w = writes(MmcTestCase::RandWrite, 4 * GIB, 512 * 1024).unwrap();
        assert_eq!(w, vec![(GIB, 2 * GIB + 4 * MIB)]);
    }

    #[test]
    fn a_card_too_small_is_refused() {
        let err = writes(MmcTestCase::SeqWrite, 32 * MIB, 512 * 1024).unwrap_err();
        assert!(err.to_string().contains("at least 64 MiB"), "{err}");
    }
}
