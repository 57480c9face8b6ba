//! The user docs' claims about the code, each held to the code so that a kind of wrong
//! statement found once cannot come back: the JSON documents docs/json.md sketches
//! against what the code emits, the lists and numbers the docs quote (the built-in
//! knobs, the signature scan's window), kernel sources cited by function rather than by
//! line, and one home for each rule (the writes-over-data rule, where the shipped plans
//! write, the results directory's files). docs_tests.rs holds the command lines and
//! the exit statuses.

use super::docs_tests::user_docs;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The shape of a JSON document as the docs sketch it: `{schema, runs: [{run, config}],
/// writes: [...] (or {error} ...), dry_run: true}`.
#[derive(Debug)]
enum Shape {
    /// A value whose inside the sketch does not spell out.
    Leaf,
    Object(Vec<(String, Shape)>),
    List(Box<Shape>),
}

/// Split `text` at the commas outside brackets, braces and parentheses.
fn top_level_items(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut items) = (0i32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

/// The text between the bracket at the start of `text` and its match.
fn bracketed(text: &str) -> &str {
    let (open, close) = match text.chars().next() {
        Some('{') => ('{', '}'),
        Some('[') => ('[', ']'),
        other => panic!("no bracket at {other:?}"),
    };
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return &text[1..i];
            }
        }
    }
    panic!("unbalanced sketch: {text}")
}

fn value_shape(value: &str) -> Shape {
    let value = value.trim();
    if value.starts_with('{') {
        Shape::Object(object_shape(bracketed(value)))
    } else if value.starts_with('[') {
        let inner = bracketed(value).trim();
        if inner.starts_with('{') {
            Shape::List(Box::new(value_shape(inner)))
        } else {
            Shape::List(Box::new(Shape::Leaf))
        }
    } else {
        Shape::Leaf
    }
}

/// The keys of a sketched object's inside (`schema, runs: [{run}]`), each with its shape.
fn object_shape(inside: &str) -> Vec<(String, Shape)> {
    top_level_items(inside)
        .into_iter()
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once(':') {
            Some((key, value)) => (key.trim().to_string(), value_shape(value)),
            None => (
                item.split_whitespace().next().unwrap_or("").to_string(),
                Shape::Leaf,
            ),
        })
        .collect()
}

/// The sketch of the first `{...}` after `marker` in `text`.
fn sketch_after(text: &str, marker: &str) -> Shape {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no '{marker}' in the page"));
    let from = &text[at..];
    let brace = from.find('{').expect("a sketch after the marker");
    value_shape(&from[brace..])
}

/// Where `actual` has other keys than the sketch says, as `path: ...` lines.
fn differences(path: &str, sketch: &Shape, actual: &serde_json::Value, out: &mut Vec<String>) {
    match (sketch, actual) {
        (Shape::Leaf, _) => {}
        (Shape::Object(keys), serde_json::Value::Object(map)) => {
            let sketched: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
            // `...` in a sketch: keys that depend on a variant, named in the text after it.
            let open = sketched.contains(&"...");
            for k in map.keys() {
                if !open && !sketched.contains(&k.as_str()) {
                    out.push(format!(
                        "{path}: the code emits '{k}', the docs do not say it"
                    ));
                }
            }
            for (k, shape) in keys.iter().filter(|(k, _)| k != "...") {
                match map.get(k) {
                    Some(v) => differences(&format!("{path}.{k}"), shape, v, out),
                    None => out.push(format!("{path}: the docs say '{k}', the code has none")),
                }
            }
        }
        (Shape::List(item), serde_json::Value::Array(items)) => {
            if let Some(first) = items.first() {
                differences(&format!("{path}[0]"), item, first, out);
            }
        }
        (Shape::Object(_), serde_json::Value::Null) => {}
        (shape, value) => out.push(format!("{path}: sketched {shape:?}, emitted {value}")),
    }
}

