//! `mmcab info`: everything about one card in one JSON value (schema in README.md,
//! "info --json schema"), and the human rendering of it.

use super::capabilities::{capabilities, kernel_release, Evidence};
use super::cid::{decode_csd, decode_mmc, decode_sd, Csd};
use super::ext_csd::{read_ext_csd, ExtCsd, ExtCsdSource};
use super::ext_csd_table::FIELDS;
use super::ios::{read_ios, Ios};
use super::sysfs::{read_attrs, read_trimmed};
use super::MmcPaths;
use anyhow::{bail, Result};
use serde_json::{json, Map, Value};
use std::path::Path;

/// Version of the JSON layout below; bumped when a key changes meaning or goes away.
pub const INFO_SCHEMA: u32 = 1;

/// Every readable regular file in the card's sysfs directory: name -> trimmed content.
pub fn read_sysfs_attrs(dir: &Path) -> Map<String, Value> {
    read_attrs(dir)
        .into_iter()
        .map(|(name, text)| (name, Value::String(text)))
        .collect()
}

fn parse_hex_u32(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

fn caps_writable(path: &Path) -> Option<Result<(), String>> {
    if !path.exists() {
        return None;
    }
    Some(
        nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).map_err(|e| match e {
            nix::errno::Errno::EROFS => format!(
                "debugfs is mounted read-only (mount -o remount,rw {})",
                path.parent()
                    .and_then(Path::parent)
                    .unwrap_or(path)
                    .display()
            ),
            nix::errno::Errno::EACCES | nix::errno::Errno::EPERM => {
                format!("{}: permission denied (run as root)", path.display())
            }
            other => format!("{}: {other}", path.display()),
        }),
    )
}

fn ios_json(ios: &Ios) -> Value {
    json!({
        "bus_width": ios.bus_width_bits,
        "clock_hz": ios.clock_hz,
        "actual_clock_hz": ios.actual_clock_hz,
        "timing": ios.timing,
        "signal_voltage": ios.signal_voltage,
        "vdd": ios.vdd,
        "power_mode": ios.power_mode,
        "bus_mode": ios.bus_mode,
        "driver_type": ios.driver_type,
    })
}

fn ext_csd_json(x: &ExtCsd, source: &ExtCsdSource) -> Value {
    let mut fields = Map::new();
    for (name, v) in x.decoded() {
        fields.insert(
            name.to_string(),
            serde_json::to_value(v).unwrap_or(Value::Null),
        );
    }
    let mut raw = Map::new();
    for (name, v) in x.fields_raw() {
        raw.insert(name.to_string(), json!(v));
    }
    let layout: Map<String, Value> = FIELDS
        .iter()
        .map(|f| {
            (
                f.name.to_string(),
                json!({"offset": f.offset, "width": f.width, "since_rev": f.since_rev}),
            )
        })
        .collect();
    let note = match source {
        ExtCsdSource::Ioctl => Value::Null,
        ExtCsdSource::Debugfs { ioctl_error } => json!(format!("ioctl failed: {ioctl_error}")),
    };
    json!({
        "source": source.as_str(),
        "source_note": note,
        "rev": x.rev(),
        "raw": x.to_hex(),
        "fields": fields,
        "fields_raw": raw,
        "field_layout": layout,
    })
}

