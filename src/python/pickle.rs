//! Pickling: `Qrels` and `Run` as one flat `bytes` each (ids back to back, values as
//! little-endian numbers: no Python object per row), rebuilt through the intake; the
//! `Evaluator` as its qrels, its measure names and its options. What `multiprocessing`
//! with spawn, joblib and Ray ship between processes.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use rayon::prelude::*;

use crate::error::{Error, Result, Unit};
use crate::ids::Ids;
use crate::intake::{Grouper, Place, Rows, Value};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::Run;

/// The first bytes of a pickled run or qrels, with the layout's version.
const RUN_MAGIC: &[u8; 8] = b"irmRun01";
const QRELS_MAGIC: &[u8; 8] = b"irmQrl01";

/// A value as 8 little-endian bytes and back.
trait Flat: Value + Send + Sync {
    fn bytes(self) -> [u8; 8];
    fn take(b: [u8; 8]) -> Self;
}

impl Flat for f64 {
    fn bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
    fn take(b: [u8; 8]) -> Self {
        f64::from_le_bytes(b)
    }
}

impl Flat for i64 {
    fn bytes(self) -> [u8; 8] {
        self.to_le_bytes()
    }
    fn take(b: [u8; 8]) -> Self {
        i64::from_le_bytes(b)
    }
}

/// One query of the layout: its id, its documents and their values.
struct Part<'a, V> {
    qid: &'a [u8],
    docs: &'a Ids,
    values: &'a [V],
}

impl<V: Flat> Part<'_, V> {
    /// The bytes [`Part::write`] writes.
    fn len(&self) -> usize {
        16 + self.qid.len() + self.docs.byte_len() + 16 * self.docs.len()
    }

    /// Its id, its number of documents, the documents (length-prefixed), the values.
    fn write(&self, mut out: &mut [u8]) {
        let mut put = |b: &[u8]| {
            let (head, rest) = std::mem::take(&mut out).split_at_mut(b.len());
            head.copy_from_slice(b);
            out = rest;
        };
        put(&(self.qid.len() as u64).to_le_bytes());
        put(self.qid);
        put(&(self.docs.len() as u64).to_le_bytes());
        for doc in self.docs.iter() {
            put(&(doc.len() as u64).to_le_bytes());
            put(doc);
        }
        for &v in self.values {
            put(&v.bytes());
        }
    }
}

/// `magic`, `tag` (length-prefixed), the number of queries, then each query's
/// [`Part`], as a `bytes` object. The size is known first: the queries are written in
/// parallel, with the GIL released, straight into their own ranges of the `bytes` (a
/// pickled M run, 10 M results, is 228 MiB: grown a row at a time into a buffer that
/// was then copied, it took 2.4 s).
fn encode<'py, V: Flat>(
    py: Python<'py>,
    magic: &[u8; 8],
    tag: &[u8],
    parts: &[Part<'_, V>],
) -> PyResult<Bound<'py, PyBytes>> {
    let head = 8 + 8 + tag.len() + 8;
    let total = head + parts.iter().map(Part::len).sum::<usize>();
    PyBytes::new_with(py, total, |out| {
        py.detach(|| {
            let (h, mut rest) = out.split_at_mut(head);
            h[..8].copy_from_slice(magic);
            h[8..16].copy_from_slice(&(tag.len() as u64).to_le_bytes());
            h[16..16 + tag.len()].copy_from_slice(tag);
            h[16 + tag.len()..].copy_from_slice(&(parts.len() as u64).to_le_bytes());
            let mut slices = Vec::with_capacity(parts.len());
            for p in parts {
                let (a, b) = std::mem::take(&mut rest).split_at_mut(p.len());
                slices.push(a);
                rest = b;
            }
            slices
                .into_par_iter()
                .zip(parts.par_iter())
                .for_each(|(buf, p)| p.write(buf));
        });
        Ok(())
    })
}

/// Reads [`encode`]'s layout back; anything else is an error, never a panic.
struct Reader<'a> {
    rest: &'a [u8],
}

fn truncated() -> Error {
    Error::Input("unpickling: the data is truncated or not a pickled irmetrics object".into())
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(truncated());
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn eight(&mut self) -> Result<[u8; 8]> {
        let mut b = [0; 8];
        b.copy_from_slice(self.bytes(8)?);
        Ok(b)
    }

    fn len(&mut self) -> Result<usize> {
        usize::try_from(u64::from_le_bytes(self.eight()?))
            .map_err(|_| Error::Input("unpickling: a length beyond this machine".into()))
    }

    fn id(&mut self) -> Result<&'a [u8]> {
        let n = self.len()?;
        self.bytes(n)
    }
}

