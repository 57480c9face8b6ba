//! The knobs of a session: which ones its configs use, what each config wants of them
//! (checked for every value before any I/O), and bringing them in place before a run,
//! with the host's requests traced meanwhile ([`switch_to`]: the tuning a
//! re-initialisation did) and its error counters read around it.

use super::device_state::Observer;
use super::reopen::TargetSlot;
use super::session::Session;
use crate::device::Ios;
use crate::evidence::tuning::SwitchTrace;
use crate::evidence::Collector;
use crate::knob::guard::KnobGuard;
use crate::knob::{Knob, KnobName, Setting, Settings, Verified};
use crate::plan::config::ConfigSpec;
use crate::plan::knob::KnobKind;
use anyhow::{Context, Result};

/// Built-in knobs, `expect.*` or an `ext_csd` knob need the target to be an MMC card.
pub fn needs_mmc(session: &Session) -> bool {
    session.configs.iter().any(|c| {
        !c.expect.is_empty()
            || c.knobs
                .keys()
                .any(|k| crate::knob::builtin::find(k).is_some())
    }) || session
        .plan
        .knob
        .iter()
        .any(|k| k.kind() == KnobKind::ExtCsd)
}

/// The knobs the selected configs use, and per config (in session order) the
/// normalized value of each knob it sets.
pub struct KnobPlan {
    pub knobs: Vec<Box<dyn Knob>>,
    pub wanted: Vec<Settings>,
}

/// Resolve every knob the configs use and check every value they ask for, touching
/// nothing; also checks that each config's expectations can be observed.
pub fn plan(session: &Session, observer: &Observer, force: bool) -> Result<KnobPlan> {
    let mut used: Vec<&String> = Vec::new();
    for config in &session.configs {
        for name in config.knobs.keys() {
            if !used.contains(&name) {
                used.push(name);
            }
        }
    }
    let mut knobs = used
        .into_iter()
        .map(|name| observer.knob(name, &session.plan.knob, force))
        .collect::<Result<Vec<_>>>()?;
    // The knobs that re-initialise the card first (crate::knob::Stage).
    knobs.sort_by_key(|k| k.stage());
    adopt_originals(session, &mut knobs)?;
    let mut wanted = Vec::new();
    for config in &session.configs {
        let mut settings = Settings::default();
        for (name, value) in config.knob_values()? {
            let knob = knobs
                .iter()
                .find(|k| k.name() == name)
                .expect("every knob a config sets was resolved above");
            let value = knob
                .normalize(&value)
                .with_context(|| format!("config {}", config.name))?;
            knob.check(&value, force)
                .with_context(|| format!("config {}", config.name))?;
            settings.set(Setting {
                knob: KnobName::new(name),
                value,
            });
        }
        for knob in &knobs {
            if let Some(value) = settings.get(knob.name()) {
                knob.check_together(value, &settings, force)
                    .with_context(|| format!("config {}", config.name))?;
            }
        }
        wanted.push(settings);
        observer.check_expect_possible(config)?;
    }
    Ok(KnobPlan { knobs, wanted })
}

/// A knob's apply and the target's reopen after it: a failed reopen does not hide why
/// the apply failed (often the reason the disk did not come back).
fn both(applied: Result<()>, reopened: Result<()>) -> Result<()> {
    match (applied, reopened) {
        (Err(applied), Err(reopened)) => Err(applied.context(format!("{reopened:#}; before that"))),
        (applied, reopened) => applied.and(reopened),
    }
}

/// A resumed run restores to what the knobs were before its first start (recorded in
/// meta.json), not to what an interrupted run left; adopted before the values are
/// checked, since some checks go by the original (the host's bus width).
fn adopt_originals(session: &Session, knobs: &mut [Box<dyn Knob>]) -> Result<()> {
    let Some(recorded) = session
        .resumed
        .as_ref()
        .and_then(|(_, meta)| meta.knob_originals.as_ref())
    else {
        return Ok(());
    };
    for knob in knobs {
        if let Some(saved) = recorded.get(knob.name()) {
            let name = knob.name().to_string();
            knob.adopt(saved).with_context(|| {
                format!("knob {name}: its value before the first start, from meta.json")
            })?;
        }
    }
    Ok(())
}

/// What putting a config in place did: every knob verified, which were applied, the
/// bus afterwards and what the host did meanwhile.
#[derive(Debug, Default)]
pub struct Switch {
    pub verified: Verified,
    /// The knobs that differed and were applied, in order.
    pub applied: Vec<KnobName>,
    /// debugfs `ios` once the knobs were verified and the expectations checked (read
    /// when asked for, or when a knob was applied; None when not read or unreadable).
    pub ios: Option<Ios>,
    /// The host's requests during the switch, or why there is no trace; None when the
    /// session has no knobs (nothing was traced).
    pub trace: Option<std::result::Result<SwitchTrace, String>>,
    /// The host's `err_stats` counters that counted up during the switch.
    pub err_stats: Option<std::result::Result<Vec<(String, u64)>, String>>,
}

