//! Online metrics from search logs: the numbers behind A/B tests (abandonment, CTR,
//! success, zero results, time to first click, click MRR), the top queries and queries
//! per time bucket.
//!
//! | file | what it holds |
//! |---|---|
//! | `log.rs` | the event model ([`Log`]), its options and the one [`LogBuilder`] every source feeds |
//! | `time.rs` | timestamps (numbers in s/ms/us/ns, ISO 8601) and calendar months |
//! | `read.rs` | JSON Lines and CSV files |
//! | `stream.rs` | a JSON Lines or CSV file streamed in bounded memory (open sessions only) |
//! | `metrics.rs` | the metrics' definitions, as per-session numerators and denominators |
//! | `mod.rs` | [`evaluate`]; [`session_parts`] and [`evaluate_sessions`]: a log read in parts of whole sessions (Spark partitions) put together |
//! | `ab.rs` | per-variant values, differences, bootstrap intervals and p-values |
//! | `traffic.rs` | top queries, queries per bucket, latency percentiles, spikes |
//!
//! Bad input: a click before any SERP of its session, negative dwell, latency or
//! counts, positions below 1, a session in two variants, timestamps written two ways
//! and missing required fields are errors naming the line (row); events out of time
//! order within a session are sorted (and counted: [`Log::reordered`]); events of other
//! types than `query`, `click` and the success events are ignored and counted by type
//! ([`Log::ignored`]).
//!
//! ```
//! use irmetrics::online::{evaluate, Log, LogBuilder, LogOptions, Event, Time, OnlineOptions};
//! use irmetrics::error::Unit;
//! use std::borrow::Cow;
//!
//! let mut b = LogBuilder::new(LogOptions::default(), "log", Unit::Row)?;
//! let ev = |s: &'static str, t: f64, k: &'static str, pos: Option<f64>| Event {
//!     session: Some(Cow::Borrowed(s)), time: Some(Time::Number(t)),
//!     kind: Some(Cow::Borrowed(k)), position: pos, ..Event::default()
//! };
//! b.push(ev("s1", 0.0, "query", None), 0)?;
//! b.push(ev("s1", 4.0, "click", Some(2.0)), 1)?;
//! b.push(ev("s2", 9.0, "query", None), 2)?;
//! let log: Log = b.finish()?;
//! let res = evaluate(&log, &["ctr", "click_mrr", "abandonment_rate"], &OnlineOptions::default())?;
//! // one SERP of two clicked; MRR (1/2 + 0) / 2; one session of two abandoned
//! assert_eq!(res.groups[0].values, vec![0.5, 0.25, 0.5]);
//! # Ok::<(), irmetrics::Error>(())
//! ```

mod ab;
#[cfg(feature = "arrow")]
pub mod arrow;
mod log;
mod metrics;
mod read;
mod stream;
mod time;
mod traffic;

pub use ab::{Comparison, Resampling};
pub use log::{Event, Kind, Log, LogBuilder, LogOptions, Time, DWELL_CAP, FIELDS, REQUIRED};
pub use metrics::{Metric, BY_POSITION_DEFAULT, CTR_AT_DEFAULT};
#[cfg(feature = "parquet")]
pub use read::open_parquet;
pub use read::{read_log, LogFormat};
pub use stream::{evaluate_stream, LogSummary, StreamOptions, TTFC_DISTINCT_MAX};
pub use time::{format_time, parse_time_text};
pub use traffic::{
    ctr_by_query, normalize_query, queries_per, top_queries, Bucket, Traffic, LATENCY_PERCENTILES,
};

use crate::error::{Error, Result};
use log::NONE;
use metrics::{Rows, SessionTable};

/// How to evaluate a log.
#[derive(Clone, Debug)]
pub struct OnlineOptions {
    /// A click with at least this dwell (seconds) is a success (default 30).
    pub dwell_threshold: f64,
    /// Group sessions by their variant and compare the arms.
    pub by_variant: bool,
    /// The arm the others are compared with (default: the first in name order).
    pub baseline: Option<String>,
    /// The bootstrap's settings.
    pub resampling: Resampling,
}

impl Default for OnlineOptions {
    fn default() -> Self {
        OnlineOptions {
            dwell_threshold: 30.0,
            by_variant: false,
            baseline: None,
            resampling: Resampling::default(),
        }
    }
}

/// The values of one group of sessions (all of them, or one variant).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// `all`, or the variant.
    pub name: String,
    /// Sessions in the group.
    pub sessions: usize,
    /// One value per metric of [`OnlineResults::metrics`].
    pub values: Vec<f64>,
}

