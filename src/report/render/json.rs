//! `report.json`: the report model as JSON (NaN written as null), with its title,
//! header and caption in the words of the other outputs ([`super::header`]).

use super::header;
use super::setup::{self, SetupSection};
use crate::report::model::evidence::EvidenceBlock;
use crate::report::model::{Block, Boots, RecordedHost, Report};
use crate::stats::multiple::Correction;
use anyhow::Result;
use serde::Serialize;

/// The report as report.json (and `--format json`) writes it.
#[derive(Serialize)]
pub struct Json<'a> {
    title: String,
    /// `[key, value]` pairs.
    header: Vec<(&'static str, String)>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    hosts: &'a [RecordedHost],
    setup: Vec<SetupSection>,
    caption: String,
    configs: &'a [String],
    baseline: &'a str,
    published: bool,
    blocks: &'a [Block],
    notes: Vec<String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    evidence: &'a [EvidenceBlock],
    correction: Option<Correction>,
    tests: usize,
    boots: Option<JsonBoots<'a>>,
    /// mmc_test beside the block layer (plans with `engine = "mmc_test"` only).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    mmc_test: Vec<super::mmc_test::JsonRow<'a>>,
}

/// [`Boots`] with its calibration described as the header describes it.
#[derive(Serialize)]
struct JsonBoots<'a> {
    sides: &'a [(String, Vec<String>)],
    calibration: Option<String>,
}

/// The JSON view of `report`.
pub fn view(report: &Report) -> Json<'_> {
    Json {
        title: header::title(&report.title),
        header: header::lines(&report.header),
        hosts: &report.hosts,
        setup: setup::sections(report.setup.as_ref()),
        caption: header::caption(report),
        configs: &report.configs,
        baseline: &report.baseline,
        published: report.published,
        blocks: &report.blocks,
        notes: report.notes.iter().map(super::wording::note_text).collect(),
        evidence: &report.evidence,
        correction: report.correction,
        tests: report.tests,
        boots: report.boots.as_ref().map(|b: &Boots| JsonBoots {
            sides: &b.sides,
            calibration: b.calibration.as_ref().map(header::calibration_text),
        }),
        mmc_test: super::mmc_test::json_rows(report),
    }
}

pub fn render(report: &Report) -> Result<String> {
    // serde_json writes non-finite floats as null.
    let mut text = serde_json::to_string_pretty(&view(report))?;
    text.push('\n');
    Ok(text)
}
