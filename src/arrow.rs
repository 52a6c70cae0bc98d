//! Arrow record batches in and out, without Python: the columns of a table found by
//! name (ranx's, ir_measures' and PyTerrier's spellings) or given, every row read in
//! place (strings, bytes, integers and dictionaries of them as ids; floats and integers
//! as values) into the one intake (the builders), and runs and qrels written back as
//! one record batch. Used by the Python glue (pyarrow, polars, anything exporting the
//! Arrow PyCapsule interface) and by the parquet files of [`crate::formats`]; batches
//! are taken a wave at a time (their rows made into pieces of queries in parallel), so a
//! stream need not be held whole.

use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, Location, Result, Unit};
use crate::intake::{whole_label, PieceSink, Place as RowPlace, RowPieces, Rows, Value};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::{Run, RunBuilder};

pub use crate::intake::{DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS};

/// Record batches with their schema (imported from Python, or read from a file): held
/// whole, or made on demand and read once (a producer exporting its table a slice at a
/// time, so that its copy is never made whole).
pub struct Table {
    schema: SchemaRef,
    batches: Batches,
    rows: Option<usize>,
}

/// The batches of a [`Table`] made on demand, in order.
pub type MoreBatches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

enum Batches {
    Held(Vec<RecordBatch>),
    /// Taken by the first read.
    Streamed(Mutex<Option<MoreBatches>>),
}

impl Table {
    /// A table of `batches`, all of `schema`.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Table {
        let rows = Some(batches.iter().map(|b| b.num_rows()).sum());
        Table {
            schema,
            batches: Batches::Held(batches),
            rows,
        }
    }

    /// A table of the batches `more` makes (all of `schema`; `rows` in all, when
    /// known), read once.
    pub fn streamed(schema: SchemaRef, more: MoreBatches, rows: Option<usize>) -> Table {
        Table {
            schema,
            batches: Batches::Streamed(Mutex::new(Some(more))),
            rows,
        }
    }

    /// Whether the batches are made on demand (and so can be read once).
    pub fn is_streamed(&self) -> bool {
        matches!(self.batches, Batches::Streamed(_))
    }

    /// The record batches, in order. A streamed table's come once: reading it again is
    /// an error.
    pub fn batches(&self) -> Box<dyn Iterator<Item = Result<RecordBatch>> + '_> {
        match &self.batches {
            Batches::Held(b) => Box::new(b.iter().cloned().map(Ok)),
            Batches::Streamed(more) => match more.lock().ok().and_then(|mut m| m.take()) {
                Some(more) => more,
                None => Box::new(std::iter::once(Err(Error::Input(
                    "Arrow data exported a slice at a time can be read once; import it again"
                        .into(),
                )))),
            },
        }
    }

    /// The number of rows, when known.
    pub fn num_rows(&self) -> Option<usize> {
        self.rows
    }

    /// The column names, in order.
    pub fn names(&self) -> Vec<Option<String>> {
        column_names(&self.schema)
    }

    /// The schema's column names, in order (for [`Columns::find`]).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Judgments from the columns `cols` (query id, document id, label).
    pub fn qrels(&self, cols: &Columns, source: &str, cancel: &AtomicBool) -> Result<Qrels> {
        qrels_from_batches(self.batches(), cols, source, cancel)
    }

    /// A run from the columns `cols` (query id, document id, score), tagged `runid`.
    pub fn run(
        &self,
        cols: &Columns,
        source: &str,
        runid: &[u8],
        cancel: &AtomicBool,
    ) -> Result<Run> {
        run_from_batches(self.batches(), cols, source, runid, cancel)
    }
}

/// The column names of `schema`, in order (as [`Columns::find`] takes them).
pub fn column_names(schema: &Schema) -> Vec<Option<String>> {
    schema
        .fields()
        .iter()
        .map(|f| Some(f.name().clone()))
        .collect()
}

