//! File formats beyond TREC text, read into the same [`Run`] and [`Qrels`] and written
//! back: JSONL (one judgment or result per line: elinor's `{"query_id", "doc_id",
//! "score"}`, BEIR's `{"query-id", "corpus-id", "score"}` and the other usual key
//! names), ranx's JSON (`{query: {doc: value}}`), tab-separated files (MS MARCO's
//! runs `qid docid rank`, scored `-rank`; BEIR's qrels `query-id corpus-id score`, with
//! or without its header line) and parquet (the `parquet` feature; columns by name, as
//! an Arrow table's). The format comes from the file name (`.jsonl`, `.ndjson`,
//! `.json`, `.tsv`, before any `.gz`; `.parquet`, `.pq`) or is named; anything else is
//! TREC.
//! A `.tsv` file with TREC's field count (6 for runs, 4 for qrels) is read as TREC.
//!
//! Every row goes through [`crate::intake`] like a TREC line: ids and values follow
//! the same rules, a document twice for one query is an error naming both lines.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde_json::Value;

use crate::error::{Error, Location, Result, Unit};
use crate::intake::{id_problem, Grouper, PieceSink, Place, RowPieces, Value as Checked};
// the names each field goes by: one list for every input found by name
use crate::intake::{DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::Run;

#[cfg(feature = "parquet")]
pub mod parquet;

/// A file format of runs and qrels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TREC text: `qid iter docno rank score tag` / `qid iter docno rel`.
    Trec,
    /// One JSON object per line.
    Jsonl,
    /// ranx's JSON: `{query: {doc: score or label}}`.
    Json,
    /// Tab-separated: MS MARCO runs (`qid docid rank`), BEIR qrels (`qid docid label`).
    Tsv,
    /// Parquet: columns `query_id`, `doc_id` and `score` / `relevance` (or their usual
    /// spellings); needs the `parquet` feature.
    Parquet,
}

impl Format {
    /// A format by name (`trec`, `jsonl`, `json`, `tsv`, `parquet`; any letter case).
    pub fn parse(name: &str) -> Result<Format> {
        match name.to_ascii_lowercase().as_str() {
            "trec" | "txt" => Ok(Format::Trec),
            "jsonl" | "ndjson" => Ok(Format::Jsonl),
            "json" => Ok(Format::Json),
            "tsv" => Ok(Format::Tsv),
            "parquet" | "pq" => Ok(Format::Parquet),
            _ => Err(Error::Option(format!(
                "unknown format {name:?}; the formats are trec, jsonl, json, tsv and parquet"
            ))),
        }
    }

    /// The format a file name implies (its extension, before any `.gz`); TREC otherwise.
    pub fn of_path(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".parquet") || name.ends_with(".pq") {
            return Format::Parquet;
        }
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("jsonl" | "ndjson") => Format::Jsonl,
            Some("json") => Format::Json,
            Some("tsv") => Format::Tsv,
            _ => Format::Trec,
        }
    }
}

impl Run {
    /// Read a run file in the format its name implies (see [`Format::of_path`]); gzip
    /// is detected by content, `-` is standard input (TREC).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Run> {
        read_run(path.as_ref(), None, None)
    }

    /// Write the run to `path` atomically in `format` (None: as the name implies).
    pub fn to_file(&self, path: impl AsRef<Path>, format: Option<Format>) -> Result<()> {
        write_file(path.as_ref(), format, |f, w| write_run(self, f, w))
    }
}

impl Qrels {
    /// Read a qrels file in the format its name implies (see [`Format::of_path`]); gzip
    /// is detected by content, `-` is standard input (TREC).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Qrels> {
        read_qrels(path.as_ref(), None, None)
    }

    /// Write the judgments to `path` atomically in `format` (None: as the name implies).
    pub fn to_file(&self, path: impl AsRef<Path>, format: Option<Format>) -> Result<()> {
        write_file(path.as_ref(), format, |f, w| write_qrels(self, f, w))
    }
}

/// Write what `write` makes in `format` (None: as the name implies) to `path`, atomically.
fn write_file(
    path: &Path,
    format: Option<Format>,
    write: impl FnOnce(Format, &mut Vec<u8>) -> std::io::Result<()>,
) -> Result<()> {
    let mut buf = Vec::new();
    write(format.unwrap_or_else(|| Format::of_path(path)), &mut buf).map_err(|source| {
        Error::Write {
            path: path.to_path_buf(),
            source,
        }
    })?;
    crate::trec::write_atomically(path, &buf)
}

