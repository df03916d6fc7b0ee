#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::image.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::image::image_pnm(data));
