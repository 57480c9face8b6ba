//! What happens once an I/O has finished, the same for every engine (sync, io_uring,
//! ioctl): an I/O that moved fewer bytes than asked is an error, its latency and bytes go
//! into the [`Recorder`], a read's block is checked (verify), and a write counts toward
//! `fsync = N`. The engines differ only in how they submit: each turns its own failures
//! into errors before [`complete`], times its I/O its own way, and decides *when* an
//! fsync that came due runs ([`fsync`]): at once (sync, ioctl; after a whole packed
//! command) or once the I/O in flight is drained (io_uring).

use super::clone_io::CloneIo;
use super::recorder::Recorder;
use crate::workload::result::Direction;
use anyhow::Result;
use std::time::Instant;

/// One I/O of `bs` bytes that finished without an error.
pub struct Finished<'b> {
    pub direction: Direction,
    pub offset: u64,
    /// The bytes it moved, as the system call returned them; None when the engine gets
    /// no count (ioctl: `MMC_IOC_MULTI_CMD` moves every block or fails), no check.
    pub moved: Option<u64>,
    /// How long it took, as the engine times it.
    pub latency_ns: u64,
    /// When it finished, ns after the measured phase began ([`Recorder::since_start`]);
    /// None during ramp_time: not recorded.
    pub measured_ns: Option<u64>,
    /// Its buffer: for a read, the block it brought in.
    pub block: &'b [u8],
}

/// The completion of `done`: the short-I/O check, the recording, the read check and the
/// write count. `Ok(true)`: the write completed an fsync interval, the engine calls
/// [`fsync`] when it can; a short I/O is the error (nothing recorded).
#[inline]
pub fn complete(io: &mut CloneIo<'_>, rec: &mut Recorder, done: Finished<'_>) -> Result<bool> {
    if let Some(moved) = done.moved {
        if moved != io.bs {
            return Err(io.short_io(done.direction, done.offset, moved));
        }
    }
    if let Some(at_ns) = done.measured_ns {
        rec.record_at(done.direction, io.bs, done.latency_ns, at_ns);
    }
    Ok(match done.direction {
        Direction::Read => {
            io.checker.check(done.block, done.offset, None);
            false
        }
        Direction::Write => io.writer.written_one(),
    })
}

/// fsync the clone's file, inside the write clock: the write direction ends when it
/// returned (`fsync = N` and `end_fsync`).
pub fn fsync(io: &CloneIo<'_>, rec: &mut Recorder) -> Result<()> {
    io.fsync()?;
    rec.extend_end(Direction::Write, Instant::now());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::workload::WorkloadSpec;
    use crate::workload::engine::clone_io::{ReadChecker, Stop, Writer};
    use crate::workload::engine::job::ClonePlan;
    use std::sync::atomic::AtomicBool;

    fn plan(job: &str) -> ClonePlan {
        let w: WorkloadSpec = toml::from_str(&format!("name = \"w\"\n[[job]]\n{job}")).unwrap();
        ClonePlan {
            name: "j".into(),
            job: w.job[0].clone(),
            path: "/dev/null".into(),
            region_start: 0,
            region_blocks: 16,
            phases: Vec::new(),
        }
    }

    fn write(offset: u64, moved: Option<u64>, measured_ns: Option<u64>) -> Finished<'static> {
        Finished {
            direction: Direction::Write,
            offset,
            moved,
            latency_ns: 1000,
            measured_ns,
            block: &[],
        }
    }

    /// `fsync = 3`: every third completed write is due; a short one is the error, not
    /// recorded and not counted; one in the ramp is counted, not recorded; an engine
    /// without a byte count (None) is never short.
    #[test]
    fn short_io_recording_and_fsync_cadence() {
        let p = plan("name = \"j\"\nrw = \"write\"\nbs = \"4k\"\nsize = \"64k\"\nfsync = 3\n");
        let (user, sibling) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut io = CloneIo {
            name: &p.name,
            file: std::fs::File::open("/dev/null").unwrap(),
            bs: 4096,
            path: &p.path,
            writer: Writer::new(&p, 1),
            checker: ReadChecker::default(),
            stop: Stop {
                user: &user,
                sibling_failed: &sibling,
            },
            deadline: None,
            buffered: false,
        };
        let mut rec = Recorder::new(Instant::now());
        let mut due = Vec::new();
        for (i, (moved, at)) in [
            (Some(4096), Some(10)),
            (None, Some(20)),
            (Some(4096), None),
            (Some(100), Some(30)),
            (Some(4096), Some(40)),
            (None, Some(50)),
        ]
        .into_iter()
        .enumerate()
        {
            match complete(&mut io, &mut rec, write(i as u64 * 4096, moved, at)) {
                Ok(d) => due.push(d),
                Err(e) => assert!(
                    e.to_string().contains("came back short: 100 of 4096 bytes"),
                    "{e}"
                ),
            }
        }
        assert_eq!(due, [false, false, true, false, false]);
        assert_eq!((rec.write.ops, rec.write.bytes), (4, 4 * 4096));
        assert_eq!(rec.write.end_ns, 50);
        assert_eq!(rec.read.ops, 0);
    }
}
