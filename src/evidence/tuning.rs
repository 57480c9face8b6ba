//! The tuning the kernel did while the runner switched a config's knobs: the
//! `mmc_request_start`/`mmc_request_done` events of the host traced around the knobs'
//! application and verification ([`crate::evidence::Collector::trace_switch`]), and in
//! them the tuning commands.
//!
//! A re-initialisation at HS200 (or HS400, which tunes at HS200 first) runs the core's
//! `mmc_hs200_tuning()` -> `mmc_execute_tuning()` (drivers/mmc/core/mmc.c, core.c), which
//! calls the host's `execute_tuning` with CMD21 (`MMC_SEND_TUNING_BLOCK_HS200`) for an
//! eMMC, CMD19 (`MMC_SEND_TUNING_BLOCK`) for an SD card at SDR50/SDR104. A host whose
//! `execute_tuning` sends them through the core's `mmc_send_tuning()`
//! (drivers/mmc/core/mmc_ops.c, `mmc_wait_for_req()`) shows each in the trace
//! (`__mmc_start_request()` traces the start, `mmc_request_done()` the end). The
//! sdhci library's own loop does not: `__sdhci_execute_tuning()` -> `sdhci_send_tuning()`
//! (drivers/mmc/host/sdhci.c, Linux 6.12 and 7.2) writes the command to the controller
//! without an mmc request, so an sdhci host tunes without an event and a switch shows
//! none; the report says "none traced", not "none".

use super::trace::{self, Line};
use serde::{Deserialize, Serialize};

/// `MMC_SEND_TUNING_BLOCK` (SD, CMD19) and `MMC_SEND_TUNING_BLOCK_HS200` (eMMC, CMD21),
/// include/linux/mmc/mmc.h.
pub const CMD19: u32 = 19;
pub const CMD21: u32 = 21;

/// What the host's requests during one switch showed (meta.json `switches[].trace`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SwitchTrace {
    /// Requests of the host in the window (every opcode).
    pub requests: u64,
    /// CMD21 and CMD19 requests started.
    pub cmd21: u64,
    pub cmd19: u64,
    /// Tuning requests done with an error (normal: a tuning loop finds the sampling
    /// window by the phases that fail).
    pub tuning_errors: u64,
    /// From the first tuning request's start to the last one's done, microseconds
    /// (None without tuning).
    pub tuning_span_us: Option<f64>,
    /// The sum of each tuning request's start-to-done time, microseconds.
    pub tuning_sum_us: Option<f64>,
    /// Events the ring buffer lost (the counts are too low by them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_events: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SwitchTrace {
    /// Tuning commands of either kind.
    pub fn tuning(&self) -> u64 {
        self.cmd21 + self.cmd19
    }

    /// Adds up the events of `host` in the text of a trace (`trace` or `trace_pipe`).
    pub fn from_trace(text: &str, host: &str) -> SwitchTrace {
        let mut out = SwitchTrace::default();
        // The tuning request started and not done yet: one at a time (the core waits
        // for each, mmc_wait_for_req()).
        let mut open: Option<(u32, u64)> = None;
        let mut first: Option<u64> = None;
        let mut last: Option<u64> = None;
        let mut sum_ns = 0u64;
        let mut paired = 0u64;
        for line in text.lines() {
            match trace::parse_line(line) {
                Line::Start(s) if s.host == host => {
                    out.requests += 1;
                    if matches!(s.cmd_opcode, CMD19 | CMD21) {
                        if s.cmd_opcode == CMD21 {
                            out.cmd21 += 1;
                        } else {
                            out.cmd19 += 1;
                        }
                        first.get_or_insert(s.ts_ns);
                        open = Some((s.cmd_opcode, s.ts_ns));
                    }
                }
                Line::Done(d) if d.host == host && matches!(d.cmd_opcode, CMD19 | CMD21) => {
                    if d.cmd_err != 0 || d.data_err != 0 {
                        out.tuning_errors += 1;
                    }
                    last = Some(d.ts_ns);
                    if let Some((op, start)) = open.take() {
                        if op == d.cmd_opcode && d.ts_ns >= start {
                            sum_ns += d.ts_ns - start;
                            paired += 1;
                        }
                    }
                }
                Line::Lost { events, .. } => out.lost_events += events,
                _ => {}
            }
        }
        if let (Some(first), Some(last)) = (first, last) {
            out.tuning_span_us = Some(last.saturating_sub(first) as f64 / 1000.0);
        }
        if paired > 0 {
            out.tuning_sum_us = Some(sum_ns as f64 / 1000.0);
        }
        out
    }

    /// `40 x CMD21 in 3.1 ms (sum 2.9 ms)`, `no tuning (12 requests)`.
    pub fn text(&self) -> String {
        if self.tuning() == 0 {
            return format!("no tuning traced ({} requests)", self.requests);
        }
        let mut kinds = Vec::new();
        for (n, cmd) in [(self.cmd21, "CMD21"), (self.cmd19, "CMD19")] {
            if n > 0 {
                kinds.push(format!("{n} x {cmd}"));
            }
        }
        let mut t = kinds.join(" + ");
        if let Some(span) = self.tuning_span_us {
            t.push_str(&format!(" in {}", ms(span)));
        }
        if let Some(sum) = self.tuning_sum_us {
            t.push_str(&format!(" (sum {})", ms(sum)));
        }
        if self.tuning_errors > 0 {
            t.push_str(&format!(", {} failed", self.tuning_errors));
        }
        t
    }
}

