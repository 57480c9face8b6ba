//! The sync engine: one pread/pwrite at a time per job clone (fio's `psync`).

use super::buffer::fill_pattern;
use super::clone_io::CloneIo;
use super::measure::Recorder;
use super::offsets::OffsetGen;
use super::result::Direction;
use super::spec::Pattern;
use crate::aligned::AlignedBuf;
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
        let bs = io.bs;
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
            let n = result.map_err(|e| io.io_error(dir, offset, e))? as u64;
            if n != bs {
                return Err(io.short_io(dir, offset, n));
            }
            rec.record(dir, bs, (done - started).as_nanos() as u64, done);
            match dir {
                Direction::Read => io.checker.check(self.read_buf.as_slice(), offset, None),
                Direction::Write => {
                    if io.writer.written_one() {
                        io.fsync()?;
                        rec.extend_end(Direction::Write, Instant::now());
                    }
                }
            }
            if let Some(deadline) = io.deadline {
                if done >= deadline {
                    break;
                }
            }
        }
        Ok(())
    }
}
