//! The encoder's input in the form the caller holds it: planes
//! ([`Image`]) or samples interleaved at their own width
//! ([`Interleaved`], which the GPU backend uploads as it is).

use std::borrow::Cow;

use super::error::CodecError;
use super::image::{Image, Shape};
use super::interleaved::Interleaved;

/// An image to encode.
pub(crate) enum Input<'a> {
    /// Planes, borrowed or given (an owned image's planes become the
    /// transform's input instead of being copied).
    Planes(Cow<'a, Image>),
    /// Interleaved samples.
    Interleaved(&'a Interleaved),
}

impl Input<'_> {
    /// Its size and sample type.
    pub fn shape(&self) -> Shape {
        match self {
            Input::Planes(image) => image.shape(),
            Input::Interleaved(image) => image.shape(),
        }
    }

    /// Checks the size, the bit depth and every sample's range.
    pub fn validate(&self) -> Result<(), CodecError> {
        match self {
            Input::Planes(image) => image.validate(),
            Input::Interleaved(image) => image.validate(),
        }
    }

    /// The same input, borrowed.
    pub fn borrowed(&self) -> Input<'_> {
        match self {
            Input::Planes(image) => Input::Planes(Cow::Borrowed(image)),
            Input::Interleaved(image) => Input::Interleaved(image),
        }
    }

    /// The image as planes (a conversion for interleaved input): what a
    /// PSNR target measures decoded candidates against.
    pub fn planes(&self) -> Cow<'_, Image> {
        match self {
            Input::Planes(image) => Cow::Borrowed(image),
            Input::Interleaved(image) => Cow::Owned(image.to_image()),
        }
    }
}
