//! What the card and the kernel say about the flash geometry, to hold a timing estimate
//! against, and the sentences that compare them.
//!
//! - EXT_CSD HC_ERASE_GRP_SIZE (byte 224) x 512 KiB: the high-capacity erase group, the unit
//!   of the ERASE command when ERASE_GROUP_DEF (byte 175) bit 0 is set (JEDEC eMMC). It need
//!   not be the flash's erase block: the post on the BeagleBone's Micron eMMC measured
//!   2 MiB where this card reports 512 KiB.
//! - EXT_CSD ACC_SIZE (byte 225) (SUPER_PAGE_SIZE, bits 3:0): 512 B x 2^(n-1), the card's
//!   super-page, to compare a page-like boundary with.
//! - sysfs `erase_size`: the erase group the kernel uses (the HC group when
//!   ERASE_GROUP_DEF is set, else the CSD's); `preferred_erase_size`: the kernel's
//!   choice for discards (`mmc_init_erase()` in drivers/mmc/core/core.c: from the
//!   capacity, 512 KiB below 128 MiB, 1 MiB below 512 MiB, 2 MiB below 1 GiB, else
//!   4 MiB, rounded up to a multiple of erase_size): a guess, not a measurement. See
//!   docs/kernel-facts.md.

use super::align::{Boundary, Confidence, Estimate};
use crate::device::ext_csd_field::Field;
use crate::device::ext_csd_table::{ACC_SIZE, ERASE_GROUP_DEF, HC_ERASE_GRP_SIZE};
use crate::device::DeviceInfo;
use crate::units::format_size;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Geometry {
    /// HC_ERASE_GRP_SIZE x 512 KiB (None: 0 or no EXT_CSD).
    pub hc_erase_group: Option<u64>,
    /// ERASE_GROUP_DEF bit 0: erases use the HC group.
    pub erase_group_def: Option<bool>,
    /// ACC_SIZE's super-page, bytes.
    pub super_page: Option<u64>,
    /// sysfs `erase_size`, `preferred_erase_size` (bytes).
    pub erase_size: Option<u64>,
    pub preferred_erase_size: Option<u64>,
    /// Why some of it is missing (not an MMC card, EXT_CSD unreadable).
    pub note: Option<String>,
}

