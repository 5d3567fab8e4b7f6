//! Decoding and generation throughput (filled in below).
fn main() {}
