//! The catalogue of measure families, as data: each family's canonical (trec_eval)
//! name, parameter kind, default parameters, how its `all` value is formed, whether its
//! values are counts, and a one-line definition; trec_eval's nicknames (`official`,
//! `set`, `all_trec`); and the table of ir_measures / ranx aliases (`nDCG`, `AP`,
//! `mrr`, ...). The parser (`parse.rs`) reads these tables; it holds no names of its own.

use crate::stats::Statistic;

/// The kind of judgments a family is computed from ([`Family::judgments`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgmentKind {
    /// Any: the family does not look at judgments (runid, num_q).
    Any,
    /// Graded relevance labels: qrels (`-R qrels`).
    Qrels,
    /// Preferences between documents (`-R prefs` or `-R qrels_prefs`).
    Prefs,
    /// Qrels in judgment groups (`-R qrels_jg`).
    Groups,
}

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

/// The values a numeric measure parameter may take. Every parameter of every family
/// has one ([`Family::params`]); `Measure::check` (parse.rs) tests each value against
/// it, whatever the spelling (`set_F.0.5`, `SetF`, `F(beta=0.5)@10`) or route (command
/// line, Python, Rust). Every domain holds finite numbers only: NaN and infinities are
/// never a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Any finite number (utility's coefficients).
    Finite,
    /// A gain: a number from -2^53 to 2^53 ([`MAX_GAIN`]).
    Gain,
    /// A number >= 0.
    NonNegative,
    /// A number > 0.
    Positive,
    /// A number from 0 to 1, both included.
    Unit,
    /// A number strictly between 0 and 1.
    OpenUnit,
    /// A number > 1.
    AboveOne,
    /// 0 or 1.
    Flag,
    /// A whole number from 0 to the bound.
    WholeUpTo(u32),
    /// A number > 0 and <= 1 (sklearn's `max_fpr`).
    UnitAboveZero,
}

/// The largest power of two a double holds is 2^1023: the largest exponent (grade,
/// label) exponential gains may raise 2 to.
pub const MAX_EXPONENT: u32 = (f64::MAX_EXP - 1) as u32;

/// The largest gain a user may give a label (2^53, the largest integer a double holds
/// exactly): every sum of gains over a ranking (DCG, RBP, an unjudged document's gain
/// repeated down the ranking) then stays finite, since no ranking has 2^970 documents.
pub const MAX_GAIN: f64 = 9_007_199_254_740_992.0;

impl Domain {
    /// Whether `x` lies in the domain.
    pub fn contains(self, x: f64) -> bool {
        x.is_finite()
            && match self {
                Domain::Finite => true,
                Domain::Gain => x.abs() <= MAX_GAIN,
                Domain::NonNegative => x >= 0.0,
                Domain::Positive => x > 0.0,
                Domain::Unit => (0.0..=1.0).contains(&x),
                Domain::OpenUnit => x > 0.0 && x < 1.0,
                Domain::AboveOne => x > 1.0,
                Domain::Flag => x == 0.0 || x == 1.0,
                Domain::WholeUpTo(hi) => x >= 0.0 && x <= f64::from(hi) && x.fract() == 0.0,
                Domain::UnitAboveZero => x > 0.0 && x <= 1.0,
            }
    }

    /// The domain in words, for errors and the README ("a number from 0 to 1").
    pub fn describe(self) -> String {
        match self {
            Domain::Finite => "a finite number".into(),
            Domain::Gain => "a number from -2^53 to 2^53".into(),
            Domain::NonNegative => "a number >= 0".into(),
            Domain::Positive => "a number > 0".into(),
            Domain::Unit => "a number from 0 to 1".into(),
            Domain::OpenUnit => "a number strictly between 0 and 1".into(),
            Domain::AboveOne => "a number > 1".into(),
            Domain::Flag => "0 or 1".into(),
            Domain::WholeUpTo(hi) => format!("a whole number from 0 to {hi}"),
            Domain::UnitAboveZero => "a number > 0 and <= 1".into(),
        }
    }
}

/// One numeric parameter of a family: its name and its [`Domain`]. A list parameter
/// (`iprec_at_recall.0.1,0.5`, `utility.1,-1,0,0`) is named by what each value is
/// ("recall level"); a `name=value` pair or option by its name (`p`, `beta`); `gain`
/// stands for trec_eval's `level=gain` pairs (`ndcg.2=3`) and `gN` for the gain options
/// (`g2=1.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name.
    pub name: &'static str,
    /// Its values.
    pub domain: Domain,
}

/// A [`Param`] literal (a constant the tables can borrow for `'static`).
macro_rules! param {
    ($name:literal, $domain:expr) => {
        Param {
            name: $name,
            domain: $domain,
        }
    };
}