/// The tag and the queries of [`encode`]'s layout, each query into `sink` in order.
/// One pass finds each query's bytes (the documents' lengths only); the queries are
/// then rebuilt in parallel.
fn decode<'a, V: Flat>(
    magic: &[u8; 8],
    data: &'a [u8],
    mut sink: impl FnMut(Rows<V>) -> Result<()>,
) -> Result<&'a [u8]> {
    let mut r = Reader { rest: data };
    if r.bytes(8)? != magic {
        return Err(Error::Input(
            "unpickling: not a pickled irmetrics object of this kind or version".into(),
        ));
    }
    let tag = r.id()?;
    let nq = r.len()?;
    // each query: (its id, its number of documents, its documents' bytes, its values')
    let mut spans = Vec::with_capacity(nq.min(data.len() / 16));
    for _ in 0..nq {
        let qid = r.id()?;
        let n = r.len()?;
        let docs = r.rest;
        for _ in 0..n {
            r.id()?;
        }
        let docs = &docs[..docs.len() - r.rest.len()];
        let values = r.bytes(n.checked_mul(8).ok_or_else(truncated)?)?;
        spans.push((qid, n, docs, values));
    }
    if !r.rest.is_empty() {
        return Err(Error::Input(
            "unpickling: trailing bytes after the data".into(),
        ));
    }
    let queries: Vec<Result<Rows<V>>> = spans
        .into_par_iter()
        .map(|(qid, n, docs, values)| {
            let mut q = Rows::new(qid);
            q.docs.reserve(n, docs.len() - 8 * n);
            q.values.reserve(n);
            let mut d = Reader { rest: docs };
            for _ in 0..n {
                q.docs.push(d.id()?)?;
            }
            for v in values.chunks_exact(8) {
                let mut b = [0; 8];
                b.copy_from_slice(v);
                q.values.push(V::take(b));
            }
            Ok(q)
        })
        .collect();
    for q in queries {
        sink(q?)?;
    }
    Ok(tag)
}

/// `(rebuild, (bytes,))` for a run's `__reduce__`.
pub(super) fn reduce_run<'py>(py: Python<'py>, run: &Run) -> PyResult<Bound<'py, PyAny>> {
    let parts: Vec<Part<'_, f64>> = run
        .queries()
        .iter()
        .map(|q| Part {
            qid: q.id(),
            docs: &q.docs,
            values: &q.values,
        })
        .collect();
    let data = encode(py, RUN_MAGIC, run.runid(), &parts)?;
    reduce(py, "_run_from_pickle", data)
}

pub(super) fn run_from_bytes(data: &[u8]) -> Result<Run> {
    let mut rows = Grouper::new(Place::new("pickled run", Unit::Row));
    let tag = decode::<f64>(RUN_MAGIC, data, |q| rows.add_rows(q))?;
    Run::from_grouper(rows, tag.to_vec())
}

/// `(rebuild, (bytes,))` for judgments' `__reduce__`.
pub(super) fn reduce_qrels<'py>(py: Python<'py>, qrels: &Qrels) -> PyResult<Bound<'py, PyAny>> {
    let parts: Vec<Part<'_, i64>> = qrels
        .queries()
        .iter()
        .map(|q| Part {
            qid: q.id(),
            docs: &q.docs,
            values: &q.labels,
        })
        .collect();
    let data = encode(py, QRELS_MAGIC, b"", &parts)?;
    reduce(py, "_qrels_from_pickle", data)
}

pub(super) fn qrels_from_bytes(data: &[u8]) -> Result<Qrels> {
    let mut b = QrelsBuilder::default();
    decode::<i64>(QRELS_MAGIC, data, |q| b.add_rows(q))?;
    b.build()
}

/// `(rebuild, (data,))` for `__reduce__`: `rebuild` is one of this module's functions.
fn reduce<'py>(
    py: Python<'py>,
    rebuild: &str,
    data: Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py.import("irmetrics._core")?.getattr(rebuild)?;
    Ok((f, (data,)).into_pyobject(py)?.into_any())
}
