//! Relevance judgments: for each query, a hash map from document id to label.

use crate::error::{Result, Unit};
use crate::ids::{IdIndex, Ids, KeyIndex};
use crate::intake::{Grouper, Origins, Place, Rows};

/// The judgments of one query.
#[derive(Clone, Debug)]
pub struct QrelsQuery {
    pub(crate) qid: Box<[u8]>,
    pub(crate) docs: Ids,
    pub(crate) labels: Vec<i64>,
    pub(crate) index: IdIndex,
    /// Distinct non-negative labels with their document counts, ascending.
    pub(crate) levels: Vec<(i64, u64)>,
    /// One bit of each judged document's hash ([`filter_bit`]): a ranked document
    /// whose bit is clear is not judged, known without probing the index (most ranked
    /// documents are not judged).
    filter: [u64; FILTER_WORDS],
}

/// The words of [`QrelsQuery`]'s filter: 256 bits, about 1 in 13 unjudged documents
/// let through to the index for a query of 20 judgments, 1 in 260 for one.
const FILTER_WORDS: usize = 4;

/// The (word, bit) of a hash in the filter: bits of the hash that neither hashbrown's
/// tag (the top 7) nor its first slot (the low ones) read.
#[inline(always)]
fn filter_bit(h: u64) -> (usize, u64) {
    let b = (h >> 40) as usize % (64 * FILTER_WORDS);
    (b / 64, 1 << (b % 64))
}

/// A query's rows given back with the (first, second) positions of a document judged
/// twice.
pub(crate) type Duplicate = Box<(Rows<i64>, (usize, usize))>;

impl QrelsQuery {
    /// A query's judgments, indexed. A document judged twice gives back the rows with
    /// the (first, second) positions of that document (boxed: the error path only).
    pub(crate) fn new(rows: Rows<i64>) -> std::result::Result<QrelsQuery, Duplicate> {
        let Rows {
            qid,
            docs,
            values: labels,
            ..
        } = rows;
        let mut index = IdIndex::with_capacity(docs.len());
        let mut filter = [0; FILTER_WORDS];
        let mut twice = None;
        for (i, h) in docs.hashes().enumerate() {
            if let Some(first) = index.insert_hashed(&docs, i, h) {
                twice = Some((first, i));
                break;
            }
            let (w, bit) = filter_bit(h);
            filter[w] |= bit;
        }
        if let Some(places) = twice {
            return Err(Box::new((Rows::from_parts(qid, docs, labels), places)));
        }
        let levels = count_levels(&labels);
        Ok(QrelsQuery {
            qid,
            docs,
            labels,
            index,
            levels,
            filter,
        })
    }

    /// Index the queries a [`Grouper`] gathered (in parallel) and order them by id; the
    /// first query (in arrival order) with a document judged twice names both places.
    pub(crate) fn build_all(
        queries: Vec<Rows<i64>>,
        origins: &[Origins],
        place: &Place,
    ) -> Result<Qrels> {
        let built = crate::parallel::map_owned(queries, QrelsQuery::new);
        let mut out = Vec::with_capacity(built.len());
        for (i, q) in built.into_iter().enumerate() {
            match q {
                Ok(q) => out.push(q),
                Err(dup) => {
                    let (rows, d) = *dup;
                    return Err(place.duplicate(&rows, origins.get(i), d));
                }
            }
        }
        Ok(Qrels::from_queries(out))
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

    /// Where a document stands in the query's judgments (input order), if judged.
    pub fn position(&self, doc: &[u8]) -> Option<usize> {
        self.index.find(&self.docs, doc)
    }

    /// [`QrelsQuery::position`] of a document whose `ids::hash_id` is `h`, for
    /// evaluation's loop over a ranking (see `IdIndex::find_ranked`).
    #[inline(always)]
    pub(crate) fn position_ranked(&self, doc: &[u8], h: u64) -> Option<usize> {
        let (w, bit) = filter_bit(h);
        if self.filter[w] & bit == 0 {
            return None;
        }
        self.index.find_ranked(&self.docs, doc, h)
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

/// Builds [`Qrels`] one judgment at a time; a problem names the row (the number of
/// judgments added before it).
pub struct QrelsBuilder {
    rows: Grouper<i64>,
}

impl Default for QrelsBuilder {
    fn default() -> Self {
        QrelsBuilder {
            rows: Grouper::new(Place::new("qrels", Unit::Row)),
        }
    }
}

/// Pieces of one query's judgments (columns grouped by query on the Python side).
impl crate::intake::PieceSink<i64> for QrelsBuilder {
    fn piece(&mut self, piece: crate::intake::Rows<i64>, mark: u64) -> Result<()> {
        self.rows.piece(piece, mark)
    }
}

impl QrelsBuilder {
    /// A builder whose messages name `place` (a file and its lines, for readers of
    /// other formats).
    pub(crate) fn at(place: Place) -> Self {
        QrelsBuilder {
            rows: Grouper::new(place),
        }
    }

    /// Add one judgment.
    pub fn add(&mut self, qid: &[u8], doc: &[u8], label: i64) -> Result<()> {
        self.rows.add(qid, doc, label)
    }

    /// The intake the rows go to, for producers of whole pieces of queries.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn grouper(&mut self) -> &mut Grouper<i64> {
        &mut self.rows
    }

    /// The judgments of one query at once (what [`QrelsBuilder::add`] does row by row).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn add_rows(&mut self, piece: crate::intake::Rows<i64>) -> Result<()> {
        self.rows.add_rows(piece)
    }

    /// Finish: index each query's documents (in parallel), count the label levels and
    /// order the queries by id. A document judged twice for one query is an
    /// [`crate::Error::DuplicateEntry`] naming both rows.
    pub fn build(self) -> Result<Qrels> {
        let (queries, origins, place) = self.rows.finish();
        QrelsQuery::build_all(queries, &origins, &place)
    }
}
