//! Plans translated for other tools (`mmcab export`): [`fio`] job files. Pure: plan in,
//! text out; the command line writes it.

pub mod fio;
