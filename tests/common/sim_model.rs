//! The simulated eMMC's timing model (testbed/emmcsim/README.md, "Timing model" and
//! "Speed modes"), for the tests that hold mmcab's measurements against it: the card's
//! time for a command and for a workload's I/O on a given bus (speed mode, width,
//! clock), and for a tuning.
//!
//! A test predicts a workload's time per I/O as the README does: the model's time with
//! the card's parameters, minus the model's time with every timing parameter 0, plus
//! what the guest measured on that zero card (the software's own part):
//! [`Timing::predict`]. Everything here is the README's formula, nothing measured.

/// A speed mode as the host's `ios` in debugfs names it ("timing spec").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Backwards-compatible timing at the CSD's TRAN_SPEED, SDR: 25 MHz as Linux reads
    /// the card's 0x32 (`tran_mant` in drivers/mmc/core/mmc.c).
    Legacy,
    /// HS52: high speed SDR, 52 MHz.
    Hs,
    /// DDR52: high speed, both clock edges, 52 MHz.
    Ddr52,
    /// HS200: SDR at 200 MHz, after tuning.
    Hs200,
    /// HS400: DDR at 200 MHz on 8 lines (data strobe).
    Hs400,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Legacy,
        Mode::Hs,
        Mode::Ddr52,
        Mode::Hs200,
        Mode::Hs400,
    ];

    /// The clock the mmc core sets for the mode with the simulated card
    /// (`mmc_set_bus_speed()`: the CSD's 25 MHz, HS 52 MHz, HS200/HS400 200 MHz).
    pub fn clock_hz(self) -> f64 {
        match self {
            Mode::Legacy => 25e6,
            Mode::Hs | Mode::Ddr52 => 52e6,
            Mode::Hs200 | Mode::Hs400 => 200e6,
        }
    }

    /// Bits each data line carries per clock: 2 in DDR (DDR52, HS400), 1 otherwise.
    pub fn bits_per_clock(self) -> f64 {
        match self {
            Mode::Ddr52 | Mode::Hs400 => 2.0,
            _ => 1.0,
        }
    }

    /// The `timing spec` number of debugfs `ios` (MMC_TIMING_* of include/linux/mmc/host.h).
    pub fn ios_timing(self) -> u32 {
        match self {
            Mode::Legacy => 0,
            Mode::Hs => 1,
            Mode::Ddr52 => 8,
            Mode::Hs200 => 9,
            Mode::Hs400 => 10,
        }
    }

    /// The short name the tests and the README use: legacy, hs, ddr52, hs200, hs400.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Legacy => "legacy",
            Mode::Hs => "hs",
            Mode::Ddr52 => "ddr52",
            Mode::Hs200 => "hs200",
            Mode::Hs400 => "hs400",
        }
    }
}

/// The bus as the core last set it (`set_ios`): what the model moves data over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bus {
    pub mode: Mode,
    /// Data lines: 1, 4 or 8.
    pub width: u32,
    pub clock_hz: f64,
}

impl Bus {
    /// The mode at its own clock ([`Mode::clock_hz`]).
    pub fn new(mode: Mode, width: u32) -> Bus {
        Bus {
            mode,
            width,
            clock_hz: mode.clock_hz(),
        }
    }

    /// The same bus at another clock (the host's debugfs `clock`, any value from f_min
    /// to f_max: the model follows it).
    pub fn with_clock(self, clock_hz: f64) -> Bus {
        Bus { clock_hz, ..self }
    }

    /// A command's bits on the CMD line, always SDR: 48 out and `response_bits` back
    /// (48 for R1, R1b and R3; 136 for R2).
    pub fn command_line_ns(&self, response_bits: f64) -> f64 {
        (48.0 + response_bits) * 1e9 / self.clock_hz
    }

