//! The MMC host's driver in a comparison: sides that ran other drivers or other module
//! parameters are compared all the same (that is what an A/B of a driver patch or of a
//! driver's parameter is): the header names each side's host (`Hosts:`) and the
//! differences are warnings.

use super::sides::{labels, Sides};
use crate::device::info::HostDriver;
use crate::report::load::host::recorded;
use crate::report::model::header::HostEntry;
use crate::report::model::header::Named;
use crate::report::model::{RecordedHost, Report};
use crate::report::render::header::host_text;

/// The directories of `sides` grouped by the host and driver they recorded (those
/// without a record left out), each group named by the sides it holds whole or else
/// by its directories' labels.
fn groups(sides: &Sides) -> Vec<(Vec<usize>, RecordedHost)> {
    let mut out: Vec<(Vec<usize>, RecordedHost)> = Vec::new();
    for (i, d) in sides.dirs.iter().enumerate() {
        let Some(h) = recorded(d) else { continue };
        match out.iter_mut().find(|(_, g)| *g == h) {
            Some((members, _)) => members.push(i),
            None => out.push((vec![i], h)),
        }
    }
    let dir_labels = labels(&sides.dirs);
    for (members, h) in &mut out {
        let mut names: Vec<String> = Vec::new();
        for &i in members.iter() {
            let side = sides.side_of[i];
            let whole = (0..sides.dirs.len())
                .filter(|j| sides.side_of[*j] == side)
                .all(|j| members.contains(&j));
            let name = if whole {
                sides.names[side].clone()
            } else {
                dir_labels[i].clone()
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        h.by = names;
    }
    out
}

fn or_none(v: Option<&String>) -> String {
    v.cloned().unwrap_or_else(|| "(none)".into())
}

/// What differs from `a` to `b` besides the words of [`host_text`]: (what, a's, b's)
/// for the host device, srcversion and each module parameter.
fn details(a: &RecordedHost, b: &RecordedHost) -> Vec<(String, String, String)> {
    let (x, y): (&HostDriver, &HostDriver) = (&a.driver, &b.driver);
    let mut out = Vec::new();
    if x.device != y.device {
        out.push(("device".into(), x.device.clone(), y.device.clone()));
    }
    if x.srcversion != y.srcversion {
        out.push((
            "srcversion".into(),
            or_none(x.srcversion.as_ref()),
            or_none(y.srcversion.as_ref()),
        ));
    }
    let names = x.parameters.keys().chain(
        y.parameters
            .keys()
            .filter(|k| !x.parameters.contains_key(*k)),
    );
    for name in names {
        let (p, q) = (x.parameters.get(name), y.parameters.get(name));
        if p != q {
            out.push((name.clone(), or_none(p), or_none(q)));
        }
    }
    out
}

/// A comparison: one `Host` line when every directory that recorded its host driver
/// recorded the same (and all did), else `Hosts` with each group's; every group's
/// driver goes to report.json and report.md.
pub fn describe_sides(report: &mut Report, sides: &Sides) {
    let groups = groups(sides);
    let recorded: usize = groups.iter().map(|(m, _)| m.len()).sum();
    let entry = match groups.as_slice() {
        [] => None,
        [(_, h)] if recorded == sides.dirs.len() => {
            Some(Named::One(HostEntry::Recorded(h.clone())))
        }
        [(_, first), ..] => {
            let each: Vec<(String, HostEntry)> = groups
                .iter()
                .enumerate()
                .map(|(i, (_, h))| {
                    let what = if i > 0 && host_text(h) == host_text(first) {
                        let changed = details(first, h)
                            .into_iter()
                            .map(|(k, _, v)| (k, v))
                            .collect();
                        HostEntry::SameBut(changed)
                    } else {
                        HostEntry::Recorded(h.clone())
                    };
                    (h.by.join(", "), what)
                })
                .collect();
            Some(Named::Each(each))
        }
    };
    report.header.host = entry;
    report.hosts = groups.into_iter().map(|(_, h)| h).collect();
}

/// One warning per group that recorded another host driver, or other module
/// parameters, than the first (directories without a record take no part).
pub fn warnings(sides: &Sides) -> Vec<String> {
    let groups = groups(sides);
    let Some((_, first)) = groups.first() else {
        return Vec::new();
    };
    let (a, a_text) = (first.by.join(", "), host_text(first));
    let mut out = Vec::new();
    for (_, h) in &groups[1..] {
        let b = h.by.join(", ");
        let text = host_text(h);
        if text != a_text {
            out.push(format!(
                "host driver differs: {a} has '{a_text}', {b} has '{text}' (compared all the same)"
            ));
        }
        let listed: Vec<String> = details(first, h)
            .into_iter()
            .map(|(k, x, y)| format!("{k} {x} -> {y}"))
            .collect();
        if !listed.is_empty() {
            out.push(format!(
                "host driver module parameters differ from {a} to {b}: {} (compared all the same)",
                listed.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceInfo;
    use crate::record::Meta;
    use crate::report::load::dir::ResultsDir;
    use crate::report::load::host::describe_dir;
    use crate::report::model::header::{Header, Kernel, PlanId};
    use crate::report::render::markdown::host_parameters as markdown;

    fn driver(version: &str, params: &[(&str, &str)]) -> HostDriver {
        HostDriver {
            builtin: false,
            device: "simhost.0".into(),
            driver: "simhost".into(),
            module: Some("simhost".into()),
            parameters: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            srcversion: None,
            version: Some(version.into()),
        }
    }

    fn dir(label: &str, hd: Option<HostDriver>) -> ResultsDir {
        let json = crate::device::capture::fixture("info-v0.1-linux6-bus4.json");
        let mut device: DeviceInfo = serde_json::from_str(&json).unwrap();
        device.host_driver = hd;
        let meta = Meta {
            label: label.into(),
            device: Some(device),
            ..Default::default()
        };
        ResultsDir::for_tests(label, meta, Vec::new())
    }

    fn header(report: &Report) -> Vec<String> {
        crate::report::render::header::lines(&report.header)
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect()
    }

    /// A report's header as results.rs starts it; no blocks.
    fn report() -> Report {
        Report {
            header: Header {
                device: Some(Named::One("d".into())),
                kernel: Some(Named::One(Kernel {
                    releases: vec!["k".into()],
                    label: String::new(),
                })),
                plan: Some(PlanId {
                    name: "p".into(),
                    sha256: "0123456789abcdef".into(),
                }),
                ..Header::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn one_dir_names_its_host_after_the_kernel() {
        let mut r = report();
        describe_dir(&mut r, &dir("a", None));
        assert!(r.hosts.is_empty());
        assert_eq!(
            header(&r),
            ["Device: d", "Kernel: k", "Plan: p, sha256 0123456789ab"]
        );
        describe_dir(&mut r, &dir("a", Some(driver("1.0", &[("seed", "1")]))));
        assert_eq!(
            header(&r),
            [
                "Device: d",
                "Kernel: k",
                "Host: mmc0, driver simhost (module simhost 1.0)",
                "Plan: p, sha256 0123456789ab"
            ]
        );
        let mut md = String::new();
        markdown(&mut md, &r);
        assert_eq!(
            md,
            "- **Host driver parameters** (simhost, module simhost 1.0):\n  - `seed` = 1\n"
        );
    }

    #[test]
    fn sides_with_other_parameters_are_named_and_warned_about() {
        let a = dir(
            "base",
            Some(driver("1.0", &[("cmd_ns", "500"), ("seed", "1")])),
        );
        let b = dir(
            "new",
            Some(driver("1.0", &[("cmd_ns", "900"), ("seed", "1")])),
        );
        let sides = Sides::each_dir(vec![a.clone(), b]);
        let mut r = report();
        describe_sides(&mut r, &sides);
        assert_eq!(
            header(&r)[2],
            "Hosts: base = mmc0, driver simhost (module simhost 1.0); new = the same but cmd_ns=900"
        );
        assert_eq!(r.hosts.len(), 2);
        assert_eq!(
            warnings(&sides),
            [
                "host driver module parameters differ from base to new: cmd_ns 500 -> 900 \
              (compared all the same)"
            ]
        );
        // Another driver version and a parameter only one side has.
        let c = dir("v2", Some(driver("2.0", &[("seed", "1"), ("x", "y")])));
        let w = warnings(&Sides::each_dir(vec![a.clone(), c]));
        assert_eq!(
            w,
            [
                "host driver differs: base has 'mmc0, driver simhost (module simhost 1.0)', \
                 v2 has 'mmc0, driver simhost (module simhost 2.0)' (compared all the same)",
                "host driver module parameters differ from base to v2: cmd_ns 500 -> (none), \
                 x (none) -> y (compared all the same)"
            ]
        );
        // The same everywhere: one line, no warning.
        let same = Sides::each_dir(vec![
            a.clone(),
            dir("again", a.meta.device.clone().unwrap().host_driver),
        ]);
        let mut r = report();
        describe_sides(&mut r, &same);
        assert_eq!(
            header(&r)[2],
            "Host: mmc0, driver simhost (module simhost 1.0)"
        );
        assert!(warnings(&same).is_empty());
        // Recorded by one side only: named, never a warning.
        let old = Sides::each_dir(vec![dir("old", None), a]);
        let mut r = report();
        describe_sides(&mut r, &old);
        assert_eq!(
            header(&r)[2],
            "Hosts: base = mmc0, driver simhost (module simhost 1.0)"
        );
        assert!(warnings(&old).is_empty());
        // Recorded by none: no line.
        let none = Sides::each_dir(vec![dir("x", None), dir("y", None)]);
        let mut r = report();
        describe_sides(&mut r, &none);
        assert_eq!(
            header(&r),
            ["Device: d", "Kernel: k", "Plan: p, sha256 0123456789ab"]
        );
    }
}