/// Microseconds as milliseconds with two significant decimals at most.
pub fn ms(us: f64) -> String {
    let v = us / 1000.0;
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(ts: &str, op: u32) -> String {
        format!(
            "  kworker/0:1-20 [000] ..... {ts}: mmc_request_start: mmc0: start struct \
             mmc_request[(ptrval)]: cmd_opcode={op} cmd_arg=0x0 cmd_flags=0x35 cmd_retries=0 \
             stop_opcode=0 stop_arg=0x0 stop_flags=0x0 stop_retries=0 sbc_opcode=0 sbc_arg=0x0 \
             sbc_flags=0x0 sbc_retires=0 blocks=1 block_size=128 blk_addr=0 data_flags=0x200 \
             tag=0 can_retune=0 doing_retune=0 retune_now=0 need_retune=0 hold_retune=1 \
             retune_period=0"
        )
    }

    fn done(ts: &str, op: u32, data_err: i32) -> String {
        format!(
            "  kworker/0:1-20 [000] d.h.. {ts}: mmc_request_done: mmc0: end struct \
             mmc_request[(ptrval)]: cmd_opcode={op} cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 \
             cmd_retries=0 stop_opcode=0 stop_err=0 stop_resp=0x0 0x0 0x0 0x0 stop_retries=0 \
             sbc_opcode=0 sbc_err=0 sbc_resp=0x0 0x0 0x0 0x0 sbc_retries=0 bytes_xfered=128 \
             data_err={data_err} tag=0 can_retune=0 doing_retune=0 retune_now=0 \
             need_retune=0 hold_retune=1 retune_period=0"
        )
    }

    /// A runtime-PM re-initialisation at HS52 (the bus-width knob's, Linux 7.2.13, the
    /// simulated card; tests/fixtures/trace/README.md): CMD0, CMD1, CMD2, CMD3, CMD7,
    /// the CMD6 switches and CMD8, and no tuning.
    #[test]
    fn a_reinit_at_hs52_has_no_tuning() {
        let path = format!(
            "{}/tests/fixtures/trace/linux-7.2-emmcsim-reinit-hs52.trace",
            env!("CARGO_MANIFEST_DIR")
        );
        let t = SwitchTrace::from_trace(&std::fs::read_to_string(path).unwrap(), "mmc0");
        assert_eq!((t.requests, t.tuning(), t.tuning_span_us), (18, 0, None));
        assert_eq!(t.text(), "no tuning traced (18 requests)");
    }

    /// The same re-initialisation with the card in HS200 (`--card sim,hs200=1`), and the
    /// switch from HS200 to high speed (caps2's HS200 bits cleared): 40 CMD21s (the
    /// module's `tuning_cmds`) through mmc_send_tuning() in the first, none in the second.
    #[test]
    fn a_reinit_at_hs200_tunes_and_a_switch_to_hs_does_not() {
        let read = |name: &str| {
            let path = format!("{}/tests/fixtures/trace/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(path).unwrap()
        };
        let t = SwitchTrace::from_trace(&read("linux-7.2-emmcsim-reinit-hs200.trace"), "mmc0");
        assert_eq!(
            (t.requests, t.cmd21, t.cmd19, t.tuning_errors),
            (56, 40, 0, 0)
        );
        assert_eq!(t.tuning_span_us, Some(1106.0));
        assert_eq!(t.tuning_sum_us, Some(686.0));
        assert_eq!(t.text(), "40 x CMD21 in 1.1 ms (sum 0.69 ms)");
        let hs = SwitchTrace::from_trace(&read("linux-7.2-emmcsim-hs200-to-hs.trace"), "mmc0");
        assert_eq!((hs.requests, hs.tuning()), (18, 0));
        // Linux 6.12.95: the same sequence.
        let t = SwitchTrace::from_trace(&read("linux-6.12-emmcsim-reinit-hs200.trace"), "mmc0");
        assert_eq!((t.requests, t.cmd21, t.tuning_errors), (56, 40, 0));
        assert_eq!(
            (t.tuning_span_us, t.tuning_sum_us),
            (Some(1063.0), Some(669.0))
        );
    }

    #[test]
    fn tuning_requests_counted_and_timed() {
        let text = [
            start("1.000000", 6),
            done("1.000100", 6, 0),
            start("1.001000", 21),
            done("1.001200", 21, -84),
            start("1.002000", 21),
            done("1.002500", 21, 0),
            start("1.003000", 13),
            done("1.003050", 13, 0),
            start("1.004000", 21).replace("mmc0", "mmc1"),
        ]
        .join("\n");
        let t = SwitchTrace::from_trace(&text, "mmc0");
        assert_eq!(
            (t.requests, t.cmd21, t.cmd19, t.tuning_errors),
            (4, 2, 0, 1)
        );
        assert_eq!(t.tuning_span_us, Some(1500.0));
        assert_eq!(t.tuning_sum_us, Some(700.0));
        assert_eq!(t.text(), "2 x CMD21 in 1.5 ms (sum 0.70 ms), 1 failed");
        let none =
            SwitchTrace::from_trace(&[start("2.0", 13), done("2.1", 13, 0)].join("\n"), "mmc0");
        assert_eq!((none.tuning(), none.tuning_span_us), (0, None));
        assert_eq!(none.text(), "no tuning traced (1 requests)");
    }
}
