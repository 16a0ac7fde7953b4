//! Horizontal bars in panels stacked top to bottom, each panel on its own axis from zero (one per metric of a
//! reproduction figure, one per flow of a comparison), each row with a fixed number of bar places (paper and
//! simulated; mean and p99) and its value written beside every bar.

use crate::shortened;
use crate::svg::{text_width, Chart, Scale};

/// Thickness of a bar, and the space between rows and between panels, in pixels.
const BAR: f64 = 9.0;
const ROW_GAP: f64 = 8.0;
const PANEL_GAP: f64 = 58.0;

pub struct Bar {
    pub value: f64,
    pub fill: &'static str,
    pub tooltip: String,
}

/// One row: its label at the left and its bars, one per place (`None` leaves the place empty).
pub struct Row {
    pub label: String,
    pub bars: Vec<Option<Bar>>,
}

pub struct Panel {
    pub title: String,
    pub rows: Vec<Row>,
}

/// The `<svg>` of `panels`: every row has `places` bar places, top to bottom; tick labels and the values
/// beside the bars are written by `format`; `legend` (none when empty) names the places' colours.
pub fn chart(
    panels: &[Panel],
    places: usize,
    legend: &[(String, &str)],
    format: fn(f64) -> String,
    title: &str,
) -> String {
    let label_width = panels.iter().flat_map(|p| &p.rows).map(|r| text_width(&r.label)).fold(60.0, f64::max).min(420.0);
    let row_height = places as f64 * BAR + ROW_GAP;
    let mut chart = Chart::new(900.0, 0.0, label_width + 16.0, 60.0, 0.0, 0.0);
    chart.top = if legend.is_empty() { 0.0 } else { chart.legend(legend) };
    let mut y = chart.top + 8.0;
    let mut tops = Vec::new();
    for panel in panels {
        tops.push(y + 18.0);
        y += 18.0 + panel.rows.len() as f64 * row_height + PANEL_GAP;
    }
    chart.height = y;
    for (panel, top) in panels.iter().zip(tops) {
        let scale = Scale::linear_from_zero(panel.rows.iter().flat_map(|r| r.bars.iter().flatten().map(|b| b.value)));
        chart.text(chart.left, top - 5.0, "start", &panel.title);
        // The axis of this panel: ticks below its bars, a line at zero.
        let bottom = top + panel.rows.len() as f64 * row_height;
        for tick in scale.ticks() {
            let x = chart.x(&scale, tick);
            chart.line(x, top, x, bottom, "#ddd", "");
            chart.text(x, bottom + 15.0, "middle", &format(tick));
        }
        let zero = chart.x(&scale, 0.0);
        chart.line(zero, top, zero, bottom, "#333", "");
        for (i, row) in panel.rows.iter().enumerate() {
            let row_top = top + i as f64 * row_height;
            let middle = row_top + places as f64 * BAR / 2.0;
            chart.text(chart.left - 6.0, middle + 4.0, "end", &shortened(&row.label, label_width));
            for (place, bar) in row.bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                let (x, bar_top) = (chart.x(&scale, bar.value), row_top + place as f64 * BAR);
                chart.rect(zero.min(x), bar_top, (x - zero).abs().max(1.0), BAR, bar.fill, Some(&bar.tooltip));
                chart.small_text(zero.max(x) + 4.0, bar_top + BAR - 1.0, &format(bar.value));
            }
        }
    }
    chart.finish(title)
}
