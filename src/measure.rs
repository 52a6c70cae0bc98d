//! Measures as data: the families irmetrics computes, their parameters, and one parser
//! for the trec_eval, ir_measures and ranx spellings of their names.
//!
//! A [`Measure`] is a family plus concrete parameters (cut-offs, gains, ...) and an
//! optional relevance level that overrides the evaluation-wide one. One measure can
//! produce several values ("columns"): `P.5,10` gives `P_5` and `P_10`.

use crate::error::{Error, Result};

/// What a family's parameters look like (trec_eval's four kinds, plus none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// No parameters.
    None,
    /// Positive integer cut-offs, one value each (`P.5,10`).
    Cutoffs,
    /// Fractional cut-offs, one value each (`iprec_at_recall.0.1,0.5`).
    Fractions,
    /// A list of numbers giving one value (`utility.1,-1,0,0`, `set_F.0.5`).
    Numbers,
    /// `name=value` pairs giving one value (`ndcg.1=3,2=7`, `rbp.p=0.8`).
    Pairs,
}

/// How per-query values are combined into the `all` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Sum in query order, divided once by the number of queries.
    Mean,
    /// exp(mean(log(max(v, 1e-5)))), trec_eval's geometric mean.
    GeoMean,
    /// Sum of integer counts.
    Sum,
    /// Only per-query (relstring).
    None,
    /// The run's tag (runid).
    RunId,
    /// Number of queries (num_q).
    NumQ,
}

macro_rules! families {
    ($( $variant:ident => $name:literal, $kind:ident, [$($def:literal),*], $agg:ident, $int:literal, $doc:literal; )*) => {
        /// A measure family. The order of the variants is trec_eval's printing order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Family { $( #[doc = $doc] $variant, )* }

        impl Family {
            /// Every family, in printing order.
            pub const ALL: &'static [Family] = &[$(Family::$variant),*];

            /// trec_eval's (and our canonical) name.
            pub fn name(self) -> &'static str { match self { $(Family::$variant => $name,)* } }

            /// The kind of parameters the family takes.
            pub fn param_kind(self) -> ParamKind { match self { $(Family::$variant => ParamKind::$kind,)* } }

            /// Default parameters (as numbers; cut-offs for cut-off families).
            pub fn defaults(self) -> &'static [f64] { match self { $(Family::$variant => &[$($def as f64),*],)* } }

            /// How the `all` value is formed.
            pub fn aggregate(self) -> Aggregate { match self { $(Family::$variant => Aggregate::$agg,)* } }

            /// Whether values are integer counts (printed without decimals).
            pub fn is_integer(self) -> bool { match self { $(Family::$variant => $int,)* } }

            /// One-line definition.
            pub fn doc(self) -> &'static str { match self { $(Family::$variant => $doc,)* } }
        }
    };
}

