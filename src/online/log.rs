//! The interaction log: events in columns, each session's events together and in time
//! order. Every source (JSONL, CSV, Python columns) feeds one [`LogBuilder`], which
//! checks each event as it comes and [`LogBuilder::finish`]es the log: sorted, dwell
//! derived, clicks attached to their SERPs. Arrow tables and parquet files feed parts
//! of it on every thread ([`LogBuilder::part`], [`LogBuilder::append`]).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use hashbrown::HashTable;
use rustc_hash::FxHashMap;

use crate::ids::{group_in_order, hash_packed, pack, IdIndex, Ids};

use super::time::Clock;
use crate::error::{Error, Location, Result, Unit};

/// The default cap of a derived dwell time, in seconds (30 minutes, the usual session
/// timeout): a click's dwell, when the log does not give it, is the time to the next
/// event of its session, at most this; a session's last click gets the cap (the user
/// did not come back: the "last click" convention).
pub const DWELL_CAP: f64 = 1800.0;

/// The log's fields, by their default column names.
pub const FIELDS: [&str; 10] = [
    "session_id",
    "timestamp",
    "type",
    "query",
    "n_results",
    "position",
    "doc_id",
    "dwell",
    "latency_ms",
    "variant",
];

/// The fields every event needs.
pub const REQUIRED: [&str; 3] = ["session_id", "timestamp", "type"];

/// Field indices into [`FIELDS`].
pub(crate) mod field {
    pub const SESSION: usize = 0;
    pub const TIME: usize = 1;
    pub const TYPE: usize = 2;
    pub const QUERY: usize = 3;
    pub const N_RESULTS: usize = 4;
    pub const POSITION: usize = 5;
    /// Read by no metric (columns are read without it).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub const DOC_ID: usize = 6;
    pub const DWELL: usize = 7;
    pub const LATENCY: usize = 8;
    pub const VARIANT: usize = 9;
}

/// What an event is (the numbers are those an event keeps in its place's low bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A result page shown (type `query`).
    Serp = 0,
    /// A click on a result (type `click`).
    Click = 1,
    /// One of the user-named success events (`copy`, `purchase`, ...).
    Success = 2,
}

/// How to read a log: column names, success events, the dwell cap, the unit of numeric
/// timestamps.
#[derive(Clone, Debug)]
pub struct LogOptions {
    /// The log's column name for each field (index as [`FIELDS`]).
    pub columns: [String; 10],
    /// Event types that count as a success (default `copy` and `purchase`).
    pub success_events: Vec<String>,
    /// The cap of derived dwell times, seconds (default [`DWELL_CAP`]).
    pub dwell_cap: f64,
    /// Seconds per unit of numeric timestamps (1, 1e-3, 1e-6, 1e-9); `None`: told by
    /// their size, and a log mixing sizes is refused (see `online::time`).
    pub time_scale: Option<f64>,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            columns: FIELDS.map(String::from),
            success_events: vec!["copy".into(), "purchase".into()],
            dwell_cap: DWELL_CAP,
            time_scale: None,
        }
    }
}

impl LogOptions {
    /// Name the log's column for a field (`map("session_id", "sid")`); an unknown field
    /// is an error naming the known ones.
    pub fn map(&mut self, ours: &str, theirs: &str) -> Result<()> {
        let i = FIELDS.iter().position(|f| *f == ours).ok_or_else(|| {
            Error::Option(format!(
                "unknown log field '{ours}'; the fields are {}",
                FIELDS.join(", ")
            ))
        })?;
        self.columns[i] = theirs.to_string();
        Ok(())
    }

    /// A time unit by name: `s`, `ms`, `us`, `ns`, or `auto` (by size).
    pub fn set_time_unit(&mut self, unit: &str) -> Result<()> {
        self.time_scale = match unit {
            "auto" => None,
            "s" => Some(1.0),
            "ms" => Some(1e-3),
            "us" => Some(1e-6),
            "ns" => Some(1e-9),
            _ => {
                return Err(Error::Option(format!(
                    "time unit must be s, ms, us, ns or auto, got '{unit}'"
                )))
            }
        };
        Ok(())
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.dwell_cap.is_nan() || self.dwell_cap <= 0.0 {
            return Err(Error::Option(format!(
                "dwell_cap must be a positive number of seconds, got {}",
                self.dwell_cap
            )));
        }
        Ok(())
    }
}

/// A timestamp as read: a number (in the log's unit) or text (ISO 8601).
#[derive(Clone, Debug)]
pub enum Time<'a> {
    /// A number.
    Number(f64),
    /// Text.
    Text(&'a str),
}

/// One event as read, before checks.
#[derive(Clone, Debug, Default)]
pub struct Event<'a> {
    /// `session_id`.
    pub session: Option<Cow<'a, str>>,
    /// `timestamp`.
    pub time: Option<Time<'a>>,
    /// `type`.
    pub kind: Option<Cow<'a, str>>,
    /// `query`.
    pub query: Option<Cow<'a, str>>,
    /// `n_results`.
    pub n_results: Option<f64>,
    /// `position`.
    pub position: Option<f64>,
    /// `dwell`.
    pub dwell: Option<f64>,
    /// `latency_ms`.
    pub latency: Option<f64>,
    /// `variant`.
    pub variant: Option<Cow<'a, str>>,
    /// The source's own numbers of the session, query, variant and type texts (each
    /// distinct text numbered from 0, as `pandas.factorize` does), when it has them: the
    /// builder then looks each text up once, not once per event (sessions: in a stream
    /// only; a whole log's are numbered at its end, all at once).
    pub codes: [Option<u32>; 4],
}

/// Missing code of an interned column.
pub(crate) const NONE: u32 = u32::MAX;

/// Strings numbered in order of first sight as they come (queries, variants, and the
/// sessions of a stream; a whole log's sessions are numbered at its end, all at once:
/// `ids::group_in_order`): the texts back to back in one buffer (the crate's id
/// store, `crate::ids`). Texts of up to 15 bytes are found through a table holding them
/// packed in 16 bytes with their code, so that a lookup reads one slot of the table;
/// longer texts through a hash index of their positions.
#[derive(Clone, Default)]
pub(crate) struct Interner {
    ids: Ids,
    short: HashTable<(u128, u32)>,
    index: IdIndex,
}

