//! Arrow data in and out of Python, through the Arrow PyCapsule interface
//! (`__arrow_c_stream__` / `__arrow_c_array__`): pyarrow tables and readers, polars
//! frames, anything that exports it. The batches are imported as they are exported (a
//! polars frame a slice at a time, since polars copies what it exports) and read by
//! [`crate::arrow`] with the GIL released (no Python object per row); out, a run or
//! qrels is exported as one record batch that pyarrow or polars imports.

use std::ffi::CString;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{make_array, Array, RecordBatch, RecordBatchIterator};
use arrow_schema::{DataType, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use super::convert::id_list;
use super::errors;
pub(super) use crate::arrow::Table;
use crate::error::Result;
use crate::qrels::Qrels;
use crate::run::Run;

/// The Arrow data `obj` exports, or None when it exports none. A pandas DataFrame
/// (which exports it since pandas 2.2, through pyarrow) keeps the pandas route, which
/// reads its columns in place.
pub(super) fn import(obj: &Bound<'_, PyAny>) -> PyResult<Option<Table>> {
    // a producer's malformed data must not panic across into Python
    super::guarded(obj.py(), || import_unguarded(obj))
}

/// The Arrow data an object exports, or an `irmetrics.InputError` saying what is taken.
pub(super) fn required(data: &Bound<'_, PyAny>) -> PyResult<Table> {
    import(data)?.ok_or_else(|| {
        errors::input_err(
            data.py(),
            format!(
                "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, \
                 such as a pyarrow Table or a polars DataFrame), got {}",
                data.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ),
        )
    })
}

fn import_unguarded(obj: &Bound<'_, PyAny>) -> PyResult<Option<Table>> {
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
    if module == "polars" || module.starts_with("polars.") {
        // a LazyFrame: its query run, the DataFrame it gives read as any other (known
        // by its type's name: asking a lazy frame for its columns makes polars warn
        // that resolving its schema may be expensive)
        if obj.get_type().name().is_ok_and(|n| n == "LazyFrame") && obj.hasattr("collect")? {
            return import_unguarded(&obj.call_method0("collect")?);
        }
        if let Some(table) = polars_slices(obj)? {
            return Ok(Some(table));
        }
    }
    if obj.hasattr("__arrow_c_stream__")? {
        let (schema, batches) = stream_batches(obj)?;
        return Ok(Some(Table::new(schema, batches)));
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
        return Ok(Some(Table::new(batch.schema(), vec![batch])));
    }
    Ok(None)
}

/// The schema and batches `obj` exports through `__arrow_c_stream__`.
fn stream_batches(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let bad = |e: String| errors::input_err(obj.py(), format!("reading Arrow data: {e}"));
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
        .map_err(|e| {
            // polars exports a column of type Null (every value missing) with a buffer
            // arrow-rs refuses: name such columns, not only the interface's complaint
            let null: Vec<String> = (schema.fields().iter())
                .filter(|f| f.data_type() == &DataType::Null)
                .map(|f| format!("'{}'", f.name()))
                .collect();
            if null.is_empty() {
                return bad(e.to_string());
            }
            bad(format!(
                "column {} has Arrow type Null (every value missing); drop or fill it \
                 first ({e})",
                null.join(", ")
            ))
        })?;
    Ok((schema, batches))
}

/// Rows of a polars frame exported at a time: polars copies what it exports (M, 10 M
/// rows: 383 MiB and 0.15 s for the whole frame), so the frame is exported a slice at a
/// time as the rows are taken in, each slice's copy freed before the next is made.
const POLARS_SLICE_ROWS: usize = 1 << 19;

/// A polars DataFrame as a table exported a slice at a time (its first slice now, the
/// others as they are read); None for other polars objects and empty frames (exported
/// whole).
fn polars_slices(obj: &Bound<'_, PyAny>) -> PyResult<Option<Table>> {
    let (Ok(height), true) = (
        obj.getattr("height").and_then(|h| h.extract::<usize>()),
        obj.hasattr("iter_slices")?,
    ) else {
        return Ok(None);
    };
    if height <= POLARS_SLICE_ROWS {
        return Ok(None);
    }
    let slices = obj.call_method1("iter_slices", (POLARS_SLICE_ROWS,))?;
    let Some(first) = slices.try_iter()?.next().transpose()? else {
        return Ok(None);
    };
    let (schema, first) = stream_batches(&first)?;
    let slices: Py<PyAny> = slices.unbind();
    let expected = schema.clone();
    // the other slices, each exported when the rows before it are taken (the caller
    // holds no GIL then: it is taken for each export)
    let others = std::iter::from_fn(move || {
        Python::attach(|py| {
            let slice = match slices.bind(py).call_method0("__next__") {
                Ok(slice) => slice,
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => return None,
                Err(e) => return Some(Err(e)),
            };
            Some(stream_batches(&slice).and_then(|(schema, batches)| {
                if schema != expected {
                    // another thread changed the frame's columns between two slices
                    return Err(errors::input_err(
                        py,
                        "the polars frame's columns changed while it was read".into(),
                    ));
                }
                Ok(batches)
            }))
        })
    });
    let more = std::iter::once(Ok(first))
        .chain(others)
        .flat_map(|slice| match slice {
            Ok(batches) => batches.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(crate::Error::Input(format!("reading Arrow data: {e}")))],
        });
    Ok(Some(Table::streamed(schema, Box::new(more), Some(height))))
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

/// A run's rows as exportable Arrow data (see [`crate::arrow::run_batch`]).
pub(super) fn run_rows(run: &Run) -> Result<PyArrowData> {
    Ok(PyArrowData {
        batch: crate::arrow::run_batch(run)?,
    })
}

/// Judgments as exportable Arrow data (see [`crate::arrow::qrels_batch`]).
pub(super) fn qrels_rows(qrels: &Qrels) -> Result<PyArrowData> {
    Ok(PyArrowData {
        batch: crate::arrow::qrels_batch(qrels)?,
    })
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
            let batch = data.batch.clone();
            let schema = batch.schema();
            // pandas' own str dtype where it keeps strings in Arrow (pandas 3 with
            // pyarrow): the id columns are handed over as Arrow arrays instead of one
            // Python str per id (a 698,000-row run: 0.81 -> 0.06 s), the same frame
            let utf8 = !batch
                .columns()
                .iter()
                .any(|c| c.data_type() == &DataType::LargeBinary);
            let arrow_ids = match arrow_str_dtype(py, &pandas)? {
                Some(dtype) if utf8 => {
                    let table = py.import("pyarrow")?.call_method1("table", (data,))?;
                    Some((dtype, table))
                }
                _ => None,
            };
            for (i, (field, col)) in schema.fields().iter().zip(batch.columns()).enumerate() {
                let values = match col.data_type() {
                    DataType::Float64 => {
                        numpy::PyArray1::from_slice(py, col.as_primitive::<Float64Type>().values())
                            .into_any()
                    }
                    DataType::Int64 => {
                        numpy::PyArray1::from_slice(py, col.as_primitive::<Int64Type>().values())
                            .into_any()
                    }
                    DataType::LargeUtf8 => match &arrow_ids {
                        Some((dtype, table)) => {
                            let column = table.call_method1("column", (i,))?;
                            dtype.call_method1("__from_arrow__", (column,))?
                        }
                        None => {
                            let ids = col
                                .as_string::<i64>()
                                .iter()
                                .flatten()
                                .map(|s| s.as_bytes());
                            id_list(py, ids)?.into_any()
                        }
                    },
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

/// pandas' default dtype of strings when it keeps them in Arrow (`StringDtype` with
/// `storage="pyarrow"`: pandas 3 with pyarrow installed), else None.
fn arrow_str_dtype<'py>(
    py: Python<'py>,
    pandas: &Bound<'py, PyModule>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let dtype = pandas
        .call_method1("Series", (vec!["a"],))?
        .getattr("dtype")?;
    let arrow = match dtype.getattr("storage") {
        Ok(storage) => storage.extract::<String>().is_ok_and(|s| s == "pyarrow"),
        Err(_) => false,
    };
    Ok((arrow && py.import("pyarrow").is_ok()).then_some(dtype))
}

/// Evaluate the run in Arrow data as its rows are taken in: each query is evaluated
/// once its rows are in (on other threads), so the run is never held whole (with a
/// polars frame exported a slice at a time, only a few slices and the queries being
/// evaluated are held on top of the frame). None, having evaluated nothing, when the
/// rows of a query lie apart: the caller then builds the run whole. Ctrl-C is looked
/// for between batches.
pub(super) fn evaluate_table(
    py: Python<'_>,
    ev: &crate::Evaluator,
    table: &Table,
) -> PyResult<Option<crate::results::Results>> {
    use crate::arrow::{Columns, PieceReader, SCORE};
    use crate::error::Unit;
    use std::sync::atomic::AtomicBool;
    let cols =
        Columns::find(&table.names(), [None; 3], SCORE).map_err(|e| errors::input_err(py, e))?;
    let never = AtomicBool::new(false);
    let mut interrupt: Option<PyErr> = None;
    let res = ev.evaluate_pipelined(
        crate::intake::Place::new("run", Unit::Row),
        Vec::new(),
        false,
        |b| {
            py.detach(|| {
                let mut seen = 0usize;
                let checked = table.batches().map(|batch| {
                    seen += 1;
                    if seen % 16 == 0 {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            interrupt = Some(e);
                            return Err(crate::Error::Interrupted);
                        }
                    }
                    batch
                });
                let reader = PieceReader::new(&cols, "run", crate::arrow::scores, &never);
                reader.take_in_waves(checked, b)
            })
        },
        |f| py.detach(f),
    );
    if let Some(e) = interrupt {
        return Err(e);
    }
    match res {
        Ok(Some(r)) => r.map(Some).map_err(|e| errors::to_py(py, e)),
        Ok(None) => Ok(None),
        Err(e) => Err(errors::to_py(py, e)),
    }
}
