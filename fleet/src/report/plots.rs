//! The report's plots, drawn with plotters as SVG text to inline in the
//! page: lines over time (one per shard or run) and horizontal bars.

use plotters::prelude::*;

/// One line of a time plot: its label and (time, value) points.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

const WIDTH: u32 = 760;

/// The colour of line or bar `i`.
fn colour(i: usize) -> RGBColor {
    const COLOURS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLOURS[i % COLOURS.len()]
}

fn upper(max: f64) -> f64 {
    if max <= 0.0 {
        1.0
    } else {
        max * 1.1
    }
}

/// A tick label: whole numbers without decimals.
fn tick(v: &f64) -> String {
    if v.fract() == 0.0 || v.abs() >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Lines over time (`x_label` names the unit); `y_label` names the
/// value. An SVG document as text.
pub fn time_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[Line],
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let x_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(0.0, f64::max);
        let y_max = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..upper(x_max), 0.0..upper(y_max))
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(plot_error)?;
        for (i, line) in lines.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    c.stroke_width(2),
                ))
                .map_err(plot_error)?
                .label(line.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        if !lines.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .draw()
                .map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Horizontal bars, one per (label, value), the first on top.
pub fn bar_plot(title: &str, x_label: &str, bars: &[(String, f64)]) -> anyhow::Result<String> {
    // Drawn bottom up.
    let bars: Vec<(String, f64)> = bars.iter().rev().cloned().collect();
    let mut svg = String::new();
    let height = 70 + 26 * bars.len().max(1) as u32;
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
        let n = bars.len().max(1);
        let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(210)
            .build_cartesian_2d(0.0..upper(max), (0..n).into_segmented())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(x_label)
            .x_label_formatter(&tick)
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (*v, SegmentValue::Exact(i + 1)),
                    ],
                    colour(0).filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                bar
            }))
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

fn plot_error<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw a plot: {e:?}")
}
