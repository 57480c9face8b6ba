//! Building the report model from what was recorded: a results directory read back
//! ([`dir`]) and turned into blocks ([`results`]), with what was run ([`what_ran`]), the
//! MMC host's driver ([`host`]), the kernel evidence ([`evidence`]), mmc_test beside the
//! block layer ([`mmc_test`]) and what the runs'
//! length and size could measure ([`run_length`]); or published
//! numbers of a reference CSV ([`mod@reference`]); or a probe's record ([`probe`]).

pub mod dir;
pub mod evidence;
pub mod host;
pub mod mmc_test;
pub mod probe;
pub mod reference;
pub mod results;
pub mod run_length;
pub mod switches;
pub mod what_ran;
