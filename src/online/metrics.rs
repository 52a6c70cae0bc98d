//! The online metrics, as sums over sessions. Every metric but the median time to first
//! click is a ratio Σ numerator / Σ denominator whose two parts each session gives (a
//! click belongs to the latest SERP before it in its session):
//!
//! | metric | numerator | denominator |
//! |---|---|---|
//! | `abandonment_rate` | sessions with a SERP and no click | sessions with a SERP |
//! | `ctr` | SERPs with at least one click | SERPs |
//! | `ctr@k` | SERPs with a click at position <= k | SERPs |
//! | `ctr_by_position@p` | clicks at position p | SERPs with at least p results (unknown `n_results`: counted) |
//! | `clicks_per_query` | clicks | SERPs |
//! | `success_rate` | sessions with a SERP and a click of dwell >= T or a success event | sessions with a SERP |
//! | `zero_result_rate` | SERPs with `n_results` = 0 | SERPs whose `n_results` is known |
//! | `click_mrr` | Σ over SERPs of 1 / position of the SERP's first click (0 without one) | SERPs |
//!
//! `time_to_first_click` is the median (numpy's: the mean of the two middle values for an
//! even count) of the seconds from each clicked SERP to its first click. Sessions are
//! computed in parallel and summed in session order, so the numbers do not depend on the
//! thread count. A denominator of 0 gives NaN.

use super::log::{field, Kind, Log};
use crate::error::{Error, Result};

/// The positions `ctr_by_position` covers when named without one.
pub const BY_POSITION_DEFAULT: u32 = 10;

/// The cut-offs of `ctr@k` among the default metrics.
pub const CTR_AT_DEFAULT: [u32; 4] = [1, 3, 5, 10];

/// An online metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `abandonment_rate`.
    Abandonment,
    /// `ctr`.
    Ctr,
    /// `ctr@k`.
    CtrAt(u32),
    /// `ctr_by_position@p`.
    CtrByPosition(u32),
    /// `clicks_per_query`.
    ClicksPerQuery,
    /// `success_rate`.
    Success,
    /// `zero_result_rate`.
    ZeroResult,
    /// `time_to_first_click` (median seconds).
    TimeToFirstClick,
    /// `click_mrr`.
    ClickMrr,
}

const NAMES: &str = "abandonment_rate, ctr, ctr@k, ctr_by_position (or @p), clicks_per_query, \
                     success_rate, zero_result_rate, time_to_first_click, click_mrr";

impl Metric {
    /// Parse a name; `ctr_by_position` alone is positions 1 to 10.
    pub fn parse(name: &str) -> Result<Vec<Metric>> {
        let bad = || Error::Measure(format!("unknown online metric '{name}'; known: {NAMES}"));
        let at = |rest: &str| -> Result<u32> {
            rest.parse::<u32>().ok().filter(|k| *k >= 1).ok_or_else(|| {
                Error::Measure(format!("'{name}': the cut-off must be a whole number >= 1"))
            })
        };
        let n = name.trim();
        Ok(vec![match n {
            "abandonment_rate" => Metric::Abandonment,
            "ctr" => Metric::Ctr,
            "clicks_per_query" => Metric::ClicksPerQuery,
            "success_rate" => Metric::Success,
            "zero_result_rate" => Metric::ZeroResult,
            "time_to_first_click" => Metric::TimeToFirstClick,
            "click_mrr" => Metric::ClickMrr,
            "ctr_by_position" => {
                return Ok((1..=BY_POSITION_DEFAULT)
                    .map(Metric::CtrByPosition)
                    .collect())
            }
            _ => {
                if let Some(k) = n.strip_prefix("ctr@") {
                    Metric::CtrAt(at(k)?)
                } else if let Some(p) = n.strip_prefix("ctr_by_position@") {
                    Metric::CtrByPosition(at(p)?)
                } else {
                    return Err(bad());
                }
            }
        }])
    }

