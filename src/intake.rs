//! The one intake path: rows of judgments or results become whole queries here.
//!
//! Every source — TREC files ([`crate::trec`]), the builders ([`crate::QrelsBuilder`],
//! [`crate::RunBuilder`]), Python dicts and columns, and streamed evaluation
//! ([`crate::QueryStream`]) — produces *pieces*: runs of consecutive rows of one query
//! ([`Rows`]), each with the *mark* (line or row) of its first row. Sources differ only
//! in how they produce pieces; what happens to a piece is decided once, here:
//!
//! - `Grouper` joins the pieces of each query wherever they come (a whole run or
//!   qrels being built), queries in order of first appearance.
//! - `Sequence` takes queries that come one after another (streams): consecutive
//!   pieces of a query are joined and a query that comes back is refused. It holds the
//!   one "each query once" set.
//! - [`Origins`] remember where each document of a query came from, so that a problem
//!   found later names its line or row without reading the input again.
//! - The score policy (NaN refused; infinities rank first or last) and the
//!   duplicate-document check with its message (naming both lines or rows) exist once.

/// The names each field of judgments and runs goes by in every input found by name:
/// Arrow tables, data frames and parquet columns, JSON and JSONL keys, Spark columns
/// (ranx's `q_id`, ir_measures' and ir_datasets' `query_id`/`doc_id`, PyTerrier's
/// `qid`/`docno`, trectools' `query`/`docid`/`rel`, BEIR's `query-id`/`corpus-id`,
/// elinor's keys). Where an input holds two of them, the first in the list is taken.
pub const QUERY_COLUMNS: &[&str] = &["q_id", "query_id", "qid", "query-id", "query", "topic"];
/// Names a document id goes by (see [`QUERY_COLUMNS`]).
pub const DOC_COLUMNS: &[&str] = &[
    "doc_id",
    "docno",
    "docid",
    "corpus-id",
    "document_id",
    "doc",
];
/// Names a judgment's label goes by (BEIR's qrels call it `score`).
pub const LABEL_COLUMNS: &[&str] = &["relevance", "label", "rel", "grade", "score"];
/// Names a run's score goes by.
pub const SCORE_COLUMNS: &[&str] = &["score", "similarity"];

use rustc_hash::FxHashSet;
use std::sync::OnceLock;

use crate::error::{show, Error, Location, Result, Unit};
use crate::ids::{Ids, KeyIndex, RepeatFinder};

/// One query's rows in arrival order: document ids back to back, one value each
/// (scores for a run: [`crate::RunQuery`] is `Rows<f64>`; labels for qrels).
#[derive(Clone, Debug)]
pub struct Rows<V> {
    pub(crate) qid: Box<[u8]>,
    pub(crate) docs: Ids,
    pub(crate) values: Vec<V>,
    /// A run query's trec_eval order, kept by `RunQuery::ranking_kept` (fusion, the
    /// evaluation of a held run) so that runs fused or evaluated again are not sorted
    /// again: empty when the arrival order is the
    /// ranking (most run files: nothing is stored), else the positions. The methods
    /// that change the rows forget it; rows are only changed before anything ranks
    /// them.
    pub(crate) ranked: OnceLock<Box<[u32]>>,
}

impl<V> Default for Rows<V> {
    fn default() -> Self {
        Rows {
            qid: Box::default(),
            docs: Ids::default(),
            values: Vec::new(),
            ranked: OnceLock::new(),
        }
    }
}

impl<V: Copy> Rows<V> {
    /// An empty query.
    pub(crate) fn new(qid: &[u8]) -> Self {
        Rows {
            qid: qid.into(),
            ..Rows::default()
        }
    }

    /// Rows from their parts.
    pub(crate) fn from_parts(qid: Box<[u8]>, docs: Ids, values: Vec<V>) -> Self {
        Rows {
            qid,
            docs,
            values,
            ranked: OnceLock::new(),
        }
    }

    /// Forget the kept ranking (the rows change).
    #[inline]
    fn changed(&mut self) {
        if self.ranked.get().is_some() {
            self.ranked = OnceLock::new();
        }
    }

