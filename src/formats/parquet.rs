//! Parquet files of runs, qrels and logs, read record batch by record batch (the
//! arrow-rs `parquet` crate) into the same intake as every other route
//! ([`crate::arrow`]): the file is never held decoded whole. Columns are found by name
//! as in an Arrow table (`query_id`/`qid`/`q_id`, `doc_id`/`docno`/`docid`, `score`,
//! `relevance`/`label`/`rel`); a problem names the file and the row (from 0).

use std::fs::File;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::arrow::{self, Columns, PieceReader};
use crate::error::{Error, Result, Unit};
use crate::intake::{PieceSink, Place, Value as Checked};
use crate::qrels::Qrels;
use crate::run::Run;

/// Rows per record batch read: large enough that per-batch work vanishes, small enough
/// that a decoded batch's buffers (about 100 KiB) stay in mimalloc's reused pages.
/// Measured on M (10 M rows, polars' file): 64 Ki-row batches took 1.25 s, a quarter
/// of it the kernel zeroing pages that mimalloc had handed back and took again; 8 Ki
/// rows take 0.65 s.
const BATCH_ROWS: usize = 8 * 1024;

/// An open parquet file: its schema (of the columns read), its metadata and the
/// columns read, from which readers of its batches are made.
struct Opened {
    path: std::path::PathBuf,
    source: String,
    schema: SchemaRef,
    meta: ArrowReaderMetadata,
    mask: ProjectionMask,
    /// The row (over the file) of each row group's first.
    firsts: Vec<u64>,
}

/// The rows of a parquet file of a run (`third`: [`arrow::SCORE`], `values`:
/// [`arrow::scores`]) or judgments ([`arrow::LABEL`], [`arrow::labels`]) to a builder's
/// `sink`: its row groups decoded (decompressed, unpacked) and made into pieces of
/// queries in parallel, a task per row group, and taken in in order (M, 10 row groups,
/// reading the run on the 2-core VM: 0.44 s -> 0.30 s, one thread 0.63 -> 0.55 s; the TREC
/// file 0.24 s). Only the three columns are decoded (a file may hold others:
/// ranks, tags, texts), found by name as in an Arrow table.
fn take_in_table<V: Checked>(
    path: &Path,
    third: (&[&str], &'static str),
    values: arrow::ValueReader<V>,
    cancel: &AtomicBool,
    sink: &mut dyn PieceSink<V>,
) -> Result<()> {
    let file = open_columns(
        path,
        &|names| {
            Columns::find(names, [None; 3], third)
                .map(|c| c.index.to_vec())
                .map_err(|e| e.to_string())
        },
        &|_| false,
    )?;
    let cols = file.columns(third)?;
    let reader = PieceReader::new(&cols, &file.source, values, cancel);
    let _whole = PieceReader::take_in(
        (0..file.firsts.len()).collect(),
        |group| {
            let mut pieces = Vec::new();
            for batch in file.batches(group)? {
                let (batch, first) = batch?;
                reader.batch(&batch, first, &mut pieces)?;
            }
            Ok(pieces)
        },
        sink,
    )?; // a builder's grouper takes every piece
    Ok(())
}

/// Picks columns (their positions) from a file's column names, or says why not.
type ChooseColumns<'a> = dyn Fn(&[Option<String>]) -> std::result::Result<Vec<usize>, String> + 'a;

/// An open parquet file reading only the top-level columns `choose` picks (their
/// positions) from the names of all; its refusal names the file. The string columns
/// `dictionary` names are read as Arrow dictionaries: pages written with parquet's
/// dictionary encoding (what writers do for columns of few distinct values) give each
/// row's key, not its text (parquet decodes any other page and makes its dictionary).
fn open_columns(
    path: &Path,
    choose: &ChooseColumns,
    dictionary: &dyn Fn(&str) -> bool,
) -> Result<Opened> {
    let source = path.display().to_string();
    let file = File::open(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let bad = |e: parquet::errors::ParquetError| {
        Error::Input(format!("{source}: not a readable parquet file: {e}"))
    };
    let mut meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(bad)?;
    let as_keys = |f: &arrow_schema::Field| {
        dictionary(f.name()) && matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8)
    };
    let fields = meta.schema().fields();
    if fields.iter().any(|f| as_keys(f)) {
        let hinted: Vec<arrow_schema::FieldRef> = (fields.iter())
            .map(|f| {
                if !as_keys(f) {
                    return f.clone();
                }
                let keys = DataType::Dictionary(
                    Box::new(DataType::Int32),
                    Box::new(f.data_type().clone()),
                );
                std::sync::Arc::new(f.as_ref().clone().with_data_type(keys))
            })
            .collect();
        let schema =
            arrow_schema::Schema::new_with_metadata(hinted, meta.schema().metadata().clone());
        let options = ArrowReaderOptions::new().with_schema(std::sync::Arc::new(schema));
        meta = ArrowReaderMetadata::try_new(meta.metadata().clone(), options).map_err(bad)?;
    }
    let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta.clone());
    let wanted = choose(&arrow::column_names(builder.schema()))
        .map_err(|e| Error::Input(format!("{source}: {e}")))?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    // the schema of the columns read (building a reader reads no data)
    let schema = builder
        .with_projection(mask.clone())
        .build()
        .map_err(bad)?
        .schema();
    let mut first = 0u64;
    let firsts = (meta.metadata().row_groups().iter())
        .map(|g| {
            let at = first;
            first += u64::try_from(g.num_rows()).unwrap_or(0);
            at
        })
        .collect();
    Ok(Opened {
        path: path.to_path_buf(),
        source,
        schema,
        meta,
        mask,
        firsts,
    })
}

