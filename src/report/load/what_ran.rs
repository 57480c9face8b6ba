//! What was run, so that a report stands alone in a mail: per config its knob settings
//! and the bus settings (width, timing, clock) read from debugfs `ios` when the config
//! was first verified, before its first run; per workload the parameters of its jobs in
//! fio's words, the options and notes `mmcab export fio` writes for them (one
//! translation: [`crate::workload::fio`]; iozone's words for `rw = "iozone"` jobs), with
//! `--scale-down` applied.
//! Everything comes from meta.json: the configs' recorded `ios` and the plan's text.
//! The words around them are [`crate::report::render::setup`]'s.

use crate::plan::spec::Plan;
use crate::plan::workload::{JobSpec, Rw, WorkloadSpec};
use crate::record::Meta;
use crate::report::model::{Bus, ConfigSetup, Setup};
use crate::workload::engine::job::scaled;
use crate::workload::fio::{fio_job, FioNote};

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
            ConfigSetup {
                name: name.clone(),
                knobs,
                bus,
            }
        })
        .collect()
}

/// The parameters of one job: its options as `mmcab export fio` writes them (the one
/// translation, [`fio_job`]), sizes and times in fio's short form (`bs=4k`,
/// `runtime=10s`); iozone's command line for iozone jobs.
pub fn job_words(job: &JobSpec) -> String {
    if job.rw.is_iozone() {
        return iozone_words(job);
    }
    fio_job(job, None).short_pairs().join(" ")
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

/// `iozone -i 0 -i 2 -r 4k -s 100m -I -e`: `-i 0` for rw = "iozone" (not for
/// "iozone-random"), -I for direct, -e for end_fsync.
fn iozone_words(job: &JobSpec) -> String {
    let size = job.size.unwrap_or(0);
    let tests = if job.rw == Rw::Iozone {
        "-i 0 -i 2"
    } else {
        "-i 2"
    };
    let mut w = format!(
        "iozone {tests} -r {} -s {}",
        iozone_size(job.bs),
        iozone_size(size)
    );
    if job.direct {
        w.push_str(" -I");
    }
    if job.end_fsync {
        w.push_str(" -e");
    }
    if job.numjobs > 1 {
        w.push_str(&format!(" (x{} files)", job.numjobs));
    }
    w
}

/// One line per workload: `seq-write: dd-write: rw=write bs=1M ...`, one job after the
/// other (`; `) when it has several.
pub fn workload_lines(spec: &WorkloadSpec, scale_down: u32) -> String {
    let words: Vec<String> = spec
        .job
        .iter()
        .map(|j| format!("{}: {}", j.name, job_words(&scaled(j, scale_down))))
        .collect();
    let window = if spec.shared_window {
        "; all jobs in one time window (each wraps until the longest is done)"
    } else {
        ""
    };
    format!("{}: {}{window}", spec.name, words.join("; "))
}

/// The lines of `workloads` of `plan`, then what fio cannot be told about their jobs
/// (the fio export's comments), each note once with the workloads it is about:
/// `seq-4k, seq-16k: mmcab engine = "ioctl" (...) has no fio engine: ...`.
pub fn plan_lines(plan: &Plan, workloads: &[String], scale_down: u32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut notes: Vec<(FioNote, Vec<&str>)> = Vec::new();
    for w in workloads {
        let Some(spec) = plan.workload(w) else {
            lines.push(format!("{w}: not in the recorded plan"));
            continue;
        };
        lines.push(workload_lines(spec, scale_down));
        let jobs = spec.job.iter().filter(|j| !j.rw.is_iozone());
        for note in jobs.flat_map(|j| fio_job(&scaled(j, scale_down), None).notes) {
            match notes.iter_mut().find(|(n, _)| *n == note) {
                Some((_, names)) if names.contains(&w.as_str()) => {}
                Some((_, names)) => names.push(w),
                None => notes.push((note, vec![w])),
            }
        }
    }
    for (note, names) in notes {
        lines.push(format!("{}: {}", names.join(", "), note.text()));
    }
    lines
}

/// What ran: `configs` as recorded and `workloads` from the plan recorded in meta.json.
pub fn setup(meta: &Meta, configs: &[String], workloads: &[String]) -> Setup {
    let scale_down = meta.scale_down.unwrap_or(1).max(1);
    Setup {
        configs: self::configs(meta, configs),
        scale_down,
        workloads: toml::from_str::<Plan>(&meta.plan_text)
            .ok()
            .map(|plan| plan_lines(&plan, workloads, scale_down)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> JobSpec {
        crate::plan::workload::test_job(text).unwrap()
    }

    #[test]
    fn jobs_in_fio_words() {
        assert_eq!(
            job_words(&job(
                "rw = \"write\"\nbs = \"1MiB\"\nsize = \"4MiB\"\npattern = \"zeros\"\nend_fsync = true"
            )),
            "rw=write bs=1M size=4M ioengine=psync iodepth=1 direct=1 end_fsync=1 zero_buffers=1"
        );
        assert_eq!(
            job_words(&job(
                "rw = \"randread\"\nengine = \"io_uring\"\niodepth = 32\nruntime = \"10s\""
            )),
            "rw=randread bs=4k ioengine=io_uring iodepth=32 direct=1 runtime=10s norandommap=1"
        );
        assert_eq!(
            job_words(&scaled(
                &job("rw = \"iozone-random\"\nsize = \"100MiB\"\nend_fsync = true"),
                1
            )),
            "iozone -i 2 -r 4k -s 100m -I -e"
        );
        assert_eq!(
            job_words(&job(
                "rw = \"iozone\"\nbs = \"8k\"\nsize = \"1M\"\ndirect = false"
            )),
            "iozone -i 0 -i 2 -r 8k -s 1m"
        );
        // iozone reads a bare -r/-s number as KiB: sizes carry their suffix.
        assert_eq!(
            job_words(&job("rw = \"iozone\"\nbs = \"1M\"\nsize = \"3G\"")),
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
             [[workload]]\nname = \"c\"\n\
             [[workload.job]]\nname = \"w\"\nrw = \"write\"\n",
        )
        .unwrap();
        let names = ["a", "b", "c", "d"].map(String::from);
        let lines = plan_lines(&plan, &names, 1);
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(
            lines[0].starts_with("a: w: rw=write bs=4k ioengine=psync "),
            "{lines:#?}"
        );
        assert_eq!(lines[3], "d: not in the recorded plan");
        assert!(
            lines[4].starts_with("a, b: mmcab engine = \"ioctl\" (CMD23")
                && lines[4].ends_with("psync through the block layer is the nearest"),
            "{lines:#?}"
        );
    }
}
