//! Benchmark reports as one self-contained HTML file: notes, tables, and a latency plot per endpoint drawn as
//! inline SVG, with no JavaScript and nothing fetched, so the file can be attached to a pull request, mailed
//! or opened from disk years later and look the same.
//!
//! Each [`Plot`] shows the empirical CDF of every [`Series`] (the share of requests at or below a latency) on a
//! log-scaled latency axis: one line per side, so A against B is two curves, a shift right is "slower", and the
//! whole distribution, tail included, is visible at once rather than a few percentiles. Medians are dashed
//! vertical lines and the legend gives n, p50 and p99 (nearest-rank, from [`crate::stats`]).
//!
//! What a reader must not break: everything that comes from the caller is HTML-escaped (labels can be URL
//! paths with `&` and `<`), and no number printed into the SVG may be NaN or infinite (a browser drops the
//! whole element): samples are clamped into [`FLOOR_MS`, `CEILING_MS`] before anything is computed.

use crate::stats;

/// One side's latencies for one endpoint: what one curve of a [`Plot`] shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// The name in the legend, e.g. `"A (main)"`.
    pub label: String,
    /// Latencies in milliseconds, in any order. Values at or below 0 are drawn at [`FLOOR_MS`] (a log axis has
    /// no 0), values above [`CEILING_MS`] at the ceiling, and NaNs are left out.
    pub samples_ms: Vec<f64>,
}

/// One endpoint's plot: one series, or two when comparing A and B (more are drawn, in more colours).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plot {
    /// The heading above the plot, e.g. `"POST /client/game/start"`.
    pub title: String,
    /// The curves, in legend order.
    pub series: Vec<Series>,
}

/// A plain table, e.g. medians with min–max and p per configuration. Columns whose cells all start like a
/// number (`12.3`, `+9%`, `<0.001`) are right-aligned so that digits line up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// The line above the table saying what it is.
    pub caption: String,
    /// The column headings.
    pub header: Vec<String>,
    /// The cells, row by row; a short row is padded with empty cells.
    pub rows: Vec<Vec<String>>,
}

/// A whole report: rendered in this order as a title, notes (how it was measured), tables, then plots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The page title and heading.
    pub title: String,
    /// Paragraphs of method and context, one bullet each.
    pub notes: Vec<String>,
    /// The tables, in order.
    pub tables: Vec<Table>,
    /// The plots, in order.
    pub plots: Vec<Plot>,
}

/// The smallest latency the axis shows, in ms (1 µs). Samples at or below it, including 0 and negatives from a
/// clock that stepped, are drawn here: a log axis cannot show them, and dropping them would hide them.
pub const FLOOR_MS: f64 = 1e-3;

/// The largest latency the axis shows, in ms (about 11.6 days). Larger values, including infinity, are drawn
/// here, which keeps the 1-2-5 ticks finite and few.
pub const CEILING_MS: f64 = 1e9;