/// A family's `all` statistic as written in the table: `None` for families with no
/// `all` value to compute (runid is printed from the run, relstring is per query only).
macro_rules! summary {
    (None) => {
        None
    };
    ($stat:ident) => {
        Some(Statistic::$stat)
    };
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

            /// How the per-query values make the `all` value (None: no computed `all`
            /// value; runid prints the run's tag, relstring has none).
            pub fn summary_statistic(self) -> Option<Statistic> { match self { $(Family::$variant => summary!($agg),)* } }

            /// Whether values are integer counts (printed without decimals).
            pub fn is_integer(self) -> bool { match self { $(Family::$variant => $int,)* } }

            /// One-line definition.
            pub fn doc(self) -> &'static str { match self { $(Family::$variant => $doc,)* } }
        }
    };
}

families! {
    RunId => "runid", None, [], None, false, "Run tag (last tag of the run file).";
    NumQ => "num_q", None, [], Count, true, "Number of queries evaluated.";
    NumRet => "num_ret", None, [], Sum, true, "Number of documents retrieved.";
    NumRel => "num_rel", None, [], Sum, true, "Number of relevant documents judged.";
    NumRelRet => "num_rel_ret", None, [], Sum, true, "Number of relevant documents retrieved.";
    Map => "map", None, [], Mean, false, "Mean average precision: sum of precision at each relevant retrieved document / number of relevant.";
    GmMap => "gm_map", None, [], GeoMean, false, "Geometric mean of average precision (values floored at 1e-5).";
    Rprec => "Rprec", None, [], Mean, false, "Precision after R documents, R = number of relevant.";
    Bpref => "bpref", None, [], Mean, false, "Binary preference: fraction of the top R judged non-relevant ranked after each relevant document.";
    RecipRank => "recip_rank", None, [], Mean, false, "Reciprocal rank of the first relevant document.";
    IprecAtRecall => "iprec_at_recall", Fractions, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], Mean, false, "Interpolated precision at recall levels (trec_eval 10: the level x is the rank of the round(x R)-th relevant document; option trec_eval9=1: trec_eval 9's (long)(x R + 0.9), as pytrec_eval and ranx).";
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
    Dcg => "dcg", Pairs, [], Mean, false, "DCG, trec_eval 10's dcg: sum of gain / log2(rank + 1) over the whole ranking, the gains the labels (labels <= 0 gain 0) or trec_eval's level=gain pairs (dcg.1=3,2=9), or gN options (dcg(g2=1.5)).";
    IdealDcg => "ideal_dcg", Pairs, [], Mean, false, "Ideal DCG (trec_eval 10's ideal_dcg): the DCG of the query's judged documents in decreasing gain order, ndcg's denominator; gains as ndcg's (ideal_dcg.1=3,2=9).";
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
    // ---- preference judgments (-R prefs, -R qrels_prefs; rel_info/prefs.rs) ----
    PrefsNumPrefsPoss => "prefs_num_prefs_poss", None, [], Sum, true, "Preferences possible, whether or not their documents are retrieved (sum over queries).";
    PrefsNumPrefsFul => "prefs_num_prefs_ful", None, [], Sum, true, "Preferences fulfilled, implied ones included (only one of the two documents retrieved, above the other) (sum).";
    PrefsNumPrefsFulRet => "prefs_num_prefs_ful_ret", None, [], Sum, true, "Preferences fulfilled between two retrieved documents (sum).";
    PrefsSimp => "prefs_simp", None, [], Mean, false, "Preferences fulfilled / preferences possible (a preference between two unretrieved documents counts as failed).";
    PrefsPair => "prefs_pair", None, [], Mean, false, "Average over document pairs of the fraction of the judgment groups' preferences on the pair that the ranking fulfils.";
    PrefsAvgjg => "prefs_avgjg", None, [], Mean, false, "prefs_simp within each judgment group, averaged over the groups.";
    PrefsAvgjgRnonrel => "prefs_avgjg_Rnonrel", None, [], Mean, false, "prefs_avgjg with each group's non-relevant documents (level 0) cut or padded to its number of relevant ones, R (akin to bpref).";
    PrefsSimpRet => "prefs_simp_ret", None, [], Mean, false, "prefs_simp over preferences between two retrieved documents only.";
    PrefsPairRet => "prefs_pair_ret", None, [], Mean, false, "prefs_pair over pairs of two retrieved documents only.";
    PrefsAvgjgRet => "prefs_avgjg_ret", None, [], Mean, false, "prefs_avgjg over preferences between two retrieved documents only.";
    PrefsAvgjgRnonrelRet => "prefs_avgjg_Rnonrel_ret", None, [], Mean, false, "prefs_avgjg_Rnonrel over retrieved documents only.";
    PrefsSimpImp => "prefs_simp_imp", None, [], Mean, false, "prefs_simp ignoring preferences whose two documents are both unretrieved.";
    PrefsPairImp => "prefs_pair_imp", None, [], Mean, false, "prefs_pair ignoring pairs whose two documents are both unretrieved.";
    PrefsAvgjgImp => "prefs_avgjg_imp", None, [], Mean, false, "prefs_avgjg ignoring preferences whose two documents are both unretrieved.";
    // ---- judgment groups (-R qrels_jg; rel_info/jg.rs) ----
    MapAvgjg => "map_avgjg", None, [], Mean, false, "map of each judgment group's judgments, averaged over the query's groups.";
    PAvgjg => "P_avgjg", Cutoffs, [5, 10, 15, 20, 30, 100, 200, 500, 1000], Mean, false, "P at cut-off k of each judgment group, averaged over the query's groups.";
    RprecMultAvgjg => "Rprec_mult_avgjg", Fractions, [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0], Mean, false, "Rprec_mult of each judgment group, averaged over the query's groups.";
    Yaap => "yaap", None, [], Mean, false, "Yet another average precision (Robertson 2012; trec_eval 10's yaap): ln((1 + S) / (1 + R - S)), S the sum of precision at each relevant retrieved document (AP's numerator), R the number of relevant; monotonic with AP on a query, finite at both ends, so averages across queries better.";
    Rbp => "rbp", Pairs, [], Mean, false, "Rank-biased precision (p = 0.9 by default), gains rescaled to [0, 1].";
    RbpResid => "rbp_resid", Pairs, [], Mean, false, "RBP residual: the most RBP can rise if every unjudged document were relevant.";
    Unj => "unj", Cutoffs, [5, 10, 20], Mean, false, "Fraction of unjudged documents in the top k.";
    // ---- beyond trec_eval ----
    RecipRankCut => "recip_rank_cut", Cutoffs, [10], Mean, false, "Reciprocal rank of the first relevant document within the top k (0 if none).";
    Hits => "hits", Cutoffs, [1, 5, 10], Mean, false, "Number of relevant documents in the top k (ranx hits@k).";
    FCut => "F_cut", Cutoffs, [5, 10], Mean, false, "F-measure of the top k: (1+b^2) P@k R@k / (b^2 P@k + R@k), 0 when no relevant document is retrieved; option beta (b, default 1: F1).";
    RelativeMapCut => "relative_map_cut", Cutoffs, [10, 100], Mean, false, "Average precision over the top k divided by min(R, k) instead of R (the convention of some libraries).";
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
    RbpLabel => "rbp_label", None, [], Mean, false, "Rank-biased precision with the labels as gains: (1 - p) sum of label * p^(rank-1) over relevant documents (label >= the relevance level), labels not rescaled; p = 0.9 by default (ranx rbp.X).";
    SetHits => "set_hits", None, [], Mean, false, "Relevant documents retrieved, averaged over queries (ranx hits without a cut-off: the whole ranking).";
    SetSuccess => "set_success", None, [], Mean, false, "1 if any relevant document is retrieved, else 0 (ranx hit_rate without a cut-off: the whole ranking).";
    SetJudged => "set_judged", None, [], Mean, false, "Fraction of the retrieved documents that appear in the qrels, any label (ir_measures Judged without a cut-off); 0 for an empty ranking.";
    // ---- issue 17, item 4: compatibility, pairwise accuracy, ROC, search length ----
    Compat => "compat", None, [], Mean, false, "Compatibility (Clarke, Vtyurina and Smucker 2021): rank-biased overlap, truncated at the longer list, of the ranking with the ideal ranking (relevant documents by label, then run score), divided by the ideal's own (options p = 0.95, normalize = 1); ir_measures Compat.";
    PairAccuracy => "pair_accuracy", None, [], Mean, false, "Pairwise accuracy (ir_measures Accuracy): share of the (relevant, non-relevant) pairs of retrieved documents ranked relevant first; 0 when no relevant document is retrieved, 1 when no non-relevant one is.";
    PairAccuracyCut => "pair_accuracy_cut", Cutoffs, [10], Mean, false, "Pairwise accuracy over the top k (ir_measures Accuracy@k).";
    Auroc => "auroc", None, [], Mean, false, "Area under the ROC curve of the retrieved judged documents, run scores against relevance, ties half (sklearn roc_auc_score); option max_fpr: McClish-standardized partial AUC; 0 without a relevant, 1 without a non-relevant judged document retrieved.";
    RecallAtPrecision => "recall_at_precision", Fractions, [0.5], Mean, false, "Highest recall over the score thresholds whose precision is at least x, on the retrieved judged documents (torchmetrics RecallAtFixedPrecision); 0 if none.";
    PrecisionAtRecall => "precision_at_recall", Fractions, [0.5], Mean, false, "Highest precision over the score thresholds whose recall is at least x, on the retrieved judged documents (torchmetrics PrecisionAtFixedRecall); 0 if none.";
    SearchLength => "sl", Cutoffs, [1], Mean, false, "Search length (Cooper 1968) on the ranking: non-relevant documents seen before the k-th relevant one; all non-relevant retrieved when fewer than k relevant are retrieved.";
    ExpectedSearchLength => "esl", Cutoffs, [1], Mean, false, "Expected search length (Cooper 1968): documents of equal score form one level in random order; j + i s / (r + 1) for the level holding the k-th relevant document.";
    // ---- C/W/L user models, as cwl_eval 1.0.12 computes them (metrics/cwl.rs) ----
    CwlP => "cwl_P", Cutoffs, [10], Mean, false, "C/W/L precision at k (cwl_eval P@k): the user reads exactly k documents; EU = sum of the top k gains / k.";
    CwlRr => "cwl_rr", None, [], Mean, false, "C/W/L reciprocal rank (cwl_eval RR): the user stops at the first document with a positive gain.";
    CwlAp => "cwl_ap", None, [], Mean, false, "C/W/L average precision (cwl_eval AP): continuation (sum_{j>i} g_j/j) / (sum_{j>=i} g_j/j); EU is AP over the relevant documents retrieved in the top 1000.";
    CwlRbp => "cwl_rbp", None, [], Mean, false, "C/W/L rank-biased precision (cwl_eval RBP@p): continuation p (option p, default 0.9), weights normalised over the 1000 ranks.";
    Inst => "INST", None, [], Mean, false, "INST (Moffat et al. 2015): continuation ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - gain of the top i; option T (default 1).";
    Insq => "INSQ", None, [], Mean, false, "INSQ (Moffat et al. 2012): continuation ((i + 2T - 1) / (i + 2T))^2; option T (default 1).";
    Bpm => "BPM", Cutoffs, [10], Mean, false, "Bejeweled Player Model, static (Zhang et al. 2017, cwl_eval): the user continues while the gain so far is below T (option, default 1) and fewer than K (the cut-off) documents are read.";
    BpmDynamic => "BPM_dynamic", Cutoffs, [10], Mean, false, "Bejeweled Player Model, dynamic (cwl_eval BPM-Dynamic): BPM whose goal T moves by hb * (gain - gain_med) after each document read (options T, hb, hc, gain_med; hc has no effect in cwl_eval).";
    SdcgCut => "sdcg_cut", Cutoffs, [10], Mean, false, "Scaled DCG at k (cwl_eval NDCG-k): DCG@k / sum_{i<=k} 1/log2(i+1), i.e. DCG with gains in [0, 1] divided by the DCG of k fully relevant documents.";
    Nerr8Cut => "nerr8_cut", Cutoffs, [10], Mean, false, "NERR, eq. 8 (Azzopardi et al. 2021): continuation 1 - g_i up to rank k - 1, then 0.";
    Nerr9Cut => "nerr9_cut", Cutoffs, [10], Mean, false, "NERR, eq. 9 (Azzopardi et al. 2021): continuation i / (i + 1) * (1 - g_i) up to rank k - 1, then 0.";
    Nerr10 => "nerr10", None, [], Mean, false, "NERR, eq. 10 (Azzopardi et al. 2021): continuation p * (1 - g_i) (option p, default 0.9).";
    Nerr11 => "nerr11", None, [], Mean, false, "NERR, eq. 11 (Azzopardi et al. 2021): continuation ((i + 2T - 1) / (i + 2T))^2 * (1 - g_i) (option T, default 1).";
    // ---- relevance and credibility (Lioma, Simonsen and Larsen 2017; metrics/credibility.rs) ----
    Nlre => "nlre", None, [], Mean, false, "Normalised local rank error (Lioma et al. 2017): 1 - LRE / C_LRE, LRE = sum_i ((mu + e^r_i)(nu + e^c_i) - mu nu) / log2(1 + i), e_i the rise (monus) in ideal relevance / credibility rank from rank i to i + 1; options mu, nu (0.5); needs credibility judgments.";
    Ngre => "ngre", None, [], Mean, false, "Normalised global rank error (Lioma et al. 2017): 1 - GRE / C_GRE, GRE = (1 + mu sum_i e^r_i / log2(1 + i)) (1 + nu sum_i e^c_i / log2(1 + i)) - 1; options mu, nu (0.5); needs credibility judgments.";
    Nwcs => "nwcs", None, [], Mean, false, "Normalised weighted cumulative score (Lioma et al. 2017): sum_i (lambda rel_i + (1 - lambda) cred_i) / log2(1 + i), divided by the same of the retrieved documents in ideal order; option lambda (0.5); needs credibility judgments.";
    Cam => "cam", None, [], Mean, false, "Convex aggregating measure (Lioma et al. 2017): lambda M_r + (1 - lambda) M_c, M the measure of option m (ndcg, the default, or map) on the relevance and on the credibility labels; option lambda (0.5).";
    Wham => "wham", None, [], Mean, false, "Weighted harmonic mean aggregating measure (Lioma et al. 2017): 1 / (lambda / M_r + (1 - lambda) / M_c), 0 when M_r or M_c is 0; options m (ndcg or map), lambda (0.5).";
}

