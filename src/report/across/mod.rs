//! Results directories compared as boots: [`sides`] groups them into the sides of a
//! comparison, [`compare`] merges them into one report, [`boots`] tests its changes
//! with boots as the unit, [`calibration`] stores a board's boot-to-boot spread for
//! sides of one boot, [`host`] names each side's MMC host driver.

pub mod boots;
pub mod calibration;
pub mod compare;
pub mod host;
pub mod sides;