    /// Clocks one data block of `block_bytes` takes on the DAT lines: its bits over
    /// the width and the bits per clock, plus 18 (start bit, CRC16, end bit; in DDR the
    /// two interleaved CRC16s of the two edges take the same 16 clocks).
    pub fn block_clocks(&self, block_bytes: f64) -> f64 {
        block_bytes * 8.0 / (f64::from(self.width) * self.mode.bits_per_clock()) + 18.0
    }

    /// `blocks` data blocks of `block_bytes` each, in ns.
    pub fn data_ns(&self, block_bytes: f64, blocks: f64) -> f64 {
        blocks * self.block_clocks(block_bytes) * 1e9 / self.clock_hz
    }

    /// `blocks` blocks of 512 bytes, in ns: the README's bus(n).
    pub fn sectors_ns(&self, blocks: f64) -> f64 {
        self.data_ns(512.0, blocks)
    }
}

/// One I/O of a workload at queue depth 1, as the kernel sends it (README.md, "From the
/// formula to a workload's throughput").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Io {
    /// A read of this many bytes: CMD23 + CMD18.
    Read(f64),
    /// A write of this many bytes: CMD23 + CMD25, then the block layer's CMD13.
    Write(f64),
    /// One ioctl packed write of `entries` entries of `entry_bytes` each (with one
    /// entry: an unpacked ioctl write): CMD23 + CMD25 (+ the header block) + CMD13.
    /// Its time is per entry.
    PackedWrite { entries: f64, entry_bytes: f64 },
}

impl Io {
    /// 512 KiB sequential read, one request.
    pub const SEQ_READ_512K: Io = Io::Read(524288.0);
    /// 512 KiB sequential write, one request.
    pub const SEQ_WRITE_512K: Io = Io::Write(524288.0);
    /// 4 KiB random read.
    pub const RAND_READ_4K: Io = Io::Read(4096.0);
    /// 4 KiB random write.
    pub const RAND_WRITE_4K: Io = Io::Write(4096.0);

    /// Bytes the I/O moves (per entry for a packed write, as its time is).
    pub fn bytes(&self) -> f64 {
        match *self {
            Io::Read(b) | Io::Write(b) => b,
            Io::PackedWrite { entry_bytes, .. } => entry_bytes,
        }
    }
}

/// The timing parameters of emmcsim (testbed/emmcsim/params.c), ns and ns per KiB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub cmd_ns: f64,
    pub read_access_ns: f64,
    pub read_ns_per_kib: f64,
    pub write_access_ns: f64,
    pub program_ns_per_kib: f64,
    pub packed_entry_ns: f64,
    /// Per KiB of a read inside its first flash page (flash.c: the page's bytes out of
    /// the die before the first block is on the bus).
    pub first_page_ns_per_kib: f64,
    /// The flash page, KiB (`page_kib`: not a cost, but it bounds the first page's part).
    pub page_kib: f64,
}

/// Every timing parameter 0: what remains is the bus and the CMD line.
pub const ZERO: Timing = Timing {
    cmd_ns: 0.0,
    read_access_ns: 0.0,
    read_ns_per_kib: 0.0,
    write_access_ns: 0.0,
    program_ns_per_kib: 0.0,
    packed_entry_ns: 0.0,
    first_page_ns_per_kib: 0.0,
    page_kib: 16.0,
};

/// The module's defaults (testbed/emmcsim/params.c).
pub const DEFAULTS: Timing = Timing {
    cmd_ns: 8000.0,
    read_access_ns: 40000.0,
    read_ns_per_kib: 4400.0,
    write_access_ns: 1_000_000.0,
    program_ns_per_kib: 42000.0,
    packed_entry_ns: 20000.0,
    first_page_ns_per_kib: 0.0,
    page_kib: 16.0,
};

impl Timing {
    /// One command with an R1 response: its 96 bits on the CMD line plus cmd_ns.
    pub fn command(&self, bus: &Bus) -> f64 {
        self.cmd_ns + bus.command_line_ns(48.0)
    }

