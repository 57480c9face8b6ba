//! docs/board.md's walkthrough on a board that boots from its eMMC, Linux 6.12 (one boot
//! of the simulated eMMC, the default card: 4 GiB, 8 bits, HS52): the card partitioned
//! in the guest, a filesystem made and mounted from the first partition as the board's
//! root filesystem stand-in, the second left spare; then every board command of
//! docs/board.md, taken from the page itself in its order, each with the outcome this
//! board must get ([`EXPECTED`]): the card listed with what is mounted, `info` and `knobs`
//! saying 6.12 cannot switch the bus width, the dry run warning of it and of the card in
//! use, the whole card and a results directory on the card refused, the spare partition
//! measured. On the host, `mmcab report` of the results the guest measured (section 8).
//! The transcript of the same walk with the host's commands:
//! bench/BOARD-WALKTHROUGH.md.
//!
//! Which commands run on the board: those of [`BOARD_PREFIXES`]; the others (building,
//! `scp`, `fdtput`, `mmcab report`/`compare`, the ssh loop) are the host's. A board
//! command of the page that [`EXPECTED`] lacks fails
//! `every_board_command_of_board_md_has_an_outcome`, which needs no guest.

use crate::common::testbed::{self, Guest};
use std::process::Command;

/// How a command of docs/board.md starts when it runs on the board.
const BOARD_PREFIXES: &[&str] = &[
    "mmcab info",
    "mmcab knobs",
    "mmcab run",
    "mmcab probe",
    "grep ",
    "lsblk ",
    "readlink ",
    "cat /proc/",
    "cat /sys/",
];

/// What a board command must do here: its exit statuses (one of them), and what its
/// stdout and stderr together must say.
struct Outcome {
    command: &'static str,
    statuses: &'static [i32],
    says: &'static [&'static str],
}

const fn ok(command: &'static str, says: &'static [&'static str]) -> Outcome {
    Outcome {
        command,
        statuses: &[0],
        says,
    }
}

const fn refused(command: &'static str, says: &'static [&'static str]) -> Outcome {
    Outcome {
        command,
        statuses: &[1],
        says,
    }
}

/// The board commands of docs/board.md in its order, with their outcome on this board.
const EXPECTED: &[Outcome] = &[
    ok(
        "mmcab info",
        &[
            "/dev/mmcblk0p1 is mounted at /mnt/root",
            "/dev/mmcblk0p2  partition, 512 MiB from byte 68157440; not in use",
        ],
    ),
    ok("grep . /sys/class/mmc_host/*/mmc*/type", &["MMC"]),
    // util-linux's lsblk: busybox has none (127), which the page says.
    Outcome {
        command: "lsblk -o NAME,TYPE,SIZE,RO,MOUNTPOINTS /dev/mmcblk*",
        statuses: &[0, 127],
        says: &[],
    },
    ok("cat /proc/partitions", &["mmcblk0p1", "mmcblk0p2"]),
    ok(
        "mmcab info /dev/mmcblk0",
        &[
            "kernel 6.12.",
            "bus width       8 bits",
            "bus_width_runtime_switch  no",
        ],
    ),
    ok(
        "mmcab knobs /dev/mmcblk0",
        &["bus-width  no", "docs/board.md, section 9", "speed modes (Linux 6.12."],
    ),
    ok(
        "mmcab run bus-width-ab.toml --device /dev/mmcblk0 --dry-run",
        &[
            "warning: the run would stop before any I/O: knob bus-width is unavailable",
            "warning: the run would stop before any I/O: refusing knob bus-width on /dev/mmcblk0:",
            "seq-write/dd-write: bytes 0-4194303 (4MiB)",
        ],
    ),
    refused(
        "mmcab run bus-width-ab.toml --device /dev/mmcblk0 --allow-write --out r",
        &["mmcab: error: knob bus-width is unavailable", "docs/board.md, section 9"],
    ),
    refused(
        "mmcab run bus-width-boot.toml --device /dev/mmcblk0 --allow-write --label dtb8 --out r",
        &[
            "mmcab: error: refusing to write to /dev/mmcblk0: it is in use \
             (/dev/mmcblk0p1 is mounted at /mnt/root)",
            "--device /dev/mmcblk0p2 (a partition nothing uses)",
        ],
    ),
    ok(
        "readlink -f /sys/class/mmc_host/mmc0/device/of_node",
        &["/sys/"],
    ),
    ok(
        "mmcab run bus-width-boot.toml --device /dev/mmcblk0p2 --allow-write --label dtb8 --out /dev/shm/r-1",
        &["results: /dev/shm/r-1", "CMD23 on"],
    ),
    refused(
        "mmcab run dd-bus-width.toml --device /dev/mmcblk0 --allow-write --scale-down 16",
        &[
            "mmcab: error: refusing to write to /dev/mmcblk0: it is in use \
             (/dev/mmcblk0p1 is mounted at /mnt/root)",
            "--device /dev/mmcblk0p2 (a partition nothing uses)",
        ],
    ),
    // 6.12 cannot switch the width at all: that comes before the card in use.
    refused(
        "mmcab run bus-width-ab.toml --device /dev/mmcblk0p2 --allow-write --out /dev/shm/bw",
        &["mmcab: error: knob bus-width is unavailable"],
    ),
    refused(
        "mmcab run dd-bus-width.toml --device /dev/mmcblk0p2 --allow-write --scale-down 16 --out /mnt/root/r",
        &["mmcab: error: refusing to keep the results in /mnt/root/r: it is on /dev/mmcblk0p1"],
    ),
    ok(
        "mmcab run dd-bus-width.toml --device /dev/mmcblk0p2 --allow-write --scale-down 16 --out /dev/shm/spare",
        &["results: /dev/shm/spare", "kernel: write"],
    ),
];

/// The commands of a page: each line of its `sh` blocks (continuation lines joined, a
/// trailing ` # comment` and comment lines dropped) and each `# ` line of its untyped
/// blocks (a root prompt in a transcript), in the page's order, each once.
fn page_commands(page: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut block: Option<String> = None;
    let mut pending = String::new();
    for raw in page.lines() {
        let line = raw.trim_start();
        if let Some(lang) = line.strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => Some(lang.trim().to_string()),
            };
            continue;
        }
        let command = match block.as_deref() {
            Some("sh") if !line.starts_with('#') => {
                let text = line.split(" # ").next().unwrap_or("").trim_end();
                if let Some(head) = text.strip_suffix('\\') {
                    pending.push_str(head.trim_end());
                    pending.push(' ');
                    continue;
                }
                let whole = format!("{pending}{}", text.trim_start());
                pending.clear();
                whole
            }
            Some("") => match line.strip_prefix("# ") {
                Some(text) => text.trim_end().to_string(),
                None => continue,
            },
            _ => continue,
        };
        if !command.is_empty() && !out.contains(&command) {
            out.push(command);
        }
    }
    out
}

