//! `QueryStream`: the push API. A run handed over one query at a time (a training loop,
//! a search engine answering queries), evaluated in batches as it comes, with the
//! numbers of a whole-run evaluation (the crate's [`crate::QueryStream`]).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::results::DictShape;
use super::{convert, errors, guarded};
use crate::evaluate::{Evaluator, QueryStream};
use crate::results::Results;

enum State {
    /// Taking queries; the run's tag for the results.
    Open(Box<QueryStream<'static>>, Vec<u8>),
    /// Finished: the results, for every later `finish()`.
    Done(Arc<Results>),
    /// Left by an exception inside its `with` block: nothing to report.
    Dropped,
}

/// Queries pushed one at a time (`add`), evaluated in batches as they come; `finish()`
/// returns what `Evaluator.evaluate` returns for the whole run. Also a context manager:
/// leaving the `with` block finishes it (an exception discards it).
#[pyclass(frozen, name = "QueryStream", module = "irmetrics")]
pub struct PyQueryStream {
    state: Mutex<State>,
}

impl PyQueryStream {
    pub(super) fn new(ev: Arc<Evaluator>, runid: Vec<u8>) -> Self {
        let stream = Evaluator::stream_shared(ev, "stream");
        PyQueryStream {
            state: Mutex::new(State::Open(Box::new(stream), runid)),
        }
    }

    /// Finish (once) and return the results; the lock is taken without the GIL.
    fn results(&self, py: Python<'_>) -> PyResult<Arc<Results>> {
        let done = py.detach(|| {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match std::mem::replace(&mut *state, State::Dropped) {
                State::Open(stream, runid) => {
                    let res = stream.finish(runid).map(Arc::new);
                    if let Ok(r) = &res {
                        *state = State::Done(r.clone());
                    }
                    Some(res)
                }
                State::Done(r) => {
                    *state = State::Done(r.clone());
                    Some(Ok(r))
                }
                State::Dropped => None,
            }
        });
        match done {
            Some(res) => res.map_err(|e| errors::to_py(py, e)),
            None => Err(closed(py)),
        }
    }
}

fn closed(py: Python<'_>) -> PyErr {
    errors::input_err(
        py,
        "this stream was discarded (an exception left its with block, or finishing it \
         failed); start another with Evaluator.stream()"
            .into(),
    )
}

#[pymethods]
impl PyQueryStream {
    /// Add one query's results: `doc_ids` (a list or numpy array of str) and `scores`
    /// (a list or numpy array of numbers), equally long. Each query must come once.
    fn add(
        &self,
        py: Python<'_>,
        query_id: &Bound<'_, PyAny>,
        doc_ids: &Bound<'_, PyAny>,
        scores: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let rows = guarded(py, || convert::query_rows(query_id, doc_ids, scores))?;
        let added = py.detach(|| {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *state {
                State::Open(stream, _) => Some(stream.add(rows.id(), rows.iter())),
                State::Done(_) | State::Dropped => None,
            }
        });
        match added {
            Some(r) => r.map_err(|e| errors::to_py(py, e)),
            None => Err(errors::input_err(
                py,
                "this stream is finished: add() must come before finish()".into(),
            )),
        }
    }

    /// The results, as `Evaluator.evaluate` gives them for the whole run (same
    /// arguments); may be called again, with other arguments.
    #[pyo3(signature = (*, per_query = false, keys = "requested", aggregate = "mean"))]
    fn finish<'py>(
        &self,
        py: Python<'py>,
        per_query: bool,
        keys: &str,
        aggregate: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = DictShape::parse(py, per_query, keys, aggregate)?;
        let res = self.results(py)?;
        guarded(py, || shape.to_py(py, &res))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Leaving the `with` block finishes the stream (its results wait for `finish()`);
    /// an exception discards it. Exceptions are never swallowed.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() {
            self.results(py)?;
        } else {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            *state = State::Dropped;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            State::Open(..) => "QueryStream(open)".into(),
            State::Done(r) => format!("QueryStream(finished, queries={})", r.num_queries()),
            State::Dropped => "QueryStream(discarded)".into(),
        }
    }
}
