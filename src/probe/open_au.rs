//! `mmcab probe open-au`: flashbench's `--open-au` method (it writes). A flash
//! controller keeps a few allocation units (erase blocks being filled) open at once;
//! writing round-robin into more than it keeps open forces it to close and copy one
//! for nearly every write, and throughput collapses.
//!
//! Method (flashbench `try_open_au`, re-implemented): N allocation units of
//! `erase_size` bytes, 12 erase sizes apart, from `offset` (default: 16 MiB rounded up
//! to a whole erase size, past a FAT). For each write size from `erase_size` down to
//! `blocksize`, halving: for each chunk of that size in an erase block (in order, or in
//! a fixed pseudo-random order with `--random`), one O_DIRECT|O_SYNC write of the chunk
//! into each of the N units in turn (a fixed pseudo-random order of units, as flashbench
//! uses; its LFSR sequence is not reproduced). Each size's MB/s is bytes / total write
//! time (10^6 B/s, flashbench's M/s). The data is the byte 0x5a, as flashbench writes.
//!
//! Collapse ([`collapse`]): when the unit count is over the limit, each write costs
//! about the same (a unit's copy), so MB/s halves with every halving of the write size.
//! A run has collapsed at size `s` when MB/s fell to at most 60% at two halvings in a
//! row (4s -> 2s -> s) and, when a one-unit run is there to compare with, is below
//! half of that run's MB/s at `s`. On the BeagleBone post's numbers this gives what its
//! author concluded: 5 units kept open, in linear and in random order.

use crate::units::format_size;
use anyhow::{bail, Result};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Units are this many erase sizes apart (flashbench: "use only one out of 12 erase
/// blocks").
pub const SPACING: u64 = 12;
/// The byte every write carries (flashbench's `0x5a`).
pub const PATTERN: u8 = 0x5a;
/// Most units `--find` tries unless told (`--max-nr`).
pub const DEFAULT_MAX_NR: u32 = 16;

/// How many units to write to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// Exactly this many (`--nr N`).
    Nr(u32),
    /// 1, 2, 3, ... until throughput collapses or `max` is reached (`--find`).
    Find { max: u32 },
}

/// Largest erase size (one write of it: the probe's buffer; flashbench's `MAX_BUFSIZE`).
pub const MAX_ERASE_SIZE: u64 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenAuOptions {
    pub erase_size: u64,
    /// Smallest write (flashbench's default 16 KiB; the post used 8 KiB).
    pub blocksize: u64,
    /// Start of the first unit; None: 16 MiB rounded up to a multiple of erase_size.
    pub offset: Option<u64>,
    pub random: bool,
    pub units: Units,
    /// The user allows the writes (`--allow-write`); without it the probe refuses
    /// before opening the device. Not recorded.
    #[serde(skip)]
    pub allow_write: bool,
    /// `--overwrite-data`: even on a device that holds data. Not recorded.
    #[serde(skip)]
    pub overwrite_data: bool,
}

impl OpenAuOptions {
    /// Checks that need no device (before anything is opened or allocated).
    pub fn validate(&self) -> Result<()> {
        let (eb, bs) = (self.erase_size, self.blocksize);
        if !eb.is_power_of_two() || !bs.is_power_of_two() || bs > eb {
            bail!(
                "--erase-size {eb} and --blocksize {bs}: both powers of two, blocksize at most \
                 the erase size (flashbench: --erasesize=$[2*1024*1024] --blocksize=$[8*1024])"
            );
        }
        if eb > MAX_ERASE_SIZE {
            bail!(
                "--erase-size {}: at most {}",
                format_size(eb),
                format_size(MAX_ERASE_SIZE)
            );
        }
        match self.units {
            Units::Nr(0) => bail!("--nr 0: use at least 1 unit"),
            Units::Find { max } if max < 2 => {
                bail!("--max-nr {max}: --find needs at least 2 units (1 is the reference)")
            }
            _ => Ok(()),
        }
    }

    pub fn offset(&self) -> u64 {
        self.offset
            .unwrap_or_else(|| (16u64 << 20).div_ceil(self.erase_size) * self.erase_size)
    }

    /// Bytes of the device from `offset` that `nr` units span.
    pub fn span(&self, nr: u32) -> u64 {
        (u64::from(nr.max(1)) - 1) * SPACING * self.erase_size + self.erase_size
    }

    /// The write sizes, largest first.
    pub fn sizes(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut s = self.erase_size;
        while s >= self.blocksize {
            out.push(s);
            s /= 2;
        }
        out
    }

