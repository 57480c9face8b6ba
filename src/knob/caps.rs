//! Host capability knobs: bits in debugfs `caps`/`caps2` of an MMC host, made effective by
//! a runtime-PM cycle of the card (power off, re-initialise with the new caps).
//!
//! The sequence (verified on Linux 7.2, see docs/kernel-facts.md): write caps
//! with MMC_CAP_AGGRESSIVE_PM (0x80) set, 0 to the card's `autosuspend_delay_ms` and
//! `auto` to its `power/control`, wait until `runtime_status` is `suspended`, then `on`,
//! wait for `active` and put the delay back. The card re-initialises with the new caps.
//! The result is verified where the kernel reports it (`ios`), read only while the card
//! is active: a suspended card shows `0 (1 bits)`. The `bus-width` knob is in
//! [`super::bus_width`]; `cmd23` and `cqe` in [`super::cap_bit`].

use super::attribute::{read_attribute, write_attribute};
use super::shell_quote;
use crate::device::MmcPaths;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The debugfs caps files of a host and the runtime-PM files of its card.
#[derive(Debug, Clone)]
pub struct HostCaps {
    /// The card's name on the mmc bus (`mmc0:0001`).
    pub card: String,
    pub caps: PathBuf,
    pub caps2: PathBuf,
    pub power_control: PathBuf,
    pub runtime_status: PathBuf,
    pub autosuspend_delay_ms: PathBuf,
}

/// The card's autosuspend delay from the text of its `autosuspend_delay_ms` (None: the
/// file could not be read); mmc's 3000 ms when it is missing or not a number.
fn autosuspend_delay(text: Option<&str>) -> Duration {
    text.and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(3))
}

impl HostCaps {
    pub fn new(paths: &MmcPaths) -> HostCaps {
        let power = paths.card_sysfs.join("power");
        HostCaps {
            card: paths.card.clone(),
            caps: paths.host_debugfs.join("caps"),
            caps2: paths.host_debugfs.join("caps2"),
            power_control: power.join("control"),
            runtime_status: power.join("runtime_status"),
            autosuspend_delay_ms: power.join("autosuspend_delay_ms"),
        }
    }

    pub fn read_caps(&self) -> Result<u32> {
        read_word(&self.caps)
    }

    pub fn read_caps2(&self) -> Result<u32> {
        read_word(&self.caps2)
    }

    /// Write caps; EINVAL (this kernel refuses the change) comes back as [`CapsRefused`].
    pub fn write_caps(&self, caps: u32) -> Result<()> {
        write_word(&self.caps, caps)
    }

    /// Write caps2, like [`HostCaps::write_caps`].
    pub fn write_caps2(&self, caps2: u32) -> Result<()> {
        write_word(&self.caps2, caps2)
    }

