//! `irmetrics online`: online metrics of a search log ([`crate::online`]), per variant
//! with `--by variant`; `--top N` and `--per BUCKET` print the top queries and queries
//! per time bucket instead. Table, JSON or CSV.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use serde_json::{json, Map, Value};

use super::args::{num, text};
use crate::error::{Error, Result};
use crate::online::{
    self, Bucket, Log, LogFormat, LogOptions, LogSummary, OnlineOptions, OnlineResults,
    StreamOptions,
};

/// Usage text of `irmetrics online`.
pub const ONLINE_USAGE: &str = "\
usage: irmetrics online [options] LOG

Online metrics of a search log (JSON Lines or CSV, optionally .gz): one event per
line with session_id, timestamp, type (query = a SERP shown, click, or a success
event), and optionally query, n_results, position, doc_id, dwell, latency_ms, variant.
Definitions: README, \"Online metrics from search logs\".

options:
  -m METRIC            metric(s), repeatable or comma-separated [default: all the
                       log's columns allow]: abandonment_rate, ctr, ctr@K,
                       ctr_by_position (@P), clicks_per_query, success_rate,
                       zero_result_rate, time_to_first_click, click_mrr
  --by variant         one column per variant, and each arm against the baseline:
                       difference, bootstrap interval over sessions, p-value
  --baseline NAME      the arm the others are compared with [default: first by name]
  --dwell-threshold T  seconds of dwell that make a click a success [default: 30]
  --dwell-cap C        cap of dwell derived from the next event [default: 1800]
  --success-events E   event types that count as success [default: copy,purchase]
  --column FIELD=NAME  the log's column for a field, repeatable
  --time-unit U        unit of numeric timestamps: s, ms, us, ns [default: by size]
  --log-format F       jsonl, csv, tsv, parquet [default: by the file's extension]
  --n-resamples N      bootstrap resamples [default: 1000]
  --seed N             bootstrap seed [default: 42]
  --confidence C       interval confidence [default: 0.95]
  --top N              print the N most frequent queries instead
  --normalize          with --top: count queries lowercased, spaces collapsed
  --window START,END   with --top: SERPs with START <= time < END (numbers or ISO
                       8601)
  --per BUCKET         print queries per bucket instead (s, min, h, day, month),
                       with latency percentiles and spikes
  --spike-k K          spikes: count > median + K * max(1.4826 MAD, sqrt(median))
                       [default: 3]
  --stream             stream the file in bounded memory: it must be in time order
                       (up to --time-slack), a session ends after --session-timeout
                       seconds without an event; not with --by, --top, --per
  --session-timeout S  with --stream [default: 1800]
  --time-slack S       with --stream: seconds an event may come before the latest
                       one [default: 0]
  --format FMT         table [default], json or csv
  -o, --output FILE    write to FILE (atomically)
  --threads N          worker threads, 0 to 4096 [default 0: all cores]
  -h, --help           show this help
";

/// What to print.
#[derive(Clone, Debug, PartialEq)]
enum Mode {
    Metrics,
    Top(usize),
    Per(Bucket),
}

/// Parsed `irmetrics online` arguments.
#[derive(Clone, Debug)]
pub struct OnlineArgs {
    log: PathBuf,
    log_format: String,
    read: LogOptions,
    how: OnlineOptions,
    metrics: Vec<String>,
    mode: Mode,
    normalize: bool,
    window: Option<(String, String)>,
    spike_k: f64,
    stream: Option<StreamOptions>,
    format: String,
    output: Option<PathBuf>,
    threads: usize,
    help: bool,
}

fn usage_err(msg: impl Into<String>) -> Error {
    Error::Option(format!("{} (see irmetrics online --help)", msg.into()))
}

fn real(flag: &str, v: &str) -> Result<f64> {
    v.trim()
        .parse()
        .map_err(|_| usage_err(format!("option {flag} needs a number, got '{v}'")))
}

/// The value of an option.
fn val(p: &mut lexopt::Parser, flag: &str) -> Result<String> {
    text(flag, p.value().map_err(|e| usage_err(e.to_string()))?)
}

/// Parse the arguments after `online`.
pub fn parse_online_args(argv: Vec<OsString>) -> Result<OnlineArgs> {
    use lexopt::prelude::*;
    let mut a = OnlineArgs {
        log: PathBuf::new(),
        log_format: "auto".into(),
        read: LogOptions::default(),
        how: OnlineOptions::default(),
        metrics: vec![],
        mode: Mode::Metrics,
        normalize: false,
        window: None,
        spike_k: 3.0,
        stream: None,
        format: "table".into(),
        output: None,
        threads: 0,
        help: false,
    };
    let mut logs: Vec<PathBuf> = vec![];
    let mut p = lexopt::Parser::from_args(argv);
    let lex = |e: lexopt::Error| usage_err(e.to_string());
    while let Some(arg) = p.next().map_err(lex)? {
        match arg {
            Short('h') | Long("help") => a.help = true,
            Short('m') | Long("metric") => {
                let v = val(&mut p, "-m")?;
                a.metrics.extend(v.split(',').map(|s| s.trim().to_string()));
            }
            Long("by") => {
                let v = val(&mut p, "--by")?;
                if v != "variant" {
                    return Err(usage_err(format!("--by takes 'variant', got '{v}'")));
                }
                a.how.by_variant = true;
            }
            Long("baseline") => a.how.baseline = Some(val(&mut p, "--baseline")?),
            Long("dwell-threshold") => {
                a.how.dwell_threshold =
                    real("--dwell-threshold", &val(&mut p, "--dwell-threshold")?)?
            }
            Long("dwell-cap") => {
                a.read.dwell_cap = real("--dwell-cap", &val(&mut p, "--dwell-cap")?)?
            }
            Long("success-events") => {
                a.read.success_events = val(&mut p, "--success-events")?
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            }
            Long("column") => {
                let v = val(&mut p, "--column")?;
                let (f, n) = v
                    .split_once('=')
                    .ok_or_else(|| usage_err(format!("--column needs FIELD=NAME, got '{v}'")))?;
                a.read.map(f.trim(), n.trim())?;
            }
            Long("time-unit") => a.read.set_time_unit(&val(&mut p, "--time-unit")?)?,
            Long("log-format") => a.log_format = val(&mut p, "--log-format")?,
            Long("n-resamples") => {
                a.how.resampling.n_resamples = num("--n-resamples", &val(&mut p, "--n-resamples")?)?
            }
            Long("seed") => a.how.resampling.seed = num("--seed", &val(&mut p, "--seed")?)?,
            Long("confidence") => {
                a.how.resampling.confidence = real("--confidence", &val(&mut p, "--confidence")?)?
            }
            Long("top") => a.mode = Mode::Top(num("--top", &val(&mut p, "--top")?)?),
            Long("normalize") => a.normalize = true,
            Long("window") => {
                let v = val(&mut p, "--window")?;
                let (s, e) = v
                    .split_once(',')
                    .ok_or_else(|| usage_err(format!("--window needs START,END, got '{v}'")))?;
                a.window = Some((s.trim().into(), e.trim().into()));
            }
            Long("per") => a.mode = Mode::Per(Bucket::parse(&val(&mut p, "--per")?)?),
            Long("spike-k") => a.spike_k = real("--spike-k", &val(&mut p, "--spike-k")?)?,
            Long("stream") => {
                a.stream.get_or_insert_with(StreamOptions::default);
            }
            Long("session-timeout") => {
                let v = real("--session-timeout", &val(&mut p, "--session-timeout")?)?;
                a.stream
                    .get_or_insert_with(StreamOptions::default)
                    .session_timeout = v;
            }
            Long("time-slack") => {
                let v = real("--time-slack", &val(&mut p, "--time-slack")?)?;
                a.stream
                    .get_or_insert_with(StreamOptions::default)
                    .time_slack = v;
            }
            Long("format") => {
                let v = val(&mut p, "--format")?;
                if !matches!(v.as_str(), "table" | "json" | "csv") {
                    return Err(usage_err(format!(
                        "--format takes table, json or csv, got '{v}'"
                    )));
                }
                a.format = v;
            }
            Short('o') | Long("output") => {
                let v: PathBuf = p.value().map_err(lex)?.into();
                a.output = (v.as_os_str() != "-").then_some(v);
            }
            Long("threads") => {
                a.threads = crate::parallel::parse_threads(&val(&mut p, "--threads")?, "--threads")?
            }
            Value(v) => logs.push(v.into()),
            Short(c) => return Err(usage_err(format!("unknown option -{c}"))),
            Long(o) => return Err(usage_err(format!("unknown option --{o}"))),
        }
    }
    if !a.help {
        if logs.len() != 1 {
            return Err(usage_err(format!("give one log file, got {}", logs.len())));
        }
        a.log = logs.remove(0);
    }
    Ok(a)
}

/// A value as JSON (null for NaN).
fn jnum(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A value for the table and CSV (NaN: empty in CSV, `-` in the table).
fn cell(v: f64, table: bool) -> String {
    if v.is_nan() {
        return if table { "-".into() } else { String::new() };
    }
    if table {
        format!("{v:.4}")
    } else {
        v.to_string()
    }
}

/// The rows of the metrics (header first): the metric, each group's value, and per
/// other arm its difference, interval and p-value.
fn metric_rows(res: &OnlineResults, table: bool) -> Vec<Vec<String>> {
    let arms: Vec<&str> = {
        let mut v: Vec<&str> = res.comparisons.iter().map(|c| c.variant.as_str()).collect();
        v.dedup();
        v
    };
    let base = res
        .comparisons
        .first()
        .map(|c| c.baseline.as_str())
        .unwrap_or("");
    let mut header = vec!["metric".to_string()];
    header.extend(res.groups.iter().map(|g| g.name.clone()));
    for a in &arms {
        header.extend([
            format!("{a}-{base}"),
            "ci_low".into(),
            "ci_high".into(),
            "p".into(),
        ]);
    }
    let mut rows = vec![header];
    for (m, name) in res.metrics.iter().enumerate() {
        let mut r = vec![name.clone()];
        r.extend(res.groups.iter().map(|g| cell(g.values[m], table)));
        for c in res.comparisons.iter().filter(|c| &c.metric == name) {
            r.extend([c.difference, c.ci.0, c.ci.1, c.pvalue].map(|v| cell(v, table)));
        }
        rows.push(r);
    }
    rows
}

fn csv_of(rows: &[Vec<String>]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(r).map_err(|e| Error::Input(e.to_string()))?;
    }
    w.into_inner().map_err(|e| Error::Input(e.to_string()))
}

fn log_summary(log: &LogSummary, path: &std::path::Path) -> String {
    let mut s = format!(
        "log {}: {} events, {} sessions",
        path.display(),
        log.events,
        log.sessions
    );
    if !log.ignored.is_empty() {
        let parts: Vec<String> = log
            .ignored
            .iter()
            .map(|(t, n)| format!("{n} '{t}'"))
            .collect();
        s.push_str(&format!("; ignored (unknown types): {}", parts.join(", ")));
    }
    if log.reordered > 0 {
        s.push_str(&format!(
            "; {} events out of time order (sorted)",
            log.reordered
        ));
    }
    s
}

fn log_json(log: &LogSummary) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("events".into(), json!(log.events));
    m.insert("sessions".into(), json!(log.sessions));
    let ignored: Map<String, Value> = log
        .ignored
        .iter()
        .map(|(t, n)| (t.clone(), json!(n)))
        .collect();
    m.insert("ignored".into(), Value::Object(ignored));
    m.insert("reordered".into(), json!(log.reordered));
    m
}

/// A window bound: a number (the log's unit of numbers is not known here: seconds) or
/// ISO 8601 text.
fn bound(s: &str) -> Result<f64> {
    if let Ok(v) = s.parse::<f64>() {
        return Ok(v);
    }
    crate::online::parse_time_text(s).ok_or_else(|| {
        usage_err(format!(
            "--window: '{s}' is neither a number of seconds nor ISO 8601 text"
        ))
    })
}

/// The metrics as a table, JSON or CSV.
fn render_metrics(a: &OnlineArgs, res: &OnlineResults, log: &LogSummary) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match a.format.as_str() {
        "json" => {
            let mut m = log_json(log);
            let group = |g: &online::Group| -> Value {
                let vals: Map<String, Value> = res
                    .metrics
                    .iter()
                    .cloned()
                    .zip(g.values.iter().map(|v| jnum(*v)))
                    .collect();
                Value::Object(vals)
            };
            if a.how.by_variant {
                let groups: Map<String, Value> = res
                    .groups
                    .iter()
                    .map(|g| (g.name.clone(), group(g)))
                    .collect();
                m.insert("groups".into(), Value::Object(groups));
                let cmp: Vec<Value> = res
                    .comparisons
                    .iter()
                    .map(|c| {
                        json!({"metric": c.metric, "baseline": c.baseline, "variant": c.variant,
                               "difference": jnum(c.difference), "ci": [jnum(c.ci.0), jnum(c.ci.1)],
                               "pvalue": jnum(c.pvalue)})
                    })
                    .collect();
                m.insert("comparisons".into(), Value::Array(cmp));
            } else {
                m.insert("metrics".into(), group(&res.groups[0]));
            }
            out = serde_json::to_vec_pretty(&Value::Object(m))
                .map_err(|e| Error::Input(e.to_string()))?;
            out.push(b'\n');
        }
        "csv" => out = csv_of(&metric_rows(res, false))?,
        _ => {
            out.extend(format!("{}\n", log_summary(log, &a.log)).as_bytes());
            super::output::aligned(&metric_rows(res, true), 1, &mut out);
        }
    }
    Ok(out)
}