    /// The query id.
    pub fn id(&self) -> &[u8] {
        &self.qid
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// (document, value) pairs in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], V)> + '_ {
        self.docs.iter().zip(self.values.iter().copied())
    }

    /// Add a row. Values are checked when the piece enters a [`Grouper`] or a
    /// [`Sequence`], where its place is known. Inlined into the loops that add a row at
    /// a time (a call was 68 of the 269 instructions a row of a frame took to convert).
    #[inline(always)]
    pub(crate) fn push(&mut self, doc: &[u8], value: V) -> Result<()> {
        self.changed();
        self.docs.push(doc)?;
        self.values.push(value);
        Ok(())
    }

    /// Empty it, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.changed();
        self.qid = Box::default();
        self.docs.truncate(0);
        self.values.clear();
    }

    /// Keep the first `n` rows.
    pub(crate) fn truncate(&mut self, n: usize) {
        self.changed();
        self.docs.truncate(n);
        self.values.truncate(n);
    }

    /// Append the rows of another piece of the same query.
    pub(crate) fn append(&mut self, mut other: Rows<V>) -> Result<()> {
        self.changed();
        if self.values.is_empty() {
            self.docs = other.docs;
            self.values = other.values;
            return Ok(());
        }
        self.docs.extend_range(&other.docs, 0, other.docs.len())?;
        self.values.append(&mut other.values);
        Ok(())
    }
}

/// A value as it enters: scores must be comparable; labels are integers already.
pub trait Value: Copy + Send + Sync {
    /// What is wrong with this value, if anything.
    fn problem(self) -> Option<&'static str>;
    /// Whether [`Value::problem`] has something to say (a cheap test for whole pieces).
    fn is_bad(self) -> bool {
        self.problem().is_some()
    }
    /// What the value is called in messages.
    const NAME: &'static str;
}

impl Value for f64 {
    // The one score policy: any double but NaN (trec_eval reads `inf`; NaN cannot be
    // ranked: it compares false with everything).
    #[inline]
    fn problem(self) -> Option<&'static str> {
        self.is_nan()
            .then_some("is NaN; a ranking needs comparable scores")
    }
    #[inline]
    fn is_bad(self) -> bool {
        self.is_nan()
    }
    const NAME: &'static str = "score";
}

impl Value for i64 {
    #[inline]
    fn problem(self) -> Option<&'static str> {
        None
    }
    const NAME: &'static str = "label";
}

/// Where the documents of one query came from: for each piece, the index of its first
/// document and that document's mark (line or row); the rows of a piece are consecutive.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    pieces: Vec<(usize, u64)>,
    /// The size at which the query is next checked for a repeated document while it
    /// grows (see [`Origins::early_repeat`]).
    next_check: usize,
}

/// A query is first checked for repeated documents while it grows at this size, then
/// at each doubling: an input that repeats the same lines forever is refused when its
/// query reaches this size, not when memory runs out; the checks cost at most twice the
/// final check.
const FIRST_CHECK: usize = 1 << 16;

impl Origins {
    /// A piece starting at document `first` and mark `mark`; extends the last piece
    /// when it continues it.
    #[inline]
    pub(crate) fn push(&mut self, first: usize, mark: u64) {
        if let Some(&(f, m)) = self.pieces.last() {
            if m + (first - f) as u64 == mark {
                return;
            }
        }
        self.pieces.push((first, mark));
    }

    /// A repeated document of a growing query, checked at sizes [`FIRST_CHECK`],
    /// twice that, and so on.
    fn early_repeat<V: Copy>(
        &mut self,
        q: &Rows<V>,
        finder: &mut RepeatFinder,
    ) -> Option<(usize, usize)> {
        if q.len() < self.next_check.max(FIRST_CHECK) {
            return None;
        }
        self.next_check = q.len().saturating_mul(2);
        find_duplicate(&q.docs, finder)
    }

