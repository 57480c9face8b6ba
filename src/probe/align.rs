//! `mmcab probe align`: flashbench's `-a` method, read-only. Where a read crosses a
//! boundary the flash treats specially (an erase block, a page), it takes longer than a
//! read that ends or starts exactly on that boundary.
//!
//! Method (flashbench `try_read_alignments`, re-implemented): `maxalign` is the smallest
//! `2 x blocksize x 2^k` that is at least a seventh of the device; for every power of two
//! `align` from `maxalign` down to `2 x blocksize`, and each of 7 positions `i x maxalign`
//! (wrapping around the device's end), three reads of `blocksize` bytes are timed:
//! *pre* ends on the boundary (`align - blocksize`), *on* straddles it
//! (`align - blocksize / 2`), *post* starts on it (`align`). Each is repeated `tries`
//! times, keeping per position the fastest; pre, on and post are the averages of those
//! minima over the positions, and `diff = on - (pre + post) / 2`. flashbench reads with
//! CLOCK_REALTIME; mmcab with the monotonic clock ([`std::time::Instant`]).
//!
//! The estimate ([`estimate`]) reads the diff column as flashbench's README does: the
//! erase block is the smallest alignment still on the high plateau that every larger
//! alignment shares; a second, smaller step below it marks a page-like boundary. Each
//! comes with a confidence word, and with none when the timing shows no step (the
//! emulated eMMC and loop devices have no flash timing).

use crate::stats::median;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Positions per alignment (flashbench's constant `count = 7`).
pub const POSITIONS: u64 = 7;

/// `mmcab probe align` options (flashbench's `--blocksize` and `--count`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AlignOptions {
    /// Bytes per read (flashbench's default 16 KiB).
    pub blocksize: u64,
    /// Rounds of reads; each position keeps its fastest (flashbench's `--count`, 8).
    pub tries: u32,
}

/// Largest read (flashbench's `MAX_BUFSIZE`): the probe holds one buffer of it.
pub const MAX_BLOCKSIZE: u64 = 64 << 20;

impl AlignOptions {
    /// Checks that need no device (before anything is opened or allocated).
    pub fn validate(&self) -> Result<()> {
        let bs = self.blocksize;
        if bs < 2 || !bs.is_power_of_two() || bs > MAX_BLOCKSIZE {
            bail!(
                "--blocksize {bs}: use a power of two of at most {} (flashbench: 16k, the \
                 seed: 1k)",
                crate::units::format_size(MAX_BLOCKSIZE)
            );
        }
        if self.tries == 0 {
            bail!("--count 0: use at least 1 try");
        }
        Ok(())
    }
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            blocksize: 16 << 10,
            tries: 8,
        }
    }
}

/// One line of the table: times in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AlignRow {
    pub align: u64,
    pub pre_ns: f64,
    pub on_ns: f64,
    pub post_ns: f64,
    pub diff_ns: f64,
    /// False for a value that cannot be trusted (a published negative diff that
    /// flashbench printed cut off); left out of the estimate.
    #[serde(default = "yes")]
    pub reliable: bool,
    /// Times this alignment was measured again because its reads were slower than the
    /// others' by more than [`DISTURBED`] (see [`measure`]); absent when never.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub remeasured: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

impl AlignRow {
    pub fn new(align: u64, pre_ns: f64, on_ns: f64, post_ns: f64) -> AlignRow {
        AlignRow {
            align,
            pre_ns,
            on_ns,
            post_ns,
            diff_ns: on_ns - (pre_ns + post_ns) / 2.0,
            reliable: true,
            remeasured: 0,
        }
    }

    /// The time of a read that crosses nothing here: (pre + post) / 2.
    pub fn level_ns(&self) -> f64 {
        (self.pre_ns + self.post_ns) / 2.0
    }
}

/// An alignment whose plain reads (pre, post) took more than this many times the lower
/// quartile of all alignments' was disturbed: every read of it slowed down together,
/// as when the CPU the I/O completes on is busy with something else (a loop device's
/// worker behind a QEMU guest made 16, 8, 4, 2 MiB and 512 KiB read at 40us against
/// 9.7us, and their diffs, noise on a higher level, looked like a 4 MiB erase block).
/// Flash reads do not vary like that with the alignment: flashbench's published
/// BeagleBone table stays within 0.75-1.05x its median.
pub const DISTURBED: f64 = 2.0;

/// Rounds of measuring disturbed alignments again (after the first pass, in its order).
pub const REMEASURE_ROUNDS: u32 = 3;

/// Which rows were disturbed ([`DISTURBED`]); none with fewer than 4 reliable rows.
pub fn disturbed(rows: &[AlignRow]) -> Vec<bool> {
    let mut levels: Vec<f64> = rows
        .iter()
        .filter(|r| r.reliable)
        .map(AlignRow::level_ns)
        .collect();
    if levels.len() < 4 {
        return vec![false; rows.len()];
    }
    levels.sort_by(f64::total_cmp);
    let quartile = levels[levels.len() / 4];
    rows.iter()
        .map(|r| r.reliable && r.level_ns() > DISTURBED * quartile)
        .collect()
}

