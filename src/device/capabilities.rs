//! What this card and host can do that mmcab's knobs rely on, each with the evidence.
//! Only the card's registers and the kernel's own files decide: never the card's
//! reaction to a command (QEMU's model accepts a packed write and stores the header as
//! data, testbed/README.md).

use super::ext_csd::ExtCsd;
use super::ext_csd_table::{
    BUS_WIDTH, CACHE_CTRL, CACHE_SIZE, CMDQ_DEPTH, CMDQ_SUPPORT, MAX_PACKED_READS,
    MAX_PACKED_WRITES,
};
use super::ios::Ios;
use super::packed::NoPackedWrites;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// `MMC_CAP_4_BIT_DATA`, `MMC_CAP_8_BIT_DATA`, `MMC_CAP_AGGRESSIVE_PM` (include/linux/mmc/host.h).
pub const MMC_CAP_4_BIT_DATA: u32 = 1 << 0;
pub const MMC_CAP_8_BIT_DATA: u32 = 1 << 6;
pub const MMC_CAP_AGGRESSIVE_PM: u32 = 1 << 7;
/// `MMC_CAP_CMD23`: the host can send CMD23 SET_BLOCK_COUNT before multi-block transfers.
pub const MMC_CAP_CMD23: u32 = 1 << 30;
/// `MMC_CAP2_CQE`: the host has an eMMC command queue engine.
pub const MMC_CAP2_CQE: u32 = 1 << 23;

/// First kernel whose debugfs `caps` accepts bus-width bits: the change was merged
/// after 6.18. Seen: 6.12 refuses with EINVAL, 7.2 accepts (docs/kernel-facts.md).
pub const BUS_WIDTH_CAPS_WRITABLE_SINCE: (u32, u32) = (6, 19);
/// The same change let `caps` take MMC_CAP_CMD23 and `caps2` MMC_CAP2_CQE.
pub const CMD23_CQE_CAPS_WRITABLE_SINCE: (u32, u32) = BUS_WIDTH_CAPS_WRITABLE_SINCE;

