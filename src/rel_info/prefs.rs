//! Preference judgments (`-R prefs`: `qid jg jsg docno level`; `-R qrels_prefs`: a
//! qrels file read as preferences, its second column the judgment group) and the
//! `prefs_*` measures computed from them (trec_eval's `m_prefs_*.c`).
//!
//! Within a judgment group (one user's consistent judgments) and sub-group, a document
//! with a higher level is preferred to one with a lower level; level 0 means
//! non-relevant, above 0 relevant. A ranking fulfils "a over b" when it ranks a above
//! b; a preference between a retrieved and an unretrieved document is "implied"
//! (fulfilled when the retrieved one is preferred), one between two unretrieved
//! documents is counted as failed by the plain measures, ignored by `*_imp` and `*_ret`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::pref_counts::{self, Entry, Group, QueryCounts};
use crate::error::{show, Error, Result};
use crate::evaluate::Options;
use crate::measure::{Family, MeasureSet};
use crate::results::{Results, Row};
use crate::run::{descending_key, Run, RunQuery};
use crate::trec::lines::{number, split_lines, Layout, Line};

/// One preference line: group and sub-group as indexes into the query's sorted names,
/// the document as an index into its sorted judged documents.
#[derive(Clone, Copy, Debug)]
struct Pref {
    group: u32,
    sub: u32,
    doc: u32,
    level: f64,
}

/// The preferences of one query.
#[derive(Clone, Debug)]
pub struct PrefsQuery {
    id: Box<[u8]>,
    /// Judgment group ids, sorted (byte order).
    groups: Vec<Box<[u8]>>,
    /// The judged documents, sorted (byte order).
    docs: Vec<Box<[u8]>>,
    prefs: Vec<Pref>,
}

impl PrefsQuery {
    /// The query id.
    pub fn id(&self) -> &[u8] {
        &self.id
    }

    /// Number of judgment groups.
    pub fn num_groups(&self) -> usize {
        self.groups.len()
    }

    /// Number of documents judged in any group.
    pub fn num_judged(&self) -> usize {
        self.docs.len()
    }
}

/// Preference judgments for a set of queries, ordered by query id (byte order).
#[derive(Clone, Debug, Default)]
pub struct Prefs {
    queries: Vec<PrefsQuery>,
}

/// The columns of a preferences file.
const PREFS: Layout = Layout {
    what: "qid jg jsg docno level",
    comments: true,
};

/// The columns of a qrels file read as preferences.
const QRELS_PREFS: Layout = Layout {
    what: "qid jg docno level",
    comments: true,
};

