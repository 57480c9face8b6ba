//! The MMC host's driver in a report, from meta.json's `device.host_driver` (what
//! `mmcab info` read from sysfs; absent in results of older mmcab versions, whose
//! reports stay as they were): a `Host:` header line (`mmc0, driver emmcsim (module
//! emmcsim 1.0)`), the module's parameters in full in report.md and report.json.

use super::dir::ResultsDir;
use crate::report::model::header::{HostEntry, Named};
use crate::report::model::{RecordedHost, Report};

/// The host of one results directory, when its meta.json recorded the driver.
pub fn recorded(dir: &ResultsDir) -> Option<RecordedHost> {
    let device = dir.meta.device.as_ref()?;
    Some(RecordedHost {
        by: Vec::new(),
        host: device.host.clone(),
        driver: device.host_driver.clone()?,
    })
}

/// The report of one results directory: its host line and driver, if recorded.
pub fn describe_dir(report: &mut Report, dir: &ResultsDir) {
    let Some(host) = recorded(dir) else { return };
    report.header.host = Some(Named::One(HostEntry::Recorded(host.clone())));
    report.hosts = vec![host];
}
