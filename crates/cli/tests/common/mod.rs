//! What the end-to-end tests share: running the `flashbuf` binary, with or without standard
//! input, and reading what it printed.
// Each test file uses its own subset of these helpers.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A summary cache directory of this test process's own (`tag` keeps test files apart).
pub fn cache_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("flashbuf-test-cache-{tag}-{}", std::process::id()))
}

/// Runs `flashbuf ARGS` with the summary cache in `cache_dir(tag)`, feeding `input` on standard
/// input when given (from another thread, so that a large input cannot dead-lock with output).
pub fn flashbuf_in(tag: &str, args: &[&str], input: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .env("FLASHBUF_CACHE_DIR", cache_dir(tag))
        .args(args)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flashbuf");
    if let Some(data) = input {
        let mut stdin = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    child.wait_with_output().expect("flashbuf ends")
}

/// Standard output of a run that must have succeeded (its standard error otherwise).
pub fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "flashbuf failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error, whatever the outcome.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
