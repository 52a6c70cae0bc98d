//! Python objects converted on the GIL thread while the queries already converted are
//! evaluated on other threads: the conversion overlaps the evaluation and the run is
//! never held whole.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};

use crate::error::Result;
use crate::evaluate::{Evaluator, BATCH_RESULTS};
use crate::intake::{Arrived, PieceSink, Place, Sequence};
use crate::results::Results;
use crate::run::RunQuery;

/// Takes the pieces a producer makes (through the intake's [`Sequence`]: each query
/// once), and hands whole queries to the evaluating thread in batches; buffers of
/// evaluated queries come back for reuse.
pub(crate) struct Batcher {
    sequence: Sequence,
    batch: Vec<Arrived>,
    batch_results: usize,
    /// Batches sent so far (the producer looks for Ctrl-C when this grows).
    pub(crate) sent: usize,
    spare: Vec<RunQuery>,
    tx: SyncSender<Vec<Arrived>>,
    back: Receiver<Vec<RunQuery>>,
    stopped: bool,
}

impl Batcher {
    fn send(&mut self) {
        self.batch_results = 0;
        self.sent += 1;
        let batch = std::mem::take(&mut self.batch);
        if !self.stopped && !batch.is_empty() && self.tx.send(batch).is_err() {
            self.stopped = true;
        }
    }

    fn taken(&mut self, q: Option<Arrived>) {
        if let Some(q) = q {
            self.batch_results += q.0.len();
            self.batch.push(q);
            if self.batch_results >= BATCH_RESULTS {
                self.send();
            }
        }
    }
}

impl PieceSink<f64> for Batcher {
    fn piece(&mut self, piece: RunQuery, mark: u64) -> Result<()> {
        let done = self.sequence.piece(piece, mark)?;
        self.taken(done);
        Ok(())
    }

    fn spare(&mut self) -> RunQuery {
        if self.spare.is_empty() {
            while let Ok(v) = self.back.try_recv() {
                self.spare.extend(v);
            }
        }
        self.spare.pop().unwrap_or_default()
    }

    fn comes_back(&self, qid: &[u8]) -> bool {
        self.sequence.is_over(qid)
    }
}

impl Evaluator {
    /// Evaluate the pieces that `produce` makes on the calling thread while the batches
    /// already made are evaluated on other threads. `produce` returns Ok(false) to
    /// abandon the evaluation; `wait` runs the closure it is given (the Python layer
    /// releases the GIL there). `unique`: the documents of a query are known to be
    /// distinct (dict keys). `place` names the rows in messages.
    pub(crate) fn evaluate_pipelined<E>(
        &self,
        place: Place,
        runid: Vec<u8>,
        unique: bool,
        produce: impl FnOnce(&mut Batcher) -> std::result::Result<bool, E>,
        wait: impl FnOnce(&mut (dyn FnMut() + Send)),
    ) -> std::result::Result<Option<Result<Results>>, E> {
        let cancel = AtomicBool::new(false);
        let cancel = &cancel;
        let worker_place = place.clone();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Arrived>>(1);
            // buffers of evaluated queries offered back for reuse, a batch's at most: a
            // producer that makes its pieces itself (Arrow data) takes none, and they
            // must not pile up into the whole run (dropped when the slot is full)
            let (back_tx, back) = std::sync::mpsc::sync_channel(1);
            let worker =
                std::thread::Builder::new().spawn_scoped(scope, move || -> Result<Results> {
                    let mut stream = self.stream_of(worker_place, "", Some(cancel));
                    stream.recycle = true;
                    if unique {
                        stream.unique_documents();
                    }
                    for batch in rx {
                        for q in batch {
                            stream.take(q);
                        }
                        stream.flush()?;
                        let _ = back_tx.try_send(std::mem::take(&mut stream.spare));
                    }
                    stream.finish(runid)
                });
            let worker = match worker {
                Ok(w) => w,
                Err(e) => {
                    let e = crate::Error::Input(format!("cannot start a thread: {e}"));
                    return Ok(Some(Err(e)));
                }
            };
            let mut b = Batcher {
                sequence: Sequence::new(place, "the rows of a query must be together"),
                batch: Vec::new(),
                batch_results: 0,
                sent: 0,
                spare: Vec::new(),
                tx,
                back,
                stopped: false,
            };
            let produced = produce(&mut b);
            if !matches!(produced, Ok(true)) {
                cancel.store(true, Ordering::Relaxed);
            } else {
                let last = b.sequence.finish();
                b.taken(last);
            }
            b.send();
            drop(b); // closes the channel: the worker finishes
            let mut handle = Some(worker);
            let mut joined = None;
            wait(&mut || joined = handle.take().map(|h| h.join()));
            let res = match joined {
                Some(Ok(r)) => r,
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => Err(crate::Error::Interrupted),
            };
            match produced {
                Ok(true) => Ok(Some(res)),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }
}
