#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::h264.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::h264::h264_parse(data));
