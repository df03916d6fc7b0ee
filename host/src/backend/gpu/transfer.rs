//! Host <-> device transfers through reusable staging chunks.
//!
//! Kernel buffers live in device-local memory; bytes cross through
//! host-visible staging buffers. Each transfer used to allocate one staging
//! buffer of its full size, fill it element by element, and (downloads) copy
//! it into a fresh `Vec`: on the H200 machine a 128 MB VLE input took ~300
//! ms to upload and a 64 MB stream ~70 ms to download, against 0.5 ms of
//! kernels (docs/history/vle.md, "End to end"). Now two staging chunks of
//! [`STAGING_CHUNK`] bytes per direction are kept by the [`Gpu`] and reused:
//! the host fills (or drains) one with a `memcpy` while the device copies the
//! other, so a transfer costs about one `memcpy` of its bytes and its
//! pinned host memory stays bounded whatever the transfer size.
//!
//! The host's side of each chunk (the `memcpy`, or the caller's packing
//! and unpacking of samples) is split over the thread pool
//! ([`par_copy`], and the callers' own fill and sink closures): one thread
//! moves a few GB/s, so a single-threaded fill or drain held a 100 MB
//! image to about that rate although the bus carries ten times more.
//!
//! Every byte that crosses is counted ([`Gpu::counts`]): the codec's
//! reports and `wavelane bench codec` show what a job moved over the bus,
//! which is what keeping the pipeline on the device is meant to shrink
//! (docs/codec.md, "Backends").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use vulkano::buffer::{Buffer, BufferContents, BufferCreateInfo, BufferUsage, Subbuffer};
use vulkano::command_buffer::{
    CommandBufferExecFuture, CopyBufferInfo, PrimaryCommandBufferAbstract,
};
use vulkano::memory::allocator::{AllocationCreateInfo, MemoryTypeFilter};
use vulkano::sync::future::{FenceSignalFuture, NowFuture};
use vulkano::sync::GpuFuture;

/// A submitted copy: waiting on it ends the device's use of both buffers.
type CopyFence = FenceSignalFuture<CommandBufferExecFuture<NowFuture>>;

use super::{error_chain, Gpu, GpuError};

/// Bytes per staging chunk. Large enough that one submission per chunk costs
/// little next to its copy, small enough that two per direction are a modest
/// amount of pinned memory.
pub const STAGING_CHUNK: u64 = 8 << 20;

/// Bytes one thread copies at a time in [`par_copy`]: large enough that
/// the pool's scheduling costs little next to the copy, small enough that
/// an 8 MiB chunk spreads over every core.
pub(crate) const COPY_PIECE: usize = 256 << 10;

/// `dst.copy_from_slice(src)`, split over the thread pool in pieces of
/// [`COPY_PIECE`] bytes.
pub(crate) fn par_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(COPY_PIECE)
        .zip(src.par_chunks(COPY_PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// The staging chunks kept between transfers, per direction.
#[derive(Default)]
pub(super) struct StagingPool {
    upload: Mutex<Vec<Subbuffer<[u8]>>>,
    download: Mutex<Vec<Subbuffer<[u8]>>>,
}

/// What a [`Gpu`] has moved and run since it was opened, counted with
/// relaxed atomics (a few adds per transfer or submission): every thread
/// that uses the `Gpu` adds to the same counters.
#[derive(Default)]
pub(super) struct Counters {
    upload: AtomicU64,
    download: AtomicU64,
    dispatches: AtomicU64,
    kernel_ns: AtomicU64,
    /// Dispatches and kernel nanoseconds per shader ([`Gpu::kernel_tally`]):
    /// one lock per submission, not per dispatch.
    shaders: Mutex<KernelTally>,
}

/// Dispatches and kernel time per shader since a [`Gpu`] was opened
/// ([`Gpu::kernel_tally`]), by the shader's name; the difference of two
/// readings ([`KernelTally::since`]) is what ran between them. Profiles
/// the codec kernel by kernel (`wavelane bench codec --json`, "kernels").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelTally {
    /// Per shader name: (dispatches, kernel nanoseconds).
    pub shaders: std::collections::BTreeMap<&'static str, (u64, u64)>,
}

impl KernelTally {
    /// What ran after `earlier` (a reading of the same `Gpu`): shaders
    /// that did not run in between are left out.
    pub fn since(&self, earlier: &KernelTally) -> KernelTally {
        let shaders = self
            .shaders
            .iter()
            .filter_map(|(&name, &(n, ns))| {
                let (n0, ns0) = earlier.shaders.get(name).copied().unwrap_or((0, 0));
                (n > n0).then(|| (name, (n - n0, ns.saturating_sub(ns0))))
            })
            .collect();
        KernelTally { shaders }
    }
}

/// A reading of a [`Gpu`]'s counters ([`Gpu::counts`]); the difference of
/// two readings ([`GpuCounts::since`]) is what happened between them, on
/// every thread that used the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuCounts {
    /// Bytes copied from host memory into device buffers (whole buffers:
    /// the zero padding of [`Gpu::upload_bytes`] and the one element of an
    /// empty upload count, since they cross the bus too).
    pub upload_bytes: u64,
    /// Bytes copied from device buffers back to host memory.
    pub download_bytes: u64,
    /// Compute dispatches submitted with [`Gpu::run`].
    pub dispatches: u64,
    /// Nanoseconds of those dispatches by GPU timestamps (0 where the
    /// queue has none): kernel time, without transfers or host waits.
    pub kernel_ns: u64,
}