impl Interner {
    #[inline]
    pub(crate) fn code(&mut self, s: &str) -> Result<u32> {
        let Some(k) = pack(s.as_bytes()) else {
            if let Some(i) = self.index.find(&self.ids, s.as_bytes()) {
                return Ok(i as u32);
            }
            let pos = self.push(s.as_bytes())?;
            self.index.insert(&self.ids, pos);
            return Ok(pos as u32);
        };
        let h = hash_packed(k);
        if let Some(&(_, c)) = self.short.find(h, |e| e.0 == k) {
            return Ok(c);
        }
        let pos = self.push(s.as_bytes())?;
        self.short
            .insert_unique(h, (k, pos as u32), |e| hash_packed(e.0));
        Ok(pos as u32)
    }

    fn push(&mut self, text: &[u8]) -> Result<usize> {
        let pos = self.ids.len();
        self.ids.push(text).map_err(|_| {
            Error::Input("the distinct texts of one log column exceed 4 GiB together".into())
        })?;
        Ok(pos)
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// A new code for the text of code `i` (the text found by it from now on).
    pub(crate) fn renew(&mut self, i: usize) -> Result<usize> {
        let text = self.ids.get(i).to_vec();
        let pos = self.push(&text)?;
        match pack(&text) {
            Some(k) => {
                if let Some(e) = self.short.find_mut(hash_packed(k), |e| e.0 == k) {
                    e.1 = pos as u32;
                }
            }
            None => self.index.repoint(&self.ids, i, pos),
        }
        Ok(pos)
    }

    /// The text of code `i`.
    pub(crate) fn get(&self, i: usize) -> &str {
        // every text came in as `str`
        std::str::from_utf8(self.ids.get(i)).unwrap_or_default()
    }

    /// The texts, in order (they came in as `str`).
    pub(crate) fn into_names(self) -> Vec<String> {
        names(&self.ids)
    }

    /// The texts, in order.
    pub(crate) fn into_ids(self) -> Ids {
        self.ids
    }
}

/// Texts that came in as `str`, as strings.
fn names(ids: &Ids) -> Vec<String> {
    ids.iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

/// One event, checked, in 40 bytes: the fields a kind of event is read for share room
/// (a SERP's latency and result count, a click's dwell and position; a success event
/// has neither), and the kind rides in the place's two low bits. Every event is held
/// twice while a log is put in session order (as read and gathered), so its size is
/// most of a whole log's memory, and on a VM a quarter of the read's CPU time was the
/// kernel clearing the pages first touched (64 bytes an event before: a peak of 1.7
/// GiB for 10 M events from parquet, 1.1-1.4 GiB now).
#[derive(Clone, Copy)]
pub(crate) struct Ev {
    pub(crate) time: f64,
    /// A SERP's `latency_ms`, a click's dwell (NaN: none; a click's is derived at
    /// [`LogBuilder::finish`]); NaN for a success event.
    amount: f64,
    /// `place << 2 | kind`.
    tag: u64,
    pub(crate) session: u32,
    /// [`NONE`]: none.
    pub(crate) query: u32,
    /// A SERP's `n_results` ([`UNKNOWN_COUNT`]: unknown), a click's position (0: none).
    count: u32,
    /// [`NONE`]: none.
    pub(crate) variant: u32,
}

/// An unknown `n_results` (counts are below 4e9: `whole`).
const UNKNOWN_COUNT: u32 = u32::MAX;

const _: () = assert!(std::mem::size_of::<Ev>() == 40);
const EV_BYTES: usize = std::mem::size_of::<Ev>();

/// How many events ahead the gather of [`LogBuilder::finish`] fetches into the cache.
const GATHER_AHEAD: usize = 16;

impl Ev {
    /// An event from its fields read (NaN: none; position 0: none); those its kind
    /// is not read for are not kept.
    #[allow(clippy::too_many_arguments)]
    fn new(
        kind: Kind,
        time: f64,
        place: u64,
        session: u32,
        query: u32,
        variant: u32,
        [n_results, dwell, latency]: [f64; 3],
        position: u32,
    ) -> Ev {
        debug_assert!(place < 1 << 62);
        let (amount, count) = match kind {
            Kind::Serp if n_results.is_nan() => (latency, UNKNOWN_COUNT),
            Kind::Serp => (latency, n_results as u32),
            Kind::Click => (dwell, position),
            Kind::Success => (f64::NAN, 0),
        };
        Ev {
            time,
            amount,
            tag: place << 2 | kind as u64,
            session,
            query,
            count,
            variant,
        }
    }

    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        match self.tag & 3 {
            0 => Kind::Serp,
            1 => Kind::Click,
            _ => Kind::Success,
        }
    }

    /// The line or row it came from.
    #[inline]
    pub(crate) fn place(&self) -> u64 {
        self.tag >> 2
    }

    /// A SERP's `n_results` (NaN: unknown, or not a SERP).
    #[inline]
    pub(crate) fn n_results(&self) -> f64 {
        if self.kind() != Kind::Serp || self.count == UNKNOWN_COUNT {
            f64::NAN
        } else {
            f64::from(self.count)
        }
    }

    /// A click's position (0: none, or not a click).
    #[inline]
    pub(crate) fn position(&self) -> u32 {
        if self.kind() == Kind::Click {
            self.count
        } else {
            0
        }
    }

    /// A click's dwell in seconds (NaN: none, or not a click).
    #[inline]
    pub(crate) fn dwell(&self) -> f64 {
        self.amount_of(Kind::Click)
    }

    /// A SERP's `latency_ms` (NaN: none, or not a SERP).
    #[inline]
    pub(crate) fn latency(&self) -> f64 {
        self.amount_of(Kind::Serp)
    }

    /// The shared amount, read as that of `kind` (NaN for an event of another kind).
    #[inline]
    fn amount_of(&self, kind: Kind) -> f64 {
        if self.kind() == kind {
            self.amount
        } else {
            f64::NAN
        }
    }

    fn set_dwell(&mut self, dwell: f64) {
        debug_assert!(self.kind() == Kind::Click);
        self.amount = dwell;
    }
}

impl std::fmt::Debug for Ev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ev")
            .field("kind", &self.kind())
            .field("time", &self.time)
            .field("place", &self.place())
            .field("session", &self.session)
            .field("query", &self.query)
            .field("variant", &self.variant)
            .field("n_results", &self.n_results())
            .field("position", &self.position())
            .field("dwell", &self.dwell())
            .field("latency", &self.latency())
            .finish()
    }
}

