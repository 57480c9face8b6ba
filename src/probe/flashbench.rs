//! Reading flashbench's printed output back (a published run, e.g. the BeagleBone post's
//! `flashbench -a` and `--open-au` output), so it can be estimated, reported and charted
//! next to an mmcab probe.
//!
//! The text may have its whitespace collapsed (mail archives join lines): it is read as
//! a stream of words. A command is a word ending in `flashbench` followed by its
//! arguments (words starting with `-` or `/`); its output runs to the next shell prompt
//! (a word ending in `#` or `$`), `^C`, or a `##` comment. Lines starting with `# ` are
//! metadata (`# key: value`: source, device, erase_size, preferred_erase_size, ...).
//!
//! Numbers as flashbench prints them (`format_ns` and `format_value` in its source):
//! times `982ns`, `57.4µs` (U+00B5; U+03BC and `us` are read too), `1.03ms`, `1.2s`;
//! rates `927K/s`, `2.52M/s`, `1.2G/s` (10^3, 10^6, 10^9 bytes/s); sizes `8KiB`, `2MiB`
//! (binary). flashbench cuts every time at 7 bytes, so a negative diff, printed in ns,
//! loses digits (`-12000n`, `-150000`): such rows are kept but marked unreliable; and
//! `1e+03µs` loses its unit (`1e+03`), read as microseconds.
//!
//! Zeros: a read takes time and a write moves bytes, so a pre, on or post time of 0
//! or a rate of 0 is no measurement (flashbench prints one when nothing was timed):
//! such a row or point is kept, marked, and left out of the estimates and the charts.
//! A zero alignment, write size, `--blocksize`, `--count` or `--open-au-nr` cannot come
//! from flashbench and is refused with the word that holds it.

use super::align::{AlignOptions, AlignRow};
use super::open_au::{OpenAuPoint, OpenAuRun};
use anyhow::{bail, Context, Result};

/// One `flashbench -a` run as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedAlign {
    pub command: String,
    pub options: AlignOptions,
    pub rows: Vec<AlignRow>,
}

/// Everything read from a text of flashbench output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    /// `# key: value` lines, in order.
    pub meta: Vec<(String, String)>,
    pub align: Vec<PublishedAlign>,
    pub open_au: Vec<OpenAuRun>,
}

impl Published {
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A time as flashbench prints it, in ns, and whether it can be trusted.
pub fn parse_time(word: &str) -> Result<(f64, bool)> {
    let w = word.trim_end_matches(['\u{fffd}', '\u{c2}']);
    let number = |t: &str| -> Result<f64> {
        t.parse::<f64>()
            .with_context(|| format!("'{word}' is not a flashbench time"))
    };
    if let Some(t) = w.strip_prefix('-') {
        // Printed as "%lldns" and cut at 7 bytes: digits may be missing.
        let digits = t.trim_end_matches(['n', 's']);
        return Ok((-number(digits)?, false));
    }
    for (unit, scale) in [
        ("ns", 1.0),
        ("µs", 1e3),
        ("μs", 1e3),
        ("us", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ] {
        if let Some(t) = w.strip_suffix(unit) {
            return Ok((number(t)? * scale, true));
        }
    }
    if w.contains('e') {
        // "1e+03µs" cut to "1e+03": microseconds.
        return Ok((number(w)? * 1e3, true));
    }
    bail!("'{word}' is not a flashbench time (ns, µs, ms or s)")
}

/// A rate as flashbench prints it (`2.52M/s`), in 10^6 bytes/s.
pub fn parse_rate(word: &str) -> Result<f64> {
    let t = word
        .strip_suffix("/s")
        .with_context(|| format!("'{word}' is not a flashbench rate (like 2.52M/s)"))?;
    let (num, scale) = match t.chars().last() {
        Some('G') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1.0),
        Some('K') => (&t[..t.len() - 1], 1e-3),
        Some('B') => (&t[..t.len() - 1], 1e-6),
        _ => (t, 1e-6),
    };
    num.parse::<f64>()
        .map(|v| v * scale)
        .with_context(|| format!("'{word}' is not a flashbench rate"))
}

/// A size as flashbench prints it (`8KiB`, `2MiB`) or as its options take it (`16384`,
/// `$[2*1024*1024]`), in bytes.
pub fn parse_size(word: &str) -> Result<u64> {
    let w = word.trim();
    if let Some(expr) = w.strip_prefix("$[").and_then(|e| e.strip_suffix(']')) {
        return expr.split('*').try_fold(1u64, |acc, f| {
            f.trim()
                .parse::<u64>()
                .map(|v| acc.saturating_mul(v))
                .with_context(|| format!("'{word}': not a product of numbers"))
        });
    }
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)] {
        if let Some(t) = w.strip_suffix(unit) {
            let v: f64 = t
                .parse()
                .with_context(|| format!("'{word}' is not a size"))?;
            return Ok((v * (1u64 << shift) as f64).round() as u64);
        }
    }
    crate::units::parse_size(w).with_context(|| format!("'{word}' is not a size"))
}

