//! A plain table and its renderings: aligned Markdown for the terminal, and for other
//! tools (pandas, R, DuckDB) CSV, JSON and JSON Lines in tidy form: snake_case column
//! keys and one value per cell, so a packed display cell such as `+1.0 [-2.0, +4.0]`
//! becomes three numeric columns.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// One cell: numbers keep their value for CSV/JSON and their display precision for
/// Markdown.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// A number shown with `digits` decimals.
    Num(f64, usize),
    Int(u64),
    /// Not applicable / not available: `-` in Markdown, empty in CSV, null in JSON.
    Missing,
    /// Several values shown as one string in Markdown (`+1.0 [-2.0, +4.0]`, `2/0/4`)
    /// and written as one column each in the tidy forms (see [`Table::split`]).
    Multi(String, Vec<Cell>),
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    pub fn opt(v: Option<f64>, digits: usize) -> Cell {
        v.map_or(Cell::Missing, |v| Cell::Num(v, digits))
    }

    pub(crate) fn display(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Num(v, d) => format!("{v:.d$}", d = *d),
            Cell::Int(i) => i.to_string(),
            Cell::Missing => "-".to_string(),
            Cell::Multi(shown, _) => shown.clone(),
        }
    }

    /// The cells this one stands for in the tidy forms.
    fn parts(&self) -> Vec<&Cell> {
        match self {
            Cell::Multi(_, parts) => parts.iter().collect(),
            other => vec![other],
        }
    }

    /// The CSV form. Text (which may come from a dataset or a model) that starts with
    /// `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with `'`, the OWASP
    /// rule against formula injection: a spreadsheet would run `=HYPERLINK(...)`.
    /// Numbers are written by us and stay numbers.
    fn csv(&self) -> String {
        match self {
            Cell::Num(v, _) => v.to_string(),
            Cell::Missing => String::new(),
            Cell::Multi(..) => unreachable!("tidy forms split multi-value cells"),
            Cell::Text(s) if s.starts_with(['=', '+', '-', '@', '\t', '\r']) => format!("'{s}"),
            other => other.display(),
        }
    }

    fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Num(v, _) => serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number),
            Cell::Int(i) => Value::from(*i),
            Cell::Missing => Value::Null,
            Cell::Multi(..) => unreachable!("tidy forms split multi-value cells"),
        }
    }

    /// The first number a cell holds (a packed cell's first part).
    pub fn first_value(&self) -> Option<f64> {
        match self {
            Cell::Num(v, _) => Some(*v),
            Cell::Int(i) => Some(*i as f64),
            Cell::Multi(_, parts) => parts.first().and_then(Cell::first_value),
            _ => None,
        }
    }

    fn numeric(&self) -> bool {
        match self {
            Cell::Num(..) | Cell::Int(_) => true,
            Cell::Multi(_, parts) => parts.len() == 1 && parts[0].numeric(),
            _ => false,
        }
    }
}

/// A titled table; `name` is its file stem in `--out` (`summary.csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub columns: Vec<String>,
    /// Per column, the tidy keys it is written under: one per value of its cells
    /// (`snake_case` of the label unless [`Table::split`] says otherwise).
    pub keys: Vec<Vec<String>>,
    pub rows: Vec<Vec<Cell>>,
    /// A line printed under the table (what the columns mean).
    pub note: Option<String>,
    /// Cells shown in bold (row, column): the papers' best value per column.
    pub bold: BTreeSet<(usize, usize)>,
    /// Row groups: (first row, label). A rule separates blocks (a `\midrule` in
    /// LaTeX; in Markdown and HTML a row with the label in italics).
    pub blocks: Vec<(usize, String)>,
}

impl Table {
    pub fn new(name: &str, title: &str, columns: &[&str]) -> Table {
        Table {
            name: name.to_string(),
            title: title.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            keys: columns.iter().map(|c| vec![snake_case(c)]).collect(),
            rows: Vec::new(),
            note: None,
            bold: BTreeSet::new(),
            blocks: Vec::new(),
        }
    }

    /// Starts a block of rows here: the rows pushed next belong to it.
    pub fn block(&mut self, label: &str) {
        self.blocks.retain(|(start, _)| *start != self.rows.len());
        self.blocks.push((self.rows.len(), label.to_string()));
    }

