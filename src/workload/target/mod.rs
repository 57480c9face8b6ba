//! What the engine does I/O to: a whole block device (or a region of it, through the
//! jobs' offset/size), a regular file (created and sized by mmcab), or a directory on a
//! mounted filesystem in which every job clone gets its own file.
//!
//! Safety lives here: writes to a block device need `--allow-write`, and a block device
//! that is mounted, has a mounted partition, is used as swap or has holders (device
//! mapper, md, ...) is refused for writes even then, naming the mount. Writes over data
//! (partitions, a partition table, a filesystem, RAID or LVM signature, see
//! [`signatures`]) are refused unless `--overwrite-data` is given too
//! ([`Target::check_data`], with the byte ranges a plan will write).
//! While writes are allowed, an O_EXCL handle is held so nobody mounts the device
//! during the run; who uses a device is [`in_use`]'s to find.

pub mod in_use;
pub mod signatures;

use crate::device::sysfs::read_trimmed;
use anyhow::{bail, Context, Result};
use in_use::{block_device_users, devno};
use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    BlockDevice,
    File,
    Directory,
}

/// What the user allowed on a block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Writes {
    /// No writes (no `--allow-write`).
    #[default]
    No,
    /// `--allow-write`: writes to a device that holds no data (no partitions, no
    /// signature at its start).
    Allowed,
    /// `--allow-write --overwrite-data`: writes even over data.
    OverData,
}

impl Writes {
    /// From the two command-line flags.
    pub fn from_flags(allow_write: bool, overwrite_data: bool) -> Writes {
        match (allow_write, overwrite_data) {
            (false, _) => Writes::No,
            (true, false) => Writes::Allowed,
            (true, true) => Writes::OverData,
        }
    }
}

#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Device size, or the file's current length (0 for a new file or a directory).
    pub size_bytes: u64,
    /// Logical block size of the device (of the filesystem's device for files), which
    /// O_DIRECT offsets, lengths and buffers must be multiples of.
    pub logical_block_bytes: u64,
    pub allow_write: bool,
    /// `--overwrite-data`: the data found on the device may go.
    pub overwrite_data: bool,
    /// For a block device in use (mounted, swap, holders): what uses it.
    pub in_use: Option<String>,
    /// For a block device: `major:minor`, as /sys/dev/block names it.
    pub devno: Option<String>,
    _exclusive: Option<File>,
}

impl Target {
    /// Open a target from a user path. `allow_write` is `--allow-write`: without it no
    /// job may write to a block device; with it, a device in use or holding data is
    /// refused.
    pub fn open(path: &Path, allow_write: bool) -> Result<Target> {
        Self::open_with(path, Writes::from_flags(allow_write, false))
    }

