//! A board that boots from the card it measures, on a loop device with partitions
//! (root): a filesystem mounted from the first partition stands in for the root
//! filesystem, the second is the spare partition. The whole card is refused with a line
//! saying what can still run there; the spare partition runs with the block engines and
//! its evidence; a results directory on the card under test is refused.

use crate::common::cli::mmcab;
use crate::common::loop_device::LoopDevice;
use std::fs;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// ext4 on a partition, mounted in a temp dir under /dev/shm; unmounted on drop.
struct Mounted {
    dir: tempfile::TempDir,
}

impl Mounted {
    fn new(partition: &Path) -> Mounted {
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(partition)
            .status()
            .expect("run mkfs.ext4");
        assert!(ok.success(), "mkfs.ext4 {} failed", partition.display());
        let dir = tempfile::Builder::new()
            .prefix("mmcab-root.")
            .tempdir_in("/dev/shm")
            .unwrap();
        let ok = Command::new("mount")
            .arg(partition)
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount {} failed", partition.display());
        Mounted { dir }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
#[ignore = "needs root: loop devices, an ext4 mount"]
fn a_card_with_a_mounted_partition_runs_on_its_spare_partition_only() {
    // p1: 1 MiB .. 17 MiB (the "root filesystem"), p2: 17 MiB .. 64 MiB (spare).
    let card = LoopDevice::partitioned(64 * MIB, &[(2048, 32768), (34816, 96256)]);
    let disk = card.dev.to_str().unwrap().to_string();
    let (p1, p2) = (format!("{disk}p1"), format!("{disk}p2"));
    let root = Mounted::new(Path::new(&p1));
    let scratch = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = scratch.path().join("plan.toml");
    fs::write(
        &plan,
        "name = \"spare\"\n[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"w\"\n\
         rw = \"write\"\nsize = \"1M\"\n[[workload]]\nname = \"r\"\n[[workload.job]]\n\
         name = \"r\"\nrw = \"read\"\nsize = \"1M\"\n",
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let table = card.contents()[..512].to_vec();

    // The dry run says it first, and runs nothing.
    let out = mmcab(&["run", plan, "--device", &disk, "--allow-write", "--dry-run"]);
    let err = stderr(&out);
    assert!(
        out.status.success()
            && err.contains(&format!(
                "the run would stop before any I/O: refusing to write to {disk}: it is in use"
            ))
            && err.contains(&format!("--device {p2}")),
        "{err}"
    );
    // The whole card: refused, naming the mount and the spare partition.
    let out_dir = scratch.path().join("whole");
    let out = mmcab(&[
        "run",
        plan,
        "--device",
        &disk,
        "--allow-write",
        "--repeat",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let mount = root.dir.path().display().to_string();
    assert!(
        err.contains(&format!("refusing to write to {disk}: it is in use"))
            && err.contains(&format!("{p1} is mounted at {mount}"))
            && err.contains(&format!("--device {p2}"))
            && err.contains("sync or io_uring")
            && err.contains("boot from elsewhere")
            && err.contains("docs/board.md"),
        "{err}"
    );
    assert!(!out_dir.exists(), "nothing created");
    assert!(card.contents()[..512] == table[..], "nothing written");

    // The results on the card under test (on its mounted partition): refused.
    let on_card = root.dir.path().join("r");
    let out = mmcab(&[
        "run",
        plan,
        "--device",
        &p2,
        "--allow-write",
        "--repeat",
        "1",
        "--out",
        on_card.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "refusing to keep the results in {}: it is on {p1}, on the card under test ({p2})",
            on_card.display()
        )) && err.contains("--out"),
        "{err}"
    );
    assert!(!on_card.exists(), "nothing created");

    // The spare partition: runs, with the block statistics of the partition.
    let out_dir = scratch.path().join("spare");
    let out = mmcab(&[
        "run",
        plan,
        "--device",
        &p2,
        "--allow-write",
        "--repeat",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = fs::read_to_string(out_dir.join("runs.csv")).unwrap();
    assert!(runs.lines().count() > 4, "{runs}");
    let evidence = fs::read_to_string(out_dir.join("evidence.csv")).unwrap();
    assert_eq!(
        evidence.lines().count(),
        1 + 4 * 2,
        "per run and direction: {evidence}"
    );
    let header: Vec<&str> = evidence.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (direction, ios) = (col("direction"), col("stat_ios"));
    let written: u64 = evidence
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[direction] == "write")
        .map(|f| f[ios].parse::<u64>().unwrap())
        .sum();
    assert!(written > 0, "the partition's writes counted: {evidence}");
    assert!(card.contents()[..512] == table[..], "the table untouched");
}
