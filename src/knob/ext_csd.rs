//! EXT_CSD knobs: one byte of the card's EXT_CSD set with CMD6 SWITCH (the mmc ioctl)
//! and verified by reading EXT_CSD back from the card.
//!
//! Only fields on the allow-list may be switched: flipping others behind the kernel's
//! back can desynchronise the driver (BUS_WIDTH, HS_TIMING, PARTITION_CONFIG) or is
//! irreversible (write-once fields such as BKOPS_EN bit 0 or WR_REL_SET). Others are
//! refused unless `--force`; even then only a byte CMD6 can write (the modes segment,
//! [`SwitchIndex`]) is accepted.

use super::{Knob, Value};
use crate::device::ext_csd_field::Field;
use crate::device::ext_csd_table::{BARRIER_CTRL, CACHE_CTRL};
use crate::device::ioctl::SwitchIndex;
use anyhow::{bail, Context, Result};

/// Fields mmcab switches without `--force` (one byte each): (field, values, why it is
/// safe).
pub const ALLOW_LIST: &[(Field, &[u8], &str)] = &[
    (
        CACHE_CTRL,
        &[0, 1],
        "volatile cache on/off; reversible, the kernel still sends flushes",
    ),
    (BARRIER_CTRL, &[0, 1], "cache barrier on/off; reversible"),
];

/// How an EXT_CSD knob reaches the card (the device module's ioctl and EXT_CSD reader).
pub trait ExtCsdAccess: Send {
    /// Read EXT_CSD afresh from the card and return one byte.
    fn read_byte(&self, index: usize) -> Result<u8>;
    /// CMD6 SWITCH (write byte) of `index` to `value`.
    fn switch(&self, index: SwitchIndex, value: u8) -> Result<()>;
    /// The device node, for printed restore commands.
    fn dev_node(&self) -> String;
}

pub struct ExtCsdKnob {
    name: String,
    field: String,
    index: SwitchIndex,
    allowed: Option<&'static [u8]>,
    access: Box<dyn ExtCsdAccess>,
    original: Option<u8>,
}

impl ExtCsdKnob {
    /// A knob for `field` (a name on the allow-list, or with `force` a name the caller
    /// resolved to `index`). An index CMD6 cannot write is refused with the reason, also
    /// with `force`.
    pub fn new(
        name: &str,
        field: &str,
        index: Option<usize>,
        force: bool,
        access: Box<dyn ExtCsdAccess>,
    ) -> Result<ExtCsdKnob> {
        let allowed = ALLOW_LIST
            .iter()
            .find(|(f, _, _)| f.name.eq_ignore_ascii_case(field));
        let (index, values) = match (allowed, index) {
            (Some((f, values, _)), _) => (f.offset, Some(*values)),
            (None, Some(i)) if force => (i, None),
            (None, None) if force => bail!(
                "knob {name}: EXT_CSD field {field} is neither a one-byte field mmcab knows nor \
                 a byte offset (0-191)"
            ),
            (None, _) => {
                let names: Vec<&str> = ALLOW_LIST.iter().map(|(f, _, _)| f.name).collect();
                bail!(
                    "knob {name}: EXT_CSD field {field} is not on the allow-list of fields safe \
                     to switch at run time ({}); switching others behind the kernel's back can \
                     confuse the driver or be irreversible. Pass --force only if you know it \
                     is safe on this card",
                    names.join(", ")
                );
            }
        };
        let index = SwitchIndex::try_from(index)
            .map_err(|reason| anyhow::anyhow!("knob {name}: EXT_CSD field {field}: {reason}"))?;
        Ok(ExtCsdKnob {
            name: name.to_string(),
            field: field.to_ascii_uppercase(),
            index,
            allowed: values,
            access,
            original: None,
        })
    }
}

fn parse_byte(value: &str) -> Result<u8> {
    let t = value.trim();
    let parsed = match t {
        "on" => Ok(1),
        "off" => Ok(0),
        _ => match t.strip_prefix("0x") {
            Some(hex) => u8::from_str_radix(hex, 16),
            None => t.parse::<u8>(),
        },
    };
    parsed.map_err(|_| anyhow::anyhow!("'{t}' is not a byte value (0-255, 0x.., on/off)"))
}

impl Knob for ExtCsdKnob {
    fn name(&self) -> &str {
        &self.name
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        let byte = parse_byte(value)?;
        if let Some(allowed) = self.allowed {
            if !allowed.contains(&byte) {
                bail!(
                    "knob {}: EXT_CSD {} = {byte} is not allowed (values: {:?})",
                    self.name,
                    self.field,
                    allowed
                );
            }
        }
        Ok(Value::canonical(byte.to_string()))
    }

    fn read(&self) -> Result<String> {
        Ok(self.access.read_byte(self.index.get())?.to_string())
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.original.is_none() {
            self.original = Some(self.access.read_byte(self.index.get())?);
        }
        Ok(())
    }

