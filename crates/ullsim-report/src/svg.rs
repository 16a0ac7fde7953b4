//! Hand-written SVG charts: scales, axes, legends and marks, as text. Every coordinate is written with one
//! decimal, so the same data gives the same bytes.

use std::fmt::Write;

use crate::{escape, format_number};

/// Colours of the series, in order (Tableau 10: distinguishable, and readable in grey-scale print).
pub const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// The colour of series `index`, cycling through the palette.
pub fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// A generous mean character width of the 12 px sans-serif labels (DejaVu Sans, a wide font, averages about
/// 7 px), to lay out text without measuring it.
const CHAR_WIDTH: f64 = 7.2;

/// Approximate width in pixels of `text` at 12 px.
pub fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

/// A mapping of data values onto [0, 1] along an axis, and the ticks to label it with.
#[derive(Clone, Copy, Debug)]
pub enum Scale {
    Linear {
        min: f64,
        max: f64,
    },
    /// Base-10 logarithmic; `min` > 0.
    Log {
        min: f64,
        max: f64,
    },
}

impl Scale {
    /// A linear scale over `[min, max]` (always including 0), widened to round tick values.
    pub fn linear_from_zero(values: impl IntoIterator<Item = f64>) -> Scale {
        let (mut min, mut max) = (0.0f64, 0.0f64);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            min = min.min(v);
            max = max.max(v);
        }
        if max - min <= 0.0 {
            max = min + 1.0;
        }
        let step = nice_step((max - min) / 5.0);
        Scale::Linear { min: (min / step).floor() * step, max: (max / step).ceil() * step }
    }

    /// A logarithmic scale over the positive `values`, widened to powers of ten; `None` without any.
    pub fn log_of(values: impl IntoIterator<Item = f64>) -> Option<Scale> {
        let positive: Vec<f64> = values.into_iter().filter(|v| v.is_finite() && *v > 0.0).collect();
        let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
        let max = positive.iter().copied().fold(0.0, f64::max);
        if positive.is_empty() {
            return None;
        }
        let low = 10f64.powf(min.log10().floor());
        let mut high = 10f64.powf(max.log10().ceil());
        if high <= low {
            high = low * 10.0;
        }
        Some(Scale::Log { min: low, max: high })
    }

    /// Where `value` falls, 0 at the scale's minimum and 1 at its maximum (clamped).
    pub fn fraction(&self, value: f64) -> f64 {
        let f = match *self {
            Scale::Linear { min, max } => (value - min) / (max - min),
            Scale::Log { min, max } => (value.max(min).log10() - min.log10()) / (max.log10() - min.log10()),
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Values to draw ticks at: round steps of a linear scale, powers of ten (and 2 and 5 times them when
    /// the scale spans fewer than three decades) of a logarithmic one.
    pub fn ticks(&self) -> Vec<f64> {
        match *self {
            Scale::Linear { min, max } => {
                let step = nice_step((max - min) / 5.0);
                let count = ((max - min) / step).round() as i64;
                (0..=count).map(|i| min + i as f64 * step).collect()
            }
            Scale::Log { min, max } => {
                let decades = (max / min).log10().round() as i32;
                let multiples: &[f64] = if decades < 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                let mut ticks = Vec::new();
                for d in 0..=decades {
                    for m in multiples {
                        let v = min * 10f64.powi(d) * m;
                        if v <= max * 1.000001 {
                            ticks.push(v);
                        }
                    }
                }
                ticks
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, the nearest at or above `rough`.
fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    let m = rough / power;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// An SVG document being written: the plot area is `[left, width - right] × [top, height - bottom]`.
pub struct Chart {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    body: String,
}

impl Chart {
    pub fn new(width: f64, height: f64, left: f64, right: f64, top: f64, bottom: f64) -> Chart {
        Chart { width, height, left, right, top, bottom, body: String::new() }
    }

    pub fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    pub fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }

    /// The x pixel of `value` on `scale`.
    pub fn x(&self, scale: &Scale, value: f64) -> f64 {
        self.left + scale.fraction(value) * self.plot_width()
    }

    /// The y pixel of `value` on `scale` (up is larger).
    pub fn y(&self, scale: &Scale, value: f64) -> f64 {
        self.height - self.bottom - scale.fraction(value) * self.plot_height()
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, extra: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"{extra}/>"#
        );
    }

    /// A rectangle with an optional tooltip.
    pub fn rect(&mut self, x: f64, y: f64, width: f64, height: f64, fill: &str, tooltip: Option<&str>) {
        let _ = write!(
            self.body,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}""#,
            width.max(0.0),
            height.max(0.0)
        );
        self.close_with_tooltip("rect", tooltip);
    }

    pub fn circle(&mut self, x: f64, y: f64, radius: f64, fill: &str, tooltip: Option<&str>) {
        let _ = write!(self.body, r#"<circle cx="{x:.1}" cy="{y:.1}" r="{radius:.1}" fill="{fill}""#);
        self.close_with_tooltip("circle", tooltip);
    }

    fn close_with_tooltip(&mut self, element: &str, tooltip: Option<&str>) {
        match tooltip {
            Some(t) => {
                let _ = writeln!(self.body, "><title>{}</title></{element}>", escape(t));
            }
            None => self.body.push_str("/>\n"),
        }
    }

    /// A polyline through `points` (pixels); `extra` adds attributes such as a dash pattern.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, extra: &str) {
        if points.is_empty() {
            return;
        }
        let coordinates: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.body,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="2"{extra}/>"#,
            coordinates.join(" ")
        );
    }

    /// Text at (x, y); `anchor` is start, middle or end.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, text: &str) {
        let _ = writeln!(self.body, r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{}</text>"#, escape(text));
    }

    /// 10 px text starting at (x, y): a value beside its bar.
    pub fn small_text(&mut self, x: f64, y: f64, text: &str) {
        let _ = writeln!(self.body, r#"<text x="{x:.1}" y="{y:.1}" font-size="10">{}</text>"#, escape(text));
    }

    /// Text rotated a quarter turn anticlockwise, centred on (x, y): a y-axis title.
    pub fn vertical_text(&mut self, x: f64, y: f64, text: &str) {
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="middle" transform="rotate(-90 {x:.1} {y:.1})">{}</text>"#,
            escape(text)
        );
    }

    /// The x axis at the bottom of the plot area: grid lines and labels at `scale`'s ticks, and a title.
    pub fn x_axis(&mut self, scale: &Scale, label: impl Fn(f64) -> String, title: &str) {
        let (top, bottom) = (self.top, self.height - self.bottom);
        for tick in scale.ticks() {
            let x = self.x(scale, tick);
            self.line(x, top, x, bottom, "#ddd", "");
            self.text(x, bottom + 15.0, "middle", &label(tick));
        }
        self.line(self.left, bottom, self.width - self.right, bottom, "#333", "");
        let centre = self.left + self.plot_width() / 2.0;
        self.text(centre, bottom + 32.0, "middle", title);
    }

    /// The y axis at the left of the plot area, with grid lines at `ticks` (value, label) and a title.
    pub fn y_axis(&mut self, scale: &Scale, ticks: &[(f64, String)], title: &str) {
        for (value, label) in ticks {
            let y = self.y(scale, *value);
            self.line(self.left, y, self.width - self.right, y, "#ddd", "");
            self.text(self.left - 6.0, y + 4.0, "end", label);
        }
        self.line(self.left, self.top, self.left, self.height - self.bottom, "#333", "");
        let middle = self.top + self.plot_height() / 2.0;
        self.vertical_text(14.0, middle, title);
    }

    /// The y axis with labels at `scale`'s own ticks.
    pub fn y_axis_ticks(&mut self, scale: &Scale, label: impl Fn(f64) -> String, title: &str) {
        let ticks: Vec<(f64, String)> = scale.ticks().into_iter().map(|t| (t, label(t))).collect();
        self.y_axis(scale, &ticks, title);
    }

    /// A legend of coloured squares and names in rows across the top, from y = 6; returns its height.
    pub fn legend(&mut self, entries: &[(String, &str)]) -> f64 {
        let (mut x, mut y) = (self.left, 6.0);
        for (name, fill) in entries {
            let width = 18.0 + text_width(name) + 14.0;
            if x + width > self.width && x > self.left {
                x = self.left;
                y += 18.0;
            }
            self.rect(x, y, 12.0, 12.0, fill, None);
            self.text(x + 16.0, y + 10.5, "start", name);
            x += width;
        }
        y + 18.0
    }

    /// The finished `<svg>` element, labelled `title` for screen readers. Inline SVG in HTML needs no
    /// namespace attribute, so the page holds no URL at all.
    pub fn finish(self, title: &str) -> String {
        format!(
            "<svg width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" \
             role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{t}</title>\n{body}</svg>\n",
            w = self.width,
            h = self.height,
            t = escape(title),
            body = self.body
        )
    }
}

/// A tick label of a plain number: four significant digits, no trailing zeros.
pub fn number_label(value: f64) -> String {
    format_number(value)
}
