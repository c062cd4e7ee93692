//! Small SVG charts written by hand: grouped bars (with error bars, on a signed axis
//! for differences), lines, and bars with a line on a second axis. Every chart has a
//! caption line under its title (n, model), a colour per series that never repeats,
//! and a canvas tall enough for its whole legend.
//!
//! Plotting crates measure text with system fonts at render time; writing the SVG
//! ourselves needs no fonts at all (the viewer lays out the text), keeps the files
//! small and diffable, and costs about as much code as configuring a crate would.

use super::escape::escape_html;
use std::fmt::Write;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 200.0; // room for the legend (and a right axis)
const TOP: f64 = 58.0;
const BOTTOM: f64 = 64.0;
const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// A named series; `None` leaves a gap. `errors` (empty, or one per value) are
/// interval ends drawn as error bars.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub errors: Vec<Option<(f64, f64)>>,
    /// Short labels drawn above each bar (`n=12`), empty or one per value.
    pub notes: Vec<Option<String>>,
}

impl Series {
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> Series {
        Series {
            name: name.into(),
            values,
            errors: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_errors(mut self, errors: Vec<Option<(f64, f64)>>) -> Series {
        self.errors = errors;
        self
    }

    pub fn with_notes(mut self, notes: Vec<Option<String>>) -> Series {
        self.notes = notes;
        self
    }
}

/// Series colour `i`: the ten-colour categorical palette, then hues a golden angle
/// apart at two lightnesses, so no two of a chart's series share a colour.
pub fn color(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => (*c).to_string(),
        None => {
            let k = i - PALETTE.len();
            let hue = (k as f64 * 137.508 + 20.0) % 360.0;
            let light = if k.is_multiple_of(2) { 38 } else { 58 };
            format!("hsl({hue:.0},70%,{light}%)")
        }
    }
}

/// The drawing area and the SVG text written so far.
struct Canvas {
    out: String,
    plot_w: f64,
    plot_h: f64,
    /// Legend rows drawn, and room taken by slanted x labels: the canvas grows to
    /// hold both (its size is written last, in `finish`).
    legend_rows: usize,
    label_room: f64,
    /// The bottom of the y axis (0 unless a chart shows signed differences).
    y_min: f64,
}

/// The canvas height that holds `legend_rows` legend entries and `label_room` pixels
/// of slanted x labels.
fn canvas_height(legend_rows: usize, label_room: f64) -> f64 {
    HEIGHT
        .max(TOP + 8.0 + 18.0 * legend_rows as f64 + 16.0)
        .max(HEIGHT + label_room)
}

impl Canvas {
    fn new(title: &str, caption: &str) -> Canvas {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            WIDTH / 2.0,
            escape_html(&shorten(title, 90))
        );
        let _ = write!(
            out,
            r##"<text x="{}" y="40" text-anchor="middle" font-size="11" fill="#555">{}</text>"##,
            WIDTH / 2.0,
            escape_html(&shorten(caption, 120))
        );
        Canvas {
            out,
            plot_w: WIDTH - LEFT - RIGHT,
            plot_h: HEIGHT - TOP - BOTTOM,
            legend_rows: 0,
            label_room: 0.0,
            y_min: 0.0,
        }
    }

    fn y(&self, v: f64, max: f64) -> f64 {
        let span = (max - self.y_min).max(f64::EPSILON);
        TOP + self.plot_h * (1.0 - ((v - self.y_min) / span).clamp(0.0, 1.0))
    }

    /// Horizontal grid, ticks and label of a y axis from `y_min` to `max`, on the left
    /// or the right edge of the plot.
    fn y_axis(&mut self, max: f64, label: &str, right: bool) {
        let x = if right { LEFT + self.plot_w } else { LEFT };
        if self.y_min < 0.0 && !right {
            let y0 = self.y(0.0, max);
            let _ = write!(
                self.out,
                r##"<line x1="{LEFT}" y1="{y0:.1}" x2="{:.1}" y2="{y0:.1}" stroke="#333"/>"##,
                LEFT + self.plot_w
            );
        }
        // A signed axis gets an even number of steps so 0 is a tick.
        let steps = if self.y_min < 0.0 { 4 } else { 5 };
        for i in 0..=steps {
            let v = self.y_min + (max - self.y_min) * f64::from(i) / f64::from(steps);
            let y = self.y(v, max);
            if !right {
                let _ = write!(
                    self.out,
                    r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/>"##,
                    LEFT + self.plot_w
                );
            }
            let (tx, anchor) = if right {
                (x + 6.0, "start")
            } else {
                (x - 6.0, "end")
            };
            let _ = write!(
                self.out,
                r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                y + 4.0,
                tick(v)
            );
        }
        let lx = if right { x + 44.0 } else { 16.0 };
        let ly = TOP + self.plot_h / 2.0;
        let _ = write!(
            self.out,
            r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="middle" transform="rotate(-90 {lx:.1} {ly:.1})">{}</text>"#,
            escape_html(label)
        );
        let _ = write!(
            self.out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#333"/>"##,
            TOP + self.plot_h
        );
    }

