//! The "Kernel features" block of `mmcab info` and `mmcab knobs`: where the kernel's
//! config came from (or that there was none), then one line per thing missing, naming
//! the feature, what it costs and the fix ([`crate::device::kconfig`]); last, whether the
//! kernel's mmc_test driver is there ([`crate::device::mmc_test`]).

use crate::device::kconfig::KernelFeatures;
use crate::device::mmc_test::{MmcTest, BUILD_FIX};

/// The block, starting with a blank line.
pub fn text(k: &KernelFeatures) -> String {
    let source = match (&k.config, &k.config_error) {
        (Some(path), _) => format!("options from {}", path.display()),
        (None, Some(error)) => error.clone(),
        (None, None) => "no kernel config".to_string(),
    };
    let mut out = format!("\nKernel features ({source})\n");
    match (k.lockdown, &k.lockdown_note) {
        (Some(level), None) => out.push_str(&format!("  lockdown: {}\n", level.as_str())),
        (Some(level), Some(note)) => {
            out.push_str(&format!("  lockdown: {} ({note})\n", level.as_str()))
        }
        (None, Some(note)) => out.push_str(&format!("  lockdown: {note}\n")),
        (None, None) => {}
    }
    let mut any = false;
    for (feature, missing) in k.missing() {
        any = true;
        out.push_str(&format!(
            "  missing {}: {}; costs {}; fix: {}\n",
            feature.feature, missing.what, feature.needed_by, missing.fix
        ));
    }
    if !any {
        let names: Vec<&str> = k.features.iter().map(|f| f.feature.as_str()).collect();
        out.push_str(&format!("  all there: {}\n", names.join(", ")));
    }
    out.push_str(&mmc_test_line(&k.mmc_test));
    out
}

/// mmc_test's line: available and how, or what is there and the fix.
fn mmc_test_line(m: &MmcTest) -> String {
    if m.available {
        return format!("  mmc_test available: {} ({})\n", m.state.as_str(), m.what);
    }
    format!(
        "  mmc_test {}: {}; costs the kernel's own mmc_test measurement (its performance \
         tests, beside the block layer's); fix: {}\n",
        m.state.as_str(),
        m.what,
        m.fix.as_deref().unwrap_or(BUILD_FIX)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::kconfig::{FeatureStatus, Lockdown, Missing};
    use crate::device::mmc_test::State;

    fn absent() -> MmcTest {
        MmcTest {
            available: false,
            fix: Some("build it".into()),
            state: State::Absent,
            what: "no /sys/bus/mmc/drivers/mmc_test".into(),
        }
    }

    fn feature(name: &str, missing: Vec<Missing>) -> FeatureStatus {
        FeatureStatus {
            available: missing.is_empty(),
            feature: name.to_string(),
            missing,
            needed_by: format!("what {name} does"),
            options: vec![],
        }
    }

    #[test]
    fn one_line_per_missing_thing_with_feature_cost_and_fix() {
        let k = KernelFeatures {
            config: None,
            config_error: Some("no kernel config: neither A nor B".into()),
            features: vec![
                feature("debugfs", vec![]),
                feature(
                    "io_uring",
                    vec![Missing {
                        what: "kernel.io_uring_disabled is 2".into(),
                        fix: "sysctl -w kernel.io_uring_disabled=0".into(),
                    }],
                ),
            ],
            lockdown: Some(Lockdown::None),
            lockdown_note: None,
            mmc_test: absent(),
        };
        assert_eq!(
            text(&k),
            "\nKernel features (no kernel config: neither A nor B)\n  lockdown: none\n  \
             missing io_uring: kernel.io_uring_disabled is 2; costs what io_uring does; fix: \
             sysctl -w kernel.io_uring_disabled=0\n  mmc_test absent: no \
             /sys/bus/mmc/drivers/mmc_test; costs the kernel's own mmc_test measurement (its \
             performance tests, beside the block layer's); fix: build it\n"
        );
    }

    #[test]
    fn nothing_missing_is_one_line() {
        let k = KernelFeatures {
            config: Some("/proc/config.gz".into()),
            config_error: None,
            features: vec![feature("debugfs", vec![]), feature("io_uring", vec![])],
            lockdown: None,
            lockdown_note: Some("not known".into()),
            mmc_test: MmcTest {
                available: true,
                fix: None,
                state: State::Loaded,
                what: "/sys/bus/mmc/drivers/mmc_test".into(),
            },
        };
        assert_eq!(
            text(&k),
            "\nKernel features (options from /proc/config.gz)\n  lockdown: not known\n  \
             all there: debugfs, io_uring\n  mmc_test available: module loaded \
             (/sys/bus/mmc/drivers/mmc_test)\n"
        );
    }
}
