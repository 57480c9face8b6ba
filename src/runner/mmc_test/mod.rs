//! One run of a workload with `engine = "mmc_test"`: the config's knobs are in place
//! already (switched while mmc_block was bound: runtime PM reads `unsupported` once it is
//! not); refuse when anything holds the card's disks (a mount, swap, a holder, another
//! process: a board that boots from the card cannot run mmc_test), close the target,
//! unbind mmc_block, bind mmc_test, run the test (inside one write(), which no signal
//! interrupts: a SIGTERM stops the plan once it returns), read its results before
//! anything else, unbind mmc_test, bind mmc_block, wait for the disk and open the target
//! again. The card goes back to mmc_block on every path out of here; restore.sh has the
//! same commands ([`restore_commands`]) for a SIGKILL.

pub mod driver;

use super::device_state::Observer;
use super::reopen::TargetSlot;
use super::Session;
use crate::plan::workload::WorkloadSpec;
use crate::workload::io_error::{IoFailure, IoOp};
use crate::workload::mmc_test::{self as engine, output::TestOutput};
use crate::workload::{MeasuredWindow, WorkloadError, WorkloadResult};
use anyhow::{anyhow, Context, Result};
use driver::MmcTestDriver;

/// Run `spec`'s test on the card behind `target`.
pub(super) fn run(
    spec: &WorkloadSpec,
    target: &mut TargetSlot,
    observer: &Observer,
    window: &dyn MeasuredWindow,
) -> Result<WorkloadResult, WorkloadError> {
    let other = WorkloadError::Other;
    let paths = &observer
        .env
        .as_ref()
        .ok_or_else(|| anyhow!("engine = \"mmc_test\" needs an MMC card behind the target"))
        .map_err(other)?
        .paths;
    let (_, case) = engine::job_of(spec).map_err(other)?;
    let driver = MmcTestDriver::new(paths);
    driver.check_available().map_err(other)?;
    let blk = &driver.blk;
    blk.check_not_held()
        .context(
            "engine = \"mmc_test\" unbinds the card's block driver: a system that uses the card \
             (one that boots from it) cannot run it",
        )
        .map_err(other)?;
    target.close();
    let ran = attach_and_run(&driver, case, window);
    // Back to mmc_block whatever happened, then the disk and the target.
    let back = driver
        .detach()
        .and_then(|()| blk.wait_for_disk())
        .and_then(|()| target.reopen());
    let (out, started, cpu) = match (ran, back) {
        (Ok(ran), Ok(())) => ran,
        (Err(err), Ok(())) => return Err(other(err)),
        (Ok(_), Err(back)) => return Err(other(back)),
        (Err(err), Err(back)) => return Err(other(err.context(format!("{back:#}")))),
    };
    if out.result < 0 {
        let op = if case.writes() {
            IoOp::Write
        } else {
            IoOp::Read
        };
        let job = &spec.job[0].name;
        let failure = IoFailure::new(op, None, 0, &paths.dev_node, job)
            .errno(&std::io::Error::from_raw_os_error(-out.result));
        return Err(WorkloadError::Io(anyhow::Error::new(failure).context(
            format!(
                "mmc_test's test {} (mmc_test = \"{}\") ended {}",
                out.number,
                case.as_str(),
                out.result_words()
            ),
        )));
    }
    engine::result(spec, &out, started, cpu).map_err(other)
}

/// Bind mmc_test, find the test's number, run it inside the measured window.
fn attach_and_run(
    driver: &MmcTestDriver,
    case: crate::plan::mmc_test::MmcTestCase,
    window: &dyn MeasuredWindow,
) -> Result<(TestOutput, f64, f64)> {
    driver.attach()?;
    let number = driver.number(case)?;
    let cpu = thread_cpu_seconds();
    let started = crate::clock::unix_now();
    window.begin();
    let out = driver.run(number);
    window.end();
    Ok((out?, started, thread_cpu_seconds() - cpu))
}

/// CPU time of this thread (the test runs in its write()), seconds.
fn thread_cpu_seconds() -> f64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 / 1e9)
        .unwrap_or(0.0)
}

/// restore.sh (`script`, the knobs') for `session`: when it runs mmc_test, first put the
/// card back on mmc_block (each command does nothing when it is there), before the knobs
/// whose files need the card bound.
pub fn restore_script(script: String, session: &Session, observer: &Observer) -> String {
    let runs_it = session
        .workloads
        .iter()
        .any(|&w| session.plan.workload[w].uses_mmc_test());
    let Some(env) = observer.env.as_ref().filter(|_| runs_it) else {
        return script;
    };
    let mut lines = String::from("# mmc_test ran: the card back on mmc_block\n");
    for command in MmcTestDriver::new(&env.paths).restore_commands() {
        lines.push_str(&command);
        lines.push('\n');
    }
    // After the header (its `set -x`), before the knobs.
    match script.find("set -x\n") {
        Some(at) => {
            let at = at + "set -x\n".len();
            format!("{}{lines}{}", &script[..at], &script[at..])
        }
        None => script + &lines,
    }
}