    /// The label of the block that starts at `row`, if one does.
    pub fn block_at(&self, row: usize) -> Option<&str> {
        self.blocks
            .iter()
            .find(|(start, _)| *start == row)
            .map(|(_, l)| l.as_str())
    }

    /// The block label of every row ("" before the first block).
    pub fn block_of_rows(&self) -> Vec<&str> {
        let mut current = "";
        (0..self.rows.len())
            .map(|i| {
                if let Some(l) = self.block_at(i) {
                    current = l;
                }
                current
            })
            .collect()
    }

    /// Marks, in each column of `columns`, the cells holding the largest (or with
    /// `lowest`, the smallest) first value, among rows for which `candidate` holds:
    /// the papers' "best result in bold". Ties are all bold.
    pub fn bold_best(
        &mut self,
        columns: &[usize],
        lowest: bool,
        candidate: &dyn Fn(usize) -> bool,
    ) {
        for &c in columns {
            let values: Vec<(usize, f64)> = (0..self.rows.len())
                .filter(|&r| candidate(r))
                .filter_map(|r| {
                    self.rows[r]
                        .get(c)
                        .and_then(Cell::first_value)
                        .map(|v| (r, v))
                })
                .collect();
            let best = values
                .iter()
                .map(|(_, v)| *v)
                .fold(None, |b: Option<f64>, v| {
                    Some(match b {
                        None => v,
                        Some(b) if lowest => b.min(v),
                        Some(b) => b.max(v),
                    })
                });
            let Some(best) = best else { continue };
            for (r, v) in values {
                // Equal as shown: compare at the cell's display precision.
                if (v - best).abs() < 1e-9 {
                    self.bold.insert((r, c));
                }
            }
        }
    }

    pub fn with_note(mut self, note: &str) -> Table {
        self.note = Some(note.to_string());
        self
    }

    /// Writes column `label` under several tidy keys, one per part of its
    /// [`Cell::Multi`] cells.
    pub fn split(mut self, label: &str, keys: &[&str]) -> Table {
        let i = self
            .columns
            .iter()
            .position(|c| c == label)
            .unwrap_or_else(|| panic!("no column {label} in {}", self.name));
        self.keys[i] = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width of {}", self.name);
        debug_assert!(
            row.iter()
                .zip(&self.keys)
                .all(|(c, k)| c.parts().len() == k.len()),
            "cell parts of {} match its keys",
            self.name
        );
        self.rows.push(row);
    }

    /// The tidy header: every key of every column.
    /// A table with blocks starts with a `block` key (each row's block label).
    pub fn tidy_keys(&self) -> Vec<&str> {
        let block = (!self.blocks.is_empty()).then_some("block");
        block
            .into_iter()
            .chain(self.keys.iter().flatten().map(String::as_str))
            .collect()
    }

    /// Row `i`'s tidy cells, its block label first when the table has blocks.
    fn tidy_row(&self, i: usize) -> Vec<Cell> {
        let block = (!self.blocks.is_empty()).then(|| Cell::text(self.block_of_rows()[i]));
        block
            .into_iter()
            .chain(self.rows[i].iter().flat_map(Cell::parts).cloned())
            .collect()
    }

