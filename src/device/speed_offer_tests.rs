//! [`super::read_offer`] on fixture trees laid out like sysfs/debugfs: the captures of
//! the simulated card booted `hs200=1` (Linux 6.12 and 7.2) and of QEMU's card, and
//! the same trees with a kernel before 6.7, a card with DDR, HS400 and enhanced strobe,
//! a host without DDR, a 4-bit host, and a bus in HS400.

use super::*;
use crate::device::capture::Capture;

const LINUX_6_1: &str = "6.1.0-28-armmp";
const LINUX_6_12: &str = "6.12.95+deb12-armmp";
const LINUX_7: &str = "7.2.13+deb14-armmp";

/// A capture's tree in a scratch directory.
struct Tree {
    _dir: tempfile::TempDir,
    paths: MmcPaths,
}

impl Tree {
    fn of(capture: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let paths = Capture::load(capture).paths_in_tree(dir.path());
        // What the capture leaves out but every such kernel has: the card's runtime PM.
        std::fs::write(paths.card_sysfs.join("power/control"), "on\n").unwrap();
        Tree { _dir: dir, paths }
    }

    fn set_ext_csd(&self, index: usize, value: u8) {
        let file = self.paths.card_debugfs.join("ext_csd");
        let mut hex = std::fs::read_to_string(&file).unwrap().trim().to_string();
        hex.replace_range(2 * index..2 * index + 2, &format!("{value:02x}"));
        std::fs::write(&file, hex + "\n").unwrap();
    }

    fn set_host(&self, name: &str, value: u32) {
        std::fs::write(
            self.paths.host_debugfs.join(name),
            format!("0x{value:08x}\n"),
        )
        .unwrap();
    }

    /// `ios` with its `bus width:` and `timing spec:` lines replaced.
    fn set_ios(&self, bus_width: (u8, u8), timing: (u8, &str), clock_hz: u64) {
        let file = self.paths.host_debugfs.join("ios");
        let text: String = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(|l| match l.split_once(':').map(|(k, _)| k) {
                Some("bus width") => format!("bus width:\t{} ({} bits)", bus_width.0, bus_width.1),
                Some("timing spec") => format!("timing spec:\t{} ({})", timing.0, timing.1),
                Some("clock") => format!("clock:\t\t{clock_hz} Hz"),
                _ => l.to_string(),
            })
            .map(|l| l + "\n")
            .collect();
        std::fs::write(&file, text).unwrap();
    }

    fn offer(&self, kernel: &str) -> SpeedOffer {
        read_offer(&self.paths, kernel).unwrap()
    }
}

/// (offered, switch, reason) of `mode`.
fn line<'a>(o: &'a SpeedOffer, mode: &str) -> (bool, Switch, &'a str) {
    let m = o.modes.iter().find(|m| m.mode == mode).unwrap();
    (m.offered, m.switch, m.reason.as_str())
}

fn modes(o: &SpeedOffer) -> Vec<(&str, bool, Switch)> {
    o.modes
        .iter()
        .map(|m| (m.mode.as_str(), m.offered, m.switch))
        .collect()
}

#[test]
fn simulated_card_booted_hs200_offers_hs_and_hs200_switchable_on_6_12_and_7() {
    for (capture, kernel) in [
        ("cap-sim-hs200-linux6.txt", LINUX_6_12),
        ("cap-sim-hs200-linux7.txt", LINUX_7),
    ] {
        let o = Tree::of(capture).offer(kernel);
        assert_eq!(
            modes(&o),
            [
                ("legacy", true, Switch::Yes),
                ("hs", true, Switch::Yes),
                ("ddr52", false, Switch::No),
                ("hs200", true, Switch::Now),
                ("hs400", false, Switch::No),
            ],
            "{capture}"
        );
        assert_eq!(o.now.mode.as_deref(), Some("hs200"));
        assert_eq!((o.now.clock_hz, o.now.bus_width), (200_000_000, 8));
        assert_eq!(o.inputs.card_type, 0x13);
        assert_eq!(o.inputs.host_bus_width, 8);
        let (_, _, why) = line(&o, "ddr52");
        assert!(
            why.starts_with("the card cannot do ddr52: EXT_CSD CARD_TYPE 0x13"),
            "{why}"
        );
        assert!(line(&o, "hs400").2.contains("cannot do hs400"));
        assert!(o.notes.is_empty());
    }
}

