//! One job in fio's words: the one translation of a [`JobSpec`] into fio options, which
//! `mmcab export fio` writes as the job file's `key=value` lines and the report's setup
//! section shows as the job's parameters, so the two never disagree.
//!
//! What the translation decides (each checked against fio 3.33's documentation):
//! - `engine = "sync"` is fio's `psync` (pread/pwrite), `io_uring` is `io_uring`;
//!   `ioctl` (CMD23 + CMD18/CMD25 through the MMC ioctl) has no fio engine: `psync`, the
//!   nearest, with a [`FioNote`] saying so; `packed` has no fio equivalent either;
//! - `rwmixread` only with `rw=randrw`: fio reads it for mixed workloads only, and mmcab
//!   refuses it for any other `rw`;
//! - random jobs get `norandommap=1`: mmcab's random offsets are uniform and may repeat,
//!   fio's random map would visit every block once;
//! - `pattern = "zeros"` is `zero_buffers=1`; `random` is fio's default buffer contents;
//! - `verify = true` is `verify=crc32` on jobs that write: mmcab's block checksum is
//!   CRC-32 with the IEEE 802.3 polynomial 0x04C11DB7 (crc32fast, as zlib computes it),
//!   the polynomial of fio's `crc32` (fio's crc/crc32.c computes it MSB first, without
//!   zlib's inversions); `crc32c` is another polynomial (Castagnoli's). Like fio's
//!   default `do_verify`, mmcab reads the blocks back after writing them. Header and
//!   checksummed bytes differ (a [`FioNote`] says so); fio verifies only what a job
//!   wrote, so a read job's check has no fio option;
//! - options at fio's default are left out, except `rw`, `bs`, `ioengine`, `iodepth` and
//!   `direct`, which a reader looks for.
//!
//! iozone jobs (`rw = "iozone"`, `"iozone-random"`) are iozone's passes, not one fio
//! stream: the export writes each pass as its own job (`rw` given by the caller), the
//! report shows iozone's command line instead.

use crate::plan::workload::{Engine, JobSpec, Pattern, Rw};
use std::time::Duration;

/// The value of a fio option, kept typed so that the job file can give exact numbers
/// and a mail the short form of the same value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FioValue {
    /// A word or a count, as written.
    Word(String),
    /// Bytes.
    Size(u64),
    /// A time.
    Time(Duration),
}

impl FioValue {
    /// As the job file has it: sizes in bytes, times in milliseconds.
    pub fn exact(&self) -> String {
        match self {
            FioValue::Word(w) => w.clone(),
            FioValue::Size(b) => b.to_string(),
            FioValue::Time(d) => format!("{}ms", d.as_millis().max(1)),
        }
    }

    /// As a person writes it for fio: sizes with fio's suffixes (`4k`, `1M`), times in
    /// seconds when whole. fio reads both forms as the same value.
    pub fn short(&self) -> String {
        match self {
            FioValue::Word(w) => w.clone(),
            FioValue::Size(b) => fio_size(*b),
            FioValue::Time(d) if d.subsec_nanos() == 0 && !d.is_zero() => {
                format!("{}s", d.as_secs())
            }
            FioValue::Time(_) => self.exact(),
        }
    }
}

/// A size as fio reads it with its default `kb_base=1024`: `4k`, `1M`, `256M`, `1G`,
/// or bytes when it is no whole multiple.
pub fn fio_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// What fio cannot be told about a job; the job file has it as a comment, the report
/// beside the job's options, in the same words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioNote {
    /// `engine = "ioctl"`: no fio engine.
    Ioctl,
    /// `packed = N` (N > 0): no fio equivalent.
    Packed(crate::plan::packed::Packed),
    /// `verify = true` on a job that writes: fio's `verify=crc32` with fio's header.
    VerifyWrites,
    /// `verify = true` on a read job: no fio option.
    VerifyReads,
    /// `min_runtime`: a floor on the job's length, which fio has no option for.
    MinRuntime(Duration),
}

impl FioNote {
    /// The note, as lines of a job file comment (without the `; `).
    pub fn lines(&self) -> Vec<String> {
        const HEADER: &str =
            "mmcab verify: a header (offset, run id, sequence) and a CRC32 in every block;";
        match self {
            FioNote::Ioctl => vec![
                "mmcab engine = \"ioctl\" (CMD23 + CMD18/CMD25 through the MMC ioctl, past the"
                    .into(),
                "block layer) has no fio engine: psync through the block layer is the nearest"
                    .into(),
            ],
            FioNote::Packed(p) => {
                vec![format!(
                    "mmcab packed = {p}: packed commands have no fio equivalent"
                )]
            }
            FioNote::VerifyWrites => vec![
                HEADER.into(),
                "fio's verify=crc32 is the nearest: the same CRC-32 polynomial, fio's own header"
                    .into(),
            ],
            FioNote::VerifyReads => vec![
                HEADER.into(),
                "a read job checks the blocks it reads; fio verifies only what its job wrote"
                    .into(),
            ],
            FioNote::MinRuntime(d) => vec![
                format!(
                    "mmcab min_runtime = {}: past its amount of I/O the job wraps around its",
                    FioValue::Time(*d).short()
                ),
                "region until it has run that long; fio has no such floor (time_based and a".into(),
                "runtime give a fixed length)".into(),
            ],
        }
    }

