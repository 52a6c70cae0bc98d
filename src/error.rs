//! The one error type of the crate. Every problem a user can cause is a variant
//! here, with enough context (file, line, query, document) to fix the input.

use std::path::PathBuf;

/// How the positions of a source count: lines of a file (1-based), rows of a table or
/// of calls (0-based), or none (a dict: its keys name the place).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    /// Lines of a file, from 1.
    #[default]
    Line,
    /// Rows, from 0.
    Row,
    /// No positions.
    None,
}

impl Unit {
    /// The word for a position.
    pub fn word(self) -> &'static str {
        match self {
            Unit::Line => "line",
            Unit::Row => "row",
            Unit::None => "",
        }
    }
}

/// Where a problem was found: a file and a 1-based line number, a table and a row, or
/// an in-memory source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file (or a description such as `<stdin>` or `run`).
    pub source: String,
    /// The line (1-based) or row (0-based); a line 0 means none.
    pub line: u64,
    /// What `line` counts.
    pub unit: Unit,
}

impl Location {
    /// A place in `source`.
    pub fn new(source: &str, line: u64, unit: Unit) -> Location {
        Location {
            source: source.to_string(),
            line,
            unit,
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.unit {
            Unit::Line if self.line > 0 => write!(f, "{}:{}", self.source, self.line),
            Unit::Row => write!(f, "{}, row {}", self.source, self.line),
            _ => write!(f, "{}", self.source),
        }
    }
}

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },

    /// The output could not be written (nothing that was there is lost).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file (or `<stdout>`).
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },

    /// A line (or value) of the input does not follow the format.
    #[error("{location}: {message}")]
    Format {
        /// File and line.
        location: Location,
        /// What is wrong.
        message: String,
    },

    /// The same document occurs twice for one query.
    #[error("{location}: document '{doc}' appears twice for query '{query}'{first}")]
    DuplicateEntry {
        /// File and line of the second occurrence.
        location: Location,
        /// The query id.
        query: String,
        /// The document id.
        doc: String,
        /// ", first at line N" or empty.
        first: String,
    },

    /// The input as a whole cannot be evaluated (empty file, no common query, ...).
    #[error("{0}")]
    Input(String),

    /// A judged query has no results and `complete` (`-c`) was not given.
    #[error(
        "query '{query}' is judged in the qrels but has no results in the run; pass -c \
         (complete=True) to score it as an empty ranking, or remove it from the qrels"
    )]
    MissingQuery {
        /// The query id.
        query: String,
    },

    /// A judged query one of the runs compared has no results for (`complete` not
    /// given): [`Error::MissingQuery`] named with the run.
    #[error(
        "run '{run}' has no results for query '{query}' ({why}); pass complete=True (-c) \
         to score missing queries 0, as trec_eval -c"
    )]
    RunMissingQuery {
        /// The run's name.
        run: String,
        /// The query id.
        query: String,
        /// Why the query is expected: judged, and where else it is.
        why: String,
    },

    /// A measure name or its parameters could not be understood.
    #[error("{0}")]
    Measure(String),

    /// An option has an invalid value.
    #[error("{0}")]
    Option(String),

    /// Evaluation was interrupted (for example by Ctrl-C in Python).
    #[error("interrupted")]
    Interrupted,
}

/// `Result` with the crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn format(source: &str, line: u64, message: impl Into<String>) -> Self {
        Error::Format {
            location: Location::new(source, line, Unit::Line),
            message: message.into(),
        }
    }

    /// Standard output could not be written (`cannot write <stdout>: ...`).
    pub fn stdout_write(source: std::io::Error) -> Self {
        Error::Write {
            path: "<stdout>".into(),
            source,
        }
    }

    /// A write to a pipe whose reader has gone (`irmetrics -q ... | head`): the command
    /// line stops there without a message, as the tools it is piped with do.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// The "did you mean" of every name the crate knows (options, tests, corrections,
/// measures, fusion methods): up to `max` of the `known` names within Levenshtein
/// distance 3 of `name`, closest first, ties in the order given. Both sides are compared
/// as `key` makes them (lower case, and for measures without parameters), and of known
/// names with one key only the first is offered (a canonical name before its alias).
pub(crate) fn suggestions<T: AsRef<str>>(
    name: &str,
    known: impl IntoIterator<Item = T>,
    key: impl Fn(&str) -> String,
    max: usize,
) -> Vec<T> {
    let wanted = key(name.trim());
    let mut scored: Vec<(usize, usize, String, T)> = known
        .into_iter()
        .enumerate()
        .map(|(order, n)| {
            let k = key(n.as_ref());
            (strsim::levenshtein(&wanted, &k), order, k, n)
        })
        .filter(|(d, ..)| *d <= 3)
        .collect();
    scored.sort_by_key(|(d, order, ..)| (*d, *order));
    let mut seen = std::collections::HashSet::new();
    scored
        .into_iter()
        .filter(|(_, _, k, _)| seen.insert(k.clone()))
        .take(max)
        .map(|(.., n)| n)
        .collect()
}

/// The known name nearest to `name` (case aside), when it is near enough to be what
/// was meant: [`suggestions`]' first, or else a name one is a prefix of the other of.
pub(crate) fn nearest<'a>(
    name: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> Option<&'a str> {
    let lower = |s: &str| s.to_ascii_lowercase();
    if let Some(n) = suggestions(name, known.clone(), lower, 1).pop() {
        return Some(n);
    }
    let key = lower(name.trim());
    known
        .into_iter()
        .find(|n| n.starts_with(&key) || key.starts_with(*n))
}

/// `"'a', 'b'"`: names quoted and listed, for a "did you mean".
pub(crate) fn quoted(names: &[impl AsRef<str>]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{}'", n.as_ref())).collect();
    q.join(", ")
}

/// Shows bytes (an id from the input) readably: valid UTF-8 as is, other bytes escaped;
/// cut to about 200 bytes (for messages).
pub(crate) fn show(bytes: &[u8]) -> String {
    let mut out = show_whole(bytes);
    if out.len() > 200 {
        let mut cut = 200;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// [`show`] without the cut: control characters and bytes that are not UTF-8 escaped
/// (`\n`, `\xff`), for text laid out in lines and columns (the comparison tables).
pub(crate) fn show_whole(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Rows as columns padded to their widest cell (in characters), two spaces apart: the
/// first `left` columns to the left, the others (values) to the right; with `rule`, a
/// line of dashes under the first row (the headers). Cells are shown as [`show_whole`]
/// shows them: a line break or tab in a name (a system, a query's text, an A/B arm)
/// split a row in two.
pub(crate) fn aligned(rows: &[Vec<String>], left: usize, rule: bool) -> String {
    let rows: Vec<Vec<String>> = (rows.iter())
        .map(|r| r.iter().map(|c| show_whole(c.as_bytes())).collect())
        .collect();
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = Vec::new();
    for r in &rows {
        widths.resize(widths.len().max(r.len()), 0);
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(width(c));
        }
    }
    let line = |cells: &[String], out: &mut String| {
        let padded: Vec<String> = (cells.iter().zip(&widths).enumerate())
            .map(|(i, (c, &w))| {
                let pad = " ".repeat(w - width(c));
                if i < left {
                    format!("{c}{pad}")
                } else {
                    format!("{pad}{c}")
                }
            })
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        line(r, &mut out);
        if rule && i == 0 {
            let dashes: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
            line(&dashes, &mut out);
        }
    }
    out
}