/// What a line, an entry or a row holds.
struct Row<'a, V> {
    qid: std::borrow::Cow<'a, [u8]>,
    doc: std::borrow::Cow<'a, [u8]>,
    value: V,
}

/// Rows to pieces (consecutive rows of one query) to `sink`; `mark` numbers the rows
/// (lines from 1, or entries). Ids are checked here, with the row's place: unlike TREC
/// text, these formats can hold ids with whitespace (values are checked by the sink).
struct Pieces<'s, V: Checked> {
    sink: &'s mut dyn PieceSink<V>,
    source: String,
    unit: Unit,
    rows: RowPieces<V>,
}

impl<'s, V: Checked> Pieces<'s, V> {
    fn push(&mut self, row: Row<'_, V>, mark: u64) -> Result<()> {
        for (what, id) in [("query", &row.qid), ("document", &row.doc)] {
            if let Some(p) = id_problem(id) {
                return Err(self.error(mark, format!("{what} id '{}' {p}", show(id))));
            }
        }
        self.rows
            .push(self.sink, &row.qid, &row.doc, row.value, mark)
    }

    fn flush(&mut self) -> Result<()> {
        self.rows.flush(self.sink)
    }

    fn error(&self, mark: u64, message: String) -> Error {
        Error::Format {
            location: Location::new(&self.source, mark, self.unit),
            message,
        }
    }
}

fn show(id: &[u8]) -> String {
    crate::error::show(id)
}

/// Parse one value of a row from JSON.
trait FromJson: Checked {
    const KEYS: &'static [&'static str];
    fn from_json(v: &Value) -> Option<Self>;
    fn from_text(t: &str) -> Option<Self>;
    const EXPECTED: &'static str;
}

impl FromJson for f64 {
    const KEYS: &'static [&'static str] = SCORE_COLUMNS;
    const EXPECTED: &'static str = "a number";
    fn from_json(v: &Value) -> Option<f64> {
        v.as_f64()
    }
    fn from_text(t: &str) -> Option<f64> {
        t.trim().parse().ok()
    }
}

impl FromJson for i64 {
    const KEYS: &'static [&'static str] = LABEL_COLUMNS;
    const EXPECTED: &'static str = "a whole number";
    fn from_json(v: &Value) -> Option<i64> {
        v.as_i64().or_else(|| {
            let f = v.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
        })
    }
    fn from_text(t: &str) -> Option<i64> {
        t.trim().parse().ok()
    }
}

/// An id: a JSON string, or an integer written as its decimal text.
fn json_id(v: &Value) -> Option<std::borrow::Cow<'_, [u8]>> {
    match v {
        Value::String(s) => Some(s.as_bytes().into()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string().into_bytes().into()),
        _ => None,
    }
}

