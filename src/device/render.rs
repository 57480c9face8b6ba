//! Human output of `mmcab info` (the default) and `--raw`, rendered from the
//! [`DeviceInfo`] that `--json` prints, so every view shows the same facts.

use super::ext_csd::DecodedValue;
use super::ext_csd_table::FIELDS;
use super::info::{human_hz, DeviceInfo, ExtCsdInfo, Identity, IosInfo};
use super::info_speed::SpeedModes;
use std::fmt::Display;
use std::fmt::Write;

/// A value, or `-` when absent.
fn or_dash<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The whole text of `mmcab info DEVICE`.
pub fn human(info: &DeviceInfo) -> String {
    let mut o = String::new();
    header(&mut o, info);
    identity(
        &mut o,
        info.identity.as_ref(),
        info.identity_error.as_deref(),
    );
    bus(&mut o, info);
    capabilities(&mut o, info);
    if let Some(speed) = &info.speed_modes {
        speed_modes(
            &mut o,
            speed,
            info.ios.as_ref(),
            info.ext_csd_error.as_deref(),
        );
    }
    ext_csd(&mut o, info.ext_csd.as_ref(), info.ext_csd_error.as_deref());
    o
}

fn header(o: &mut String, info: &DeviceInfo) {
    let _ = writeln!(o, "{}: {}", info.device.display(), info.summary);
    let _ = writeln!(
        o,
        "  card {} on host {}, kernel {}\n  sysfs {}\n  debugfs {}",
        info.card,
        info.host,
        info.kernel_release,
        info.paths.card_sysfs.display(),
        info.paths.host_debugfs.display()
    );
    if let Some(driver) = &info.host_driver {
        let _ = writeln!(o, "  host driver {}", driver.summary_with_parameters());
    }
}

fn identity(o: &mut String, id: Option<&Identity>, error: Option<&str>) {
    let _ = writeln!(o, "\nIdentity (CID)");
    let Some(id) = id else {
        let _ = writeln!(o, "  unavailable: {}", or_dash(error));
        return;
    };
    for (k, v) in [
        (
            "manufacturer",
            // An unknown maker's name already is its manfid.
            match id.manufacturer.starts_with("unknown") {
                true => format!("unknown (manfid 0x{:06x})", id.manfid),
                false => format!("{} (manfid 0x{:06x})", id.manufacturer, id.manfid),
            },
        ),
        ("oemid", format!("0x{:04x}", id.oemid)),
        ("name", id.name.clone()),
        ("revision", format!("0x{:x}", id.prv)),
        ("serial", format!("0x{:08x}", id.serial)),
        ("date", id.date.clone()),
        ("package", or_dash(id.device_type.as_deref())),
    ] {
        let _ = writeln!(o, "  {k:<16}{v}");
    }
}

fn bus(o: &mut String, info: &DeviceInfo) {
    let _ = writeln!(o, "\nBus (debugfs ios)");
    match &info.ios {
        Some(ios) => ios_lines(o, ios),
        None => {
            let _ = writeln!(o, "  unavailable: {}", or_dash(info.ios_error.as_deref()));
        }
    }
    let caps = &info.host_caps;
    let _ = writeln!(
        o,
        "  {:<16}caps {} caps2 {}",
        "host",
        or_dash(caps.caps.as_deref()),
        or_dash(caps.caps2.as_deref())
    );
}

fn ios_lines(o: &mut String, ios: &IosInfo) {
    let _ = writeln!(o, "  {:<16}{} Hz", "clock", ios.clock_hz);
    let _ = writeln!(o, "  {:<16}{} bits", "bus width", ios.bus_width);
    for (k, v) in [
        ("timing", &ios.timing),
        ("signal voltage", &ios.signal_voltage),
        ("vdd", &ios.vdd),
        ("power mode", &ios.power_mode),
    ] {
        let _ = writeln!(o, "  {k:<16}{v}");
    }
}