/// Words of a command's output end here.
fn ends_output(word: &str) -> bool {
    word == "^C" || word.starts_with("##") || word.ends_with('#') || word.ends_with('$')
}

/// `--key=value` of a command's arguments.
fn option<'a>(args: &'a [&str], key: &str) -> Option<&'a str> {
    args.iter().find_map(|a| a.strip_prefix(&format!("{key}=")))
}

/// Parse a text holding flashbench commands and their output.
pub fn parse(text: &str) -> Result<Published> {
    let mut published = Published::default();
    let mut words: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(meta) = line.strip_prefix("# ") {
            if let Some((k, v)) = meta.split_once(':') {
                published
                    .meta
                    .push((k.trim().to_string(), v.trim().to_string()));
            }
            continue;
        }
        words.extend(line.split_whitespace());
    }
    let mut i = 0;
    while i < words.len() {
        if !words[i].ends_with("flashbench") {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < words.len() && (words[i].starts_with('-') || words[i].starts_with('/')) {
            i += 1;
        }
        let args = &words[start + 1..i];
        let out_start = i;
        while i < words.len() && !ends_output(words[i]) {
            i += 1;
        }
        let interrupted = words.get(i) == Some(&"^C");
        let out = &words[out_start..i];
        let command = words[start..out_start].join(" ");
        if args.iter().any(|a| *a == "-a" || *a == "--align") {
            published.align.push(align_run(&command, args, out)?);
        } else if args.iter().any(|a| *a == "--open-au" || *a == "-O") {
            published
                .open_au
                .push(open_au_run(&command, args, out, interrupted)?);
        }
    }
    if published.align.is_empty() && published.open_au.is_empty() {
        bail!("no flashbench -a or --open-au output found (a command word ending in 'flashbench', then its output)");
    }
    Ok(published)
}

fn align_run(command: &str, args: &[&str], out: &[&str]) -> Result<PublishedAlign> {
    let mut options = AlignOptions::default();
    if let Some(b) = option(args, "--blocksize").or(option(args, "-b")) {
        options.blocksize = parse_size(b)?;
    }
    if let Some(c) = option(args, "--count").or(option(args, "-c")) {
        options.tries = c
            .parse()
            .with_context(|| format!("{command}: --count={c}"))?;
    }
    options
        .validate()
        .with_context(|| format!("{command}: not options flashbench -a runs with"))?;
    let mut rows = Vec::new();
    for rec in out.chunks(10) {
        let [a, align, pre, pre_v, on, on_v, post, post_v, diff, diff_v] = rec else {
            bail!("{command}: output ends in the middle of a line: {rec:?}");
        };
        if (*a, *pre, *on, *post, *diff) != ("align", "pre", "on", "post", "diff") {
            bail!("{command}: not a line of flashbench -a: {rec:?}");
        }
        let align: u64 = align
            .parse()
            .ok()
            .filter(|a: &u64| a.is_power_of_two())
            .with_context(|| format!("{command}: align {align}: not a power of two"))?;
        let (pre, r1) = parse_time(pre_v)?;
        let (on, r2) = parse_time(on_v)?;
        let (post, r3) = parse_time(post_v)?;
        let (diff, r4) = parse_time(diff_v)?;
        // A read takes time: 0 is no measurement (diff, a difference, may be 0).
        let timed = pre > 0.0 && on > 0.0 && post > 0.0;
        rows.push(AlignRow {
            align,
            pre_ns: pre,
            on_ns: on,
            post_ns: post,
            // As printed (flashbench computed it from unrounded times).
            diff_ns: diff,
            reliable: r1 && r2 && r3 && r4 && timed,
            remeasured: 0,
        });
    }
    if rows.is_empty() {
        bail!("{command}: no 'align ... diff ...' lines");
    }
    Ok(PublishedAlign {
        command: command.to_string(),
        options,
        rows,
    })
}