    fn x_axis(&mut self, labels: &[(f64, String)], title: &str) {
        let base = TOP + self.plot_h;
        let _ = write!(
            self.out,
            r##"<line x1="{LEFT}" y1="{base:.1}" x2="{:.1}" y2="{base:.1}" stroke="#333"/>"##,
            LEFT + self.plot_w
        );
        // Labels wider than their slot are slanted (and shortened) instead of
        // overlapping; the canvas grows below for them.
        let slot = self.plot_w / labels.len().max(1) as f64;
        let widest = labels
            .iter()
            .map(|(_, l)| l.chars().count())
            .max()
            .unwrap_or(0);
        let slant = widest as f64 * 7.0 > slot;
        // Steeper when slots are narrower than a text line, so slanted labels do not
        // touch either.
        let angle: f64 = if slot < 24.0 { 65.0 } else { 35.0 };
        if slant {
            let longest = widest.min(24) as f64;
            self.label_room = longest * 7.0 * angle.to_radians().sin();
        }
        for (x, label) in labels {
            let y = base + 18.0;
            if slant {
                let _ = write!(
                    self.out,
                    r#"<text x="{x:.1}" y="{y:.1}" text-anchor="end" transform="rotate(-{angle} {x:.1} {y:.1})">{}</text>"#,
                    escape_html(&shorten(label, 24))
                );
            } else {
                let _ = write!(
                    self.out,
                    r#"<text x="{x:.1}" y="{y:.1}" text-anchor="middle">{}</text>"#,
                    escape_html(label)
                );
            }
        }
        let _ = write!(
            self.out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + self.plot_w / 2.0,
            base + 44.0 + self.label_room,
            escape_html(title)
        );
    }

    /// Legend entries: (name, color, dashed line instead of a box).
    fn legend(&mut self, entries: &[(String, String, bool)], offset: f64) {
        self.legend_rows = entries.len();
        let x = LEFT + self.plot_w + offset;
        for (i, (name, col, line)) in entries.iter().enumerate() {
            let y = TOP + 8.0 + 18.0 * i as f64;
            if *line {
                let _ = write!(
                    self.out,
                    r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{col}" stroke-width="2" stroke-dasharray="4 2"/>"#,
                    x + 14.0
                );
            } else {
                let _ = write!(
                    self.out,
                    r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{col}"/>"#,
                    y - 6.0
                );
            }
            let _ = write!(
                self.out,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 18.0,
                y + 4.0,
                escape_html(&shorten(name, 26))
            );
        }
    }

    fn polyline(&mut self, points: &[(f64, f64)], col: &str, dashed: bool) {
        if points.is_empty() {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let dash = if dashed {
            r#" stroke-dasharray="4 2""#
        } else {
            ""
        };
        if dashed {
            // A white halo keeps a line visible across bars of its own colour.
            let _ = write!(
                self.out,
                r#"<polyline points="{}" fill="none" stroke="white" stroke-width="5"/>"#,
                pts.join(" ")
            );
        }
        let _ = write!(
            self.out,
            r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="2"{dash}/>"#,
            pts.join(" ")
        );
        for (x, y) in points {
            let _ = write!(
                self.out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{col}"/>"#
            );
        }
    }

    fn finish(self) -> String {
        let height = canvas_height(self.legend_rows, self.label_room);
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>{}</svg>
"#,
            self.out
        )
    }
}

