//! What the runner reads from the device: the knobs' environment, a config's
//! expectations (`expect.bus_width = 8`, checked in ios/EXT_CSD before every run), and
//! what goes into meta.json (identity, ios and EXT_CSD per config).

use crate::device::sysfs::read_trimmed;
use crate::device::MmcPaths;
use crate::knob::builtin;
use crate::knob::caps::HostCaps;
use crate::knob::env::KnobEnv;
use crate::knob::Knob;
use crate::plan::config::ConfigSpec;
use crate::plan::knob::KnobDecl;
use crate::record::{BlockDeviceId, ConfigMeta, Meta};
use anyhow::{bail, Result};
use std::path::Path;

pub struct Observer {
    target: String,
    /// The MMC card behind the target, when it is one.
    pub env: Option<KnobEnv>,
    /// Block device name of the target (`mmcblk0`, `loop3`), empty for files.
    disk: String,
}

impl Observer {
    /// Find the card behind `target` when it is an MMC block device; `needs_mmc` makes a
    /// failed discovery an error (built-in knobs or expectations in the plan).
    pub fn open(target: &Path, needs_mmc: bool) -> Result<Observer> {
        use std::os::unix::fs::FileTypeExt;
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(target).ok();
        let is_block = meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_block_device());
        // The kernel's name ({disk}): /dev/mapper/flaky is dm-0 in /sys/block.
        let disk = match meta.filter(|_| is_block) {
            Some(m) => kernel_name(m.rdev())
                .or_else(|| target.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default(),
            None => String::new(),
        };
        let text = target.to_string_lossy().into_owned();
        let env = if is_block && (disk.starts_with("mmcblk") || needs_mmc) {
            match crate::device::discover(&text) {
                Ok(paths) => Some(KnobEnv::new(paths)),
                Err(err) if needs_mmc => {
                    return Err(err.context(format!(
                        "the plan uses built-in knobs or expectations, which need an MMC device \
                         (/dev/mmcblkN) as --device; {text} is not one"
                    )))
                }
                Err(_) => None,
            }
        } else if needs_mmc {
            bail!(
                "the plan uses built-in knobs or expectations, which need an MMC block device \
                 (/dev/mmcblkN) as --device; {text} is not a block device"
            );
        } else {
            None
        };
        Ok(Observer {
            target: text,
            env,
            disk,
        })
    }

    fn paths(&self) -> Option<&MmcPaths> {
        self.env.as_ref().map(|e| &e.paths)
    }

    /// A knob by name: a built-in on this device, or one the plan declares.
    pub fn knob(&self, name: &str, declared: &[KnobDecl], force: bool) -> Result<Box<dyn Knob>> {
        if let Some(decl) = declared.iter().find(|d| d.name() == name) {
            return crate::knob::custom::resolve(decl, self.paths(), &self.disk, force);
        }
        match &self.env {
            Some(env) => builtin::resolve(name, env, force),
            None => bail!(
                "knob {name} needs an MMC device (/dev/mmcblkN) as --device; {} is not one",
                self.target
            ),
        }
    }

    pub fn check_expect_possible(&self, config: &ConfigSpec) -> Result<()> {
        if let Some(want) = &config.expect.timing {
            crate::device::speed_modes::check_expected_timing(want)
                .map_err(|why| anyhow::anyhow!("config {}: {why}", config.name))?;
        }
        if !config.expect.is_empty() && self.env.is_none() {
            bail!(
                "config {}: expect.* needs an MMC device (/dev/mmcblkN) as --device",
                config.name
            );
        }
        Ok(())
    }

    /// Check a config's expectations where the kernel reports them.
    pub fn check_expect(&self, config: &ConfigSpec) -> Result<()> {
        let expect = &config.expect;
        if expect.is_empty() {
            return Ok(());
        }
        let Some(env) = &self.env else {
            return self.check_expect_possible(config);
        };
        let mut wrong = Vec::new();
        if expect.bus_width.is_some() || expect.clock_hz.is_some() || expect.timing.is_some() {
            let ios = HostCaps::new(&env.paths)
                .while_active(|| crate::device::ios::read_ios(&env.paths))?;
            if let Some(want) = expect.bus_width {
                if u32::from(ios.bus_width_bits) != want {
                    wrong.push(format!(
                        "bus width {} bits, expected {want}",
                        ios.bus_width_bits
                    ));
                }
            }
            if let Some(want) = expect.clock_hz {
                if ios.clock_hz != want {
                    wrong.push(format!("clock {} Hz, expected {want}", ios.clock_hz));
                }
            }
            if let Some(want) = &expect.timing {
                if !crate::device::speed_modes::timing_matches(&ios.timing, want) {
                    wrong.push(format!(
                        "timing '{}' at {} Hz, expected '{want}' (the mode did not take)",
                        ios.timing, ios.clock_hz
                    ));
                }
            }
        }
        if !expect.ext_csd.is_empty() {
            let (ext_csd, _) = crate::device::ext_csd::read_ext_csd(&env.paths)?;
            for (field, want) in &expect.ext_csd {
                match crate::device::ext_csd_table::find(field).map(|f| ext_csd.get(*f)) {
                    Some(v) if v == *want => {}
                    Some(v) => wrong.push(format!("EXT_CSD {field} = {v}, expected {want}")),
                    None => bail!(
                        "config {}: expect.ext_csd.{field}: no such EXT_CSD field",
                        config.name
                    ),
                }
            }
        }
        if !wrong.is_empty() {
            bail!(
                "config {}: the device does not match its expectations: {} (mislabelled data \
                 is worse than none: stopping before the run)",
                config.name,
                wrong.join("; ")
            );
        }
        Ok(())
    }

