//! Comparing systems: several runs evaluated on one qrels ([`compare`]), or per-query
//! values from elsewhere ([`compare_values`]); every pair of systems (or every system
//! against a baseline) tested per measure, the p-values of each measure corrected as one
//! family, with effect sizes; the [`Report`] renders as a table, Markdown, LaTeX (booktabs),
//! CSV or JSON.

use std::sync::atomic::AtomicBool;

use serde_json::{json, Value};

use super::paired::{self, Alternative, SignFlips, TestResult, EXACT_RANDOMIZATION_MAX};
use super::{effect_size, Correction, Test};
use crate::error::{show, show_whole, Error, Result};
use crate::evaluate::{Evaluator, Options};
use crate::measure::MeasureSet;
use crate::progress::Progress;
use crate::qrels::Qrels;
use crate::results::Results;
use crate::run::Run;

/// How to compare.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareOptions {
    /// The paired test.
    pub test: Test,
    /// The correction over the pairs of each measure.
    pub correction: Correction,
    /// Significance level; the confidence intervals are at 1 - alpha.
    pub alpha: f64,
    /// Compare every system with this one only (by name), instead of all pairs.
    pub baseline: Option<String>,
    /// The alternative hypothesis of each pair (system, baseline): one-sided tests need
    /// a baseline (`Greater`: the system is better than the baseline).
    pub alternative: Alternative,
    /// Resamples of the randomization and bootstrap tests.
    pub n_resamples: usize,
    /// Seed of the resampling tests.
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            test: Test::T,
            correction: Correction::Holm,
            alpha: 0.05,
            baseline: None,
            alternative: Alternative::TwoSided,
            n_resamples: 10_000,
            seed: 42,
        }
    }
}

/// The comparison of systems `a` and `b` on one measure (differences a - b).
#[derive(Clone, Debug, PartialEq)]
pub struct PairResult {
    /// Index of the first system (with a baseline: the system compared with it).
    pub a: usize,
    /// Index of the second system (with a baseline: the baseline).
    pub b: usize,
    /// The test's outcome (raw p-value).
    pub test: TestResult,
    /// The p-value after the correction.
    pub pvalue_corrected: f64,
    /// Whether the corrected p-value is at most alpha.
    pub significant: bool,
    /// Effect sizes and the t-based interval of the mean difference.
    pub effect: super::Effect,
}

/// One measure of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureReport {
    /// The measure as requested (`nDCG@10`), or its canonical column name.
    pub name: String,
    /// Each system's mean.
    pub means: Vec<f64>,
    /// Each system's per-query values (in [`Report::query_ids`] order).
    pub values: Vec<Vec<f64>>,
    /// The pairs compared.
    pub pairs: Vec<PairResult>,
}

/// The outcome of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The systems, in the order given.
    pub systems: Vec<String>,
    /// The queries compared.
    pub query_ids: Vec<String>,
    /// One entry per measure.
    pub measures: Vec<MeasureReport>,
    /// The options used (the baseline resolved to an index in `baseline_index`).
    pub options: CompareOptions,
    /// The baseline's index.
    pub baseline_index: Option<usize>,
}

/// How the means (and, in the plain table, the differences) are printed by
/// [`Report::render_styled`], as ranx's `rounding_digits` and `show_percentages`:
/// `digits` decimal places of the value as a fraction; as percentages the same
/// precision, two places fewer (0.5796 at 4 digits is 57.96). CSV and JSON keep every
/// digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Decimal places of a value as a fraction (at most [`Style::MAX_DIGITS`]).
    pub digits: usize,
    /// Values times 100 (with two decimal places fewer), the measures' headers marked
    /// "(%)".
    pub percent: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            digits: 4,
            percent: false,
        }
    }
}

impl Style {
    /// The most digits a style prints (a double's 17 significant digits).
    pub const MAX_DIGITS: usize = 17;

    /// A style, or an option error for more digits than a double holds.
    pub fn new(digits: usize, percent: bool) -> Result<Style> {
        if digits > Style::MAX_DIGITS {
            return Err(Error::Option(format!(
                "digits must be at most {}, got {digits}",
                Style::MAX_DIGITS
            )));
        }
        Ok(Style { digits, percent })
    }

