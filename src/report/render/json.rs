//! `report.json`: the report model as JSON (NaN written as null).

use crate::report::model::Report;
use anyhow::Result;

pub fn render(report: &Report) -> Result<String> {
    // serde_json writes non-finite floats as null.
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}
