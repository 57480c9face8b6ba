//! One line of tracefs output (`trace_pipe`) of the `mmc_request_start` and
//! `mmc_request_done` events, as `include/trace/events/mmc.h` prints them
//! (docs/kernel-facts.md, "tracefs mmc events"):
//!
//! ```text
//!   <task>-<pid> [cpu] flags  10.839947: mmc_request_start: mmc0: start struct mmc_request[(ptrval)]: cmd_opcode=18 ... sbc_retires=0 blocks=16 block_size=512 blk_addr=0 data_flags=0x200 tag=0 ...
//!   <task>-<pid> [cpu] flags  10.841202: mmc_request_done: mmc0: end struct mmc_request[(ptrval)]: cmd_opcode=18 cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 ... bytes_xfered=8192 data_err=0 tag=0 ...
//! ```
//!
//! Parsing traps, all seen in the kernel source or the testbed:
//! - the task name may hold spaces and colons (`kworker/0:0H-10`): the timestamp is the
//!   last word before the event name;
//! - `cmd_resp=`, `stop_resp=` and `sbc_resp=` print four words after one `=`: words
//!   without `=` belong to the key before them and are skipped;
//! - the start event's key is spelled `sbc_retires` (a typo in the format string);
//! - `%p` may print `(ptrval)` (pointer hashing not ready): pairing cannot rely on it;
//! - absent parts print as 0, and `stop_opcode` is filled for every multi-block
//!   transfer even when CMD23 (sbc) made CMD12 unnecessary;
//! - Linux 4.9 prints neither `blk_addr` nor `tag`: both are optional.
//!
//! `trace_pipe` also prints `CPU:N [LOST M EVENTS]` when the ring buffer overran.

/// A request as the host driver got it (`mmc_request_start`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub ts_ns: u64,
    /// Host name (`mmc0`), as the event's `name` field.
    pub host: String,
    /// `mmc_request[...]` as printed: a hashed pointer, or `(ptrval)`.
    pub mrq: String,
    pub cmd_opcode: u32,
    pub cmd_arg: u32,
    pub stop_opcode: u32,
    pub sbc_opcode: u32,
    pub sbc_arg: u32,
    pub blocks: u32,
    pub block_size: u32,
    pub blk_addr: Option<u32>,
    pub data_flags: u32,
    pub tag: Option<i32>,
}

/// A request the host driver completed (`mmc_request_done`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub ts_ns: u64,
    pub host: String,
    pub mrq: String,
    pub cmd_opcode: u32,
    pub cmd_err: i32,
    pub stop_err: i32,
    pub sbc_opcode: u32,
    pub sbc_err: i32,
    pub bytes_xfered: u32,
    pub data_err: i32,
    pub tag: Option<i32>,
}

/// `MMC_DATA_WRITE` and `MMC_DATA_READ` of `data_flags` (`include/linux/mmc/core.h`).
pub const MMC_DATA_WRITE: u32 = 1 << 8;
pub const MMC_DATA_READ: u32 = 1 << 9;
/// CMD23 SET_BLOCK_COUNT argument bits (JESD84-B51 6.10.4, `mmc_blk_rw_rq_prep`):
/// reliable write, packed command, data tag; the low 16 bits are the block count.
pub const SBC_RELIABLE_WRITE: u32 = 1 << 31;
pub const SBC_PACKED: u32 = 1 << 30;
pub const SBC_TAG: u32 = 1 << 29;
pub const SBC_COUNT_MASK: u32 = 0xffff;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Start(Start),
    Done(Done),
    /// `CPU:N [LOST M EVENTS]`.
    Lost {
        cpu: u32,
        events: u64,
    },
    /// Anything else (other events, comments, a line cut off).
    Other,
}

/// Parse one line of trace output.
pub fn parse_line(line: &str) -> Line {
    if let Some(lost) = parse_lost(line) {
        return lost;
    }
    for (event, start) in [
        (" mmc_request_start: ", true),
        (" mmc_request_done: ", false),
    ] {
        let Some(at) = line.find(event) else { continue };
        let parsed = (|| {
            let ts_ns = parse_timestamp(line[..at].split_whitespace().last()?)?;
            let rest = &line[at + event.len()..];
            let (host, rest) = rest.split_once(": ")?;
            let open = rest.find("mmc_request[")? + "mmc_request[".len();
            let close = open + rest[open..].find("]: ")?;
            let mrq = rest[open..close].to_string();
            let text = &rest[close + 3..];
            let host = host.to_string();
            Some(if start {
                let [cmd_opcode, cmd_arg, stop_opcode, sbc_opcode, sbc_arg, blocks, block_size, blk_addr, data_flags, tag] =
                    fields(text, &START_KEYS);
                Line::Start(Start {
                    ts_ns,
                    host,
                    mrq,
                    cmd_opcode: unsigned(cmd_opcode)?,
                    cmd_arg: unsigned(cmd_arg)?,
                    stop_opcode: unsigned(stop_opcode)?,
                    sbc_opcode: unsigned(sbc_opcode)?,
                    sbc_arg: unsigned(sbc_arg)?,
                    blocks: unsigned(blocks)?,
                    block_size: unsigned(block_size)?,
                    blk_addr: unsigned(blk_addr),
                    data_flags: unsigned(data_flags)?,
                    tag: signed(tag),
                })
            } else {
                let [cmd_opcode, cmd_err, stop_err, sbc_opcode, sbc_err, bytes_xfered, data_err, tag] =
                    fields(text, &DONE_KEYS);
                Line::Done(Done {
                    ts_ns,
                    host,
                    mrq,
                    cmd_opcode: unsigned(cmd_opcode)?,
                    cmd_err: signed(cmd_err)?,
                    stop_err: signed(stop_err)?,
                    sbc_opcode: unsigned(sbc_opcode)?,
                    sbc_err: signed(sbc_err)?,
                    bytes_xfered: unsigned(bytes_xfered)?,
                    data_err: signed(data_err)?,
                    tag: signed(tag),
                })
            })
        })();
        return parsed.unwrap_or(Line::Other);
    }
    Line::Other
}