impl Prefs {
    /// Read a preferences file (`qid jg jsg docno level`, trec_eval's `-R prefs`).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Prefs> {
        let (data, source) = crate::trec::lines::read(path.as_ref())?;
        Prefs::from_bytes(&data, &source)
    }

    /// Parse preferences text; `source` names it in errors.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<Prefs> {
        let lines = split_lines::<5>(data, source, &PREFS)?;
        Prefs::build(lines.iter().map(|l| (l, l.fields)), source)
    }

    /// Read a qrels file as preferences (`qid jg docno level`, trec_eval's
    /// `-R qrels_prefs`): the second column names the judgment group, each group has
    /// one sub-group.
    pub fn from_qrels_file(path: impl AsRef<Path>) -> Result<Prefs> {
        let (data, source) = crate::trec::lines::read(path.as_ref())?;
        Prefs::from_qrels_bytes(&data, &source)
    }

    /// Parse qrels text as preferences; `source` names it in errors.
    pub fn from_qrels_bytes(data: &[u8], source: &str) -> Result<Prefs> {
        let lines = split_lines::<4>(data, source, &QRELS_PREFS)?;
        let one_sub: &[u8] = b"0";
        Prefs::build(
            lines.iter().map(|l| {
                let [q, g, d, v] = l.fields;
                (l, [q, g, one_sub, d, v])
            }),
            source,
        )
    }

    /// The queries, in id order.
    pub fn queries(&self) -> &[PrefsQuery] {
        &self.queries
    }

    fn build<'a, const N: usize>(
        lines: impl Iterator<Item = (&'a Line<'a, N>, [&'a [u8]; 5])>,
        source: &str,
    ) -> Result<Prefs> {
        // query -> lines (number, group, sub-group, doc, level)
        type Rows<'a> = Vec<(u64, &'a [u8], &'a [u8], &'a [u8], f64)>;
        let mut by_query: BTreeMap<&'a [u8], Rows<'a>> = BTreeMap::new();
        for (line, [q, g, s, d, v]) in lines {
            let level = number(v, "level", source, line.number)?;
            // -0 is 0 (C compares them equal)
            let level = if level == 0.0 { 0.0 } else { level };
            by_query
                .entry(q)
                .or_default()
                .push((line.number, g, s, d, level));
        }
        let queries = by_query
            .into_iter()
            .map(|(qid, mut rows)| {
                // a document judged twice in one sub-group is an error (trec_eval would
                // count its preferences twice, or stop on a "different rel_level")
                rows.sort_by(|a, b| (a.1, a.2, a.3, a.0).cmp(&(b.1, b.2, b.3, b.0)));
                if let Some(w) = rows
                    .windows(2)
                    .find(|w| (w[0].1, w[0].2, w[0].3) == (w[1].1, w[1].2, w[1].3))
                {
                    return Err(Error::DuplicateEntry {
                        location: crate::error::Location::new(
                            source,
                            w[1].0,
                            crate::error::Unit::Line,
                        ),
                        query: show(qid),
                        doc: show(w[1].3),
                        first: format!(
                            ", first at line {} (judgment group '{}', sub-group '{}')",
                            w[0].0,
                            show(w[1].1),
                            show(w[1].2)
                        ),
                    });
                }
                let sorted = |mut v: Vec<&'a [u8]>| {
                    v.sort_unstable();
                    v.dedup();
                    v
                };
                let groups = sorted(rows.iter().map(|r| r.1).collect());
                let subs = sorted(rows.iter().map(|r| r.2).collect());
                let docs = sorted(rows.iter().map(|r| r.3).collect());
                let at = |v: &[&[u8]], x: &[u8]| v.binary_search(&x).unwrap_or(0) as u32;
                let prefs = rows
                    .iter()
                    .map(|r| Pref {
                        group: at(&groups, r.1),
                        sub: at(&subs, r.2),
                        doc: at(&docs, r.3),
                        level: r.4,
                    })
                    .collect();
                let owned = |v: Vec<&[u8]>| v.into_iter().map(Box::from).collect();
                Ok(PrefsQuery {
                    id: qid.into(),
                    groups: owned(groups),
                    docs: owned(docs),
                    prefs,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Prefs { queries })
    }

    /// Evaluate a run: the `prefs_*` measures (and runid, num_q) per query, over the
    /// queries with preferences; `options` as in trec_eval (`max_docs`, `complete`; the
    /// relevance level and `judged_only` do not apply to preferences).
    pub fn evaluate(
        &self,
        run: &Run,
        measures: &MeasureSet,
        options: &Options,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        measures.check_judgments(crate::measure::JudgmentKind::Prefs)?;
        let pairs = super::pair_queries(
            self.queries.iter().map(|q| (q.id(), q)),
            run,
            options.complete,
        )?;
        let want_pairs = measures.measures().iter().any(|m| {
            matches!(
                m.family,
                Family::PrefsPair | Family::PrefsPairRet | Family::PrefsPairImp
            )
        });
        let rows = crate::parallel::with_threads(options.n_threads, || {
            crate::parallel::map_with(&pairs, Vec::new, |order, &(q, rq)| {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(Error::Interrupted);
                }
                let counts = q.counts(rq, options.max_docs, want_pairs, order)?;
                let values = (measures.measures().iter())
                    .map(|m| value(m.family, &counts).map_err(|g| q.undefined(m.family, g)))
                    .collect::<Result<_>>()?;
                Ok(Row {
                    values,
                    relstring: None,
                })
            })
        });
        let rows = rows.into_iter().collect::<Result<Vec<Row>>>()?;
        let ids = pairs.iter().map(|(q, _)| q.id.clone()).collect();
        Ok(Results::new(
            measures.clone(),
            ids,
            rows,
            run.runid().to_vec(),
        ))
    }
}

