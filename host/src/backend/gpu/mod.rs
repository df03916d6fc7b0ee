//! The Vulkan backend: one device, its compute queue, allocators, a pipeline
//! cache, buffer helpers and a dispatch recorder with timestamp queries.
//!
//! Every algorithm's GPU driver (DWT, BPC-PaCo, CAVLC, VLE) is written on top
//! of [`Gpu`]: upload inputs, [`Gpu::run`] a list of [`Dispatch`]es recorded
//! into one command buffer, download outputs.

mod buffers;
mod device;
mod dispatch;
mod recycle;
internal! {
    pub mod fault;
}
mod scan;
pub(crate) mod transfer;
mod warm;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use vulkano::command_buffer::allocator::StandardCommandBufferAllocator;
use vulkano::descriptor_set::allocator::StandardDescriptorSetAllocator;
use vulkano::device::{Device, Queue};
use vulkano::instance::debug::DebugUtilsMessenger;
use vulkano::memory::allocator::StandardMemoryAllocator;
use vulkano::pipeline::cache::{PipelineCache, PipelineCacheCreateInfo};
use vulkano::pipeline::ComputePipeline;

pub use device::{GpuInfo, DEVICE_ENV, VALIDATION_ENV};

/// A pipeline's shader name and 32-bit specialization constants (`(id, value)`, sorted).
type PipelineKey = (&'static str, Vec<(u32, u32)>);

/// One device of [`Gpu::list`]: `(index, name, device type)`.
pub type ListedDevice = (usize, String, String);
pub use dispatch::{Dispatch, Timing};
pub use scan::{ScanScratch, SCAN_WORKGROUP_SIZE};
pub use transfer::{GpuCounts, KernelTally, STAGING_CHUNK};

/// Errors of the Vulkan backend.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The Vulkan loader or an ICD is missing.
    #[error(
        "Vulkan is not available ({0}); install a Vulkan driver (e.g. `apt-get install mesa-vulkan-drivers` for the lavapipe software device)"
    )]
    NoVulkan(String),
    /// Vulkan works but offers no compute-capable device of version >= 1.1.
    #[error("no Vulkan 1.1 compute device found")]
    NoDevice,
    /// `WAVELANE_DEVICE` matched nothing.
    #[error("WAVELANE_DEVICE={selector:?} matches no device; available: {available}")]
    DeviceNotFound {
        /// The selector given.
        selector: String,
        /// The devices there are.
        available: String,
    },
    /// Logical device creation failed.
    #[error("cannot create the Vulkan device: {0}")]
    DeviceCreation(String),
    /// Creating a shader module or pipeline failed.
    #[error("cannot create the compute pipeline for shader `{shader}`: {detail}")]
    Pipeline {
        /// Shader name.
        shader: &'static str,
        /// Driver or validation message.
        detail: String,
    },
    /// A buffer could not be allocated.
    #[error("GPU buffer allocation of {bytes} bytes failed: {detail}")]
    Allocation {
        /// Requested size.
        bytes: u64,
        /// Driver message.
        detail: String,
    },
    /// Recording, submitting or waiting for commands failed.
    #[error("GPU command failed: {0}")]
    Command(String),
    /// The validation layer reported errors (with `WAVELANE_VK_VALIDATION=1`).
    #[error("the Vulkan validation layer reported {count} error(s), the first: {first}")]
    Validation {
        /// Errors reported since the process started.
        count: usize,
        /// The first one's message.
        first: String,
    },
    /// A dispatch asked for more than the device allows.
    #[error("GPU limit exceeded: {0}")]
    Limit(String),
}