fn csd_json(csd: &Option<Csd>) -> Value {
    csd.as_ref()
        .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// Everything `mmcab info --json` prints. Parts that cannot be read are `null` with an
/// `*_error` key beside them saying why; opening the device without permission fails.
pub fn info_json(paths: &MmcPaths) -> Result<Value> {
    if let Err(e) = std::fs::File::open(&paths.dev_node) {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            bail!(
                "{}: permission denied: run as root (mmcab info reads EXT_CSD with CMD8 and debugfs)",
                paths.dev_node.display()
            );
        }
    }
    let sysfs = read_sysfs_attrs(&paths.card_sysfs);
    let attr = |n: &str| sysfs.get(n).and_then(Value::as_str).map(str::to_string);
    let card_type = attr("type").unwrap_or_else(|| "unknown".into());
    let is_mmc = card_type == "MMC";

    let (ext_csd, ext_csd_error) = if is_mmc {
        match read_ext_csd(paths) {
            Ok(x) => (Some(x), None),
            Err(e) => (None, Some(format!("{e:#}"))),
        }
    } else {
        (
            None,
            Some(format!("{card_type} cards have no EXT_CSD (eMMC only)")),
        )
    };
    let rev = ext_csd.as_ref().map(|(x, _)| x.rev());

    let csd = attr("csd").and_then(|c| decode_csd(&c).ok());
    let (identity, identity_error) = match attr("cid") {
        Some(cid_hex) => {
            let cid = if is_mmc {
                decode_mmc(
                    &cid_hex,
                    csd.as_ref().map(|c| c.spec_vers).unwrap_or(4),
                    rev,
                )
            } else {
                decode_sd(&cid_hex)
            };
            match cid {
                Ok(c) => (
                    json!({
                        "type": card_type,
                        "manfid": c.manfid,
                        "oemid": c.oemid,
                        "name": c.name,
                        "prv": c.prv,
                        "hwrev": c.hwrev,
                        "fwrev": c.fwrev,
                        "serial": c.serial,
                        "date": c.date(),
                        "year": c.year,
                        "month": c.month,
                        "device_type": c.device_type,
                        "manufacturer": c.manufacturer,
                        "cid": cid_hex,
                        "csd": attr("csd"),
                    }),
                    None,
                ),
                Err(e) => (Value::Null, Some(format!("cid {cid_hex}: {e:#}"))),
            }
        }
        None => (
            Value::Null,
            Some(format!("{}: no cid attribute", paths.card_sysfs.display())),
        ),
    };

    let (ios, ios_error) = match read_ios(paths) {
        Ok(i) => (Some(i), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let caps_text = read_trimmed(paths.host_debugfs.join("caps")).ok();
    let caps2_text = read_trimmed(paths.host_debugfs.join("caps2")).ok();
    let kernel_release = kernel_release();
    let evidence = Evidence {
        card_type: &card_type,
        ext_csd: ext_csd.as_ref().map(|(x, _)| x),
        ios: ios.as_ref(),
        host_caps: caps_text.as_deref().and_then(parse_hex_u32),
        host_caps2: caps2_text.as_deref().and_then(parse_hex_u32),
        caps_writable: caps_writable(&paths.host_debugfs.join("caps")),
        kernel_release: &kernel_release,
        cmdq_en: attr("cmdq_en").map(|v| v == "1"),
    };
    let caps = capabilities(&evidence);
    let capacity_bytes = read_trimmed(paths.block_sysfs.join("size"))
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512);

    let mut v = json!({
        "schema": INFO_SCHEMA,
        "device": paths.dev_node,
        "disk": paths.disk,
        "host": paths.host,
        "card": paths.card,
        "type": card_type,
        "kernel_release": kernel_release,
        "capacity_bytes": capacity_bytes,
        "paths": {
            "block_sysfs": paths.block_sysfs,
            "card_sysfs": paths.card_sysfs,
            "host_debugfs": paths.host_debugfs,
            "card_debugfs": paths.card_debugfs,
        },
        "identity": identity,
        "identity_error": identity_error,
        "csd": csd_json(&csd),
        "ios": ios.as_ref().map(ios_json),
        "ios_error": ios_error,
        "ext_csd": ext_csd.as_ref().map(|(x, s)| ext_csd_json(x, s)),
        "ext_csd_error": ext_csd_error,
        "host_caps": {"caps": caps_text, "caps2": caps2_text},
        "capabilities": serde_json::to_value(&caps)?,
        "sysfs": sysfs,
    });
    let line = summary(&v);
    v["summary"] = json!(line);
    Ok(v)
}

/// "256 MiB", "1.8 GiB": binary units with a space, one decimal when not whole.
fn human_bytes(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let one = 1u64 << shift;
        if bytes >= one {
            return if bytes % one == 0 {
                format!("{} {unit}", bytes / one)
            } else {
                format!("{:.1} {unit}", bytes as f64 / one as f64)
            };
        }
    }
    format!("{bytes} B")
}

fn human_hz(hz: u64) -> String {
    if hz >= 1_000_000 {
        let mhz = hz as f64 / 1e6;
        if hz % 1_000_000 == 0 {
            format!("{} MHz", hz / 1_000_000)
        } else {
            format!("{mhz:.2} MHz")
        }
    } else if hz >= 1000 {
        format!("{} kHz", hz / 1000)
    } else {
        format!("{hz} Hz")
    }
}

