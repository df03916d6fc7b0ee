//! A small rate-distortion plot drawn pixel by pixel with the `image`
//! crate: axes with ticks and numbers, one polyline with markers per
//! series, a legend. Text uses a built-in 5x7 bitmap font (digits, a few
//! letters and signs), so no font or plotting crate is needed.

use image::{Rgb, RgbImage};

/// One line of the plot.
pub struct Series {
    /// Legend text (characters of [`glyph`]).
    pub name: String,
    /// Colour.
    pub colour: [u8; 3],
    /// Points `(x, y)` in data units.
    pub points: Vec<(f64, f64)>,
}

const W: u32 = 720;
const H: u32 = 480;
const LEFT: i32 = 70;
const RIGHT: i32 = 20;
const TOP: i32 = 30;
const BOTTOM: i32 = 50;

/// 5x7 glyphs, one row per byte, bit 4 = leftmost column.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '/' => [0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'b' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E],
        'c' => [0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E],
        'd' => [0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F],
        'g' => [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'p' => [0x00, 0x00, 0x1E, 0x11, 0x1E, 0x10, 0x10],
        'u' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D],
        _ => [0; 7],
    }
}

fn put(img: &mut RgbImage, x: i32, y: i32, c: [u8; 3]) {
    if x >= 0 && y >= 0 && (x as u32) < img.width() && (y as u32) < img.height() {
        img.put_pixel(x as u32, y as u32, Rgb(c));
    }
}

/// Draws `text` with its top-left corner at `(x, y)`, 2x scaled.
fn text(img: &mut RgbImage, x: i32, y: i32, s: &str, c: [u8; 3]) {
    for (i, ch) in s.chars().enumerate() {
        for (row, bits) in glyph(ch).iter().enumerate() {
            for col in 0..5 {
                if bits >> (4 - col) & 1 == 1 {
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        put(
                            img,
                            x + i as i32 * 12 + col * 2 + dx,
                            y + row as i32 * 2 + dy,
                            c,
                        );
                    }
                }
            }
        }
    }
}

/// Bresenham line, 2 pixels thick.
fn line(img: &mut RgbImage, (x0, y0): (i32, i32), (x1, y1): (i32, i32), c: [u8; 3]) {
    let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
    let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
    let (mut x, mut y, mut err) = (x0, y0, dx + dy);
    loop {
        put(img, x, y, c);
        put(img, x + 1, y, c);
        put(img, x, y + 1, c);
        if x == x1 && y == y1 {
            break;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}

/// A "nice" tick step for a span: 1, 2 or 5 times a power of ten.
fn tick_step(span: f64) -> f64 {
    let raw = span / 6.0;
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

fn label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// Renders the plot: x = bits per pixel, y = PSNR (dB).
pub fn rd_plot(series: &[Series]) -> RgbImage {
    let mut img = RgbImage::from_pixel(W, H, Rgb([255, 255, 255]));
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (0.0f64, 0.0f64, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if y0 > y1 {
        (y0, y1) = (20.0, 50.0);
    }
    let (xs, ys) = (tick_step((x1 - x0).max(0.1)), tick_step((y1 - y0).max(1.0)));
    x1 = (x1 / xs).ceil() * xs;
    x0 = (x0 / xs).floor() * xs;
    y0 = (y0 / ys).floor() * ys;
    y1 = (y1 / ys).ceil() * ys;
    let (pw, ph) = (
        (W as i32 - LEFT - RIGHT) as f64,
        (H as i32 - TOP - BOTTOM) as f64,
    );
    let map = |x: f64, y: f64| {
        (
            LEFT + ((x - x0) / (x1 - x0).max(1e-9) * pw) as i32,
            TOP + ph as i32 - ((y - y0) / (y1 - y0).max(1e-9) * ph) as i32,
        )
    };
    let (grey, black) = ([225, 225, 225], [0, 0, 0]);
    let mut x = x0;
    while x <= x1 + xs / 2.0 {
        let (px, _) = map(x, y0);
        line(&mut img, (px, TOP), (px, TOP + ph as i32), grey);
        let l = label(x, xs);
        text(
            &mut img,
            px - 6 * l.len() as i32,
            TOP + ph as i32 + 8,
            &l,
            black,
        );
        x += xs;
    }
    let mut y = y0;
    while y <= y1 + ys / 2.0 {
        let (_, py) = map(x0, y);
        line(&mut img, (LEFT, py), (LEFT + pw as i32, py), grey);
        let l = label(y, ys);
        text(&mut img, LEFT - 8 - 12 * l.len() as i32, py - 7, &l, black);
        y += ys;
    }
    line(&mut img, (LEFT, TOP), (LEFT, TOP + ph as i32), black);
    line(
        &mut img,
        (LEFT, TOP + ph as i32),
        (LEFT + pw as i32, TOP + ph as i32),
        black,
    );
    text(
        &mut img,
        LEFT + pw as i32 / 2 - 18,
        H as i32 - 20,
        "bpp",
        black,
    );
    text(&mut img, 4, 6, "PSNR (dB)", black);
    for (k, s) in series.iter().enumerate() {
        let pts: Vec<(i32, i32)> = s
            .points
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(x, y)| map(x, y))
            .collect();
        for w in pts.windows(2) {
            line(&mut img, w[0], w[1], s.colour);
        }
        for &(px, py) in &pts {
            for dy in -3..=3 {
                for dx in -3..=3 {
                    put(&mut img, px + dx, py + dy, s.colour);
                }
            }
        }
        let ly = TOP + ph as i32 - 24 - 22 * k as i32;
        line(
            &mut img,
            (LEFT + pw as i32 - 150, ly + 7),
            (LEFT + pw as i32 - 120, ly + 7),
            s.colour,
        );
        text(&mut img, LEFT + pw as i32 - 112, ly, &s.name, s.colour);
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_draws_series_in_their_colours() {
        let red = [220, 30, 30];
        let img = rd_plot(&[Series {
            name: "cpu".into(),
            colour: red,
            points: vec![(0.25, 28.0), (1.0, 34.5), (2.0, 39.0)],
        }]);
        assert_eq!((img.width(), img.height()), (W, H));
        let red_pixels = img.pixels().filter(|p| p.0 == red).count();
        assert!(red_pixels > 200, "{red_pixels}");
        assert!(img.pixels().any(|p| p.0 == [0, 0, 0]));
    }
}