/// The metrics of a log: one group, or one per variant with the arms' comparisons.
#[derive(Clone, Debug, PartialEq)]
pub struct OnlineResults {
    /// The metrics' names, in order.
    pub metrics: Vec<String>,
    /// The groups (variants in name order).
    pub groups: Vec<Group>,
    /// Each arm against the baseline, per metric (empty without `by_variant`).
    pub comparisons: Vec<Comparison>,
}

/// The metrics of `metrics` (names; empty: every metric the log's columns allow, see
/// [`Metric::defaults`]).
fn resolve<S: AsRef<str>>(log: &Log, metrics: &[S]) -> Result<Vec<Metric>> {
    if metrics.is_empty() {
        Ok(Metric::defaults(log))
    } else {
        Metric::parse_all(metrics)
    }
}

/// Evaluate `metrics` (names; empty: every metric the log's columns allow, see
/// [`Metric::defaults`]) over the log.
pub fn evaluate<S: AsRef<str>>(
    log: &Log,
    metrics: &[S],
    opts: &OnlineOptions,
) -> Result<OnlineResults> {
    let metrics = resolve(log, metrics)?;
    let rows = if opts.by_variant {
        Rows::Sessions
    } else {
        Rows::Blocks
    };
    let table = SessionTable::new(log, &metrics, opts.dwell_threshold, rows)?;
    if opts.by_variant {
        log.need(log::field::VARIANT, "grouping by variant")?;
    }
    let arms = Arms {
        of_session: &log.session_variant,
        names: &log.variants,
        source: &log.source,
    };
    grouped(&table, &arms, opts, |s| {
        log.error_at(
            log.starts[s],
            format!(
                "session '{}' has no variant (grouping by variant needs one)",
                log.session(s)
            ),
        )
    })
}

/// Each session's variant ([`NONE`]: none), the variants' names and where they came from.
struct Arms<'a> {
    of_session: &'a [u32],
    names: &'a [String],
    source: &'a str,
}