/// What [`measure`] reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum AlignEvent<'a> {
    /// A row of the first pass, in flashbench's order.
    Row(&'a AlignRow),
    /// A disturbed row measured again; the row kept (the faster of the two).
    Again(&'a AlignRow),
}

/// Times one read of `len` bytes at byte `pos` of the device, in nanoseconds.
pub trait ReadTimer {
    fn time_read(&mut self, pos: u64, len: u64) -> Result<u64>;
}

/// `maxalign` and the alignments to try, largest first
/// (`blocksize`: a power of two, as [`AlignOptions::validate`] checks).
pub fn alignments(device_bytes: u64, blocksize: u64) -> Result<(u64, Vec<u64>)> {
    let mut maxalign = blocksize * 2;
    while maxalign < device_bytes / POSITIONS {
        maxalign *= 2;
    }
    if maxalign + blocksize > device_bytes {
        bail!(
            "the device holds {device_bytes} bytes, too few for reads of {blocksize} bytes \
             around {maxalign}: use a smaller --blocksize"
        );
    }
    let mut aligns = Vec::new();
    let mut a = maxalign;
    while a >= blocksize * 2 {
        aligns.push(a);
        a /= 2;
    }
    Ok((maxalign, aligns))
}

/// A read of `len` bytes at `pos` modulo the device's size, as flashbench's `time_read`
/// (`pread` at `pos % size`): a read that runs past the end goes on at the start, timed
/// as one.
fn time_wrapped(timer: &mut dyn ReadTimer, pos: u64, len: u64, device_bytes: u64) -> Result<u64> {
    let at = pos % device_bytes;
    let tail = device_bytes - at;
    if len <= tail {
        return timer.time_read(at, len);
    }
    Ok(timer.time_read(at, tail)? + timer.time_read(0, len - tail)?)
}

/// One alignment: `tries` rounds over the three reads at every position, the fastest
/// of each kept, averaged over the positions.
fn measure_one(
    timer: &mut dyn ReadTimer,
    device_bytes: u64,
    maxalign: u64,
    align: u64,
    opts: &AlignOptions,
) -> Result<AlignRow> {
    let bs = opts.blocksize;
    let starts = [align - bs, align - bs / 2, align];
    let mut best = [[u64::MAX; 3]; POSITIONS as usize];
    for _ in 0..opts.tries {
        for (k, start) in starts.iter().enumerate() {
            for (i, b) in best.iter_mut().enumerate() {
                let pos = i as u64 * maxalign + start;
                let ns = time_wrapped(timer, pos, bs, device_bytes)?;
                b[k] = b[k].min(ns);
            }
        }
    }
    let avg = |k: usize| best.iter().map(|b| b[k] as f64).sum::<f64>() / best.len() as f64;
    Ok(AlignRow::new(align, avg(0), avg(1), avg(2)))
}

/// Measure every alignment, largest first as flashbench does; then measure each
/// disturbed one ([`disturbed`]) again, up to [`REMEASURE_ROUNDS`] times, keeping the
/// faster measurement. `event` is called with each row as it is done.
pub fn measure(
    timer: &mut dyn ReadTimer,
    device_bytes: u64,
    opts: &AlignOptions,
    event: &mut dyn FnMut(AlignEvent),
) -> Result<Vec<AlignRow>> {
    opts.validate()?;
    let (maxalign, aligns) = alignments(device_bytes, opts.blocksize)?;
    let mut rows = Vec::with_capacity(aligns.len());
    for align in aligns {
        let r = measure_one(timer, device_bytes, maxalign, align, opts)?;
        event(AlignEvent::Row(&r));
        rows.push(r);
    }
    for _ in 0..REMEASURE_ROUNDS {
        let slow = disturbed(&rows);
        if !slow.contains(&true) {
            break;
        }
        for (r, _) in rows.iter_mut().zip(slow).filter(|(_, s)| *s) {
            let again = measure_one(timer, device_bytes, maxalign, r.align, opts)?;
            let times = r.remeasured + 1;
            if again.level_ns() < r.level_ns() {
                *r = again;
            }
            r.remeasured = times;
            event(AlignEvent::Again(r));
        }
    }
    Ok(rows)
}

/// How sure an estimate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// No step in the timing: nothing is claimed.
    None,
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::None => "none",
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A boundary read from the diff column: the smallest alignment of the high side of the
/// clearest step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boundary {
    /// None when no step is clear enough to name a size.
    pub bytes: Option<u64>,
    pub confidence: Confidence,
    /// Median diff at and above the boundary / below it, ns.
    pub high_ns: f64,
    pub low_ns: f64,
    /// (high - low) / the robust spread of the diffs (MAD x 1.4826, pooled).
    pub score: f64,
    /// (high - low) / the typical read time ((pre + post) / 2, median).
    pub relative: f64,
    /// Alignments on each side.
    pub n_high: usize,
    pub n_low: usize,
}

impl Boundary {
    fn none() -> Boundary {
        Boundary {
            bytes: None,
            confidence: Confidence::None,
            high_ns: f64::NAN,
            low_ns: f64::NAN,
            score: 0.0,
            relative: 0.0,
            n_high: 0,
            n_low: 0,
        }
    }
}

