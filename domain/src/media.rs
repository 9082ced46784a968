//! Images: what an upload must be (a JPEG, PNG, WebP or GIF that decodes within limits), its
//! dimensions, and thumbnails. Decoding is CPU work: callers on an async runtime run
//! [`thumbnail`] in `spawn_blocking`.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};

/// Longest side of a thumbnail.
pub const THUMBNAIL_MAX_SIDE: u32 = 400;
/// Largest image accepted, in pixels per side (a 16k panorama still passes).
const MAX_SIDE: u32 = 20_000;
/// Memory the decoder may use; a 12-megapixel RGB photo needs ~36 MB.
const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub mime: &'static str,
    pub width: u32,
    pub height: u32,
}

fn format_mime(f: ImageFormat) -> Option<&'static str> {
    match f {
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Png => Some("image/png"),
        ImageFormat::WebP => Some("image/webp"),
        ImageFormat::Gif => Some("image/gif"),
        _ => None,
    }
}

fn limits() -> Limits {
    let mut l = Limits::default();
    l.max_image_width = Some(MAX_SIDE);
    l.max_image_height = Some(MAX_SIDE);
    l.max_alloc = Some(MAX_DECODE_BYTES);
    l
}

/// Reads the format from the bytes (never from the name or declared type) and the dimensions
/// from the header. `None` when the bytes are not an accepted image.
pub fn inspect(bytes: &[u8]) -> Option<ImageInfo> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mime = format_mime(reader.format()?)?;
    let mut reader = reader;
    reader.limits(limits());
    let (width, height) = reader.into_dimensions().ok()?;
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return None;
    }
    Some(ImageInfo {
        mime,
        width,
        height,
    })
}

#[derive(Debug, thiserror::Error)]
#[error("the image could not be decoded: {0}")]
pub struct ImageError(String);

/// A JPEG whose longest side is at most [`THUMBNAIL_MAX_SIDE`] (an image already that small is
/// re-encoded at its size), and the source's dimensions.
pub fn thumbnail(bytes: &[u8]) -> Result<(Vec<u8>, u32, u32), ImageError> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageError(e.to_string()))?;
    reader.limits(limits());
    let img = reader.decode().map_err(|e| ImageError(e.to_string()))?;
    let (w, h) = (img.width(), img.height());
    let small = if w.max(h) > THUMBNAIL_MAX_SIDE {
        img.thumbnail(THUMBNAIL_MAX_SIDE, THUMBNAIL_MAX_SIDE)
    } else {
        img
    };
    let mut out = Cursor::new(Vec::new());
    small
        .to_rgb8()
        .write_to(&mut out, ImageFormat::Jpeg)
        .map_err(|e| ImageError(e.to_string()))?;
    Ok((out.into_inner(), w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Jpeg).unwrap();
        out.into_inner()
    }

    #[test]
    fn inspects_and_shrinks() {
        let photo = jpeg(1200, 800);
        assert_eq!(
            inspect(&photo),
            Some(ImageInfo {
                mime: "image/jpeg",
                width: 1200,
                height: 800
            })
        );
        let (thumb, w, h) = thumbnail(&photo).unwrap();
        assert_eq!((w, h), (1200, 800));
        let t = inspect(&thumb).unwrap();
        assert_eq!((t.width, t.height), (400, 267));
        assert!(thumb.len() < photo.len());
        assert_eq!(inspect(b"%PDF-1.4 not an image"), None);
    }
}
