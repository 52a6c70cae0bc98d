//! The `irmetrics` command line: trec_eval's flags, byte-identical trec_eval output, and
//! JSON / CSV / table output for people and scripts. `args.rs` reads the flags,
//! `output.rs` writes the formats; [`evaluate_args`] is the one evaluation flow, used by
//! [`run`] and by the Python compatibility layer (`irmetrics.compat`). Subcommands (the
//! first argument): `irmetrics fuse ...` is `fuse.rs` (rank fusion), `irmetrics compare
//! ...` is `compare.rs` (significance tests between runs), `irmetrics online ...` is
//! `online.rs` (online metrics of search logs); `irmetrics ndeval ...` is
//! `crate::diversity::ndeval` (ndeval's diversity evaluation).

mod args;
mod compare;
mod fuse;
mod online;
mod output;

pub use args::{parse_args, Args, Format, USAGE};
pub use compare::{
    parse_compare_args, parse_compare_args_of, run_names, CompareArgs, COMPARE_USAGE,
};
pub use fuse::{parse_fuse_args, run_fuse, FuseArgs, FUSE_USAGE};
pub use online::{parse_online_args, run_online, OnlineArgs, ONLINE_USAGE};

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measure::MeasureSet;
use crate::progress::{Progress, StderrBar};
use crate::rel_info::{Judgments, RelFormat};
use crate::results::Results;
use crate::zscore::ZScores;

/// Evaluate every run the arguments name, in order: the flow shared by the command
/// line and `irmetrics.compat`. Stops with [`Error::Interrupted`] soon after `cancel`
/// is set.
pub fn evaluate_args(args: &Args, cancel: Option<&AtomicBool>) -> Result<Vec<(PathBuf, Results)>> {
    evaluate_args_with(args, cancel, None)
}