impl Family {
    /// Whether the family is one of trec_eval 10's (its name keeps trec_eval's meaning).
    pub fn is_trec_eval(self) -> bool {
        self <= Family::Unj
    }

    /// The judgments the family is computed from: qrels (`-R qrels`, the default),
    /// preferences (`-R prefs` or `-R qrels_prefs`), judgment groups (`-R qrels_jg`), or
    /// any of them (runid, num_q).
    pub fn judgments(self) -> JudgmentKind {
        use Family::*;
        match self {
            RunId | NumQ => JudgmentKind::Any,
            PrefsNumPrefsPoss | PrefsNumPrefsFul | PrefsNumPrefsFulRet | PrefsSimp | PrefsPair
            | PrefsAvgjg | PrefsAvgjgRnonrel | PrefsSimpRet | PrefsPairRet | PrefsAvgjgRet
            | PrefsAvgjgRnonrelRet | PrefsSimpImp | PrefsPairImp | PrefsAvgjgImp => {
                JudgmentKind::Prefs
            }
            MapAvgjg | PAvgjg | RprecMultAvgjg => JudgmentKind::Groups,
            _ => JudgmentKind::Qrels,
        }
    }

    /// Whether the family looks at the run's scores (and the qrels in input order), not
    /// only at the ranking's labels: [`QueryCtx`](crate::metrics::QueryCtx) then holds
    /// them.
    pub fn needs_scores(self) -> bool {
        use Family::*;
        matches!(
            self,
            Compat | Auroc | RecallAtPrecision | PrecisionAtRecall | ExpectedSearchLength
        )
    }