    /// Check the sizes and that `nr` units fit on a device of `device_bytes`; the most
    /// units that fit.
    pub fn check(&self, device_bytes: u64, logical_block: u64) -> Result<u32> {
        self.validate()?;
        let (eb, bs) = (self.erase_size, self.blocksize);
        if bs < logical_block {
            bail!("--blocksize {bs} is smaller than the device's logical block ({logical_block} bytes), which O_DIRECT needs");
        }
        let offset = self.offset();
        if offset % logical_block != 0 {
            bail!("--offset {offset} is not a multiple of the device's logical block ({logical_block} bytes)");
        }
        let room = device_bytes.saturating_sub(offset);
        let fit = if room < eb {
            0
        } else {
            ((room - eb) / (SPACING * eb) + 1).min(u64::from(u32::MAX)) as u32
        };
        let wanted = match self.units {
            Units::Nr(n) => n,
            Units::Find { max } => max.min(fit).max(2),
        };
        if wanted > fit {
            bail!(
                "{wanted} units of {eb} bytes, {SPACING} erase sizes apart from offset {offset}, \
                 need {} bytes of the device, which has {device_bytes}: at most {fit} fit \
                 (lower --nr / --max-nr or --erase-size)",
                offset.saturating_add(self.span(wanted))
            );
        }
        Ok(fit)
    }
}

/// MB/s at one write size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpenAuPoint {
    pub size: u64,
    pub mb_per_s: f64,
}

impl OpenAuPoint {
    /// Whether this is a measurement: a rate above 0 (published flashbench output may
    /// print 0 where nothing was timed; such a point is left out of the estimate).
    pub fn measured(&self) -> bool {
        self.mb_per_s > 0.0 && self.mb_per_s.is_finite()
    }
}

/// One run of the method with `nr` units (one flashbench `--open-au` command).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAuRun {
    pub nr: u32,
    pub random: bool,
    pub erase_size: u64,
    pub blocksize: u64,
    /// Largest write size first.
    pub points: Vec<OpenAuPoint>,
    /// Stopped before the smallest size (throughput had collapsed; or `^C` in a
    /// published run).
    pub interrupted: bool,
}

/// Times one write of `len` bytes of [`PATTERN`] at byte `pos`, in nanoseconds.
pub trait WriteTimer {
    fn time_write(&mut self, pos: u64, len: u64) -> Result<u64>;
}

/// A fixed pseudo-random order of 0..n (the same for every run, like flashbench's).
pub fn fixed_order(n: u64) -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5a5a);
    let mut v: Vec<u64> = (0..n).collect();
    for i in (1..v.len()).rev() {
        let j = ((rng.next_u64() as u128 * (i as u128 + 1)) >> 64) as usize;
        v.swap(i, j);
    }
    v
}

/// Run the method with `nr` units; `point` is called as each size is done. With a
/// reference run (one unit), stops after the size at which throughput collapsed.
pub fn run(
    timer: &mut dyn WriteTimer,
    opts: &OpenAuOptions,
    nr: u32,
    reference: Option<&OpenAuRun>,
    point: &mut dyn FnMut(&OpenAuPoint),
) -> Result<OpenAuRun> {
    let offset = opts.offset();
    let units = fixed_order(u64::from(nr));
    let mut out = OpenAuRun {
        nr,
        random: opts.random,
        erase_size: opts.erase_size,
        blocksize: opts.blocksize,
        points: Vec::new(),
        interrupted: false,
    };
    let sizes = opts.sizes();
    for (i, &len) in sizes.iter().enumerate() {
        let chunks = opts.erase_size / len;
        let order = if opts.random {
            fixed_order(chunks)
        } else {
            (0..chunks).collect()
        };
        let mut ns = 0u64;
        for chunk in &order {
            for au in &units {
                let pos = offset + au * SPACING * opts.erase_size + chunk * len;
                ns += timer.time_write(pos, len)?.max(1);
            }
        }
        let bytes = chunks * len * u64::from(nr);
        let p = OpenAuPoint {
            size: len,
            mb_per_s: bytes as f64 / (ns as f64 / 1e9) / 1e6,
        };
        point(&p);
        out.points.push(p);
        if reference.is_some() && collapse(&out, reference).is_some() && i + 1 < sizes.len() {
            out.interrupted = true;
            break;
        }
    }
    Ok(out)
}

/// What `probe open-au` reports while it runs.
pub enum OpenAuEvent<'a> {
    /// A run with this many units begins.
    Start {
        nr: u32,
    },
    Point(&'a OpenAuPoint),
    /// The run stopped early: throughput collapsed at this size.
    Collapsed {
        nr: u32,
        size: u64,
    },
}

