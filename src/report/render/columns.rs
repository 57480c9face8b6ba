//! Columns of the mail text (plain ASCII, at most 72 columns): word wrapping, names cut
//! to a column's width. Every renderer of mail lines uses these.

/// Widest line the mail text may have.
pub const MAX_COLUMNS: usize = 72;
pub const NAME_COLUMNS: usize = 20;

/// Words of `text`, with `a = b` kept together (`p = 0.019,`, `n = 5:`).
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut tokens = text.split_whitespace().peekable();
    while let Some(token) = tokens.next() {
        match (out.last_mut(), tokens.peek()) {
            (Some(last), Some(next)) if token == "=" => {
                *last = format!("{last} = {next}");
                tokens.next();
            }
            _ => out.push(token.to_string()),
        }
    }
    out
}

/// Word-wrap `text` to [`MAX_COLUMNS`]; continuation lines get `indent` spaces more.
pub fn wrap(out: &mut String, first_indent: usize, indent: usize, text: &str) {
    let mut line = " ".repeat(first_indent);
    let mut empty = true;
    for word in words(text) {
        let word = word.as_str();
        if !empty && line.len() + 1 + word.len() > MAX_COLUMNS {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(first_indent + indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// Replace anything outside printable ASCII (e.g. a "µ" in a device name).
pub fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'µ' => 'u',
            c if c.is_ascii() && !c.is_ascii_control() => c,
            _ => '?',
        })
        .collect()
}

pub fn cut(name: &str, width: usize) -> String {
    if name.len() > width {
        format!("{}~", &name[..width - 1])
    } else {
        name.to_string()
    }
}

pub fn name_cell(name: &str) -> String {
    cut(name, NAME_COLUMNS)
}

#[cfg(test)]
#[path = "columns_tests.rs"]
mod tests;
