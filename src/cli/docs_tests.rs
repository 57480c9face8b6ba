//! The user docs against the binary: every `mmcab` command line in README.md and docs/
//! names subcommands and flags that exist, and the exit-status table of docs/safety.md
//! says what the code returns. (docs/plans.md's keys against the plan parser:
//! `crate::plan::docs_tests`.)

use super::Cli;
use crate::exit::{Kind, TABLE};
use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page of docs/ (the user docs).
pub fn user_docs() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    paths.extend(pages);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Code the docs show: the lines of fenced blocks and every inline code span.
fn code_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push(line.to_string());
        } else {
            out.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    out
}

/// The mmcab command lines in a piece of code: the words after each `mmcab` (or
/// `./mmcab`) up to the end of that shell command.
fn command_lines(code: &str) -> Vec<Vec<String>> {
    let words: Vec<&str> = code.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_start_matches(['"', '\'', '(', '$']);
        if w != "mmcab" && w != "./mmcab" && !w.ends_with("/mmcab") {
            continue;
        }
        let rest: Vec<String> = words[i + 1..]
            .iter()
            .take_while(|w| !["|", "&&", ";", ">", "2>", "#", "||"].contains(w))
            .take_while(|w| !w.starts_with('#') && !w.starts_with('>'))
            .map(|w| w.to_string())
            .collect();
        out.push(rest);
    }
    out
}

/// The long flags a command takes (its own and its ancestors' globals, and clap's own).
fn flags(cmd: &clap::Command) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    set.insert("--help".into());
    set.insert("--version".into());
    set
}

/// Walks `words` down the subcommand tree; the flags that the command reached does not
/// take. Err when the first word is neither a subcommand nor a flag of mmcab.
fn unknown_flags(words: &[String]) -> Result<Vec<String>, String> {
    let top = Cli::command();
    let mut cmd = &top;
    let mut path = vec!["mmcab".to_string()];
    let mut rest = words;
    while let Some(w) = rest.first() {
        match cmd.find_subcommand(w.as_str()) {
            Some(sub) => {
                cmd = sub;
                path.push(w.clone());
                rest = &rest[1..];
            }
            None => break,
        }
    }
    if path.len() == 1 {
        if let Some(w) = words.first() {
            if !w.starts_with("--") {
                return Err(format!("mmcab {w}: no such subcommand"));
            }
        }
    }
    let known = flags(cmd);
    Ok(rest
        .iter()
        .filter(|w| w.starts_with("--"))
        .map(|w| {
            w.split(['=', ',', ')', ']', '`', '"', '\''])
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|f| {
            f.len() > 2
                && f.chars()
                    .skip(2)
                    .all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
        .filter(|f| !known.contains(f))
        .map(|f| format!("{} {f}", path.join(" ")))
        .collect())
}

/// Words after `mmcab` in the messages the docs quote (`mmcab cannot tell whether ...`).
const PROSE: &[&str] = &["cannot"];

/// A word after `mmcab` that is not a command: prose or messages (`mmcab: error`,
/// `mmcab 0.1.0`, `mmcab's`, [`PROSE`]), not a command line. Any other lower-case word
/// is taken for a subcommand, so a misspelt one fails.
fn is_command(words: &[String]) -> bool {
    words.first().is_some_and(|w| {
        w.starts_with("--")
            || (w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !PROSE.contains(&w.as_str()))
    })
}

#[test]
fn every_command_line_in_the_docs_exists() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for (path, text) in user_docs() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        for code in code_of(&text) {
            for words in command_lines(&code) {
                if !is_command(&words) {
                    continue;
                }
                seen += 1;
                match unknown_flags(&words) {
                    Ok(flags) => bad.extend(flags.into_iter().map(|f| format!("{name}: {f}"))),
                    Err(e) => bad.push(format!("{name}: {e}")),
                }
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} command lines found: is the parser broken?"
    );
    assert!(
        bad.is_empty(),
        "in the docs, not in the binary:\n{}",
        bad.join("\n")
    );
}

/// Every subcommand is in README's command table.
#[test]
fn readme_lists_every_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let top = Cli::command();
    let mut missing = Vec::new();
    for sub in top.get_subcommands() {
        let leaves: Vec<String> = if sub.has_subcommands() {
            sub.get_subcommands()
                .map(|s| format!("{} {}", sub.get_name(), s.get_name()))
                .collect()
        } else {
            vec![sub.get_name().to_string()]
        };
        for name in leaves {
            if !readme.contains(&format!("| `{name}` |")) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in README's command table: {missing:?}"
    );
}

/// The parser check would pass a doc that names nothing: it does find these.
#[test]
fn the_command_line_check_finds_what_is_wrong() {
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        unknown_flags(&words(
            "run plan.toml --device /dev/x --allow-write --bogus"
        )),
        Ok(vec!["mmcab run --bogus".to_string()])
    );
    assert_eq!(
        unknown_flags(&words("probe align /dev/x --count 2 --json")),
        Ok(vec![])
    );
    assert!(unknown_flags(&words("benchmark /dev/x")).is_err());
    assert_eq!(
        command_lines("ssh root@b ./mmcab info /dev/mmcblk0 | tee x")[0],
        words("info /dev/mmcblk0")
    );
}

/// The rows of docs/safety.md's exit-status table: `(status, commands, meaning)`, the
/// commands without their backquotes.
fn documented_statuses() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("docs/safety.md")).unwrap();
    let section = text
        .split("\n## Exit statuses")
        .nth(1)
        .expect("docs/safety.md: ## Exit statuses")
        .split("\n## ")
        .next()
        .unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| status"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].to_string(),
                cells[2].replace('`', ""),
                cells[3].to_string(),
            )
        })
        .collect()
}