    /// A read's first-page cost, ns: the part of the read inside the page it starts in.
    /// The workloads' reads start at a multiple of their size (random offsets are
    /// aligned to the block size; a long read's requests to the request size), sizes
    /// and pages being powers of two: that part is the smaller of the two.
    pub fn first_page_ns(&self, bytes: f64) -> f64 {
        let page = self.page_kib * 1024.0;
        let part = if page > 0.0 { bytes.min(page) } else { bytes };
        part / 1024.0 * self.first_page_ns_per_kib
    }

    /// The card's time for one I/O, ns (per entry for a packed write).
    pub fn per_io(&self, io: Io, bus: &Bus) -> f64 {
        let kib = |bytes: f64| bytes / 1024.0;
        match io {
            Io::Read(bytes) => {
                2.0 * self.command(bus)
                    + self.read_access_ns
                    + self.first_page_ns(bytes)
                    + bus.sectors_ns(bytes / 512.0)
                    + kib(bytes) * self.read_ns_per_kib
            }
            Io::Write(bytes) => {
                3.0 * self.command(bus)
                    + self.write_access_ns
                    + bus.sectors_ns(bytes / 512.0)
                    + kib(bytes) * self.program_ns_per_kib
            }
            Io::PackedWrite {
                entries,
                entry_bytes,
            } => {
                let (header, per_entry) = if entries > 1.0 {
                    (1.0, self.packed_entry_ns)
                } else {
                    (0.0, 0.0)
                };
                (3.0 * self.command(bus)
                    + self.write_access_ns
                    + bus.sectors_ns(entries * entry_bytes / 512.0 + header)
                    + entries * (per_entry + kib(entry_bytes) * self.program_ns_per_kib))
                    / entries
            }
        }
    }

    /// The predicted time per I/O, ns: this set's model time minus the zero card's,
    /// plus `zero_measured_ns`, the time per I/O measured on the zero card (same
    /// kernel, same bus).
    pub fn predict(&self, io: Io, bus: &Bus, zero_measured_ns: f64) -> f64 {
        self.per_io(io, bus) - ZERO.per_io(io, bus) + zero_measured_ns
    }
}

/// The simulated host's largest request (testbed/emmcsim/host.c, `max_req_size`): the
/// block layer splits a longer read into requests of this size, each its own CMD23 +
/// CMD18.
pub const MAX_REQUEST_BYTES: f64 = 524288.0;

impl Timing {
    /// The card's time for one read of `bytes` at queue depth 1 as the block layer sends
    /// it: requests of at most [`MAX_REQUEST_BYTES`] one after the other, ns.
    pub fn read_ns(&self, bytes: f64, bus: &Bus) -> f64 {
        let whole = (bytes / MAX_REQUEST_BYTES).floor();
        let rest = bytes - whole * MAX_REQUEST_BYTES;
        let mut ns = whole * self.per_io(Io::Read(MAX_REQUEST_BYTES), bus);
        if rest > 0.0 {
            ns += self.per_io(Io::Read(rest), bus);
        }
        ns
    }

    /// The predicted time of a read of `bytes`, ns: [`Timing::read_ns`] of this set minus
    /// the zero card's, plus the time per read the zero card measured (same kernel, bus,
    /// block size and queue depth).
    pub fn predict_read(&self, bytes: f64, bus: &Bus, zero_measured_ns: f64) -> f64 {
        self.read_ns(bytes, bus) - ZERO.read_ns(bytes, bus) + zero_measured_ns
    }

    /// A read task of the command queue (README.md, "Command queue"): its flash part
    /// (the queueing CMD44 and CMD45 and the CMD46 that executes it, the read access and
    /// the flash's per-KiB time) and its bus part (`bytes` over the data lines), ns.
    pub fn cqe_read_parts(&self, bytes: f64, bus: &Bus) -> (f64, f64) {
        let flash = 3.0 * self.command(bus)
            + self.read_access_ns
            + self.first_page_ns(bytes)
            + bytes / 1024.0 * self.read_ns_per_kib;
        (flash, bus.sectors_ns(bytes / 512.0))
    }

