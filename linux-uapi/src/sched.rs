//! The calling thread's scheduling policy: raise it to `SCHED_FIFO` for a timing
//! measurement and put back what it was (`sched_setscheduler(2)`, `sched_getscheduler(2)`,
//! `sched_getparam(2)`; pid 0 is the calling thread). Setting a realtime policy needs
//! CAP_SYS_NICE (or an RLIMIT_RTPRIO allowance): without it the kernel answers EPERM,
//! which the caller reports and measures on.

extern crate std;

use std::io;

/// A scheduling policy and its static priority, as `sched_getscheduler` and
/// `sched_getparam` report them for the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub policy: i32,
    pub priority: i32,
}

impl Policy {
    /// `SCHED_FIFO`, `SCHED_OTHER`, ... as `chrt` names them.
    pub fn name(&self) -> &'static str {
        match self.policy {
            libc::SCHED_OTHER => "SCHED_OTHER",
            libc::SCHED_FIFO => "SCHED_FIFO",
            libc::SCHED_RR => "SCHED_RR",
            libc::SCHED_BATCH => "SCHED_BATCH",
            libc::SCHED_IDLE => "SCHED_IDLE",
            _ => "unknown policy",
        }
    }
}

/// The calling thread's policy and priority.
pub fn current() -> io::Result<Policy> {
    // SAFETY: sched_getscheduler takes a pid by value (0: the calling thread) and
    // touches no memory of ours.
    let policy = unsafe { libc::sched_getscheduler(0) };
    if policy < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid, writable sched_param that lives across the call; the
    // kernel writes one sched_param into it and keeps no reference.
    if unsafe { libc::sched_getparam(0, &mut param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Policy {
        policy,
        priority: param.sched_priority,
    })
}

/// Set the calling thread's policy and priority.
pub fn set(p: Policy) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: p.priority,
    };
    // SAFETY: `param` is a valid sched_param that lives across the call; the kernel only
    // reads it.
    if unsafe { libc::sched_setscheduler(0, p.policy, &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raise the calling thread to `SCHED_FIFO` at `priority`; returns the policy it had, to
/// [`set`] back when done.
pub fn set_fifo(priority: i32) -> io::Result<Policy> {
    let before = current()?;
    set(Policy {
        policy: libc::SCHED_FIFO,
        priority,
    })?;
    Ok(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_policy_reads_and_sets_back() {
        let now = current().expect("sched_getscheduler");
        assert!(!now.name().is_empty());
        set(now).expect("setting the policy the thread has is always allowed");
        assert_eq!(current().unwrap(), now);
    }
}