/// The interaction log: its events, sessions contiguous and each in time order (ties in input order).
pub struct Log {
    pub(crate) ev: Vec<Ev>,
    /// Session `s` is events `starts[s]..starts[s + 1]`.
    pub(crate) starts: Vec<usize>,
    /// The variant of each session ([`NONE`]: none).
    pub(crate) session_variant: Vec<u32>,
    /// The sessions' ids (texts that came in as `str`).
    pub(crate) sessions: Ids,
    pub(crate) queries: Vec<String>,
    pub(crate) variants: Vec<String>,
    /// Which fields the log has (index as [`FIELDS`]).
    pub(crate) has: [bool; 10],
    pub(crate) ignored: Vec<(String, u64)>,
    pub(crate) reordered: u64,
    /// How the timestamps are written (see [`Log::time_style`]).
    pub(crate) time_style: Option<String>,
    pub(crate) source: String,
    pub(crate) unit: Unit,
    /// The first place of a click without a position, in a log without positions.
    pub(crate) no_position: Option<u64>,
}

impl Log {
    /// How the log writes its timestamps, fixed by its first event (`numbers in
    /// seconds`, `numbers in milliseconds`, `text with a time zone`, `text without a
    /// time zone`, ...; a log mixing two ways is refused); None without events. Logs read
    /// in parts (Spark partitions) are one log only if their parts agree.
    pub fn time_style(&self) -> Option<&str> {
        self.time_style.as_deref()
    }

    /// Number of events kept (SERPs, clicks, success events).
    pub fn len(&self) -> usize {
        self.ev.len()
    }

    /// Whether the log has no event.
    pub fn is_empty(&self) -> bool {
        self.ev.is_empty()
    }

    /// Number of sessions.
    pub fn n_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// The id of session `s`.
    pub(crate) fn session(&self, s: usize) -> &str {
        // every id came in as `str`
        std::str::from_utf8(self.sessions.get(s)).unwrap_or_default()
    }

    /// The sessions' ids, in order.
    pub(crate) fn session_names(&self) -> Vec<String> {
        names(&self.sessions)
    }

    /// Events of unknown types, which are ignored: `(type, count)`, by type.
    pub fn ignored(&self) -> &[(String, u64)] {
        &self.ignored
    }

    /// Events that came before an earlier event of their session (the log was sorted).
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// Whether the log has the field (by its name in [`FIELDS`]).
    pub fn has(&self, field: &str) -> bool {
        FIELDS
            .iter()
            .position(|f| *f == field)
            .is_some_and(|i| self.has[i])
    }

    /// The variants (A/B arms), in order of first sight.
    pub fn variants(&self) -> &[String] {
        &self.variants
    }

    pub(crate) fn n_events(&self, s: usize) -> std::ops::Range<usize> {
        self.starts[s]..self.starts[s + 1]
    }

    pub(crate) fn error_at(&self, event: usize, message: String) -> Error {
        Error::Format {
            location: Location::new(&self.source, self.ev[event].place(), self.unit),
            message,
        }
    }

    /// The error for a metric that needs a field the log lacks.
    pub(crate) fn need(&self, field: usize, what: &str) -> Result<()> {
        if self.has[field] {
            return Ok(());
        }
        Err(Error::Input(format!(
            "{what} needs the log's '{}' column, which {} lacks",
            FIELDS[field], self.source
        )))
    }
}

#[cfg(test)]
impl Log {
    /// Everything the log holds, as text (NaN equal to NaN): for tests that two ways
    /// of reading give the same log.
    pub(crate) fn everything(&self) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?} {:?}",
            self.ev,
            self.starts,
            self.session_variant,
            self.session_names(),
            self.queries,
            self.variants,
            self.has,
            self.reordered,
            self.ignored,
            self.time_style,
            self.no_position
        )
    }
}

/// Builds a [`Log`] from events in input order.
pub struct LogBuilder {
    opts: LogOptions,
    source: String,
    unit: Unit,
    clock: Clock,
    /// The sessions' texts, one per event of `rows`, numbered at `finish` (all at once,
    /// in parallel: [`group_in_order`]); `None` where a stream numbers them as they come
    /// into `sessions` ([`LogBuilder::require_time_order`]).
    session_texts: Option<Vec<Ids>>,
    sessions: Interner,
    queries: Interner,
    variants: Interner,
    ignored: FxHashMap<String, u64>,
    /// The latest time of each session so far (sessions numbered as they come).
    last_time: Vec<f64>,
    rows: Vec<Ev>,
    /// The events of parts appended ([`LogBuilder::append`]), which come before
    /// `rows`.
    segments: Vec<Segment>,
    /// Source code -> our code, per coded field (session, query, variant; the type's
    /// [`Kind`] as a number, [`NONE`] for a type ignored or not seen yet).
    memo: [Vec<u32>; 4],
    has: [bool; 10],
    /// Streaming ([`LogBuilder::require_time_order`]): the slack, the gap that ends a
    /// session, the latest time so far and its place.
    order: Option<(f64, f64, f64, u64)>,
    /// The place of the first click without a position (kept across
    /// [`LogBuilder::split_closed`]: such a click is an error once any event has a
    /// position, which a stream learns only later).
    no_position: Option<u64>,
}

/// Events of a part of the source, made by a builder of their own
/// ([`LogBuilder::part`]), with the maps of that builder's query and variant codes to
/// this one's (None: the same codes). Kept as they were made, not copied: the events
/// are put in session order once, at [`LogBuilder::finish`], from every segment.
struct Segment {
    rows: Vec<Ev>,
    queries: Option<Vec<u32>>,
    variants: Option<Vec<u32>>,
}

impl Segment {
    /// Event `i`, its codes this builder's.
    #[inline]
    fn get(&self, i: usize) -> Ev {
        let mut e = self.rows[i];
        let ours = |map: &Option<Vec<u32>>, c: u32| match map {
            Some(m) if c != NONE => m[c as usize],
            _ => c,
        };
        e.query = ours(&self.queries, e.query);
        e.variant = ours(&self.variants, e.variant);
        e
    }
}

/// Whether `v` is a count or position: a whole number from `min` (below 4e9).
#[inline]
fn is_whole(v: f64, min: f64) -> bool {
    v.is_finite() && v.fract() == 0.0 && v >= min && v < 4.0e9
}

/// One event as columns give it, for [`LogBuilder::push_known`]: the source's codes of
/// its type, query and variant texts (`None`: missing), its session's text, its
/// timestamp as a number, and its `n_results`, `position`, `dwell` and `latency_ms`
/// (NaN: missing).
#[cfg(feature = "arrow")]
pub(crate) struct Known<'a> {
    pub(crate) kind: u32,
    pub(crate) session: &'a str,
    pub(crate) time: f64,
    pub(crate) numbers: [f64; 4],
    pub(crate) query: Option<u32>,
    pub(crate) variant: Option<u32>,
}

/// Whether `v` is a valid `dwell` or `latency_ms`: finite, not negative.
#[inline]
fn is_amount(v: f64) -> bool {
    v >= 0.0 && v.is_finite()
}