    /// Whether the family reads credibility labels beside the qrels (a second judgment
    /// file, [`Evaluator::new_with_credibility`](crate::Evaluator::new_with_credibility)).
    pub fn needs_credibility(self) -> bool {
        use Family::*;
        matches!(self, Nlre | Ngre | Nwcs | Cam | Wham)
    }

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

    /// The numeric parameters of the family with their domains, as data: the list
    /// parameter of a fraction or number family first (its values' name), then its
    /// `name=value` pairs and named options. Cut-offs (positive whole numbers) are not
    /// listed: the grammar reads them as such. The choices follow trec_eval's and
    /// ir_measures' definitions; the README's "Measures" section gives the reasons.
    pub fn params(self) -> &'static [Param] {
        use Domain::*;
        use Family::*;
        match self {
            // recall levels: recall lies in [0, 1]; a level above 1 is never reached
            // trec_eval9=1: a level's rank as trec_eval 9 (pytrec_eval, ranx) computes it
            IprecAtRecall | Pt11Avg => &[param!("recall level", Unit), param!("trec_eval9", Flag)],
            Iprec => &[param!("recall level", Unit)],
            // trec_eval's R-multiples: a negative multiple is a rank below 1
            RprecMult | RprecMultAvgjg => &[param!("multiple of R", NonNegative)],
            // how many documents relstring shows
            Relstring => &[param!("length", NonNegative)],
            // a*relret + b*nonrelret + c*relnotret + d*nonrelnotret: any weights
            Utility => &[param!("coefficient", Finite)],
            // trec_eval's set_F: (1+b)PR / (bP + R), b >= 0 (a negative b gives
            // negative values, or 0/0 = NaN when P = R)
            SetF => &[param!("beta", NonNegative)],
            // trec_eval's level=gain pairs: sums of gains must stay finite
            G | Ndcg | NdcgRel | Rndcg | IdealDcg => &[param!("gain", Gain)],
            // RBP's persistence: p = 0 sees one document, p = 1 never stops
            Rbp | RbpResid => &[param!("p", OpenUnit), param!("gain", Gain)],
            RbpBin | RbpLabel => &[param!("p", OpenUnit)],
            // F_cut's (1+b^2)PR / (b^2 P + R): b and -b would be the same measure
            FCut => &[param!("beta", NonNegative)],
            // ERR's maximum grade: a whole number, 2^gmax finite
            ErrCut | NerrCut => &[param!("gmax", WholeUpTo(MAX_EXPONENT))],
            // Jarvelin-Kekalainen's log base: log_b needs b > 1
            DcgJk => &[param!("b", AboveOne)],
            // dcg: trec_eval's level=gain pairs, or the gN options of dcg_cut
            Dcg => &[param!("gain", Gain), param!("gN", Gain)],
            DcgCut => &[param!("gN", Gain)],
            NdcgGain | NdcgGainCut => &[param!("gN", Gain), param!("ideal_all", Flag)],
            // Compat's persistence (ir_measures takes any; p = 1 weighs every depth alike)
            Compat => &[param!("p", Unit), param!("normalize", Flag)],
            // sklearn's max_fpr: 0 < max_fpr <= 1
            Auroc => &[param!("max_fpr", UnitAboveZero)],
            // a precision or recall to reach
            RecallAtPrecision => &[param!("min precision", Unit)],
            PrecisionAtRecall => &[param!("min recall", Unit)],
            // C/W/L: the gain scale (ir_measures' min_rel, max_rel) and the statistic
            // (0..9: EU, ETU, EC, ETC, ED and their residuals) of every model; INST's and INSQ's goal T > 0
            // keeps their continuation's denominator positive; RBP's p may be 0 or 1
            // (cwl_eval normalises over its 1000 ranks)
            CwlP | CwlRr | CwlAp | SdcgCut | Nerr8Cut | Nerr9Cut => CWL_COMMON,
            Bpm => &[
                param!("T", NonNegative),
                param!("min_rel", Finite),
                param!("max_rel", Finite),
                param!("stat", WholeUpTo(9)),
            ],
            CwlRbp | Nerr10 => &[
                param!("p", Unit),
                param!("min_rel", Finite),
                param!("max_rel", Finite),
                param!("stat", WholeUpTo(9)),
            ],
            Inst | Insq | Nerr11 => &[
                param!("T", Positive),
                param!("min_rel", Finite),
                param!("max_rel", Finite),
                param!("stat", WholeUpTo(9)),
            ],
            BpmDynamic => &[
                param!("T", NonNegative),
                param!("hb", Finite),
                param!("hc", Finite),
                param!("gain_med", Finite),
                param!("min_rel", Finite),
                param!("max_rel", Finite),
                param!("stat", WholeUpTo(9)),
            ],
            // the weights of the relevance and credibility errors (Lioma et al.: mu,
            // nu >= 0, mu + nu > 0, checked in parse.rs); lambda weighs relevance
            Nlre | Ngre => &[param!("mu", NonNegative), param!("nu", NonNegative)],
            Nwcs => &[param!("lambda", Unit)],
            // m: the aggregated measure, by number (CAM_MEASURES)
            Cam | Wham => &[param!("lambda", Unit), param!("m", WholeUpTo(1))],
            _ => &[],
        }
    }

    /// Whether the family is a C/W/L user model (`metrics/cwl.rs`).
    pub fn is_cwl(self) -> bool {
        use Family::*;
        matches!(
            self,
            CwlP | CwlRr
                | CwlAp
                | CwlRbp
                | Inst
                | Insq
                | Bpm
                | BpmDynamic
                | SdcgCut
                | Nerr8Cut
                | Nerr9Cut
                | Nerr10
                | Nerr11
        )
    }

    /// The parameter called `name` (see [`Family::params`]).
    pub fn param(self, name: &str) -> Option<Param> {
        self.params().iter().copied().find(|p| p.name == name)
    }

    /// The named options the family takes (`F_cut(beta=0.5)`); `gN` stands for the gain
    /// of label N (`g2=1.5`).
    pub fn options(self) -> &'static [&'static str] {
        use Family::*;
        match self {
            FCut => &["beta"],
            ErrCut | NerrCut => &["gmax"],
            IprecAtRecall | Pt11Avg => &["trec_eval9"],
            DcgJk => &["b"],
            RbpBin | RbpLabel => &["p"],
            Dcg | DcgCut => &["gN"],
            NdcgGain | NdcgGainCut => &["gN", "ideal_all"],
            Compat => &["p", "normalize"],
            Auroc => &["max_fpr"],
            Nlre | Ngre => &["mu", "nu"],
            Nwcs => &["lambda"],
            Cam | Wham => &["lambda", "m"],
            // the options of a C/W/L model are its parameters
            f if f.is_cwl() => CWL_OPTIONS
                .iter()
                .find(|(fs, _)| fs.contains(&f))
                .map_or(&[], |(_, names)| *names),
            _ => &[],
        }
    }
}

