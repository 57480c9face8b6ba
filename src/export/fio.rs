//! `mmcab export fio PLAN`: the plan's workloads as a fio job file, so a reviewer can
//! re-run a workload with fio and compare.
//!
//! The plan keys are fio's words already (see [`crate::plan::workload`]); each job's
//! options and the comments on what fio cannot do come from [`crate::workload::fio`],
//! the translation the report's setup section shows too. What the file adds:
//! - one mmcab workload = one fio reporting group: its jobs run at the same time, the
//!   first job carries `stonewall` (wait for the previous workload, start a new group),
//!   and `group_reporting` sums the group like mmcab's `all` row;
//! - `rw = "iozone-random"` (every record once in a fixed shuffle, a read pass then a
//!   write pass) becomes two groups, `randread` then `randwrite`, over the same region with
//!   fio's random map on (every block once per pass, in fio's order, not iozone's);
//!   `rw = "iozone"` adds the sequential write and rewrite passes of `-i 0` before them;
//! - `shared_window` has no fio option: a comment says so;
//! - sizes are in bytes after `--scale-down`, as mmcab computes them; times in ms.
//!
//! The target is `filename=${TARGET}` (fio expands environment variables in job files)
//! unless a target is given.

use crate::plan::spec::Plan;
use crate::plan::workload::{JobSpec, Rw, WorkloadSpec};
use crate::workload::engine::job::scaled;
use crate::workload::fio::fio_job;
use anyhow::{bail, Result};
use std::fmt::Write;

/// What `mmcab export fio` takes besides the plan.
#[derive(Debug, Clone, Default)]
pub struct FioOptions {
    /// The target's path for `filename=`; None writes `filename=${TARGET}`.
    pub target: Option<String>,
    /// `--scale-down N` as `mmcab run` applies it (1 or 0 = as written).
    pub scale_down: u32,
    /// Only these workloads (empty = all), as `mmcab run --workload`.
    pub workloads: Vec<String>,
}

/// The fio job file for `plan` (named `source` in the header comment).
pub fn job_file(plan: &Plan, source: &str, opts: &FioOptions) -> Result<String> {
    for w in &opts.workloads {
        if plan.workload(w).is_none() {
            let names: Vec<&str> = plan.workload.iter().map(|w| w.name.as_str()).collect();
            bail!(
                "--workload {w}: no such workload in plan '{}' (it has: {})",
                plan.name,
                names.join(", ")
            );
        }
    }
    let chosen = |w: &&WorkloadSpec| opts.workloads.is_empty() || opts.workloads.contains(&w.name);
    if let Some(w) = plan
        .workload
        .iter()
        .filter(chosen)
        .find(|w| w.uses_mmc_test())
    {
        bail!(
            "workload '{}' runs the kernel's mmc_test (engine = \"mmc_test\"), which fio cannot \
             run: export the others with --workload",
            w.name
        );
    }
    let mut out = String::new();
    header(&mut out, plan, source, opts);
    for workload in &plan.workload {
        if opts.workloads.is_empty() || opts.workloads.contains(&workload.name) {
            write_workload(&mut out, workload, opts.scale_down.max(1));
        }
    }
    Ok(out)
}

fn header(out: &mut String, plan: &Plan, source: &str, opts: &FioOptions) {
    let _ = writeln!(
        out,
        "; fio job file written by mmcab {} (`mmcab export fio`) from plan '{}' ({source})",
        env!("CARGO_PKG_VERSION"),
        plan.name
    );
    if opts.scale_down > 1 {
        let _ = writeln!(
            out,
            "; sizes and offsets divided by {} (--scale-down), as mmcab run does",
            opts.scale_down
        );
    }
    let run = match &opts.target {
        Some(_) => "fio --output-format=json THIS_FILE".to_string(),
        None => "TARGET=/dev/mmcblkN fio --output-format=json THIS_FILE".to_string(),
    };
    let _ = writeln!(out, "; run: {run}");
    let _ = writeln!(
        out,
        "; Each [[workload]] is one reporting group (stonewall): its jobs run at the same\n\
         ; time and group_reporting sums them like mmcab's `all` row. Writes destroy the\n\
         ; target's data, as with mmcab run --allow-write."
    );
    out.push_str("\n[global]\n");
    match &opts.target {
        Some(t) => {
            let _ = writeln!(out, "filename={t}");
        }
        None => out.push_str("filename=${TARGET}\n"),
    }
    out.push_str("group_reporting\n");
}

fn write_workload(out: &mut String, workload: &WorkloadSpec, scale_down: u32) {
    let _ = writeln!(out, "\n; --- workload '{}'", workload.name);
    if let Some(d) = &workload.description {
        let _ = writeln!(out, "; {}", d.replace('\n', " "));
    }
    if workload.shared_window {
        out.push_str(
            "; mmcab shared_window: every job keeps going until the one with the most to do\n\
             ; is done; fio has no such option, so here each job stops at its own amount\n",
        );
    }
    let jobs: Vec<JobSpec> = workload.job.iter().map(|j| scaled(j, scale_down)).collect();
    // iozone's passes run one after the other, each its own group: `-i 0` writes and
    // rewrites sequentially (rw = "iozone" only), `-i 2` reads then writes at random.
    let passes: &[(&str, &str)] = if jobs.iter().any(|j| j.rw == Rw::Iozone) {
        &[
            ("write", "write"),
            ("rewrite", "write"),
            ("read", "randread"),
            ("randwrite", "randwrite"),
        ]
    } else if jobs.iter().any(|j| j.rw == Rw::IozoneRandom) {
        &[("read", "randread"), ("write", "randwrite")]
    } else {
        &[]
    };
    if !passes.is_empty() {
        for &(pass, rw) in passes {
            for (i, job) in jobs.iter().enumerate() {
                let name = format!("{}.{}.{pass}", workload.name, job.name);
                write_job(out, &name, job, i == 0, Some(rw));
            }
        }
        return;
    }
    for (i, job) in jobs.iter().enumerate() {
        write_job(
            out,
            &format!("{}.{}", workload.name, job.name),
            job,
            i == 0,
            None,
        );
    }
}