impl Opened {
    fn columns(&self, third: (&[&str], &'static str)) -> Result<Columns> {
        Columns::find(&arrow::column_names(&self.schema), [None; 3], third)
            .map_err(|e| Error::Input(format!("{}: {e}", self.source)))
    }

    /// The batches of row group `group` in order, each with the row (over the file) of
    /// its first, read through a handle of its own on the file (each reader its own
    /// position in it); a decoding failure names the file.
    fn batches(
        &self,
        group: usize,
    ) -> Result<impl Iterator<Item = Result<(RecordBatch, u64)>> + '_> {
        let file = File::open(&self.path).map_err(|e| Error::Io {
            path: self.path.clone(),
            source: e,
        })?;
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
            .with_projection(self.mask.clone())
            .with_batch_size(BATCH_ROWS)
            .with_row_groups(vec![group])
            .build()
            .map_err(|e| {
                Error::Input(format!("{}: not a readable parquet file: {e}", self.source))
            })?;
        let mut first = self.firsts[group];
        Ok(reader.map(move |b| {
            let b = self.named(b)?;
            let at = first;
            first += b.num_rows() as u64;
            Ok((b, at))
        }))
    }

    /// A batch, or its decoding failure naming the file.
    fn named(
        &self,
        b: std::result::Result<RecordBatch, arrow_schema::ArrowError>,
    ) -> Result<RecordBatch> {
        b.map_err(|e| Error::Input(format!("{}: reading a parquet row group: {e}", self.source)))
    }
}

/// A run from a parquet file (columns `query_id`, `doc_id`, `score` or their usual
/// spellings), tagged with the file's name.
pub fn read_run(path: &Path, cancel: Option<&AtomicBool>) -> Result<Run> {
    let never = AtomicBool::new(false);
    let runid = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut b = crate::run::RunBuilder::at(Place::new(&path.display().to_string(), Unit::Row));
    b.runid(runid.as_bytes())?;
    let cancel = cancel.unwrap_or(&never);
    take_in_table(path, arrow::SCORE, arrow::scores, cancel, b.grouper())?;
    b.build()
}

/// Judgments from a parquet file (columns `query_id`, `doc_id`, `relevance` or their
/// usual spellings).
pub fn read_qrels(path: &Path, cancel: Option<&AtomicBool>) -> Result<Qrels> {
    let never = AtomicBool::new(false);
    let mut b = crate::qrels::QrelsBuilder::at(Place::new(&path.display().to_string(), Unit::Row));
    let cancel = cancel.unwrap_or(&never);
    take_in_table(path, arrow::LABEL, arrow::labels, cancel, b.grouper())?;
    b.build()
}