/// The parameters every C/W/L model shares: the gain scale and the statistic.
const CWL_COMMON: &[Param] = &[
    param!("min_rel", Domain::Finite),
    param!("max_rel", Domain::Finite),
    param!("stat", Domain::WholeUpTo(9)),
];

/// The number of ranks cwl_eval's C/W/L models look at (its `--max_depth`, and
/// ir_measures' provider's): a ranking is cut there or padded with gain 0.
pub const CWL_DEPTH: usize = 1000;

/// The statistics of a C/W/L model, by the number of its `stat` option (cwl_eval's
/// columns): expected utility per document read (the rate), expected total utility,
/// expected cost per document, expected total cost, expected depth (documents read);
/// then their residuals (cwl_eval's `-r`): how much each rises if every document
/// absent from the qrels, and every rank beyond the ranking, gained 1.
pub const CWL_STATS: [&str; 10] = [
    "EU", "ETU", "EC", "ETC", "ED", "ResEU", "ResETU", "ResEC", "ResETC", "ResED",
];

/// The measures CAM and WHAM aggregate (option `m`, by number): trec_eval's `ndcg`
/// (the labels as gains, ideal over all judged documents) and `map`.
pub const CAM_MEASURES: [&str; 2] = ["ndcg", "map"];

/// The number of a measure CAM and WHAM aggregate (`map`: 1), whatever its case.
pub(super) fn cam_measure(text: &str) -> Option<f64> {
    CAM_MEASURES
        .iter()
        .position(|n| n.eq_ignore_ascii_case(text))
        .map(|i| i as f64)
}

