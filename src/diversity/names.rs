//! The names of the diversity measures: ir_measures' (`alpha_nDCG@20`, `ERR_IA@20`,
//! `nERR_IA@20`, `alpha_DCG@20`, `NRBP`, `nNRBP`, `AP_IA`, `P_IA@10`, `StRecall@20`,
//! with options `alpha=`, `beta=`, `rel=`, `judged_only=`, `cutoff=`) and ndeval's
//! column names (`alpha-nDCG@20`, `ERR-IA@20`, `MAP-IA`, `P-IA@10`, `strec@20`), case
//! aside. Options use the measure grammar's pieces (`crate::measure`).

use crate::error::{Error, Result};
use crate::measure::{parse_cutoff, parse_flag, parse_number, parse_rel_option, split_options};

/// A diversity measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// alpha-DCG@k (ndeval's collection-independent normalization).
    AlphaDcg,
    /// alpha-nDCG@k.
    AlphaNdcg,
    /// ERR-IA@k (collection-independent normalization).
    ErrIa,
    /// nERR-IA@k.
    NerrIa,
    /// NRBP (the whole ranking).
    Nrbp,
    /// nNRBP.
    Nnrbp,
    /// Intent-aware average precision (ndeval's MAP-IA per topic).
    ApIa,
    /// Intent-aware precision@k.
    PIa,
    /// Subtopic recall@k.
    StRecall,
}

impl Kind {
    /// ir_measures' name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AlphaDcg => "alpha_DCG",
            Kind::AlphaNdcg => "alpha_nDCG",
            Kind::ErrIa => "ERR_IA",
            Kind::NerrIa => "nERR_IA",
            Kind::Nrbp => "NRBP",
            Kind::Nnrbp => "nNRBP",
            Kind::ApIa => "AP_IA",
            Kind::PIa => "P_IA",
            Kind::StRecall => "StRecall",
        }
    }

    /// Whether the measure is taken at a cut-off (the others read the whole ranking).
    pub fn has_cutoff(self) -> bool {
        !matches!(self, Kind::Nrbp | Kind::Nnrbp | Kind::ApIa)
    }

    fn uses_alpha(self) -> bool {
        !matches!(self, Kind::ApIa | Kind::PIa | Kind::StRecall)
    }

    fn uses_beta(self) -> bool {
        matches!(self, Kind::Nrbp | Kind::Nnrbp)
    }

    fn by_name(base: &str) -> Option<Kind> {
        Some(match base.to_lowercase().replace('-', "_").as_str() {
            "alpha_dcg" | "α_dcg" => Kind::AlphaDcg,
            "alpha_ndcg" | "α_ndcg" => Kind::AlphaNdcg,
            "err_ia" => Kind::ErrIa,
            "nerr_ia" => Kind::NerrIa,
            "nrbp" => Kind::Nrbp,
            "nnrbp" => Kind::Nnrbp,
            "ap_ia" | "map_ia" => Kind::ApIa,
            "p_ia" => Kind::PIa,
            "strecall" | "strec" | "s_recall" => Kind::StRecall,
            _ => return None,
        })
    }
}

/// ndeval's columns, in its order (its defaults: cut-offs 5, 10 and 20).
pub const NDEVAL_COLUMNS: [&str; 21] = [
    "ERR-IA@5",
    "ERR-IA@10",
    "ERR-IA@20",
    "nERR-IA@5",
    "nERR-IA@10",
    "nERR-IA@20",
    "alpha-DCG@5",
    "alpha-DCG@10",
    "alpha-DCG@20",
    "alpha-nDCG@5",
    "alpha-nDCG@10",
    "alpha-nDCG@20",
    "NRBP",
    "nNRBP",
    "MAP-IA",
    "P-IA@5",
    "P-IA@10",
    "P-IA@20",
    "strec@5",
    "strec@10",
    "strec@20",
];

/// One measure as asked for: the kind, its cut-off and the options given in its name
/// (`None`: the evaluation's).
#[derive(Clone, Debug, PartialEq)]
pub struct DiversityMeasure {
    /// The measure.
    pub kind: Kind,
    /// The cut-off (measures with one).
    pub cutoff: Option<usize>,
    /// Redundancy intolerance.
    pub alpha: Option<f64>,
    /// Patience (NRBP).
    pub beta: Option<f64>,
    /// Relevance level: a label at least this is relevant.
    pub rel: Option<i64>,
    /// Leave out the documents not judged for the query before ranking.
    pub judged_only: Option<bool>,
}