    /// A queued read's time at queue depth 1 (flash, then bus) and, with enough tasks
    /// in the queue, the time per read once they overlap (the slower part), ns.
    pub fn cqe_read_ns(&self, bytes: f64, bus: &Bus, pipelined: bool) -> f64 {
        let (flash, data) = self.cqe_read_parts(bytes, bus);
        if pipelined {
            flash.max(data)
        } else {
            flash + data
        }
    }

    /// The module's write-back cache at its drain rate (README.md, "Cache"): a long
    /// write's time per byte once the cache is full, ns.
    pub fn drain_ns_per_byte(&self) -> f64 {
        self.program_ns_per_kib / 1024.0
    }
}

/// Seed 003, "Pinephone 2 (UBports endition)", eMMC manfid 0xe1: the rows the
/// `pinephone` preset is calibrated on and checked against, as (workload of
/// workloads/seed-003-randread.toml, bytes per read, IOPS the post gives);
/// results/reference/pinephone-2021-randread.csv has them (tests/plain/presets.rs).
pub const SEED_003_PHONE_2: [(&str, f64, f64); 6] = [
    ("rand-4k-qd1", 4096.0, 4202.0),
    ("rand-16k-qd1", 16384.0, 2180.0),
    ("rand-64k-qd1", 65536.0, 953.0),
    ("rand-256k-qd1", 262144.0, 298.0),
    ("rand-1024k-qd1", 1048576.0, 79.0),
    ("rand-4k-qd32", 4096.0, 3808.0),
];

/// A preset of the simulated card (testbed/presets/NAME): its parameters as the file
/// gives them (`icount` among them) and its timing, the file's timing parameters over
/// the module's [`DEFAULTS`].
#[derive(Debug, Clone)]
pub struct Preset {
    pub name: String,
    pub params: std::collections::BTreeMap<String, String>,
    pub timing: Timing,
}

impl Preset {
    /// Reads testbed/presets/`name` as testbed/presets.bash does: `PARAM=VALUE` lines,
    /// `#` comments (whole lines, or after a blank).
    pub fn load(name: &str) -> Preset {
        let path = super::testbed::repo_root()
            .join("testbed/presets")
            .join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut params = std::collections::BTreeMap::new();
        for line in text.lines() {
            let line = match line.find(" #").or_else(|| line.find("\t#")) {
                Some(i) => &line[..i],
                None => line,
            }
            .trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("{}: {line:?} is not PARAM=VALUE", path.display()));
            params.insert(k.trim().to_string(), v.trim().to_string());
        }
        let ns = |key: &str, default: f64| -> f64 {
            params.get(key).map_or(default, |v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{}: {key}={v} is not a number", path.display()))
            })
        };
        let timing = Timing {
            cmd_ns: ns("cmd_ns", DEFAULTS.cmd_ns),
            read_access_ns: ns("read_access_ns", DEFAULTS.read_access_ns),
            read_ns_per_kib: ns("read_ns_per_kib", DEFAULTS.read_ns_per_kib),
            write_access_ns: ns("write_access_ns", DEFAULTS.write_access_ns),
            program_ns_per_kib: ns("program_ns_per_kib", DEFAULTS.program_ns_per_kib),
            packed_entry_ns: ns("packed_entry_ns", DEFAULTS.packed_entry_ns),
            first_page_ns_per_kib: ns("first_page_ns_per_kib", DEFAULTS.first_page_ns_per_kib),
            page_kib: ns("page_kib", DEFAULTS.page_kib),
        };
        Preset {
            name: name.to_string(),
            params,
            timing,
        }
    }

    /// A parameter of the file as a number (`None` when the file leaves it to the
    /// module's default).
    pub fn number(&self, key: &str) -> Option<f64> {
        self.params.get(key).map(|v| v.parse().unwrap())
    }
}

