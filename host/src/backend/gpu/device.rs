//! Vulkan instance and device selection, and what we learn about the device.

use std::sync::Arc;

use std::sync::atomic::{AtomicUsize, Ordering};
use vulkano::device::physical::{PhysicalDevice, PhysicalDeviceType};
use vulkano::device::{
    Device, DeviceCreateInfo, DeviceExtensions, DeviceFeatures, Queue, QueueCreateInfo, QueueFlags,
};

use vulkano::instance::debug::{
    DebugUtilsMessageSeverity, DebugUtilsMessageType, DebugUtilsMessenger,
    DebugUtilsMessengerCallback, DebugUtilsMessengerCreateInfo,
};
use vulkano::instance::{Instance, InstanceCreateInfo, InstanceExtensions};
use vulkano::{Version, VulkanLibrary};

use super::GpuError;

pub use crate::backend::DEVICE_ENV;

/// What wavelane knows about the device it runs on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GpuInfo {
    /// Index among the physical devices of the instance.
    pub index: usize,
    /// Device name as the driver reports it.
    pub name: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: String,
    /// Driver name and version string, where reported.
    pub driver: String,
    /// Vulkan API version of the device.
    pub api_version: String,
    /// Subgroup size (lanes per subgroup): 32 on NVIDIA, 4/8/16 on lavapipe.
    pub subgroup_size: u32,
    /// Names of the supported subgroup operation classes (basic, vote, ballot, ...).
    pub subgroup_operations: Vec<String>,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// Largest storage buffer binding in bytes.
    pub max_storage_buffer_range: u32,
    /// Largest workgroup count in x.
    pub max_workgroup_count_x: u32,
    /// Shared (workgroup) memory in bytes.
    pub max_shared_memory: u32,
    /// 64-bit integer atomics on storage buffers are available and enabled.
    pub int64_atomics: bool,
}

/// Environment variable that turns on the Khronos validation layer: every
/// error it reports makes the next [`super::Gpu::run`] fail.
pub const VALIDATION_ENV: &str = "WAVELANE_VK_VALIDATION";

/// Validation errors seen since the process started.
static VALIDATION_ERRORS: AtomicUsize = AtomicUsize::new(0);

/// The first validation error's message: the library prints nothing, so the
/// error that fails the next run carries it ([`GpuError::Validation`]).
static FIRST_VALIDATION_ERROR: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// `Err` once the validation layer has reported an error.
pub(super) fn validation_result() -> Result<(), GpuError> {
    match VALIDATION_ERRORS.load(Ordering::SeqCst) {
        0 => Ok(()),
        count => Err(GpuError::Validation {
            count,
            first: FIRST_VALIDATION_ERROR.get().cloned().unwrap_or_default(),
        }),
    }
}

const VALIDATION_LAYER: &str = "VK_LAYER_KHRONOS_validation";