/// The results from the sessions' table: one group of all sessions, or one per
/// variant and each arm compared with the baseline (`no_variant(s)`: the error for
/// session `s` without a variant).
fn grouped(
    table: &SessionTable,
    arms: &Arms<'_>,
    opts: &OnlineOptions,
    no_variant: impl Fn(usize) -> Error,
) -> Result<OnlineResults> {
    let names: Vec<String> = table.metrics.iter().map(Metric::name).collect();
    let mut scratch = Vec::new();
    if !opts.by_variant {
        return Ok(OnlineResults {
            groups: vec![Group {
                name: "all".into(),
                sessions: table.sessions,
                values: table.values(&table.all_rows(), &mut scratch),
            }],
            metrics: names,
            comparisons: vec![],
        });
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); arms.names.len()];
    for (s, &v) in arms.of_session.iter().enumerate() {
        if v == NONE {
            return Err(no_variant(s));
        }
        members[v as usize].push(s);
    }
    let mut order: Vec<usize> = (0..arms.names.len()).collect();
    order.sort_by(|a, b| arms.names[*a].cmp(&arms.names[*b]));
    let Some(&first) = order.first() else {
        return Err(Error::Input(format!(
            "{} has no variant to group by",
            arms.source
        )));
    };
    let base = match &opts.baseline {
        None => first,
        Some(b) => arms.names.iter().position(|v| v == b).ok_or_else(|| {
            Error::Option(format!(
                "baseline '{b}' is not a variant of the log ({})",
                order
                    .iter()
                    .map(|&i| arms.names[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    let groups: Vec<Group> = order
        .iter()
        .map(|&v| Group {
            name: arms.names[v].clone(),
            sessions: members[v].len(),
            values: table.values(&members[v], &mut scratch),
        })
        .collect();
    let base_pos = order.iter().position(|&v| v == base).unwrap_or(0);
    let mut comparisons = Vec::new();
    for (g, &v) in order.iter().enumerate() {
        if v == base {
            continue;
        }
        let rows = ab::compare_arms(
            table,
            &members[base],
            &members[v],
            (&groups[base_pos].values, &groups[g].values),
            &opts.resampling,
        )?;
        for (name, (difference, ci, pvalue)) in names.iter().zip(rows) {
            comparisons.push(Comparison {
                metric: name.clone(),
                baseline: arms.names[base].clone(),
                variant: arms.names[v].clone(),
                difference,
                ci,
                pvalue,
            });
        }
    }
    Ok(OnlineResults {
        metrics: names,
        groups,
        comparisons,
    })
}

/// What each session of a log gives to the metrics, for a log whose sessions are read
/// in parts (the partitions of a Spark DataFrame, each holding whole sessions): the
/// parts' sessions put together in the order of the whole log's sessions (their first
/// events' order) and [`evaluate_sessions`] give what [`evaluate`] gives on the whole
/// log, to the last bit (its sums run over the sessions in that order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionParts {
    /// The metrics' names, resolved (`ctr_by_position` as its positions).
    pub metrics: Vec<String>,
    /// The sessions, in order of their first event.
    pub sessions: Vec<String>,
    /// The place (line or row) of each session's first event.
    pub first_place: Vec<u64>,
    /// Each session's variant: an index into `variants`, [`u32::MAX`] for none.
    pub variant: Vec<u32>,
    /// The variants.
    pub variants: Vec<String>,
    /// Per session and metric (row-major) the numerator and the denominator.
    pub num: Vec<f64>,
    /// See `num`.
    pub den: Vec<f64>,
    /// The times to first click of session `s`: `ttfc[ttfc_ends[s]..ttfc_ends[s + 1]]`
    /// (`ttfc_ends[0]` is 0).
    pub ttfc: Vec<f64>,
    /// See `ttfc`.
    pub ttfc_ends: Vec<usize>,
}

/// The sessions' parts of `metrics` (names; empty: the log's defaults) over the log.
pub fn session_parts<S: AsRef<str>>(
    log: &Log,
    metrics: &[S],
    dwell_threshold: f64,
) -> Result<SessionParts> {
    let metrics = resolve(log, metrics)?;
    let t = SessionTable::new(log, &metrics, dwell_threshold, Rows::Sessions)?;
    Ok(SessionParts {
        metrics: metrics.iter().map(Metric::name).collect(),
        sessions: log.session_names(),
        first_place: log
            .starts
            .windows(2)
            .map(|w| {
                log.ev[w[0]..w[1]]
                    .iter()
                    .map(|e| e.place())
                    .min()
                    .unwrap_or(0)
            })
            .collect(),
        variant: log.session_variant.clone(),
        variants: log.variants.clone(),
        num: t.num,
        den: t.den,
        ttfc: t.ttfc,
        ttfc_ends: t.ttfc_ends,
    })
}

/// The results of sessions' parts put together (see [`SessionParts`]): what
/// [`evaluate`] gives on the whole log; `source` names the log in errors.
pub fn evaluate_sessions(
    parts: SessionParts,
    opts: &OnlineOptions,
    source: &str,
) -> Result<OnlineResults> {
    let metrics = Metric::parse_all(&parts.metrics)?;
    let (n, w) = (parts.sessions.len(), metrics.len());
    let bad = |what: &str| Error::Input(format!("{source}: the sessions' parts disagree: {what}"));
    if parts.num.len() != n * w || parts.den.len() != n * w {
        return Err(bad(
            "numerators and denominators are not one per session and metric",
        ));
    }
    if parts.variant.len() != n || parts.first_place.len() != n {
        return Err(bad("variants or first places are not one per session"));
    }
    let ends_ok = parts.ttfc_ends.len() == n + 1
        && parts.ttfc_ends.first() == Some(&0)
        && parts.ttfc_ends.windows(2).all(|e| e[0] <= e[1])
        && parts.ttfc_ends.last() == Some(&parts.ttfc.len());
    if !ends_ok {
        return Err(bad(
            "the times to first click do not end where their sessions do",
        ));
    }
    if let Some(v) = parts
        .variant
        .iter()
        .find(|v| **v != NONE && **v as usize >= parts.variants.len())
    {
        return Err(bad(&format!(
            "variant {v} of {} variants",
            parts.variants.len()
        )));
    }
    let SessionParts {
        sessions,
        variant,
        variants,
        num,
        den,
        ttfc,
        ttfc_ends,
        ..
    } = parts;
    let table = SessionTable {
        metrics,
        rows: Rows::Sessions,
        sessions: n,
        num,
        den,
        ttfc,
        ttfc_ends,
    };
    let arms = Arms {
        of_session: &variant,
        names: &variants,
        source,
    };
    grouped(&table, &arms, opts, |s| {
        Error::Input(format!(
            "{source}: session '{}' has no variant (grouping by variant needs one)",
            sessions[s]
        ))
    })
}
