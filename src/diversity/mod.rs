//! Diversity measures with ndeval's exact conventions (TREC Web track 2009-2014,
//! `ndeval.c` version 4.5, the program behind pyndeval and ir_measures' diversity
//! measures): alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP, nNRBP, AP-IA
//! (ndeval's MAP-IA per topic), P-IA@k and subtopic recall@k.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`SubtopicQrels`] (`topic subtopic docno rel`, read by `trec/lines.rs`), [`Options`], [`evaluate`] (rayon over queries), [`DiversityResults`] |
//! | `names.rs` | the measure names (ir_measures' and ndeval's) and their options |
//! | `kernel.rs` | one query: the curves of a ranking, the greedy ideal ranking |
//! | `ndeval.rs` | `irmetrics ndeval`: ndeval's command line, reading rules and CSV |
//!
//! ndeval's conventions, kept: a label at least the relevance level (default 1) makes
//! a document relevant to the line's subtopic; judged non-relevant and unjudged
//! documents count alike (nothing); subtopics no document is relevant to are ignored
//! (a topic with none scores 0, and NaN for nNRBP, as ndeval's 0/0); the ideal ranking
//! is ndeval's greedy one (ties to the greater document id); the "ideal ideal"
//! normalization of alpha-DCG and ERR-IA leaves the value at cut-off 1 unnormalized;
//! nERR-IA is 0 where alpha-DCG is 0; means are over the topics both in the judgments
//! and the run (`complete`: over every judged topic, the missing ones 0).

mod kernel;
mod names;
pub mod ndeval;

pub use names::{DiversityMeasure, Kind, NDEVAL_COLUMNS};

use std::path::Path;

use crate::error::{show, Error, Location, Result, Unit};
use crate::run::Run;
use crate::trec::lines::{split_lines, whole, Layout};
use kernel::{curves, ideal_order, Curves, Judgments};

/// One topic's subtopic judgments.
#[derive(Clone, Debug)]
pub struct SubtopicQuery {
    qid: Box<[u8]>,
    /// Subtopic ids in ndeval's order (numbers by value, then other ids by bytes).
    subtopics: Vec<Box<[u8]>>,
    /// Judged documents, ascending.
    docs: Vec<Box<[u8]>>,
    /// `judgments[starts[d]..starts[d + 1]]`: document `d`'s (subtopic index, label),
    /// by subtopic index.
    starts: Vec<u32>,
    judgments: Vec<(u32, i64)>,
}

impl SubtopicQuery {
    /// The topic id.
    pub fn id(&self) -> &[u8] {
        &self.qid
    }

    /// The subtopic ids, in ndeval's order.
    pub fn subtopics(&self) -> &[Box<[u8]>] {
        &self.subtopics
    }

    /// The judged documents (ascending) with their (subtopic id, label) judgments.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], Vec<(&[u8], i64)>)> + '_ {
        self.docs.iter().enumerate().map(|(d, doc)| {
            let js = self.doc_judgments(d);
            (
                &doc[..],
                js.iter()
                    .map(|&(s, l)| (&self.subtopics[s as usize][..], l))
                    .collect(),
            )
        })
    }

    fn doc_judgments(&self, d: usize) -> &[(u32, i64)] {
        &self.judgments[self.starts[d] as usize..self.starts[d + 1] as usize]
    }

    fn find(&self, doc: &[u8]) -> Option<usize> {
        self.docs.binary_search_by(|d| d[..].cmp(doc)).ok()
    }
}

/// Subtopic judgments (`topic subtopic docno rel`, as ndeval reads them): for each
/// topic, document -> per-subtopic labels.
#[derive(Clone, Debug, Default)]
pub struct SubtopicQrels {
    /// By topic id (bytes).
    queries: Vec<SubtopicQuery>,
}

const SUBTOPIC_QRELS: Layout = Layout {
    what: "topic subtopic docno rel",
    comments: false,
};

/// A row of judgments before grouping: topic, subtopic, document, label and where it
/// came from (a line or row number).
type RawRow<'a> = (&'a [u8], &'a [u8], &'a [u8], i64, u64);

