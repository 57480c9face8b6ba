//! Reports of `mmcab probe align` / `open-au` (and of published flashbench output): the
//! mail text (`report.txt`, [`crate::report::render::probe_text`]) and the chart
//! ([`crate::report::render::chart::probe_chart`]) of a probe's record, with the
//! published runs to compare with. probe.json and the table's CSV are written by the
//! probe ([`crate::probe::record`]).

use crate::probe::flashbench;
use crate::probe::measure::published_records;
use crate::probe::record::{self, ProbeRecord, PUBLISHED_TXT};
use crate::report::files::TEXT_FILE;
use crate::report::load;
use crate::report::render::chart::{probe_chart::probe_chart, save};
use crate::report::render::text;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The published runs of `dir`'s `published.txt`, if any.
fn published_in(dir: &Path) -> Result<Vec<ProbeRecord>> {
    let path = dir.join(PUBLISHED_TXT);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let p = flashbench::parse(&text).with_context(|| format!("{}", path.display()))?;
    Ok(published_records(&p))
}

/// Write `report.txt` and the chart of the probe in `dir` (with its published.txt);
/// returns the mail text.
pub fn write(dir: &Path, r: &ProbeRecord) -> Result<String> {
    let published = published_in(dir)?;
    write_with(dir, r, &published)
}

fn write_with(dir: &Path, r: &ProbeRecord, published: &[ProbeRecord]) -> Result<String> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mail = text::render(&load::probe::build(r, published));
    let path = dir.join(TEXT_FILE);
    std::fs::write(&path, &mail).with_context(|| format!("cannot write {}", path.display()))?;
    if let Some((stem, chart)) = probe_chart(r, published) {
        save(&chart, dir, &stem)?;
    }
    Ok(mail)
}

/// `mmcab report DIR` of a probe directory.
pub fn report_dir(dir: &Path) -> Result<String> {
    write(dir, &record::read(dir)?)
}

/// Whether a file is flashbench output (not a `.csv` of published numbers).
pub fn is_flashbench_text(path: &Path) -> bool {
    path.extension().is_none_or(|e| e != "csv")
        && std::fs::read_to_string(path).is_ok_and(|t| flashbench::parse(&t).is_ok())
}

/// `mmcab report FILE` of published flashbench output: one report per kind it holds,
/// into `<dir of FILE>/<stem>/` (`align/` and `open-au/` inside when it has both);
/// returns the mail texts joined and the directory.
pub fn report_published(path: &Path) -> Result<(String, PathBuf)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let p = flashbench::parse(&text).with_context(|| format!("{}", path.display()))?;
    let out = crate::report::files::default_out_dir(path);
    let records = published_records(&p);
    let mut mail = String::new();
    for r in &records {
        let dir = if records.len() > 1 {
            out.join(r.kind.as_str())
        } else {
            out.clone()
        };
        if !mail.is_empty() {
            mail.push('\n');
        }
        mail.push_str(&write_with(&dir, r, &[])?);
    }
    Ok((mail, out))
}
