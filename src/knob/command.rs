//! Command knobs: shell hooks for anything mmcab has no kind for (a vendor tool, a
//! module parameter, a regulator). `{value}` in a command is replaced by the value,
//! shell-quoted.
//!
//! - `read` prints the current value on stdout (its trimmed output is the value);
//! - `apply` sets `{value}`;
//! - `verify` (optional) exits 0 when `{value}` is in effect; default: `read` == value;
//! - `restore` (optional) puts back `{value}` = the snapshot; default: `apply`.

use super::{shell_quote, Knob, Value};
use anyhow::{bail, Context, Result};
use std::process::Command;

#[derive(Debug, Clone)]
pub struct CommandKnob {
    name: String,
    read: String,
    apply: String,
    verify: Option<String>,
    restore: Option<String>,
    original: Option<Value>,
}

/// Run `sh -c COMMAND`; stdout on success, an error with status and stderr otherwise.
pub fn run_shell(knob: &str, what: &str, command: &str) -> Result<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .with_context(|| format!("knob {knob}: starting sh for its {what} command"))?;
    if !output.status.success() {
        bail!(
            "knob {knob}: {what} command `{command}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn with_value(command: &str, value: &str) -> String {
    command.replace("{value}", &shell_quote(value))
}

impl CommandKnob {
    pub fn new(
        name: &str,
        read: &str,
        apply: &str,
        verify: Option<&str>,
        restore: Option<&str>,
    ) -> Self {
        CommandKnob {
            name: name.to_string(),
            read: read.to_string(),
            apply: apply.to_string(),
            verify: verify.map(str::to_string),
            restore: restore.map(str::to_string),
            original: None,
        }
    }

    fn restore_command(&self, original: &str) -> String {
        with_value(self.restore.as_deref().unwrap_or(&self.apply), original)
    }
}

impl Knob for CommandKnob {
    fn name(&self) -> &str {
        &self.name
    }

    fn read(&self) -> Result<String> {
        Ok(run_shell(&self.name, "read", &self.read)?
            .trim()
            .to_string())
    }

    fn snapshot(&mut self) -> Result<()> {
        if self.original.is_none() {
            self.original = Some(Value::canonical(self.read()?));
        }
        Ok(())
    }

    fn original(&self) -> Option<Value> {
        self.original.clone()
    }

    fn adopt(&mut self, saved: &str) -> Result<()> {
        self.original = Some(Value::canonical(saved));
        Ok(())
    }

    fn apply(&mut self, value: &Value) -> Result<()> {
        run_shell(
            &self.name,
            "apply",
            &with_value(&self.apply, value.as_str()),
        )
        .map(|_| ())
    }

    fn verify(&self, value: &Value) -> Result<()> {
        match &self.verify {
            Some(verify) => run_shell(&self.name, "verify", &with_value(verify, value.as_str()))
                .map(|_| ())
                .with_context(|| format!("knob {}: '{value}' is not in effect", self.name)),
            None => {
                let found = self.read()?;
                if value.as_str() != found {
                    bail!(
                        "knob {}: expected '{value}' after applying it, but its read command \
                         printed '{found}'",
                        self.name
                    );
                }
                Ok(())
            }
        }
    }

    fn restore(&mut self) -> Result<()> {
        if let Some(original) = self.original.clone() {
            run_shell(
                &self.name,
                "restore",
                &self.restore_command(original.as_str()),
            )?;
            self.verify(&original)?;
        }
        Ok(())
    }

    fn restore_commands(&self) -> Vec<String> {
        match &self.original {
            Some(original) => vec![self.restore_command(original.as_str())],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_run_with_the_value_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::write(&state, "off\n").unwrap();
        let s = state.display();
        let mut knob = CommandKnob::new(
            "marker",
            &format!("cat {s}"),
            &format!("echo {{value}} > {s}"),
            None,
            None,
        );
        knob.snapshot().unwrap();
        knob.apply(&Value::canonical("on it")).unwrap();
        knob.verify(&Value::canonical("on it")).unwrap();
        assert!(knob.verify(&Value::canonical("on")).is_err());
        knob.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "off\n");
        assert_eq!(knob.restore_commands(), vec![format!("echo off > {s}")]);
    }

    #[test]
    fn failing_hooks_report_command_and_stderr() {
        let mut knob = CommandKnob::new("x", "echo 1", "echo nope >&2; exit 3", None, None);
        let err = knob.apply(&Value::canonical("2")).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("apply"), "{err}");
        let knob = CommandKnob::new("x", "echo 1", "true", Some("test {value} = 1"), None);
        assert!(knob.verify(&Value::canonical("1")).is_ok());
        assert!(knob.verify(&Value::canonical("2")).is_err());
    }
}
