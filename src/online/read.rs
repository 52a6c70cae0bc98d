//! Log files: JSON Lines (one object per line) and CSV (a header row), gzip-compressed
//! when the name ends in `.gz`. Both feed the one [`LogBuilder`]; places are lines of
//! the file (from 1). Parquet files (the `parquet` feature) go through the Arrow intake
//! ([`super::arrow`]), record batch by record batch; places are rows from 0.

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

/// Read a log file.
pub fn read_log(path: &Path, format: LogFormat, opts: LogOptions) -> Result<Log> {
    if format == LogFormat::Parquet {
        #[cfg(feature = "parquet")]
        {
            use crate::formats::parquet::Groups;
            // the log's columns only (doc_id is not used); all of them when one it
            // needs is missing, for the error to list them
            let ours = |n: &str| (0..FIELDS.len()).any(|f| f != 6 && opts.columns[f] == n);
            let mut file = Groups::open(path, &ours)?;
            let fields = file.schema().fields();
            if (0..REQUIRED.len()).any(|f| !fields.iter().any(|c| *c.name() == opts.columns[f])) {
                file = Groups::open(path, &|_| true)?;
            }
            let never = Default::default();
            return super::arrow::log_from_parquet(&file, opts, &never);
        }
        #[cfg(not(feature = "parquet"))]
        return Err(Error::Option(
            "this build of irmetrics reads no parquet (the `parquet` feature is off)".into(),
        ));
    }
    let mut b = LogBuilder::new(opts, &path.display().to_string(), Unit::Line)?;
    read_text(path, format, &mut b, &mut |_| Ok(()))?;
    b.finish()
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
        codes: [None; 3],
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
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let bad = |m: String| ReadError::Log(Error::format(source, no, m));
        let mut de = serde_json::Deserializer::from_str(text);
        let mut slots = Row { names: &names }
            .deserialize(&mut de)
            .and_then(|s| de.end().map(|_| s))
            .map_err(|e| bad(format!("not a JSON object: {e}")))?;
        let event = event_of(&mut slots, &names).map_err(bad)?;
        b.push(event, no).map_err(ReadError::Log)?;
    }
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
        match e.into_kind() {
            csv::ErrorKind::Io(e) => Error::Io {
                path: source.into(),
                source: e,
            },
            k => Error::format(source, line, format!("{k:?}")),
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
