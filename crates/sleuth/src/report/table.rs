//! A plain table and its three renderings: aligned Markdown for the terminal, CSV and
//! JSON (an array of row objects, numbers kept as numbers) for other tools.

use serde_json::{Map, Value};

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
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    pub fn opt(v: Option<f64>, digits: usize) -> Cell {
        v.map_or(Cell::Missing, |v| Cell::Num(v, digits))
    }

    fn display(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Num(v, d) => format!("{v:.d$}", d = *d),
            Cell::Int(i) => i.to_string(),
            Cell::Missing => "-".to_string(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Num(v, _) => v.to_string(),
            Cell::Missing => String::new(),
            other => other.display(),
        }
    }

    fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::String(s.clone()),
            Cell::Num(v, _) => serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number),
            Cell::Int(i) => Value::from(*i),
            Cell::Missing => Value::Null,
        }
    }

    fn numeric(&self) -> bool {
        matches!(self, Cell::Num(..) | Cell::Int(_))
    }
}

/// A titled table; `name` is its file stem in `--out` (`summary.csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// A line printed under the table (what the columns mean).
    pub note: Option<String>,
}

impl Table {
    pub fn new(name: &str, title: &str, columns: &[&str]) -> Table {
        Table {
            name: name.to_string(),
            title: title.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            note: None,
        }
    }

    pub fn with_note(mut self, note: &str) -> Table {
        self.note = Some(note.to_string());
        self
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row width of {}", self.name);
        self.rows.push(row);
    }

    /// A Markdown table with padded columns (numbers right-aligned), preceded by its
    /// title as a heading and followed by its note.
    pub fn to_markdown(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.display().replace('|', "\\|")).collect())
            .collect();
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

    /// RFC 4180 CSV with a header row; full precision numbers.
    pub fn to_csv(&self) -> String {
        let mut out = csv_line(self.columns.iter().map(String::as_str));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::csv).collect();
            out += &csv_line(cells.iter().map(String::as_str));
        }
        out
    }

    /// `{"title": .., "columns": [..], "rows": [{column: value}, ..]}`.
    pub fn to_json(&self) -> Value {
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let obj: Map<String, Value> = self
                    .columns
                    .iter()
                    .cloned()
                    .zip(r.iter().map(Cell::json))
                    .collect();
                Value::Object(obj)
            })
            .collect();
        serde_json::json!({ "name": self.name, "title": self.title, "columns": self.columns, "rows": Value::Array(rows) })
    }
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
mod tests {
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
    fn csv_quotes_and_keeps_precision() {
        assert_eq!(
            sample().to_csv(),
            "method,EM,note\nreact,41.25,\"a, \"\"b\"\"\"\nsleuth,,x|y\n"
        );
    }

    #[test]
    fn json_rows_are_objects_with_numbers() {
        let j = sample().to_json();
        assert_eq!(j["rows"][0]["EM"], serde_json::json!(41.25));
        assert_eq!(j["rows"][1]["EM"], Value::Null);
    }
}
