//! The align estimate on the BeagleBone post's published flashbench -a output (answer:
//! 2 MiB erase blocks, as the post concludes), and on synthetic timing with known
//! answers: clean, noisy, ambiguous, flat.

use super::*;
use crate::probe::flashbench;

/// The post's `flashbench -a` output, as archived (results/reference/, see its README).
fn seed_rows() -> Vec<AlignRow> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/reference/beaglebone-2013-flashbench.txt");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let p = flashbench::parse(&text).expect("parse");
    assert_eq!(p.align.len(), 1);
    p.align[0].rows.clone()
}

#[test]
fn the_published_beaglebone_run_has_2_mib_erase_blocks_as_the_post_concludes() {
    let rows = seed_rows();
    assert_eq!(rows.len(), 19, "536870912 down to 2048");
    assert_eq!(rows[0].align, 536_870_912);
    assert_eq!(rows[9].diff_ns, 57_400.0);
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(2 << 20), "{e:?}");
    assert_eq!(e.erase_block.confidence, Confidence::High, "{e:?}");
    // Below 2 MiB the diff is flat but for the last line (2048: 41.3us vs ~57us): at
    // most a weak page-like hint, never more than low confidence.
    assert!(e.page.confidence <= Confidence::Low, "{:?}", e.page);
}

/// A deterministic pseudo-random number in [-1, 1) (xorshift), for noise.
fn noise(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A model device: a read of 16 KiB takes `base` ns, `eb_cost` more when it crosses an
/// erase block boundary, `page_cost` more when it crosses a page boundary, plus noise
/// of +-`jitter` ns.
struct Model {
    base: f64,
    eb: u64,
    eb_cost: f64,
    page: u64,
    page_cost: f64,
    jitter: f64,
    state: u64,
}

impl ReadTimer for Model {
    fn time_read(&mut self, pos: u64, len: u64) -> anyhow::Result<u64> {
        let crosses = |unit: u64| unit > 0 && pos / unit != (pos + len - 1) / unit;
        let mut t = self.base;
        if crosses(self.eb) {
            t += self.eb_cost;
        }
        if crosses(self.page) {
            t += self.page_cost;
        }
        t += self.jitter * noise(&mut self.state);
        Ok(t.max(1.0) as u64)
    }
}

fn model(eb: u64, eb_cost: f64, page: u64, page_cost: f64, jitter: f64) -> Model {
    Model {
        base: 400_000.0,
        eb,
        eb_cost,
        page,
        page_cost,
        jitter,
        state: 0x2545_f491_4f6c_dd1d,
    }
}

fn measured(m: &mut Model, tries: u32) -> Vec<AlignRow> {
    let opts = AlignOptions {
        blocksize: 16 << 10,
        tries,
    };
    measure(m, 1 << 30, &opts, &mut |_| {}).expect("measure")
}

#[test]
fn the_method_reads_before_across_and_after_each_boundary() {
    let (maxalign, aligns) = alignments(1 << 30, 16 << 10).unwrap();
    assert_eq!(maxalign, 256 << 20, "smallest 2^k >= 1 GiB / 7");
    assert_eq!(aligns.first(), Some(&(256 << 20)));
    assert_eq!(aligns.last(), Some(&(32 << 10)));
    // The seed's device and options: 1920991232 bytes, --blocksize=1024.
    let (maxalign, aligns) = alignments(1_920_991_232, 1024).unwrap();
    assert_eq!((maxalign, aligns.len()), (536_870_912, 19));
}

#[test]
fn a_clean_model_gives_its_erase_block_and_page() {
    let rows = measured(&mut model(4 << 20, 300_000.0, 128 << 10, 60_000.0, 0.0), 2);
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(4 << 20), "{e:?}");
    assert_eq!(e.erase_block.confidence, Confidence::High);
    assert_eq!(e.page.bytes, Some(128 << 10), "{:?}", e.page);
    assert!(e.page.confidence >= Confidence::Medium, "{:?}", e.page);
    // A page step with only one alignment below it (64 KiB pages, reads of 16 KiB:
    // only 32 KiB is below): named, but with low confidence.
    let rows = measured(&mut model(4 << 20, 300_000.0, 64 << 10, 60_000.0, 0.0), 2);
    let page = estimate(&rows).page;
    assert_eq!(
        (page.bytes, page.confidence),
        (Some(64 << 10), Confidence::Low)
    );
}

/// Noise of +-50 us on reads of 400 us, with the boundary costing 150 us: minimum of 8
/// tries still finds it.
#[test]
fn a_noisy_model_still_gives_its_erase_block() {
    let rows = measured(&mut model(2 << 20, 150_000.0, 0, 0.0, 50_000.0), 8);
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(2 << 20), "{e:?}");
    assert!(e.erase_block.confidence >= Confidence::Medium, "{e:?}");
    assert_eq!(e.page.bytes, None, "no page in the model: {:?}", e.page);
}

/// A boundary that costs less than the noise: nothing claimed with any confidence
/// beyond low.
#[test]
fn an_ambiguous_model_is_not_claimed_with_confidence() {
    let rows = measured(&mut model(2 << 20, 4_000.0, 0, 0.0, 60_000.0), 1);
    let e = estimate(&rows);
    assert!(e.erase_block.confidence <= Confidence::Low, "{e:?}");
}

