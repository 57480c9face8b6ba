//! What was run, so that a report stands alone in a mail: per config its knob settings
//! and the bus settings (width, timing, clock) read from debugfs `ios` when the config
//! was first verified, before its first run; per workload the parameters of its jobs:
//! the options and notes `mmcab export fio` writes for them (one translation:
//! [`crate::workload::fio`]; iozone's sizes and flags for `rw = "iozone"` jobs), with
//! `--scale-down` applied.
//! Everything comes from meta.json: the configs' recorded `ios` and switches, and the
//! plan's text; the host's error counters from evidence.csv ([`super::switches`]).
//! The words are [`crate::report::render::setup`]'s.

use crate::plan::spec::Plan;
use crate::plan::workload::{JobSpec, Rw};
use crate::record::Meta;
use crate::report::model::setup::{IozoneJob, JobParams, JobSetup, WorkloadSetup};
use crate::report::model::{Bus, ConfigSetup, Setup};
use crate::workload::engine::job::scaled;
use crate::workload::fio::fio_job;

/// Each config with its knobs and the bus settings recorded before its first run.
pub fn configs(meta: &Meta, configs: &[String]) -> Vec<ConfigSetup> {
    configs
        .iter()
        .map(|name| {
            let recorded = meta.configs.iter().find(|c| &c.name == name);
            let knobs = recorded.map_or(Vec::new(), |c| {
                c.knobs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            });
            let bus = match (recorded.and_then(|c| c.ios.as_ref()), &meta.device) {
                (Some(ios), _) => Bus::Ios(ios.clone()),
                (None, None) => Bus::NotMmc,
                (None, Some(_)) => Bus::NotRecorded,
            };
            let first = recorded.and_then(|c| c.ios.as_ref());
            ConfigSetup {
                name: name.clone(),
                knobs,
                bus,
                other_buses: super::switches::other_buses(meta, name, first),
                switches: super::switches::switches(meta, recorded),
            }
        })
        .collect()
}

/// The parameters of one job (sizes as given: apply `--scale-down` first): its options
/// and notes as `mmcab export fio` writes them (the one translation, [`fio_job`]);
/// iozone's sizes and flags for iozone jobs.
pub fn job_params(job: &JobSpec) -> JobParams {
    if !job.rw.is_iozone() {
        return JobParams::Fio(fio_job(job, None));
    }
    JobParams::Iozone(IozoneJob {
        write_pass: job.rw == Rw::Iozone,
        record: job.bs,
        file: job.size.unwrap_or(0),
        direct: job.direct,
        end_fsync: job.end_fsync,
        files: job.numjobs,
    })
}

/// `workloads` as `plan` has them, each job after `--scale-down`.
pub fn workloads(plan: &Plan, workloads: &[String], scale_down: u32) -> Vec<WorkloadSetup> {
    workloads
        .iter()
        .map(|w| match plan.workload(w) {
            Some(spec) => WorkloadSetup::Planned {
                name: spec.name.clone(),
                jobs: spec
                    .job
                    .iter()
                    .map(|j| JobSetup {
                        name: j.name.clone(),
                        params: job_params(&scaled(j, scale_down)),
                    })
                    .collect(),
                shared_window: spec.shared_window,
            },
            None => WorkloadSetup::NotInPlan { name: w.clone() },
        })
        .collect()
}

/// What ran: `configs` as recorded and `workloads` from the plan recorded in meta.json,
/// the host's error counters from evidence.csv.
pub fn setup(
    meta: &Meta,
    evidence: &[crate::record::EvidenceRow],
    configs: &[String],
    workloads: &[String],
) -> Setup {
    let scale_down = meta.scale_down.unwrap_or(1).max(1);
    Setup {
        errors: super::switches::host_errors(meta, evidence, configs),
        configs: self::configs(meta, configs),
        scale_down,
        workloads: Plan::parse(&meta.plan_text)
            .ok()
            .map(|plan| self::workloads(&plan, workloads, scale_down)),
    }
}