impl PrefsQuery {
    /// The error for a measure whose value trec_eval leaves undefined in group `g`.
    fn undefined(&self, f: Family, g: usize) -> Error {
        Error::Input(format!(
            "query '{}', judgment group '{}': {} keeps the group's first R non-relevant \
             documents of its lowest level, which has fewer than R (levels below 0 make \
             several non-relevant levels); trec_eval reads memory past the group's \
             judgments there and its value is undefined. Leave {} out, or use levels >= 0",
            show(&self.id),
            show(&self.groups[g]),
            f.name(),
            f.name()
        ))
    }

    /// Lay the preferences over the run's ranking of this query: rank by score
    /// descending, ties by document id *ascending* (form_prefs_counts.c's order, unlike
    /// the qrels measures'), keep the top `max_docs`, and number the judged documents.
    fn counts(
        &self,
        rq: Option<&RunQuery>,
        max_docs: Option<u64>,
        want_pairs: bool,
        order: &mut Vec<u32>,
    ) -> Result<QueryCounts> {
        order.clear();
        const NONE: u32 = u32::MAX;
        let mut rank = vec![NONE; self.docs.len()];
        let mut num_ret = 0u32;
        if let Some(rq) = rq {
            order.extend(0..rq.docs.len() as u32);
            order.sort_unstable_by(|&a, &b| {
                let key = |i: u32| descending_key(rq.values[i as usize]);
                key(a)
                    .cmp(&key(b))
                    .then_with(|| rq.docs.get(a as usize).cmp(rq.docs.get(b as usize)))
            });
            if let Some(m) = max_docs {
                order.truncate(m.min(usize::MAX as u64) as usize);
            }
            for &i in order.iter() {
                let doc = rq.docs.get(i as usize);
                if let Ok(d) = self.docs.binary_search_by(|x| (**x).cmp(doc)) {
                    rank[d] = num_ret;
                    num_ret += 1;
                }
            }
        }
        // the unretrieved judged documents follow, in document-id order
        for (next, r) in (num_ret..).zip(rank.iter_mut().filter(|r| **r == NONE)) {
            *r = next;
        }
        let by_rank = {
            let mut v = vec![0u32; rank.len()];
            for (d, &r) in rank.iter().enumerate() {
                v[r as usize] = d as u32;
            }
            v
        };
        let entries = self
            .prefs
            .iter()
            .map(|p| Entry {
                group: p.group,
                sub: p.sub,
                level: p.level,
                rank: rank[p.doc as usize],
            })
            .collect();
        let query = show(&self.id);
        let group = |g: u32| show(&self.groups[g as usize]);
        let doc = |r: u32| show(&self.docs[by_rank[r as usize] as usize]);
        let names = pref_counts::Names {
            query: &query,
            group: &group,
            doc: &doc,
        };
        pref_counts::count(
            entries,
            self.docs.len(),
            num_ret as usize,
            want_pairs,
            &names,
        )
    }
}

/// Which preferences a measure counts: all (an unretrieved pair fails), those with a
/// retrieved document (`_imp`), or those between retrieved documents (`_ret`).
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    All,
    Implied,
    Retrieved,
}

/// Fulfilled and possible preferences of a group in a scope.
fn tally(g: &Group, scope: Scope) -> (u64, u64) {
    match scope {
        Scope::Retrieved => (g.fulfilled_ret, g.possible_ret),
        Scope::Implied => (
            g.fulfilled_ret + g.fulfilled_imp,
            g.possible_ret + g.possible_imp,
        ),
        Scope::All => (
            g.fulfilled_ret + g.fulfilled_imp,
            g.possible_ret + g.possible_imp + g.possible_notoccur,
        ),
    }
}

/// A ratio of two counts, 0 when nothing is possible.
fn ratio(ful: u64, poss: u64) -> f64 {
    if poss > 0 {
        ful as f64 / poss as f64
    } else {
        0.0
    }
}

/// trec_eval's average over judgment groups: 0 unless the sum is positive.
fn per_group(c: &QueryCounts, f: impl Fn(&Group) -> f64) -> f64 {
    group_mean(c.groups.iter().fold(0.0, |s, g| s + f(g)), c.groups.len())
}

/// A sum over `n` groups divided by `n` when positive, else 0 (a NaN sum gives 0).
fn group_mean(sum: f64, n: usize) -> f64 {
    if sum > 0.0 {
        sum / n as f64
    } else {
        0.0
    }
}