families! {
    RunId => "runid", None, [], RunId, false, "Run tag (last tag of the run file).";
    NumQ => "num_q", None, [], NumQ, true, "Number of queries evaluated.";
    NumRet => "num_ret", None, [], Sum, true, "Number of documents retrieved.";
    NumRel => "num_rel", None, [], Sum, true, "Number of relevant documents judged.";
    NumRelRet => "num_rel_ret", None, [], Sum, true, "Number of relevant documents retrieved.";
    Map => "map", None, [], Mean, false, "Mean average precision: sum of precision at each relevant retrieved document / number of relevant.";
    GmMap => "gm_map", None, [], GeoMean, false, "Geometric mean of average precision (values floored at 1e-5).";
    Rprec => "Rprec", None, [], Mean, false, "Precision after R documents, R = number of relevant.";
    Bpref => "bpref", None, [], Mean, false, "Binary preference: fraction of the top R judged non-relevant ranked after each relevant document.";
    RecipRank => "recip_rank", None, [], Mean, false, "Reciprocal rank of the first relevant document.";
    IprecAtRecall => "iprec_at_recall", Fractions, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], Mean, false, "Interpolated precision at recall levels.";
    P => "P", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "Precision at cut-off k: relevant in top k / k.";
    Relstring => "relstring", Numbers, [10], None, false, "Relevance labels of the top N documents as a string.";
    Recall => "recall", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "Recall at cut-off k: relevant in top k / number of relevant.";
    InfAP => "infAP", None, [], Mean, false, "Inferred AP (Yilmaz and Aslam), for sampled judgments.";
    GmBpref => "gm_bpref", None, [], GeoMean, false, "Geometric mean of bpref.";
    RprecMult => "Rprec_mult", Fractions, [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0], Mean, false, "Precision at multiples of R.";
    Utility => "utility", Numbers, [1, -1, 0, 0], Mean, false, "Set utility a*relret + b*nonrelret + c*relnotret + d*nonrelnotret.";
    Pt11Avg => "11pt_avg", Numbers, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], Mean, false, "Interpolated precision averaged over recall levels.";
    BinG => "binG", None, [], Mean, false, "Binary G: average over relevant documents of 1/log2(2 + non-relevant before).";
    G => "G", Pairs, [], Mean, false, "G: gain discounted by the cost so far, normalised by the ideal gain.";
    Ndcg => "ndcg", Pairs, [], Mean, false, "nDCG with linear gains (the labels), log2(rank+1) discount, ideal over all judged documents.";
    NdcgRel => "ndcg_rel", Pairs, [], Mean, false, "nDCG averaged over relevant documents.";
    Rndcg => "Rndcg", Pairs, [], Mean, false, "nDCG averaged at the R-level boundaries of the ideal ranking.";
    NdcgCut => "ndcg_cut", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "nDCG at cut-off k, ideal over the top k of the judged documents.";
    MapCut => "map_cut", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "Average precision over the top k, divided by all relevant.";
    RelativeP => "relative_P", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "Relevant in top k / min(k, R).";
    Success => "success", Cutoffs, [1, 5, 10], Mean, false, "1 if a relevant document is in the top k, else 0.";
    SetP => "set_P", None, [], Mean, false, "Precision of the whole retrieved set.";
    SetRelativeP => "set_relative_P", None, [], Mean, false, "Relevant retrieved / min(retrieved, R).";
    SetRecall => "set_recall", None, [], Mean, false, "Recall of the whole retrieved set.";
    SetMap => "set_map", None, [], Mean, false, "set_P * set_recall.";
    SetF => "set_F", Numbers, [1.0], Mean, false, "F-measure of the retrieved set, (1+b^2)PR/(b^2 P+R); parameter b.";
    NumNonrelJudgedRet => "num_nonrel_judged_ret", None, [], Sum, true, "Number of judged non-relevant documents retrieved.";
    Rbp => "rbp", Pairs, [], Mean, false, "Rank-biased precision (p = 0.9 by default), gains rescaled to [0, 1].";
    RbpResid => "rbp_resid", Pairs, [], Mean, false, "RBP residual: the most RBP can rise if every unjudged document were relevant.";
    Unj => "unj", Cutoffs, [5, 10, 20], Mean, false, "Fraction of unjudged documents in the top k.";
    // ---- beyond trec_eval ----
    RecipRankCut => "recip_rank_cut", Cutoffs, [10], Mean, false, "Reciprocal rank of the first relevant document within the top k (0 if none).";
    Hits => "hits", Cutoffs, [1, 5, 10], Mean, false, "Number of relevant documents in the top k (ranx hits@k).";
    FCut => "F_cut", Cutoffs, [5, 10], Mean, false, "F-measure of the top k: (1+b^2) P@k R@k / (b^2 P@k + R@k), 0 when no relevant document is retrieved; option beta (b, default 1: F1).";
    RelativeMapCut => "relative_map_cut", Cutoffs, [10, 100], Mean, false, "Average precision over the top k divided by min(R, k) instead of R (the convention of some libraries).";
    Dcg => "dcg", None, [], Mean, false, "DCG with linear gains: sum of label / log2(rank + 1) over the whole ranking (labels <= 0 gain 0).";
    DcgCut => "dcg_cut", Cutoffs, [5, 10], Mean, false, "DCG at cut-off k with linear gains: sum over the top k of label / log2(rank + 1).";
    DcgBurges => "dcg_burges", None, [], Mean, false, "DCG with exponential gains (Burges et al. 2005): sum of (2^label - 1) / log2(rank + 1).";
    DcgBurgesCut => "dcg_burges_cut", Cutoffs, [5, 10], Mean, false, "DCG at cut-off k with exponential gains 2^label - 1 and log2(rank + 1) discount.";
    NdcgBurges => "ndcg_burges", None, [], Mean, false, "nDCG with exponential gains 2^label - 1; the ideal ranking holds every judged document.";
    NdcgBurgesCut => "ndcg_burges_cut", Cutoffs, [5, 10], Mean, false, "nDCG at cut-off k with exponential gains 2^label - 1; the ideal is the top k of the judged documents (gdeval.pl's nDCG).";
    DcgJk => "dcg_jk", Cutoffs, [5, 10], Mean, false, "Jarvelin-Kekalainen DCG at k with log base b (option b, default 2): rel_1 + sum_{i>=2} rel_i / max(1, log_b i); ranks up to b are not discounted.";
    ErrCut => "err_cut", Cutoffs, [5, 10, 20], Mean, false, "Expected reciprocal rank at k (Chapelle et al. 2009): sum_i 1/i R_i prod_{j<i} (1 - R_j), R = (2^label - 1) / 2^gmax; gmax is the largest label of the qrels unless given (option gmax).";
    NerrCut => "nerr_cut", Cutoffs, [5, 10, 20], Mean, false, "ERR at k divided by the ERR at k of the ideal ranking of the judged documents (0 when no judged document has a positive label).";
    Judged => "judged", Cutoffs, [5, 10, 20], Mean, false, "Fraction of the top min(k, retrieved) documents that appear in the qrels, any label (ir_measures Judged@k); 0 for an empty ranking.";
    Iprec => "iprec", Fractions, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], Mean, false, "Interpolated precision at recall r, textbook definition: the highest precision at a rank whose recall is >= r (0 if never reached).";
    Ap11pt => "ap_11pt", None, [], Mean, false, "11-point interpolated AP (PASCAL VOC 2007): mean of iprec at recall 0, 0.1, ..., 1.";
    NdcgGain => "ndcg_gain", None, [], Mean, false, "nDCG with a gain map (options gN=x: gain x for label N, float gains allowed; other labels gain their value, labels < 0 gain 0), log2(rank + 1) discount, ideal over all judged documents ranked by gain.";
    NdcgGainCut => "ndcg_gain_cut", Cutoffs, [5, 10], Mean, false, "nDCG at k with a gain map (options gN=x); the ideal is the top k of the judged documents by gain, or all of them with ideal_all=1 (DCG@k / DCG of the whole ideal ranking).";
    Fallout => "fallout", Cutoffs, [10], Mean, false, "Fall-out at k: non-relevant in the top k / non-relevant in the collection (N - R; needs num_docs_in_collection).";
    Tpr => "tpr", Cutoffs, [10], Mean, false, "True positive rate (sensitivity) of the top k: TP / (TP + FN).";
    Tnr => "tnr", Cutoffs, [10], Mean, false, "True negative rate (specificity) of the top k: TN / (TN + FP).";
    Ppv => "ppv", Cutoffs, [10], Mean, false, "Positive predictive value of the top min(k, retrieved): TP / (TP + FP).";
    Npv => "npv", Cutoffs, [10], Mean, false, "Negative predictive value: TN / (TN + FN).";
    Fnr => "fnr", Cutoffs, [10], Mean, false, "False negative rate (miss rate): FN / (FN + TP).";
    Fpr => "fpr", Cutoffs, [10], Mean, false, "False positive rate: FP / (FP + TN) (= fallout).";
    Fdr => "fdr", Cutoffs, [10], Mean, false, "False discovery rate: FP / (FP + TP).";
    FalseOmissionRate => "for", Cutoffs, [10], Mean, false, "False omission rate: FN / (FN + TN).";
    LrPos => "lr_pos", Cutoffs, [10], Mean, false, "Positive likelihood ratio LR+: TPR / FPR.";
    LrNeg => "lr_neg", Cutoffs, [10], Mean, false, "Negative likelihood ratio LR-: FNR / TNR.";
    PrevalenceThreshold => "prevalence_threshold", Cutoffs, [10], Mean, false, "Prevalence threshold: (sqrt(TPR FPR) - FPR) / (TPR - FPR).";
    ThreatScore => "threat_score", Cutoffs, [10], Mean, false, "Threat score (critical success index): TP / (TP + FN + FP).";
    Prevalence => "prevalence", Cutoffs, [10], Mean, false, "Prevalence: (TP + FN) / N.";
    Accuracy => "accuracy", Cutoffs, [10], Mean, false, "Accuracy: (TP + TN) / N.";
    BalancedAccuracy => "balanced_accuracy", Cutoffs, [10], Mean, false, "Balanced accuracy: (TPR + TNR) / 2.";
    Mcc => "mcc", Cutoffs, [10], Mean, false, "Matthews correlation coefficient: (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)).";
    FowlkesMallows => "fowlkes_mallows", Cutoffs, [10], Mean, false, "Fowlkes-Mallows index: sqrt(PPV TPR).";
    Informedness => "informedness", Cutoffs, [10], Mean, false, "Informedness (bookmaker informedness): TPR + TNR - 1.";
    Markedness => "markedness", Cutoffs, [10], Mean, false, "Markedness: PPV + NPV - 1.";
    DiagnosticOddsRatio => "dor", Cutoffs, [10], Mean, false, "Diagnostic odds ratio: LR+ / LR-.";
    RbpBin => "rbp_bin", None, [], Mean, false, "Rank-biased precision with binary gains: (1 - p) sum of p^(rank-1) over relevant documents (label >= the relevance level); p = 0.8 by default (ir_measures RBP(rel=1)).";
}

