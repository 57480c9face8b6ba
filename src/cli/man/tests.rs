//! Every command has its page with every section, and the pages are well-formed roff:
//! groff and man(1) render them without a warning (where one is missing, the test says
//! SKIPPED; in CI it fails: tests/common/tool.rs).

use super::sections::{page, PAGES};
use super::*;
use std::process::Command;

const SECTIONS: [&str; 4] = [
    ".SH DESCRIPTION",
    ".SH \"EXIT STATUS\"",
    ".SH FILES",
    ".SH EXAMPLES",
];

#[test]
fn every_command_has_a_table_entry_and_every_entry_a_command() {
    let paths: Vec<String> = commands().into_iter().map(|(path, _)| path).collect();
    for path in &paths {
        assert!(
            page(path).is_some(),
            "`{path}` has no man page sections: add a Page for it to PAGES (src/cli/man/)"
        );
    }
    for p in PAGES {
        assert!(
            paths.iter().any(|path| path == p.command),
            "PAGES has `{}`, which is no command",
            p.command
        );
        assert!(
            !p.description.is_empty()
                && !p.exit_status.is_empty()
                && !p.files.is_empty()
                && (2..=5).contains(&p.examples.len()),
            "{}: a section is empty, or not 2-5 examples",
            p.command
        );
        for (_, line) in p.examples {
            assert!(
                line.starts_with("mmcab ") || line.starts_with("TARGET="),
                "{line}"
            );
        }
    }
    assert_eq!(PAGES.len(), paths.len(), "a command has two entries");
    assert!(
        paths.iter().any(|p| p == "mmcab probe open-au"),
        "{paths:?}"
    );
}

/// Every example's mmcab command line is one this mmcab accepts (up to the shell's
/// `>`, `&&`, `;`).
#[test]
fn examples_parse() {
    use clap::Parser;
    for p in PAGES {
        for line in p.examples.iter().flat_map(|(_, lines)| lines.lines()) {
            let Some(command) = line.strip_prefix("mmcab ") else {
                continue;
            };
            let mut words = Vec::new();
            for word in command.split_whitespace() {
                if [">", "&&", "|"].contains(&word) {
                    break;
                }
                words.push(word.trim_end_matches(';'));
                if word.ends_with(';') {
                    break;
                }
            }
            let parsed = Cli::try_parse_from(std::iter::once("mmcab").chain(words));
            assert!(parsed.is_ok(), "{}: {line}: {:?}", p.command, parsed.err());
        }
    }
}

/// Exit statuses the code can end with appear on the pages of the commands that use them.
#[test]
fn exit_statuses_match_the_code() {
    let statuses = |command: &str| -> Vec<&str> {
        page(command)
            .unwrap()
            .exit_status
            .iter()
            .map(|(s, _)| *s)
            .collect()
    };
    // The table's rows for every command and for this one, in the table's order.
    let table = |command: &str| -> Vec<String> {
        let name = command.trim_start_matches("mmcab ");
        let mut rows: Vec<String> = crate::exit::TABLE
            .iter()
            .filter(|r| r.commands == "all" || r.commands.split(", ").any(|c| c == name))
            .map(|r| r.status_text())
            .collect();
        rows.dedup();
        rows
    };
    for command in [
        "mmcab run",
        "mmcab probe packed",
        "mmcab report",
        "mmcab compare",
    ] {
        assert_eq!(statuses(command), table(command), "{command}");
    }
    for p in PAGES {
        assert_eq!(statuses(p.command)[..3], ["0", "1", "2"], "{}", p.command);
    }
}

fn write_pages() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path()).unwrap();
    (dir, files)
}

#[test]
fn every_page_has_the_sections() {
    let (_dir, files) = write_pages();
    assert_eq!(files.len(), PAGES.len());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for section in SECTIONS
            .iter()
            .chain(&[".SH NAME", ".SH SYNOPSIS", ".SH \"SEE ALSO\""])
        {
            assert!(text.contains(section), "{}: no {section}", file.display());
        }
        // The sections come in man-pages(7)'s order.
        let at = |s: &str| text.find(s).unwrap();
        assert!(at(SECTIONS[0]) < at(SECTIONS[1]) && at(SECTIONS[1]) < at(SECTIONS[2]));
        assert!(at(SECTIONS[2]) < at(SECTIONS[3]), "{}", file.display());
    }
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for name in [
        "mmcab.1",
        "mmcab-run.1",
        "mmcab-probe-packed.1",
        "mmcab-export-fio.1",
    ] {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }
    let mut root = Vec::new();
    render_root(&mut root).unwrap();
    let root = String::from_utf8(root).unwrap();
    assert_eq!(
        root,
        std::fs::read_to_string(files.iter().find(|f| f.ends_with("mmcab.1")).unwrap()).unwrap()
    );
    // The tool's after_help (a pointer to these pages) is not an EXTRA section of its own.
    assert!(!root.contains(".SH EXTRA"), "{root}");
}

/// What `program` prints for `page`, and its warnings (stderr).
fn formatted(program: &str, args: &[&str], page: &Path) -> (String, String) {
    let out = Command::new(program)
        .args(args)
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}: {out:?}",
        page.display()
    );
    (
        plain(&String::from_utf8_lossy(&out.stdout)),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Terminal output without its bold and underlining (overstrikes `c\x08c`, SGR escapes).
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x08' => {
                out.pop();
            }
            '\x1b' => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[test]
fn groff_and_man_render_the_pages_without_warnings() {
    let (_dir, files) = write_pages();
    for (program, args, install) in [
        (
            "groff",
            &["-man", "-Tutf8", "-ww", "-rLL=80n"][..],
            "apt-get install groff-base",
        ),
        ("man", &["--warnings", "-l"][..], "apt-get install man-db"),
    ] {
        if !crate::test_tool::need(program, install) {
            continue;
        }
        for file in &files {
            let (text, warnings) = formatted(program, args, file);
            assert!(
                warnings.trim().is_empty(),
                "{program} {}: {warnings}",
                file.display()
            );
            assert!(
                text.contains("EXIT STATUS") && text.contains("EXAMPLES"),
                "{text}"
            );
        }
    }
    // Formatter or not, roff's own rules hold: every font change is closed on its line.
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            let opened = line.matches("\\fB").count() + line.matches("\\fI").count();
            assert!(
                opened <= line.matches("\\fR").count(),
                "{}: {line}",
                file.display()
            );
        }
    }
}

/// The run page's status 4 names every failed I/O that docs/safety.md's row 4 names.
#[test]
fn the_run_pages_failed_io_names_what_the_safety_table_names() {
    let safety = include_str!("../../../docs/safety.md");
    let row = safety
        .lines()
        .find(|l| l.starts_with("| 4 |"))
        .expect("docs/safety.md has a row for 4");
    let page = page("mmcab run").unwrap();
    let (_, man) = page
        .exit_status
        .iter()
        .find(|(s, _)| *s == "4")
        .expect("the run page has 4");
    for what in [
        "a read, write, fsync or verify read",
        "opening the target, a file of it or the card's node for the ioctl engine",
        "laying out a file target",
        "io_uring_enter",
        "the offset when there is one",
    ] {
        assert!(
            row.contains(what),
            "docs/safety.md's row 4 lacks {what:?}: {row}"
        );
        assert!(man.contains(what), "the run page's 4 lacks {what:?}: {man}");
    }
}
