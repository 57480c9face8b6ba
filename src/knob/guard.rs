//! Restore on every exit path.
//!
//! [`KnobGuard`] owns the knobs of a run. It snapshots them before the first apply and
//! restores them (last touched first, the knobs that re-initialise the card before the
//! others) when the runner is done, whether it finished, failed
//! or was stopped by a signal (`crate::runner::signals`), and on panic (unwinding drops
//! it). A restore that fails reports the exact shell commands that finish it by hand.
//! The guard prints nothing: what it has to say goes to the [`GuardReport`] it was given.
//! A report that panics (output that cannot be written) is caught: on the panic path
//! the knobs are restored before anything is reported, so nothing said can stop it.

use super::{Knob, KnobName};
use anyhow::{Context, Result};

/// What the guard tells the user, through the caller's output.
#[derive(Debug)]
pub enum GuardEvent<'a> {
    /// A panic unwound through the guard, which then restored the knobs (`restored`:
    /// all of them; otherwise the failures and manual commands were reported first).
    Panicking { restored: bool },
    /// Restoring one knob failed (the others are still tried).
    RestoreFailed {
        knob: &'a str,
        error: &'a anyhow::Error,
    },
    /// The shell commands (as root) that finish a failed restore by hand.
    ByHand { commands: &'a [String] },
}

/// Where a [`KnobGuard`] reports; called from the thread that owns the guard.
pub type GuardReport = Box<dyn Fn(GuardEvent<'_>) + Send + Sync>;

pub struct KnobGuard {
    knobs: Vec<Box<dyn Knob>>,
    report: GuardReport,
    /// True once any knob may differ from its snapshot.
    touched: bool,
    restored: bool,
}

impl KnobGuard {
    pub fn new(knobs: Vec<Box<dyn Knob>>, report: GuardReport) -> Self {
        KnobGuard {
            knobs,
            report,
            touched: false,
            restored: false,
        }
    }

    /// Snapshot every knob; call before the first apply. A snapshot may itself change
    /// something (the packing knob switches its statistics on), so from here on the
    /// guard restores.
    pub fn snapshot_all(&mut self) -> Result<()> {
        self.touched = true;
        self.restored = false;
        for knob in &mut self.knobs {
            let name = knob.name().to_string();
            knob.snapshot().with_context(|| {
                format!("knob {name}: reading its current value before the run")
            })?;
        }
        Ok(())
    }

    /// Every knob, in order, to apply values with; marks the guard as having something
    /// to restore.
    pub fn knobs_mut(&mut self) -> std::slice::IterMut<'_, Box<dyn Knob>> {
        self.touched = true;
        self.restored = false;
        self.knobs.iter_mut()
    }

    pub fn names(&self) -> Vec<String> {
        self.knobs.iter().map(|k| k.name().to_string()).collect()
    }

    /// Every snapshot as [`Knob::saved`] writes it, by knob name (for meta.json).
    pub fn saved(&self) -> std::collections::BTreeMap<KnobName, String> {
        self.knobs
            .iter()
            .filter_map(|k| Some((KnobName::new(k.name()), k.saved()?)))
            .collect()
    }

    /// Shell commands that restore every snapshot by hand, as a script.
    pub fn restore_script(&self) -> String {
        let mut script = String::from(
            "#!/bin/sh\n# Written by mmcab before it changed any knob: run this to put the device\n\
             # back as it was if mmcab could not (killed with SIGKILL, power loss, ...).\nset -x\n",
        );
        for command in preconditions(self.knobs.iter().map(|k| &**k)) {
            script.push_str(&command);
            script.push('\n');
        }
        for knob in self.restore_order().map(|i| &self.knobs[i]) {
            if let Some(original) = knob.original() {
                script.push_str(&format!("# {} was {original}\n", knob.name()));
            }
            for command in knob.restore_commands() {
                script.push_str(&command);
                script.push('\n');
            }
        }
        script
    }

    /// Restore every knob, last first. Tries all of them even when one fails; on failure
    /// reports each failure and the manual commands for those knobs, and returns an error.
    pub fn restore_all(&mut self) -> Result<(), KnobsNotRestored> {
        if self.restored || !self.touched {
            self.restored = true;
            return Ok(());
        }
        let mut failed = Vec::new();
        let order: Vec<usize> = self.restore_order().collect();
        for i in order {
            let knob = &mut self.knobs[i];
            if knob.original().is_none() {
                continue;
            }
            if let Err(error) = knob.restore() {
                say(
                    &self.report,
                    GuardEvent::RestoreFailed {
                        knob: knob.name(),
                        error: &error,
                    },
                );
                failed.push(i);
            }
        }
        self.restored = true;
        if failed.is_empty() {
            return Ok(());
        }
        let failed_knobs = || failed.iter().map(|&i| &*self.knobs[i]);
        let mut commands = preconditions(failed_knobs());
        commands.extend(failed_knobs().flat_map(|k| k.restore_commands()));
        say(
            &self.report,
            GuardEvent::ByHand {
                commands: &commands,
            },
        );
        Err(KnobsNotRestored {
            knobs: failed_knobs().map(|k| k.name().to_string()).collect(),
        })
    }
}