impl DiversityMeasure {
    /// Parse one name (see the module doc).
    pub fn parse(input: &str) -> Result<DiversityMeasure> {
        let s = input.trim();
        let bad = |why: String| Error::Measure(format!("'{s}': {why}"));
        let (head, at) = match s.rsplit_once('@') {
            Some((h, k)) if !k.contains(')') => (h, Some(k)),
            _ => (s, None),
        };
        let (base, opts) = match head.split_once('(') {
            Some((b, rest)) => match rest.strip_suffix(')') {
                Some(o) => (b, Some(o)),
                None => return Err(bad("an option list must end with ')'".into())),
            },
            None => (head, None),
        };
        let kind = Kind::by_name(base.trim()).ok_or_else(|| {
            bad(
                "not a diversity measure (alpha_nDCG@k, alpha_DCG@k, ERR_IA@k, nERR_IA@k, \
                 NRBP, nNRBP, AP_IA, P_IA@k, StRecall@k, or ndeval's alpha-nDCG@k, \
                 ERR-IA@k, MAP-IA, P-IA@k, strec@k)"
                    .to_string(),
            )
        })?;
        let mut m = DiversityMeasure {
            kind,
            cutoff: None,
            alpha: None,
            beta: None,
            rel: None,
            judged_only: None,
        };
        let mut cutoff_text = at.map(str::to_string);
        for opt in opts
            .map(split_options)
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|o| !o.is_empty())
        {
            let (k, v) = opt
                .split_once('=')
                .ok_or_else(|| bad(format!("option '{opt}' is not of the form name=value")))?;
            let (k, v) = (k.trim(), v.trim().trim_matches(|c| c == '\'' || c == '"'));
            let unit = |v: &str, what: &str| -> Result<f64> {
                parse_number(v)
                    .filter(|x| (0.0..=1.0).contains(x))
                    .ok_or_else(|| bad(format!("{what} must be a number from 0 to 1, got '{v}'")))
            };
            match k {
                "alpha" if kind.uses_alpha() => m.alpha = Some(unit(v, "alpha")?),
                "beta" if kind.uses_beta() => m.beta = Some(unit(v, "beta")?),
                "rel" => m.rel = Some(parse_rel_option(s, v)?),
                "judged_only" => m.judged_only = Some(parse_flag(s, k, v)?),
                "cutoff" if kind.has_cutoff() => {
                    if cutoff_text.replace(v.to_string()).is_some() {
                        return Err(bad("the cut-off is given twice".into()));
                    }
                }
                _ => return Err(bad(format!("{} takes no option '{k}'", kind.name()))),
            }
        }
        match (kind.has_cutoff(), cutoff_text) {
            (true, Some(k)) => {
                m.cutoff = Some(
                    parse_cutoff(&k)
                        .and_then(|k| usize::try_from(k).ok())
                        .filter(|&k| k <= 1 << 24)
                        .ok_or_else(|| bad(format!("'{k}' is not a cut-off (1, 2, ...)")))?,
                )
            }
            (true, None) => {
                return Err(bad(format!(
                    "{} needs a cut-off: {}@20 (ndeval reports 5, 10 and 20)",
                    kind.name(),
                    kind.name()
                )))
            }
            (false, Some(_)) => {
                return Err(bad(format!(
                    "{} reads the whole ranking and takes no cut-off",
                    kind.name()
                )))
            }
            (false, None) => {}
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let m = DiversityMeasure::parse("alpha_nDCG(alpha=0.3,judged_only=True)@20").unwrap();
        assert_eq!(
            (m.kind, m.cutoff, m.alpha, m.judged_only),
            (Kind::AlphaNdcg, Some(20), Some(0.3), Some(true))
        );
        let m = DiversityMeasure::parse("NRBP(beta=0.8, rel=2)").unwrap();
        assert_eq!((m.kind, m.beta, m.rel), (Kind::Nrbp, Some(0.8), Some(2)));
        for (name, kind) in [
            ("ERR-IA@5", Kind::ErrIa),
            ("nerr_ia@5", Kind::NerrIa),
            ("MAP-IA", Kind::ApIa),
            ("AP_IA", Kind::ApIa),
            ("strec@10", Kind::StRecall),
            ("StRecall(cutoff=10)", Kind::StRecall),
            ("P-IA@5", Kind::PIa),
            ("alpha-DCG@5", Kind::AlphaDcg),
            ("nNRBP", Kind::Nnrbp),
        ] {
            assert_eq!(DiversityMeasure::parse(name).unwrap().kind, kind, "{name}");
        }
        for name in NDEVAL_COLUMNS {
            DiversityMeasure::parse(name).unwrap();
        }
    }

    #[test]
    fn refusals() {
        for (name, why) in [
            ("alpha_nDCG", "needs a cut-off"),
            ("NRBP@10", "takes no cut-off"),
            ("P_IA(alpha=0.5)@5", "takes no option 'alpha'"),
            ("ERR_IA(beta=0.5)@5", "takes no option 'beta'"),
            ("alpha_nDCG(alpha=2)@5", "from 0 to 1"),
            ("alpha_nDCG@0", "not a cut-off"),
            ("nDCG@10", "not a diversity measure"),
            ("StRecall(cutoff=5)@5", "twice"),
        ] {
            let e = DiversityMeasure::parse(name).unwrap_err().to_string();
            assert!(e.contains(why), "{name}: {e}");
        }
    }
}
