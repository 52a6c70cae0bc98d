//! Fusing run files as they are read (`irmetrics fuse RUN RUN ...`): memory bounded by
//! a few blocks of each file and one batch of queries, not by the runs.
//!
//! Each file is read block by block ([`RunReader`]) into whole queries. The runs'
//! current queries are merged by id (byte order): the smallest id is taken from every
//! run whose current query it is, fused with the others' batch on the pool, and the
//! fused text goes to a temporary file. That is exact when every file lists each of its
//! queries once, its lines together, and the files agree on the order of the queries
//! they share: sorted by id (any subsets), or one order for all (the same query set, in
//! any order). Anything else — a query that comes back, one that comes after a query
//! already fused, a bad line, a duplicate document, a NaN — is an error here; the
//! caller then reads the runs whole ([`super::fuse`]), so the output and the messages
//! are those of the whole reading. The fused run is written in byte order of query ids
//! as [`super::fuse`]'s is: copied from the temporary file in one piece when the merge
//! met the queries in that order, else query by query.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Method, Norm, Params, Work};
use crate::error::{Error, Result, Unit};
use crate::ids::RepeatFinder;
use crate::intake::{find_duplicate, PieceSink, Place, SeenIds, Sequence};
use crate::run::RunQuery;
use crate::trec::RunReader;

/// Input results gathered before a batch is fused on the pool.
const BATCH_RESULTS: usize = 1 << 18;

/// The blocks of all files together: each file's share, between 1 and 8 MiB (10 files:
/// 3.2 MiB each; a block in use and one being read per file).
const ALL_BLOCKS: usize = 32 << 20;

/// Whether [`fuse_files`] may read these files: TREC text (by name) in plain files, which
/// can be read again whole if the merge fails (not standard input or a pipe).
pub(crate) fn streamable(paths: &[PathBuf]) -> Result<bool> {
    for p in paths {
        if crate::formats::Format::of_path(p) != crate::formats::Format::Trec
            || crate::trec::input_size(p)?.is_none()
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Fuse the run files at `paths` as they are read (see the module's comment), with the
/// tag `tag` on every line; the text waits in a temporary file (in `dir`, or the
/// system's) until [`FusedText::write_to`]. Any error but [`Error::Interrupted`] means
/// "read the runs whole instead".
pub(crate) fn fuse_files(
    paths: &[PathBuf],
    method: Method,
    norm: Option<Norm>,
    params: &Params,
    tag: &[u8],
    dir: Option<&Path>,
    cancel: Option<&AtomicBool>,
) -> Result<FusedText> {
    if method.needs_qrels() || paths.len() < 2 {
        return Err(Error::Option("not streamed".into()));
    }
    params.check(method, paths.len())?;
    let setting = super::setting(method, params, None);
    let block = (ALL_BLOCKS / paths.len()).clamp(1 << 20, 8 << 20);
    let mut files = Vec::with_capacity(paths.len());
    for p in paths {
        let blocks = crate::trec::Blocks::open(p, Some(block), cancel)?;
        files.push(FileQueries::new(blocks, &p.display().to_string()));
    }
    let mut heads = Vec::with_capacity(files.len());
    for f in &mut files {
        heads.push(f.next()?);
    }
    let mut out = FusedText::new(dir)?;
    let mut taken = SeenIds::default();
    let mut batch: Vec<Vec<Option<RunQuery>>> = Vec::new();
    let mut results = 0usize;
    let fuse_batch = |batch: &mut Vec<Vec<Option<RunQuery>>>, out: &mut FusedText| {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Interrupted);
        }
        let texts = crate::parallel::map_with(
            batch,
            || (Work::default(), RepeatFinder::default(), Vec::new()),
            |(w, finder, order), group| fuse_group(w, finder, order, group, &setting, norm, tag),
        );
        batch.clear();
        for t in texts {
            if let Some((qid, text)) = t? {
                out.push(qid, &text)?;
            }
        }
        Ok(())
    };
    while let Some(min) = heads.iter().flatten().map(|q| &q.qid).min() {
        let min = min.clone();
        taken.insert(&min);
        let mut group = Vec::with_capacity(files.len());
        for (head, file) in heads.iter_mut().zip(&mut files) {
            if head.as_ref().is_none_or(|q| q.qid != min) {
                group.push(None);
                continue;
            }
            let q = std::mem::replace(head, file.next()?);
            // a query already fused (this one included) must not come from any file
            if head.as_ref().is_some_and(|next| taken.contains(&next.qid)) {
                return Err(Error::Option("out of order".into()));
            }
            results += q.as_ref().map_or(0, |q| q.len());
            group.push(q);
        }
        batch.push(group);
        if results >= BATCH_RESULTS {
            fuse_batch(&mut batch, &mut out)?;
            results = 0;
        }
    }
    fuse_batch(&mut batch, &mut out)?;
    Ok(out)
}

/// A fused query's id and its lines.
type QueryText = (Box<[u8]>, Vec<u8>);

/// One query's lists fused and written as TREC text (`None`: nothing retrieved).
fn fuse_group(
    w: &mut Work,
    finder: &mut RepeatFinder,
    order: &mut Vec<u32>,
    group: &[Option<RunQuery>],
    setting: &super::kernels::Setting<'_>,
    norm: Option<Norm>,
    tag: &[u8],
) -> Result<Option<QueryText>> {
    for q in group.iter().flatten() {
        if find_duplicate(&q.docs, finder).is_some() {
            return Err(Error::Option("a duplicate document".into()));
        }
    }
    let Some(qid) = group.iter().flatten().map(|q| &q.qid).next() else {
        return Ok(None);
    };
    let Some(fused) = w.fuse_queries(group.iter().map(|q| q.as_ref()), norm, setting, qid)? else {
        return Ok(None);
    };
    let mut text = Vec::new();
    crate::trec::write_run_query(&fused, tag, order, &mut text).map_err(tmp_err)?;
    Ok(Some((fused.qid, text)))
}

/// One run file's whole queries, in file order.
struct FileQueries<'a> {
    reader: Option<RunReader<'a>>,
    queue: Queue,
}

