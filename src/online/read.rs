//! Log files: JSON Lines (one object per line) and CSV (a header row), gzip-compressed
//! when the name ends in `.gz`. Both feed the one [`LogBuilder`]; places are lines of
//! the file (from 1). A JSON Lines file read whole is taken in by chunks of whole lines
//! on every thread ([`LogBuilder::take_in_parts`]); a CSV file line by line (a quoted
//! field may hold a line break, so its lines cannot be cut apart unread). Parquet
//! files (the `parquet` feature) go through the Arrow intake
//! ([`super::arrow`]), row group by row group; places are rows from 0.

use std::borrow::Cow;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::log::{field, Event, Log, LogBuilder, LogOptions, Time, FIELDS, REQUIRED};
use crate::error::{Error, Result, Unit};

/// The format of a log file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// Tab-separated values with a header row.
    Tsv,
    /// Parquet (columns by name; needs the `parquet` feature).
    Parquet,
}

impl LogFormat {
    /// By name (`jsonl`, `csv`, `tsv`, `parquet`), or `auto`: by the file's extension
    /// (`.jsonl`, `.ndjson`, `.json`, `.csv`, `.tsv`, each optionally `.gz`; `.parquet`,
    /// `.pq`).
    pub fn of(name: &str, path: &Path) -> Result<LogFormat> {
        let pick = |n: &str| match n {
            "jsonl" | "ndjson" | "json" => Some(LogFormat::Jsonl),
            "csv" => Some(LogFormat::Csv),
            "tsv" => Some(LogFormat::Tsv),
            "parquet" | "pq" => Some(LogFormat::Parquet),
            _ => None,
        };
        if name != "auto" {
            return pick(name).ok_or_else(|| {
                Error::Option(format!(
                    "log format must be jsonl, csv, tsv, parquet or auto, got '{name}'"
                ))
            });
        }
        let file = path.to_string_lossy().to_lowercase();
        let file = file.strip_suffix(".gz").unwrap_or(&file);
        file.rsplit_once('.')
            .and_then(|(_, ext)| pick(ext))
            .ok_or_else(|| {
                Error::Option(format!(
                    "cannot tell the format of {} by its extension; name it (jsonl, csv, tsv, parquet)",
                    path.display()
                ))
            })
    }
}

fn open(path: &Path) -> Result<Box<dyn Read>> {
    let io = |e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    if path.extension().is_some_and(|e| e == "gz") {
        Ok(Box::new(flate2::read::MultiGzDecoder::new(f)))
    } else {
        Ok(Box::new(f))
    }
}

/// A parquet log opened for [`read_log`]: the columns of its fields only (doc_id is not
/// used), all of them when one it needs is missing (for the error to list them); the
/// texts of few distinct values (`type`, `query`, `variant`) read as the keys of the
/// file's dictionary pages, each looked up once a batch, not once an event.
#[cfg(feature = "parquet")]
pub fn open_parquet(path: &Path, opts: &LogOptions) -> Result<crate::formats::parquet::Groups> {
    use crate::formats::parquet::Groups;
    let ours = |n: &str| (0..FIELDS.len()).any(|f| f != field::DOC_ID && opts.columns[f] == n);
    let keyed = |n: &str| {
        [field::TYPE, field::QUERY, field::VARIANT]
            .iter()
            .any(|&f| opts.columns[f] == n)
    };
    let file = Groups::open(path, &ours, &keyed)?;
    let fields = file.schema().fields();
    if (0..REQUIRED.len()).any(|f| !fields.iter().any(|c| *c.name() == opts.columns[f])) {
        return Groups::open(path, &|_| true, &keyed);
    }
    Ok(file)
}

