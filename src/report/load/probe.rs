//! From a probe's record (probe.json, or published flashbench output read back) and
//! the published runs to compare with to the report model.

use crate::probe::record::ProbeRecord;
use crate::report::model::header::{Header, Kernel, Named, Title};
use crate::report::model::probe::{Probe, ProbeRun};
use crate::report::model::Report;

/// The report of the probe run `r`, with the runs of `published` of its kind.
pub fn build(r: &ProbeRecord, published: &[ProbeRecord]) -> Report {
    let title = if r.started_unix_s > 0.0 {
        Title::Probe {
            kind: r.kind,
            target: r.target.clone(),
        }
    } else {
        Title::PublishedProbe { kind: r.kind }
    };
    let given = |v: &str| (!v.is_empty()).then(|| v.to_string());
    let header = Header {
        device: given(&r.device).map(Named::One),
        kernel: given(&r.kernel_release).map(|release| {
            Named::One(Kernel {
                releases: vec![release],
                label: String::new(),
            })
        }),
        cited: given(&r.source),
        ..Header::default()
    };
    let published = published
        .iter()
        .filter(|p| p.kind == r.kind)
        .map(ProbeRun::of)
        .collect();
    Report {
        title,
        header,
        probe: Some(Probe {
            run: ProbeRun::of(r),
            published,
        }),
        ..Report::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::flashbench;
    use crate::probe::measure::published_records;
    use crate::report::model::probe::ProbeEstimate;
    use crate::report::render::{header, text};

    /// A published run's report is the model's: its header in the probe's order, the
    /// estimates read off its table, published runs of the other kind left out.
    #[test]
    fn a_probe_report_is_built_as_a_model() {
        let text_in = "$ ./flashbench -a /dev/sda align 8192 pre 1ms on 1ms post 1ms diff 0ns \
            align 4096 pre 1ms on 1ms post 1ms diff 0ns\n\
            $ ./flashbench /dev/sda --open-au --open-au-nr=1 2MiB 2M/s 1MiB 2M/s\n";
        let mut records = published_records(&flashbench::parse(text_in).unwrap());
        records[0].device = "card".into();
        records[0].kernel_release = "not published".into();
        records[0].source = "a post".into();
        let report = build(&records[0], &records);
        assert_eq!(
            header::title(&report.title),
            "Published flashbench output (align)"
        );
        let keys: Vec<&str> = header::lines(&report.header)
            .iter()
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(keys, ["Device", "Kernel", "Source"]);
        let probe = report.probe.as_ref().expect("a probe's body");
        let ProbeEstimate::Align { slow, estimate } = &probe.run.read else {
            panic!("an align run: {:?}", probe.run.read);
        };
        assert_eq!(slow, &[false, false]);
        assert_eq!(estimate.erase_block.bytes, None, "no step in a flat table");
        assert_eq!(
            probe.published.len(),
            1,
            "the align run; the open-au one left out"
        );
        let mail = text::render(&report);
        assert!(
            mail.starts_with(
                "Published flashbench output (align)\nDevice: card\nKernel: not published\n\
                 Source: a post\nMethod: "
            ),
            "{mail}"
        );
    }
}