/// The report as a complete HTML document. Any report renders, an empty one included.
pub fn html(report: &Report) -> String {
    // An empty <title> is invalid HTML, and the tab needs a name.
    let title = if report.title.trim().is_empty() { "Benchmark report" } else { report.title.as_str() };
    let mut out = String::with_capacity(16 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n", escape(title)));
    out.push_str(&format!("<h1>{}</h1>\n", escape(title)));
    if !report.notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for note in &report.notes {
            out.push_str(&format!("<li>{}</li>\n", escape(note)));
        }
        out.push_str("</ul>\n");
    }
    for table in &report.tables {
        out.push_str(&table_html(table));
    }
    if !report.plots.is_empty() {
        out.push_str("<div class=\"plots\">\n");
        for plot in &report.plots {
            out.push_str(&format!("<figure>\n{}</figure>\n", plot_svg(plot)));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The page's only styling. Tables: thin rules and tabular digits so columns of numbers compare at a glance;
/// plots: side by side when the window is wide, scaled down when it is not.
const CSS: &str = "\
body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#222;max-width:1340px;\
margin:2em auto;padding:0 1em}\
h1{font-size:1.45em;margin:0 0 .6em}\
ul.notes{color:#444;padding-left:1.2em;max-width:60em}\
.table{overflow-x:auto;margin:1.6em 0}\
table{border-collapse:collapse}\
caption{text-align:left;font-weight:600;padding-bottom:.4em}\
th,td{padding:.28em .8em;border-bottom:1px solid #e6e6e6;text-align:left;white-space:nowrap}\
th{border-bottom:2px solid #bbb;font-weight:600}\
.num{text-align:right;font-variant-numeric:tabular-nums}\
tbody tr:hover{background:#f5f7fa}\
.plots{display:flex;flex-wrap:wrap;gap:1.5em;margin-top:1.6em}\
figure{margin:0}\
svg{max-width:100%;height:auto;display:block}";

/// Escapes the five characters that are markup in HTML text and in quoted attributes.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn table_html(table: &Table) -> String {
    let columns = table.rows.iter().map(Vec::len).chain([table.header.len()]).max().unwrap_or(0);
    // A column is numeric when it has a value and every value in it looks like a number; empty cells (a
    // configuration spanning several metric rows) don't count against it.
    let numeric: Vec<bool> = (0..columns)
        .map(|c| {
            let mut cells = table.rows.iter().filter_map(|r| r.get(c)).filter(|s| !s.trim().is_empty()).peekable();
            cells.peek().is_some() && cells.all(|s| looks_numeric(s))
        })
        .collect();
    let class = |c: usize| if numeric[c] { " class=\"num\"" } else { "" };
    let mut out = String::from("<div class=\"table\"><table>\n");
    if !table.caption.is_empty() {
        out.push_str(&format!("<caption>{}</caption>\n", escape(&table.caption)));
    }
    if !table.header.is_empty() {
        out.push_str("<thead><tr>");
        for c in 0..columns {
            let cell = table.header.get(c).map_or("", String::as_str);
            out.push_str(&format!("<th{}>{}</th>", class(c), escape(cell)));
        }
        out.push_str("</tr></thead>\n");
    }
    out.push_str("<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for c in 0..columns {
            let cell = row.get(c).map_or("", String::as_str);
            out.push_str(&format!("<td{}>{}</td>", class(c), escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

/// Whether a cell reads as a number: an optional sign or comparison, then a digit (or `.` and a digit).
fn looks_numeric(cell: &str) -> bool {
    let rest = cell.trim_start().trim_start_matches(['+', '-', '−', '±', '~', '<', '>', '≤', '≥', ' ']);
    let mut chars = rest.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

// The SVG's geometry, in its own pixels (it scales down with the window).
const WIDTH: f64 = 640.0;
/// Room for the "100%" labels and the rotated axis title.
const LEFT: f64 = 58.0;
const RIGHT: f64 = 18.0;
const PLOT_WIDTH: f64 = WIDTH - LEFT - RIGHT;
const PLOT_HEIGHT: f64 = 240.0;
/// Where the legend starts, below the title; one row per series.
const LEGEND_TOP: f64 = 34.0;
const LEGEND_ROW: f64 = 18.0;
/// Below the plot: tick labels and the axis title.
const BOTTOM: f64 = 46.0;
/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies, and A/B are blue/vermillion.
const COLOURS: [&str; 7] = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"];
/// Longest label drawn in the legend, in characters; the full one is in the tooltip.
const LABEL_CHARS: usize = 28;

/// One series ready to draw: clamped, sorted samples and their summary.
struct Curve<'a> {
    label: &'a str,
    colour: &'static str,
    sorted: Vec<f64>,
    summary: stats::Summary,
}

/// `samples` as the axis can show them: NaNs dropped, the rest clamped into [FLOOR_MS, CEILING_MS], sorted.
fn clamped(samples: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = samples.iter().filter(|x| !x.is_nan()).map(|x| x.clamp(FLOOR_MS, CEILING_MS)).collect();
    out.sort_by(f64::total_cmp);
    out
}

fn plot_svg(plot: &Plot) -> String {
    let curves: Vec<Curve<'_>> = plot
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sorted = clamped(&s.samples_ms);
            let summary = stats::summarize(&sorted);
            Curve { label: &s.label, colour: COLOURS[i % COLOURS.len()], sorted, summary }
        })
        .collect();
    let drawn = curves.iter().filter(|c| c.summary.n > 0);
    let min = drawn.clone().map(|c| c.summary.min).fold(f64::INFINITY, f64::min);
    let max = drawn.map(|c| c.summary.max).fold(f64::NEG_INFINITY, f64::max);
    // No samples at all: an axis around 1 ms, so the empty frame still looks like the others.
    let axis = if min <= max { Axis::covering(min, max) } else { Axis::covering(1.0, 1.0) };

    let rows = curves.len().max(1) as f64;
    let top = LEGEND_TOP + rows * LEGEND_ROW + 10.0;
    let bottom = top + PLOT_HEIGHT;
    let height = bottom + BOTTOM;
    let y = |fraction: f64| bottom - fraction * PLOT_HEIGHT;

    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,sans-serif\" \
         font-size=\"11\" fill=\"#333\">\n<title>{t}</title>\n",
        w = num(WIDTH),
        h = num(height),
        t = escape(&plot.title),
    );
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"20\" font-size=\"14\" font-weight=\"600\" fill=\"#222\">{}</text>\n",
        num(LEFT),
        escape(&plot.title)
    ));

    // Grid first, so that the curves are drawn over it. Decades get a darker line than their 2 and 5.
    for tick in &axis.ticks {
        let colour = if tick.mantissa == 1 { "#d0d0d0" } else { "#ececec" };
        let x = num(axis.x(tick.value()));
        svg.push_str(&format!(
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{colour}\"/>\n",
            num(top),
            num(bottom)
        ));
        if axis.labelled(tick) {
            svg.push_str(&format!(
                "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                num(bottom + 15.0),
                tick.label()
            ));
        }
    }
    for quarter in 0..=4 {
        let fraction = f64::from(quarter) / 4.0;
        // The 50% line is where the medians cross: a little stronger than the other quarters.
        let colour = if quarter == 2 { "#d0d0d0" } else { "#ececec" };
        svg.push_str(&format!(
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{colour}\"/>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}%</text>\n",
            num(LEFT),
            num(LEFT + PLOT_WIDTH),
            num(LEFT - 6.0),
            num(y(fraction) + 4.0),
            quarter * 25,
            y = num(y(fraction)),
        ));
    }
    svg.push_str(&format!(
        "<path d=\"M{l},{t}V{b}H{r}\" fill=\"none\" stroke=\"#888\"/>\n\
         <text x=\"{cx}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">latency, ms (log scale)</text>\n\
         <text transform=\"translate(16 {cy}) rotate(-90)\" text-anchor=\"middle\" fill=\"#555\">\
         requests at or below, %</text>\n",
        num(bottom + 36.0),
        l = num(LEFT),
        t = num(top),
        b = num(bottom),
        r = num(LEFT + PLOT_WIDTH),
        cx = num(LEFT + PLOT_WIDTH / 2.0),
        cy = num((top + bottom) / 2.0),
    ));

    for curve in curves.iter().filter(|c| c.summary.n > 0) {
        let tooltip = format!(
            "{}: n {}, p50 {} ms, p99 {} ms",
            escape(curve.label),
            thousands(curve.summary.n),
            ms(curve.summary.p50),
            ms(curve.summary.p99)
        );
        // The median as the legend states it (nearest-rank p50), so that line and number agree; it is where
        // the curve's step crosses 50%.
        let median = num(axis.x(curve.summary.p50));
        svg.push_str(&format!(
            "<line x1=\"{median}\" y1=\"{}\" x2=\"{median}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.2\" \
             stroke-dasharray=\"5 4\" opacity=\"0.85\"><title>{tooltip}</title></line>\n",
            num(top),
            num(bottom),
            curve.colour
        ));
        let mut d = format!("M{},{}", num(LEFT), num(bottom));
        for (x, fraction) in cdf_steps(&curve.sorted, &axis) {
            d.push_str(&format!("H{}V{}", num(x), num(y(fraction))));
        }
        d.push_str(&format!("H{}", num(LEFT + PLOT_WIDTH)));
        svg.push_str(&format!(
            "<path class=\"cdf\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" \
             stroke-linejoin=\"round\"><title>{tooltip}</title></path>\n",
            curve.colour
        ));
    }

    svg.push_str(&legend(&curves));
    svg.push_str("</svg>\n");
    svg
}

/// The legend rows: a swatch, the label, then n, p50 and p99 in columns that line up across rows.
fn legend(curves: &[Curve<'_>]) -> String {
    let mut out = String::new();
    if curves.is_empty() {
        out.push_str(&format!("<text x=\"{}\" y=\"{}\" fill=\"#888\">no series</text>\n", num(LEFT), num(row_y(0))));
        return out;
    }
    let shown: Vec<String> = curves.iter().map(|c| shorten(c.label, LABEL_CHARS)).collect();
    // About 6.6 px per character of an 11 px sans-serif label at weight 600.
    let widest = shown.iter().map(|s| s.chars().count()).max().unwrap_or(0) as f64;
    let stats_x = LEFT + 28.0 + (widest * 6.6).max(20.0) + 14.0;
    for (i, (curve, label)) in curves.iter().zip(&shown).enumerate() {
        let y = row_y(i);
        out.push_str(&format!(
            "<line x1=\"{}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"{c}\" stroke-width=\"2.5\"/>\n\
             <text y=\"{y}\"><title>{full}</title><tspan x=\"{}\" font-weight=\"600\" fill=\"{c}\">{label}</tspan>",
            num(LEFT),
            num(LEFT + 20.0),
            num(LEFT + 28.0),
            y0 = num(y - 4.0),
            y = num(y),
            c = curve.colour,
            full = escape(curve.label),
            label = escape(label),
        ));
        let s = &curve.summary;
        if s.n == 0 {
            out.push_str(&format!("<tspan x=\"{}\" fill=\"#888\">no samples</tspan>", num(stats_x)));
        } else {
            out.push_str(&format!(
                "<tspan x=\"{}\">n {}</tspan><tspan x=\"{}\">p50 {} ms</tspan><tspan x=\"{}\">p99 {} ms</tspan>",
                num(stats_x),
                thousands(s.n),
                num(stats_x + 80.0),
                ms(s.p50),
                num(stats_x + 190.0),
                ms(s.p99),
            ));
        }
        out.push_str("</text>\n");
    }
    out
}

/// The baseline of legend row `i`.
fn row_y(i: usize) -> f64 {
    LEGEND_TOP + 13.0 + i as f64 * LEGEND_ROW
}

/// The empirical CDF of `sorted` as steps: (x in px, fraction of samples ≤ that x) at each x where the
/// fraction rises, with samples that fall on the same half-pixel merged into one step. That keeps a path of a
/// million samples to about a thousand steps, and draws exactly what the unmerged path would at that scale.
fn cdf_steps(sorted: &[f64], axis: &Axis) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut steps: Vec<(f64, f64)> = Vec::new();
    for (i, &v) in sorted.iter().enumerate() {
        let x = (axis.x(v) * 2.0).round() / 2.0;
        let fraction = (i + 1) as f64 / n;
        match steps.last_mut() {
            Some(last) if last.0 == x => last.1 = fraction,
            _ => steps.push((x, fraction)),
        }
    }
    steps
}

/// A log-scaled latency axis whose ends are 1-2-5 ticks covering the data.
#[derive(Debug)]
struct Axis {
    /// Every 1-2-5 value from the low end to the high end, inclusive.
    ticks: Vec<Tick>,
    log_lo: f64,
    /// log10(high end / low end): always positive, so `x` never divides by zero.
    log_span: f64,
}

impl Axis {
    /// The axis from the largest 1-2-5 value ≤ `min` to the smallest ≥ `max` (both within the clamp range).
    /// When those are one value (one sample, or all samples equal to a tick) it widens by a step each way.
    fn covering(min: f64, max: f64) -> Axis {
        let (mut lo, mut hi) = (Tick::at_or_below(min), Tick::at_or_above(max));
        if hi == lo {
            (lo, hi) = (lo.prev(), hi.next());
        }
        let (mut ticks, mut t) = (vec![lo], lo);
        // hi is at or after lo (ticks are a factor of 2 or more apart, wider than the tolerance of the two
        // searches), and within the clamp range there are 37 ticks at most; the bound only guards that argument.
        while t != hi && ticks.len() < 64 {
            t = t.next();
            ticks.push(t);
        }
        let log_lo = lo.value().log10();
        Axis { ticks, log_lo, log_span: hi.value().log10() - log_lo }
    }

    /// The x of latency `v` (ms), clamped to the plot.
    fn x(&self, v: f64) -> f64 {
        let at = (v.max(FLOOR_MS).log10() - self.log_lo) / self.log_span;
        LEFT + at.clamp(0.0, 1.0) * PLOT_WIDTH
    }

    /// Whether a tick gets a label: all of them across up to three decades; past that only the decades, so
    /// that labels (up to 5 characters) never overlap.
    fn labelled(&self, tick: &Tick) -> bool {
        self.log_span <= 3.0 + 1e-9 || tick.mantissa == 1
    }
}

/// A 1-2-5 value: `mantissa` × 10^`exp`, kept apart so labels print exactly (no 0.30000000000000004).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tick {
    /// 1, 2 or 5.
    mantissa: u8,
    exp: i32,
}