impl Geometry {
    /// From `mmcab info`'s reading of a card.
    pub fn from_info(info: &DeviceInfo) -> Geometry {
        // None also where the info was read back from the JSON of a table without it.
        let field = |field: Field| {
            info.ext_csd
                .as_ref()
                .and_then(|x| x.fields_raw.get(field.name).copied())
        };
        // 0: the kernel does not know (no erase support, or not an MMC/SD card).
        let sysfs = |name: &str| {
            info.sysfs
                .get(name)
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|v| *v > 0)
        };
        Geometry {
            hc_erase_group: field(HC_ERASE_GRP_SIZE)
                .filter(|v| *v > 0)
                .map(|v| v * (512 << 10)),
            erase_group_def: field(ERASE_GROUP_DEF).map(|v| v & 1 == 1),
            super_page: field(ACC_SIZE)
                .map(|v| v & 0xf)
                .filter(|v| (1..=9).contains(v))
                .map(|v| 512 << (v - 1)),
            erase_size: sysfs("erase_size"),
            preferred_erase_size: sysfs("preferred_erase_size"),
            note: info
                .ext_csd_error
                .as_ref()
                .map(|e| format!("EXT_CSD not read: {e}")),
        }
    }

    /// Only the sysfs values a published post quotes (`# erase_size: 524288`).
    pub fn from_sysfs(erase_size: Option<u64>, preferred: Option<u64>) -> Geometry {
        Geometry {
            erase_size,
            preferred_erase_size: preferred,
            note: Some("EXT_CSD not published".into()),
            ..Default::default()
        }
    }

    /// For a target that is not an MMC card.
    pub fn none(why: &str) -> Geometry {
        Geometry {
            note: Some(why.to_string()),
            ..Default::default()
        }
    }

    /// The geometry as `key value` lines (what is known).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(g) = self.hc_erase_group {
            let def = match self.erase_group_def {
                Some(true) => ", ERASE_GROUP_DEF 1: erases use it",
                Some(false) => ", ERASE_GROUP_DEF 0: erases use the CSD group",
                None => "",
            };
            out.push(format!(
                "EXT_CSD HC_ERASE_GRP_SIZE: {}{def}",
                format_size(g)
            ));
        }
        if let Some(p) = self.super_page {
            out.push(format!("EXT_CSD ACC_SIZE: super-page {}", format_size(p)));
        }
        if let Some(e) = self.erase_size {
            out.push(format!("sysfs erase_size: {}", format_size(e)));
        }
        if let Some(p) = self.preferred_erase_size {
            out.push(format!(
                "sysfs preferred_erase_size: {} (the kernel's choice from the capacity, \
                 not a measurement)",
                format_size(p)
            ));
        }
        if let Some(n) = &self.note {
            out.push(n.clone());
        }
        out
    }

    /// Sentences comparing the timing's erase block and page with the registers, each
    /// disagreement stated.
    pub fn cross_check(&self, est: &Estimate) -> Vec<String> {
        let mut out = Vec::new();
        let eb = &est.erase_block;
        let named: Vec<(&str, u64)> = [
            ("EXT_CSD's HC erase group", self.hc_erase_group),
            ("sysfs erase_size", self.erase_size),
            ("sysfs preferred_erase_size", self.preferred_erase_size),
        ]
        .into_iter()
        .filter_map(|(n, v)| v.map(|v| (n, v)))
        .collect();
        match eb.bytes {
            None => {
                if !named.is_empty() {
                    let list: Vec<String> = named
                        .iter()
                        .map(|(n, v)| format!("{n} {}", format_size(*v)))
                        .collect();
                    out.push(format!(
                        "The timing shows no boundary, so it neither confirms nor \
                         contradicts {}.",
                        list.join(", ")
                    ));
                }
            }
            Some(bytes) => {
                for (name, v) in &named {
                    out.push(agreement(bytes, eb, name, *v));
                }
            }
        }
        if let (Some(page), Some(sp)) = (est.page.bytes, self.super_page) {
            out.push(agreement(page, &est.page, "EXT_CSD's super-page", sp));
        }
        out
    }
}

fn agreement(measured: u64, b: &Boundary, name: &str, value: u64) -> String {
    let m = format_size(measured);
    let v = format_size(value);
    let sure = if b.confidence == Confidence::Low {
        " (the timing is not sure of its step)"
    } else {
        ""
    };
    if measured == value {
        format!("Timing {m} agrees with {name} {v}.")
    } else {
        let (factor, way) = if measured > value {
            (measured / value.max(1), "larger")
        } else {
            (value / measured.max(1), "smaller")
        };
        format!("Disagreement: the timing says {m}, {name} says {v} (the timing's is {factor}x {way}){sure}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::align::{estimate, AlignRow};

    #[test]
    fn disagreements_are_stated_and_no_boundary_confirms_nothing() {
        let g = Geometry::from_sysfs(Some(512 << 10), Some(4 << 20));
        // A clean 2 MiB step.
        let rows: Vec<AlignRow> = (12..=28)
            .map(|k| {
                let a = 1u64 << k;
                let extra = if a >= 2 << 20 { 400_000.0 } else { 50_000.0 };
                AlignRow::new(a, 1e6, 1e6 + extra, 1e6)
            })
            .collect();
        let lines = g.cross_check(&estimate(&rows));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("the timing says 2MiB, sysfs erase_size says 512KiB"));
        assert!(lines[1].contains("preferred_erase_size says 4MiB"));
        let flat: Vec<AlignRow> = (12..=28)
            .map(|k| AlignRow::new(1 << k, 1e6, 1e6, 1e6))
            .collect();
        let lines = g.cross_check(&estimate(&flat));
        assert!(
            lines[0].starts_with("The timing shows no boundary"),
            "{lines:?}"
        );
    }
}
