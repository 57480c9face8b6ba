//! The one output sink of mmcab: results on stdout (human text or JSON), everything else
//! on stderr as `mmcab: ...` lines (notes, warnings, the error), and the progress of
//! `mmcab run` (a bar with run n/N and ETA on a terminal, one line per run otherwise,
//! nothing with `--quiet`; see `progress.rs` for what the runner's events become).
//! Lines on stderr go above the bar while it is shown.
//!
//! No write here panics: `mmcab run ... 2>&1 | head` (EPIPE, SIGPIPE is ignored) or a
//! hung-up terminal (EIO) must not abort a run whose knobs are still to be restored.
//! A line stderr does not take is dropped; stdout whose reader went away (EPIPE) ends
//! quietly, other stdout errors are returned.

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A JSON document with its schema number first and the body's keys beside it.
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize> {
    pub schema: u32,
    #[serde(flatten)]
    pub body: &'a T,
}

pub struct Output {
    /// `--quiet`: no progress and no notes (warnings and errors still show).
    quiet: bool,
    /// `--json`: stdout carries one JSON document.
    json: bool,
    bar: Mutex<Option<ProgressBar>>,
    /// Stdout's reader went away: nothing more is written there.
    stdout_closed: AtomicBool,
}

impl Output {
    pub fn new(quiet: bool, json: bool) -> Output {
        Output {
            quiet,
            json,
            bar: Mutex::new(None),
            stdout_closed: AtomicBool::new(false),
        }
    }

    pub fn quiet(&self) -> bool {
        self.quiet
    }

    pub fn json_mode(&self) -> bool {
        self.json
    }

    /// Human text on stdout, as given.
    pub fn print(&self, text: &str) -> anyhow::Result<()> {
        self.stdout(|w| w.write_all(text.as_bytes()))
    }

    /// Write to stdout piece by piece (long output is not built in memory first). When
    /// the reader has gone away (`| head`), the rest is dropped without an error: it
    /// wanted no more.
    pub fn stdout(
        &self,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        self.write_stdout(&mut std::io::stdout().lock(), write)
    }

    fn write_stdout(
        &self,
        to: &mut dyn Write,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        if self.stdout_closed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut out = std::io::BufWriter::new(to);
        match write(&mut out).and_then(|_| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.stdout_closed.store(true, Ordering::Relaxed);
                // What is still buffered cannot go anywhere either.
                let _ = out.into_parts();
                Ok(())
            }
            other => other.map_err(|e| anyhow::anyhow!("writing to stdout: {e}")),
        }
    }

    /// One JSON document on stdout, pretty-printed, with a final newline.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(value)?;
        self.stdout(|w| writeln!(w, "{text}"))
    }

    /// A line on stderr, above the progress bar when one is shown. A line stderr does
    /// not take (a closed pipe, a hung-up terminal) is dropped.
    pub fn line(&self, text: &str) {
        match self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            // indicatif ignores write errors itself.
            Some(bar) => bar.println(text),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
    }

    /// `mmcab: TEXT` on stderr, unless `--quiet`.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            self.line(&format!("mmcab: {text}"));
        }
    }

    /// `mmcab: warning: TEXT` on stderr.
    pub fn warn(&self, text: &str) {
        self.line(&format!("mmcab: warning: {text}"));
    }

    /// The error a command ended with: one line, causes joined with ": ".
    pub fn error(&self, err: &anyhow::Error) {
        self.finish_progress();
        self.line(&format!("mmcab: error: {err:#}"));
    }

    /// Show a bar of `total` steps when stderr is a terminal and not `--quiet`.
    pub fn start_progress(&self, total: u64) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template("{bar:30} run {pos}/{len} ETA {eta} {msg}")
        {
            bar.set_style(style);
        }
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
    }

    /// One step done: the bar moves on and shows `text`, or `text` is a line of its own.
    pub fn advance(&self, text: &str) {
        let guard = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(text.to_string());
            }
            None => {
                drop(guard);
                self.progress_line(text);
            }
        }
    }

    /// A line of progress: shown unless `--quiet`.
    pub fn progress_line(&self, text: &str) {
        if !self.quiet {
            self.line(text);
        }
    }

    /// `steps` fewer steps to go (runs skipped by `--until-ci`).
    pub fn shrink_progress(&self, steps: u64) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            bar.set_length(bar.length().unwrap_or(0).saturating_sub(steps));
        }
    }

    /// Take the bar off the screen.
    pub fn finish_progress(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that went away, or a disk that is full.
    struct Failing(std::io::ErrorKind);
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(self.0.into())
        }
    }

    #[test]
    fn a_closed_stdout_ends_quietly_other_errors_are_returned() {
        let out = Output::new(false, false);
        let mut gone = Failing(std::io::ErrorKind::BrokenPipe);
        let mut calls = 0;
        for _ in 0..2 {
            out.write_stdout(&mut gone, |w| {
                calls += 1;
                writeln!(w, "{}", "x".repeat(10_000))
            })
            .unwrap();
        }
        assert_eq!(calls, 1, "nothing more is written once the reader is gone");
        let full = Output::new(false, false);
        let err = full
            .write_stdout(&mut Failing(std::io::ErrorKind::StorageFull), |w| {
                writeln!(w, "{}", "x".repeat(10_000))
            })
            .unwrap_err();
        assert!(err.to_string().starts_with("writing to stdout: "), "{err}");
    }
}