/// The board commands of docs/board.md, in its order.
fn board_commands() -> Vec<String> {
    let page = std::fs::read_to_string(testbed::repo_root().join("docs/board.md"))
        .expect("read docs/board.md");
    page_commands(&page)
        .into_iter()
        .filter(|c| BOARD_PREFIXES.iter().any(|p| c.starts_with(p)))
        .collect()
}

#[test]
fn every_board_command_of_board_md_has_an_outcome() {
    let page: Vec<String> = board_commands();
    let expected: Vec<&str> = EXPECTED.iter().map(|o| o.command).collect();
    assert_eq!(
        page, expected,
        "docs/board.md's board commands (left) and tests/guest/walkthrough.rs' EXPECTED \
         (right) differ: give a new command its outcome on a 6.12 board booting from its \
         eMMC, in the page's order"
    );
}

#[test]
fn page_commands_join_continuations_and_drop_comments() {
    let page = "x\n```sh\n# a comment\nmmcab info   # the list\nmmcab run a.toml \\\n    \
                --out r\n```\n```\n# mmcab knobs /dev/mmcblk0\nout\n# mmcab info\n```\n\
                ```toml\n# mmcab not\n```\n";
    assert_eq!(
        page_commands(page),
        [
            "mmcab info",
            "mmcab run a.toml --out r",
            "mmcab knobs /dev/mmcblk0"
        ]
    );
}

/// The card as the board has it, done by hand before the walkthrough: an MBR with a
/// 64 MiB partition (a filesystem, mounted at /mnt/root; ext4 is a module in Debian's
/// armmp kernels, loaded at boot with crc32c_generic, which 6.12's ext4 needs to mount
/// and names only as a soft dependency) and a 512 MiB spare one; the
/// plans the commands name copied to the working directory, as `scp` would.
fn board_setup(plans: &[String]) -> String {
    format!(
        "set -u; printf 'o\\nn\\np\\n1\\n2048\\n+64M\\nn\\np\\n2\\n133120\\n+512M\\nw\\n' \
         | fdisk /dev/mmcblk0 > /dev/null || exit 99; \
         mke2fs -q /dev/mmcblk0p1 || exit 98; \
         mkdir -p /mnt/root && mount /dev/mmcblk0p1 /mnt/root || exit 97; \
         cd /root && for p in {}; do cp /workloads/$p . || exit 96; done; ",
        plans.join(" ")
    )
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn board_md_on_a_board_that_boots_from_its_emmc() {
    testbed::require_setup();
    let commands = board_commands();
    let mut plans: Vec<String> = Vec::new();
    for word in commands.iter().flat_map(|c| c.split_whitespace()) {
        if word.ends_with(".toml") && !plans.iter().any(|p| p == word) {
            plans.push(word.to_string());
        }
    }
    let mut script = board_setup(&plans);
    for (i, command) in commands.iter().enumerate() {
        script.push_str(&format!(
            "{{ {command} ; }} > /out/{i}.out 2> /out/{i}.err; echo $? > /out/{i}.rc; "
        ));
    }
    script.push_str(
        "ls r > /dev/null 2>&1 && echo 'r-created' >&2; cp -r /dev/shm/spare /dev/shm/r-1 /out/",
    );
    let run = Guest::new("walkthrough")
        .kernel("6.12")
        .card("sim")
        .icount_off()
        .modules(&["crc32c_generic", "ext4"])
        .run(&script);
    run.assert_success();
    assert!(!run.stderr.contains("r-created"), "{}", run.report());
    for (i, command) in commands.iter().enumerate() {
        let outcome = EXPECTED
            .iter()
            .find(|o| o.command == command)
            .unwrap_or_else(|| panic!("{command}: not in EXPECTED"));
        let status: i32 = run.out_text(&format!("{i}.rc")).trim().parse().unwrap();
        let said = run.out_text(&format!("{i}.out")) + &run.out_text(&format!("{i}.err"));
        assert!(
            outcome.statuses.contains(&status),
            "{command}: exit {status}, not {:?}:\n{said}",
            outcome.statuses
        );
        for needle in outcome.says {
            assert!(
                said.contains(needle),
                "{command}: no '{needle}' in:\n{said}"
            );
        }
    }
    // Section 8: the report on the host, from the results alone.
    let report = Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .arg("report")
        .arg(run.out_dir.join("spare"))
        .output()
        .expect("run mmcab report");
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "mmcab report: {}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(
        text.contains("Kernel: 6.12.") && text.contains("dd-write: MB/s"),
        "{text}"
    );
}
