//! trec_eval's other kinds of judgments (its `-R` "rel_info" formats) and the measures
//! computed from them:
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`RelFormat`] (the `-R` names), reading any of them ([`Judgments`]), the checks shared by the formats |
//! | `prefs.rs` | preference judgments (`-R prefs`, `-R qrels_prefs`) and the `prefs_*` measures |
//! | `pref_counts.rs` | one query's preferences over a ranking: the counts every `prefs_*` measure reads |
//! | `groups.rs` | qrels in judgment groups (`-R qrels_jg`) and the `*_avgjg` measures |
//!
//! Plain qrels (`-R qrels`, the default) are [`crate::Qrels`], evaluated by
//! [`crate::Evaluator`].

mod groups;
mod pref_counts;
mod prefs;

pub use groups::JudgmentGroups;
pub use prefs::{Prefs, PrefsQuery};

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::error::{show, Error, Result};
use crate::evaluate::Options;
use crate::measure::{JudgmentKind as Needs, MeasureSet};
use crate::results::Results;
use crate::run::{Run, RunQuery};

/// The formats of a judgments file (trec_eval's `-R`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RelFormat {
    /// `qid iter docno rel`: graded relevance (the default).
    #[default]
    Qrels,
    /// `qid jg jsg docno level`: preferences by judgment group and sub-group.
    Prefs,
    /// A qrels file read as preferences: the second column is the judgment group.
    QrelsPrefs,
    /// A qrels file whose second column is the judgment group (several users' qrels).
    QrelsJg,
}

impl RelFormat {
    /// The format called `name` (`qrels`, `prefs`, `qrels_prefs`, `qrels_jg`).
    pub fn parse(name: &str) -> Result<RelFormat> {
        Ok(match name {
            "qrels" => RelFormat::Qrels,
            "prefs" => RelFormat::Prefs,
            "qrels_prefs" => RelFormat::QrelsPrefs,
            "qrels_jg" => RelFormat::QrelsJg,
            _ => {
                return Err(Error::Option(format!(
                    "unknown judgments format -R {name} (qrels, prefs, qrels_prefs, qrels_jg)"
                )))
            }
        })
    }

    /// The measures computed when none is asked for: trec_eval's `official` for qrels,
    /// the nickname of the format's own measures otherwise (trec_eval would fail).
    pub fn default_measures(self) -> &'static str {
        match self {
            RelFormat::Qrels => "official",
            RelFormat::Prefs | RelFormat::QrelsPrefs => "prefs",
            RelFormat::QrelsJg => "qrels_jg",
        }
    }

    /// The kind of judgments the format holds.
    fn holds(self) -> Needs {
        match self {
            RelFormat::Qrels => Needs::Qrels,
            RelFormat::Prefs | RelFormat::QrelsPrefs => Needs::Prefs,
            RelFormat::QrelsJg => Needs::Groups,
        }
    }
}

/// Judgments read in a format other than plain qrels.
#[derive(Clone, Debug)]
pub enum Judgments {
    /// Preferences (`-R prefs`, `-R qrels_prefs`).
    Prefs(Prefs),
    /// Qrels in judgment groups (`-R qrels_jg`).
    Groups(JudgmentGroups),
}

impl Judgments {
    /// Read `path` in `format` (not [`RelFormat::Qrels`]: read plain qrels with
    /// [`crate::Qrels::from_file`]).
    pub fn from_file(path: &Path, format: RelFormat) -> Result<Judgments> {
        Ok(match format {
            RelFormat::Prefs => Judgments::Prefs(Prefs::from_file(path)?),
            RelFormat::QrelsPrefs => Judgments::Prefs(Prefs::from_qrels_file(path)?),
            RelFormat::QrelsJg => Judgments::Groups(JudgmentGroups::from_file(path)?),
            RelFormat::Qrels => {
                return Err(Error::Option(
                    "plain qrels are read as Qrels and evaluated by an Evaluator".into(),
                ))
            }
        })
    }

    /// Evaluate a run with the measures of these judgments.
    pub fn evaluate(
        &self,
        run: &Run,
        measures: &MeasureSet,
        options: &Options,
        cancel: Option<&AtomicBool>,
    ) -> Result<Results> {
        match self {
            Judgments::Prefs(p) => p.evaluate(run, measures, options, cancel),
            Judgments::Groups(g) => g.evaluate(run, measures, options, cancel),
        }
    }
}

/// The evaluated queries (those of the judgments, in id order) with their results. A
/// judged query missing from the run is an error unless `complete` (then it is scored
/// as an empty ranking); a run sharing no query with the judgments is an error.
fn pair_queries<'a, Q>(
    judged: impl Iterator<Item = (&'a [u8], Q)>,
    run: &'a Run,
    complete: bool,
) -> Result<Vec<(Q, Option<&'a RunQuery>)>> {
    let pairs: Vec<_> = judged.map(|(id, q)| (id, q, run.query(id))).collect();
    if !complete {
        if run.is_empty() {
            return Err(crate::evaluate::empty_run());
        }
        if pairs.iter().all(|p| p.2.is_none()) {
            return Err(Error::Input(
                "no query of the run is judged; are the files swapped or from different \
                 collections?"
                    .into(),
            ));
        }
        if let Some(p) = pairs.iter().find(|p| p.2.is_none()) {
            return Err(Error::MissingQuery { query: show(p.0) });
        }
    }
    Ok(pairs.into_iter().map(|(_, q, r)| (q, r)).collect())
}

/// Every measure must be computable from judgments in `format`.
pub(crate) fn check_format(measures: &MeasureSet, format: RelFormat) -> Result<()> {
    measures.check_judgments(format.holds())
}
