//! Measures as data: the families irmetrics computes, their parameters, and one parser
//! for the trec_eval, ir_measures and ranx spellings of their names.
//!
//! A [`Measure`] is a family plus concrete parameters (cut-offs, gains, ...) and an
//! optional relevance level that overrides the evaluation-wide one. One measure can
//! produce several values ("columns"): `P.5,10` gives `P_5` and `P_10`.
//!
//! Where things live:
//! * this file: the value types [`Measure`] and [`Params`], and [`MeasureSet`] (the
//!   ordered, merged list of measures an evaluation computes);
//! * `family.rs`: the catalogue as data: [`Family`] with its names, [`ParamKind`],
//!   defaults, named options, `all`-row statistic ([`crate::stats::Statistic`]) and
//!   definition; trec_eval's nicknames ([`nickname`]); the ir_measures / ranx aliases;
//! * `parse.rs`: the one grammar ([`parse_measure`], `Measure::with_params`) and the
//!   suggestions for unknown names.

mod family;
mod parse;

pub use family::{
    nickname, Domain, Family, JudgmentKind, Param, ParamKind, CAM_MEASURES, CWL_DEPTH, CWL_STATS,
    MAX_EXPONENT, MAX_GAIN,
};
/// The pieces of the grammar that the diversity measures' names share.
pub(crate) use parse::{parse_cutoff, parse_flag, parse_number, parse_rel_option, split_options};
pub use parse::{parse_measure, parse_measure_as};

/// Whose meaning a name takes where the peers give one spelling two meanings. Names
/// are case-insensitive in meaning under every choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Names {
    /// trec_eval's meaning for trec_eval's names (`recall` is `recall_5..1000`), the
    /// peers' for theirs (ranx `precision` and ir_measures `Judged` without a cut-off
    /// are the whole ranking), `ERR@k` with gmax = the largest label of the qrels.
    #[default]
    Irmetrics,
    /// ranx's: `recall` and `hits` without a cut-off are the whole ranking.
    Ranx,
    /// ir_measures': `ERR@k` is gdeval.pl's (gmax = 4).
    IrMeasures,
}

impl Names {
    /// `"irmetrics"` (or `"trec_eval"`), `"ranx"`, `"ir_measures"`.
    pub fn parse(s: &str) -> Result<Names> {
        match s {
            "irmetrics" | "trec_eval" => Ok(Names::Irmetrics),
            "ranx" => Ok(Names::Ranx),
            "ir_measures" => Ok(Names::IrMeasures),
            _ => Err(Error::Option(format!(
                "names must be 'irmetrics' (or 'trec_eval'), 'ranx' or 'ir_measures', got \
                 '{s}'"
            ))),
        }
    }
}

use crate::error::{Error, Result};
use parse::fmt_num;
use std::collections::{HashMap, HashSet};

/// Concrete parameters of one measure.
#[derive(Clone, Debug, PartialEq)]
pub enum Params {
    /// No parameters.
    None,
    /// Sorted, distinct, positive cut-offs; `given`: written in a request (`P.5`,
    /// `P@5`), not the family's defaults (`P`, a nickname).
    Cutoffs {
        /// The cut-offs.
        values: Vec<u64>,
        /// Whether they were written (false for the defaults).
        given: bool,
    },
    /// Sorted, distinct fractions; `given` as for cut-offs.
    Fractions {
        /// The fractions.
        values: Vec<f64>,
        /// Whether they were written (false for the defaults).
        given: bool,
    },
    /// Numbers, in the order given; `text` is how they were written (None = defaults).
    Numbers {
        /// The numbers.
        values: Vec<f64>,
        /// How they were written (None for defaults).
        text: Option<String>,
    },
    /// `name=value` pairs, in the order given; `text` is how they were written.
    Pairs {
        /// The pairs.
        pairs: Vec<(String, f64)>,
        /// How they were written (None for defaults).
        text: Option<String>,
    },
}

/// One requested measure: a family, its parameters and an optional relevance level.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// The family.
    pub family: Family,
    /// Its parameters.
    pub params: Params,
    /// Relevance level for this measure only (`P(rel=2)@5`, `map@100-l2`).
    pub rel_level: Option<i64>,
    /// Named options of families beyond trec_eval (`beta` of `F_cut`, `gmax` of
    /// `err_cut`, `b` of `dcg_jk`), sorted by name; empty means the defaults.
    pub opts: Vec<(String, f64)>,
}

impl Measure {
    /// The family with its default parameters.
    pub fn new(family: Family) -> Measure {
        let d = family.defaults();
        let params = match family.param_kind() {
            ParamKind::None => Params::None,
            ParamKind::Cutoffs => Params::Cutoffs {
                values: d.iter().map(|&v| v as u64).collect(),
                given: false,
            },
            ParamKind::Fractions => Params::Fractions {
                values: d.to_vec(),
                given: false,
            },
            ParamKind::Numbers => Params::Numbers {
                values: d.to_vec(),
                text: None,
            },
            ParamKind::Pairs => Params::Pairs {
                pairs: Vec::new(),
                text: None,
            },
        };
        Measure {
            family,
            params,
            rel_level: None,
            opts: Vec::new(),
        }
    }

