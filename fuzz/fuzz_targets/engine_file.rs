//! libFuzzer entry of the `engine-file` target (see crates/fuzz).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flashbuf_fuzz::engine_file(data));
