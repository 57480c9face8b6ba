//! The EXT_CSD field table: one row per field (JEDEC JESD84-B51 names, byte offset,
//! width in bytes, first EXT_CSD_REV that defines it, decoder). Multi-byte fields are
//! little-endian (lowest offset = least significant byte), as the standard stores them.
//!
//! `since_rev`: 0 = eMMC 4.0, 2 = 4.2, 3 = 4.3, 5 = 4.41, 6 = 4.5, 7 = 5.0, 8 = 5.1.

use super::ext_csd::{DecodedValue, ExtCsd};

/// How a field's raw value becomes a [`DecodedValue`].
#[derive(Debug, Clone, Copy)]
pub enum Decoder {
    /// The number as is (a count, a class, an index).
    Number,
    /// Hex text (versions, register images).
    Hex,
    /// raw x unit bytes.
    Bytes(u64),
    /// raw x unit nanoseconds.
    Ns(u64),
    /// Bit 0: on/off.
    Bool,
    /// One name per value.
    Enum(&'static [(u64, &'static str)]),
    /// One name per set bit.
    Flags(&'static [(u64, &'static str)]),
    /// Anything that needs arithmetic or other fields.
    Custom(fn(u64, &ExtCsd) -> DecodedValue),
}

/// One EXT_CSD field.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub width: usize,
    pub since_rev: u8,
    pub decoder: Decoder,
}