impl Family {
    /// Whether the family needs the number of documents in the collection (-N).
    pub fn needs_num_docs(self) -> bool {
        use Family::*;
        matches!(
            self,
            Fallout
                | Tnr
                | Npv
                | Fpr
                | FalseOmissionRate
                | LrPos
                | LrNeg
                | PrevalenceThreshold
                | Prevalence
                | Accuracy
                | BalancedAccuracy
                | Mcc
                | Informedness
                | Markedness
                | DiagnosticOddsRatio
        )
    }
}

/// trec_eval's nicknames.
pub fn nickname(name: &str) -> Option<&'static [Family]> {
    use Family::*;
    match name {
        "official" => Some(&[
            RunId,
            NumQ,
            NumRet,
            NumRel,
            NumRelRet,
            Map,
            GmMap,
            Rprec,
            Bpref,
            RecipRank,
            IprecAtRecall,
            P,
        ]),
        "set" => Some(&[
            RunId,
            NumQ,
            NumRet,
            NumRel,
            NumRelRet,
            Utility,
            SetP,
            SetRecall,
            SetRelativeP,
            SetMap,
            SetF,
        ]),
        "all_trec" => Some(&[
            RunId,
            NumQ,
            NumRet,
            NumRel,
            NumRelRet,
            Map,
            GmMap,
            Rprec,
            Bpref,
            RecipRank,
            IprecAtRecall,
            P,
            Relstring,
            Recall,
            InfAP,
            GmBpref,
            Utility,
            Pt11Avg,
            Ndcg,
            RelativeP,
            RprecMult,
            Success,
            MapCut,
            NdcgCut,
            NdcgRel,
            Rndcg,
            BinG,
            G,
            SetP,
            SetRecall,
            SetRelativeP,
            SetMap,
            SetF,
            NumNonrelJudgedRet,
            Rbp,
            RbpResid,
            Unj,
        ]),
        _ => None,
    }
}