/// The runs `opts.units` asks for, `fit` units at most: one with `--nr`, or with 1, 2,
/// 3 ... units until one collapses against the one-unit run (`--find`).
pub fn runs(
    timer: &mut dyn WriteTimer,
    opts: &OpenAuOptions,
    fit: u32,
    event: &mut dyn FnMut(OpenAuEvent),
) -> Result<Vec<OpenAuRun>> {
    let counts: Vec<u32> = match opts.units {
        Units::Nr(n) => vec![n],
        Units::Find { max } => (1..=max.min(fit)).collect(),
    };
    let mut runs: Vec<OpenAuRun> = Vec::new();
    for nr in counts {
        event(OpenAuEvent::Start { nr });
        let reference = runs.iter().find(|r| r.nr == 1).cloned();
        let run = run(timer, opts, nr, reference.as_ref(), &mut |p| {
            event(OpenAuEvent::Point(p))
        })?;
        let collapsed = collapse(&run, reference.as_ref());
        if let (Some(c), true) = (collapsed, run.interrupted) {
            event(OpenAuEvent::Collapsed { nr, size: c.size });
        }
        runs.push(run);
        if collapsed.is_some() && matches!(opts.units, Units::Find { .. }) {
            break;
        }
    }
    Ok(runs)
}

/// Where a run's throughput collapsed: (write size, MB/s there, one unit's MB/s there).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Collapse {
    pub size: u64,
    pub mb_per_s: f64,
    pub reference_mb_per_s: Option<f64>,
}

/// Fraction MB/s keeps at a halving of the write size, at most, to count as falling
/// with the size.
const HALVING: f64 = 0.6;
/// Fraction of one unit's MB/s, at most, for a collapse (when one unit was measured).
const BELOW_ONE_UNIT: f64 = 0.5;

/// The first write size at which `run` collapsed (see the module doc), compared with
/// `reference` (the one-unit run of the same order) when there is one. A one-unit run
/// is the reference and never collapses: its MB/s falls with the write size on any
/// device whose writes are bound by a fixed cost per command.
pub fn collapse(run: &OpenAuRun, reference: Option<&OpenAuRun>) -> Option<Collapse> {
    if run.nr <= 1 {
        return None;
    }
    let reference = reference.filter(|r| r.nr < run.nr);
    let at = |r: &OpenAuRun, size: u64| {
        r.points
            .iter()
            .find(|p| p.size == size && p.measured())
            .map(|p| p.mb_per_s)
    };
    let points: Vec<OpenAuPoint> = run
        .points
        .iter()
        .copied()
        .filter(|p| p.measured())
        .collect();
    points.windows(3).find_map(|w| {
        let (a, b, c) = (w[0], w[1], w[2]);
        let halvings = b.size * 2 == a.size && c.size * 2 == b.size;
        let falls = b.mb_per_s <= HALVING * a.mb_per_s && c.mb_per_s <= HALVING * b.mb_per_s;
        let one = reference.and_then(|r| at(r, c.size));
        let below = one.is_none_or(|o| c.mb_per_s < BELOW_ONE_UNIT * o);
        (halvings && falls && below).then_some(Collapse {
            size: c.size,
            mb_per_s: c.mb_per_s,
            reference_mb_per_s: one,
        })
    })
}

/// How many units the device keeps open, from a set of runs of one order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAuEstimate {
    pub random: bool,
    /// Units kept open: the most units without a collapse when one more collapsed.
    pub open: Option<u32>,
    /// Without a collapse: at least this many (the most measured).
    pub at_least: Option<u32>,
    /// The first collapsed run and where.
    pub collapsed: Option<(u32, Collapse)>,
    pub confidence: super::align::Confidence,
}

/// The estimate for the runs of one order (`random`), each judged against the one-unit
/// run of that order, else of the other order.
pub fn estimate(runs: &[OpenAuRun], random: bool) -> Option<OpenAuEstimate> {
    use super::align::Confidence;
    let mut mine: Vec<&OpenAuRun> = runs.iter().filter(|r| r.random == random).collect();
    if mine.is_empty() {
        return None;
    }
    mine.sort_by_key(|r| r.nr);
    let one = |order: bool| runs.iter().find(|r| r.nr == 1 && r.random == order);
    let reference = one(random).or(one(!random));
    let first_collapse = mine
        .iter()
        .find_map(|r| collapse(r, reference).map(|c| (r.nr, c)));
    let (open, at_least, confidence) = match first_collapse {
        Some((n, _)) => {
            let below = mine.iter().rev().find(|r| r.nr < n).map(|r| r.nr);
            match below {
                // The one just below was measured: the limit is between them.
                Some(b) if b + 1 == n => (Some(b), None, Confidence::High),
                Some(b) => (Some(b), None, Confidence::Medium),
                None => (None, None, Confidence::Low),
            }
        }
        None => (None, mine.last().map(|r| r.nr), Confidence::None),
    };
    Some(OpenAuEstimate {
        random,
        open,
        at_least,
        collapsed: first_collapse,
        confidence,
    })
}

#[cfg(test)]
#[path = "open_au_tests.rs"]
mod tests;