/// Whether checking `config`'s expectations reads debugfs `ios` (bus width, clock,
/// timing): then the bus it ran at is read again before each of its runs.
pub fn expect_reads_ios(config: &ConfigSpec) -> bool {
    let e = &config.expect;
    e.bus_width.is_some() || e.clock_hz.is_some() || e.timing.is_some()
}

/// Put `config` in place ([`put_in_place`]) and check its expectations, with the host's
/// requests traced and its error counters read around both; then read `ios` (inside the
/// trace: waking the card re-initialises it too) when `read_ios` or a knob was applied.
pub fn switch_to(
    guard: &mut KnobGuard,
    wanted: &Settings,
    target: &mut TargetSlot,
    observer: &Observer,
    config: &ConfigSpec,
    evidence: &Collector,
    read_ios: bool,
) -> Result<Switch> {
    let traced = !guard.names().is_empty();
    let before = traced.then(|| evidence.err_stats_now()).flatten();
    let mut switch = || -> Result<Switch> {
        let (verified, applied) = put_in_place(guard, wanted, target)?;
        observer.check_expect(config)?;
        let ios = (read_ios || !applied.is_empty())
            .then(|| observer.ios())
            .flatten();
        Ok(Switch {
            verified,
            applied,
            ios,
            ..Switch::default()
        })
    };
    if !traced {
        return switch();
    }
    let (done, trace) = evidence.trace_switch(switch);
    let mut done = done?;
    done.trace = Some(trace);
    done.err_stats = before.map(|b| evidence.err_stats_since(b));
    Ok(done)
}

