//! The speed-mode part of `mmcab knobs`: per eMMC speed mode, whether the card and the
//! host offer it and whether the `speed-mode` knob can switch to it here, with why not
//! (`crate::device::speed_offer`).

use crate::device::speed_offer::SpeedOffer;

/// "200 MHz", "52 MHz", "400 kHz".
fn hz(hz: u64) -> String {
    if hz >= 1_000_000 && hz % 1_000_000 == 0 {
        format!("{} MHz", hz / 1_000_000)
    } else if hz >= 1_000_000 {
        format!("{:.2} MHz", hz as f64 / 1e6)
    } else {
        format!("{} kHz", hz / 1000)
    }
}

/// The part after the knob table: a header with what the verdicts were made from, then
/// one line per mode (offered by card and host, switch: now, yes, --force, no), the
/// reason indented below, and the notes; or why the modes cannot be told.
pub fn modes_table(offer: Result<&SpeedOffer, &str>) -> String {
    let o = match offer {
        Ok(o) => o,
        Err(why) => return format!("\nspeed modes: unknown: {why}\n"),
    };
    let i = &o.inputs;
    let mut out = format!(
        "\nspeed modes (Linux {}; now {}, {}, {} bits; host caps {} caps2 {}, {}-bit; card \
         CARD_TYPE 0x{:02x}{})\n",
        o.kernel,
        o.now.timing,
        hz(o.now.clock_hz),
        o.now.bus_width,
        i.caps,
        i.caps2,
        i.host_bus_width,
        i.card_type,
        if i.strobe_support {
            ", STROBE_SUPPORT"
        } else {
            ""
        }
    );
    out.push_str(&format!("{:<10} {:<10} {}\n", "mode", "offered", "switch"));
    for m in &o.modes {
        out.push_str(&format!(
            "{:<10} {:<10} {}\n",
            m.mode,
            if m.offered { "yes" } else { "no" },
            m.switch.as_str()
        ));
        if !m.reason.is_empty() {
            out.push_str(&format!("    why: {}\n", m.reason));
        }
    }
    for note in &o.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::speed_modes::ModeInputs;
    use crate::device::speed_offer::{offer, NowIos};

    /// The simulated card booted `hs200=1` as Linux 6.12 shows it
    /// (tests/fixtures/qemu-emmc/cap-sim-hs200-linux6.txt), and its card with DDR added.
    #[test]
    fn table_of_the_simulated_card_on_6_12() {
        let inputs = ModeInputs {
            caps: 0x4000_0343,
            caps2: 0x0028_0020,
            card_type: 0x17,
            strobe_support: false,
            bus_width: 8,
        };
        let now = NowIos {
            timing: "mmc HS200".into(),
            mode: None,
            clock_hz: 200_000_000,
            bus_width: 8,
        };
        let o = offer(&inputs, now, "6.12.95+deb12-armmp", None);
        let text = modes_table(Ok(&o));
        let want = "\nspeed modes (Linux 6.12.95+deb12-armmp; now mmc HS200, 200 MHz, 8 bits; \
                    host caps 0x40000343 caps2 0x00280020, 8-bit; card CARD_TYPE 0x17)\n\
                    mode       offered    switch\n\
                    legacy     yes        yes\n\
                    hs         yes        yes\n\
                    ddr52      no         --force\n    why: the host came up without ddr52";
        assert!(text.starts_with(want), "{text}");
        assert!(
            text.ends_with(
                "hs200      yes        now\nhs400      no         no\n    why: the card \
                 cannot do hs400: EXT_CSD CARD_TYPE 0x17 has none of HS400_1_8V (bit 6), \
                 HS400_1_2V (bit 7)\n"
            ),
            "{text}"
        );
        assert_eq!(
            modes_table(Err("a card of type SD has no eMMC speed modes")),
            "\nspeed modes: unknown: a card of type SD has no eMMC speed modes\n"
        );
    }
}

#[cfg(test)]
mod docs_example {
    use super::*;
    use crate::device::capture::Capture;

    /// The simulated card booted `hs200=1` on Linux 6.12 (its capture as a sysfs/debugfs
    /// tree): the part docs/board.md shows.
    #[test]
    fn docs_show_the_simulated_cards_modes() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Capture::load("cap-sim-hs200-linux6.txt").paths_in_tree(dir.path());
        std::fs::write(paths.card_sysfs.join("power/control"), "on\n").unwrap();
        let offer = crate::device::speed_offer::read_offer(&paths, "6.12.95+deb12-armmp");
        let text = modes_table(offer.as_ref().map_err(String::as_str));
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/board.md"),
        )
        .unwrap();
        let shown = format!("```{text}```\n");
        assert!(docs.contains(&shown), "docs/board.md lacks\n{shown}");
    }
}
