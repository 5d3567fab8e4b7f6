//! libFuzzer entry of the `sweep-config` target (see crates/fuzz).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flashbuf_fuzz::sweep_config(data));