impl GpuCounts {
    /// What was counted after `earlier` (a reading of the same `Gpu`).
    pub fn since(self, earlier: GpuCounts) -> GpuCounts {
        GpuCounts {
            upload_bytes: self.upload_bytes.saturating_sub(earlier.upload_bytes),
            download_bytes: self.download_bytes.saturating_sub(earlier.download_bytes),
            dispatches: self.dispatches.saturating_sub(earlier.dispatches),
            kernel_ns: self.kernel_ns.saturating_sub(earlier.kernel_ns),
        }
    }

    /// Whether anything at all ran or moved on the device.
    pub fn any(&self) -> bool {
        self.upload_bytes + self.download_bytes + self.dispatches > 0
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Upload,
    Download,
}

fn command_err(e: impl std::error::Error) -> GpuError {
    GpuError::Command(error_chain(&e))
}

impl Gpu {
    /// The counters now: bytes uploaded and downloaded, dispatches and
    /// their kernel time since the device was opened.
    pub fn counts(&self) -> GpuCounts {
        let c = &self.counters;
        GpuCounts {
            upload_bytes: c.upload.load(Ordering::Relaxed),
            download_bytes: c.download.load(Ordering::Relaxed),
            dispatches: c.dispatches.load(Ordering::Relaxed),
            kernel_ns: c.kernel_ns.load(Ordering::Relaxed),
        }
    }

