#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::dwt.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::dwt::dwt_roundtrip(data));