/// The kind of a type's number in [`LogBuilder`]'s memo of type codes.
#[inline]
fn kind_of(k: u32) -> Option<Kind> {
    match k {
        0 => Some(Kind::Serp),
        1 => Some(Kind::Click),
        2 => Some(Kind::Success),
        _ => None,
    }
}

/// An event's session text kept in the lists a whole log's sessions are numbered from
/// at [`LogBuilder::finish`]; `room`: the events still to come (as many as reserved).
#[inline]
fn keep_session_text(lists: &mut Vec<Ids>, room: usize, session: &str) -> Result<()> {
    if lists
        .last()
        .is_none_or(|l| l.len() >= 1 << 20 || l.byte_len() + session.len() >= 1 << 31)
    {
        // room for the events still to come at the last list's bytes per id
        let n = room.clamp(16, 1 << 20);
        let per = lists
            .last()
            .map_or(16, |l| l.byte_len() / l.len().max(1) + 1);
        lists.push(Ids::with_capacity(n, n * per));
    }
    if let Some(l) = lists.last_mut() {
        l.push(session.as_bytes())?;
    }
    Ok(())
}

/// A count or position: a whole number from `min`.
fn whole(v: f64, min: f64, what: &str) -> std::result::Result<f64, String> {
    if is_whole(v, min) {
        Ok(v)
    } else {
        Err(format!("{what} must be a whole number >= {min}, got {v}"))
    }
}

impl LogBuilder {
    /// A builder for the log named `source` (a file, or `log`), whose places count in
    /// `unit` (lines of a file, rows of a table).
    pub fn new(opts: LogOptions, source: &str, unit: Unit) -> Result<LogBuilder> {
        opts.check()?;
        let clock = Clock::new(opts.time_scale, unit.word());
        Ok(Self::blank(opts, source.to_string(), unit, clock))
    }

    /// A builder holding nothing yet.
    fn blank(opts: LogOptions, source: String, unit: Unit, clock: Clock) -> LogBuilder {
        LogBuilder {
            opts,
            source,
            unit,
            clock,
            session_texts: Some(Vec::new()),
            sessions: Interner::default(),
            queries: Interner::default(),
            variants: Interner::default(),
            ignored: FxHashMap::default(),
            last_time: Vec::new(),
            rows: Vec::new(),
            segments: Vec::new(),
            memo: Default::default(),
            has: [false; 10],
            order: None,
            no_position: None,
        }
    }

    /// Refuse events more than `slack` seconds before the latest event so far, and end
    /// a session once the latest time is more than `gap` seconds past its last event:
    /// a later event of its id starts a new session (the rules of a stream, see
    /// `online::stream`).
    pub(crate) fn require_time_order(&mut self, slack: f64, gap: f64) {
        debug_assert!(
            self.rows.is_empty(),
            "time order is required before any event"
        );
        self.session_texts = None;
        self.order = Some((slack, gap, f64::NEG_INFINITY, 0));
    }

    /// The latest time so far (with [`LogBuilder::require_time_order`]).
    pub(crate) fn latest(&self) -> f64 {
        self.order.map_or(f64::NEG_INFINITY, |o| o.2)
    }

    /// Events held.
    pub(crate) fn held(&self) -> usize {
        self.rows.len() + self.segments.iter().map(|s| s.rows.len()).sum::<usize>()
    }

    /// Take out the sessions whose last event is before `before`, finished as a
    /// [`Log`] of their own (their sessions numbered anew; its query codes are this
    /// builder's and its `queries` empty; `ignored` stays here, its `reordered` counts
    /// its own sessions, which it holds whole); the
    /// builder keeps the other sessions and goes on.
    pub(crate) fn split_closed(&mut self, before: f64) -> Result<Log> {
        let n = self.sessions.len();
        let (mut closed, mut open) = (Interner::default(), Interner::default());
        let mut to = vec![0u32; n];
        let mut last = Vec::new();
        for (s, code) in to.iter_mut().enumerate() {
            let name = self.sessions.get(s);
            if self.last_time[s] < before {
                // ended sessions may share an id (see `require_time_order`)
                *code = closed.push(name.as_bytes())? as u32;
            } else {
                *code = open.code(name)? | 1 << 31;
                last.push(self.last_time[s]);
            }
        }
        let (mut done, mut kept) = (Vec::new(), Vec::new());
        for mut e in self.rows.drain(..) {
            let c = to[e.session as usize];
            e.session = c & !(1 << 31);
            if c >> 31 == 0 {
                done.push(e);
            } else {
                kept.push(e);
            }
        }
        self.rows = kept;
        self.sessions = open;
        self.last_time = last;
        self.forget_codes();
        let (opts, source) = (self.opts.clone(), self.source.clone());
        let part = LogBuilder {
            session_texts: None,
            sessions: closed,
            variants: self.variants.clone(),
            rows: done,
            has: self.has,
            ..Self::blank(opts, source, self.unit, Clock::new(None, self.unit.word()))
        };
        let log = part.finish()?;
        if self.no_position.is_none() {
            self.no_position = log.no_position;
        }
        Ok(log)
    }

    /// An empty builder for events that follow this one's (a later stretch of the
    /// same source, filled on another thread, then [`LogBuilder::append`]ed): the same
    /// options and clock. Made once the clock is set (see [`LogBuilder::take_in_parts`]),
    /// so that its errors are those of one builder reading everything; not for streams.
    pub(crate) fn part(&self) -> LogBuilder {
        debug_assert!(self.order.is_none(), "a stream is read by one builder");
        let (opts, source) = (self.opts.clone(), self.source.clone());
        LogBuilder {
            has: self.has,
            ..Self::blank(opts, source, self.unit, self.clock.clone())
        }
    }

    /// Append the events of `part` ([`LogBuilder::part`], filled by
    /// [`LogBuilder::push`]), which follow this builder's: its texts numbered among
    /// this builder's in their order of first sight, its events kept where they are.
    pub(crate) fn append(&mut self, part: LogBuilder) -> Result<()> {
        debug_assert!(part.segments.is_empty() && part.order.is_none());
        let ours = |into: &mut Interner, from: &Interner| -> Result<Option<Vec<u32>>> {
            let map = (0..from.len())
                .map(|i| into.code(from.get(i)))
                .collect::<Result<Vec<u32>>>()?;
            Ok((!map.iter().enumerate().all(|(i, &c)| i as u32 == c)).then_some(map))
        };
        let queries = ours(&mut self.queries, &part.queries)?;
        let variants = ours(&mut self.variants, &part.variants)?;
        if !self.rows.is_empty() {
            self.segments.push(Segment {
                rows: std::mem::take(&mut self.rows),
                queries: None,
                variants: None,
            });
        }
        self.segments.push(Segment {
            rows: part.rows,
            queries,
            variants,
        });
        if let (Some(lists), Some(more)) = (&mut self.session_texts, part.session_texts) {
            lists.extend(more);
        }
        for (kind, n) in part.ignored {
            *self.ignored.entry(kind).or_insert(0) += n;
        }
        for (h, p) in self.has.iter_mut().zip(part.has) {
            *h |= p;
        }
        if !self.clock.is_set() {
            self.clock = part.clock;
        }
        Ok(())
    }

