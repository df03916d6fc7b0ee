#![no_main]
// Body and properties: wavelane_tests::fuzz_bodies::gpu_diff. Needs a Vulkan
// device (a GPU, or lavapipe with VK_ICD_FILENAMES set).
libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelane_tests::fuzz_bodies::gpu_diff::gpu_diff(data));