/// ndeval's subtopic order: numbers by value, before other ids in byte order.
fn subtopic_key(s: &[u8]) -> (bool, u128, &[u8]) {
    let n = (!s.is_empty() && s.len() <= 30 && s.iter().all(u8::is_ascii_digit))
        .then(|| std::str::from_utf8(s).ok()?.parse::<u128>().ok())
        .flatten();
    (n.is_none(), n.unwrap_or(0), s)
}

impl SubtopicQrels {
    /// Read a subtopic qrels file (gzip and `-` as for runs).
    pub fn from_file(path: impl AsRef<Path>) -> Result<SubtopicQrels> {
        let (data, source) = crate::trec::lines::read(path.as_ref())?;
        SubtopicQrels::from_bytes(&data, &source)
    }

    /// Parse subtopic qrels text; `source` names it in errors.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<SubtopicQrels> {
        let lines = split_lines::<4>(data, source, &SUBTOPIC_QRELS)?;
        let mut rows = Vec::with_capacity(lines.len());
        for l in &lines {
            let [q, s, d, v] = l.fields;
            rows.push((q, s, d, whole(v, source, l.number)?, l.number));
        }
        Self::from_raw(rows, source, Unit::Line)
    }

    /// Judgments from `(topic, subtopic, document, label)` rows; a problem names the
    /// row (from 1) of `source`.
    pub fn from_rows<'a>(
        rows: impl IntoIterator<Item = (&'a [u8], &'a [u8], &'a [u8], i64)>,
        source: &str,
    ) -> Result<SubtopicQrels> {
        let rows: Vec<RawRow> = rows
            .into_iter()
            .zip(1..)
            .map(|((q, s, d, v), n)| (q, s, d, v, n))
            .collect();
        for &(q, s, d, _, n) in &rows {
            for (id, what) in [(q, "topic"), (s, "subtopic"), (d, "document")] {
                if let Some(p) = crate::intake::id_problem(id) {
                    return Err(Error::Format {
                        location: Location::new(source, n, Unit::Row),
                        message: format!("{what} id '{}' {p}", show(id)),
                    });
                }
            }
        }
        Self::from_raw(rows, source, Unit::Row)
    }

    fn from_raw(mut rows: Vec<RawRow>, source: &str, unit: Unit) -> Result<SubtopicQrels> {
        if rows.is_empty() {
            return Err(Error::Input(format!("{source} holds no subtopic judgment")));
        }
        rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut queries = Vec::new();
        for topic in rows.chunk_by(|a, b| a.0 == b.0) {
            // the distinct subtopics by bytes (cheap), then in ndeval's order
            let mut by_bytes: Vec<&[u8]> = topic.iter().map(|r| r.1).collect();
            by_bytes.sort_unstable();
            by_bytes.dedup();
            let mut subs = by_bytes.clone();
            subs.sort_by_key(|s| subtopic_key(s));
            let mut index = vec![0u32; subs.len()];
            for (i, s) in subs.iter().enumerate() {
                if let Ok(b) = by_bytes.binary_search(s) {
                    index[b] = i as u32;
                }
            }
            let mut judged: Vec<(&[u8], u32, i64, u64)> = topic
                .iter()
                .map(|r| {
                    let b = by_bytes.binary_search(&r.1).unwrap_or(0);
                    (r.2, index[b], r.3, r.4)
                })
                .collect();
            judged.sort_unstable_by(|a, b| (a.0, a.1, a.3).cmp(&(b.0, b.1, b.3)));
            if let Some(w) = judged
                .windows(2)
                .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            {
                return Err(Error::DuplicateEntry {
                    location: Location::new(source, w[1].3, unit),
                    query: show(topic[0].0),
                    doc: show(w[1].0),
                    first: format!(
                        " with subtopic '{}', first at {} {}",
                        show(subs[w[1].1 as usize]),
                        unit.word(),
                        w[0].3
                    ),
                });
            }
            let mut q = SubtopicQuery {
                qid: topic[0].0.into(),
                subtopics: subs.iter().map(|&s| Box::from(s)).collect(),
                docs: Vec::new(),
                starts: vec![0],
                judgments: Vec::with_capacity(judged.len()),
            };
            for doc in judged.chunk_by(|a, b| a.0 == b.0) {
                q.docs.push(doc[0].0.into());
                q.judgments.extend(doc.iter().map(|r| (r.1, r.2)));
                q.starts.push(q.judgments.len() as u32);
            }
            queries.push(q);
        }
        Ok(SubtopicQrels { queries })
    }

    /// The topics, by id (bytes).
    pub fn queries(&self) -> &[SubtopicQuery] {
        &self.queries
    }

    /// One topic's judgments.
    pub fn query(&self, qid: &[u8]) -> Option<&SubtopicQuery> {
        let i = self.queries.binary_search_by(|q| q.qid[..].cmp(qid)).ok()?;
        Some(&self.queries[i])
    }

    /// Number of topics.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// True when there is no topic.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }
}

