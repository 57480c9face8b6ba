//! What `mmcab run --dry-run` prints: the matrix (configs, the bytes each writing job
//! will write, every run in order) as text or JSON.

use super::run_output::RUN_JSON_SCHEMA;
use crate::plan::length;
use crate::runner::planned_writes::PlannedWrite;
use crate::runner::run_length::{LengthKind, LengthWarning};
use crate::runner::Session;
use crate::units::format_size;
use std::io::Write;

/// The matrix as `--dry-run --json` prints it: `{schema, dry_run, plan, config_count,
/// configs: [{name, knobs, packed}], workloads, repetitions, warmup, order, seed, writes,
/// runs: [{run, config, workload, repetition, warmup, done}], warnings}`; `writes` is
/// `[{workload, job, configs, start, end}]`, or `{"error": ...}` when the target cannot
/// tell; `warnings` is `[{workload, job, kind, ...}]` ([`LengthKind`]'s fields).
pub fn matrix_json(
    session: &Session,
    writes: &Writes,
    lengths: &[LengthWarning],
) -> serde_json::Value {
    let matrix = &session.matrix;
    let configs: Vec<serde_json::Value> = session
        .configs
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.name,
                "knobs": c.knob_values().unwrap_or_default(),
                "packed": c.packed,
            })
        })
        .collect();
    let workloads: Vec<&str> = session
        .workloads
        .iter()
        .map(|&w| session.plan.workload[w].name.as_str())
        .collect();
    let runs: Vec<serde_json::Value> = matrix
        .into_iter()
        .map(|slot| {
            serde_json::json!({
                "run": slot.run,
                "config": session.configs[slot.config].name,
                "workload": session.workload_name(&slot),
                "repetition": slot.repetition,
                "warmup": slot.warmup,
                "done": session.finished.contains(&slot.run),
            })
        })
        .collect();
    serde_json::json!({
        "schema": RUN_JSON_SCHEMA,
        "dry_run": true,
        "plan": session.plan.name,
        "config_count": configs.len(),
        "configs": configs,
        "workloads": workloads,
        "repetitions": matrix.repetitions(),
        "warmup": matrix.warmup(),
        "order": matrix.order().to_string(),
        "seed": session.seed,
        "writes": match writes {
            Ok(w) => serde_json::to_value(w).unwrap_or_default(),
            Err(e) => serde_json::json!({ "error": e }),
        },
        "runs": runs,
        "warnings": serde_json::to_value(lengths).unwrap_or_default(),
    })
}

/// A job's length warning as `--dry-run` prints it: one line naming the job and the fix.
pub fn length_line(w: &LengthWarning) -> String {
    let what = match &w.kind {
        LengthKind::SizeOnly { bytes } => {
            let amount = bytes.map_or("the rest of the target".to_string(), format_size);
            let fast = bytes.map_or(String::new(), |b| {
                format!(
                    " ({} at 250 MB/s)",
                    length::seconds_text(b as f64 / FAST_CARD_BYTES_PER_S)
                )
            });
            format!(
                "its length is set by {amount} alone{fast}: it may be too short to trust \
                 on a fast card; set min_runtime = \"1s\""
            )
        }
        LengthKind::ShortFloor {
            key,
            seconds,
            min_s,
            scale_down,
        } => {
            let scaled = if *scale_down > 1 {
                format!(" (after --scale-down {scale_down})")
            } else {
                String::new()
            };
            let fix = if *scale_down > 1 {
                format!("run without --scale-down {scale_down}")
            } else {
                format!("raise {key} to {}", length::seconds_text(*min_s))
            };
            format!(
                "{key} {}{scaled} is under the {} a run needs: too short to trust; {fix}",
                length::seconds_text(*seconds),
                length::seconds_text(*min_s)
            )
        }
        LengthKind::InsideCache { bytes, cache_bytes } => format!(
            "writes {}, under twice the card's {} cache (EXT_CSD CACHE_SIZE): it measures \
             the cache; set past_cache = true, or write {} or more",
            format_size(*bytes),
            format_size(*cache_bytes),
            format_size(length::CACHE_FACTOR * cache_bytes)
        ),
    };
    format!("warning: {}/{}: {what}", w.workload, w.job)
}

