//! # irmetrics
//!
//! Fast, exact evaluation of ranked retrieval: the numbers of NIST's trec_eval 10 to the
//! last digit (same tie-breaking, same definitions, full double precision), computed in
//! parallel, plus the measures trec_eval lacks. This crate is the engine; the Python
//! package `irmetrics` wraps it (enable the `python` feature), and it works as a plain
//! Rust library without Python.
//!
//! ```
//! use irmetrics::{evaluate, Options, Qrels, Run};
//!
//! let qrels = Qrels::from_bytes(b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 1\n", "qrels")?;
//! let run = Run::from_bytes(
//!     b"q1 Q0 d3 1 2.5 bm25\nq1 Q0 d1 2 2.1 bm25\nq2 Q0 d7 1 1.0 bm25\nq2 Q0 d9 2 0.5 bm25\n",
//!     "run",
//! )?;
//! let res = evaluate(&qrels, &run, &["P.1", "map", "ndcg_cut.10"], Options::default())?;
//! assert_eq!(res.summary_by_name("P_1"), Some(0.5));
//! // per-query values and trec_eval's text output
//! assert_eq!(res.query_ids().len(), 2);
//! let text = String::from_utf8(res.to_trec(false, true)).unwrap();
//! assert!(text.starts_with("map                   \tall\t0.7500\n"));
//! # Ok::<(), irmetrics::Error>(())
//! ```
//!
//! Numeric conventions follow trec_eval: documents are ranked by score descending, ties
//! broken by document id descending (byte order); the rank column of a run is ignored;
//! a label >= the relevance level (default 1) is relevant, 0 is judged non-relevant, a
//! negative label is "pooled but unjudged"; `all` values are sums in query order
//! divided once by the number of queries.
//!
//! ## Code map
//!
//! Data flows one way: input → [`intake`] → [`Qrels`] / [`Run`] (or a
//! [`QueryStream`]) → [`mod@evaluate`] (per query: [`metrics`]) → [`Results`] → output.
//! No module imports one that imports it back (`tests/architecture.rs` checks it).
//!
//! | question | where |
//! |---|---|
//! | where does a run or qrels line become data? | `trec/run.rs`, `trec/qrels.rs` (fields in `trec/fields.rs`, files and blocks in `trec/io.rs`), then [`intake`]; other formats (JSONL, ranx's JSON, TSV) and the choice by file name: `formats/`; parquet: `formats/parquet.rs` |
//! | Arrow record batches (pyarrow, polars, DuckDB, parquet) to runs, qrels and logs, and back | [`mod@arrow`] (columns found by name, ids and values read in place, batch by batch), `online/arrow.rs` (logs); the Python side only imports the batches (`python/arrow.rs`) |
//! | how do rows become whole queries (any source)? | [`intake`]: `Grouper`, `Sequence`, `Origins`, the score policy, the duplicate check |
//! | where does Python meet Rust? | `python/` (not public): `data.rs` (Qrels, Run), `evaluate.rs` (Evaluator), `convert.rs` (values, columns), `arrow.rs` (the Arrow PyCapsule interface in and out), `stream.rs` (the push API), `pickle.rs`, `results.rs` (results to dicts), `pipeline.rs`, `errors.rs` |
//! | where are measure names parsed? | `measure/parse.rs` (the one grammar); the catalogue of families is data in `measure/family.rs` |
//! | where is nDCG (or any measure) computed? | `metrics/`: one file per concept, listed in `metrics/mod.rs` (nDCG and every gain-based measure: `metrics/dcg.rs`) |
//! | where is the per-query loop and the `all` row? | `evaluate/mod.rs` (`Evaluator`), `evaluate/stream.rs` (`QueryStream`), `results.rs` |
//! | statistics and correlations | `stats.rs` (the one `Statistic`), `correlation.rs` (Kendall's tau-b in O(n log n) with its p-value, tau_ap, RBO) |
//! | which system is better? | `compare/`: `paired.rs` (t, Wilcoxon, sign, randomization, bootstrap tests), `correct.rs` (Holm, BH, ...), `effect.rs` (d_z, g_z, intervals), `tukey.rs` (studentized range, Tukey HSD, randomized Tukey), `anova.rs` (two-way ANOVA), `report.rs` ([`compare()`](compare::compare) and the `Report`'s formats), `rng.rs` (one seeded stream per resample) |
//! | the command line | `cli/args.rs` (trec_eval's flags), `cli/output.rs` (trec, JSON, CSV, table), `cli/mod.rs` (the flow) |
//! | fusion and normalization (ranx's methods) | `fusion/`: `names.rs` (methods, norms, parameters), `norm.rs`, `kernels.rs`, `trained.rs` (methods learnt from qrels), `optimize.rs` (grid search), `mod.rs` (per-query flow); `cli/fuse.rs`, `python/fusion.rs` |
//! | dense matrices (one row per query: sklearn's shape) | `dense.rs` (to qrels and a run; sklearn's DCG with tie averaging) |
//! | preference judgments, judgment groups (trec_eval's `-R prefs`, `qrels_prefs`, `qrels_jg`) | `rel_info/`: `prefs.rs` (the `prefs_*` measures), `pref_counts.rs`, `groups.rs` (the `*_avgjg` measures); lines read by `trec/lines.rs` |
//! | diversity measures (alpha-nDCG, ERR-IA, NRBP, P-IA, AP-IA, subtopic recall; ndeval's) | `diversity/`: `mod.rs` (subtopic qrels, the per-topic flow), `names.rs`, `kernel.rs` (one topic's curves, ndeval's greedy ideal ranking); `python/diversity.rs` |
//! | z-scores (`-Z`) | `zscore.rs`: the table of means and deviations, and results turned into z-scores |
//! | relevance and credibility (Lioma et al. 2017: nlre, ngre, nwcs, cam, wham) | `metrics/credibility.rs` (kernels), `evaluate/credibility.rs` (the credibility judgments, `--credibility` / `credibility=`) |
//! | online metrics from search logs | `online/`: `log.rs` (the event model, the one `LogBuilder`), `time.rs`, `read.rs` (JSONL, CSV, parquet), `stream.rs` (a JSONL or CSV file in bounded memory), `arrow.rs` (Arrow batches), `metrics.rs` (definitions as per-session numerators and denominators), `ab.rs` (variants, bootstrap over sessions), `mod.rs::session_parts`/`evaluate_sessions` (a log read in parts of whole sessions, as `irmetrics.spark.online` reads it, put together bit for bit), `traffic.rs` (top queries, queries per bucket, spikes); `cli/online.rs`, `python/online.rs` |
//! | errors, ids, threads | `error.rs` (one `Error`), `ids.rs` (ids in one buffer, hash indexes), `parallel.rs` |
//! | progress of long work (Python's `progress=`, the command line's bar) | `progress.rs` (the one `Progress` counter, the stderr bar); polled in `python/mod.rs` |
//!
//! New capabilities (comparing systems: `compare/`; fusion; online metrics: `online/`) each get a
//! folder of their own beside `evaluate/`, take their inputs through [`intake`] and return plain
//! Rust values; `python/` gains one file each.