    /// Dispatches and kernel time per shader since the device was opened.
    pub fn kernel_tally(&self) -> KernelTally {
        // Counts only: a thread that panicked while adding leaves them
        // usable, so a poisoned lock is taken over rather than passed on.
        let tally = self.counters.shaders.lock();
        tally.unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Counts the dispatches of shaders `names` submitted together and
    /// their kernel times `dispatch_ns` (empty without timestamps).
    pub(super) fn count_dispatches(&self, names: &[&'static str], dispatch_ns: &[f64]) {
        let c = &self.counters;
        let ns = |t: f64| t.max(0.0).round() as u64;
        c.dispatches
            .fetch_add(names.len() as u64, Ordering::Relaxed);
        c.kernel_ns
            .fetch_add(ns(dispatch_ns.iter().sum()), Ordering::Relaxed);
        let mut shaders = c.shaders.lock().unwrap_or_else(|p| p.into_inner());
        for (i, name) in names.iter().enumerate() {
            let e = shaders.shaders.entry(name).or_default();
            e.0 += 1;
            e.1 += dispatch_ns.get(i).map_or(0, |&t| ns(t));
        }
    }

    fn count_copy(&self, dir: Direction, bytes: u64) {
        let counter = match dir {
            Direction::Upload => &self.counters.upload,
            Direction::Download => &self.counters.download,
        };
        counter.fetch_add(bytes, Ordering::Relaxed);
    }

    fn pool(&self, dir: Direction) -> &Mutex<Vec<Subbuffer<[u8]>>> {
        match dir {
            Direction::Upload => &self.staging.upload,
            Direction::Download => &self.staging.download,
        }
    }

    /// Two staging chunks for one transfer: from the pool, or new.
    fn take_staging(&self, dir: Direction) -> Result<[Subbuffer<[u8]>; 2], GpuError> {
        let mut taken = {
            let mut pool = self.pool(dir).lock().unwrap_or_else(|p| p.into_inner());
            let keep = pool.len().saturating_sub(2);
            pool.split_off(keep)
        };
        while taken.len() < 2 {
            let (usage, access) = match dir {
                Direction::Upload => (
                    BufferUsage::TRANSFER_SRC,
                    MemoryTypeFilter::HOST_SEQUENTIAL_WRITE,
                ),
                Direction::Download => (
                    BufferUsage::TRANSFER_DST,
                    MemoryTypeFilter::HOST_RANDOM_ACCESS,
                ),
            };
            let buf = Buffer::new_slice::<u8>(
                self.memory.clone(),
                BufferCreateInfo {
                    usage,
                    ..Default::default()
                },
                AllocationCreateInfo {
                    memory_type_filter: MemoryTypeFilter::PREFER_HOST | access,
                    ..Default::default()
                },
                STAGING_CHUNK,
            )
            .map_err(|e| Self::alloc_err(STAGING_CHUNK, e))?;
            taken.push(buf);
        }
        let second = taken.pop().expect("two staging chunks");
        let first = taken.pop().expect("two staging chunks");
        Ok([first, second])
    }

    fn return_staging(&self, dir: Direction, bufs: [Subbuffer<[u8]>; 2]) {
        let mut pool = self.pool(dir).lock().unwrap_or_else(|p| p.into_inner());
        // Concurrent transfers may have allocated more; keep one pair.
        if pool.len() < 2 {
            pool.extend(bufs);
        }
    }

    /// Copies `src` to `dst` (same length) on the queue and returns the
    /// fence to wait on.
    fn submit_copy(
        &self,
        src: Subbuffer<[u8]>,
        dst: Subbuffer<[u8]>,
    ) -> Result<CopyFence, GpuError> {
        let mut builder = self.builder()?;
        builder
            .copy_buffer(CopyBufferInfo::buffers(src, dst))
            .map_err(|e| GpuError::Command(error_chain(&*e)))?;
        let cb = builder.build().map_err(command_err)?;
        cb.execute(self.queue.clone())
            .map_err(command_err)?
            .then_signal_fence_and_flush()
            .map_err(command_err)
    }

    /// Ends a transfer: waits for the copies still in flight (every copy
    /// must be over before its chunk goes back to the pool, error or not),
    /// returns the chunks, and reports the first error, or the validation
    /// layer's.
    fn finish(
        &self,
        dir: Direction,
        staging: [Subbuffer<[u8]>; 2],
        in_flight: [Option<CopyFence>; 2],
        mut result: Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        for fence in in_flight.into_iter().flatten() {
            let waited = wait(fence);
            if result.is_ok() {
                result = waited;
            }
        }
        self.return_staging(dir, staging);
        result?;
        super::device::validation_result()
    }

    /// Writes every byte of the device buffer `dst`: `fill(offset, chunk)`
    /// must fill `chunk` with the bytes at `offset..offset + chunk.len()`.
    /// The chunks come in order; filling one overlaps the copy of the
    /// previous one.
    pub fn write_bytes(
        &self,
        dst: &Subbuffer<[u8]>,
        mut fill: impl FnMut(u64, &mut [u8]),
    ) -> Result<(), GpuError> {
        let staging = self.take_staging(Direction::Upload)?;
        let mut in_flight = [None, None];
        let size = dst.len();
        let mut result = Ok(());
        for (k, offset) in (0..size).step_by(STAGING_CHUNK as usize).enumerate() {
            let slot = k % 2;
            if let Some(fence) = in_flight[slot].take() {
                if let Err(e) = wait(fence) {
                    result = Err(e);
                    break;
                }
            }
            let len = STAGING_CHUNK.min(size - offset);
            let chunk = staging[slot].clone().slice(0..len);
            match chunk.write() {
                Ok(mut guard) => fill(offset, &mut guard),
                Err(e) => {
                    result = Err(command_err(e));
                    break;
                }
            }
            match self.submit_copy(chunk, dst.clone().slice(offset..offset + len)) {
                Ok(fence) => {
                    self.count_copy(Direction::Upload, len);
                    in_flight[slot] = Some(fence)
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.finish(Direction::Upload, staging, in_flight, result)
    }

    /// Reads every byte of the device buffer `src`: `sink(offset, chunk)`
    /// receives the bytes at `offset..offset + chunk.len()`, in order; the
    /// next chunk's copy runs while the sink works.
    pub fn read_bytes(
        &self,
        src: &Subbuffer<[u8]>,
        mut sink: impl FnMut(u64, &[u8]),
    ) -> Result<(), GpuError> {
        let staging = self.take_staging(Direction::Download)?;
        let size = src.len();
        let chunk_at = |k: u64| {
            let offset = k * STAGING_CHUNK;
            (offset, STAGING_CHUNK.min(size - offset))
        };
        let chunks = size.div_ceil(STAGING_CHUNK);
        let mut in_flight = [None, None];
        let mut result = Ok(());
        for k in 0..chunks.min(2) {
            let (offset, len) = chunk_at(k);
            match self.submit_copy(
                src.clone().slice(offset..offset + len),
                staging[k as usize].clone().slice(0..len),
            ) {
                Ok(fence) => {
                    self.count_copy(Direction::Download, len);
                    in_flight[k as usize] = Some(fence)
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        for k in 0..chunks {
            if result.is_err() {
                break;
            }
            let slot = (k % 2) as usize;
            let Some(fence) = in_flight[slot].take() else {
                break;
            };
            if let Err(e) = wait(fence) {
                result = Err(e);
                break;
            }
            let (offset, len) = chunk_at(k);
            match staging[slot].clone().slice(0..len).read() {
                Ok(guard) => sink(offset, &guard),
                Err(e) => {
                    result = Err(command_err(e));
                    break;
                }
            }
            if k + 2 < chunks {
                let (offset, len) = chunk_at(k + 2);
                match self.submit_copy(
                    src.clone().slice(offset..offset + len),
                    staging[slot].clone().slice(0..len),
                ) {
                    Ok(fence) => {
                        self.count_copy(Direction::Download, len);
                        in_flight[slot] = Some(fence)
                    }
                    Err(e) => result = Err(e),
                }
            }
        }
        self.finish(Direction::Download, staging, in_flight, result)
    }

    /// Copies `data` into a new device-local buffer (one zero element if
    /// `data` is empty: Vulkan has no empty buffers).
    pub fn upload<T: BufferContents + bytemuck::Pod>(
        &self,
        data: &[T],
    ) -> Result<Subbuffer<[T]>, GpuError> {
        let dst = self.uninit::<T>(data.len() as u64)?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        self.write_bytes(&dst.clone().into_bytes(), |offset, chunk| {
            fill_from(bytes, offset, chunk)
        })?;
        Ok(dst)
    }

    /// Copies `bytes` into a new device-local buffer of `words` 32-bit words
    /// (at least 1), little-endian, zero past the end of `bytes`; `bytes`
    /// beyond the buffer are not copied.
    pub fn upload_bytes(&self, bytes: &[u8], words: u64) -> Result<Subbuffer<[u32]>, GpuError> {
        let dst = self.uninit::<u32>(words)?;
        self.write_bytes(&dst.clone().into_bytes(), |offset, chunk| {
            fill_from(bytes, offset, chunk)
        })?;
        Ok(dst)
    }

    /// Reads a buffer back to the host.
    pub fn download<T: BufferContents + bytemuck::Pod>(
        &self,
        buf: &Subbuffer<[T]>,
    ) -> Result<Vec<T>, GpuError> {
        // Filled at once: large ones get 2 MiB pages (crate::memory).
        let mut out = crate::memory::zeroed_vec(buf.len() as usize);
        self.download_into(buf, &mut out)?;
        Ok(out)
    }

    /// Reads `buf` into `out`, which must hold exactly `buf.len()` elements.
    pub fn download_into<T: BufferContents + bytemuck::Pod>(
        &self,
        buf: &Subbuffer<[T]>,
        out: &mut [T],
    ) -> Result<(), GpuError> {
        if out.len() as u64 != buf.len() {
            return Err(GpuError::Limit(format!(
                "a download of {} elements into {}",
                buf.len(),
                out.len()
            )));
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        self.read_bytes(&buf.clone().into_bytes(), |offset, chunk| {
            let at = offset as usize;
            par_copy(&mut bytes[at..at + chunk.len()], chunk);
        })
    }
}

/// `chunk` = `bytes[offset..offset + chunk.len()]`, zeros past its end.
fn fill_from(bytes: &[u8], offset: u64, chunk: &mut [u8]) {
    let start = (offset as usize).min(bytes.len());
    let end = (start + chunk.len()).min(bytes.len());
    let (data, rest) = chunk.split_at_mut(end - start);
    par_copy(data, &bytes[start..end]);
    rest.fill(0);
}

fn wait(fence: CopyFence) -> Result<(), GpuError> {
    fence.wait(None).map_err(command_err)
}
