//! CID (card identification) and the parts of CSD needed to read it, decoded as the
//! kernel decodes them (drivers/mmc/core/mmc.c and sd.c), so the result agrees with the
//! card's sysfs `manfid`, `oemid`, `name`, `serial`, `date`.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// eMMC (JEDEC) manufacturer IDs. Sources: the kernel's CID_MANFID_* quirk constants
/// (drivers/mmc/core/card.h), mmc-utils lsmmc, vendor datasheets. 0xAA is QEMU's model.
pub const EMMC_MANUFACTURERS: &[(u32, &str)] = &[
    (0x00, "SanDisk"),
    (0x02, "SanDisk"),
    (0x03, "Toshiba"),
    (0x09, "ATP"),
    (0x11, "Toshiba/Kioxia"),
    (0x13, "Micron"),
    (0x15, "Samsung"),
    (0x1b, "Samsung"),
    (0x27, "Apacer"),
    (0x2c, "Kingston"),
    (0x32, "Phison"),
    (0x37, "KingMax"),
    (0x44, "ATP"),
    (0x45, "SanDisk"),
    (0x5d, "Swissbit"),
    (0x70, "Kingston"),
    (0x88, "Foresee"),
    (0x8f, "UNIC"),
    (0x90, "SK hynix"),
    (0x9b, "YMTC"),
    (0xaa, "QEMU (emulated)"),
    (0xd6, "Foresee/Longsys"),
    (0xf4, "Biwin"),
    (0xfe, "Micron (Numonyx)"),
];

/// SD Association manufacturer IDs (same sources as above).
pub const SD_MANUFACTURERS: &[(u32, &str)] = &[
    (0x01, "Panasonic"),
    (0x02, "Toshiba/Kioxia"),
    (0x03, "SanDisk"),
    (0x05, "Lenovo"),
    (0x08, "Silicon Power"),
    (0x09, "ATP"),
    (0x12, "Gigastone"),
    (0x18, "Infineon"),
    (0x1b, "Samsung"),
    (0x1c, "Transcend"),
    (0x1d, "ADATA"),
    (0x1e, "Transcend"),
    (0x1f, "Kingston"),
    (0x27, "Phison"),
    (0x28, "Lexar"),
    (0x30, "SanDisk"),
    (0x31, "Silicon Power"),
    (0x33, "STMicroelectronics"),
    (0x41, "Kingston"),
    (0x6f, "STMicroelectronics"),
    (0x74, "Transcend"),
    (0x76, "Patriot"),
    (0x82, "Sony"),
    (0x9c, "Angelbird/Hoodman"),
    (0x9e, "PNY"),
    (0x9f, "Kingston"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CardKind {
    #[serde(rename = "MMC")]
    Mmc,
    #[serde(rename = "SD")]
    Sd,
}

/// A decoded CID. Field formats follow the kernel's sysfs attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cid {
    pub manfid: u32,
    /// As the kernel reports it: 16 bits (eMMC: the reserved/CBX byte and OID; SD: two
    /// ASCII characters).
    pub oemid: u16,
    pub name: String,
    /// Product revision byte (PRV); eMMC 1.x cards have hwrev/fwrev instead.
    pub prv: u8,
    pub hwrev: u8,
    pub fwrev: u8,
    pub serial: u32,
    pub month: u8,
    pub year: u16,
    /// eMMC CBX: 0 removable card, 1 BGA, 2 POP (None for SD).
    pub device_type: Option<&'static str>,
    pub manufacturer: String,
}

impl Cid {
    /// `MM/YYYY`, as sysfs `date`.
    pub fn date(&self) -> String {
        format!("{:02}/{:04}", self.month, self.year)
    }
}

pub fn parse_hex128(hex: &str) -> Result<u128> {
    let hex = hex.trim();
    if hex.len() != 32 {
        bail!("{hex:?}: expected 32 hex digits (a 128-bit register)");
    }
    u128::from_str_radix(hex, 16).with_context(|| format!("{hex:?}: not hex"))
}

/// `UNSTUFF_BITS(resp, start, size)`: bits start..start+size of the 128-bit register.
fn bits(reg: u128, start: u32, size: u32) -> u64 {
    ((reg >> start) & ((1u128 << size) - 1)) as u64
}

fn ascii(reg: u128, high_bit: u32, chars: u32) -> String {
    (0..chars)
        .map(|i| bits(reg, high_bit - 8 * (i + 1), 8) as u8)
        .filter(|b| *b != 0)
        .map(char::from)
        .collect()
}

pub fn manufacturer(kind: CardKind, manfid: u32) -> String {
    let table = match kind {
        CardKind::Mmc => EMMC_MANUFACTURERS,
        CardKind::Sd => SD_MANUFACTURERS,
    };
    table
        .iter()
        .find(|(id, _)| *id == manfid)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("unknown (manfid {manfid:#04x})"))
}