fn open_au_run(command: &str, args: &[&str], out: &[&str], interrupted: bool) -> Result<OpenAuRun> {
    let nr = match option(args, "--open-au-nr") {
        Some(n) => n
            .parse()
            .ok()
            .filter(|n: &u32| *n > 0)
            .with_context(|| format!("{command}: --open-au-nr={n}: not a count of units"))?,
        None => 2,
    };
    let size_of = |key: &str, default: u64| -> Result<u64> {
        option(args, key).map_or(Ok(default), parse_size)
    };
    let mut points = Vec::new();
    for pair in out.chunks(2) {
        let [size, rate] = pair else {
            bail!("{command}: a size without its rate: {pair:?}");
        };
        let size = match parse_size(size)? {
            0 => bail!("{command}: a write size of 0 ({pair:?})"),
            s => s,
        };
        points.push(OpenAuPoint {
            size,
            // 0 (no measurement) is kept: OpenAuPoint::measured says so.
            mb_per_s: parse_rate(rate)?,
        });
    }
    if points.is_empty() {
        bail!("{command}: no '<size> <rate>' output");
    }
    Ok(OpenAuRun {
        nr,
        random: args.contains(&"--random") || args.contains(&"-r"),
        erase_size: size_of("--erasesize", 4 << 20)?,
        blocksize: size_of("--blocksize", 16 << 10)?,
        points,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_rates_and_sizes_as_flashbench_prints_them() {
        assert_eq!(parse_time("982ns").unwrap(), (982.0, true));
        assert_eq!(parse_time("57.4µs").unwrap(), (57_400.0, true));
        assert_eq!(parse_time("57.4μs").unwrap(), (57_400.0, true));
        assert_eq!(parse_time("1.03ms").unwrap(), (1_030_000.0, true));
        assert_eq!(parse_time("1e+03").unwrap(), (1_000_000.0, true));
        assert_eq!(parse_time("1e+03\u{fffd}").unwrap(), (1_000_000.0, true));
        assert_eq!(parse_time("-12000n").unwrap(), (-12_000.0, false));
        assert_eq!(parse_time("-150000").unwrap(), (-150_000.0, false));
        assert!(parse_time("fast").is_err());
        assert_eq!(parse_rate("927K/s").unwrap(), 0.927);
        assert_eq!(parse_rate("2.52M/s").unwrap(), 2.52);
        assert_eq!(parse_size("8KiB").unwrap(), 8192);
        assert_eq!(parse_size("$[2*1024*1024]").unwrap(), 2 << 20);
        assert_eq!(parse_size("16384").unwrap(), 16384);
    }

    #[test]
    fn commands_outputs_and_metadata() {
        let text = "# source: a post\n# erase_size: 524288\n\
            root@bb:~# ./flashbench -a /dev/mmcblk1 --blocksize=1024 --count=100 align 4096 pre 979µs on 1.04ms post 985µs diff 57.5µs align 2048 pre 982µs on 1.02ms post 982µs diff -41000n\n\
            ## Looks like something\n\
            root@bb:~# ./flashbench /dev/mmcblk1 --open-au --erasesize=$[2*1024*1024] --blocksize=$[8*1024] --open-au-nr=6 --random 2MiB 5.37M/s 1MiB 3.35M/s ^C\n";
        let p = parse(text).unwrap();
        assert_eq!(p.meta("erase_size"), Some("524288"));
        let a = &p.align[0];
        assert_eq!((a.options.blocksize, a.options.tries), (1024, 100));
        assert_eq!(a.rows.len(), 2);
        assert!(a.rows[0].reliable && !a.rows[1].reliable);
        assert_eq!(a.rows[0].diff_ns, 57_500.0);
        let o = &p.open_au[0];
        assert_eq!((o.nr, o.random, o.interrupted), (6, true, true));
        assert_eq!((o.erase_size, o.blocksize), (2 << 20, 8 << 10));
        assert_eq!(o.points[1].size, 1 << 20);
        assert!(parse("nothing here").is_err());
    }

    /// Zeros are kept and marked (times, rates) or refused by name (sizes, counts),
    /// never divided by or dropped unsaid.
    #[test]
    fn zeros_are_marked_or_refused() {
        let text = "$ ./flashbench -a /dev/sda --blocksize=1024 align 8192 pre 0ns on 0ns \
            post 0ns diff 0ns align 4096 pre 979µs on 1.04ms post 985µs diff 0ns\n\
            $ ./flashbench /dev/sda --open-au --open-au-nr=1 2MiB 0B/s 1MiB 2.47M/s\n";
        let p = parse(text).unwrap();
        let rows = &p.align[0].rows;
        assert!(!rows[0].reliable, "a read of 0 ns is no measurement");
        assert!(rows[1].reliable, "a diff of 0 is a difference");
        let points = &p.open_au[0].points;
        assert_eq!(points.len(), 2, "the 0 rate is kept");
        assert!(!points[0].measured() && points[1].measured());
        for (bad, word) in [
            (
                "--blocksize=0 align 4096 pre 1ms on 1ms post 1ms diff 0ns",
                "--blocksize 0",
            ),
            (
                "--count=0 align 4096 pre 1ms on 1ms post 1ms diff 0ns",
                "--count 0",
            ),
            ("align 0 pre 1ms on 1ms post 1ms diff 0ns", "align 0"),
        ] {
            let err = format!(
                "{:#}",
                parse(&format!("$ ./flashbench -a /dev/sda {bad}")).unwrap_err()
            );
            assert!(err.contains(word), "{word}: {err}");
        }
        for (bad, word) in [
            ("--open-au-nr=0 2MiB 1M/s", "--open-au-nr=0"),
            ("0B 1M/s", "a write size of 0"),
        ] {
            let err = format!(
                "{:#}",
                parse(&format!("$ ./flashbench --open-au {bad}")).unwrap_err()
            );
            assert!(err.contains(word), "{word}: {err}");
        }
    }
}
