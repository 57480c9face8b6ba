//! Knobs: snapshot, apply, verify, restore.
//!
//! A knob is one setting of the stack under test (bus width, packing, a sysfs attribute,
//! a shell hook). Every kind follows the same life: `snapshot` what the device had before
//! mmcab touched it, `apply` a value, `verify` by reading it back from where the kernel
//! reports it, and `restore` the snapshot. The [`guard::KnobGuard`] owns the knobs of a
//! run and restores them on every exit path.
//!
//! One file per kind: [`attribute`] (sysfs/debugfs file), [`caps`] (debugfs host caps and
//! the runtime-PM re-init; [`bus_width`] switches the bus with them), [`cap_bit`] (a caps
//! bit the block driver takes when it binds: CMD23, CQE; [`mmcblk`] rebinds it),
//! [`speed_mode`] (the speed mode through caps/caps2 and the re-init), [`clock`] (debugfs
//! `clock`),
//! [`ext_csd`] (CMD6 SWITCH), [`command`] (shell
//! hooks); [`builtin`] is the table of the names users type (`bus-width`, `packing`,
//! `cmd23`, `cqe`, `cache`) and what each resolves to; [`names`] checks the knob names a
//! plan uses against them; [`custom`] is what the plan's `[[knob]]` declarations
//! ([`crate::plan::knob`]) become on a target. [`setting`] has the types the knobs and
//! the runner share: names, normalized values, a config's settings and what was verified.

pub mod attribute;
pub mod builtin;
pub mod bus_width;
pub mod cap_bit;
pub mod caps;
pub mod clock;
pub mod command;
pub mod custom;
pub mod env;
pub mod ext_csd;
pub mod guard;
pub mod mmcblk;
pub mod names;
pub mod packing;
pub mod setting;
pub mod speed_mode;

use anyhow::Result;
pub use setting::{KnobName, Setting, Settings, Value, Verified};

/// One switchable setting. A plan writes values in its words ("8-bit", "true");
/// [`Knob::normalize`] turns them into the knob's canonical [`Value`] ("8", "on"), the
/// only form the knob applies, checks and verifies.
pub trait Knob: Send {
    /// The name users type in a plan (`bus-width`, or a custom knob's name).
    fn name(&self) -> &str;

    /// Canonical form of a value as written in a plan, or an error naming the allowed
    /// values. Touches nothing.
    fn normalize(&self, value: &str) -> Result<Value> {
        Ok(Value::canonical(value.trim()))
    }

    /// Refuse a value before any I/O when it is dangerous or impossible (e.g. widening the
    /// bus past what the host came up with without `--force`). Touches nothing.
    fn check(&self, _value: &Value, _force: bool) -> Result<()> {
        Ok(())
    }

    /// The value in effect now, read from where the kernel reports it.
    fn read(&self) -> Result<String>;

    /// Remember the current state so that [`Knob::restore`] can put it back. Called once,
    /// before the first apply.
    fn snapshot(&mut self) -> Result<()>;

    /// The value remembered by [`Knob::snapshot`].
    fn original(&self) -> Option<Value>;

    /// The snapshot as one line of text for meta.json (None before a snapshot): the
    /// value in the plan's words, then `key=value` for what else the restore puts back
    /// ([`Saved`]). A resumed run adopts it, so it restores what the device had before
    /// the first start, not what an interrupted run left.
    fn saved(&self) -> Option<String> {
        Some(self.original()?.to_string())
    }

    /// Take a snapshot [`Knob::saved`] wrote (by the first start of a resumed run)
    /// instead of reading the device now; [`Knob::snapshot`] then keeps it. Touches
    /// nothing.
    fn adopt(&mut self, saved: &str) -> Result<()>;

    /// What a config that does not set the knob wants of it: its snapshot, for most
    /// knobs; the clock wants what the card's init chose, in the mode it is in now.
    fn left_out(&self) -> Result<Option<Value>> {
        Ok(self.original())
    }

    /// Set a value.
    fn apply(&mut self, value: &Value) -> Result<()>;

    /// Read the value back; an error says what was found instead.
    fn verify(&self, value: &Value) -> Result<()> {
        let found = self.read()?;
        if value.as_str() == found {
            Ok(())
        } else {
            anyhow::bail!(
                "knob {}: expected '{value}' after applying it, but the device reports '{found}'",
                self.name()
            )
        }
    }

    /// Put the snapshot back (and check it took). Safe to call more than once.
    fn restore(&mut self) -> Result<()>;

    /// Shell commands that restore the snapshot by hand, printed when restore fails and
    /// saved as `restore.sh` in the results directory.
    fn restore_commands(&self) -> Vec<String>;

    /// Shell commands that must run before any knob's [`Knob::restore_commands`] (the
    /// bus-width knob binds the card's driver again if it was unbound: its re-init, and
    /// the card's block-device files, need it). Printed first, once each.
    fn restore_preconditions(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether applying or restoring it unbinds and binds the card's block driver, which
    /// deletes and re-creates the disk: the runner closes the target around it.
    fn rebinds_block_device(&self) -> bool {
        false
    }

    /// Refuse a value given the other knobs' values in the same config (`config`, all
    /// normalized), before any I/O: `speed-mode hs400` at `bus-width 4`, a `clock` above
    /// the config's mode. Touches nothing.
    fn check_together(&self, _value: &Value, _config: &Settings, _force: bool) -> Result<()> {
        Ok(())
    }

    /// Where it is brought in place among a config's knobs ([`Stage`]).
    fn stage(&self) -> Stage {
        Stage::AfterInit
    }
}

/// When a knob is brought in place, relative to the others: a re-initialisation of the
/// card resets what the core sets at init (the clock, from the mode), so knobs that
/// re-initialise come first (the bus width before the mode: HS400 needs the 8 bits
/// when its re-init runs) and are restored first ([`guard::KnobGuard`]); the rest after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Re-initialises the card with new data lines (`bus-width`).
    BusWidth,
    /// Re-initialises the card (`speed-mode`, `cqe` over caps2).
    Reinit,
    /// Set on an initialised card (everything else).
    AfterInit,
}

/// A snapshot as [`Knob::saved`] writes it: `VALUE key=value ...` (`8 caps=0x4000014f
/// control=auto`); kinds with nothing but a value save the value alone.
pub struct Saved<'a> {
    pub value: &'a str,
    fields: Vec<(&'a str, &'a str)>,
    knob: &'a str,
}

impl<'a> Saved<'a> {
    pub fn parse(knob: &'a str, text: &'a str) -> Saved<'a> {
        let mut words = text.split_whitespace();
        let value = words.next().unwrap_or_default();
        let fields = words.filter_map(|w| w.split_once('=')).collect();
        Saved {
            value,
            fields,
            knob,
        }
    }

    /// A field's text, or an error naming the knob and the field.
    pub fn field(&self, name: &str) -> Result<&'a str> {
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "knob {}: the saved snapshot has no {name}= (meta.json edited or written \
                     by another mmcab version?)",
                    self.knob
                )
            })
    }
}

/// Why a knob cannot be used here, in words that say what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub knob: String,
    pub reason: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "knob {} is unavailable: {}", self.knob, self.reason)
    }
}

impl std::error::Error for Unavailable {}

/// Quote a string for a POSIX shell (used in printed restore commands).
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+,@%".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/sys/block/mmcblk0/x"), "/sys/block/mmcblk0/x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
