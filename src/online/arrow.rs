//! Logs from Arrow record batches (pyarrow tables, polars frames, parquet files): each
//! field's column found by name, text read in place (dictionary keys passed on as the
//! source's codes, so each distinct text is looked up once per batch), typed timestamps
//! in their own unit, nulls as missing values.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::RecordBatch;
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Schema, TimeUnit};

use crate::arrow::{scores, IdArray, Place, Table};
use crate::error::{Error, Result, Unit};
use crate::online::{Event, Log, LogBuilder, LogOptions, Time, FIELDS, REQUIRED};

const TEXT: [usize; 4] = [0, 2, 3, 9];
const NUMBERS: [usize; 4] = [4, 5, 7, 8];

/// One text field of one batch (ids read in place; dictionary keys passed on as
/// the source's codes, so each distinct text is looked up once per batch).
struct Text<'a> {
    ids: IdArray<'a>,
    nulls: Option<NullBuffer>,
}

impl Text<'_> {
    fn get<'s>(&'s self, i: usize, buf: &'s mut Vec<u8>, place: &Place) -> Result<Option<&'s str>> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return Ok(None);
        }
        if let Some(s) = self.ids.get_str(i) {
            return Ok(Some(s));
        }
        std::str::from_utf8(self.ids.get(i, buf))
            .map(Some)
            .map_err(|_| {
                place.error(
                    Some(i),
                    format!(
                        "the {} column '{}' holds bytes that are not UTF-8",
                        place.what, place.column
                    ),
                )
            })
    }

    fn code(&self, i: usize) -> Option<u32> {
        match &self.ids {
            IdArray::Dictionary(keys, _) => u32::try_from(keys[i]).ok(),
            _ => None,
        }
    }
}

/// A number field of one batch (NaN and null: none).
struct Numbers<'a> {
    values: Cow<'a, [f64]>,
    nulls: Option<NullBuffer>,
}

impl Numbers<'_> {
    #[inline]
    fn get(&self, i: usize) -> Option<f64> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        Some(self.values[i]).filter(|v| !v.is_nan())
    }
}

/// The seconds per unit of an Arrow timestamp type.
fn per_unit(unit: &TimeUnit) -> f64 {
    match unit {
        TimeUnit::Second => 1.0,
        TimeUnit::Millisecond => 1e-3,
        TimeUnit::Microsecond => 1e-6,
        TimeUnit::Nanosecond => 1e-9,
    }
}

/// The log's fields' column indices, checked: required ones present, none named
/// twice.
fn find(schema: &Schema, opts: &LogOptions, source: &str) -> Result<[Option<usize>; 10]> {
    let names = crate::arrow::column_names(schema);
    let mut index = [None; 10];
    for (f, wanted) in opts.columns.iter().enumerate() {
        let mut hits = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.as_deref() == Some(wanted));
        index[f] = hits.next().map(|(i, _)| i);
        if hits.next().is_some() {
            return Err(Error::Input(format!(
                "{source}: two columns are named '{wanted}' (the {} field)",
                FIELDS[f]
            )));
        }
    }
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter_map(|r| {
            let f = FIELDS.iter().position(|x| x == r).unwrap_or(0);
            index[f]
                .is_none()
                .then(|| format!("'{}' ({r})", opts.columns[f]))
        })
        .collect();
    if !missing.is_empty() {
        let have: Vec<String> = names.iter().flatten().map(|n| format!("'{n}'")).collect();
        return Err(Error::Input(format!(
            "{source}: no column {}; the table has {}; map yours with columns={{field: name}}",
            missing.join(", "),
            have.join(", ")
        )));
    }
    Ok(index)
}

/// A log from Arrow data (see [`log_from_batches`]).
pub fn log_from_table(
    table: &Table,
    opts: LogOptions,
    source: &str,
    cancel: &AtomicBool,
) -> Result<Log> {
    let rows = table.num_rows();
    log_from_batches(table.schema(), table.batches(), rows, opts, source, cancel)
}

