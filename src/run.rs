//! A run: for each query, the retrieved documents with their scores.

use crate::error::{show, Error, Location, Result};
use crate::ids::{Ids, KeyIndex, RepeatFinder};

/// The results of one query, in input order (they are ranked at evaluation time).
#[derive(Clone, Debug, Default)]
pub struct RunQuery {
    pub(crate) qid: Box<[u8]>,
    pub(crate) docs: Ids,
    pub(crate) scores: Vec<f64>,
}

impl RunQuery {
    /// The query id.
    pub fn id(&self) -> &[u8] {
        &self.qid
    }

    /// Number of retrieved documents.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// True when nothing was retrieved.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// (document, score) pairs in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], f64)> + '_ {
        self.docs.iter().zip(self.scores.iter().copied())
    }

    /// Positions of the documents in trec_eval order: score descending, ties broken by
    /// document id descending (byte order). Skips the sort when already in order.
    pub fn ranking(&self, out: &mut Vec<u32>) {
        out.clear();
        let s = &self.scores;
        let by_doc_desc =
            |a: &u32, b: &u32| self.docs.get(*b as usize).cmp(self.docs.get(*a as usize));
        if s.windows(2).all(|w| w[0] >= w[1]) {
            // Already ordered by score (most run files).
            out.extend(0..s.len() as u32);
        } else {
            // Sort by an integer key that orders scores descending, then fix ties.
            let mut keyed: Vec<(u64, u32)> = s
                .iter()
                .enumerate()
                .map(|(i, &x)| (descending_key(x), i as u32))
                .collect();
            keyed.sort_unstable();
            out.extend(keyed.iter().map(|&(_, i)| i));
        }
        // Runs of tied scores are ordered by document id descending.
        let mut i = 0;
        while i < out.len() {
            let mut j = i + 1;
            while j < out.len() && s[out[j] as usize] == s[out[i] as usize] {
                j += 1;
            }
            if j - i > 1 {
                out[i..j].sort_unstable_by(by_doc_desc);
            }
            i = j;
        }
    }

    /// Add one result; scores must not be NaN.
    #[inline]
    pub(crate) fn push(&mut self, doc: &[u8], score: f64) -> Result<()> {
        if score.is_nan() {
            return Err(Error::Input(format!(
                "score of document '{}' for query '{}' is NaN; NaN has no place in a ranking",
                show(doc),
                show(&self.qid)
            )));
        }
        self.docs.push(doc)?;
        self.scores.push(score);
        Ok(())
    }

    /// Empty it, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.qid = Box::default();
        self.docs.truncate(0);
        self.scores.clear();
    }

    pub(crate) fn append(&mut self, mut other: RunQuery) -> Result<()> {
        if self.scores.is_empty() {
            self.docs = other.docs;
            self.scores = other.scores;
            return Ok(());
        }
        self.docs.extend_range(&other.docs, 0, other.docs.len())?;
        self.scores.append(&mut other.scores);
        Ok(())
    }

    /// An error naming the first document that occurs twice, if any.
    pub(crate) fn check_duplicates(&self, scratch: &mut RepeatFinder) -> Result<()> {
        match scratch.first_repeat(&self.docs) {
            None => Ok(()),
            Some(i) => Err(Error::DuplicateEntry {
                location: Location {
                    source: String::new(),
                    line: 0,
                },
                query: show(&self.qid),
                doc: show(self.docs.get(i)),
                first: String::new(),
            }),
        }
    }
}

/// A key whose ascending order is the descending order of scores (-0.0 equals 0.0,
/// as in C comparisons; NaN never occurs in a run).
#[inline]
fn descending_key(x: f64) -> u64 {
    let x = if x == 0.0 { 0.0 } else { x };
    let b = x.to_bits();
    // total order of finite/infinite doubles as unsigned integers, then reversed
    let asc = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    !asc
}

/// A ranked-retrieval run, ordered by query id (byte order).
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub(crate) queries: Vec<RunQuery>,
    index: KeyIndex,
    pub(crate) runid: Vec<u8>,
}

impl Run {
    /// Start building a run in memory.
    pub fn builder() -> RunBuilder {
        RunBuilder::default()
    }