    /// The mark of document `doc`, if known.
    pub(crate) fn mark(&self, doc: usize) -> Option<u64> {
        let i = self.pieces.partition_point(|&(f, _)| f <= doc);
        let (f, m) = *self.pieces.get(i.checked_sub(1)?)?;
        Some(m + (doc - f) as u64)
    }
}

/// Where a source's rows are: its name in messages and how its marks count.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) source: String,
    pub(crate) unit: Unit,
}

impl Place {
    pub(crate) fn new(source: &str, unit: Unit) -> Place {
        Place {
            source: source.to_string(),
            unit,
        }
    }

    /// The location of a mark (none: the source alone).
    pub(crate) fn at(&self, mark: Option<u64>) -> Location {
        match mark {
            Some(m) => Location::new(&self.source, m, self.unit),
            None => Location::new(&self.source, 0, Unit::Line),
        }
    }

    /// The ids of a piece from a source other than a TREC file (dicts, columns,
    /// builders, streams), checked so that everything accepted can be written to a TREC
    /// file and read back as it was (see [`id_problem`]). Ids read from TREC files
    /// cannot break these rules.
    fn check_ids<V: Copy>(&self, piece: &Rows<V>, mark: u64) -> Result<()> {
        if self.unit == Unit::Line {
            return Ok(());
        }
        let bad = |what: String, i: Option<usize>| Error::Format {
            location: self.at((self.unit == Unit::Row).then_some(mark + i.unwrap_or(0) as u64)),
            message: what,
        };
        self.check_qid(&piece.qid, mark)?;
        if !piece.docs.may_hold_unwritable() {
            return Ok(());
        }
        for (i, doc) in piece.docs.iter().enumerate() {
            if let Some(p) = id_problem(doc) {
                return Err(bad(
                    format!(
                        "document id '{}' of query '{}' {p}",
                        show(doc),
                        show(&piece.qid)
                    ),
                    Some(i),
                ));
            }
        }
        Ok(())
    }

    /// A query id from a source other than a TREC file: as a document id, and not
    /// starting with `#` (its line would be read back as a comment).
    fn check_qid(&self, qid: &[u8], mark: u64) -> Result<()> {
        let problem = id_problem(qid).or_else(|| {
            (qid.first() == Some(&b'#')).then_some(
                "starts with '#': in a TREC file its line would be read back as a comment",
            )
        });
        match problem {
            None => Ok(()),
            Some(p) => Err(Error::Format {
                location: self.at((self.unit == Unit::Row).then_some(mark)),
                message: format!("query id '{}' {p}", show(qid)),
            }),
        }
    }

    /// The error for a value of `piece` that breaks the policy (first one), if any.
    fn check_values<V: Value>(&self, piece: &Rows<V>, mark: u64) -> Result<()> {
        if !piece.values.iter().fold(false, |acc, &v| acc | v.is_bad()) {
            return Ok(()); // the usual case, in one branch-free pass
        }
        let Some((i, msg)) = piece
            .values
            .iter()
            .enumerate()
            .find_map(|(i, v)| v.problem().map(|m| (i, m)))
        else {
            return Ok(());
        };
        Err(Error::Format {
            location: self.at((self.unit != Unit::None).then_some(mark + i as u64)),
            message: format!(
                "{} of document '{}' for query '{}' {msg}",
                V::NAME,
                show(piece.docs.get(i)),
                show(&piece.qid)
            ),
        })
    }

    /// The one duplicate-document message: both places when known.
    pub(crate) fn duplicate<V: Copy>(
        &self,
        q: &Rows<V>,
        origins: Option<&Origins>,
        (first, second): (usize, usize),
    ) -> Error {
        let mark = |d: usize| origins.and_then(|o| o.mark(d));
        let located = self.unit != Unit::None;
        let first_at = match (located, mark(first)) {
            (true, Some(m)) => format!(" (first at {} {m})", self.unit.word()),
            _ => String::new(),
        };
        Error::DuplicateEntry {
            location: self.at(mark(second).filter(|_| located)),
            query: show(&q.qid),
            doc: show(q.docs.get(second)),
            first: first_at,
        }
    }
}

