//! What teams watch every day: the top queries over a window, CTR per query, and
//! queries per time bucket with latency percentiles and spikes. Both count SERPs (events of type
//! `query`).
//!
//! Spikes: a bucket is a spike when its count exceeds median + k · scale over all
//! buckets from the first to the last (empty ones count 0), where scale =
//! max(1.4826 · MAD, √median): the median absolute deviation, scaled to a standard
//! deviation for normal data, and at least the Poisson noise of the median count (so a
//! flat series with MAD 0 does not flag every bucket one above the median). k defaults
//! to 3.

use super::log::{field, Kind, Log, NONE};
use super::metrics::median;
use super::time::{civil_month, days_from_civil};
use crate::error::{Error, Result};

/// A query's text for counting under normalization: lowercase, runs of white space as
/// one space, trimmed.
pub fn normalize_query(q: &str) -> String {
    q.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `n` most frequent queries among the SERPs whose time lies in `window`
/// (`[start, end)`, seconds; `None`: all), as (query, count, share of those SERPs);
/// ties by query text. With `normalize`, queries are counted by [`normalize_query`].
/// A SERP without query text is an error.
pub fn top_queries(
    log: &Log,
    n: usize,
    window: Option<(f64, f64)>,
    normalize: bool,
) -> Result<Vec<(String, u64, f64)>> {
    log.need(field::QUERY, "top_queries")?;
    let mut counts = vec![0u64; log.queries.len()];
    let mut total = 0u64;
    for i in 0..log.len() {
        if log.ev[i].kind() != Kind::Serp {
            continue;
        }
        if window.is_some_and(|(a, b)| !(log.ev[i].time >= a && log.ev[i].time < b)) {
            continue;
        }
        let q = log.ev[i].query;
        if q == NONE {
            return Err(log.error_at(i, "a SERP (type 'query') without query text".into()));
        }
        counts[q as usize] += 1;
        total += 1;
    }
    let mut merged: rustc_hash::FxHashMap<String, u64> = Default::default();
    let mut rows: Vec<(String, u64)> = Vec::new();
    if normalize {
        for (q, c) in log.queries.iter().zip(&counts) {
            if *c > 0 {
                *merged.entry(normalize_query(q)).or_insert(0) += c;
            }
        }
        rows.extend(merged);
    } else {
        rows.extend(
            log.queries
                .iter()
                .zip(&counts)
                .filter(|(_, c)| **c > 0)
                .map(|(q, c)| (q.clone(), *c)),
        );
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(n);
    Ok(rows
        .into_iter()
        .map(|(q, c)| (q, c, c as f64 / total as f64))
        .collect())
}

/// CTR per query: `(query, SERPs, SERPs with a click, CTR)` for each query text (with
/// `normalize`, counted by [`normalize_query`]), most SERPs first, ties by text; the
/// first `n` of them. A SERP without query text is an error.
pub fn ctr_by_query(log: &Log, n: usize, normalize: bool) -> Result<Vec<(String, u64, u64, f64)>> {
    log.need(field::QUERY, "ctr_by_query")?;
    let mut serps = vec![0u64; log.queries.len()];
    let mut clicked = vec![0u64; log.queries.len()];
    // a click belongs to the latest SERP before it in its session
    for s in 0..log.n_sessions() {
        let mut current: Option<(u32, bool)> = None;
        for i in log.n_events(s) {
            match log.ev[i].kind() {
                Kind::Serp => {
                    if let Some((q, true)) = current {
                        clicked[q as usize] += 1;
                    }
                    let q = log.ev[i].query;
                    if q == NONE {
                        return Err(
                            log.error_at(i, "a SERP (type 'query') without query text".into())
                        );
                    }
                    serps[q as usize] += 1;
                    current = Some((q, false));
                }
                Kind::Click => {
                    if let Some((_, c)) = current.as_mut() {
                        *c = true;
                    }
                }
                Kind::Success => {}
            }
        }
        if let Some((q, true)) = current {
            clicked[q as usize] += 1;
        }
    }
    let mut merged: rustc_hash::FxHashMap<String, (u64, u64)> = Default::default();
    for (q, (a, b)) in log.queries.iter().zip(serps.iter().zip(&clicked)) {
        if *a > 0 {
            let key = if normalize {
                normalize_query(q)
            } else {
                q.clone()
            };
            let e = merged.entry(key).or_insert((0, 0));
            e.0 += a;
            e.1 += b;
        }
    }
    let mut rows: Vec<(String, u64, u64, f64)> = merged
        .into_iter()
        .map(|(q, (a, b))| (q, a, b, b as f64 / a as f64))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows.truncate(n);
    Ok(rows)
}

/// A time bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    /// One second.
    Second,
    /// One minute.
    Minute,
    /// One hour.
    Hour,
    /// One day (UTC).
    Day,
    /// One calendar month (UTC).
    Month,
}

impl Bucket {
    /// `s` (`second`), `min` (`minute`), `h` (`hour`), `day` (`d`), `month`.
    pub fn parse(name: &str) -> Result<Bucket> {
        Ok(match name.trim() {
            "s" | "sec" | "second" => Bucket::Second,
            "min" | "minute" => Bucket::Minute,
            "h" | "hour" => Bucket::Hour,
            "d" | "day" => Bucket::Day,
            "month" => Bucket::Month,
            _ => {
                return Err(Error::Option(format!(
                    "time bucket must be s, min, h, day or month, got '{name}'"
                )))
            }
        })
    }

    fn width(self) -> f64 {
        match self {
            Bucket::Second => 1.0,
            Bucket::Minute => 60.0,
            Bucket::Hour => 3600.0,
            Bucket::Day => 86400.0,
            Bucket::Month => f64::NAN,
        }
    }

    /// The bucket's number of a time (seconds since the epoch).
    fn index(self, t: f64) -> i64 {
        match self {
            Bucket::Month => {
                let (y, m) = civil_month((t / 86400.0).floor() as i64);
                y * 12 + i64::from(m) - 1
            }
            b => (t / b.width()).floor() as i64,
        }
    }

    /// The start (seconds since the epoch) of bucket number `i`.
    fn start(self, i: i64) -> f64 {
        match self {
            Bucket::Month => {
                days_from_civil(i.div_euclid(12), (i.rem_euclid(12) + 1) as u32, 1) as f64 * 86400.0
            }
            b => i as f64 * b.width(),
        }
    }
}

/// The latency percentiles reported per bucket.
pub const LATENCY_PERCENTILES: [f64; 3] = [50.0, 95.0, 99.0];

/// Most buckets a series may have.
const MAX_BUCKETS: i64 = 50_000_000;

/// Queries per time bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    /// Each bucket's start, seconds since the epoch, from the first SERP's bucket to the
    /// last's.
    pub start: Vec<f64>,
    /// SERPs per bucket.
    pub count: Vec<u64>,
    /// Latency percentiles ([`LATENCY_PERCENTILES`], numpy's linear ones) of each
    /// bucket's SERPs, NaN where none has a latency; `None` without a latency column.
    pub latency: Option<Vec<[f64; 3]>>,
    /// The spike threshold (see the module).
    pub threshold: f64,
    /// Whether each bucket is a spike.
    pub spike: Vec<bool>,
}