#[test]
fn the_sketch_parser_reads_nesting_and_notes() {
    let shape = sketch_after(
        "x: `{schema, dry_run: true, writes: [{start, end}] (or {error} when not), runs: [...]}`",
        "x:",
    );
    let actual = serde_json::json!({
        "schema": 1, "dry_run": true, "writes": [{"start": 0, "end": 1}], "runs": [1]
    });
    let mut out = Vec::new();
    differences("doc", &shape, &actual, &mut out);
    assert!(out.is_empty(), "{out:?}");
    let wrong = serde_json::json!({"schema": 1, "writes": [{"start": 0, "stop": 1}], "runs": []});
    differences("doc", &shape, &wrong, &mut out);
    assert_eq!(out.len(), 3, "{out:?}");
}

/// docs/json.md's `--dry-run --json` sketch is what `mmcab run --dry-run --json` prints.
#[test]
fn the_dry_run_json_sketch_is_what_the_code_emits() {
    use crate::runner::planned_writes::PlannedWrite;
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"p\"\n[[config]]\nname = \"A\"\n[[config]]\nname = \"B\"\n\
         [[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"write\"\n",
    )
    .unwrap();
    let opts = crate::runner::RunOptions {
        plan: Some(plan),
        dry_run: true,
        ..Default::default()
    };
    let session = crate::runner::open_session(&opts, false).unwrap();
    // The shape of one planned write (its numbers do not matter here).
    let writes: super::dry_run::Writes = Ok(vec![PlannedWrite {
        workload: "w".into(),
        job: "j".into(),
        configs: vec!["A".into(), "B".into()],
        start: 0,
        end: 1 << 20,
    }]);
    // And of one run-length warning: its kind's own keys are the `...` of the sketch.
    let lengths = [crate::runner::run_length::LengthWarning {
        workload: "w".into(),
        job: "j".into(),
        kind: crate::runner::run_length::LengthKind::SizeOnly {
            bytes: Some(1 << 20),
        },
    }];
    let actual = super::dry_run::matrix_json(&session, &writes, &lengths);
    let sketch = sketch_after(&read("docs/json.md"), "`--dry-run`: ");
    let mut out = Vec::new();
    differences("--dry-run --json", &sketch, &actual, &mut out);
    assert!(
        out.is_empty(),
        "docs/json.md vs the code:\n{}",
        out.join("\n")
    );
}

/// docs/json.md's sketch of `mmcab info --json` without DEVICE, and the man page's, are
/// what the listing prints.
#[test]
fn the_device_listing_json_sketch_is_what_the_code_emits() {
    let actual = super::info_list::example_json();
    let mut out = Vec::new();
    let sketch = sketch_after(
        &read("docs/json.md"),
        "`mmcab info --json` without DEVICE | 1 | ",
    );
    differences("info --json (json.md)", &sketch, &actual, &mut out);
    let man = super::man::sections::INFO.description.join(" ");
    let sketch = sketch_after(&man, "With `--json`: ");
    differences("info --json (mmcab-info.1)", &sketch, &actual, &mut out);
    assert!(out.is_empty(), "the docs vs the code:\n{}", out.join("\n"));
}

/// Every list of the built-in knobs the docs quote ("the built-in knobs (bus-width,
/// ...)") is `knob::builtin::BUILTINS`, in its order.
#[test]
fn quoted_lists_of_the_built_in_knobs_are_the_code_s() {
    let names: Vec<&str> = crate::knob::builtin::BUILTINS
        .iter()
        .map(|b| b.name)
        .collect();
    let man = super::man::sections::KNOBS.description.join(" ");
    let mut pages: Vec<(String, String)> = user_docs()
        .into_iter()
        .map(|(p, t)| (p.display().to_string(), t))
        .collect();
    pages.push(("mmcab-knobs.1".into(), man));
    let mut seen = 0;
    let mut bad = Vec::new();
    for (name, text) in &pages {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for (at, _) in flat.match_indices("built-in knobs (") {
            let rest = &flat[at + "built-in knobs (".len()..];
            let list: Vec<&str> = rest[..rest.find(')').unwrap()]
                .split(',')
                .map(|w| w.trim().trim_matches('`'))
                .collect();
            seen += 1;
            if list != names {
                bad.push(format!("{name}: {list:?}"));
            }
        }
    }
    assert!(
        seen >= 2,
        "only {seen} quoted lists found: is the scan broken?"
    );
    assert!(bad.is_empty(), "not {names:?}:\n{}", bad.join("\n"));
}