/// Judgments from record batches arriving one at a time (columns `cols`).
pub fn qrels_from_batches(
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    cols: &Columns,
    source: &str,
    cancel: &AtomicBool,
) -> Result<Qrels> {
    let mut b = QrelsBuilder::at(RowPlace::new(source, Unit::Row));
    let reader = PieceReader::new(cols, source, labels, cancel);
    reader.take_in_waves(batches, b.grouper())?; // a grouper takes every piece
    b.build()
}

/// A run, tagged `runid`, from record batches arriving one at a time (columns `cols`).
pub fn run_from_batches(
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    cols: &Columns,
    source: &str,
    runid: &[u8],
    cancel: &AtomicBool,
) -> Result<Run> {
    let mut b = RunBuilder::at(RowPlace::new(source, Unit::Row));
    b.runid(runid)?;
    let reader = PieceReader::new(cols, source, scores, cancel);
    reader.take_in_waves(batches, b.grouper())?; // a grouper takes every piece
    b.build()
}

/// Rows a task takes in at once (a stretch of a table): enough that a task's overhead
/// vanishes, few enough that every thread gets several (10 M rows: 153 tasks) and that
/// a stream of batches is held only a few stretches ahead.
pub(crate) const STRETCH: usize = 64 * 1024;

/// Batches arriving one at a time, cut and gathered into stretches of `rows` rows (a
/// big batch sliced, small ones gathered; the last stretch shorter), each slice with
/// the number of its first row in the whole table. A batch that cannot be read comes
/// as an error after the rows before it, and ends the stretches.
pub(crate) struct Stretches<I> {
    batches: I,
    rows: usize,
    first: u64,
    /// A batch partly taken, and where its untaken rows begin.
    held: Option<(RecordBatch, usize)>,
    failed: Option<Error>,
}

impl<I> Stretches<I> {
    pub(crate) fn new(batches: I, rows: usize) -> Self {
        Stretches {
            batches,
            rows: rows.max(1),
            first: 0,
            held: None,
            failed: None,
        }
    }
}

impl<I: Iterator<Item = Result<RecordBatch>>> Iterator for Stretches<I> {
    type Item = Result<Vec<(RecordBatch, u64)>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut stretch = Vec::new();
        let mut n = 0;
        while n < self.rows && self.failed.is_none() {
            let (batch, at) = match self.held.take() {
                Some(held) => held,
                None => match self.batches.next() {
                    Some(Ok(batch)) => (batch, 0),
                    Some(Err(e)) => {
                        self.failed = Some(e);
                        break;
                    }
                    None => break,
                },
            };
            let len = (batch.num_rows() - at).min(self.rows - n);
            if len > 0 {
                stretch.push((batch.slice(at, len), self.first));
            }
            self.first += len as u64;
            n += len;
            if at + len < batch.num_rows() {
                self.held = Some((batch, at + len));
            }
        }
        if stretch.is_empty() {
            // the rows before a failure first, then the failure, then nothing
            return self.failed.take().map(Err);
        }
        Some(Ok(stretch))
    }
}

/// Rows of arriving batches gathered before their pieces are made (in parallel): a
/// stream of batches is held this far ahead, not whole.
const WAVE: usize = 16 * STRETCH;

/// Pieces made from the rows of one stretch of a table: consecutive rows of one query,
/// each with the row (over the whole table) of its first.
pub(crate) type Pieces<V> = Vec<(Rows<V>, u64)>;

/// Turns the rows of record batches into pieces of queries (consecutive rows of one
/// query) for the one intake ([`PieceSink`], a builder's [`crate::intake::Grouper`]): the columns
/// `cols` found and checked (types, nulls) in each batch, the values read by `values`.
/// Stretches of a table are made into pieces in parallel and taken in in order, so the
/// checks and messages (the row of a problem, both rows of a duplicate) are those of a
/// table read row by row.
pub(crate) struct PieceReader<'c, V: Clone> {
    cols: &'c Columns,
    source: &'c str,
    values: ValueReader<V>,
    cancel: &'c AtomicBool,
}