/// One fio job section; `pass` is the `rw` of one iozone pass.
fn write_job(out: &mut String, name: &str, job: &JobSpec, first: bool, pass: Option<&str>) {
    let _ = writeln!(out, "[{name}]");
    if first {
        out.push_str("stonewall\n");
    }
    let fio = fio_job(job, pass);
    for pair in fio.exact_pairs() {
        let _ = writeln!(out, "{pair}");
    }
    for note in &fio.notes {
        for line in note.lines() {
            let _ = writeln!(out, "; {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        text.parse().expect("plan parses")
    }

    const PLAN: &str = r#"
name = "p"
[[workload]]
name = "seq"
[[workload.job]]
name = "w"
rw = "write"
bs = "1M"
size = "64M"
pattern = "zeros"
end_fsync = true
[[workload]]
name = "mixed"
[[workload.job]]
name = "r"
rw = "randread"
engine = "io_uring"
iodepth = 32
size = "16M"
offset = "16M"
numjobs = 2
offset_increment = "32M"
runtime = "1500ms"
time_based = true
[[workload.job]]
name = "rw"
rw = "randrw"
rwmixread = 70
size = "8M"
randseed = 9
"#;

    #[test]
    fn workloads_become_groups_with_fio_keys() {
        let text = job_file(&plan(PLAN), "p.toml", &FioOptions::default()).unwrap();
        let sections: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(sections, ["[global]", "[seq.w]", "[mixed.r]", "[mixed.rw]"]);
        assert!(
            text.contains("filename=${TARGET}\ngroup_reporting\n"),
            "{text}"
        );
        assert!(text.contains(
            "[seq.w]\nstonewall\nrw=write\nbs=1048576\nsize=67108864\nioengine=psync\niodepth=1\n\
             direct=1\nend_fsync=1\nzero_buffers=1\n"
        ), "{text}");
        assert!(
            text.contains(
                "[mixed.r]\nstonewall\nrw=randread\nbs=4096\nsize=16777216\noffset=16777216\n\
             offset_increment=33554432\nnumjobs=2\nioengine=io_uring\niodepth=32\ndirect=1\n\
             runtime=1500ms\ntime_based=1\nnorandommap=1\n"
            ),
            "{text}"
        );
        // The second job of a workload runs alongside the first: no stonewall.
        assert!(
            text.contains("[mixed.rw]\nrw=randrw\nrwmixread=70\n"),
            "{text}"
        );
        assert!(text.contains("randseed=9\n"), "{text}");
    }

    #[test]
    fn scale_down_target_and_selection_follow_mmcab_run() {
        let opts = FioOptions {
            target: Some("/dev/loop3".into()),
            scale_down: 16,
            workloads: vec!["seq".into()],
        };
        let text = job_file(&plan(PLAN), "p.toml", &opts).unwrap();
        assert!(text.contains("filename=/dev/loop3\n"), "{text}");
        assert!(text.contains("size=4194304\n"), "64M / 16: {text}");
        assert!(!text.contains("[mixed"), "{text}");
        let opts = FioOptions {
            workloads: vec!["nope".into()],
            ..Default::default()
        };
        let err = job_file(&plan(PLAN), "p.toml", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--workload nope") && err.contains("seq, mixed"),
            "{err}"
        );
    }

    #[test]
    fn iozone_random_is_a_read_pass_then_a_write_pass() {
        let text = job_file(
            &plan(
                "name = \"i\"\n[[workload]]\nname = \"iozone\"\n[[workload.job]]\nname = \"f\"\n\
                 rw = \"iozone-random\"\nbs = \"4k\"\nsize = \"1M\"\n",
            ),
            "i.toml",
            &FioOptions::default(),
        )
        .unwrap();
        assert!(
            text.contains("[iozone.f.read]\nstonewall\nrw=randread\n"),
            "{text}"
        );
        assert!(
            text.contains("[iozone.f.write]\nstonewall\nrw=randwrite\n"),
            "{text}"
        );
        assert!(!text.contains("norandommap"), "every record once: {text}");
        let text = job_file(
            &plan(
                "name = \"i\"\n[[workload]]\nname = \"iozone\"\n[[workload.job]]\nname = \"f\"\n\
                 rw = \"iozone\"\nbs = \"4k\"\nsize = \"1M\"\n",
            ),
            "i.toml",
            &FioOptions::default(),
        )
        .unwrap();
        let sections: Vec<&str> = text.lines().filter(|l| l.starts_with("[iozone")).collect();
        assert_eq!(
            sections,
            [
                "[iozone.f.write]",
                "[iozone.f.rewrite]",
                "[iozone.f.read]",
                "[iozone.f.randwrite]"
            ]
        );
        assert_eq!(text.matches("\nstonewall\n").count(), 4, "{text}");
    }

    #[test]
    fn every_shipped_plan_exports() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let p = Plan::load(&path).unwrap();
                if p.workload.iter().any(|w| w.uses_mmc_test()) {
                    let err = job_file(&p, "x", &FioOptions::default()).unwrap_err();
                    assert!(err.to_string().contains("fio cannot"), "{err}");
                    continue;
                }
                let text = job_file(&p, "x", &FioOptions::default()).unwrap();
                let groups = text.matches("stonewall\n").count();
                assert!(groups >= p.workload.len(), "{}: {text}", path.display());
            }
        }
    }
}