fn field<'v>(
    obj: &'v serde_json::Map<String, Value>,
    keys: &[&str],
    what: &str,
) -> std::result::Result<&'v Value, String> {
    keys.iter().find_map(|k| obj.get(*k)).ok_or_else(|| {
        format!(
            "no {what} (looked for the keys {}; found {})",
            keys.join(", "),
            obj.keys()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// JSONL: one object per line; blank lines are skipped.
fn jsonl<V: FromJson>(data: &[u8], pieces: &mut Pieces<'_, V>) -> Result<()> {
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let mark = i as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            pieces.flush()?; // a piece's rows are consecutive lines
            continue;
        }
        let obj: serde_json::Map<String, Value> = serde_json::from_slice(line)
            .map_err(|e| pieces.error(mark, format!("not a JSON object: {e}")))?;
        let row = (|| {
            let qid = field(&obj, QUERY_COLUMNS, "query id")?;
            let doc = field(&obj, DOC_COLUMNS, "document id")?;
            let value = field(&obj, V::KEYS, V::NAME)?;
            let qid = json_id(qid).ok_or_else(|| format!("query id {qid} is not a string"))?;
            let doc = json_id(doc).ok_or_else(|| format!("document id {doc} is not a string"))?;
            let value = V::from_json(value)
                .ok_or_else(|| format!("{} {value} is not {}", V::NAME, V::EXPECTED))?;
            Ok::<_, String>(Row { qid, doc, value })
        })()
        .map_err(|m| pieces.error(mark, m))?;
        pieces.push(row, mark)?;
    }
    pieces.flush()
}

/// ranx's JSON: one object of queries, each an object of documents. Entries are
/// numbered from 1 in file order for messages.
fn json<V: FromJson>(data: &[u8], pieces: &mut Pieces<'_, V>) -> Result<()> {
    let all: serde_json::Map<String, Value> = serde_json::from_slice(data).map_err(|e| {
        pieces.error(
            0,
            format!("not a JSON object of queries ({{query: {{doc: value}}}}): {e}"),
        )
    })?;
    let mut mark = 0u64;
    for (qid, docs) in &all {
        let Value::Object(docs) = docs else {
            return Err(pieces.error(
                0,
                format!("query '{qid}' holds {docs}, not an object {{doc: value}}"),
            ));
        };
        for (doc, value) in docs {
            mark += 1;
            let value = V::from_json(value).ok_or_else(|| {
                pieces.error(
                    0,
                    format!(
                        "query '{qid}', document '{doc}': {} {value} is not {}",
                        V::NAME,
                        V::EXPECTED
                    ),
                )
            })?;
            let row = Row {
                qid: qid.as_bytes().into(),
                doc: doc.as_bytes().into(),
                value,
            };
            pieces.push(row, mark)?;
        }
    }
    pieces.flush()
}

/// Tab-separated rows of three fields; a first line whose value field is not a
/// number is a header (BEIR's `query-id corpus-id score`). `value` reads the third
/// field (MS MARCO runs: the rank, scored as its negation).
fn tsv<V: FromJson>(
    data: &[u8],
    pieces: &mut Pieces<'_, V>,
    value: impl Fn(&str) -> Option<V>,
    expected: &str,
) -> Result<()> {
    let text =
        std::str::from_utf8(data).map_err(|e| pieces.error(0, format!("not UTF-8 text: {e}")))?;
    for (i, line) in text.split('\n').enumerate() {
        let mark = i as u64 + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            pieces.flush()?; // a piece's rows are consecutive lines
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() != 3 {
            return Err(pieces.error(
                mark,
                format!("expected 3 tab-separated fields, found {}", fields.len()),
            ));
        }
        let Some(v) = value(fields[2]) else {
            if i == 0 {
                continue; // a header
            }
            return Err(pieces.error(
                mark,
                format!("the third field {:?} is not {expected}", fields[2]),
            ));
        };
        let row = Row {
            qid: fields[0].as_bytes().into(),
            doc: fields[1].as_bytes().into(),
            value: v,
        };
        pieces.push(row, mark)?;
    }
    pieces.flush()
}

/// The number of whitespace-separated fields of the first line that holds any.
fn first_line_fields(data: &[u8]) -> usize {
    data.split(|&b| b == b'\n')
        .map(|l| {
            l.split(u8::is_ascii_whitespace)
                .filter(|f| !f.is_empty())
                .count()
        })
        .find(|&n| n > 0)
        .unwrap_or(0)
}

/// Read a run in `format` (None: as the path implies).
pub fn read_run(path: &Path, format: Option<Format>, cancel: Option<&AtomicBool>) -> Result<Run> {
    read_run_counted(path, format, cancel, None)
}

/// [`read_run`], counting the KiB of a TREC run file read in `progress` (other formats
/// count nothing while they are read).
pub(crate) fn read_run_counted(
    path: &Path,
    format: Option<Format>,
    cancel: Option<&AtomicBool>,
    progress: Option<&crate::progress::Progress>,
) -> Result<Run> {
    let format = format.unwrap_or_else(|| Format::of_path(path));
    match format {
        Format::Trec => return crate::trec::read_run_counted(path, cancel, progress),
        #[cfg(feature = "parquet")]
        Format::Parquet => return parquet::read_run(path, cancel),
        #[cfg(not(feature = "parquet"))]
        Format::Parquet => return Err(no_parquet()),
        _ => {}
    }
    let data = crate::trec::read_input_cancellable(path, cancel)?;
    let source = path.display().to_string();
    if format == Format::Tsv && first_line_fields(&data) == 6 {
        return crate::trec::parse_run(&data, &source);
    }
    let unit = if format == Format::Json {
        Unit::Row
    } else {
        Unit::Line
    };
    let mut grouper = Grouper::new(Place::new(&source, unit));
    let mut pieces = Pieces {
        sink: &mut grouper,
        source: source.clone(),
        unit,
        rows: RowPieces::default(),
    };
    match format {
        Format::Jsonl => jsonl(&data, &mut pieces)?,
        Format::Json => json(&data, &mut pieces)?,
        Format::Tsv => tsv(
            &data,
            &mut pieces,
            |t| t.trim().parse::<u64>().ok().map(|r| -(r as f64)),
            "a rank (a whole number)",
        )?,
        Format::Trec | Format::Parquet => unreachable!("read above"),
    }
    Run::from_grouper(grouper, Vec::new())
}

/// Read qrels in `format` (None: as the path implies).
pub fn read_qrels(
    path: &Path,
    format: Option<Format>,
    cancel: Option<&AtomicBool>,
) -> Result<Qrels> {
    let format = format.unwrap_or_else(|| Format::of_path(path));
    match format {
        Format::Trec => return crate::trec::read_qrels_cancellable(path, cancel),
        #[cfg(feature = "parquet")]
        Format::Parquet => return parquet::read_qrels(path, cancel),
        #[cfg(not(feature = "parquet"))]
        Format::Parquet => return Err(no_parquet()),
        _ => {}
    }
    let data = crate::trec::read_input_cancellable(path, cancel)?;
    let source = path.display().to_string();
    if format == Format::Tsv && first_line_fields(&data) == 4 {
        return crate::trec::parse_qrels(&data, &source);
    }
    let unit = if format == Format::Json {
        Unit::Row
    } else {
        Unit::Line
    };
    let mut builder = QrelsBuilder::at(Place::new(&source, unit));
    let mut pieces = Pieces {
        sink: &mut builder,
        source,
        unit,
        rows: RowPieces::default(),
    };
    match format {
        Format::Jsonl => jsonl(&data, &mut pieces)?,
        Format::Json => json(&data, &mut pieces)?,
        Format::Tsv => tsv(&data, &mut pieces, i64::from_text, "a whole-number label")?,
        Format::Trec | Format::Parquet => unreachable!("read above"),
    }
    builder.build()
}

/// The refusal of parquet by a build without the `parquet` feature.
#[cfg(not(feature = "parquet"))]
fn no_parquet() -> Error {
    Error::Option("this build of irmetrics reads no parquet (the `parquet` feature is off)".into())
}

/// One of the crate's errors as an I/O error of a writer.
fn other(e: Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// An id as JSON text; ids that are not UTF-8 have no JSON form (and are never
/// altered): TREC, TSV and parquet (binary columns) write them as they are.
fn text(id: &[u8]) -> std::io::Result<String> {
    String::from_utf8(id.to_vec()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "id '{}' is not UTF-8 text, which JSON cannot hold; write TREC, TSV or \
                 parquet, which keep it as it is",
                show(id)
            ),
        )
    })
}

