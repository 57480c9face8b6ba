//! The EXT_CSD field table: one row per field (JEDEC JESD84-B51 name, byte offset,
//! width in bytes, first EXT_CSD_REV that defines it, decoder). Multi-byte fields are
//! little-endian (lowest offset = least significant byte), as the standard stores them.
//!
//! Each row is also a constant named as the field ([`SEC_COUNT`], [`CACHE_SIZE`]...), so
//! code that reads a field names it at compile time (`ext_csd.get(SEC_COUNT)`): a typo
//! does not build. [`FIELDS`] is the whole table, in offset order, for what walks every
//! field (`mmcab info`, its JSON); [`find`] looks a name up that a user typed.
//!
//! `since_rev`: 0 = eMMC 4.0, 2 = 4.2, 3 = 4.3, 5 = 4.41, 6 = 4.5, 7 = 5.0, 8 = 5.1.

use super::ext_csd_field::{DecodedValue, Decoder, Field};

/// The table: `NAME: offset, width, since_rev, decoder;` per row, in offset order. Each
/// row becomes `pub const NAME: Field` with `name: "NAME"`, and [`FIELDS`] lists them
/// all: a name is written once, so the constant, its `name` and the table agree.
macro_rules! fields {
    ($($name:ident: $offset:literal, $width:literal, $since_rev:literal, $decoder:expr;)*) => {
        $(
            #[doc = concat!("EXT_CSD byte ", stringify!($offset), ", ", stringify!($width),
                " byte(s) wide, defined since EXT_CSD_REV ", stringify!($since_rev), ".")]
            pub const $name: Field = Field {
                name: stringify!($name),
                offset: $offset,
                width: $width,
                since_rev: $since_rev,
                decoder: $decoder,
            };
        )*

        /// Every field mmcab decodes, in offset order.
        pub const FIELDS: &[Field] = &[$($name),*];
    };
}

use Decoder::*;

const KIB: u64 = 1024;
const MS: u64 = 1_000_000;

const ON_OFF: &[(u64, &str)] = &[(0, "off"), (1, "on")];
const EXCEPTIONS: &[(u64, &str)] = &[
    (1, "URGENT_BKOPS"),
    (2, "DYNCAP_NEEDED"),
    (4, "SYSPOOL_EXHAUSTED"),
    (8, "PACKED_FAILURE"),
    (16, "EXTENDED_SECURITY_FAILURE"),
];
const LIFE_TIME: Decoder = Custom(life_time);
/// GP/enhanced partition sizes: MULT x HC_WP_GRP_SIZE x HC_ERASE_GRP_SIZE x 512 KiB.
const PART_SIZE: Decoder = BytesTimes(512 * KIB, &[HC_WP_GRP_SIZE, HC_ERASE_GRP_SIZE]);
const SECTOR_SIZE: Decoder = Custom(sector_size);
/// Secure trim and erase: 300 ms x ERASE_TIMEOUT_MULT x MULT.
const SECURE_MULT: Decoder = NsTimes(300 * MS, &[ERASE_TIMEOUT_MULT]);