impl KnobGuard {
    /// The knobs' indices in the order they are restored: last touched first, except
    /// that the knobs that re-initialise the card come before the others (a
    /// re-initialisation resets what the core sets at init, such as the clock:
    /// [`super::Stage`]).
    fn restore_order(&self) -> impl Iterator<Item = usize> + '_ {
        let reinit = |i: &usize| self.knobs[*i].stage() != super::Stage::AfterInit;
        let first = (0..self.knobs.len()).rev().filter(reinit);
        first.chain((0..self.knobs.len()).rev().filter(move |i| !reinit(i)))
    }
}

/// Report an event; a report that panics is caught (a panic while the guard restores
/// on the panic path would abort the process), so the restore goes on.
fn say(report: &GuardReport, event: GuardEvent<'_>) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report(event)));
}

/// The restore preconditions of `knobs`, each once, in order.
fn preconditions<'a>(knobs: impl Iterator<Item = &'a dyn Knob>) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    for command in knobs.flat_map(|k| k.restore_preconditions()) {
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    commands
}

/// Some knobs could not be put back; the commands to finish by hand were reported
/// ([`GuardEvent::ByHand`]). Exit status 5 (`crate::exit::Kind::KnobsNotRestored`).
#[derive(Debug)]
pub struct KnobsNotRestored {
    pub knobs: Vec<String>,
}

impl std::fmt::Display for KnobsNotRestored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "could not restore knob(s) {}: run the commands printed above",
            self.knobs.join(", ")
        )
    }
}

impl std::error::Error for KnobsNotRestored {}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        if !self.restored && self.touched {
            // Restore first, report afterwards: nothing said may keep a knob changed.
            // Failures were reported with the manual commands.
            let restored = self.restore_all().is_ok();
            if std::thread::panicking() {
                say(&self.report, GuardEvent::Panicking { restored });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::attribute::AttributeKnob;
    use crate::knob::command::CommandKnob;

    fn file_knob(
        dir: &std::path::Path,
        name: &str,
        value: &str,
    ) -> (Box<dyn Knob>, std::path::PathBuf) {
        let path = dir.join(name);
        std::fs::write(&path, format!("{value}\n")).unwrap();
        (Box::new(AttributeKnob::new(name, &path, vec![])), path)
    }

    /// Apply `value` (as the plan wrote it) to the guard's knob `name`.
    fn apply(guard: &mut KnobGuard, name: &str, value: &str) {
        let knob = guard.knobs_mut().find(|k| k.name() == name).unwrap();
        let value = knob.normalize(value).unwrap();
        knob.apply(&value).unwrap();
    }

    /// A report that keeps what the guard said, one line per event.
    fn recorder() -> (GuardReport, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        let report: GuardReport = Box::new(move |event| {
            let line = match event {
                GuardEvent::Panicking { restored } => format!("panicking, restored {restored}"),
                GuardEvent::RestoreFailed { knob, .. } => format!("failed {knob}"),
                GuardEvent::ByHand { commands } => format!("by hand {}", commands.join("; ")),
            };
            sink.lock().unwrap().push(line);
        });
        (report, lines)
    }

    #[test]
    fn drop_restores_what_was_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let (b, path_b) = file_knob(dir.path(), "b", "x");
        {
            let mut guard = KnobGuard::new(vec![a, b], recorder().0);
            guard.snapshot_all().unwrap();
            apply(&mut guard, "a", "2");
            apply(&mut guard, "b", "y");
            assert!(guard
                .restore_script()
                .contains(&format!("echo 1 > {}", path_a.display())));
        }
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
        assert_eq!(std::fs::read_to_string(&path_b).unwrap().trim(), "x");
    }

