//! The command line's grammar: trec_eval's flags (`-q -c -M1000 -m P.5,10 -l2 -N`,
//! combined as `-qc`) and irmetrics' own long options, read with lexopt (a small,
//! maintained parser that takes short-flag clusters and attached values as trec_eval's
//! getopt does).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::evaluate::Options;
use crate::rel_info::RelFormat;

/// Usage text.
pub const USAGE: &str = "\
usage: irmetrics [options] QRELS RUN [RUN ...]
       irmetrics fuse [options] RUN RUN [RUN ...]   (see irmetrics fuse --help)
       irmetrics compare [options] QRELS RUN1 RUN2 [RUN ...]   (see compare --help)
       irmetrics online [options] LOG   (see irmetrics online --help)

Evaluate TREC runs against relevance judgments; output identical to trec_eval 10.
QRELS and RUN may be gzip-compressed; '-' reads a run from standard input.

trec_eval options:
  -q                 also print a value for each query
  -n                 do not print the summary ('all') values
  -m MEASURE         measure(s) to compute, repeatable: trec_eval names (P.5,10,
                     ndcg_cut.10, map, official, all_trec, set), ir_measures names
                     (nDCG@10, P(rel=2)@5, AP, RR@10) or ranx names (ndcg@10, mrr)
                     [default: official]
  -c                 score judged queries missing from the run as empty rankings
                     (without it such queries are an error)
  -l LEVEL           minimum label of a relevant document [default: 1]
  -M K               evaluate only the top K documents of each ranking
  -J                 rank only judged documents
  -N NUM             number of documents in the collection (utility, fallout and
                     the confusion-matrix rates); 0 = unknown [default], else at
                     least the judged documents of every query
  -R FORMAT          format of QRELS: qrels [default]; prefs (qid jg jsg docno
                     level: preferences, -m all_prefs / prefs); qrels_prefs (qrels
                     read as preferences, column 2 the judgment group); qrels_jg
                     (qrels of several judgment groups, -m qrels_jg: map_avgjg,
                     P_avgjg, Rprec_mult_avgjg)
  -Z FILE            print z-scores: each value becomes (value - mean) / stddev
                     with FILE's 'qid measure mean stddev' lines
  --credibility FILE credibility judgments (qrels-shaped, labels 0 or more) for
                     nlre, ngre, nwcs, cam, wham (Lioma et al. 2017)
  -T FORMAT          format of RUN: trec_results, the only one
  -D LEVEL           trec_eval's debug level: accepted, no traces printed
other options:
  --format FMT       trec (default), json, csv or table
  --output FILE      write to FILE (atomically: a temporary file, then renamed)
  --threads N        worker threads, 0 to 4096 [default 0: all cores, or
                     IRMETRICS_NUM_THREADS, which follows the same rule]
  --stream           evaluate query by query without loading the run (bounded
                     memory; the run must be grouped by query, standard input
                     too). Without it a run file grouped by query is streamed
                     anyway, and any other read whole
  --max-line-bytes N longest line accepted in the input files [default: 1048576,
                     or IRMETRICS_MAX_LINE_BYTES]
  --no-progress      no progress bar (else drawn on stderr when it is a terminal
                     and the work runs over 2 s; IRMETRICS_PROGRESS=0 too)
  -h, --help         show this help
  -v, --version      show the version

Measure parameters must lie in their domains (rbp.p=0.8: 0 < p < 1;
iprec_at_recall levels 0..1; set_F and F beta >= 0; ...; see the README).
Exit status: 0 success; 1 bad input files (format, labels, no common query);
2 bad options or measures (-m, -N, --threads, IRMETRICS_NUM_THREADS); 130
interrupted.
";

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// trec_eval's text.
    Trec,
    /// A JSON object.
    Json,
    /// Comma-separated values, one row per query plus `all`.
    Csv,
    /// An aligned table for people.
    Table,
}

/// Parsed command line.
#[derive(Clone, Debug)]
pub struct Args {
    /// Evaluation options.
    pub options: Options,
    /// Requested measures (as written).
    pub measures: Vec<String>,
    /// `-q`.
    pub per_query: bool,
    /// not `-n`.
    pub summary: bool,
    /// Output format.
    pub format: Format,
    /// `--output`.
    pub output: Option<PathBuf>,
    /// The qrels file.
    pub qrels: PathBuf,
    /// The run files.
    pub runs: Vec<PathBuf>,
    /// `--stream`.
    pub stream: bool,
    /// `--max-line-bytes`.
    pub max_line_bytes: Option<usize>,
    /// `-h`.
    pub help: bool,
    /// `-v`.
    pub version: bool,
    /// `-R`: the format of the judgments file.
    pub rel_format: RelFormat,
    /// `-Z`: a table of per-query means and deviations; values become z-scores.
    pub zscores: Option<PathBuf>,
    /// `--credibility`: credibility judgments for the relevance-and-credibility measures.
    pub credibility: Option<PathBuf>,
}

pub(super) fn usage_err(msg: impl Into<String>) -> Error {
    Error::Option(format!("{} (see irmetrics --help)", msg.into()))
}

pub(super) fn num<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T> {
    v.trim()
        .parse()
        .map_err(|_| usage_err(format!("option {flag} needs a whole number, got '{v}'")))
}