fields! {
    CMDQ_MODE_EN: 15, 1, 8, Bool;
    SECURE_REMOVAL_TYPE: 16, 1, 8, Hex;
    FFU_STATUS: 26, 1, 7, Hex;
    MODE_CONFIG: 30, 1, 7, Enum(&[(0, "normal"), (1, "FFU"), (0x10, "vendor specific")]);
    BARRIER_CTRL: 31, 1, 8, Bool;
    CACHE_CTRL: 33, 1, 6, Enum(ON_OFF);
    POWER_OFF_NOTIFICATION: 34, 1, 6, Enum(&[
        (0, "no power notification"),
        (1, "powered on"),
        (2, "power off short"),
        (3, "power off long"),
        (4, "sleep notification"),
    ]);
    PACKED_FAILURE_INDEX: 35, 1, 6, Number;
    PACKED_COMMAND_STATUS: 36, 1, 6, Flags(&[(1, "error"), (2, "indexed error")]);
    EXCEPTION_EVENTS_STATUS: 54, 2, 6, Flags(EXCEPTIONS);
    EXCEPTION_EVENTS_CTRL: 56, 2, 6, Flags(EXCEPTIONS);
    DATA_SECTOR_SIZE: 61, 1, 6, SECTOR_SIZE;
    USE_NATIVE_SECTOR: 62, 1, 6, Bool;
    NATIVE_SECTOR_SIZE: 63, 1, 6, SECTOR_SIZE;
    ENH_START_ADDR: 136, 4, 5, Number;
    ENH_SIZE_MULT: 140, 3, 5, PART_SIZE;
    GP_SIZE_MULT_1: 143, 3, 5, PART_SIZE;
    GP_SIZE_MULT_2: 146, 3, 5, PART_SIZE;
    GP_SIZE_MULT_3: 149, 3, 5, PART_SIZE;
    GP_SIZE_MULT_4: 152, 3, 5, PART_SIZE;
    PARTITION_SETTING_COMPLETED: 155, 1, 5, Bool;
    PARTITIONS_ATTRIBUTE: 156, 1, 5, Flags(&[
        (1, "ENH_USR"),
        (2, "ENH_1"),
        (4, "ENH_2"),
        (8, "ENH_3"),
        (16, "ENH_4"),
    ]);
    MAX_ENH_SIZE_MULT: 157, 3, 5, PART_SIZE;
    PARTITIONING_SUPPORT: 160, 1, 5, Flags(&[
        (1, "PARTITIONING_EN"),
        (2, "ENH_ATTRIBUTE_EN"),
        (4, "EXT_ATTRIBUTE_EN"),
    ]);
    HPI_MGMT: 161, 1, 5, Bool;
    RST_N_FUNCTION: 162, 1, 5, Enum(&[
        (0, "temporarily disabled"),
        (1, "permanently enabled"),
        (2, "permanently disabled"),
    ]);
    BKOPS_EN: 163, 1, 5, Flags(&[(1, "MANUAL_EN"), (2, "AUTO_EN")]);
    WR_REL_PARAM: 166, 1, 5, Flags(&[
        (1, "HS_CTRL_REL"),
        (4, "EN_REL_WR"),
        (16, "EN_RPMB_REL_WR"),
    ]);
    WR_REL_SET: 167, 1, 5, Hex;
    RPMB_SIZE_MULT: 168, 1, 5, Bytes(128 * KIB);
    FW_CONFIG: 169, 1, 6, Flags(&[(1, "UPDATE_DISABLE")]);
    BOOT_WP: 173, 1, 5, Hex;
    ERASE_GROUP_DEF: 175, 1, 3, Enum(&[
        (0, "legacy (CSD) erase groups"),
        (1, "high-capacity erase groups"),
    ]);
    BOOT_BUS_CONDITIONS: 177, 1, 3, Hex;
    PARTITION_CONFIG: 179, 1, 3, Custom(partition_config);
    ERASED_MEM_CONT: 181, 1, 3, Enum(&[(0, "0x00"), (1, "0xff")]);
    BUS_WIDTH: 183, 1, 0, Enum(&[
        (0, "1-bit"),
        (1, "4-bit"),
        (2, "8-bit"),
        (5, "4-bit DDR"),
        (6, "8-bit DDR"),
        (0x86, "8-bit DDR, enhanced strobe"),
    ]);
    STROBE_SUPPORT: 184, 1, 8, Bool;
    HS_TIMING: 185, 1, 0, Custom(hs_timing);
    POWER_CLASS: 187, 1, 0, Number;
    CMD_SET_REV: 189, 1, 0, Number;
    CMD_SET: 191, 1, 0, Number;
    EXT_CSD_REV: 192, 1, 0, Enum(&[
        (0, "eMMC 4.0"),
        (1, "eMMC 4.1"),
        (2, "eMMC 4.2"),
        (3, "eMMC 4.3"),
        (4, "obsolete"),
        (5, "eMMC 4.41"),
        (6, "eMMC 4.5"),
        (7, "eMMC 5.0"),
        (8, "eMMC 5.1"),
    ]);
    CSD_STRUCTURE: 194, 1, 0, Enum(&[(0, "CSD 1.0"), (1, "CSD 1.1"), (2, "CSD 1.2")]);
    CARD_TYPE: 196, 1, 0, Flags(&[
        (1, "HS_26"),
        (2, "HS_52"),
        (4, "DDR_52_1.8V_3V"),
        (8, "DDR_52_1.2V"),
        (16, "HS200_1.8V"),
        (32, "HS200_1.2V"),
        (64, "HS400_1.8V"),
        (128, "HS400_1.2V"),
    ]);
    DRIVER_STRENGTH: 197, 1, 7, Flags(&[
        (1, "type 0"),
        (2, "type 1"),
        (4, "type 2"),
        (8, "type 3"),
        (16, "type 4"),
    ]);
    OUT_OF_INTERRUPT_TIME: 198, 1, 5, Ns(10 * MS);
    PARTITION_SWITCH_TIME: 199, 1, 5, Ns(10 * MS);
    PWR_CL_52_195: 200, 1, 0, Hex;
    PWR_CL_26_195: 201, 1, 0, Hex;
    PWR_CL_52_360: 202, 1, 0, Hex;
    PWR_CL_26_360: 203, 1, 0, Hex;
    MIN_PERF_R_4_26: 205, 1, 0, Number;
    MIN_PERF_W_4_26: 206, 1, 0, Number;
    MIN_PERF_R_8_26_4_52: 207, 1, 0, Number;
    MIN_PERF_W_8_26_4_52: 208, 1, 0, Number;
    MIN_PERF_R_8_52: 209, 1, 0, Number;
    MIN_PERF_W_8_52: 210, 1, 0, Number;
    SEC_COUNT: 212, 4, 2, Bytes(512);
    SLEEP_NOTIFICATION_TIME: 216, 1, 7, Custom(|v| pow2_ns(v, 10_000));
    S_A_TIMEOUT: 217, 1, 3, Custom(|v| pow2_ns(v, 100));
    S_C_VCCQ: 219, 1, 3, Number;
    S_C_VCC: 220, 1, 3, Number;
    // Write-protect groups: HC_WP_GRP_SIZE erase groups.
    HC_WP_GRP_SIZE: 221, 1, 3, BytesTimes(512 * KIB, &[HC_ERASE_GRP_SIZE]);
    REL_WR_SEC_C: 222, 1, 3, Number;
    ERASE_TIMEOUT_MULT: 223, 1, 3, Ns(300 * MS);
    HC_ERASE_GRP_SIZE: 224, 1, 3, Bytes(512 * KIB);
    ACC_SIZE: 225, 1, 3, Number;
    BOOT_SIZE_MULT: 226, 1, 3, Bytes(128 * KIB);
    BOOT_INFO: 228, 1, 3, Flags(&[
        (1, "ALT_BOOT_MODE"),
        (2, "DDR_BOOT_MODE"),
        (4, "HS_BOOT_MODE"),
    ]);
    SEC_TRIM_MULT: 229, 1, 5, SECURE_MULT;
    SEC_ERASE_MULT: 230, 1, 5, SECURE_MULT;
    SEC_FEATURE_SUPPORT: 231, 1, 5, Flags(&[
        (1, "SECURE_ER_EN"),
        (4, "SEC_BD_BLK_EN"),
        (16, "SEC_GB_CL_EN"),
        (64, "SEC_SANITIZE"),
    ]);
    TRIM_MULT: 232, 1, 5, Ns(300 * MS);
    CACHE_FLUSH_POLICY: 240, 1, 8, Flags(&[(1, "FIFO")]);
    INI_TIMEOUT_AP: 241, 1, 6, Ns(100 * MS);
    CORRECTLY_PRG_SECTORS_NUM: 242, 4, 6, Number;
    BKOPS_STATUS: 246, 1, 5, Enum(&[
        (0, "no operations required"),
        (1, "operations outstanding (non critical)"),
        (2, "operations outstanding (performance impacted)"),
        (3, "operations outstanding (critical)"),
    ]);
    POWER_OFF_LONG_TIME: 247, 1, 6, Ns(10 * MS);
    GENERIC_CMD6_TIME: 248, 1, 6, Ns(10 * MS);
    // KiB as mmc-utils and the kernel read it (JESD84 says "1 kb" units).
    CACHE_SIZE: 249, 4, 6, Bytes(KIB);
    FIRMWARE_VERSION: 254, 8, 6, Hex;
    DEVICE_VERSION: 262, 2, 6, Hex;
    OPTIMAL_TRIM_UNIT_SIZE: 264, 1, 7, Custom(optimal_trim_unit);
    OPTIMAL_WRITE_SIZE: 265, 1, 7, Bytes(4 * KIB);
    OPTIMAL_READ_SIZE: 266, 1, 7, Bytes(4 * KIB);
    PRE_EOL_INFO: 267, 1, 7, Enum(&[
        (0, "not defined"),
        (1, "normal"),
        (2, "warning (80% of reserved blocks consumed)"),
        (3, "urgent (90% of reserved blocks consumed)"),
    ]);
    DEVICE_LIFE_TIME_EST_TYP_A: 268, 1, 7, LIFE_TIME;
    DEVICE_LIFE_TIME_EST_TYP_B: 269, 1, 7, LIFE_TIME;
    CMDQ_DEPTH: 307, 1, 8, Custom(|v| DecodedValue::Number((v & 0x1f) + 1));
    CMDQ_SUPPORT: 308, 1, 8, Bool;
    BARRIER_SUPPORT: 486, 1, 8, Bool;
    FFU_ARG: 487, 4, 7, Hex;
    OPERATION_CODE_TIMEOUT: 491, 1, 7, Custom(|v| pow2_ns(v, 100_000));
    FFU_FEATURES: 492, 1, 7, Flags(&[(1, "SUPPORTED_MODE_OPERATION_CODES")]);
    SUPPORTED_MODES: 493, 1, 7, Flags(&[(1, "FFU"), (2, "VSM")]);
    EXT_SUPPORT: 494, 1, 6, Hex;
    LARGE_UNIT_SIZE_M1: 495, 1, 6, Custom(|v| DecodedValue::Bytes {
        bytes: (v + 1) * KIB * KIB,
    });
    CONTEXT_CAPABILITIES: 496, 1, 6, Hex;
    TAG_RES_SIZE: 497, 1, 6, Number;
    TAG_UNIT_SIZE: 498, 1, 6, Number;
    DATA_TAG_SUPPORT: 499, 1, 6, Bool;
    MAX_PACKED_WRITES: 500, 1, 6, Number;
    MAX_PACKED_READS: 501, 1, 6, Number;
    BKOPS_SUPPORT: 502, 1, 5, Bool;
    HPI_FEATURES: 503, 1, 5, Flags(&[(1, "HPI_SUPPORTED"), (2, "HPI_IMPLEMENTATION_CMD12")]);
    S_CMD_SET: 504, 1, 0, Flags(&[
        (1, "standard MMC"),
        (2, "allocated by MMCA"),
        (4, "allocated by MMCA"),
    ]);
}

