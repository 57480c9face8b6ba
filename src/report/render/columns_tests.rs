//! Tests of [`super`] (columns.rs).

use super::*;

#[test]
fn wrap_keeps_lines_short() {
    let mut out = String::new();
    let long = "word ".repeat(40);
    wrap(&mut out, 2, 4, &long);
    assert!(out.lines().all(|l| l.len() <= MAX_COLUMNS));
    assert!(out
        .lines()
        .nth(1)
        .expect("wrapped")
        .starts_with("      word"));
}

#[test]
fn wrap_keeps_assignments_together() {
    let mut out = String::new();
    let text = format!("{} p = 0.019, q = 0.127, n = 5: slower", "x".repeat(50));
    wrap(&mut out, 2, 4, &text);
    assert_eq!(
        out,
        format!(
            "  {} p = 0.019,\n      q = 0.127, n = 5: slower\n",
            "x".repeat(50)
        )
    );
}

#[test]
fn ascii_only() {
    assert_eq!(ascii("451µs – ok"), "451us ? ok");
}
