//! What `mmcab run --until-ci` says at the end: the runs and device time it used
//! against the fixed design of `--max-repeat` repetitions, and how each workload ended.

use crate::runner::adaptive::Summary;
use std::fmt::Write as _;

pub fn summary_text(s: &Summary) -> String {
    let mut out = String::new();
    let share = |part: f64, whole: f64| {
        if whole > 0.0 {
            format!("{:.0}%", 100.0 * part / whole)
        } else {
            "-".to_string()
        }
    };
    let _ = writeln!(
        out,
        "until-ci {}%: {} of {} runs ({}), device time {:.1} s of an estimated {:.1} s for \
         {} repetitions each ({})",
        s.target_pct,
        s.runs,
        s.fixed_runs,
        share(f64::from(s.runs), f64::from(s.fixed_runs)),
        s.seconds,
        s.fixed_seconds_estimate,
        s.max_repeat,
        share(s.seconds, s.fixed_seconds_estimate)
    );
    for w in &s.workloads {
        let how = if w.converged && w.repetitions < s.max_repeat {
            "stopped".to_string()
        } else if w.converged {
            "met the target at --max-repeat".to_string()
        } else {
            format!("ran to --max-repeat, above {}%", s.target_pct)
        };
        let _ = writeln!(
            out,
            "  {}: {} repetitions per config, 95% CI +-{:.2}%: {how}",
            w.workload, w.repetitions, w.half_width_pct
        );
    }
    out
}