/// The number of a C/W/L statistic's name (`ETU`: 1), whatever its case, or a number
/// written as such (`1`).
pub(super) fn cwl_stat(text: &str) -> Option<f64> {
    CWL_STATS
        .iter()
        .position(|n| n.eq_ignore_ascii_case(text))
        .map(|i| i as f64)
}

/// The option names of the C/W/L models (the names of their [`Family::params`]).
const CWL_OPTIONS: &[(&[Family], &[&str])] = {
    use Family::*;
    &[
        (
            &[CwlP, CwlRr, CwlAp, SdcgCut, Nerr8Cut, Nerr9Cut],
            &["min_rel", "max_rel", "stat"],
        ),
        (&[CwlRbp, Nerr10], &["p", "min_rel", "max_rel", "stat"]),
        (
            &[Inst, Insq, Nerr11, Bpm],
            &["T", "min_rel", "max_rel", "stat"],
        ),
        (
            &[BpmDynamic],
            &["T", "hb", "hc", "gain_med", "min_rel", "max_rel", "stat"],
        ),
    ]
};

/// trec_eval's `all_prefs`: runid, num_q and every preference measure.
const ALL_PREFS: &[Family] = {
    use Family::*;
    &[
        RunId,
        NumQ,
        PrefsNumPrefsPoss,
        PrefsNumPrefsFul,
        PrefsNumPrefsFulRet,
        PrefsSimp,
        PrefsPair,
        PrefsAvgjg,
        PrefsAvgjgRnonrel,
        PrefsSimpRet,
        PrefsPairRet,
        PrefsAvgjgRet,
        PrefsAvgjgRnonrelRet,
        PrefsSimpImp,
        PrefsPairImp,
        PrefsAvgjgImp,
    ]
};

