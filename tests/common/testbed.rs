//! Run shell command lines in the emulated-eMMC guest (`testbed/run`) from integration
//! tests: a real Linux MMC stack (QEMU ast2600-evb, Debian armmp 6.12 or 7.x) with the
//! static armv7 `mmcab` on PATH and `/out` brought back to the host; or, with
//! `.arch("arm64")`, the arm64 guest (QEMU virt, an SD card on sdhci-pci, Debian arm64
//! 6.12, the static aarch64 `mmcab`). What the guests are and what they show:
//! testbed/README.md.
//!
//! Use it from the modules of tests/guest/ (the tier 3 binary: every test that boots a
//! guest lives there). Every such test carries the ignore attribute below, so plain
//! `cargo test` lists it as ignored with the reason; `scripts/test-all` (root, after
//! `testbed/setup`) runs it with `--include-ignored`. Forced to run without the testbed, a
//! test fails naming `testbed/setup`: it never passes without booting.
//!
//! ```ignore
//! use crate::common::testbed;
//!
//! #[test]
//! #[ignore = "needs root and the QEMU testbed (testbed/setup)"]
//! fn info_on_8_bit_bus() {
//!     let run = testbed::Guest::new("info_8bit")
//!         .kernel("7")
//!         .bus_width(8)
//!         .run("mmcab info --json /dev/mmcblk0 > /out/info.json");
//!     run.assert_success();
//!     let info: serde_json::Value = run.out_json("info.json");
//!     assert_eq!(info["ios"]["bus_width"], 8);
//! }
//! ```
//!
//! Each boot costs 20-40 s of wall time on 2 cores: put several checks in one command
//! line (copy what the host should compare into /out) instead of booting per check.
//! `testbed/run`'s exit status is the guest command's; 124 is the testbed's timeout and
//! 125 a testbed failure (boot, options, damaged payload), with the reason on stderr.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The host cores the guests of this test process keep busy at once: the guest tier is
/// one binary run with `--test-threads=2`, so two guests of different modules may want
/// to run together. Every guest takes one core: one with `--icount` runs its vCPUs
/// round-robin on one thread, the arm64 guest has one vCPU, and a QEMU-card guest's two
/// vCPUs (multi-threaded TCG) are mostly idle, waiting on the card: its 24 boots of the
/// tier (2026-12-03, 2-core machine) took 812 s one after the other and 411 s two at a
/// time, each within 10% of its time alone (quickstart_report 114 s against 109).
/// [`Guest::run`] takes its share for the boot and gives it back after. Tests that start
/// guests themselves take a share with [`with_cores`]: bench/boots two (it boots two at
/// a time), LAVA's dispatcher one. The machine's count, or MMCAB_TEST_GUEST_CORES.
fn core_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        std::env::var("MMCAB_TEST_GUEST_CORES")
            .ok()
            .and_then(|v| v.parse().ok())
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(2)
            .max(1)
    })
}

static CORES_BUSY: Mutex<usize> = Mutex::new(0);
static CORES_FREED: Condvar = Condvar::new();

/// A share of the host's cores held by a running guest (see [`core_budget`]); given back
/// when dropped. The field is how many.
struct Cores(usize);

/// Waits until `n` cores (at most the budget) are free for a guest and takes them.
fn cores(n: usize) -> Cores {
    let n = n.clamp(1, core_budget());
    let mut busy = CORES_BUSY.lock().unwrap_or_else(|e| e.into_inner());
    while *busy + n > core_budget() {
        busy = CORES_FREED.wait(busy).unwrap_or_else(|e| e.into_inner());
    }
    *busy += n;
    Cores(n)
}

impl Drop for Cores {
    fn drop(&mut self) {
        let mut busy = CORES_BUSY.lock().unwrap_or_else(|e| e.into_inner());
        *busy -= self.0;
        CORES_FREED.notify_all();
    }
}

/// Runs `boot` (anything that boots guests) holding `n` of the host's cores (see
/// [`core_budget`]), logs its time under `label` ([`log_boot`]) and returns what it
/// returned with its wall time, the wait for the cores left out.
pub fn with_cores<T>(label: &str, n: usize, boot: impl FnOnce() -> T) -> (T, Duration) {
    let asked = Instant::now();
    let held = cores(n);
    let started = Instant::now();
    let out = boot();
    let wall = started.elapsed();
    log_boot(label, held.0, started - asked, wall);
    (out, wall)
}