/// What the table says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub erase_block: Boundary,
    /// A second, smaller step below the erase block (flashbench's "8 KB pages ... read
    /// two pages simultaneously"), looked for only when an erase block was found.
    pub page: Boundary,
    /// Median (pre + post) / 2: the time of a read that crosses nothing, ns.
    pub read_ns: f64,
}

/// Median and MAD (median absolute deviation) of `v`.
fn median_mad(v: &[f64]) -> (f64, f64) {
    let m = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    (m, median(&dev))
}

/// Noise floor of the spread: timings are not more exact than this fraction of a read
/// (and a spread of 0, as three printed digits can give, would make any step "clear").
const NOISE_FLOOR: f64 = 0.002;

/// The surest, then clearest, step in `diffs` (largest alignment first) with at least
/// `min_high` alignments above and `min_low` below; graded against `read_ns`: the two
/// sides must not overlap, the high side must be clearly above zero (crossing a
/// boundary costs time), and the step must stand out of the spread (`score`) and be a
/// visible part of a read (`relative`).
fn best_step(diffs: &[(u64, f64)], read_ns: f64, min_high: usize, min_low: usize) -> Boundary {
    let n = diffs.len();
    let mut best = Boundary::none();
    for k in min_high..=n.saturating_sub(min_low) {
        if k == 0 || k == n {
            continue;
        }
        let high: Vec<f64> = diffs[..k].iter().map(|d| d.1).collect();
        let low: Vec<f64> = diffs[k..].iter().map(|d| d.1).collect();
        let (mh, dh) = median_mad(&high);
        let (ml, dl) = median_mad(&low);
        let step = mh - ml;
        if step <= 0.0 {
            continue;
        }
        let spread = (1.4826 * (dh * high.len() as f64 + dl * low.len() as f64) / n as f64)
            .max(NOISE_FLOOR * read_ns);
        let score = step / spread;
        // Every alignment on the side whose median it is nearer to: the robust spread
        // alone lets a split keep one low alignment on the high side (the simulated
        // card's 2 MiB erase block read as 1 MiB, bench/SIM-GEOMETRY.md).
        let mid = (mh + ml) / 2.0;
        let apart = high.iter().cloned().fold(f64::INFINITY, f64::min) > mid
            && low.iter().cloned().fold(f64::NEG_INFINITY, f64::max) < mid;
        let relative = step / read_ns;
        // A boundary costs time: the high side must itself be clearly above zero.
        let positive = mh > 3.0 * spread;
        let (nh, nl) = (high.len(), low.len());
        let confidence = if !apart || !positive {
            Confidence::None
        } else if score >= 8.0 && relative >= 0.05 && nh >= 3 && nl >= 3 {
            Confidence::High
        } else if score >= 5.0 && relative >= 0.02 && nh >= 2 && nl >= 2 {
            Confidence::Medium
        } else if score >= 5.0 && relative >= 0.01 {
            Confidence::Low
        } else {
            Confidence::None
        };
        // The surest step, and of equally sure ones the clearest.
        if (confidence, score) <= (best.confidence, best.score) {
            continue;
        }
        best = Boundary {
            bytes: (confidence > Confidence::None).then_some(diffs[k - 1].0),
            confidence,
            high_ns: mh,
            low_ns: ml,
            score,
            relative,
            n_high: nh,
            n_low: nl,
        };
    }
    if best.confidence == Confidence::None {
        best.bytes = None;
    }
    best
}

/// Read the erase block and a page-like boundary off the table (rows in any order;
/// unreliable and disturbed rows are left out).
pub fn estimate(rows: &[AlignRow]) -> Estimate {
    let slow = disturbed(rows);
    let mut rows: Vec<&AlignRow> = rows
        .iter()
        .zip(slow)
        .filter(|(r, s)| r.reliable && !s)
        .map(|(r, _)| r)
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.align));
    let reads: Vec<f64> = rows.iter().map(|r| r.level_ns()).collect();
    let read_ns = median(&reads);
    let diffs: Vec<(u64, f64)> = rows.iter().map(|r| (r.align, r.diff_ns)).collect();
    if diffs.len() < 4 || read_ns.is_nan() || read_ns <= 0.0 {
        return Estimate {
            erase_block: Boundary::none(),
            page: Boundary::none(),
            read_ns,
        };
    }
    let erase_block = best_step(&diffs, read_ns, 2, 2);
    let page = match erase_block.bytes {
        Some(eb) => {
            let below: Vec<(u64, f64)> = diffs.iter().filter(|d| d.0 < eb).copied().collect();
            let mut p = best_step(&below, read_ns, 2, 1);
            // One alignment below a step is too little to be sure of it.
            if p.n_low < 2 && p.confidence > Confidence::Low {
                p.confidence = Confidence::Low;
            }
            p
        }
        None => Boundary::none(),
    };
    Estimate {
        erase_block,
        page,
        read_ns,
    }
}

#[cfg(test)]
#[path = "align_tests.rs"]
mod tests;
