//! The header of a report as data: its title, the `Key: value` lines after it and the
//! charts' caption, each as the names and numbers they are made of. Their words are
//! [`crate::report::render::header`]'s, in one order for every output.

use super::RecordedHost;
use crate::probe::record::ProbeKind;
use std::path::PathBuf;

/// What the report is.
#[derive(Debug, Clone, PartialEq)]
pub enum Title {
    /// `mmcab report` of a results directory, with its plan's name.
    Results { plan: String },
    /// `mmcab compare` of results directories, with the first one's plan name.
    Compare { plan: String },
    /// Published numbers (a reference CSV).
    Published,
    /// `mmcab probe`'s run against `target`.
    Probe { kind: ProbeKind, target: String },
    /// Published flashbench output.
    PublishedProbe { kind: ProbeKind },
}

impl Default for Title {
    fn default() -> Title {
        Title::Results {
            plan: String::new(),
        }
    }
}

/// A value for the whole report, or one per side or boot of a comparison, each with
/// the name of the side or boots it is of (the header's key then in the plural:
/// `Devices`, `Kernels`, `Hosts`).
#[derive(Debug, Clone, PartialEq)]
pub enum Named<T> {
    One(T),
    Each(Vec<(String, T)>),
}

/// The kernel releases of a results directory or a side, with the directory's label.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Kernel {
    pub releases: Vec<String>,
    /// `--label` of the run; empty when none (and in a comparison's sides).
    pub label: String,
}

/// The host line of a directory or of a group of a comparison's directories.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEntry {
    Recorded(RecordedHost),
    /// The first group's host and driver, with these module parameters other (name,
    /// value).
    SameBut(Vec<(String, String)>),
}

/// How many runs (or boots) each value of the report is of.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    /// Runs per config: the smallest and largest n over all rows.
    Runs { min: usize, max: usize },
    /// Boots of each side, and runs per boot (smallest and largest).
    Boots {
        per_side: Vec<usize>,
        min_runs: usize,
        max_runs: usize,
    },
}

/// The mmcab of a results directory (meta.json `tool_version`) and its `command_line`.
#[derive(Debug, Clone, PartialEq)]
pub struct MadeBy {
    pub version: String,
    pub command_line: Option<Vec<String>>,
}

impl MadeBy {
    pub fn of(meta: &crate::record::Meta) -> MadeBy {
        MadeBy {
            version: meta.tool_version.clone(),
            command_line: meta.command_line.clone(),
        }
    }
}

/// The plan a results directory ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanId {
    pub name: String,
    pub sha256: String,
}

/// What ran: the matrix of a results directory, or the sides of a comparison of boots.
#[derive(Debug, Clone, PartialEq)]
pub enum Runs {
    Configs {
        configs: usize,
        workloads: usize,
        n: Count,
        warmup: u32,
        order: String,
    },
    Sides {
        sides: usize,
        workloads: usize,
        n: Count,
    },
}

/// The stored calibration a comparison of one-boot sides used.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationUsed {
    pub path: PathBuf,
    /// A/A boots it was made of, and their kernel releases.
    pub boots: usize,
    pub kernels: Vec<String>,
}

/// The header of a report; what a source does not have is None (or empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    /// Published numbers: where they were published, and when.
    pub sources: Option<Vec<String>>,
    pub posted: Option<Vec<String>>,
    pub device: Option<Named<String>>,
    /// Published numbers: the conditions of each source, one line each.
    pub conditions: Vec<String>,
    /// Published numbers: how many values.
    pub numbers: Option<usize>,
    pub kernel: Option<Named<Kernel>>,
    /// The MMC host and its driver, when meta.json recorded them.
    pub host: Option<Named<HostEntry>>,
    pub plan: Option<PlanId>,
    /// The mmcab that recorded the results and the command line it was started with
    /// (None: not recorded, results of older versions).
    pub made_by: Option<Named<MadeBy>>,
    pub runs: Option<Runs>,
    /// A comparison of directories with several configs: the side every config is
    /// compared with (the same config of it).
    pub pairs: Option<String>,
    /// A comparison with several boots in a side: each side's boots.
    pub boots: Option<Vec<(String, Vec<String>)>>,
    pub calibration: Option<CalibrationUsed>,
    /// A probe's source (the post a published run comes from, or the mmcab that
    /// measured it): after the kernel, where a probe's report has always had it.
    pub cited: Option<String>,
}

/// One line for the charts' captions.
#[derive(Debug, Clone, PartialEq)]
pub enum Caption {
    /// Measured: the device, the kernel(s) and how many runs or boots.
    Measured {
        device: String,
        kernel: Named<Kernel>,
        n: Count,
    },
    /// Published numbers: the devices and the dates they were published.
    Published {
        devices: Vec<String>,
        dates: Vec<String>,
    },
}
