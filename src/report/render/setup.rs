//! The words of what was run ([`crate::report::model::Setup`]): titled lists of lines
//! after the header, the configs with their bus settings and the workloads with their
//! parameters: fio's `key=value` options in their short form (`bs=4k`, `runtime=10s`),
//! iozone's command line for iozone jobs, then what fio cannot be told about the jobs
//! (the fio export's comments), each note once with the workloads it is about.

pub use super::switches::bus_text;
use crate::report::model::setup::{IozoneJob, JobParams, WorkloadSetup};
use crate::report::model::{Bus, ConfigSetup, Setup};
use crate::workload::fio::FioNote;
use serde::Serialize;

/// A titled list of lines (report.json writes them as they are).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetupSection {
    pub title: String,
    pub lines: Vec<String>,
}

/// `bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz`.
fn config_line(c: &ConfigSetup) -> String {
    let knobs = if c.knobs.is_empty() {
        "the device as found".to_string()
    } else {
        let knobs: Vec<String> = c.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        knobs.join(" ")
    };
    let bus = match &c.bus {
        Bus::Ios(ios) => bus_text(ios),
        Bus::NotMmc => "no bus settings (the target is not an MMC card)".into(),
        Bus::NotRecorded => "bus settings not recorded".into(),
    };
    let mut line = format!("{}: {knobs}; {bus}", c.name);
    for more in [
        super::switches::other_buses_text(&c.other_buses),
        super::switches::switch_text(&c.switches),
    ]
    .into_iter()
    .flatten()
    {
        line.push_str("; ");
        line.push_str(&more);
    }
    line
}

/// The parameters of one job: its options as `mmcab export fio` writes them, sizes and
/// times in fio's short form (`bs=4k`, `runtime=10s`); iozone's command line for iozone
/// jobs.
pub fn job_words(params: &JobParams) -> String {
    match params {
        JobParams::Fio(job) => job.short_pairs().join(" "),
        JobParams::Iozone(job) => iozone_words(job),
    }
}

/// A size as iozone's `-r` and `-s` take it: a bare number is KiB ("in Kbytes"), `k`,
/// `m` and `g` suffixes are KiB, MiB and GiB. A size that is not whole KiB cannot be
/// given to iozone, and the words say so rather than print a number iozone would read
/// 1024 times too large.
fn iozone_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("<{bytes} bytes: not whole KiB, which iozone needs>")
}

/// `iozone -i 0 -i 2 -r 4k -s 100m -I -e`: `-i 0` for the write pass (rw = "iozone",
/// not "iozone-random"), -I for direct, -e for end_fsync.
fn iozone_words(job: &IozoneJob) -> String {
    let tests = if job.write_pass { "-i 0 -i 2" } else { "-i 2" };
    let mut w = format!(
        "iozone {tests} -r {} -s {}",
        iozone_size(job.record),
        iozone_size(job.file)
    );
    if job.direct {
        w.push_str(" -I");
    }
    if job.end_fsync {
        w.push_str(" -e");
    }
    if job.files > 1 {
        w.push_str(&format!(" (x{} files)", job.files));
    }
    w
}

/// One line per workload: `seq-write: dd-write: rw=write bs=1M ...`, one job after the
/// other (`; `) when it has several.
fn workload_line(workload: &WorkloadSetup) -> String {
    let (name, jobs, shared_window) = match workload {
        WorkloadSetup::Planned {
            name,
            jobs,
            shared_window,
        } => (name, jobs, *shared_window),
        WorkloadSetup::NotInPlan { name } => return format!("{name}: not in the recorded plan"),
    };
    let words: Vec<String> = jobs
        .iter()
        .map(|j| format!("{}: {}", j.name, job_words(&j.params)))
        .collect();
    let window = if shared_window {
        "; all jobs in one time window (each wraps until the longest is done)"
    } else {
        ""
    };
    format!("{name}: {}{window}", words.join("; "))
}

/// What fio cannot be told about the workloads' jobs, each note once with the workloads
/// it is about, in the order they first come.
fn notes(workloads: &[WorkloadSetup]) -> Vec<(FioNote, Vec<&str>)> {
    let mut notes: Vec<(FioNote, Vec<&str>)> = Vec::new();
    for w in workloads {
        let WorkloadSetup::Planned { name, jobs, .. } = w else {
            continue;
        };
        let fio = jobs.iter().filter_map(|j| match &j.params {
            JobParams::Fio(job) => Some(job),
            JobParams::Iozone(_) => None,
        });
        for note in fio.flat_map(|job| job.notes.iter().copied()) {
            match notes.iter_mut().find(|(n, _)| *n == note) {
                Some((_, names)) if names.contains(&name.as_str()) => {}
                Some((_, names)) => names.push(name),
                None => notes.push((note, vec![name])),
            }
        }
    }
    notes
}

/// The lines of `workloads`, then what fio cannot be told about their jobs (the fio
/// export's comments), each note once with the workloads it is about:
/// `seq-4k, seq-16k: mmcab engine = "ioctl" (...) has no fio engine: ...`.
pub fn workload_lines(workloads: &[WorkloadSetup]) -> Vec<String> {
    let mut lines: Vec<String> = workloads.iter().map(workload_line).collect();
    for (note, names) in notes(workloads) {
        lines.push(format!("{}: {}", names.join(", "), note.text()));
    }
    lines
}