const fn f(
    name: &'static str,
    offset: usize,
    width: usize,
    since_rev: u8,
    decoder: Decoder,
) -> Field {
    Field {
        name,
        offset,
        width,
        since_rev,
        decoder,
    }
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
const LIFE_TIME: Decoder = Custom(super::ext_csd::decode_life_time);
const PART_SIZE: Decoder = Custom(super::ext_csd::decode_partition_size);
const SECTOR_SIZE: Decoder = Custom(|v, _| match v {
    0 => DecodedValue::Bytes { bytes: 512 },
    1 => DecodedValue::Bytes { bytes: 4096 },
    _ => DecodedValue::Text(format!("reserved ({v})")),
});
const SECURE_MULT: Decoder = Custom(|v, e| {
    let erase_mult = e.field("ERASE_TIMEOUT_MULT").unwrap_or(0);
    DecodedValue::Duration {
        ns: 300 * MS * erase_mult * v,
    }
});
const POW2_NS: fn(u64, u64) -> DecodedValue = |v, unit_ns| DecodedValue::Duration {
    ns: if v == 0 || v > 40 { 0 } else { unit_ns << v },
};

/// Every field mmcab decodes, in offset order.
pub const FIELDS: &[Field] = &[
    f("CMDQ_MODE_EN", 15, 1, 8, Bool),
    f("SECURE_REMOVAL_TYPE", 16, 1, 8, Hex),
    f("FFU_STATUS", 26, 1, 7, Hex),
    f(
        "MODE_CONFIG",
        30,
        1,
        7,
        Enum(&[(0, "normal"), (1, "FFU"), (0x10, "vendor specific")]),
    ),
    f("BARRIER_CTRL", 31, 1, 8, Bool),
    f("CACHE_CTRL", 33, 1, 6, Enum(ON_OFF)),
    f(
        "POWER_OFF_NOTIFICATION",
        34,
        1,
        6,
        Enum(&[
            (0, "no power notification"),
            (1, "powered on"),
            (2, "power off short"),
            (3, "power off long"),
            (4, "sleep notification"),
        ]),
    ),
    f("PACKED_FAILURE_INDEX", 35, 1, 6, Number),
    f(
        "PACKED_COMMAND_STATUS",
        36,
        1,
        6,
        Flags(&[(1, "error"), (2, "indexed error")]),
    ),
    f("EXCEPTION_EVENTS_STATUS", 54, 2, 6, Flags(EXCEPTIONS)),
    f("EXCEPTION_EVENTS_CTRL", 56, 2, 6, Flags(EXCEPTIONS)),
    f("DATA_SECTOR_SIZE", 61, 1, 6, SECTOR_SIZE),
    f("USE_NATIVE_SECTOR", 62, 1, 6, Bool),
    f("NATIVE_SECTOR_SIZE", 63, 1, 6, SECTOR_SIZE),
    f("ENH_START_ADDR", 136, 4, 5, Number),
    f("ENH_SIZE_MULT", 140, 3, 5, PART_SIZE),
    f("GP_SIZE_MULT_1", 143, 3, 5, PART_SIZE),
    f("GP_SIZE_MULT_2", 146, 3, 5, PART_SIZE),
    f("GP_SIZE_MULT_3", 149, 3, 5, PART_SIZE),
    f("GP_SIZE_MULT_4", 152, 3, 5, PART_SIZE),
    f("PARTITION_SETTING_COMPLETED", 155, 1, 5, Bool),
    f(
        "PARTITIONS_ATTRIBUTE",
        156,
        1,
        5,
        Flags(&[
            (1, "ENH_USR"),
            (2, "ENH_1"),
            (4, "ENH_2"),
            (8, "ENH_3"),
            (16, "ENH_4"),
        ]),
    ),
    f("MAX_ENH_SIZE_MULT", 157, 3, 5, PART_SIZE),
    f(
        "PARTITIONING_SUPPORT",
        160,
        1,
        5,
        Flags(&[
            (1, "PARTITIONING_EN"),
            (2, "ENH_ATTRIBUTE_EN"),
            (4, "EXT_ATTRIBUTE_EN"),
        ]),
    ),
    f("HPI_MGMT", 161, 1, 5, Bool),
    f(
        "RST_N_FUNCTION",
        162,
        1,
        5,
        Enum(&[
            (0, "temporarily disabled"),
            (1, "permanently enabled"),
            (2, "permanently disabled"),
        ]),
    ),
    f(
        "BKOPS_EN",
        163,
        1,
        5,
        Flags(&[(1, "MANUAL_EN"), (2, "AUTO_EN")]),
    ),
    f(
        "WR_REL_PARAM",
        166,
        1,
        5,
        Flags(&[(1, "HS_CTRL_REL"), (4, "EN_REL_WR"), (16, "EN_RPMB_REL_WR")]),
    ),
    f("WR_REL_SET", 167, 1, 5, Hex),
    f("RPMB_SIZE_MULT", 168, 1, 5, Bytes(128 * KIB)),
    f("FW_CONFIG", 169, 1, 6, Flags(&[(1, "UPDATE_DISABLE")])),
    f("BOOT_WP", 173, 1, 5, Hex),
    f(
        "ERASE_GROUP_DEF",
        175,
        1,
        3,
        Enum(&[
            (0, "legacy (CSD) erase groups"),
            (1, "high-capacity erase groups"),
        ]),
    ),
    f("BOOT_BUS_CONDITIONS", 177, 1, 3, Hex),
    f(
        "PARTITION_CONFIG",
        179,
        1,
        3,
        Custom(super::ext_csd::decode_partition_config),
    ),
    f(
        "ERASED_MEM_CONT",
        181,
        1,
        3,
        Enum(&[(0, "0x00"), (1, "0xff")]),
    ),
    f(
        "BUS_WIDTH",
        183,
        1,
        0,
        Enum(&[
            (0, "1-bit"),
            (1, "4-bit"),
            (2, "8-bit"),
            (5, "4-bit DDR"),
            (6, "8-bit DDR"),
            (0x86, "8-bit DDR, enhanced strobe"),
        ]),
    ),
    f("STROBE_SUPPORT", 184, 1, 8, Bool),
    f(
        "HS_TIMING",
        185,
        1,
        0,
        Custom(super::ext_csd::decode_hs_timing),
    ),
    f("POWER_CLASS", 187, 1, 0, Number),
    f("CMD_SET_REV", 189, 1, 0, Number),
    f("CMD_SET", 191, 1, 0, Number),
    f(
        "EXT_CSD_REV",
        192,
        1,
        0,
        Enum(&[
            (0, "eMMC 4.0"),
            (1, "eMMC 4.1"),
            (2, "eMMC 4.2"),
            (3, "eMMC 4.3"),
            (4, "obsolete"),
            (5, "eMMC 4.41"),
            (6, "eMMC 4.5"),
            (7, "eMMC 5.0"),
            (8, "eMMC 5.1"),
        ]),
    ),
    f(
        "CSD_STRUCTURE",
        194,
        1,
        0,
        Enum(&[(0, "CSD 1.0"), (1, "CSD 1.1"), (2, "CSD 1.2")]),
    ),
    f(
        "CARD_TYPE",
        196,
        1,
        0,
        Flags(&[
            (1, "HS_26"),
            (2, "HS_52"),
            (4, "DDR_52_1.8V_3V"),
            (8, "DDR_52_1.2V"),
            (16, "HS200_1.8V"),
            (32, "HS200_1.2V"),
            (64, "HS400_1.8V"),
            (128, "HS400_1.2V"),
        ]),
    ),
    f(
        "DRIVER_STRENGTH",
        197,
        1,
        7,
        Flags(&[
            (1, "type 0"),
            (2, "type 1"),
            (4, "type 2"),
            (8, "type 3"),
            (16, "type 4"),
        ]),
    ),
    f("OUT_OF_INTERRUPT_TIME", 198, 1, 5, Ns(10 * MS)),
    f("PARTITION_SWITCH_TIME", 199, 1, 5, Ns(10 * MS)),
    f("PWR_CL_52_195", 200, 1, 0, Hex),
    f("PWR_CL_26_195", 201, 1, 0, Hex),
    f("PWR_CL_52_360", 202, 1, 0, Hex),
    f("PWR_CL_26_360", 203, 1, 0, Hex),
    f("MIN_PERF_R_4_26", 205, 1, 0, Number),
    f("MIN_PERF_W_4_26", 206, 1, 0, Number),
    f("MIN_PERF_R_8_26_4_52", 207, 1, 0, Number),
    f("MIN_PERF_W_8_26_4_52", 208, 1, 0, Number),
    f("MIN_PERF_R_8_52", 209, 1, 0, Number),
    f("MIN_PERF_W_8_52", 210, 1, 0, Number),
    f("SEC_COUNT", 212, 4, 2, Bytes(512)),
    f(
        "SLEEP_NOTIFICATION_TIME",
        216,
        1,
        7,
        Custom(|v, _| POW2_NS(v, 10_000)),
    ),
    f("S_A_TIMEOUT", 217, 1, 3, Custom(|v, _| POW2_NS(v, 100))),
    f("S_C_VCCQ", 219, 1, 3, Number),
    f("S_C_VCC", 220, 1, 3, Number),
    f(
        "HC_WP_GRP_SIZE",
        221,
        1,
        3,
        Custom(super::ext_csd::decode_wp_group_size),
    ),
    f("REL_WR_SEC_C", 222, 1, 3, Number),
    f("ERASE_TIMEOUT_MULT", 223, 1, 3, Ns(300 * MS)),
    f("HC_ERASE_GRP_SIZE", 224, 1, 3, Bytes(512 * KIB)),
    f("ACC_SIZE", 225, 1, 3, Number),
    f("BOOT_SIZE_MULT", 226, 1, 3, Bytes(128 * KIB)),
    f(
        "BOOT_INFO",
        228,
        1,
        3,
        Flags(&[
            (1, "ALT_BOOT_MODE"),
            (2, "DDR_BOOT_MODE"),
            (4, "HS_BOOT_MODE"),
        ]),
    ),
    f("SEC_TRIM_MULT", 229, 1, 5, SECURE_MULT),
    f("SEC_ERASE_MULT", 230, 1, 5, SECURE_MULT),
    f(
        "SEC_FEATURE_SUPPORT",
        231,
        1,
        5,
        Flags(&[
            (1, "SECURE_ER_EN"),
            (4, "SEC_BD_BLK_EN"),
            (16, "SEC_GB_CL_EN"),
            (64, "SEC_SANITIZE"),
        ]),
    ),
    f("TRIM_MULT", 232, 1, 5, Ns(300 * MS)),
    f("CACHE_FLUSH_POLICY", 240, 1, 8, Flags(&[(1, "FIFO")])),
    f("INI_TIMEOUT_AP", 241, 1, 6, Ns(100 * MS)),
    f("CORRECTLY_PRG_SECTORS_NUM", 242, 4, 6, Number),
    f(
        "BKOPS_STATUS",
        246,
        1,
        5,
        Enum(&[
            (0, "no operations required"),
            (1, "operations outstanding (non critical)"),
            (2, "operations outstanding (performance impacted)"),
            (3, "operations outstanding (critical)"),
        ]),
    ),
    f("POWER_OFF_LONG_TIME", 247, 1, 6, Ns(10 * MS)),
    f("GENERIC_CMD6_TIME", 248, 1, 6, Ns(10 * MS)),
    // KiB as mmc-utils and the kernel read it (JESD84 says "1 kb" units).
    f("CACHE_SIZE", 249, 4, 6, Bytes(KIB)),
    f("FIRMWARE_VERSION", 254, 8, 6, Hex),
    f("DEVICE_VERSION", 262, 2, 6, Hex),
    f(
        "OPTIMAL_TRIM_UNIT_SIZE",
        264,
        1,
        7,
        Custom(|v, _| match v {
            0 => DecodedValue::Text("not defined".into()),
            1..=32 => DecodedValue::Bytes {
                bytes: (4 * KIB) << (v - 1),
            },
            _ => DecodedValue::Text(format!("reserved ({v})")),
        }),
    ),
    f("OPTIMAL_WRITE_SIZE", 265, 1, 7, Bytes(4 * KIB)),
    f("OPTIMAL_READ_SIZE", 266, 1, 7, Bytes(4 * KIB)),
    f(
        "PRE_EOL_INFO",
        267,
        1,
        7,
        Enum(&[
            (0, "not defined"),
            (1, "normal"),
            (2, "warning (80% of reserved blocks consumed)"),
            (3, "urgent (90% of reserved blocks consumed)"),
        ]),
    ),
    f("DEVICE_LIFE_TIME_EST_TYP_A", 268, 1, 7, LIFE_TIME),
    f("DEVICE_LIFE_TIME_EST_TYP_B", 269, 1, 7, LIFE_TIME),
    f(
        "CMDQ_DEPTH",
        307,
        1,
        8,
        Custom(|v, _| DecodedValue::Number((v & 0x1f) + 1)),
    ),
    f("CMDQ_SUPPORT", 308, 1, 8, Bool),
    f("BARRIER_SUPPORT", 486, 1, 8, Bool),
    f("FFU_ARG", 487, 4, 7, Hex),
    f(
        "OPERATION_CODE_TIMEOUT",
        491,
        1,
        7,
        Custom(|v, _| POW2_NS(v, 100_000)),
    ),
    f(
        "FFU_FEATURES",
        492,
        1,
        7,
        Flags(&[(1, "SUPPORTED_MODE_OPERATION_CODES")]),
    ),
    f(
        "SUPPORTED_MODES",
        493,
        1,
        7,
        Flags(&[(1, "FFU"), (2, "VSM")]),
    ),
    f("EXT_SUPPORT", 494, 1, 6, Hex),
    f(
        "LARGE_UNIT_SIZE_M1",
        495,
        1,
        6,
        Custom(|v, _| DecodedValue::Bytes {
            bytes: (v + 1) * KIB * KIB,
        }),
    ),
    f("CONTEXT_CAPABILITIES", 496, 1, 6, Hex),
    f("TAG_RES_SIZE", 497, 1, 6, Number),
    f("TAG_UNIT_SIZE", 498, 1, 6, Number),
    f("DATA_TAG_SUPPORT", 499, 1, 6, Bool),
    f("MAX_PACKED_WRITES", 500, 1, 6, Number),
    f("MAX_PACKED_READS", 501, 1, 6, Number),
    f("BKOPS_SUPPORT", 502, 1, 5, Bool),
    f(
        "HPI_FEATURES",
        503,
        1,
        5,
        Flags(&[(1, "HPI_SUPPORTED"), (2, "HPI_IMPLEMENTATION_CMD12")]),
    ),
    f(
        "S_CMD_SET",
        504,
        1,
        0,
        Flags(&[
            (1, "standard MMC"),
            (2, "allocated by MMCA"),
            (4, "allocated by MMCA"),
        ]),
    ),
];

/// The row for `name`, if mmcab knows that field.
pub fn find(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}
