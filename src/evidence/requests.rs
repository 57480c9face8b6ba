//! What the mmc trace events of one run say, added up: requests per direction, their
//! sizes, CMD23 (sbc) use and its argument bits, open-ended transfers (ended by CMD12),
//! command-queue tasks, errors, the opcode mix and the device latency of each request
//! (from its `mmc_request_start` to its `mmc_request_done`).
//!
//! Pairing: a done event closes the oldest open start of the same host with the same
//! opcode and tag (and the same `mmc_request` pointer when the kernel prints one). A host
//! without a command queue has one request at a time, so this is exact there; with CQE
//! the blk-mq tag tells the tasks apart.

use super::trace::{self, Done, Line, Start};
use std::collections::BTreeMap;

/// Which way a request moved data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Read,
    Write,
    /// Commands without data (CMD13 status polls, CMD6 switches, ...).
    None,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Read, Kind::Write, Kind::None];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::None => "none",
        }
    }

    fn of(start: &Start) -> Kind {
        if start.blocks == 0 {
            Kind::None
        } else if start.data_flags & trace::MMC_DATA_WRITE != 0 {
            Kind::Write
        } else {
            Kind::Read
        }
    }
}

/// A request of one block: what the mmc block driver's one-block retry mode issues on a
/// card of 512-byte sectors (`queue_physical_block_size() >> SECTOR_SHIFT` blocks).
pub const ONE_BLOCK: u64 = 512;
/// One-block requests beyond the block layer's I/Os that make a split: what one 4 KiB
/// I/O (a page, the smallest buffered one) sent block by block makes, 8 requests for 1.
/// A workload of 512-byte I/Os has as many one-block requests as I/Os, and a stray
/// 512-byte request of another user of the card (traced: the trace is the host's)
/// would tip a bare "more than" over.
pub const SPLIT_EXCESS: u64 = 7;

/// Whether a run's `one_block` requests (of one direction) against the `block_ios` the
/// block layer completed say the driver split requests into one-block ones on its own:
/// each I/O is at least one request, so only a split makes [`SPLIT_EXCESS`] more, and
/// with no failed request (`errors`) it was no retry of this run's; lost trace events
/// make the counts wrong, so a run with any says nothing (docs/kernel-facts.md,
/// "One-block retry mode stays after an error").
pub fn split_into_one_block(one_block: u64, block_ios: u64, errors: u64, lost_events: u64) -> bool {
    errors == 0 && lost_events == 0 && one_block >= block_ios + SPLIT_EXCESS
}

/// The requests of one direction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requests {
    /// Requests started.
    pub requests: u64,
    /// Bytes asked for (blocks x block size).
    pub bytes: u64,
    /// Request size in bytes -> requests of that size.
    pub sizes: BTreeMap<u64, u64>,
    /// Requests of more than one block (the ones CMD23 can bound).
    pub multi_block: u64,
    /// Requests with CMD23 SET_BLOCK_COUNT (`sbc_opcode=23`), single-block ones included
    /// (reliable writes, the MMC ioctl).
    pub sbc: u64,
    /// Multi-block requests with CMD23: the part of `multi_block` that CMD23 bounds.
    pub sbc_multi_block: u64,
    /// ... whose argument has the reliable-write bit (31).
    pub sbc_reliable_write: u64,
    /// ... whose argument has the packed-command bit (30).
    pub sbc_packed: u64,
    /// ... whose block count (bits 15:0) differs from the request's blocks (not packed).
    pub sbc_count_mismatch: u64,
    /// Multi-block requests without CMD23: open-ended, ended by CMD12 STOP_TRANSMISSION
    /// (sent by the host, or as auto-CMD12). `stop_opcode` cannot tell: the block
    /// driver fills it for every multi-block request.
    pub open_ended: u64,
    /// Data requests without a command: command-queue (CQE) tasks.
    pub cqe: u64,
    /// Requests whose done event has a non-zero cmd, sbc, stop or data error.
    pub errors: u64,
    /// Device latency of every paired request, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// Command opcode -> requests (0: a command-queue task without a command).
    pub opcodes: BTreeMap<u32, u64>,
    /// `CMD25 data_err=-84` and the like -> requests.
    pub error_kinds: BTreeMap<String, u64>,
}