/// One line for humans and meta.json, from [`info_json`]'s value, e.g.
/// "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed".
pub fn summary(info: &Value) -> String {
    let id = &info["identity"];
    let name = id["name"].as_str().unwrap_or("unknown card");
    let manfid = id["manfid"]
        .as_u64()
        .map(|m| format!(" (manfid 0x{m:06x})"))
        .unwrap_or_default();
    let kind = match info["type"].as_str() {
        Some("MMC") => "eMMC".to_string(),
        Some(t) => t.to_string(),
        None => "card".to_string(),
    };
    let size = info["capacity_bytes"]
        .as_u64()
        .map(|b| format!("{} ", human_bytes(b)))
        .unwrap_or_default();
    let bus = match (
        info["ios"]["bus_width"].as_u64(),
        info["ios"]["clock_hz"].as_u64(),
    ) {
        (Some(w), Some(hz)) => format!(
            ", {w}-bit {} {}",
            human_hz(hz),
            info["ios"]["timing"].as_str().unwrap_or("")
        ),
        _ => ", bus unknown".to_string(),
    };
    format!("{name}{manfid} {size}{kind}{bus}")
        .trim_end()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reads_like_the_design_example() {
        let v = json!({
            "type": "MMC",
            "capacity_bytes": 268_435_456u64,
            "identity": {"name": "QEMU!!", "manfid": 0xaa},
            "ios": {"bus_width": 8, "clock_hz": 52_000_000, "timing": "mmc high-speed"},
        });
        assert_eq!(
            summary(&v),
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed"
        );
        let v = json!({"type": "SD", "capacity_bytes": 1_920_991_232u64, "identity": null, "ios": null});
        assert_eq!(summary(&v), "unknown card 1.8 GiB SD, bus unknown");
    }

    /// The whole JSON from a tree built out of the 7.2 capture, with /dev/null standing
    /// in for the node: the ioctl fails (ENOTTY), so EXT_CSD must come from debugfs.
    #[test]
    fn json_from_capture_tree_agrees_with_its_sysfs_and_debugfs() {
        use crate::device::capture::Capture;
        use crate::device::discover::{discover_in, Roots};
        let cap = Capture::load("cap-linux7-bus8.txt");
        let dir = tempfile::tempdir().unwrap();
        let (sys, debugfs) = cap.build_tree(dir.path());
        let mut paths = discover_in(
            "mmcblk0",
            &Roots {
                sys,
                debugfs,
                dev: "/dev".into(),
            },
        )
        .unwrap();
        paths.dev_node = "/dev/null".into();
        let v = info_json(&paths).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(
            (v["host"].as_str(), v["card"].as_str()),
            (Some("mmc0"), Some("mmc0:0001"))
        );
        assert_eq!(v["type"], "MMC");
        assert_eq!(v["capacity_bytes"], 268_435_456u64);
        assert_eq!(v["identity"]["manfid"], 0xaa);
        assert_eq!(v["identity"]["oemid"], 0x158);
        assert_eq!(v["identity"]["name"], "QEMU!!");
        assert_eq!(v["identity"]["date"], "02/2006");
        assert_eq!(v["identity"]["serial"], 0xdead_beefu64);
        assert_eq!(v["ios"]["bus_width"], 8);
        assert_eq!(v["ios"]["clock_hz"], 52_000_000);
        assert_eq!(v["ios"]["timing"], "mmc high-speed");
        assert_eq!(v["ext_csd"]["source"], "debugfs");
        assert!(v["ext_csd"]["source_note"]
            .as_str()
            .unwrap()
            .contains("not an MMC block device"));
        assert_eq!(v["ext_csd"]["raw"], cap.get("ext_csd").unwrap().trim());
        assert_eq!(v["ext_csd"]["fields_raw"]["SEC_COUNT"], 524_288);
        assert_eq!(v["ext_csd"]["fields"]["SEC_COUNT"]["bytes"], 268_435_456u64);
        assert_eq!(v["ext_csd"]["field_layout"]["SEC_COUNT"]["offset"], 212);
        assert_eq!(v["capabilities"]["packed"]["supported"], false);
        assert_eq!(v["host_caps"]["caps"], "0x4000014f");
        for (name, body) in cap.device_attrs() {
            assert_eq!(v["sysfs"][name], body.trim(), "sysfs {name}");
        }
        assert_eq!(
            v["summary"],
            "QEMU!! (manfid 0x0000aa) 256 MiB eMMC, 8-bit 52 MHz mmc high-speed"
        );
        assert!(v["ext_csd_error"].is_null() && v["ios_error"].is_null());
        let text = crate::device::render::human(&v);
        assert!(text.contains("read via debugfs"), "{text}");
        assert!(text.contains("[212] SEC_COUNT"), "{text}");
    }
}