    /// The log of `tasks` (the stretches of this builder's source, in order; an error
    /// among them comes after the events of those before), taken in on the pool: each
    /// task's events into a part of its own ([`LogBuilder::part`]) by `fill`, the parts
    /// appended in order as they are done while later tasks run. The log, and the first
    /// error, are those of one builder taking in every event in order: first the
    /// source's events up to the first timestamp are taken in once more, on their own
    /// (`fill` stops where its third argument says), for the way timestamps are
    /// written, which every part's clock then knows.
    pub(crate) fn take_in_parts<T: Clone + Send>(
        mut self,
        tasks: impl IntoIterator<Item = Result<T>>,
        fill: impl Fn(T, &mut LogBuilder, &dyn Fn(&LogBuilder) -> bool) -> Result<()> + Sync + Send,
        cancel: &AtomicBool,
    ) -> Result<Log> {
        // the tasks read for the clock are held, to be taken in with the others
        let mut tasks = tasks.into_iter();
        let mut early = Vec::new();
        let mut first = self.part();
        while !first.clock.is_set() {
            let Some(task) = tasks.next() else { break };
            let task = task?;
            fill(task.clone(), &mut first, &|b| b.clock.is_set())?;
            early.push(task);
        }
        if !self.clock.is_set() {
            self.clock = first.clock;
        }
        let template = self.part();
        crate::parallel::pipeline(
            early.into_iter().map(Ok).chain(tasks),
            4 * crate::parallel::current_threads(),
            |task: Result<T>| {
                let mut part = template.part();
                fill(task?, &mut part, &|_| false)?;
                Ok(part)
            },
            |part| {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::Interrupted);
                }
                self.append(part?)
            },
        )?;
        self.finish()
    }

    /// The options.
    pub fn options(&self) -> &LogOptions {
        &self.opts
    }

    /// Room for `n` more events (a source that knows its length: no regrowth).
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }

    /// Forget the source's codes (`Event::codes`): the next events number their texts
    /// anew (each record batch of an Arrow table has a dictionary of its own).
    pub fn forget_codes(&mut self) {
        self.memo.iter_mut().for_each(Vec::clear);
    }

    /// Mark the fields the source has (a file's header, a frame's columns): a metric
    /// needing one of them is then computed even if no event carries a value.
    pub fn declare(&mut self, field: usize) {
        self.has[field] = true;
    }

    fn err(&self, place: u64, message: String) -> Error {
        Error::Format {
            location: Location::new(&self.source, place, self.unit),
            message,
        }
    }

    /// Our code of `text`, through the memo of the source's code when there is one.
    fn code(
        memo: &mut Vec<u32>,
        names: &mut Interner,
        source: Option<u32>,
        text: &str,
    ) -> Result<u32> {
        let Some(c) = source.map(|c| c as usize) else {
            return names.code(text);
        };
        if c >= memo.len() {
            memo.resize(c + 1, NONE);
        }
        if memo[c] == NONE {
            memo[c] = names.code(text)?;
        }
        Ok(memo[c])
    }

    /// The session of an event at time `t` numbered as it comes (a stream), and its
    /// latest time updated.
    fn session_now(&mut self, code: Option<u32>, session: &str, t: f64) -> Result<usize> {
        let mut s = Self::code(&mut self.memo[0], &mut self.sessions, code, session)? as usize;
        if let Some((_, gap, latest, _)) = self.order {
            if s < self.last_time.len() && latest - self.last_time[s] > gap {
                // the session ended: this event starts the next one of its id
                s = self.sessions.renew(s)?;
            }
        }
        if s == self.last_time.len() {
            self.last_time.push(t);
        } else {
            self.last_time[s] = self.last_time[s].max(t);
        }
        Ok(s)
    }

    /// Add one event, found at `place` (line or row).
    pub fn push(&mut self, e: Event<'_>, place: u64) -> Result<()> {
        let missing = |b: &Self, i: usize| {
            b.err(
                place,
                format!("no '{}' (the {} field)", b.opts.columns[i], FIELDS[i]),
            )
        };
        let kind_text = e
            .kind
            .as_deref()
            .ok_or_else(|| missing(self, field::TYPE))?;
        let known = |c: u32| self.memo[3].get(c as usize).and_then(|&k| kind_of(k));
        let kind = match e.codes[3].and_then(known) {
            Some(kind) => kind,
            None => {
                let kind = match kind_text {
                    "query" => Kind::Serp,
                    "click" => Kind::Click,
                    k if self.opts.success_events.iter().any(|s| s == k) => Kind::Success,
                    k => {
                        match self.ignored.get_mut(k) {
                            Some(n) => *n += 1,
                            None => {
                                self.ignored.insert(k.to_string(), 1);
                            }
                        }
                        return Ok(());
                    }
                };
                if let Some(c) = e.codes[3].map(|c| c as usize) {
                    let memo = &mut self.memo[3];
                    if c >= memo.len() {
                        memo.resize(c + 1, NONE);
                    }
                    memo[c] = kind as u32;
                }
                kind
            }
        };
        let session = e
            .session
            .as_deref()
            .ok_or_else(|| missing(self, field::SESSION))?;
        let time = e.time.as_ref().ok_or_else(|| missing(self, field::TIME))?;
        let t = self
            .clock
            .seconds(time, place)
            .map_err(|m| self.err(place, m))?;
        if let Some((slack, gap, latest, at)) = self.order {
            if t < latest - slack {
                return Err(self.err(
                    place,
                    format!(
                        "this event is {} s before the latest one so far ({} {at}); \
                         streaming needs the log in time order, up to a slack of {slack} s \
                         (raise it, or read the log whole)",
                        latest - t,
                        self.unit.word()
                    ),
                ));
            }
            if t > latest {
                self.order = Some((slack, gap, t, place));
            }
        }
        let bad = |m: String| self.err(place, m);
        let n_results = match e.n_results {
            Some(v) => whole(v, 0.0, "n_results").map_err(bad)?,
            None => f64::NAN,
        };
        let position = match e.position {
            Some(v) => whole(v, 1.0, "position").map_err(bad)? as u32,
            None => 0,
        };
        let dwell = match e.dwell {
            Some(v) if !is_amount(v) => {
                return Err(bad(format!("dwell must be seconds >= 0, got {v}")))
            }
            Some(v) => v,
            None => f64::NAN,
        };
        let latency = match e.latency {
            Some(v) if !is_amount(v) => {
                return Err(bad(format!("latency_ms must be >= 0, got {v}")))
            }
            Some(v) => v,
            None => f64::NAN,
        };
        let room = self.rows.capacity() - self.rows.len();
        let s = match &mut self.session_texts {
            Some(lists) => {
                keep_session_text(lists, room, session)?;
                0
            }
            None => self.session_now(e.codes[0], session, t)?,
        };
        let query = match e.query.as_deref() {
            Some(q) => Self::code(&mut self.memo[1], &mut self.queries, e.codes[1], q)?,
            None => NONE,
        };
        let variant = match e.variant.as_deref() {
            Some(v) => Self::code(&mut self.memo[2], &mut self.variants, e.codes[2], v)?,
            None => NONE,
        };
        let numbers = [n_results, dwell, latency];
        let ev = Ev::new(kind, t, place, s as u32, query, variant, numbers, position);
        self.keep(ev, [query, variant], numbers, position);
        Ok(())
    }

    /// The fields an event checked has (missing: [`NONE`], NaN, position 0) marked as
    /// the log's; the event kept.
    #[inline]
    fn keep(&mut self, e: Ev, [query, variant]: [u32; 2], numbers: [f64; 3], position: u32) {
        let [n_results, dwell, latency] = numbers;
        self.has[field::QUERY] |= query != NONE;
        self.has[field::N_RESULTS] |= !n_results.is_nan();
        self.has[field::POSITION] |= position != 0;
        self.has[field::DWELL] |= !dwell.is_nan();
        self.has[field::LATENCY] |= !latency.is_nan();
        self.has[field::VARIANT] |= variant != NONE;
        self.rows.push(e);
    }

    /// Whether [`LogBuilder::push_known`] takes events (a log read whole, not a
    /// stream), for a source to ask once a batch.
    #[cfg(feature = "arrow")]
    pub(crate) fn takes_known(&self) -> bool {
        self.order.is_none() && self.session_texts.is_some()
    }

    /// [`LogBuilder::push`] of an event read from columns (a table's row) in the common
    /// case, without the checks' messages: its type a known code ([`Known`]) of a kind
    /// taken in, its timestamp a number written as the first one, its numbers valid, its
    /// query and variant codes known or their texts given by `text_of` (of a field's
    /// slot in [`Event::codes`]; `None`: not at hand), the log read whole (not a
    /// stream). Returns false where the event needs `push`, which reads its texts,
    /// checks it and says what is wrong: every event is taken in as `push` takes it
    /// (texts numbered in the same order; nothing is kept of an event refused here
    /// but its query's number, which `push` gives it too). An [`Event`] built and
    /// checked a row at a time was about 1,000 instructions a row of a parquet log,
    /// twice what the parquet crate's decoding of the row costs.
    #[cfg(feature = "arrow")]
    #[inline]
    pub(crate) fn push_known<'t>(
        &mut self,
        e: &Known<'_>,
        place: u64,
        text_of: impl Fn(usize) -> Option<&'t str>,
    ) -> Result<bool> {
        if !self.takes_known() {
            return Ok(false);
        }
        let Some(kind) = (self.memo[3].get(e.kind as usize)).and_then(|&k| kind_of(k)) else {
            return Ok(false);
        };
        let Some(t) = self.clock.number_seconds(e.time) else {
            return Ok(false);
        };
        let [n_results, position, dwell, latency] = e.numbers;
        let or_none = |v: f64, fine: bool| v.is_nan() || fine;
        if !(or_none(n_results, is_whole(n_results, 0.0))
            && or_none(position, is_whole(position, 1.0))
            && or_none(dwell, is_amount(dwell))
            && or_none(latency, is_amount(latency)))
        {
            return Ok(false);
        }
        // our codes of the query and variant (NONE: missing), as `push` numbers them
        let ours = |memo: &mut Vec<u32>, names: &mut Interner, c: Option<u32>, slot: usize| {
            let Some(c) = c else { return Ok(Some(NONE)) };
            match memo.get(c as usize) {
                Some(&x) if x != NONE => Ok(Some(x)),
                _ => match text_of(slot) {
                    Some(text) => Self::code(memo, names, Some(c), text).map(Some),
                    None => Ok(None),
                },
            }
        };
        let Some(query) = ours(&mut self.memo[1], &mut self.queries, e.query, 1)? else {
            return Ok(false);
        };
        let Some(variant) = ours(&mut self.memo[2], &mut self.variants, e.variant, 2)? else {
            return Ok(false);
        };
        let room = self.rows.capacity() - self.rows.len();
        let Some(lists) = &mut self.session_texts else {
            return Ok(false);
        };
        keep_session_text(lists, room, e.session)?;
        let position = if position.is_nan() {
            0
        } else {
            position as u32
        };
        let numbers = [n_results, dwell, latency];
        let ev = Ev::new(kind, t, place, 0, query, variant, numbers, position);
        self.keep(ev, [query, variant], numbers, position);
        Ok(true)
    }

    /// The log: sessions together, each sorted by time (ties in input order); clicks
    /// checked to follow a SERP; a session's variant checked to be one; dwell derived
    /// where not given.
    pub fn finish(mut self) -> Result<Log> {
        // every event in input order: the parts appended, then this builder's own
        if !self.rows.is_empty() || self.segments.is_empty() {
            self.segments.push(Segment {
                rows: std::mem::take(&mut self.rows),
                queries: None,
                variants: None,
            });
        }
        let segments = std::mem::take(&mut self.segments);
        let mut base = Vec::with_capacity(segments.len());
        let mut n = 0;
        for seg in &segments {
            base.push(n);
            n += seg.rows.len();
        }
        // the sessions numbered and their events grouped now (all at once), or numbered
        // as they came (a stream) and grouped by a counting sort of the events' numbers;
        // sessions in order of first sight, each one's events in input order
        let (sessions, starts, order) = match self.session_texts.take() {
            Some(lists) => {
                let g = group_in_order(&lists)?;
                (g.names, g.starts, g.order)
            }
            None => {
                let sessions = std::mem::take(&mut self.sessions).into_ids();
                let numbers: Vec<u32> = (segments.iter())
                    .flat_map(|seg| seg.rows.iter().map(|e| e.session))
                    .collect();
                let (starts, order) = session_order(&numbers, sessions.len());
                (sessions, starts, order)
            }
        };
        let n_sessions = sessions.len();
        // an event's segment: the one of its stretch of 4,096 events from a table, then
        // onwards (a binary search of the segments for every event, its branches
        // unpredictable, was 40% of the gather's CPU samples for a 10 M-row pyarrow
        // Table taken in as 153 segments)
        let stretch_segment: Vec<usize> = (0..n.div_ceil(1 << 12))
            .map(|c| base.partition_point(|&b| b <= c << 12) - 1)
            .collect();
        let locate = |i: u32| {
            let i = i as usize;
            let mut k = stretch_segment[i >> 12];
            while base.get(k + 1).is_some_and(|&b| b <= i) {
                k += 1;
            }
            (&segments[k], i - base[k])
        };
        // the events in session order (in input order within a session), gathered in
        // parallel from the segments with this builder's codes (their sessions' numbers
        // are set by [`Settle`]). Where the input's rows are not grouped by session
        // (a shuffled table) the reads land all over the segments: each event is fetched
        // into the cache GATHER_AHEAD events before it is read (the read waited on memory
        // in 86% of the gather's samples, which was a fifth of reading a 10 M-event
        // parquet log)
        let mut ev = crate::parallel::map_indexed(&order, |j, &i| {
            if let Some(&ahead) = order.get(j + GATHER_AHEAD) {
                let (seg, o) = locate(ahead);
                crate::parallel::prefetch(seg.rows.as_ptr().wrapping_add(o), EV_BYTES);
            }
            let (seg, o) = locate(i);
            seg.get(o)
        });
        drop(order);
        drop(segments);
        let variants = self.variants.into_names();
        let mut has = self.has;
        has[field::SESSION] = true;
        has[field::TIME] = true;
        has[field::TYPE] = true;
        // each session's events sorted by time and checked, blocks of sessions in
        // parallel; the first error in session order is the one returned, as if
        // the sessions were checked one by one
        let (source, unit) = (self.source.as_str(), self.unit);
        let mut session_variant = vec![NONE; n_sessions];
        let blocks = session_blocks(&starts, 8 * crate::parallel::current_threads());
        let events = split_blocks(&mut ev, &blocks, |s| starts[s]);
        let their_variants = split_blocks(&mut session_variant, &blocks, |s| s);
        let work: Vec<_> = (blocks.iter().cloned().zip(events).zip(their_variants))
            .map(|((b, e), v)| (b, e, v))
            .collect();
        let settle = Settle {
            cap: self.opts.dwell_cap,
            has_position: has[field::POSITION],
            sessions: &sessions,
            variants: &variants,
            starts: &starts,
            unit,
        };
        let settled = crate::parallel::map_chunks_owned(work, |(b, e, v)| settle.block(b, e, v));
        let (mut late, mut no_position) = (0, self.no_position);
        for r in settled {
            let (l, np) = r.map_err(|(place, message)| Error::Format {
                location: Location::new(source, place, unit),
                message,
            })?;
            late += l;
            no_position = match (no_position, np) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(Log {
            ev,
            starts,
            session_variant,
            sessions,
            queries: self.queries.into_names(),
            variants,
            has,
            ignored: {
                let mut v: Vec<(String, u64)> = self.ignored.into_iter().collect();
                v.sort();
                v
            },
            // events before a later one of their session in input order: counted here
            // only (a stream's parts hold whole sessions, and it sums them)
            reordered: late,
            time_style: self.clock.style(),
            source: self.source,
            unit: self.unit,
            no_position,
        })
    }
}

