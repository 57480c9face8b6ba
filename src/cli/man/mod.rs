//! Man pages: clap_mangen's sections, generated from the clap definitions (NAME,
//! SYNOPSIS, DESCRIPTION, OPTIONS, SUBCOMMANDS, VERSION), with mmcab's own per command
//! from the table in [`sections`]: more DESCRIPTION, JSON OUTPUT, EXIT STATUS,
//! ENVIRONMENT, FILES, EXAMPLES and SEE ALSO, set with the `roff` crate clap_mangen uses.

mod page;
pub(super) mod sections;
mod sections_probe;
mod sections_report;
mod sections_run;
#[cfg(test)]
mod tests;

use super::Cli;
use clap::CommandFactory;
use clap_mangen::roff::{bold, italic, roman, Inline, Roff};
use clap_mangen::Man;
use page::Page;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Every command with a page, as `clap_mangen::generate_to` walks them: the tool first,
/// then each subcommand and its own (no `help`), each with its path (`mmcab probe packed`).
pub fn commands() -> Vec<(String, clap::Command)> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut all = Vec::new();
    walk(root, "mmcab".to_owned(), &mut all);
    all
}

fn walk(cmd: clap::Command, path: String, all: &mut Vec<(String, clap::Command)>) {
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    all.push((path.clone(), cmd));
    for sub in subs {
        let name = format!("{path} {}", sub.get_name());
        walk(sub, name, all);
    }
}

/// The man page of the tool itself (mmcab.1).
pub fn render_root(w: &mut dyn Write) -> io::Result<()> {
    let (path, cmd) = commands().swap_remove(0);
    render(&path, cmd, w)
}

/// Write every page into `dir` (mmcab.1, mmcab-run.1, ...); the files written.
pub fn write_all(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (path, cmd) in commands() {
        let file = dir.join(man(cmd.clone()).get_filename());
        let mut out = io::BufWriter::new(std::fs::File::create(&file)?);
        render(&path, cmd, &mut out)?;
        out.flush()?;
        written.push(file);
    }
    Ok(written)
}

fn man(cmd: clap::Command) -> Man {
    Man::new(cmd)
        .source(format!("mmcab {}", env!("CARGO_PKG_VERSION")))
        .manual("mmcab manual")
}

/// One page: clap_mangen's sections in its order, mmcab's where man-pages(7) puts them.
/// A command without a table entry (the tests refuse that) gets clap_mangen's alone.
pub fn render(path: &str, cmd: clap::Command, w: &mut dyn Write) -> io::Result<()> {
    let page = sections::page(path);
    let root = path == "mmcab";
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_after_help = cmd.get_after_long_help().is_some() || cmd.get_after_help().is_some();
    let has_version = cmd.get_version().is_some() || cmd.get_long_version().is_some();
    let man = man(cmd);
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if let Some(page) = page {
        description(page).to_writer(w)?;
    }
    if has_args {
        man.render_options_section(w)?;
    }
    if has_subcommands {
        man.render_subcommands_section(w)?;
    }
    // The tool's after_help only points to these pages.
    if has_after_help && !root {
        man.render_extra_section(w)?;
    }
    if let Some(page) = page {
        sections_of(page).to_writer(w)?;
    }
    if has_version {
        man.render_version_section(w)?;
    }
    if let Some(page) = page {
        see_also(page).to_writer(w)?;
    }
    Ok(())
}

/// Text with `quoted` parts in bold.
fn inline(text: &str) -> Vec<Inline> {
    text.split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| if i % 2 == 1 { bold(part) } else { roman(part) })
        .collect()
}

/// The paragraphs that follow clap's about text.
fn description(page: &Page) -> Roff {
    let mut roff = Roff::new();
    for paragraph in page.description {
        roff.control("PP", []).text(inline(paragraph));
    }
    roff
}

/// A section of tagged paragraphs (`.TP`): the tag in `tag`'s font, then the text.
fn tagged(roff: &mut Roff, title: &str, rows: &[(&str, &str)], tag: fn(&str) -> Inline) {
    if rows.is_empty() {
        return;
    }
    roff.control("SH", [title]);
    for (name, text) in rows {
        roff.control("TP", []).text([tag(name)]).text(inline(text));
    }
}

/// JSON OUTPUT, EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES.
fn sections_of(page: &Page) -> Roff {
    let mut roff = Roff::new();
    if !page.json.is_empty() {
        roff.control("SH", ["JSON OUTPUT"]);
        roff.text(inline(
            "With `--json`, one JSON document on stdout (notes and warnings stay on \
             stderr). A key that changes meaning or disappears bumps `schema`; new keys may \
             appear without a bump. Numbers that are not defined are null.",
        ));
        for (key, text) in page.json {
            roff.control("TP", []).text([bold(*key)]).text(inline(text));
        }
    }
    tagged(&mut roff, "EXIT STATUS", page.exit_status, |s| bold(s));
    tagged(&mut roff, "ENVIRONMENT", page.environment, |s| bold(s));
    tagged(&mut roff, "FILES", page.files, |s| italic(s));
    if !page.examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (what, command) in page.examples {
            roff.control("PP", []).text(inline(what));
            roff.control("RS", ["4"]).control("nf", []);
            for line in command.lines() {
                roff.text([roman(line)]);
            }
            roff.control("fi", []).control("RE", []);
        }
    }
    roff
}

/// SEE ALSO: `name(section)`, comma-separated.
fn see_also(page: &Page) -> Roff {
    let mut roff = Roff::new();
    if page.see_also.is_empty() {
        return roff;
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut line = Vec::new();
    for (i, reference) in page.see_also.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        let (name, section) = reference.split_at(reference.find('(').unwrap_or(reference.len()));
        line.push(bold(name));
        line.push(roman(section));
    }
    roff.text(line);
    roff
}
