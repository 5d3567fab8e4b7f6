//! Text on bitmaps, drawn glyph by glyph with their side bearings.
//!
//! plotters 0.3.7 rasterises text through `ab_glyph` but places each glyph's outline at the
//! pen position without its left side bearing, so narrow glyphs (`:`, `=`, `.`, `l`) sit too far
//! left and labels look unevenly spaced. [`GlyphBitmap`] wraps the bitmap backend and draws
//! text itself — same layout box as plotters (width = advances + kerning, height = one em,
//! so everything plotters lays out around text stays where it was) — with the bearings, the
//! baseline at 0.8 em below the top of the box, coverage blended as alpha, and the quarter-turn
//! rotations plotters uses for axis labels. Everything else is passed through.

use ab_glyph::{Font, FontRef, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};

/// The bitmap backend with correctly spaced text in the bundled font.
pub(crate) struct GlyphBitmap<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

type Error<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> GlyphBitmap<'a> {
    pub(crate) fn new(inner: BitMapBackend<'a>, font: &'static [u8]) -> Option<Self> {
        Some(GlyphBitmap { inner, font: FontRef::try_from_slice(font).ok()? })
    }

    /// Width of `text` at pixel size `size` (advances and kerning) and the box height.
    fn layout(&self, text: &str, size: f64) -> (i32, i32) {
        let font = self.font.as_scaled(size as f32);
        let mut width = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                width += font.kern(p, id);
            }
            width += font.h_advance(id);
            prev = Some(id);
        }
        (width.round() as i32, (size / 1.24) as i32)
    }
}

impl<'a> DrawingBackend for GlyphBitmap<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error<'a>> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Error<'a>> {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Result<(), Error<'a>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Result<(), Error<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<T: BackendTextStyle>(&self, text: &str, style: &T) -> Result<(u32, u32), Error<'a>> {
        let (w, h) = self.layout(text, style.size());
        Ok((w.max(0) as u32, h.max(0) as u32))
    }

    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> Result<(), Error<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let size = style.size();
        let (width, height) = self.layout(text, size);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let font = self.font.as_scaled(size as f32);
        let baseline = size as f32 / 1.24 * 0.8;
        let mut pen = 0f32;
        let mut prev = None;
        let mut pixels: Vec<(i32, i32, f32)> = Vec::new();
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += font.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(font.scale(), point(pen, baseline));
            pen += font.h_advance(id);
            if let Some(outline) = font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                outline.draw(|x, y, coverage| {
                    pixels.push((b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, coverage));
                });
            }
        }
        for (x, y, coverage) in pixels {
            if coverage <= 0.0 {
                continue;
            }
            let (tx, ty) = trans.transform(x + dx, y + dy);
            let c = BackendColor { alpha: color.alpha * coverage.min(1.0) as f64, rgb: color.rgb };
            self.inner.draw_pixel((pos.0 + tx, pos.1 + ty), c)?;
        }
        Ok(())
    }
}