fn capabilities(o: &mut String, info: &DeviceInfo) {
    let _ = writeln!(o, "\nCapabilities");
    for (name, c) in info.capabilities.iter() {
        let yes = if c.supported { "yes" } else { "no" };
        let _ = writeln!(o, "  {name:<26}{yes:<5}{}", c.reason);
    }
}

/// "Speed modes": the card's EXT_CSD fields, the host's speed bits, what the bus runs
/// at now.
fn speed_modes(o: &mut String, s: &SpeedModes, ios: Option<&IosInfo>, ext_csd_error: Option<&str>) {
    let _ = writeln!(o, "\nSpeed modes");
    let mut line = |k: &str, v: String| {
        let _ = writeln!(o, "  {k:<16}{v}");
    };
    match &s.card {
        Some(c) => {
            let raw = |v: u64| format!("0x{v:02x}");
            let t = &c.hs_timing;
            for (k, v) in [
                (
                    "card offers",
                    format!("{} (CARD_TYPE {})", c.card_type, raw(c.card_type_raw)),
                ),
                (
                    "driver strength",
                    format!(
                        "{} (DRIVER_STRENGTH {})",
                        c.driver_strength,
                        raw(c.driver_strength_raw)
                    ),
                ),
                (
                    "enhanced strobe",
                    format!(
                        "{} (STROBE_SUPPORT {})",
                        c.strobe_support,
                        raw(c.strobe_support_raw)
                    ),
                ),
                (
                    "card timing",
                    format!(
                        "{}, driver strength type {} (HS_TIMING {})",
                        t.timing,
                        t.driver_strength,
                        raw(u64::from(t.raw))
                    ),
                ),
            ] {
                line(k, v);
            }
        }
        None => line("card", format!("unavailable: {}", or_dash(ext_csd_error))),
    }
    let bits = |b: &Option<Vec<String>>| match b {
        None => "unreadable".to_string(),
        Some(b) if b.is_empty() => "no speed bits".to_string(),
        Some(b) => b.join(" "),
    };
    line("host caps", bits(&s.host.caps));
    line("host caps2", bits(&s.host.caps2));
    let now = match ios {
        Some(ios) => format!(
            "{}, {}, {} bits (debugfs ios)",
            ios.timing,
            human_hz(ios.clock_hz),
            ios.bus_width
        ),
        None => "unknown: debugfs ios unreadable".to_string(),
    };
    line("now", now);
}

fn ext_csd(o: &mut String, x: Option<&ExtCsdInfo>, error: Option<&str>) {
    let Some(x) = x else {
        let _ = writeln!(o, "\nEXT_CSD\n  unavailable: {}", or_dash(error));
        return;
    };
    let rev_name = match x.fields.get("EXT_CSD_REV") {
        None | Some(DecodedValue::NotDefined) => "-".to_string(),
        Some(v) => v.to_string(),
    };
    let _ = writeln!(
        o,
        "\nEXT_CSD (rev {} = {rev_name}, read via {})",
        x.rev,
        x.source.as_str()
    );
    if let Some(note) = &x.source_note {
        let _ = writeln!(o, "  note: {note}");
    }
    let mut undefined = 0;
    for f in FIELDS {
        let decoded = match x.fields.get(f.name) {
            None | Some(DecodedValue::NotDefined) => {
                undefined += 1;
                continue;
            }
            Some(v) => v,
        };
        let raw = x.fields_raw.get(f.name).copied().unwrap_or(0);
        let _ = writeln!(
            o,
            "  [{:>3}] {:<28} 0x{raw:0w$x}{:pad$} {decoded}",
            f.offset,
            f.name,
            "",
            w = f.width * 2,
            pad = 16usize.saturating_sub(f.width * 2),
        );
    }
    if undefined > 0 {
        let _ = writeln!(
            o,
            "  ({undefined} newer fields not defined at this EXT_CSD_REV; all bytes: --raw or --json)"
        );
    }
}