fn tick(v: f64) -> String {
    if v.abs() >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// A y-axis maximum: 100 for percentages, else the data maximum rounded up.
fn nice_max(values: impl Iterator<Item = f64>, percent: bool) -> f64 {
    if percent {
        return 100.0;
    }
    let m = values.fold(0.0_f64, f64::max);
    if m <= 0.0 {
        return 1.0;
    }
    let step = 10f64.powf(m.log10().floor());
    (m / step).ceil() * step
}

/// Grouped bars: one group per category, one bar per series (percent scale).
pub fn bar_chart(
    title: &str,
    caption: &str,
    x_title: &str,
    y_title: &str,
    categories: &[String],
    series: &[Series],
) -> String {
    let mut c = Canvas::new(title, caption);
    bars(&mut c, categories, series, 100.0);
    c.y_axis(100.0, y_title, false);
    finish_grouped(c, categories, series, x_title)
}

/// The category axis and the series legend that close every grouped-bar chart.
fn finish_grouped(
    mut c: Canvas,
    categories: &[String],
    series: &[Series],
    x_title: &str,
) -> String {
    let labels = category_positions(&c, categories);
    c.x_axis(&labels, x_title);
    let entries: Vec<(String, String, bool)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), color(i), false))
        .collect();
    c.legend(&entries, 16.0);
    c.finish()
}

fn category_positions(c: &Canvas, categories: &[String]) -> Vec<(f64, String)> {
    let group_w = c.plot_w / categories.len().max(1) as f64;
    categories
        .iter()
        .enumerate()
        .map(|(i, cat)| (LEFT + group_w * (i as f64 + 0.5), cat.clone()))
        .collect()
}

/// Signed bars with error bars: one group per category (e.g. each method's difference
/// from the baseline), on an axis symmetric around 0 that holds every interval.
pub fn diff_chart(
    title: &str,
    caption: &str,
    x_title: &str,
    y_title: &str,
    categories: &[String],
    series: &[Series],
) -> String {
    let reach = series
        .iter()
        .flat_map(|s| {
            s.values
                .iter()
                .flatten()
                .copied()
                .chain(s.errors.iter().flatten().flat_map(|(lo, hi)| [*lo, *hi]))
        })
        .fold(0.0_f64, |m, v| m.max(v.abs()));
    let max = nice_max(std::iter::once(reach), false);
    let mut c = Canvas::new(title, caption);
    c.y_min = -max;
    bars(&mut c, categories, series, max);
    c.y_axis(max, y_title, false);
    finish_grouped(c, categories, series, x_title)
}

fn bars(c: &mut Canvas, categories: &[String], series: &[Series], max: f64) {
    let group_w = c.plot_w / categories.len().max(1) as f64;
    let bar_w = group_w * 0.8 / series.len().max(1) as f64;
    let y0 = c.y(0.0_f64.max(c.y_min), max);
    for (si, s) in series.iter().enumerate() {
        for (ci, v) in s.values.iter().enumerate() {
            let Some(v) = v else { continue };
            let x = LEFT + group_w * ci as f64 + group_w * 0.1 + bar_w * si as f64;
            let y = c.y(*v, max);
            let _ = write!(
                c.out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {v:.1}</title></rect>"#,
                y.min(y0),
                (bar_w - 1.0).max(1.0),
                (y0 - y).abs(),
                color(si),
                escape_html(&s.name)
            );
            if let Some(Some(note)) = s.notes.get(ci) {
                let top = s
                    .errors
                    .get(ci)
                    .copied()
                    .flatten()
                    .map_or(*v, |(_, hi)| hi.max(*v));
                let _ = write!(
                    c.out,
                    r##"<text class="bar-note" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="9" fill="#333">{}</text>"##,
                    x + bar_w / 2.0,
                    c.y(top, max) - 4.0,
                    escape_html(note)
                );
            }
            if let Some(Some((lo, hi))) = s.errors.get(ci) {
                let mid = x + bar_w / 2.0;
                let (ylo, yhi) = (c.y(*lo, max), c.y(*hi, max));
                let cap = (bar_w / 4.0).clamp(1.5, 6.0);
                let _ = write!(
                    c.out,
                    r##"<path class="error-bar" d="M{mid:.1} {ylo:.1}V{yhi:.1}M{:.1} {ylo:.1}H{:.1}M{:.1} {yhi:.1}H{:.1}" stroke="#222" stroke-width="1.2" fill="none"><title>{}: [{lo:.1}, {hi:.1}]</title></path>"##,
                    mid - cap,
                    mid + cap,
                    mid - cap,
                    mid + cap,
                    escape_html(&s.name)
                );
            }
        }
    }
}

