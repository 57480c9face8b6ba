//! The words of what was run ([`crate::report::model::Setup`]): titled lists of lines
//! after the header, the configs with their bus settings and the workloads with their
//! parameters.

use crate::device::Ios;
use crate::report::model::{Bus, ConfigSetup, Setup};
use serde::Serialize;

/// A titled list of lines (report.json writes them as they are).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetupSection {
    pub title: String,
    pub lines: Vec<String>,
}

fn hz(v: u64) -> String {
    let mhz = v as f64 / 1e6;
    let text = format!("{mhz:.3}");
    format!("{} MHz", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `8-bit, mmc high-speed, 52 MHz` (and the actual clock when the host reports another).
pub fn bus_text(ios: &Ios) -> String {
    let mut t = format!(
        "{}-bit, {}, {}",
        ios.bus_width_bits,
        ios.timing,
        hz(ios.clock_hz)
    );
    if let Some(actual) = ios.actual_clock_hz.filter(|a| *a != ios.clock_hz) {
        t.push_str(&format!(" (actual {})", hz(actual)));
    }
    t
}

/// `bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz`.
fn config_line(c: &ConfigSetup) -> String {
    let knobs = if c.knobs.is_empty() {
        "the device as found".to_string()
    } else {
        let knobs: Vec<String> = c.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        knobs.join(" ")
    };
    let bus = match &c.bus {
        Bus::Ios(ios) => bus_text(ios),
        Bus::NotMmc => "no bus settings (the target is not an MMC card)".into(),
        Bus::NotRecorded => "bus settings not recorded".into(),
    };
    format!("{}: {knobs}; {bus}", c.name)
}

/// The sections of `setup`, in the order the outputs write them (none without one).
pub fn sections(setup: Option<&Setup>) -> Vec<SetupSection> {
    let Some(s) = setup else {
        return Vec::new();
    };
    let workloads = if s.scale_down > 1 {
        format!(
            "Workloads (fio's words; sizes after --scale-down {}):",
            s.scale_down
        )
    } else {
        "Workloads (fio's words):".to_string()
    };
    vec![
        SetupSection {
            title: "Configs (bus width, timing, clock from ios before the first run):".into(),
            lines: s.configs.iter().map(config_line).collect(),
        },
        SetupSection {
            title: workloads,
            lines: s.workloads.clone().unwrap_or_else(|| {
                vec!["parameters not recorded: meta.json's plan_text is not a plan".into()]
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_and_clocks_in_words() {
        assert_eq!(hz(52_000_000), "52 MHz");
        assert_eq!(hz(25_500_000), "25.5 MHz");
        let config = |knobs: Vec<(String, String)>, bus| ConfigSetup {
            name: "c".into(),
            knobs,
            bus,
        };
        assert_eq!(
            config_line(&config(Vec::new(), Bus::NotMmc)),
            "c: the device as found; no bus settings (the target is not an MMC card)"
        );
        let knobs = vec![("a".into(), "1".into()), ("b".into(), "2".into())];
        assert_eq!(
            config_line(&config(knobs, Bus::NotRecorded)),
            "c: a=1 b=2; bus settings not recorded"
        );
        let setup = Setup {
            configs: Vec::new(),
            scale_down: 16,
            workloads: None,
        };
        let s = sections(Some(&setup));
        assert_eq!(
            s[1].title,
            "Workloads (fio's words; sizes after --scale-down 16):"
        );
        assert_eq!(
            s[1].lines,
            ["parameters not recorded: meta.json's plan_text is not a plan"]
        );
        assert!(sections(None).is_empty());
    }
}