/// Pieces joined into whole queries (a query that comes back is refused).
struct Queue {
    sequence: Sequence,
    ready: std::collections::VecDeque<RunQuery>,
}

impl PieceSink<f64> for Queue {
    fn piece(&mut self, piece: RunQuery, mark: u64) -> Result<()> {
        if let Some((q, _)) = self.sequence.piece(piece, mark)? {
            self.ready.push_back(q);
        }
        Ok(())
    }
}

impl<'a> FileQueries<'a> {
    fn new(blocks: crate::trec::Blocks<'a>, source: &str) -> FileQueries<'a> {
        FileQueries {
            reader: Some(RunReader::new(blocks, source)),
            queue: Queue {
                sequence: Sequence::new(Place::new(source, Unit::Line), ""),
                ready: Default::default(),
            },
        }
    }

    /// The next whole query, `None` after the last.
    fn next(&mut self) -> Result<Option<RunQuery>> {
        loop {
            if let Some(q) = self.queue.ready.pop_front() {
                return Ok(Some(q));
            }
            let Some(reader) = &mut self.reader else {
                return Ok(None);
            };
            if !reader.next_block(&mut self.queue)? {
                if let Some(r) = self.reader.take() {
                    r.finish()?;
                }
                if let Some((q, _)) = self.queue.sequence.finish() {
                    self.queue.ready.push_back(q);
                }
            }
        }
    }
}

/// A failure of the temporary file (the caller then reads the runs whole).
fn tmp_err(e: std::io::Error) -> Error {
    Error::Input(format!("a temporary file failed: {e}"))
}

/// A fused run's text in a temporary file, with where each query's lines are.
pub(crate) struct FusedText {
    file: BufWriter<File>,
    /// (query id, offset, length), in the order written.
    index: Vec<(Box<[u8]>, u64, u64)>,
    at: u64,
    /// Whether the queries came in byte order of their ids.
    sorted: bool,
}

impl FusedText {
    fn new(dir: Option<&Path>) -> Result<FusedText> {
        let file = match dir {
            Some(d) => tempfile::tempfile_in(d),
            None => tempfile::tempfile(),
        }
        .map_err(tmp_err)?;
        Ok(FusedText {
            file: BufWriter::with_capacity(1 << 20, file),
            index: Vec::new(),
            at: 0,
            sorted: true,
        })
    }

    fn push(&mut self, qid: Box<[u8]>, text: &[u8]) -> Result<()> {
        self.file.write_all(text).map_err(tmp_err)?;
        if self.index.last().is_some_and(|(last, _, _)| *last > qid) {
            self.sorted = false;
        }
        self.index.push((qid, self.at, text.len() as u64));
        self.at += text.len() as u64;
        Ok(())
    }

    /// Write the fused run, in byte order of query ids, to `w`.
    pub(crate) fn write_to(self, w: &mut dyn Write) -> std::io::Result<()> {
        let FusedText {
            file,
            mut index,
            sorted,
            ..
        } = self;
        let mut file = file.into_inner().map_err(|e| e.into_error())?;
        if !sorted {
            index.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        crate::trec::guard_first_id(index.first().map(|q| &*q.0), w)?;
        if sorted {
            file.rewind()?;
            std::io::copy(&mut file, w)?;
            return Ok(());
        }
        let mut buf = Vec::new();
        for (_, at, len) in &index {
            buf.resize(*len as usize, 0);
            file.seek(std::io::SeekFrom::Start(*at))?;
            file.read_exact(&mut buf)?;
            w.write_all(&buf)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Run;

    fn files(dir: &Path, texts: &[&str]) -> Vec<PathBuf> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = dir.join(format!("run{i}.txt"));
                std::fs::write(&p, t).unwrap();
                p
            })
            .collect()
    }

    /// The fused run of the files read whole, as TREC text.
    fn whole(paths: &[PathBuf], method: Method, norm: Option<Norm>, params: &Params) -> Vec<u8> {
        let runs: Vec<Run> = paths
            .iter()
            .map(|p| crate::trec::read_run(p).unwrap())
            .collect();
        let refs: Vec<&Run> = runs.iter().collect();
        let fused = super::super::fuse(&refs, method, norm, params).unwrap();
        let mut text = Vec::new();
        crate::trec::write_run(&fused, &mut text).unwrap();
        text
    }

