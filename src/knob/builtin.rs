//! The knobs users name in plans (`bus-width`, `packing`, `cmd23`, `cqe`, `cache`,
//! `speed-mode`, `clock`) and custom
//! `[[knob]]` declarations, resolved against one device. Each built-in is either a knob
//! or an [`Unavailable`] that says why and what to do instead, decided from the kernel
//! and the card before anything is written.

use super::attribute::AttributeKnob;
use super::bus_width;
use super::cap_bit::{CapBitKnob, Which};
use super::caps::HostCaps;
use super::clock;
use super::env::unavailable;
pub use super::env::KnobEnv;
use super::ext_csd::{ExtCsdAccess, ExtCsdKnob};
use super::packing::{self, PackingKnob};
use super::speed_mode;
use super::{Knob, Unavailable};
use crate::device::ext_csd_table::{
    CACHE_CTRL, CACHE_SIZE, CMDQ_SUPPORT, EXT_CSD_REV, MAX_PACKED_WRITES,
};
use crate::device::ioctl::{self, SwitchIndex};
use crate::device::{ExtCsd, MmcPaths};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::path::Path;

use crate::device::capabilities::{
    kernel_version, CMD23_CQE_CAPS_WRITABLE_SINCE, MMC_CAP2_CQE, MMC_CAP_CMD23,
};
use crate::device::caps_gate::{read_only_refusal, ROUTE_KERNELS};

/// One line of `mmcab knobs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnobStatus {
    pub name: String,
    pub available: bool,
    /// Current value, when it can be read.
    pub value: Option<String>,
    /// Values it takes.
    pub values: String,
    /// Why it is unavailable, or a note on how it works here.
    pub reason: String,
}

/// Every built-in knob on `device` (`/dev/mmcblkN`, `mmcblkN`): its current value,
/// whether it can be switched here, and why not.
pub fn statuses(device: &str) -> Result<Vec<KnobStatus>> {
    let paths = crate::device::discover(device)?;
    Ok(status(&KnobEnv::new(paths)))
}

/// A built-in knob: the name users type, the values it takes, and how mmcab finds it on a
/// device. One row of [`BUILTINS`].
pub struct Builtin {
    pub name: &'static str,
    /// The values it takes, in words (`mmcab knobs`).
    pub values: &'static str,
    /// The knob on this device, or why not (an [`Unavailable`] error); the flag is `--force`.
    resolve: fn(&KnobEnv, bool) -> Result<Box<dyn Knob>>,
    /// How it works here, shown next to an available knob.
    note: fn(&KnobEnv) -> String,
    /// What it is set to when mmcab cannot switch it, where that is known.
    current: fn(&KnobEnv) -> Option<String>,
    /// A value read from the knob, as `mmcab knobs` shows it.
    show: fn(&str) -> String,
}

/// The built-in knobs, in the order `mmcab knobs` lists them.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "bus-width",
        values: "1, 4, 8 (wider than the host came up with: --force)",
        resolve: bus_width::resolve,
        note: bus_width::note,
        current: bus_width::current,
        show: str::to_string,
    },
    Builtin {
        name: "packing",
        values: "on (kernel default trigger) or a trigger 1..=MAX_PACKED_WRITES",
        resolve: packing,
        note: |_| "wr_pack_stats read before/after each run".to_string(),
        current: |_| None,
        show: packing::describe,
    },
    Builtin {
        name: "cmd23",
        values: "on, off (on when the host came up without it: --force)",
        resolve: cmd23,
        note: |_| {
            "debugfs caps bit 30 (MMC_CAP_CMD23), then the mmcblk driver is rebound (the disk \
             is closed and reopened); verified by a probe read in the trace (sbc_opcode)"
                .to_string()
        },
        current: |env| {
            let caps = HostCaps::new(&env.paths).read_caps().ok()?;
            Some(on_off(caps & MMC_CAP_CMD23 != 0))
        },
        show: str::to_string,
    },
    Builtin {
        name: "cqe",
        values: "on, off",
        resolve: cqe,
        note: |_| String::new(),
        current: |env| {
            let en =
                super::attribute::read_attribute(&env.paths.card_sysfs.join("cmdq_en")).ok()?;
            Some(on_off(en == "1"))
        },
        show: str::to_string,
    },
    Builtin {
        name: "cache",
        values: "on, off",
        resolve: cache,
        note: |_| "EXT_CSD CACHE_CTRL via CMD6, verified by re-reading EXT_CSD".to_string(),
        current: cache_current,
        show: str::to_string,
    },
    Builtin {
        name: "speed-mode",
        values: "legacy, hs, ddr52, hs200, hs400 (what the card's CARD_TYPE has; a mode the \
                 host came up without: --force)",
        resolve: speed_mode::resolve,
        note: speed_mode::note,
        current: speed_mode::current,
        show: str::to_string,
    },
    Builtin {
        name: "clock",
        values: "a clock in Hz, e.g. 26000000 or \"26 MHz\" (above the mode's clock: --force)",
        resolve: clock::resolve,
        note: |_| {
            "debugfs clock (no re-init; set after speed-mode and bus-width, whose re-init \
             resets it), verified in ios"
                .to_string()
        },
        current: clock::current,
        show: str::to_string,
    },
];

