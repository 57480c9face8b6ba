//! A child process whose stderr the test reads line by line as it comes, so that a test
//! acts on what the child says it did (`run 2/8 ...`, `mmcab: got SIGINT`) instead of
//! sleeping and hoping it is there. Every wait has a generous limit, only so that a
//! child that never says it fails the test instead of hanging it.
//!
//! ```ignore
//! use crate::common::watch::Watched;
//! let mut child = Watched::spawn(Command::new(MMCAB).args([...]));
//! child.wait_for("the second run done", |l| l.starts_with("run 2/"));
//! child.signal(SIGTERM);
//! let (status, stderr) = child.finish();
//! ```

use std::io::BufRead;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a child may take to say what a test waits for, or to exit: far beyond what
/// any of them needs on a loaded machine, only a guard against a hang.
pub const LIMIT: Duration = Duration::from_secs(300);

pub struct Watched {
    /// None once [`Watched::finish`] has taken it.
    child: Option<Child>,
    /// Each line of stderr as it comes; closed at the end of stderr.
    lines: Receiver<String>,
    /// Every line so far, for the failure messages and the caller.
    seen: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watched {
    /// Starts `command` with its stderr read by the test (stdout goes where `command`
    /// sends it).
    pub fn spawn(command: &mut Command) -> Watched {
        let mut child = command
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
        let stderr = child.stderr.take().expect("stderr piped");
        let (send, lines) = std::sync::mpsc::channel();
        let seen = Arc::new(Mutex::new(String::new()));
        let all = seen.clone();
        let reader = std::thread::spawn(move || {
            let mut stderr = std::io::BufReader::new(stderr);
            let mut line = Vec::new();
            while stderr.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                let text = String::from_utf8_lossy(&line).into_owned();
                all.lock().unwrap().push_str(&text);
                // The test may have stopped listening: the line is in `seen` anyway.
                let _ = send.send(text.trim_end_matches('\n').to_string());
                line.clear();
            }
        });
        Watched {
            child: Some(child),
            lines,
            seen,
            reader: Some(reader),
        }
    }

    pub fn pid(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(self.child().id() as i32)
    }

    fn child(&self) -> &Child {
        self.child.as_ref().expect("not finished")
    }

    /// stderr so far.
    pub fn stderr(&self) -> String {
        self.seen.lock().unwrap().clone()
    }

    /// Returns the first line from here on that `matches`; fails the test when stderr
    /// ends (the child exited) or [`LIMIT`] passes first. `what` names the line.
    pub fn wait_for(&mut self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if matches(&line) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no line of {what} in {} s; stderr:\n{}",
                        LIMIT.as_secs(),
                        self.stderr()
                    );
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "stderr ended before a line of {what}; stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    /// Sends `signal` to the child.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(self.pid(), signal)
            .unwrap_or_else(|e| panic!("kill -{signal} {}: {e}", self.pid()));
    }

    /// Waits for the child to exit (failing the test, and killing it, if it has not
    /// within [`LIMIT`]): its status and all of its stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let pid = self.pid();
        let mut child = self.child.take().expect("not finished");
        let (send, exited) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _ = send.send(child.wait());
        });
        let status = match exited.recv_timeout(LIMIT) {
            Ok(status) => status.expect("wait for the child"),
            Err(_) => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = waiter.join();
                panic!(
                    "still running after {} s, killed; stderr:\n{}",
                    LIMIT.as_secs(),
                    self.stderr()
                );
            }
        };
        let _ = waiter.join();
        if let Some(reader) = self.reader.take() {
            reader.join().expect("stderr reader");
        }
        (status, self.stderr())
    }
}

/// A test that fails before [`Watched::finish`] leaves no child running.
impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A FIFO that a child's shell command waits on (`read go < GATE`) until the test
/// [opens](Gate::open) it, after something it waits for: the command then goes on at a
/// point the test chose, with no sleep on either side.
pub struct Gate {
    pub path: std::path::PathBuf,
    /// The test's end, held open for reading and writing: opening it does not wait for
    /// the command's shell, and the line stays until the shell reads it.
    open: Option<std::fs::File>,
}

impl Gate {
    /// The FIFO `gate` in `dir`.
    pub fn new(dir: &std::path::Path) -> Gate {
        let path = dir.join("gate");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU)
            .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
        Gate { path, open: None }
    }

    /// Lets the waiting command through (or the next one to come, whenever it comes).
    pub fn open(&mut self) {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
        std::io::Write::write_all(&mut file, b"go\n").expect("write to the gate");
        self.open = Some(file);
    }
}