/// What keeps an id from being written to a TREC file and read back as it was: empty,
/// or holding whitespace (fields are separated by C `isspace` bytes) or NUL.
pub fn id_problem(id: &[u8]) -> Option<&'static str> {
    if id.is_empty() {
        return Some("is empty; an empty id cannot be written to a TREC file");
    }
    // a byte above ' ' is never whitespace: one comparison per byte in the usual case
    if id
        .iter()
        .any(|&b| b <= b' ' && matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | 0))
    {
        return Some(
            "holds whitespace or a NUL byte; TREC files separate fields by whitespace, so it \
             could not be written and read back as it is",
        );
    }
    None
}

/// The one duplicate-document check: (first, second) positions of the first document
/// that occurs again, if any.
pub(crate) fn find_duplicate(docs: &Ids, finder: &mut RepeatFinder) -> Option<(usize, usize)> {
    let second = finder.first_repeat(docs)?;
    let id = docs.get(second);
    let first = (0..second).find(|&j| docs.get(j) == id)?;
    Some((first, second))
}

/// Receives the pieces of queries, in arrival order.
pub(crate) trait PieceSink<V> {
    /// Consecutive rows of one query, the first at `mark`.
    fn piece(&mut self, piece: Rows<V>, mark: u64) -> Result<()>;
    /// After each block of input (a moment to work on what came).
    fn block_done(&mut self) -> Result<()> {
        Ok(())
    }
    /// An empty piece to fill (buffers of finished queries when there are some).
    fn spare(&mut self) -> Rows<V> {
        Rows::default()
    }
    /// Whether a piece of query `qid` would be refused as coming back after another
    /// (a producer can then group its rows first).
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    fn comes_back(&self, _qid: &[u8]) -> bool {
        false
    }
}

/// Joins the pieces of each query wherever they come; queries stay in order of first
/// appearance, the rows of a query in arrival order.
pub(crate) struct Grouper<V> {
    pub(crate) place: Place,
    queries: Vec<Rows<V>>,
    origins: Vec<Origins>,
    index: KeyIndex,
    last: Option<usize>,
    rows: u64,
    finder: RepeatFinder,
}

impl<V: Value> Grouper<V> {
    pub(crate) fn new(place: Place) -> Self {
        Grouper {
            place,
            queries: Vec::new(),
            origins: Vec::new(),
            index: KeyIndex::default(),
            last: None,
            rows: 0,
            finder: RepeatFinder::default(),
        }
    }

    fn slot(&mut self, qid: &[u8]) -> usize {
        if let Some(i) = self.last {
            if *self.queries[i].qid == *qid {
                return i;
            }
        }
        let next = self.queries.len();
        let queries = &self.queries;
        let i = match self.index.get_or_add(qid, next, |i| &queries[i].qid) {
            Some(i) => i,
            None => {
                self.queries.push(Rows::new(qid));
                self.origins.push(Origins::default());
                next
            }
        };
        self.last = Some(i);
        i
    }

    /// Consecutive rows of one query at once (as many [`Grouper::add`]s, with the checks
    /// made once per piece); marks go on counting rows.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn add_rows(&mut self, piece: Rows<V>) -> Result<()> {
        let mark = self.rows;
        self.rows += piece.len() as u64;
        self.piece(piece, mark)
    }

    /// One row; its mark is the number of rows added before it.
    pub(crate) fn add(&mut self, qid: &[u8], doc: &[u8], value: V) -> Result<()> {
        let mark = self.rows;
        self.rows += 1;
        if self.place.unit != Unit::Line && self.last.is_none_or(|i| *self.queries[i].qid != *qid) {
            self.place.check_qid(qid, mark)?;
        }
        if let Some(p) = id_problem(doc) {
            return Err(Error::Format {
                location: self.place.at(Some(mark)),
                message: format!("document id '{}' of query '{}' {p}", show(doc), show(qid)),
            });
        }
        let i = self.slot(qid);
        let q = &mut self.queries[i];
        if let Some(msg) = value.problem() {
            return Err(Error::Format {
                location: self.place.at(Some(mark)),
                message: format!(
                    "{} of document '{}' for query '{}' {msg}",
                    V::NAME,
                    show(doc),
                    show(qid)
                ),
            });
        }
        self.origins[i].push(q.len(), mark);
        q.push(doc, value)?;
        if let Some(d) = self.origins[i].early_repeat(&self.queries[i], &mut self.finder) {
            return Err(self
                .place
                .duplicate(&self.queries[i], Some(&self.origins[i]), d));
        }
        Ok(())
    }

    /// The queries in order of first appearance, with where their documents came from.
    pub(crate) fn finish(self) -> (Vec<Rows<V>>, Vec<Origins>, Place) {
        (self.queries, self.origins, self.place)
    }
}

