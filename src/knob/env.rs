//! What every built-in knob is resolved against: the device and its kernel, and the
//! error of a knob that is not available there.

use super::Unavailable;
use crate::device::capabilities::kernel_release;
use crate::device::MmcPaths;

/// A device and the kernel driving it, as the knobs see them.
#[derive(Debug, Clone)]
pub struct KnobEnv {
    pub paths: MmcPaths,
    /// `uname -r`.
    pub kernel_release: String,
}

impl KnobEnv {
    pub fn new(paths: MmcPaths) -> KnobEnv {
        KnobEnv {
            paths,
            kernel_release: kernel_release(),
        }
    }
}

/// The error of a knob not available on this device: why, and what to do instead.
pub(super) fn unavailable(knob: &str, reason: String) -> anyhow::Error {
    Unavailable {
        knob: knob.to_string(),
        reason,
    }
    .into()
}