/// No flash timing (an emulated card, a loop device): no boundary at all.
#[test]
fn a_flat_model_has_no_boundary() {
    for jitter in [0.0, 2_000.0, 40_000.0] {
        let rows = measured(&mut model(0, 0.0, 0, 0.0, jitter), 4);
        let e = estimate(&rows);
        assert_eq!(e.erase_block.bytes, None, "jitter {jitter}: {e:?}");
        assert_eq!(e.erase_block.confidence, Confidence::None);
        assert_eq!(e.page.bytes, None);
    }
}

/// A diff that grows smoothly with the alignment (drift, not a step): no high claim.
#[test]
fn a_ramp_is_not_a_step() {
    let rows: Vec<AlignRow> = (15..=28)
        .map(|k| {
            let d = f64::from(k - 15) * 5_000.0;
            AlignRow::new(1 << k, 400_000.0, 400_000.0 + d, 400_000.0)
        })
        .collect();
    let e = estimate(&rows);
    assert!(e.erase_block.confidence <= Confidence::Low, "{e:?}");
}

/// Unreliable rows (cut-off negative diffs) are left out; too few rows: no estimate.
#[test]
fn unreliable_and_too_few_rows() {
    let mut rows = seed_rows();
    for r in rows.iter_mut().skip(3).take(4) {
        r.reliable = false;
        r.diff_ns = -1e9;
    }
    assert_eq!(estimate(&rows).erase_block.bytes, Some(2 << 20));
    assert_eq!(estimate(&seed_rows()[..3]).erase_block.bytes, None);
}

/// Bad options are refused before the device is opened or a buffer allocated.
#[test]
fn options_are_checked_first() {
    for (blocksize, tries, word) in [
        (3 << 10, 8, "--blocksize 3072"),
        (0, 8, "--blocksize 0"),
        (128 << 20, 8, "at most 64MiB"),
        (1 << 40, 8, "at most 64MiB"),
        (16 << 10, 0, "--count 0"),
    ] {
        let opts = AlignOptions { blocksize, tries };
        let err = opts.validate().unwrap_err().to_string();
        assert!(err.contains(word), "{word}: {err}");
    }
    AlignOptions::default().validate().unwrap();
}

/// Records every read.
struct Recorder(Vec<(u64, u64)>);

impl ReadTimer for Recorder {
    fn time_read(&mut self, pos: u64, len: u64) -> anyhow::Result<u64> {
        self.0.push((pos, len));
        Ok(1)
    }
}

/// Reads wrap around the device's end as flashbench's (`pos % size`): 7 positions at
/// every alignment, a read over the end goes on at the start.
#[test]
fn reads_wrap_around_the_device_end_as_flashbench() {
    let (size, bs) = (1u64 << 30, 16u64 << 10);
    let mut r = Recorder(Vec::new());
    let opts = AlignOptions {
        blocksize: bs,
        tries: 1,
    };
    let rows = measure(&mut r, size, &opts, &mut |_| {}).unwrap();
    assert_eq!(rows[0].align, 256 << 20);
    assert!(r.0.iter().all(|&(p, l)| p + l <= size && l > 0), "in range");
    // The largest alignment (256 MiB, a quarter of the device): position 3's *on* read
    // runs over the end (8 KiB there, 8 KiB at 0) and its *post* read wraps to 0;
    // positions 4..6 wrap to 0..2.
    let first: Vec<(u64, u64)> = r.0.iter().take(3 * 7 + 1).copied().collect();
    let on = &first[7..15];
    assert_eq!(on[3], (size - bs / 2, bs / 2));
    assert_eq!(on[4], (0, bs / 2));
    assert_eq!(on[5], ((256 << 20) - bs / 2, bs));
    let post = &first[15..22];
    assert_eq!(post[3], (0, bs));
    assert_eq!(post[4], (256 << 20, bs));
    // Every row averages 7 positions: a timer of 1 ns per read gives 1 ns, 2 ns for the
    // split read at the largest alignment (on = (6 + 2) / 7).
    assert_eq!(rows[0].pre_ns, 1.0);
    assert!((rows[0].on_ns - 8.0 / 7.0).abs() < 1e-9, "{:?}", rows[0]);
    assert!(rows[1..].iter().all(|x| x.on_ns == 1.0), "{rows:?}");
}

/// The simulated card's 2 MiB erase block at 100 us (bench/SIM-GEOMETRY.md, set a21):
/// 1 MiB's small diff must not join the high side because the spread is robust.
#[test]
fn one_low_alignment_does_not_join_the_high_plateau() {
    let diffs_us = [
        98.9, 98.3, 98.8, 98.5, 99.3, 97.5, 98.3, 99.0, 98.0, 98.6, 1.69, 0.13, -0.93, -1.02,
        -1.15, 0.28,
    ];
    let rows: Vec<AlignRow> = diffs_us
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let align = (1u64 << 30) >> i;
            AlignRow::new(align, 507_500.0, 507_500.0 + d * 1000.0, 507_500.0)
        })
        .collect();
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(2 << 20), "{e:?}");
    assert_eq!(e.erase_block.confidence, Confidence::High);
}

