//! `mmcab knobs DEVICE [--json]`: each built-in knob, its current value, whether it can
//! be switched here, and why not; then per eMMC speed mode whether card and host offer
//! it and whether it can be switched to here ([`super::knobs_modes`]).

use super::output::Output;
use crate::exit::Kind;
use crate::knob::builtin::KnobStatus;
use anyhow::{Context, Result};
use clap::Args;

/// Version of `mmcab knobs --json` (`{"schema", "device", "knobs": [...]}`).
pub const KNOBS_JSON_SCHEMA: u32 = 1;

#[derive(Debug, Args)]
pub struct KnobsArgs {
    /// /dev/mmcblkN or mmcblkN
    pub device: String,
    /// Machine-readable output (schema: man mmcab-knobs)
    #[arg(long)]
    pub json: bool,
}

pub fn execute(args: &KnobsArgs, out: &Output) -> Result<Kind> {
    let statuses = crate::knob::builtin::statuses(&args.device)
        .with_context(|| format!("mmcab knobs {}: finding the MMC card", args.device))?;
    let paths = crate::device::discover(&args.device)
        .with_context(|| format!("mmcab knobs {}: finding the MMC card", args.device))?;
    let kernel = crate::device::capabilities::kernel_release();
    let modes = crate::device::speed_offer::read_offer(&paths, &kernel);
    let features = crate::device::kconfig_read::check(&paths);
    if args.json {
        out.json(&serde_json::json!({
            "schema": KNOBS_JSON_SCHEMA,
            "device": args.device,
            "knobs": statuses,
            "speed_modes": modes.as_ref().ok(),
            "speed_modes_error": modes.as_ref().err(),
            "kernel_features": features,
        }))?;
    } else {
        let text = knobs_table(&statuses)
            + &super::knobs_modes::modes_table(modes.as_ref().map_err(String::as_str))
            + &super::kernel_features::text(&features);
        out.print(&text)?;
    }
    Ok(Kind::Success)
}

/// The `mmcab knobs` table: one knob per line, then its values and the reason, indented.
pub fn knobs_table(statuses: &[KnobStatus]) -> String {
    let mut out = format!("{:<10} {:<10} {}\n", "knob", "available", "value");
    for s in statuses {
        out.push_str(&format!(
            "{:<10} {:<10} {}\n",
            s.name,
            if s.available { "yes" } else { "no" },
            s.value.as_deref().unwrap_or("-")
        ));
        out.push_str(&format!("    values: {}\n", s.values));
        if !s.reason.is_empty() {
            out.push_str(&format!(
                "    {}: {}\n",
                if s.available { "note" } else { "why" },
                s.reason
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_values_and_says_why_not() {
        let statuses = [
            KnobStatus {
                name: "bus-width".into(),
                available: true,
                value: Some("8".into()),
                values: "1, 4, 8".into(),
                reason: "host came up with 8 bits".into(),
            },
            KnobStatus {
                name: "cache".into(),
                available: false,
                value: None,
                values: "on, off".into(),
                reason: "no cache".into(),
            },
        ];
        assert_eq!(
            knobs_table(&statuses),
            "knob       available  value\n\
             bus-width  yes        8\n    values: 1, 4, 8\n    note: host came up with 8 bits\n\
             cache      no         -\n    values: on, off\n    why: no cache\n"
        );
    }
}
