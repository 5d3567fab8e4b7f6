//! Files that flashbuf writes for a user: complete or absent, never a replaced special file.
//!
//! Every output of every command goes through [`AtomicFile`]:
//!
//! * **Only regular files are ever replaced**, and only when the user asked (`--force`). A
//!   destination that is a symbolic link, a FIFO, a device, a socket or a directory is refused
//!   with a clear error, `--force` or not: `-o /dev/null --force` must never replace the
//!   machine's `/dev/null` with a regular file.
//! * The content is written to a temporary file beside the destination and renamed over it only
//!   when complete (after `fsync`), so a failed or interrupted run leaves the old file, or none.
//! * Temporary files have a recognisable name, `.NAME.flashbuf-PID-XXXXXX.tmp`, are removed when
//!   the writer is dropped without committing (an error), when the process is interrupted
//!   (Ctrl-C, `SIGTERM`: [`remove_temporaries`] from the CLI's signal handler), and — since
//!   `kill -9` cannot be caught — the next time an output is written beside them, once the
//!   process that made them is gone.
//! * Files are created with the user's umask (`0666 & !umask`), like any other tool's.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files alive in this process (removed on interruption).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes every temporary file this process is writing (a signal handler calls it before the
/// process exits on an interruption). Never blocks: when the list is busy it does nothing.
pub fn remove_temporaries() {
    if let Ok(live) = LIVE.try_lock() {
        for p in live.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// What kind of thing `meta` describes, for messages.
fn kind_name(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_symlink() {
        return "a symbolic link";
    }
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Checks that `dest` may be written: absent, or a regular file and `force` is set. The error
/// says what `dest` is and what to do.
pub fn check_destination(dest: &Path, force: bool) -> Result<(), String> {
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot examine it: {e}")),
        Ok(meta) if meta.file_type().is_file() => {
            if force {
                Ok(())
            } else {
                Err("already exists; use --force to overwrite it".into())
            }
        }
        Ok(meta) => {
            Err(format!("is {}; flashbuf writes only new or regular files (choose another path)", kind_name(&meta)))
        }
    }
}

/// The process's file creation mask (022 when it cannot be read).
pub fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

/// `true` when process `pid` exists.
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: kill with signal 0 only checks that the process exists.
        let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
        rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Removes the temporary files of earlier flashbuf processes for `name` in `dir` whose process
/// is gone (left by `kill -9` or a power cut).
fn remove_stale(dir: &Path, name: &str) {
    let prefix = format!(".{name}.flashbuf-");
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else { continue };
        if !file.ends_with(".tmp") {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| p != std::process::id() && !alive(p)) && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A file being written under a temporary name beside its destination (see the module
/// documentation). Write through [`AtomicFile::file`]; [`AtomicFile::commit`] moves it into
/// place. Dropped without commit, the temporary file is removed.
pub struct AtomicFile {
    tmp: Option<tempfile::NamedTempFile>,
    dest: PathBuf,
    force: bool,
}

impl AtomicFile {
    /// Prepares to write `dest`, checking it first ([`check_destination`]): nothing is created
    /// when it may not be written. The error is a message without the path (callers add it).
    pub fn create(dest: &Path, force: bool) -> Result<Self, String> {
        check_destination(dest, force)?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(format!("directory {} does not exist", dir.display()));
        }
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        remove_stale(dir, &name);
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}.flashbuf-{}-", std::process::id()))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
        LIVE.lock().expect("the list of temporary files").push(tmp.path().to_path_buf());
        Ok(AtomicFile { tmp: Some(tmp), dest: dest.to_path_buf(), force })
    }

    /// The temporary file.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_mut().expect("not committed").as_file_mut()
    }

    /// The destination.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    fn forget(path: &Path) {
        let mut live = LIVE.lock().expect("the list of temporary files");
        live.retain(|p| p != path);
    }

    /// Syncs the content, gives it the user's permissions and renames it over the destination
    /// (checked again just before: it may have changed since [`create`](Self::create)).
    pub fn commit(mut self) -> Result<(), String> {
        let tmp = self.tmp.take().expect("committed once");
        let path = tmp.path().to_path_buf();
        let result = (|| {
            tmp.as_file().sync_all().map_err(|e| format!("cannot write: {e}"))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = 0o666 & !umask();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                    .map_err(|e| format!("cannot set permissions: {e}"))?;
            }
            check_destination(&self.dest, self.force)?;
            let persisted = if self.force { tmp.persist(&self.dest) } else { tmp.persist_noclobber(&self.dest) };
            persisted.map(drop).map_err(|e| format!("cannot move the finished file into place: {}", e.error))
        })();
        Self::forget(&path);
        result
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            Self::forget(tmp.path());
            // NamedTempFile removes the file when it drops.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn replaces_only_regular_files_and_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.csv");
        let mut f = AtomicFile::create(&dest, false).unwrap();
        f.file().write_all(b"a\n").unwrap();
        assert!(!dest.exists(), "visible before commit");
        f.commit().unwrap();
        assert!(AtomicFile::create(&dest, false).err().unwrap().contains("--force"));
        let mut f = AtomicFile::create(&dest, true).unwrap();
        f.file().write_all(b"b\n").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "b\n");
        // A symbolic link is refused, force or not, and its target is untouched.
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&dest, &link).unwrap();
        for force in [false, true] {
            let e = AtomicFile::create(&link, force).err().unwrap();
            assert!(e.contains("symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "b\n");
        // A directory, a FIFO and a device are refused.
        assert!(AtomicFile::create(dir.path(), true).err().unwrap().contains("a directory"));
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(AtomicFile::create(&fifo, true).err().unwrap().contains("a FIFO"));
        assert!(AtomicFile::create(Path::new("/dev/null"), true).err().unwrap().contains("a device"));
        // Nothing was left behind.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    #[test]
    fn permissions_follow_the_umask_and_abandoned_or_stale_temporaries_go() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("t.txt");
        let mut f = AtomicFile::create(&dest, false).unwrap();
        f.file().write_all(b"x").unwrap();
        let tmp_name = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().file_name();
        let tmp_name = tmp_name.to_string_lossy().into_owned();
        assert!(tmp_name.starts_with(".t.txt.flashbuf-") && tmp_name.ends_with(".tmp"), "{tmp_name}");
        drop(f);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let f = AtomicFile::create(&dest, false).unwrap();
        f.commit().unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
        // A temporary of a process that no longer exists is removed by the next writer.
        let stale = dir.path().join(".t.txt.flashbuf-999999999-abcdef.tmp");
        std::fs::write(&stale, "half").unwrap();
        let _f = AtomicFile::create(&dest, true).unwrap();
        assert!(!stale.exists());
    }
}
