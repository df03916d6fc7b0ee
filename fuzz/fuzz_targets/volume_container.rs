#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::volume.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::volume::volume_container(data));
