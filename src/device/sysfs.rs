//! Reading the kernel's attribute files (sysfs, debugfs, procfs): one value per file,
//! with a trailing newline the caller does not want.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// The content of an attribute file without surrounding whitespace (the kernel ends
/// every value with a newline). The error names the file.
pub fn read_trimmed(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    Ok(std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .trim()
        .to_string())
}

/// Every readable regular file in `dir` (a card's sysfs directory): name -> trimmed
/// content, by name. Subdirectories, symlinks and unreadable files are left out.
pub fn read_attrs(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            read_trimmed(e.path()).ok().map(|text| (name, text))
        })
        .collect()
}

/// The partitions of the disk whose sysfs directory is `disk` (its subdirectories with a
/// `partition` file: `mmcblk0p1` ...), by name.
pub fn partition_dirs(disk: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::fs::read_dir(disk)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("partition").exists())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_value_or_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("size");
        std::fs::write(&path, "524288\n").unwrap();
        assert_eq!(read_trimmed(&path).unwrap(), "524288");
        let err = format!("{:#}", read_trimmed(dir.path().join("nope")).unwrap_err());
        assert!(err.contains("cannot read") && err.contains("nope"), "{err}");
    }

    #[test]
    fn partitions_are_the_subdirectories_with_a_partition_file() {
        let dir = tempfile::tempdir().unwrap();
        for p in ["mmcblk0p2", "mmcblk0p1"] {
            std::fs::create_dir(dir.path().join(p)).unwrap();
            std::fs::write(dir.path().join(p).join("partition"), "1\n").unwrap();
        }
        std::fs::create_dir(dir.path().join("queue")).unwrap();
        let names: Vec<_> = partition_dirs(dir.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["mmcblk0p1", "mmcblk0p2"]);
    }

    #[test]
    fn attrs_are_trimmed_files_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("name"), "QEMU!!\n").unwrap();
        std::fs::create_dir(dir.path().join("power")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("driver")).unwrap();
        let m = read_attrs(dir.path());
        assert_eq!(m.len(), 1);
        assert_eq!(m["name"], "QEMU!!");
    }
}