/// Before 6.7 debugfs `caps`/`caps2` take no speed bits: hs is offered by card and host
/// but cannot be switched to at run time.
#[test]
fn linux_6_1_offers_but_cannot_switch() {
    let o = Tree::of("cap-sim-hs200-linux6.txt").offer(LINUX_6_1);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::No),
            ("hs", true, Switch::No),
            ("ddr52", false, Switch::No),
            ("hs200", true, Switch::Now),
            ("hs400", false, Switch::No),
        ]
    );
    let (_, _, why) = line(&o, "hs");
    assert!(
        why.starts_with("Linux 6.1 does not let debugfs write the speed bits"),
        "{why}"
    );
    // The card's lack comes first where there is one.
    assert!(line(&o, "ddr52").2.starts_with("the card cannot do ddr52"));
}

/// QEMU's eMMC 4.3 (CARD_TYPE 0x03) runs HS; HS200 is not the card's.
#[test]
fn card_without_hs200_says_so() {
    let o = Tree::of("cap-linux6-bus4.txt").offer(LINUX_6_12);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::Yes),
            ("hs", true, Switch::Now),
            ("ddr52", false, Switch::No),
            ("hs200", false, Switch::No),
            ("hs400", false, Switch::No),
        ]
    );
    let (_, _, why) = line(&o, "hs200");
    assert!(
        why.starts_with("the card cannot do hs200: EXT_CSD CARD_TYPE 0x03 has none of HS200_1_8V"),
        "{why}"
    );
    assert_eq!(o.inputs.host_bus_width, 4);
}

/// A card with DDR52 at 1.8 V behind a host that came up without a DDR bit: setting it
/// needs --force on 6.12; on 6.1 nothing sets it, and both reasons are given.
#[test]
fn host_without_ddr_needs_force() {
    let tree = Tree::of("cap-sim-hs200-linux6.txt");
    tree.set_ext_csd(196, 0x17);
    let o = tree.offer(LINUX_6_12);
    let (offered, switch, why) = line(&o, "ddr52");
    assert_eq!((offered, switch), (false, Switch::Force));
    assert!(
        why.contains("the host came up without ddr52 (caps 0x40000343"),
        "{why}"
    );
    assert!(why.contains("MMC_CAP_1_8V_DDR, MMC_CAP_3_3V_DDR"), "{why}");
    assert!(why.contains("pass --force"), "{why}");
    let o = tree.offer(LINUX_6_1);
    let (offered, switch, why) = line(&o, "ddr52");
    assert_eq!((offered, switch), (false, Switch::No));
    assert!(why.starts_with("Linux 6.1 does not let debugfs"), "{why}");
    assert!(
        why.ends_with("; the host came up without it (caps 0x40000343 has none of MMC_CAP_1_8V_DDR, MMC_CAP_3_3V_DDR)"),
        "{why}"
    );
    assert!(!why.contains("--force"), "{why}");
    // With the bit, DDR52 is offered and switchable.
    tree.set_host("caps", 0x4000_1343);
    assert_eq!(line(&tree.offer(LINUX_6_12), "ddr52").1, Switch::Yes);
}

/// A card and host with HS400 on a 4-bit host: the core would stop at HS200.
#[test]
fn four_bit_host_cannot_run_hs400() {
    let tree = Tree::of("cap-sim-hs200-linux7.txt");
    tree.set_ext_csd(196, 0x57);
    tree.set_host("caps", 0x4000_0303);
    tree.set_host("caps2", 0x0028_8020);
    tree.set_ios((2, 4), (9, "mmc HS200"), 200_000_000);
    let o = tree.offer(LINUX_7);
    assert_eq!(o.inputs.host_bus_width, 4);
    let (offered, switch, why) = line(&o, "hs400");
    assert_eq!((offered, switch), (false, Switch::No));
    assert!(
        why.starts_with("hs400 needs 8 data lines; at 4 bit(s) the core falls back to hs200"),
        "{why}"
    );
    assert_eq!(line(&o, "hs200").1, Switch::Now);
}

