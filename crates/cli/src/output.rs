//! Writing to standard output: a reader that went away (`flashbuf list | head -1`) ends the
//! program quietly, a full disk is a one-line error, never a panic.

use std::io::Write;

use anyhow::Result;

/// Writes `bytes` to standard output and flushes it. A closed pipe exits quietly with success
/// (what was wanted has been read); any other failure is an error naming standard output.
pub fn write(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::anyhow!("cannot write to standard output: {e}")),
    }
}

/// [`write`] for text.
pub fn print(text: &str) -> Result<()> {
    write(text.as_bytes())
}

/// `println!` that ends the program quietly on a closed pipe and returns an error on a full
/// disk (see [`write`]); use inside functions returning `anyhow::Result`.
macro_rules! outln {
    () => {
        $crate::output::print("\n")?
    };
    ($($arg:tt)*) => {
        $crate::output::print(&format!("{}\n", format_args!($($arg)*)))?
    };
}
pub(crate) use outln;
