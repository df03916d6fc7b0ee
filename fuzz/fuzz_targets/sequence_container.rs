#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::sequence.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::sequence::sequence_container(data));
