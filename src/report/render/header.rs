//! The words of a report's header ([`crate::report::model::header`]): its title, its
//! `Key: value` lines, in the order every output writes them, and the charts' caption.

use crate::report::model::header::{
    CalibrationUsed, Caption, Count, Header, HostEntry, Kernel, MadeBy, Named, Runs, Title,
};
use crate::report::model::{RecordedHost, Report};

/// The first line of the mail text (and report.md's heading).
pub fn title(t: &Title) -> String {
    match t {
        Title::Results { plan } => format!("mmcab report: {plan}"),
        Title::Compare { plan } => format!("mmcab compare: {plan}"),
        Title::Published => "Published numbers as an mmcab report (single values, n = 1)".into(),
        Title::Probe { kind, target } => format!("mmcab probe {}: {target}", kind.as_str()),
        Title::PublishedProbe { kind } => {
            format!("Published flashbench output ({})", kind.as_str())
        }
    }
}

/// `mmc0, driver emmcsim (module emmcsim 1.0)`.
pub fn host_text(h: &RecordedHost) -> String {
    format!("{}, driver {}", h.host, h.driver.summary())
}

fn host_entry(e: &HostEntry) -> String {
    match e {
        HostEntry::Recorded(h) => host_text(h),
        HostEntry::SameBut(changed) => {
            let changed: Vec<String> = changed.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("the same but {}", changed.join(", "))
        }
    }
}

/// `6.12.0 (label x)`, or the releases of a side joined.
fn kernel_text(k: &Kernel) -> String {
    let releases = k.releases.join(", ");
    if k.label.is_empty() {
        releases
    } else {
        format!("{releases} (label {})", k.label)
    }
}

/// `n = 5`, `n = 3..5`, `2+3 boots x 5 runs`.
pub fn count_text(n: &Count) -> String {
    match n {
        Count::Runs { min, max } if min == max => format!("n = {min}"),
        Count::Runs { min, max } => format!("n = {min}..{max}"),
        Count::Boots {
            per_side,
            min_runs,
            max_runs,
        } => {
            let counts: Vec<String> = per_side.iter().map(usize::to_string).collect();
            let per_boot = if min_runs == max_runs {
                format!("{min_runs}")
            } else {
                format!("{min_runs}..{max_runs}")
            };
            format!("{} boots x {per_boot} runs", counts.join("+"))
        }
    }
}

fn runs_text(r: &Runs) -> String {
    match r {
        Runs::Configs {
            configs,
            workloads,
            n,
            warmup,
            order,
        } => format!(
            "{configs} configs x {workloads} workloads, {} per config ({warmup} warm-up \
             dropped), order {order}",
            count_text(n)
        ),
        Runs::Sides {
            sides,
            workloads,
            n,
        } => format!(
            "{sides} sides x {workloads} workloads, {} (warm-ups dropped)",
            count_text(n)
        ),
    }
}

/// `mmcab 0.2.0: mmcab run --device /dev/mmcblk0 plan.toml` (each argument quoted for a
/// shell where it needs it), `mmcab 0.1.0 (command line not recorded)`.
fn made_by_text(m: &MadeBy) -> String {
    // A version number is mmcab's; anything else names its maker (results written by a
    // stand-in, tests/fixtures/make-loop-results.py).
    let by = match m.version.starts_with(|c: char| c.is_ascii_digit()) {
        true => format!("mmcab {}", m.version),
        false => m.version.clone(),
    };
    match &m.command_line {
        Some(args) => {
            let args: Vec<String> = args.iter().map(|a| crate::knob::shell_quote(a)).collect();
            format!("{by}: {}", args.join(" "))
        }
        None => format!("{by} (command line not recorded)"),
    }
}

/// One line for a report header.
pub fn calibration_text(c: &CalibrationUsed) -> String {
    format!(
        "{} ({} A/A boots, Linux {}): the boot-to-boot spread of sides of one boot",
        c.path.display(),
        c.boots,
        c.kernels.join(", ")
    )
}

/// The key and value of a value for the whole report or one per side (`Devices`),
/// each side's as `side = value`, joined by `sep`.
fn named<T>(
    n: &Named<T>,
    one: &'static str,
    each: &'static str,
    sep: &str,
    text: impl Fn(&T) -> String,
) -> (&'static str, String) {
    match n {
        Named::One(v) => (one, text(v)),
        Named::Each(vs) => {
            let vs: Vec<String> = vs
                .iter()
                .map(|(name, v)| format!("{name} = {}", text(v)))
                .collect();
            (each, vs.join(sep))
        }
    }
}

