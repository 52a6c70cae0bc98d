//! Relevance judgments: for each query, a hash map from document id to label.

use crate::error::{show, Error, Result};
use crate::ids::{IdIndex, Ids, KeyIndex};

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
    /// A query's judgments, indexed. A document judged twice is an
    /// [`Error::DuplicateEntry`] (without a location; file readers add it).
    pub(crate) fn new(qid: Box<[u8]>, docs: Ids, labels: Vec<i64>) -> Result<QrelsQuery> {
        let mut index = IdIndex::with_capacity(docs.len());
        if let Some(i) = (0..docs.len()).find(|&i| index.insert(&docs, i).is_some()) {
            return Err(Error::DuplicateEntry {
                location: crate::error::Location {
                    source: String::new(),
                    line: 0,
                },
                query: show(&qid),
                doc: show(docs.get(i)),
                first: String::new(),
            });
        }
        let levels = count_levels(&labels);
        Ok(QrelsQuery {
            qid,
            docs,
            labels,
            index,
            levels,
        })
    }

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
    index: KeyIndex,
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

    /// Position of a query in [`Qrels::queries`].
    pub(crate) fn position(&self, qid: &[u8]) -> Option<usize> {
        self.index.get(qid, |i| &self.queries[i].qid)
    }

    /// One query's judgments.
    pub fn query(&self, qid: &[u8]) -> Option<&QrelsQuery> {
        self.position(qid).map(|i| &self.queries[i])
    }

    /// From indexed queries with distinct ids, in any order.
    pub(crate) fn from_queries(mut queries: Vec<QrelsQuery>) -> Qrels {
        let index = KeyIndex::sorted(&mut queries, |q| &q.qid);
        Qrels { queries, index }
    }

    /// Approximate heap memory in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.queries
            .iter()
            .map(|q| q.docs.heap_bytes() + q.index.heap_bytes() + 8 * q.labels.capacity())
            .sum()
    }
}

/// Distinct non-negative labels with their counts, ascending. Few distinct labels (the
/// usual case) are counted in a small sorted list; many fall back to sorting.
pub(crate) fn count_levels(labels: &[i64]) -> Vec<(i64, u64)> {
    const FEW: usize = 32;
    let mut levels: Vec<(i64, u64)> = Vec::new();
    for &l in labels {
        if l < 0 {
            continue;
        }
        match levels.binary_search_by_key(&l, |&(x, _)| x) {
            Ok(i) => levels[i].1 += 1,
            Err(_) if levels.len() == FEW => return count_levels_sorted(labels),
            Err(i) => levels.insert(i, (l, 1)),
        }
    }
    levels
}

fn count_levels_sorted(labels: &[i64]) -> Vec<(i64, u64)> {
    let mut lv: Vec<i64> = labels.iter().copied().filter(|&l| l >= 0).collect();
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
    index: KeyIndex,
    last: Option<usize>,
}

impl QrelsBuilder {
    fn query_slot(&mut self, qid: &[u8]) -> usize {
        if let Some(i) = self.last {
            if &*self.queries[i].qid == qid {
                return i;
            }
        }
        let next = self.queries.len();
        let i = match self.index.get_or_add(qid, next, |i| &self.queries[i].qid) {
            Some(i) => i,
            None => {
                self.queries.push(QrelsQuery {
                    qid: qid.into(),
                    docs: Ids::default(),
                    labels: Vec::new(),
                    index: IdIndex::default(),
                    levels: Vec::new(),
                });
                next
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

    /// Finish: index each query's documents (in parallel), count the label levels and
    /// order the queries by id. A document judged twice for one query is an
    /// [`Error::DuplicateEntry`] (without a location; file readers add it).
    pub fn build(self) -> Result<Qrels> {
        let queries =
            crate::parallel::map_owned(self.queries, |q| QrelsQuery::new(q.qid, q.docs, q.labels));
        let queries: Result<Vec<QrelsQuery>> = queries.into_iter().collect();
        queries.map(Qrels::from_queries)
    }
}
