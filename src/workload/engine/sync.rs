//! The sync engine: one pread/pwrite at a time per job clone (fio's `psync`).

use super::buffer::fill_pattern;
use super::clone_io::CloneIo;
use super::completion::{complete, fsync, Finished};
use super::offsets::OffsetGen;
use super::recorder::Recorder;
use crate::aligned::AlignedBuf;
use crate::plan::workload::Pattern;
use crate::workload::result::Direction;
use anyhow::Result;
use std::os::unix::fs::FileExt;
use std::time::Instant;

pub struct SyncEngine {
    read_buf: AlignedBuf,
    write_buf: AlignedBuf,
}

impl SyncEngine {
    pub fn new(bs: usize, align: usize, pattern: Pattern, seed: u64) -> SyncEngine {
        let mut write_buf = AlignedBuf::new(bs, align);
        fill_pattern(write_buf.as_mut_slice(), pattern, seed);
        SyncEngine {
            read_buf: AlignedBuf::new(bs, align),
            write_buf,
        }
    }

    /// Issue the generator's I/Os until it is done, the deadline passes or a stop flag is set.
    pub fn run(
        &mut self,
        io: &mut CloneIo<'_>,
        gen: &mut OffsetGen,
        rec: &mut Recorder,
    ) -> Result<()> {
        while let Some((dir, offset)) = gen.next_io() {
            io.stop.check()?;
            if gen.take_wrapped() {
                io.new_pass();
            }
            let (started, result) = match dir {
                Direction::Read => {
                    let t = Instant::now();
                    (t, io.file.read_at(self.read_buf.as_mut_slice(), offset))
                }
                Direction::Write => {
                    io.writer.prepare(self.write_buf.as_mut_slice(), offset);
                    let t = Instant::now();
                    (t, io.file.write_at(self.write_buf.as_slice(), offset))
                }
            };
            let done = Instant::now();
            let moved = result.map_err(|e| io.io_error(dir, offset, e))? as u64;
            let block = match dir {
                Direction::Read => self.read_buf.as_slice(),
                Direction::Write => self.write_buf.as_slice(),
            };
            let finished = Finished {
                direction: dir,
                offset,
                moved: Some(moved),
                latency_ns: (done - started).as_nanos() as u64,
                measured_ns: rec.since_start(done),
                block,
            };
            if complete(io, rec, finished)? {
                fsync(io, rec)?;
            }
            if io.past_deadline(done) {
                break;
            }
        }
        Ok(())
    }
}