/// (key, value) of every line, in the order the outputs write them.
pub fn lines(h: &Header) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    if let Some(s) = &h.sources {
        out.push(("Source", s.join("; ")));
    }
    if let Some(p) = &h.posted {
        out.push(("Posted", p.join(", ")));
    }
    if let Some(d) = &h.device {
        out.push(named(d, "Device", "Devices", "; ", String::clone));
    }
    out.extend(h.conditions.iter().map(|c| ("Conditions", c.clone())));
    if let Some(n) = h.numbers {
        out.push(("Numbers", format!("{n} published values, n = 1 each")));
    }
    if let Some(k) = &h.kernel {
        out.push(named(k, "Kernel", "Kernels", "; ", kernel_text));
    }
    if let Some(host) = &h.host {
        out.push(named(host, "Host", "Hosts", "; ", host_entry));
    }
    if let Some(p) = &h.plan {
        let sha = &p.sha256[..p.sha256.len().min(12)];
        out.push(("Plan", format!("{}, sha256 {sha}", p.name)));
    }
    if let Some(m) = &h.made_by {
        out.push(named(m, "Made by", "Made by", "; ", made_by_text));
    }
    if let Some(r) = &h.runs {
        out.push(("Runs", runs_text(r)));
    }
    if let Some(side) = &h.pairs {
        out.push(("Pairs", format!("each config vs the same config of {side}")));
    }
    if let Some(boots) = &h.boots {
        let listed: Vec<String> = boots
            .iter()
            .map(|(name, dirs)| format!("{name} = {}", dirs.join(", ")))
            .collect();
        out.push(("Boots", listed.join("; ")));
    }
    if let Some(c) = &h.calibration {
        out.push(("Calibration", calibration_text(c)));
    }
    if let Some(s) = &h.cited {
        out.push(("Source", s.clone()));
    }
    out
}

/// One line for chart captions: device, kernel, n (empty when the report has none).
pub fn caption(report: &Report) -> String {
    match &report.caption {
        None => String::new(),
        Some(Caption::Measured { device, kernel, n }) => format!(
            "{device} | Linux {} | {}",
            named(kernel, "", "", ", ", kernel_text).1,
            count_text(n)
        ),
        Some(Caption::Published { devices, dates }) => {
            let device = match devices.as_slice() {
                // The model, without the CID details in parentheses (they are in the header).
                [one] => one.split(" (").next().unwrap_or(one).to_string(),
                _ => format!("{} devices", devices.len()),
            };
            format!(
                "{device} | as published {} | n = 1 (single published values)",
                dates.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_the_order_and_words_of_the_outputs() {
        let kernel = |r: &str| Kernel {
            releases: vec![r.into()],
            label: String::new(),
        };
        let h = Header {
            device: Some(Named::Each(vec![
                ("a".into(), "x".into()),
                ("b".into(), "y".into()),
            ])),
            kernel: Some(Named::One(Kernel {
                releases: vec!["6.12".into()],
                label: "l".into(),
            })),
            host: Some(Named::Each(vec![(
                "a".into(),
                HostEntry::SameBut(vec![("p".into(), "1".into())]),
            )])),
            runs: Some(Runs::Sides {
                sides: 2,
                workloads: 3,
                n: Count::Boots {
                    per_side: vec![2, 3],
                    min_runs: 4,
                    max_runs: 5,
                },
            }),
            pairs: Some("base".into()),
            ..Default::default()
        };
        let lines = lines(&h);
        let keys: Vec<&str> = lines.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["Devices", "Kernel", "Hosts", "Runs", "Pairs"]);
        assert_eq!(lines[0].1, "a = x; b = y");
        assert_eq!(lines[1].1, "6.12 (label l)");
        assert_eq!(lines[2].1, "a = the same but p=1");
        assert_eq!(
            lines[3].1,
            "2 sides x 3 workloads, 2+3 boots x 4..5 runs (warm-ups dropped)"
        );
        assert_eq!(lines[4].1, "each config vs the same config of base");
        let each = Named::Each(vec![("a".into(), kernel("1")), ("b".into(), kernel("2"))]);
        assert_eq!(named(&each, "", "", ", ", kernel_text).1, "a = 1, b = 2");
        assert_eq!(count_text(&Count::Runs { min: 5, max: 5 }), "n = 5");
    }

    #[test]
    fn made_by_names_the_version_and_the_command_line_quoted_for_a_shell() {
        let made = |version: &str, args: Option<&[&str]>| MadeBy {
            version: version.into(),
            command_line: args.map(|a| a.iter().map(|s| s.to_string()).collect()),
        };
        let run = ["mmcab", "run", "my plan.toml", "--device", "/dev/mmcblk0"];
        assert_eq!(
            made_by_text(&made("0.2.0", Some(&run))),
            "mmcab 0.2.0: mmcab run 'my plan.toml' --device /dev/mmcblk0"
        );
        assert_eq!(
            made_by_text(&made("0.1.0", None)),
            "mmcab 0.1.0 (command line not recorded)"
        );
        assert_eq!(
            made_by_text(&made("fio-stand-in (fio-3.33)", None)),
            "fio-stand-in (fio-3.33) (command line not recorded)"
        );
        let h = Header {
            made_by: Some(Named::Each(vec![
                ("a".into(), made("0.2.0", Some(&run[..2]))),
                ("b".into(), made("0.1.0", None)),
            ])),
            ..Default::default()
        };
        assert_eq!(
            lines(&h),
            [(
                "Made by",
                "a = mmcab 0.2.0: mmcab run; b = mmcab 0.1.0 (command line not recorded)".into()
            )]
        );
    }
}
