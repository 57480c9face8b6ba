//! `mmcab completions SHELL` and `mmcab man`: generated from the command-line
//! definitions, so every command and flag shows up in them.

use std::process::{Command, Output};

fn mmcab(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .output()
        .expect("run mmcab");
    assert!(
        out.status.success(),
        "mmcab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn completions_know_every_command_and_the_new_flags() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = String::from_utf8(mmcab(&["completions", shell]).stdout).unwrap();
        for word in ["compare", "export", "fail-if", "threshold", "save-baseline"] {
            assert!(text.contains(word), "{shell}: no {word}");
        }
    }
    let bash = String::from_utf8(mmcab(&["completions", "bash"]).stdout).unwrap();
    assert!(bash.contains("complete -F _mmcab"), "{bash}");
}

#[test]
fn man_pages_for_the_tool_and_each_command() {
    let page = String::from_utf8(mmcab(&["man"]).stdout).unwrap();
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
}