/// trec_eval's nicknames: a name for a list of families.
pub(super) const NICKNAMES: &[(&str, &[Family])] = {
    use Family::*;
    &[
        (
            "official",
            &[
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
            ],
        ),
        (
            "set",
            &[
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
            ],
        ),
        ("all_prefs", ALL_PREFS),
        // trec_eval's `prefs`: the first eight of `all_prefs`
        ("prefs", ALL_PREFS.split_at(8).0),
        ("qrels_jg", &[RunId, NumQ, MapAvgjg, PAvgjg, RprecMultAvgjg]),
        (
            "all_trec",
            &[
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
            ],
        ),
    ]
};

/// The families of a trec_eval nickname (`official`, `set`, `all_trec`).
pub fn nickname(name: &str) -> Option<&'static [Family]> {
    NICKNAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, families)| *families)
}

/// The family with this canonical name, whatever its letter case (`MAP` is map): no
/// two families' names differ only in case.
pub(super) fn family_by_name(name: &str) -> Option<Family> {
    Family::ALL
        .iter()
        .copied()
        .find(|f| f.name().eq_ignore_ascii_case(name))
}

/// An ir_measures or ranx name for a family: the family it means without a cut-off
/// (`AP`: map) and with one (`AP@100`: map_cut).
pub(super) struct Alias {
    /// The spellings.
    pub names: &'static [&'static str],
    /// The family without `@k`, if the name may be used so.
    pub plain: Option<Family>,
    /// The family with `@k`, if the name takes a cut-off.
    pub with_cut: Option<Family>,
}

const fn alias(
    names: &'static [&'static str],
    plain: Option<Family>,
    with_cut: Option<Family>,
) -> Alias {
    Alias {
        names,
        plain,
        with_cut,
    }
}

