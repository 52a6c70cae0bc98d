//! Arrow data in and out, through the Arrow PyCapsule interface
//! (`__arrow_c_stream__` / `__arrow_c_array__`): pyarrow tables and readers, polars
//! frames, anything that exports it. The batches are imported without a copy, read in
//! Rust with the GIL released (no Python object per row), and each row goes into the
//! one intake (the builders); out, a run or qrels is exported as one record batch that
//! pyarrow or polars imports.

use std::borrow::Cow;
use std::ffi::CString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{
    make_array, Array, ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchIterator,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use super::convert::id_list;
use super::errors;
use crate::error::{Error, Location, Result, Unit};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::{Run, RunBuilder};

/// Record batches imported from a Python object (their buffers stay the producer's).
pub(super) struct Table {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl Table {
    /// The Arrow data `obj` exports, or None when it exports none. A pandas DataFrame
    /// (which exports it since pandas 2.2, through pyarrow) keeps the pandas route,
    /// which reads its columns in place.
    pub(super) fn of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Table>> {
        // a producer's malformed data must not panic across into Python
        super::guarded(obj.py(), || Self::import(obj))
    }

    fn import(obj: &Bound<'_, PyAny>) -> PyResult<Option<Table>> {
        let py = obj.py();
        let module = obj
            .get_type()
            .module()
            .map(|m| m.to_string())
            .unwrap_or_default();
        if module == "pandas" || module.starts_with("pandas.") {
            return Ok(None);
        }
        let bad = |e: String| errors::input_err(py, format!("reading Arrow data: {e}"));
        if obj.hasattr("__arrow_c_stream__")? {
            let capsule = obj.call_method0("__arrow_c_stream__")?;
            let capsule = capsule
                .cast::<PyCapsule>()
                .map_err(|_| bad("__arrow_c_stream__ did not return a PyCapsule".into()))?;
            let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
            // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream
            // (the Arrow C stream interface); from_raw moves it out and leaves a released
            // one behind, as the interface's consumers do.
            let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.cast().as_ptr()) };
            let reader = ArrowArrayStreamReader::try_new(stream).map_err(|e| bad(e.to_string()))?;
            let schema = arrow_array::RecordBatchReader::schema(&reader);
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(e.to_string()))?;
            return Ok(Some(Table { schema, batches }));
        }
        if obj.hasattr("__arrow_c_array__")? {
            let pair = obj.call_method0("__arrow_c_array__")?;
            let pair = pair
                .cast::<PyTuple>()
                .map_err(|_| bad("__arrow_c_array__ did not return a tuple".into()))?;
            let (schema, array) = (pair.get_item(0)?, pair.get_item(1)?);
            let schema = schema
                .cast::<PyCapsule>()
                .map_err(|_| bad("__arrow_c_array__ did not return PyCapsules".into()))?;
            let array = array
                .cast::<PyCapsule>()
                .map_err(|_| bad("__arrow_c_array__ did not return PyCapsules".into()))?;
            let schema_ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
            let array_ptr = array.pointer_checked(Some(c"arrow_array"))?;
            // SAFETY: capsules named "arrow_schema" / "arrow_array" hold the C data
            // interface's structs; the array is moved out (released one left behind), the
            // schema borrowed while its capsule is alive.
            let data = unsafe {
                let array = FFI_ArrowArray::from_raw(array_ptr.cast().as_ptr());
                let schema: &FFI_ArrowSchema = schema_ptr.cast().as_ref();
                from_ffi(array, schema)
            }
            .map_err(|e| bad(e.to_string()))?;
            let array = make_array(data);
            let Some(columns) = array.as_struct_opt() else {
                return Err(bad(format!(
                    "expected a table (a struct array of named columns), got one array of \
                     type {}",
                    array.data_type()
                )));
            };
            if columns.null_count() > 0 {
                return Err(bad("the table (a struct array) has null rows".into()));
            }
            let batch = RecordBatch::from(columns);
            return Ok(Some(Table {
                schema: batch.schema(),
                batches: vec![batch],
            }));
        }
        Ok(None)
    }

    /// The record batches, in order.
    pub(super) fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// The column names, in order.
    pub(super) fn names(&self) -> Vec<Option<String>> {
        self.schema
            .fields()
            .iter()
            .map(|f| Some(f.name().clone()))
            .collect()
    }

    /// Judgments from the columns `cols` (query id, document id, label).
    pub(super) fn qrels(&self, cols: Columns, cancel: &AtomicBool) -> Result<Qrels> {
        let mut b = QrelsBuilder::default();
        self.each_row(&cols, "qrels", labels, |q, d, l| b.add(q, d, l), cancel)?;
        b.build()
    }

    /// A run from the columns `cols` (query id, document id, score), tagged `runid`.
    pub(super) fn run(&self, cols: Columns, runid: &[u8], cancel: &AtomicBool) -> Result<Run> {
        let mut b = RunBuilder::default();
        b.runid(runid)?;
        self.each_row(&cols, "run", scores, |q, d, s| b.add(q, d, s), cancel)?;
        b.build()
    }

    /// Every row, in order, to `add`, after each batch's columns are checked (types,
    /// nulls); a problem names the row, counted from 0 over the whole table.
    fn each_row<V: Copy>(
        &self,
        cols: &Columns,
        source: &str,
        values: ValueReader<V>,
        mut add: impl FnMut(&[u8], &[u8], V) -> Result<()>,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let mut first = 0u64;
        let (mut qbuf, mut dbuf) = (Vec::new(), Vec::new());
        for batch in &self.batches {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
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
            let v = values(v, &place(2))?;
            for (i, &value) in v.iter().enumerate() {
                if i % (1 << 16) == 0 && i > 0 && cancel.load(Ordering::Relaxed) {
                    return Err(Error::Interrupted);
                }
                add(q.get(i, &mut qbuf), d.get(i, &mut dbuf), value)?;
            }
            first += batch.num_rows() as u64;
        }
        Ok(())
    }
}