impl<V: Value> PieceSink<V> for Grouper<V> {
    fn piece(&mut self, piece: Rows<V>, mark: u64) -> Result<()> {
        self.place.check_ids(&piece, mark)?;
        self.place.check_values(&piece, mark)?;
        let i = self.slot(&piece.qid);
        self.origins[i].push(self.queries[i].len(), mark);
        self.queries[i].append(piece)?;
        if let Some(d) = self.origins[i].early_repeat(&self.queries[i], &mut self.finder) {
            return Err(self
                .place
                .duplicate(&self.queries[i], Some(&self.origins[i]), d));
        }
        Ok(())
    }
}

/// Pieces kept in arrival order with their marks, to be taken in later (pieces made in
/// parallel, then handed to the real sink in order).
impl<V> PieceSink<V> for Vec<(Rows<V>, u64)> {
    fn piece(&mut self, piece: Rows<V>, mark: u64) -> Result<()> {
        self.push((piece, mark));
        Ok(())
    }
}

/// Rows that arrive one at a time (a JSONL line, an iterable's item, an Arrow row) gathered into
/// pieces, consecutive rows of one query, for a [`PieceSink`]: one sink call per piece
/// instead of one per row. `flush` at the end, and where marks stop counting on by one
/// (a blank line), since the rows of a piece are located from its first mark.
pub(crate) struct RowPieces<V> {
    piece: Option<(Rows<V>, u64)>,
}

impl<V: Copy> Default for RowPieces<V> {
    fn default() -> Self {
        RowPieces { piece: None }
    }
}

impl<V: Copy> RowPieces<V> {
    /// One row, at `mark`.
    pub(crate) fn push(
        &mut self,
        sink: &mut dyn PieceSink<V>,
        qid: &[u8],
        doc: &[u8],
        value: V,
        mark: u64,
    ) -> Result<()> {
        if !matches!(&self.piece, Some((p, _)) if *p.qid == *qid) {
            self.flush(sink)?;
            self.piece = Some((Rows::new(qid), mark));
        }
        if let Some((p, _)) = &mut self.piece {
            p.push(doc, value)?;
        }
        Ok(())
    }

    /// Hand the piece being gathered, if any, to `sink`.
    pub(crate) fn flush(&mut self, sink: &mut dyn PieceSink<V>) -> Result<()> {
        match self.piece.take() {
            Some((p, mark)) => sink.piece(p, mark),
            None => Ok(()),
        }
    }
}

/// The ids of the queries taken so far: the one place where "each query once" is kept
/// ([`Sequence`]; fusion's merge of several files).
#[derive(Default)]
pub(crate) struct SeenIds(FxHashSet<Box<[u8]>>);

impl SeenIds {
    pub(crate) fn contains(&self, id: &[u8]) -> bool {
        self.0.contains(id)
    }

    /// Note `id` as taken (callers check [`SeenIds::contains`] first).
    pub(crate) fn insert(&mut self, id: &[u8]) {
        self.0.insert(id.into());
    }
}

/// Takes queries that come one after another, each once: consecutive pieces of a query
/// are joined, and a query that comes back after another is refused.
pub(crate) struct Sequence {
    pub(crate) place: Place,
    /// What to do about a query that comes back, for its message.
    hint: &'static str,
    seen: SeenIds,
    current: Option<(Rows<f64>, Origins)>,
    finder: RepeatFinder,
}