/// Loads the Vulkan library and creates an instance, with the validation
/// layer and a messenger that counts its errors when `WAVELANE_VK_VALIDATION=1`.
pub(super) fn create_instance() -> Result<(Arc<Instance>, Option<DebugUtilsMessenger>), GpuError> {
    let library = VulkanLibrary::new().map_err(|e| GpuError::NoVulkan(e.to_string()))?;
    let validate = std::env::var(VALIDATION_ENV).is_ok_and(|v| v == "1");
    let mut info = InstanceCreateInfo {
        application_name: Some("wavelane".into()),
        max_api_version: Some(Version::V1_3),
        ..Default::default()
    };
    if validate {
        let have_layer = library
            .layer_properties()
            .map_err(|e| GpuError::NoVulkan(super::error_chain(&e)))?
            .any(|l| l.name() == VALIDATION_LAYER);
        if !have_layer {
            return Err(GpuError::NoVulkan(format!(
                "{VALIDATION_ENV}=1 but {VALIDATION_LAYER} is not installed (apt-get install vulkan-validationlayers)"
            )));
        }
        info.enabled_layers = vec![VALIDATION_LAYER.into()];
        info.enabled_extensions = InstanceExtensions {
            ext_debug_utils: true,
            ..InstanceExtensions::empty()
        };
    }
    let instance =
        Instance::new(library, info).map_err(|e| GpuError::NoVulkan(super::error_chain(&e)))?;
    let messenger = if validate {
        // SAFETY: the callback only records the message (an atomic counter,
        // a once-cell, the `log` facade); it makes no Vulkan call.
        let callback = unsafe {
            DebugUtilsMessengerCallback::new(|severity, _ty, data| {
                if severity.intersects(DebugUtilsMessageSeverity::ERROR) {
                    VALIDATION_ERRORS.fetch_add(1, Ordering::SeqCst);
                    let _ = FIRST_VALIDATION_ERROR.set(data.message.to_string());
                    log::error!("vulkan validation error: {}", data.message);
                } else if severity.intersects(DebugUtilsMessageSeverity::WARNING) {
                    log::warn!("vulkan validation warning: {}", data.message);
                }
            })
        };
        Some(
            DebugUtilsMessenger::new(
                instance.clone(),
                DebugUtilsMessengerCreateInfo {
                    message_severity: DebugUtilsMessageSeverity::ERROR
                        | DebugUtilsMessageSeverity::WARNING,
                    message_type: DebugUtilsMessageType::GENERAL
                        | DebugUtilsMessageType::VALIDATION
                        | DebugUtilsMessageType::PERFORMANCE,
                    ..DebugUtilsMessengerCreateInfo::user_callback(callback)
                },
            )
            .map_err(|e| GpuError::NoVulkan(super::error_chain(&e)))?,
        )
    } else {
        None
    };
    Ok((instance, messenger))
}

/// Compute-capable physical devices with subgroup support (Vulkan >= 1.1), in
/// enumeration order, each with its compute queue family.
pub(super) fn compute_devices(
    instance: &Arc<Instance>,
) -> Result<Vec<(usize, Arc<PhysicalDevice>, u32)>, GpuError> {
    let devices = instance
        .enumerate_physical_devices()
        .map_err(|e| GpuError::NoVulkan(super::error_chain(&e)))?;
    Ok(devices
        .enumerate()
        .filter(|(_, pd)| pd.api_version() >= Version::V1_1)
        .filter_map(|(i, pd)| {
            let family = pd
                .queue_family_properties()
                .iter()
                .position(|q| q.queue_flags.intersects(QueueFlags::COMPUTE))?;
            Some((i, pd, family as u32))
        })
        .collect())
}

fn type_rank(t: PhysicalDeviceType) -> u8 {
    match t {
        PhysicalDeviceType::DiscreteGpu => 0,
        PhysicalDeviceType::IntegratedGpu => 1,
        PhysicalDeviceType::VirtualGpu => 2,
        PhysicalDeviceType::Cpu => 3,
        _ => 4,
    }
}

/// Picks the device: `WAVELANE_DEVICE` if set (index or name substring),
/// otherwise the first discrete GPU, then integrated, virtual, CPU.
pub(super) fn pick(
    candidates: Vec<(usize, Arc<PhysicalDevice>, u32)>,
    selector: Option<&str>,
) -> Result<(usize, Arc<PhysicalDevice>, u32), GpuError> {
    if candidates.is_empty() {
        return Err(GpuError::NoDevice);
    }
    if let Some(sel) = selector.map(str::trim).filter(|s| !s.is_empty()) {
        let names = candidates
            .iter()
            .map(|(i, pd, _)| format!("{i}: {}", pd.properties().device_name))
            .collect::<Vec<_>>()
            .join(", ");
        let found = match sel.parse::<usize>() {
            Ok(idx) => candidates.into_iter().find(|(i, _, _)| *i == idx),
            Err(_) => {
                let needle = sel.to_lowercase();
                candidates
                    .into_iter()
                    .find(|(_, pd, _)| pd.properties().device_name.to_lowercase().contains(&needle))
            }
        };
        return found.ok_or_else(|| GpuError::DeviceNotFound {
            selector: sel.to_owned(),
            available: names,
        });
    }
    Ok(candidates
        .into_iter()
        .min_by_key(|(i, pd, _)| (type_rank(pd.properties().device_type), *i))
        .expect("non-empty"))
}