    fn streamed(
        paths: &[PathBuf],
        method: Method,
        norm: Option<Norm>,
        params: &Params,
    ) -> Result<Vec<u8>> {
        let f = fuse_files(
            paths,
            method,
            norm,
            params,
            method.name().as_bytes(),
            None,
            None,
        )?;
        let mut text = Vec::new();
        f.write_to(&mut text).unwrap();
        Ok(text)
    }

    /// The command line's output (streamed, or read whole after a failed stream).
    fn cli(paths: &[PathBuf], extra: &[&str]) -> Result<Vec<u8>> {
        let mut argv: Vec<std::ffi::OsString> = extra.iter().map(|a| a.into()).collect();
        argv.extend(paths.iter().map(|p| p.into()));
        let mut out = Vec::new();
        crate::cli::run_fuse(argv, &mut out, None)?;
        Ok(out)
    }

    #[test]
    fn streamed_fusion_is_the_whole_fusion() {
        let dir = tempfile::tempdir().unwrap();
        // sorted by id, different query sets, ties, a one-document query, a first id
        // that needs the guard line, a query split by a comment
        let sorted = files(
            dir.path(),
            &[
                "# c\nBZh1 Q0 x 1 2 a\nq1 Q0 a 1 3 a\nq1 Q0 b 2 3 a\n# c\nq1 Q0 c 3 1 a\nq3 Q0 z 1 5 a\n",
                "q1 Q0 b 1 0.5 b\nq1 Q0 d 2 0.2 b\nq2 Q0 y 1 1 b\nq3 Q0 z 1 1 b\nq3 Q0 w 2 1 b\n",
                "q2 Q0 y 1 9 c\nq2 Q0 x 2 8 c\nq4 Q0 v 1 1 c\n",
            ],
        );
        let weights = Params::new().with_weights(vec![0.5, 0.3, 0.2]);
        for (method, norm, params) in [
            (Method::Rrf, None, Params::new()),
            (Method::Wsum, Some(Norm::MinMax), weights.clone()),
            (Method::Mnz, Some(Norm::Zmuv), Params::new()),
            (Method::BordaFuse, None, Params::new()),
        ] {
            let want = whole(&sorted, method, norm, &params);
            assert!(want.starts_with(b"# written by irmetrics\n"));
            assert_eq!(
                streamed(&sorted, method, norm, &params).unwrap(),
                want,
                "{method}"
            );
        }
        // one order for all, not sorted: the text is put in order at the end
        let same = files(
            dir.path(),
            &[
                "q9 Q0 a 1 3 a\nq10 Q0 b 1 2 a\nq2 Q0 c 1 1 a\n",
                "q9 Q0 b 1 3 b\nq10 Q0 b 1 2 b\nq2 Q0 d 1 1 b\n",
            ],
        );
        let want = whole(&same, Method::Sum, None, &Params::new());
        assert_eq!(
            streamed(&same, Method::Sum, None, &Params::new()).unwrap(),
            want
        );
        assert_eq!(cli(&same, &["--method", "sum"]).unwrap(), want);
    }

    #[test]
    fn what_cannot_be_streamed_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = Params::new();
        for texts in [
            // orders that disagree
            [
                "q2 Q0 a 1 3 a\nq1 Q0 b 1 2 a\n",
                "q1 Q0 b 1 3 b\nq2 Q0 d 1 1 b\n",
            ],
            // a query that comes back
            [
                "q1 Q0 a 1 3 a\nq2 Q0 b 1 2 a\nq1 Q0 c 1 1 a\n",
                "q1 Q0 b 1 3 b\n",
            ],
            // a query after one already fused
            [
                "q1 Q0 a 1 3 a\nq3 Q0 b 1 2 a\n",
                "q2 Q0 b 1 3 b\nq1 Q0 x 1 3 b\n",
            ],
        ] {
            let paths = files(dir.path(), &texts);
            assert!(
                streamed(&paths, Method::Rrf, None, &p).is_err(),
                "{texts:?}"
            );
            let want = whole(&paths, Method::Rrf, None, &p);
            assert_eq!(cli(&paths, &[]).unwrap(), want, "{texts:?}");
        }
        // errors: the whole reading's message (a duplicate, a bad line, an empty run)
        for (texts, message) in [
            (
                ["q1 Q0 a 1 3 a\nq1 Q0 a 2 2 a\n", "q1 Q0 b 1 3 b\n"],
                "run0.txt:2",
            ),
            (
                ["q1 Q0 a 1 3 a\n", "q1 Q0 b 1 3 b\nq2 Q0 b\n"],
                "run1.txt:2",
            ),
            (["q1 Q0 a 1 3 a\n", "# nothing\n"], "no results"),
        ] {
            let paths = files(dir.path(), &texts);
            assert!(streamed(&paths, Method::Rrf, None, &p).is_err());
            let e = cli(&paths, &[]).unwrap_err().to_string();
            assert!(e.contains(message), "{e}");
        }
    }
}