impl Requests {
    fn start(&mut self, s: &Start) {
        let bytes = u64::from(s.blocks) * u64::from(s.block_size);
        self.requests += 1;
        *self.opcodes.entry(s.cmd_opcode).or_insert(0) += 1;
        if s.blocks == 0 {
            return;
        }
        self.bytes += bytes;
        *self.sizes.entry(bytes).or_insert(0) += 1;
        if s.cmd_opcode == 0 {
            self.cqe += 1;
        }
        if s.blocks > 1 {
            self.multi_block += 1;
            if s.sbc_opcode == 0 && s.cmd_opcode != 0 {
                self.open_ended += 1;
            }
        }
        if s.sbc_opcode != 0 {
            self.sbc += 1;
            if s.blocks > 1 {
                self.sbc_multi_block += 1;
            }
            if s.sbc_arg & trace::SBC_RELIABLE_WRITE != 0 {
                self.sbc_reliable_write += 1;
            }
            if s.sbc_arg & trace::SBC_PACKED != 0 {
                self.sbc_packed += 1;
            } else if s.sbc_arg & trace::SBC_COUNT_MASK != s.blocks {
                self.sbc_count_mismatch += 1;
            }
        }
    }

    /// Requests of one 512-byte block ([`ONE_BLOCK`]).
    pub fn one_block(&self) -> u64 {
        self.sizes.get(&ONE_BLOCK).copied().unwrap_or(0)
    }

    /// Mean request size in bytes (data requests only).
    pub fn mean_size(&self) -> Option<f64> {
        let n: u64 = self.sizes.values().sum();
        (n > 0).then(|| self.bytes as f64 / n as f64)
    }

    /// The size that `p` percent of the requests are at or below (nearest rank).
    pub fn size_percentile(&self, p: f64) -> Option<u64> {
        percentile_of_counts(&self.sizes, p)
    }

    pub fn mean_latency_us(&self) -> Option<f64> {
        let n = self.latencies_ns.len();
        (n > 0).then(|| self.latencies_ns.iter().sum::<u64>() as f64 / n as f64 / 1000.0)
    }

    /// Latency percentile in microseconds (nearest rank); sorts the latencies.
    pub fn latency_percentile_us(&mut self, p: f64) -> Option<f64> {
        self.latencies_ns.sort_unstable();
        let n = self.latencies_ns.len();
        (n > 0).then(|| self.latencies_ns[rank(n, p)] as f64 / 1000.0)
    }
}

/// 0-based nearest-rank index of percentile `p` among `n` sorted values.
fn rank(n: usize, p: f64) -> usize {
    ((p / 100.0 * n as f64).ceil() as usize).clamp(1, n) - 1
}

/// Percentile `p` of values given as value -> count (nearest rank).
pub fn percentile_of_counts(counts: &BTreeMap<u64, u64>, p: f64) -> Option<u64> {
    let n: u64 = counts.values().sum();
    if n == 0 {
        return None;
    }
    let want = rank(n as usize, p) as u64;
    let mut seen = 0;
    for (value, count) in counts {
        seen += count;
        if seen > want {
            return Some(*value);
        }
    }
    counts.keys().last().copied()
}

/// Open starts kept at most; older ones are given up (their done was lost).
const MAX_OPEN: usize = 4096;

/// Everything the trace of one run showed for one host.
#[derive(Debug, Clone, Default)]
pub struct RequestStats {
    pub read: Requests,
    pub write: Requests,
    pub none: Requests,
    /// Events the ring buffer overwrote (`[LOST N EVENTS]`).
    pub lost_events: u64,
    /// Done events without a start (the request began before the capture).
    pub unmatched_done: u64,
    /// Starts without a done when the capture ended, or given up.
    pub unfinished: u64,
    host: String,
    open: Vec<(Kind, Start)>,
}

impl RequestStats {
    /// Statistics of the requests of `host` (`mmc0`); events of other hosts are ignored.
    pub fn new(host: &str) -> RequestStats {
        RequestStats {
            host: host.to_string(),
            ..Default::default()
        }
    }

    pub fn kind(&self, kind: Kind) -> &Requests {
        match kind {
            Kind::Read => &self.read,
            Kind::Write => &self.write,
            Kind::None => &self.none,
        }
    }