    /// The value of a named option, or `default`.
    pub fn opt(&self, name: &str, default: f64) -> f64 {
        self.opts
            .iter()
            .find(|(n, _)| n == name)
            .map_or(default, |(_, v)| *v)
    }

    /// Set family options (`beta=0.5`), checking that the family takes them and that
    /// each value lies in its domain ([`Family::params`]).
    pub fn set_opts(&mut self, opts: Vec<(String, f64)>) -> Result<()> {
        let allowed = self.family.options();
        let mut opts = opts;
        for (n, _) in &opts {
            // `gN=x`: the gain of label N (a whole number >= 0)
            let gain_key = allowed.contains(&"gN")
                && n.strip_prefix('g')
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            if !(allowed.contains(&n.as_str()) || gain_key || n == "judged_only") {
                return Err(Error::Measure(format!(
                    "measure '{}' has no option '{n}'{}",
                    self.family.name(),
                    if allowed.is_empty() {
                        String::new()
                    } else {
                        format!(" (options: {})", allowed.join(", "))
                    }
                )));
            }
        }
        opts.sort_by(|a, b| a.0.cmp(&b.0));
        opts.dedup_by(|a, b| a.0 == b.0);
        if self.family.is_cwl() {
            // a C/W/L model's expected utility is its value without a stat option
            opts.retain(|(n, v)| !(n == "stat" && *v == 0.0));
        }
        let before = std::mem::replace(&mut self.opts, opts);
        self.check().inspect_err(|_| self.opts = before)
    }

    /// How much of a ranking the measure reads: `Some(k)` when its value is a function
    /// of the top k documents and the query's judgments alone (the largest cut-off of
    /// the families audited for it: counts, precision/recall-like, DCG/nDCG, AP and
    /// ERR at k), `None` when it may read the whole ranking (the default for any
    /// family not listed: R-precision, set measures, bpref, scores, C/W/L models ...).
    /// Work that ranks the same candidates many times (fusion's grid search) ranks
    /// only that deep. Tested: every listed family gives the same numbers, to the bit,
    /// on rankings cut at the depth, at its defaults and with the options that change
    /// what it computes from the top k (gains, gmax, beta, rel, ideal_all, the DCG
    /// form; `evaluate::tests`). A measure's own `judged_only` filters the ranking
    /// first, so it is left to the evaluator.
    pub fn ranking_depth(&self) -> Option<u64> {
        use Family::*;
        let prefix_only = matches!(
            self.family,
            P | Recall
                | RelativeP
                | Success
                | Hits
                | Judged
                | Unj
                | FCut
                | RecipRankCut
                | MapCut
                | RelativeMapCut
                | NdcgCut
                | DcgCut
                | DcgBurgesCut
                | NdcgBurgesCut
                | NdcgGainCut
                | ErrCut
                | NerrCut
        );
        if prefix_only {
            self.cutoffs().iter().copied().max()
        } else {
            None
        }
    }

    /// The cut-offs of a cut-off family (empty otherwise).
    pub fn cutoffs(&self) -> &[u64] {
        match &self.params {
            Params::Cutoffs { values, .. } => values,
            _ => &[],
        }
    }

    /// The fractions of a fraction family (empty otherwise).
    pub fn fractions(&self) -> &[f64] {
        match &self.params {
            Params::Fractions { values, .. } => values,
            _ => &[],
        }
    }

    /// The numbers of a number family (empty otherwise).
    pub fn numbers(&self) -> &[f64] {
        match &self.params {
            Params::Numbers { values, .. } => values,
            _ => &[],
        }
    }

    /// The pairs of a pair family (empty otherwise).
    pub fn pairs(&self) -> &[(String, f64)] {
        match &self.params {
            Params::Pairs { pairs, .. } => pairs,
            _ => &[],
        }
    }

    /// How many values the measure produces per query.
    pub fn width(&self) -> usize {
        match &self.params {
            Params::Cutoffs { values, .. } => values.len(),
            Params::Fractions { values, .. } => values.len(),
            _ => 1,
        }
    }