/// Lines over numeric x positions (e.g. turns). `percent` fixes the y axis at 0-100.
pub fn line_chart(
    title: &str,
    caption: &str,
    x_title: &str,
    y_title: &str,
    x: &[f64],
    series: &[Series],
    percent: bool,
) -> String {
    line_chart_marked(title, caption, x_title, y_title, x, series, percent, &[])
}

/// [`line_chart`] with error bars where a series has them (95% intervals) and
/// dashed vertical marks at x positions (`(14.0, "nudge")`).
#[allow(clippy::too_many_arguments)]
pub fn line_chart_marked(
    title: &str,
    caption: &str,
    x_title: &str,
    y_title: &str,
    x: &[f64],
    series: &[Series],
    percent: bool,
    marks: &[(f64, String)],
) -> String {
    let mut c = Canvas::new(title, caption);
    let y_max = nice_max(
        series.iter().flat_map(|s| {
            s.values
                .iter()
                .flatten()
                .copied()
                .chain(s.errors.iter().flatten().map(|(_, hi)| *hi))
        }),
        percent,
    );
    c.y_axis(y_max, y_title, false);
    let (x_min, x_max) = (
        x.iter().copied().fold(f64::INFINITY, f64::min),
        x.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let span = if x_max > x_min { x_max - x_min } else { 1.0 };
    let plot_w = c.plot_w;
    let px = |v: f64| LEFT + plot_w * (v - x_min) / span;
    let step = ((x.len() as f64) / 10.0).ceil().max(1.0) as usize;
    let labels: Vec<(f64, String)> = x.iter().step_by(step).map(|v| (px(*v), tick(*v))).collect();
    for (mx, label) in marks {
        let xm = px(*mx);
        let _ = write!(
            c.out,
            r##"<line class="mark" x1="{xm:.1}" y1="{TOP}" x2="{xm:.1}" y2="{:.1}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="5 3"/><text x="{:.1}" y="{:.1}" font-size="10" fill="#d62728">{}</text>"##,
            TOP + c.plot_h,
            xm + 3.0,
            TOP + 12.0,
            escape_html(label)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let points: Vec<(f64, f64)> = x
            .iter()
            .zip(&s.values)
            .filter_map(|(xv, v)| v.map(|v| (px(*xv), c.y(v, y_max))))
            .collect();
        for (xv, e) in x.iter().zip(&s.errors) {
            let Some((lo, hi)) = e else { continue };
            let (xe, ylo, yhi) = (px(*xv), c.y(*lo, y_max), c.y(*hi, y_max));
            let _ = write!(
                c.out,
                r#"<path class="error-bar" d="M{xe:.1} {ylo:.1}V{yhi:.1}M{:.1} {ylo:.1}H{:.1}M{:.1} {yhi:.1}H{:.1}" stroke="{}" stroke-width="1" fill="none" opacity="0.7"><title>{}: [{lo:.2}, {hi:.2}]</title></path>"#,
                xe - 3.0,
                xe + 3.0,
                xe - 3.0,
                xe + 3.0,
                color(i),
                escape_html(&s.name)
            );
        }
        c.polyline(&points, &color(i), false);
    }
    c.x_axis(&labels, x_title);
    let entries: Vec<(String, String, bool)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), color(i), false))
        .collect();
    c.legend(&entries, 16.0);
    c.finish()
}