/// `CPU:1 [LOST 128 EVENTS]`.
fn parse_lost(line: &str) -> Option<Line> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let events = rest.strip_prefix("[LOST ")?.strip_suffix(" EVENTS]")?;
    Some(Line::Lost {
        cpu: cpu.parse().ok()?,
        events: events.parse().ok()?,
    })
}

/// `10.839947:` (seconds with up to 9 decimals) as nanoseconds.
fn parse_timestamp(word: &str) -> Option<u64> {
    let word = word.strip_suffix(':')?;
    let (secs, frac) = word.split_once('.').unwrap_or((word, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32)
    };
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac_ns)
}

/// The keys read from each event, in the order the kernel prints them.
const START_KEYS: [&str; 10] = [
    "cmd_opcode",
    "cmd_arg",
    "stop_opcode",
    "sbc_opcode",
    "sbc_arg",
    "blocks",
    "block_size",
    "blk_addr",
    "data_flags",
    "tag",
];
const DONE_KEYS: [&str; 8] = [
    "cmd_opcode",
    "cmd_err",
    "stop_err",
    "sbc_opcode",
    "sbc_err",
    "bytes_xfered",
    "data_err",
    "tag",
];

/// The values of `keys` among the `key=value` words of an event's text, in one pass
/// that stops once all are found (this runs for every event of a run).
fn fields<'a, const N: usize>(text: &'a str, keys: &[&str; N]) -> [Option<&'a str>; N] {
    let mut out = [None; N];
    let mut missing = N;
    for word in text.split_ascii_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            continue;
        };
        if let Some(i) = keys.iter().position(|k| *k == key) {
            if out[i].is_none() {
                out[i] = Some(value);
                missing -= 1;
                if missing == 0 {
                    break;
                }
            }
        }
    }
    out
}

/// `%u` or `0x%x`.
fn unsigned(value: Option<&str>) -> Option<u32> {
    let v = value?;
    match v.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// `%d`.
fn signed(value: Option<&str>) -> Option<i32> {
    value?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "    kworker/0:0H-10      [000] .....    10.839947: mmc_request_start: mmc0: start struct mmc_request[(ptrval)]: cmd_opcode=18 cmd_arg=0x0 cmd_flags=0xb5 cmd_retries=0 stop_opcode=12 stop_arg=0x0 stop_flags=0x95 stop_retries=0 sbc_opcode=23 sbc_arg=0x10 sbc_flags=0x15 sbc_retires=0 blocks=16 block_size=512 blk_addr=0 data_flags=0x200 tag=0 can_retune=0 doing_retune=0 retune_now=0 need_retune=0 hold_retune=1 retune_period=0";
    const DONE: &str = "    kworker/0:0H-10      [000] d.h..    10.841202: mmc_request_done: mmc0: end struct mmc_request[(ptrval)]: cmd_opcode=18 cmd_err=0 cmd_resp=0x900 0x0 0x0 0x0 cmd_retries=0 stop_opcode=12 stop_err=0 stop_resp=0x0 0x0 0x0 0x0 stop_retries=0 sbc_opcode=23 sbc_err=-110 sbc_resp=0x900 0x0 0x0 0x0 sbc_retries=0 bytes_xfered=8192 data_err=0 tag=0 can_retune=0 doing_retune=0 retune_now=0 need_retune=0 hold_retune=1 retune_period=0";

    #[test]
    fn start_and_done_lines() {
        let Line::Start(s) = parse_line(START) else {
            panic!("start not parsed")
        };
        assert_eq!(s.ts_ns, 10_839_947_000);
        assert_eq!((s.host.as_str(), s.mrq.as_str()), ("mmc0", "(ptrval)"));
        assert_eq!((s.cmd_opcode, s.sbc_opcode, s.sbc_arg), (18, 23, 0x10));
        assert_eq!((s.blocks, s.block_size, s.blk_addr), (16, 512, Some(0)));
        assert_eq!(
            (s.data_flags, s.tag, s.stop_opcode),
            (MMC_DATA_READ, Some(0), 12)
        );
        let Line::Done(d) = parse_line(DONE) else {
            panic!("done not parsed")
        };
        assert_eq!((d.cmd_opcode, d.cmd_err, d.sbc_err), (18, 0, -110));
        assert_eq!(
            (d.bytes_xfered, d.data_err, d.ts_ns),
            (8192, 0, 10_841_202_000)
        );
    }

    #[test]
    fn lost_events_and_other_lines() {
        assert_eq!(
            parse_line("CPU:1 [LOST 128 EVENTS]"),
            Line::Lost {
                cpu: 1,
                events: 128
            }
        );
        assert_eq!(parse_line("# tracer: nop"), Line::Other);
        // Cut off before the fields it needs: not an event.
        assert_eq!(
            parse_line(&START[..START.find("blocks=").unwrap()]),
            Line::Other
        );
        assert_eq!(parse_timestamp("7:"), Some(7_000_000_000));
        assert_eq!(parse_timestamp("0.5:"), Some(500_000_000));
        assert_eq!(parse_timestamp("1.2"), None);
    }

    #[test]
    fn linux_4_9_has_no_blk_addr_and_no_tag() {
        let old = START.replace(" blk_addr=0", "").replace(" tag=0", "");
        let Line::Start(s) = parse_line(&old) else {
            panic!("not parsed")
        };
        assert_eq!((s.blk_addr, s.tag, s.blocks), (None, None, 16));
    }
}