/// Features wavelane's shaders may use, intersected with what the device has.
fn wanted_features(pd: &PhysicalDevice) -> DeviceFeatures {
    let s = pd.supported_features();
    DeviceFeatures {
        shader_int64: s.shader_int64,
        // The decoder's reduced fixed-point 9/7 gain step (codec stages).
        shader_float64: s.shader_float64,
        shader_int16: s.shader_int16,
        shader_int8: s.shader_int8,
        storage_buffer8_bit_access: s.storage_buffer8_bit_access,
        storage_buffer16_bit_access: s.storage_buffer16_bit_access,
        shader_buffer_int64_atomics: s.shader_buffer_int64_atomics,
        vulkan_memory_model: s.vulkan_memory_model,
        vulkan_memory_model_device_scope: s.vulkan_memory_model_device_scope,
        robust_buffer_access: s.robust_buffer_access,
        subgroup_size_control: s.subgroup_size_control,
        compute_full_subgroups: s.compute_full_subgroups,
        ..DeviceFeatures::empty()
    }
}

/// Creates the logical device and its compute queue.
pub(super) fn create_device(
    pd: &Arc<PhysicalDevice>,
    family: u32,
) -> Result<(Arc<Device>, Arc<Queue>, DeviceFeatures), GpuError> {
    let features = wanted_features(pd);
    // Extensions only matter on 1.1 devices: from 1.2 on these are core.
    let supported = pd.supported_extensions();
    let extensions = DeviceExtensions {
        khr_8bit_storage: supported.khr_8bit_storage && pd.api_version() < Version::V1_2,
        khr_shader_float16_int8: supported.khr_shader_float16_int8
            && pd.api_version() < Version::V1_2,
        khr_shader_atomic_int64: supported.khr_shader_atomic_int64
            && pd.api_version() < Version::V1_2,
        khr_vulkan_memory_model: supported.khr_vulkan_memory_model
            && pd.api_version() < Version::V1_2,
        ext_subgroup_size_control: supported.ext_subgroup_size_control
            && pd.api_version() < Version::V1_3,
        ..DeviceExtensions::empty()
    };
    let (device, mut queues) = Device::new(
        pd.clone(),
        DeviceCreateInfo {
            queue_create_infos: vec![QueueCreateInfo {
                queue_family_index: family,
                ..Default::default()
            }],
            enabled_extensions: extensions,
            enabled_features: features,
            ..Default::default()
        },
    )
    .map_err(|e| GpuError::DeviceCreation(super::error_chain(&e)))?;
    let queue = queues.next().ok_or(GpuError::NoDevice)?;
    Ok((device, queue, features))
}

/// Reads the facts we report and rely on.
pub(super) fn describe(index: usize, pd: &PhysicalDevice, features: &DeviceFeatures) -> GpuInfo {
    let p = pd.properties();
    let ops = p
        .subgroup_supported_operations
        .map(|ops| {
            format!("{ops:?}")
                .split('|')
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    GpuInfo {
        index,
        name: p.device_name.clone(),
        device_type: format!("{:?}", p.device_type),
        driver: format!(
            "{} {}",
            p.driver_name.clone().unwrap_or_default(),
            p.driver_info.clone().unwrap_or_default()
        )
        .trim()
        .to_owned(),
        api_version: pd.api_version().to_string(),
        subgroup_size: p.subgroup_size.unwrap_or(1),
        subgroup_operations: ops,
        timestamp_period_ns: p.timestamp_period,
        max_storage_buffer_range: p.max_storage_buffer_range,
        max_workgroup_count_x: p.max_compute_work_group_count[0],
        max_shared_memory: p.max_compute_shared_memory_size,
        int64_atomics: features.shader_buffer_int64_atomics,
    }
}
