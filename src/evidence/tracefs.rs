//! A private tracefs instance (`instances/mmcab-<pid>-<n>`) with the two mmc events
//! enabled and filtered to the card's host, so other users of tracing (the top-level
//! buffer, other instances) are left alone; removed again when dropped. Instances left
//! behind by an mmcab that was killed are removed when the next one starts.
//!
//! A [`Capture`] empties the buffer, switches tracing on and starts a thread that looks
//! at the buffer's fill every [`DRAIN_INTERVAL`] (`per_cpu/cpuN/stats`, `bytes:`) and
//! reads `trace_pipe` (non-blocking, each line added up in a [`RequestStats`]) only once
//! a CPU's buffer is [`DRAIN_AT_PERCENT`] full: a run whose events fit in the buffer is
//! read after its last I/O, outside its timing (the kernel formats each event as it is
//! read, the costly part), and a long one stays within memory. [`Capture::finish`]
//! switches tracing off, reads the rest and counts what the ring buffer lost
//! (`per_cpu/cpuN/stats` overrun and dropped events, and `[LOST N EVENTS]` lines).

use super::requests::RequestStats;
use anyhow::{bail, Context, Result};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Per-CPU ring buffer of the instance. At ~150 bytes per event (seen in the testbed)
/// this holds ~14000 events per CPU, more than a fast eMMC makes between two drains.
pub const BUFFER_KB: u32 = 2048;
/// How often the capture thread looks at the buffer's fill.
pub const DRAIN_INTERVAL: Duration = Duration::from_millis(100);
/// Fill of a CPU's buffer at which the run's events are read while it goes on.
pub const DRAIN_AT_PERCENT: u64 = 50;
/// Name prefix of mmcab's instances.
const PREFIX: &str = "mmcab-";
const EVENTS: [&str; 2] = ["mmc_request_start", "mmc_request_done"];