    /// Parse several names, in order, without repeats.
    pub fn parse_all<S: AsRef<str>>(names: &[S]) -> Result<Vec<Metric>> {
        let mut out: Vec<Metric> = Vec::new();
        for n in names {
            for m in Metric::parse(n.as_ref())? {
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    /// Every metric the log's columns allow (those needing a missing column left out).
    pub fn defaults(log: &Log) -> Vec<Metric> {
        let mut v = Metric::all_defaults();
        v.retain(|m| m.needs().is_none_or(|f| log.has[f]));
        v
    }

    /// Every default metric, whatever the log's columns.
    pub(crate) fn all_defaults() -> Vec<Metric> {
        let mut v = vec![Metric::Abandonment, Metric::Ctr];
        v.extend(CTR_AT_DEFAULT.map(Metric::CtrAt));
        v.extend((1..=BY_POSITION_DEFAULT).map(Metric::CtrByPosition));
        v.extend([
            Metric::ClicksPerQuery,
            Metric::Success,
            Metric::ZeroResult,
            Metric::TimeToFirstClick,
            Metric::ClickMrr,
        ]);
        v
    }

    /// The metric's name.
    pub fn name(&self) -> String {
        match self {
            Metric::Abandonment => "abandonment_rate".into(),
            Metric::Ctr => "ctr".into(),
            Metric::CtrAt(k) => format!("ctr@{k}"),
            Metric::CtrByPosition(p) => format!("ctr_by_position@{p}"),
            Metric::ClicksPerQuery => "clicks_per_query".into(),
            Metric::Success => "success_rate".into(),
            Metric::ZeroResult => "zero_result_rate".into(),
            Metric::TimeToFirstClick => "time_to_first_click".into(),
            Metric::ClickMrr => "click_mrr".into(),
        }
    }

    /// The field the metric needs beyond session, time and type.
    pub(crate) fn needs(&self) -> Option<usize> {
        match self {
            Metric::CtrAt(_) | Metric::CtrByPosition(_) | Metric::ClickMrr => Some(field::POSITION),
            Metric::ZeroResult => Some(field::N_RESULTS),
            _ => None,
        }
    }
}

/// Sessions are summed in blocks of this many, in order, and the blocks' sums added
/// in order: the one order of additions wherever sessions are summed (a table of
/// sessions, or of blocks already summed), so that every route gives the same bits.
const BLOCK: usize = 2048;

/// `to[i] += from[i]` for each `i`: a row (or a sum of rows) added into a sum.
pub(crate) fn add_into(to: &mut [f64], from: &[f64]) {
    to.iter_mut().zip(from).for_each(|(a, x)| *a += x);
}

/// What a table's rows are: one per session (for grouping and resampling sessions),
/// or one per block of [`BLOCK`] sessions summed (for sums over all sessions: a
/// table of millions of sessions and tens of metrics is gigabytes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rows {
    Sessions,
    Blocks,
}

/// What the sessions give: per metric a numerator and a denominator (row-major, one
/// row of `metrics.len()` per session or per block of sessions, see [`Rows`]), and
/// the times to first click.
pub(crate) struct SessionTable {
    pub(crate) metrics: Vec<Metric>,
    pub(crate) rows: Rows,
    /// Sessions in the table.
    pub(crate) sessions: usize,
    pub(crate) num: Vec<f64>,
    pub(crate) den: Vec<f64>,
    /// The times to first click of row `r`: `ttfc[ttfc_ends[r]..ttfc_ends[r + 1]]`.
    pub(crate) ttfc: Vec<f64>,
    pub(crate) ttfc_ends: Vec<usize>,
}

/// Per SERP while its clicks come.
struct Serp {
    time: f64,
    first_click: Option<(f64, u32)>,
    best: u32,
}

/// What a session gives each metric's numerator and denominator, or (added with
/// [`Counts::add`]) what a block of sessions gives: every field a sum over sessions.
#[derive(Default)]
struct Counts {
    serps: f64,
    clicked: f64,
    clicks: f64,
    zero: f64,
    known_n: f64,
    rr: f64,
    /// A click of dwell >= T or a success event (one session's; not summed).
    success: bool,
    /// Sessions with a SERP (0 or 1 for one session).
    with_serp: f64,
    /// Sessions with a SERP and no click.
    abandoned: f64,
    /// Sessions with a SERP and a success.
    succeeded: f64,
    ctr_at: Vec<f64>,
    pos_clicks: Vec<f64>,
    pos_den: Vec<f64>,
}

impl Counts {
    /// Zeros, with room for `ks` cut-offs and `n_pos` positions.
    fn zeros(ks: usize, n_pos: usize) -> Counts {
        Counts {
            ctr_at: vec![0.0; ks],
            pos_clicks: vec![0.0; n_pos],
            pos_den: vec![0.0; n_pos],
            ..Counts::default()
        }
    }

    /// Zeros again, keeping the room.
    fn clear(&mut self) {
        use std::mem::take;
        for v in [&mut self.ctr_at, &mut self.pos_clicks, &mut self.pos_den] {
            v.fill(0.0);
        }
        *self = Counts {
            ctr_at: take(&mut self.ctr_at),
            pos_clicks: take(&mut self.pos_clicks),
            pos_den: take(&mut self.pos_den),
            ..Counts::default()
        };
    }

    /// A session's (or a block's) counts added in, field by field: a block's sums are
    /// its sessions' rows added in session order, the one order of additions (see
    /// [`BLOCK`]), so summing counts or rows gives the same bits.
    fn add(&mut self, c: &Counts) {
        self.serps += c.serps;
        self.clicked += c.clicked;
        self.clicks += c.clicks;
        self.zero += c.zero;
        self.known_n += c.known_n;
        self.rr += c.rr;
        self.with_serp += c.with_serp;
        self.abandoned += c.abandoned;
        self.succeeded += c.succeeded;
        add_into(&mut self.ctr_at, &c.ctr_at);
        add_into(&mut self.pos_clicks, &c.pos_clicks);
        add_into(&mut self.pos_den, &c.pos_den);
    }

    /// Each metric's numerator and denominator, pushed in the order of `metrics` (the
    /// `ctr@k` cut-offs in that order too; `slots[j]` is where metric j's position is
    /// counted, for a `ctr_by_position`).
    fn row(&self, metrics: &[Metric], slots: &[usize], num: &mut Vec<f64>, den: &mut Vec<f64>) {
        let mut k_seen = 0;
        for (m, &i) in metrics.iter().zip(slots) {
            let (a, b) = match m {
                Metric::Abandonment => (self.abandoned, self.with_serp),
                Metric::Ctr => (self.clicked, self.serps),
                Metric::CtrAt(_) => {
                    k_seen += 1;
                    (self.ctr_at[k_seen - 1], self.serps)
                }
                Metric::CtrByPosition(_) => (self.pos_clicks[i], self.pos_den[i]),
                Metric::ClicksPerQuery => (self.clicks, self.serps),
                Metric::Success => (self.succeeded, self.with_serp),
                Metric::ZeroResult => (self.zero, self.known_n),
                Metric::TimeToFirstClick => (0.0, 0.0),
                Metric::ClickMrr => (self.rr, self.serps),
            };
            num.push(a);
            den.push(b);
        }
    }

    fn close(&mut self, serp: Option<Serp>, ks: &[u32], ttfc: &mut Vec<f64>) {
        let Some(s) = serp else { return };
        if let Some((t, pos)) = s.first_click {
            self.clicked += 1.0;
            ttfc.push(t - s.time);
            if pos > 0 {
                self.rr += 1.0 / pos as f64;
            }
            for (c, k) in self.ctr_at.iter_mut().zip(ks) {
                *c += f64::from(s.best > 0 && s.best <= *k);
            }
        }
    }
}

impl SessionTable {
    /// Walk every session (in parallel, blocks of sessions in order), into `rows`.
    pub(crate) fn new(
        log: &Log,
        metrics: &[Metric],
        dwell_threshold: f64,
        rows: Rows,
    ) -> Result<SessionTable> {
        if dwell_threshold.is_nan() || dwell_threshold < 0.0 {
            return Err(Error::Option(format!(
                "dwell_threshold must be seconds >= 0, got {dwell_threshold}"
            )));
        }
        for m in metrics {
            if let Some(f) = m.needs() {
                log.need(f, &m.name())?;
            }
        }
        let ks: Vec<u32> = metrics
            .iter()
            .filter_map(|m| match m {
                Metric::CtrAt(k) => Some(*k),
                _ => None,
            })
            .collect();
        // the positions asked for, ascending: counted each, not every position up to the
        // largest (ctr_by_position@4000000000 made arrays of 4 billion counts, and
        // @1000 cleared and added 2,000 of them for each session)
        let mut positions: Vec<u32> = metrics
            .iter()
            .filter_map(|m| match m {
                Metric::CtrByPosition(p) => Some(*p),
                _ => None,
            })
            .collect();
        positions.sort_unstable();
        positions.dedup();
        // each metric's place among them, found once (not for every session's row)
        let slots: Vec<usize> = (metrics.iter())
            .map(|m| match m {
                Metric::CtrByPosition(p) => positions.partition_point(|q| q < p),
                _ => 0,
            })
            .collect();
        let n = log.n_sessions();
        let width = metrics.len();
        let blocks: Vec<usize> = (0..n).step_by(BLOCK).collect();
        let parts = crate::parallel::map_chunks(&blocks, |&start| {
            let end = (start + BLOCK).min(n);
            let n_rows = if rows == Rows::Blocks { 1 } else { end - start };
            let mut num = Vec::with_capacity(n_rows * width);
            let mut den = Vec::with_capacity(n_rows * width);
            let mut ttfc = Vec::new();
            let mut ends = Vec::with_capacity(n_rows);
            // a block's rows summed as counts, one row made at its end (a row of every
            // metric made and added for each session was 1/6 of reading and measuring
            // a parquet log, in instructions)
            let (mut c, mut sum) = (
                Counts::zeros(ks.len(), positions.len()),
                Counts::zeros(ks.len(), positions.len()),
            );
            for s in start..end {
                session_counts(&mut c, log, s, &ks, &positions, dwell_threshold, &mut ttfc);
                if rows == Rows::Sessions {
                    c.row(metrics, &slots, &mut num, &mut den);
                    ends.push(ttfc.len());
                } else {
                    sum.add(&c);
                }
            }
            if rows == Rows::Blocks {
                sum.row(metrics, &slots, &mut num, &mut den);
                ends.push(ttfc.len());
            }
            (num, den, ttfc, ends)
        });
        let n_rows = if rows == Rows::Blocks {
            blocks.len()
        } else {
            n
        };
        let mut t = SessionTable {
            metrics: metrics.to_vec(),
            rows,
            sessions: n,
            num: Vec::with_capacity(n_rows * width),
            den: Vec::with_capacity(n_rows * width),
            ttfc: Vec::new(),
            ttfc_ends: vec![0],
        };
        for (num, den, ttfc, ends) in parts {
            let base = t.ttfc.len();
            t.num.extend(num);
            t.den.extend(den);
            t.ttfc.extend(ttfc);
            t.ttfc_ends.extend(ends.into_iter().map(|e| e + base));
        }
        Ok(t)
    }

    /// The rows of every session.
    pub(crate) fn all_rows(&self) -> Vec<usize> {
        (0..self.ttfc_ends.len() - 1).collect()
    }

    /// The metrics' values over the rows `members` (sessions, or blocks of them), with
    /// `scratch` for the times to first click.
    pub(crate) fn values(&self, members: &[usize], scratch: &mut Vec<f64>) -> Vec<f64> {
        let (num, den) = self.sums(members.iter().copied());
        scratch.clear();
        let want_ttfc = self.metrics.contains(&Metric::TimeToFirstClick);
        if want_ttfc {
            for &s in members {
                scratch.extend_from_slice(self.ttfc_of(s));
            }
        }
        let median = if want_ttfc { median(scratch) } else { f64::NAN };
        ratios(&self.metrics, &num, &den, median)
    }

    /// The times to first click of row `r`.
    pub(crate) fn ttfc_of(&self, r: usize) -> &[f64] {
        &self.ttfc[self.ttfc_ends[r]..self.ttfc_ends[r + 1]]
    }

    /// Σ numerators and Σ denominators per metric over the rows `members`, in their
    /// order: sessions by blocks of [`BLOCK`], blocks one after the other (the same
    /// additions either way).
    pub(crate) fn sums(&self, members: impl Iterator<Item = usize>) -> (Vec<f64>, Vec<f64>) {
        let w = self.metrics.len();
        let per = match self.rows {
            Rows::Sessions => BLOCK,
            Rows::Blocks => usize::MAX,
        };
        let (mut num, mut den) = (vec![0.0; w], vec![0.0; w]);
        let (mut block_num, mut block_den) = (vec![0.0; w], vec![0.0; w]);
        let mut in_block = 0;
        for r in members {
            add_into(&mut block_num, &self.num[r * w..(r + 1) * w]);
            add_into(&mut block_den, &self.den[r * w..(r + 1) * w]);
            in_block += 1;
            if in_block == per {
                add_into(&mut num, &block_num);
                add_into(&mut den, &block_den);
                block_num.fill(0.0);
                block_den.fill(0.0);
                in_block = 0;
            }
        }
        if in_block > 0 {
            add_into(&mut num, &block_num);
            add_into(&mut den, &block_den);
        }
        (num, den)
    }
}

/// The metrics' values of their summed numerators and denominators (NaN for a
/// denominator of 0) and the median time to first click.
pub(crate) fn ratios(metrics: &[Metric], num: &[f64], den: &[f64], median: f64) -> Vec<f64> {
    metrics
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Metric::TimeToFirstClick => median,
            _ if den[i] == 0.0 => f64::NAN,
            _ => num[i] / den[i],
        })
        .collect()
}

