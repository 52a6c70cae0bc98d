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
pub use read::{read_log, LogFormat};
pub use stream::{evaluate_stream, LogSummary, StreamOptions, TTFC_DISTINCT_MAX};
pub use time::{format_time, parse_time_text};
pub use traffic::{
    ctr_by_query, normalize_query, queries_per, top_queries, Bucket, Traffic, LATENCY_PERCENTILES,
};

use crate::error::{Error, Result};
use log::NONE;
use metrics::SessionTable;

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

/// Evaluate `metrics` (names; empty: every metric the log's columns allow, see
/// [`Metric::defaults`]) over the log.
pub fn evaluate<S: AsRef<str>>(
    log: &Log,
    metrics: &[S],
    opts: &OnlineOptions,
) -> Result<OnlineResults> {
    let metrics = if metrics.is_empty() {
        Metric::defaults(log)
    } else {
        Metric::parse_all(metrics)?
    };
    let table = SessionTable::new(log, &metrics, opts.dwell_threshold)?;
    let names: Vec<String> = metrics.iter().map(Metric::name).collect();
    let mut scratch = Vec::new();
    if !opts.by_variant {
        return Ok(OnlineResults {
            groups: vec![Group {
                name: "all".into(),
                sessions: log.n_sessions(),
                values: table.values(&(0..log.n_sessions()).collect::<Vec<_>>(), &mut scratch),
            }],
            metrics: names,
            comparisons: vec![],
        });
    }
    log.need(log::field::VARIANT, "grouping by variant")?;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); log.variants.len()];
    for (s, &v) in log.session_variant.iter().enumerate() {
        if v == NONE {
            let first = log.starts[s];
            return Err(log.error_at(
                first,
                format!(
                    "session '{}' has no variant (grouping by variant needs one)",
                    log.sessions[s]
                ),
            ));
        }
        members[v as usize].push(s);
    }
    let mut order: Vec<usize> = (0..log.variants.len()).collect();
    order.sort_by(|a, b| log.variants[*a].cmp(&log.variants[*b]));
    let Some(&first) = order.first() else {
        return Err(Error::Input(format!(
            "{} has no variant to group by",
            log.source
        )));
    };
    let base = match &opts.baseline {
        None => first,
        Some(b) => log.variants.iter().position(|v| v == b).ok_or_else(|| {
            Error::Option(format!(
                "baseline '{b}' is not a variant of the log ({})",
                order
                    .iter()
                    .map(|&i| log.variants[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?,
    };
    let groups: Vec<Group> = order
        .iter()
        .map(|&v| Group {
            name: log.variants[v].clone(),
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
            &table,
            &members[base],
            &members[v],
            (&groups[base_pos].values, &groups[g].values),
            &opts.resampling,
        )?;
        for (name, (difference, ci, pvalue)) in names.iter().zip(rows) {
            comparisons.push(Comparison {
                metric: name.clone(),
                baseline: log.variants[base].clone(),
                variant: log.variants[v].clone(),
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