/// Reads a value column of one batch (scores or labels), checking its type and values.
type ValueReader<V> = for<'a> fn(&'a dyn Array, &Place<'_>) -> Result<Cow<'a, [V]>>;

/// Which columns of a table hold the query ids, the document ids and the values.
pub(super) struct Columns {
    pub(super) index: [usize; 3],
    pub(super) names: [String; 3],
    pub(super) what: [&'static str; 3],
}

/// One column of one batch, for messages: the table, the column's name and role, and
/// the batch's first row.
pub(super) struct Place<'a> {
    pub(super) source: &'a str,
    pub(super) column: &'a str,
    pub(super) what: &'a str,
    pub(super) first: u64,
}

impl Place<'_> {
    pub(super) fn error(&self, row: Option<usize>, message: String) -> Error {
        let location = match row {
            Some(r) => Location::new(self.source, self.first + r as u64, Unit::Row),
            None => Location::new(self.source, 0, Unit::None),
        };
        Error::Format { location, message }
    }

    fn no_nulls(&self, col: &dyn Array) -> Result<()> {
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

    pub(super) fn unsupported(&self, ty: &DataType, works: &str) -> Error {
        Error::Input(format!(
            "{}: the {} column '{}' has Arrow type {ty}; {works}",
            self.source, self.what, self.column
        ))
    }
}

/// An id column of one batch: strings or bytes read in place, integers written as
/// their decimal text (as a TREC file holds them), dictionaries through their keys.
pub(super) enum IdArray<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
    Integers(Vec<i128>),
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
    pub(super) fn of(col: &'a dyn Array, place: &Place) -> Result<IdArray<'a>> {
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
    pub(super) fn get_str(&self, i: usize) -> Option<&str> {
        match self {
            IdArray::Utf8(a) => Some(a.value(i)),
            IdArray::LargeUtf8(a) => Some(a.value(i)),
            IdArray::Utf8View(a) => Some(a.value(i)),
            IdArray::Dictionary(keys, values) => values.get_str(keys[i]),
            _ => None,
        }
    }

    /// The id at row `i` (integers are written into `buf`).
    #[inline]
    pub(super) fn get<'s>(&'s self, i: usize, buf: &'s mut Vec<u8>) -> &'s [u8] {
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

/// A score column: float64 read in place; float32 and integers converted exactly (as
/// far as a double holds them).
pub(super) fn scores<'a>(col: &'a dyn Array, place: &Place) -> Result<Cow<'a, [f64]>> {
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
        ty => {
            return Err(place.unsupported(
                ty,
                "score columns must be float64, float32 or integer columns",
            ))
        }
    })
}