/// The host's tuning (testbed/emmcsim/speed.c): `cmds` CMD21s, each an R1 command and
/// one tuning block (128 bytes on 8 lines, 64 on 4), plus `tuning_ns` once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    pub cmds: f64,
    pub tuning_ns: f64,
}

/// The module's defaults: 40 CMD21s (sdhci's MAX_TUNING_LOOP), no time of its own.
pub const TUNING_DEFAULTS: Tuning = Tuning {
    cmds: 40.0,
    tuning_ns: 0.0,
};

impl Tuning {
    /// The card's time for one tuning on `bus` (an HS200 bus of 4 or 8 lines), ns.
    pub fn ns(&self, timing: &Timing, bus: &Bus) -> f64 {
        let block = if bus.width == 8 { 128.0 } else { 64.0 };
        self.tuning_ns + self.cmds * (timing.command(bus) + bus.data_ns(block, 1.0))
    }
}

/// What a model of mmc_test's transfer leaves out, for showing that the check against
/// the card would catch it ([`Timing::mmc_test_ns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmcTestModel {
    /// The commands mmc_test sends (below).
    Right,
    /// Forgets the CMD13 after each transfer.
    NoStatus,
    /// Forgets the CMD12 that ends a multi-block transfer.
    NoStop,
}

impl Timing {
    /// The card's time for one transfer of mmc_test's consecutive read or write tests
    /// (tests 30 and 31 of Linux 6.12 and 7.x), ns. drivers/mmc/core/mmc_test.c:
    /// `mmc_test_seq_read_perf()`/`_write_perf()` call `mmc_test_area_io()` once per
    /// transfer, which ends in `mmc_test_simple_transfer()`: one request built by
    /// `mmc_test_prepare_mrq()` with no `sbc` (its `mrq` has none, so
    /// `mmc_test_prepare_sbc()` sets none: no CMD23 even where host and card take it):
    /// CMD17/CMD24 for one block, else CMD18/CMD25 with a CMD12 stop (R1b), which the
    /// simulated host sends for an open-ended transfer (testbed/emmcsim/host.c,
    /// `emmcsim_execute()`); then `mmc_test_wait_busy()`, one CMD13 (the card's busy is
    /// inside the write's time, so the first status is ready). Reads start at the test
    /// area's start plus a multiple of their size, so the first page's part is the
    /// same as the block layer's ([`Timing::first_page_ns`]).
    pub fn mmc_test_ns(&self, write: bool, bytes: f64, bus: &Bus, model: MmcTestModel) -> f64 {
        let multi = bytes > 512.0;
        let mut commands = 3.0;
        if !multi || model == MmcTestModel::NoStop {
            commands -= 1.0;
        }
        if model == MmcTestModel::NoStatus {
            commands -= 1.0;
        }
        let kib = bytes / 1024.0;
        let data = if write {
            self.write_access_ns + kib * self.program_ns_per_kib
        } else {
            self.read_access_ns + self.first_page_ns(bytes) + kib * self.read_ns_per_kib
        };
        commands * self.command(bus) + data + bus.sectors_ns(bytes / 512.0)
    }

    /// The predicted time of one mmc_test transfer, ns: [`Timing::mmc_test_ns`] of this
    /// set minus the zero card's, plus the time per transfer the zero card measured
    /// (mmc_test's own part: same kernel, bus, test and size).
    pub fn predict_mmc_test(
        &self,
        write: bool,
        bytes: f64,
        bus: &Bus,
        model: MmcTestModel,
        zero_measured_ns: f64,
    ) -> f64 {
        self.mmc_test_ns(write, bytes, bus, model) - ZERO.mmc_test_ns(write, bytes, bus, model)
            + zero_measured_ns
    }
}
