//! What was run, so that a report stands alone in a mail: per config its knob settings
//! and the bus settings (width, timing, clock) read from debugfs `ios` when the config
//! was first verified, before its first run; per workload the parameters of its jobs in
//! fio's words, the options and notes `mmcab export fio` writes for them (one
//! translation: [`crate::workload::fio`]; iozone's words for `rw = "iozone"` jobs), with
//! `--scale-down` applied.
//! Everything comes from meta.json: the configs' recorded `ios` and the plan's text.

use super::model::SetupSection;
use crate::device::Ios;
use crate::plan::spec::Plan;
use crate::record::Meta;
use crate::workload::fio::{fio_job, FioNote};
use crate::workload::job::scaled;
use crate::workload::spec::{JobSpec, Rw, WorkloadSpec};

fn hz(v: u64) -> String {
    let mhz = v as f64 / 1e6;
    let text = format!("{mhz:.3}");
    format!("{} MHz", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `8-bit, mmc high-speed, 52 MHz` (and the actual clock when the host reports another).
pub fn bus_text(ios: &Ios) -> String {
    let mut t = format!(
        "{}-bit, {}, {}",
        ios.bus_width_bits,
        ios.timing,
        hz(ios.clock_hz)
    );
    if let Some(actual) = ios.actual_clock_hz.filter(|a| *a != ios.clock_hz) {
        t.push_str(&format!(" (actual {})", hz(actual)));
    }
    t
}

/// One line per config: `bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz`.
pub fn config_section(meta: &Meta, configs: &[String]) -> SetupSection {
    let lines = configs
        .iter()
        .map(|name| {
            let recorded = meta.configs.iter().find(|c| &c.name == name);
            let knobs = match recorded {
                Some(c) if !c.knobs.is_empty() => c
                    .knobs
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => "the device as found".to_string(),
            };
            let bus = match (recorded.and_then(|c| c.ios.as_ref()), &meta.device) {
                (Some(ios), _) => bus_text(ios),
                (None, None) => "no bus settings (the target is not an MMC card)".into(),
                (None, Some(_)) => "bus settings not recorded".into(),
            };
            format!("{name}: {knobs}; {bus}")
        })
        .collect();
    SetupSection {
        title: "Configs (bus width, timing, clock from ios before the first run):".into(),
        lines,
    }
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
/// other (`; `) when it has several, then what fio cannot be told (each note once).
pub fn workload_lines(spec: &WorkloadSpec, scale_down: u32) -> String {
    let jobs: Vec<JobSpec> = spec.job.iter().map(|j| scaled(j, scale_down)).collect();
    let words: Vec<String> = jobs
        .iter()
        .map(|j| format!("{}: {}", j.name, job_words(j)))
        .collect();
    let window = if spec.shared_window {
        "; all jobs in one time window (each wraps until the longest is done)"
    } else {
        ""
    };
    let mut notes: Vec<FioNote> = Vec::new();
    for job in jobs.iter().filter(|j| !j.rw.is_iozone()) {
        for note in fio_job(job, None).notes {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    let notes: String = notes.iter().map(|n| format!("; {}", n.text())).collect();
    format!("{}: {}{window}{notes}", spec.name, words.join("; "))
}

/// One line per workload measured, from the plan recorded in meta.json.
pub fn workload_section(meta: &Meta, workloads: &[String]) -> SetupSection {
    let scale = meta.scale_down.unwrap_or(1).max(1);
    let title = if scale > 1 {
        format!("Workloads (fio's words; sizes after --scale-down {scale}):")
    } else {
        "Workloads (fio's words):".to_string()
    };
    let lines = match toml::from_str::<Plan>(&meta.plan_text) {
        Ok(plan) => workloads
            .iter()
            .map(|w| match plan.workload(w) {
                Some(spec) => workload_lines(spec, scale),
                None => format!("{w}: not in the recorded plan"),
            })
            .collect(),
        Err(_) => vec!["parameters not recorded: meta.json's plan_text is not a plan".into()],
    };
    SetupSection { title, lines }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> JobSpec {
        let w: WorkloadSpec =
            toml::from_str(&format!("name = \"w\"\n[[job]]\nname = \"j\"\n{text}\n")).unwrap();
        w.validate().unwrap();
        w.job[0].clone()
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
        assert_eq!(hz(52_000_000), "52 MHz");
    }

    #[test]
    fn what_fio_cannot_be_told_is_said_once_per_workload() {
        let w: WorkloadSpec = toml::from_str(
            "name = \"p\"\n[[job]]\nname = \"a\"\nrw = \"write\"\nengine = \"ioctl\"\n\
             [[job]]\nname = \"b\"\nrw = \"randwrite\"\nengine = \"ioctl\"\n",
        )
        .unwrap();
        let line = workload_lines(&w, 1);
        assert!(
            line.starts_with("p: a: rw=write bs=4k ioengine=psync "),
            "{line}"
        );
        assert_eq!(line.matches("has no fio engine").count(), 1, "{line}");
        assert!(
            line.ends_with("psync through the block layer is the nearest"),
            "{line}"
        );
        assert_eq!(hz(25_500_000), "25.5 MHz");
    }
}
