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
        "until-ci {}% (first stage {} repetitions): {} of {} runs ({}), device time {:.1} s \
         of an estimated {:.1} s for {} repetitions each ({})",
        s.target_pct,
        s.first_stage,
        s.runs,
        s.fixed_runs,
        share(f64::from(s.runs), f64::from(s.fixed_runs)),
        s.device_seconds,
        s.fixed_seconds_estimate,
        s.max_repeat,
        share(s.device_seconds, s.fixed_seconds_estimate)
    );
    for w in &s.workloads {
        let how = match w.planned {
            None => "stopped in the first stage".to_string(),
            Some(_) if w.met_target && w.repetitions < s.max_repeat => "stopped".to_string(),
            Some(_) if w.met_target => "met the target at --max-repeat".to_string(),
            Some(_) => format!("ran to --max-repeat, above {}%", s.target_pct),
        };
        let half = w
            .half_width_pct
            .map_or("unknown (a mean of 0 or no numbers)".to_string(), |h| {
                format!("+-{h:.2}%")
            });
        let _ = writeln!(
            out,
            "  {}: {} repetitions per config, 95% CI {half}: {how}",
            w.workload, w.repetitions
        );
    }
    out
}
