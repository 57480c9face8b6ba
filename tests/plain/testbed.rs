//! The testbed itself, end to end: boots the emulated eMMC under both kernels with both
//! bus widths and checks that `mmcab info --json` agrees with the kernel's own files;
//! the runtime bus-width switch of testbed/README.md (7.x accepts it, 6.12 refuses it); and
//! testbed/run's contract (guest status passed through with its output, timeout, bad
//! options). One boot per test, several checks per boot: each boot costs 20-40 s.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/guest/testbed.rs.

use crate::common::testbed;

/// testbed/run with `args`: (exit status, stderr).
fn run_script(args: &[&str]) -> (Option<i32>, String) {
    let out = testbed::run_script(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Option checks come before anything else: they need neither the testbed nor root.
#[test]
fn bad_options_fail_before_booting() {
    let (code, err) = run_script(&["--bus-width", "5", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("--bus-width must be 4 or 8"), "{err}");
    let (code, err) = run_script(&["--timeout", "soon", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("--timeout must be whole seconds"), "{err}");
    let (code, err) = run_script(&["--throttle-bps", "0", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("--throttle-bps must be a positive number"),
        "{err}"
    );
    let (code, err) = run_script(&["--bus-width", "8"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("no command line"), "{err}");
    let (code, err) = run_script(&["--arch", "arm64", "--mmc-test", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("--mmc-test: mmc_test.ko is built for the armv7 guest's kernels only"),
        "{err}"
    );
}

/// What the docs quote of the simulated card's module (`module emmcsim 1.0, N
/// parameters`, as `mmcab info` prints it) is what testbed/emmcsim declares: its
/// MODULE_VERSION and one module parameter per `EMMCSIM_PARAM(` (params.c).
#[test]
fn the_docs_quote_the_simulated_cards_module_as_it_is() {
    let root = testbed::repo_root();
    let sim = root.join("testbed/emmcsim");
    let read = |f: &str| std::fs::read_to_string(sim.join(f)).unwrap();
    let params = read("params.c")
        .lines()
        .filter(|l| l.starts_with("EMMCSIM_PARAM("))
        .count();
    let host = read("host.c");
    let version = host
        .split_once("MODULE_VERSION(\"")
        .and_then(|(_, r)| r.split_once('"'))
        .map(|(v, _)| v.to_string())
        .expect("host.c: MODULE_VERSION");
    assert!(
        params > 30,
        "only {params} EMMCSIM_PARAM lines: is the count broken?"
    );
    let want = format!("module emmcsim {version}, {params} parameters");
    let mut seen = 0;
    let mut bad = Vec::new();
    // README.md and docs/*.md (the user docs), then the module's own README.
    let mut pages: Vec<(std::path::PathBuf, String)> = vec![root.join("README.md")]
        .into_iter()
        .chain(
            std::fs::read_dir(root.join("docs"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "md")),
        )
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    pages.push((sim.join("README.md"), read("README.md")));
    for (path, text) in pages {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for (i, _) in flat.match_indices("module emmcsim ") {
            let quote: String = flat[i..].split(')').next().unwrap_or("").to_string();
            if !quote.contains("parameters") {
                continue; // the report's `Hosts:` line names no count
            }
            seen += 1;
            if quote != want {
                bad.push(format!("{}: {quote:?}", path.display()));
            }
        }
    }
    assert!(
        seen > 0,
        "no page quotes the module: drop this test or the quote"
    );
    assert!(bad.is_empty(), "want {want:?}:\n{}", bad.join("\n"));
}