pub use crate::run::Ties;

/// The evaluation's settings (ndeval's command line options, ir_measures' defaults);
/// options in a measure's name override them for that measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Redundancy intolerance (ndeval's `-alpha`, default 0.5).
    pub alpha: f64,
    /// Patience for NRBP (`-beta`, default 0.5).
    pub beta: f64,
    /// A label at least this is relevant (default 1, as ndeval's binary judgments).
    pub relevance_level: i64,
    /// Leave out documents not judged for the query (ir_measures' `judged_only`).
    pub judged_only: bool,
    /// Average over every judged topic, a topic without results scoring 0 (`-c`).
    pub complete: bool,
    /// Read only the first `max_docs` documents of each ranking (`-M`).
    pub max_docs: Option<usize>,
    /// The order of tied scores.
    pub ties: Ties,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            alpha: 0.5,
            beta: 0.5,
            relevance_level: 1,
            judged_only: false,
            complete: false,
            max_docs: None,
            ties: Ties::DocDescending,
        }
    }
}

impl Options {
    fn check(&self) -> Result<()> {
        for (x, what) in [(self.alpha, "alpha"), (self.beta, "beta")] {
            if !(0.0..=1.0).contains(&x) {
                return Err(Error::Option(format!(
                    "{what} must be a number from 0 to 1 (as ndeval requires), got {x}"
                )));
            }
        }
        if self.max_docs == Some(0) {
            return Err(Error::Option("max_docs must be at least 1".into()));
        }
        Ok(())
    }
}

/// The per-topic values and their means.
#[derive(Clone, Debug)]
pub struct DiversityResults {
    names: Vec<String>,
    query_ids: Vec<Box<[u8]>>,
    /// Row-major: topic `q`, measure `m` at `q * names.len() + m`.
    values: Vec<f64>,
    means: Vec<f64>,
}

impl DiversityResults {
    /// The measures, as named.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The topics evaluated, by id (bytes).
    pub fn query_ids(&self) -> &[Box<[u8]>] {
        &self.query_ids
    }

    /// Topic `q`'s value of measure `m`.
    pub fn value(&self, q: usize, m: usize) -> f64 {
        self.values[q * self.names.len() + m]
    }

    /// The mean of measure `m` over the topics (ndeval's `amean`).
    pub fn mean(&self, m: usize) -> f64 {
        self.means[m]
    }

    /// The value of the measure named `name` (as given) for topic `qid`.
    pub fn get(&self, qid: &[u8], name: &str) -> Option<f64> {
        let m = self.names.iter().position(|n| n == name)?;
        let q = self.query_ids.iter().position(|x| &x[..] == qid)?;
        Some(self.value(q, m))
    }
}

/// The names of ndeval's 21 columns in ir_measures' spelling (what [`evaluate`]
/// computes when no measure is named).
pub fn default_names() -> Vec<String> {
    NDEVAL_COLUMNS
        .iter()
        .map(|c| {
            let (base, k) = c.split_once('@').unwrap_or((c, ""));
            let base = match base {
                "ERR-IA" => "ERR_IA",
                "nERR-IA" => "nERR_IA",
                "alpha-DCG" => "alpha_DCG",
                "alpha-nDCG" => "alpha_nDCG",
                "MAP-IA" => "AP_IA",
                "P-IA" => "P_IA",
                "strec" => "StRecall",
                other => other,
            };
            if k.is_empty() {
                base.to_string()
            } else {
                format!("{base}@{k}")
            }
        })
        .collect()
}