/// The sections of `setup`, in the order the outputs write them (none without one).
pub fn sections(setup: Option<&Setup>) -> Vec<SetupSection> {
    let Some(s) = setup else {
        return Vec::new();
    };
    let workloads = if s.scale_down > 1 {
        format!(
            "Workloads (fio's words; sizes after --scale-down {}):",
            s.scale_down
        )
    } else {
        "Workloads (fio's words):".to_string()
    };
    let mut sections = vec![
        SetupSection {
            title: "Configs (bus width, timing, clock from ios before the first run):".into(),
            lines: s.configs.iter().map(config_line).collect(),
        },
        SetupSection {
            title: workloads,
            lines: s.workloads.as_deref().map_or_else(
                || vec!["parameters not recorded: meta.json's plan_text is not a plan".into()],
                workload_lines,
            ),
        },
    ];
    sections.extend(s.errors.as_ref().map(|e| {
        let (title, lines) = super::switches::errors_lines(e);
        SetupSection { title, lines }
    }));
    sections
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::spec::Plan;
    use crate::plan::workload::JobSpec;
    use crate::report::load::what_ran::{job_params, workloads};

    fn words(text: &str) -> String {
        let job: JobSpec = crate::plan::workload::test_job(text).unwrap();
        job_words(&job_params(&job))
    }

    #[test]
    fn jobs_in_fio_words() {
        assert_eq!(
            words(
                "rw = \"write\"\nbs = \"1MiB\"\nsize = \"4MiB\"\npattern = \"zeros\"\nend_fsync = true"
            ),
            "rw=write bs=1M size=4M ioengine=psync iodepth=1 direct=1 end_fsync=1 zero_buffers=1"
        );
        assert_eq!(
            words("rw = \"randread\"\nengine = \"io_uring\"\niodepth = 32\nruntime = \"10s\""),
            "rw=randread bs=4k ioengine=io_uring iodepth=32 direct=1 runtime=10s norandommap=1"
        );
        assert_eq!(
            words("rw = \"iozone-random\"\nsize = \"100MiB\"\nend_fsync = true"),
            "iozone -i 2 -r 4k -s 100m -I -e"
        );
        assert_eq!(
            words("rw = \"iozone\"\nbs = \"8k\"\nsize = \"1M\"\ndirect = false\nnumjobs = 2"),
            "iozone -i 0 -i 2 -r 8k -s 1m (x2 files)"
        );
        // iozone reads a bare -r/-s number as KiB: sizes carry their suffix.
        assert_eq!(
            words("rw = \"iozone\"\nbs = \"1M\"\nsize = \"3G\""),
            "iozone -i 0 -i 2 -r 1m -s 3g -I"
        );
        assert_eq!(iozone_size(1536 << 10), "1536k");
        assert_eq!(
            iozone_size(512),
            "<512 bytes: not whole KiB, which iozone needs>"
        );
    }

    #[test]
    fn what_fio_cannot_be_told_is_said_once_after_the_workloads() {
        let plan: Plan = toml::from_str(
            "name = \"p\"\n\
             [[workload]]\nname = \"a\"\n\
             [[workload.job]]\nname = \"w\"\nrw = \"write\"\nengine = \"ioctl\"\n\
             [[workload.job]]\nname = \"r\"\nrw = \"randwrite\"\nengine = \"ioctl\"\n\
             [[workload]]\nname = \"b\"\n\
             [[workload.job]]\nname = \"w\"\nrw = \"write\"\nengine = \"ioctl\"\n\
             [[workload]]\nname = \"c\"\nshared_window = true\n\
             [[workload.job]]\nname = \"w\"\nrw = \"write\"\n",
        )
        .unwrap();
        let names = ["a", "b", "c", "d"].map(String::from);
        let lines = workload_lines(&workloads(&plan, &names, 1));
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(
            lines[0].starts_with("a: w: rw=write bs=4k ioengine=psync "),
            "{lines:#?}"
        );
        assert!(
            lines[2].starts_with("c: w: rw=write ")
                && lines[2].ends_with(
                    "; all jobs in one time window (each wraps until the longest is done)"
                ),
            "{lines:#?}"
        );
        assert_eq!(lines[3], "d: not in the recorded plan");
        assert!(
            lines[4].starts_with("a, b: mmcab engine = \"ioctl\" (CMD23")
                && lines[4].ends_with("psync through the block layer is the nearest"),
            "{lines:#?}"
        );
    }

    #[test]
    fn configs_and_clocks_in_words() {
        assert_eq!(super::super::switches::hz(52_000_000), "52 MHz");
        assert_eq!(super::super::switches::hz(25_500_000), "25.5 MHz");
        let config = |knobs: Vec<(String, String)>, bus| ConfigSetup {
            name: "c".into(),
            knobs,
            bus,
            other_buses: Vec::new(),
            switches: crate::report::model::setup::Switches::NotRecorded,
        };
        assert_eq!(
            config_line(&config(Vec::new(), Bus::NotMmc)),
            "c: the device as found; no bus settings (the target is not an MMC card)"
        );
        let knobs = vec![("a".into(), "1".into()), ("b".into(), "2".into())];
        assert_eq!(
            config_line(&config(knobs, Bus::NotRecorded)),
            "c: a=1 b=2; bus settings not recorded"
        );
        let setup = Setup {
            configs: Vec::new(),
            scale_down: 16,
            workloads: None,
            errors: None,
        };
        let s = sections(Some(&setup));
        assert_eq!(
            s[1].title,
            "Workloads (fio's words; sizes after --scale-down 16):"
        );
        assert_eq!(
            s[1].lines,
            ["parameters not recorded: meta.json's plan_text is not a plan"]
        );
        assert!(sections(None).is_empty());
    }
}
