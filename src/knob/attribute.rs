//! Attribute knobs: a sysfs or debugfs file that takes a value when written and reports
//! it when read (`/sys/block/mmcblk0/queue/scheduler`, `num_wr_reqs_to_start_packing`).

use super::{shell_quote, Knob, Value};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct AttributeKnob {
    name: String,
    path: PathBuf,
    /// Allowed values; empty means any.
    values: Vec<String>,
    /// Words users may type for a value (`on` -> `1`).
    aliases: Vec<(String, String)>,
    original: Option<Value>,
}

impl AttributeKnob {
    pub fn new(name: &str, path: impl Into<PathBuf>, values: Vec<String>) -> Self {
        AttributeKnob {
            name: name.to_string(),
            path: path.into(),
            values,
            aliases: Vec::new(),
            original: None,
        }
    }

    pub fn with_aliases(mut self, aliases: &[(&str, &str)]) -> Self {
        self.aliases = aliases
            .iter()
            .map(|(a, v)| (a.to_string(), v.to_string()))
            .collect();
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Read an attribute as the kernel prints it, trimmed. For selection lists such as
/// `none [mq-deadline] kyber` the selected (bracketed) entry is the value.
pub fn read_attribute(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "reading {}: check the path exists on this kernel (debugfs mounted at \
             /sys/kernel/debug? running as root?)",
            path.display()
        )
    })?;
    Ok(selected_value(&text))
}

fn selected_value(text: &str) -> String {
    let trimmed = text.trim();
    if let (Some(open), Some(close)) = (trimmed.find('['), trimmed.find(']')) {
        if open < close && trimmed.contains(' ') {
            return trimmed[open + 1..close].to_string();
        }
    }
    trimmed.to_string()
}

/// Write a value to an attribute in one write(2), as `echo value > path` does.
pub fn write_attribute(path: &Path, value: &str) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .with_context(|| {
            format!(
                "opening {} for writing: run as root, and check the attribute is writable on \
                 this kernel",
                path.display()
            )
        })?;
    file.write_all(format!("{value}\n").as_bytes())
        .with_context(|| format!("writing '{value}' to {}", path.display()))
}

impl Knob for AttributeKnob {
    fn name(&self) -> &str {
        &self.name
    }

    fn normalize(&self, value: &str) -> Result<Value> {
        let mut value = value.trim().to_string();
        if let Some((_, v)) = self.aliases.iter().find(|(a, _)| *a == value) {
            value = v.clone();
        }
        if !self.values.is_empty() && !self.values.contains(&value) {
            bail!(
                "knob {}: '{value}' is not one of its values ({})",
                self.name,
                self.values.join(", ")
            );
        }
        Ok(Value::canonical(value))
    }

    fn read(&self) -> Result<String> {
        read_attribute(&self.path)
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
        write_attribute(&self.path, value.as_str()).with_context(|| format!("knob {}", self.name))
    }

    fn restore(&mut self) -> Result<()> {
        if let Some(original) = self.original.clone() {
            self.apply(&original)?;
            self.verify(&original)?;
        }
        Ok(())
    }

    fn restore_commands(&self) -> Vec<String> {
        match &self.original {
            Some(original) => vec![format!(
                "echo {} > {}",
                shell_quote(original.as_str()),
                shell_quote(&self.path.to_string_lossy())
            )],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_lists_report_the_selected_entry() {
        assert_eq!(selected_value("none [mq-deadline] kyber\n"), "mq-deadline");
        assert_eq!(selected_value("17\n"), "17");
        assert_eq!(selected_value("[x]"), "[x]");
    }

    #[test]
    fn snapshot_apply_verify_restore() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("num_wr_reqs_to_start_packing");
        std::fs::write(&path, "17\n").unwrap();
        let mut knob = AttributeKnob::new("packing-threshold", &path, vec![]);
        knob.snapshot().unwrap();
        knob.apply(&Value::canonical("5")).unwrap();
        knob.verify(&Value::canonical("5")).unwrap();
        assert!(knob
            .verify(&Value::canonical("6"))
            .unwrap_err()
            .to_string()
            .contains("reports '5'"));
        assert_eq!(knob.original().unwrap(), "17");
        knob.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "17\n");
        assert_eq!(
            knob.restore_commands(),
            vec![format!("echo 17 > {}", path.display())]
        );
    }

    #[test]
    fn values_are_checked_and_missing_files_named() {
        let knob = AttributeKnob::new("sched", "/nonexistent/x", vec!["none".into()]);
        assert!(knob
            .normalize("kyber")
            .unwrap_err()
            .to_string()
            .contains("none"));
        let err = format!("{:#}", knob.read().unwrap_err());
        assert!(err.contains("/nonexistent/x"), "{err}");
    }
}
