//! The data that flows between the codec's stages: component planes in
//! one allocation, and the transform coefficients of every component.

/// Component planes of `len` samples each, back to back in one allocation:
/// the layout of the codec's index array, so that lossless indices are the
/// coefficients themselves (moved, not copied).
#[derive(Debug, Clone)]
pub(crate) struct Planes<T> {
    /// Every plane, plane `c` at `c * len`.
    pub data: Vec<T>,
    /// Samples per plane.
    pub len: usize,
}

impl<T> Planes<T> {
    /// `data` cut into planes of `len` samples (`data.len()` a multiple).
    pub fn new(data: Vec<T>, len: usize) -> Self {
        debug_assert!(data.len().is_multiple_of(len));
        Planes { data, len }
    }

    /// Plane `c`.
    pub fn plane(&self, c: usize) -> &[T] {
        &self.data[c * self.len..(c + 1) * self.len]
    }

    /// Every plane, mutably.
    pub fn planes_mut(&mut self) -> std::slice::ChunksExactMut<'_, T> {
        self.data.chunks_exact_mut(self.len.max(1))
    }
}

/// Transform coefficients of every component.
#[derive(Debug, Clone)]
pub(crate) enum Coefficients {
    /// 5/3 and fixed-point 9/7.
    Int(Planes<i32>),
    /// Floating-point 9/7.
    Float(Planes<f32>),
}

/// Where a stage's planes live: on the host, or (GPU backend) in device
/// buffers, so that the next stage's shader reads them where the last one
/// wrote them (docs/codec.md, "Backends"). `H` is the host form the stage
/// hands on (`Planes<i32>` samples, [`Coefficients`], an index array,
/// decoded planes).
#[derive(Debug, Clone)]
pub(crate) enum Resident<H> {
    /// On the host.
    Host(H),
    /// In device buffers.
    #[cfg(feature = "gpu")]
    Device(DevicePlanes),
}

/// Integer component planes in one device buffer, plane `c` at
/// `c * stride`: the layout of the host index array, each plane's start
/// padded to 256 bytes so that a plane binds on its own (a binding's
/// offset must be a multiple of the device's storage-buffer alignment, at
/// most 256 bytes by the Vulkan spec). One buffer with block offsets is
/// what the GPU codeblock coder reads, so the index planes can go to it as
/// they are.
#[cfg(feature = "gpu")]
#[derive(Debug, Clone)]
pub(crate) struct DevicePlanes {
    /// The device that holds them.
    pub gpu: std::sync::Arc<crate::backend::Gpu>,
    /// Every plane, `comps * stride` elements.
    pub buffer: vulkano::buffer::Subbuffer<[i32]>,
    /// Samples per plane.
    pub len: usize,
    /// Planes.
    pub comps: usize,
    /// A scale the next stage applies to every sample first (f64 multiply,
    /// rounded half away from zero): the reduced fixed-point 9/7's LL gain,
    /// undone in the decoder's colour stage rather than in a pass of its own.
    pub gain: Option<f64>,
}

#[cfg(feature = "gpu")]
impl DevicePlanes {
    /// Elements from one plane's start to the next's for planes of `len`.
    pub fn stride_of(len: usize) -> usize {
        len.next_multiple_of(64)
    }

    /// Elements from one plane's start to the next's.
    pub fn stride(&self) -> usize {
        Self::stride_of(self.len)
    }

    /// Plane `c`, as a binding of its own.
    pub fn plane(&self, c: usize) -> vulkano::buffer::Subbuffer<[i32]> {
        let at = (c * self.stride()) as u64;
        self.buffer.clone().slice(at..at + self.len as u64)
    }

    /// Every plane, in component order.
    pub fn planes(&self) -> Vec<vulkano::buffer::Subbuffer<[i32]>> {
        (0..self.comps).map(|c| self.plane(c)).collect()
    }
}
