//! The report model rendered: its [`header`] and [`setup`]; the mail text ([`text`],
//! with [`text_boots`], [`text_published`] and [`wording`], in the [`columns`] of a
//! mail), [`markdown`], [`csv`], [`json`], the kernel evidence's lines and table
//! ([`evidence`]), mmc_test beside the block layer ([`mmc_test`]) and the [`chart`]s;
//! every number and warning in the words of [`numbers`]; a probe's mail text
//! ([`probe_text`]).

pub mod chart;
pub mod columns;
pub mod csv;
pub mod evidence;
pub mod header;
pub mod json;
pub mod markdown;
pub mod mmc_test;
pub mod numbers;
pub mod probe_text;
pub mod setup;
pub mod switches;
pub mod text;
mod text_boots;
mod text_published;
pub mod wording;
