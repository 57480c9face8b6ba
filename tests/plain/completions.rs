//! `mmcab completions SHELL` and `mmcab man`: generated from the command-line
//! definitions, so every command and flag shows up in them.

use crate::common::cli::mmcab_stdout as mmcab;

#[test]
fn completions_know_every_command_and_the_new_flags() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = mmcab(&["completions", shell]);
        for word in ["compare", "export", "fail-if", "threshold", "save-baseline"] {
            assert!(text.contains(word), "{shell}: no {word}");
        }
    }
    let bash = mmcab(&["completions", "bash"]);
    assert!(bash.contains("complete -F _mmcab"), "{bash}");
}

#[test]
fn man_pages_for_the_tool_and_each_command() {
    let page = mmcab(&["man"]);
    assert!(page.contains(".TH mmcab 1"), "{page}");
    assert!(page.contains("compare"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    mmcab(&["man", "--dir", dir.path().to_str().unwrap()]);
    for name in [
        "mmcab.1",
        "mmcab-run.1",
        "mmcab-compare.1",
        "mmcab-export-fio.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.contains(".TH"), "{name}: {text}");
    }
    let compare = std::fs::read_to_string(dir.path().join("mmcab-compare.1")).unwrap();
    assert!(compare.contains("fail\\-if"), "{compare}");
    // mmcab's own sections, with the statuses of the gate.
    for section in [
        ".SH \"EXIT STATUS\"",
        ".SH FILES",
        ".SH EXAMPLES",
        ".SH \"SEE ALSO\"",
    ] {
        assert!(compare.contains(section), "{section}: {compare}");
    }
    assert!(compare.contains(".TP\n\\fB7\\fR"), "{compare}");
    let pages = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(pages, 15, "one page per command");
}

#[test]
fn help_points_to_the_man_pages() {
    let help = mmcab(&["--help"]);
    let last = help
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(last.starts_with("Manual: `man mmcab`"), "{help}");
    assert!(last.contains("man mmcab-<command>") && last.contains("mmcab man --dir DIR"));
    let info = mmcab(&["info", "--help"]);
    assert!(info.contains("schema: man mmcab-info"), "{info}");
    assert!(!info.contains("README"), "{info}");
}
