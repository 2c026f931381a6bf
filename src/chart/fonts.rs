//! Embedded fonts: registration with plotters, font choice by glyph
//! coverage, and text measurement.
//!
//! Charts must render headless on machines without any system fonts, so the
//! fonts are compiled into the binary and registered with plotters'
//! `ab_glyph` text support: DejaVu Sans (regular and bold, from the `dejavu`
//! crate) for Latin, Greek, Cyrillic, digits and punctuation, and Droid Sans
//! Fallback (Apache-2.0, shipped in `assets/fonts/`) for CJK.
//!
//! Droid Sans Fallback has *no* ASCII glyphs at all (not even digits or
//! ","), so choosing one font per string cannot draw a title such as
//! "NeurIPS 2026 论文列表 — topic sizes". The choice is therefore made per
//! *run*: each character goes to DejaVu when DejaVu has a glyph for it,
//! else to Droid Sans Fallback when that has one, else to DejaVu (it will
//! show as a box, and the caller is told which characters). Whitespace stays
//! in the current run. A string DejaVu covers completely is one run.
//! Fallback runs are drawn larger by the ratio of the two fonts' em sizes so
//! that CJK and Latin glyphs match in size, and all runs share one baseline.
//!
//! Widths are measured with `ab_glyph` exactly the way plotters'
//! `ab_glyph` backend lays text out (sum of horizontal advances plus kerning
//! at a pixel scale equal to the font size), so a label measured here takes
//! the same room when drawn into the PNG.

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::style::FontStyle;
use std::sync::OnceLock;

/// Droid Sans Fallback (Apache-2.0), the CJK fallback font.
const DROID_BYTES: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DroidSansFallbackFull.ttf"
));

/// plotters family name of the DejaVu Sans faces. plotters writes the family
/// name verbatim into the SVG `font-family` attribute, so the name is a CSS
/// font list: viewers without DejaVu fall back to a similar sans-serif.
pub(crate) const SANS_FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

/// plotters family name of the CJK fallback face (also a CSS font list, see
/// [`SANS_FAMILY`]).
pub(crate) const CJK_FAMILY: &str =
    "Droid Sans Fallback, Noto Sans CJK SC, Microsoft YaHei, PingFang SC, sans-serif";

/// Which embedded family a run of text is drawn with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// DejaVu Sans.
    Sans,
    /// Droid Sans Fallback (CJK).
    Fallback,
}

impl Family {
    /// The plotters family name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Sans => SANS_FAMILY,
            Family::Fallback => CJK_FAMILY,
        }
    }
}

/// plotters font style for a weight (Droid Sans Fallback has no bold face;
/// plotters then uses its regular face, which keeps the glyphs real).
pub(crate) fn font_style(bold: bool) -> FontStyle {
    if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    }
}

/// A maximal piece of a string drawn with one family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Run<'t> {
    pub family: Family,
    pub text: &'t str,
}

/// The parsed embedded fonts.
pub(crate) struct Fonts {
    sans: FontRef<'static>,
    sans_bold: FontRef<'static>,
    fallback: FontRef<'static>,
}

static FONTS: OnceLock<Result<Fonts, String>> = OnceLock::new();

/// Parses the embedded fonts and registers them with plotters (once per
/// process). Returns an error message if a font does not parse.
pub(crate) fn fonts() -> Result<&'static Fonts, String> {
    FONTS.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Fonts, String> {
    let regular = dejavu::sans::regular();
    let bold = dejavu::sans::bold();
    let parse = |name: &str, bytes: &'static [u8]| {
        FontRef::try_from_slice(bytes).map_err(|e| format!("{name}: {e}"))
    };
    let fonts = Fonts {
        sans: parse("DejaVu Sans", regular)?,
        sans_bold: parse("DejaVu Sans Bold", bold)?,
        fallback: parse("Droid Sans Fallback", DROID_BYTES)?,
    };
    let register = |family: &str, style: FontStyle, bytes: &'static [u8]| {
        plotters::style::register_font(family, style, bytes)
            .map_err(|_| format!("plotters rejected the font for {family}"))
    };
    register(SANS_FAMILY, FontStyle::Normal, regular)?;
    register(SANS_FAMILY, FontStyle::Bold, bold)?;
    register(CJK_FAMILY, FontStyle::Normal, DROID_BYTES)?;
    // The SVG writes mixed strings as one <text> with a combined CSS font
    // list; register that name too so plotters can build its font object.
    register(MIXED_FAMILY, FontStyle::Normal, regular)?;
    register(MIXED_FAMILY, FontStyle::Bold, bold)?;
    Ok(fonts)
}