/// docs/safety.md's table and the code's ([`crate::exit::TABLE`], which picks every
/// status) row by row, both ways: the same statuses for the same commands, in the same
/// order, each documented meaning starting with the code's words for it.
#[test]
fn the_exit_status_table_is_what_the_code_returns() {
    let docs = documented_statuses();
    let code: Vec<(String, String, String)> = TABLE
        .iter()
        .map(|row| {
            (
                row.status_text(),
                row.commands.to_string(),
                row.meaning.to_string(),
            )
        })
        .collect();
    for (status, commands, meaning) in &docs {
        let row = code.iter().find(|(s, c, _)| s == status && c == commands);
        let Some((_, _, words)) = row else {
            panic!("docs/safety.md has status {status} for {commands}; the code has no such row")
        };
        assert!(
            meaning.starts_with(words.as_str()),
            "status {status} ({commands}): docs/safety.md says \"{meaning}\", the code \"{words}\""
        );
    }
    for (status, commands, _) in &code {
        assert!(
            docs.iter().any(|(s, c, _)| s == status && c == commands),
            "the code has status {status} for {commands}; docs/safety.md has no such row"
        );
    }
    let order = |rows: &[(String, String, String)]| -> Vec<(String, String)> {
        rows.iter()
            .map(|(s, c, _)| (s.clone(), c.clone()))
            .collect()
    };
    assert_eq!(order(&docs), order(&code), "the rows in another order");
    // clap's usage errors are the table's.
    let err = Cli::command()
        .try_get_matches_from(["mmcab", "--no-such-flag"])
        .unwrap_err();
    assert_eq!(err.exit_code(), i32::from(Kind::Usage.status()));
    assert!(err.use_stderr());
}