    /// [`Target::open`] with what the user allowed ([`Writes`]).
    pub fn open_with(path: &Path, writes: Writes) -> Result<Target> {
        let allow_write = writes != Writes::No;
        let overwrite_data = writes == Writes::OverData;
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Self::new_file(path, allow_write, overwrite_data)
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot stat target {}", path.display()))
            }
        };
        let ft = meta.file_type();
        if ft.is_block_device() {
            Self::block_device(path, meta.rdev(), writes)
        } else if ft.is_dir() {
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::Directory,
                size_bytes: 0,
                logical_block_bytes: fs_logical_block_bytes(meta.dev()),
                allow_write,
                overwrite_data,
                in_use: None,
                devno: None,
                _exclusive: None,
            })
        } else if ft.is_file() {
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::File,
                size_bytes: meta.len(),
                logical_block_bytes: fs_logical_block_bytes(meta.dev()),
                allow_write,
                overwrite_data,
                in_use: None,
                devno: None,
                _exclusive: None,
            })
        } else {
            bail!(
                "target {} is not a block device, a regular file or a directory",
                path.display()
            )
        }
    }

    fn new_file(path: &Path, allow_write: bool, overwrite_data: bool) -> Result<Target> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if is_device_directory(parent) {
            bail!(
                "target {} does not exist: no such device (mmcab creates no file among the \
                 device nodes, where a misspelt partition would be measured as a file in RAM); \
                 check the name: `mmcab info` lists the MMC/SD block devices and their partitions",
                path.display()
            );
        }
        let meta = fs::metadata(parent).with_context(|| {
            format!(
                "target {} does not exist and its directory {} cannot be used: create the directory first",
                path.display(),
                parent.display()
            )
        })?;
        Ok(Target {
            path: path.to_path_buf(),
            kind: TargetKind::File,
            size_bytes: 0,
            logical_block_bytes: fs_logical_block_bytes(meta.dev()),
            allow_write,
            overwrite_data,
            in_use: None,
            devno: None,
            _exclusive: None,
        })
    }

    fn block_device(path: &Path, rdev: u64, writes: Writes) -> Result<Target> {
        let allow_write = writes != Writes::No;
        let devno = devno(rdev);
        let sys = fs::canonicalize(format!("/sys/dev/block/{devno}"))
            .with_context(|| format!("{}: no /sys/dev/block/{devno}", path.display()))?;
        let sectors: u64 = read_trimmed(sys.join("size"))?
            .parse()
            .with_context(|| format!("{}: bad size in {}", path.display(), sys.display()))?;
        let logical_block_bytes = logical_block_bytes(&sys);
        let in_use = block_device_users(path, &sys, &devno)?;
        let mut exclusive = None;
        if allow_write {
            if let Some(users) = &in_use {
                bail!(
                    "refusing to write to {}: it is in use ({users}); unmount it / stop what holds \
                     it, or pick another device (--allow-write does not override this)",
                    path.display()
                );
            }
            let f = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_EXCL)
                .open(path)
                .map_err(|e| exclusive_open_error(path, e))?;
            exclusive = Some(f);
        }
        Ok(Target {
            path: path.to_path_buf(),
            kind: TargetKind::BlockDevice,
            size_bytes: sectors * 512,
            logical_block_bytes,
            allow_write,
            overwrite_data: writes == Writes::OverData,
            in_use,
            devno: Some(devno),
            _exclusive: exclusive,
        })
    }

    /// Refuse writes over data ([`signatures`]: partitions, partition tables,
    /// filesystems, RAID and LVM members) on a block device unless `--overwrite-data`
    /// said it may go. `writes` are the byte ranges `[start, end)` to be written; call
    /// it before the first write.
    pub fn check_data(&self, writes: &[(u64, u64)]) -> Result<()> {
        if self.kind != TargetKind::BlockDevice || self.overwrite_data || writes.is_empty() {
            return Ok(());
        }
        let Some(devno) = &self.devno else {
            return Ok(());
        };
        let sys = Path::new("/sys/dev/block").join(devno);
        let found = signatures::data_on(&self.path, &sys, self.size_bytes);
        match signatures::refusal(&self.path, &found, writes) {
            Some(line) => bail!("{line}"),
            None => Ok(()),
        }
    }

    /// Refuse writes the user did not allow (block devices only; files and directories
    /// hold only what mmcab created or was pointed at explicitly).
    pub fn check_write(&self, what: &str) -> Result<()> {
        if self.kind != TargetKind::BlockDevice {
            return Ok(());
        }
        if let Some(users) = &self.in_use {
            bail!(
                "refusing {what}: {} is in use ({users}); unmount it or pick another device",
                self.path.display()
            );
        }
        if !self.allow_write {
            bail!(
                "{what} writes to block device {}, destroying its data: pass --allow-write if \
                 that is what you want",
                self.path.display()
            );
        }
        Ok(())
    }

    /// For a block device that is gone since it was opened (the card was removed, its
    /// driver or host driver unbound): what shows it. I/O on the open descriptor then
    /// fails with whatever errno the kernel picks for a disk being deleted (ENOSPC past
    /// the capacity it sets to 0 first, on Linux 7.2, see docs/kernel-facts.md), so the
    /// errno alone would mislead. A disk whose capacity has dropped to 0 is given up to
    /// 2 s to leave /sys/dev/block.
    pub fn vanished(&self) -> Option<String> {
        let devno = self.devno.as_ref()?;
        let sys = Path::new("/sys/dev/block").join(devno);
        let gone = || {
            Some(format!(
                "{} is gone (no {}): the card was removed or its driver unbound",
                self.path.display(),
                sys.display()
            ))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            match read_trimmed(sys.join("size")) {
                Err(_) if !sys.exists() => return gone(),
                Ok(sectors) if sectors == "0" => {}
                _ => return None,
            }
            if std::time::Instant::now() >= deadline {
                return Some(format!(
                    "{} has no capacity left ({} is 0): the disk is being removed",
                    self.path.display(),
                    sys.join("size").display()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The file one job clone works on (for block devices: the device itself).
    pub fn path_for(&self, workload: &str, job: &str, clone: u32) -> PathBuf {
        match self.kind {
            TargetKind::Directory => self.path.join(format!("mmcab.{workload}.{job}.{clone}")),
            _ => self.path.clone(),
        }
    }

    /// Open the target (or a clone's file) for a job's I/O.
    pub fn open_io(&self, path: &Path, write: bool, direct: bool) -> Result<File, OpenIoError> {
        let mut opts = OpenOptions::new();
        opts.read(true).write(write);
        if direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        opts.open(path).map_err(|e| {
            if direct && e.raw_os_error() == Some(libc::EINVAL) {
                OpenIoError::NoDirect(anyhow::anyhow!(
                    "{}: the filesystem does not support O_DIRECT (tmpfs does not): set direct = false \
                     in the job or use a target on a block device",
                    path.display()
                ))
            } else {
                OpenIoError::Io(e)
            }
        })
    }
}

/// Why [`Target::open_io`] failed.
#[derive(Debug)]
pub enum OpenIoError {
    /// The filesystem refuses O_DIRECT: the job must change (bad input, not a failed I/O).
    NoDirect(anyhow::Error),
    /// The open failed with this error (a failed I/O on the target).
    Io(std::io::Error),
}

/// Whether `dir` holds device nodes: /dev itself (where `/dev/mmcblk0p2` would be) or its
/// `disk/by-*` and `mapper` directories. A target named there that does not exist is a
/// device misnamed, never a file to create (devtmpfs would take it, in RAM). `/dev/shm`,
/// a tmpfs for files, is not among them.
fn is_device_directory(dir: &Path) -> bool {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir == Path::new("/dev") || dir.starts_with("/dev/disk") || dir.starts_with("/dev/mapper")
}

/// Logical block size of the block device a filesystem lives on (512 when unknown).
fn fs_logical_block_bytes(dev: u64) -> u64 {
    logical_block_bytes(&Path::new("/sys/dev/block").join(devno(dev)))
}

/// `queue/logical_block_size` of the disk whose sysfs dir is `sys`; a partition has no
/// queue of its own and takes its disk's, one level up (512 when unknown).
fn logical_block_bytes(sys: &Path) -> u64 {
    for q in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(s) = fs::read_to_string(sys.join(q)) {
            if let Ok(v) = s.trim().parse() {
                return v;
            }
        }
    }
    512
}

/// The exclusive open of a block device failed: say why in terms of what the user can do.
fn exclusive_open_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(libc::EBUSY) => {
            "something else has it open for exclusive use (a mount, a filesystem tool); stop it \
             and retry"
        }
        // The node exists but the disk behind it is not (or no longer) openable: add_disk()
        // creates the node before the disk can be opened, and a removed card leaves it briefly.
        Some(libc::ENXIO) | Some(libc::ENODEV) => {
            "the disk behind the node is not there (being added or removed: the card was just \
             probed, re-initialised or lost); check dmesg and retry"
        }
        Some(libc::EACCES) | Some(libc::EPERM) => "permission denied; run mmcab as root",
        _ => "retry, or check dmesg",
    };
    anyhow::Error::new(e).context(format!("cannot open {} exclusively: {why}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_exclusive_open_names_its_cause() {
        let msg = |errno| {
            format!(
                "{:#}",
                exclusive_open_error(
                    Path::new("/dev/mmcblk0"),
                    std::io::Error::from_raw_os_error(errno)
                )
            )
        };
        assert!(
            msg(libc::EBUSY).contains("open for exclusive use"),
            "{}",
            msg(libc::EBUSY)
        );
        let enxio = msg(libc::ENXIO);
        assert!(
            enxio.contains("not there") && !enxio.contains("exclusive use"),
            "{enxio}"
        );
        assert!(msg(libc::EACCES).contains("as root"));
    }

    #[test]
    fn missing_file_in_missing_directory_is_explained() {
        let err = Target::open(Path::new("/nonexistent-dir-mmcab/f"), false).unwrap_err();
        assert!(
            format!("{err:#}").contains("create the directory"),
            "{err:#}"
        );
    }

    #[test]
    fn a_missing_device_node_is_no_file_to_create() {
        let path = Path::new("/dev/mmcblk97p2");
        let err = Target::open(path, true).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("does not exist: no such device") && msg.contains("mmcab info"),
            "{msg}"
        );
        assert!(!path.exists(), "{} created", path.display());
        assert!(is_device_directory(Path::new("/dev/disk/by-id")));
        assert!(is_device_directory(Path::new("/dev/mapper")));
        assert!(!is_device_directory(Path::new("/dev/shm")));
        assert!(!is_device_directory(Path::new("/tmp")));
    }

    #[test]
    fn files_and_directories_open_without_allow_write() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let t = Target::open(dir.path(), false).unwrap();
        assert_eq!(t.kind, TargetKind::Directory);
        t.check_write("test").unwrap();
        let f = Target::open(&dir.path().join("new"), false).unwrap();
        assert_eq!((f.kind, f.size_bytes), (TargetKind::File, 0));
        assert!(t.path_for("w", "j", 2).ends_with("mmcab.w.j.2"));
    }
}