/// The value of an option as a string (ids and paths are the user's own bytes; a
/// value that is not UTF-8 is refused with its flag named).
pub(super) fn text(flag: &str, v: std::ffi::OsString) -> Result<String> {
    v.into_string().map_err(|v| {
        usage_err(format!(
            "option {flag}: '{}' is not UTF-8",
            v.to_string_lossy()
        ))
    })
}

/// Parse arguments (without the program name), with trec_eval's grammar: combined
/// short flags (`-qc`), values attached or apart (`-M1000`, `-m P.5,10`), long options
/// with `=` or a space, `--` ending the options, `-` a file (standard input). File names
/// are the user's bytes (`OsString`s, any encoding); option values must be UTF-8.
pub fn parse_args<I, T>(argv: I) -> Result<Args>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    use lexopt::prelude::*;
    let mut a = Args {
        options: Options::default(),
        measures: Vec::new(),
        per_query: false,
        summary: true,
        format: Format::Trec,
        output: None,
        qrels: PathBuf::new(),
        runs: Vec::new(),
        stream: false,
        max_line_bytes: None,
        help: false,
        version: false,
        rel_format: RelFormat::Qrels,
        zscores: None,
        credibility: None,
    };
    let mut positional: Vec<PathBuf> = Vec::new();
    let mut p = lexopt::Parser::from_args(argv);
    let lex = |e: lexopt::Error| usage_err(e.to_string());
    while let Some(arg) = p.next().map_err(lex)? {
        match arg {
            Short('q') | Long("query_eval_wanted") => a.per_query = true,
            Short('n') | Long("nosummary") => a.summary = false,
            Short('c') | Long("complete_rel_info_wanted") => a.options.complete = true,
            Short('J') | Long("Judged_docs_only") => a.options.judged_only = true,
            Short('h') | Long("help") => a.help = true,
            Short('v') | Long("version") => a.version = true,
            Long("stream") => a.stream = true,
            Short('m') | Long("measure") => a.measures.push(text("-m", p.value().map_err(lex)?)?),
            Short('M') | Long("Max_retrieved_per_topic") => {
                let m: i64 = num("-M", &text("-M", p.value().map_err(lex)?)?)?;
                if m <= 0 {
                    return Err(usage_err("-M needs a positive number of documents"));
                }
                a.options.max_docs = Some(m as u64);
            }
            Short('l') | Long("level_for_rel") => {
                a.options.relevance_level = num("-l", &text("-l", p.value().map_err(lex)?)?)?
            }
            Short('N') | Long("number_docs_in_coll") => {
                a.options.num_docs_in_collection = num("-N", &text("-N", p.value().map_err(lex)?)?)?
            }
            Short('R') | Long("Rel_info_format") => {
                let v = text("-R", p.value().map_err(lex)?)?;
                a.rel_format = RelFormat::parse(&v).map_err(|e| usage_err(e.to_string()))?;
            }
            Short('T') | Long("Results_format") => {
                let v = text("-T", p.value().map_err(lex)?)?;
                if v != "trec_results" {
                    return Err(usage_err(format!(
                        "-T {v}: the only results format is trec_results (as in trec_eval)"
                    )));
                }
            }
            Short('Z') | Long("Zscore") => a.zscores = Some(p.value().map_err(lex)?.into()),
            Short('D') | Long("Debug_level") => {
                // trec_eval's debug level (its traces are not reproduced); `-D N.qid`
                // would also restrict the evaluation to one query
                let v = text("-D", p.value().map_err(lex)?)?;
                if v.contains('.') || v.trim().parse::<i64>().is_err() {
                    return Err(usage_err(format!(
                        "-D {v}: the debug level must be a whole number (trec_eval's \
                         -D level.query form is not supported)"
                    )));
                }
            }
            Long("format") => {
                a.format = match text("--format", p.value().map_err(lex)?)?.as_str() {
                    "trec" | "trec_eval" => Format::Trec,
                    "json" => Format::Json,
                    "csv" => Format::Csv,
                    "table" => Format::Table,
                    o => {
                        return Err(usage_err(format!(
                            "unknown format '{o}' (trec, json, csv, table)"
                        )))
                    }
                }
            }
            Long("output") => a.output = Some(p.value().map_err(lex)?.into()),
            Long("credibility") => a.credibility = Some(p.value().map_err(lex)?.into()),
            Long("max-line-bytes") => {
                let v = text("--max-line-bytes", p.value().map_err(lex)?)?;
                a.max_line_bytes = Some(num("--max-line-bytes", &v)?);
            }
            Long("threads") => {
                let v = text("--threads", p.value().map_err(lex)?)?;
                a.options.n_threads = crate::parallel::parse_threads(&v, "--threads")?
            }
            Value(v) => positional.push(v.into()),
            Short(c) => return Err(usage_err(format!("unknown option -{c}"))),
            Long(o) => return Err(usage_err(format!("unknown option --{o}"))),
        }
    }
    if a.help || a.version {
        return Ok(a);
    }
    if positional.len() < 2 {
        return Err(usage_err("expected a qrels file and a run file"));
    }
    a.runs = positional.split_off(1);
    a.qrels = positional.remove(0);
    if a.measures.is_empty() {
        a.measures.push(a.rel_format.default_measures().into());
    }
    Ok(a)
}