/// The average over document pairs (both retrieved; then one retrieved; then, for the
/// plain measure, neither) of the share of the groups' preferences on the pair that
/// the ranking fulfils.
fn pairs(c: &QueryCounts, scope: Scope) -> f64 {
    let Some(p) = &c.pairs else {
        return 0.0;
    };
    let (n, njr) = (c.num_judged, c.num_judged_ret);
    let (mut sum, mut num) = (0.0, 0u64);
    let mut add = |i: usize, j: usize| {
        let (a, b) = (p[i * n + j], p[j * n + i]);
        if a > 0 || b > 0 {
            num += 1;
            sum += f64::from(a) / f64::from(a + b);
        }
    };
    for i in 0..njr {
        for j in i + 1..njr {
            add(i, j);
        }
    }
    if scope != Scope::Retrieved {
        for i in 0..njr {
            for j in njr..n {
                add(i, j);
            }
        }
    }
    if scope == Scope::All {
        for i in njr..n {
            for j in i + 1..n {
                if p[i * n + j] > 0 || p[j * n + i] > 0 {
                    num += 1;
                }
            }
        }
    }
    if num > 0 {
        sum / num as f64
    } else {
        0.0
    }
}

/// `prefs_avgjg_Rnonrel(_ret)`: each group as if it had as many non-relevant documents
/// as relevant ones (R; with `_ret`, both among the retrieved). Err: the group where
/// trec_eval's value is undefined.
fn r_nonrel(c: &QueryCounts, retrieved: bool) -> std::result::Result<f64, usize> {
    let mut sum = 0.0;
    for (i, g) in c.groups.iter().enumerate() {
        let (r, n) = if retrieved {
            (g.num_rel_ret, g.num_nonrel_ret)
        } else {
            (g.num_rel, g.num_nonrel)
        };
        let (ful, poss) = if r >= n {
            // R - N non-relevant documents more, ranked below every relevant one
            let scope = if retrieved {
                Scope::Retrieved
            } else {
                Scope::All
            };
            let (f, p) = tally(g, scope);
            (f + g.num_rel_ret * (r - n), p + g.num_rel * (r - n))
        } else {
            g.recount(c.num_judged_ret, retrieved).ok_or(i)?
        };
        // 0 / 0 is NaN, and so is the query's value: 0 (as in trec_eval)
        sum += ful as f64 / poss as f64;
    }
    Ok(group_mean(sum, c.groups.len()))
}

/// The value of a preference family for one query; Err: the judgment group where
/// trec_eval leaves it undefined.
fn value(f: Family, c: &QueryCounts) -> std::result::Result<f64, usize> {
    use Family::*;
    let total = |scope| {
        c.groups.iter().fold((0, 0), |(a, b), g| {
            let (f, p) = tally(g, scope);
            (a + f, b + p)
        })
    };
    let simple = |scope| {
        let (ful, poss) = total(scope);
        ratio(ful, poss)
    };
    let avg = |scope| {
        per_group(c, |g| {
            let (ful, poss) = tally(g, scope);
            ratio(ful, poss)
        })
    };
    Ok(match f {
        PrefsAvgjgRnonrel => return r_nonrel(c, false),
        PrefsAvgjgRnonrelRet => return r_nonrel(c, true),
        PrefsNumPrefsPoss => total(Scope::All).1 as f64,
        PrefsNumPrefsFul => total(Scope::All).0 as f64,
        PrefsNumPrefsFulRet => total(Scope::Retrieved).0 as f64,
        PrefsSimp => simple(Scope::All),
        PrefsSimpRet => simple(Scope::Retrieved),
        PrefsSimpImp => simple(Scope::Implied),
        PrefsPair => pairs(c, Scope::All),
        PrefsPairRet => pairs(c, Scope::Retrieved),
        PrefsPairImp => pairs(c, Scope::Implied),
        PrefsAvgjg => avg(Scope::All),
        PrefsAvgjgRet => avg(Scope::Retrieved),
        PrefsAvgjgImp => avg(Scope::Implied),
        // runid and num_q (the only others `check_judgments` lets through)
        _ => 0.0,
    })
}