/// The events of each session together by a counting sort (a stream's sessions,
/// numbered as they came; a whole log's are grouped as they are numbered,
/// [`group_in_order`]): `starts` (session `s` is
/// `order[starts[s]..starts[s + 1]]`) and `order` (the events, by their place in input
/// order; a session's in input order). Blocks of sessions are counted and placed by
/// tasks of their own, each reading every event's session number and taking those of
/// its block: one pass over the numbers per block, where the counting on one thread
/// was a tenth of reading a 10 M-event log on 2 (and more of it on many cores).
fn session_order(numbers: &[u32], n_sessions: usize) -> (Vec<usize>, Vec<u32>) {
    let n = numbers.len();
    let k = if n >= 1 << 16 {
        crate::parallel::current_threads().clamp(1, n_sessions.max(1))
    } else {
        1
    };
    let bound = |b: usize| n_sessions * b / k;
    let blocks: Vec<std::ops::Range<usize>> = (0..k).map(|b| bound(b)..bound(b + 1)).collect();
    // the sessions of a block, as offsets from its first (numbers are below 2^32)
    let offsets = |r: &std::ops::Range<usize>| (r.start as u32, r.len() as u32);
    let counts: Vec<Vec<u32>> = crate::parallel::map_chunks(&blocks, |r| {
        let (lo, len) = offsets(r);
        let mut c = vec![0u32; r.len()];
        for &s in numbers {
            let i = s.wrapping_sub(lo);
            if i < len {
                c[i as usize] += 1;
            }
        }
        c
    });
    let mut starts = Vec::with_capacity(n_sessions + 1);
    let mut at = 0usize;
    for &c in counts.iter().flatten() {
        starts.push(at);
        at += c as usize;
    }
    starts.push(at);
    drop(counts);
    let mut order = vec![0u32; n];
    let stretches = split_blocks(&mut order, &blocks, |s| starts[s]);
    let work: Vec<_> = blocks.iter().cloned().zip(stretches).collect();
    crate::parallel::map_chunks_owned(work, |(r, mine)| {
        let (lo, len) = offsets(&r);
        let base = starts[r.start];
        let mut fill: Vec<u32> = (starts[r.clone()].iter())
            .map(|&x| (x - base) as u32)
            .collect();
        for (e, &s) in numbers.iter().enumerate() {
            let i = s.wrapping_sub(lo);
            if i < len {
                let f = &mut fill[i as usize];
                mine[*f as usize] = e as u32;
                *f += 1;
            }
        }
    });
    (starts, order)
}