/// Joins an error and its sources into one line: vulkano's `Display` of a
/// validation error alone only says "a validation error occurred".
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A Vulkan device ready for wavelane's compute shaders.
pub struct Gpu {
    device: Arc<Device>,
    queue: Arc<Queue>,
    memory: Arc<StandardMemoryAllocator>,
    command_buffers: Arc<StandardCommandBufferAllocator>,
    descriptor_sets: Arc<StandardDescriptorSetAllocator>,
    pipeline_cache: Arc<PipelineCache>,
    /// Pipelines by shader name and specialization constants.
    pipelines: Mutex<HashMap<PipelineKey, Arc<ComputePipeline>>>,
    info: GpuInfo,
    /// Benchmarks' clock warm-up ([`Gpu::set_clock_warm_up`]).
    warm: warm::ClockWarmUp,
    /// Staging chunks reused by every upload and download.
    staging: transfer::StagingPool,
    /// Device-local buffers reused by later calls ([`recycle`]).
    recycled: Mutex<recycle::Recycler>,
    /// Bytes moved and dispatches run ([`Gpu::counts`]).
    counters: transfer::Counters,
    /// Keeps the validation messenger alive while the device is.
    _messenger: Option<DebugUtilsMessenger>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

/// Bytes of device-local buffers a device keeps for reuse: a quarter of
/// its largest device-local heap, enough for every buffer of an 8K
/// frame's encode several times over on a discrete card; on a CPU device
/// (lavapipe, whose "device" memory is the host's) at most 512 MiB.
fn recycle_limit(physical: &vulkano::device::physical::PhysicalDevice) -> u64 {
    use vulkano::device::physical::PhysicalDeviceType;
    use vulkano::memory::MemoryHeapFlags;
    let heaps = &physical.memory_properties().memory_heaps;
    let largest = (heaps.iter())
        .filter(|h| h.flags.intersects(MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .max()
        .unwrap_or(0);
    match physical.properties().device_type {
        PhysicalDeviceType::Cpu => (largest / 8).min(512 << 20),
        _ => largest / 4,
    }
}

static SHARED: OnceLock<Result<Arc<Gpu>, String>> = OnceLock::new();

impl Gpu {
    /// Opens the device chosen by `WAVELANE_DEVICE` or, without it, the
    /// first discrete GPU, else integrated, virtual, then CPU (lavapipe).
    pub fn new() -> Result<Arc<Gpu>, GpuError> {
        Gpu::open_selected(std::env::var(DEVICE_ENV).ok().as_deref())
    }

    /// Opens device `index` of [`Gpu::list`], whatever `WAVELANE_DEVICE`
    /// says: a device of its own, apart from [`Gpu::shared`], with its own
    /// queue, pipelines and counters (batches on several devices,
    /// `wavelane encode --devices`).
    pub fn open(index: usize) -> Result<Arc<Gpu>, GpuError> {
        Gpu::open_selected(Some(&index.to_string()))
    }

    /// Opens the device `selector` (an index or a name substring) picks,
    /// or the preferred one without it ([`device::pick`]).
    fn open_selected(selector: Option<&str>) -> Result<Arc<Gpu>, GpuError> {
        let (instance, messenger) = device::create_instance()?;
        let candidates = device::compute_devices(&instance)?;
        let (index, physical, family) = device::pick(candidates, selector)?;
        let (device, queue, features) = device::create_device(&physical, family)?;
        let info = device::describe(index, &physical, &features);
        let recycled = Mutex::new(recycle::Recycler::new(recycle_limit(&physical)));
        // SAFETY: no initial data is passed, so there is nothing the driver
        // could misinterpret; the cache starts empty.
        let pipeline_cache =
            unsafe { PipelineCache::new(device.clone(), PipelineCacheCreateInfo::default()) }
                .map_err(|e| GpuError::DeviceCreation(error_chain(&e)))?;
        Ok(Arc::new(Gpu {
            memory: Arc::new(StandardMemoryAllocator::new_default(device.clone())),
            command_buffers: Arc::new(StandardCommandBufferAllocator::new(
                device.clone(),
                Default::default(),
            )),
            descriptor_sets: Arc::new(StandardDescriptorSetAllocator::new(
                device.clone(),
                Default::default(),
            )),
            device,
            queue,
            pipeline_cache,
            pipelines: Mutex::new(HashMap::new()),
            info,
            warm: Default::default(),
            staging: Default::default(),
            recycled,
            counters: Default::default(),
            _messenger: messenger,
        }))
    }

    /// One device shared by the whole process (tests, CLI), opened on first use.
    pub fn shared() -> Result<Arc<Gpu>, GpuError> {
        SHARED
            .get_or_init(|| Gpu::new().map_err(|e| e.to_string()))
            .clone()
            .map_err(GpuError::Command)
    }

    /// Lists every Vulkan device with compute support as `(index, name, type)`,
    /// and the index [`Gpu::new`] would pick.
    pub fn list() -> Result<(Vec<ListedDevice>, usize), GpuError> {
        let (instance, _messenger) = device::create_instance()?;
        let candidates = device::compute_devices(&instance)?;
        let listed = candidates
            .iter()
            .map(|(i, pd, _)| {
                let p = pd.properties();
                (*i, p.device_name.clone(), format!("{:?}", p.device_type))
            })
            .collect();
        let selector = std::env::var(DEVICE_ENV).ok();
        let (picked, _, _) = device::pick(candidates, selector.as_deref())?;
        Ok((listed, picked))
    }

    /// Facts about the device.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// The vulkano device, for drivers that need more than these helpers.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The compute queue.
    pub fn queue(&self) -> &Arc<Queue> {
        &self.queue
    }
}