/// Measures that share their judgments view and parameters: computed together.
struct Group {
    alpha: f64,
    beta: f64,
    rel: i64,
    judged_only: bool,
    depth: usize,
    /// (column, measure)
    members: Vec<(usize, DiversityMeasure)>,
}

fn groups(measures: &[DiversityMeasure], opts: &Options) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (col, m) in measures.iter().enumerate() {
        let key = (
            m.alpha.unwrap_or(opts.alpha),
            m.beta.unwrap_or(opts.beta),
            m.rel.unwrap_or(opts.relevance_level),
            m.judged_only.unwrap_or(opts.judged_only),
        );
        let depth = m.cutoff.unwrap_or(1);
        match out
            .iter_mut()
            .find(|g| (g.alpha, g.beta, g.rel, g.judged_only) == key)
        {
            Some(g) => {
                g.depth = g.depth.max(depth);
                g.members.push((col, m.clone()));
            }
            None => out.push(Group {
                alpha: key.0,
                beta: key.1,
                rel: key.2,
                judged_only: key.3,
                depth,
                members: vec![(col, m.clone())],
            }),
        }
    }
    out
}

/// Evaluate `run` against subtopic judgments: the measures `names` (ir_measures' or
/// ndeval's spellings; none: ndeval's 21 columns), one row per topic in both (with
/// `complete`, per judged topic), in parallel over topics.
pub fn evaluate(
    qrels: &SubtopicQrels,
    run: &Run,
    names: &[&str],
    opts: &Options,
) -> Result<DiversityResults> {
    opts.check()?;
    let names: Vec<String> = if names.is_empty() {
        default_names()
    } else {
        names.iter().map(|s| s.to_string()).collect()
    };
    let measures = names
        .iter()
        .map(|n| DiversityMeasure::parse(n))
        .collect::<Result<Vec<_>>>()?;
    let groups = groups(&measures, opts);
    let topics: Vec<(&SubtopicQuery, Option<&crate::run::RunQuery>)> = qrels
        .queries
        .iter()
        .map(|q| (q, run.query(&q.qid)))
        .filter(|(_, r)| opts.complete || r.is_some())
        .collect();
    if topics.is_empty() {
        return Err(Error::Input(
            "no topic of the subtopic judgments has results in the run (pass \
             complete=True to score them as empty rankings)"
                .into(),
        ));
    }
    let ncols = names.len();
    let rows = crate::parallel::map_with(&topics, Vec::new, |order, &(q, r)| {
        let mut row = vec![0.0; ncols];
        if let Some(r) = r {
            topic_values(q, r, &groups, opts, order, &mut row);
        }
        row
    });
    let n = rows.len() as f64;
    let mut means = vec![0.0; ncols];
    for row in &rows {
        for (s, v) in means.iter_mut().zip(row) {
            *s += v;
        }
    }
    for s in &mut means {
        *s /= n;
    }
    Ok(DiversityResults {
        names,
        query_ids: topics.iter().map(|(q, _)| q.qid.clone()).collect(),
        values: rows.concat(),
        means,
    })
}

/// One topic's values of every group's measures into `row`.
fn topic_values(
    q: &SubtopicQuery,
    r: &crate::run::RunQuery,
    groups: &[Group],
    opts: &Options,
    order: &mut Vec<u32>,
    row: &mut [f64],
) {
    r.ranking(order);
    opts.ties.apply(&r.values, order);
    if let Some(m) = opts.max_docs {
        order.truncate(m);
    }
    // the run's documents as judged documents of the topic (None: not judged)
    let found: Vec<Option<usize>> = order
        .iter()
        .map(|&i| q.find(r.docs.get(i as usize)))
        .collect();
    for g in groups {
        // each judged document's relevant subtopics at this level
        let mut starts = Vec::with_capacity(q.docs.len() + 1);
        let mut subs: Vec<u32> = Vec::new();
        let mut nrel_sub = vec![0u32; q.subtopics.len()];
        starts.push(0);
        for d in 0..q.docs.len() {
            for &(s, label) in q.doc_judgments(d) {
                if label >= g.rel {
                    subs.push(s);
                    nrel_sub[s as usize] += 1;
                }
            }
            starts.push(subs.len());
        }
        let rel_of = |d: usize| &subs[starts[d]..starts[d + 1]];
        let judged = Judgments {
            subtopics: q.subtopics.len(),
            nrel_sub: &nrel_sub,
        };
        let docs: Vec<&[u32]> = (0..q.docs.len()).map(rel_of).collect();
        let ideal_docs = ideal_order(&docs, judged.subtopics, g.alpha);
        let ideal = curves(
            ideal_docs.iter().map(|&d| Some(docs[d as usize])),
            &judged,
            g.depth,
            g.alpha,
            g.beta,
        );
        let ranking = found
            .iter()
            .filter(|f| !g.judged_only || f.is_some())
            .map(|f| f.map(rel_of));
        let c = curves(ranking, &judged, g.depth, g.alpha, g.beta);
        for (col, m) in &g.members {
            row[*col] = value(m, &c, &ideal);
        }
    }
}