    pub fn kind_mut(&mut self, kind: Kind) -> &mut Requests {
        match kind {
            Kind::Read => &mut self.read,
            Kind::Write => &mut self.write,
            Kind::None => &mut self.none,
        }
    }

    /// Add one line of trace output.
    pub fn feed_line(&mut self, line: &str) {
        match trace::parse_line(line) {
            Line::Start(s) if s.host == self.host => self.start(s),
            Line::Done(d) if d.host == self.host => self.done(&d),
            Line::Lost { events, .. } => self.lost_events += events,
            _ => {}
        }
    }

    fn start(&mut self, s: Start) {
        let kind = Kind::of(&s);
        self.kind_mut(kind).start(&s);
        if self.open.len() >= MAX_OPEN {
            self.open.remove(0);
            self.unfinished += 1;
        }
        self.open.push((kind, s));
    }

    fn done(&mut self, d: &Done) {
        let found = self.open.iter().position(|(_, s)| {
            s.cmd_opcode == d.cmd_opcode
                && s.tag == d.tag
                && (s.mrq == d.mrq || s.mrq == "(ptrval)" || d.mrq == "(ptrval)")
        });
        let Some(i) = found else {
            self.unmatched_done += 1;
            return;
        };
        let (kind, s) = self.open.remove(i);
        let requests = self.kind_mut(kind);
        let mut failed = false;
        for (name, err) in [
            ("cmd_err", d.cmd_err),
            ("sbc_err", d.sbc_err),
            ("stop_err", d.stop_err),
            ("data_err", d.data_err),
        ] {
            if err != 0 {
                failed = true;
                *requests
                    .error_kinds
                    .entry(format!("CMD{} {name}={err}", d.cmd_opcode))
                    .or_insert(0) += 1;
            }
        }
        if failed {
            requests.errors += 1;
        }
        requests.latencies_ns.push(d.ts_ns.saturating_sub(s.ts_ns));
    }

    /// The capture is over: starts still open are unfinished.
    pub fn finish(&mut self) {
        self.unfinished += self.open.len() as u64;
        self.open.clear();
    }

    /// The opcode mix of all requests (see [`opcode_mix`]).
    pub fn opcode_mix(&self) -> String {
        let mut all = BTreeMap::new();
        for kind in Kind::ALL {
            for (op, n) in &self.kind(kind).opcodes {
                *all.entry(*op).or_insert(0) += n;
            }
        }
        opcode_mix(&all)
    }
}

