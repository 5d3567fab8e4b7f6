//! libFuzzer entry of the `columns` target (see crates/fuzz).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flashbuf_fuzz::columns(data));
