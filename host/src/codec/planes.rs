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
