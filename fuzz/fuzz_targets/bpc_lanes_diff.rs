#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::bpc.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::bpc::bpc_lanes_diff(data));