/// The signature scan's window as docs/safety.md quotes it (its first 68 KiB and last
/// 128 KiB) is the code's.
#[test]
fn the_quoted_signature_window_is_the_code_s() {
    use crate::workload::target::signatures::{HEAD_BYTES, TAIL_BYTES};
    let quote = format!(
        "first {} KiB, last {} KiB",
        HEAD_BYTES >> 10,
        TAIL_BYTES >> 10
    );
    let text = read("docs/safety.md");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&quote),
        "docs/safety.md does not say '{quote}'"
    );
}

/// docs/kernel-facts.md cites kernel sources by file and function: line numbers move
/// with every release and were wrong for the next one.
#[test]
fn kernel_facts_cite_functions_not_line_numbers() {
    let text = read("docs/kernel-facts.md");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = flat.split(' ').collect();
    let mut bad = Vec::new();
    for w in words.windows(2) {
        let line_word = matches!(
            w[0].trim_start_matches('('),
            "line" | "lines" | "Line" | "Lines"
        );
        if line_word && w[1].starts_with(|c: char| c.is_ascii_digit()) {
            bad.push(format!("{} {}", w[0], w[1]));
        }
    }
    assert!(bad.is_empty(), "line numbers in kernel-facts.md: {bad:?}");
}

/// `text` without the section under `heading` (up to the next heading of its level).
fn without_section(text: &str, heading: &str) -> String {
    let Some(start) = text.find(&format!("{heading}\n")) else {
        return text.to_string();
    };
    let rest = &text[start + heading.len()..];
    let end = rest
        .find("\n## ")
        .map_or(text.len(), |e| start + heading.len() + e + 1);
    format!("{}{}", &text[..start], &text[end..])
}

/// Each rule has one home and the other pages link to it: the writes-over-data rule
/// (its `wipefs -a` way out) in docs/safety.md, where the shipped plans write in
/// docs/plans.md, the results directory's file list in docs/results-format.md.
#[test]
fn each_rule_is_stated_once() {
    let mut pages = user_docs();
    pages.push((root().join("results/README.md"), read("results/README.md")));
    let files = [
        crate::record::RUNS_CSV,
        crate::record::SERIES_CSV,
        crate::record::LATENCY_CSV,
        crate::record::evidence::EVIDENCE_CSV,
        crate::record::evidence::REQUEST_SIZES_CSV,
        crate::record::verify::VERIFY_ERRORS_CSV,
        crate::record::META_JSON,
        crate::record::RESTORE_SH,
    ];
    let mut bad = Vec::new();
    for (path, text) in &pages {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        // README's quick start says what `./quickstart DEVICE` refuses and how past it:
        // that script's own refusal, not the rule.
        let own = match name.as_str() {
            "README.md" => without_section(text, "## Quick start"),
            _ => text.clone(),
        };
        let flat = own.split_whitespace().collect::<Vec<_>>().join(" ");
        if name != "docs/safety.md" && flat.contains("wipefs -a") {
            bad.push(format!("{name}: the writes-over-data rule (wipefs -a)"));
        }
        if name != "docs/plans.md" && flat.contains("from offset 0") {
            bad.push(format!(
                "{name}: where the shipped plans write (from offset 0)"
            ));
        }
        // A list of the results files: most of them named in one paragraph or table.
        for block in text.split("\n\n") {
            let named = files.iter().filter(|f| block.contains(*f)).count();
            if name != "docs/results-format.md" && named >= 5 {
                bad.push(format!(
                    "{name}: a list of the results files ({named} named)"
                ));
            }
        }
        if name == "docs/results-format.md" {
            for f in files {
                assert!(
                    text.contains(&format!("| `{f}` |")),
                    "results-format.md lacks {f}"
                );
            }
        }
    }
    assert!(
        bad.is_empty(),
        "stated outside its home:\n{}",
        bad.join("\n")
    );
}