/// SVG family for strings with CJK runs: the viewer falls back per character
/// along this list, as the PNG renderer does with the embedded fonts.
pub(crate) const MIXED_FAMILY: &str = "DejaVu Sans, Verdana, Arial, Droid Sans Fallback, Noto Sans CJK SC, Microsoft YaHei, PingFang SC, sans-serif";

impl Fonts {
    fn font(&self, family: Family, bold: bool) -> &FontRef<'static> {
        match (family, bold) {
            (Family::Sans, false) => &self.sans,
            (Family::Sans, true) => &self.sans_bold,
            (Family::Fallback, _) => &self.fallback,
        }
    }

    /// Splits `text` into runs by glyph coverage (see the module docs) and
    /// lists the non-whitespace characters (deduplicated, in order) that no
    /// embedded font can draw.
    pub(crate) fn runs<'t>(&self, text: &'t str, bold: bool) -> (Vec<Run<'t>>, Vec<char>) {
        let sans = self.font(Family::Sans, bold);
        let mut runs: Vec<Run<'t>> = Vec::new();
        let mut missing: Vec<char> = Vec::new();
        let mut start = 0usize;
        let mut cur: Option<Family> = None;
        for (i, c) in text.char_indices() {
            let fam = if c.is_whitespace() {
                cur.unwrap_or(Family::Sans)
            } else if sans.glyph_id(c).0 != 0 {
                Family::Sans
            } else if self.fallback.glyph_id(c).0 != 0 {
                Family::Fallback
            } else {
                if !missing.contains(&c) {
                    missing.push(c);
                }
                Family::Sans
            };
            match cur {
                Some(f) if f != fam => {
                    runs.push(Run {
                        family: f,
                        text: &text[start..i],
                    });
                    start = i;
                    cur = Some(fam);
                }
                None => cur = Some(fam),
                _ => {}
            }
        }
        if let Some(f) = cur {
            runs.push(Run {
                family: f,
                text: &text[start..],
            });
        }
        (runs, missing)
    }

    /// True when some character of `text` is drawn with the fallback font.
    #[cfg(test)]
    pub(crate) fn needs_fallback(&self, text: &str) -> bool {
        self.runs(text, false)
            .0
            .iter()
            .any(|r| r.family == Family::Fallback)
    }

    /// plotters font size for a run of `family` in text of nominal `size`:
    /// fallback runs are enlarged so their em matches DejaVu's. The result
    /// is rounded to an even number of pixels: plotters' `ab_glyph`
    /// renderer truncates `size / 2 + glyph top` to an integer per glyph,
    /// which makes tall and short letters jump by a pixel against each other
    /// unless `size / 2` is whole.
    pub(crate) fn run_size(&self, family: Family, size: f32) -> f32 {
        let raw = match family {
            Family::Sans => size,
            Family::Fallback => {
                size * self.em_ratio(Family::Sans, false) / self.em_ratio(Family::Fallback, false)
            }
        };
        ((raw / 2.0).round() * 2.0).max(2.0)
    }

    /// Advance width in pixels of one run drawn at plotters size `size`,
    /// computed like plotters' `ab_glyph` backend does.
    pub(crate) fn run_width(&self, family: Family, bold: bool, size: f32, text: &str) -> f32 {
        let font = self.font(family, bold).as_scaled(size.max(0.0));
        let mut w = 0.0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            w += font.h_advance(id);
            if let Some(p) = prev {
                w += font.kern(p, id);
            }
            prev = Some(id);
        }
        w
    }

    /// Pen position of every visible glyph of a run drawn at plotters size
    /// `size`, plus the offset of the glyph's pixel bounds from the pen
    /// (its left side bearing, floored as `ab_glyph` rasterises it). Used to
    /// place glyphs one by one: plotters' `ab_glyph` renderer drops the left
    /// side bearing, which makes letter spacing uneven ("l anguage").
    pub(crate) fn glyph_positions(
        &self,
        family: Family,
        bold: bool,
        size: f32,
        text: &str,
        out: &mut Vec<(char, f32)>,
    ) {
        out.clear();
        let font = self.font(family, bold);
        let scaled = font.as_scaled(size.max(0.0));
        let mut pen = 0.0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            if let Some(o) = scaled.outline_glyph(scaled.scaled_glyph(c)) {
                out.push((c, pen + o.px_bounds().min.x));
            }
            pen += scaled.h_advance(id);
            prev = Some(id);
        }
    }

    /// Width in pixels of `text` at nominal `size`, all runs included.
    pub(crate) fn width(&self, text: &str, size: f32, bold: bool) -> f32 {
        self.runs(text, bold)
            .0
            .iter()
            .map(|r| self.run_width(r.family, bold, self.run_size(r.family, size), r.text))
            .sum()
    }

    /// Font units per em divided by the ascent-to-descent height: converts
    /// plotters' font size into the CSS `font-size` (em) for the SVG.
    pub(crate) fn em_ratio(&self, family: Family, bold: bool) -> f32 {
        let font = self.font(family, bold);
        let h = font.height_unscaled();
        match font.units_per_em() {
            Some(upm) if h > 0.0 => upm / h,
            _ => 1.0,
        }
    }

    /// Distance from the middle of DejaVu's ascent-to-descent box to its
    /// baseline, as a fraction of the font size: a line centred on `y` has
    /// its baseline at `y + size * this`. Shared by all runs.
    pub(crate) fn baseline_below_centre(&self) -> f32 {
        let font = &self.sans;
        let h = font.height_unscaled();
        if h > 0.0 {
            (font.ascent_unscaled() + font.descent_unscaled()) / (2.0 * h)
        } else {
            0.3
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{bars, style, written, CJK_TITLE};
    use super::super::topic_sizes;
    use super::*;
    use approx::assert_abs_diff_eq;
    use std::fs;

    #[test]
    fn cjk_text_chooses_the_fallback_font() {
        let f = fonts().unwrap();
        // Droid Sans Fallback has no ASCII, so the title is split into runs:
        // Latin (and the em dash) in DejaVu, the ideographs in Droid.
        let (runs, missing) = f.runs(CJK_TITLE, true);
        assert!(missing.is_empty());
        assert_eq!(
            runs,
            vec![
                Run {
                    family: Family::Sans,
                    text: "NeurIPS 2026 "
                },
                Run {
                    family: Family::Fallback,
                    text: "论文列表 "
                },
                Run {
                    family: Family::Sans,
                    text: "— topic sizes"
                },
            ]
        );
        // Fullwidth CJK punctuation comes from Droid, ASCII comma from DejaVu.
        let (runs, _) = f.runs("自然语言处理，机器翻译, NLP", false);
        assert_eq!(
            runs[0],
            Run {
                family: Family::Fallback,
                text: "自然语言处理，机器翻译"
            }
        );
        assert_eq!(runs[1].family, Family::Sans);
        // Latin, Greek and accents: one DejaVu run.
        let (runs, _) = f.runs("topic sizes — ünïcödé Ωμέγα", false);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].family, Family::Sans);
        assert!(!f.needs_fallback("graph neural network"));
        assert!(f.needs_fallback(CJK_TITLE));
        // Fallback runs are enlarged so CJK and Latin ems match: DejaVu's em is
        // 2048/(1901+483) of the size, Droid's 256/(267+68) (hhea metrics).
        // At size 100 that is 112.41 px, rounded to the even 112.
        let expected = 100.0 * (2048.0 / 2384.0) / (256.0 / 335.0);
        assert_abs_diff_eq!(expected, 112.41, epsilon = 0.01);
        assert_abs_diff_eq!(f.run_size(Family::Fallback, 100.0), 112.0);
        assert_abs_diff_eq!(f.run_size(Family::Sans, 25.2), 26.0);

        // In the SVG the title stays one <text> element whose CSS font list
        // includes the CJK fallback; pure-Latin labels name DejaVu only.
        let dir = tempfile::tempdir().unwrap();
        let (_, svg, warnings) = written(topic_sizes(dir.path(), &style(), &bars()).unwrap());
        assert!(warnings.is_empty(), "{warnings:?}");
        let text = fs::read_to_string(svg).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let tag_before = |needle: &str| -> String {
            let at = lines
                .iter()
                .position(|l| l.contains(needle))
                .expect("text in svg");
            lines[..=at]
                .iter()
                .rev()
                .find(|l| l.contains("<text"))
                .expect("text tag")
                .to_string()
        };
        let title_tag = tag_before("NeurIPS 2026 论文列表 — topic sizes");
        assert!(title_tag.contains("Droid Sans Fallback"), "{title_tag}");
        let latin_tag = tag_before("graph neural network");
        assert!(
            latin_tag.contains("font-family=\"DejaVu Sans"),
            "{latin_tag}"
        );
        assert!(!latin_tag.contains("Droid"), "{latin_tag}");
    }
    #[test]
    fn uncovered_characters_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        // U+10000 LINEAR B SYLLABLE B008 A: in neither embedded font.
        let mut b = bars();
        b[0].label = "ancient \u{10000} script".into();
        let (png, _, warnings) = written(topic_sizes(dir.path(), &style(), &b).unwrap());
        assert!(png.exists());
        assert!(
            warnings.iter().any(|w| w.contains("U+10000")),
            "warnings: {warnings:?}"
        );
    }
}