    #[test]
    fn panic_unwinding_restores() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let (report, said) = recorder();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut guard = KnobGuard::new(vec![a], report);
            guard.snapshot_all().unwrap();
            apply(&mut guard, "a", "2");
            panic!("boom");
        }));
        assert!(result.is_err());
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
        assert_eq!(*said.lock().unwrap(), ["panicking, restored true"]);
    }

    /// Output that panics (stderr gone: the panic of `eprintln!`) while the guard
    /// restores on the panic path: the knobs are restored anyway and the process does
    /// not abort.
    #[test]
    fn a_report_that_panics_does_not_stop_the_restore() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let broken: Box<dyn Knob> =
            Box::new(CommandKnob::new("broken", "echo 0", "exit 1", None, None));
        let said = std::sync::Arc::new(std::sync::Mutex::new(0));
        let count = said.clone();
        let report: GuardReport = Box::new(move |_| {
            *count.lock().unwrap() += 1;
            panic!("failed printing to stderr: Broken pipe (os error 32)");
        });
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut guard = KnobGuard::new(vec![broken, a], report);
            guard.snapshot_all().unwrap();
            apply(&mut guard, "a", "2");
            panic!("failed printing to stderr: Broken pipe (os error 32)");
        }));
        assert!(result.is_err());
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
        // Restore failed, by hand, panicking: each report tried, each one panicked.
        assert_eq!(*said.lock().unwrap(), 3);
    }

    #[test]
    fn one_failing_restore_does_not_stop_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let broken: Box<dyn Knob> =
            Box::new(CommandKnob::new("broken", "echo 0", "exit 1", None, None));
        let (report, said) = recorder();
        let mut guard = KnobGuard::new(vec![a, broken], report);
        guard.snapshot_all().unwrap();
        apply(&mut guard, "a", "2");
        let err = guard.restore_all().unwrap_err().to_string();
        assert!(err.contains("broken"), "{err}");
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
        assert_eq!(*said.lock().unwrap(), ["failed broken", "by hand exit 1"]);
    }

    /// A knob of a given stage that logs its restores and restore commands.
    struct Staged {
        name: &'static str,
        stage: crate::knob::Stage,
        log: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
    }

    impl Knob for Staged {
        fn name(&self) -> &str {
            self.name
        }
        fn read(&self) -> Result<String> {
            Ok("x".into())
        }
        fn snapshot(&mut self) -> Result<()> {
            Ok(())
        }
        fn original(&self) -> Option<crate::knob::Value> {
            Some(crate::knob::Value::canonical("x"))
        }
        fn adopt(&mut self, _saved: &str) -> Result<()> {
            Ok(())
        }
        fn apply(&mut self, _value: &crate::knob::Value) -> Result<()> {
            Ok(())
        }
        fn restore(&mut self) -> Result<()> {
            self.log.lock().unwrap().push(self.name);
            Ok(())
        }
        fn restore_commands(&self) -> Vec<String> {
            vec![format!("restore {}", self.name)]
        }
        fn stage(&self) -> crate::knob::Stage {
            self.stage
        }
    }

    /// The clock is set after the re-inits and restored after them: a re-init of the
    /// card would reset a clock put back before it. restore.sh goes in the same order.
    #[test]
    fn knobs_that_re_initialise_the_card_are_restored_first() {
        use crate::knob::Stage;
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let knob = |name, stage| -> Box<dyn Knob> {
            Box::new(Staged {
                name,
                stage,
                log: log.clone(),
            })
        };
        let mut guard = KnobGuard::new(
            vec![
                knob("bus-width", Stage::BusWidth),
                knob("speed-mode", Stage::Reinit),
                knob("cache", Stage::AfterInit),
                knob("clock", Stage::AfterInit),
            ],
            recorder().0,
        );
        guard.snapshot_all().unwrap();
        let script = guard.restore_script();
        guard.restore_all().unwrap();
        let order = ["speed-mode", "bus-width", "clock", "cache"];
        assert_eq!(*log.lock().unwrap(), order);
        let restores: Vec<&str> = script
            .lines()
            .filter_map(|l| l.strip_prefix("restore "))
            .collect();
        assert_eq!(restores, order);
    }
}
