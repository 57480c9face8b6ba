//! How long a measured run must last, and how much a write run must write, for its
//! number to be the card's (docs/plans.md, "Run length"): the rules `--dry-run` and the
//! report both apply, pure.
//!
//! - A run shorter than [`MIN_RUN`] is too short to trust: its number is the clock's
//!   start and stop, one stall of the card or one preemption of the thread, not the
//!   card's rate. A run shorter than [`CLOCK_TICKS`] ticks of the clock that timed it
//!   is too short whatever [`MIN_RUN`] says (a coarse clock, e.g. a jiffies
//!   clocksource at 10 ms, needs 10 s).
//! - A write run that wrote less than [`CACHE_FACTOR`] times the card's stated volatile
//!   cache (EXT_CSD CACHE_SIZE, with CACHE_CTRL on) measured mostly the cache: at least
//!   half its data could go at the bus's rate without waiting for the flash.

use std::time::Duration;

/// N: the shortest measured run whose number is trusted. docs/plans.md says why 1 s.
pub const MIN_RUN: Duration = Duration::from_secs(1);

/// A run must last at least this many ticks of its clock (the clock's quantum is then
/// at most 0.1% of the run).
pub const CLOCK_TICKS: u64 = 1000;

/// A write run must write at least this many times the card's stated cache.
pub const CACHE_FACTOR: u64 = 2;

/// The shortest run trusted with a clock of `resolution_ns` (None: not recorded, as
/// before mmcab recorded it: [`MIN_RUN`]).
pub fn min_seconds(resolution_ns: Option<u64>) -> f64 {
    let clock = resolution_ns.map_or(0.0, |ns| (ns * CLOCK_TICKS) as f64 / 1e9);
    MIN_RUN.as_secs_f64().max(clock)
}

/// Whether a run measured for `seconds` is too short to trust.
pub fn too_short(seconds: f64, resolution_ns: Option<u64>) -> bool {
    seconds < min_seconds(resolution_ns)
}

/// Whether a write run of `bytes` stayed inside a cache of `cache_bytes` (0: none).
pub fn inside_cache(bytes: u64, cache_bytes: u64) -> bool {
    cache_bytes > 0 && bytes < CACHE_FACTOR.saturating_mul(cache_bytes)
}

/// A duration as the warnings write it: `16 ms`, `0.42 s`, `3 s`.
pub fn seconds_text(seconds: f64) -> String {
    if seconds < 0.1 {
        format!("{:.0} ms", seconds * 1e3)
    } else if seconds.fract() == 0.0 {
        format!("{seconds:.0} s")
    } else if seconds < 10.0 {
        format!("{seconds:.2} s")
    } else {
        format!("{seconds:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_under_a_second_or_a_thousand_clock_ticks_is_too_short() {
        assert!(too_short(0.016, None));
        assert!(too_short(0.999, Some(1)));
        assert!(!too_short(1.0, Some(1)));
        assert!(!too_short(1.0, None));
        // A jiffies clock at HZ=100: 10 ms ticks need 10 s.
        assert_eq!(min_seconds(Some(10_000_000)), 10.0);
        assert!(too_short(9.9, Some(10_000_000)));
        assert!(!too_short(10.0, Some(10_000_000)));
    }

    #[test]
    fn a_write_under_twice_the_cache_stays_inside_it() {
        let mib = 1 << 20;
        assert!(inside_cache(4 * mib, 64 * mib));
        assert!(inside_cache(127 * mib, 64 * mib));
        assert!(!inside_cache(128 * mib, 64 * mib));
        assert!(!inside_cache(4 * mib, 0), "no cache stated");
    }

    #[test]
    fn durations_read_at_their_scale() {
        assert_eq!(seconds_text(0.0163), "16 ms");
        assert_eq!(seconds_text(0.42), "0.42 s");
        assert_eq!(seconds_text(12.3), "12 s");
        assert_eq!(seconds_text(1.0), "1 s");
    }
}