/// `25:8 13:8 18:4`: opcode:requests, most frequent first (`cqe` for tasks without a
/// command).
pub fn opcode_mix(opcodes: &BTreeMap<u32, u64>) -> String {
    let mut mix: Vec<(&u32, &u64)> = opcodes.iter().collect();
    mix.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    mix.iter()
        .map(|(op, n)| match op {
            0 => format!("cqe:{n}"),
            op => format!("{op}:{n}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace captured in the testbed (tests/fixtures/trace/README.md).
    fn fixture(name: &str) -> RequestStats {
        let path = format!("{}/tests/fixtures/trace/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut stats = RequestStats::new("mmc0");
        for line in text.lines() {
            stats.feed_line(line);
        }
        stats.finish();
        stats
    }

    #[test]
    fn one_mib_writes_split_at_max_sectors_and_carry_cmd23() {
        for kernel in ["7.2", "6.12"] {
            // dd bs=1M count=2 to a queue with max_sectors_kb 512: 4 requests of 512 KiB.
            let mut s = fixture(&format!("linux-{kernel}-write-1m-direct.trace"));
            let w = &s.write;
            assert_eq!((w.requests, w.bytes), (4, 2 << 20), "{kernel}");
            assert_eq!(w.sizes, BTreeMap::from([(512 * 1024, 4)]));
            assert_eq!((w.multi_block, w.sbc, w.open_ended), (4, 4, 0));
            assert_eq!(
                (w.sbc_packed, w.sbc_reliable_write, w.sbc_count_mismatch),
                (0, 0, 0)
            );
            assert_eq!(w.errors, 0);
            // Every write is followed by a CMD13 status poll (busy wait), a request without data.
            assert_eq!(s.none.requests, 4);
            assert_eq!(s.opcode_mix(), "13:4 25:4");
            assert_eq!((s.unmatched_done, s.unfinished, s.lost_events), (0, 0, 0));
            assert_eq!(s.write.latencies_ns.len(), 4);
            let mean = s.write.mean_latency_us().unwrap();
            let p99 = s.write.latency_percentile_us(99.0).unwrap();
            assert!(mean > 1000.0 && p99 >= mean, "{kernel}: {mean} {p99}");
            assert_eq!(s.write.size_percentile(99.0), Some(512 * 1024));
        }
    }

    #[test]
    fn single_block_requests_with_cmd23_are_not_multi_block_ones() {
        let start = |blocks| Start {
            ts_ns: 0,
            host: "mmc0".into(),
            mrq: "(ptrval)".into(),
            cmd_opcode: if blocks > 1 { 25 } else { 24 },
            cmd_arg: 0,
            stop_opcode: 0,
            sbc_opcode: 23,
            sbc_arg: blocks,
            blocks,
            block_size: 512,
            blk_addr: None,
            data_flags: trace::MMC_DATA_WRITE,
            tag: None,
        };
        let mut w = Requests::default();
        // The ioctl engine with bs = 512: CMD23 + CMD24, then one of 8 blocks.
        w.start(&start(1));
        w.start(&start(1));
        w.start(&start(8));
        assert_eq!((w.sbc, w.multi_block, w.sbc_multi_block), (3, 1, 1));
    }

    #[test]
    fn without_cmd23_multi_block_requests_are_open_ended() {
        let s = fixture("linux-7.2-write-1m-direct-nocmd23.trace");
        assert_eq!((s.write.requests, s.write.multi_block), (4, 4));
        assert_eq!((s.write.sbc, s.write.open_ended), (0, 4));
        let s = fixture("linux-7.2-read-1m-direct-nocmd23.trace");
        assert_eq!((s.read.requests, s.read.sbc, s.read.open_ended), (2, 0, 2));
        assert_eq!(s.read.mean_size(), Some(512.0 * 1024.0));
    }

    #[test]
    fn reads_sizes_and_the_ext_csd_ioctl() {
        let s = fixture("linux-7.2-randread-4k-direct.trace");
        assert_eq!((s.read.requests, s.read.bytes, s.read.sbc), (4, 16384, 4));
        assert_eq!(s.write.requests + s.none.requests, 0);
        // mmcab info: CMD8 SEND_EXT_CSD through the ioctl, one 512-byte block, no CMD23.
        let s = fixture("linux-7.2-ioctl-ext-csd.trace");
        assert_eq!(s.opcode_mix(), "8:1");
        assert_eq!(
            (s.read.requests, s.read.bytes, s.read.multi_block),
            (1, 512, 0)
        );
    }

    #[test]
    fn the_other_captures_of_both_kernels_add_up_as_their_commands_say() {
        for kernel in ["7.2", "6.12"] {
            // dd bs=1M count=2 iflag=direct: four 512 KiB CMD18 with CMD23, no status poll.
            let s = fixture(&format!("linux-{kernel}-read-1m-direct.trace"));
            let r = &s.read;
            assert_eq!(
                (r.requests, r.bytes, r.multi_block),
                (4, 2 << 20, 4),
                "{kernel}"
            );
            assert_eq!(
                (r.sbc, r.sbc_multi_block, r.open_ended),
                (4, 4, 0),
                "{kernel}"
            );
            assert_eq!(s.opcode_mix(), "18:4", "{kernel}");
            assert_eq!(r.latencies_ns.len(), 4, "{kernel}");
            // Four 4 KiB reads: eight blocks each, with CMD23.
            let s = fixture(&format!("linux-{kernel}-randread-4k-direct.trace"));
            assert_eq!((s.read.requests, s.read.bytes, s.read.sbc), (4, 16384, 4));
            assert_eq!(s.read.sizes, BTreeMap::from([(4096, 4)]), "{kernel}");
            // A 4 KiB write and a 512-byte write and read: the 512-byte ones reach the
            // card as 4 KiB page writes and reads, each write followed by a CMD13 poll.
            let s = fixture(&format!("linux-{kernel}-small-write-read.trace"));
            assert_eq!((s.write.requests, s.write.bytes), (2, 8192), "{kernel}");
            assert_eq!((s.read.requests, s.read.bytes), (2, 8192), "{kernel}");
            assert_eq!((s.write.sbc, s.read.sbc), (2, 2), "{kernel}");
            assert_eq!(s.none.requests, 2, "{kernel}");
            assert_eq!(s.opcode_mix(), "13:2 18:2 25:2", "{kernel}");
            assert_eq!((s.unmatched_done, s.unfinished), (0, 0), "{kernel}");
            // mmcab info: one CMD8 through the ioctl on both kernels.
            let s = fixture(&format!("linux-{kernel}-ioctl-ext-csd.trace"));
            assert_eq!((s.opcode_mix(), s.read.bytes), ("8:1".to_string(), 512));
        }
        // The partition scan after the mmcblk rebind: one open-ended 4 KiB read (CMD18
        // without CMD23, CMD12 to stop it).
        let s = fixture("linux-7.2-rebind.trace");
        assert_eq!(
            (s.read.requests, s.read.bytes, s.read.multi_block),
            (1, 4096, 1)
        );
        assert_eq!((s.read.sbc, s.read.open_ended), (0, 1));
    }

    #[test]
    fn lost_events_are_counted_and_pairs_still_found() {
        for kernel in ["7.2", "6.12"] {
            let s = fixture(&format!("linux-{kernel}-lost.trace"));
            assert_eq!(s.lost_events, 128 + if kernel == "7.2" { 159 } else { 130 });
            assert!(s.read.requests > 0 && !s.read.latencies_ns.is_empty());
        }
    }

    #[test]
    fn errors_packed_and_cqe_tasks() {
        let mut s = RequestStats::new("mmc0");
        let start = |op: u32, sbc: u32, arg: u32, blocks: u32, tag: i32| {
            format!(
                "x-1 [000] ..... 1.000000: mmc_request_start: mmc0: start struct mmc_request[00000000deadbeef]: \
                 cmd_opcode={op} cmd_arg=0x0 stop_opcode=12 sbc_opcode={sbc} sbc_arg={arg:#x} blocks={blocks} \
                 block_size=512 blk_addr=0 data_flags=0x100 tag={tag}"
            )
        };
        let done = |op: u32, data_err: i32, tag: i32| {
            format!(
                "x-1 [000] d.h.. 1.000250: mmc_request_done: mmc0: end struct mmc_request[00000000deadbeef]: \
                 cmd_opcode={op} cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 stop_opcode=12 stop_err=0 \
                 sbc_opcode=0 sbc_err=0 bytes_xfered=0 data_err={data_err} tag={tag}"
            )
        };
        s.feed_line(&start(25, 23, 0x4000_0011, 17, 1)); // packed: bit 30
        s.feed_line(&done(25, -84, 1));
        s.feed_line(&start(0, 0, 0, 8, 2)); // CQE task: no command
        s.feed_line(&start(0, 0, 0, 8, 3));
        s.feed_line(&done(0, 0, 3));
        s.feed_line(&done(0, 0, 2));
        s.feed_line(&done(25, 0, 9)); // started before the capture
        s.finish();
        assert_eq!((s.write.sbc, s.write.sbc_packed, s.write.errors), (1, 1, 1));
        assert_eq!(
            s.write.error_kinds,
            BTreeMap::from([("CMD25 data_err=-84".into(), 1)])
        );
        assert_eq!(
            (s.write.cqe, s.write.open_ended, s.unmatched_done),
            (2, 0, 1)
        );
        assert_eq!(s.write.latencies_ns, vec![250_000, 250_000, 250_000]);
        assert_eq!(s.opcode_mix(), "cqe:2 25:1");
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let counts = BTreeMap::from([(4096, 98), (524288, 2)]);
        assert_eq!(percentile_of_counts(&counts, 50.0), Some(4096));
        assert_eq!(percentile_of_counts(&counts, 98.0), Some(4096));
        assert_eq!(percentile_of_counts(&counts, 99.0), Some(524288));
        assert_eq!(percentile_of_counts(&BTreeMap::new(), 99.0), None);
    }
}