/// Where tracefs is: a `tracefs` mount with `instances/` (Linux >= 4.1 mounts it at
/// /sys/kernel/tracing), else `tracing/` under the debugfs mount (mounted on demand by
/// the kernel).
pub fn find_root() -> Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut candidates: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            let (_src, dir, fstype) = (it.next()?, it.next()?, it.next()?);
            (fstype == "tracefs").then(|| PathBuf::from(dir.replace("\\040", " ")))
        })
        .collect();
    candidates.push(PathBuf::from("/sys/kernel/tracing"));
    if let Some(debugfs) = crate::device::discover::debugfs_mount_point() {
        candidates.push(debugfs.join("tracing"));
    }
    candidates
        .iter()
        .find(|c| c.join("instances").is_dir())
        .cloned()
        .with_context(|| {
            format!(
                "tracefs is not mounted (looked in {}): mount it with `mount -t tracefs nodev \
                 /sys/kernel/tracing` (kernel with CONFIG_TRACING)",
                candidates
                    .iter()
                    .map(|c| c.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// A private instance tracing one host's requests.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    host: String,
    /// What did not go as asked but does not stop tracing (buffer size, clock, filter).
    pub notes: Vec<String>,
}

impl Instance {
    /// Create an instance under tracefs `root` tracing the requests of `host` (`mmc0`).
    pub fn create(root: &Path, host: &str) -> Result<Instance> {
        let start = root.join("events/mmc/mmc_request_start");
        if !start.is_dir() {
            bail!(
                "{} has no mmc events ({} missing): the kernel lacks the mmc tracepoints \
                 (CONFIG_TRACING, Linux >= 4.9)",
                root.display(),
                start.display()
            );
        }
        remove_stale(root);
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join("instances").join(name);
        std::fs::create_dir(&dir).map_err(|e| {
            let why = if matches!(e.kind(), ErrorKind::PermissionDenied)
                || e.raw_os_error() == Some(libc::EROFS)
            {
                "not permitted: run as root, with tracefs mounted read-write"
            } else {
                "cannot create a tracing instance"
            };
            anyhow::anyhow!("{}: {e}: {why}", dir.display())
        })?;
        let mut instance = Instance {
            dir,
            host: host.to_string(),
            notes: Vec::new(),
        };
        instance.setup()?;
        Ok(instance)
    }

    fn setup(&mut self) -> Result<()> {
        self.write("tracing_on", "0")?;
        if let Err(err) = self.write("buffer_size_kb", &BUFFER_KB.to_string()) {
            self.notes
                .push(format!("kept the default buffer size ({err:#})"));
        }
        let clocks = std::fs::read_to_string(self.dir.join("trace_clock")).unwrap_or_default();
        if let Some(clock) = ["mono", "global"].into_iter().find(|c| {
            clocks
                .split_whitespace()
                .any(|w| w.trim_matches(['[', ']']) == *c)
        }) {
            // Start on one CPU, done on another: the clock must be comparable across CPUs.
            self.write("trace_clock", clock)?;
        } else {
            self.notes.push(format!(
                "no cross-CPU trace clock (have: {}): latencies may be off",
                clocks.trim()
            ));
        }
        for event in EVENTS {
            let filter = format!("name == \"{}\"", self.host);
            if let Err(err) = self.write(&format!("events/mmc/{event}/filter"), &filter) {
                self.notes.push(format!(
                    "{event}: filter refused ({err:#}): other hosts' events are dropped while parsing"
                ));
            }
            self.write(&format!("events/mmc/{event}/enable"), "1")?;
        }
        Ok(())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The host whose requests it traces (`mmc0`).
    pub fn host(&self) -> &str {
        &self.host
    }

    fn write(&self, file: &str, value: &str) -> Result<()> {
        write(&self.dir, file, value)
    }

    fn clear(&self) -> Result<()> {
        // Opening `trace` with O_TRUNC empties the instance's buffers.
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.dir.join("trace"))
            .map(drop)
            .with_context(|| format!("clearing {}/trace", self.dir.display()))
    }

    /// Trace the host while `f` runs: the buffer emptied, tracing on around `f`, and the
    /// events it left as the kernel prints them (`trace`), for a probe of a few requests
    /// whose exact fields matter (the buffer holds thousands).
    pub fn trace_of<T>(&self, f: impl FnOnce() -> T) -> Result<(T, String)> {
        self.clear()?;
        self.write("tracing_on", "1")?;
        let result = f();
        self.write("tracing_on", "0")?;
        let path = self.dir.join("trace");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Ok((result, text))
    }

    /// Empty the buffer, switch tracing on and start reading it.
    pub fn capture(&self) -> Result<Capture> {
        self.clear()?;
        let pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.dir.join("trace_pipe"))
            .with_context(|| format!("opening {}/trace_pipe", self.dir.display()))?;
        let lost_before = lost_so_far(&self.dir);
        let stop = Arc::new(AtomicBool::new(false));
        let host = self.host.clone();
        let flag = stop.clone();
        let fill = Fill::new(&self.dir);
        let thread = std::thread::Builder::new()
            .name("mmcab-trace".into())
            .spawn(move || drain(pipe, &host, &flag, &fill))
            .context("starting the trace reader thread")?;
        self.write("tracing_on", "1")?;
        Ok(Capture {
            dir: self.dir.clone(),
            thread: Some(thread),
            stop,
            lost_before,
        })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.write("tracing_on", "0");
        for event in EVENTS {
            let _ = self.write(&format!("events/mmc/{event}/enable"), "0");
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn write(dir: &Path, file: &str, value: &str) -> Result<()> {
    let path = dir.join(file);
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{value}\n").as_bytes()))
        .with_context(|| format!("writing '{value}' to {}", path.display()))
}

/// Overrun plus dropped events of every CPU's ring buffer of the instance so far.
fn lost_so_far(dir: &Path) -> u64 {
    let Ok(cpus) = std::fs::read_dir(dir.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|cpu| std::fs::read_to_string(cpu.path().join("stats")).ok())
        .map(|text| lost_in_stats(&text))
        .sum()
}

/// Remove `instances/mmcab-<pid>-<n>` of processes that no longer exist.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root.join("instances")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// `overrun:` plus `dropped events:` of a `per_cpu/cpuN/stats` file.
pub fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(key, _)| matches!(key.trim(), "overrun" | "dropped events"))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// Tracing is on and a thread reads it.
pub struct Capture {
    /// The instance's directory (the instance outlives its captures).
    dir: PathBuf,
    thread: Option<std::thread::JoinHandle<Result<RequestStats>>>,
    stop: Arc<AtomicBool>,
    lost_before: u64,
}

impl Capture {
    /// Switch tracing off, read what is left and return what the run showed; events the
    /// ring buffer lost are in `lost_events`.
    pub fn finish(mut self) -> Result<RequestStats> {
        let off = write(&self.dir, "tracing_on", "0");
        let mut stats = self.join()?;
        off?;
        let lost = lost_so_far(&self.dir).saturating_sub(self.lost_before);
        stats.lost_events = stats.lost_events.max(lost);
        Ok(stats)
    }

    fn join(&mut self) -> Result<RequestStats> {
        self.stop.store(true, Ordering::SeqCst);
        let thread = self
            .thread
            .take()
            .context("trace capture already finished")?;
        thread.thread().unpark();
        thread
            .join()
            .map_err(|_| anyhow::anyhow!("the trace reader thread panicked"))?
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = write(&self.dir, "tracing_on", "0");
            let _ = self.join();
        }
    }
}

/// How full the instance's per-CPU buffers are.
struct Fill {
    stats: Vec<PathBuf>,
    /// Bytes of one CPU's buffer.
    capacity: u64,
}

impl Fill {
    fn new(dir: &Path) -> Fill {
        let stats = std::fs::read_dir(dir.join("per_cpu"))
            .map(|cpus| cpus.flatten().map(|c| c.path().join("stats")).collect())
            .unwrap_or_default();
        let capacity = std::fs::read_to_string(dir.join("buffer_size_kb"))
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024;
        Fill { stats, capacity }
    }

    /// Whether some CPU's unread events reach [`DRAIN_AT_PERCENT`] of its buffer (also
    /// when that cannot be told: then reading is the safe side).
    fn high(&self) -> bool {
        if self.capacity == 0 || self.stats.is_empty() {
            return true;
        }
        self.stats.iter().any(|path| {
            let unread = std::fs::read_to_string(path).ok().and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("bytes:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            });
            unread.is_none_or(|b| b * 100 >= self.capacity * DRAIN_AT_PERCENT)
        })
    }
}

/// Read `trace_pipe` when the buffer fills up and when stopped, adding every complete
/// line up.
fn drain(
    mut pipe: std::fs::File,
    host: &str,
    stop: &AtomicBool,
    fill: &Fill,
) -> Result<RequestStats> {
    let mut stats = RequestStats::new(host);
    let mut buf = vec![0u8; 64 * 1024];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if !stopping && !fill.high() {
            std::thread::park_timeout(DRAIN_INTERVAL);
            continue;
        }
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    partial.extend_from_slice(&buf[..n]);
                    if let Some(end) = partial.iter().rposition(|&b| b == b'\n') {
                        let text = String::from_utf8_lossy(&partial[..end]);
                        for line in text.lines() {
                            stats.feed_line(line);
                        }
                        partial.drain(..=end);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context("reading trace_pipe"),
            }
        }
        if stopping {
            break;
        }
        std::thread::park_timeout(DRAIN_INTERVAL);
    }
    if !partial.is_empty() {
        stats.feed_line(&String::from_utf8_lossy(&partial));
    }
    stats.finish();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_events_in_per_cpu_stats() {
        let path = format!(
            "{}/tests/fixtures/trace/linux-7.2-lost-per-cpu-stats.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).unwrap();
        let per_cpu: Vec<u64> = text.split("== ").skip(1).map(lost_in_stats).collect();
        assert_eq!(per_cpu, vec![159, 128]);
    }

    #[test]
    fn events_are_read_during_a_run_only_once_a_buffer_is_half_full() {
        let dir = tempfile::tempdir().unwrap();
        // Nothing to tell the fill from: read.
        assert!(Fill::new(dir.path()).high());
        std::fs::write(dir.path().join("buffer_size_kb"), "1 (expanded: 1411)\n").unwrap();
        for cpu in ["cpu0", "cpu1"] {
            std::fs::create_dir_all(dir.path().join("per_cpu").join(cpu)).unwrap();
        }
        let stats = |cpu: &str, bytes: u64| {
            let text = format!("entries: 3\noverrun: 0\ncommit overrun: 0\nbytes: {bytes}\n");
            std::fs::write(dir.path().join("per_cpu").join(cpu).join("stats"), text).unwrap();
        };
        stats("cpu0", 100);
        stats("cpu1", 500);
        assert!(!Fill::new(dir.path()).high(), "500 of 1024 bytes");
        stats("cpu1", 512);
        assert!(Fill::new(dir.path()).high(), "512 of 1024 bytes");
    }

    #[test]
    fn a_tracefs_without_mmc_events_is_refused_with_the_reason() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("instances")).unwrap();
        let err = Instance::create(root.path(), "mmc0")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no mmc events") && err.contains("CONFIG_TRACING"),
            "{err}"
        );
        assert!(std::fs::read_dir(root.path().join("instances"))
            .unwrap()
            .next()
            .is_none());
    }

    #[test]
    fn stale_instances_of_dead_processes_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let instances = root.path().join("instances");
        // pid_max is at most 2^22: this pid cannot exist.
        let dead = instances.join("mmcab-4294967-0");
        let alive = instances.join(format!("mmcab-{}-7", std::process::id()));
        let other = instances.join("someone-else");
        for d in [&dead, &alive, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        remove_stale(root.path());
        assert!(!dead.exists() && alive.exists() && other.exists());
    }
}