/// A query of a [`Sequence`] with where its documents came from.
pub(crate) type Arrived = (Rows<f64>, Origins);

impl Sequence {
    pub(crate) fn new(place: Place, hint: &'static str) -> Sequence {
        Sequence {
            place,
            hint,
            seen: SeenIds::default(),
            current: None,
            finder: RepeatFinder::default(),
        }
    }

    /// Whether query `qid` came before and is over (a piece of it would be refused).
    pub(crate) fn is_over(&self, qid: &[u8]) -> bool {
        match &self.current {
            Some((c, _)) if *c.qid == *qid => false,
            _ => self.seen.contains(qid),
        }
    }

    /// A piece at `mark`; returns the query it completes (the previous one) if it
    /// starts a new query.
    pub(crate) fn piece(&mut self, piece: Rows<f64>, mark: u64) -> Result<Option<Arrived>> {
        self.place.check_ids(&piece, mark)?;
        self.place.check_values(&piece, mark)?;
        if let Some((c, o)) = &mut self.current {
            if c.qid == piece.qid {
                o.push(c.len(), mark);
                c.append(piece)?;
                if let Some(d) = o.early_repeat(c, &mut self.finder) {
                    return Err(self.place.duplicate(c, Some(o), d));
                }
                return Ok(None);
            }
        }
        if self.seen.contains(&piece.qid) {
            return Err(self.again(&piece.qid, mark));
        }
        self.seen.insert(&piece.qid);
        let mut origins = Origins::default();
        origins.push(0, mark);
        Ok(self.current.replace((piece, origins)))
    }

    /// A whole query (from a producer that hands over whole queries): refused if a
    /// query with its id came before, even just before.
    pub(crate) fn whole(&mut self, q: Rows<f64>, mark: u64) -> Result<Option<Arrived>> {
        if self.seen.contains(&q.qid) {
            return Err(self.again(&q.qid, mark));
        }
        self.piece(q, mark)
    }

    fn again(&self, qid: &[u8], mark: u64) -> Error {
        let located = self.place.unit != Unit::None;
        Error::Format {
            location: self.place.at(located.then_some(mark)),
            message: format!(
                "query '{}' appears again after other queries; {}",
                show(qid),
                self.hint
            ),
        }
    }

    /// The last query, once the input is over.
    pub(crate) fn finish(&mut self) -> Option<Arrived> {
        self.current.take()
    }
}