    /// A Markdown table with padded columns (numbers right-aligned), preceded by its
    /// title as a heading and followed by its note.
    pub fn to_markdown(&self) -> String {
        let mut cells: Vec<Vec<String>> = Vec::new();
        for (r, row) in self.rows.iter().enumerate() {
            if let Some(label) = self.block_at(r).filter(|l| !l.is_empty()) {
                let mut sep = vec![String::new(); self.columns.len()];
                sep[0] = format!("*{}*", label.replace('|', "\\|"));
                cells.push(sep);
            }
            cells.push(
                row.iter()
                    .enumerate()
                    .map(|(c, cell)| {
                        let shown = cell.display().replace('|', "\\|");
                        if self.bold.contains(&(r, c)) {
                            format!("**{shown}**")
                        } else {
                            shown
                        }
                    })
                    .collect(),
            );
        }
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|i| {
                cells
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain([self.columns[i].chars().count(), 3])
                    .max()
                    .unwrap_or(3)
            })
            .collect();
        let right: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                !self.rows.is_empty()
                    && self
                        .rows
                        .iter()
                        .all(|r| r[i].numeric() || r[i] == Cell::Missing)
            })
            .collect();
        let pad = |s: &str, i: usize| {
            let fill = " ".repeat(widths[i] - s.chars().count());
            if right[i] {
                format!("{fill}{s}")
            } else {
                format!("{s}{fill}")
            }
        };
        let line = |items: Vec<String>| format!("| {} |\n", items.join(" | "));
        let mut out = format!("### {}\n\n", self.title);
        out += &line(
            self.columns
                .iter()
                .enumerate()
                .map(|(i, c)| pad(c, i))
                .collect(),
        );
        out += &line(
            widths
                .iter()
                .zip(&right)
                .map(|(w, r)| {
                    if *r {
                        format!("{}:", "-".repeat(w - 1))
                    } else {
                        "-".repeat(*w)
                    }
                })
                .collect(),
        );
        for row in &cells {
            out += &line(row.iter().enumerate().map(|(i, c)| pad(c, i)).collect());
        }
        if let Some(note) = &self.note {
            out += &format!("\n{note}\n");
        }
        out
    }

    /// Whether each column is right-aligned: every cell a number or missing.
    pub(crate) fn right_aligned(&self) -> Vec<bool> {
        (0..self.columns.len())
            .map(|i| {
                !self.rows.is_empty()
                    && self.rows.iter().all(|r| {
                        r[i].numeric() || r[i] == Cell::Missing || r[i].first_value().is_some()
                    })
            })
            .collect()
    }

    /// Tidy RFC 4180 CSV: a header of snake_case keys, one value per cell, full
    /// precision numbers, empty where a value is missing.
    pub fn to_csv(&self) -> String {
        let mut out = csv_line(self.tidy_keys().into_iter());
        for i in 0..self.rows.len() {
            let cells: Vec<String> = self.tidy_row(i).iter().map(Cell::csv).collect();
            out += &csv_line(cells.iter().map(String::as_str));
        }
        out
    }

    /// The tidy rows as objects keyed by snake_case keys.
    fn row_objects(&self) -> Vec<Value> {
        let keys = self.tidy_keys();
        (0..self.rows.len())
            .map(|i| {
                let obj: Map<String, Value> = keys
                    .iter()
                    .map(|k| k.to_string())
                    .zip(self.tidy_row(i).iter().map(Cell::json))
                    .collect();
                Value::Object(obj)
            })
            .collect()
    }

    /// `{"name", "title", "columns": [tidy keys], "labels": [display labels],
    /// "rows": [{key: value}, ..]}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "title": self.title,
            "columns": self.tidy_keys(),
            "labels": self.columns,
            "rows": Value::Array(self.row_objects()),
        })
    }

    /// One JSON object per row and line (the tidy rows of [`Table::to_json`]).
    pub fn to_jsonl(&self) -> String {
        self.row_objects()
            .iter()
            .map(|v| format!("{v}\n"))
            .collect()
    }
}

