//! The `irmetrics` command line: trec_eval's flags, byte-identical trec_eval output, and
//! JSON / CSV / table output for people and scripts. `args.rs` reads the flags,
//! `output.rs` writes the formats; [`evaluate_args`] is the one evaluation flow, used by
//! [`run`] and by the Python compatibility layer (`irmetrics.compat`).

mod args;
mod output;

pub use args::{parse_args, Args, Format, USAGE};

use std::io::Write;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measure::MeasureSet;
use crate::qrels::Qrels;
use crate::results::Results;
use crate::run::Run;

/// Evaluate every run the arguments name, in order: the flow shared by the command
/// line and `irmetrics.compat`.
pub fn evaluate_args(args: &Args) -> Result<Vec<(PathBuf, Results)>> {
    if let Some(n) = args.max_line_bytes {
        crate::trec::set_max_line_bytes(n);
    }
    let measures = MeasureSet::parse(&args.measures)?;
    let qrels = Qrels::from_file(&args.qrels)?;
    let ev = Evaluator::new(qrels, measures, args.options.clone())?;
    args.runs
        .iter()
        .map(|path| {
            let res = if args.stream {
                ev.evaluate_file(path)?
            } else {
                ev.evaluate(&Run::from_file(path)?)?
            };
            Ok((path.clone(), res))
        })
        .collect()
}

/// Run the command line, writing what it prints to `out`.
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
    let mut text = Vec::new();
    for (path, res) in evaluate_args(&args)? {
        output::render(&res, &args, &path, &mut text)?;
    }
    match &args.output {
        Some(p) => crate::trec::write_atomically(p, &text),
        None => out.write_all(&text).map_err(write_err),
    }
}

fn write_err(e: std::io::Error) -> Error {
    Error::Write {
        path: "<stdout>".into(),
        source: e,
    }
}
