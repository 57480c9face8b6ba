//! SIGINT, SIGTERM and SIGHUP, all handled the same way, for every form of `mmcab run`.
//!
//! [`Interrupts::install`] takes the three signals over for the life of the process: the
//! first one sets the stop flag, which the runner polls between runs and the engine
//! between I/Os (the run in progress is discarded); the runner then restores the knobs
//! and exits with 128 + the signal's number. Every further signal is only reported: it
//! cannot skip the restore. Only SIGKILL can (then `restore.sh` finishes it by hand).

use super::events::{Event, Events};
use crate::exit::Kind;
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;

/// The signals as a flag; clones share it.
#[derive(Clone)]
pub struct Interrupts {
    /// Set on the first signal; shared with the engine as its cancellation flag.
    pub stop: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
    count: Arc<AtomicU32>,
}

impl Interrupts {
    /// Take over SIGINT, SIGTERM and SIGHUP; each one received is reported to `events`
    /// (from the signal thread).
    pub fn install(events: Arc<dyn Events>) -> Result<Interrupts> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let interrupts = Interrupts::none();
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .context("installing the SIGINT/SIGTERM/SIGHUP handlers")?;
        let shared = interrupts.clone();
        std::thread::Builder::new()
            .name("mmcab-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    shared.received(signal, &*events);
                }
            })
            .context("starting the signal thread")?;
        Ok(interrupts)
    }

    /// A flag that no signal sets (for tests and library callers without signals).
    pub fn none() -> Interrupts {
        Interrupts {
            stop: Arc::new(AtomicBool::new(false)),
            signal: Arc::new(AtomicI32::new(0)),
            count: Arc::new(AtomicU32::new(0)),
        }
    }

    /// What the signal thread does with each signal.
    fn received(&self, signal: i32, events: &dyn Events) {
        let again = self.count.fetch_add(1, Ordering::SeqCst) > 0;
        if !again {
            self.signal.store(signal, Ordering::SeqCst);
            self.stop.store(true, Ordering::SeqCst);
        }
        events.event(Event::Signal { signal, again });
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

    /// How a command stopped by the flag ends: [`Kind::Signal`] (exit status 128 + its
    /// number, as a shell expects), [`Kind::Error`] when no signal set it.
    pub fn kind(&self) -> Kind {
        self.signal().map_or(Kind::Error, Kind::Signal)
    }
}

/// A signal's name as users know it.
pub fn signal_name(signal: i32) -> &'static str {
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
    use std::sync::Mutex;

    #[derive(Default)]
    struct Seen(Mutex<Vec<(i32, bool)>>);
    impl Events for Seen {
        fn event(&self, event: Event<'_>) {
            if let Event::Signal { signal, again } = event {
                self.0.lock().unwrap().push((signal, again));
            }
        }
    }

    #[test]
    fn the_first_signal_stops_and_sets_the_status_later_ones_only_report() {
        let seen = Seen::default();
        let interrupts = Interrupts::none();
        assert!(!interrupts.stopped());
        assert_eq!(interrupts.kind(), Kind::Error);
        for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
            interrupts.received(signal, &seen);
        }
        assert!(interrupts.stopped());
        assert_eq!(interrupts.signal(), Some(libc::SIGHUP));
        assert_eq!(interrupts.kind(), Kind::Signal(libc::SIGHUP));
        assert_eq!(interrupts.kind().status(), 128 + 1);
        assert_eq!(
            *seen.0.lock().unwrap(),
            [
                (libc::SIGHUP, false),
                (libc::SIGINT, true),
                (libc::SIGTERM, true)
            ]
        );
        assert_eq!(signal_name(libc::SIGHUP), "SIGHUP");
    }
}