    fn wait_status(&self, want: &str, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        loop {
            let status = read_attribute(&self.runtime_status)?;
            if status == want {
                return Ok(());
            }
            if status == "unsupported" {
                // Runtime PM is disabled for the card: what mmc_blk_remove leaves when the
                // block driver is unbound (seen on Linux 7.2). No re-init can come.
                bail!(
                    "{} is 'unsupported': runtime PM is off for the card, so it cannot be \
                     re-initialised (is its driver unbound? {})",
                    self.runtime_status.display(),
                    self.bind_command()
                );
            }
            if status == "error" {
                // A runtime suspend or resume of the card failed (it did not answer: the
                // mmc core logs "error -110 doing runtime resume" or "... aggressive
                // suspend"). The PM core then refuses both until a probe sets the status.
                bail!(
                    "{} is 'error': a runtime suspend or resume of the card failed (it did not \
                     answer; see dmesg), and runtime PM refuses to re-initialise it until its \
                     block driver is bound again: {}; {}",
                    self.runtime_status.display(),
                    self.clear_error_command(),
                    self.bind_command()
                );
            }
            if start.elapsed() > timeout {
                bail!(
                    "{} stayed '{status}' for {:.1} s instead of becoming '{want}': the card \
                     did not re-initialise (is runtime PM enabled for it?)",
                    self.runtime_status.display(),
                    timeout.as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Power the card off and on through runtime PM so it renegotiates with the current
    /// caps; leaves `power/control` at `on` (card active).
    ///
    /// The runtime PM core suspends an idle card `autosuspend_delay_ms` after its last
    /// use (mmc cards: 3000 ms, `mmc_blk_probe`), and a cycle waited all of it: 3 of the
    /// 4-5 s between the runs of a bus-width A/B on the testbed's QEMU card. The delay is
    /// set to 0 for the cycle and put back after it, whether the cycle worked or not;
    /// `restore.sh` puts it back too ([`HostCaps::reinit_commands`]), for a SIGKILL
    /// inside the cycle. Where it cannot be written, the cycle waits the delay out.
    pub fn reinit(&self) -> Result<()> {
        let current = read_attribute(&self.autosuspend_delay_ms).ok();
        // The delay to put back: the one there was, once 0 is written in its place.
        let shortened = current
            .clone()
            .filter(|ms| ms != "0" && write_attribute(&self.autosuspend_delay_ms, "0").is_ok());
        let wait = match shortened {
            Some(_) => Duration::ZERO,
            None => autosuspend_delay(current.as_deref()),
        };
        let cycled = self.power_cycle(wait);
        let Some(ms) = shortened else {
            return cycled;
        };
        let put_back = write_attribute(&self.autosuspend_delay_ms, &ms).with_context(|| {
            format!(
                "putting {} back to {ms} after the card's power cycle: echo {ms} > {}",
                self.autosuspend_delay_ms.display(),
                shell_quote(&self.autosuspend_delay_ms.to_string_lossy())
            )
        });
        cycled.and(put_back)
    }

    /// `auto`, then `suspended` once `wait` has passed, then `on` and `active`.
    fn power_cycle(&self, wait: Duration) -> Result<()> {
        write_attribute(&self.power_control, "auto")?;
        if !wait.is_zero() {
            std::thread::sleep(wait + Duration::from_millis(200));
        }
        self.wait_status("suspended", wait + Duration::from_secs(10))?;
        write_attribute(&self.power_control, "on")?;
        self.wait_status("active", Duration::from_secs(10))
    }

    /// Run `read` with the card runtime-active (ios of a suspended card is not the truth),
    /// putting `power/control` back as it was.
    pub fn while_active<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        let status = read_attribute(&self.runtime_status).unwrap_or_else(|_| "active".into());
        if status == "active" {
            return read();
        }
        let control = read_attribute(&self.power_control)?;
        write_attribute(&self.power_control, "on")?;
        let result = self
            .wait_status("active", Duration::from_secs(10))
            .and_then(|_| read());
        write_attribute(&self.power_control, &control)?;
        result
    }

    /// Binds the card's block driver again unless it is bound: runtime PM, and so the
    /// re-init, needs it (a card whose driver was unbound stays as it was).
    pub fn bind_command(&self) -> String {
        let card = shell_quote(&self.card);
        let driver = self
            .power_control
            .parent()
            .and_then(Path::parent)
            .map(|card_dir| shell_quote(&card_dir.join("driver").to_string_lossy()));
        format!(
            "test -e {} || echo {card} > /sys/bus/mmc/drivers/mmcblk/bind",
            driver.unwrap_or_else(|| format!("/sys/bus/mmc/devices/{card}/driver"))
        )
    }

    /// Unbinds the card's block driver when its runtime PM is in the error state (see
    /// `wait_status`): the probe that [`HostCaps::bind_command`] then runs sets the status
    /// again (`pm_runtime_set_active()` clears the error), so a re-init can come.
    pub fn clear_error_command(&self) -> String {
        format!(
            "test \"$(cat {})\" != error || echo {} > /sys/bus/mmc/drivers/mmcblk/unbind",
            shell_quote(&self.runtime_status.to_string_lossy()),
            shell_quote(&self.card)
        )
    }

    /// Shell commands for a write of `caps` followed by the re-init, then the autosuspend
    /// delay as it reads now (what [`HostCaps::reinit`] sets to 0 for its cycle; the
    /// commands are written to `restore.sh` before any knob changes).
    pub fn reinit_commands(&self, caps: u32) -> Vec<String> {
        let control = shell_quote(&self.power_control.to_string_lossy());
        let current = read_attribute(&self.autosuspend_delay_ms).ok();
        let delay_s = autosuspend_delay(current.as_deref()).as_secs() + 1;
        let mut commands = vec![
            format!(
                "echo 0x{caps:08x} > {}",
                shell_quote(&self.caps.to_string_lossy())
            ),
            format!("echo auto > {control}"),
            format!("sleep {delay_s}"),
            format!("echo on > {control}"),
        ];
        if let Some(ms) = current {
            commands.push(format!(
                "echo {} > {}",
                shell_quote(&ms),
                shell_quote(&self.autosuspend_delay_ms.to_string_lossy())
            ));
        }
        commands
    }
}

fn read_word(path: &std::path::Path) -> Result<u32> {
    parse_caps(&read_attribute(path)?).with_context(|| format!("parsing {}", path.display()))
}

/// Write a caps word as the kernel prints it; EINVAL becomes [`CapsRefused`].
fn write_word(path: &std::path::Path, caps: u32) -> Result<()> {
    match write_attribute(path, &format!("0x{caps:08x}")) {
        Ok(()) => Ok(()),
        Err(err) => {
            let einval = err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .and_then(|e| e.raw_os_error())
                    == Some(libc::EINVAL)
            });
            if einval {
                Err(CapsRefused {
                    path: path.to_path_buf(),
                    caps,
                }
                .into())
            } else {
                Err(err)
            }
        }
    }
}

/// The kernel refused a caps write with EINVAL.
#[derive(Debug)]
pub struct CapsRefused {
    pub path: PathBuf,
    pub caps: u32,
}

impl std::fmt::Display for CapsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this kernel refused 0x{:08x} in {} (EINVAL): it does not allow these caps bits \
             to change at run time",
            self.caps,
            self.path.display()
        )
    }
}

impl std::error::Error for CapsRefused {}