/// One verdict of `capabilities` in `mmcab info --json`: `supported`, `reason` and the
/// numbers behind it, all as keys of one JSON object in alphabetical order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Map<String, Value>")]
pub struct Capability {
    pub supported: bool,
    pub reason: String,
    /// The numbers behind the verdict (field names carry units).
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

impl From<Capability> for Map<String, Value> {
    fn from(c: Capability) -> Self {
        let mut m = c.details;
        m.insert("supported".into(), Value::Bool(c.supported));
        m.insert("reason".into(), Value::String(c.reason));
        m
    }
}

fn cap(supported: bool, reason: String, details: Value) -> Capability {
    let details = match details {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    Capability {
        supported,
        reason,
        details,
    }
}

/// What mmcab's knobs rely on. Fields in alphabetical order, the order of the JSON keys
/// and of `mmcab info`'s list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    pub bus_width: Capability,
    pub bus_width_runtime_switch: Capability,
    pub cache: Capability,
    pub cmdq: Capability,
    pub packed: Capability,
}

impl Capabilities {
    /// (name, verdict) in the order of the fields.
    pub fn iter(&self) -> [(&'static str, &Capability); 5] {
        [
            ("bus_width", &self.bus_width),
            ("bus_width_runtime_switch", &self.bus_width_runtime_switch),
            ("cache", &self.cache),
            ("cmdq", &self.cmdq),
            ("packed", &self.packed),
        ]
    }
}

/// Everything the verdicts are made from (gathered by the caller, so tests can give
/// captured values).
#[derive(Debug, Clone, Default)]
pub struct Evidence<'a> {
    pub card_type: &'a str,
    pub ext_csd: Option<&'a ExtCsd>,
    pub ios: Option<&'a Ios>,
    /// debugfs `caps` / `caps2` of the host.
    pub host_caps: Option<u32>,
    pub host_caps2: Option<u32>,
    /// Whether this process may write debugfs `caps` (None: file missing).
    pub caps_writable: Option<Result<(), String>>,
    /// `uname -r`.
    pub kernel_release: &'a str,
    /// sysfs `cmdq_en` of the card.
    pub cmdq_en: Option<bool>,
}

/// The running kernel's release (`uname -r`), empty when /proc cannot tell.
pub fn kernel_release() -> String {
    super::sysfs::read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default()
}

/// (major, minor) of a kernel release such as "7.2.13+deb14-armmp".
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

fn no_ext_csd(e: &Evidence<'_>) -> String {
    if e.card_type == "MMC" {
        "EXT_CSD could not be read, so the card's support is unknown".to_string()
    } else {
        format!("{} cards have no EXT_CSD (eMMC only)", e.card_type)
    }
}

fn packed(e: &Evidence<'_>) -> Capability {
    let Some(x) = e.ext_csd else {
        return cap(false, no_ext_csd(e), json!({}));
    };
    let (rev, writes, reads) = (x.rev(), x.get(MAX_PACKED_WRITES), x.get(MAX_PACKED_READS));
    let details =
        json!({"ext_csd_rev": rev, "max_packed_writes": writes, "max_packed_reads": reads});
    match crate::device::packed::packed_writes(u64::from(rev), writes) {
        Err(NoPackedWrites::OldCard { rev }) => {
            return cap(
                false,
                format!("EXT_CSD_REV {rev} < 6: packed commands need eMMC 4.5 or later"),
                json!({"ext_csd_rev": rev}),
            )
        }
        Err(NoPackedWrites::NoneAdvertised { .. }) => {
            return cap(false, "card reports MAX_PACKED_WRITES 0".into(), details)
        }
        Ok(_) => {}
    }
    cap(
        true,
        format!("card accepts up to {writes} packed writes and {reads} packed reads (EXT_CSD_REV {rev})"),
        details,
    )
}

fn cmdq(e: &Evidence<'_>) -> Capability {
    let Some(x) = e.ext_csd else {
        return cap(false, no_ext_csd(e), json!({}));
    };
    let rev = x.rev();
    let host_cqe = e.host_caps2.map(|c| c & MMC_CAP2_CQE != 0);
    let host = match host_cqe {
        Some(true) => "host has a CQE",
        Some(false) => "host has no CQE (caps2 without MMC_CAP2_CQE)",
        None => "host CQE unknown (debugfs caps2 unreadable)",
    };
    let enabled = match e.cmdq_en {
        Some(true) => "enabled (cmdq_en 1)",
        Some(false) => "not enabled (cmdq_en 0)",
        None => "cmdq_en not in sysfs",
    };
    if rev < 8 {
        return cap(
            false,
            format!("EXT_CSD_REV {rev} < 8: command queueing needs eMMC 5.1; {host}; {enabled}"),
            json!({"ext_csd_rev": rev, "host_cqe": host_cqe, "enabled": e.cmdq_en}),
        );
    }
    let support = x.get(CMDQ_SUPPORT) & 1 == 1;
    let depth = (x.get(CMDQ_DEPTH) & 0x1f) + 1;
    let details = json!({"ext_csd_rev": rev, "depth": if support { depth } else { 0 }, "host_cqe": host_cqe, "enabled": e.cmdq_en});
    if !support {
        return cap(
            false,
            format!("card reports CMDQ_SUPPORT 0; {host}; {enabled}"),
            details,
        );
    }
    cap(
        true,
        format!("card queues up to {depth} tasks; {host}; {enabled}"),
        details,
    )
}

fn cache(e: &Evidence<'_>) -> Capability {
    let Some(x) = e.ext_csd else {
        return cap(false, no_ext_csd(e), json!({}));
    };
    let rev = x.rev();
    if rev < 6 {
        return cap(
            false,
            format!("EXT_CSD_REV {rev} < 6: a volatile cache needs eMMC 4.5 or later"),
            json!({"ext_csd_rev": rev}),
        );
    }
    let size_bytes = x.get(CACHE_SIZE) * 1024;
    let on = x.get(CACHE_CTRL) & 1 == 1;
    let details = json!({"ext_csd_rev": rev, "size_bytes": size_bytes, "enabled": on});
    if size_bytes == 0 {
        return cap(false, "card reports CACHE_SIZE 0".into(), details);
    }
    let state = if on { "on" } else { "off" };
    cap(
        true,
        format!(
            "{} cache, CACHE_CTRL {state}",
            crate::units::format_size(size_bytes)
        ),
        details,
    )
}

fn host_max_bits(caps: u32) -> u8 {
    if caps & MMC_CAP_8_BIT_DATA != 0 {
        8
    } else if caps & MMC_CAP_4_BIT_DATA != 0 {
        4
    } else {
        1
    }
}

fn bus_width(e: &Evidence<'_>) -> Capability {
    let host_max = e.host_caps.map(host_max_bits);
    let card = e.ext_csd.map(|x| x.decode(BUS_WIDTH).to_string());
    let details = json!({"bits": e.ios.map(|i| i.bus_width_bits), "host_max_bits": host_max, "ext_csd_bus_width": card});
    match e.ios {
        Some(ios) => {
            let max = match host_max {
                Some(m) => format!("host caps allow up to {m} bits"),
                None => "host caps unreadable".to_string(),
            };
            cap(
                true,
                format!("{}-bit now (debugfs ios); {max}", ios.bus_width_bits),
                details,
            )
        }
        None => cap(
            false,
            "bus width unknown: debugfs ios unreadable".into(),
            details,
        ),
    }
}

fn bus_width_runtime_switch(e: &Evidence<'_>) -> Capability {
    let version = kernel_version(e.kernel_release);
    let details =
        json!({"kernel": e.kernel_release, "caps": e.host_caps.map(|c| format!("0x{c:08x}"))});
    let (maj, min) = BUS_WIDTH_CAPS_WRITABLE_SINCE;
    match version {
        // Read-only before 6.7 (caps_gate.rs): no bit at all, so no EINVAL either.
        Some(v) if v < super::caps_gate::CAPS_WRITABLE_SINCE => {
            return cap(
                false,
                format!(
                    "kernel {} < 6.7: debugfs caps is read-only (writable from 6.7, the \
                     bus-width bits from {maj}.{min}); boot with another device-tree bus-width \
                     instead",
                    e.kernel_release
                ),
                details,
            )
        }
        Some(v) if v < (maj, min) => {
            return cap(
                false,
                format!(
                    "kernel {} < {maj}.{min}: debugfs caps refuses bus-width bits (EINVAL, seen on 6.12); \
                     boot with another device-tree bus-width instead",
                    e.kernel_release
                ),
                details,
            )
        }
        None => {
            return cap(
                false,
                format!("kernel release {:?} not understood", e.kernel_release),
                details,
            )
        }
        Some(_) => {}
    }
    match &e.caps_writable {
        None => cap(
            false,
            "debugfs caps file missing (debugfs not mounted?)".into(),
            details,
        ),
        Some(Err(why)) => cap(false, format!("debugfs caps not writable: {why}"), details),
        Some(Ok(())) => cap(
            true,
            format!(
                "kernel {} >= {maj}.{min} accepts bus-width bits in debugfs caps (seen on 7.2), \
                 applied at the next card re-init (runtime PM); widening beyond the boot width \
                 is risky on real boards",
                e.kernel_release
            ),
            details,
        ),
    }
}

pub fn capabilities(e: &Evidence<'_>) -> Capabilities {
    Capabilities {
        packed: packed(e),
        cmdq: cmdq(e),
        cache: cache(e),
        bus_width: bus_width(e),
        bus_width_runtime_switch: bus_width_runtime_switch(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;

    fn parse_caps(s: &str) -> u32 {
        u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
    }

    fn caps_of(which: &str, writable: bool) -> Capabilities {
        let cap = Capture::load(which);
        let x = ExtCsd::from_hex(cap.get("ext_csd").unwrap()).unwrap();
        let ios = Ios::parse(cap.get("ios").unwrap()).unwrap();
        let release = cap.get("uname").unwrap().trim().to_string();
        let e = Evidence {
            card_type: "MMC",
            ext_csd: Some(&x),
            ios: Some(&ios),
            host_caps: Some(parse_caps(cap.get("caps").unwrap())),
            host_caps2: Some(parse_caps(cap.get("caps2").unwrap())),
            caps_writable: Some(if writable {
                Ok(())
            } else {
                Err("read-only".into())
            }),
            kernel_release: &release,
            cmdq_en: Some(false),
        };
        capabilities(&e)
    }

    #[test]
    fn qemu_card_has_no_packing_cmdq_or_cache_and_says_why() {
        for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
            let c = caps_of(which, true);
            assert!(!c.packed.supported);
            assert_eq!(
                c.packed.reason,
                "EXT_CSD_REV 3 < 6: packed commands need eMMC 4.5 or later"
            );
            assert!(!c.cmdq.supported);
            assert!(
                c.cmdq.reason.starts_with("EXT_CSD_REV 3 < 8"),
                "{}",
                c.cmdq.reason
            );
            assert!(!c.cache.supported);
            assert!(c.bus_width.supported);
        }
    }

    #[test]
    fn bus_width_now_and_runtime_switch_follow_kernel_version() {
        let six = caps_of("cap-linux6-bus4.txt", true);
        assert_eq!(six.bus_width.details["bits"], 4);
        assert_eq!(six.bus_width.details["host_max_bits"], 4);
        assert!(!six.bus_width_runtime_switch.supported);
        assert!(six.bus_width_runtime_switch.reason.contains("EINVAL"));
        let seven = caps_of("cap-linux7-bus8.txt", true);
        assert_eq!(seven.bus_width.details["bits"], 8);
        assert_eq!(seven.bus_width.details["host_max_bits"], 8);
        assert!(
            seven.bus_width_runtime_switch.supported,
            "{}",
            seven.bus_width_runtime_switch.reason
        );
        let ro = caps_of("cap-linux7-bus8.txt", false);
        assert!(!ro.bus_width_runtime_switch.supported);
        assert!(ro.bus_width_runtime_switch.reason.contains("read-only"));
        // Linux 6.1: caps is read-only (mode 0400), so no EINVAL to speak of.
        let old = caps_of("cap-linux61-bus4.txt", true);
        assert_eq!(old.bus_width.details["bits"], 4);
        let why = &old.bus_width_runtime_switch.reason;
        assert!(!old.bus_width_runtime_switch.supported);
        assert!(
            why.starts_with("kernel 6.1.0-50-armmp < 6.7: debugfs caps is read-only")
                && !why.contains("EINVAL"),
            "{why}"
        );
    }

    #[test]
    fn packed_capable_card_reports_its_limits() {
        let mut x = ExtCsd { raw: [0; 512] };
        x.raw[192] = 6;
        x.raw[500] = 63;
        x.raw[501] = 20;
        let e = Evidence {
            card_type: "MMC",
            ext_csd: Some(&x),
            kernel_release: "6.12.0",
            ..Default::default()
        };
        let p = packed(&e);
        assert!(p.supported);
        assert_eq!(p.details["max_packed_writes"], 63);
        let mut y = x.clone();
        y.raw[500] = 0;
        let e = Evidence {
            ext_csd: Some(&y),
            ..e
        };
        assert_eq!(packed(&e).reason, "card reports MAX_PACKED_WRITES 0");
    }

    #[test]
    fn sd_card_has_no_ext_csd_reason() {
        let e = Evidence {
            card_type: "SD",
            kernel_release: "7.2.13",
            ..Default::default()
        };
        let c = capabilities(&e);
        assert_eq!(c.packed.reason, "SD cards have no EXT_CSD (eMMC only)");
        assert!(!c.bus_width.supported);
    }

    #[test]
    fn kernel_versions_parse() {
        assert_eq!(kernel_version("7.2.13+deb14-armmp"), Some((7, 2)));
        assert_eq!(kernel_version("6.12.95+deb12-armmp"), Some((6, 12)));
        assert_eq!(kernel_version("6.19-rc1"), Some((6, 19)));
        assert_eq!(kernel_version("garbage"), None);
    }
}