/// The repository root (where `testbed/run` lives).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// testbed/run with `args`, for its checks that stop before any boot (bad options,
/// `--card sim:help`): no mmcab binary is needed, so none is named.
pub fn run_script(args: &[&str]) -> std::process::Output {
    std::process::Command::new(repo_root().join("testbed/run"))
        .args(args)
        .env("MMCAB_TESTBED_MMCAB", "/nonexistent-not-needed")
        .output()
        .unwrap()
}

/// The testbed's cache: `$MMCAB_TESTBED_CACHE` or /var/cache/mmcab-testbed, as testbed/setup.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("MMCAB_TESTBED_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/mmcab-testbed"))
}

/// The full kernel release behind an alias of the cache ("6.12" -> "6.12.95+deb12-armmp").
pub fn kernel_release(alias: &str) -> String {
    let path = cache_dir().join("kernels").join(alias).join("version");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}: run testbed/setup", path.display()))
        .trim()
        .to_string()
}

/// What is missing for a boot, or None when the cache is complete.
fn missing_parts() -> Option<String> {
    let cache = cache_dir();
    let wanted = [
        "kernels/6.12/vmlinuz",
        "kernels/7/vmlinuz",
        "kernels/6.1/vmlinuz",
        "kernels/arm64-6.12/vmlinuz",
        "busybox/busybox",
        "busybox-arm64/busybox",
    ];
    let missing: Vec<String> = wanted
        .iter()
        .filter(|p| !cache.join(p).exists())
        .map(|p| cache.join(p).display().to_string())
        .collect();
    let qemu = [
        "/usr/bin/qemu-system-arm",
        "/usr/bin/qemu-system-aarch64",
        "/usr/bin/fdtput",
    ];
    let missing: Vec<String> = missing
        .into_iter()
        .chain(
            qemu.iter()
                .filter(|p| !Path::new(p).exists())
                .map(|p| p.to_string()),
        )
        .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// Panics, naming `testbed/setup`, unless the testbed's cache and QEMU are there.
pub fn require_setup() {
    if let Some(missing) = missing_parts() {
        panic!("testbed not set up (missing: {missing}): run testbed/setup as root");
    }
}

/// The armv7 mmcab the guest runs: `$MMCAB_TESTBED_MMCAB`, else built once per test
/// process with `testbed/build-armv7 --profile testbed` (seconds when warm).
pub fn mmcab_armv7() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    guest_binary(&BINARY, "MMCAB_TESTBED_MMCAB", "testbed/build-armv7")
}

/// The aarch64 mmcab the arm64 guest runs: `$MMCAB_TESTBED_MMCAB_ARM64`, else built once
/// per test process with `testbed/build-aarch64 --profile testbed`.
pub fn mmcab_aarch64() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    guest_binary(
        &BINARY,
        "MMCAB_TESTBED_MMCAB_ARM64",
        "testbed/build-aarch64",
    )
}

/// The binary named by `env`, else the one `script` builds, once per `cell`.
fn guest_binary(cell: &OnceLock<PathBuf>, env: &str, script: &str) -> PathBuf {
    cell.get_or_init(|| match std::env::var_os(env) {
        Some(p) => PathBuf::from(p),
        None => build_static(script),
    })
    .clone()
}

