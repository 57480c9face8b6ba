//! Human output of `mmcab info` (the default) and `--raw`, rendered from the JSON value
//! so both views always show the same facts.

use super::ext_csd_table::FIELDS;
use serde_json::Value;
use std::fmt::Write;

fn s(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// A decoded EXT_CSD value from the JSON, for humans.
fn decoded_text(v: &Value) -> String {
    match v {
        Value::Object(m) if m.contains_key("bytes") => {
            let b = m["bytes"].as_u64().unwrap_or(0);
            if b >= 1024 {
                format!("{} ({b} bytes)", crate::units::format_size(b))
            } else {
                format!("{b} bytes")
            }
        }
        Value::Object(m) if m.contains_key("ns") => {
            let ns = m["ns"].as_u64().unwrap_or(0);
            if ns >= 1_000_000 {
                format!("{} ms", ns as f64 / 1e6)
            } else if ns >= 1000 {
                format!("{} us", ns as f64 / 1e3)
            } else {
                format!("{ns} ns")
            }
        }
        Value::Array(a) if a.is_empty() => "none".to_string(),
        Value::Array(a) => a.iter().map(s).collect::<Vec<_>>().join(" "),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        other => s(other),
    }
}

pub fn human(info: &Value) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}: {}", s(&info["device"]), s(&info["summary"]));
    let _ = writeln!(
        o,
        "  card {} on host {}, kernel {}\n  sysfs {}\n  debugfs {}",
        s(&info["card"]),
        s(&info["host"]),
        s(&info["kernel_release"]),
        s(&info["paths"]["card_sysfs"]),
        s(&info["paths"]["host_debugfs"])
    );
    let id = &info["identity"];
    let _ = writeln!(o, "\nIdentity (CID)");
    if id.is_null() {
        let _ = writeln!(o, "  unavailable: {}", s(&info["identity_error"]));
    } else {
        let manfid = id["manfid"].as_u64().unwrap_or(0);
        let oemid = id["oemid"].as_u64().unwrap_or(0);
        let serial = id["serial"].as_u64().unwrap_or(0);
        for (k, v) in [
            (
                "manufacturer",
                format!("{} (manfid 0x{manfid:06x})", s(&id["manufacturer"])),
            ),
            ("oemid", format!("0x{oemid:04x}")),
            ("name", s(&id["name"])),
            (
                "revision",
                format!("0x{:x}", id["prv"].as_u64().unwrap_or(0)),
            ),
            ("serial", format!("0x{serial:08x}")),
            ("date", s(&id["date"])),
            ("package", s(&id["device_type"])),
        ] {
            let _ = writeln!(o, "  {k:<16}{v}");
        }
    }
    let _ = writeln!(o, "\nBus (debugfs ios)");
    let ios = &info["ios"];
    if ios.is_null() {
        let _ = writeln!(o, "  unavailable: {}", s(&info["ios_error"]));
    } else {
        let _ = writeln!(o, "  {:<16}{} Hz", "clock", s(&ios["clock_hz"]));
        let _ = writeln!(o, "  {:<16}{} bits", "bus width", s(&ios["bus_width"]));
        for (k, key) in [
            ("timing", "timing"),
            ("signal voltage", "signal_voltage"),
            ("vdd", "vdd"),
            ("power mode", "power_mode"),
        ] {
            let _ = writeln!(o, "  {k:<16}{}", s(&ios[key]));
        }
    }
    let _ = writeln!(
        o,
        "  {:<16}caps {} caps2 {}",
        "host",
        s(&info["host_caps"]["caps"]),
        s(&info["host_caps"]["caps2"])
    );
    let _ = writeln!(o, "\nCapabilities");
    if let Some(caps) = info["capabilities"].as_object() {
        for (name, c) in caps {
            let yes = if c["supported"].as_bool() == Some(true) {
                "yes"
            } else {
                "no"
            };
            let _ = writeln!(o, "  {name:<26}{yes:<5}{}", s(&c["reason"]));
        }
    }
    let x = &info["ext_csd"];
    if x.is_null() {
        let _ = writeln!(o, "\nEXT_CSD\n  unavailable: {}", s(&info["ext_csd_error"]));
        return o;
    }
    let rev_name = decoded_text(&x["fields"]["EXT_CSD_REV"]);
    let _ = writeln!(
        o,
        "\nEXT_CSD (rev {} = {rev_name}, read via {})",
        s(&x["rev"]),
        s(&x["source"])
    );
    if !x["source_note"].is_null() {
        let _ = writeln!(o, "  note: {}", s(&x["source_note"]));
    }
    let mut undefined = 0;
    for f in FIELDS {
        let decoded = &x["fields"][f.name];
        if decoded.is_null() {
            undefined += 1;
            continue;
        }
        let raw = x["fields_raw"][f.name].as_u64().unwrap_or(0);
        let _ = writeln!(
            o,
            "  [{:>3}] {:<28} 0x{raw:0w$x}{:pad$} {}",
            f.offset,
            f.name,
            "",
            decoded_text(decoded),
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
    o
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
        assert_eq!(
            decoded_text(&serde_json::json!({"bytes": 268435456})),
            "256MiB (268435456 bytes)"
        );
        assert_eq!(
            decoded_text(&serde_json::json!({"ns": 300000000})),
            "300 ms"
        );
        assert_eq!(
            decoded_text(&serde_json::json!(["HS_26", "HS_52"])),
            "HS_26 HS_52"
        );
    }
}