    /// The printed names of the values, trec_eval style (`P_5`, `iprec_at_recall_0.10`,
    /// `ndcg_1=3,2=9`), with `-lN` appended when the measure has its own relevance level.
    pub fn column_names(&self) -> Vec<String> {
        let name = self.family.name();
        let mut out: Vec<String> = match &self.params {
            Params::None => vec![name.to_string()],
            Params::Cutoffs { values, .. } => {
                values.iter().map(|k| format!("{name}_{k}")).collect()
            }
            Params::Fractions { values, .. } => {
                values.iter().map(|x| format!("{name}_{x:.2}")).collect()
            }
            Params::Numbers { text: Some(t), .. } | Params::Pairs { text: Some(t), .. } => {
                vec![format!("{name}_{t}")]
            }
            Params::Numbers { text: None, .. } | Params::Pairs { text: None, .. } => {
                vec![name.to_string()]
            }
        };
        if !self.opts.is_empty() {
            let o: Vec<String> = self
                .opts
                .iter()
                .map(|(n, v)| match (n.as_str(), CWL_STATS.get(*v as usize)) {
                    ("stat", Some(stat)) if self.family.is_cwl() => format!("stat={stat}"),
                    ("m", _) if matches!(self.family, Family::Cam | Family::Wham) => {
                        format!(
                            "m={}",
                            CAM_MEASURES[(*v as usize).min(CAM_MEASURES.len() - 1)]
                        )
                    }
                    _ => format!("{n}={}", fmt_num(*v)),
                })
                .collect();
            let o = o.join(",");
            for c in &mut out {
                c.push_str(&format!("({o})"));
            }
        }
        if let Some(l) = self.rel_level {
            for c in &mut out {
                c.push_str(&format!("-l{l}"));
            }
        }
        out
    }

    /// Whether the parameters were written (`utility.2,-1,0,0`), not the defaults: the
    /// column is then named with them, as trec_eval names it.
    pub(crate) fn has_explicit_params(&self) -> bool {
        matches!(
            self.params,
            Params::Numbers { text: Some(_), .. } | Params::Pairs { text: Some(_), .. }
        )
    }

    /// Same family, relevance level and options: requests that merge into one.
    fn same_kind(&self, other: &Measure) -> bool {
        self.family == other.family && self.rel_level == other.rel_level && self.opts == other.opts
    }

    /// Whether another request can share this measure's columns: same family, level and
    /// options, and not two different explicit parameter lists (`rbp.p=0.5` and
    /// `rbp.p=0.9` are two measures; `rbp` and `rbp.p=0.5` one, as in trec_eval).
    fn mergeable(&self, other: &Measure) -> bool {
        self.same_kind(other)
            && match (&self.params, &other.params) {
                (Params::Numbers { text: Some(a), .. }, Params::Numbers { text: Some(b), .. })
                | (Params::Pairs { text: Some(a), .. }, Params::Pairs { text: Some(b), .. }) => {
                    a == b
                }
                _ => true,
            }
    }

    /// Merge another request of the same family and level into this one. Cut-offs or
    /// levels given replace the defaults, in either order (`-m all_trec -m P.5` and
    /// `-m P.5 -m P` are P_5 alone, as in trec_eval 10 and pytrec_eval); two lists given
    /// are united (`-m P.5 -m P.10`: trec_eval keeps the first, see the README's
    /// departures); for other kinds explicit parameters replace defaults. United lists
    /// are left unsorted, for [`MeasureSet::tidy`] to sort once.
    fn merge(&mut self, other: Measure) {
        match (&mut self.params, other.params) {
            (
                Params::Cutoffs { values, given },
                Params::Cutoffs {
                    values: more,
                    given: more_given,
                },
            ) => unite(values, given, more, more_given),
            (
                Params::Fractions { values, given },
                Params::Fractions {
                    values: more,
                    given: more_given,
                },
            ) => unite(values, given, more, more_given),
            (mine, theirs) => {
                let explicit = matches!(
                    theirs,
                    Params::Numbers { text: Some(_), .. } | Params::Pairs { text: Some(_), .. }
                );
                if explicit {
                    *mine = theirs;
                }
            }
        }
    }
}

/// [`Measure::merge`]'s rule for a list of cut-offs or levels: given beats defaults,
/// two lists given are united (appended: [`MeasureSet::tidy`] sorts them and keeps one
/// of each).
fn unite<T>(values: &mut Vec<T>, given: &mut bool, more: Vec<T>, more_given: bool) {
    match (*given, more_given) {
        (_, false) => {}
        (false, true) => {
            *values = more;
            *given = true;
        }
        (true, true) => values.extend(more),
    }
}

/// Sort `values` and keep one of each.
fn sort_distinct<T: PartialEq>(values: &mut Vec<T>, order: impl Fn(&T, &T) -> std::cmp::Ordering) {
    values.sort_by(order);
    values.dedup();
}

/// An ordered, merged list of measures: what an evaluation computes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasureSet {
    measures: Vec<Measure>,
    /// For each request string, the columns it names: (measure index, column index).
    requests: Vec<(String, Vec<(usize, usize)>)>,
}

impl MeasureSet {
    /// Parse a list of measure names (any supported spelling, nicknames included).
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<MeasureSet> {
        MeasureSet::parse_as(names, Names::Irmetrics)
    }