/// The speed `--dry-run` illustrates a length set by size alone with: a 2020s eMMC's
/// sequential read (the 250 MB/s card).
const FAST_CARD_BYTES_PER_S: f64 = 250e6;

/// What `--dry-run` shows of a plan's writes ([`planned_writes`]), or why it cannot.
pub type Writes = Result<Vec<PlannedWrite>, String>;

fn write_lines(out: &mut dyn Write, session: &Session, writes: &Writes) -> std::io::Result<()> {
    let target = session.target.display();
    match writes {
        Err(e) => writeln!(out, "writes: not known ({e})"),
        Ok(w) if w.is_empty() => writeln!(out, "writes: none (every job reads)"),
        Ok(w) => {
            writeln!(out, "writes to {target} (bytes, end included):")?;
            for p in w {
                let configs = if p.configs.len() == session.configs.len() {
                    String::new()
                } else {
                    format!(" (config {})", p.configs.join(", "))
                };
                writeln!(
                    out,
                    "  {}/{}{configs}: bytes {}-{} ({})",
                    p.workload,
                    p.job,
                    p.start,
                    p.end - 1,
                    crate::units::format_size(p.end - p.start)
                )?;
            }
            Ok(())
        }
    }
}

/// The matrix as `--dry-run` prints it, written run by run (it can be long).
pub fn write_matrix(
    out: &mut dyn Write,
    session: &Session,
    writes: &Writes,
    lengths: &[LengthWarning],
) -> std::io::Result<()> {
    let matrix = &session.matrix;
    let warmup = match matrix.warmup() {
        0 => String::new(),
        n => format!(" + {n} warm-up"),
    };
    writeln!(
        out,
        "plan {}: {} config(s) x {} workload(s) x {} repetition(s){warmup} = {} runs, order {} \
         (seed {})",
        session.plan.name,
        session.configs.len(),
        session.workloads.len(),
        matrix.repetitions(),
        matrix.len(),
        matrix.order(),
        session.seed
    )?;
    for config in &session.configs {
        let mut knobs: Vec<String> = config
            .knob_values()
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if let Some(packed) = config.packed {
            knobs.push(format!("packed={packed} (ioctl writes)"));
        }
        let knobs = if knobs.is_empty() {
            "device as found".to_string()
        } else {
            knobs.join(" ")
        };
        writeln!(out, "config {}: {knobs}", config.name)?;
    }
    write_lines(out, session, writes)?;
    for w in lengths {
        writeln!(out, "{}", length_line(w))?;
    }
    writeln!(
        out,
        "{:>5}  {:<16} {:<20} {:>4}  note",
        "run", "config", "workload", "rep"
    )?;
    for slot in matrix {
        let mut note = Vec::new();
        if slot.warmup {
            note.push("warm-up");
        }
        if session.finished.contains(&slot.run) {
            note.push("done");
        }
        let line = format!(
            "{:>5}  {:<16} {:<20} {:>4}  {}",
            slot.run,
            session.configs[slot.config].name,
            session.workload_name(&slot),
            slot.repetition,
            note.join(", ")
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::RunOptions;

    #[test]
    fn length_warnings_are_one_line_naming_the_job_and_the_fix() {
        let w = |kind| LengthWarning {
            workload: "seq-write".into(),
            job: "dd-write".into(),
            kind,
        };
        assert_eq!(
            length_line(&w(LengthKind::SizeOnly {
                bytes: Some(4 << 20)
            })),
            "warning: seq-write/dd-write: its length is set by 4MiB alone (17 ms at 250 \
             MB/s): it may be too short to trust on a fast card; set min_runtime = \"1s\""
        );
        assert_eq!(
            length_line(&w(LengthKind::ShortFloor {
                key: "min_runtime",
                seconds: 0.0625,
                min_s: 1.0,
                scale_down: 16
            })),
            "warning: seq-write/dd-write: min_runtime 62 ms (after --scale-down 16) is under \
             the 1 s a run needs: too short to trust; run without --scale-down 16"
        );
        assert_eq!(
            length_line(&w(LengthKind::ShortFloor {
                key: "runtime",
                seconds: 0.5,
                min_s: 1.0,
                scale_down: 1
            })),
            "warning: seq-write/dd-write: runtime 0.50 s is under the 1 s a run needs: too \
             short to trust; raise runtime to 1 s"
        );
        assert_eq!(
            length_line(&w(LengthKind::InsideCache {
                bytes: 4 << 20,
                cache_bytes: 64 << 20
            })),
            "warning: seq-write/dd-write: writes 4MiB, under twice the card's 64MiB cache \
             (EXT_CSD CACHE_SIZE): it measures the cache; set past_cache = true, or write \
             128MiB or more"
        );
        for line in [w(LengthKind::SizeOnly { bytes: None })]
            .iter()
            .map(length_line)
        {
            assert!(!line.contains('\n'), "{line}");
        }
    }

    #[test]
    fn dry_run_matrix_lists_every_run_with_its_notes() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.toml");
        std::fs::write(
            &plan,
            "name = \"p\"\nrepetitions = 2\nwarmup = 1\n\
             [[config]]\nname = \"A\"\nmarker = 1\n[[config]]\nname = \"B\"\n\
             [[knob]]\nname = \"marker\"\nkind = \"command\"\nread = \"true\"\napply = \"true\"\n\
             [[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"read\"\n",
        )
        .unwrap();
        let opts = RunOptions {
            plan: Some(plan),
            dry_run: true,
            ..Default::default()
        };
        let mut session = crate::runner::open_session(&opts, false).unwrap();
        session.finished.insert(2);
        // --json: the same matrix as data (the LAVA run step reads config_count).
        // As planned_writes gives them for a device (the test plan's job reads: made up).
        let writes: Writes = Ok(vec![PlannedWrite {
            workload: "w".into(),
            job: "j".into(),
            configs: vec!["A".into()],
            start: 0,
            end: 1 << 20,
        }]);
        let v = matrix_json(&session, &writes, &[]);
        assert_eq!(v["writes"][0]["end"], 1 << 20);
        let err: Writes = Err("cannot stat target".into());
        assert_eq!(
            matrix_json(&session, &err, &[])["writes"]["error"],
            "cannot stat target"
        );
        assert_eq!(v["config_count"], 2);
        assert_eq!(v["configs"][0]["knobs"]["marker"], "1");
        assert_eq!(v["workloads"], serde_json::json!(["w"]));
        assert_eq!(
            (v["repetitions"].as_u64(), v["warmup"].as_u64()),
            (Some(2), Some(1))
        );
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 6);
        assert_eq!(runs[1]["config"], "B");
        assert_eq!(
            (runs[1]["warmup"].as_bool(), runs[1]["done"].as_bool()),
            (Some(true), Some(true))
        );
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert!(pretty.contains("\n  \"config_count\": 2,\n"), "{pretty}");
        let mut out = Vec::new();
        write_matrix(&mut out, &session, &writes, &[]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[3],
            format!(
                "writes to {} (bytes, end included):",
                session.target.display()
            )
        );
        assert_eq!(lines[4], "  w/j (config A): bytes 0-1048575 (1MiB)");
        assert_eq!(
            lines[0],
            "plan p: 2 config(s) x 1 workload(s) x 2 repetition(s) + 1 warm-up = 6 runs, \
             order interleaved (seed 1)"
        );
        assert_eq!(lines[1], "config A: marker=1");
        assert_eq!(lines[2], "config B: device as found");
        assert_eq!(
            lines[6],
            "    1  A                w                       1  warm-up"
        );
        assert_eq!(
            lines[7],
            "    2  B                w                       1  warm-up, done"
        );
        assert_eq!(
            lines[11],
            "    6  B                w                       3"
        );
        assert_eq!(lines.len(), 12);
    }
}