/// Read a log file.
pub fn read_log(path: &Path, format: LogFormat, opts: LogOptions) -> Result<Log> {
    if format == LogFormat::Parquet {
        #[cfg(feature = "parquet")]
        {
            let file = open_parquet(path, &opts)?;
            let never = Default::default();
            return super::arrow::log_from_parquet(&file, opts, &never);
        }
        #[cfg(not(feature = "parquet"))]
        return Err(Error::Option(
            "this build of irmetrics reads no parquet (the `parquet` feature is off)".into(),
        ));
    }
    let mut b = LogBuilder::new(opts, &path.display().to_string(), Unit::Line)?;
    if format == LogFormat::Jsonl {
        return read_jsonl_whole(path, b);
    }
    read_text(path, format, &mut b, &mut |_| Ok(()))?;
    b.finish()
}

/// Bytes of a JSON Lines file that one task takes in (whole lines; a longer line whole).
const CHUNK_BYTES: u64 = 4 << 20;

/// A file's whole lines in chunks of about [`CHUNK_BYTES`], each with the number of its
/// first line (from 1); a read failure ends them.
struct Chunks<R> {
    input: R,
    /// The start of a line read with the chunk before.
    carry: Vec<u8>,
    /// Lines before the next chunk.
    lines: u64,
    done: bool,
}

impl<R: Read> Iterator for Chunks<R> {
    type Item = std::io::Result<(Vec<u8>, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut chunk = std::mem::take(&mut self.carry);
        loop {
            let from = chunk.len();
            match (&mut self.input).take(CHUNK_BYTES).read_to_end(&mut chunk) {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(0) => {
                    self.done = true;
                    break;
                }
                Ok(_) => {
                    if let Some(end) = memchr::memrchr(b'\n', &chunk[from..]) {
                        self.carry = chunk.split_off(from + end + 1);
                        break;
                    }
                }
            }
        }
        if chunk.is_empty() {
            return None;
        }
        let first = self.lines + 1;
        self.lines += memchr::memchr_iter(b'\n', &chunk).count() as u64;
        Some(Ok((chunk, first)))
    }
}

/// A JSON Lines file read whole: its lines taken in by chunks on every thread
/// ([`LogBuilder::take_in_parts`]).
fn read_jsonl_whole(path: &Path, b: LogBuilder) -> Result<Log> {
    let source = path.display().to_string();
    let names = b.options().columns.clone();
    let io = |e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let chunks = Chunks {
        input: open(path)?,
        carry: Vec::new(),
        lines: 0,
        done: false,
    };
    let fill = |(chunk, first): (Vec<u8>, u64),
                part: &mut LogBuilder,
                stop: &dyn Fn(&LogBuilder) -> bool| {
        for (k, line) in chunk.split_inclusive(|&c| c == b'\n').enumerate() {
            let text = std::str::from_utf8(line).map_err(|_| {
                io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ))
            })?;
            jsonl_line(part, text, first + k as u64, &names, &source)?;
            if stop(part) {
                break;
            }
        }
        Ok(())
    };
    b.take_in_parts(chunks.map(|c| c.map_err(io)), fill, &Default::default())
}

/// Lines (records of a CSV file) between two calls of a reader's `every` hook.
pub(crate) const EVERY_LINES: u64 = 1 << 16;

/// Feed a JSON Lines or CSV file's events to `b`, calling `every` on it after each
/// [`EVERY_LINES`] lines (a stream closes its finished sessions there).
pub(crate) fn read_text(
    path: &Path,
    format: LogFormat,
    b: &mut LogBuilder,
    every: &mut dyn FnMut(&mut LogBuilder) -> Result<()>,
) -> Result<()> {
    let source = path.display().to_string();
    let input = BufReader::with_capacity(1 << 20, open(path)?);
    let io = |e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    match format {
        LogFormat::Jsonl => read_jsonl(input, b, &source, every).map_err(|e| match e {
            ReadError::Io(e) => io(e),
            ReadError::Log(e) => e,
        }),
        LogFormat::Parquet => Err(Error::Option(format!(
            "{source}: a parquet log is read whole, not as text"
        ))),
        LogFormat::Csv | LogFormat::Tsv => {
            let delim = if format == LogFormat::Csv {
                b','
            } else {
                b'\t'
            };
            read_csv(input, delim, b, &source, every)
        }
    }
}