/// The ir_measures / ranx names, looked up before the canonical names (so `map@100` is
/// map_cut, not an error). Two refinements depend on options and live in the parser:
/// `nDCG(dcg='exp-log2')` is ndcg_burges, `nDCG(gN=x)` ndcg_gain, and `RBP(rel=N)` is
/// rbp_bin.
pub(super) const ALIASES: &[Alias] = {
    use Family::*;
    &[
        alias(&["P"], None, Some(P)),
        // ranx: without a cut-off, the whole ranking (precision = set_P, f1 = set_F)
        alias(&["precision"], Some(SetP), Some(P)),
        alias(&["R", "recall"], None, Some(Recall)),
        alias(&["AP", "map"], Some(Map), Some(MapCut)),
        alias(
            &["RR", "mrr", "recip_rank"],
            Some(RecipRank),
            Some(RecipRankCut),
        ),
        alias(&["nDCG", "ndcg"], Some(Ndcg), Some(NdcgCut)),
        alias(&["ndcg_burges"], Some(NdcgBurges), Some(NdcgBurgesCut)),
        alias(&["dcg"], Some(Dcg), Some(DcgCut)),
        alias(&["dcg_burges"], Some(DcgBurges), Some(DcgBurgesCut)),
        alias(&["dcg_jk"], None, Some(DcgJk)),
        alias(&["hits"], None, Some(Hits)),
        alias(&["f1"], Some(SetF), Some(FCut)),
        alias(&["F"], None, Some(FCut)),
        // one meaning whatever the case: gmax = the largest label of the qrels
        // (ir_measures' gdeval gmax = 4 is `ERR(gmax=4)@k`, or names="ir_measures")
        alias(&["ERR"], None, Some(ErrCut)),
        alias(&["nERR"], None, Some(NerrCut)),
        alias(&["Judged"], Some(SetJudged), Some(Judged)),
        alias(&["relative_map", "relative_AP"], None, Some(RelativeMapCut)),
        alias(&["lr+"], None, Some(LrPos)),
        alias(&["lr-"], None, Some(LrNeg)),
        alias(&["TPR", "sensitivity"], None, Some(Tpr)),
        alias(&["TNR", "specificity"], None, Some(Tnr)),
        alias(&["PPV"], None, Some(Ppv)),
        alias(&["NPV"], None, Some(Npv)),
        alias(&["FPR"], None, Some(Fpr)),
        alias(&["FNR"], None, Some(Fnr)),
        alias(&["FDR"], None, Some(Fdr)),
        alias(&["FOR"], None, Some(FalseOmissionRate)),
        alias(&["MCC"], None, Some(Mcc)),
        alias(&["DOR"], None, Some(DiagnosticOddsRatio)),
        alias(
            &["Rprec", "r-precision", "r_precision", "R-Prec"],
            Some(Rprec),
            None,
        ),
        alias(&["Bpref"], Some(Bpref), None),
        alias(&["Success"], None, Some(Success)),
        // ranx: without a cut-off, the whole ranking
        alias(&["hit_rate"], Some(SetSuccess), Some(Success)),
        alias(&["infAP"], Some(InfAP), None),
        // `NumRet(rel=N)` is num_rel_ret at level N (ir_measures; the parser's `apply`)
        alias(&["NumRet"], Some(NumRet), None),
        alias(&["NumRel"], Some(NumRel), None),
        alias(&["NumRelRet"], Some(NumRelRet), None),
        alias(&["NumQ"], Some(NumQ), None),
        alias(&["SetP"], Some(SetP), None),
        alias(&["SetRelP"], Some(SetRelativeP), None),
        alias(&["SetR"], Some(SetRecall), None),
        alias(&["SetF"], Some(SetF), None),
        alias(&["SetAP"], Some(SetMap), None),
        alias(&["IPrec"], None, Some(IprecAtRecall)),
        alias(&["RBP"], Some(Rbp), None),
        alias(&["Compat"], Some(Compat), None),
        // without a cut-off, ir_measures' pairwise Accuracy; `accuracy@k` stays the
        // confusion-matrix accuracy (`Accuracy@k` is ir_measures' with
        // names="ir_measures", or `pair_accuracy@k`)
        alias(&["Accuracy"], Some(PairAccuracy), Some(Accuracy)),
        alias(
            &["pair_accuracy"],
            Some(PairAccuracy),
            Some(PairAccuracyCut),
        ),
        alias(&["AUROC", "AUC", "roc_auc"], Some(Auroc), None),
        alias(&["RecallAtFixedPrecision"], None, Some(RecallAtPrecision)),
        alias(&["PrecisionAtFixedRecall"], None, Some(PrecisionAtRecall)),
        alias(&["SL", "search_length"], None, Some(SearchLength)),
        alias(
            &["ESL", "expected_search_length"],
            None,
            Some(ExpectedSearchLength),
        ),
        // ir_measures' cwl_eval names (INST, INSQ, BPM, NERR10, NERR11 are the
        // canonical names, whatever the case)
        alias(&["SDCG"], None, Some(SdcgCut)),
        alias(&["NERR8"], None, Some(Nerr8Cut)),
        alias(&["NERR9"], None, Some(Nerr9Cut)),
    ]
};

/// The alias spelled `name`, whatever its letter case (`NDCG`, `ndcg` and `nDCG` are
/// one name with one meaning).
pub(super) fn alias_by_name(name: &str) -> Option<&'static Alias> {
    ALIASES
        .iter()
        .find(|a| a.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
}
