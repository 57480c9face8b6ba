//! The checks of one job that need no target ([`JobSpec::validate`]): each error names
//! the key and says what would work; the caller adds the workload and job names.

use super::{takes_packed, Engine, JobSpec, Rw, EMPTY_JOB_NAME, MIN_LOGICAL_BLOCK_BYTES};
use crate::units;
use anyhow::{bail, Result};
use std::time::Duration;

impl JobSpec {
    /// Checks that need no target; the caller adds the workload and job names.
    pub fn validate(&self) -> Result<()> {
        self.check_shape()?;
        self.check_amounts()?;
        self.check_iozone()?;
        self.check_verify_and_fsync()?;
        self.check_ioctl()?;
        super::mmc_test_checks::check_job(self)
    }

    /// Name, block size, offset, depth and job count.
    fn check_shape(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            bail!("{EMPTY_JOB_NAME}");
        }
        if self.name.contains(['/', '\0']) {
            bail!(
                "`name` = {:?} contains '/' or NUL: a job's name names its files (and the \
                 report's rows): use one without",
                self.name
            );
        }
        if self.bs == 0 {
            bail!("`bs` must be greater than 0");
        }
        if self.direct && self.bs % MIN_LOGICAL_BLOCK_BYTES != 0 {
            bail!(
                "`bs` = {} is not a multiple of 512 bytes, which O_DIRECT needs \
                 (direct = true): use a multiple of the logical block size or direct = false",
                self.bs
            );
        }
        if self.direct && self.offset % MIN_LOGICAL_BLOCK_BYTES != 0 {
            bail!(
                "`offset` = {} is not a multiple of 512 bytes, which O_DIRECT needs",
                self.offset
            );
        }
        if self.iodepth == 0 {
            bail!("`iodepth` must be at least 1");
        }
        if self.numjobs == 0 {
            bail!("`numjobs` must be at least 1");
        }
        if self.iodepth > 1 && self.engine == Engine::Sync {
            bail!(
                "`iodepth` = {} needs engine = \"io_uring\": the sync engine has one I/O in flight",
                self.iodepth
            );
        }
        if self.iodepth > 4096 {
            bail!("`iodepth` = {} is more than 4096", self.iodepth);
        }
        if let Some(min) = self.iodepth_batch_complete_min {
            if self.engine != Engine::IoUring {
                bail!(
                    "`iodepth_batch_complete_min` needs engine = \"io_uring\": only its waits \
                     take a count"
                );
            }
            if min == 0 || min > self.iodepth {
                bail!(
                    "`iodepth_batch_complete_min` = {min} must be 1..=`iodepth` ({}); mmcab \
                     does not poll (fio's 0)",
                    self.iodepth
                );
            }
        }
        Ok(())
    }

    /// The read/write mix, sizes and run time.
    fn check_amounts(&self) -> Result<()> {
        match (self.rw, self.rwmixread) {
            (Rw::RandRw, Some(p)) if p > 100 => {
                bail!("`rwmixread` = {p} is a percentage: use 0..=100")
            }
            (Rw::RandRw, _) | (_, None) => {}
            (_, Some(_)) => bail!("`rwmixread` only applies to rw = \"randrw\""),
        }
        for (key, value) in [("size", self.size), ("io_size", self.io_size)] {
            if let Some(v) = value {
                if v < self.bs {
                    bail!(
                        "`{key}` = {} is smaller than `bs` = {}: no I/O would be done",
                        units::format_size(v),
                        units::format_size(self.bs)
                    );
                }
            }
        }
        if self.time_based && self.runtime.is_none() {
            bail!("`time_based` = true needs a `runtime`");
        }
        if self.runtime == Some(Duration::ZERO) {
            bail!("`runtime` must be greater than 0");
        }
        if self.past_cache.is_some() && !super::takes_past_cache(self) {
            bail!(
                "`past_cache` applies to jobs that write, not iozone's (its `size` is the \
                 file's): remove it"
            );
        }
        if let Some(min) = self.min_runtime {
            if min.is_zero() {
                bail!("`min_runtime` must be greater than 0");
            }
            if let Some(runtime) = self.runtime.filter(|&r| r < min) {
                bail!(
                    "`min_runtime` = {min:?} is longer than `runtime` = {runtime:?}: the job \
                     stops at `runtime`; lower `min_runtime` or raise `runtime`"
                );
            }
        }
        Ok(())
    }

    /// iozone's modes: a whole file of records, once per pass.
    fn check_iozone(&self) -> Result<()> {
        if self.rw.is_iozone() {
            let rw = self.rw.as_str();
            let Some(size) = self.size else {
                bail!("rw = \"{rw}\" needs `size` (the file size, iozone's -s)");
            };
            if size % self.bs != 0 {
                bail!(
                    "rw = \"{rw}\": `size` = {} is not a whole number of records of `bs` = {}",
                    units::format_size(size),
                    units::format_size(self.bs)
                );
            }
            for (key, set) in [
                ("io_size", self.io_size.is_some()),
                ("runtime", self.runtime.is_some()),
                ("min_runtime", self.min_runtime.is_some()),
                ("ramp_time", self.ramp_time.is_some()),
                ("verify", self.verify),
            ] {
                if set {
                    bail!("`{key}` does not apply to rw = \"{rw}\" (every record once per pass)");
                }
            }
        }
        Ok(())
    }

    /// Verify and fsync need a mode that writes (or reads back) whole blocks.
    fn check_verify_and_fsync(&self) -> Result<()> {
        if self.verify {
            if matches!(self.rw, Rw::RandRw) {
                bail!("`verify` works with read, randread (check blocks written earlier), write and randwrite, not randrw");
            }
            if self.bs < MIN_LOGICAL_BLOCK_BYTES {
                bail!("`verify` needs `bs` of at least 512 bytes for its header");
            }
            if self.time_based || self.min_runtime.is_some() {
                bail!(
                    "`verify` cannot be combined with `{}` (blocks would be overwritten)",
                    if self.time_based {
                        "time_based"
                    } else {
                        "min_runtime"
                    }
                );
            }
        }
        if self.fsync > 0 && !self.rw.writes() {
            bail!("`fsync` only applies to jobs that write");
        }
        Ok(())
    }

    /// The ioctl engine's keys: one command at a time, never through the page cache,
    /// `packed` only on its writes.
    fn check_ioctl(&self) -> Result<()> {
        if self.engine == Engine::Ioctl {
            if !self.direct {
                bail!(
                    "engine = \"ioctl\" never goes through the page cache: leave `direct` at true"
                );
            }
            if self.iodepth > 1 {
                bail!(
                    "`iodepth` = {} needs engine = \"io_uring\": the ioctl engine sends one \
                     command at a time",
                    self.iodepth
                );
            }
        }
        if self.packed.is_some_and(|p| p.is_on()) && !takes_packed(self) {
            bail!(
                "`packed` applies to jobs with engine = \"ioctl\" and rw = \"write\" or \
                 \"randwrite\" (packed commands are writes sent through the MMC ioctl)"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_job as job, Packed, WorkloadSpec};

    #[test]
    fn packed_is_taken_by_ioctl_writes() {
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
    }
}