/// Queries (SERPs) per `bucket`; spikes above median + `k` · scale.
pub fn queries_per(log: &Log, bucket: Bucket, k: f64) -> Result<Traffic> {
    if !(k >= 0.0 && k.is_finite()) {
        return Err(Error::Option(format!(
            "spike k must be a number >= 0, got {k}"
        )));
    }
    let serps: Vec<usize> = (0..log.len())
        .filter(|&i| log.ev[i].kind() == Kind::Serp)
        .collect();
    let idx: Vec<i64> = serps
        .iter()
        .map(|&i| bucket.index(log.ev[i].time))
        .collect();
    let (Some(&lo), Some(&hi)) = (idx.iter().min(), idx.iter().max()) else {
        return Ok(Traffic {
            start: vec![],
            count: vec![],
            latency: log.has[field::LATENCY].then(Vec::new),
            threshold: f64::NAN,
            spike: vec![],
        });
    };
    if hi - lo >= MAX_BUCKETS {
        return Err(Error::Option(format!(
            "{} buckets from the first query to the last: choose a longer bucket",
            hi - lo + 1
        )));
    }
    let nb = (hi - lo + 1) as usize;
    let mut count = vec![0u64; nb];
    for b in &idx {
        count[(b - lo) as usize] += 1;
    }
    let latency = log.has[field::LATENCY].then(|| {
        // latencies grouped by bucket: offsets from the counts, then filled
        let mut ends = vec![0usize; nb + 1];
        for b in &idx {
            ends[(b - lo) as usize + 1] += 1;
        }
        for j in 0..nb {
            ends[j + 1] += ends[j];
        }
        let mut fill = ends.clone();
        let mut values = vec![f64::NAN; serps.len()];
        for (&i, b) in serps.iter().zip(&idx) {
            let j = (b - lo) as usize;
            values[fill[j]] = log.ev[i].latency();
            fill[j] += 1;
        }
        (0..nb)
            .map(|j| {
                let mut v: Vec<f64> = values[ends[j]..ends[j + 1]]
                    .iter()
                    .copied()
                    .filter(|x| !x.is_nan())
                    .collect();
                if v.is_empty() {
                    return [f64::NAN; 3];
                }
                v.sort_by(f64::total_cmp);
                LATENCY_PERCENTILES.map(|p| crate::stats::quantile(&v, p / 100.0))
            })
            .collect()
    });
    let mut c: Vec<f64> = count.iter().map(|&x| x as f64).collect();
    let med = median(&mut c);
    let mut dev: Vec<f64> = count.iter().map(|&x| (x as f64 - med).abs()).collect();
    let mad = median(&mut dev);
    let threshold = med + k * (1.4826 * mad).max(med.sqrt());
    Ok(Traffic {
        start: (lo..=hi).map(|i| bucket.start(i)).collect(),
        spike: count.iter().map(|&x| x as f64 > threshold).collect(),
        count,
        latency,
        threshold,
    })
}
