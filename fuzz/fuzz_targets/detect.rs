//! libFuzzer entry of the `detect` target (see crates/fuzz).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flashbuf_fuzz::detect(data));