/// One measure from the run's curves and the ideal ranking's (ndeval's `renormalize`).
fn value(m: &DiversityMeasure, c: &Curves, ideal: &Curves) -> f64 {
    let i = m.cutoff.unwrap_or(1) - 1;
    match m.kind {
        Kind::AlphaDcg => c.dcg[i],
        Kind::ErrIa => c.err[i],
        Kind::AlphaNdcg if c.dcg[i] != 0.0 => c.dcg[i] / ideal.dcg[i],
        Kind::NerrIa if c.dcg[i] != 0.0 => c.err[i] / ideal.err[i],
        Kind::AlphaNdcg | Kind::NerrIa => 0.0,
        Kind::Nrbp => c.nrbp,
        Kind::Nnrbp => c.nrbp / ideal.nrbp,
        Kind::ApIa => c.map_ia,
        Kind::PIa => c.precision[i],
        Kind::StRecall => c.strec[i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_subtopic_qrels_and_refuses_bad_lines() {
        let q =
            SubtopicQrels::from_bytes(b"1 2 d1 1\n1 10 d1 0\n1 2 d2 1\n2 1 d1 1\n", "q").unwrap();
        assert_eq!(q.len(), 2);
        let t = q.query(b"1").unwrap();
        assert_eq!(
            t.subtopics(),
            &[Box::from(&b"2"[..]), Box::from(&b"10"[..])]
        );
        let docs: Vec<_> = t.iter().collect();
        assert_eq!(docs[0], (&b"d1"[..], vec![(&b"2"[..], 1), (&b"10"[..], 0)]));
        let e = SubtopicQrels::from_bytes(b"1 2 d1 1\n1 2 d1\n", "q.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("q.txt:2: malformed line: expected 4 fields"),
            "{e}"
        );
        let e = SubtopicQrels::from_bytes(b"1 2 d1 1\n1 2 d1 x\n", "q.txt")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("q.txt:2:"), "{e}");
        let e = SubtopicQrels::from_bytes(b"1 2 d1 1\n1 3 d1 1\n1 2 d1 0\n", "q.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("q.txt:3") && e.contains("first at line 1"),
            "{e}"
        );
    }

    #[test]
    fn ndeval_readme_example() {
        // pyndeval's README: qrels a:A, b:B, b:D, c:C; run A, D, E (unjudged), B
        let q = SubtopicQrels::from_bytes(b"0 a A 1\n0 b B 1\n0 b D 1\n0 c C 1\n", "q").unwrap();
        let mut b = Run::builder();
        for (d, s) in [("A", 9.3), ("D", 8.4), ("E", 8.1), ("B", 7.6)] {
            b.add(b"0", d.as_bytes(), s).unwrap();
        }
        let run = b.build().unwrap();
        let res = evaluate(&q, &run, &[], &Options::default()).unwrap();
        // the README prints 4 decimals, truncated
        for (name, want) in [
            ("ERR_IA@5", 0.3933),
            ("nERR_IA@20", 0.8297),
            ("alpha_DCG@5", 0.4052),
            ("alpha_nDCG@20", 0.7868),
            ("NRBP", 0.3906),
            ("nNRBP", 0.8620),
            ("AP_IA", 0.5),
            ("P_IA@5", 0.2),
            ("StRecall@20", 0.6666),
        ] {
            let got = res.get(b"0", name).unwrap();
            assert!((got - want).abs() < 1e-4, "{name}: {got} vs {want}");
        }
    }
}
