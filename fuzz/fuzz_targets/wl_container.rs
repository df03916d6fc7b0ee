#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::wl.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::wl::wl_container(data));