fn render(a: &OnlineArgs, log: &Log) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let table = a.format == "table";
    match &a.mode {
        Mode::Metrics => {
            let res = online::evaluate(log, &a.metrics, &a.how)?;
            out = render_metrics(a, &res, &log.summary())?;
        }
        Mode::Top(n) => {
            let window = match &a.window {
                Some((s, e)) => Some((bound(s)?, bound(e)?)),
                None => None,
            };
            let rows = online::top_queries(log, *n, window, a.normalize)?;
            if a.format == "json" {
                let v: Vec<Value> = rows
                    .iter()
                    .map(|(q, c, s)| json!({"query": q, "count": c, "share": jnum(*s)}))
                    .collect();
                out = serde_json::to_vec_pretty(&v).map_err(|e| Error::Input(e.to_string()))?;
                out.push(b'\n');
            } else {
                let mut t = vec![vec!["query".to_string(), "count".into(), "share".into()]];
                t.extend(
                    rows.iter()
                        .map(|(q, c, s)| vec![q.clone(), c.to_string(), cell(*s, table)]),
                );
                if table {
                    super::output::aligned(&t, 1, &mut out);
                } else {
                    out = csv_of(&t)?;
                }
            }
        }
        Mode::Per(bucket) => {
            let tr = online::queries_per(log, *bucket, a.spike_k)?;
            let mut t = vec![vec!["start".to_string(), "count".into()]];
            if tr.latency.is_some() {
                t[0].extend(online::LATENCY_PERCENTILES.map(|p| format!("latency_p{p}")));
            }
            t[0].push("spike".into());
            for (j, start) in tr.start.iter().enumerate() {
                let mut r = vec![online::format_time(*start), tr.count[j].to_string()];
                if let Some(l) = &tr.latency {
                    r.extend(l[j].map(|v| cell(v, table)));
                }
                r.push(if tr.spike[j] {
                    "spike".into()
                } else {
                    String::new()
                });
                t.push(r);
            }
            match a.format.as_str() {
                "json" => {
                    let rows: Vec<Value> = t[1..]
                        .iter()
                        .zip(0..)
                        .map(|(r, j)| {
                            let mut o = Map::new();
                            o.insert("start".into(), json!(r[0]));
                            o.insert("count".into(), json!(tr.count[j]));
                            if let Some(l) = &tr.latency {
                                for (p, v) in online::LATENCY_PERCENTILES.iter().zip(l[j]) {
                                    o.insert(format!("latency_p{p}"), jnum(v));
                                }
                            }
                            o.insert("spike".into(), json!(tr.spike[j]));
                            Value::Object(o)
                        })
                        .collect();
                    let doc = json!({"threshold": jnum(tr.threshold), "buckets": rows});
                    out =
                        serde_json::to_vec_pretty(&doc).map_err(|e| Error::Input(e.to_string()))?;
                    out.push(b'\n');
                }
                "csv" => out = csv_of(&t)?,
                _ => {
                    out.extend(
                        format!("spike threshold {:.2} queries per bucket\n", tr.threshold)
                            .as_bytes(),
                    );
                    super::output::aligned(&t, 1, &mut out);
                }
            }
        }
    }
    Ok(out)
}

/// Run `irmetrics online ARGS`.
pub fn run_online(
    argv: Vec<OsString>,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    let a = parse_online_args(argv)?;
    if a.help {
        return out
            .write_all(ONLINE_USAGE.as_bytes())
            .map_err(Error::stdout_write);
    }
    crate::check_environment()?;
    let format = LogFormat::of(&a.log_format, &a.log)?;
    let text = crate::parallel::with_threads(a.threads, || -> Result<Vec<u8>> {
        if let Some(stream) = &a.stream {
            if a.mode != Mode::Metrics || a.how.by_variant {
                return Err(usage_err(
                    "--stream computes the metrics of the whole log: not with --by, --top or --per",
                ));
            }
            let (res, summary) = online::evaluate_stream(
                &a.log,
                format,
                a.read.clone(),
                &a.metrics,
                &a.how,
                stream,
            )?;
            return render_metrics(&a, &res, &summary);
        }
        let log = online::read_log(&a.log, format, a.read.clone())?;
        render(&a, &log)
    })?;
    if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
        return Err(Error::Interrupted);
    }
    match &a.output {
        Some(p) => crate::trec::write_atomically(p, &text),
        None => out.write_all(&text).map_err(Error::stdout_write),
    }
}