/// eMMC CID. `spec_vers` is CSD[125:122] (MMCA version: 0-1 old layout, 2+ new);
/// `ext_csd_rev` applies JESD84-B451's date rule (rev >= 5: years before 2010 + 16),
/// as the kernel does.
pub fn decode_mmc(cid_hex: &str, spec_vers: u8, ext_csd_rev: Option<u8>) -> Result<Cid> {
    let r = parse_hex128(cid_hex)?;
    let mut cid = if spec_vers <= 1 {
        Cid {
            manfid: bits(r, 104, 24) as u32,
            oemid: 0,
            name: ascii(r, 104, 7),
            prv: 0,
            hwrev: bits(r, 44, 4) as u8,
            fwrev: bits(r, 40, 4) as u8,
            serial: bits(r, 16, 24) as u32,
            month: bits(r, 12, 4) as u8,
            year: bits(r, 8, 4) as u16 + 1997,
            device_type: None,
            manufacturer: String::new(),
        }
    } else {
        Cid {
            manfid: bits(r, 120, 8) as u32,
            oemid: bits(r, 104, 16) as u16,
            name: ascii(r, 104, 6),
            prv: bits(r, 48, 8) as u8,
            hwrev: 0,
            fwrev: 0,
            serial: bits(r, 16, 32) as u32,
            month: bits(r, 12, 4) as u8,
            year: bits(r, 8, 4) as u16 + 1997,
            device_type: Some(match bits(r, 112, 2) {
                0 => "removable",
                1 => "BGA",
                2 => "POP",
                _ => "reserved",
            }),
            manufacturer: String::new(),
        }
    };
    if ext_csd_rev.is_some_and(|rev| rev >= 5) && cid.year < 2010 {
        cid.year += 16;
    }
    cid.manufacturer = manufacturer(CardKind::Mmc, cid.manfid);
    Ok(cid)
}

/// SD CID (SD Physical Layer spec, 5.2).
pub fn decode_sd(cid_hex: &str) -> Result<Cid> {
    let r = parse_hex128(cid_hex)?;
    let manfid = bits(r, 120, 8) as u32;
    Ok(Cid {
        manfid,
        oemid: bits(r, 104, 16) as u16,
        name: ascii(r, 104, 5),
        prv: bits(r, 56, 8) as u8,
        hwrev: bits(r, 60, 4) as u8,
        fwrev: bits(r, 56, 4) as u8,
        serial: bits(r, 24, 32) as u32,
        month: bits(r, 8, 4) as u8,
        year: bits(r, 12, 8) as u16 + 2000,
        device_type: None,
        manufacturer: manufacturer(CardKind::Sd, manfid),
    })
}

/// The CSD fields mmcab shows (eMMC layout; SD cards share bits 127:96): `csd` of
/// `mmcab info --json`. Fields in alphabetical order, the order of the JSON keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Csd {
    /// Legacy capacity from C_SIZE/C_SIZE_MULT (eMMC <= 2 GiB, SD 1.0), bytes; 0 when
    /// C_SIZE is 0xFFF (the card says: see EXT_CSD SEC_COUNT).
    pub legacy_capacity_bytes: u64,
    /// READ_BL_LEN as bytes.
    pub read_block_bytes: u64,
    /// eMMC SPEC_VERS (MMCA version): 4 = 4.x and later.
    pub spec_vers: u8,
    pub structure: u8,
    /// TRAN_SPEED decoded: maximum bus clock in Hz.
    pub tran_speed_hz: u64,
}