/// Runs a build script of testbed/ with the testbed profile; the binary's path.
fn build_static(script: &str) -> PathBuf {
    let script = repo_root().join(script);
    let out = Command::new(&script)
        .args(["--profile", "testbed"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// One boot of the guest, configured like `testbed/run`'s options.
#[derive(Debug, Clone)]
pub struct Guest {
    label: String,
    arch: String,
    kernel: String,
    bus_width: Option<u8>,
    card: Option<String>,
    icount: Option<String>,
    image_size: Option<String>,
    image: Option<PathBuf>,
    throttle_bps: Option<u64>,
    blkdebug: Option<PathBuf>,
    modules: Vec<String>,
    mmc_test: bool,
    timeout: Duration,
}

impl Guest {
    /// `label` names the host directory /out is copied to (made unique per call).
    /// Defaults: armv7 (the eMMC guest), QEMU's card, kernel 6.12, bus width 4, a fresh
    /// 256 MiB image, timeout 300 s. With `.card("sim...")` the module's own defaults
    /// apply unless set (8-bit bus, 4 GiB).
    pub fn new(label: &str) -> Guest {
        Guest {
            label: label.to_string(),
            arch: "armv7".to_string(),
            kernel: "6.12".to_string(),
            bus_width: None,
            card: None,
            icount: None,
            image_size: None,
            image: None,
            throttle_bps: None,
            blkdebug: None,
            modules: Vec::new(),
            mmc_test: false,
            timeout: Duration::from_secs(300),
        }
    }
    /// "armv7" (ast2600-evb, eMMC) or "arm64" (virt, SD card on sdhci-pci; kernel 6.12,
    /// bus width 4 only).
    pub fn arch(mut self, arch: &str) -> Guest {
        self.arch = arch.to_string();
        self
    }
    /// "6.12", "7" (the newest 7.x in the cache) or a full release name.
    pub fn kernel(mut self, kernel: &str) -> Guest {
        self.kernel = kernel.to_string();
        self
    }
    /// 4 or 8: the eMMC node's `bus-width` in the DTB (QEMU's card), or the sim card's
    /// `bus_width` parameter.
    pub fn bus_width(mut self, bits: u8) -> Guest {
        self.bus_width = Some(bits);
        self
    }
    /// `--card`: "qemu" (the default) or "sim[,PARAM=VALUE...]", the simulated eMMC 5.1
    /// of testbed/emmcsim/ (armv7 only; the module is built for the kernel by testbed/run),
    /// or "sim:PRESET[,PARAM=VALUE...]", a preset of testbed/presets/ (with its guest CPU:
    /// leave `icount` unset).
    pub fn card(mut self, card: &str) -> Guest {
        self.card = Some(card.to_string());
        self
    }
    /// `--icount SHIFT`: the guest clock advances 2^SHIFT ns per instruction and skips
    /// idle time; with the sim card its timing is then deterministic (tests use 1).
    pub fn icount(mut self, shift: u8) -> Guest {
        self.icount = Some(shift.to_string());
        self
    }
    /// `--icount off`: the guest clock is the host's (a sim-card boot whose timing does
    /// not matter boots faster this way).
    pub fn icount_off(mut self) -> Guest {
        self.icount = Some("off".to_string());
        self
    }
    /// Whether this boot uses the simulated eMMC module.
    fn sim_card(&self) -> bool {
        self.card.as_deref().is_some_and(|c| c.starts_with("sim"))
    }
    /// Size of the fresh sparse image, as `truncate -s` takes it (a power of two: "64M").
    pub fn image_size(mut self, size: &str) -> Guest {
        self.image_size = Some(size.to_string());
        self
    }
    /// Use this image file as the eMMC (written in place) instead of a fresh one.
    pub fn image(mut self, path: &Path) -> Guest {
        self.image = Some(path.to_path_buf());
        self
    }
    /// QEMU `throttling.bps-total` on the eMMC drive (bytes per second).
    pub fn throttle_bps(mut self, bytes_per_s: u64) -> Guest {
        self.throttle_bps = Some(bytes_per_s);
        self
    }
    /// A QEMU blkdebug rules file (error injection) under the eMMC.
    pub fn blkdebug(mut self, rules: &Path) -> Guest {
        self.blkdebug = Some(rules.to_path_buf());
        self
    }
    /// More kernel modules to load at boot (`--modules`), e.g. "dm-flakey"; a
    /// device-mapper module brings dmsetup along.
    pub fn modules(mut self, names: &[&str]) -> Guest {
        self.modules = names.iter().map(|n| n.to_string()).collect();
        self
    }
    /// `--mmc-test`: the kernel's mmc_test.ko (testbed/build-mmctest) loaded once
    /// mmc_block has the card (armv7 only).
    pub fn mmc_test(mut self) -> Guest {
        self.mmc_test = true;
        self
    }
    pub fn timeout(mut self, timeout: Duration) -> Guest {
        self.timeout = timeout;
        self
    }

    /// The `testbed/run` arguments for this boot (without the command line).
    pub fn args(&self, out_dir: &Path) -> Vec<String> {
        let binary = match self.arch.as_str() {
            "arm64" => mmcab_aarch64(),
            _ => mmcab_armv7(),
        };
        let mut args = vec![
            "--arch".to_string(),
            self.arch.clone(),
            "--kernel".to_string(),
            self.kernel.clone(),
            "--timeout".to_string(),
            self.timeout.as_secs().max(1).to_string(),
            "--mmcab".to_string(),
            binary.display().to_string(),
            "--out".to_string(),
            out_dir.display().to_string(),
        ];
        let mut opt = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                args.push(name.to_string());
                args.push(v);
            }
        };
        // QEMU's card: the DTB's width, 4 unless set. The sim card: the module's default
        // unless set (`--bus-width` becomes its bus_width parameter).
        let bus_width = match self.sim_card() {
            true => self.bus_width,
            false => Some(self.bus_width.unwrap_or(4)),
        };
        opt("--bus-width", bus_width.map(|b| b.to_string()));
        opt("--card", self.card.clone());
        opt("--icount", self.icount.clone());
        opt("--image-size", self.image_size.clone());
        opt(
            "--image",
            self.image.as_ref().map(|p| p.display().to_string()),
        );
        opt("--throttle-bps", self.throttle_bps.map(|n| n.to_string()));
        opt(
            "--modules",
            (!self.modules.is_empty()).then(|| self.modules.join(",")),
        );
        opt(
            "--blkdebug",
            self.blkdebug.as_ref().map(|p| p.display().to_string()),
        );
        if self.mmc_test {
            args.push("--mmc-test".to_string());
        }
        args
    }

    /// Boots, runs `command_line` under the guest's /bin/sh and returns what came back.
    /// Never panics on the guest's status: check it with [`GuestRun::assert_success`] or
    /// [`GuestRun::status`].
    pub fn run(&self, command_line: &str) -> GuestRun {
        require_setup();
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("testbed");
        // Out dirs of earlier test processes with this label are stale: drop them.
        let ours = format!("{}-{}-", self.label, std::process::id());
        for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let label = name.rsplitn(3, '-').nth(2);
            if label == Some(self.label.as_str()) && !name.starts_with(&ours) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let out_dir = base.join(format!("{ours}{}", SEQ.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&out_dir);
        let args = self.args(&out_dir);
        let script = repo_root().join("testbed/run");
        let boot = || {
            let (out, wall) = with_cores(&self.label, 1, || {
                Command::new(&script)
                    .args(&args)
                    .arg("--")
                    .arg(command_line)
                    .output()
                    .unwrap_or_else(|e| panic!("{}: {e}", script.display()))
            });
            GuestRun {
                description: format!("testbed/run {} -- {command_line:?}", args.join(" ")),
                status: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                out_dir: out_dir.clone(),
                wall,
            }
        };
        let first = boot();
        if !first.testbed_failed_before_the_guest_ran() {
            return first;
        }
        // The testbed itself failed before the guest's command could run (QEMU ended at
        // once, a cached part was replaced under it): that is not what a test checks, so
        // boot once more, saying why on stderr. A second such failure is returned.
        eprintln!(
            "{}: testbed failure before the guest ran; booting again. The first boot:\n{}",
            self.label,
            first.report()
        );
        boot()
    }
}

/// With MMCAB_GUEST_TIMES=FILE (scripts/test-all sets it), one line per boot appended to
/// FILE: label, cores taken, seconds waited for them, seconds booted; for finding where
/// the guest tier's time goes.
fn log_boot(label: &str, cores: usize, waited: Duration, wall: Duration) {
    use std::io::Write;
    let Some(path) = std::env::var_os("MMCAB_GUEST_TIMES") else {
        return;
    };
    let line = format!(
        "{label}\t{cores}\t{:.1}\t{:.1}\n",
        waited.as_secs_f64(),
        wall.as_secs_f64()
    );
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path);
    if let Err(e) = file.and_then(|mut f| f.write_all(line.as_bytes())) {
        eprintln!("MMCAB_GUEST_TIMES={}: {e}", path.to_string_lossy());
    }
}

/// What one boot brought back.
#[derive(Debug)]
pub struct GuestRun {
    /// The testbed/run invocation, for messages.
    pub description: String,
    /// testbed/run's exit status: the guest command's, or 124 (timeout) / 125 (testbed
    /// failure); None if testbed/run itself died of a signal.
    pub status: Option<i32>,
    /// The guest command's stdout, as printed by testbed/run.
    pub stdout: String,
    /// The guest command's stderr, followed by testbed/run's own lines (`testbed/run: ...`).
    pub stderr: String,
    /// Where the guest's /out was copied (kept after the test for inspection).
    pub out_dir: PathBuf,
    /// Host wall time of the whole boot.
    pub wall: Duration,
}

impl GuestRun {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
    /// testbed/run's own failure (status 125) within its first seconds, with no guest
    /// output: the guest's command never ran. A parameter the simulated card refused is
    /// also a 125 before any command, but an answer, not a failure (tests check it).
    fn testbed_failed_before_the_guest_ran(&self) -> bool {
        self.status == Some(125)
            && self.stdout.is_empty()
            && self.wall < Duration::from_secs(20)
            && !self.stderr.contains("emmcsim: invalid parameter")
    }

    /// Everything about the run, for assertion messages: status and output first, the
    /// invocation (with the whole guest script) last and cut to its first 2000 characters,
    /// so that a log that keeps a message's head and tail keeps the cause.
    pub fn report(&self) -> String {
        let mut description = self.description.clone();
        if let Some((cut, _)) = description.char_indices().nth(2000) {
            description.truncate(cut);
            description.push_str(" [...]");
        }
        format!(
            "status: {:?} after {:.1} s\n--- stderr\n{}--- stdout\n{}--- /out copied to {}\n--- {}",
            self.status,
            self.wall.as_secs_f64(),
            self.stderr,
            self.stdout,
            self.out_dir.display(),
            description,
        )
    }
    /// Panics with the full report unless the guest command exited 0.
    pub fn assert_success(&self) -> &GuestRun {
        assert!(self.success(), "guest command failed:\n{}", self.report());
        self
    }
    /// A file of the guest's /out, as text (panics with the report if missing).
    pub fn out_text(&self, rel: &str) -> String {
        let path = self.out_dir.join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the guest did not write /out/{rel})\n{}",
                path.display(),
                self.report()
            )
        })
    }
    /// A JSON file of the guest's /out.
    pub fn out_json(&self, rel: &str) -> serde_json::Value {
        let text = self.out_text(rel);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("/out/{rel} is not JSON: {e}\n{text}\n{}", self.report()))
    }
}