/// The built-in knob called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Names of the built-in knobs, as users type them in plans.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// A built-in knob on this device, or why not (as an [`Unavailable`] error).
pub fn resolve(name: &str, env: &KnobEnv, force: bool) -> Result<Box<dyn Knob>> {
    match find(name) {
        Some(builtin) => (builtin.resolve)(env, force),
        None => bail!(
            "'{name}' is not a built-in knob (built-ins: {})",
            names().collect::<Vec<_>>().join(", ")
        ),
    }
}

fn packing(env: &KnobEnv, _force: bool) -> Result<Box<dyn Knob>> {
    let attribute = env.paths.block_sysfs.join(packing::ATTRIBUTE);
    let mut reasons = Vec::new();
    if !attribute.exists() {
        reasons.push(format!(
            "this kernel has no {} (Linux {}): this trigger exists only in vendor kernels; \
             mainline never sent packed commands (no upstream host set MMC_CAP2_PACKED_WR, and \
             v4.10 removed the code), so there is no mainline kernel to compare with: A/B \
             packed writes on this kernel with engine = \"ioctl\" and packed = N \
             (workloads/packed-ioctl.toml)",
            attribute.display(),
            env.kernel_release
        ));
    }
    let mut max_packed_writes = 0;
    match card_ext_csd(&env.paths) {
        Ok(x) => {
            let (rev, max) = (x.get(EXT_CSD_REV), x.get(MAX_PACKED_WRITES));
            max_packed_writes = max;
            if let Err(no) = crate::device::packed::packed_writes(rev, max) {
                reasons.push(no.to_string());
            }
        }
        Err(err) => reasons.push(format!(
            "cannot read EXT_CSD to check packed support: {err:#}"
        )),
    }
    if !reasons.is_empty() {
        return Err(unavailable("packing", reasons.join("; ")));
    }
    Ok(Box::new(PackingKnob::new(
        attribute,
        env.paths.card_debugfs.join(packing::STATS),
        max_packed_writes,
    )))
}

fn on_off(on: bool) -> String {
    if on { "on" } else { "off" }.to_string()
}

/// Why the caps of this kernel cannot take CMD23/CQE, or the rebind cannot be done.
fn caps_bit_blockers(env: &KnobEnv, what: &str, force: bool) -> Vec<String> {
    let mut reasons = Vec::new();
    let host = HostCaps::new(&env.paths);
    if !host.caps.exists() {
        reasons.push(format!(
            "{} does not exist: mount debugfs (mount -t debugfs none /sys/kernel/debug) and run \
             as root",
            host.caps.display()
        ));
    }
    let read_only = read_only_refusal(&host.caps, &env.kernel_release, ROUTE_KERNELS);
    match kernel_version(&env.kernel_release) {
        _ if read_only.is_some() => reasons.extend(read_only),
        Some(v) if v >= CMD23_CQE_CAPS_WRITABLE_SINCE || force => {}
        _ => reasons.push(format!(
            "not switchable at run time on this kernel (Linux {}: its debugfs caps refuses {what}; \
             it became writable after 6.18); {ROUTE_KERNELS} (--force tries anyway)",
            env.kernel_release
        )),
    }
    if let Some(why) = super::mmcblk::MmcBlk::new(&env.paths).unavailable() {
        reasons.push(why);
    }
    reasons
}