enum ReadError {
    Io(std::io::Error),
    Log(Error),
}

/// A JSON value of a field.
enum Val<'a> {
    Null,
    Num(f64),
    Text(Cow<'a, str>),
    Other(&'static str),
}

struct ValVisitor;

impl<'de> Visitor<'de> for ValVisitor {
    type Value = Val<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_unit<E>(self) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Null)
    }
    fn visit_none<E>(self) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Null)
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Other("true or false"))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Num(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Num(v as f64))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Val<'de>, E> {
        Ok(Val::Text(Cow::Owned(v.to_string())))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> std::result::Result<Val<'de>, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Val::Other("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> std::result::Result<Val<'de>, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Val::Other("an object"))
    }
}

impl<'de> de::Deserialize<'de> for Val<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(ValVisitor)
    }
}

/// One JSON object, its fields picked by the log's column names.
struct Row<'n> {
    names: &'n [String; 10],
}

type Slots<'a> = [Option<Val<'a>>; 10];

impl<'de> DeserializeSeed<'de> for Row<'_> {
    type Value = Slots<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Slots<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Row<'_> {
    type Value = Slots<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object (one event)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> std::result::Result<Slots<'de>, A::Error> {
        let mut slots: Slots<'de> = Default::default();
        while let Some(key) = a.next_key::<Val<'de>>()? {
            let Val::Text(key) = key else {
                a.next_value::<IgnoredAny>()?;
                continue;
            };
            match self.names.iter().position(|n| *n == key) {
                Some(i) => slots[i] = Some(a.next_value()?),
                None => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(slots)
    }
}

/// A number as the text of an id (`7`, not `7.0`).
fn number_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        v.to_string()
    }
}

/// The event of one row's fields; `None` values are missing fields, JSON `null` and
/// empty text are missing values.
fn event_of<'a>(
    slots: &'a mut Slots<'a>,
    names: &[String; 10],
) -> std::result::Result<Event<'a>, String> {
    fn text<'a>(
        v: Option<&'a Val<'a>>,
        name: &str,
    ) -> std::result::Result<Option<Cow<'a, str>>, String> {
        match v {
            None | Some(Val::Null) => Ok(None),
            Some(Val::Text(t)) if t.is_empty() => Ok(None),
            Some(Val::Text(t)) => Ok(Some(Cow::Borrowed(t.as_ref()))),
            Some(Val::Num(n)) => Ok(Some(Cow::Owned(number_text(*n)))),
            Some(Val::Other(what)) => Err(format!("'{name}' must be text or a number, not {what}")),
        }
    }
    fn num(v: Option<&Val<'_>>, name: &str) -> std::result::Result<Option<f64>, String> {
        match v {
            None | Some(Val::Null) => Ok(None),
            Some(Val::Num(n)) => Ok(Some(*n)),
            Some(Val::Text(t)) if t.trim().is_empty() => Ok(None),
            Some(Val::Text(t)) => t
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("'{name}' must be a number, got '{t}'")),
            Some(Val::Other(what)) => Err(format!("'{name}' must be a number, not {what}")),
        }
    }
    let s: &'a Slots<'a> = slots;
    let time = match s[field::TIME].as_ref() {
        None | Some(Val::Null) => None,
        Some(Val::Num(n)) => Some(Time::Number(*n)),
        Some(Val::Text(t)) => Some(Time::Text(t.as_ref())),
        Some(Val::Other(what)) => {
            return Err(format!(
                "'{}' must be a number or ISO 8601 text, not {what}",
                names[field::TIME]
            ))
        }
    };
    Ok(Event {
        session: text(s[field::SESSION].as_ref(), &names[field::SESSION])?,
        time,
        kind: text(s[field::TYPE].as_ref(), &names[field::TYPE])?,
        query: text(s[field::QUERY].as_ref(), &names[field::QUERY])?,
        n_results: num(s[field::N_RESULTS].as_ref(), &names[field::N_RESULTS])?,
        position: num(s[field::POSITION].as_ref(), &names[field::POSITION])?,
        dwell: num(s[field::DWELL].as_ref(), &names[field::DWELL])?,
        latency: num(s[field::LATENCY].as_ref(), &names[field::LATENCY])?,
        variant: text(s[field::VARIANT].as_ref(), &names[field::VARIANT])?,
        codes: [None; 4],
    })
}