impl Tick {
    fn value(self) -> f64 {
        f64::from(self.mantissa) * 10f64.powi(self.exp)
    }

    fn next(self) -> Tick {
        match self.mantissa {
            1 => Tick { mantissa: 2, ..self },
            2 => Tick { mantissa: 5, ..self },
            _ => Tick { mantissa: 1, exp: self.exp + 1 },
        }
    }

    fn prev(self) -> Tick {
        match self.mantissa {
            5 => Tick { mantissa: 2, ..self },
            2 => Tick { mantissa: 1, ..self },
            _ => Tick { mantissa: 5, exp: self.exp - 1 },
        }
    }

    /// The largest tick ≤ `v`. The relative tolerance keeps a value that is a tick up to rounding (0.2
    /// computed as 0.19999999999999998) on that tick rather than a step below it.
    fn at_or_below(v: f64) -> Tick {
        let v = Tick::in_range(v);
        let mut t = Tick { mantissa: 1, exp: v.log10().floor() as i32 + 1 };
        while t.value() > v * (1.0 + 1e-9) {
            t = t.prev();
        }
        t
    }

    /// The smallest tick ≥ `v`.
    fn at_or_above(v: f64) -> Tick {
        let v = Tick::in_range(v);
        let mut t = Tick { mantissa: 5, exp: v.log10().floor() as i32 - 1 };
        while t.value() < v * (1.0 - 1e-9) {
            t = t.next();
        }
        t
    }

