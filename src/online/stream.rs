//! Streaming a log file (JSON Lines or CSV) in bounded memory: only the open sessions
//! are held, each finished session is scored and forgotten.
//!
//! The rule a stream relies on: the log is in time order, up to a slack of
//! `time_slack` seconds (an event more than that before the latest one so far is an
//! error naming its line). A session is closed once the log's clock (its latest time)
//! has moved more than `session_timeout + time_slack` seconds past the session's last
//! event: no later event can then fall within `session_timeout` of it. An event of a
//! closed session's id starts a new session (the usual sessionization: a session ends
//! after `session_timeout`, 30 minutes by default, without an event), so a log whose
//! sessions have no gap longer than the timeout gives exactly the numbers of the whole
//! log read at once ([`super::evaluate`]), up to the order in which the sums of
//! `click_mrr` are added.
//!
//! Every metric but `time_to_first_click` is Σ numerator / Σ denominator over sessions
//! ([`super::metrics`]), summed as sessions close. The median time to first click is
//! exact: a count per distinct value, at most [`TTFC_DISTINCT_MAX`] of them (a log with
//! more is an error naming the limit, never an approximation). Grouping by variant (its
//! bootstrap needs every session's numbers), the top queries and queries per bucket
//! read the log whole.
//!
//! Memory: the open sessions' events (40 bytes each), the distinct query texts and
//! variants, and the time-to-first-click counts; not the log's length.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::log::{field, Log, LogBuilder, LogOptions};
use super::metrics::{add_into, ratios, Metric, Rows, SessionTable};
use super::read::{read_text, LogFormat};
use super::{Group, OnlineOptions, OnlineResults};
use crate::error::{Error, Result, Unit};

/// At most this many distinct times to first click are counted in a stream.
pub const TTFC_DISTINCT_MAX: usize = 1 << 21;

/// Events held before the first closing of finished sessions.
const HOLD_MIN: usize = 1 << 16;

/// How to stream a log.
#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// Seconds without an event after which a session is over (default 1800).
    pub session_timeout: f64,
    /// Seconds by which an event may come before the latest one so far (default 0).
    pub time_slack: f64,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            session_timeout: 1800.0,
            time_slack: 0.0,
        }
    }
}

/// What a log held: events kept, sessions, events of unknown types by type, events
/// that came before an earlier one of their session.
#[derive(Clone, Debug, PartialEq)]
pub struct LogSummary {
    /// Events kept (SERPs, clicks, success events).
    pub events: usize,
    /// Sessions.
    pub sessions: usize,
    /// Events of unknown types, ignored: `(type, count)`, by type.
    pub ignored: Vec<(String, u64)>,
    /// Events out of time order within their session (sorted).
    pub reordered: u64,
}

impl Log {
    /// The log's [`LogSummary`].
    pub fn summary(&self) -> LogSummary {
        LogSummary {
            events: self.len(),
            sessions: self.n_sessions(),
            ignored: self.ignored.clone(),
            reordered: self.reordered,
        }
    }
}

/// The running sums of a stream.
struct Sums {
    metrics: Vec<Metric>,
    dwell_threshold: f64,
    num: Vec<f64>,
    den: Vec<f64>,
    sessions: usize,
    events: usize,
    /// Events out of time order within their session, summed over the parts (each
    /// session lies in one part).
    reordered: u64,
    /// Time to first click (its bits, -0 as 0) -> count.
    ttfc: Option<FxHashMap<u64, u64>>,
    source: String,
}

impl Sums {
    /// Score the finished sessions of `log` and add them.
    fn add(&mut self, mut log: Log) -> Result<()> {
        // which columns the whole log has is known at its end (checked there)
        log.has = [true; 10];
        let t = SessionTable::new(&log, &self.metrics, self.dwell_threshold, Rows::Blocks)?;
        let (num, den) = t.sums(t.all_rows().into_iter());
        add_into(&mut self.num, &num);
        add_into(&mut self.den, &den);
        self.sessions += log.n_sessions();
        self.events += log.len();
        self.reordered += log.reordered;
        if let Some(counts) = self.ttfc.as_mut() {
            for &v in &t.ttfc {
                *counts.entry((v + 0.0).to_bits()).or_insert(0) += 1;
            }
            if counts.len() > TTFC_DISTINCT_MAX {
                return Err(Error::Input(format!(
                    "{}: time_to_first_click in a stream counts each distinct value, and \
                     this log has more than {TTFC_DISTINCT_MAX}; leave the metric out or \
                     read the log whole",
                    self.source
                )));
            }
        }
        Ok(())
    }