/// `items` cut at the blocks of sessions (consecutive ranges from the first), session
/// `s` beginning at item `at(s)`: one stretch a block, for a task of its own.
fn split_blocks<'a, T>(
    mut items: &'a mut [T],
    blocks: &[std::ops::Range<usize>],
    at: impl Fn(usize) -> usize,
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        let (mine, rest) = std::mem::take(&mut items).split_at_mut(at(b.end) - at(b.start));
        out.push(mine);
        items = rest;
    }
    out
}

/// Sessions in about `n` blocks of about equal numbers of events (ranges of sessions).
fn session_blocks(starts: &[usize], n: usize) -> Vec<std::ops::Range<usize>> {
    let n_sessions = starts.len() - 1;
    let per = (starts[n_sessions] / n.max(1)).max(1 << 12);
    let mut blocks = Vec::new();
    let mut s = 0;
    while s < n_sessions {
        let goal = starts[s] + per;
        let end = (s + starts[s..].partition_point(|&e| e < goal)).clamp(s + 1, n_sessions);
        blocks.push(s..end);
        s = end;
    }
    blocks
}

/// What [`LogBuilder::finish`] does to each session's events, in place: sorted by time
/// (stable: equal times keep input order), clicks checked to follow a SERP and to have
/// a position where the log has them, dwell derived where not given, the session's
/// variant checked to be one.
struct Settle<'a> {
    cap: f64,
    has_position: bool,
    sessions: &'a Ids,
    variants: &'a [String],
    starts: &'a [usize],
    unit: Unit,
}

