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

use crate::arrow::{scores, IdArray, Place, Stretches, Table, STRETCH};
use crate::error::{Error, Result, Unit};
use crate::online::log::Known;
use crate::online::{Event, Log, LogBuilder, LogOptions, Time, FIELDS, REQUIRED};

const TEXT: [usize; 4] = [0, 2, 3, 9];
const NUMBERS: [usize; 4] = [4, 5, 7, 8];
/// The fields of [`Event::codes`], in its order: session, query, variant, type.
const CODED: [usize; 4] = [0, 3, 9, 2];

/// One text field of one batch (ids read in place; dictionary keys passed on as
/// the source's codes, so each distinct text is looked up once per batch).
struct Text<'a> {
    ids: IdArray<'a>,
    nulls: Option<NullBuffer>,
}

impl Text<'_> {
    #[inline]
    fn get<'s>(&'s self, i: usize, buf: &'s mut Vec<u8>, place: &Place) -> Result<Option<&'s str>> {
        if self.is_null(i) {
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

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.is_null(i))
    }

    /// For [`Known`]: row `i`'s dictionary key (`Some(None)`: a null; `None`: not a
    /// dictionary).
    #[inline]
    fn known_code(&self, i: usize) -> Option<Option<u32>> {
        if self.is_null(i) {
            Some(None)
        } else {
            self.code(i).map(Some)
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
    log_from_batches(table.schema(), table.batches(), opts, source, cancel)
}

/// Where each field is in a table, and the names for messages.
struct Layout<'a> {
    index: [Option<usize>; 10],
    time: usize,
    names: [String; 10],
    source: &'a str,
}