/// A score as JSON, which has no infinities (serde_json would write `null`, read back
/// as no number): such a run is refused rather than written altered.
fn score(v: f64, qid: &[u8], doc: &[u8]) -> std::io::Result<Value> {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "score {v} of document '{}' of query '{}' has no JSON form; write TREC \
                 or parquet, which keep it",
                    show(doc),
                    show(qid)
                ),
            )
        })
}

/// Write a run in `format`: TREC and TSV ranked (trec_eval's order, ranks from 1; TSV
/// is MS MARCO's `qid docid rank`, which keeps the order but not the scores), JSONL
/// one `{"query_id", "doc_id", "score"}` per line, JSON ranx's nested object.
pub fn write_run(run: &Run, format: Format, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut order = Vec::new();
    match format {
        Format::Trec => crate::trec::write_run(run, w),
        #[cfg(feature = "parquet")]
        Format::Parquet => parquet::write_batch(&crate::arrow::run_batch(run).map_err(other)?, w),
        #[cfg(not(feature = "parquet"))]
        Format::Parquet => Err(other(no_parquet())),
        Format::Tsv => {
            for q in run.queries() {
                q.ranking(&mut order);
                for (rank, &i) in order.iter().enumerate() {
                    w.write_all(&q.qid)?;
                    w.write_all(b"\t")?;
                    w.write_all(q.docs.get(i as usize))?;
                    writeln!(w, "\t{}", rank + 1)?;
                }
            }
            Ok(())
        }
        Format::Jsonl => {
            for q in run.queries() {
                q.ranking(&mut order);
                for &i in &order {
                    let row = serde_json::json!({
                        "query_id": text(&q.qid)?,
                        "doc_id": text(q.docs.get(i as usize))?,
                        "score": score(q.values[i as usize], &q.qid, q.docs.get(i as usize))?,
                    });
                    serde_json::to_writer(&mut *w, &row)?;
                    w.write_all(b"\n")?;
                }
            }
            Ok(())
        }
        Format::Json => {
            let mut all = serde_json::Map::new();
            for q in run.queries() {
                q.ranking(&mut order);
                let docs = order
                    .iter()
                    .map(|&i| {
                        let doc = q.docs.get(i as usize);
                        Ok((text(doc)?, score(q.values[i as usize], &q.qid, doc)?))
                    })
                    .collect::<std::io::Result<serde_json::Map<String, Value>>>()?;
                all.insert(text(&q.qid)?, Value::Object(docs));
            }
            serde_json::to_writer(&mut *w, &all)?;
            w.write_all(b"\n")
        }
    }
}

