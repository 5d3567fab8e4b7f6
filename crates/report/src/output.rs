//! Output files that appear only when complete, and never overwrite without `force`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// An output file could not be written; names the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct OutputError {
    /// The destination.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

/// A file being written under a temporary name next to its destination; [`commit`] renames it
/// into place. Dropped without commit, the temporary file is removed, so a failed run leaves no
/// half-written output behind.
///
/// [`commit`]: OutputFile::commit
pub struct OutputFile {
    dest: PathBuf,
    force: bool,
    tmp: BufWriter<NamedTempFile>,
}

impl OutputFile {
    /// Prepares to write `dest`. Fails at once if `dest` exists and `force` is not set, so no
    /// work is wasted on a run whose result could not be saved.
    pub fn create(dest: &Path, force: bool) -> Result<Self, OutputError> {
        let err = |message: String| OutputError { path: dest.display().to_string(), message };
        if dest.exists() && !force {
            return Err(err("already exists; use --force to overwrite it".into()));
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(err(format!("directory {} does not exist", dir.display())));
        }
        let tmp = tempfile::Builder::new()
            .prefix(".flashbuf-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| err(format!("cannot create a temporary file in {}: {e}", dir.display())))?;
        Ok(OutputFile { dest: dest.to_path_buf(), force, tmp: BufWriter::new(tmp) })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let dest = self.dest;
        let err = |message: String| OutputError { path: dest.display().to_string(), message };
        let tmp = self.tmp.into_inner().map_err(|e| err(format!("write failed: {}", e.error())))?;
        tmp.as_file().sync_all().map_err(|e| err(format!("sync failed: {e}")))?;
        let result = if self.force {
            tmp.persist(&dest).map(|_: File| ())
        } else {
            tmp.persist_noclobber(&dest).map(|_: File| ())
        };
        result.map_err(|e| err(format!("cannot move the finished file into place: {}", e.error)))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_on_commit_and_respects_force() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.csv");
        let mut f = OutputFile::create(&dest, false).unwrap();
        f.write_all(b"a,b\n").unwrap();
        assert!(!dest.exists(), "visible before commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "a,b\n");

        let e = OutputFile::create(&dest, false).err().unwrap().to_string();
        assert!(e.contains("already exists") && e.contains("--force") && e.contains("out.csv"), "{e}");

        let mut f = OutputFile::create(&dest, true).unwrap();
        f.write_all(b"new\n").unwrap();
        drop(f); // abandoned: the old file stays, no temporary is left
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "a,b\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        let mut f = OutputFile::create(&dest, true).unwrap();
        f.write_all(b"new\n").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new\n");
    }
}
