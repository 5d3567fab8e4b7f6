//! End-to-end tests of `flashbuf engine bench` (issue 15): what it may do to the `--file` path,
//! and how it refuses sizes it cannot serve.
//!
//! * `--file` replaces only a regular file, only with `--force` (and `--keep-file`); a symbolic
//!   link, a FIFO and a device node are refused with a clear error and left as they were; a
//!   run that fails deletes nothing of the user's.
//! * Every huge size is a one-line error and exit code 1, never a panic or an abort.
//! * `--window` outside 0..1, or with no policy that has a window, is refused.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `flashbuf` with `args`, killing it after `limit` (a hang is a failure, not a stuck
/// test run).
fn flashbuf_within(limit: Duration, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flashbuf");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "flashbuf {args:?} did not finish within {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn flashbuf(args: &[&str]) -> Output {
    flashbuf_within(Duration::from_secs(120), args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small, quick workload.
const SMALL: &[&str] = &[
    "engine",
    "bench",
    "-q",
    "--records",
    "2000",
    "--point-queries",
    "200",
    "--point-updates",
    "200",
    "--range-queries",
    "2",
    "--range-updates",
    "2",
    "--range-len",
    "16",
    "-b",
    "64",
    "-p",
    "lru",
    "--log-mb",
    "1",
];

fn small(extra: &[&str]) -> Vec<String> {
    SMALL.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run_small(extra: &[&str]) -> Output {
    let args = small(extra);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // A FIFO opened for writing would block forever: a short limit catches that.
    flashbuf_within(Duration::from_secs(60), &refs)
}

/// A refusal: exit code 1, one error line naming the path and the reason, no panic.
fn assert_refused(o: &Output, path: &Path, reason: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.starts_with("flashbuf: error:") && e.lines().count() == 1, "{e}");
    assert!(e.contains(&path.display().to_string()) && e.contains(reason), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

fn no_scratch_left(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("flashbuf-bench"))
        .collect();
    assert!(left.is_empty(), "scratch files left behind: {left:?}");
}

#[test]
fn a_symbolic_link_is_refused_and_neither_it_nor_its_target_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let link = dir.path().join("db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for extra in [&["--force"][..], &["--force", "--keep-file"], &[]] {
        let mut args = vec!["--file", link.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run_small(&args);
        assert_refused(&o, &link, "symbolic link");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me", "its target is untouched");
    }
    no_scratch_left(dir.path());
}

#[test]
fn a_fifo_is_refused_without_blocking_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("db");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let o = run_small(&["--file", fifo.to_str().unwrap(), "--force", "--keep-file"]);
    assert_refused(&o, &fifo, "a FIFO");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO stays");
    no_scratch_left(dir.path());
}

#[test]
fn a_device_node_is_refused_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let dev = dir.path().join("db");
    // A copy of /dev/null (character device 1:3); creating it needs privileges, and without
    // them the real /dev/null stands in (the refusal comes before anything touches it).
    let made = Command::new("mknod").arg(&dev).args(["c", "1", "3"]).stderr(Stdio::null()).status();
    let dev = if made.map(|s| s.success()).unwrap_or(false) { dev } else { Path::new("/dev/null").to_path_buf() };
    let o = run_small(&["--file", dev.to_str().unwrap(), "--force", "--keep-file"]);
    assert_refused(&o, &dev, "a device");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&dev).unwrap().file_type().is_char_device(), "the device node stays");
    no_scratch_left(dir.path());
}

#[test]
fn a_failed_run_deletes_nothing_of_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::write(&db, b"the user's data").unwrap();
    // MIN needs the future: the run fails after its store was built.
    for extra in [&["--force"][..], &["--force", "--keep-file"]] {
        let mut args = vec!["--file", db.to_str().unwrap(), "-p", "min"];
        args.extend_from_slice(extra);
        let o = run_small(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("future"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&db).unwrap(), b"the user's data", "{extra:?}: the file is untouched");
        no_scratch_left(dir.path());
    }
}

#[test]
fn a_regular_file_is_replaced_only_with_force_and_keep_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::write(&db, b"old").unwrap();
    let path = db.to_str().unwrap();
    // Without --force: refused before any work.
    let o = run_small(&["--file", path, "--keep-file"]);
    assert_refused(&o, &db, "--force");
    assert_eq!(std::fs::read(&db).unwrap(), b"old");
    // Without --keep-file: the run works next to it and leaves it alone.
    let o = run_small(&["--file", path, "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&db).unwrap(), b"old");
    no_scratch_left(dir.path());
    // With both: replaced by the finished database, which opens.
    let o = run_small(&["--file", path, "--force", "--keep-file"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&db).unwrap();
    assert_eq!(&bytes[32..40], b"FLASHBUF", "a flashbuf database");
    no_scratch_left(dir.path());
}

#[test]
fn huge_sizes_are_clear_errors_not_panics() {
    let cases: &[(&[&str], &str)] = &[
        (&["-b", "1000000000"], "memory"),
        (&["--scans", "18446744073709551615"], "more than 2^64"),
        (&["--point-updates", "18446744073709551615"], "more than 2^64"),
        (&["--records", "4294967296"], "memory"),
        (&["--records", "99999999999"], "2^32"),
        (&["--workers", "1000000"], "workers"),
        (&["--range-len", "4294967295"], "range update"),
        (&["--log-mb", "18446744073709551615"], "--log-mb"),
        (&["--page-size", "18446744073709551615"], "page size"),
        (&["--value-size", "18446744073709551615"], "values"),
        (&["--device", "bast", "--log-blocks", "4294967295"], "too large"),
        (&["-b", "1000000000000GB"], "overflow"),
    ];
    for (args, says) in cases {
        let mut all = vec!["engine", "bench", "-q", "-p", "lru"];
        all.extend_from_slice(args);
        let o = flashbuf(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.starts_with("flashbuf: error:") && e.contains(says), "{args:?}: {e}");
        assert!(!e.contains("panicked") && !e.contains("memory allocation"), "{args:?}: {e}");
    }
    // The memory error says how much is needed.
    let e = stderr(&flashbuf(&["engine", "bench", "-q", "-p", "lru", "-b", "1000000000"]));
    assert!(e.contains("TiB") && e.contains("a buffer of 1000000000 pages"), "{e}");
}

#[test]
fn a_window_outside_the_buffer_or_without_a_policy_to_take_it_is_refused() {
    let o = run_small(&["--window", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--window 2") && stderr(&o).contains("between 0 and 1"), "{}", stderr(&o));
    let o = run_small(&["--window", "0.25"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("none of the policies (lru)"), "{}", stderr(&o));
    // Given a policy with a window, the window is applied (and shows in the policy's label).
    let o = run_small(&["--window", "0.25", "-p", "lru,cflru", "--output", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cflru:w=0.25,") && out.lines().any(|l| l.starts_with("lru,")), "{out}");
}