fn read_jsonl(
    mut input: impl BufRead,
    b: &mut LogBuilder,
    source: &str,
    every: &mut dyn FnMut(&mut LogBuilder) -> Result<()>,
) -> std::result::Result<(), ReadError> {
    let names = b.options().columns.clone();
    let mut line = String::new();
    let mut no = 0u64;
    loop {
        line.clear();
        if input.read_line(&mut line).map_err(ReadError::Io)? == 0 {
            return Ok(());
        }
        no += 1;
        if no % EVERY_LINES == 0 {
            every(b).map_err(ReadError::Log)?;
        }
        jsonl_line(b, &line, no, &names, source).map_err(ReadError::Log)?;
    }
}

/// Line `no` of a JSON Lines file to `b` (a blank line: nothing).
fn jsonl_line(
    b: &mut LogBuilder,
    line: &str,
    no: u64,
    names: &[String; 10],
    source: &str,
) -> Result<()> {
    let text = line.trim();
    if text.is_empty() {
        return Ok(());
    }
    let bad = |m: String| Error::format(source, no, m);
    let mut de = serde_json::Deserializer::from_str(text);
    let mut slots = Row { names }
        .deserialize(&mut de)
        .and_then(|s| de.end().map(|_| s))
        .map_err(|e| bad(format!("not a JSON object: {e}")))?;
    let event = event_of(&mut slots, names).map_err(bad)?;
    b.push(event, no)
}

