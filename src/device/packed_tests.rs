//! The packed builder and its command sequence against `tests/fixtures/packed/linux-4.9.toml`,
//! derived from Linux 4.9's `mmc_blk_packed_hdr_wrq_prep()` independently of this code
//! (see the README there).

use super::*;
use crate::device::transfer;
use serde::Deserialize;

const FIXTURE: &str = include_str!("../../tests/fixtures/packed/linux-4.9.toml");

#[derive(Deserialize)]
struct Fixture {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    addressing: Addressing,
    large_sector: bool,
    entries: Vec<(u64, u32)>,
    header_bytes: usize,
    header: String,
    sbc_arg: u32,
    cmd25_arg: u32,
    blocks: u32,
    commands: Vec<String>,
}

fn cases() -> Vec<Case> {
    let fixture: Fixture = toml::from_str(FIXTURE).expect("the fixture parses");
    assert_eq!(fixture.case.len(), 5, "cases in the fixture");
    fixture.case
}

fn hex(text: &str) -> Vec<u8> {
    let digits: String = text.split_whitespace().collect();
    (0..digits.len() / 2)
        .map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn headers_and_arguments_are_linux_4_9s() {
    for case in cases() {
        let format = CardFormat {
            addressing: case.addressing,
            large_sector: case.large_sector,
        };
        let entries: Vec<Entry> = case
            .entries
            .iter()
            .map(|&(sector, sectors)| Entry { sector, sectors })
            .collect();
        let packed = build(format, &entries).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let mut want = hex(&case.header);
        want.resize(case.header_bytes, 0);
        assert_eq!(packed.header.len(), case.header_bytes, "{}", case.name);
        assert_eq!(packed.header, want, "{}: header bytes", case.name);
        assert_eq!(packed.args.sbc_arg, case.sbc_arg, "{}", case.name);
        assert_eq!(packed.args.cmd25_arg, case.cmd25_arg, "{}", case.name);
        assert_eq!(packed.args.blocks, case.blocks, "{}", case.name);
        assert_eq!(packed.args.entries, entries.len());
        let sent: Vec<String> = transfer::packed_write(&packed.args, 1)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(sent, case.commands, "{}: command sequence", case.name);
    }
}

#[test]
fn the_first_case_byte_by_byte() {
    // The README's table, written out once more so a broken fixture cannot hide it.
    let packed = build(
        CardFormat {
            addressing: Addressing::Sector,
            large_sector: false,
        },
        &[
            Entry {
                sector: 0x1000,
                sectors: 8,
            },
            Entry {
                sector: 0x2000,
                sectors: 16,
            },
        ],
    )
    .unwrap();
    assert_eq!(
        &packed.header[..24],
        &[
            0x01, 0x02, 0x02, 0x00, 0, 0, 0, 0, 0x08, 0, 0, 0, 0x00, 0x10, 0, 0, 0x10, 0, 0, 0,
            0x00, 0x20, 0, 0
        ]
    );
    assert!(packed.header[24..].iter().all(|&b| b == 0));
    assert_eq!(packed.args.sbc_arg, 0x4000_0019);
}

#[test]
fn what_linux_would_not_pack_is_refused() {
    let small = CardFormat {
        addressing: Addressing::Sector,
        large_sector: false,
    };
    let one = [Entry {
        sector: 0,
        sectors: 8,
    }];
    assert_eq!(build(small, &one), Err(PackedError::TooFewEntries(1)));
    let many: Vec<Entry> = (0..64)
        .map(|i| Entry {
            sector: i * 8,
            sectors: 8,
        })
        .collect();
    assert!(matches!(
        build(small, &many),
        Err(PackedError::TooManyEntries { max: 63, .. })
    ));
    let large = CardFormat {
        large_sector: true,
        ..small
    };
    assert_eq!(large.max_entries(), 255);
    assert!(build(large, &many).is_ok());
    let odd = [
        Entry {
            sector: 0,
            sectors: 8,
        },
        Entry {
            sector: 8,
            sectors: 4,
        },
    ];
    assert!(matches!(
        build(large, &odd),
        Err(PackedError::NotWholeLargeSectors { index: 2, .. })
    ));
    let far = [
        Entry {
            sector: 0,
            sectors: 8,
        },
        Entry {
            sector: 1 << 23,
            sectors: 8,
        },
    ];
    let byte = CardFormat {
        addressing: Addressing::Byte,
        large_sector: false,
    };
    assert!(matches!(
        build(byte, &far),
        Err(PackedError::AddressTooLarge { index: 2, .. })
    ));
    let huge = [
        Entry {
            sector: 0,
            sectors: 0x8000,
        },
        Entry {
            sector: 0x8000,
            sectors: 0x8000,
        },
    ];
    assert!(matches!(
        build(small, &huge),
        Err(PackedError::TooManyBlocks { .. })
    ));
}

#[test]
fn packed_status_names_the_failed_entry() {
    let mut ext_csd = [0u8; 512];
    assert!(!PackedStatus::from_ext_csd(&ext_csd).failed());
    ext_csd[EXT_CSD_EXP_EVENTS_STATUS] = EXT_CSD_PACKED_EVENT;
    ext_csd[EXT_CSD_PACKED_CMD_STATUS] =
        EXT_CSD_PACKED_GENERIC_ERROR | EXT_CSD_PACKED_INDEXED_ERROR;
    ext_csd[EXT_CSD_PACKED_FAILURE_INDEX] = 3;
    let status = PackedStatus::from_ext_csd(&ext_csd);
    assert_eq!(status.failed_entry(), Some(3));
    assert!(status.describe().starts_with("the card failed entry 3"));
    ext_csd[EXT_CSD_PACKED_CMD_STATUS] = EXT_CSD_PACKED_GENERIC_ERROR;
    let status = PackedStatus::from_ext_csd(&ext_csd);
    assert!(status.failed() && status.failed_entry().is_none());
}

/// Every byte each command of [`split_in_region`] may write, read as packed (its entries)
/// or as one plain write from its first entry (header and data), is inside the region.
fn assert_inside(
    format: CardFormat,
    entries: &[Entry],
    commands: &[std::ops::Range<usize>],
    region: &std::ops::Range<u64>,
) {
    let covered: Vec<usize> = commands.iter().flat_map(|c| c.clone()).collect();
    assert_eq!(
        covered,
        (0..entries.len()).collect::<Vec<_>>(),
        "each write once, in order"
    );
    for command in commands {
        let sent = &entries[command.clone()];
        for e in sent {
            assert!(
                e.sector >= region.start && e.sector + u64::from(e.sectors) <= region.end,
                "entry {e:?} outside {region:?}"
            );
        }
        if sent.len() >= 2 {
            let args = build(format, sent).unwrap().args;
            assert!(
                sent[0].sector + u64::from(args.blocks) <= region.end,
                "packed command at {} of {} blocks passes the end of {region:?}",
                sent[0].sector,
                args.blocks
            );
        }
    }
}

#[test]
fn the_last_pack_near_the_region_end_is_cut_short() {
    let format = CardFormat {
        addressing: Addressing::Sector,
        large_sector: false,
    };
    // 16 writes of 4 KiB (8 sectors) fill sectors 1000..1128 exactly.
    let region = 1000..1128;
    let writes: Vec<Entry> = (0..16)
        .map(|i| Entry {
            sector: 1000 + 8 * i,
            sectors: 8,
        })
        .collect();
    // The first 8 and their header (65 sectors) fit; of the next 8, written as one
    // plain transfer from sector 1064 they would reach 1129: 7 go packed, the last alone.
    let head = split_in_region(format, &writes[..8], 8, &region).unwrap();
    assert_eq!(head.len(), 1);
    assert_eq!(head[0], 0..8);
    let tail = split_in_region(format, &writes[8..], 8, &region).unwrap();
    assert_eq!(tail, vec![0..7, 7..8]);
    assert_inside(format, &writes[8..], &tail, &region);
    // A 4 KiB header on a large-sector card takes 8 sectors: 7 of the last 8 fit.
    let large = CardFormat {
        large_sector: true,
        ..format
    };
    assert_eq!(
        split_in_region(large, &writes[8..], 8, &region),
        Ok(vec![0..7, 7..8])
    );
    // Just before the end: only one write fits, sent alone.
    assert_eq!(
        split_in_region(format, &writes[14..], 8, &region),
        Ok(vec![0..1, 1..2])
    );
}

#[test]
fn packs_of_generated_offsets_never_leave_the_region() {
    use crate::workload::engine::offsets::{OffsetGen, Order};
    for (large_sector, bs, blocks, packed) in [
        (false, 4096u64, 100u64, 8usize),
        (false, 512, 37, 63),
        (true, 4096, 300, 255),
        (false, 65536, 9, 7),
        (true, 8192, 3, 2),
    ] {
        let format = CardFormat {
            addressing: Addressing::Sector,
            large_sector,
        };
        let start = 1 << 20;
        let region = start / 512..(start + blocks * bs) / 512;
        for order in [Order::Sequential, Order::Random, Order::Permutation] {
            let mut gen = OffsetGen::new(order, start, bs, blocks, 2000, 0, 7);
            let mut batch = Vec::new();
            loop {
                let next = gen.next_io();
                if let Some((_, offset)) = next {
                    batch.push(Entry {
                        sector: offset / 512,
                        sectors: (bs / 512) as u32,
                    });
                }
                if batch.len() == packed || (next.is_none() && !batch.is_empty()) {
                    let commands = split_in_region(format, &batch, packed, &region)
                        .unwrap_or_else(|e| panic!("{order:?} bs {bs}: {e}"));
                    assert_inside(format, &batch, &commands, &region);
                    batch.clear();
                }
                if next.is_none() {
                    break;
                }
            }
        }
    }
}

#[test]
fn an_entry_outside_the_region_is_refused() {
    let format = CardFormat {
        addressing: Addressing::Sector,
        large_sector: false,
    };
    let region = 64..128;
    let entries = [
        Entry {
            sector: 64,
            sectors: 8,
        },
        Entry {
            sector: 124,
            sectors: 8,
        },
    ];
    let err = split_in_region(format, &entries, 8, &region).unwrap_err();
    assert!(
        matches!(err, PackedError::OutsideRegion { index: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("outside the region"), "{err}");
    // Sector arithmetic that would wrap is refused, not wrapped.
    let wrapping = [Entry {
        sector: u64::MAX - 3,
        sectors: 8,
    }];
    assert!(split_in_region(format, &wrapping, 8, &(0..u64::MAX)).is_err());
}

#[test]
fn packed_writes_need_emmc_4_5_and_a_max() {
    assert_eq!(packed_writes(8, 60), Ok(60));
    assert_eq!(packed_writes(6, 1), Ok(1));
    let old = packed_writes(3, 0).unwrap_err();
    assert_eq!(old, NoPackedWrites::OldCard { rev: 3 });
    assert!(
        old.to_string()
            .starts_with("the card does not support packed commands (EXT_CSD_REV 3"),
        "{old}"
    );
    // An old card's MAX_PACKED_WRITES byte means nothing (a reserved byte before 4.5).
    assert!(packed_writes(5, 32).is_err());
    let none = packed_writes(7, 0).unwrap_err();
    assert!(none.to_string().contains("MAX_PACKED_WRITES 0"), "{none}");
}
