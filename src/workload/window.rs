//! A workload's shared time window (`shared_window = true`): every job keeps going,
//! wrapping around its region as `time_based` does, until the job with the most to do
//! has done its amount of I/O (`size` / `io_size`, or `runtime`); all jobs are then
//! measured over the same stretch of time, so each job's throughput is what it got while
//! the others ran. Without it, each job stops at its own amount and a job that finishes
//! early leaves the others running alone (fio's default; fio gets a shared window with
//! `time_based` and one `runtime` for every job).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// One clone's part of a shared window: counts the clone as done when it has been
/// handed its own amount of I/O, or when it stops for any other reason (its runtime,
/// an error, a signal: on drop), and says when every clone is done.
#[derive(Debug)]
pub struct Window {
    /// Clones of the workload that have not yet been handed their own amount.
    short: Arc<AtomicUsize>,
    /// This clone's own amount of I/O (u64::MAX: time_based, done at its runtime).
    own_ops: u64,
    handed: u64,
    counted: bool,
}

impl Window {
    /// A counter for `clones` clones, to share among their windows.
    pub fn counter(clones: usize) -> Arc<AtomicUsize> {
        Arc::new(AtomicUsize::new(clones))
    }

    pub fn new(short: Arc<AtomicUsize>, own_ops: u64) -> Window {
        Window {
            short,
            own_ops,
            handed: 0,
            counted: false,
        }
    }

    fn count_done(&mut self) {
        if !self.counted {
            self.counted = true;
            self.short.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether this clone may be handed another I/O (false: the window is over).
    #[inline]
    pub fn may_go_on(&mut self) -> bool {
        if self.handed >= self.own_ops {
            self.count_done();
        }
        if self.counted && self.short.load(Ordering::Acquire) == 0 {
            return false;
        }
        self.handed += 1;
        true
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        self.count_done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_ends_when_the_longest_clone_has_its_amount() {
        let short = Window::counter(2);
        let mut a = Window::new(short.clone(), 2);
        let mut b = Window::new(short.clone(), 5);
        // a has its 2, then keeps going while b is short of its 5.
        let a_ios = (0..4).filter(|_| a.may_go_on()).count();
        assert_eq!(a_ios, 4);
        let b_ios = (0..5).filter(|_| b.may_go_on()).count();
        assert_eq!(b_ios, 5);
        assert!(
            !b.may_go_on(),
            "b has its amount and a is done: the window is over"
        );
        assert!(!a.may_go_on());
    }

    #[test]
    fn a_clone_that_stops_early_does_not_hold_the_others() {
        let short = Window::counter(2);
        let mut a = Window::new(short.clone(), 1);
        let b = Window::new(short.clone(), u64::MAX);
        assert!(a.may_go_on() && a.may_go_on(), "b still running");
        drop(b); // its runtime ended, or it failed
        assert!(!a.may_go_on());
    }
}