/// `--raw`: EXT_CSD as hex, 16 bytes per line, each line prefixed with its byte offset.
pub fn raw(hex: &str) -> String {
    let bytes: Vec<&str> = (0..hex.len() / 2).map(|i| &hex[2 * i..2 * i + 2]).collect();
    let mut o = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        let _ = writeln!(o, "{:03}: {}", line * 16, chunk.join(" "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::fixture;

    #[test]
    fn raw_is_32_lines_of_16_bytes_with_offsets() {
        let hex: String = (0..512).map(|i| format!("{:02x}", i % 256)).collect();
        let out = raw(&hex);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 32);
        assert_eq!(
            lines[0],
            "000: 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"
        );
        assert!(lines[31].starts_with("496: f0 f1"));
    }

    #[test]
    fn decoded_values_render_with_units() {
        let text = |v: DecodedValue| v.to_string();
        assert_eq!(
            text(DecodedValue::Bytes { bytes: 268435456 }),
            "256MiB (268435456 bytes)"
        );
        assert_eq!(text(DecodedValue::Duration { ns: 300000000 }), "300 ms");
        assert_eq!(
            text(DecodedValue::Flags(vec!["HS_26".into(), "HS_52".into()])),
            "HS_26 HS_52"
        );
        assert_eq!(text(DecodedValue::Flags(Vec::new())), "none");
    }

    /// `mmcab info` and `--raw` as 0.1.0 printed them in the guest, from the JSON it
    /// printed there (tests/fixtures/qemu-emmc/README.md).
    #[test]
    fn text_is_what_v0_1_printed_in_the_guest() {
        for which in ["linux7-bus8", "linux6-bus4"] {
            let json = fixture(&format!("info-v0.1-{which}.json"));
            let info: DeviceInfo = serde_json::from_str(&json).unwrap();
            let want = fixture(&format!("info-v0.1-{which}.txt"));
            let got = human(&info);
            assert!(got == want, "{which}\n--- 0.1.0\n{want}\n--- now\n{got}");
            let hex = &info.ext_csd.as_ref().unwrap().raw;
            assert_eq!(raw(hex), fixture(&format!("info-v0.1-{which}.raw")));
        }
    }

    /// A maker mmcab has no name for is said once: `unknown (manfid 0x0000ee)`.
    #[test]
    fn an_unknown_maker_is_named_by_its_manfid_once() {
        let json = fixture("info-v0.1-linux6-bus4.json");
        let mut info: DeviceInfo = serde_json::from_str(&json).unwrap();
        let id = info.identity.as_mut().unwrap();
        id.manfid = 0xee;
        id.manufacturer = crate::device::cid::manufacturer(crate::device::cid::CardKind::Mmc, 0xee);
        let text = human(&info);
        assert!(
            text.contains("  manufacturer    unknown (manfid 0x0000ee)\n"),
            "{text}"
        );
    }

    /// Parts that could not be read say why, and nothing else is invented.
    #[test]
    fn unreadable_parts_say_why() {
        let json = fixture("info-v0.1-linux6-bus4.json");
        let mut info: DeviceInfo = serde_json::from_str(&json).unwrap();
        info.identity = None;
        info.identity_error = Some("no cid attribute".into());
        info.ios = None;
        info.ios_error = None;
        info.ext_csd = None;
        info.ext_csd_error = Some("SD cards have no EXT_CSD (eMMC only)".into());
        info.host_caps.caps2 = None;
        let text = human(&info);
        assert!(
            text.contains("Identity (CID)\n  unavailable: no cid attribute\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "Bus (debugfs ios)\n  unavailable: -\n  host            caps 0x4000010f caps2 -\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("EXT_CSD\n  unavailable: SD cards have no EXT_CSD (eMMC only)\n"),
            "{text}"
        );
    }
}