/// [`evaluate_args`], counting the evaluated queries of each run in `progress` (each
/// run's queries announced once it is read: the total grows run by run; runs read as
/// a stream and preference judgments are not counted).
pub fn evaluate_args_with(
    args: &Args,
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<Vec<(PathBuf, Results)>> {
    if let Some(n) = args.max_line_bytes {
        crate::trec::set_max_line_bytes(n);
    }
    // the variables are checked up front, before any file is read
    crate::check_environment()?;
    let measures = MeasureSet::parse_trec_eval(&args.measures)?;
    let results = if args.rel_format == RelFormat::Qrels {
        let qrels = crate::formats::read_qrels(&args.qrels, None, cancel)?;
        let credibility = match &args.credibility {
            Some(path) => Some(crate::evaluate::read_credibility(path)?.into()),
            None => None,
        };
        let ev =
            Evaluator::new_with_credibility(qrels, measures, args.options.clone(), credibility)?;
        args.runs
            .iter()
            .map(|path| {
                let res = if args.stream {
                    ev.evaluate_file_cancellable(path, cancel)?
                } else {
                    ev.evaluate_path(path, cancel, progress)?
                };
                Ok((path.clone(), res))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        // measures first: a wrong measure is named before any file is read
        crate::rel_info::check_format(&measures, args.rel_format)?;
        let judgments = Judgments::from_file(&args.qrels, args.rel_format)?;
        args.runs
            .iter()
            .map(|path| {
                let run = crate::formats::read_run(path, None, cancel)?;
                let res = judgments.evaluate(&run, &measures, &args.options, cancel)?;
                Ok((path.clone(), res))
            })
            .collect::<Result<Vec<_>>>()?
    };
    match &args.zscores {
        None => Ok(results),
        Some(table) => {
            let table = ZScores::from_file(table)?;
            results
                .into_iter()
                .map(|(path, res)| Ok((path, table.apply(&res, args.options.complete)?)))
                .collect()
        }
    }
}

/// The exit status of the command line for an error: 2 for usage errors (bad options,
/// `-N`, `--threads`, `IRMETRICS_NUM_THREADS`, and every bad measure given to `-m`:
/// unknown names and parameters outside their domains), 130 for an interruption, 1
/// for everything else (input files that cannot be read or evaluated).
pub fn exit_code(e: &Error) -> i32 {
    match e {
        Error::Option(_) | Error::Measure(_) => 2,
        Error::Interrupted => 130,
        _ => 1,
    }
}

/// Run the command line, writing what it prints to `out`. Arguments are `OsString`s
/// (or anything that becomes one: `&str`, `String`): file names need not be UTF-8.
pub fn run<I, T>(argv: I, out: &mut dyn Write) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    run_cancellable(argv, out, None)
}

/// [`run`], stopping with [`Error::Interrupted`] soon after `cancel` is set; nothing is
/// written then (an `--output` file is left as it was).
pub fn run_cancellable<I, T>(
    argv: I,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    // `--no-progress` (any subcommand, before a `--`) is the bar's, read here
    let end = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    let before = argv.len();
    let mut i = 0;
    argv.retain(|a| {
        i += 1;
        i > end || a != NO_PROGRESS
    });
    let asked_off = argv.len() < before;
    with_bar(asked_off, |progress| dispatch(argv, out, cancel, progress))
}

/// The flag that turns the progress bar off.
const NO_PROGRESS: &str = "--no-progress";

/// The command line's progress bar: drawn on standard error while long work runs
/// (from [`crate::progress::bar_delay`] on) when standard error is a terminal, unless
/// `--no-progress` or `IRMETRICS_PROGRESS=0`; never when it is piped or redirected.
/// Standard output is the same with or without it.
fn with_bar<R>(off: bool, f: impl FnOnce(Option<&Progress>) -> R) -> R {
    use std::io::IsTerminal;
    let off = off || std::env::var_os("IRMETRICS_PROGRESS").is_some_and(|v| v == "0");
    if off || !std::io::stderr().is_terminal() {
        return f(None);
    }
    let progress = Progress::new();
    StderrBar::draw_while(&progress, crate::progress::bar_delay(), || {
        f(Some(&progress))
    })
}

fn dispatch(
    argv: Vec<OsString>,
    out: &mut dyn Write,
    cancel: Option<&AtomicBool>,
    progress: Option<&Progress>,
) -> Result<()> {
    if argv.first().is_some_and(|a| a == "fuse") {
        return fuse::run_fuse_with(argv[1..].to_vec(), out, cancel, progress);
    }
    if argv.first().is_some_and(|a| a == "online") {
        return run_online(argv[1..].to_vec(), out, cancel);
    }
    if argv.first().is_some_and(|a| a == "ndeval") {
        return crate::diversity::ndeval::run_ndeval(argv[1..].to_vec(), out);
    }
    if argv.first().is_some_and(|a| a == "compare") {
        return compare::run_compare(argv[1..].to_vec(), out, cancel, progress);
    }
    let args = parse_args(argv)?;
    if args.help {
        out.write_all(USAGE.as_bytes())
            .map_err(Error::stdout_write)?;
        return Ok(());
    }
    if args.version {
        writeln!(out, "irmetrics {}", env!("CARGO_PKG_VERSION")).map_err(Error::stdout_write)?;
        return Ok(());
    }
    let results = evaluate_args_with(&args, cancel, progress)?;
    if args.format == args::Format::Trec {
        // written as it is formatted, not held whole first
        let write = |w: &mut dyn Write| output::write_trec_all(&results, &args, w);
        return match &args.output {
            Some(p) => crate::trec::write_atomically_with(p, write),
            None => write(out).map_err(Error::stdout_write),
        };
    }
    let mut text = Vec::new();
    output::render_all(&results, &args, &mut text)?;
    match &args.output {
        Some(p) => crate::trec::write_atomically(p, &text),
        None => out.write_all(&text).map_err(Error::stdout_write),
    }
}