/// A label column: integers of any width (within 64 bits, signed), or floats holding
/// whole numbers (as the pandas route takes them).
fn labels<'a>(col: &'a dyn Array, place: &Place) -> Result<Cow<'a, [i64]>> {
    let whole = |v: &mut dyn Iterator<Item = f64>| -> Result<Cow<'a, [i64]>> {
        let mut out = Vec::new();
        for (row, f) in v.enumerate() {
            match super::convert::whole_label(f) {
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

/// Rows exported as one record batch, through `__arrow_c_stream__`: what
/// `pyarrow.table(...)`, `polars.DataFrame(...)` and the other Arrow consumers take.
#[pyclass(frozen, name = "ArrowData", module = "irmetrics")]
pub struct PyArrowData {
    batch: RecordBatch,
}

#[pymethods]
impl PyArrowData {
    /// The rows as an Arrow C stream (a PyCapsule); `requested_schema` is ignored (the
    /// columns are string, string and float64 or int64).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batch = self.batch.clone();
        let reader = RecordBatchIterator::new([Ok(batch.clone())], batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self
            .batch
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        format!(
            "ArrowData(rows={}, columns={names:?})",
            self.batch.num_rows()
        )
    }
}

/// Rows of (query id, document id, value) as an exportable record batch.
fn rows_batch(
    names: [&str; 3],
    qids: ArrayRef,
    docs: ArrayRef,
    values: ArrayRef,
) -> Result<PyArrowData> {
    let field = |name: &str, col: &ArrayRef| Field::new(name, col.data_type().clone(), false);
    let schema = Schema::new(vec![
        field(names[0], &qids),
        field(names[1], &docs),
        field(names[2], &values),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![qids, docs, values])
        .map_err(|e| Error::Input(format!("building Arrow data: {e}")))?;
    Ok(PyArrowData { batch })
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
pub(super) fn run_rows(run: &Run) -> Result<PyArrowData> {
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
pub(super) fn qrels_rows(qrels: &Qrels) -> Result<PyArrowData> {
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

/// The kinds of table that rows go out as.
#[derive(Clone, Copy)]
pub(super) enum Frame {
    /// A `pyarrow.Table` (needs pyarrow).
    Arrow,
    /// A `polars.DataFrame` (needs polars).
    Polars,
    /// A `pandas.DataFrame` (needs pandas only: the columns go through numpy).
    Pandas,
}

/// `data` as a table of the kind `frame`, or `irmetrics.MissingDependencyError` saying
/// which extra to install.
pub(super) fn to_frame<'py>(
    py: Python<'py>,
    data: PyArrowData,
    frame: Frame,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match frame {
        Frame::Arrow => {
            errors::require(py, "pyarrow", what, "'irmetrics[arrow]'")?;
            py.import("pyarrow")?.call_method1("table", (data,))
        }
        Frame::Polars => {
            errors::require(py, "polars", what, "'irmetrics[polars]'")?;
            py.import("polars")?.call_method1("DataFrame", (data,))
        }
        Frame::Pandas => {
            errors::require(py, "pandas", what, "'irmetrics[pandas]'")?;
            errors::require_numpy(py, what)?;
            let pandas = py.import("pandas")?;
            let columns = pyo3::types::PyDict::new(py);
            let schema = data.batch.schema();
            for (field, col) in schema.fields().iter().zip(data.batch.columns()) {
                let values = match col.data_type() {
                    DataType::Float64 => {
                        numpy::PyArray1::from_slice(py, col.as_primitive::<Float64Type>().values())
                            .into_any()
                    }
                    DataType::Int64 => {
                        numpy::PyArray1::from_slice(py, col.as_primitive::<Int64Type>().values())
                            .into_any()
                    }
                    DataType::LargeUtf8 => {
                        let ids = col
                            .as_string::<i64>()
                            .iter()
                            .flatten()
                            .map(|s| s.as_bytes());
                        id_list(py, ids)?.into_any()
                    }
                    // ids that are not UTF-8, as str with surrogate escapes: kept as
                    // objects (pandas' own string dtypes would refuse them)
                    _ => {
                        let ids = id_list(py, col.as_binary::<i64>().iter().flatten())?;
                        let kw = pyo3::types::PyDict::new(py);
                        kw.set_item("dtype", "object")?;
                        pandas.call_method("Series", (ids,), Some(&kw))?
                    }
                };
                columns.set_item(field.name(), values)?;
            }
            pandas.call_method1("DataFrame", (columns,))
        }
    }
}
