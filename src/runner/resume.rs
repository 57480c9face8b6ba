//! `--resume DIR`: the session of an interrupted run, rebuilt from its meta.json (the
//! same plan text, configs, workloads, order, seed and repetitions, so the same matrix),
//! and the options that may not change it.

use super::session::{hex, select_configs, select_workloads, Session};
use super::{Mode, RunOptions};
use crate::plan::matrix::Matrix;
use crate::plan::spec::Plan;
use crate::record::resume::{self, Resumed};
use crate::record::Meta;
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Rebuild the session of an interrupted run from its meta.json: same plan text,
/// configs, workloads, order, seed and repetitions, so the matrix is the same.
/// `for_run`: false for `--dry-run`, which changes nothing in the directory and
/// takes no lock ([`resume::inspect`]).
pub fn session(opts: &RunOptions, dir: &Path, for_run: bool) -> Result<Session> {
    let (writer, meta, finished, torn) = if for_run {
        let Resumed {
            writer,
            meta,
            finished,
            torn,
        } = resume::resume(dir)?;
        (Some(writer), meta, finished, torn)
    } else {
        let seen = resume::inspect(dir)?;
        (None, seen.meta, seen.finished, Vec::new())
    };
    if meta.finished_unix_s.is_some() {
        bail!("{} is a finished run: nothing to resume", dir.display());
    }
    check_resume_options(opts, &meta, dir)?;
    let plan: Plan = meta
        .plan_text
        .parse()
        .with_context(|| format!("the plan saved in {}/meta.json", dir.display()))?;
    let target = match &opts.device {
        Some(d) if d.as_os_str() != meta.target.as_str() => bail!(
            "--device {} differs from the interrupted run's target {}",
            d.display(),
            meta.target
        ),
        _ => PathBuf::from(&meta.target),
    };
    let names: Vec<String> = meta.configs.iter().map(|c| c.name.clone()).collect();
    let configs = select_configs(&plan, &names)?;
    let workloads = select_workloads(&plan, &meta.workloads)?;
    let matrix = Matrix::new(
        configs.len(),
        workloads.len(),
        meta.repetitions,
        meta.warmup,
        meta.order,
        meta.seed,
    )
    .with_context(|| format!("the matrix saved in {}/meta.json", dir.display()))?;
    Ok(Session {
        mode: Mode::Recorded,
        plan_text: meta.plan_text.clone(),
        plan,
        configs,
        workloads,
        matrix,
        seed: meta.seed,
        scale_down: meta.scale_down,
        until_ci: meta.until_ci_pct,
        label: meta.label.clone(),
        target,
        finished,
        command_line: meta.command_line.clone().unwrap_or_default(),
        resumed: writer.map(|w| (w, meta)),
        torn,
    })
}

/// `--resume` takes the matrix from meta.json: options that would change it are refused
/// unless they say the same.
fn check_resume_options(opts: &RunOptions, meta: &Meta, dir: &Path) -> Result<()> {
    if let Some(plan_path) = &opts.plan {
        let text = std::fs::read(plan_path)
            .with_context(|| format!("cannot read plan file {}", plan_path.display()))?;
        if hex(&Sha256::digest(&text)) != meta.plan_sha256 {
            bail!(
                "{} is not the plan the interrupted run used (its copy is in {}/meta.json): \
                 leave PLAN out with --resume",
                plan_path.display(),
                dir.display()
            );
        }
    }
    if let Some(given) = opts.label.as_deref().filter(|&l| l != meta.label) {
        bail!(
            "--label {given} differs from the interrupted run's '{}': leave it out with --resume",
            meta.label
        );
    }
    // Compared as orders, so `--order abab` matches a saved "interleaved".
    if let Some(given) = opts.order.filter(|&o| o != meta.order) {
        bail!(
            "--order {given} differs from the interrupted run's '{}': leave it out with --resume",
            meta.order
        );
    }
    if opts
        .scale_down
        .is_some_and(|n| Some(n) != meta.scale_down.or(Some(1)))
    {
        bail!(
            "--scale-down {} differs from the interrupted run's ({}): leave it out with --resume",
            opts.scale_down.unwrap_or(1),
            meta.scale_down.unwrap_or(1)
        );
    }
    if opts.until_ci.is_some_and(|p| Some(p) != meta.until_ci_pct) {
        bail!(
            "--until-ci {} differs from the interrupted run's ({}): leave it out with --resume",
            opts.until_ci.unwrap_or_default(),
            meta.until_ci_pct
                .map_or("a fixed number of repetitions".to_string(), |p| format!(
                    "{p}%"
                ))
        );
    }
    if opts.repeat.is_some_and(|r| r != meta.repetitions)
        || opts.max_repeat.is_some_and(|r| r != meta.repetitions)
        || opts.warmup.is_some_and(|w| w != meta.warmup)
        || opts.seed.is_some_and(|s| s != meta.seed)
        || !opts.configs.is_empty()
        || !opts.workloads.is_empty()
    {
        bail!(
            "--resume reuses the matrix of the interrupted run (configs, workloads, \
             repetitions, warm-up, seed from {}/meta.json): leave those options out",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::session::tests::interrupted;
    use super::*;
    use crate::plan::matrix::Order;

    #[test]
    fn resume_accepts_an_order_alias_and_refuses_another_order() {
        let dir = tempfile::tempdir().unwrap();
        let out = interrupted(dir.path(), Order::Interleaved);
        let mut opts = RunOptions {
            resume: Some(out.clone()),
            order: Some("abab".parse().unwrap()),
            ..Default::default()
        };
        let session = super::super::open_session(&opts, true).unwrap();
        assert_eq!(session.matrix.order(), Order::Interleaved);
        assert_eq!(session.target, PathBuf::from("/dev/null"));
        drop(session);
        opts.order = Some(Order::Blocked);
        let err = super::super::open_session(&opts, true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--order blocked differs from the interrupted run's 'interleaved'"),
            "{err}"
        );
    }

    #[test]
    fn resume_refuses_options_that_change_the_matrix() {
        let dir = tempfile::tempdir().unwrap();
        let out = interrupted(dir.path(), Order::Random);
        for (opts, want) in [
            (
                RunOptions {
                    repeat: Some(9),
                    ..Default::default()
                },
                "leave those options out",
            ),
            (
                RunOptions {
                    scale_down: Some(4),
                    ..Default::default()
                },
                "--scale-down 4 differs",
            ),
            (
                RunOptions {
                    label: Some("x".into()),
                    ..Default::default()
                },
                "--label x differs",
            ),
        ] {
            let opts = RunOptions {
                resume: Some(out.clone()),
                ..opts
            };
            let err = super::super::open_session(&opts, true)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}");
        }
    }
}