pub fn parse_caps(text: &str) -> Result<u32> {
    let t = text.trim();
    let value = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse::<u32>(),
    };
    value.map_err(|_| anyhow::anyhow!("'{t}' is not a caps value (expected hex like 0x4000014f)"))
}

/// A card's tree under a temporary directory as the caps knobs see it: the host's
/// `caps` and `caps2`, the card's `power/control` and an active `runtime_status`.
#[cfg(test)]
pub(crate) fn caps_tree(caps: &str, caps2: &str, control: &str) -> (tempfile::TempDir, MmcPaths) {
    let dir = tempfile::tempdir().unwrap();
    let paths = MmcPaths::under(dir.path());
    std::fs::create_dir_all(paths.card_sysfs.join("power")).unwrap();
    std::fs::create_dir_all(&paths.host_debugfs).unwrap();
    std::fs::write(paths.host_debugfs.join("caps"), caps).unwrap();
    std::fs::write(paths.host_debugfs.join("caps2"), caps2).unwrap();
    std::fs::write(paths.card_sysfs.join("power/control"), control).unwrap();
    std::fs::write(paths.card_sysfs.join("power/runtime_status"), "active\n").unwrap();
    (dir, paths)
}

/// Runtime PM over a fixture tree, driven by what is written to `power/control`
/// (a FIFO here, which this thread reads line by line as the writes come): `auto`
/// suspends the card at once if its `autosuspend_delay_ms` is 0, and never otherwise
/// (the kernel would wait the delay out, which is what a re-init must not do), `on`
/// resumes it. Returns each control written, with the delay `auto` saw; ends at a
/// line `end`.
#[cfg(test)]
pub(crate) fn runtime_pm(paths: &MmcPaths) -> std::thread::JoinHandle<Vec<String>> {
    let power = paths.card_sysfs.join("power");
    let control = power.join("control");
    std::fs::remove_file(&control).unwrap();
    nix::unistd::mkfifo(&control, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Read and write: the writer's open never waits for a reader, and the FIFO has
    // no end of file between writes.
    let fifo = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&control)
        .unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let status = |s: &str| {
            // Whole or not at all, as sysfs shows it.
            let new = power.join("runtime_status.new");
            std::fs::write(&new, format!("{s}\n")).unwrap();
            std::fs::rename(&new, power.join("runtime_status")).unwrap();
        };
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(fifo).lines() {
            let line = line.unwrap();
            match line.as_str() {
                "end" => break,
                "auto" => {
                    let delay = std::fs::read_to_string(power.join("autosuspend_delay_ms"))
                        .unwrap_or_default();
                    if delay.trim() == "0" {
                        status("suspended");
                    }
                    seen.push(format!("auto (delay {})", delay.trim()));
                }
                "on" => {
                    status("active");
                    seen.push(line);
                }
                _ => seen.push(line),
            }
        }
        seen
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_words_parse_as_the_kernel_prints_them() {
        assert_eq!(parse_caps("0x4000014f\n").unwrap(), 0x4000014f);
        assert_eq!(parse_caps("1073742159").unwrap(), 0x4000014f);
        assert!(parse_caps("caps").is_err());
    }

    /// The cycle does not wait out the card's autosuspend delay: 0 while it runs, then
    /// what it was; restore.sh's commands put that value back too. (A cycle that waited
    /// for the delay would never see the card suspend here, and fail.)
    #[test]
    fn a_reinit_shortens_the_autosuspend_delay_and_puts_it_back() {
        let (_dir, paths) = caps_tree("0x4000014f\n", "0x0\n", "on\n");
        let delay = paths.card_sysfs.join("power/autosuspend_delay_ms");
        std::fs::write(&delay, "3000\n").unwrap();
        let host = HostCaps::new(&paths);
        let pm = runtime_pm(&paths);
        let reinit = host.reinit();
        std::fs::write(&host.power_control, "end\n").unwrap();
        let seen = pm.join().unwrap();
        reinit.unwrap();
        assert_eq!(
            seen,
            ["auto (delay 0)", "on"],
            "one cycle, with the delay at 0"
        );
        assert_eq!(std::fs::read_to_string(&delay).unwrap().trim(), "3000");
        let commands = host.reinit_commands(0x4000014f);
        assert_eq!(
            commands.last().unwrap(),
            &format!("echo 3000 > {}", delay.display()),
            "{commands:?}"
        );
    }

    /// A cycle that fails (the card never suspends) still puts the delay back.
    #[test]
    fn a_failed_reinit_puts_the_autosuspend_delay_back() {
        let (_dir, paths) = caps_tree("0x4000014f\n", "0x0\n", "on\n");
        let delay = paths.card_sysfs.join("power/autosuspend_delay_ms");
        std::fs::write(&delay, "3000\n").unwrap();
        std::fs::write(paths.card_sysfs.join("power/runtime_status"), "error\n").unwrap();
        let err = HostCaps::new(&paths).reinit().unwrap_err();
        assert!(format!("{err:#}").contains("is 'error'"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&delay).unwrap().trim(), "3000");
    }
}
