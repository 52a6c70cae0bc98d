//! `irmetrics fuse`: fuse TREC runs with one of ranx's methods and write the fused run
//! as TREC text (standard output, or `--output FILE` written atomically).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::error::{Error, Result};
use crate::fusion::{self, Method, Norm, Params};
use crate::run::Run;

/// Usage text of `irmetrics fuse`.
pub const FUSE_USAGE: &str = "\
usage: irmetrics fuse [options] RUN RUN [RUN ...]
       irmetrics fuse --optimize --metric MEASURE [options] QRELS RUN RUN [RUN ...]

Fuse TREC runs with one of ranx's methods (same definitions, same numbers) and write
the fused run as TREC text. RUN files may be gzip-compressed; '-' reads one from
standard input. Run files whose queries are sorted by id (or in one order shared by
all) are fused as they are read, in bounded memory; others are read whole first.

options:
  --method NAME      fusion method [default: rrf]: anz, bordafuse, condorcet, gmnz,
                     isr, log_isr, logn_isr, max, med, min, mixed, mnz, rbc, rrf,
                     sum, w_bordafuse, w_condorcet, wmnz, wsum; trained on --qrels:
                     bayesfuse, mapfuse, posfuse, probfuse, segfuse, slidefuse
  --norm NAME        normalize each run first: min-max, min-max-inverted, max, sum,
                     zmuv, rank, borda [default: none]
  --weights W,W,...  one weight per run (wsum, wmnz, mixed, w_bordafuse, w_condorcet)
  --param NAME=X     a parameter of the method, repeatable: k (rrf, default 60), phi
                     (rbc), gamma (gmnz), sigma (logn_isr, default 0.01),
                     n_segments (probfuse), w (slidefuse)
  --qrels FILE       the judgments the trained methods learn from
  --optimize         search ranx's grid of the method's parameters instead (QRELS
                     first): prints 'best SETTING SCORE'; --report adds every setting
  --metric MEASURE   the measure --optimize maximizes (its mean over the qrels'
                     queries) [default: ndcg]
  --step X           the grid's step [ranx's: 10 for k, 0.01, 0.1 for weights]
  --report           with --optimize: a line 'SETTING SCORE' per setting tried
  --name TAG         the run tag written [default: the method's name]
  -o, --output FILE  write to FILE (atomically: a temporary file, then renamed);
                     '-' or none: standard output
  --threads N        worker threads, 0 to 4096 [default 0: all cores]
  --no-progress      no progress bar for --optimize (irmetrics --help)
  -h, --help         show this help
";

/// Parsed `irmetrics fuse` arguments.
#[derive(Clone, Debug)]
pub struct FuseArgs {
    /// `--method`.
    pub method: Method,
    /// `--norm`.
    pub norm: Option<Norm>,
    /// `--weights` and `--param`.
    pub params: Params,
    /// `--name`.
    pub name: Option<String>,
    /// `--output` (`None` or `-`: standard output).
    pub output: Option<PathBuf>,
    /// `--threads`.
    pub threads: usize,
    /// The run files.
    pub runs: Vec<PathBuf>,
    /// `--qrels`, or with `--optimize` the first file.
    pub qrels: Option<PathBuf>,
    /// `--optimize`.
    pub optimize: bool,
    /// `--metric`.
    pub metric: String,
    /// `--step`.
    pub step: Option<f64>,
    /// `--report`.
    pub report: bool,
    /// `-h`.
    pub help: bool,
}

fn usage_err(msg: impl Into<String>) -> Error {
    Error::Option(format!("{} (see irmetrics fuse --help)", msg.into()))
}

fn text(flag: &str, v: OsString) -> Result<String> {
    v.into_string().map_err(|v| {
        usage_err(format!(
            "option {flag}: '{}' is not UTF-8",
            v.to_string_lossy()
        ))
    })
}

fn number(flag: &str, v: &str) -> Result<f64> {
    v.trim()
        .parse::<f64>()
        .map_err(|_| usage_err(format!("option {flag} needs a number, got '{v}'")))
}

/// Parse the arguments after `fuse`.
pub fn parse_fuse_args(argv: Vec<OsString>) -> Result<FuseArgs> {
    use lexopt::prelude::*;
    let mut a = FuseArgs {
        method: Method::Rrf,
        norm: None,
        params: Params::new(),
        name: None,
        output: None,
        threads: 0,
        runs: Vec::new(),
        qrels: None,
        optimize: false,
        metric: "ndcg".into(),
        step: None,
        report: false,
        help: false,
    };
    let mut p = lexopt::Parser::from_args(argv);
    let lex = |e: lexopt::Error| usage_err(e.to_string());
    while let Some(arg) = p.next().map_err(lex)? {
        match arg {
            Short('h') | Long("help") => a.help = true,
            Long("method") => {
                a.method = Method::parse(&text("--method", p.value().map_err(lex)?)?)?
            }
            Long("norm") => {
                let v = text("--norm", p.value().map_err(lex)?)?;
                a.norm = match v.as_str() {
                    "none" => None,
                    _ => Some(Norm::parse(&v)?),
                }
            }
            Long("weights") => {
                let v = text("--weights", p.value().map_err(lex)?)?;
                let w = v
                    .split(',')
                    .map(|x| number("--weights", x))
                    .collect::<Result<Vec<f64>>>()?;
                a.params = a.params.with_weights(w);
            }
            Long("param") => {
                let v = text("--param", p.value().map_err(lex)?)?;
                for item in v.split(',') {
                    let Some((name, x)) = item.split_once('=') else {
                        return Err(usage_err(format!(
                            "option --param needs NAME=VALUE, got '{item}'"
                        )));
                    };
                    a.params = a.params.set(name.trim(), number("--param", x)?);
                }
            }
            Long("name") => a.name = Some(text("--name", p.value().map_err(lex)?)?),
            Short('o') | Long("output") => {
                let v: PathBuf = p.value().map_err(lex)?.into();
                a.output = (v.as_os_str() != "-").then_some(v);
            }
            Long("threads") => {
                let v = text("--threads", p.value().map_err(lex)?)?;
                a.threads = crate::parallel::parse_threads(&v, "--threads")?;
            }
            Long("qrels") => a.qrels = Some(p.value().map_err(lex)?.into()),
            Long("optimize") => a.optimize = true,
            Long("report") => a.report = true,
            Long("metric") => a.metric = text("--metric", p.value().map_err(lex)?)?,
            Long("step") => {
                let v = text("--step", p.value().map_err(lex)?)?;
                a.step = Some(number("--step", &v)?);
            }
            Value(v) => a.runs.push(v.into()),
            Short(c) => return Err(usage_err(format!("unknown option -{c}"))),
            Long(o) => return Err(usage_err(format!("unknown option --{o}"))),
        }
    }
    if a.optimize && !a.help {
        if a.qrels.is_some() {
            return Err(usage_err(
                "with --optimize the qrels file comes first, not --qrels",
            ));
        }
        if a.runs.is_empty() {
            return Err(usage_err(
                "--optimize needs a qrels file and at least two runs",
            ));
        }
        a.qrels = Some(a.runs.remove(0));
    }
    if !a.help && a.runs.len() < 2 {
        return Err(usage_err(format!(
            "fusion needs at least two run files, got {}",
            a.runs.len()
        )));
    }
    Ok(a)
}

/// Run `irmetrics fuse ARGS`: read the runs, fuse them, write TREC text to `out` or
/// the `--output` file (nothing is written on any error).
pub fn run_fuse(
    argv: Vec<OsString>,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    run_fuse_with(argv, out, cancel, None)
}

/// [`run_fuse`], counting the settings `--optimize` tries in `progress`.
pub(crate) fn run_fuse_with(
    argv: Vec<OsString>,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
    progress: Option<&crate::progress::Progress>,
) -> Result<()> {
    let a = parse_fuse_args(argv)?;
    if a.help {
        return out
            .write_all(FUSE_USAGE.as_bytes())
            .map_err(Error::stdout_write);
    }
    crate::check_environment()?;
    if !a.optimize && a.qrels.is_none() && fusion::streamable(&a.runs).unwrap_or(false) {
        // fused as the files are read; any error: read whole below (its output, or
        // its message)
        let tag = a.name.as_deref().unwrap_or(a.method.name());
        if crate::run::check_runid(tag.as_bytes()).is_ok() {
            let dir = a
                .output
                .as_deref()
                .and_then(|p| p.parent())
                .filter(|d| d.is_dir());
            let fused = crate::parallel::with_threads(a.threads, || {
                fusion::fuse_files(
                    &a.runs,
                    a.method,
                    a.norm,
                    &a.params,
                    tag.as_bytes(),
                    dir,
                    cancel,
                )
            });
            match fused {
                Err(Error::Interrupted) => return Err(Error::Interrupted),
                Err(_) => {}
                Ok(text) => return emit_with(&a, out, |w| text.write_to(w), cancel),
            }
        }
    }
    let mut runs = Vec::with_capacity(a.runs.len());
    for path in &a.runs {
        runs.push(crate::formats::read_run(path, None, cancel)?);
    }
    let refs: Vec<&Run> = runs.iter().collect();
    let qrels = match &a.qrels {
        Some(p) => Some(crate::formats::read_qrels(p, None, cancel)?),
        None => None,
    };
    if a.optimize {
        let Some(qrels) = &qrels else {
            return Err(usage_err("--optimize needs a qrels file"));
        };
        let opt = crate::parallel::with_threads(a.threads, || {
            fusion::optimize_fusion_with(
                qrels, &refs, a.method, a.norm, &a.metric, a.step, cancel, progress,
            )
        })?;
        let mut text = String::new();
        if a.report {
            for t in &opt.trials {
                text.push_str(&format!("{}\t{}\n", setting(&t.params), t.score));
            }
        }
        text.push_str(&format!("best\t{}\t{}\n", setting(&opt.best), opt.score));
        return emit(&a, out, text.as_bytes(), cancel);
    }
    let mut fused = crate::parallel::with_threads(a.threads, || match &qrels {
        Some(q) => fusion::fuse_trained(q, &refs, a.method, a.norm, &a.params),
        None => fusion::fuse(&refs, a.method, a.norm, &a.params),
    })?;
    if let Some(name) = &a.name {
        fused.set_runid(name.as_bytes())?;
    }
    let mut text = Vec::new();
    crate::trec::write_run(&fused, &mut text).map_err(Error::stdout_write)?;
    emit(&a, out, &text, cancel)
}

/// Write the output: to `--output` atomically, or to `out`; nothing once interrupted.
fn emit(a: &FuseArgs, out: &mut dyn Write, text: &[u8], cancel: Option<&AtomicBool>) -> Result<()> {
    emit_with(a, out, |w| w.write_all(text), cancel)
}

/// [`emit`] of what `fill` writes.
fn emit_with(
    a: &FuseArgs,
    out: &mut dyn Write,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
        return Err(Error::Interrupted);
    }
    match &a.output {
        Some(p) => crate::trec::write_atomically_with(p, fill),
        None => fill(out).map_err(Error::stdout_write),
    }
}

/// A setting as the options that give it: `k=60`, `weights=0.3,0.7`.
fn setting(p: &Params) -> String {
    let mut parts: Vec<String> = p.values().iter().map(|(n, v)| format!("{n}={v}")).collect();
    if let Some(w) = &p.weights {
        let w: Vec<String> = w.iter().map(|x| x.to_string()).collect();
        parts.push(format!("weights={}", w.join(",")));
    }
    parts.join(" ")
}
