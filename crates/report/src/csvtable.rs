//! Any CSV file with a header line, as columns of text: the input of plots.
//!
//! Result files of `flashbuf run --output csv` and `flashbuf sweep` load like any other tool's
//! CSV; nothing here knows their columns except [`CsvTable::param_keys`], which reads the
//! parameters out of a `policy` column (`cflru:w=0.25` has `w = 0.25`), so that a policy
//! parameter can be plotted as `param:w`.

use std::borrow::Cow;
use std::path::Path;

use crate::plot::PlotError;

/// A CSV table: header names and rows of text cells, each row as long as the header.
#[derive(Clone, Debug, PartialEq)]
pub struct CsvTable {
    /// Where it came from (file name, for messages).
    pub source: String,
    /// Column names, in file order.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// The 1-based line of each row in the file.
    pub lines: Vec<u64>,
}

/// A column of a table: a real one, or a policy parameter read from the `policy` column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnRef {
    /// The column at this index.
    Index(usize),
    /// `param:KEY`: the value of `KEY` in the policy label of column `policy` (index).
    Param {
        /// Index of the `policy` column.
        policy: usize,
        /// The parameter.
        key: String,
    },
}

/// The value of parameter `key` in a policy label `name:k=v,k=v`, if it has one.
pub fn policy_param<'a>(label: &'a str, key: &str) -> Option<&'a str> {
    let (_, params) = label.split_once(':')?;
    params.split(',').filter_map(|kv| kv.split_once('=')).find(|(k, _)| k.trim() == key).map(|(_, v)| v.trim())
}

/// Byte positions of the newlines of `bytes`, in order.
fn newline_positions(bytes: &[u8]) -> Vec<usize> {
    bytes.iter().enumerate().filter(|&(_, &b)| b == b'\n').map(|(i, _)| i).collect()
}

impl CsvTable {
    /// Reads a CSV file with a header line.
    pub fn read(path: &Path) -> Result<Self, PlotError> {
        let file =
            std::fs::File::open(path).map_err(|source| PlotError::Io { path: path.display().to_string(), source })?;
        Self::from_reader(std::io::BufReader::new(file), &path.display().to_string())
    }

    /// Reads CSV text with a header line from `reader`; `source` names it in messages.
    pub fn from_reader<R: std::io::Read>(mut reader: R, source: &str) -> Result<Self, PlotError> {
        let bad = |line: u64, message: String| PlotError::Csv { input: source.to_string(), line, message };
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|source_err| PlotError::Io { path: source.to_string(), source: source_err })?;
        // The csv crate does not count blank lines; count newlines before a record instead
        // (by binary search in their positions: a curve at every buffer size has a million rows).
        let newlines: Vec<usize> = newline_positions(&bytes);
        let line_of = |byte: u64| {
            // A record's position may point at blank lines before it.
            let mut at = (byte as usize).min(bytes.len());
            while at < bytes.len() && matches!(bytes[at], b'\n' | b'\r') {
                at += 1;
            }
            1 + newlines.partition_point(|&p| p < at) as u64
        };
        let mut r = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes.as_slice());
        let columns: Vec<String> =
            r.headers().map_err(|e| bad(1, e.to_string()))?.iter().map(|h| h.trim().to_string()).collect();
        if columns.is_empty() || columns.iter().all(String::is_empty) {
            return Err(bad(1, "no header line".into()));
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| line_of(p.byte())), e.to_string()))?;
            let line = rec.position().map_or(0, |p| line_of(p.byte()));
            if rec.len() == 1 && rec[0].trim().is_empty() {
                continue; // a blank line
            }
            if rec.len() != columns.len() {
                return Err(bad(line, format!("{} fields, but the header has {}", rec.len(), columns.len())));
            }
            rows.push(rec.iter().map(str::to_string).collect());
            lines.push(line);
        }
        Ok(CsvTable { source: source.to_string(), columns, rows, lines })
    }

    /// Resolves a column name: a header name, or `param:KEY` (needs a `policy` column).
    pub fn column(&self, name: &str) -> Result<ColumnRef, PlotError> {
        if let Some(key) = name.strip_prefix("param:") {
            let Some(policy) = self.columns.iter().position(|c| c == "policy") else {
                return Err(self
                    .unknown(name, "param:KEY reads policy parameters from a 'policy' column, which this file lacks"));
            };
            let keys = self.param_keys();
            if !keys.iter().any(|k| k == key) {
                let known = if keys.is_empty() { "none".to_string() } else { keys.join(", ") };
                return Err(self.unknown(name, &format!("policy parameters in this file: {known}")));
            }
            return Ok(ColumnRef::Param { policy, key: key.to_string() });
        }
        self.columns.iter().position(|c| c == name).map(ColumnRef::Index).ok_or_else(|| self.unknown(name, ""))
    }

    fn unknown(&self, name: &str, note: &str) -> PlotError {
        let mut available = self.columns.join(", ");
        let keys = self.param_keys();
        if !keys.is_empty() {
            available.push_str(", ");
            available.push_str(&keys.iter().map(|k| format!("param:{k}")).collect::<Vec<_>>().join(", "));
        }
        PlotError::UnknownColumn {
            name: name.to_string(),
            input: self.source.clone(),
            available,
            note: note.to_string(),
        }
    }

    /// The policy parameters present in the `policy` column, in order of first appearance.
    pub fn param_keys(&self) -> Vec<String> {
        let Some(p) = self.columns.iter().position(|c| c == "policy") else { return Vec::new() };
        let mut keys: Vec<String> = Vec::new();
        for row in &self.rows {
            if let Some((_, params)) = row[p].split_once(':') {
                for k in params.split(',').filter_map(|kv| kv.split_once('=')).map(|(k, _)| k.trim()) {
                    if !keys.iter().any(|x| x == k) {
                        keys.push(k.to_string());
                    }
                }
            }
        }
        keys
    }

    /// The cell of `row` in `column` (`None` when a parameter is absent from the policy).
    pub fn cell(&self, row: usize, column: &ColumnRef) -> Option<Cow<'_, str>> {
        match column {
            ColumnRef::Index(i) => Some(Cow::Borrowed(self.rows[row][*i].as_str())),
            ColumnRef::Param { policy, key } => policy_param(&self.rows[row][*policy], key).map(Cow::Borrowed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_parameters_are_read_from_labels() {
        assert_eq!(policy_param("cflru:w=0.25", "w"), Some("0.25"));
        assert_eq!(policy_param("2q:kin=0.3,kout=0.5", "kout"), Some("0.5"));
        assert_eq!(policy_param("2q:kin=0.3,kout=0.5", "w"), None);
        assert_eq!(policy_param("lru", "w"), None);
    }

    #[test]
    fn ragged_rows_name_their_line() {
        let e = CsvTable::from_reader("a,b\n1,2\n3\n".as_bytes(), "t.csv").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:3:"), "{e}");
        let t = CsvTable::from_reader("a,b\n1,2\n\n3,4\n".as_bytes(), "t.csv").unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.lines, [2, 4]);
    }
}