/// HS400 at 8 bits: hs400 now, hs200 and hs switchable; with enhanced strobe on both
/// sides the notes say HS400 is HS400ES here, and a host without MMC_CAP2_HS400_ES
/// says it cannot have it.
#[test]
fn hs400_now_and_enhanced_strobe() {
    let tree = Tree::of("cap-sim-hs200-linux6.txt");
    tree.set_ext_csd(196, 0x57);
    tree.set_host("caps2", 0x0028_8020);
    tree.set_ios((3, 8), (10, "mmc HS400"), 200_000_000);
    let o = tree.offer(LINUX_6_12);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::Yes),
            ("hs", true, Switch::Yes),
            ("ddr52", false, Switch::Force),
            ("hs200", true, Switch::Yes),
            ("hs400", true, Switch::Now),
        ]
    );
    assert!(o.notes.is_empty());
    tree.set_ext_csd(184, 1);
    let o = tree.offer(LINUX_6_12);
    assert_eq!(o.notes.len(), 1);
    assert!(
        o.notes[0].starts_with("no enhanced strobe"),
        "{:?}",
        o.notes
    );
    tree.set_host("caps2", 0x0038_8020);
    tree.set_ios((3, 8), (10, "mmc HS400 enhanced strobe"), 200_000_000);
    let o = tree.offer(LINUX_6_12);
    assert_eq!(line(&o, "hs400").1, Switch::Now);
    assert!(
        o.notes[0].starts_with("hs400 runs with enhanced strobe"),
        "{:?}",
        o.notes
    );
}

/// Without runtime PM nothing can be re-initialised: every switch is `no`, with why.
#[test]
fn a_card_without_runtime_pm_switches_nothing() {
    let tree = Tree::of("cap-sim-hs200-linux6.txt");
    std::fs::remove_file(tree.paths.card_sysfs.join("power/control")).unwrap();
    let o = tree.offer(LINUX_6_12);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::No),
            ("hs", true, Switch::No),
            ("ddr52", false, Switch::No),
            ("hs200", true, Switch::Now),
            ("hs400", false, Switch::No),
        ]
    );
    let (_, _, why) = line(&o, "hs");
    assert!(why.ends_with("power/control does not exist: the card has no runtime PM, so it cannot be re-initialised in another mode"), "{why}");
}

#[test]
fn other_cards_and_unreadable_files_say_why() {
    let tree = Tree::of("cap-sim-hs200-linux6.txt");
    std::fs::remove_file(tree.paths.host_debugfs.join("caps2")).unwrap();
    let err = read_offer(&tree.paths, LINUX_6_12).unwrap_err();
    assert!(
        err.contains("caps2") && err.contains("debugfs mounted?"),
        "{err}"
    );
    std::fs::write(tree.paths.card_sysfs.join("type"), "SD\n").unwrap();
    let err = read_offer(&tree.paths, LINUX_6_12).unwrap_err();
    assert!(
        err.starts_with("a card of type SD has no eMMC speed modes"),
        "{err}"
    );
}

/// The simulated card's captures in HS400 (6.12), HS400 with enhanced strobe and DDR52
/// (7.2): every mode the card and host offer is switchable, the running one is `now`.
#[test]
fn simulated_card_in_hs400_hs400es_and_ddr52() {
    let o = Tree::of("cap-sim-hs400-linux6.txt").offer(LINUX_6_12);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::Yes),
            ("hs", true, Switch::Yes),
            ("ddr52", true, Switch::Yes),
            ("hs200", true, Switch::Yes),
            ("hs400", true, Switch::Now),
        ]
    );
    assert!(o.notes.is_empty(), "{:?}", o.notes);
    let o = Tree::of("cap-sim-hs400es-linux7.txt").offer(LINUX_7);
    assert_eq!(line(&o, "hs400").1, Switch::Now);
    assert_eq!(o.now.timing, "mmc HS400 enhanced strobe");
    assert!(
        o.notes[0].starts_with("hs400 runs with enhanced strobe"),
        "{:?}",
        o.notes
    );
    let o = Tree::of("cap-sim-ddr52-linux7.txt").offer(LINUX_7);
    assert_eq!(
        modes(&o),
        [
            ("legacy", true, Switch::Yes),
            ("hs", true, Switch::Yes),
            ("ddr52", true, Switch::Now),
            ("hs200", false, Switch::No),
            ("hs400", false, Switch::No),
        ]
    );
    assert_eq!((o.now.clock_hz, o.now.bus_width), (52_000_000, 8));
}
