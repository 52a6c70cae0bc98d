//! Relevance judgments: for each query, a hash map from document id to label.

use rustc_hash::FxHashMap;

use crate::error::{show, Error, Result};
use crate::ids::{IdIndex, Ids};

/// The judgments of one query.
#[derive(Clone, Debug)]
pub struct QrelsQuery {
    pub(crate) qid: Box<[u8]>,
    pub(crate) docs: Ids,
    pub(crate) labels: Vec<i64>,
    pub(crate) index: IdIndex,
    /// Distinct non-negative labels with their document counts, ascending.
    pub(crate) levels: Vec<(i64, u64)>,
}

impl QrelsQuery {
    /// The query id.
    pub fn id(&self) -> &[u8] {
        &self.qid
    }

    /// Number of judged documents (labels of every sign).
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when the query has no judgment.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The label of a document, if judged.
    #[inline]
    pub fn label(&self, doc: &[u8]) -> Option<i64> {
        self.index.find(&self.docs, doc).map(|i| self.labels[i])
    }

    /// (document, label) pairs in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], i64)> + '_ {
        self.docs.iter().zip(self.labels.iter().copied())
    }

    /// Distinct non-negative labels with their counts, ascending.
    pub fn levels(&self) -> &[(i64, u64)] {
        &self.levels
    }

    /// Number of documents with a label of at least `level` (only labels >= 0 count).
    pub fn num_rel(&self, level: i64) -> u64 {
        self.levels
            .iter()
            .filter(|(l, _)| *l >= level)
            .map(|(_, c)| c)
            .sum()
    }
}

/// Relevance judgments for a set of queries, ordered by query id (byte order).
#[derive(Clone, Debug, Default)]
pub struct Qrels {
    pub(crate) queries: Vec<QrelsQuery>,
    pub(crate) index: FxHashMap<Box<[u8]>, u32>,
}

impl Qrels {
    /// Start building judgments in memory.
    pub fn builder() -> QrelsBuilder {
        QrelsBuilder::default()
    }

    /// Read a TREC qrels file (`qid iter docno rel`); `.gz` is detected by content, `-` is stdin.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Qrels> {
        let path = path.as_ref();
        let data = crate::trec::read_input(path)?;
        crate::trec::parse_qrels(&data, &path.display().to_string())
    }

    /// Parse TREC qrels text; `source` names it in error messages.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<Qrels> {
        crate::trec::parse_qrels(data, source)
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// True when there is no query.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// Total number of judgments.
    pub fn num_judgments(&self) -> usize {
        self.queries.iter().map(|q| q.len()).sum()
    }

    /// The queries in byte order of their ids.
    pub fn queries(&self) -> &[QrelsQuery] {
        &self.queries
    }

    /// One query's judgments.
    pub fn query(&self, qid: &[u8]) -> Option<&QrelsQuery> {
        self.index.get(qid).map(|&i| &self.queries[i as usize])
    }

    /// Approximate heap memory in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.queries
            .iter()
            .map(|q| q.docs.heap_bytes() + q.index.heap_bytes() + 8 * q.labels.capacity())
            .sum()
    }
}

/// Distinct non-negative labels with their counts, ascending.
pub(crate) fn count_levels(labels: impl Iterator<Item = i64>) -> Vec<(i64, u64)> {
    let mut lv: Vec<i64> = labels.filter(|&l| l >= 0).collect();
    lv.sort_unstable();
    let mut levels: Vec<(i64, u64)> = Vec::new();
    for l in lv {
        match levels.last_mut() {
            Some((x, c)) if *x == l => *c += 1,
            _ => levels.push((l, 1)),
        }
    }
    levels
}

/// Builds [`Qrels`] one judgment at a time. Duplicate judgments are found by
/// [`QrelsBuilder::build`].
#[derive(Default)]
pub struct QrelsBuilder {
    queries: Vec<QrelsQuery>,
    index: FxHashMap<Box<[u8]>, u32>,
    last: Option<usize>,
}

impl QrelsBuilder {
    fn query_slot(&mut self, qid: &[u8]) -> usize {
        if let Some(i) = self.last {
            if &*self.queries[i].qid == qid {
                return i;
            }
        }
        let i = match self.index.get(qid) {
            Some(&i) => i as usize,
            None => {
                let i = self.queries.len();
                self.queries.push(QrelsQuery {
                    qid: qid.into(),
                    docs: Ids::default(),
                    labels: Vec::new(),
                    index: IdIndex::default(),
                    levels: Vec::new(),
                });
                self.index.insert(qid.into(), i as u32);
                i
            }
        };
        self.last = Some(i);
        i
    }

    /// Add one judgment.
    pub fn add(&mut self, qid: &[u8], doc: &[u8], label: i64) -> Result<()> {
        let i = self.query_slot(qid);
        let q = &mut self.queries[i];
        q.docs.push(doc)?;
        q.labels.push(label);
        Ok(())
    }

    /// Add consecutive judgments of one query (a parsed block of a file).
    pub(crate) fn add_segment(&mut self, qid: &[u8], docs: Ids, labels: Vec<i64>) -> Result<()> {
        let i = self.query_slot(qid);
        let q = &mut self.queries[i];
        if q.labels.is_empty() {
            q.docs = docs;
            q.labels = labels;
        } else {
            for d in docs.iter() {
                q.docs.push(d)?;
            }
            q.labels.extend(labels);
        }
        Ok(())
    }

    /// Finish: index each query's documents (in parallel), count the label levels and
    /// order the queries by id. A document judged twice for one query is an
    /// [`Error::DuplicateEntry`] (without a location; file readers add it).
    pub fn build(self) -> Result<Qrels> {
        let mut queries = self.queries;
        let dups = crate::parallel::map_mut(&mut queries, |q| {
            let mut index = IdIndex::with_capacity(q.docs.len());
            if let Some(i) = (0..q.docs.len()).find(|&i| index.insert(&q.docs, i).is_some()) {
                return Some((show(&q.qid), show(q.docs.get(i))));
            }
            q.index = index;
            q.levels = count_levels(q.labels.iter().copied());
            None
        });
        if let Some((query, doc)) = dups.into_iter().flatten().next() {
            return Err(Error::DuplicateEntry {
                location: crate::error::Location {
                    source: String::new(),
                    line: 0,
                },
                query,
                doc,
                first: String::new(),
            });
        }
        queries.sort_unstable_by(|a, b| a.qid.cmp(&b.qid));
        let mut index = FxHashMap::default();
        index.reserve(queries.len());
        for (i, q) in queries.iter().enumerate() {
            index.insert(q.qid.clone(), i as u32);
        }
        Ok(Qrels { queries, index })
    }
}
