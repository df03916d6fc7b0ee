//! Buffer upload/download helpers.
//!
//! Kernel-visible buffers live in device-local memory (what a discrete GPU
//! needs for bandwidth); data crosses through host-visible staging buffers
//! (transfer.rs). On unified-memory devices such as lavapipe that costs one
//! extra memcpy. Vulkan forbids empty buffers, so a request for 0 elements
//! gets 1.

use std::sync::Arc;

use vulkano::buffer::{Buffer, BufferContents, BufferCreateInfo, BufferUsage, Subbuffer};
use vulkano::command_buffer::{
    AutoCommandBufferBuilder, CommandBufferUsage, CopyBufferInfo, PrimaryAutoCommandBuffer,
};
use vulkano::memory::allocator::{AllocationCreateInfo, DeviceLayout, MemoryTypeFilter};

use super::{error_chain, Gpu, GpuError};

/// The alignment of every device-local buffer: that of the widest element
/// a shader reads (`uvec4`).
const ELEMENT_ALIGNMENT: u64 = 16;

fn storage_usage() -> BufferUsage {
    BufferUsage::STORAGE_BUFFER | BufferUsage::TRANSFER_SRC | BufferUsage::TRANSFER_DST
}

impl Gpu {
    pub(super) fn alloc_err(bytes: u64, e: impl std::error::Error) -> GpuError {
        GpuError::Allocation {
            bytes,
            detail: error_chain(&e),
        }
    }

    /// A device-local buffer of `len` (at least 1) elements, contents
    /// undefined: one an earlier call made and nothing holds any more
    /// (super::recycle), or a new one.
    pub fn uninit<T: BufferContents>(&self, len: u64) -> Result<Subbuffer<[T]>, GpuError> {
        let len = len.max(1);
        let bytes = len * size_of::<T>() as u64;
        let mut kept = self.recycled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(buffer) = kept.take(bytes) {
            return Ok(buffer.reinterpret::<[T]>());
        }
        // Aligned for any element type, so that a buffer made for one type
        // can serve a later request for another.
        let layout = DeviceLayout::from_size_alignment(bytes, ELEMENT_ALIGNMENT)
            .ok_or_else(|| GpuError::Limit(format!("a buffer of {bytes} bytes")))?;
        let make = || {
            Buffer::new(
                self.memory.clone(),
                BufferCreateInfo {
                    usage: storage_usage(),
                    ..Default::default()
                },
                AllocationCreateInfo {
                    memory_type_filter: MemoryTypeFilter::PREFER_DEVICE,
                    ..Default::default()
                },
                layout,
            )
        };
        // Short of memory: the free kept buffers go back to the device
        // first, then the allocation is tried once more.
        let buffer = match make() {
            Ok(buffer) => buffer,
            Err(_) => {
                kept.release_free();
                make().map_err(|e| Self::alloc_err(bytes, e))?
            }
        };
        let buffer = Subbuffer::new(buffer);
        kept.keep(&buffer);
        Ok(buffer.reinterpret::<[T]>())
    }

    /// A device-local buffer of `len` (at least 1) zeroed elements.
    /// `T` must have a size that is a multiple of 4 bytes or `len` such that
    /// the whole buffer is; the fill works on 32-bit words.
    pub fn zeroed<T: BufferContents>(&self, len: u64) -> Result<Subbuffer<[T]>, GpuError> {
        let buf = self.uninit::<T>(len)?;
        let words = buf.size() / 4;
        if words * 4 != buf.size() {
            return Err(GpuError::Limit(format!(
                "zeroed buffers must be a whole number of 32-bit words, not {} bytes",
                buf.size()
            )));
        }
        let mut builder = self.builder()?;
        builder
            .fill_buffer(buf.clone().into_bytes().reinterpret::<[u32]>(), 0)
            .map_err(|e| GpuError::Command(error_chain(&*e)))?;
        self.submit_and_wait(builder)?;
        Ok(buf)
    }