fn read_csv(
    input: impl Read,
    delim: u8,
    b: &mut LogBuilder,
    source: &str,
    every: &mut dyn FnMut(&mut LogBuilder) -> Result<()>,
) -> Result<()> {
    let names = b.options().columns.clone();
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delim)
        .has_headers(true)
        .from_reader(input);
    let csv_err = |e: csv::Error| {
        let line = e.position().map_or(0, |p| p.line());
        let shown = e.to_string();
        match e.into_kind() {
            csv::ErrorKind::Io(e) => Error::Io {
                path: source.into(),
                source: e,
            },
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => Error::format(
                source,
                line,
                format!("{len} fields, where the header has {expected_len}"),
            ),
            csv::ErrorKind::Utf8 { err, .. } => Error::format(
                source,
                line,
                format!("field {} is not UTF-8 text", err.field() + 1),
            ),
            _ => Error::format(source, line, shown),
        }
    };
    let header = r.headers().map_err(csv_err)?.clone();
    let cols: [Option<usize>; 10] =
        std::array::from_fn(|i| header.iter().position(|h| h.trim() == names[i]));
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter_map(|f| {
            let i = FIELDS.iter().position(|x| x == f)?;
            cols[i].is_none().then(|| format!("'{}' ({f})", names[i]))
        })
        .collect();
    if !missing.is_empty() {
        return Err(Error::Input(format!(
            "{source}: the log has no column {} (columns: {}); map yours with columns",
            missing.join(", "),
            header.iter().collect::<Vec<_>>().join(", ")
        )));
    }
    for (i, c) in cols.iter().enumerate() {
        if c.is_some() {
            b.declare(i);
        }
    }
    let mut rec = csv::StringRecord::new();
    let mut records = 0u64;
    while r.read_record(&mut rec).map_err(csv_err)? {
        let no = rec.position().map_or(0, |p| p.line());
        records += 1;
        if records % EVERY_LINES == 0 {
            every(b)?;
        }
        let mut slots: Slots<'_> = std::array::from_fn(|i| {
            cols[i]
                .and_then(|c| rec.get(c))
                .map(|v| Val::Text(Cow::Borrowed(v)))
        });
        let event = event_of(&mut slots, &names).map_err(|m| Error::format(source, no, m))?;
        b.push(event, no)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use super::*;

    /// A shuffled JSON Lines log of `n` sessions (a SERP, up to three clicks, some
    /// unknown events), about 150 bytes a line, with blank lines here and there.
    fn lines(n: usize) -> Vec<String> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut next = move || rng.next_u64();
        let mut out = Vec::new();
        for s in 0..n {
            let t = 1_700_000_000 + next() % 5_000_000;
            let v = ["A", "B"][s % 2];
            out.push(format!(
                r#"{{"session_id": "sess-{s}", "timestamp": {t}, "type": "query", "query": "q {}", "n_results": {}, "variant": "{v}"}}"#,
                next() % 900,
                next() % 20
            ));
            for c in 0..next() % 4 {
                let kind = ["click", "click", "click", "hover"][(next() % 4) as usize];
                out.push(format!(
                    r#"{{"session_id": "sess-{s}", "timestamp": {}, "type": "{kind}", "position": {}, "doc_id": "d{}", "variant": "{v}"}}"#,
                    t + 3 + 11 * c,
                    1 + next() % 10,
                    next() % 100
                ));
            }
            if next() % 50 == 0 {
                out.push(String::new());
            }
        }
        for i in (1..out.len()).rev() {
            out.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        out
    }

    /// The file read whole (in parallel, `threads`), and read line by line by one
    /// builder.
    fn both(path: &Path, threads: usize) -> (Result<Log>, Result<Log>) {
        let opts = LogOptions::default();
        let whole = crate::parallel::Pool::new(threads)
            .install(|| read_log(path, LogFormat::Jsonl, opts.clone()));
        let mut b = LogBuilder::new(opts, &path.display().to_string(), Unit::Line).unwrap();
        let one =
            read_text(path, LogFormat::Jsonl, &mut b, &mut |_| Ok(())).and_then(|_| b.finish());
        (whole, one)
    }

    #[test]
    fn a_jsonl_log_read_by_chunks_is_the_log_of_one_builder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let good = lines(120_000);
        std::fs::write(&path, good.join("\n")).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 3 * CHUNK_BYTES);
        for threads in [1, 2, 3] {
            let (whole, one) = both(&path, threads);
            assert!(
                whole.unwrap().everything() == one.unwrap().everything(),
                "{threads} threads"
            );
        }
        // spoiled in several chunks: the first error is the one told
        type Spoil<'a> = (&'a str, &'a dyn Fn(&str) -> String);
        let spoils: [Spoil<'_>; 4] = [
            ("not JSON", &|l| l.replace('}', "")),
            ("a bad position", &|l| {
                l.replace(r#""type""#, r#""position": -2, "type""#)
            }),
            ("a timestamp written another way", &|_| {
                r#"{"session_id": "x", "timestamp": "2024-05-01T10:00:00Z", "type": "query"}"#
                    .into()
            }),
            ("no session", &|l| l.replace("session_id", "sid")),
        ];
        let told = |r: Result<Log>| r.map(|l| l.everything()).map_err(|e| e.to_string());
        let mut refused = 0;
        for (what, spoil) in spoils {
            for at in [[90_000, 70_000, 200_000], [250_000, 2, 130_000]] {
                let mut bad = good.clone();
                for &i in &at {
                    bad[i] = spoil(&bad[i]);
                }
                std::fs::write(&path, bad.join("\n")).unwrap();
                let (whole, one) = both(&path, 2);
                let (whole, one) = (told(whole), told(one));
                assert!(whole == one, "{what} at {at:?}: {:?}", whole.err());
                refused += usize::from(one.is_err());
            }
        }
        assert!(refused >= 6, "{refused} of the spoiled logs refused");
        // bytes that are not UTF-8 in a later chunk
        let mut bytes = good.join("\n").into_bytes();
        let at = bytes.len() - 1000;
        bytes[at] = 0xff;
        std::fs::write(&path, bytes).unwrap();
        let (whole, one) = both(&path, 2);
        assert_eq!(
            whole.err().unwrap().to_string(),
            one.err().unwrap().to_string()
        );
    }
}