/// The row for `name`, if mmcab knows that field: for a name a user typed (a plan's
/// `ext_csd` knob). Code names a field by its constant.
pub fn find(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// 2^v x unit nanoseconds (v 0 and over 40: 0), the timeouts that are powers of two.
fn pow2_ns(v: u64, unit_ns: u64) -> DecodedValue {
    DecodedValue::Duration {
        ns: if v == 0 || v > 40 { 0 } else { unit_ns << v },
    }
}

fn sector_size(v: u64) -> DecodedValue {
    match v {
        0 => DecodedValue::Bytes { bytes: 512 },
        1 => DecodedValue::Bytes { bytes: 4096 },
        _ => DecodedValue::Text(format!("reserved ({v})")),
    }
}

fn optimal_trim_unit(v: u64) -> DecodedValue {
    match v {
        0 => DecodedValue::Text("not defined".into()),
        1..=32 => DecodedValue::Bytes {
            bytes: (4 * KIB) << (v - 1),
        },
        _ => DecodedValue::Text(format!("reserved ({v})")),
    }
}

fn life_time(v: u64) -> DecodedValue {
    DecodedValue::Text(match v {
        0 => "not defined".to_string(),
        1..=10 => format!("{}-{}% of estimated life used", (v - 1) * 10, v * 10),
        11 => "exceeded its maximum estimated life".to_string(),
        _ => format!("reserved ({v:#x})"),
    })
}

fn partition_config(v: u64) -> DecodedValue {
    let access = match v & 7 {
        0 => "user area".to_string(),
        1 => "boot0".to_string(),
        2 => "boot1".to_string(),
        3 => "RPMB".to_string(),
        n => format!("GP{}", n - 3),
    };
    let boot = match (v >> 3) & 7 {
        0 => "not enabled",
        1 => "boot0",
        2 => "boot1",
        7 => "user area",
        _ => "reserved",
    };
    let ack = if v & 0x40 != 0 {
        "boot ack"
    } else {
        "no boot ack"
    };
    DecodedValue::Text(format!("access {access}, boot from {boot}, {ack}"))
}

/// HS_TIMING's low nibble, the timing interface the card is set to (JESD84-B51 7.4.65;
/// EXT_CSD_TIMING_BC, _HS, _HS200, _HS400 in include/linux/mmc/mmc.h).
pub const HS_TIMING_INTERFACES: &[(u64, &str)] = &[
    (0, "backwards compatible"),
    (1, "high speed"),
    (2, "HS200"),
    (3, "HS400"),
];

/// The timing interface of HS_TIMING's low nibble: its name, or `reserved (n)`.
pub fn hs_timing_interface(v: u64) -> String {
    let n = v & 0xf;
    match HS_TIMING_INTERFACES.iter().find(|(k, _)| *k == n) {
        Some((_, name)) => (*name).to_string(),
        None => format!("reserved ({n})"),
    }
}

/// HS_TIMING: the timing interface (low nibble) and the driver strength the host
/// selected (high nibble, JESD84-B51 7.4.65).
fn hs_timing(v: u64) -> DecodedValue {
    DecodedValue::Text(format!(
        "{}, driver strength type {}",
        hs_timing_interface(v),
        v >> 4
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_enough_fields_in_bounds_and_unique() {
        assert!(FIELDS.len() >= 40, "{} fields", FIELDS.len());
        let mut names = std::collections::HashSet::new();
        let mut last_end = 0;
        for f in FIELDS {
            assert!(f.width >= 1 && f.width <= 8, "{}", f.name);
            assert!(f.offset + f.width <= 512, "{}", f.name);
            assert!(
                f.offset >= last_end,
                "{} overlaps or is out of order",
                f.name
            );
            last_end = f.offset + f.width;
            assert!(names.insert(f.name), "duplicate {}", f.name);
        }
    }

    #[test]
    fn a_constant_is_its_row_and_find_knows_it_by_name() {
        assert_eq!(SEC_COUNT.name, "SEC_COUNT");
        assert_eq!((SEC_COUNT.offset, SEC_COUNT.width), (212, 4));
        let found = find("CACHE_CTRL").expect("CACHE_CTRL is in the table");
        assert_eq!((found.name, found.offset), (CACHE_CTRL.name, 33));
        assert!(find("CACHE_CTLR").is_none());
    }
}
