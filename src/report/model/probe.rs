//! A probe's report as data (`mmcab probe align` / `open-au`, and published flashbench
//! output): its record's table with what was read off it, and the published runs of the
//! same kind to compare with. Built by [`crate::report::load::probe`], worded by
//! [`crate::report::render::probe_text`].

use crate::probe::align::{self, Estimate};
use crate::probe::open_au::{self, OpenAuEstimate};
use crate::probe::record::{ProbeKind, ProbeRecord};

/// The body of a probe's report: the run and the published runs to compare with.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub run: ProbeRun,
    pub published: Vec<ProbeRun>,
}

/// One probe run with its estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRun {
    pub record: ProbeRecord,
    pub read: ProbeEstimate,
}

/// What a run's table says.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeEstimate {
    Align {
        estimate: Estimate,
        /// Per row of the table: plain reads far slower than the others' (a
        /// disturbance, left out).
        slow: Vec<bool>,
    },
    /// The open units in linear order, then in random order, where the runs say.
    OpenAu {
        linear: Option<OpenAuEstimate>,
        random: Option<OpenAuEstimate>,
    },
}

impl ProbeRun {
    pub fn of(record: &ProbeRecord) -> ProbeRun {
        let read = match record.kind {
            ProbeKind::Align => ProbeEstimate::Align {
                estimate: align::estimate(&record.align),
                slow: align::disturbed(&record.align),
            },
            ProbeKind::OpenAu => ProbeEstimate::OpenAu {
                linear: open_au::estimate(&record.open_au, false),
                random: open_au::estimate(&record.open_au, true),
            },
        };
        ProbeRun {
            record: record.clone(),
            read,
        }
    }
}