/// A parquet file opened for readers of other tables (search logs), holding only the
/// top-level columns whose names `keep` wants (the others are not decoded): its row
/// groups are read one by one, each by a reader of its own, in parallel where the
/// caller likes.
pub struct Groups {
    file: Opened,
}

impl Groups {
    /// The file at `path`, its columns whose names `keep` wants; the string columns
    /// `dictionary` names read as dictionaries (see `open_columns`).
    pub fn open(
        path: &Path,
        keep: &dyn Fn(&str) -> bool,
        dictionary: &dyn Fn(&str) -> bool,
    ) -> Result<Groups> {
        let pick = |names: &[Option<String>]| {
            Ok((names.iter().enumerate())
                .filter(|(_, n)| n.as_deref().is_some_and(keep))
                .map(|(i, _)| i)
                .collect())
        };
        let file = open_columns(path, &pick, dictionary)?;
        Ok(Groups { file })
    }

    /// The schema of the columns read.
    pub fn schema(&self) -> &SchemaRef {
        &self.file.schema
    }

    /// The file's name, for messages.
    pub fn source(&self) -> &str {
        &self.file.source
    }

    /// The number of row groups.
    pub fn len(&self) -> usize {
        self.file.firsts.len()
    }

    /// Whether the file has no row group.
    pub fn is_empty(&self) -> bool {
        self.file.firsts.is_empty()
    }

    /// The number of rows of row group `group` (as its metadata says).
    pub fn rows(&self, group: usize) -> usize {
        (self.file.meta.metadata().row_groups().get(group))
            .map_or(0, |g| usize::try_from(g.num_rows()).unwrap_or(0))
    }

    /// The batches of row group `group` in order, each with the row (over the file) of
    /// its first; a decoding failure names the file.
    pub fn batches(
        &self,
        group: usize,
    ) -> Result<impl Iterator<Item = Result<(RecordBatch, u64)>> + '_> {
        self.file.batches(group)
    }
}

/// `batch` as a parquet file (zstd-compressed, one row group per million rows) to `w`
/// (parquet's writer wants a `Send` sink of its own: the bytes are made first).
pub fn write_batch(batch: &RecordBatch, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut out = Vec::new();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_size(1 << 20)
        .build();
    let io = |e: parquet::errors::ParquetError| std::io::Error::other(e.to_string());
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).map_err(io)?;
    writer.write(batch).map_err(io)?;
    writer.close().map_err(io)?;
    w.write_all(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Format;

    #[test]
    fn runs_and_qrels_round_trip_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let run =
            Run::from_bytes(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d9 1 1 t\n", "r").unwrap();
        let qrels = Qrels::from_bytes(b"q1 0 d1 2\nq1 0 d3 0\nq2 0 d9 1\n", "q").unwrap();
        let (rp, qp) = (dir.path().join("bm25.parquet"), dir.path().join("q.pq"));
        run.to_file(&rp, None).unwrap();
        qrels.to_file(&qp, Some(Format::Parquet)).unwrap();
        let back = Run::from_file(&rp).unwrap();
        assert_eq!(back.runid(), b"bm25");
        assert_eq!(back.num_results(), 3);
        assert_eq!(back.query(b"q1").unwrap().values.len(), 2);
        let q = Qrels::from_file(&qp).unwrap();
        assert_eq!(q.num_judgments(), 3);
        // a run file is not judgments: its scores are not whole-number labels
        let e = Qrels::from_file(&rp).err().unwrap().to_string();
        assert!(
            e.starts_with("bm25.parquet") || e.contains("bm25.parquet, row 0"),
            "{e}"
        );
        let bad = dir.path().join("bad.parquet");
        std::fs::write(&bad, b"PAR1 not really").unwrap();
        let e = Run::from_file(&bad).err().unwrap().to_string();
        assert!(e.contains("bad.parquet") && e.contains("parquet"), "{e}");
    }
}
