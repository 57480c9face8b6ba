//! The token-level readers of the walk, over proc-macro2's token trees (Rust's own
//! lexer: comments, strings, raw strings and lifetimes never look like paths, and doc
//! comments arrive as `#[doc = "..."]` attributes).

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

pub(super) fn punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

pub(super) fn ident(t: &TokenTree, name: &str) -> bool {
    matches!(t, TokenTree::Ident(i) if i == name)
}

/// `::` at `i`.
fn path_sep(t: &[TokenTree], i: usize) -> bool {
    matches!((t.get(i), t.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

/// An identifier that begins a path of two segments or more (not one after `::`).
pub(super) fn starts_path(t: &[TokenTree], i: usize) -> bool {
    path_sep(t, i + 1) && !(i >= 2 && path_sep(t, i - 2))
}

/// The path that starts at `i` (`$crate` as one segment) and the index after it.
pub(super) fn path_at(t: &[TokenTree], mut i: usize) -> (Vec<String>, usize) {
    let mut path = Vec::new();
    let dollar = i > 0 && punct(&t[i - 1], '$');
    while let Some(TokenTree::Ident(segment)) = t.get(i) {
        let s = segment.to_string();
        path.push(if dollar && path.is_empty() && s == "crate" {
            "$crate".to_string()
        } else {
            s
        });
        i += 1;
        if !path_sep(t, i) {
            break;
        }
        i += 2;
    }
    (path, i)
}

/// The leaves of a use tree: (path, name it binds when it binds one).
pub(super) fn use_tree(
    t: &[TokenTree],
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut i = 0;
    if prefix.is_empty() && path_sep(t, 0) {
        return; // ::name: another crate
    }
    while i < t.len() {
        match &t[i] {
            TokenTree::Ident(segment) => {
                prefix.push(segment.to_string());
                i += 1;
                if path_sep(t, i) {
                    i += 2;
                    continue;
                }
                let mut name = prefix.last().cloned();
                if prefix.last().map(String::as_str) == Some("self") {
                    prefix.pop();
                    name = prefix.last().cloned();
                }
                if t.get(i).is_some_and(|a| ident(a, "as")) {
                    name = t.get(i + 1).map(|n| n.to_string()).filter(|n| n != "_");
                }
                out.push((prefix, name));
                return;
            }
            TokenTree::Punct(p) if p.as_char() == '*' => {
                out.push((prefix, None));
                return;
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for part in inner.split(|x| punct(x, ',')) {
                    if !part.is_empty() {
                        use_tree(part, prefix.clone(), out);
                    }
                }
                return;
            }
            _ => return,
        }
    }
}

/// `#[cfg(test)]`, also inside `all(...)`.
pub(super) fn cfg_test(attr: &TokenStream) -> bool {
    let t: Vec<TokenTree> = attr.clone().into_iter().collect();
    match t.as_slice() {
        [TokenTree::Ident(cfg), TokenTree::Group(g)] if cfg == "cfg" => test_predicate(g.stream()),
        _ => false,
    }
}

fn test_predicate(p: TokenStream) -> bool {
    let t: Vec<TokenTree> = p.into_iter().collect();
    match t.as_slice() {
        [TokenTree::Ident(test)] => test == "test",
        [TokenTree::Ident(all), TokenTree::Group(g)] if all == "all" => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            inner
                .split(|x| punct(x, ','))
                .any(|part| test_predicate(part.iter().cloned().collect()))
        }
        _ => false,
    }
}

/// `#[path = "file.rs"]`.
pub(super) fn path_attr(attr: &TokenStream) -> Option<String> {
    let t: Vec<TokenTree> = attr.clone().into_iter().collect();
    match t.as_slice() {
        [TokenTree::Ident(path), eq, TokenTree::Literal(lit)]
            if path == "path" && punct(eq, '=') =>
        {
            Some(lit.to_string().trim_matches('"').to_string())
        }
        _ => None,
    }
}

/// The index after the item that starts at `i`: its `;`, or its body (`{ }`), whichever
/// comes first (`use`, `const`, `static` and `let` end at their `;`); what is no item (a
/// field, a match arm) ends at its `,` too.
pub(super) fn item_end(t: &[TokenTree], i: usize) -> usize {
    let first = |keywords: &[&str]| {
        keywords
            .iter()
            .any(|k| t[i..].iter().take(3).any(|x| ident(x, k)))
    };
    let to_semicolon = first(&["use", "const", "static", "let"]);
    let item = to_semicolon
        || first(&[
            "fn",
            "struct",
            "enum",
            "union",
            "impl",
            "trait",
            "type",
            "macro_rules",
            "extern",
        ]);
    for (j, x) in t.iter().enumerate().skip(i) {
        let body = matches!(x, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
        if punct(x, ';') || (body && !to_semicolon) || (punct(x, ',') && !item) {
            return j + 1;
        }
    }
    t.len()
}