    /// Read a TREC run file (`qid iter docno rank score tag`); `.gz` is detected by
    /// content, `-` is stdin.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Run> {
        crate::trec::read_run(path.as_ref())
    }

    /// Parse TREC run text; `source` names it in error messages.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<Run> {
        crate::trec::parse_run(data, source)
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// True when there is no query.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Total number of (query, document) lines.
    pub fn num_results(&self) -> usize {
        self.queries.iter().map(|q| q.len()).sum()
    }

    /// The queries in byte order of their ids.
    pub fn queries(&self) -> &[RunQuery] {
        &self.queries
    }

    /// One query's results.
    pub fn query(&self, qid: &[u8]) -> Option<&RunQuery> {
        let pos = self.index.get(qid, |i| &self.queries[i].qid);
        pos.map(|i| &self.queries[i])
    }

    /// The run tag: the tag of the last line of a run file (trec_eval's `runid`).
    pub fn runid(&self) -> &[u8] {
        &self.runid
    }

    /// Set the run tag.
    pub fn set_runid(&mut self, tag: &[u8]) {
        self.runid = tag.to_vec();
    }

    pub(crate) fn from_queries(queries: Vec<RunQuery>, runid: Vec<u8>) -> Result<Run> {
        // Duplicate documents are an error (trec_eval: "duplicate docs").
        let dup = crate::parallel::find_first_with(&queries, RepeatFinder::default, |s, q| {
            q.check_duplicates(s).err()
        });
        if let Some(e) = dup {
            return Err(e);
        }
        Ok(Self::from_unique(queries, runid))
    }

    /// Build from queries known to hold no duplicate document (from dict keys).
    pub(crate) fn from_unique(queries: Vec<RunQuery>, runid: Vec<u8>) -> Run {
        let mut queries = queries;
        let index = KeyIndex::sorted(&mut queries, |q| &q.qid);
        Run {
            queries,
            index,
            runid,
        }
    }

    /// Approximate heap memory in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.queries
            .iter()
            .map(|q| q.docs.heap_bytes() + 8 * q.scores.capacity())
            .sum()
    }
}

/// Builds a [`Run`] one result at a time.
#[derive(Default)]
pub struct RunBuilder {
    queries: Vec<RunQuery>,
    index: KeyIndex,
    last: Option<usize>,
    runid: Vec<u8>,
}

impl RunBuilder {
    /// Add one result. Scores must not be NaN.
    pub fn add(&mut self, qid: &[u8], doc: &[u8], score: f64) -> Result<()> {
        let i = self.query(qid);
        self.push(i, doc, score)
    }

    /// The slot of a query (created if new), for [`RunBuilder::push`].
    pub fn query(&mut self, qid: &[u8]) -> usize {
        match self.last {
            Some(i) if &*self.queries[i].qid == qid => i,
            _ => {
                let next = self.queries.len();
                let i = match self.index.get_or_add(qid, next, |i| &self.queries[i].qid) {
                    Some(i) => i,
                    None => {
                        self.queries.push(RunQuery {
                            qid: qid.into(),
                            ..Default::default()
                        });
                        next
                    }
                };
                self.last = Some(i);
                i
            }
        }
    }

    /// Add one result to a query slot from [`RunBuilder::query`]. Scores must not be NaN.
    #[inline]
    pub fn push(&mut self, slot: usize, doc: &[u8], score: f64) -> Result<()> {
        self.queries[slot].push(doc, score)
    }

    /// Set the run tag.
    pub fn runid(&mut self, tag: &[u8]) -> &mut Self {
        self.runid = tag.to_vec();
        self
    }

    /// Finish; fails if a document occurs twice for one query.
    pub fn build(self) -> Result<Run> {
        Run::from_queries(self.queries, self.runid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_is_score_desc_then_doc_desc() {
        let mut b = Run::builder();
        for (d, s) in [
            ("a", 0.5),
            ("b", f64::INFINITY),
            ("c", -0.0),
            ("d", 0.0),
            ("e", -3.0),
            ("f", 0.5),
            ("g", f64::NEG_INFINITY),
            ("h", 1e-300),
        ] {
            b.add(b"q", d.as_bytes(), s).unwrap();
        }
        let run = b.build().unwrap();
        let q = &run.queries()[0];
        let mut order = Vec::new();
        q.ranking(&mut order);
        let docs: Vec<&[u8]> = order.iter().map(|&i| q.docs.get(i as usize)).collect();
        let expect: Vec<&[u8]> = vec![b"b", b"f", b"a", b"h", b"d", b"c", b"e", b"g"];
        assert_eq!(docs, expect);
    }
}