/// A log from record batches of `schema` arriving one at a time (`rows`: their number,
/// when known): each field's column found by its name (`opts.columns`); places are rows
/// from 0 over the whole table, in `source`.
pub fn log_from_batches(
    schema: &Schema,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    rows: Option<usize>,
    mut opts: LogOptions,
    source: &str,
    cancel: &AtomicBool,
) -> Result<Log> {
    let index = find(schema, &opts, source)?;
    let time_index = index[1].unwrap_or(0);
    // a typed timestamp column fixes the unit of its numbers
    if let DataType::Timestamp(unit, _) = schema.field(time_index).data_type() {
        let scale = per_unit(unit);
        match opts.time_scale {
            Some(s) if s != scale => {
                return Err(Error::Option(format!(
                    "the timestamp column is an Arrow timestamp in {unit:?}s; time_unit \
                     does not apply to it (leave it 'auto')"
                )))
            }
            _ => opts.time_scale = Some(scale),
        }
    }
    let mut b = LogBuilder::new(opts.clone(), source, Unit::Row)?;
    for (f, i) in index.iter().enumerate() {
        if i.is_some() && f != 6 {
            b.declare(f);
        }
    }
    b.reserve(rows.unwrap_or(0));
    let mut first = 0u64;
    let mut bufs: [Vec<u8>; 5] = Default::default();
    for batch in batches {
        let batch = batch?;
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        b.forget_codes();
        let place = |f: usize| Place {
            source,
            column: &opts.columns[f],
            what: FIELDS[f],
            first,
        };
        let col = |f: usize| index[f].map(|i| batch.column(i).as_ref());
        let mut text: [Option<Text<'_>>; 10] = Default::default();
        for f in TEXT {
            if let Some(c) = col(f) {
                text[f] = Some(Text {
                    ids: IdArray::of(c, &place(f))?,
                    nulls: c.logical_nulls(),
                });
            }
        }
        let mut numbers: [Option<Numbers<'_>>; 10] = Default::default();
        for f in NUMBERS {
            if let Some(c) = col(f) {
                numbers[f] = Some(Numbers {
                    values: scores(c, &place(f)).map_err(|_| {
                        place(f).unsupported(c.data_type(), "it must be a float or integer column")
                    })?,
                    nulls: c.logical_nulls(),
                });
            }
        }
        let time_col = batch.column(time_index).as_ref();
        let (times, time_text) = match time_col.data_type() {
            DataType::Timestamp(unit, _) => {
                let raw: Vec<f64> = match unit {
                    TimeUnit::Second => {
                        ints(time_col.as_primitive::<TimestampSecondType>().values())
                    }
                    TimeUnit::Millisecond => {
                        ints(time_col.as_primitive::<TimestampMillisecondType>().values())
                    }
                    TimeUnit::Microsecond => {
                        ints(time_col.as_primitive::<TimestampMicrosecondType>().values())
                    }
                    TimeUnit::Nanosecond => {
                        ints(time_col.as_primitive::<TimestampNanosecondType>().values())
                    }
                };
                (
                    Some(Numbers {
                        values: Cow::Owned(raw),
                        nulls: time_col.logical_nulls(),
                    }),
                    None,
                )
            }
            ty if ty.is_integer() || ty.is_floating() => (
                Some(Numbers {
                    values: scores(time_col, &place(1))?,
                    nulls: time_col.logical_nulls(),
                }),
                None,
            ),
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Dictionary(..) => (
                None,
                Some(Text {
                    ids: IdArray::of(time_col, &place(1))?,
                    nulls: time_col.logical_nulls(),
                }),
            ),
            ty => {
                return Err(place(1).unsupported(
                    ty,
                    "it must be an Arrow timestamp, numbers (s, ms, us or ns) or ISO 8601 text",
                ))
            }
        };
        let [b0, b1, b2, b3, b4] = &mut bufs;
        for i in 0..batch.num_rows() {
            if i % (1 << 16) == 0 && i > 0 && cancel.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
            let time = match (&times, &time_text) {
                (Some(n), _) => n.get(i).map(Time::Number),
                (_, Some(t)) => t.get(i, b4, &place(1))?.map(Time::Text),
                _ => None,
            };
            let code = |f: usize| text[f].as_ref().and_then(|t| t.code(i));
            let number = |f: usize| numbers[f].as_ref().and_then(|n| n.get(i));
            let e = Event {
                codes: [code(0), code(3), code(9)],
                session: text_at(&text[0], i, b0, &place(0))?,
                time,
                kind: text_at(&text[2], i, b1, &place(2))?,
                query: text_at(&text[3], i, b2, &place(3))?,
                n_results: number(4),
                position: number(5),
                dwell: number(7),
                latency: number(8),
                variant: text_at(&text[9], i, b3, &place(9))?,
            };
            b.push(e, first + i as u64)?;
        }
        first += batch.num_rows() as u64;
    }
    b.finish()
}

/// A text field's value at row `i` (None: no such column, or a null).
fn text_at<'s>(
    t: &'s Option<Text<'_>>,
    i: usize,
    buf: &'s mut Vec<u8>,
    place: &Place,
) -> Result<Option<Cow<'s, str>>> {
    match t {
        Some(t) => Ok(t.get(i, buf, place)?.map(Cow::Borrowed)),
        None => Ok(None),
    }
}

fn ints(v: &[i64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}