    /// Measures a device-to-device copy of `bytes` bytes (best of `repeats`),
    /// the bandwidth reference that kernel benchmarks are reported against:
    /// the faster of `vkCmdCopyBuffer` and a grid-stride 16-byte-word copy
    /// kernel (`shaders/util/copy.comp`), so a kernel is compared with the best
    /// plain copy the device achieves. Returns nanoseconds, or `None` where
    /// the queue has no timestamps.
    pub fn time_copy(&self, bytes: u64, repeats: u32) -> Result<Option<f64>, GpuError> {
        let (command, kernel) = self.time_copies(bytes, repeats)?;
        Ok(match (command, kernel) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// Both copy references of [`Gpu::time_copy`], in nanoseconds (best of
    /// `repeats`): `(vkCmdCopyBuffer, copy kernel)`.
    pub fn time_copies(
        &self,
        bytes: u64,
        repeats: u32,
    ) -> Result<(Option<f64>, Option<f64>), GpuError> {
        let quads = bytes.div_ceil(16).max(1);
        let src = self.zeroed::<u32>(4 * quads)?;
        let dst = self.uninit::<u32>(4 * quads)?;
        let best = |acc: Option<f64>, ns: f64| Some(acc.map_or(ns, |b: f64| b.min(ns)));
        let n = u32::try_from(quads)
            .map_err(|_| GpuError::Limit(format!("copy of {bytes} bytes is too large")))?;
        let groups = n.div_ceil(256).min(65_535);
        let copy_kernel = || {
            self.run(
                &[super::Dispatch::new(&crate::shaders::COPY, [groups, 1, 1])
                    .buffer(&src)
                    .buffer(&dst)
                    .push(&[n])],
            )
        };
        // An idle GPU runs at low clocks for a while: keep it busy for a
        // moment first, or the reference (and every kernel timed after it)
        // depends on what the device did before the process started.
        let warm_up = std::time::Instant::now();
        while warm_up.elapsed() < std::time::Duration::from_millis(300) {
            copy_kernel()?;
        }
        let mut command: Option<f64> = None;
        for _ in 0..repeats.max(1) {
            let t = self.time_commands(|b| {
                b.copy_buffer(CopyBufferInfo::buffers(src.clone(), dst.clone()))
                    .map(|_| ())
                    .map_err(|e| GpuError::Command(error_chain(&*e)))
            })?;
            if let Some(ns) = t {
                command = best(command, ns);
            }
        }
        let mut kernel: Option<f64> = None;
        for _ in 0..repeats.max(1) {
            let timing = copy_kernel()?;
            if let Some(&ns) = timing.dispatch_ns.first() {
                if ns > 0.0 {
                    kernel = best(kernel, ns);
                }
            }
        }
        Ok((command, kernel))
    }

    pub(super) fn builder(
        &self,
    ) -> Result<AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>, GpuError> {
        AutoCommandBufferBuilder::primary(
            self.command_buffers.clone(),
            self.queue.queue_family_index(),
            CommandBufferUsage::OneTimeSubmit,
        )
        .map_err(|e| GpuError::Command(error_chain(&e)))
    }

    pub(super) fn submit_and_wait(
        &self,
        builder: AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
    ) -> Result<(), GpuError> {
        use vulkano::command_buffer::PrimaryCommandBufferAbstract;
        use vulkano::sync::GpuFuture;
        super::fault::check()?;
        let cb: Arc<PrimaryAutoCommandBuffer> = builder
            .build()
            .map_err(|e| GpuError::Command(error_chain(&e)))?;
        cb.execute(self.queue.clone())
            .map_err(|e| GpuError::Command(error_chain(&e)))?
            .then_signal_fence_and_flush()
            .map_err(|e| GpuError::Command(error_chain(&e)))?
            .wait(None)
            .map_err(|e| GpuError::Command(error_chain(&e)))?;
        super::device::validation_result()
    }
}