impl<'c, V: Value> PieceReader<'c, V> {
    pub(crate) fn new(
        cols: &'c Columns,
        source: &'c str,
        values: ValueReader<V>,
        cancel: &'c AtomicBool,
    ) -> Self {
        PieceReader {
            cols,
            source,
            values,
            cancel,
        }
    }

    /// The pieces of `tasks` (each made into pieces by `make`, in parallel when there
    /// are several) to `sink`, in order; a task's error comes after the pieces of the
    /// tasks before it, as it would row by row. False, with the rest left, where a
    /// piece's query would come back to a sink that takes each query once
    /// ([`PieceSink::comes_back`]).
    pub(crate) fn take_in<T: Send>(
        tasks: Vec<T>,
        make: impl Fn(T) -> Result<Pieces<V>> + Sync + Send,
        sink: &mut dyn PieceSink<V>,
    ) -> Result<bool> {
        for pieces in crate::parallel::map_chunks_owned(tasks, make) {
            for (piece, mark) in pieces? {
                if sink.comes_back(&piece.qid) {
                    return Ok(false);
                }
                sink.piece(piece, mark)?;
            }
        }
        Ok(true)
    }

    /// Batches arriving one at a time to `sink`, a wave of rows at a time, each wave's
    /// stretches made into pieces in parallel. False as [`PieceReader::take_in`].
    pub(crate) fn take_in_waves(
        &self,
        batches: impl IntoIterator<Item = Result<RecordBatch>>,
        sink: &mut dyn PieceSink<V>,
    ) -> Result<bool> {
        let mut stretches = Stretches::new(batches.into_iter(), STRETCH).peekable();
        while stretches.peek().is_some() {
            // a wave: stretches up to WAVE rows, or up to one that cannot be read
            let mut wave = Vec::new();
            let mut failed = None;
            while wave.len() < WAVE / STRETCH {
                match stretches.next() {
                    Some(Ok(stretch)) => wave.push(stretch),
                    Some(Err(e)) => {
                        failed = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            let whole = Self::take_in(
                wave,
                |stretch| {
                    let mut pieces = Vec::new();
                    for (batch, first) in stretch {
                        self.batch(&batch, first, &mut pieces)?;
                    }
                    Ok(pieces)
                },
                sink,
            )?;
            if !whole {
                return Ok(false);
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(true)
    }

    /// The pieces of one batch, whose first row is row `first` of the table, added to
    /// `out` (a piece of the query `out` ends with goes on in a piece of its own).
    pub(crate) fn batch(&self, batch: &RecordBatch, first: u64, out: &mut Pieces<V>) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let (cols, source) = (self.cols, self.source);
        let place = |k: usize| Place {
            source,
            column: &cols.names[k],
            what: cols.what[k],
            first,
        };
        let column = |k: usize| {
            let col = batch.columns().get(cols.index[k]).ok_or_else(|| {
                Error::Input(format!(
                    "{source}: a record batch lacks the {} column '{}'",
                    cols.what[k], cols.names[k]
                ))
            })?;
            let col = col.as_ref();
            if col.len() != batch.num_rows() {
                return Err(Error::Input(format!(
                    "{source}: the {} column '{}' of a record batch has {} rows, not {}",
                    cols.what[k],
                    cols.names[k],
                    col.len(),
                    batch.num_rows()
                )));
            }
            place(k).no_nulls(col)?;
            Ok(col)
        };
        let (q, d, v) = (column(0)?, column(1)?, column(2)?);
        let (q, d) = (IdArray::of(q, &place(0))?, IdArray::of(d, &place(1))?);
        let v = (self.values)(v, &place(2))?;
        let (mut qbuf, mut dbuf) = (Vec::new(), Vec::new());
        let mut rows = RowPieces::default();
        for (i, &value) in v.iter().enumerate() {
            let (qid, doc) = (q.get(i, &mut qbuf), d.get(i, &mut dbuf));
            rows.push(out, qid, doc, value, first + i as u64)?;
        }
        rows.flush(out)
    }
}

/// Reads a value column of one batch (scores or labels), checking its type and values.
pub(crate) type ValueReader<V> = for<'a> fn(&'a dyn Array, &Place<'_>) -> Result<Cow<'a, [V]>>;

/// Which columns of a table hold the query ids, the document ids and the values.
pub struct Columns {
    /// Their positions in the schema.
    pub index: [usize; 3],
    /// Their names.
    pub names: [String; 3],
    /// Their roles, for messages ("query id", "document id", "score" or "label").
    pub what: [&'static str; 3],
}

/// The third column of a run (its scores).
pub const SCORE: (&[&str], &str) = (SCORE_COLUMNS, "score");
/// The third column of judgments (their labels).
pub const LABEL: (&[&str], &str) = (LABEL_COLUMNS, "label");

impl Columns {
    /// The query id, document id and value columns (`third`: [`SCORE`] or [`LABEL`])
    /// of a table with the column `names`: those named in `given`, or found by the
    /// usual names. The error says which columns there are and how to name one.
    pub fn find(
        names: &[Option<String>],
        given: [Option<&str>; 3],
        third: (&[&str], &'static str),
    ) -> std::result::Result<Columns, String> {
        let shown = || {
            names
                .iter()
                .map(|n| format!("'{}'", n.as_deref().unwrap_or_default()))
                .collect()
        };
        let roles = [
            (QUERY_COLUMNS, "query id"),
            (DOC_COLUMNS, "document id"),
            third,
        ];
        let mut index = [0; 3];
        for (k, (candidates, what)) in roles.iter().enumerate() {
            index[k] = find_column(names, &shown, given[k], candidates, what, "")?;
        }
        Ok(Columns {
            names: index.map(|i| names[i].clone().unwrap_or_default()),
            index,
            what: roles.map(|r| r.1),
        })
    }
}

/// Which of a table's columns `names` is the `what` column: the one named `given`, or
/// the first of `candidates` present. The message of a refusal (no such column, or its
/// name on more than one column, with `dedupe` saying how to drop the duplicates) shows
/// the columns found (`shown`) and how to name one.
pub fn find_column(
    names: &[Option<String>],
    shown: &dyn Fn() -> Vec<String>,
    given: Option<&str>,
    candidates: &[&str],
    what: &str,
    dedupe: &str,
) -> std::result::Result<usize, String> {
    let pick = match given {
        Some(g) => names.iter().position(|n| n.as_deref() == Some(g)),
        None => candidates
            .iter()
            .find_map(|c| names.iter().position(|n| n.as_deref() == Some(*c))),
    };
    let Some(pick) = pick else {
        return Err(format!(
            "no {what} column: looked for {} among the columns [{}]; name it explicitly",
            given.map_or_else(|| format!("{candidates:?}"), |g| format!("'{g}'")),
            shown().join(", ")
        ));
    };
    let col_name = names[pick].clone().unwrap_or_default();
    let same = names
        .iter()
        .filter(|n| n.as_deref() == Some(&col_name))
        .count();
    if same > 1 {
        return Err(format!(
            "the table has {same} columns named '{col_name}' (the {what} column); rename or \
             drop the duplicates{dedupe}"
        ));
    }
    Ok(pick)
}

/// One column of one batch, for messages: the table, the column's name and role, and
/// the batch's first row.
pub struct Place<'a> {
    /// The table (a file's name, or "run", "qrels", "log").
    pub source: &'a str,
    /// The column's name.
    pub column: &'a str,
    /// The column's role.
    pub what: &'a str,
    /// The batch's first row, counted over the whole table.
    pub first: u64,
}

impl Place<'_> {
    /// An error at `row` of this batch (None: the column as a whole).
    pub fn error(&self, row: Option<usize>, message: String) -> Error {
        let location = match row {
            Some(r) => Location::new(self.source, self.first + r as u64, Unit::Row),
            None => Location::new(self.source, 0, Unit::None),
        };
        Error::Format { location, message }
    }

    /// An error naming the first null of `col`, if it has one.
    pub fn no_nulls(&self, col: &dyn Array) -> Result<()> {
        let Some(nulls) = col.logical_nulls().filter(|n| n.null_count() > 0) else {
            return Ok(());
        };
        let row = nulls.iter().position(|valid| !valid).unwrap_or(0);
        Err(self.error(
            Some(row),
            format!(
                "the {} column '{}' holds a null; drop or fill the rows with nulls first \
                 (rows are counted from 0 over the whole table)",
                self.what, self.column
            ),
        ))
    }

    /// The column's type `ty` is not one this role takes (`works` says which do).
    pub fn unsupported(&self, ty: &DataType, works: &str) -> Error {
        // polars exports a column of Python objects (its Object type) as their 8-byte
        // pointers, with nothing in the schema to tell it from other such columns
        let objects = if ty == &DataType::FixedSizeBinary(8) {
            " (a polars Object column, of Python objects, is exported so: cast it to \
             pl.String or a number first)"
        } else {
            ""
        };
        Error::Input(format!(
            "{}: the {} column '{}' has Arrow type {ty}; {works}{objects}",
            self.source, self.what, self.column
        ))
    }
}

/// An id column of one batch: strings or bytes read in place, integers written as
/// their decimal text (as a TREC file holds them), dictionaries through their keys.
pub enum IdArray<'a> {
    /// `string`.
    Utf8(&'a arrow_array::StringArray),
    /// `large_string`.
    LargeUtf8(&'a arrow_array::LargeStringArray),
    /// `string_view`.
    Utf8View(&'a arrow_array::StringViewArray),
    /// `binary`.
    Binary(&'a arrow_array::BinaryArray),
    /// `large_binary`.
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    /// `binary_view`.
    BinaryView(&'a arrow_array::BinaryViewArray),
    /// Integers of any width, widened.
    Integers(Vec<i128>),
    /// A dictionary: each row's key, and the values.
    Dictionary(Vec<usize>, Box<IdArray<'a>>),
}

const ID_TYPES: &str = "id columns must be string, large_string, string_view, binary, \
                        large_binary, binary_view or integer columns, or dictionaries of them";

/// The values of an integer column of any width, signed or not (None: not one).
fn integers(col: &dyn Array) -> Option<Vec<i128>> {
    fn wide<T: arrow_array::ArrowPrimitiveType>(col: &dyn Array) -> Vec<i128>
    where
        T::Native: Into<i128>,
    {
        col.as_primitive::<T>()
            .values()
            .iter()
            .map(|&v| v.into())
            .collect()
    }
    Some(match col.data_type() {
        DataType::Int8 => wide::<Int8Type>(col),
        DataType::Int16 => wide::<Int16Type>(col),
        DataType::Int32 => wide::<Int32Type>(col),
        DataType::Int64 => wide::<Int64Type>(col),
        DataType::UInt8 => wide::<UInt8Type>(col),
        DataType::UInt16 => wide::<UInt16Type>(col),
        DataType::UInt32 => wide::<UInt32Type>(col),
        DataType::UInt64 => wide::<UInt64Type>(col),
        _ => return None,
    })
}

impl<'a> IdArray<'a> {
    /// The ids of `col`, or an error naming its type and the types that work.
    pub fn of(col: &'a dyn Array, place: &Place) -> Result<IdArray<'a>> {
        let ty = col.data_type();
        Ok(match ty {
            DataType::Utf8 => IdArray::Utf8(col.as_string::<i32>()),
            DataType::LargeUtf8 => IdArray::LargeUtf8(col.as_string::<i64>()),
            DataType::Utf8View => IdArray::Utf8View(col.as_string_view()),
            DataType::Binary => IdArray::Binary(col.as_binary::<i32>()),
            DataType::LargeBinary => IdArray::LargeBinary(col.as_binary::<i64>()),
            DataType::BinaryView => IdArray::BinaryView(col.as_binary_view()),
            ty if ty.is_integer() => IdArray::Integers(integers(col).unwrap_or_default()),
            DataType::Dictionary(..) => match col.as_any_dictionary_opt() {
                Some(dict) => IdArray::Dictionary(
                    dict.normalized_keys(),
                    Box::new(IdArray::of(dict.values().as_ref(), place)?),
                ),
                None => return Err(place.unsupported(ty, ID_TYPES)),
            },
            _ => return Err(place.unsupported(ty, ID_TYPES)),
        })
    }

    /// The text at row `i` when the column holds UTF-8 text (string types, or a
    /// dictionary of them): Arrow guarantees it is valid, so it is not checked again.
    /// None for bytes and integers (use [`IdArray::get`] and check).
    #[inline]
    pub fn get_str(&self, i: usize) -> Option<&str> {
        match self {
            IdArray::Dictionary(keys, values) => values.plain_str(keys[i]),
            _ => self.plain_str(i),
        }
    }

    /// [`IdArray::get_str`] of a column that is not a dictionary (None for a dictionary
    /// of dictionaries, whose ids [`IdArray::get`] reads): no recursion, so that both
    /// inline.
    #[inline(always)]
    fn plain_str(&self, i: usize) -> Option<&str> {
        match self {
            IdArray::Utf8(a) => Some(a.value(i)),
            IdArray::LargeUtf8(a) => Some(a.value(i)),
            IdArray::Utf8View(a) => Some(a.value(i)),
            _ => None,
        }
    }

    /// The id at row `i` (integers are written into `buf`).
    #[inline]
    pub fn get<'s>(&'s self, i: usize, buf: &'s mut Vec<u8>) -> &'s [u8] {
        match self {
            IdArray::Utf8(a) => a.value(i).as_bytes(),
            IdArray::LargeUtf8(a) => a.value(i).as_bytes(),
            IdArray::Utf8View(a) => a.value(i).as_bytes(),
            IdArray::Binary(a) => a.value(i),
            IdArray::LargeBinary(a) => a.value(i),
            IdArray::BinaryView(a) => a.value(i),
            IdArray::Integers(v) => {
                buf.clear();
                let _ = write!(buf, "{}", v[i]);
                buf
            }
            IdArray::Dictionary(keys, values) => values.get(keys[i], buf),
        }
    }
}

/// A decimal's value as the double nearest to it: its decimal text parsed (correctly
/// rounded, as a TREC file's score is), not `v / 10^scale` (two roundings). DuckDB and
/// Spark type literals such as `0.5` as decimals.
fn decimal(v: i128, scale: i8) -> f64 {
    let text = if scale > 0 {
        format!("{v}e-{scale}")
    } else {
        format!("{v}e{}", -i32::from(scale))
    };
    fast_float2::parse(text.as_bytes()).unwrap_or(f64::NAN)
}

/// A score column: float64 read in place; float32 and integers converted exactly (as
/// far as a double holds them).
pub fn scores<'a>(col: &'a dyn Array, place: &Place) -> Result<Cow<'a, [f64]>> {
    Ok(match col.data_type() {
        DataType::Float64 => Cow::Borrowed(col.as_primitive::<Float64Type>().values()),
        DataType::Float32 => Cow::Owned(
            col.as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|&v| f64::from(v))
                .collect(),
        ),
        ty if ty.is_integer() => Cow::Owned(
            integers(col)
                .unwrap_or_default()
                .into_iter()
                .map(|x| x as f64)
                .collect(),
        ),
        DataType::Decimal128(_, scale) => {
            let scale = *scale;
            let col = col.as_primitive::<arrow_array::types::Decimal128Type>();
            Cow::Owned(col.values().iter().map(|&v| decimal(v, scale)).collect())
        }
        ty => {
            return Err(place.unsupported(
                ty,
                "score columns must be float64, float32, decimal128 or integer columns",
            ))
        }
    })
}

/// A label column: integers of any width (within 64 bits, signed), or floats holding
/// whole numbers (as the pandas route takes them).
pub(crate) fn labels<'a>(col: &'a dyn Array, place: &Place) -> Result<Cow<'a, [i64]>> {
    let whole = |v: &mut dyn Iterator<Item = f64>| -> Result<Cow<'a, [i64]>> {
        let mut out = Vec::new();
        for (row, f) in v.enumerate() {
            match whole_label(f) {
                Some(l) => out.push(l),
                None => {
                    return Err(place.error(
                        Some(row),
                        format!(
                            "the {} column '{}' holds {f}, not a whole-number label",
                            place.what, place.column
                        ),
                    ))
                }
            }
        }
        Ok(Cow::Owned(out))
    };
    match col.data_type() {
        DataType::Int64 => Ok(Cow::Borrowed(col.as_primitive::<Int64Type>().values())),
        DataType::Float64 => whole(&mut col.as_primitive::<Float64Type>().values().iter().copied()),
        DataType::Float32 => whole(
            &mut col
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|&v| f64::from(v)),
        ),
        ty if ty.is_integer() => {
            let wide = integers(col).unwrap_or_default();
            let mut out = Vec::with_capacity(wide.len());
            for (row, v) in wide.into_iter().enumerate() {
                out.push(i64::try_from(v).map_err(|_| {
                    place.error(
                        Some(row),
                        format!(
                            "the {} column '{}' holds {v}, beyond the labels' 64-bit range",
                            place.what, place.column
                        ),
                    )
                })?);
            }
            Ok(Cow::Owned(out))
        }
        ty => Err(place.unsupported(
            ty,
            "label columns must be integer columns (or floats holding whole numbers)",
        )),
    }
}

/// Rows of (query id, document id, value) as one record batch.
fn rows_batch(
    names: [&str; 3],
    qids: ArrayRef,
    docs: ArrayRef,
    values: ArrayRef,
) -> Result<RecordBatch> {
    let field = |name: &str, col: &ArrayRef| Field::new(name, col.data_type().clone(), false);
    let schema = Schema::new(vec![
        field(names[0], &qids),
        field(names[1], &docs),
        field(names[2], &values),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![qids, docs, values])
        .map_err(|e| Error::Input(format!("building Arrow data: {e}")))?;
    Ok(batch)
}

/// Ids as an Arrow string column, or a binary one when some id is not UTF-8 (an Arrow
/// string must be; nothing the user gave is altered).
#[derive(Default)]
struct IdBuilder(arrow_array::builder::LargeBinaryBuilder);

impl IdBuilder {
    fn push(&mut self, id: &[u8]) {
        self.0.append_value(id);
    }

    fn finish(mut self) -> ArrayRef {
        let binary = self.0.finish();
        match arrow_array::LargeStringArray::try_from_binary(binary.clone()) {
            Ok(s) => Arc::new(s),
            Err(_) => Arc::new(binary),
        }
    }
}

/// A run's rows as Arrow data (`query_id`, `doc_id`, `score`): queries in id order,
/// each ranked as trec_eval ranks it.
pub fn run_batch(run: &Run) -> Result<RecordBatch> {
    let (mut q, mut d) = (IdBuilder::default(), IdBuilder::default());
    let mut s = Vec::with_capacity(run.num_results());
    let mut order = Vec::new();
    for query in run.queries() {
        query.ranking(&mut order);
        for &i in &order {
            q.push(query.id());
            d.push(query.docs.get(i as usize));
            s.push(query.values[i as usize]);
        }
    }
    rows_batch(
        ["query_id", "doc_id", "score"],
        q.finish(),
        d.finish(),
        Arc::new(Float64Array::from(s)),
    )
}

/// Judgments as Arrow data (`query_id`, `doc_id`, `relevance`), queries in id order.
pub fn qrels_batch(qrels: &Qrels) -> Result<RecordBatch> {
    let (mut q, mut d) = (IdBuilder::default(), IdBuilder::default());
    let mut l = Vec::with_capacity(qrels.num_judgments());
    for query in qrels.queries() {
        for (doc, label) in query.iter() {
            q.push(query.id());
            d.push(doc);
            l.push(label);
        }
    }
    rows_batch(
        ["query_id", "doc_id", "relevance"],
        q.finish(),
        d.finish(),
        Arc::new(Int64Array::from(l)),
    )
}
