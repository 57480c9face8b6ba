//! The plan keys of the `ioctl` engine: `engine = "ioctl"` on a job, `packed = N` on an
//! ioctl write job (or on a `[[config]]`, for every ioctl write job of the plan), and the
//! rules for them that need no device.

use crate::workload::spec::{Engine, JobSpec, Rw, WorkloadSpec};
use anyhow::{bail, Result};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Most entries a packed command can name: MAX_PACKED_WRITES (EXT_CSD [500]) is one byte.
pub const MAX_PACKED_ENTRIES: u32 = 255;

/// How an ioctl write job sends its writes: `packed = 0` / `"off"` (each write its own
/// CMD23 + CMD25), `packed = N` (N writes per packed command, 2..=255) or
/// `packed = "max"` (as many as the card, the header and one command's data allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packed {
    #[default]
    Off,
    Entries(u32),
    Max,
}

impl fmt::Display for Packed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Packed::Off => f.write_str("off"),
            Packed::Entries(n) => write!(f, "{n}"),
            Packed::Max => f.write_str("max"),
        }
    }
}

impl Packed {
    fn from_int(n: i64) -> Result<Packed, String> {
        match n {
            0 => Ok(Packed::Off),
            2..=255 => Ok(Packed::Entries(n as u32)),
            _ => Err(format!(
                "`packed` = {n}: use 0 (unpacked), 2..={MAX_PACKED_ENTRIES} writes per packed \
                 command, or \"max\""
            )),
        }
    }

    pub fn is_on(self) -> bool {
        self != Packed::Off
    }
}

impl<'de> Deserialize<'de> for Packed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Packed, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Packed::from_int(n),
            Raw::Text(t) => match t.trim() {
                "max" => Ok(Packed::Max),
                "off" => Ok(Packed::Off),
                other => other
                    .parse::<i64>()
                    .map_err(|_| {
                        format!(
                            "`packed` = \"{other}\": use an integer (0, or 2..={MAX_PACKED_ENTRIES}), \
                             \"off\" or \"max\""
                        )
                    })
                    .and_then(Packed::from_int),
            },
        }
        .map_err(de::Error::custom)
    }
}

impl Serialize for Packed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Packed::Off => s.serialize_u32(0),
            Packed::Entries(n) => s.serialize_u32(*n),
            Packed::Max => s.serialize_str("max"),
        }
    }
}

/// A job whose writes `packed` applies to: the ioctl engine, sequential or random writes.
pub fn takes_packed(job: &JobSpec) -> bool {
    job.engine == Engine::Ioctl && matches!(job.rw, Rw::Write | Rw::RandWrite)
}

/// The rules of the ioctl keys that need no device (called by [`JobSpec::validate`]).
pub fn validate_job(job: &JobSpec) -> Result<()> {
    if job.engine == Engine::Ioctl {
        if !job.direct {
            bail!("engine = \"ioctl\" never goes through the page cache: leave `direct` at true");
        }
        if job.iodepth > 1 {
            bail!(
                "`iodepth` = {} needs engine = \"io_uring\": the ioctl engine sends one \
                 command at a time",
                job.iodepth
            );
        }
    }
    if job.packed.is_some_and(Packed::is_on) && !takes_packed(job) {
        bail!(
            "`packed` applies to jobs with engine = \"ioctl\" and rw = \"write\" or \
             \"randwrite\" (packed commands are writes sent through the MMC ioctl)"
        );
    }
    Ok(())
}

impl WorkloadSpec {
    /// This workload with `packed` set on every job it applies to (a config's `packed`).
    pub fn with_packed(&self, packed: Packed) -> WorkloadSpec {
        let mut spec = self.clone();
        for job in spec.job.iter_mut().filter(|j| takes_packed(j)) {
            job.packed = Some(packed);
        }
        spec
    }

    /// Whether any job of the workload uses the ioctl engine.
    pub fn uses_ioctl(&self) -> bool {
        self.job.iter().any(|j| j.engine == Engine::Ioctl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::workload::spec::test_job as job;

    #[test]
    fn packed_values() {
        let j = job("rw = \"randwrite\"\nengine = \"ioctl\"\npacked = 8").unwrap();
        assert_eq!(j.packed, Some(Packed::Entries(8)));
        let j = job("rw = \"write\"\nengine = \"ioctl\"\npacked = \"max\"").unwrap();
        assert_eq!(j.packed, Some(Packed::Max));
        let j = job("rw = \"write\"\nengine = \"ioctl\"\npacked = 0").unwrap();
        assert_eq!(j.packed, Some(Packed::Off));
        for bad in ["packed = 1", "packed = 256", "packed = \"lots\""] {
            let err = format!(
                "{:#}",
                job(&format!("rw = \"write\"\nengine = \"ioctl\"\n{bad}")).unwrap_err()
            );
            assert!(err.contains("`packed`"), "{bad}: {err}");
        }
    }

    #[test]
    fn ioctl_rules() {
        for (text, want) in [
            (
                "rw = \"read\"\nengine = \"ioctl\"\npacked = 4",
                "`packed` applies",
            ),
            ("rw = \"write\"\npacked = 4", "`packed` applies"),
            (
                "rw = \"randrw\"\nengine = \"ioctl\"\npacked = 4",
                "`packed` applies",
            ),
            (
                "rw = \"write\"\nengine = \"ioctl\"\ndirect = false",
                "page cache",
            ),
            (
                "rw = \"write\"\nengine = \"ioctl\"\niodepth = 4",
                "one command at a time",
            ),
        ] {
            let err = format!("{:#}", job(text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
            assert!(err.contains("job 'j'"), "{err}");
        }
        job("rw = \"randread\"\nengine = \"ioctl\"\nverify = true").unwrap();
    }

    #[test]
    fn a_configs_packed_reaches_only_ioctl_writes() {
        let w: WorkloadSpec = toml::from_str(
            "name = \"w\"\n[[job]]\nname = \"a\"\nrw = \"write\"\nengine = \"ioctl\"\n\
             [[job]]\nname = \"b\"\nrw = \"read\"\nengine = \"ioctl\"\n\
             [[job]]\nname = \"c\"\nrw = \"write\"\n",
        )
        .unwrap();
        let packed = w.with_packed(Packed::Entries(4));
        let got: Vec<_> = packed.job.iter().map(|j| j.packed).collect();
        assert_eq!(got, [Some(Packed::Entries(4)), None, None]);
        packed.validate().unwrap();
        assert!(w.uses_ioctl());
        assert_eq!(
            serde_json::to_string(&Packed::Max).unwrap(),
            "\"max\"".to_string()
        );
    }
}