    /// [`MeasureSet::parse`] with one peer's meanings where the peers differ ([`Names`]).
    pub fn parse_as<S: AsRef<str>>(names: &[S], dialect: Names) -> Result<MeasureSet> {
        MeasureSet::parse_with(names, dialect, false)
    }

    /// [`MeasureSet::parse`] as trec_eval's command line reads `-m`: a single-valued
    /// measure asked for bare and with parameters (`-m set_F -m set_F.0.5`) is the one
    /// with the parameters, as trec_eval prints it (elsewhere it is two measures).
    pub fn parse_trec_eval<S: AsRef<str>>(names: &[S]) -> Result<MeasureSet> {
        MeasureSet::parse_with(names, Names::Irmetrics, true)
    }

    fn parse_with<S: AsRef<str>>(
        names: &[S],
        dialect: Names,
        trec_eval: bool,
    ) -> Result<MeasureSet> {
        let mut set = MeasureSet::default();
        let mut parsed = Vec::new();
        for name in names {
            let name = name.as_ref();
            let ms = parse_measure_as(name, dialect)?;
            parsed.push((name.to_string(), ms));
        }
        // the measures asked for by name first: a single-valued measure asked bare and
        // with parameters (`SetF`, `SetF(beta=0.5)`) is two measures; then the
        // nicknames', whose defaults parameters given replace (`-m all_trec -m
        // set_F.0.5` is set_F_0.5 alone, as in trec_eval)
        let by_nickname = |name: &str| trec_eval || nickname(name.trim()).is_some();
        for (_, ms) in parsed.iter().filter(|(name, _)| !by_nickname(name)) {
            for m in ms {
                set.add_asked(m.clone());
            }
        }
        for (_, ms) in parsed.iter().filter(|(name, _)| by_nickname(name)) {
            for m in ms {
                set.add_where(m.clone(), Measure::mergeable);
            }
        }
        set.tidy();
        // Map each request to the columns it asked for: each measure's columns named and
        // hashed once, however many requests it serves, and a request's kept once each
        // through a set (lists searched for every column were quadratic in the cut-offs:
        // `P.1,...,100000` took 15 s, 10,000 separate `-m P.k` 6 s)
        let mut columns_of: HashMap<usize, (usize, HashMap<String, usize>)> = HashMap::new();
        for (name, ms) in parsed {
            let mut cols = Vec::new();
            let mut kept = HashSet::new();
            for m in &ms {
                let idx = set.index_of(m);
                let (width, at) = columns_of.entry(idx).or_insert_with(|| {
                    let have = set.measures[idx].column_names();
                    let n = have.len();
                    let mut at = HashMap::with_capacity(n);
                    for (i, h) in have.into_iter().enumerate() {
                        at.entry(h).or_insert(i); // the first of a name, as before
                    }
                    (n, at)
                });
                let found: Option<Vec<usize>> = (m.column_names().iter())
                    .map(|w| at.get(w.as_str()).copied())
                    .collect();
                // defaults replaced by parameters given: the request names those
                let found = found.unwrap_or_else(|| (0..*width).collect());
                for c in found {
                    if kept.insert((idx, c)) {
                        cols.push((idx, c));
                    }
                }
            }
            set.requests.push((name, cols));
        }
        Ok(set)
    }

    /// Sort each measure's cut-offs or levels and keep one of each, after
    /// [`MeasureSet::add_where`]s: sorted at each of 40,000 requests `-m P.1 ... -m
    /// P.40000`, they took 1.2 s.
    fn tidy(&mut self) {
        for m in &mut self.measures {
            match &mut m.params {
                Params::Cutoffs { values, .. } => sort_distinct(values, u64::cmp),
                Params::Fractions { values, .. } => sort_distinct(values, f64::total_cmp),
                _ => {}
            }
        }
    }

    fn index_of(&self, m: &Measure) -> usize {
        self.measures
            .iter()
            .position(|e| e.same_kind(m) && e.params == m.params)
            .or_else(|| {
                self.measures.iter().position(|e| {
                    e.mergeable(m) && (e.params == m.params || !m.has_explicit_params())
                })
            })
            .or_else(|| self.measures.iter().position(|e| e.mergeable(m)))
            .unwrap_or(0)
    }

    /// Add a measure, merging it with one of the same family and relevance level.
    pub fn add(&mut self, m: Measure) {
        self.add_where(m, Measure::mergeable);
        self.tidy();
    }

    /// [`MeasureSet::add`] for a measure asked for by name: a single-valued one
    /// (`set_F`, `utility`, `rbp`) merges only with the same parameters, so its
    /// defaults and parameters given are two measures (two columns, each named).
    /// Untidy ([`MeasureSet::add_where`]).
    fn add_asked(&mut self, m: Measure) {
        self.add_where(m, |e, m| {
            e.mergeable(m)
                && (e.params == m.params
                    || !matches!(m.params, Params::Numbers { .. } | Params::Pairs { .. }))
        });
    }