    fn original(&self) -> Option<Value> {
        self.original.map(|b| Value::canonical(b.to_string()))
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        self.original = Some(parse_byte(saved).with_context(|| format!("knob {}", self.name))?);
        Ok(())
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        self.access.switch(self.index, parse_byte(value.as_str())?)
    }

    fn verify(&self, value: &Value) -> Result<()> {
        let found = self.access.read_byte(self.index.get())?;
        if *value != *found.to_string() {
            bail!(
                "knob {}: EXT_CSD {}[{}] reads {found} after switching it to {value}: the card \
                 did not take the switch",
                self.name,
                self.field,
                self.index
            );
        }
        Ok(())
    }

    fn restore(&mut self) -> Result<()> {
        if let Some(original) = self.original {
            self.access.switch(self.index, original)?;
            self.verify(&Value::canonical(original.to_string()))?;
        }
        Ok(())
    }

    fn restore_commands(&self) -> Vec<String> {
        match self.original {
            // mmc-utils' generic form: mmc extcsd write <offset> <value> <device>
            Some(original) => vec![format!(
                "mmc extcsd write 0x{:x} 0x{original:x} {}",
                self.index.get(),
                self.access.dev_node()
            )],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A 512-byte EXT_CSD image in memory that CMD6 writes into, as the card would.
    struct Image(Arc<Mutex<Vec<u8>>>);
    impl ExtCsdAccess for Image {
        fn read_byte(&self, index: usize) -> Result<u8> {
            Ok(self.0.lock().unwrap()[index])
        }
        fn switch(&self, index: SwitchIndex, value: u8) -> Result<()> {
            self.0.lock().unwrap()[index.get()] = value;
            Ok(())
        }
        fn dev_node(&self) -> String {
            "/dev/mmcblk0".into()
        }
    }

    #[test]
    fn allow_listed_field_switches_and_restores() {
        let image = Arc::new(Mutex::new(vec![0u8; 512]));
        image.lock().unwrap()[33] = 1;
        let mut knob = ExtCsdKnob::new(
            "cache",
            "cache_ctrl",
            None,
            false,
            Box::new(Image(image.clone())),
        )
        .unwrap();
        knob.snapshot().unwrap();
        assert_eq!(knob.normalize("off").unwrap(), "0");
        assert!(knob.normalize("2").is_err());
        knob.apply(&Value::canonical("0")).unwrap();
        knob.verify(&Value::canonical("0")).unwrap();
        knob.restore().unwrap();
        assert_eq!(image.lock().unwrap()[33], 1);
        assert_eq!(
            knob.restore_commands(),
            vec!["mmc extcsd write 0x21 0x1 /dev/mmcblk0"]
        );
    }

    #[test]
    fn other_fields_need_force() {
        let image = Arc::new(Mutex::new(vec![0u8; 512]));
        let err = ExtCsdKnob::new(
            "p",
            "PARTITION_CONFIG",
            Some(179),
            false,
            Box::new(Image(image.clone())),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("allow-list") && err.contains("--force"),
            "{err}"
        );
        assert!(ExtCsdKnob::new(
            "p",
            "PARTITION_CONFIG",
            Some(179),
            true,
            Box::new(Image(image))
        )
        .is_ok());
    }

    #[test]
    fn every_allow_listed_field_is_switchable() {
        for (field, _, _) in ALLOW_LIST {
            assert_eq!(field.width, 1, "{}", field.name);
            assert!(
                SwitchIndex::try_from(field.offset).is_ok(),
                "{}",
                field.name
            );
        }
    }

    #[test]
    fn forced_fields_cmd6_cannot_write_are_refused_before_any_io() {
        // CMDQ_SUPPORT (308) used to be cast into the argument's byte: snapshot read
        // byte 308 while CMD6 wrote byte 52, and restore wrote 308's value into 52.
        let image = Arc::new(Mutex::new(vec![0u8; 512]));
        let knob = |field: &str, index: usize| {
            ExtCsdKnob::new(
                "k",
                field,
                Some(index),
                true,
                Box::new(Image(image.clone())),
            )
        };
        let err = format!("{:#}", knob("CMDQ_SUPPORT", 308).err().unwrap());
        assert!(
            err.contains("CMDQ_SUPPORT") && err.contains("EXT_CSD[308] cannot be switched"),
            "{err}"
        );
        let err = format!("{:#}", knob("EXT_CSD_REV", 192).err().unwrap());
        assert!(err.contains("read-only properties segment"), "{err}");
        let mut last = knob("191", 191).unwrap();
        last.snapshot().unwrap();
        last.apply(&Value::canonical("7")).unwrap();
        last.verify(&Value::canonical("7")).unwrap();
        last.restore().unwrap();
        assert_eq!(image.lock().unwrap()[191], 0);
        assert!(knob("CACHE_CTRL", 33).is_ok());
        assert!(image.lock().unwrap().iter().all(|b| *b == 0));
    }
}