    /// numpy's median of the counted times to first click.
    fn median(&self) -> f64 {
        let Some(counts) = &self.ttfc else {
            return f64::NAN;
        };
        let mut values: Vec<(f64, u64)> = counts
            .iter()
            .map(|(&b, &c)| (f64::from_bits(b), c))
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n: u64 = values.iter().map(|v| v.1).sum();
        if n == 0 {
            return f64::NAN;
        }
        // the values at ranks (n - 1) / 2 and n / 2 (from 0)
        let at = |rank: u64| {
            let mut seen = 0;
            for &(v, c) in &values {
                seen += c;
                if rank < seen {
                    return v;
                }
            }
            f64::NAN
        };
        let (lo, hi) = (at((n - 1) / 2), at(n / 2));
        if n % 2 == 1 {
            hi
        } else {
            (lo + hi) / 2.0
        }
    }
}

/// Evaluate `metrics` (names; empty: every metric the log's columns allow) over a JSON
/// Lines or CSV log file streamed in bounded memory (see the module's rule), with the
/// log's summary.
pub fn evaluate_stream<S: AsRef<str>>(
    path: &Path,
    format: LogFormat,
    opts: LogOptions,
    metrics: &[S],
    how: &OnlineOptions,
    stream: &StreamOptions,
) -> Result<(OnlineResults, LogSummary)> {
    let StreamOptions {
        session_timeout,
        time_slack,
    } = *stream;
    if !(session_timeout > 0.0 && session_timeout.is_finite()) {
        return Err(Error::Option(format!(
            "session_timeout must be a positive number of seconds, got {session_timeout}"
        )));
    }
    if !(time_slack >= 0.0 && time_slack.is_finite()) {
        return Err(Error::Option(format!(
            "time_slack must be seconds >= 0, got {time_slack}"
        )));
    }
    if how.by_variant {
        return Err(Error::Option(
            "grouping by variant needs every session's numbers for its bootstrap: read the \
             log whole (not streamed)"
                .into(),
        ));
    }
    if format == LogFormat::Parquet {
        return Err(Error::Option(
            "streaming reads JSON Lines and CSV logs; a parquet log is read whole".into(),
        ));
    }
    let named = !metrics.is_empty();
    let all = if named {
        Metric::parse_all(metrics)?
    } else {
        Metric::all_defaults()
    };
    let source = path.display().to_string();
    let mut sums = Sums {
        num: vec![0.0; all.len()],
        den: vec![0.0; all.len()],
        ttfc: all
            .contains(&Metric::TimeToFirstClick)
            .then(FxHashMap::default),
        metrics: all,
        dwell_threshold: how.dwell_threshold,
        sessions: 0,
        events: 0,
        reordered: 0,
        source: source.clone(),
    };
    let mut b = LogBuilder::new(opts, &source, Unit::Line)?;
    b.require_time_order(time_slack, session_timeout + time_slack);
    let mut hold = HOLD_MIN;
    read_text(path, format, &mut b, &mut |b| {
        if b.held() >= hold {
            let closed = b.split_closed(b.latest() - session_timeout - time_slack)?;
            sums.add(closed)?;
            // the sessions still open: close again when the held events have doubled
            hold = HOLD_MIN.max(2 * b.held());
        }
        Ok(())
    })?;
    let rest = b.finish()?;
    if rest.has[field::POSITION] {
        if let Some(place) = rest.no_position {
            return Err(Error::format(&source, place, "a click without a position"));
        }
    }
    let has = rest.has;
    let mut summary = rest.summary();
    for m in &sums.metrics {
        if let (true, Some(f)) = (named, m.needs()) {
            rest.need(f, &m.name())?;
        }
    }
    sums.add(rest)?;
    summary.events = sums.events;
    summary.sessions = sums.sessions;
    summary.reordered = sums.reordered;
    let values = ratios(&sums.metrics, &sums.num, &sums.den, sums.median());
    let (names, values): (Vec<String>, Vec<f64>) = sums
        .metrics
        .iter()
        .zip(values)
        .filter(|(m, _)| named || m.needs().is_none_or(|f| has[f]))
        .map(|(m, v)| (m.name(), v))
        .unzip();
    Ok((
        OnlineResults {
            metrics: names,
            groups: vec![Group {
                name: "all".into(),
                sessions: sums.sessions,
                values,
            }],
            comparisons: vec![],
        },
        summary,
    ))
}
