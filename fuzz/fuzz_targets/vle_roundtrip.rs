#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::vle.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::vle::vle_roundtrip(data));
