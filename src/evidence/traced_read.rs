//! One small read through the trace: what a knob that changes how the driver builds
//! requests (CMD23, the command queue) is verified with, since reading its setting back
//! says nothing about what the driver does.

use super::requests::RequestStats;
use super::tracefs::{self, Instance};
use crate::aligned::AlignedBuf;
use anyhow::{bail, Context, Result};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Bytes of the probe read: 16 blocks of 512 bytes, one multi-block request.
pub const PROBE_BYTES: usize = 8192;

/// What a probe read showed.
#[derive(Debug)]
pub enum Probe {
    /// The requests the read made, from the trace.
    Traced(Box<RequestStats>),
    /// The read worked but could not be traced (tracefs missing, not permitted): why.
    Untraced(String),
}

/// Read [`PROBE_BYTES`] at offset 0 of `dev_node` with O_DIRECT while tracing `host`
/// (`mmc0`) in a private instance. A failed read is an error; a trace that cannot be
/// had is [`Probe::Untraced`].
pub fn read_through_trace(dev_node: &Path, host: &str) -> Result<Probe> {
    let instance = match tracefs::find_root().and_then(|root| Instance::create(&root, host)) {
        Ok(instance) => instance,
        Err(err) => {
            read(dev_node)?;
            return Ok(Probe::Untraced(format!("{err:#}")));
        }
    };
    let capture = instance.capture()?;
    let read = read(dev_node);
    let stats = capture.finish()?;
    read?;
    if stats.read.requests == 0 {
        bail!(
            "the probe read of {} left no mmc_request_start event for {host} in {}",
            dev_node.display(),
            instance.dir().display()
        );
    }
    Ok(Probe::Traced(Box::new(stats)))
}

fn read(dev_node: &Path) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev_node)
        .with_context(|| format!("opening {} for the probe read", dev_node.display()))?;
    let mut buf = AlignedBuf::new(PROBE_BYTES, 4096);
    file.read_exact_at(buf.as_mut_slice(), 0).with_context(|| {
        format!(
            "probe read of {PROBE_BYTES} bytes from {}",
            dev_node.display()
        )
    })
}