/// Write qrels in `format`: TREC, TSV (BEIR's, with its header), JSONL
/// (`{"query_id", "doc_id", "relevance"}`) or JSON (ranx's nested object).
pub fn write_qrels(
    qrels: &Qrels,
    format: Format,
    w: &mut impl std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Trec => crate::trec::write_qrels(qrels, w),
        #[cfg(feature = "parquet")]
        Format::Parquet => {
            parquet::write_batch(&crate::arrow::qrels_batch(qrels).map_err(other)?, w)
        }
        #[cfg(not(feature = "parquet"))]
        Format::Parquet => Err(other(no_parquet())),
        Format::Tsv => {
            w.write_all(b"query-id\tcorpus-id\tscore\n")?;
            for q in qrels.queries() {
                for (doc, label) in q.iter() {
                    w.write_all(q.id())?;
                    w.write_all(b"\t")?;
                    w.write_all(doc)?;
                    writeln!(w, "\t{label}")?;
                }
            }
            Ok(())
        }
        Format::Jsonl => {
            for q in qrels.queries() {
                for (doc, label) in q.iter() {
                    let row = serde_json::json!({
                        "query_id": text(q.id())?,
                        "doc_id": text(doc)?,
                        "relevance": label,
                    });
                    serde_json::to_writer(&mut *w, &row)?;
                    w.write_all(b"\n")?;
                }
            }
            Ok(())
        }
        Format::Json => {
            let mut all = serde_json::Map::new();
            for q in qrels.queries() {
                let docs = q
                    .iter()
                    .map(|(d, l)| Ok((text(d)?, l.into())))
                    .collect::<std::io::Result<serde_json::Map<String, Value>>>()?;
                all.insert(text(q.id())?, Value::Object(docs));
            }
            serde_json::to_writer(&mut *w, &all)?;
            w.write_all(b"\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::{evaluate, Options};

    fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn every_format_reads_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        let qrels = Qrels::from_bytes(b"q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\n", "q").unwrap();
        let trec = Run::from_bytes(
            b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.25 t\nq1 Q0 c 3 0.125 t\nq2 Q0 x 1 1 t\n",
            "r",
        )
        .unwrap();
        let jsonl = file(
            &dir,
            "r.jsonl",
            "{\"query_id\":\"q1\",\"doc_id\":\"a\",\"score\":0.5}\n\n\
             {\"qid\":\"q1\",\"docno\":\"b\",\"score\":0.25}\n\
             {\"query-id\":\"q1\",\"corpus-id\":\"c\",\"score\":0.125}\n\
             {\"query_id\":\"q2\",\"doc_id\":\"x\",\"score\":1}\n",
        );
        let json = file(
            &dir,
            "r.json",
            "{\"q1\": {\"a\": 0.5, \"b\": 0.25, \"c\": 0.125}, \"q2\": {\"x\": 1}}",
        );
        let tsv = file(&dir, "r.tsv", "q1\ta\t1\nq1\tb\t2\nq1\tc\t3\nq2\tx\t1\n");
        let m = ["map", "P.2", "ndcg"];
        let want = evaluate(&qrels, &trec, &m, Options::default()).unwrap();
        for p in [jsonl, json, tsv] {
            let run = Run::from_file(&p).unwrap();
            let got = evaluate(&qrels, &run, &m, Options::default()).unwrap();
            for c in ["map", "P_2", "ndcg"] {
                assert_eq!(got.summary_by_name(c), want.summary_by_name(c), "{p:?} {c}");
            }
        }
    }

    #[test]
    fn scores_read_exactly_and_duplicates_name_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        // a decimal that a fast, inexact parser rounds to the neighbouring double
        let p = file(
            &dir,
            "r.jsonl",
            "{\"qid\":\"q\",\"docno\":\"d\",\"score\":9.7350000000000012}\n",
        );
        let run = Run::from_file(&p).unwrap();
        let exact: f64 = "9.7350000000000012".parse().unwrap(); // std: correctly rounded
        assert_eq!(run.queries()[0].values[0], exact);
        let p = file(
            &dir,
            "d.jsonl",
            "{\"qid\":\"q\",\"docno\":\"d\",\"score\":1}\n\n{\"qid\":\"q\",\"docno\":\"d\",\"score\":2}\n",
        );
        let e = Run::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("d.jsonl:3") && e.contains("line 1"), "{e}");
    }
}
