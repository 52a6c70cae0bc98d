//! Pickling: `Qrels` and `Run` as one flat `bytes` each (ids back to back, values as
//! little-endian numbers: no Python object per row), rebuilt through the intake; the
//! `Evaluator` as its qrels, its measure names and its options. What `multiprocessing`
//! with spawn, joblib and Ray ship between processes.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::{Error, Result, Unit};
use crate::intake::{Grouper, PieceSink, Place, Rows, Value};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::Run;

/// The first bytes of a pickled run or qrels, with the layout's version.
const RUN_MAGIC: &[u8; 8] = b"irmRun01";
const QRELS_MAGIC: &[u8; 8] = b"irmQrl01";

/// A value as 8 little-endian bytes and back.
trait Flat: Value {
    fn put(self, out: &mut Vec<u8>);
    fn take(b: [u8; 8]) -> Self;
}

impl Flat for f64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(b: [u8; 8]) -> Self {
        f64::from_le_bytes(b)
    }
}

impl Flat for i64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(b: [u8; 8]) -> Self {
        i64::from_le_bytes(b)
    }
}

/// `magic`, `tag` (length-prefixed), the number of queries, then per query: its id,
/// its number of documents, the documents (length-prefixed) and their values.
fn encode<'a, V: Flat + 'a, D: Iterator<Item = (&'a [u8], V)> + 'a>(
    magic: &[u8; 8],
    tag: &[u8],
    queries: impl ExactSizeIterator<Item = (&'a [u8], usize, D)>,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(magic);
    put_bytes(&mut out, tag);
    out.extend_from_slice(&(queries.len() as u64).to_le_bytes());
    let mut values = Vec::new();
    for (qid, n, docs) in queries {
        put_bytes(&mut out, qid);
        out.extend_from_slice(&(n as u64).to_le_bytes());
        values.clear();
        for (doc, v) in docs {
            put_bytes(&mut out, doc);
            v.put(&mut values);
        }
        out.extend_from_slice(&values);
    }
    out
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

/// Reads [`encode`]'s layout back; anything else is an error, never a panic.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(Error::Input(
                "unpickling: the data is truncated or not a pickled irmetrics object".into(),
            ));
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

/// The tag and the queries of [`encode`]'s layout, each query into `sink`.
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
    for _ in 0..nq {
        let mut q = Rows::new(r.id()?);
        let n = r.len()?;
        for _ in 0..n {
            q.docs.push(r.id()?)?;
        }
        for _ in 0..n {
            q.values.push(V::take(r.eight()?));
        }
        sink(q)?;
    }
    if !r.rest.is_empty() {
        return Err(Error::Input(
            "unpickling: trailing bytes after the data".into(),
        ));
    }
    Ok(tag)
}

pub(super) fn run_bytes(run: &Run) -> Vec<u8> {
    let queries = run.queries().iter().map(|q| (q.id(), q.len(), q.iter()));
    encode(RUN_MAGIC, run.runid(), queries)
}

pub(super) fn run_from_bytes(data: &[u8]) -> Result<Run> {
    let mut rows = Grouper::new(Place::new("pickled run", Unit::Row));
    let mut mark = 0u64;
    let tag = decode::<f64>(RUN_MAGIC, data, |q| {
        let n = q.len() as u64;
        rows.piece(q, mark)?;
        mark += n;
        Ok(())
    })?;
    Run::from_grouper(rows, tag.to_vec())
}

pub(super) fn qrels_bytes(qrels: &Qrels) -> Vec<u8> {
    let queries = qrels.queries().iter().map(|q| (q.id(), q.len(), q.iter()));
    encode(QRELS_MAGIC, b"", queries)
}

pub(super) fn qrels_from_bytes(data: &[u8]) -> Result<Qrels> {
    let mut b = QrelsBuilder::default();
    decode::<i64>(QRELS_MAGIC, data, |q| b.add_rows(q))?;
    b.build()
}

/// `(rebuild, (bytes,))` for `__reduce__`: `rebuild` is one of this module's functions.
pub(super) fn reduce<'py>(
    py: Python<'py>,
    rebuild: &str,
    bytes: Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let f = py.import("irmetrics._core")?.getattr(rebuild)?;
    let data = PyBytes::new(py, &bytes);
    Ok((f, (data,)).into_pyobject(py)?.into_any())
}
