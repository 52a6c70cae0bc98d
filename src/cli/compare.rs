//! `irmetrics compare`: evaluate several runs on one qrels and test which differ
//! ([`crate::compare`]), printed as a table, Markdown, LaTeX, CSV or JSON.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use super::args::{num, text, usage_err};
use crate::compare::{report, Alternative, CompareOptions, Correction, Format, Style, Test};
use crate::error::{Error, Result};
use crate::evaluate::{Evaluator, Options};
use crate::measure::MeasureSet;

/// Usage text of `irmetrics compare`.
pub const COMPARE_USAGE: &str = "\
usage: irmetrics compare [options] QRELS RUN1 RUN2 [RUN ...]

Evaluate the runs on the qrels and test, per measure, which systems differ: every
pair of runs, or each run against --baseline. Runs are named by their file names.

options:
  -m MEASURE         measure(s), repeatable, any spelling irmetrics accepts
                     (nDCG@10, AP, ndcg_cut.10, map, P.10) [default: AP and nDCG@10]
  --test TEST        t (paired Student's t) [default], wilcoxon, sign,
                     randomization (Fisher), bootstrap (Sakai's, shifted), tukey
                     (Tukey's HSD), randomized_tukey (Carterette's); the Tukey
                     tests cover all runs at once and take no correction
  --correction C     holm [default], bonferroni, sidak, holm-sidak, hochberg,
                     hommel, bh, by, none: over the pairs of each measure
  --alpha A          significance level [default: 0.05]; intervals at 1 - A
  --baseline NAME    compare each run with this one only (a run's file name)
  --alternative ALT  two-sided [default], greater (each run better than the
                     baseline), less (worse): one-sided tests need --baseline
  --n-resamples N    resamples of the randomization and bootstrap tests
                     [default: 10000]
  --seed N           seed of the resampling tests [default: 42]
  --format FMT       table [default], markdown, latex, csv or json
  --digits N         decimal places of the means in the table, markdown and
                     latex [default: 4] (csv and json keep every digit)
  --percent          print the means (and differences) times 100, two decimal
                     places fewer (0.5796 is 57.96), as ranx's show_percentages
  -o, --output FILE  write to FILE (atomically)
  -c                 score judged queries missing from a run 0 (trec_eval -c);
                     without it, such a query is an error
  -l LEVEL, -M K, -J, --threads N, --no-progress    as for evaluation
                     (irmetrics --help)
  -h, --help         show this help
";

/// Parsed `irmetrics compare` arguments.
#[derive(Clone, Debug)]
pub struct CompareArgs {
    /// Evaluation options.
    pub options: Options,
    /// Measures as written.
    pub measures: Vec<String>,
    /// How to compare.
    pub how: CompareOptions,
    /// Output format.
    pub format: Format,
    /// How the means are printed (`--digits`, `--percent`).
    pub style: Style,
    /// `--output`.
    pub output: Option<PathBuf>,
    /// The qrels file.
    pub qrels: PathBuf,
    /// The run files.
    pub runs: Vec<PathBuf>,
    /// `-h`.
    pub help: bool,
}

/// Parse the arguments after `compare`.
pub fn parse_compare_args<I, T>(argv: I) -> Result<CompareArgs>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    parse_compare_args_of("compare", argv)
}

/// [`parse_compare_args`] for `command`, which takes compare's arguments (`report`):
/// its messages name it.
pub fn parse_compare_args_of<I, T>(command: &str, argv: I) -> Result<CompareArgs>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    use lexopt::prelude::*;
    let mut a = CompareArgs {
        options: Options::default(),
        measures: Vec::new(),
        how: CompareOptions::default(),
        format: Format::Table,
        style: Style::default(),
        output: None,
        qrels: PathBuf::new(),
        runs: Vec::new(),
        help: false,
    };
    let mut positional: Vec<PathBuf> = Vec::new();
    let mut p = lexopt::Parser::from_args(argv);
    let lex = |e: lexopt::Error| usage_err(e.to_string());
    while let Some(arg) = p.next().map_err(lex)? {
        match arg {
            Short('h') | Long("help") => a.help = true,
            Short('c') => a.options.complete = true,
            Short('J') => a.options.judged_only = true,
            Short('m') | Long("measure") => a.measures.push(text("-m", p.value().map_err(lex)?)?),
            Short('l') => {
                a.options.relevance_level = num("-l", &text("-l", p.value().map_err(lex)?)?)?
            }
            Short('M') => {
                let m: i64 = num("-M", &text("-M", p.value().map_err(lex)?)?)?;
                if m <= 0 {
                    return Err(usage_err("-M needs a positive number of documents"));
                }
                a.options.max_docs = Some(m as u64);
            }
            Long("threads") => {
                let v = text("--threads", p.value().map_err(lex)?)?;
                a.options.n_threads = crate::parallel::parse_threads(&v, "--threads")?
            }
            Long("test") => a.how.test = Test::parse(&text("--test", p.value().map_err(lex)?)?)?,
            Long("correction") => {
                let v = text("--correction", p.value().map_err(lex)?)?;
                a.how.correction = Correction::parse(&v)?
            }
            Long("format") => {
                a.format = Format::parse(&text("--format", p.value().map_err(lex)?)?)?
            }
            Long("digits") | Long("percent") if command != "compare" => {
                return Err(usage_err(format!(
                    "--digits and --percent shape compare's tables, not {command}'s"
                )))
            }
            Long("digits") => {
                let v = text("--digits", p.value().map_err(lex)?)?;
                a.style = Style::new(num("--digits", &v)?, a.style.percent)?
            }
            Long("percent") => a.style.percent = true,
            Long("alpha") => {
                let v = text("--alpha", p.value().map_err(lex)?)?;
                a.how.alpha = v
                    .trim()
                    .parse()
                    .map_err(|_| usage_err(format!("--alpha needs a number, got '{v}'")))?;
            }
            Long("baseline") => a.how.baseline = Some(text("--baseline", p.value().map_err(lex)?)?),
            Long("alternative") => {
                let v = text("--alternative", p.value().map_err(lex)?)?;
                a.how.alternative = Alternative::parse(&v)?
            }
            Long("n-resamples") => {
                let v = text("--n-resamples", p.value().map_err(lex)?)?;
                a.how.n_resamples = num("--n-resamples", &v)?
            }
            Long("seed") => a.how.seed = num("--seed", &text("--seed", p.value().map_err(lex)?)?)?,
            Short('o') | Long("output") => a.output = Some(p.value().map_err(lex)?.into()),
            Value(v) => positional.push(v.into()),
            Short(c) => return Err(usage_err(format!("unknown option -{c} of {command}"))),
            Long(o) => return Err(usage_err(format!("unknown option --{o} of {command}"))),
        }
    }
    if a.help {
        return Ok(a);
    }
    if positional.len() < 3 {
        return Err(usage_err(format!(
            "{command} expects a qrels file and at least 2 run files"
        )));
    }
    a.runs = positional.split_off(1);
    a.qrels = positional.remove(0);
    if a.measures.is_empty() {
        a.measures = vec!["AP".into(), "nDCG@10".into()];
    }
    // the options' own errors (a one-sided test without --baseline) before any reading
    a.how.check()?;
    Ok(a)
}

/// The names of the runs: their file names, or the paths as given when two files
/// share a name.
pub fn run_names(paths: &[PathBuf]) -> Vec<String> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.to_string_lossy(), |n| n.to_string_lossy())
                .into_owned()
        })
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
    }
    names
}

/// Run `irmetrics compare` with the arguments after `compare`, counting in `progress`.
pub fn run_compare(
    argv: Vec<OsString>,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
    progress: Option<&crate::progress::Progress>,
) -> Result<()> {
    let args = parse_compare_args(argv)?;
    if args.help {
        return out
            .write_all(COMPARE_USAGE.as_bytes())
            .map_err(Error::stdout_write);
    }
    crate::check_environment()?;
    let measures = MeasureSet::parse(&args.measures)?;
    let qrels = crate::formats::read_qrels(&args.qrels, None, cancel)?;
    let ev = Evaluator::new(qrels, measures, args.options.clone())?;
    let names = run_names(&args.runs);
    let rep = crate::parallel::with_threads(args.options.n_threads, || -> Result<_> {
        let results = report::evaluate_run_files(&ev, &names, &args.runs, cancel, progress)?;
        report::from_results(&names, &results, &args.how, cancel, progress)
    })?;
    let mut text = rep.render_styled(args.format, args.style);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match &args.output {
        Some(p) => crate::trec::write_atomically(p, text.as_bytes()),
        None => out.write_all(text.as_bytes()).map_err(Error::stdout_write),
    }
}