pub fn decode_csd(csd_hex: &str) -> Result<Csd> {
    let r = parse_hex128(csd_hex)?;
    const UNIT_HZ: [u64; 4] = [100_000, 1_000_000, 10_000_000, 100_000_000];
    // Multipliers x10, as the kernel's tran_mant[] table.
    const MANT: [u64; 16] = [
        0, 10, 12, 13, 15, 20, 26, 30, 35, 40, 45, 52, 55, 60, 70, 80,
    ];
    let unit = bits(r, 96, 3) as usize;
    let tran_speed_hz =
        UNIT_HZ.get(unit).copied().unwrap_or(0) * MANT[bits(r, 99, 4) as usize] / 10;
    let read_bl_len = bits(r, 80, 4) as u32;
    let c_size = bits(r, 62, 12);
    let c_size_mult = bits(r, 47, 3) as u32;
    let legacy_capacity_bytes = if c_size == 0xfff {
        0
    } else {
        (c_size + 1) << (c_size_mult + 2 + read_bl_len)
    };
    Ok(Csd {
        structure: bits(r, 126, 2) as u8,
        spec_vers: bits(r, 122, 4) as u8,
        tran_speed_hz,
        read_block_bytes: 1 << read_bl_len,
        legacy_capacity_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;

    // BeagleBone Black's Micron MTFC2GMVEA (results/reference/beaglebone-2013-bus-width.csv).
    const BBB_CID: &str = "fe014e4d4d433032473a1158f1467f35";
    const BBB_CSD: &str = "d04f01320f5a1393ffffffe38a4000e7";

    #[test]
    fn beaglebone_cid_matches_its_sysfs() {
        let csd = decode_csd(BBB_CSD).unwrap();
        assert_eq!((csd.structure, csd.spec_vers), (3, 4));
        // eMMC 4.41 (EXT_CSD_REV 5): 2012 is not moved by the +16 rule.
        let cid = decode_mmc(BBB_CID, csd.spec_vers, Some(5)).unwrap();
        assert_eq!(cid.manfid, 0xfe);
        assert_eq!(format!("0x{:06x}", cid.manfid), "0x0000fe");
        assert_eq!(format!("0x{:04x}", cid.oemid), "0x014e");
        assert_eq!(cid.name, "MMC02G");
        assert_eq!(cid.date(), "07/2012");
        assert_eq!(format!("0x{:08x}", cid.serial), "0x1158f146");
        assert_eq!(cid.prv, 0x3a);
        assert_eq!(cid.device_type, Some("BGA"));
        assert_eq!(cid.manufacturer, "Micron (Numonyx)");
    }

    #[test]
    fn beaglebone_csd_gives_the_capacity_fdisk_printed() {
        let csd = decode_csd(BBB_CSD).unwrap();
        assert_eq!(csd.tran_speed_hz, 26_000_000); // legacy speed; HS 52 MHz is in EXT_CSD
        assert_eq!(csd.read_block_bytes, 1024);
        // "Disk /dev/mmcblk1: 1920 MB, 1920991232 bytes" in the same post.
        assert_eq!(csd.legacy_capacity_bytes, 1_920_991_232);
    }

    #[test]
    fn qemu_cid_matches_the_guest_sysfs_in_both_captures() {
        for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
            let cap = Capture::load(which);
            let csd = decode_csd(cap.get("device/csd").unwrap()).unwrap();
            let cid = decode_mmc(cap.get("device/cid").unwrap(), csd.spec_vers, Some(3)).unwrap();
            let sys = |n: &str| cap.get(&format!("device/{n}")).unwrap().trim().to_string();
            assert_eq!(format!("0x{:06x}", cid.manfid), sys("manfid"));
            assert_eq!(format!("0x{:04x}", cid.oemid), sys("oemid"));
            assert_eq!(cid.name, sys("name"));
            assert_eq!(cid.date(), sys("date"));
            assert_eq!(format!("0x{:08x}", cid.serial), sys("serial"));
            assert_eq!(format!("0x{:x}", cid.prv), sys("prv"));
            assert_eq!(cid.manufacturer, "QEMU (emulated)");
            assert_eq!(csd.legacy_capacity_bytes, 256 << 20);
            assert_eq!(csd.tran_speed_hz, 100_000_000);
        }
    }

    #[test]
    fn date_rule_for_ext_csd_rev_5_and_later() {
        // MDT year nibble 9 = 2006, but an eMMC 4.41+ card means 2022.
        let cid = "aa015851454d55212101deadbeef2900";
        assert_eq!(decode_mmc(cid, 4, Some(3)).unwrap().date(), "02/2006");
        assert_eq!(decode_mmc(cid, 4, Some(8)).unwrap().date(), "02/2022");
    }

    #[test]
    fn sd_cid_layout() {
        // Built field by field from the SD spec's CID layout (MID 0x03, OID "SD",
        // PNM "SU08G", PRV 8.0, PSN 0x12345678, MDT year 13 month 2, CRC byte 0x01).
        let cid = decode_sd("0353445355303847801234567800d201").unwrap();
        assert_eq!(cid.manfid, 0x03);
        assert_eq!(cid.oemid, 0x5344);
        assert_eq!(cid.name, "SU08G");
        assert_eq!(cid.serial, 0x1234_5678);
        assert_eq!(cid.date(), "02/2013");
        assert_eq!(cid.manufacturer, "SanDisk");
        assert_eq!((cid.hwrev, cid.fwrev), (8, 0));
        assert!(decode_sd("12").is_err());
    }
}
