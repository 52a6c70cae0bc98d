//! The `irmetrics` command line: trec_eval's flags, byte-identical trec_eval output, and
//! JSON / CSV / table output for people and scripts.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::evaluate::{Evaluator, Options};
use crate::measure::{Family, MeasureSet};
use crate::qrels::Qrels;
use crate::results::Results;
use crate::run::Run;

/// Usage text.
pub const USAGE: &str = "\
usage: irmetrics [options] QRELS RUN [RUN ...]

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
  -N NUM             number of documents in the collection (for utility)
other options:
  --format FMT       trec (default), json, csv or table
  --output FILE      write to FILE (atomically: a temporary file, then renamed)
  --threads N        worker threads [default: all cores, or IRMETRICS_NUM_THREADS]
  --stream           evaluate query by query without loading the run (bounded
                     memory; the run must be grouped by query)
  -h, --help         show this help
  -v, --version      show the version
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
    /// `-h`.
    pub help: bool,
    /// `-v`.
    pub version: bool,
}

fn usage_err(msg: impl Into<String>) -> Error {
    Error::Option(format!("{} (see irmetrics --help)", msg.into()))
}

fn num<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T> {
    v.trim()
        .parse()
        .map_err(|_| usage_err(format!("option {flag} needs a whole number, got '{v}'")))
}

