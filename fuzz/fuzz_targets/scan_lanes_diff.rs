#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::scan.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::scan::scan_lanes_diff(data));