    /// debugfs `ios` now (the card kept active while it is read), None when the target
    /// is not an MMC card or it cannot be read.
    pub fn ios(&self) -> Option<crate::device::Ios> {
        let env = self.env.as_ref()?;
        HostCaps::new(&env.paths)
            .while_active(|| crate::device::ios::read_ios(&env.paths))
            .ok()
    }

    /// ios and EXT_CSD as they are now, into a config's meta.json entry that has none
    /// yet; true when something was filled in.
    pub fn observe_config_once(&self, meta: &mut ConfigMeta) -> bool {
        if !(meta.ios.is_none() && meta.ext_csd_hex.is_empty()) {
            return false;
        }
        self.observe_config(meta);
        true
    }

    fn observe_config(&self, meta: &mut ConfigMeta) {
        let Some(env) = &self.env else { return };
        if let Ok(ios) =
            HostCaps::new(&env.paths).while_active(|| crate::device::ios::read_ios(&env.paths))
        {
            meta.ios = Some(ios);
        }
        if let Ok((ext_csd, _)) = crate::device::ext_csd::read_ext_csd(&env.paths) {
            meta.ext_csd_hex = ext_csd.to_hex();
        }
    }

    /// The volatile cache the card states (EXT_CSD CACHE_SIZE, on or off), bytes: what
    /// `past_cache` sizes writes by; 0 when the target is no eMMC or EXT_CSD cannot be
    /// read (an SD card has none: its write buffer shows only in the rate).
    pub fn stated_cache_bytes(&self) -> u64 {
        let Some(env) = &self.env else { return 0 };
        crate::device::ext_csd::read_ext_csd(&env.paths).map_or(0, |(x, _)| x.cache_size_bytes())
    }

    /// Device identity for meta.json; an error leaves it out (the run goes on).
    pub fn describe(&self, meta: &mut Meta) -> Result<()> {
        meta.block_device = self.block_device();
        if let Some(env) = &self.env {
            let info = crate::device::DeviceInfo::read(&env.paths)?;
            meta.device_summary = info.summary.clone();
            meta.device = Some(info);
        } else {
            meta.device_summary = self.target.clone();
        }
        Ok(())
    }
}

impl Observer {
    /// After an I/O error: whether the card still answers. Reading the card's debugfs
    /// `status` sends CMD13 (SEND_STATUS, `mmc_dbg_card_status_get()`); a card that
    /// stopped answering makes it fail (ETIMEDOUT). None when it answers, or for targets
    /// that are not an MMC card.
    pub fn card_silent(&self) -> Option<String> {
        let status = self.env.as_ref()?.paths.card_debugfs.join("status");
        match std::fs::read_to_string(&status) {
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIMEDOUT | libc::EILSEQ | libc::EIO | libc::ENOMEDIUM)
                ) =>
            {
                Some(format!(
                    "the card does not answer: reading {} (CMD13 SEND_STATUS) failed: {e}; \
                     see dmesg",
                    status.display()
                ))
            }
            _ => None,
        }
    }

    /// Size, model and backing file of a block device target (None for files).
    pub fn block_device(&self) -> Option<BlockDeviceId> {
        if self.disk.is_empty() {
            return None;
        }
        let sys = Path::new("/sys/class/block").join(&self.disk);
        let size_bytes = read_trimmed(sys.join("size")).ok()?.parse::<u64>().ok()? * 512;
        // A partition's model is its disk's.
        let model = read_trimmed(sys.join("device/model"))
            .or_else(|_| read_trimmed(sys.join("../device/model")))
            .ok()
            .filter(|m| !m.is_empty());
        let backing_file = read_trimmed(sys.join("loop/backing_file")).ok();
        Some(BlockDeviceId {
            size_bytes,
            model,
            backing_file,
        })
    }

    /// What identifies the card now ([`crate::device::DeviceInfo::identity_fields`]),
    /// None when the target is not an MMC card.
    pub fn card_identity(&self) -> Option<Result<Vec<(&'static str, String)>>> {
        let env = self.env.as_ref()?;
        Some(crate::device::DeviceInfo::read(&env.paths).map(|info| info.identity_fields()))
    }
}

/// The kernel's name of a block device number (`dm-0`), from /sys/dev/block.
fn kernel_name(rdev: u64) -> Option<String> {
    let link = format!(
        "/sys/dev/block/{}:{}",
        nix::sys::stat::major(rdev),
        nix::sys::stat::minor(rdev)
    );
    let path = std::fs::canonicalize(link).ok()?;
    Some(path.file_name()?.to_string_lossy().into_owned())
}
