//! Tests of workload and job parsing and their checks.

use super::*;

fn parse(text: &str) -> Result<WorkloadSpec> {
    let w: WorkloadSpec = toml::from_str(text)?;
    w.validate()?;
    Ok(w)
}

#[test]
fn defaults_follow_fio() {
    let w = parse("name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"randread\"\n").unwrap();
    let j = &w.job[0];
    assert_eq!(j.bs, 4096);
    assert_eq!((j.iodepth, j.numjobs), (1, 1));
    assert!(j.direct);
    assert_eq!(j.engine, Engine::Sync);
    assert_eq!(j.pattern, Pattern::Random);
    assert_eq!(j.read_percent(), 100);
}

#[test]
fn sizes_durations_and_engines_parse() {
    let w = parse(
        "name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"randrw\"\nrwmixread = 70\nbs = \"1MiB\"\n\
         size = \"256M\"\noffset = 4096\nruntime = \"2m\"\nramp_time = 5\n\
         engine = \"io_uring\"\niodepth = 32\npattern = \"zeros\"\n",
    )
    .unwrap();
    let j = &w.job[0];
    assert_eq!(j.bs, 1 << 20);
    assert_eq!(j.size, Some(256 << 20));
    assert_eq!(j.runtime, Some(Duration::from_secs(120)));
    assert_eq!(j.ramp_time, Some(Duration::from_secs(5)));
    assert_eq!(j.engine, Engine::IoUring);
    assert_eq!(j.read_percent(), 70);
}

#[test]
fn unknown_keys_are_named() {
    let err = parse("name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"read\"\nblocksize = 4096\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("blocksize"), "{err}");
    let err = parse("name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"sideways\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("sideways"), "{err}");
}

#[test]
fn impossible_values_name_job_and_key() {
    let cases = [
        ("rw = \"read\"\nbs = 1000", "`bs`"),
        ("rw = \"read\"\niodepth = 0", "`iodepth`"),
        ("rw = \"read\"\niodepth = 8", "io_uring"),
        (
            "rw = \"read\"\niodepth_batch_complete_min = 1",
            "`iodepth_batch_complete_min` needs engine = \"io_uring\"",
        ),
        (
            "rw = \"read\"\nengine = \"io_uring\"\niodepth = 8\niodepth_batch_complete_min = 9",
            "must be 1..=`iodepth` (8)",
        ),
        (
            "rw = \"read\"\nengine = \"io_uring\"\niodepth = 8\niodepth_batch_complete_min = 0",
            "must be 1..=`iodepth` (8)",
        ),
        ("rw = \"randrw\"\nrwmixread = 101", "`rwmixread`"),
        ("rw = \"read\"\nrwmixread = 50", "`rwmixread`"),
        ("rw = \"read\"\nnumjobs = 0", "`numjobs`"),
        ("rw = \"read\"\ntime_based = true", "`time_based`"),
        ("rw = \"iozone-random\"", "`size`"),
        ("rw = \"iozone\"\nsize = \"1M\"\nruntime = 5", "`runtime`"),
        (
            "rw = \"iozone-random\"\nsize = \"1M\"\nbs = \"3k\"",
            "`size`",
        ),
        ("rw = \"randrw\"\nverify = true", "`verify`"),
        ("rw = \"read\"\nsize = 512", "`size`"),
        ("rw = \"read\"\nfsync = 1", "`fsync`"),
        (
            "rw = \"read\"\nmin_runtime = 0",
            "`min_runtime` must be greater than 0",
        ),
        (
            "rw = \"read\"\nmin_runtime = 5\nruntime = 2",
            "`min_runtime` = 5s is longer than `runtime` = 2s",
        ),
        (
            "rw = \"write\"\nverify = true\nmin_runtime = 1",
            "`min_runtime`",
        ),
        (
            "rw = \"iozone\"\nsize = \"1M\"\nmin_runtime = 1",
            "`min_runtime`",
        ),
    ];
    for (body, key) in cases {
        let text = format!("name = \"w\"\n[[job]]\nname = \"j1\"\n{body}\n");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(key), "{body}: {err}");
        assert!(
            err.contains("job 'j1'") && err.contains("workload 'w'"),
            "{err}"
        );
    }
    // Not a multiple of 512 is fine with buffered I/O.
    parse("name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"read\"\nbs = 1000\ndirect = false\n")
        .unwrap();
}

#[test]
fn the_precondition_pass_writes_each_writers_region_once() {
    let w = parse(
        "name = \"w\"\nprecondition = true\n[[job]]\nname = \"r\"\nrw = \"randread\"\n\
         [[job]]\nname = \"rw\"\nrw = \"randwrite\"\nbs = \"4k\"\noffset = \"1M\"\n\
         size = \"8M\"\nio_size = \"1M\"\nmin_runtime = 2\nnumjobs = 2\n\
         offset_increment = \"8M\"\nengine = \"io_uring\"\niodepth = 4\n",
    )
    .unwrap();
    let pass = w.precondition_pass().unwrap();
    assert_eq!(pass.job.len(), 1, "only the writer");
    let j = &pass.job[0];
    assert_eq!((j.rw, j.io_size, j.min_runtime), (Rw::Write, None, None));
    assert_eq!((j.offset, j.size, j.numjobs), (1 << 20, Some(8 << 20), 2));
    assert_eq!(
        (j.engine, j.iodepth, j.end_fsync),
        (Engine::IoUring, 4, true)
    );
    assert!(!pass.precondition);
    let err = parse("name = \"w\"\nprecondition = true\n[[job]]\nname = \"r\"\nrw = \"read\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`precondition`") && err.contains("remove it"),
        "{err}"
    );
}

#[test]
fn duplicate_job_names_are_refused() {
    let err = parse(
        "name = \"w\"\n[[job]]\nname = \"j\"\nrw = \"read\"\n[[job]]\nname = \"j\"\nrw = \"write\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("two jobs are named 'j'"), "{err}");
}

#[test]
fn a_job_named_like_the_group_rows_is_refused() {
    let err = parse("name = \"w\"\n[[job]]\nname = \"all\"\nrw = \"read\"\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "workload 'w', job 'all': the name 'all' is reserved for the rows of all jobs \
         together: rename the job"
    );
    assert_eq!(err.lines().count(), 1);
}