/// A display label as a tidy key: lower case, `%` as `pct`, `/q` as `_per_q`, every
/// other run of non-alphanumerics as one `_` (`timeout %` -> `timeout_pct`).
pub fn snake_case(label: &str) -> String {
    let spelled = label
        .to_lowercase()
        .replace('%', " pct")
        .replace("/q", " per q")
        .replace('≥', "min ");
    let mut out = String::new();
    for c in spelled.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

fn csv_line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = cells
        .map(|c| {
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        })
        .collect();
    format!("{}\n", quoted.join(","))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("t", "Sample", &["method", "EM", "note"]);
        t.push(vec![
            Cell::text("react"),
            Cell::Num(41.25, 1),
            Cell::text("a, \"b\""),
        ]);
        t.push(vec![Cell::text("sleuth"), Cell::Missing, Cell::text("x|y")]);
        t
    }

    #[test]
    fn markdown_aligns_and_escapes_pipes() {
        let want = "### Sample\n\n\
| method |   EM | note   |\n\
| ------ | ---: | ------ |\n\
| react  | 41.2 | a, \"b\" |\n\
| sleuth |    - | x\\|y   |\n";
        assert_eq!(sample().to_markdown(), want);
    }

    #[test]
    fn csv_text_that_a_spreadsheet_would_run_is_neutralised() {
        let mut t = Table::new("t", "T", &["kind", "n"]);
        for s in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+1",
            "-2",
            "@SUM(A1)",
            "\tx",
            "\rx",
            "ok",
        ] {
            t.push(vec![Cell::text(s), Cell::Num(-1.5, 1)]);
        }
        let csv = t.to_csv();
        let cells: Vec<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.rsplit_once(',').unwrap().0)
            .collect();
        assert_eq!(
            cells,
            [
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"",
                "'+1",
                "'-2",
                "'@SUM(A1)",
                "'\tx",
                "\"'\rx\"",
                "ok"
            ]
        );
        assert!(
            csv.lines().skip(1).all(|l| l.ends_with(",-1.5")),
            "numbers stay numbers"
        );
    }

    #[test]
    fn csv_quotes_and_keeps_precision() {
        assert_eq!(
            sample().to_csv(),
            "method,em,note\nreact,41.25,\"a, \"\"b\"\"\"\nsleuth,,x|y\n"
        );
    }

    #[test]
    fn multi_cells_show_packed_and_write_one_value_per_column() {
        let mut t = Table::new("c", "C", &["method", "ΔEM [95% CI]", "W/L/T"])
            .split("ΔEM [95% CI]", &["diff", "ci_lo", "ci_hi"])
            .split("W/L/T", &["wins", "losses", "ties"]);
        t.push(vec![
            Cell::text("sleuth"),
            Cell::Multi(
                "+1.0 [-2.0, +4.0]".into(),
                vec![Cell::Num(1.0, 1), Cell::Num(-2.0, 1), Cell::Num(4.0, 1)],
            ),
            Cell::Multi(
                "2/0/4".into(),
                vec![Cell::Int(2), Cell::Int(0), Cell::Int(4)],
            ),
        ]);
        assert!(t
            .to_markdown()
            .contains("| sleuth | +1.0 [-2.0, +4.0] | 2/0/4 |"));
        assert_eq!(
            t.to_csv(),
            "method,diff,ci_lo,ci_hi,wins,losses,ties\nsleuth,1,-2,4,2,0,4\n"
        );
        assert_eq!(
            t.to_jsonl(),
            "{\"method\":\"sleuth\",\"diff\":1.0,\"ci_lo\":-2.0,\"ci_hi\":4.0,\"wins\":2,\"losses\":0,\"ties\":4}\n"
        );
    }

    #[test]
    fn labels_become_snake_case_keys() {
        for (label, key) in [
            ("cond. acc", "cond_acc"),
            ("timeout %", "timeout_pct"),
            ("calls/q", "calls_per_q"),
            ("rejected: not_allowed", "rejected_not_allowed"),
            ("EM", "em"),
        ] {
            assert_eq!(snake_case(label), key);
        }
    }

    #[test]
    fn json_rows_are_objects_with_numbers() {
        let j = sample().to_json();
        assert_eq!(j["rows"][0]["em"], serde_json::json!(41.25));
        assert_eq!(j["rows"][1]["em"], Value::Null);
    }

    pub(crate) fn blocked() -> Table {
        let mut t = Table::new("b", "Best & worst_case", &["method", "EM (%)"]);
        t.block("top");
        t.push(vec![Cell::text("a_b"), Cell::Num(10.0, 1)]);
        t.push(vec![Cell::text("c"), Cell::Num(30.0, 1)]);
        t.block("bottom");
        t.push(vec![Cell::text("d"), Cell::Num(20.0, 1)]);
        t.bold_best(&[1], false, &|_| true);
        t
    }

    #[test]
    fn bold_and_blocks_show_in_markdown_and_tidy_forms() {
        let t = blocked();
        assert_eq!(t.bold, BTreeSet::from([(1, 1)]));
        let md = t.to_markdown();
        assert!(
            md.contains("| *top*    |          |\n| a_b      |     10.0 |"),
            "{md}"
        );
        assert!(md.contains("| c        | **30.0** |"), "{md}");
        assert!(md.find("*top*").unwrap() < md.find("*bottom*").unwrap());
        assert_eq!(
            t.to_csv(),
            "block,method,em_pct\ntop,a_b,10\ntop,c,30\nbottom,d,20\n"
        );
    }
}