    /// The note in one line.
    pub fn text(&self) -> String {
        self.lines().join(" ")
    }
}

/// One job as fio options and notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioJob {
    /// The options in the order a job file has them.
    pub options: Vec<(&'static str, FioValue)>,
    pub notes: Vec<FioNote>,
}

impl FioJob {
    /// `key=value` with exact values, as the job file's lines.
    pub fn exact_pairs(&self) -> Vec<String> {
        self.pairs(FioValue::exact)
    }

    /// `key=value` with short values (`bs=4k`), as a report shows them.
    pub fn short_pairs(&self) -> Vec<String> {
        self.pairs(FioValue::short)
    }

    fn pairs(&self, value: impl Fn(&FioValue) -> String) -> Vec<String> {
        self.options
            .iter()
            .map(|(k, v)| format!("{k}={}", value(v)))
            .collect()
    }
}

/// fio's `rw` for a job; iozone jobs are `randrw` unless a pass is given.
fn rw_word(rw: Rw) -> &'static str {
    match rw {
        Rw::Read => "read",
        Rw::Write => "write",
        Rw::RandRead => "randread",
        Rw::RandWrite => "randwrite",
        Rw::RandRw | Rw::IozoneRandom | Rw::Iozone => "randrw",
    }
}

/// The job (sizes as given: apply `--scale-down` first) in fio's words; `pass` is the
/// `rw` of one iozone pass (`write`, `randread`, ...), None for the job's own.
pub fn fio_job(job: &JobSpec, pass: Option<&str>) -> FioJob {
    use FioValue::{Size, Time, Word};
    let rw = pass.unwrap_or(rw_word(job.rw));
    let engine = match job.engine {
        // mmc_test has no fio form: the export refuses it, the report says its own words.
        Engine::Sync | Engine::Ioctl | Engine::MmcTest => "psync",
        Engine::IoUring => "io_uring",
    };
    let random_offsets = job.rw.is_random() && !job.rw.is_iozone();
    let word = |v: &dyn ToString| Some(Word(v.to_string()));
    let flag = |on: bool| on.then(|| Word("1".into()));
    let size = |v: u64| (v > 0).then_some(Size(v));
    let writes = pass.map_or(job.rw.writes(), |p| p.contains("write"));
    let options: [(&'static str, Option<FioValue>); 21] = [
        ("rw", word(&rw)),
        (
            "rwmixread",
            job.rwmixread
                .filter(|_| job.rw == Rw::RandRw)
                .and_then(|p| word(&p)),
        ),
        ("bs", Some(Size(job.bs))),
        ("size", job.size.map(Size)),
        ("io_size", job.io_size.map(Size)),
        ("offset", size(job.offset)),
        ("offset_increment", size(job.offset_increment)),
        (
            "numjobs",
            (job.numjobs > 1).then(|| Word(job.numjobs.to_string())),
        ),
        ("ioengine", word(&engine)),
        ("iodepth", word(&job.iodepth)),
        (
            "iodepth_batch_complete_min",
            job.iodepth_batch_complete_min.and_then(|n| word(&n)),
        ),
        ("direct", word(&u8::from(job.direct))),
        (
            "fsync",
            (job.fsync > 0).then(|| Word(job.fsync.to_string())),
        ),
        ("end_fsync", flag(job.end_fsync)),
        ("runtime", job.runtime.map(Time)),
        ("time_based", flag(job.time_based)),
        ("ramp_time", job.ramp_time.map(Time)),
        ("norandommap", flag(random_offsets)),
        ("randseed", job.randseed.and_then(|s| word(&s))),
        ("zero_buffers", flag(job.pattern == Pattern::Zeros)),
        (
            "verify",
            (job.verify && writes).then(|| Word("crc32".into())),
        ),
    ];
    let mut notes = Vec::new();
    if job.engine == Engine::Ioctl {
        notes.push(FioNote::Ioctl);
    }
    if let Some(p) = job.packed.filter(|p| p.is_on()) {
        notes.push(FioNote::Packed(p));
    }
    if let Some(d) = job.min_runtime {
        notes.push(FioNote::MinRuntime(d));
    }
    if job.verify {
        notes.push(if writes {
            FioNote::VerifyWrites
        } else {
            FioNote::VerifyReads
        });
    }
    FioJob {
        options: options
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect(),
        notes,
    }
}

#[cfg(test)]
#[path = "fio_tests.rs"]
mod tests;