    /// The factor and the decimal places printed.
    fn scaled(self, v: f64) -> (f64, usize) {
        if self.percent {
            (v * 100.0, self.digits.saturating_sub(2))
        } else {
            (v, self.digits)
        }
    }

    /// A mean as printed.
    fn value(self, v: f64) -> String {
        let (v, places) = self.scaled(v);
        format!("{v:.places$}")
    }

    /// A difference as printed (with its sign).
    fn signed(self, v: f64) -> String {
        let (v, places) = self.scaled(v);
        format!("{v:+.places$}")
    }
}

/// Output formats of [`Report::render`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned plain text: the means table, then every pair.
    Table,
    /// A Markdown table of means with significance superscripts.
    Markdown,
    /// A LaTeX table (booktabs).
    Latex,
    /// One CSV row per measure and pair.
    Csv,
    /// Everything as JSON.
    Json,
}

impl Format {
    /// Parse `table`, `markdown` (`md`), `latex` (`tex`), `csv`, `json`.
    pub fn parse(name: &str) -> Result<Format> {
        super::correct::choose(
            "format",
            name,
            &[
                ("table", Format::Table),
                ("markdown", Format::Markdown),
                ("latex", Format::Latex),
                ("csv", Format::Csv),
                ("json", Format::Json),
                ("md", Format::Markdown),
                ("tex", Format::Latex),
            ],
        )
    }
}

impl CompareOptions {
    /// An error for an alpha outside (0, 1), no resamples, or a one-sided alternative
    /// without a baseline (all pairs have no direction to test) or with a Tukey test
    /// (which tests all systems at once, two-sided).
    pub fn check(&self) -> Result<()> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(Error::Option(format!(
                "alpha must lie strictly between 0 and 1, got {}",
                self.alpha
            )));
        }
        if self.alternative != Alternative::TwoSided {
            let alt = self.alternative.name();
            if self.test.is_multi_system() {
                return Err(Error::Option(format!(
                    "alternative '{alt}': the {} test compares all systems at once and \
                     is two-sided only; use a paired test (t, wilcoxon, sign, \
                     randomization, bootstrap) with a baseline",
                    self.test.name()
                )));
            }
            if self.baseline.is_none() {
                return Err(Error::Option(format!(
                    "alternative '{alt}' needs a baseline: a one-sided test has a \
                     direction, each system against the baseline ('greater': the system \
                     scores higher); all pairs are tested two-sided"
                )));
            }
        }
        paired::check_resamples(self.n_resamples)
    }
}

/// Evaluate `runs` (name, run) on `qrels` with `measures` and compare them. Without
/// `options.complete` every run must hold the same judged queries (the first query one
/// of them lacks is named); with it, missing queries score 0 as in trec_eval -c.
pub fn compare(
    qrels: &Qrels,
    runs: &[(String, &Run)],
    measures: &[String],
    options: Options,
    how: &CompareOptions,
    cancel: Option<&AtomicBool>,
) -> Result<Report> {
    how.check()?;
    let ev = Evaluator::new(qrels.clone(), MeasureSet::parse(measures)?, options)?;
    let names: Vec<String> = runs.iter().map(|(n, _)| n.clone()).collect();
    let runs: Vec<&Run> = runs.iter().map(|(_, r)| *r).collect();
    let results = evaluate_runs(&ev, &names, &runs, cancel, None)?;
    from_results(&names, &results, how, cancel, None)
}