/// Bring every knob to what this config wants (knobs the config leaves out go back to
/// their snapshot), applying only those that differ, then verify all of them. Returns
/// every knob verified, with its value, and the ones applied. The target is closed
/// while a knob rebinds the block driver and opened again (re-checked) right after.
pub fn put_in_place(
    guard: &mut KnobGuard,
    wanted: &Settings,
    target: &mut TargetSlot,
) -> Result<(Verified, Vec<KnobName>)> {
    let mut verified = Verified::default();
    let mut applied = Vec::new();
    // The knobs verified before the last re-initialisation of the card are verified
    // again after it: the config's state is the one after every apply.
    let mut verified_before_reinit = 0;
    for knob in guard.knobs_mut() {
        let name = KnobName::new(knob.name());
        let want = match wanted.get(name.as_str()) {
            Some(v) => v.clone(),
            None => match knob.left_out()? {
                Some(v) => v,
                None => continue,
            },
        };
        if knob.read()? != want.as_str() {
            let rebinds = knob.rebinds_block_device();
            if rebinds {
                target.close();
            }
            let applied_now = knob
                .apply(&want)
                .with_context(|| format!("applying {name} = {want}"));
            let reopened = match rebinds {
                true => target.reopen(),
                false => Ok(()),
            };
            both(applied_now, reopened)?;
            applied.push(name.clone());
            if knob.stage() != crate::knob::Stage::AfterInit {
                verified_before_reinit = verified.iter().count();
            }
        }
        knob.verify(&want).with_context(|| {
            format!("verifying {name} = {want} (mislabelled data is worse than none: stopping)")
        })?;
        verified.push(Setting {
            knob: name,
            value: want,
        });
    }
    let again: Vec<&Setting> = verified.iter().take(verified_before_reinit).collect();
    for knob in guard.knobs_mut() {
        if let Some(setting) = again.iter().find(|s| s.knob.as_str() == knob.name()) {
            knob.verify(&setting.value).with_context(|| {
                format!(
                    "verifying {} = {} again after a later knob re-initialised the card",
                    setting.knob, setting.value
                )
            })?;
        }
    }
    Ok((verified, applied))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::attribute::AttributeKnob;

    /// A sysfs-like file knob `name` holding `value`.
    fn file_knob(dir: &std::path::Path, name: &str, value: &str) -> AttributeKnob {
        let path = dir.join(name);
        std::fs::write(&path, format!("{value}\n")).unwrap();
        AttributeKnob::new(name, &path, Vec::new())
    }

    fn content(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name))
            .unwrap()
            .trim()
            .to_string()
    }

    /// A 64 KiB regular file in `dir` as the run's target.
    fn disk_slot(dir: &std::path::Path) -> TargetSlot {
        let disk = dir.join("disk");
        std::fs::write(&disk, vec![0u8; 1 << 16]).unwrap();
        TargetSlot::new(
            crate::workload::Target::open(&disk, false).unwrap(),
            crate::workload::CardCache::default(),
        )
    }

    #[test]
    fn the_settings_are_put_in_place_and_the_rest_goes_back_to_its_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut target = disk_slot(dir.path());
        let a = file_knob(dir.path(), "a", "1");
        let b = file_knob(dir.path(), "b", "x");
        let mut wants_a = Settings::default();
        wants_a.set(Setting {
            knob: "a".into(),
            value: a.normalize(" 2 ").unwrap(),
        });
        let mut guard = KnobGuard::new(vec![Box::new(a), Box::new(b)], Box::new(|_| ()));
        guard.snapshot_all().unwrap();

        let (verified, applied) = put_in_place(&mut guard, &wants_a, &mut target).unwrap();
        assert_eq!(verified.to_string(), "a=2 b=x");
        assert_eq!(applied, [KnobName::new("a")]);
        assert_eq!(content(dir.path(), "a"), "2");

        // Something else changed b: a config that leaves both out puts both back.
        std::fs::write(dir.path().join("b"), "y\n").unwrap();
        let (verified, applied) =
            put_in_place(&mut guard, &Settings::default(), &mut target).unwrap();
        assert_eq!(verified.to_string(), "a=1 b=x");
        assert_eq!(applied, [KnobName::new("a"), KnobName::new("b")]);
        // Nothing differs: nothing is applied.
        let (_, applied) = put_in_place(&mut guard, &Settings::default(), &mut target).unwrap();
        assert!(applied.is_empty());
        assert_eq!(
            (content(dir.path(), "a"), content(dir.path(), "b")),
            ("1".into(), "x".into())
        );
    }

    #[test]
    fn a_failed_reopen_does_not_hide_the_failed_apply() {
        let apply = || Err(anyhow::anyhow!("EIO").context("applying cmd23 = off"));
        let reopen = || Err(anyhow::anyhow!("/dev/mmcblk0 did not come back"));
        let text = format!("{:#}", both(apply(), reopen()).unwrap_err());
        assert_eq!(
            text,
            "/dev/mmcblk0 did not come back; before that: applying cmd23 = off: EIO"
        );
        let text = format!("{:#}", both(apply(), Ok(())).unwrap_err());
        assert_eq!(text, "applying cmd23 = off: EIO");
        let text = format!("{:#}", both(Ok(()), reopen()).unwrap_err());
        assert_eq!(text, "/dev/mmcblk0 did not come back");
        assert!(both(Ok(()), Ok(())).is_ok());
    }

    /// A knob that re-initialises the card and, doing so, changes the file of another.
    struct Reinit {
        file: std::path::PathBuf,
        clobbers: std::path::PathBuf,
    }

    impl Knob for Reinit {
        fn name(&self) -> &str {
            "reinit"
        }
        fn read(&self) -> Result<String> {
            Ok(std::fs::read_to_string(&self.file)?.trim().to_string())
        }
        fn snapshot(&mut self) -> Result<()> {
            Ok(())
        }
        fn original(&self) -> Option<crate::knob::Value> {
            None
        }
        fn adopt(&mut self, _saved: &str) -> Result<()> {
            Ok(())
        }
        fn apply(&mut self, value: &crate::knob::Value) -> Result<()> {
            std::fs::write(&self.file, value.as_str())?;
            std::fs::write(&self.clobbers, "reset")?;
            Ok(())
        }
        fn restore(&mut self) -> Result<()> {
            Ok(())
        }
        fn restore_commands(&self) -> Vec<String> {
            Vec::new()
        }
        fn stage(&self) -> crate::knob::Stage {
            crate::knob::Stage::Reinit
        }
    }

    /// A knob verified before a later knob re-initialised the card is verified again.
    #[test]
    fn a_later_re_init_is_caught_by_a_second_verify() {
        let dir = tempfile::tempdir().unwrap();
        let mut target = disk_slot(dir.path());
        let a = file_knob(dir.path(), "a", "1");
        let reinit = Reinit {
            file: dir.path().join("r"),
            clobbers: dir.path().join("a"),
        };
        std::fs::write(&reinit.file, "0").unwrap();
        let mut wants = Settings::default();
        wants.set(Setting {
            knob: "a".into(),
            value: a.normalize("2").unwrap(),
        });
        wants.set(Setting {
            knob: "reinit".into(),
            value: reinit.normalize("1").unwrap(),
        });
        let mut guard = KnobGuard::new(vec![Box::new(a), Box::new(reinit)], Box::new(|_| ()));
        guard.snapshot_all().unwrap();
        let err = put_in_place(&mut guard, &wants, &mut target).unwrap_err();
        assert!(
            format!("{err:#}")
                .starts_with("verifying a = 2 again after a later knob re-initialised the card"),
            "{err:#}"
        );
    }
}