    /// Add `m`, merged into the first measure `merges` accepts; united cut-offs and
    /// levels are left unsorted until [`MeasureSet::tidy`].
    fn add_where(&mut self, m: Measure, merges: impl Fn(&Measure, &Measure) -> bool) {
        if let Some(existing) = self.measures.iter_mut().find(|e| merges(e, &m)) {
            existing.merge(m);
        } else {
            let pos = self
                .measures
                .iter()
                .position(|e| (e.family, e.rel_level) > (m.family, m.rel_level))
                .unwrap_or(self.measures.len());
            self.measures.insert(pos, m);
        }
    }

    /// The measures in printing order.
    pub fn measures(&self) -> &[Measure] {
        &self.measures
    }

    /// Values per query: the measures' widths summed (the columns of a results row).
    pub fn width(&self) -> usize {
        self.measures.iter().map(Measure::width).sum()
    }

    /// Each request string with the (measure, column) pairs it names.
    pub fn requests(&self) -> &[(String, Vec<(usize, usize)>)] {
        &self.requests
    }

    /// True when nothing was requested.
    pub fn is_empty(&self) -> bool {
        self.measures.is_empty()
    }

    /// Every measure must be computable from the judgments at hand ([`JudgmentKind`]:
    /// qrels, preferences or judgment groups; runid and num_q from any).
    pub fn check_judgments(&self, holds: JudgmentKind) -> Result<()> {
        let format = |n: JudgmentKind| match n {
            JudgmentKind::Prefs => "preference judgments (-R prefs or -R qrels_prefs)",
            JudgmentKind::Groups => "qrels in judgment groups (-R qrels_jg)",
            _ => "plain qrels (-R qrels, the default)",
        };
        for m in &self.measures {
            let needs = m.family.judgments();
            if needs != JudgmentKind::Any && needs != holds {
                return Err(Error::Measure(format!(
                    "measure '{}' is computed from {}, but the judgments are {}",
                    m.family.name(),
                    format(needs),
                    format(holds)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(name: &str) -> Vec<String> {
        let set = MeasureSet::parse(&[name]).unwrap();
        set.measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect()
    }

    #[test]
    fn trec_spellings() {
        assert_eq!(cols("P.5,10"), ["P_5", "P_10"]);
        assert_eq!(cols("ndcg_cut_10"), ["ndcg_cut_10"]);
        assert_eq!(
            cols("ndcg_cut.10,20,23.4"),
            ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
        );
        assert_eq!(
            cols("iprec_at_recall..10,.50"),
            ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]
        );
        assert_eq!(
            cols("Rprec_mult.5.0,0.2,0.35"),
            ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]
        );
        assert_eq!(cols("utility.2,-1,0,0"), ["utility_2,-1,0,0"]);
        assert_eq!(cols("ndcg.1=3,2=9,4=4.5"), ["ndcg_1=3,2=9,4=4.5"]);
        assert_eq!(cols("rbp.p=0.8"), ["rbp_p=0.8"]);
        assert_eq!(cols("map"), ["map"]);
    }

    #[test]
    fn other_spellings() {
        assert_eq!(cols("nDCG@10"), ["ndcg_cut_10"]);
        assert_eq!(cols("P(rel=2)@5"), ["P_5-l2"]);
        assert_eq!(cols("map@100-l2"), ["map_cut_100-l2"]);
        assert_eq!(cols("AP"), ["map"]);
        assert_eq!(cols("RR"), ["recip_rank"]);
        assert_eq!(cols("hit_rate@10"), ["success_10"]);
        assert_eq!(cols("R@1000"), ["recall_1000"]);
        assert_eq!(cols("precision@5"), ["P_5"]);
        assert_eq!(cols("RBP(p=0.8)"), ["rbp_p=0.8"]);
    }

    #[test]
    fn beyond_trec_eval_spellings() {
        assert_eq!(cols("hits@10"), ["hits_10"]);
        assert_eq!(cols("f1@10"), ["F_cut_10"]);
        assert_eq!(cols("F(beta=0.5)@10"), ["F_cut_10(beta=0.5)"]);
        assert_eq!(cols("F_cut_10(beta=0.5)"), ["F_cut_10(beta=0.5)"]);
        assert_eq!(cols("dcg@10"), ["dcg_cut_10"]);
        assert_eq!(cols("dcg"), ["dcg"]);
        assert_eq!(cols("dcg_burges@5"), ["dcg_burges_cut_5"]);
        assert_eq!(cols("ndcg_burges@10"), ["ndcg_burges_cut_10"]);
        assert_eq!(cols("ndcg_burges"), ["ndcg_burges"]);
        assert_eq!(cols("nDCG(dcg='exp-log2')@10"), ["ndcg_burges_cut_10"]);
        assert_eq!(cols("ERR@10"), ["err_cut_10"]);
        assert_eq!(cols("ERR(gmax=4)@10"), ["err_cut_10(gmax=4)"]);
        assert_eq!(cols("ERR(gmax=2)@10"), ["err_cut_10(gmax=2)"]);
        assert_eq!(cols("err@20"), ["err_cut_20"]);
        assert_eq!(cols("nERR@10"), ["nerr_cut_10"]);
        assert_eq!(cols("Judged@10"), ["judged_10"]);
        assert_eq!(cols("RBP(rel=1,p=0.8)"), ["rbp_bin(p=0.8)-l1"]);
        assert_eq!(cols("RBP(rel=2)"), ["rbp_bin-l2"]);
        assert_eq!(cols("rbp_bin(p=0.5)"), ["rbp_bin(p=0.5)"]);
        assert_eq!(cols("relative_map@100"), ["relative_map_cut_100"]);
        assert_eq!(cols("dcg_jk(b=3)@5"), ["dcg_jk_5(b=3)"]);
        assert_eq!(
            cols("ndcg(g1=0.5,g2=3)@10"),
            ["ndcg_gain_cut_10(g1=0.5,g2=3)"]
        );
        assert_eq!(
            cols("nDCG(ideal_all=1)@10"),
            ["ndcg_gain_cut_10(ideal_all=1)"]
        );
        assert_eq!(cols("dcg(g2=1.5)@10"), ["dcg_cut_10(g2=1.5)"]);
        assert!(parse_measure("ndcg_gain_cut_10(ideal_all=2)").is_err());
        assert!(parse_measure("dcg_jk(g1=2)@10").is_err());
        assert!(parse_measure("F(gmax=2)@10").is_err());
        assert!(parse_measure("dcg_jk(b=1)@10").is_err());
        assert!(parse_measure("P_10(beta=2)").is_err());
        assert!(parse_measure("P(dcg='exp-log2')@10").is_err());
        // options are part of a measure's identity: two betas make two measures
        let set = MeasureSet::parse(&["f1@5", "F(beta=2)@5", "f1@10"]).unwrap();
        let c: Vec<String> = set
            .measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect();
        assert_eq!(c, ["F_cut_5", "F_cut_10", "F_cut_5(beta=2)"]);
    }

    #[test]
    fn cwl_spellings() {
        // ours and ir_measures' (cwl_eval provider) names of the C/W/L models
        assert_eq!(cols("INST(T=3)"), ["INST(T=3)"]);
        assert_eq!(cols("inst(T=3)"), ["INST(T=3)"]);
        assert_eq!(cols("INST(T=3,stat=ETU)"), ["INST(T=3,stat=ETU)"]);
        assert_eq!(cols("INST(T=3,stat=etu)"), ["INST(T=3,stat=ETU)"]);
        assert_eq!(cols("INST(T=3,stat=EU)"), ["INST(T=3)"]);
        assert_eq!(cols("INST(T=1,max_rel=3)"), ["INST(T=1,max_rel=3)"]);
        assert_eq!(
            cols("INSQ(T=2,min_rel=1,max_rel=3)"),
            ["INSQ(T=2,max_rel=3,min_rel=1)"]
        );
        assert_eq!(cols("BPM(T=2,K=10)"), ["BPM_10(T=2)"]);
        assert_eq!(cols("BPM(T=1,max_rel=3)@20"), ["BPM_20(T=1,max_rel=3)"]);
        assert_eq!(cols("bpm_10(T=2)"), ["BPM_10(T=2)"]);
        assert_eq!(
            cols("BPM_dynamic(T=2,hb=0.5)@10"),
            ["BPM_dynamic_10(T=2,hb=0.5)"]
        );
        assert_eq!(cols("SDCG(max_rel=3)@10"), ["sdcg_cut_10(max_rel=3)"]);
        assert_eq!(cols("sdcg_cut.5,10"), ["sdcg_cut_5", "sdcg_cut_10"]);
        assert_eq!(cols("NERR8(max_rel=3)@10"), ["nerr8_cut_10(max_rel=3)"]);
        assert_eq!(cols("NERR9@5"), ["nerr9_cut_5"]);
        assert_eq!(cols("NERR10(p=0.8,max_rel=3)"), ["nerr10(max_rel=3,p=0.8)"]);
        assert_eq!(cols("NERR11(T=2)"), ["nerr11(T=2)"]);
        assert_eq!(cols("cwl_P@10"), ["cwl_P_10"]);
        assert_eq!(cols("cwl_rbp(p=0.8,stat=ED)"), ["cwl_rbp(p=0.8,stat=ED)"]);
        assert_eq!(cols("cwl_rr(rel=2)"), ["cwl_rr-l2"]);
        assert_eq!(cols("cwl_ap(stat=2)"), ["cwl_ap(stat=EC)"]);
        assert_eq!(cols("cwl_rbp(stat=resEU)"), ["cwl_rbp(stat=ResEU)"]);
        // the printed names parse back to themselves
        for name in [
            "INST(T=3,stat=ETU)",
            "BPM_10(T=2)",
            "nerr10(max_rel=3,p=0.8)",
            "cwl_rr-l2",
        ] {
            assert_eq!(cols(name), [name]);
        }
        for bad in [
            "INST(T=0)",
            "INST(min_rel=1)",
            "INST(max_rel=1,min_rel=2)",
            "INST(rel=1,max_rel=3)",
            "INST(stat=ABC)",
            "INST(stat=10)",
            "cwl_P@1001",
            "cwl_rbp(p=1.5)",
            "P(K=5)@10",
            "INST@10",
            "BPM(gmax=2)@10",
        ] {
            assert!(
                MeasureSet::parse(&[bad]).is_err() || {
                    let set = MeasureSet::parse(&[bad]).unwrap();
                    set.measures().iter().any(|m| m.check().is_err())
                },
                "{bad}"
            );
        }
    }

    #[test]
    fn errors_suggest() {
        let e = parse_measure("ndgc@10").unwrap_err().to_string();
        assert!(e.contains("ndcg"), "{e}");
        assert!(parse_measure("P.0").is_err());
        assert!(parse_measure("P.5,5").is_err());
        assert!(parse_measure("P@").is_err());
        // a fraction is dropped only when it is digits (`P.5.5` is P.5); `P.5.x` is no cut-off
        assert!(parse_measure("P.5.x").is_err());
        assert_eq!(parse_measure("P.5.5").unwrap()[0].column_names(), ["P_5"]);
        assert!(parse_measure("map.5").is_err());
    }

    #[test]
    fn different_explicit_parameters_are_two_measures() {
        let set = MeasureSet::parse(&["rbp.p=0.5", "rbp.p=0.9", "rbp"]).unwrap();
        let c: Vec<String> = set
            .measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect();
        // `rbp` asked by name is rbp at its default p (never p=0.5's value named rbp)
        assert_eq!(c, ["rbp_p=0.5", "rbp_p=0.9", "rbp"]);
        let req: Vec<usize> = set.requests().iter().map(|(_, cols)| cols[0].0).collect();
        assert_eq!(req, [0, 1, 2]);
        // trec_eval's command line: rbp takes the first parameters given
        let set = MeasureSet::parse_trec_eval(&["rbp.p=0.5", "rbp.p=0.9", "rbp"]).unwrap();
        let c = set.measures().iter().flat_map(|m| m.column_names());
        assert!(c.eq(["rbp_p=0.5", "rbp_p=0.9"]));
        // a nickname's default is replaced by explicit parameters, as in trec_eval
        let set = MeasureSet::parse(&["all_trec", "relstring.20"]).unwrap();
        let c: Vec<String> = set
            .measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect();
        assert!(c.contains(&"relstring_20".to_string()) && !c.contains(&"relstring".to_string()));
    }

    #[test]
    fn merge_and_order() {
        let set = MeasureSet::parse(&["P.10", "map", "P.5"]).unwrap();
        let c: Vec<String> = set
            .measures()
            .iter()
            .flat_map(|m| m.column_names())
            .collect();
        assert_eq!(c, ["map", "P_5", "P_10"]);
        // each request still names its own columns, whatever the merged order
        let named: Vec<(String, Vec<String>)> = set
            .requests()
            .iter()
            .map(|(name, cols)| {
                let cols = cols
                    .iter()
                    .map(|&(m, c)| set.measures()[m].column_names()[c].clone())
                    .collect();
                (name.clone(), cols)
            })
            .collect();
        let want = [("P.10", "P_10"), ("map", "map"), ("P.5", "P_5")]
            .map(|(n, c)| (n.to_string(), vec![c.to_string()]));
        assert_eq!(named, want);
    }

    fn columns(names: &[&str], prefix: &str) -> Vec<String> {
        let set = MeasureSet::parse(names).unwrap();
        let c = set.measures().iter().flat_map(|m| m.column_names());
        c.filter(|c| c.starts_with(prefix)).collect()
    }

    /// Requests of one family united in any order are the one sorted list of their
    /// cut-offs and levels, each once (sorted once at the end of the parse, not at each
    /// request), and each request names its own columns.
    #[test]
    fn separate_requests_unite_sorted_and_distinct() {
        let shuffled = ["P.30", "P.5", "P.10,3", "P.5", "P@7", "iprec_at_recall.0.5"];
        let set = MeasureSet::parse(&shuffled).unwrap();
        let one = MeasureSet::parse(&["P.3,5,7,10,30", "iprec_at_recall.0.5"]).unwrap();
        assert_eq!(set.measures(), one.measures());
        let names = |r: &(String, Vec<(usize, usize)>)| -> Vec<String> {
            let cols: Vec<Vec<String>> = set.measures().iter().map(|m| m.column_names()).collect();
            r.1.iter().map(|&(m, c)| cols[m][c].clone()).collect()
        };
        let asked: Vec<Vec<String>> = set.requests().iter().map(names).collect();
        assert_eq!(
            asked,
            [
                vec!["P_30"],
                vec!["P_5"],
                vec!["P_3", "P_10"],
                vec!["P_5"],
                vec!["P_7"],
                vec!["iprec_at_recall_0.50"],
            ]
        );
        let fractions = MeasureSet::parse(&["iprec_at_recall.0.5", "iprec_at_recall.0.1,0.5"]);
        let fractions = fractions.unwrap();
        assert_eq!(fractions.measures()[0].fractions(), [0.1, 0.5]);
    }

    #[test]
    fn given_cut_offs_replace_the_defaults() {
        // trec_eval 10 (and pytrec_eval): `-m all_trec -m P.5` is P_5 alone, either order
        for names in [["all_trec", "P.5"], ["P.5", "official"], ["P", "P@5"]] {
            assert_eq!(columns(&names, "P_"), ["P_5"], "{names:?}");
        }
        assert_eq!(
            columns(&["official", "iprec_at_recall.0.25"], "iprec"),
            ["iprec_at_recall_0.25"]
        );
        // two lists given are united, a bare name after them adds nothing
        assert_eq!(columns(&["P.5", "P.10", "P"], "P_"), ["P_5", "P_10"]);
        // a list given that equals the defaults is still given: united with the next
        // (60273c1 compared with the defaults by value and dropped `RR@10`'s list)
        let mut families = 0;
        for f in Family::ALL.iter().copied() {
            let d = Measure::new(f);
            let defaults = match (&d.params, f.is_trec_eval()) {
                (Params::Cutoffs { values, .. }, true) => values.clone(),
                _ => continue,
            };
            let text: Vec<String> = defaults.iter().map(u64::to_string).collect();
            let extra = defaults.iter().max().unwrap() + 1;
            let given = format!("{}.{}", f.name(), text.join(","));
            let more = format!("{}.{extra}", f.name());
            let mut want: Vec<String> = d.column_names();
            want.push(format!("{}_{extra}", f.name()));
            let set = MeasureSet::parse(&[given.as_str(), more.as_str()]).unwrap();
            assert_eq!(set.measures()[0].column_names(), want, "{f:?}");
            // and each request names its own columns
            assert_eq!(set.requests()[0].1.len(), defaults.len(), "{f:?}");
            assert_eq!(set.requests()[1].1, [(0, defaults.len())], "{f:?}");
            families += 1;
        }
        assert!(
            families >= 5,
            "P, recall, ndcg_cut, map_cut, success: {families}"
        );
        // a single-valued measure asked bare and with parameters is two measures (one
        // column cannot hold both: ir_measures' SetF and SetF(beta=0.5)); beside a
        // nickname, parameters replace its default, as in trec_eval
        for names in [["SetF", "SetF(beta=0.5)"], ["set_F.0.5", "set_F"]] {
            let set = MeasureSet::parse(&names).unwrap();
            let named: Vec<Vec<String>> = (set.requests().iter())
                .map(|(_, cols)| {
                    let c = cols.iter();
                    c.map(|&(m, c)| set.measures()[m].column_names()[c].clone())
                        .collect()
                })
                .collect();
            let want = if names[0] == "SetF" {
                [["set_F"], ["set_F_0.5"]]
            } else {
                [["set_F_0.5"], ["set_F"]]
            };
            assert_eq!(named, want, "{names:?}");
        }
        assert_eq!(columns(&["all_trec", "set_F.0.5"], "set_F"), ["set_F_0.5"]);
        // trec_eval's command line: `-m set_F -m set_F.0.5` prints set_F_0.5 alone
        let set = MeasureSet::parse_trec_eval(&["set_F", "set_F.0.5"]).unwrap();
        let c = set.measures().iter().flat_map(|m| m.column_names());
        assert!(c.eq(["set_F_0.5"]));
        assert_eq!(columns(&["set_F.0.5", "set"], "set_F"), ["set_F_0.5"]);
        // a nickname asked beside parameters names the columns computed
        let set = MeasureSet::parse(&["official", "P.7"]).unwrap();
        let (name, cols) = &set.requests()[0];
        assert_eq!(name, "official");
        let named: Vec<String> = (cols.iter())
            .map(|&(m, c)| set.measures()[m].column_names()[c].clone())
            .filter(|c| c.starts_with("P_"))
            .collect();
        assert_eq!(named, ["P_7"]);
    }
}
