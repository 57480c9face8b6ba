//! Building the report model from what was recorded: a results directory read back
//! ([`dir`]) and turned into blocks ([`results`]), with what was run ([`what_ran`]), the
//! MMC host's driver ([`host`]) and the kernel evidence ([`evidence`]); or published
//! numbers of a reference CSV ([`mod@reference`]); or a probe's record ([`probe`]).

pub mod dir;
pub mod evidence;
pub mod host;
pub mod probe;
pub mod reference;
pub mod results;
pub mod switches;
pub mod what_ran;
