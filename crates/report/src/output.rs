//! Output files that appear only when complete, and never overwrite without `force`.

use std::io::{BufWriter, Write};
use std::path::Path;

use flashbuf_trace::output::AtomicFile;

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
/// half-written output behind. Only a regular file is ever replaced, and only with `force`
/// (see [`flashbuf_trace::output`]).
///
/// [`commit`]: OutputFile::commit
pub struct OutputFile {
    tmp: BufWriter<TempHandle>,
}

/// The temporary file's handle, writable, owning the [`AtomicFile`].
struct TempHandle(AtomicFile);

impl Write for TempHandle {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.file().flush()
    }
}

impl OutputFile {
    /// Prepares to write `dest`. Fails at once if `dest` exists and `force` is not set, or if it
    /// is not a regular file, so no work is wasted on a run whose result could not be saved.
    pub fn create(dest: &Path, force: bool) -> Result<Self, OutputError> {
        let file = AtomicFile::create(dest, force)
            .map_err(|message| OutputError { path: dest.display().to_string(), message })?;
        Ok(OutputFile { tmp: BufWriter::new(TempHandle(file)) })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let handle = self.tmp.into_inner().map_err(|e| {
            let message = format!("write failed: {}", e.error());
            OutputError { path: e.into_inner().get_ref().0.dest().display().to_string(), message }
        })?;
        let path = handle.0.dest().display().to_string();
        handle.0.commit().map_err(|message| OutputError { path, message })
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