/// Bars on the left axis (percent) with lines on a right axis (percent): the sweep
/// figure, EM bars with the timeout rate as a line. Bars and lines pair by index.
/// `references` are dashed horizontal lines on the bars' axis (`(41.9, "ReAct EM")`).
#[allow(clippy::too_many_arguments)]
pub fn bar_line_chart(
    title: &str,
    caption: &str,
    x_title: &str,
    (bar_title, line_title): (&str, &str),
    categories: &[String],
    bar_series: &[Series],
    line_series: &[Series],
    references: &[(f64, String)],
) -> String {
    let mut c = Canvas::new(title, caption);
    bars(&mut c, categories, bar_series, 100.0);
    for (v, label) in references {
        let y = c.y(*v, 100.0);
        let _ = write!(
            c.out,
            r##"<line class="reference" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{:.1}" y="{:.1}" font-size="10" fill="#d62728" text-anchor="end">{}</text>"##,
            LEFT + c.plot_w,
            LEFT + c.plot_w - 4.0,
            y - 4.0,
            escape_html(label)
        );
    }
    let positions = category_positions(&c, categories);
    for (i, s) in line_series.iter().enumerate() {
        let points: Vec<(f64, f64)> = positions
            .iter()
            .zip(&s.values)
            .filter_map(|((x, _), v)| v.map(|v| (*x, c.y(v, 100.0))))
            .collect();
        c.polyline(&points, &color(i), true);
    }
    c.y_axis(100.0, bar_title, false);
    c.y_axis(100.0, line_title, true);
    c.x_axis(&positions, x_title);
    let mut entries: Vec<(String, String, bool)> = Vec::new();
    for (i, s) in bar_series.iter().enumerate() {
        entries.push((s.name.clone(), color(i), false));
    }
    for (i, s) in line_series.iter().enumerate() {
        entries.push((s.name.clone(), color(i), true));
    }
    c.legend(&entries, 56.0);
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_and_escape_names() {
        let cats = vec!["2".to_string(), "3".to_string()];
        let s = vec![Series::new("a<b>&", vec![Some(40.0), None])];
        for svg in [
            bar_chart("T", "n = 1", "hops", "EM", &cats, &s),
            line_chart("T", "n = 1", "turn", "EM", &[1.0, 2.0], &s, true),
            bar_line_chart("T", "n = 1", "x", ("EM", "timeout"), &cats, &s, &s, &[]),
            diff_chart("T", "n = 1", "x", "ΔEM", &cats, &s),
        ] {
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            assert!(svg.contains("a&lt;b&gt;&amp;") && !svg.contains("a<b>"));
            assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
        }
    }

    #[test]
    fn bar_height_is_proportional_to_value() {
        let svg = bar_chart(
            "T",
            "",
            "x",
            "y",
            &["c".into()],
            &[Series::new("s", vec![Some(50.0)])],
        );
        let plot_h = HEIGHT - TOP - BOTTOM;
        assert!(
            svg.contains(&format!(r#"height="{:.1}""#, plot_h / 2.0)),
            "{svg}"
        );
    }

    #[test]
    fn thirty_series_get_thirty_colours_and_a_canvas_that_holds_the_legend() {
        let colours: std::collections::BTreeSet<String> = (0..30).map(color).collect();
        assert_eq!(colours.len(), 30);
        let series: Vec<Series> = (0..30)
            .map(|i| Series::new(format!("arm {i}"), vec![Some(i as f64)]))
            .collect();
        let svg = line_chart("T", "", "turn", "EM", &[1.0], &series, true);
        let height = canvas_height(30, 0.0);
        assert!(svg.contains(&format!(r#"height="{height}""#)), "{svg}");
        let last_row = TOP + 8.0 + 18.0 * 29.0 + 4.0;
        assert!(last_row < height, "{last_row} inside {height}");
    }

    #[test]
    fn diff_chart_draws_negative_bars_and_error_bars() {
        let s = Series::new("m", vec![Some(-10.0), Some(5.0)])
            .with_errors(vec![Some((-20.0, 0.0)), Some((-1.0, 12.0))]);
        let svg = diff_chart("T", "", "x", "ΔEM", &["a".into(), "b".into()], &[s]);
        assert_eq!(svg.matches("class=\"error-bar\"").count(), 2, "{svg}");
        assert!(svg.contains("[-20.0, 0.0]"));
    }

    #[test]
    fn line_chart_marked_draws_intervals_and_the_mark() {
        let s = Series::new("facts", vec![Some(1.0), Some(2.5), Some(3.0)]).with_errors(vec![
            Some((0.5, 1.5)),
            Some((2.0, 3.0)),
            None,
        ]);
        let svg = line_chart_marked(
            "T",
            "",
            "turn",
            "mean entries",
            &[1.0, 2.0, 3.0],
            &[s],
            false,
            &[(2.0, "nudge (turn 2)".into())],
        );
        assert_eq!(svg.matches("class=\"error-bar\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"mark\"").count(), 1);
        assert!(svg.contains(">nudge (turn 2)</text>"));
    }

    #[test]
    fn bar_notes_sit_above_their_bars_and_are_escaped() {
        let s = Series::new("m", vec![Some(50.0)])
            .with_errors(vec![Some((30.0, 70.0))])
            .with_notes(vec![Some("n=<3>".into())]);
        let svg = bar_chart("T", "", "x", "y", &["c".into()], &[s]);
        assert!(svg.contains(">n=&lt;3&gt;</text>"), "{svg}");
    }
}