/// Whether the card can take CMD23 (`mmc_card_can_cmd23()`: an MMC card of CSD
/// SPEC_VERS >= 3, or an SD card whose SCR lists CMD23).
fn card_cmd23(env: &KnobEnv) -> Result<(), String> {
    let read = |name: &str| super::attribute::read_attribute(&env.paths.card_sysfs.join(name));
    match read("type").map_err(|e| format!("{e:#}"))?.as_str() {
        "MMC" => {
            let csd = read("csd").map_err(|e| format!("{e:#}"))?;
            let csd = crate::device::cid::decode_csd(&csd).map_err(|e| format!("{e:#}"))?;
            if csd.spec_vers < 3 {
                return Err(format!(
                    "the card cannot do CMD23 (CSD SPEC_VERS {} < 3)",
                    csd.spec_vers
                ));
            }
            Ok(())
        }
        "SD" => {
            let scr = read("scr").map_err(|e| format!("{e:#}"))?;
            let scr = u64::from_str_radix(&scr, 16).map_err(|e| format!("scr '{scr}': {e}"))?;
            // SCR CMD_SUPPORT, bits 33:32: bit 33 is CMD23.
            if scr >> 33 & 1 == 0 {
                return Err("the SD card does not list CMD23 in its SCR".to_string());
            }
            Ok(())
        }
        other => Err(format!("a {other} card has no CMD23")),
    }
}

/// Why CMD23 cannot be A/B'd while the card's command queue is on: the block driver
/// then sends every read and write as a queue task (`mmc_blk_mq_issue_rq()` ->
/// `mmc_blk_cqe_issue_rw_rq()`, drivers/mmc/core/block.c), which has no CMD23, so the
/// knob would change nothing they do (docs/kernel-facts.md).
fn cmd23_queue_blocker(env: &KnobEnv) -> Option<String> {
    let en = super::attribute::read_attribute(&env.paths.card_sysfs.join("cmdq_en")).ok()?;
    (en == "1").then(|| {
        "the card's command queue is on (cmdq_en 1): reads and writes go to it as queue \
         tasks, which carry no CMD23, so cmd23 would change nothing they do; A/B CMD23 on a \
         card or host without a command queue"
            .to_string()
    })
}

fn cmd23(env: &KnobEnv, force: bool) -> Result<Box<dyn Knob>> {
    let mut reasons = Vec::new();
    if let Err(why) = card_cmd23(env) {
        reasons.push(why);
    }
    reasons.extend(cmd23_queue_blocker(env));
    reasons.extend(caps_bit_blockers(env, "MMC_CAP_CMD23 (bit 30)", force));
    if !reasons.is_empty() {
        return Err(unavailable("cmd23", reasons.join("; ")));
    }
    Ok(Box::new(CapBitKnob::new(Which::Cmd23, &env.paths)))
}

fn cqe(env: &KnobEnv, force: bool) -> Result<Box<dyn Knob>> {
    let attribute = env.paths.card_sysfs.join("cmdq_en");
    let mut reasons = Vec::new();
    match card_ext_csd(&env.paths) {
        Ok(x) if x.get(CMDQ_SUPPORT) & 1 == 0 => reasons.push(format!(
            "the card has no command queue (EXT_CSD CMDQ_SUPPORT = 0, EXT_CSD_REV {}; \
             command queueing needs eMMC 5.1)",
            x.get(EXT_CSD_REV)
        )),
        Ok(_) => {}
        Err(err) => reasons.push(format!("cannot read EXT_CSD: {err:#}")),
    }
    // Vendor kernels that make cmdq_en writable switch it there.
    if writable(&attribute) {
        if !reasons.is_empty() {
            return Err(unavailable("cqe", reasons.join("; ")));
        }
        return Ok(Box::new(
            AttributeKnob::new("cqe", attribute, vec!["0".into(), "1".into()])
                .with_aliases(&[("on", "1"), ("off", "0")]),
        ));
    }
    match HostCaps::new(&env.paths).read_caps2() {
        Ok(caps2) if caps2 & MMC_CAP2_CQE == 0 => reasons.push(format!(
            "the host has no command queue engine (debugfs caps2 0x{caps2:08x} lacks \
             MMC_CAP2_CQE, bit 23)"
        )),
        Ok(_) => {}
        Err(err) => reasons.push(format!("cannot read the host's caps2: {err:#}")),
    }
    if !reasons.is_empty() {
        return Err(unavailable("cqe", reasons.join("; ")));
    }
    reasons.extend(caps_bit_blockers(env, "MMC_CAP2_CQE (caps2 bit 23)", force));
    if !force {
        reasons.push(
            "switching the command queue at run time is not clean in mainline: the host's \
             engine stays enabled until the card is removed (host->cqe_enabled, cleared only \
             by mmc_remove_card), so after caps2, a card re-init and the mmcblk rebind the \
             driver may still send queue tasks to a card whose queue is off; A/B it across \
             boots with --label, or --force to try (verified by cmdq_en and a probe read)"
                .to_string(),
        );
    }
    if !reasons.is_empty() {
        return Err(unavailable("cqe", reasons.join("; ")));
    }
    Ok(Box::new(CapBitKnob::new(Which::Cqe, &env.paths)))
}

