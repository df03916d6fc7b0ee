//! `shader-stats FILE.spv...`: creates each SPIR-V compute shader's pipeline
//! with `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR` and prints what
//! `vkGetPipelineExecutableStatisticsKHR` reports (NVIDIA: register count,
//! shared memory size, binary size). Registers and shared memory per
//! workgroup decide how many workgroups an SM holds, which decided the
//! speed of the BPC-PaCo and VLE shaders (docs/history/bpc-paco.md,
//! docs/history/vle.md).
//!
//! The pipeline layout is generic: set 0 with 12 storage-buffer bindings
//! and 128 bytes of push constants, a superset of what wavelane's shaders
//! declare. Uses the first discrete GPU, else the first device.

use ash::vk;
use std::ffi::CStr;
use std::process::ExitCode;

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: shader-stats FILE.spv...");
        return ExitCode::from(2);
    }
    match run(&files) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shader-stats: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(files: &[String]) -> Result<(), String> {
    // SAFETY: every Vulkan call below gets valid handles created here and
    // create-info structures that outlive the call; objects are destroyed
    // before their parents.
    unsafe {
        let entry = ash::Entry::load().map_err(|e| format!("no Vulkan loader: {e}"))?;
        let app = vk::ApplicationInfo::default().api_version(vk::make_api_version(0, 1, 3, 0));
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
            .map_err(|e| format!("vkCreateInstance: {e}"))?;
        let devices = instance
            .enumerate_physical_devices()
            .map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
        let physical = devices
            .iter()
            .copied()
            .find(|&p| {
                instance.get_physical_device_properties(p).device_type
                    == vk::PhysicalDeviceType::DISCRETE_GPU
            })
            .or_else(|| devices.first().copied())
            .ok_or("no Vulkan device")?;
        let props = instance.get_physical_device_properties(physical);
        println!("device: {:?}", CStr::from_ptr(props.device_name.as_ptr()));

        // The features wavelane's shaders use where the device has them.
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&priorities)];
        let extensions = [ash::khr::pipeline_executable_properties::NAME.as_ptr()];
        let mut executable_info =
            vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
                .pipeline_executable_info(true);
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
            .shader_buffer_int64_atomics(true)
            .shader_int8(true)
            .storage_buffer8_bit_access(true)
            .vulkan_memory_model(true);
        let mut v11 =
            vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(true);
        let features = vk::PhysicalDeviceFeatures::default()
            .shader_int64(true)
            .shader_int16(true);
        let device_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .enabled_features(&features)
            .push_next(&mut executable_info)
            .push_next(&mut v12)
            .push_next(&mut v11);
        let device = instance
            .create_device(physical, &device_info, None)
            .map_err(|e| {
                format!("vkCreateDevice (needs VK_KHR_pipeline_executable_properties): {e}")
            })?;
        let executables = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);

        let bindings: Vec<_> = (0..12)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = device
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                None,
            )
            .map_err(|e| format!("vkCreateDescriptorSetLayout: {e}"))?;
        let push = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(128)];
        let set_layouts = [set_layout];
        let layout = device
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&set_layouts)
                    .push_constant_ranges(&push),
                None,
            )
            .map_err(|e| format!("vkCreatePipelineLayout: {e}"))?;

        for file in files {
            let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
            if bytes.len() % 4 != 0 {
                println!("{file}: not SPIR-V (length not a multiple of 4)");
                continue;
            }
            let words: Vec<u32> = bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let module = match device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
            {
                Ok(m) => m,
                Err(e) => {
                    println!("{file}: vkCreateShaderModule: {e}");
                    continue;
                }
            };
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(c"main");
            let create = [vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)
                .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)];
            match device.create_compute_pipelines(vk::PipelineCache::null(), &create, None) {
                Ok(pipelines) => {
                    println!("{file}:{}", statistics(&executables, pipelines[0]));
                    device.destroy_pipeline(pipelines[0], None);
                }
                Err((_, e)) => println!("{file}: vkCreateComputePipelines: {e}"),
            }
            device.destroy_shader_module(module, None);
        }
        device.destroy_pipeline_layout(layout, None);
        device.destroy_descriptor_set_layout(set_layout, None);
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
    Ok(())
}

/// " [name=value]..." of every executable of `pipeline`.
///
/// # Safety
/// `pipeline` must be a live pipeline of the device behind `executables`,
/// created with `CAPTURE_STATISTICS_KHR`.
unsafe fn statistics(
    executables: &ash::khr::pipeline_executable_properties::Device,
    pipeline: vk::Pipeline,
) -> String {
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    let count = executables
        .get_pipeline_executable_properties(&info)
        .map(|p| p.len())
        .unwrap_or(0);
    let mut line = String::new();
    for index in 0..count {
        let executable = vk::PipelineExecutableInfoKHR::default()
            .pipeline(pipeline)
            .executable_index(index as u32);
        let stats = match executables.get_pipeline_executable_statistics(&executable) {
            Ok(s) => s,
            Err(e) => {
                line += &format!(" [statistics: {e}]");
                continue;
            }
        };
        for s in &stats {
            let name = CStr::from_ptr(s.name.as_ptr()).to_string_lossy();
            let value = match s.format {
                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => format!("{}", s.value.b32),
                vk::PipelineExecutableStatisticFormatKHR::INT64 => format!("{}", s.value.i64),
                vk::PipelineExecutableStatisticFormatKHR::UINT64 => format!("{}", s.value.u64),
                _ => format!("{}", s.value.f64),
            };
            line += &format!(" [{name}={value}]");
        }
    }
    line
}