/// Concrete parameters of one measure.
#[derive(Clone, Debug, PartialEq)]
pub enum Params {
    /// No parameters.
    None,
    /// Sorted, distinct, positive cut-offs.
    Cutoffs(Vec<u64>),
    /// Sorted, distinct fractions.
    Fractions(Vec<f64>),
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
            ParamKind::Cutoffs => Params::Cutoffs(d.iter().map(|&v| v as u64).collect()),
            ParamKind::Fractions => Params::Fractions(d.to_vec()),
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

    /// The family with trec_eval-style parameter text (what follows the `.`).
    pub fn with_params(family: Family, text: &str) -> Result<Measure> {
        let bad = |why: &str| {
            Error::Measure(format!(
                "bad parameters '{text}' for measure '{}': {why}",
                family.name()
            ))
        };
        let params = match family.param_kind() {
            ParamKind::None => return Err(bad("this measure takes no parameters")),
            ParamKind::Cutoffs => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    let k = parse_cutoff(part).ok_or_else(|| {
                        bad(&format!(
                            "'{part}' is not a positive whole number of documents"
                        ))
                    })?;
                    v.push(k);
                }
                v.sort_unstable();
                if v.windows(2).any(|w| w[0] == w[1]) {
                    return Err(bad("a cut-off is given twice"));
                }
                Params::Cutoffs(v)
            }
            ParamKind::Fractions => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    let x: f64 = parse_number(part)
                        .ok_or_else(|| bad(&format!("'{part}' is not a number")))?;
                    v.push(x);
                }
                v.sort_by(f64::total_cmp);
                if v.windows(2).any(|w| w[0] == w[1]) {
                    return Err(bad("a value is given twice"));
                }
                Params::Fractions(v)
            }
            ParamKind::Numbers => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    v.push(
                        parse_number(part)
                            .ok_or_else(|| bad(&format!("'{part}' is not a number")))?,
                    );
                }
                match family {
                    Family::Utility if v.len() != 4 => {
                        return Err(bad("utility takes exactly four coefficients a,b,c,d"))
                    }
                    Family::SetF | Family::Relstring if v.len() != 1 => {
                        return Err(bad("this measure takes exactly one number"))
                    }
                    Family::Relstring if v[0] < 0.0 => {
                        return Err(bad("the length must not be negative"))
                    }
                    _ => {}
                }
                Params::Numbers {
                    values: v,
                    text: Some(text.to_string()),
                }
            }
            ParamKind::Pairs => {
                let mut pairs = Vec::new();
                for part in text.split(',') {
                    let (name, value) = part
                        .split_once('=')
                        .ok_or_else(|| bad(&format!("'{part}' is not of the form name=value")))?;
                    let value = parse_number(value)
                        .ok_or_else(|| bad(&format!("'{value}' is not a number")))?;
                    let ok = match family {
                        Family::Rbp | Family::RbpResid => name == "p" || valid_int(name),
                        _ => valid_int(name),
                    };
                    if !ok {
                        return Err(bad(&format!(
                            "'{name}' is not a relevance level{}",
                            if matches!(family, Family::Rbp | Family::RbpResid) {
                                " or p"
                            } else {
                                ""
                            }
                        )));
                    }
                    if name == "p" && !(value > 0.0 && value < 1.0) {
                        return Err(bad("the persistence p must lie strictly between 0 and 1"));
                    }
                    pairs.push((name.to_string(), value));
                }
                Params::Pairs {
                    pairs,
                    text: Some(text.to_string()),
                }
            }
        };
        Ok(Measure {
            family,
            params,
            rel_level: None,
            opts: Vec::new(),
        })
    }

    /// The value of a named option, or `default`.
    pub fn opt(&self, name: &str, default: f64) -> f64 {
        self.opts
            .iter()
            .find(|(n, _)| n == name)
            .map_or(default, |(_, v)| *v)
    }

    /// Set family options (`beta=0.5`), checking that the family takes them.
    pub fn set_opts(&mut self, opts: Vec<(String, f64)>) -> Result<()> {
        let allowed: &[&str] = match self.family {
            Family::FCut => &["beta"],
            Family::ErrCut | Family::NerrCut => &["gmax"],
            Family::DcgJk => &["b"],
            Family::RbpBin => &["p"],
            Family::Dcg | Family::DcgCut => &["gN"],
            Family::NdcgGain | Family::NdcgGainCut => &["gN", "ideal_all"],
            _ => &[],
        };
        let mut opts = opts;
        for (n, v) in &opts {
            // `gN=x`: the gain of label N (a whole number >= 0)
            let gain_key = allowed.contains(&"gN")
                && n.strip_prefix('g')
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            let ideal_key =
                n == "ideal_all" && matches!(self.family, Family::NdcgGain | Family::NdcgGainCut);
            if ideal_key && !(*v == 0.0 || *v == 1.0) {
                return Err(Error::Measure(format!(
                    "measure '{}': ideal_all must be 0 (ideal = top k of the judged \
                     documents) or 1 (ideal = all judged documents)",
                    self.family.name()
                )));
            }
            if !(allowed.contains(&n.as_str()) || gain_key || ideal_key) {
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
            let ok = match n.as_str() {
                "beta" => *v >= 0.0,
                "gmax" => *v >= 0.0 && v.fract() == 0.0,
                "b" => *v > 1.0,
                "p" => *v > 0.0 && *v < 1.0,
                _ => true,
            };
            if !ok {
                return Err(Error::Measure(format!(
                    "measure '{}': bad value {v} for option '{n}' (beta >= 0, gmax a whole \
                     number >= 0, b > 1, 0 < p < 1)",
                    self.family.name()
                )));
            }
        }
        opts.sort_by(|a, b| a.0.cmp(&b.0));
        opts.dedup_by(|a, b| a.0 == b.0);
        self.opts = opts;
        Ok(())
    }

    /// The cut-offs of a cut-off family (empty otherwise).
    pub fn cutoffs(&self) -> &[u64] {
        match &self.params {
            Params::Cutoffs(v) => v,
            _ => &[],
        }
    }

    /// The fractions of a fraction family (empty otherwise).
    pub fn fractions(&self) -> &[f64] {
        match &self.params {
            Params::Fractions(v) => v,
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
            Params::Cutoffs(v) => v.len(),
            Params::Fractions(v) => v.len(),
            _ => 1,
        }
    }

    /// The printed names of the values, trec_eval style (`P_5`, `iprec_at_recall_0.10`,
    /// `ndcg_1=3,2=9`), with `-lN` appended when the measure has its own relevance level.
    pub fn column_names(&self) -> Vec<String> {
        let name = self.family.name();
        let mut out: Vec<String> = match &self.params {
            Params::None => vec![name.to_string()],
            Params::Cutoffs(v) => v.iter().map(|k| format!("{name}_{k}")).collect(),
            Params::Fractions(v) => v.iter().map(|x| format!("{name}_{x:.2}")).collect(),
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
                .map(|(n, v)| format!("{n}={}", fmt_num(*v)))
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

    /// Same family, relevance level and options: requests that merge into one.
    fn has_explicit_params(&self) -> bool {
        matches!(
            self.params,
            Params::Numbers { text: Some(_), .. } | Params::Pairs { text: Some(_), .. }
        )
    }

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

    /// Merge another request of the same family and level into this one (cut-offs are
    /// united; for other kinds, explicit parameters replace defaults).
    fn merge(&mut self, other: Measure) {
        match (&mut self.params, other.params) {
            (Params::Cutoffs(a), Params::Cutoffs(b)) => {
                a.extend(b);
                a.sort_unstable();
                a.dedup();
            }
            (Params::Fractions(a), Params::Fractions(b)) => {
                a.extend(b);
                a.sort_by(f64::total_cmp);
                a.dedup();
            }
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

/// trec_eval's `valid_int` for gain-map keys: optional sign, then digits.
fn valid_int(s: &str) -> bool {
    let d = s.strip_prefix(['-', '+']).unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// A positive cut-off. Like trec_eval, a fractional part is dropped (`23.4` is 23).
fn parse_cutoff(s: &str) -> Option<u64> {
    let s = s.trim();
    let int = match s.split_once('.') {
        Some((i, f)) if f.bytes().all(|b| b.is_ascii_digit()) => i,
        Some(_) => return None,
        None => s,
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    int.parse::<u64>().ok().filter(|&k| k > 0)
}

fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    s.parse::<f64>().ok().filter(|x| x.is_finite())
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
        let mut set = MeasureSet::default();
        let mut parsed = Vec::new();
        for name in names {
            let name = name.as_ref();
            let ms = parse_measure(name)?;
            parsed.push((name.to_string(), ms));
        }
        for (_, ms) in &parsed {
            for m in ms {
                set.add(m.clone());
            }
        }
        // Map each request to the columns it asked for.
        for (name, ms) in parsed {
            let mut cols = Vec::new();
            for m in &ms {
                let idx = set.index_of(m);
                let wanted = m.column_names();
                let have = set.measures[idx].column_names();
                for w in wanted {
                    if let Some(c) = have.iter().position(|h| *h == w) {
                        cols.push((idx, c));
                    } else {
                        // Parameters replaced by a later explicit request: take them all.
                        cols.extend((0..have.len()).map(|c| (idx, c)));
                    }
                }
            }
            cols.dedup();
            set.requests.push((name, cols));
        }
        Ok(set)
    }

    fn index_of(&self, m: &Measure) -> usize {
        self.measures
            .iter()
            .position(|e| e.mergeable(m) && (e.params == m.params || !m.has_explicit_params()))
            .or_else(|| self.measures.iter().position(|e| e.mergeable(m)))
            .unwrap_or(0)
    }

    /// Add a measure, merging it with one of the same family and relevance level.
    pub fn add(&mut self, m: Measure) {
        if let Some(existing) = self.measures.iter_mut().find(|e| e.mergeable(&m)) {
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

    /// Each request string with the (measure, column) pairs it names.
    pub fn requests(&self) -> &[(String, Vec<(usize, usize)>)] {
        &self.requests
    }

    /// True when nothing was requested.
    pub fn is_empty(&self) -> bool {
        self.measures.is_empty()
    }
}

/// Parse one measure request into one or more measures.
///
/// Accepted spellings:
/// * trec_eval: `P`, `P.5,10`, `ndcg_cut.10`, `ndcg_cut_10`, `ndcg.1=3,2=7`, `rbp.p=0.8`,
///   nicknames `official`, `all_trec`, `set`;
/// * ir_measures: `P@5`, `R@1000`, `AP`, `AP@100`, `RR`, `RR@10`, `nDCG`, `nDCG@10`, `Rprec`,
///   `Bpref`, `Success@10`, `infAP`, `NumRet`, `NumRel`, `NumRelRet`, `NumQ`, `SetP`, `SetR`,
///   `SetF`, `IPrec@0.5`, `RBP(p=0.8)`, and `(rel=N)` on any of them (`P(rel=2)@5`);
/// * ranx: `precision@5`, `recall@100`, `map`, `map@100`, `mrr`, `mrr@10`, `ndcg`, `ndcg@10`,
///   `hit_rate@10`, `r-precision`, `bpref`, `rbp.95`, and `-lN` on any (`map@100-l2`).
pub fn parse_measure(input: &str) -> Result<Vec<Measure>> {
    let s = input.trim();
    if s.is_empty() {
        return Err(Error::Measure("empty measure name".into()));
    }
    if let Some(fams) = nickname(s) {
        return Ok(fams.iter().map(|&f| Measure::new(f)).collect());
    }
    if let Some(m) = parse_trec(s)? {
        return Ok(vec![m]);
    }
    if let Some(m) = parse_at_style(s)? {
        return Ok(vec![m]);
    }
    Err(unknown(s))
}

fn family_by_name(name: &str) -> Option<Family> {
    Family::ALL.iter().copied().find(|f| f.name() == name)
}

/// trec_eval syntax: `name`, `name.params`, or `name_cutoff` for cut-off families,
/// optionally followed by family options in parentheses (`err_cut_10(gmax=4)`).
fn parse_trec(s: &str) -> Result<Option<Measure>> {
    if let Some(head) = s.strip_suffix(')') {
        if let Some((name, opts)) = head.split_once('(') {
            return match parse_trec_plain(name)? {
                Some(mut m) => {
                    let mut extra = Vec::new();
                    for opt in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                        let (k, v) = opt.split_once('=').ok_or_else(|| {
                            Error::Measure(format!("'{s}': option '{opt}' is not name=value"))
                        })?;
                        let v = parse_number(v).ok_or_else(|| {
                            Error::Measure(format!("'{s}': option '{k}' needs a number"))
                        })?;
                        extra.push((k.trim().to_string(), v));
                    }
                    m.set_opts(extra)?;
                    Ok(Some(m))
                }
                None => Ok(None),
            };
        }
    }
    parse_trec_plain(s)
}

fn parse_trec_plain(s: &str) -> Result<Option<Measure>> {
    if let Some(f) = family_by_name(s) {
        return Ok(Some(Measure::new(f)));
    }
    if let Some((name, params)) = s.split_once('.') {
        if let Some(f) = family_by_name(name) {
            return Measure::with_params(f, params).map(Some);
        }
    }
    // `ndcg_cut_10`, `P_5`, `iprec_at_recall_0.10`, `Rprec_mult_0.20`, `unj_5`.
    for (i, _) in s.match_indices('_').rev() {
        let (name, rest) = (&s[..i], &s[i + 1..]);
        if let Some(f) = family_by_name(name) {
            if matches!(f.param_kind(), ParamKind::Cutoffs | ParamKind::Fractions)
                && !rest.is_empty()
                && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            {
                return Measure::with_params(f, rest).map(Some);
            }
        }
    }
    Ok(None)
}

/// ir_measures / ranx syntax: `Name(opt=v,...)@k` with an optional `-lN` suffix.
fn parse_at_style(s: &str) -> Result<Option<Measure>> {
    let mut rest = s;
    let mut rel_level: Option<i64> = None;
    // ranx level suffix: map@100-l2
    if let Some(pos) = rest.rfind("-l") {
        let lvl = &rest[pos + 2..];
        if !lvl.is_empty() && lvl.bytes().all(|b| b.is_ascii_digit()) {
            rel_level = Some(
                lvl.parse()
                    .map_err(|_| Error::Measure(format!("bad relevance level in '{s}'")))?,
            );
            rest = &rest[..pos];
        }
    }
    let (head, cut) = match rest.split_once('@') {
        Some((h, c)) => (h, Some(c)),
        None => (rest, None),
    };
    let (base, opts) = match head.split_once('(') {
        Some((b, o)) => {
            let o = o.strip_suffix(')').ok_or_else(|| {
                Error::Measure(format!("'{s}': unbalanced parenthesis in measure options"))
            })?;
            (b, Some(o))
        }
        None => (head, None),
    };
    let mut p: Option<f64> = None;
    let mut fam_opts: Vec<(String, f64)> = Vec::new();
    let mut exp_gain = false;
    if let Some(opts) = opts {
        for opt in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let (k, v) = opt.split_once('=').ok_or_else(|| {
                Error::Measure(format!(
                    "'{s}': option '{opt}' is not of the form name=value"
                ))
            })?;
            let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
            match k.trim() {
                "rel" => {
                    let l: i64 = v.parse().map_err(|_| {
                        Error::Measure(format!("'{s}': rel must be a whole number, got '{v}'"))
                    })?;
                    if l < 0 {
                        return Err(Error::Measure(format!(
                            "'{s}': relevance level rel={l} must be 0 or more; negative labels \
                             mean 'pooled but unjudged' and can never be relevant"
                        )));
                    }
                    rel_level = Some(l);
                }
                "p" => {
                    p = Some(parse_number(v).ok_or_else(|| {
                        Error::Measure(format!("'{s}': p must be a number, got '{v}'"))
                    })?)
                }
                "dcg" => match v {
                    "exp-log2" => exp_gain = true,
                    "log2" => {}
                    _ => {
                        return Err(Error::Measure(format!(
                            "'{s}': dcg must be 'log2' or 'exp-log2', got '{v}'"
                        )))
                    }
                },
                k if matches!(k, "beta" | "gmax" | "b" | "ideal_all")
                    || (k.len() > 1
                        && k.starts_with('g')
                        && k[1..].bytes().all(|b| b.is_ascii_digit())) =>
                {
                    let x = parse_number(v).ok_or_else(|| {
                        Error::Measure(format!("'{s}': {k} must be a number, got '{v}'"))
                    })?;
                    fam_opts.push((k.to_string(), x));
                }
                other => {
                    return Err(Error::Measure(format!(
                        "'{s}': option '{other}' is not supported (supported: rel; p for RBP; \
                         dcg for nDCG; beta for F; gmax for ERR/nERR; b for dcg_jk)"
                    )))
                }
            }
        }
    }
    let cut_text = match cut {
        Some("") => {
            return Err(Error::Measure(format!("'{s}': nothing after '@'")));
        }
        c => c,
    };
    use Family::*;
    // (family without cut-off, family with cut-off)
    let (plain, with_cut): (Option<Family>, Option<Family>) = match base {
        "P" | "precision" => (None, Some(P)),
        "R" | "recall" => (None, Some(Recall)),
        "AP" | "map" => (Some(Map), Some(MapCut)),
        "RR" | "mrr" | "recip_rank" => (Some(RecipRank), Some(RecipRankCut)),
        "nDCG" | "ndcg" if exp_gain => (Some(NdcgBurges), Some(NdcgBurgesCut)),
        "nDCG" | "ndcg" if !fam_opts.is_empty() => (Some(NdcgGain), Some(NdcgGainCut)),
        "nDCG" | "ndcg" => (Some(Ndcg), Some(NdcgCut)),
        "ndcg_burges" | "nDCG_burges" => (Some(NdcgBurges), Some(NdcgBurgesCut)),
        "dcg" | "DCG" => (Some(Dcg), Some(DcgCut)),
        "dcg_burges" | "DCG_burges" => (Some(DcgBurges), Some(DcgBurgesCut)),
        "dcg_jk" | "DCG_jk" => (None, Some(DcgJk)),
        "hits" | "Hits" => (None, Some(Hits)),
        "f1" | "F1" | "F" | "f" => (None, Some(FCut)),
        "ERR" => {
            // ir_measures' ERR is gdeval.pl's, whose maximum grade is fixed at 4.
            if !fam_opts.iter().any(|(k, _)| k == "gmax") {
                fam_opts.push(("gmax".into(), 4.0));
            }
            (None, Some(ErrCut))
        }
        "err" => (None, Some(ErrCut)),
        "nERR" | "nerr" => (None, Some(NerrCut)),
        "Judged" | "judged" => (None, Some(Judged)),
        "relative_map" | "relative_AP" => (None, Some(RelativeMapCut)),
        "RBP" | "rbp" if rel_level.is_some() => (Some(RbpBin), None),
        "lr+" | "LR+" => (None, Some(LrPos)),
        "lr-" | "LR-" => (None, Some(LrNeg)),
        "TPR" | "sensitivity" => (None, Some(Tpr)),
        "TNR" | "specificity" => (None, Some(Tnr)),
        "PPV" => (None, Some(Ppv)),
        "NPV" => (None, Some(Npv)),
        "FPR" => (None, Some(Fpr)),
        "FNR" => (None, Some(Fnr)),
        "FDR" => (None, Some(Fdr)),
        "FOR" => (None, Some(FalseOmissionRate)),
        "MCC" => (None, Some(Mcc)),
        "DOR" => (None, Some(DiagnosticOddsRatio)),
        "Rprec" | "r-precision" | "r_precision" | "R-Prec" => (Some(Rprec), None),
        "Bpref" | "bpref" => (Some(Bpref), None),
        "Success" | "hit_rate" | "success" => (None, Some(Success)),
        "infAP" | "InfAP" => (Some(InfAP), None),
        "NumRet" => (Some(NumRet), None),
        "NumRel" => (Some(NumRel), None),
        "NumRelRet" => (Some(NumRelRet), None),
        "NumQ" => (Some(NumQ), None),
        "SetP" => (Some(SetP), None),
        "SetR" => (Some(SetRecall), None),
        "SetF" => (Some(SetF), None),
        "SetAP" => (Some(SetMap), None),
        "IPrec" => (None, Some(IprecAtRecall)),
        "RBP" | "rbp" => (Some(Rbp), None),
        _ => {
            // ranx rbp.95 -> p = 0.95
            if let Some(digits) = base.strip_prefix("rbp.") {
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    let pv: f64 = format!("0.{digits}").parse().unwrap_or(0.9);
                    p = Some(pv);
                    (Some(Rbp), None)
                } else {
                    return Ok(None);
                }
            } else if let Some(f) = family_by_name(base) {
                // any family by its canonical name: `tpr@10`, `fallout@100`
                if matches!(f.param_kind(), ParamKind::Cutoffs | ParamKind::Fractions) {
                    (None, Some(f))
                } else if f.param_kind() == ParamKind::None {
                    (Some(f), None)
                } else {
                    return Ok(None);
                }
            } else {
                return Ok(None);
            }
        }
    };
    let mut m = match (cut_text, plain, with_cut) {
        (Some(c), _, Some(f)) => Measure::with_params(f, c)?,
        (None, Some(f), _) => Measure::new(f),
        (None, None, Some(f)) => {
            return Err(Error::Measure(format!(
                "'{s}' needs a cut-off, e.g. '{base}@10' (or trec_eval's '{}')",
                f.name()
            )))
        }
        (Some(_), _, None) => {
            return Err(Error::Measure(format!(
                "'{s}': '{base}' takes no @ cut-off"
            )))
        }
        (None, None, None) => return Ok(None),
    };
    if let Some(pv) = p {
        match m.family {
            Rbp => m = Measure::with_params(Rbp, &format!("p={}", fmt_num(pv)))?,
            RbpBin => fam_opts.push(("p".into(), pv)),
            _ => return Err(Error::Measure(format!("'{s}': p applies to RBP only"))),
        }
    }
    if exp_gain && !matches!(m.family, NdcgBurges | NdcgBurgesCut) {
        return Err(Error::Measure(format!("'{s}': dcg applies to nDCG only")));
    }
    m.set_opts(fam_opts)?;
    m.rel_level = rel_level;
    Ok(Some(m))
}

fn fmt_num(x: f64) -> String {
    let s = format!("{x}");
    s
}

/// Every name the parser knows, for suggestions.
fn known_names() -> Vec<String> {
    let mut v: Vec<String> = Family::ALL.iter().map(|f| f.name().to_string()).collect();
    v.extend(
        [
            "official",
            "all_trec",
            "set",
            "P@10",
            "R@100",
            "AP",
            "AP@100",
            "RR",
            "RR@10",
            "nDCG",
            "nDCG@10",
            "Bpref",
            "Success@10",
            "NumRet",
            "NumRel",
            "NumRelRet",
            "NumQ",
            "SetP",
            "SetR",
            "SetF",
            "IPrec@0.5",
            "RBP(p=0.8)",
            "precision@10",
            "recall@100",
            "mrr",
            "mrr@10",
            "ndcg@10",
            "hit_rate@10",
            "r-precision",
            "map@100",
            "P_10",
            "ndcg_cut_10",
            "map_cut_100",
            "hits@10",
            "f1@10",
            "F(beta=0.5)@10",
            "dcg@10",
            "dcg_burges@10",
            "ndcg_burges@10",
            "ERR@10",
            "nERR@10",
            "Judged@10",
            "err_cut_10",
            "judged_10",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    v
}

fn unknown(s: &str) -> Error {
    let base: String = s
        .split(['@', '.', '('])
        .next()
        .unwrap_or(s)
        .to_ascii_lowercase();
    let mut scored: Vec<(usize, String)> = known_names()
        .into_iter()
        .map(|n| {
            let nb = n
                .split(['@', '.', '('])
                .next()
                .unwrap_or(&n)
                .to_ascii_lowercase();
            (edit_distance(&base, &nb), n)
        })
        .collect();
    scored.sort();
    let close: Vec<String> = scored
        .iter()
        .filter(|(d, _)| *d <= 3)
        .take(4)
        .map(|(_, n)| format!("'{n}'"))
        .collect();
    if close.is_empty() {
        Error::Measure(format!(
            "unknown measure '{s}'; see irmetrics.measures() for the list"
        ))
    } else {
        Error::Measure(format!(
            "unknown measure '{s}'; did you mean {}?",
            close.join(", ")
        ))
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
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
        assert_eq!(cols("ERR@10"), ["err_cut_10(gmax=4)"]);
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
    fn errors_suggest() {
        let e = parse_measure("ndgc@10").unwrap_err().to_string();
        assert!(e.contains("ndcg"), "{e}");
        assert!(parse_measure("P.0").is_err());
        assert!(parse_measure("P.5,5").is_err());
        assert!(parse_measure("P@").is_err());
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
        assert_eq!(c, ["rbp_p=0.5", "rbp_p=0.9"]);
        let req: Vec<usize> = set.requests().iter().map(|(_, cols)| cols[0].0).collect();
        assert_eq!(req, [0, 1, 0]);
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
    }
}
