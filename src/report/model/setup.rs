//! What was run, as data: per config its knobs and bus settings, per workload its jobs'
//! parameters as the one translation into fio's options gives them
//! ([`crate::workload::fio::fio_job`]), iozone's sizes for iozone jobs, all after
//! `--scale-down`. Worded by [`crate::report::render::setup`].

use crate::workload::fio::FioJob;

/// What was run, after the header (results directories only): the configs with their
/// knobs and bus settings, the workloads with their jobs' parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub configs: Vec<ConfigSetup>,
    /// `--scale-down` the workloads' sizes are after (1: none).
    pub scale_down: u32,
    /// The report's workloads in its order, from the plan recorded in meta.json
    /// ([`crate::report::load::what_ran::workloads`]); None when meta.json's plan_text
    /// is not a plan.
    pub workloads: Option<Vec<WorkloadSetup>>,
    /// The host's error counters (None in results without them).
    pub errors: Option<HostErrors>,
}

/// One config as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigSetup {
    pub name: String,
    /// (knob, value) as recorded; empty: the device as found.
    pub knobs: Vec<(String, String)>,
    pub bus: Bus,
    /// Other bus settings `ios` showed before some of its runs (a switch that landed
    /// elsewhere, a mode that changed without one), each with the runs it came before.
    pub other_buses: Vec<(crate::device::Ios, Vec<u32>)>,
    pub switches: Switches,
}

/// The switches to a config (meta.json `switches`) and what was traced at them.
#[derive(Debug, Clone, PartialEq)]
pub enum Switches {
    /// Results of an mmcab that did not record switches (no `command_line` in
    /// meta.json, which came with them), or a config without knobs: nothing is said.
    NotRecorded,
    /// Its knobs were never applied: they were in place already.
    NoSwitch,
    /// Each switch to it, in order.
    Recorded(Vec<crate::record::SwitchMeta>),
}

/// The host's error counters over the runs (debugfs `err_stats`), as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct HostErrors {
    /// meta.json `evidence.err_stats`: the file read, or why none was (`none: ...`,
    /// `unavailable: ...`, `off ...`).
    pub source: String,
    /// meta.json `evidence.err_stats_counting` (`counts: ...`, `not known to count: ...`,
    /// `unknown: ...`; empty when not recorded).
    pub counting: String,
    /// Runs whose counters were read, and those of them with counts.
    pub runs_read: usize,
    pub runs: Vec<Counted>,
    /// Switches during which a counter counted up (`workload` empty: `run` is the run
    /// after the switch).
    pub switches: Vec<Counted>,
}

/// Counters that counted up in a run or a switch: (name as the kernel prints it, how many).
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub counts: Vec<(String, u64)>,
}

/// The bus settings of a config, read from debugfs `ios` before its first run.
#[derive(Debug, Clone, PartialEq)]
pub enum Bus {
    Ios(crate::device::Ios),
    /// The target is not an MMC card.
    NotMmc,
    /// An MMC card whose settings were not recorded.
    NotRecorded,
}

/// One workload of the report as the recorded plan has it.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadSetup {
    Planned {
        name: String,
        /// Its jobs in the plan's order, sizes after `--scale-down`.
        jobs: Vec<JobSetup>,
        /// `shared_window = true`: all jobs in one time window, each wrapping until the
        /// longest is done.
        shared_window: bool,
    },
    /// A workload with results whose name the recorded plan does not have.
    NotInPlan { name: String },
}

/// One job of a workload and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSetup {
    pub name: String,
    pub params: JobParams,
}

/// A job's parameters: fio's options, or iozone's for iozone jobs.
#[derive(Debug, Clone, PartialEq)]
pub enum JobParams {
    /// The options and notes `mmcab export fio` writes for the job (the one
    /// translation, [`crate::workload::fio::fio_job`]).
    Fio(FioJob),
    /// `rw = "iozone"` or `"iozone-random"`: iozone's passes, not one fio stream.
    Iozone(IozoneJob),
}

/// An iozone job as iozone's command line takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IozoneJob {
    /// `rw = "iozone"`: the write pass (`-i 0`) before the random one (`-i 2`);
    /// false for `"iozone-random"`, the random pass alone.
    pub write_pass: bool,
    /// The record size (`-r`), bytes.
    pub record: u64,
    /// The file size (`-s`), bytes; 0 when the job gives none.
    pub file: u64,
    /// `-I`: O_DIRECT.
    pub direct: bool,
    /// `-e`: fsync before the end of the timing.
    pub end_fsync: bool,
    /// Files written in parallel (the job's `numjobs`).
    pub files: u32,
}