/// README.md is short and leads to every page; prose lines fit 100 columns (tables,
/// URLs and code, such as a quoted error line in a block or alone on its line, may be
/// longer).
#[test]
fn readme_is_short_and_prose_fits_100_columns() {
    let docs = user_docs();
    let readme = &docs[0].1;
    assert!(
        readme.lines().count() < 250,
        "README.md has {} lines",
        readme.lines().count()
    );
    let mut long = Vec::new();
    for (path, text) in &docs {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        if name.starts_with("docs/") && !readme.contains(&format!("]({name})")) {
            long.push(format!("{name}: not linked from README.md"));
        }
        let mut fenced = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            let code_line = {
                let t = line.trim().trim_end_matches(['.', ',', ':']);
                t.starts_with('`') && t.ends_with('`') && t.matches('`').count() == 2
            };
            let exempt = fenced || code_line || line.starts_with('|') || line.contains("://");
            if !exempt && line.chars().count() > 100 {
                long.push(format!(
                    "{name}:{}: {} characters",
                    i + 1,
                    line.chars().count()
                ));
            }
        }
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The shipped plans that write nothing (docs/plans.md's "writes" column says
/// "nothing"; `runner::planned_writes`' docs test holds that column to the plans).
fn read_only_plans() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("docs/plans.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("| [") && l.trim_end().ends_with('|'))
        .filter(|l| {
            l.trim_matches('|')
                .rsplit(" | ")
                .next()
                .is_some_and(|c| c.trim().starts_with("nothing"))
        })
        .filter_map(|l| l.split_once("](../workloads/"))
        .filter_map(|(_, r)| r.split_once(')').map(|(f, _)| f.to_string()))
        .collect()
}

/// Why a `mmcab run` line of the docs would be refused for want of `--allow-write`: a
/// resume, or a plan that writes, on a block device (a `/dev/` node, or the DEV and
/// TARGET placeholders), without `--dry-run`.
fn needs_allow_write(words: &[String], read_only: &[String]) -> bool {
    let has = |flag: &str| words.iter().any(|w| w.trim_matches(['[', ']']) == flag);
    if words.first().map(String::as_str) != Some("run") || has("--dry-run") || has("--allow-write")
    {
        return false;
    }
    if has("--resume") {
        return true;
    }
    let on_block_device = words.windows(2).any(|w| {
        w[0] == "--device" && (w[1].starts_with("/dev/") || w[1] == "DEV" || w[1] == "TARGET")
    });
    let plan = words.get(1).map(String::as_str).unwrap_or("");
    let writes = !read_only.iter().any(|p| plan.ends_with(p.as_str()));
    on_block_device && writes
}

#[test]
fn run_lines_in_the_docs_that_write_a_device_say_allow_write() {
    let read_only = read_only_plans();
    assert!(
        read_only.contains(&"qd-sweep.toml".to_string()),
        "{read_only:?}"
    );
    let mut bad = Vec::new();
    for (path, text) in user_docs() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        for code in code_of(&text) {
            for words in command_lines(&code) {
                if needs_allow_write(&words, &read_only) {
                    bad.push(format!("{name}: mmcab {}", words.join(" ")));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "refused without --allow-write, as the docs show them:\n{}",
        bad.join("\n")
    );
    let line = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert!(needs_allow_write(
        &line("run --resume results/x"),
        &read_only
    ));
    assert!(needs_allow_write(
        &line("run PLAN --device DEV --repeat 5"),
        &read_only
    ));
    assert!(!needs_allow_write(
        &line("run workloads/qd-sweep.toml --device /dev/mmcblk0"),
        &read_only
    ));
}

/// Every JSON document the docs sketch inline (`{"schema": 1, ...}`) starts with its
/// `schema`, as every `--json` output does; values inside a document (`{"bytes": N}`,
/// `{"ns": N}`) are not documents.
#[test]
fn json_sketches_in_the_docs_carry_their_schema() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for (path, text) in user_docs() {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        for code in code_of(&text) {
            let code = code.trim();
            if !code.starts_with("{\"")
                || ["{\"bytes\"", "{\"ns\""]
                    .iter()
                    .any(|v| code.starts_with(v))
            {
                continue;
            }
            seen += 1;
            if !code.starts_with("{\"schema\": ") {
                bad.push(format!("{name}: {code}"));
            }
        }
    }
    assert!(
        seen >= 3,
        "only {seen} JSON sketches found: is the scan broken?"
    );
    assert!(
        bad.is_empty(),
        "JSON documents without schema:\n{}",
        bad.join("\n")
    );
}