    /// `v` clamped into [FLOOR_MS, CEILING_MS], NaN as 1. The samples are clamped already; doing it again here
    /// keeps the searches above finite whatever they are given: at 0 or below they would step down forever.
    fn in_range(v: f64) -> f64 {
        if v.is_nan() { 1.0 } else { v.clamp(FLOOR_MS, CEILING_MS) }
    }

    /// The tick's label in ms: decimal within the usual range, `5e6` style beyond it to stay short.
    fn label(self) -> String {
        match self.exp {
            e if e >= 6 => format!("{}e{e}", self.mantissa),
            e if e >= 0 => format!("{}{}", self.mantissa, "0".repeat(e as usize)),
            e => format!("0.{}{}", "0".repeat((-e - 1) as usize), self.mantissa),
        }
    }
}

/// A coordinate for the SVG: one decimal is finer than a screen pixel. Non-finite values cannot arise from
/// clamped samples; printing 0 instead is a last guard, because a browser drops an element with a NaN in it.
fn num(v: f64) -> String {
    if v.is_finite() { format!("{v:.1}") } else { "0".to_string() }
}

/// A latency in ms to three significant digits, as a reader compares them (1.23, 12.3, 123), and in `1.00e9`
/// style past a million, where digits stop being readable.
fn ms(v: f64) -> String {
    match v {
        v if !v.is_finite() => "?".to_string(),
        v if v >= 1e6 => format!("{v:.2e}"),
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v if v >= 1.0 => format!("{v:.2}"),
        v => format!("{v:.3}"),
    }
}