#![warn(missing_docs)]

#[cfg(feature = "arrow")]
pub mod arrow;
pub mod cli;
pub mod compare;
pub mod correlation;
pub mod dense;
pub mod diversity;
pub mod error;
pub mod evaluate;
pub mod formats;
pub mod fusion;
mod ids;
pub mod intake;
pub mod measure;
pub mod metrics;
pub mod online;
pub mod parallel;
pub mod progress;
pub mod qrels;
pub mod rel_info;
pub mod results;
pub mod run;
pub mod stats;
#[cfg(test)]
mod testing;
pub mod trec;
pub mod zscore;

#[cfg(feature = "python")]
mod python;

/// With the `mimalloc` feature, the program's (or the extension's) Rust allocations use
/// mimalloc: glibc grows the arenas of rayon's threads by one `mprotect` call at a time,
/// which dominated reading a 2-million-line qrels file.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use error::{Error, Result};

pub use evaluate::{evaluate, pooled_auroc, read_credibility, Evaluator, Options, QueryStream};
pub use intake::Rows;
pub use measure::{parse_measure, parse_measure_as, Family, Measure, MeasureSet, Names};
pub use qrels::{Qrels, QrelsBuilder, QrelsQuery};
pub use results::{Column, Results};
pub use run::{Run, RunBuilder, RunQuery, Ties};

/// The settings read from the environment (`IRMETRICS_NUM_THREADS`,
/// `IRMETRICS_MAX_LINE_BYTES`) checked, a bad value an [`Error::Option`]: where an
/// evaluator is built and where a command starts, before any file is read (the places
/// that read them later cannot return an error).
pub fn check_environment() -> Result<()> {
    parallel::env_threads()?;
    trec::check_max_line_env()
}
