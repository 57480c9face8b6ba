use super::*;

fn job(text: &str) -> JobSpec {
    crate::plan::workload::test_job(text).unwrap()
}

#[test]
fn exact_for_the_job_file_short_for_a_mail() {
    let j = fio_job(
        &job(
            "rw = \"write\"\nbs = \"1MiB\"\nsize = \"4MiB\"\npattern = \"zeros\"\nend_fsync = true",
        ),
        None,
    );
    assert_eq!(
        j.short_pairs().join(" "),
        "rw=write bs=1M size=4M ioengine=psync iodepth=1 direct=1 end_fsync=1 zero_buffers=1"
    );
    assert_eq!(
        j.exact_pairs().join(" "),
        "rw=write bs=1048576 size=4194304 ioengine=psync iodepth=1 direct=1 end_fsync=1 \
         zero_buffers=1"
    );
    assert!(j.notes.is_empty());
    let j = fio_job(
        &job("rw = \"randread\"\nengine = \"io_uring\"\niodepth = 32\nruntime = \"10s\"\nramp_time = \"1500ms\""),
        None,
    );
    assert_eq!(
        j.short_pairs().join(" "),
        "rw=randread bs=4k ioengine=io_uring iodepth=32 direct=1 runtime=10s ramp_time=1500ms \
         norandommap=1"
    );
    assert!(j.exact_pairs().contains(&"runtime=10000ms".to_string()));
    assert_eq!(fio_size(1536), "1536");
    assert_eq!(fio_size(3 << 30), "3G");
}

#[test]
fn verify_is_crc32_on_writes_and_a_note_on_reads() {
    // mmcab's block checksum is crc32fast's CRC-32 (IEEE 802.3 polynomial, zlib's form):
    // the polynomial of fio's crc32; crc32c is Castagnoli's.
    let mut h = crc32fast::Hasher::new();
    h.update(b"123456789");
    assert_eq!(h.finalize(), 0xcbf4_3926, "the CRC-32/ISO-HDLC check value");
    let w = fio_job(&job("rw = \"randwrite\"\nverify = true"), None);
    assert!(w.exact_pairs().contains(&"verify=crc32".to_string()));
    assert_eq!(w.notes, [FioNote::VerifyWrites]);
    let r = fio_job(&job("rw = \"read\"\nverify = true"), None);
    assert!(!r.exact_pairs().iter().any(|p| p.starts_with("verify")));
    assert_eq!(r.notes, [FioNote::VerifyReads]);
}

#[test]
fn rwmixread_only_for_randrw_and_ioctl_is_psync_with_a_note() {
    let j = fio_job(&job("rw = \"randrw\"\nrwmixread = 70"), None);
    assert_eq!(
        &j.short_pairs()[..3],
        ["rw=randrw", "rwmixread=70", "bs=4k"]
    );
    let j = fio_job(
        &job("rw = \"write\"\nengine = \"ioctl\"\nbs = \"16k\""),
        None,
    );
    assert!(j.short_pairs().contains(&"ioengine=psync".to_string()));
    assert_eq!(j.notes, [FioNote::Ioctl]);
    assert!(j.notes[0].text().contains("has no fio engine"));
}

#[test]
fn an_iozone_pass_is_its_own_rw_over_every_record() {
    let j = job("rw = \"iozone-random\"\nsize = \"1M\"");
    assert_eq!(fio_job(&j, None).short_pairs()[0], "rw=randrw");
    let pass = fio_job(&j, Some("randwrite"));
    assert_eq!(pass.short_pairs()[0], "rw=randwrite");
    assert!(!pass.short_pairs().contains(&"norandommap=1".to_string()));
}
