//! The `flashbuf` command-line tool.
fn main() {}