fn cache(env: &KnobEnv, _force: bool) -> Result<Box<dyn Knob>> {
    let x = card_ext_csd(&env.paths)
        .map_err(|err| unavailable("cache", format!("cannot read EXT_CSD: {err:#}")))?;
    if x.get(CACHE_SIZE) == 0 {
        return Err(unavailable(
            "cache",
            "the card has no volatile cache (EXT_CSD CACHE_SIZE = 0)".to_string(),
        ));
    }
    Ok(Box::new(ExtCsdKnob::new(
        "cache",
        CACHE_CTRL.name,
        None,
        false,
        Box::new(CardExtCsd {
            paths: env.paths.clone(),
        }),
    )?))
}

fn writable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o222 != 0)
        .unwrap_or(false)
}

/// Every built-in on this device, with its current value or why it is unavailable.
pub fn status(env: &KnobEnv) -> Vec<KnobStatus> {
    BUILTINS
        .iter()
        .map(|builtin| {
            let (available, value, reason) = match (builtin.resolve)(env, false) {
                Ok(knob) => match knob.read() {
                    Ok(value) => (true, Some((builtin.show)(&value)), (builtin.note)(env)),
                    Err(err) => (false, None, format!("{err:#}")),
                },
                Err(err) => (
                    false,
                    (builtin.current)(env),
                    match err.downcast_ref::<Unavailable>() {
                        Some(u) => u.reason.clone(),
                        None => format!("{err:#}"),
                    },
                ),
            };
            KnobStatus {
                name: builtin.name.to_string(),
                available,
                value,
                values: builtin.values.to_string(),
                reason,
            }
        })
        .collect()
}

/// CACHE_CTRL as on/off, when the cache knob is unavailable.
fn cache_current(env: &KnobEnv) -> Option<String> {
    let ctrl = card_ext_csd(&env.paths).ok()?.get(CACHE_CTRL);
    Some(if ctrl & 1 == 1 { "on" } else { "off" }.to_string())
}

// ---- glue to the device module (ios, EXT_CSD, CMD6) ----

fn card_ext_csd(paths: &MmcPaths) -> Result<ExtCsd> {
    let (ext_csd, _source) = crate::device::ext_csd::read_ext_csd(paths)?;
    Ok(ext_csd)
}

/// EXT_CSD of the card behind `paths`: read through the device module, switched with CMD6.
pub(super) struct CardExtCsd {
    pub(super) paths: MmcPaths,
}

impl ExtCsdAccess for CardExtCsd {
    fn read_byte(&self, index: usize) -> Result<u8> {
        let (ext_csd, _source) = crate::device::ext_csd::read_ext_csd(&self.paths)?;
        ext_csd
            .raw
            .get(index)
            .copied()
            .with_context(|| format!("EXT_CSD has no byte {index}"))
    }

    fn switch(&self, index: SwitchIndex, value: u8) -> Result<()> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.paths.dev_node)
            .with_context(|| {
                format!(
                    "opening {} for the mmc ioctl (run as root)",
                    self.paths.dev_node.display()
                )
            })?;
        ioctl::switch(&file, index, value, ioctl::CMD_SET_NORMAL).with_context(|| {
            format!(
                "{}: CMD6 SWITCH of EXT_CSD[{index}] to {value}",
                self.paths.dev_node.display()
            )
        })
    }

    fn dev_node(&self) -> String {
        self.paths.dev_node.to_string_lossy().into_owned()
    }
}