/// CI's loop device behind a busy QEMU guest: five alignments read at ~40us instead of
/// 9.7us, every read of them slowed together, and the diffs on that level rose to a
/// 3.5us "step" at 4 MiB. Those rows are disturbed: left out, no boundary is claimed.
#[test]
fn alignments_read_slowly_together_are_left_out_not_read_as_a_boundary() {
    let us = [
        (16 << 20, 39.9, 44.9, 40.5),
        (8 << 20, 41.1, 42.6, 37.2),
        (4 << 20, 37.3, 41.9, 41.1),
        (2 << 20, 41.3, 40.4, 41.1),
        (1 << 20, 9.67, 9.44, 9.58),
        (512 << 10, 38.8, 38.8, 39.7),
        (256 << 10, 9.66, 9.79, 10.2),
        (128 << 10, 9.68, 9.67, 9.8),
        (64 << 10, 9.83, 9.84, 9.94),
        (32 << 10, 10.0, 9.98, 9.75),
    ];
    let rows: Vec<AlignRow> = us
        .iter()
        .map(|&(a, pre, on, post)| AlignRow::new(a, pre * 1e3, on * 1e3, post * 1e3))
        .collect();
    let slow = disturbed(&rows);
    assert_eq!(
        slow,
        [true, true, true, true, false, true, false, false, false, false]
    );
    let e = estimate(&rows);
    assert_eq!(e.erase_block.confidence, Confidence::None, "{e:?}");
    assert!((e.read_ns - 9_750.0).abs() < 200.0, "{e:?}");
    // The published BeagleBone table (levels 0.75-1.05x its median) has none.
    assert!(!disturbed(&seed_rows()).contains(&true));
}

/// A model whose reads are all `factor` times slower (with the *on* read a bit slower
/// still, as noise on a higher level) while `slow(n)` holds for the n-th read.
struct Disturbed {
    inner: Model,
    slow: fn(u64) -> bool,
    factor: f64,
    reads: u64,
}

impl ReadTimer for Disturbed {
    fn time_read(&mut self, pos: u64, len: u64) -> anyhow::Result<u64> {
        let t = self.inner.time_read(pos, len)? as f64;
        self.reads += 1;
        if !(self.slow)(self.reads) {
            return Ok(t as u64);
        }
        let on = pos % (16 << 10) != 0;
        Ok((t * self.factor + if on { 0.1 * t } else { 0.0 }) as u64)
    }
}

/// Reads per alignment at 8 tries: 3 reads at 7 positions each.
const PER_ALIGNMENT: u64 = 8 * 3 * 7;

fn disturbed_measure(slow: fn(u64) -> bool) -> (Vec<AlignRow>, Vec<u64>, Vec<(u64, u32)>) {
    let mut d = Disturbed {
        inner: model(4 << 20, 40_000.0, 0, 0.0, 2_000.0),
        slow,
        factor: 4.0,
        reads: 0,
    };
    let opts = AlignOptions {
        blocksize: 16 << 10,
        tries: 8,
    };
    let (mut first, mut again) = (Vec::new(), Vec::new());
    let rows = measure(&mut d, 1 << 30, &opts, &mut |e| match e {
        AlignEvent::Row(r) => first.push(r.align),
        AlignEvent::Again(r) => again.push((r.align, r.remeasured)),
    })
    .unwrap();
    (rows, first, again)
}

/// A disturbance over the first three alignments: they are measured again after the
/// first pass (each row reported twice), the faster kept; the erase block is found as
/// if nothing had happened.
#[test]
fn a_passing_disturbance_is_measured_again() {
    let (rows, first, again) = disturbed_measure(|n| n <= 3 * PER_ALIGNMENT);
    assert_eq!(first.len(), 14, "256 MiB down to 32 KiB, in order");
    assert_eq!(again, [(256 << 20, 1), (128 << 20, 1), (64 << 20, 1)]);
    assert!(!disturbed(&rows).contains(&true), "{rows:?}");
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(4 << 20), "{e:?}");
    assert_eq!(e.erase_block.confidence, Confidence::High, "{e:?}");
}

/// A disturbance that is back whenever the first two alignments are measured again:
/// three rounds, then they stay in the table, marked, and out of the estimate.
#[test]
fn a_lasting_disturbance_is_left_out_after_three_rounds() {
    let (rows, _, again) = disturbed_measure(|n| n <= 2 * PER_ALIGNMENT || n > 14 * PER_ALIGNMENT);
    assert_eq!(again.len(), 6, "{again:?}");
    assert_eq!(again[4..], [(256 << 20, 3), (128 << 20, 3)]);
    assert_eq!(disturbed(&rows)[..3], [true, true, false]);
    assert!(rows[2..].iter().all(|r| r.remeasured == 0));
    let e = estimate(&rows);
    assert_eq!(e.erase_block.bytes, Some(4 << 20), "{e:?}");
    assert_eq!(e.erase_block.n_high, 5, "64 MiB down to 4 MiB: {e:?}");
}
