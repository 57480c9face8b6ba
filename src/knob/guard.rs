//! Restore on every exit path.
//!
//! [`KnobGuard`] owns the knobs of a run. It snapshots them before the first apply and
//! restores them (last touched first) on normal exit, on error (`?` drops it), on panic
//! (unwinding drops it) and after SIGINT/SIGTERM/SIGHUP, which [`Interrupts`] turns into a
//! flag the runner polls instead of letting the signal kill the process. Every further
//! Ctrl-C only prints that restore is under way: it cannot skip it. A restore that fails
//! prints the exact shell commands that finish it by hand.

use super::Knob;
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;

pub struct KnobGuard {
    knobs: Vec<Box<dyn Knob>>,
    /// True once any knob may differ from its snapshot.
    touched: bool,
    restored: bool,
}

impl KnobGuard {
    pub fn new(knobs: Vec<Box<dyn Knob>>) -> Self {
        KnobGuard {
            knobs,
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

    pub fn knob(&self, name: &str) -> Option<&dyn Knob> {
        self.knobs.iter().find(|k| k.name() == name).map(|k| &**k)
    }

    /// The knob to apply a value with; marks the guard as having something to restore.
    pub fn knob_mut(&mut self, name: &str) -> Option<&mut Box<dyn Knob>> {
        self.touched = true;
        self.restored = false;
        self.knobs.iter_mut().find(|k| k.name() == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.knobs.iter().map(|k| k.name().to_string()).collect()
    }

    /// Shell commands that restore every snapshot by hand, as a script.
    pub fn restore_script(&self) -> String {
        let mut script = String::from(
            "#!/bin/sh\n# Written by mmcab before it changed any knob: run this to put the device\n\
             # back as it was if mmcab could not (killed with SIGKILL, power loss, ...).\nset -x\n",
        );
        for knob in self.knobs.iter().rev() {
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
    /// prints the manual commands for the knobs that failed and returns an error.
    pub fn restore_all(&mut self) -> Result<()> {
        if self.restored || !self.touched {
            self.restored = true;
            return Ok(());
        }
        let mut failed = Vec::new();
        for knob in self.knobs.iter_mut().rev() {
            if knob.original().is_none() {
                continue;
            }
            if let Err(err) = knob.restore() {
                eprintln!("mmcab: restoring knob {} failed: {err:#}", knob.name());
                failed.push((knob.name().to_string(), knob.restore_commands()));
            }
        }
        self.restored = true;
        if failed.is_empty() {
            return Ok(());
        }
        eprintln!("mmcab: restore the device by hand with these commands (as root):");
        for (_, commands) in &failed {
            for command in commands {
                eprintln!("    {command}");
            }
        }
        let names: Vec<_> = failed.into_iter().map(|(name, _)| name).collect();
        anyhow::bail!(
            "could not restore knob(s) {}: run the commands printed above",
            names.join(", ")
        )
    }
}

impl Drop for KnobGuard {
    fn drop(&mut self) {
        if !self.restored && self.touched {
            if std::thread::panicking() {
                eprintln!("mmcab: panicked; restoring knobs before exiting");
            }
            // Errors were printed with the manual commands; nothing else to do in drop.
            let _ = self.restore_all();
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP turned into a flag: the runner stops at the next check,
/// the engine stops its current run, and the guard restores before the process exits.
#[derive(Clone)]
pub struct Interrupts {
    /// Set on the first signal; shared with the engine as its cancellation flag.
    pub stop: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
    count: Arc<AtomicU32>,
}

impl Interrupts {
    /// Take over SIGINT, SIGTERM and SIGHUP for the life of the process.
    pub fn install() -> Result<Interrupts> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let interrupts = Interrupts {
            stop: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicI32::new(0)),
            count: Arc::new(AtomicU32::new(0)),
        };
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .context("installing the SIGINT/SIGTERM handlers")?;
        let shared = interrupts.clone();
        std::thread::Builder::new()
            .name("mmcab-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    let n = shared.count.fetch_add(1, Ordering::SeqCst) + 1;
                    if n == 1 {
                        shared.signal.store(signal, Ordering::SeqCst);
                        shared.stop.store(true, Ordering::SeqCst);
                        eprintln!(
                            "\nmmcab: got {}: stopping; the current run is discarded, knobs are \
                             restored before exit",
                            signal_name(signal)
                        );
                    } else {
                        eprintln!(
                            "\nmmcab: got {} again: still stopping; knob restore is not skipped \
                             (if you kill -9 now, run restore.sh in the results directory)",
                            signal_name(signal)
                        );
                    }
                }
            })
            .context("starting the signal thread")?;
        Ok(interrupts)
    }

    /// A flag that is never set (for tests and library callers without signals).
    pub fn none() -> Interrupts {
        Interrupts {
            stop: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicI32::new(0)),
            count: Arc::new(AtomicU32::new(0)),
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The first signal received, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Exit status a shell expects after this signal (128 + number), 1 when none.
    pub fn exit_status(&self) -> u8 {
        self.signal().map(|s| (128 + s) as u8).unwrap_or(1)
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT (Ctrl-C)",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
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

    #[test]
    fn drop_restores_what_was_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let (b, path_b) = file_knob(dir.path(), "b", "x");
        {
            let mut guard = KnobGuard::new(vec![a, b]);
            guard.snapshot_all().unwrap();
            guard.knob_mut("a").unwrap().apply("2").unwrap();
            guard.knob_mut("b").unwrap().apply("y").unwrap();
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
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut guard = KnobGuard::new(vec![a]);
            guard.snapshot_all().unwrap();
            guard.knob_mut("a").unwrap().apply("2").unwrap();
            panic!("boom");
        }));
        assert!(result.is_err());
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
    }

    #[test]
    fn one_failing_restore_does_not_stop_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let (a, path_a) = file_knob(dir.path(), "a", "1");
        let broken: Box<dyn Knob> =
            Box::new(CommandKnob::new("broken", "echo 0", "exit 1", None, None));
        let mut guard = KnobGuard::new(vec![a, broken]);
        guard.snapshot_all().unwrap();
        guard.knob_mut("a").unwrap().apply("2").unwrap();
        let err = guard.restore_all().unwrap_err().to_string();
        assert!(err.contains("broken"), "{err}");
        assert_eq!(std::fs::read_to_string(&path_a).unwrap().trim(), "1");
    }
}