/// The entry of knob `name` in the output of `mmcab knobs --json` (`{schema, device,
/// knobs: [...]}`).
pub fn knob<'a>(knobs: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    assert_eq!(knobs["schema"], 1, "mmcab knobs --json schema: {knobs}");
    knobs["knobs"]
        .as_array()
        .expect("mmcab knobs --json has a knobs array")
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no knob {name} in {knobs}"))
}

// Parsers for kernel files copied out of the guest, written independently of mmcab's own
// (a test comparing mmcab with the kernel must not share mmcab's parser).

/// A sysfs/debugfs hex number: "0x0000aa" or "4000014f".
pub fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16)
        .unwrap_or_else(|e| panic!("not hex: {s:?}: {e}"))
}

/// The label in parentheses of a debugfs `ios` line: "bus width:\t3 (8 bits)" -> "8 bits".
pub fn ios_label(ios: &str, key: &str) -> String {
    let line = ios
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(key))
        .unwrap_or_else(|| panic!("ios has no {key:?} line:\n{ios}"));
    let value = line.split_once(':').unwrap().1.trim();
    match (value.find('('), value.rfind(')')) {
        (Some(a), Some(b)) => value[a + 1..b].to_string(),
        _ => value.to_string(),
    }
}

/// The bus width in bits from debugfs `ios` ("bus width:\t3 (8 bits)" -> 8).
pub fn ios_bits(ios: &str) -> u64 {
    let label = ios_label(ios, "bus width");
    label
        .strip_suffix(" bits")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bus width label {label:?}"))
}

/// debugfs `ext_csd` (1024 hex digits, byte 0 first) as 512 bytes.
pub fn hex_bytes(hex: &str) -> Vec<u8> {
    let hex = hex.trim();
    assert_eq!(hex.len(), 1024, "EXT_CSD hex is not 512 bytes: {hex}");
    (0..512)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}
