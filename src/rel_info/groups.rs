//! Qrels in judgment groups (`-R qrels_jg`: `qid jg docno rel`, the second column
//! naming whose judgments a line holds) and the `*_avgjg` measures: each group's
//! judgments are a qrels of their own, the measure (map, P, Rprec_mult) is computed
//! against each group that judged the query, and the values are averaged over those
//! groups (trec_eval's `m_map_avgjg.c`, `m_P_avgjg.c`, `m_Rprec_mult_avgjg.c`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{show, Error, Location, Result, Unit};
use crate::evaluate::{Evaluator, Options, Scratch};
use crate::measure::{Family, JudgmentKind as Needs, Measure, MeasureSet};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::results::{Results, Row};
use crate::run::Run;
use crate::trec::lines::{split_lines, whole, Layout};

/// Several users' qrels: one [`Qrels`] per judgment group (a group id names one user's
/// judgments within each query).
#[derive(Clone, Debug)]
pub struct JudgmentGroups {
    /// Group id and its judgments, by id (byte order). A query whose labels in a group
    /// are all negative (pooled, not judged) is left out of that group's qrels: every
    /// value of the group is then 0, but it still counts in the query's average.
    groups: Vec<(Box<[u8]>, Qrels)>,
    /// Every query id, sorted, with the number of groups that judge it.
    queries: Vec<(Box<[u8]>, u32)>,
}

const QRELS_JG: Layout = Layout {
    what: "qid jg docno rel",
    comments: true,
};

impl JudgmentGroups {
    /// Read a qrels file whose second column is the judgment group.
    pub fn from_file(path: impl AsRef<Path>) -> Result<JudgmentGroups> {
        let (data, source) = crate::trec::lines::read(path.as_ref())?;
        JudgmentGroups::from_bytes(&data, &source)
    }

    /// Parse such qrels text; `source` names it in errors.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<JudgmentGroups> {
        let lines = split_lines::<4>(data, source, &QRELS_JG)?;
        // group -> (query, doc, label, line), to find a document judged twice by a group
        type Judged<'a> = Vec<(&'a [u8], &'a [u8], i64, u64)>;
        let mut by_group: BTreeMap<&[u8], Judged> = BTreeMap::new();
        for l in &lines {
            let [q, g, d, v] = l.fields;
            let label = whole(v, source, l.number)?;
            by_group.entry(g).or_default().push((q, d, label, l.number));
        }
        let mut groups = Vec::with_capacity(by_group.len());
        let mut judged: BTreeMap<&[u8], u32> = BTreeMap::new();
        for (g, mut rows) in by_group {
            rows.sort_by(|a, b| (a.0, a.1, a.3).cmp(&(b.0, b.1, b.3)));
            if let Some(w) = rows
                .windows(2)
                .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
            {
                return Err(Error::DuplicateEntry {
                    location: Location::new(source, w[1].3, Unit::Line),
                    query: show(w[1].0),
                    doc: show(w[1].1),
                    first: format!(", first at line {} (judgment group '{}')", w[0].3, show(g)),
                });
            }
            let mut b = QrelsBuilder::default();
            for query in rows.chunk_by(|a, b| a.0 == b.0) {
                *judged.entry(query[0].0).or_default() += 1;
                if query.iter().any(|r| r.2 >= 0) {
                    for (q, d, label, _) in query {
                        b.add(q, d, *label)?;
                    }
                }
            }
            groups.push((Box::from(g), b.build()?));
        }
        let queries = judged.into_iter().map(|(q, n)| (q.into(), n)).collect();
        Ok(JudgmentGroups { groups, queries })
    }

    /// The group ids, in byte order.
    pub fn group_ids(&self) -> impl Iterator<Item = &[u8]> {
        self.groups.iter().map(|(g, _)| &**g)
    }

    /// The judgments of group `id`.
    pub fn group(&self, id: &[u8]) -> Option<&Qrels> {
        self.groups.iter().find(|(g, _)| **g == *id).map(|(_, q)| q)
    }

    /// Evaluate a run: each `*_avgjg` measure (and runid, num_q) per query, the mean
    /// over the groups that judged the query of the plain measure against each group.
    pub fn evaluate(
        &self,
        run: &Run,
        measures: &MeasureSet,
        options: &Options,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        measures.check_judgments(Needs::Groups)?;
        // the plain measures, column for column (map_avgjg -> map, ...)
        let mut plain = MeasureSet::default();
        for m in measures.measures() {
            plain.add(Measure {
                family: match m.family {
                    Family::MapAvgjg => Family::Map,
                    Family::PAvgjg => Family::P,
                    Family::RprecMultAvgjg => Family::RprecMult,
                    f => f,
                },
                ..m.clone()
            });
        }
        let evaluators = (self.groups.iter())
            .filter(|(_, q)| !q.is_empty())
            .map(|(_, q)| Evaluator::new(q.clone(), plain.clone(), options.clone()))
            .collect::<Result<Vec<_>>>()?;
        let pairs = super::pair_queries(
            self.queries.iter().map(|q| (&*q.0, q)),
            run,
            options.complete,
        )?;
        let width: usize = measures.measures().iter().map(Measure::width).sum();
        let rows = crate::parallel::with_threads(options.n_threads, || {
            crate::parallel::map_with(&pairs, Scratch::default, |s, &((qid, n), rq)| {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return None;
                }
                let mut values = vec![0.0; width];
                for ev in &evaluators {
                    if let Some(qq) = ev.qrels().query(qid) {
                        let row = ev.eval_query(qq, rq, s);
                        for (v, x) in values.iter_mut().zip(row.values) {
                            *v += x;
                        }
                    }
                }
                if *n > 1 {
                    for v in &mut values {
                        *v /= f64::from(*n);
                    }
                }
                Some(Row {
                    values,
                    relstring: None,
                })
            })
        });
        let rows = rows
            .into_iter()
            .collect::<Option<Vec<Row>>>()
            .ok_or(Error::Interrupted)?;
        let ids = pairs.iter().map(|((q, _), _)| q.clone()).collect();
        Ok(Results::new(
            measures.clone(),
            ids,
            rows,
            run.runid().to_vec(),
        ))
    }
}