/// numpy's median (NaN for no value); reorders `v`.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        return hi;
    }
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo + hi) / 2.0
}

/// One session's counts, into `c` (cleared first); its times to first click are pushed
/// on `ttfc`.
fn session_counts(
    c: &mut Counts,
    log: &Log,
    s: usize,
    ks: &[u32],
    positions: &[u32],
    dwell_threshold: f64,
    ttfc: &mut Vec<f64>,
) {
    debug_assert!(c.ctr_at.len() == ks.len() && c.pos_den.len() == positions.len());
    c.clear();
    let mut cur: Option<Serp> = None;
    for i in log.n_events(s) {
        match log.ev[i].kind() {
            Kind::Serp => {
                c.close(cur.take(), ks, ttfc);
                let n = log.ev[i].n_results();
                c.serps += 1.0;
                if !n.is_nan() {
                    c.known_n += 1.0;
                    if n == 0.0 {
                        c.zero += 1.0;
                    }
                }
                // positions p with n >= p (all of them when n is unknown): a prefix of
                // the ascending positions, a loop without a branch
                let upto = if n.is_nan() {
                    positions.len()
                } else {
                    positions.partition_point(|&p| f64::from(p) <= n)
                };
                c.pos_den[..upto].iter_mut().for_each(|d| *d += 1.0);
                cur = Some(Serp {
                    time: log.ev[i].time,
                    first_click: None,
                    best: 0,
                });
            }
            Kind::Click => {
                // the log is checked: a click always follows a SERP of its session
                let Some(serp) = cur.as_mut() else { continue };
                let pos = log.ev[i].position();
                c.clicks += 1.0;
                if serp.first_click.is_none() {
                    serp.first_click = Some((log.ev[i].time, pos));
                }
                if pos > 0 && (serp.best == 0 || pos < serp.best) {
                    serp.best = pos;
                }
                if let Ok(at) = positions.binary_search(&pos) {
                    c.pos_clicks[at] += 1.0;
                }
                if log.ev[i].dwell() >= dwell_threshold {
                    c.success = true;
                }
            }
            Kind::Success => c.success = true,
        }
    }
    c.close(cur, ks, ttfc);
    c.with_serp = if c.serps > 0.0 { 1.0 } else { 0.0 };
    c.abandoned = c.with_serp * f64::from(c.clicked == 0.0);
    c.succeeded = c.with_serp * f64::from(c.success);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Unit;
    use crate::online::{Event, LogBuilder, LogOptions, Time};
    use std::borrow::Cow;

    /// A seeded log of `n` sessions (SERPs with known, zero or unknown result counts,
    /// clicks at positions 1-12 with fractional dwell, purchases), and per position p
    /// of 1-12 the SERPs with n_results >= p or unknown, counted from the events.
    fn seeded_log(n: usize, seed: u64) -> (Log, Vec<f64>, Vec<f64>) {
        let mut rng = crate::testing::Lcg::new(seed);
        let mut next = |m: u64| rng.below(m);
        let opts = LogOptions {
            success_events: vec!["purchase".into()],
            ..LogOptions::default()
        };
        let mut b = LogBuilder::new(opts, "seeded", Unit::Row).unwrap();
        // positions 1 to 13: n_results are 0-12 and clicks at 1-12, so 13 stands for
        // any position past them (SERPs of unknown n_results, no clicks)
        let (mut pos_den, mut pos_clicks) = (vec![0.0; 13], vec![0.0; 13]);
        let mut row = 0;
        for s in 0..n {
            let session = format!("s{s}");
            let mut t = (s * 100) as f64;
            for e in 0..1 + next(6) {
                let kind = match (e, next(10)) {
                    (0, _) | (_, 0..=2) => "query",
                    (_, 3) => "purchase",
                    _ => "click",
                };
                let n_results = (kind == "query" && next(5) > 0).then(|| next(13) as f64);
                if kind == "query" {
                    for (p, d) in pos_den.iter_mut().enumerate() {
                        *d += f64::from(n_results.is_none_or(|r| r >= (p + 1) as f64));
                    }
                }
                t += 0.25 * next(40) as f64;
                let ev = Event {
                    session: Some(Cow::Borrowed(session.as_str())),
                    time: Some(Time::Number(t)),
                    kind: Some(Cow::Borrowed(kind)),
                    n_results,
                    position: (kind == "click").then(|| {
                        let p = 1 + next(12) as usize;
                        pos_clicks[p - 1] += 1.0;
                        p as f64
                    }),
                    dwell: (kind == "click").then(|| next(600) as f64 / 8.0),
                    variant: Some(Cow::Borrowed(if s % 3 == 0 { "A" } else { "B" })),
                    ..Event::default()
                };
                b.push(ev, row).unwrap();
                row += 1;
            }
        }
        (b.finish().unwrap(), pos_den, pos_clicks)
    }

    /// The sums over all sessions made by blocks of counts give the bits of the
    /// per-session rows summed (what grouping, the stream's parts and Spark's add), for
    /// every metric, with fractional sums (click_mrr) and a partial last block; and
    /// `ctr_by_position`'s denominators are the SERPs with n_results >= p or unknown.
    #[test]
    fn block_sums_are_the_session_rows_summed() {
        let names = [
            "abandonment_rate",
            "ctr",
            "ctr@1",
            "ctr@7",
            "ctr@3",
            "ctr_by_position",
            "ctr_by_position@12",
            "clicks_per_query",
            "success_rate",
            "zero_result_rate",
            "time_to_first_click",
            "click_mrr",
        ];
        let metrics = Metric::parse_all(&names).unwrap();
        for (n, seed) in [(1, 1), (BLOCK - 1, 2), (2 * BLOCK + 37, 3)] {
            let (log, pos_den, _) = seeded_log(n, seed);
            for threshold in [0.0, 30.0] {
                let whole = SessionTable::new(&log, &metrics, threshold, Rows::Blocks).unwrap();
                let rows = SessionTable::new(&log, &metrics, threshold, Rows::Sessions).unwrap();
                let (a, b) = (whole.sums(whole.all_rows().into_iter()), rows.sums(0..n));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a.0), bits(&b.0), "numerators, {n} sessions");
                assert_eq!(bits(&a.1), bits(&b.1), "denominators, {n} sessions");
                let mut scratch = Vec::new();
                let (va, vb) = (
                    whole.values(&whole.all_rows(), &mut scratch),
                    rows.values(&(0..n).collect::<Vec<_>>(), &mut scratch),
                );
                assert_eq!(bits(&va), bits(&vb), "values, {n} sessions");
                for (m, metric) in metrics.iter().enumerate() {
                    if let Metric::CtrByPosition(p) = metric {
                        assert_eq!(a.1[m], pos_den[*p as usize - 1], "{}", metric.name());
                    }
                }
            }
        }
    }

    /// `ctr_by_position@p` for positions named in any order, repeated and far past the
    /// log's: the clicks at p and the SERPs with n_results >= p (or unknown) counted
    /// from the events, only the positions named held (@4000000000 made arrays of 4
    /// billion counts).
    #[test]
    fn positions_are_counted_as_named() {
        let names = [
            "ctr_by_position@7",
            "ctr_by_position@4000000000",
            "ctr",
            "ctr_by_position@2",
            "ctr_by_position@7",
            "ctr_by_position@13",
        ];
        let metrics = Metric::parse_all(&names).unwrap();
        assert_eq!(metrics.len(), 5);
        let (log, pos_den, pos_clicks) = seeded_log(BLOCK + 5, 9);
        for rows in [Rows::Blocks, Rows::Sessions] {
            let t = SessionTable::new(&log, &metrics, 30.0, rows).unwrap();
            let (num, den) = t.sums(t.all_rows().into_iter());
            let at = |p: usize| (pos_clicks[p.min(13) - 1], pos_den[p.min(13) - 1]);
            assert_eq!((num[0], den[0]), at(7));
            assert_eq!((num[1], den[1]), at(4_000_000_000));
            assert_eq!((num[3], den[3]), at(2));
            assert_eq!((num[4], den[4]), at(13));
            assert!(pos_den[12] > 0.0 && pos_den[12] < pos_den[0], "{pos_den:?}");
        }
    }
}
