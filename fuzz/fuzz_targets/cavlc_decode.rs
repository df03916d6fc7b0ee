#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::cavlc.
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::cavlc::cavlc_decode(data));