/// A float label that is a whole number within 64 bits, as that integer.
pub fn whole_label(f: f64) -> Option<i64> {
    // 2^63 is a double: values at or above it (or below -2^63) do not fit
    (f.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f))
        .then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(q: &str, docs: &[(&str, f64)]) -> Rows<f64> {
        let mut r = Rows::new(q.as_bytes());
        for (d, s) in docs {
            r.push(d.as_bytes(), *s).unwrap();
        }
        r
    }

    #[test]
    fn grouper_joins_pieces_and_locates_duplicates() {
        let mut g = Grouper::new(Place::new("run.txt", Unit::Line));
        g.piece(piece("q2", &[("a", 1.0), ("b", 0.5)]), 1).unwrap();
        g.piece(piece("q1", &[("a", 1.0)]), 3).unwrap();
        g.piece(piece("q2", &[("c", 1.0), ("a", 0.1)]), 7).unwrap();
        let (qs, origins, place) = g.finish();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].id(), b"q2");
        let docs: Vec<&[u8]> = qs[0].docs.iter().collect();
        assert_eq!(docs, [&b"a"[..], b"b", b"c", b"a"]);
        let dup = find_duplicate(&qs[0].docs, &mut RepeatFinder::default()).unwrap();
        assert_eq!(dup, (0, 3));
        let e = place.duplicate(&qs[0], Some(&origins[0]), dup).to_string();
        assert_eq!(
            e,
            "run.txt:8: document 'a' appears twice for query 'q2' (first at line 1)"
        );
    }

    #[test]
    fn repeated_lines_are_refused_while_the_query_grows() {
        // the same line again and again: refused at the first check, not at the end
        let mut g = Grouper::new(Place::new("yes", Unit::Line));
        let mut refused = None;
        for line in 1..=(FIRST_CHECK as u64 * 4) {
            if let Err(e) = g.piece(piece("q", &[("d", 1.0)]), line) {
                refused = Some((line, e.to_string()));
                break;
            }
        }
        let (line, e) = refused.expect("refused before the end");
        assert_eq!(line, FIRST_CHECK as u64);
        assert_eq!(
            e,
            "yes:2: document 'd' appears twice for query 'q' (first at line 1)"
        );
        let mut s = Sequence::new(Place::new("yes", Unit::Line), "");
        let mut refused = None;
        for line in 1..=(FIRST_CHECK as u64 * 4) {
            if s.piece(piece("q", &[("d", 1.0)]), line).is_err() {
                refused = Some(line);
                break;
            }
        }
        assert_eq!(refused, Some(FIRST_CHECK as u64));
    }

    #[test]
    fn ids_that_cannot_round_trip_are_refused_from_other_sources() {
        let refused = |q: &str, d: &str| {
            let mut g: Grouper<f64> = Grouper::new(Place::new("run", Unit::Row));
            g.add(q.as_bytes(), d.as_bytes(), 1.0)
                .unwrap_err()
                .to_string()
        };
        assert!(refused("", "d").contains("query id '' is empty"));
        assert!(refused("q 1", "d").contains("query id 'q 1' holds whitespace"));
        assert!(refused("#q", "d").contains("starts with '#'"));
        assert!(refused("q", "a\nb").starts_with("run, row 0: document id 'a\\nb' of query"));
        assert!(refused("q", "").contains("is empty"));
        assert!(refused("q", "a\0").contains("NUL"));
        // a TREC file cannot produce them: its ids are not checked again
        let mut g: Grouper<f64> = Grouper::new(Place::new("f", Unit::Line));
        g.piece(piece("q", &[("d", 1.0)]), 1).unwrap();
        // non-UTF-8 bytes are fine: ids are bytes
        let mut g: Grouper<f64> = Grouper::new(Place::new("run", Unit::Row));
        g.add(b"q\xff", b"\xfe", 1.0).unwrap();
    }

    #[test]
    fn origins_extend_consecutive_pieces() {
        let mut o = Origins::default();
        o.push(0, 10);
        o.push(2, 12); // continues
        o.push(3, 20);
        assert_eq!(o.pieces.len(), 2);
        assert_eq!(o.mark(1), Some(11));
        assert_eq!(o.mark(2), Some(12));
        assert_eq!(o.mark(4), Some(21));
    }

    #[test]
    fn sequence_refuses_a_query_that_comes_back() {
        let mut s = Sequence::new(Place::new("r", Unit::Line), "sort it");
        assert!(s.piece(piece("q1", &[("a", 1.0)]), 1).unwrap().is_none());
        assert!(s.piece(piece("q1", &[("b", 1.0)]), 2).unwrap().is_none());
        let (done, _) = s.piece(piece("q2", &[("a", 1.0)]), 3).unwrap().unwrap();
        assert_eq!(done.len(), 2);
        assert!(s.is_over(b"q1") && !s.is_over(b"q2"));
        let e = s.piece(piece("q1", &[("c", 1.0)]), 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "r:4: query 'q1' appears again after other queries; sort it"
        );
    }

    #[test]
    fn nan_is_refused_where_it_comes() {
        let mut g: Grouper<f64> = Grouper::new(Place::new("run", Unit::Row));
        g.add(b"q", b"a", 1.0).unwrap();
        let e = g.add(b"q", b"b", f64::NAN).unwrap_err().to_string();
        assert_eq!(
            e,
            "run, row 1: score of document 'b' for query 'q' is NaN; a ranking needs \
             comparable scores"
        );
        let mut s = Sequence::new(Place::new("f", Unit::Line), "");
        let e = s
            .piece(piece("q", &[("a", 1.0), ("b", f64::NAN)]), 5)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f:6: score of document 'b'"), "{e}");
    }
}