/// Evaluate each run; a judged query missing from a run (without `complete`) is an
/// error naming the run and the query. `progress` counts the evaluated queries of all
/// runs (announced together first).
pub fn evaluate_runs(
    ev: &Evaluator,
    names: &[String],
    runs: &[&Run],
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Vec<Results>> {
    at_least_two(runs.len())?;
    distinct(names)?;
    if progress.is_some() {
        let units = runs.iter().map(|r| ev.progress_units(r)).sum();
        crate::progress::announce(progress, units);
    }
    names
        .iter()
        .zip(runs)
        .map(|(name, run)| named(name, ev.evaluate_announced(run, cancel, progress)))
        .collect()
}

/// [`evaluate_runs`] for run files, each evaluated as it is read when its queries'
/// lines are together ([`Evaluator::evaluate_path`]): the per-query values of every
/// run are held, not the runs. `progress` counts each file's KiB and queries in turn.
pub fn evaluate_run_files(
    ev: &Evaluator,
    names: &[String],
    paths: &[std::path::PathBuf],
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Vec<Results>> {
    at_least_two(paths.len())?;
    distinct(names)?;
    names
        .iter()
        .zip(paths)
        .map(|(name, path)| named(name, ev.evaluate_path(path, cancel, progress)))
        .collect()
}

fn at_least_two(n: usize) -> Result<()> {
    if n < 2 {
        return Err(Error::Input(format!(
            "comparing needs at least 2 runs, got {n}"
        )));
    }
    Ok(())
}

/// Systems' names must differ: they key the means and per-query values of the JSON and
/// the dataframes, and a baseline is chosen by name.
pub(crate) fn distinct(names: &[String]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    match names.iter().find(|n| !seen.insert(n.as_str())) {
        Some(n) => Err(Error::Input(format!(
            "two systems are named '{n}' (the same run file given twice?); name each \
             system once"
        ))),
        None => Ok(()),
    }
}

/// Run `name`'s evaluation error named with the run: a judged query missing from it
/// (without `complete`), a run that is empty or shares no query with the qrels. An
/// error that starts with the name (a run file's path and line) is left as it is.
fn named(name: &str, res: Result<Results>) -> Result<Results> {
    res.map_err(|e| match e {
        Error::MissingQuery { query } => Error::RunMissingQuery {
            run: name.to_string(),
            query,
            why: "judged in the qrels".into(),
        },
        Error::Input(m) if !m.starts_with(name) => Error::Input(format!("run '{name}': {m}")),
        e => e,
    })
}

/// Compare already evaluated runs (all from one evaluator, so with the same columns),
/// counting in `progress` as [`compare_values_with`].
pub fn from_results(
    names: &[String],
    results: &[Results],
    how: &CompareOptions,
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Report> {
    let Some(first) = results.first() else {
        return Err(Error::Input(
            "comparing needs at least 2 runs, got 0".into(),
        ));
    };
    let ids = first.query_ids();
    if results.iter().skip(1).any(|r| r.query_ids() != ids) {
        return Err(missing_query(names, results));
    }
    let mut measures = Vec::new();
    for (label, c) in first.requested_columns() {
        if !Results::has_per_query_values(&first.columns()[c]) {
            continue;
        }
        let values: Vec<Vec<f64>> = results.iter().map(|r| r.column_values(c)).collect();
        measures.push((label, values));
    }
    if measures.is_empty() {
        return Err(Error::Input(
            "none of the measures has per-query values to compare".into(),
        ));
    }
    let query_ids = ids.iter().map(|q| show(q)).collect();
    compare_values_with(names, query_ids, measures, how, cancel, progress)
}

/// The error for runs with different query sets: the first query (in the order of the
/// evaluations) that one run has and another lacks.
fn missing_query(names: &[String], results: &[Results]) -> Error {
    let sets: Vec<std::collections::HashSet<&[u8]>> = results
        .iter()
        .map(|r| r.query_ids().iter().map(|q| &q[..]).collect())
        .collect();
    for (i, r) in results.iter().enumerate() {
        for q in r.query_ids() {
            if let Some(j) = sets.iter().position(|s| !s.contains(&q[..])) {
                return Error::RunMissingQuery {
                    run: names[j].clone(),
                    query: show(q),
                    why: format!("judged, and in run '{}'", names[i]),
                };
            }
        }
    }
    Error::Input("the runs were evaluated on different queries".into())
}

/// Compare systems on per-query values: `measures` holds (name, one vector per system,
/// one value per query in `query_ids` order).
pub fn compare_values(
    names: &[String],
    query_ids: Vec<String>,
    measures: Vec<(String, Vec<Vec<f64>>)>,
    how: &CompareOptions,
    cancel: Option<&AtomicBool>,
) -> Result<Report> {
    compare_values_with(names, query_ids, measures, how, cancel, None)
}

/// [`compare_values`], counting in `progress` the resamples drawn for a Monte Carlo
/// randomization test, else one unit per measure compared (all announced first).
pub fn compare_values_with(
    names: &[String],
    query_ids: Vec<String>,
    measures: Vec<(String, Vec<Vec<f64>>)>,
    how: &CompareOptions,
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Report> {
    how.check()?;
    let k = names.len();
    if k < 2 {
        return Err(Error::Input(format!(
            "comparing needs at least 2 systems, got {k}"
        )));
    }
    distinct(names)?;
    let n = query_ids.len();
    if n < 2 {
        return Err(Error::Input(format!(
            "comparing needs at least 2 queries in common, got {n}"
        )));
    }
    let baseline_index = match &how.baseline {
        None => None,
        Some(b) => Some(names.iter().position(|n| n == b).ok_or_else(|| {
            Error::Option(format!(
                "baseline '{b}' is not one of the systems ({})",
                names.join(", ")
            ))
        })?),
    };
    let pairs: Vec<(usize, usize)> = match baseline_index {
        Some(b) => (0..k).filter(|&a| a != b).map(|a| (a, b)).collect(),
        None => (0..k)
            .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
            .collect(),
    };
    let flipped = how.test == Test::Randomization && n > EXACT_RANDOMIZATION_MAX;
    let per_measure = if flipped { how.n_resamples } else { 1 };
    crate::progress::announce(progress, measures.len() * per_measure);
    let mut out = Vec::new();
    for (name, values) in measures {
        if values.len() != k || values.iter().any(|v| v.len() != n) {
            return Err(Error::Input(format!(
                "measure '{name}': expected {k} systems x {n} queries of values"
            )));
        }
        for (s, v) in names.iter().zip(&values) {
            paired::check_finite(v, &format!("measure '{name}' of system '{s}'"))?;
        }
        let refs: Vec<&[f64]> = values.iter().map(|v| v.as_slice()).collect();
        let flips = if flipped {
            let f = SignFlips::new(&refs, how.n_resamples, how.seed, cancel, progress)?;
            Some(f)
        } else {
            None
        };
        let tukey = match how.test {
            Test::Tukey => Some(super::tukey::tukey_hsd(&refs)?),
            _ => None,
        };
        let randomized = match how.test {
            Test::RandomizedTukey => Some(super::tukey::randomized_tukey_hsd(
                &refs,
                how.n_resamples,
                how.seed,
                cancel,
            )?),
            _ => None,
        };
        // the bootstrap of every pair at once: the resamples' draws are shared
        let boot = if how.test == Test::Bootstrap {
            let xy: Vec<(&[f64], &[f64])> =
                pairs.iter().map(|&(a, b)| (refs[a], refs[b])).collect();
            paired::bootstrap_tests(&xy, how.n_resamples, how.seed, how.alternative, cancel)?
        } else {
            Vec::new()
        };
        let mut tested = Vec::with_capacity(pairs.len());
        for (at, &(a, b)) in pairs.iter().enumerate() {
            let (x, y) = (refs[a], refs[b]);
            let test = match how.test {
                Test::T => paired::ttest(x, y, how.alternative)?,
                Test::Wilcoxon => paired::wilcoxon(x, y, how.alternative)?,
                Test::Sign => paired::sign_test(x, y, how.alternative)?,
                Test::Bootstrap => boot[at].clone(),
                Test::Tukey => TestResult {
                    statistic: tukey.as_ref().map_or(f64::NAN, |t| t.statistics[a * k + b]),
                    pvalue: tukey.as_ref().map_or(f64::NAN, |t| t.pvalues[a * k + b]),
                    method: "studentized range",
                    df: tukey.as_ref().map(|t| t.df),
                },
                Test::RandomizedTukey => TestResult {
                    statistic: paired::mean(x) - paired::mean(y),
                    pvalue: randomized.as_ref().map_or(f64::NAN, |m| m[a * k + b]),
                    method: "Monte Carlo",
                    df: None,
                },
                Test::Randomization => match &flips {
                    Some(f) => TestResult {
                        statistic: paired::mean(x) - paired::mean(y),
                        pvalue: f.pvalue(a, b, how.alternative),
                        method: "Monte Carlo",
                        df: None,
                    },
                    None => TestResult {
                        statistic: paired::mean(x) - paired::mean(y),
                        pvalue: paired::exact_randomization_pvalue(x, y, how.alternative),
                        method: "exact",
                        df: None,
                    },
                },
            };
            let effect = effect_size(x, y, 1.0 - how.alpha, None)?;
            tested.push((a, b, test, effect));
        }
        let raw: Vec<f64> = tested.iter().map(|t| t.2.pvalue).collect();
        let correction = if how.test.is_multi_system() {
            Correction::None
        } else {
            how.correction
        };
        let corrected = correction.apply(&raw)?;
        let pairs_out = tested
            .into_iter()
            .zip(corrected)
            .map(|((a, b, test, effect), pc)| PairResult {
                a,
                b,
                test,
                pvalue_corrected: pc,
                significant: pc <= how.alpha,
                effect,
            })
            .collect();
        if !flipped {
            crate::progress::advance(progress, 1);
        }
        out.push(MeasureReport {
            means: values.iter().map(|v| paired::mean(v)).collect(),
            name,
            values,
            pairs: pairs_out,
        });
    }
    Ok(Report {
        systems: names.to_vec(),
        query_ids,
        measures: out,
        options: how.clone(),
        baseline_index,
    })
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const SUPERSCRIPTS: [char; 26] = [
    'ᵃ', 'ᵇ', 'ᶜ', 'ᵈ', 'ᵉ', 'ᶠ', 'ᵍ', 'ʰ', 'ⁱ', 'ʲ', 'ᵏ', 'ˡ', 'ᵐ', 'ⁿ', 'ᵒ', 'ᵖ', 'ᶿ', 'ʳ', 'ˢ',
    'ᵗ', 'ᵘ', 'ᵛ', 'ʷ', 'ˣ', 'ʸ', 'ᶻ',
];

/// The letter of system `i` (a..z, then a1, b1, ...).
fn letter(i: usize) -> String {
    let c = LETTERS[i % 26] as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26)
    }
}

fn superscript(i: usize) -> String {
    if i < 26 {
        SUPERSCRIPTS[i].to_string()
    } else {
        format!("^{}", letter(i))
    }
}

impl Report {
    /// The systems that system `s` is significantly better than on measure `m`.
    pub fn beats(&self, m: usize, s: usize) -> Vec<usize> {
        let mr = &self.measures[m];
        let mut out: Vec<usize> = mr
            .pairs
            .iter()
            .filter(|p| p.significant)
            .filter_map(|p| {
                let other = if p.a == s {
                    p.b
                } else if p.b == s {
                    p.a
                } else {
                    return None;
                };
                (mr.means[s] > mr.means[other]).then_some(other)
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The index of the best system of measure `m` (the highest mean; ties: the first).
    pub fn best(&self, m: usize) -> usize {
        let means = &self.measures[m].means;
        let mut best = 0;
        for (i, v) in means.iter().enumerate() {
            if *v > means[best] {
                best = i;
            }
        }
        best
    }

    /// The sentence explaining the marks: test, correction, alpha.
    pub fn caption(&self) -> String {
        format!("{}p <= {}).", self.caption_head(), self.options.alpha)
    }

    /// The caption up to its last words, "p <= alpha).", which each format writes its
    /// way (LaTeX in math mode; the head is escaped, it holds the systems' names).
    fn caption_head(&self) -> String {
        let o = &self.options;
        let family = match self.baseline_index {
            Some(b) => format!("each system against {}", self.systems[b]),
            None => "all pairs of systems".to_string(),
        };
        let resamples = match o.test {
            Test::Randomization | Test::Bootstrap | Test::RandomizedTukey => {
                format!(", {} resamples, seed {}", o.n_resamples, o.seed)
            }
            _ => String::new(),
        };
        let correction = if o.test.is_multi_system() {
            format!(
                "over all {} systems, no further correction",
                self.systems.len()
            )
        } else {
            format!("{} over {family} per measure", o.correction.label())
        };
        let sided = match o.alternative {
            Alternative::TwoSided => "",
            Alternative::Greater => ", one-sided: each system better than the baseline",
            Alternative::Less => ", one-sided: each system worse than the baseline",
        };
        format!(
            "Means over {} queries; best per measure in bold. A superscript letter marks a \
             system significantly better than the system of that letter ({}{}{}, {}, ",
            self.query_ids.len(),
            o.test.label(),
            sided,
            resamples,
            correction,
        )
    }

    /// Render in `format`.
    pub fn render(&self, format: Format) -> String {
        self.render_styled(format, Style::default())
    }

    /// Render in `format`, the means of the table, Markdown and LaTeX printed in `style`.
    pub fn render_styled(&self, format: Format, style: Style) -> String {
        match format {
            Format::Table => self.to_table(style),
            Format::Markdown => self.to_markdown(style),
            Format::Latex => self.to_latex(style),
            Format::Csv => self.to_csv(),
            Format::Json => self.to_json(false).to_string(),
        }
    }

    fn cells(
        &self,
        style: Style,
        bold: (&str, &str),
        sup: impl Fn(&[usize]) -> String,
    ) -> Vec<Vec<String>> {
        let best: Vec<usize> = (0..self.measures.len()).map(|m| self.best(m)).collect();
        (0..self.systems.len())
            .map(|s| {
                let mut row = vec![letter(s), self.systems[s].clone()];
                for (m, mr) in self.measures.iter().enumerate() {
                    let v = style.value(mr.means[s]);
                    let v = if best[m] == s {
                        format!("{}{v}{}", bold.0, bold.1)
                    } else {
                        v
                    };
                    row.push(format!("{v}{}", sup(&self.beats(m, s))));
                }
                row
            })
            .collect()
    }

    /// The measures' column names ("(%)" added for percentages).
    fn measure_headers(&self, style: Style) -> impl Iterator<Item = String> + '_ {
        let mark = if style.percent { " (%)" } else { "" };
        self.measures
            .iter()
            .map(move |m| format!("{}{mark}", m.name))
    }

    fn headers(&self, style: Style) -> Vec<String> {
        let mut h = vec!["#".to_string(), "system".to_string()];
        h.extend(self.measure_headers(style));
        h
    }

    /// A Markdown table: one row per system, one column per measure, the best mean of
    /// each measure in bold and superscript letters for significant wins, then the
    /// caption.
    pub fn to_markdown(&self, style: Style) -> String {
        let rows = self.cells(style, ("**", "**"), |b| {
            b.iter().map(|&i| superscript(i)).collect::<String>()
        });
        let mut out = String::new();
        let h: Vec<String> = self
            .headers(style)
            .iter()
            .map(|c| markdown_escape(c))
            .collect();
        out.push_str(&format!("| {} |\n", h.join(" | ")));
        out.push_str(&format!(
            "|{}|\n",
            h.iter()
                .enumerate()
                .map(|(i, _)| if i < 2 { ":--" } else { "--:" })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for mut r in rows {
            // the system's name (the means are numbers and our own bold)
            r[1] = markdown_escape(&r[1]);
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        out.push_str(&format!(
            "\n{}p <= {}).\n",
            markdown_escape(&self.caption_head()),
            self.options.alpha
        ));
        out
    }

    /// A LaTeX table with booktabs rules, the best mean per measure in bold,
    /// significance as superscript letters (as ranx prints them) and a caption naming
    /// the test and the correction.
    pub fn to_latex(&self, style: Style) -> String {
        let rows = self.cells(style, ("\\textbf{", "}"), |b| {
            if b.is_empty() {
                String::new()
            } else {
                format!(
                    "$^{{{}}}$",
                    b.iter().map(|&i| letter(i)).collect::<String>()
                )
            }
        });
        let mut out = String::new();
        out.push_str("% needs \\usepackage{booktabs}\n");
        out.push_str("\\begin{table}[t]\n\\centering\n");
        out.push_str(&format!(
            "\\caption{{{}$p \\le {}$).}}\n",
            latex_escape(&self.caption_head()),
            self.options.alpha
        ));
        out.push_str("\\label{tab:comparison}\n");
        out.push_str(&format!(
            "\\begin{{tabular}}{{cl{}}}\n\\toprule\n",
            "r".repeat(self.measures.len())
        ));
        let mut h = vec!["\\#".to_string(), "System".to_string()];
        h.extend(self.measure_headers(style).map(|m| latex_escape(&m)));
        out.push_str(&format!("{} \\\\\n\\midrule\n", h.join(" & ")));
        for r in rows {
            let mut cells = r;
            cells[1] = latex_escape(&cells[1]);
            out.push_str(&format!("{} \\\\\n", cells.join(" & ")));
        }
        out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
        out
    }

    /// Plain text: the means table (as Markdown's, aligned), then every pair with its
    /// p-values and effect sizes.
    pub fn to_table(&self, style: Style) -> String {
        let rows = self.cells(style, ("*", ""), |b| {
            b.iter().map(|&i| superscript(i)).collect::<String>()
        });
        let mut out = aligned(&self.headers(style), &rows);
        out.push('\n');
        out.push_str(&self.caption());
        out.push_str("\n\n");
        let h: Vec<String> = [
            "measure", "system", "vs", "diff", "ci_low", "ci_high", "p", "p_corr", "sig", "d_z",
            "W/T/L",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rows = Vec::new();
        for mr in &self.measures {
            for p in &mr.pairs {
                let e = &p.effect;
                rows.push(vec![
                    mr.name.clone(),
                    self.systems[p.a].clone(),
                    self.systems[p.b].clone(),
                    style.signed(e.mean_diff),
                    style.signed(e.ci.0),
                    style.signed(e.ci.1),
                    format_p(p.test.pvalue),
                    format_p(p.pvalue_corrected),
                    if p.significant { "*" } else { "" }.to_string(),
                    format!("{:.3}", e.d_z),
                    format!("{}/{}/{}", e.wins, e.ties, e.losses),
                ]);
            }
        }
        out.push_str(&aligned(&h, &rows));
        out
    }

    /// One CSV row per measure and pair.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "measure,system_a,system_b,mean_a,mean_b,mean_diff,statistic,pvalue,\
             pvalue_corrected,significant,ci_low,ci_high,d_z,g_z,wins,ties,losses,method\n",
        );
        for mr in &self.measures {
            for p in &mr.pairs {
                let e = &p.effect;
                let fields = [
                    csv_field(&mr.name),
                    csv_field(&self.systems[p.a]),
                    csv_field(&self.systems[p.b]),
                    mr.means[p.a].to_string(),
                    mr.means[p.b].to_string(),
                    e.mean_diff.to_string(),
                    p.test.statistic.to_string(),
                    p.test.pvalue.to_string(),
                    p.pvalue_corrected.to_string(),
                    p.significant.to_string(),
                    e.ci.0.to_string(),
                    e.ci.1.to_string(),
                    e.d_z.to_string(),
                    e.g_z.to_string(),
                    e.wins.to_string(),
                    e.ties.to_string(),
                    e.losses.to_string(),
                    csv_field(p.test.method),
                ];
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
        out
    }

    /// Everything as JSON (the per-query values too with `per_query`); numbers that are
    /// not finite become null.
    pub fn to_json(&self, per_query: bool) -> Value {
        let o = &self.options;
        let measures: Vec<Value> = self
            .measures
            .iter()
            .map(|mr| {
                let pairs: Vec<Value> = mr
                    .pairs
                    .iter()
                    .map(|p| {
                        let e = &p.effect;
                        json!({
                            "system_a": self.systems[p.a],
                            "system_b": self.systems[p.b],
                            "mean_diff": num(e.mean_diff),
                            "statistic": num(p.test.statistic),
                            "df": p.test.df.map(num),
                            "pvalue": num(p.test.pvalue),
                            "pvalue_corrected": num(p.pvalue_corrected),
                            "significant": p.significant,
                            "method": p.test.method,
                            "ci": [num(e.ci.0), num(e.ci.1)],
                            "d_z": num(e.d_z),
                            "g_z": num(e.g_z),
                            "wins": e.wins,
                            "ties": e.ties,
                            "losses": e.losses,
                        })
                    })
                    .collect();
                let means: serde_json::Map<String, Value> = self
                    .systems
                    .iter()
                    .zip(&mr.means)
                    .map(|(s, m)| (s.clone(), num(*m)))
                    .collect();
                let mut m = json!({"measure": mr.name, "means": means, "pairs": pairs});
                if per_query {
                    let pq: serde_json::Map<String, Value> = self
                        .systems
                        .iter()
                        .zip(&mr.values)
                        .map(|(s, v)| {
                            (
                                s.clone(),
                                json!(v.iter().map(|x| num(*x)).collect::<Vec<_>>()),
                            )
                        })
                        .collect();
                    m["per_query"] = Value::Object(pq);
                }
                m
            })
            .collect();
        let mut out = json!({
            "systems": self.systems,
            "test": o.test.name(),
            "correction": if o.test.is_multi_system() {
                "none"
            } else {
                o.correction.name()
            },
            "alpha": o.alpha,
            "baseline": o.baseline,
            "alternative": o.alternative.name(),
            "n_resamples": o.n_resamples,
            "seed": o.seed,
            "num_queries": self.query_ids.len(),
            "caption": self.caption(),
            "measures": measures,
        });
        if per_query {
            out["query_ids"] = json!(self.query_ids);
        }
        out
    }
}

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn format_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Text as LaTeX typesets it literally: its special characters escaped; `|`, `<` and
/// `>` by name (LaTeX's default OT1 font encoding prints them as other glyphs); a
/// control character as the text tables show it (`\n`, escaped in turn: a blank line
/// would end the table's paragraph).
fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '_' | '%' | '&' | '#' | '$' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '\\' => out.push_str("\\textbackslash{}"),
            '|' => out.push_str("\\textbar{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            c if c.is_control() => {
                out.push_str(&latex_escape(&show_whole(c.to_string().as_bytes())));
            }
            _ => out.push(c),
        }
    }
    out
}

/// A name as Markdown text shows it: control characters escaped as the text table shows
/// them, and a backslash before every character that could start Markdown's inline
/// syntax in a table cell (emphasis, code, links, HTML, entities, strikethrough, the
/// cell's "|"): a run named "*bm25*" was shown in italics, one named "<b>" made the rest
/// of a page bold.
fn markdown_escape(s: &str) -> String {
    let shown = show_whole(s.as_bytes());
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Columns padded to their widest cell, left-aligned, under a rule (see
/// [`crate::error::aligned`]).
fn aligned(headers: &[String], rows: &[Vec<String>]) -> String {
    let all: Vec<Vec<String>> = std::iter::once(headers.to_vec())
        .chain(rows.iter().cloned())
        .collect();
    crate::error::aligned(&all, usize::MAX, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Measures = Vec<(String, Vec<Vec<f64>>)>;

    fn values() -> (Vec<String>, Vec<String>, Measures) {
        let names = vec!["bm25".to_string(), "dense".to_string(), "rm3".to_string()];
        let q: Vec<String> = (0..30).map(|i| format!("q{i}")).collect();
        let base: Vec<f64> = (0..30).map(|i| ((i * 7) % 10) as f64 / 10.0).collect();
        let better: Vec<f64> = base.iter().map(|v| (v + 0.2f64).min(1.0)).collect();
        let same = base.clone();
        (names, q, vec![("ap".into(), vec![base, better, same])])
    }

    #[test]
    fn all_pairs_and_baseline() {
        let (names, q, m) = values();
        let r = compare_values(
            &names,
            q.clone(),
            m.clone(),
            &CompareOptions::default(),
            None,
        )
        .unwrap();
        assert_eq!(r.measures[0].pairs.len(), 3);
        // bm25 and rm3 are identical: p = 1
        let p = &r.measures[0].pairs[1];
        assert_eq!((p.a, p.b, p.test.pvalue), (0, 2, 1.0));
        assert_eq!(r.beats(0, 1), vec![0, 2]);
        assert_eq!(r.best(0), 1);
        let md = r.to_markdown(Style::default());
        assert!(md.contains("| b | dense | **0.6"), "{md}");
        assert!(md.contains("ᵃᶜ"), "{md}");
        let tex = r.to_latex(Style::default());
        assert!(
            tex.contains("\\textbf{0.6") && tex.contains("$^{ac}$"),
            "{tex}"
        );
        assert!(tex.contains("\\toprule") && tex.contains("Holm"), "{tex}");
        let how = CompareOptions {
            baseline: Some("bm25".into()),
            test: Test::Randomization,
            ..CompareOptions::default()
        };
        let r = compare_values(&names, q.clone(), m.clone(), &how, None).unwrap();
        assert_eq!(r.measures[0].pairs.len(), 2);
        assert!(r.measures[0].pairs.iter().all(|p| p.b == 0));
        let csv = r.to_csv();
        assert_eq!(csv.lines().count(), 3);
        let bad = CompareOptions {
            baseline: Some("nope".into()),
            ..CompareOptions::default()
        };
        assert!(compare_values(&names, q.clone(), m.clone(), &bad, None).is_err());
        assert!(compare_values(&names[..1], q, m, &CompareOptions::default(), None).is_err());
    }
}