/// Parse arguments (without the program name).
pub fn parse_args(argv: &[String]) -> Result<Args> {
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
        help: false,
        version: false,
    };
    let mut positional: Vec<String> = Vec::new();
    let mut i = 0;
    let take = |i: &mut usize, flag: &str, attached: &str| -> Result<String> {
        if !attached.is_empty() {
            return Ok(attached.to_string());
        }
        *i += 1;
        argv.get(*i)
            .cloned()
            .ok_or_else(|| usage_err(format!("option {flag} needs a value")))
    };
    while i < argv.len() {
        let arg = argv[i].as_str();
        if arg == "--" {
            positional.extend(argv[i + 1..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, val) = match long.split_once('=') {
                Some((n, v)) => (n, v),
                None => (long, ""),
            };
            match name {
                "help" => a.help = true,
                "stream" => a.stream = true,
                "version" => a.version = true,
                "format" => {
                    let v = take(&mut i, "--format", val)?;
                    a.format = match v.as_str() {
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
                "output" => a.output = Some(take(&mut i, "--output", val)?.into()),
                "threads" => {
                    a.options.n_threads = num("--threads", &take(&mut i, "--threads", val)?)?
                }
                "query_eval_wanted" => a.per_query = true,
                "nosummary" => a.summary = false,
                "complete_rel_info_wanted" => a.options.complete = true,
                "Judged_docs_only" => a.options.judged_only = true,
                "measure" => a.measures.push(take(&mut i, "--measure", val)?),
                "level_for_rel" => {
                    a.options.relevance_level = num("--level_for_rel", &take(&mut i, "-l", val)?)?
                }
                "Max_retrieved_per_topic" => {
                    a.options.max_docs = Some(num("-M", &take(&mut i, "-M", val)?)?)
                }
                "number_docs_in_coll" => {
                    a.options.num_docs_in_collection = num("-N", &take(&mut i, "-N", val)?)?
                }
                o => return Err(usage_err(format!("unknown option --{o}"))),
            }
            i += 1;
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            // Short options, possibly combined (-qc) or with attached values (-M100).
            let body = &arg[1..];
            for (pos, ch) in body.char_indices() {
                let rest = &body[pos + ch.len_utf8()..];
                match ch {
                    'q' => a.per_query = true,
                    'n' => a.summary = false,
                    'c' => a.options.complete = true,
                    'J' => a.options.judged_only = true,
                    'h' => a.help = true,
                    'v' => a.version = true,
                    'm' | 'M' | 'l' | 'N' | 'R' | 'Z' | 'T' | 'D' => {
                        let flag = format!("-{ch}");
                        let v = take(&mut i, &flag, rest)?;
                        match ch {
                            'm' => a.measures.push(v),
                            'M' => {
                                let m: i64 = num(&flag, &v)?;
                                if m <= 0 {
                                    return Err(usage_err(
                                        "-M needs a positive number of documents",
                                    ));
                                }
                                a.options.max_docs = Some(m as u64);
                            }
                            'l' => a.options.relevance_level = num(&flag, &v)?,
                            'N' => a.options.num_docs_in_collection = num(&flag, &v)?,
                            'R' if v == "qrels" => {}
                            'R' => {
                                return Err(usage_err(format!(
                                    "-R {v}: only the 'qrels' relevance format is supported \
                                     (preference and judgment-group formats are not yet)"
                                )))
                            }
                            'T' if v == "trec_results" => {}
                            _ => {
                                return Err(usage_err(format!(
                                    "option {flag} {v} is not supported"
                                )))
                            }
                        }
                        break;
                    }
                    other => return Err(usage_err(format!("unknown option -{other}"))),
                }
            }
            i += 1;
            continue;
        }
        positional.push(arg.to_string());
        i += 1;
    }
    if a.help || a.version {
        return Ok(a);
    }
    if positional.len() < 2 {
        return Err(usage_err("expected a qrels file and a run file"));
    }
    a.qrels = positional[0].clone().into();
    a.runs = positional[1..].iter().map(PathBuf::from).collect();
    if a.measures.is_empty() {
        a.measures.push("official".into());
    }
    Ok(a)
}

/// Run the command line; returns the text to print on success.
pub fn run(argv: &[String], out: &mut dyn Write) -> Result<()> {
    let args = parse_args(argv)?;
    if args.help {
        out.write_all(USAGE.as_bytes()).map_err(write_err)?;
        return Ok(());
    }
    if args.version {
        writeln!(out, "irmetrics {}", env!("CARGO_PKG_VERSION")).map_err(write_err)?;
        return Ok(());
    }
    let measures = MeasureSet::parse(&args.measures)?;
    let qrels = Qrels::from_file(&args.qrels)?;
    let ev = Evaluator::new(qrels, measures, args.options.clone())?;
    let mut text = Vec::new();
    for path in &args.runs {
        let res = if args.stream {
            ev.evaluate_file(path)?
        } else {
            ev.evaluate(&Run::from_file(path)?)?
        };
        render(&res, &args, path, &mut text);
    }
    match &args.output {
        Some(p) => crate::trec::write_atomically(p, &text),
        None => out.write_all(&text).map_err(write_err),
    }
}

fn write_err(e: std::io::Error) -> Error {
    Error::Io {
        path: "<stdout>".into(),
        source: e,
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        "null".into()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Render one run's results in the requested format.
fn render(res: &Results, args: &Args, path: &Path, out: &mut Vec<u8>) {
    let cols = res.columns();
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let value_cols: Vec<usize> = (0..cols.len())
        .filter(|&c| !matches!(cols[c].family, Family::RunId | Family::Relstring))
        .collect();
    match args.format {
        Format::Trec => {
            let _ = res.write_trec(out, args.per_query, args.summary);
        }
        Format::Json => {
            let mut s = String::from("{");
            s.push_str(&format!(
                "\"run\": {}, ",
                json_str(&path.display().to_string())
            ));
            s.push_str(&format!("\"runid\": {}, ", json_str(&lossy(res.runid()))));
            s.push_str(&format!("\"num_q\": {}", res.num_queries()));
            if args.summary {
                s.push_str(", \"all\": {");
                let parts: Vec<String> = value_cols
                    .iter()
                    .filter(|&&c| cols[c].family != Family::NumQ)
                    .map(|&c| format!("{}: {}", json_str(&cols[c].name), json_num(res.summary(c))))
                    .collect();
                s.push_str(&parts.join(", "));
                s.push('}');
            }
            if args.per_query {
                s.push_str(", \"per_query\": {");
                let qs: Vec<String> = res
                    .query_ids()
                    .iter()
                    .enumerate()
                    .map(|(q, id)| {
                        let parts: Vec<String> = value_cols
                            .iter()
                            .filter(|&&c| Results::is_per_query(&cols[c]))
                            .map(|&c| {
                                format!(
                                    "{}: {}",
                                    json_str(&cols[c].name),
                                    json_num(res.value(q, c))
                                )
                            })
                            .collect();
                        format!("{}: {{{}}}", json_str(&lossy(id)), parts.join(", "))
                    })
                    .collect();
                s.push_str(&qs.join(", "));
                s.push('}');
            }
            s.push_str("}\n");
            out.extend_from_slice(s.as_bytes());
        }
        Format::Csv | Format::Table => {
            let shown: Vec<usize> = value_cols
                .iter()
                .copied()
                .filter(|&c| cols[c].family != Family::NumQ)
                .collect();
            let mut rows: Vec<Vec<String>> = Vec::new();
            let mut header = vec!["query".to_string()];
            header.extend(shown.iter().map(|&c| cols[c].name.clone()));
            rows.push(header);
            let fmt = |c: usize, v: f64| {
                if cols[c].family.is_integer() {
                    format!("{}", v as i64)
                } else if args.format == Format::Table {
                    format!("{v:.4}")
                } else {
                    format!("{v:?}")
                }
            };
            if args.per_query {
                for (q, id) in res.query_ids().iter().enumerate() {
                    let mut r = vec![lossy(id)];
                    r.extend(shown.iter().map(|&c| {
                        if Results::is_per_query(&cols[c]) {
                            fmt(c, res.value(q, c))
                        } else {
                            String::new()
                        }
                    }));
                    rows.push(r);
                }
            }
            if args.summary {
                let mut r = vec!["all".to_string()];
                r.extend(shown.iter().map(|&c| fmt(c, res.summary(c))));
                rows.push(r);
            }
            if args.format == Format::Csv {
                for r in rows {
                    let line: Vec<String> = r.iter().map(|f| csv_field(f)).collect();
                    out.extend_from_slice(line.join(",").as_bytes());
                    out.push(b'\n');
                }
            } else {
                let widths: Vec<usize> = (0..rows[0].len())
                    .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
                    .collect();
                out.extend_from_slice(
                    format!(
                        "run {} (runid {}), {} queries\n",
                        path.display(),
                        lossy(res.runid()),
                        res.num_queries()
                    )
                    .as_bytes(),
                );
                for r in rows {
                    let cells: Vec<String> = r
                        .iter()
                        .enumerate()
                        .map(|(i, f)| {
                            if i == 0 {
                                format!("{f:<w$}", w = widths[i])
                            } else {
                                format!("{f:>w$}", w = widths[i])
                            }
                        })
                        .collect();
                    out.extend_from_slice(cells.join("  ").trim_end().as_bytes());
                    out.push(b'\n');
                }
            }
        }
    }
}