/// A builder for a log of a table of `schema`, and where its fields are: each field's
/// column found by its name (`opts.columns`).
fn start<'a>(
    schema: &Schema,
    mut opts: LogOptions,
    source: &'a str,
) -> Result<(LogBuilder, Layout<'a>)> {
    let index = find(schema, &opts, source)?;
    let time = index[1].unwrap_or(0);
    // a typed timestamp column fixes the unit of its numbers
    if let DataType::Timestamp(unit, _) = schema.field(time).data_type() {
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
    let names = opts.columns.clone();
    let mut b = LogBuilder::new(opts, source, Unit::Row)?;
    for (f, i) in index.iter().enumerate() {
        if i.is_some() && f != super::log::field::DOC_ID {
            b.declare(f);
        }
    }
    let layout = Layout {
        index,
        time,
        names,
        source,
    };
    Ok((b, layout))
}

/// A log from record batches of `schema` arriving one at a time: each field's column
/// found by its name (`opts.columns`); places are rows from 0 over the whole table, in
/// `source`. The batches are taken in by stretches of 64 Ki rows, a few stretches
/// ahead, each into a part of the log on a thread of the pool, appended in order: the
/// log, and the first error, are those of one builder taking in every row in order.
pub fn log_from_batches(
    schema: &Schema,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: LogOptions,
    source: &str,
    cancel: &AtomicBool,
) -> Result<Log> {
    let (b, layout) = start(schema, opts, source)?;
    let stretches = Stretches::new(batches.into_iter(), STRETCH);
    let fill = |stretch: Vec<(RecordBatch, u64)>,
                part: &mut LogBuilder,
                stop: &dyn Fn(&LogBuilder) -> bool| {
        part.reserve(STRETCH);
        for (batch, first) in stretch {
            take_batch(part, &layout, &batch, first, cancel)?;
            if stop(part) {
                break;
            }
        }
        Ok(())
    };
    b.take_in_parts(stretches, fill, cancel)
}

/// A log from a parquet file's row groups, each read and taken in by a task of its
/// own ([`LogBuilder::take_in_parts`]): decoding and taking in run on every thread.
#[cfg(feature = "parquet")]
pub(crate) fn log_from_parquet(
    file: &crate::formats::parquet::Groups,
    opts: LogOptions,
    cancel: &AtomicBool,
) -> Result<Log> {
    let (b, layout) = start(file.schema(), opts, file.source())?;
    let fill = |group: usize, part: &mut LogBuilder, stop: &dyn Fn(&LogBuilder) -> bool| {
        // room for the group's events at once: grown by doubling, a million events'
        // room is copied and first touched twice over
        part.reserve(file.rows(group));
        for batch in file.batches(group)? {
            let (batch, first) = batch?;
            take_batch(part, &layout, &batch, first, cancel)?;
            if stop(part) {
                break;
            }
        }
        Ok(())
    };
    b.take_in_parts((0..file.len()).map(Ok), fill, cancel)
}

/// The rows of `batch` (row `first` of the table the first) to `b`.
fn take_batch(
    b: &mut LogBuilder,
    layout: &Layout<'_>,
    batch: &RecordBatch,
    first: u64,
    cancel: &AtomicBool,
) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    b.forget_codes();
    // each field's place made once a batch, not for every row's field
    let places: [Place<'_>; 10] = std::array::from_fn(|f| Place {
        source: layout.source,
        column: &layout.names[f],
        what: FIELDS[f],
        first,
    });
    let col = |f: usize| layout.index[f].map(|i| batch.column(i).as_ref());
    let mut text: [Option<Text<'_>>; 10] = Default::default();
    for f in TEXT {
        if let Some(c) = col(f) {
            text[f] = Some(Text {
                ids: IdArray::of(c, &places[f])?,
                nulls: c.logical_nulls(),
            });
        }
    }
    let mut numbers: [Option<Numbers<'_>>; 10] = Default::default();
    for f in NUMBERS {
        if let Some(c) = col(f) {
            numbers[f] = Some(Numbers {
                values: scores(c, &places[f]).map_err(|_| {
                    places[f].unsupported(c.data_type(), "it must be a float or integer column")
                })?,
                nulls: c.logical_nulls(),
            });
        }
    }
    let time_col = batch.column(layout.time).as_ref();
    let (times, time_text) = match time_col.data_type() {
        DataType::Timestamp(unit, _) => {
            let raw: Vec<f64> = match unit {
                TimeUnit::Second => ints(time_col.as_primitive::<TimestampSecondType>().values()),
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
                values: scores(time_col, &places[1])?,
                nulls: time_col.logical_nulls(),
            }),
            None,
        ),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(..) => (
            None,
            Some(Text {
                ids: IdArray::of(time_col, &places[1])?,
                nulls: time_col.logical_nulls(),
            }),
        ),
        ty => {
            return Err(places[1].unsupported(
                ty,
                "it must be an Arrow timestamp, numbers (s, ms, us or ns) or ISO 8601 text",
            ))
        }
    };
    let takes_known = b.takes_known();
    let mut bufs: [Vec<u8>; 5] = Default::default();
    let [b0, b1, b2, b3, b4] = &mut bufs;
    for i in 0..batch.num_rows() {
        if i % (1 << 16) == 0 && i > 0 && cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let time = match (&times, &time_text) {
            (Some(n), _) => n.get(i).map(Time::Number),
            (_, Some(t)) => t.get(i, b4, &places[1])?.map(Time::Text),
            _ => None,
        };
        let code = |f: usize| text[f].as_ref().and_then(|t| t.code(i));
        let number = |f: usize| numbers[f].as_ref().and_then(|n| n.get(i));
        // the row as columns give it, taken in without an `Event` where it can be
        let known = || -> Option<Known<'_>> {
            if !takes_known {
                return None;
            }
            let coded = |f: usize| match &text[f] {
                Some(t) => t.known_code(i),
                None => Some(None),
            };
            let session = text[0].as_ref().filter(|t| !t.is_null(i))?;
            Some(Known {
                kind: coded(2)??,
                session: session.ids.get_str(i)?,
                time: times.as_ref()?.get(i)?,
                numbers: [4, 5, 7, 8].map(|f| number(f).unwrap_or(f64::NAN)),
                query: coded(3)?,
                variant: coded(9)?,
            })
        };
        if let Some(k) = known() {
            // a query's or variant's text read only where its code is new to `b`
            let text_of = |slot: usize| text[CODED[slot]].as_ref()?.ids.get_str(i);
            if b.push_known(&k, first + i as u64, text_of)? {
                continue;
            }
        }
        let e = Event {
            codes: CODED.map(code),
            session: text_at(&text[0], i, b0, &places[0])?,
            time,
            kind: text_at(&text[2], i, b1, &places[2])?,
            query: text_at(&text[3], i, b2, &places[3])?,
            n_results: number(4),
            position: number(5),
            dwell: number(7),
            latency: number(8),
            variant: text_at(&text[9], i, b3, &places[9])?,
        };
        b.push(e, first + i as u64)?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use super::*;

    /// A shuffled log of `n_sessions` sessions (a SERP, then up to three clicks; some
    /// hovers, an unknown type) as rows: session, time (text), type, query, position,
    /// variant.
    type Row = (String, String, String, Option<String>, Option<f64>, String);

    fn rows(n_sessions: usize) -> Vec<Row> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut next = move || rng.next_u64();
        let mut out = Vec::new();
        for s in 0..n_sessions {
            let t0 = 1_700_000_000 + (next() % 1_000_000) as i64;
            let variant = if s % 2 == 0 { "A" } else { "B" };
            let query = format!("q{}", next() % 700);
            let at = |dt: i64| (t0 + dt).to_string();
            out.push((
                format!("s{s}"),
                at(0),
                "query".into(),
                Some(query.clone()),
                None,
                variant.into(),
            ));
            for c in 0..next() % 4 {
                let kind = if next() % 10 == 0 { "hover" } else { "click" };
                let position = Some((1 + next() % 10) as f64);
                out.push((
                    format!("s{s}"),
                    at(5 + 7 * c as i64),
                    kind.into(),
                    None,
                    position,
                    variant.into(),
                ));
            }
        }
        // shuffled (Fisher-Yates)
        for i in (1..out.len()).rev() {
            out.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        out
    }

    /// The rows as record batches of `per_batch` rows (timestamps as text).
    fn batches(rows: &[Row], per_batch: usize) -> (Arc<Schema>, Vec<RecordBatch>) {
        batches_timed(rows, per_batch, false)
    }

    /// [`batches`], timestamps as numbers where `numbers`.
    fn batches_timed(
        rows: &[Row],
        per_batch: usize,
        numbers: bool,
    ) -> (Arc<Schema>, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(
            [
                "session_id",
                "timestamp",
                "type",
                "query",
                "position",
                "variant",
            ]
            .iter()
            .map(|n| {
                let number = *n == "position" || (numbers && *n == "timestamp");
                Field::new(
                    *n,
                    if number {
                        DataType::Float64
                    } else {
                        DataType::Utf8
                    },
                    true,
                )
            })
            .collect::<Vec<_>>(),
        ));
        let out = rows
            .chunks(per_batch)
            .map(|c| {
                let text = |f: &dyn Fn(&Row) -> Option<&str>| -> ArrayRef {
                    Arc::new(c.iter().map(f).collect::<StringArray>())
                };
                let time: ArrayRef = if numbers {
                    Arc::new(c.iter().map(|r| number(&r.1)).collect::<Float64Array>())
                } else {
                    text(&|r| Some(&r.1))
                };
                let columns = vec![
                    text(&|r| Some(&r.0)),
                    time,
                    text(&|r| Some(&r.2)),
                    text(&|r| r.3.as_deref()),
                    Arc::new(c.iter().map(|r| r.4).collect::<Float64Array>()) as ArrayRef,
                    text(&|r| Some(&r.5)),
                ];
                RecordBatch::try_new(schema.clone(), columns).unwrap()
            })
            .collect();
        (schema, out)
    }

    /// A row's timestamp as a number (a text that is none: NaN, a missing one).
    fn number(t: &str) -> f64 {
        t.parse().unwrap_or(f64::NAN)
    }

    /// The same rows pushed one by one into one builder.
    fn one_by_one(rows: &[Row]) -> Result<Log> {
        one_by_one_timed(rows, false)
    }

    /// [`one_by_one`], timestamps as numbers where `numbers`.
    fn one_by_one_timed(rows: &[Row], numbers: bool) -> Result<Log> {
        let mut b = LogBuilder::new(LogOptions::default(), "log", Unit::Row)?;
        for f in [0, 1, 2, 3, 5, 9] {
            b.declare(f);
        }
        for (i, r) in rows.iter().enumerate() {
            let e = Event {
                session: Some(Cow::Borrowed(&r.0)),
                time: if numbers {
                    Some(number(&r.1)).filter(|t| !t.is_nan()).map(Time::Number)
                } else {
                    Some(Time::Text(&r.1))
                },
                kind: Some(Cow::Borrowed(&r.2)),
                query: r.3.as_deref().map(Cow::Borrowed),
                position: r.4,
                variant: Some(Cow::Borrowed(&r.5)),
                ..Event::default()
            };
            b.push(e, i as u64)?;
        }
        b.finish()
    }

    fn read(schema: &Schema, batches: &[RecordBatch], threads: usize) -> Result<Log> {
        let never = AtomicBool::new(false);
        crate::parallel::Pool::new(threads).install(|| {
            let opts = LogOptions::default();
            log_from_batches(schema, batches.iter().cloned().map(Ok), opts, "log", &never)
        })
    }

    #[test]
    fn stretches_taken_in_by_parts_make_the_log_of_one_builder() {
        // about 275,000 rows: four stretches and a bit
        let rows = rows(110_000);
        assert!(rows.len() > 4 * STRETCH, "{}", rows.len());
        let want = one_by_one(&rows).unwrap().everything();
        for per_batch in [1_000, 50_000, rows.len()] {
            let (schema, batches) = batches(&rows, per_batch);
            for threads in [1, 2, 3] {
                let got = read(&schema, &batches, threads).unwrap();
                assert!(
                    got.everything() == want,
                    "{per_batch} rows a batch, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn the_first_error_of_the_rows_is_the_one_told() {
        let good = rows(100_000);
        let zoned = "2024-05-01T10:00:00+02:00".to_string();
        // (row, how it is spoiled); each case spoils a few rows in different stretches
        let spoil: [&dyn Fn(&mut Row); 3] = [
            &|r| r.2 = "click".into(), // a click before its session's SERP, or not
            &|r| r.1 = zoned.clone(),  // a timestamp written another way
            &|r| r.4 = Some(-1.0),     // a bad position
        ];
        let mut cases = 0;
        for (k, f) in spoil.iter().enumerate() {
            for at in [
                [70_000, 200_000, 5],
                [140_000, 3, 230_000],
                [250_000, 180_000, 66_000],
            ] {
                let mut rows = good.clone();
                for &i in &at {
                    f(&mut rows[i]);
                }
                let want = one_by_one(&rows).err().map(|e| e.to_string());
                let (schema, batches) = batches(&rows, 30_000);
                let got = read(&schema, &batches, 2).err().map(|e| e.to_string());
                assert_eq!(got, want, "spoil {k} at {at:?}");
                cases += usize::from(want.is_some());
            }
        }
        assert!(cases >= 6, "{cases} of the spoiled logs were refused");
    }

    #[cfg(feature = "parquet")]
    #[test]
    fn a_parquet_file_read_by_row_groups_makes_the_log_of_one_builder() {
        let dir = tempfile::tempdir().unwrap();
        // timestamps as text, then as numbers (whose rows are mostly taken in without
        // an `Event`: `LogBuilder::push_known`)
        for numbers in [false, true] {
            parquet_case(&dir, numbers);
        }
    }

    #[cfg(feature = "parquet")]
    fn parquet_case(dir: &tempfile::TempDir, numbers: bool) {
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::WriterProperties;
        let mut rows = rows(60_000);
        let want = one_by_one_timed(&rows, numbers).unwrap().everything();
        let (schema, good) = batches_timed(&rows, 7_000, numbers);
        let write = |name: &str, batches: &[RecordBatch]| {
            let path = dir.path().join(name);
            let props = WriterProperties::builder()
                .set_max_row_group_size(40_000)
                .build();
            let file = std::fs::File::create(&path).unwrap();
            let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
            for b in batches {
                w.write(b).unwrap();
            }
            w.close().unwrap();
            path
        };
        // the type, query and variant columns read as texts, or as the keys of their
        // dictionary pages (as `read_log` reads them)
        let read_as = |path: &std::path::Path, threads: usize, keyed: bool| {
            let as_keys = |n: &str| keyed && ["type", "query", "variant"].contains(&n);
            let file = crate::formats::parquet::Groups::open(path, &|_| true, &as_keys).unwrap();
            assert!(file.len() > 3, "{} row groups", file.len());
            let query = file.schema().field_with_name("query").unwrap().data_type();
            assert_eq!(matches!(query, DataType::Dictionary(..)), keyed, "{query}");
            let never = AtomicBool::new(false);
            crate::parallel::Pool::new(threads)
                .install(|| log_from_parquet(&file, LogOptions::default(), &never))
        };
        let read = |path: &std::path::Path, threads: usize| read_as(path, threads, true);
        let path = write("log.parquet", &good);
        for threads in [1, 2] {
            for keyed in [false, true] {
                assert!(
                    read_as(&path, threads, keyed).unwrap().everything() == want,
                    "{threads} threads, keyed {keyed}"
                );
            }
        }
        // the first error, in a later row group than another: a timestamp written
        // another way (as text, a zone; as numbers, milliseconds), a position not whole,
        // a missing timestamp, a negative position (each the first in turn)
        let other = if numbers {
            "1700000000000"
        } else {
            "2024-05-01T10:00:00+02:00"
        };
        rows[130_000].1 = other.into();
        rows[50_000].4 = Some(0.5);
        let place = |e: &str| e.split_once(", row ").map(|(_, p)| p.to_string());
        let first = |rows: &[Row], at: &str| {
            let want = one_by_one_timed(rows, numbers).err().unwrap().to_string();
            let (_, spoiled) = batches_timed(rows, 7_000, numbers);
            let path = write("bad.parquet", &spoiled);
            let got = read(&path, 2).err().unwrap().to_string();
            assert_eq!(place(&got), place(&want), "{got}");
            assert!(want.contains(at), "{want}");
        };
        first(&rows, "row 50000");
        rows[50_000].4 = Some(2.0);
        first(&rows, "row 130000");
        rows[20_000].1 = "none".into();
        first(&rows, "row 20000");
        rows[20_000].1 = rows[20_001].1.clone();
        rows[9_000].4 = Some(-3.0);
        first(&rows, "row 9000");
    }
}