/// A place and a message.
type Refusal = (u64, String);

impl Settle<'_> {
    /// Sessions `block`, whose events are `ev` and variants `variant`: the events that
    /// came after a later one of their session, and the first place of a click without
    /// a position in a log without positions; or the first refusal.
    fn block(
        &self,
        block: std::ops::Range<usize>,
        ev: &mut [Ev],
        variant: &mut [u32],
    ) -> std::result::Result<(u64, Option<u64>), Refusal> {
        let first = self.starts[block.start];
        let (mut late, mut no_position) = (0, None);
        for (k, s) in block.enumerate() {
            let events = &mut ev[self.starts[s] - first..self.starts[s + 1] - first];
            let mut latest = f64::NEG_INFINITY;
            for e in events.iter_mut() {
                e.session = s as u32;
                late += u64::from(e.time < latest);
                latest = latest.max(e.time);
            }
            if !events.is_sorted_by(|a, b| a.time.total_cmp(&b.time).is_le()) {
                events.sort_by(|a, b| a.time.total_cmp(&b.time));
            }
            variant[k] = self.session(s, events, &mut no_position)?;
        }
        Ok((late, no_position))
    }

    /// One session `s`'s events (in time order): checked, dwell derived; its variant.
    fn session(
        &self,
        s: usize,
        events: &mut [Ev],
        no_position: &mut Option<u64>,
    ) -> std::result::Result<u32, Refusal> {
        let name = || String::from_utf8_lossy(self.sessions.get(s));
        let mut seen_serp = false;
        let mut first_variant: Option<usize> = None;
        for i in 0..events.len() {
            let e = events[i];
            let place = e.place();
            if e.kind() == Kind::Click && e.position() == 0 && !self.has_position {
                *no_position = Some(no_position.map_or(place, |p| p.min(place)));
            }
            match e.kind() {
                Kind::Serp => seen_serp = true,
                Kind::Click if e.position() == 0 && self.has_position => {
                    return Err((place, "a click without a position".into()))
                }
                Kind::Click if !seen_serp => {
                    return Err((
                        place,
                        format!(
                            "a click with no earlier SERP (type 'query') in session '{}'",
                            name()
                        ),
                    ))
                }
                Kind::Click if e.dwell().is_nan() => {
                    // the next event of the session, capped; none: the cap
                    events[i].set_dwell(match events.get(i + 1) {
                        Some(next) => (next.time - e.time).min(self.cap),
                        None => self.cap,
                    });
                }
                _ => {}
            }
            if e.variant != NONE {
                match first_variant {
                    None => first_variant = Some(i),
                    Some(f) if events[f].variant != e.variant => {
                        return Err((
                            place,
                            format!(
                                "session '{}' is in variant '{}' here but in '{}' at {} {}",
                                name(),
                                self.variants[e.variant as usize],
                                self.variants[events[f].variant as usize],
                                self.unit.word(),
                                events[f].place()
                            ),
                        ))
                    }
                    _ => {}
                }
            }
        }
        Ok(first_variant.map_or(NONE, |f| events[f].variant))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each kind keeps the fields it is read for, and answers "none" for the others.
    #[test]
    fn an_event_keeps_what_its_kind_is_read_for() {
        let place = (1u64 << 62) - 1;
        let serp = |n: f64| Ev::new(Kind::Serp, 1.5, place, 3, 4, 5, [n, 7.0, 250.5], 9);
        for n in [f64::NAN, 0.0, 10.0, 3.9e9] {
            let e = serp(n);
            assert_eq!((e.kind(), e.place(), e.time), (Kind::Serp, place, 1.5));
            assert_eq!((e.session, e.query, e.variant), (3, 4, 5));
            assert_eq!(e.n_results().to_bits(), n.to_bits());
            assert_eq!(e.latency(), 250.5);
            assert!(e.dwell().is_nan());
            assert_eq!(e.position(), 0);
        }
        let mut click = Ev::new(
            Kind::Click,
            2.0,
            17,
            1,
            NONE,
            NONE,
            [12.0, f64::NAN, 3.0],
            4,
        );
        assert_eq!(
            (click.kind(), click.place(), click.position()),
            (Kind::Click, 17, 4)
        );
        assert!(click.dwell().is_nan() && click.n_results().is_nan() && click.latency().is_nan());
        click.set_dwell(31.25);
        assert_eq!(click.dwell(), 31.25);
        let success = Ev::new(Kind::Success, 3.0, 0, 1, 2, 0, [1.0, 2.0, 3.0], 4);
        assert_eq!(
            (success.kind(), success.place(), success.position()),
            (Kind::Success, 0, 0)
        );
        assert!(success.dwell().is_nan() && success.n_results().is_nan());
        assert!(success.latency().is_nan());
    }

    proptest! {
        #[test]
        fn interner_numbers_texts_in_order_of_first_sight(
            texts in proptest::collection::vec("[ab\u{e9}]{0,20}", 0..60),
            renew in 0usize..60,
        ) {
            let mut it = Interner::default();
            let mut seen: Vec<&str> = Vec::new();
            for t in &texts {
                let want = match seen.iter().position(|s| s == t) {
                    Some(i) => i,
                    None => {
                        seen.push(t);
                        seen.len() - 1
                    }
                };
                prop_assert_eq!(it.code(t).unwrap() as usize, want);
                prop_assert_eq!(it.get(want), t.as_str());
            }
            // a renewed text gets the next code, found from then on
            if let Some(t) = seen.get(renew % seen.len().max(1)) {
                let old = it.code(t).unwrap() as usize;
                let new = it.renew(old).unwrap();
                prop_assert_eq!(new, seen.len());
                prop_assert_eq!(it.code(t).unwrap() as usize, new);
                prop_assert_eq!(it.get(new), *t);
            }
        }
    }
}