/// `n` with thousands separators (12,345), since sample counts run to millions.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` cut to `max` characters (not bytes, so never inside a UTF-8 sequence), with an ellipsis if cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, samples_ms: &[f64]) -> Series {
        Series { label: label.to_string(), samples_ms: samples_ms.to_vec() }
    }

    /// Asserts that every element is closed, in order (HTML's void `meta` aside): a cheap stand-in for a parser
    /// that would catch an unclosed `<text>` or a `<tspan>` closed after its `<text>`.
    fn assert_well_nested(doc: &str) {
        let mut open: Vec<&str> = Vec::new();
        let mut rest = doc;
        while let Some(start) = rest.find('<') {
            let end = rest[start..].find('>').map(|e| start + e).unwrap_or_else(|| panic!("unclosed tag: {rest}"));
            let tag = &rest[start + 1..end];
            rest = &rest[end + 1..];
            if tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(name), "closing </{name}> with {open:?} open");
                continue;
            }
            let name = tag.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
            if !tag.ends_with('/') && name != "meta" {
                open.push(name);
            }
        }
        assert!(open.is_empty(), "never closed: {open:?}");
    }

    /// The numbers of one attribute (`name="..."`) everywhere in `svg`.
    fn attribute_values(svg: &str, name: &str) -> Vec<f64> {
        let key = format!(" {name}=\"");
        svg.match_indices(&key)
            .map(|(i, _)| {
                let value = &svg[i + key.len()..];
                let value = &value[..value.find('"').unwrap_or(0)];
                value.parse().unwrap_or_else(|_| panic!("{name}={value:?} is not a number"))
            })
            .collect()
    }

    /// Asserts that every coordinate in every SVG of `doc` is a finite number inside that SVG's viewBox.
    fn assert_coordinates_inside(doc: &str) {
        for svg in doc.split("<svg").skip(1) {
            let svg = &svg[..svg.find("</svg>").expect("unclosed svg")];
            let (width, height) = (attribute_values(svg, "width")[0], attribute_values(svg, "height")[0]);
            for (names, limit) in [(["x", "x1", "x2"], width), (["y", "y1", "y2"], height)] {
                for name in names {
                    for v in attribute_values(svg, name) {
                        assert!((0.0..=limit).contains(&v), "{name}={v} outside 0..={limit}");
                    }
                }
            }
            for (i, _) in svg.match_indices(" d=\"") {
                let d = &svg[i + 4..];
                let d = &d[..d.find('"').unwrap_or(0)];
                // Paths here are M x,y then H x / V y commands.
                let mut command = ' ';
                for token in d.split_inclusive(['M', 'H', 'V']) {
                    let (number, next) = token.split_at(token.len() - token.ends_with(['M', 'H', 'V']) as usize);
                    for (j, part) in number.split(',').filter(|p| !p.is_empty()).enumerate() {
                        let v: f64 = part.parse().unwrap_or_else(|_| panic!("{part:?} in d={d:?}"));
                        let limit = if command == 'V' || (command == 'M' && j == 1) { height } else { width };
                        assert!((0.0..=limit).contains(&v), "{command}{v} outside 0..={limit} in {d}");
                    }
                    command = next.chars().next().unwrap_or(' ');
                }
            }
        }
    }

    #[test]
    fn one_svg_per_plot() {
        let report = Report {
            plots: vec![
                Plot { title: "two".into(), series: vec![series("A", &[1.0, 2.0, 3.0]), series("B", &[2.0, 4.0])] },
                Plot { title: "one".into(), series: vec![series("A", &[0.5; 20])] },
                Plot { title: "none".into(), series: vec![] },
            ],
            ..Report::default()
        };
        let out = html(&report);
        assert_eq!(out.matches("<svg").count(), 3);
        assert_eq!(out.matches("</svg>").count(), 3);
        // One CDF line and one median line per series that has samples.
        assert_eq!(out.matches("class=\"cdf\"").count(), 3);
        assert_eq!(out.matches("stroke-dasharray").count(), 3);
        assert_well_nested(&out);
        assert_coordinates_inside(&out);
    }

    #[test]
    fn degenerate_series_render_without_nan_or_inf() {
        let report = Report {
            title: "degenerate".into(),
            plots: vec![
                Plot {
                    title: "mixed".into(),
                    series: vec![
                        series("empty", &[]),
                        series("single", &[5.0]),
                        series("zeros and negatives", &[0.0, -3.0, 0.0, -0.0]),
                        series("odd floats", &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, 2.0]),
                        series("equal", &[2.0; 10]),
                    ],
                },
                Plot { title: "only empty".into(), series: vec![series("a", &[]), series("b", &[f64::NAN])] },
                Plot { title: "only zero".into(), series: vec![series("a", &[0.0])] },
                Plot { title: "only one tick".into(), series: vec![series("a", &[2.0])] },
                Plot { title: "huge".into(), series: vec![series("a", &[f64::MAX, f64::MAX])] },
            ],
            ..Report::default()
        };
        let out = html(&report);
        let lower = out.to_lowercase();
        assert!(!lower.contains("nan"), "{out}");
        assert!(!lower.contains("inf"), "{out}");
        assert_eq!(out.matches("<svg").count(), 5);
        assert!(out.contains("no samples"));
        // Zeros and negatives are drawn at the floor, infinities at the ceiling, and the legend says so.
        let legend = |label: &str| out.lines().find(|l| l.contains(&format!(">{label}</tspan>"))).unwrap_or("");
        assert!(legend("zeros and negatives").contains(">p50 0.001 ms<"), "{out}");
        let odd = legend("odd floats");
        assert!(odd.contains(">n 4<") && odd.contains(">p50 2.00 ms<") && odd.contains(">p99 1.00e9 ms<"), "{odd}");
        assert_well_nested(&out);
        assert_coordinates_inside(&out);
    }

    #[test]
    fn user_text_is_escaped() {
        let evil = "<script>alert(\"x\" & 'y')</script>";
        let escaped = "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;";
        let text = || evil.to_string();
        let report = Report {
            title: text(),
            notes: vec![text()],
            tables: vec![Table { caption: text(), header: vec![text()], rows: vec![vec![text()]] }],
            plots: vec![Plot { title: text(), series: vec![series(evil, &[1.0])] }],
        };
        let out = html(&report);
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("'y'"), "{out}");
        // <title> and <h1>, note, caption, header, cell, the plot's <title> and heading, and the label in the
        // legend's tooltip and the two curve tooltips; the legend shows it cut short, escaped after the cut.
        assert_eq!(out.matches(escaped).count(), 11, "{out}");
        assert!(out.contains("&#39;y&#39;)&lt;/s…</tspan>"), "{out}");
        assert_well_nested(&out);
    }

    #[test]
    fn empty_report_is_a_valid_document() {
        let out = html(&Report::default());
        assert!(out.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(out.ends_with("</body>\n</html>\n"));
        assert!(out.contains("<meta charset=\"utf-8\">"));
        assert!(out.contains("<title>Benchmark report</title>"));
        assert!(!out.contains("<svg") && !out.contains("<table") && !out.contains("<ul"));
        assert_well_nested(&out);
        // An empty table and an empty plot render too.
        let out = html(&Report { tables: vec![Table::default()], plots: vec![Plot::default()], ..Report::default() });
        assert!(out.contains("<table>") && out.contains("no series"));
        assert_well_nested(&out);
        assert_coordinates_inside(&out);
    }

    #[test]
    fn axis_ticks_are_1_2_5_and_cover_the_data() {
        let labels = |axis: &Axis| axis.ticks.iter().map(|t| t.label()).collect::<Vec<_>>();
        let axis = Axis::covering(0.37, 42.0);
        assert_eq!(labels(&axis), ["0.2", "0.5", "1", "2", "5", "10", "20", "50"]);
        assert!(axis.ticks.iter().all(|t| axis.labelled(t)));
        // Exact ticks are their own ends, also where the float is not exact (0.2 = 2 × 0.1).
        assert_eq!(
            labels(&Axis::covering(0.2, 500.0)),
            ["0.2", "0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500"]
        );
        assert_eq!(labels(&Axis::covering(0.1 + 0.1, 0.1 + 0.2)), ["0.2", "0.5"]);
        // One value widens to a step each side, so the axis has a length.
        assert_eq!(labels(&Axis::covering(2.0, 2.0)), ["1", "2", "5"]);
        assert_eq!(labels(&Axis::covering(3.0, 3.0)), ["2", "5"]);
        assert_eq!(labels(&Axis::covering(FLOOR_MS, FLOOR_MS)), ["0.0005", "0.001", "0.002"]);
        // Out-of-range ends are clamped, not searched for forever.
        assert_eq!(labels(&Axis::covering(-3.0, 0.0)), ["0.0005", "0.001", "0.002"]);
        assert_eq!(Axis::covering(f64::NAN, f64::INFINITY).ticks.last().map(|t| t.label()), Some("1e9".into()));
        // The whole clamp range: 12 decades, and only decades labelled.
        let axis = Axis::covering(FLOOR_MS, CEILING_MS);
        assert_eq!(axis.ticks.len(), 37);
        assert_eq!((axis.ticks[0].label(), axis.ticks[36].label()), ("0.001".to_string(), "1e9".to_string()));
        let shown: Vec<String> = axis.ticks.iter().filter(|t| axis.labelled(t)).map(|t| t.label()).collect();
        assert_eq!(shown[..5], ["0.001", "0.01", "0.1", "1", "10"]);
        assert_eq!(shown.len(), 13);
        // The ends map to the plot's edges, and the scale is logarithmic.
        let axis = Axis::covering(1.0, 100.0);
        assert_eq!(axis.x(1.0), LEFT);
        assert_eq!(axis.x(100.0), LEFT + PLOT_WIDTH);
        assert!((axis.x(10.0) - (LEFT + PLOT_WIDTH / 2.0)).abs() < 1e-9);
    }

    #[test]
    fn cdf_steps_rise_at_each_sample() {
        let axis = Axis::covering(1.0, 100.0);
        let steps = cdf_steps(&[1.0, 10.0, 10.0, 100.0], &axis);
        assert_eq!(steps, [(LEFT, 0.25), (LEFT + PLOT_WIDTH / 2.0, 0.75), (LEFT + PLOT_WIDTH, 1.0)]);
        // Many samples: one step per half-pixel at most, rising, ending at 100%.
        let sorted: Vec<f64> = (1..=100_000).map(|i| f64::from(i) / 1000.0).collect();
        let steps = cdf_steps(&sorted, &Axis::covering(sorted[0], sorted[99_999]));
        assert!(steps.len() <= 2 * PLOT_WIDTH as usize + 1, "{} steps", steps.len());
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert_eq!(steps.last().map(|s| s.1), Some(1.0));
        assert!(cdf_steps(&[], &axis).is_empty());
    }

    #[test]
    fn median_line_and_legend_state_the_summary() {
        let samples: Vec<f64> = (1..=1000).map(f64::from).rev().collect();
        let out = html(&Report {
            plots: vec![Plot { title: "GET /x".into(), series: vec![series("A", &samples)] }],
            ..Report::default()
        });
        assert!(out.contains(">n 1,000<") && out.contains(">p50 500 ms<") && out.contains(">p99 990 ms<"), "{out}");
        // The dashed line stands at p50 = 500 on an axis from 1 to 1000.
        let x = num(Axis::covering(1.0, 1000.0).x(500.0));
        assert!(out.contains(&format!("<line x1=\"{x}\" y1=")), "no line at x = {x}: {out}");
        let dashed = out.lines().find(|l| l.contains("stroke-dasharray")).unwrap_or("");
        assert!(dashed.starts_with(&format!("<line x1=\"{x}\"")), "{dashed}");
    }

    #[test]
    fn numeric_columns_are_right_aligned() {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let table = Table {
            caption: "server".into(),
            header: row(&["configuration", "metric", "A median [min-max]", "B vs A", "p"]),
            rows: vec![
                row(&["service 10k", "SUBS response, s", "0.10 [0.09-0.17]", "+9%", "0.56"]),
                row(&["", "delivered/s", "389 [299-456]", "−5%", "<0.001"]),
                row(&["storm", "ACK p50, ms", ".5", "0%"]),
                // An empty cell (nothing measured) leaves its column numeric.
                row(&["", "CPU, us", "", "-2%", "0.70"]),
            ],
        };
        let out = table_html(&table);
        assert!(out.contains(
            "<tr><th>configuration</th><th>metric</th><th class=\"num\">A median [min-max]</th>\
             <th class=\"num\">B vs A</th><th class=\"num\">p</th></tr>"
        ));
        // The short row is padded to the header's width.
        assert!(out.contains("<tr><td>storm</td><td>ACK p50, ms</td><td class=\"num\">.5</td><td class=\"num\">0%</td><td class=\"num\"></td></tr>"), "{out}");
        assert!(!looks_numeric("GET /x") && !looks_numeric(".x") && !looks_numeric("") && !looks_numeric("-"));
        assert!(looks_numeric("1e3") && looks_numeric("± 3") && looks_numeric("~0.2"));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(
            [ms(0.001), ms(0.0456), ms(1.234), ms(12.34), ms(1234.5), ms(1e9)],
            ["0.001", "0.046", "1.23", "12.3", "1234", "1.00e9"]
        );
        assert_eq!(
            [thousands(0), thousands(999), thousands(1000), thousands(1_234_567)],
            ["0", "999", "1,000", "1,234,567"]
        );
        assert_eq!(shorten("åäö-long-label", 5), "åäö-…");
        assert_eq!(shorten("short", 5), "short");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn writes_a_report_for_synthetic_data() {
        // Log-normal-ish latencies: a 1–3 ms body, a B that is 20% slower, and a tail to ~40 ms.
        let mut state = 1u64;
        let mut next = move || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut latency = |scale: f64| scale * (-next().ln()).powf(1.5) + 0.2 * scale;
        let a: Vec<f64> = (0..5000).map(|_| latency(1.5)).collect();
        let b: Vec<f64> = (0..5000).map(|_| latency(1.8)).collect();
        let report = Report {
            title: "modhost-bench: main vs branch".into(),
            notes: vec!["A and B alternate run by run; p is an exact two-sided Mann-Whitney test.".into()],
            tables: vec![Table {
                caption: "latency".into(),
                header: vec!["endpoint".into(), "A p50, ms".into(), "B p50, ms".into()],
                rows: vec![vec!["/client/items".into(), ms(stats::median(&a)), ms(stats::median(&b))]],
            }],
            plots: vec![
                Plot { title: "/client/items".into(), series: vec![series("A (main)", &a), series("B (branch)", &b)] },
                Plot { title: "/client/locale/en".into(), series: vec![series("A", &a[..50])] },
            ],
        };
        let out = html(&report);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("report.html");
        std::fs::write(&path, &out).expect("write report");
        assert_eq!(std::fs::read_to_string(&path).expect("read report"), out);
        assert_well_nested(&out);
        assert_coordinates_inside(&out);
    }
}
