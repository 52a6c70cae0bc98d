//! A stable-toolchain fuzzer (cargo-fuzz needs nightly): a seeded mutation loop over a
//! corpus, with a cheap feedback signal (a new *outcome signature*, i.e. a new kind of
//! error or of success, keeps the input), `catch_unwind` around every execution, and
//! checks that every error has a message that names where the problem is.
//!
//! Shared by `tests/fuzz_corpus_replay.rs` (the short smoke run of `cargo test`, and the replay of
//! the stored corpus) and `tools/fuzz.rs` (the long runs:
//! `cargo run --release --example fuzz -- run --seconds 600`).

#![allow(dead_code)]

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use irmetrics::{Error, MeasureSet, Options, Qrels, Run};

/// The fuzz targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `Qrels::from_bytes`, then a write/re-read round trip.
    Qrels,
    /// `Run::from_bytes`, then a write/re-read round trip.
    Run,
    /// `MeasureSet::parse`, then an evaluation with the parsed measures.
    Measure,
    /// qrels and run in one input (split at a line `%%`), evaluated with all_trec.
    Eval,
    /// (query id, document id, value) rows through the public builders, then written
    /// to a file with the crate's writers and read back: every accepted row set must
    /// come back identical (see [`rows_target`]).
    Rows,
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::Qrels,
        Target::Run,
        Target::Measure,
        Target::Eval,
        Target::Rows,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Qrels => "qrels",
            Target::Run => "run",
            Target::Measure => "measure",
            Target::Eval => "eval",
            Target::Rows => "rows",
        }
    }

    pub fn from_name(s: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.name() == s)
    }
}

/// xorshift64*: deterministic, seedable, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

const TOKENS: &[&[u8]] = &[
    b"0",
    b"1",
    b"-1",
    b"-2",
    b"2",
    b"+1",
    b"1000",
    b"1.7",
    b"x",
    b"2abc",
    b"nan",
    b"NaN",
    b"-nan",
    b"inf",
    b"-inf",
    b"infinity",
    b"1e308",
    b"1e-320",
    b"-0",
    b"0x1p2",
    b"2.5x",
    b"1,5",
    b".5",
    b"5e-1",
    b"+.5",
    b"99999999999999999999",
    b"-9223372036854775808",
    b"9223372036854775807",
    b"#",
    b"# c",
    b"Q0",
    b"\xff\xfe",
    b"\xc3\xa9",
    b"\xe2\x80\xa8",
    b"\x00",
    b"",
    b" ",
    b"\t",
    b"\x0b",
    b"\x0c",
    b"\r",
    b"%%",
    b"=",
    b",",
    b".",
    b"@",
    b"_",
    b"(",
    b")",
    b"p=",
    b"rel=",
    b"-l",
    b"@0",
    b"@-1",
    b"@1.5",
    b".0",
    b",,",
    b"18446744073709551616",
];

const MEASURE_SEEDS: &[&str] = &[
    "P",
    "P.5",
    "P.1,2,3",
    "P_10",
    "P@5",
    "P@0",
    "P.0",
    "P.-1",
    "P.",
    "P.5,",
    "P.5,,10",
    "P.1.5",
    "P.a",
    "recall.100",
    "recall_1000",
    "R@1000",
    "map",
    "map_cut.10",
    "AP@100",
    "gm_map",
    "Rprec",
    "bpref",
    "gm_bpref",
    "recip_rank",
    "RR@10",
    "mrr@10",
    "iprec_at_recall.0.5",
    "iprec_at_recall_0.10",
    "IPrec@0.5",
    "11pt_avg",
    "11pt_avg.0.1,0.5",
    "ndcg",
    "ndcg.1=3,2=7",
    "ndcg_cut.10",
    "nDCG@10",
    "ndcg@10-l2",
    "P(rel=2)@5",
    "P(rel=x)@5",
    "P(rel=2@5",
    "nDCG(p=0.5)",
    "RBP(p=0.8)",
    "rbp.p=0.8",
    "rbp.95",
    "rbp.p=2",
    "rbp.p=-1",
    "rbp.p=nan",
    "rbp_resid",
    "infAP",
    "relstring",
    "relstring.20",
    "relstring.-1",
    "relstring.1e9",
    "utility",
    "utility.1,-1,0,0",
    "utility.1,2",
    "set_F",
    "set_F.0.5",
    "set_F.1,2",
    "set_P",
    "set_recall",
    "set_map",
    "set_relative_P",
    "relative_P.5",
    "success.1,5,10",
    "Success@10",
    "hit_rate@10",
    "unj.5",
    "binG",
    "G",
    "G.1=1,2=5",
    "Rndcg",
    "ndcg_rel",
    "Rprec_mult",
    "Rprec_mult.0.5,2",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "runid",
    "all_trec",
    "official",
    "set",
    "recip_rank_cut.10",
    "NumRet",
    "SetF",
    "SetAP",
    "precision@5",
    "r-precision",
    "",
    " ",
    "map@",
    "@5",
    "P@5-l",
    "P@5-l99999999999999999999",
    "ndcg.=",
    "ndcg.1=",
    "ndcg.x=1",
    "P.18446744073709551615",
    "P.99999999999999999999",
    "ndcg_cut.1000000000",
];

/// A mutation of `input` (corpus entries `others` may be spliced in).
pub fn mutate(rng: &mut Rng, input: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(12) {
            0 if !out.is_empty() => {
                // bit flip
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                // interesting byte
                const B: &[u8] = b"\x00\n \t\x0b\x0c\r#-.e9+0\xff\x80=,@_()";
                let i = rng.below(out.len());
                out[i] = B[rng.below(B.len())];
            }
            2 => {
                // insert a token
                let t = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(out.len() + 1);
                out.splice(i..i, t.iter().copied());
            }
            3 if !out.is_empty() => {
                // delete a range
                let i = rng.below(out.len());
                let n = 1 + rng.below((out.len() - i).min(16));
                out.drain(i..i + n);
            }
            4 => duplicate_line(rng, &mut out),
            5 => swap_fields(rng, &mut out),
            6 => replace_field(rng, &mut out),
            7 if !others.is_empty() => {
                // splice: a head of this input, a tail of another
                let o = &others[rng.below(others.len())];
                let i = rng.below(out.len() + 1);
                let j = rng.below(o.len() + 1);
                out.truncate(i);
                out.extend_from_slice(&o[j..]);
            }
            8 if !others.is_empty() => {
                // insert a line of another input
                let o = &others[rng.below(others.len())];
                let lines: Vec<&[u8]> = o.split(|&c| c == b'\n').collect();
                let l = lines[rng.below(lines.len())];
                let at = line_starts(&out);
                let i = at[rng.below(at.len())];
                let mut ins = l.to_vec();
                ins.push(b'\n');
                out.splice(i..i, ins);
            }
            9 => {
                // truncate
                let i = rng.below(out.len() + 1);
                out.truncate(i);
            }
            10 if !out.is_empty() => {
                // shuffle two lines
                let mut lines: Vec<Vec<u8>> =
                    out.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(a, b);
                out = lines.join(&b'\n');
            }
            _ => {
                // repeat a chunk (long lines, many lines)
                if !out.is_empty() {
                    let i = rng.below(out.len());
                    let n = 1 + rng.below((out.len() - i).min(64));
                    let chunk = out[i..i + n].to_vec();
                    for _ in 0..1 + rng.below(8) {
                        out.splice(i..i, chunk.iter().copied());
                    }
                }
            }
        }
    }
    out.truncate(1 << 16);
    out
}

fn line_starts(data: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(memchr_all(b'\n', data).into_iter().map(|i| i + 1));
    v
}

fn memchr_all(c: u8, data: &[u8]) -> Vec<usize> {
    data.iter()
        .enumerate()
        .filter(|(_, &b)| b == c)
        .map(|(i, _)| i)
        .collect()
}

fn line_range(rng: &mut Rng, data: &[u8]) -> (usize, usize) {
    let starts = line_starts(data);
    let s = starts[rng.below(starts.len())];
    let e = data[s..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(data.len(), |i| s + i);
    (s, e)
}

fn duplicate_line(rng: &mut Rng, out: &mut Vec<u8>) {
    let (s, e) = line_range(rng, out);
    let mut line = out[s..e].to_vec();
    line.push(b'\n');
    out.splice(s..s, line);
}

fn fields(line: &[u8]) -> Vec<Vec<u8>> {
    line.split(|c| b" \t\r\x0b\x0c".contains(c))
        .filter(|f| !f.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn swap_fields(rng: &mut Rng, out: &mut Vec<u8>) {
    let (s, e) = line_range(rng, out);
    let mut f = fields(&out[s..e]);
    if f.len() >= 2 {
        let (a, b) = (rng.below(f.len()), rng.below(f.len()));
        f.swap(a, b);
        out.splice(s..e, f.join(&b' '));
    }
}

fn replace_field(rng: &mut Rng, out: &mut Vec<u8>) {
    let (s, e) = line_range(rng, out);
    let mut f = fields(&out[s..e]);
    if f.is_empty() {
        return;
    }
    let i = rng.below(f.len());
    f[i] = TOKENS[rng.below(TOKENS.len())].to_vec();
    if rng.chance(4) {
        f.remove(rng.below(f.len()));
    }
    let sep: &[u8] = [b" ".as_slice(), b"\t", b"  ", b"\x0b"][rng.below(4)];
    out.splice(s..e, f.join(sep));
}

/// What one execution did.
#[derive(Debug)]
pub enum Outcome {
    /// Normal result; the signature classifies it for the feedback loop.
    Ok(String),
    /// A check failed or the code panicked: a crash.
    Crash(String),
}

fn err_signature(e: &Error) -> String {
    let kind = match e {
        Error::Io { .. } => "io",
        Error::Write { .. } => "write",
        Error::Format { .. } => "format",
        Error::DuplicateEntry { .. } => "dup",
        Error::Input(_) => "input",
        Error::MissingQuery { .. } | Error::RunMissingQuery { .. } => "missing",
        Error::Measure(_) => "measure",
        Error::Option(_) => "option",
        Error::Interrupted => "interrupted",
    };
    // the message without its quoted parts (ids, values) and digits
    let msg = match e {
        Error::Format { message, .. } => message.clone(),
        _ => e.to_string(),
    };
    let msg = match (msg.find('\''), msg.rfind('\'')) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &msg[..a], &msg[b + 1..]),
        _ => msg,
    };
    let sig: String = msg
        .chars()
        .filter(|c| c.is_ascii_alphabetic() || *c == ' ')
        .take(60)
        .collect();
    format!("{kind}:{sig}")
}

/// An error must say what is wrong, and a format error where.
fn check_error(e: &Error, source: &str) -> Result<(), String> {
    let msg = e.to_string();
    if msg.trim().is_empty() {
        return Err(format!("error with an empty message: {e:?}"));
    }
    match e {
        Error::Format { location, message }
            if location.source != source || location.line == 0 || message.is_empty() =>
        {
            return Err(format!("format error without a file and line: {msg}"));
        }
        Error::DuplicateEntry { location, .. } if location.source != source => {
            return Err(format!("duplicate error without the file: {msg}"));
        }
        Error::Interrupted | Error::Io { .. } => {
            return Err(format!("unexpected error kind for in-memory input: {msg}"))
        }
        _ => {}
    }
    Ok(())
}

fn qrels_target(data: &[u8]) -> Result<String, String> {
    match Qrels::from_bytes(data, "f.qrels") {
        Err(e) => {
            check_error(&e, "f.qrels")?;
            Ok(err_signature(&e))
        }
        Ok(q) => {
            if q.is_empty() || q.num_judgments() == 0 {
                return Err("accepted qrels without a judgment".into());
            }
            // round trip through the writer (ids starting with '#' would read back as
            // comments: trec_eval has no way to write them)
            if q.queries().iter().any(|x| x.id().first() == Some(&b'#')) {
                return Ok("ok:hash-id".into());
            }
            let mut buf = Vec::new();
            irmetrics::trec::write_qrels(&q, &mut buf).map_err(|e| e.to_string())?;
            let back = Qrels::from_bytes(&buf, "w").map_err(|e| format!("re-read: {e}"))?;
            if back.num_judgments() != q.num_judgments() || back.len() != q.len() {
                return Err("qrels changed in a write/read round trip".into());
            }
            for (a, b) in q.queries().iter().zip(back.queries()) {
                if a.id() != b.id() || !a.iter().eq(b.iter()) {
                    return Err("qrels changed in a write/read round trip".into());
                }
            }
            Ok(format!("ok:q{}", q.len().min(3)))
        }
    }
}

fn run_target(data: &[u8]) -> Result<String, String> {
    match Run::from_bytes(data, "f.run") {
        Err(e) => {
            check_error(&e, "f.run")?;
            Ok(err_signature(&e))
        }
        Ok(r) => {
            if r.num_results() == 0 {
                return Err("accepted a run without results".into());
            }
            if r.queries()
                .iter()
                .any(|q| q.iter().any(|(_, s)| s.is_nan()))
            {
                return Err("accepted a NaN score".into());
            }
            if r.queries().iter().any(|q| q.id().first() == Some(&b'#')) {
                return Ok("ok:hash-id".into());
            }
            let mut buf = Vec::new();
            irmetrics::trec::write_run(&r, &mut buf).map_err(|e| e.to_string())?;
            let back = Run::from_bytes(&buf, "w").map_err(|e| format!("re-read: {e}"))?;
            if back.num_results() != r.num_results() || back.len() != r.len() {
                return Err("run changed in a write/read round trip".into());
            }
            for (a, b) in r.queries().iter().zip(back.queries()) {
                let mut x: Vec<(&[u8], u64)> = a.iter().map(|(d, s)| (d, s.to_bits())).collect();
                let mut y: Vec<(&[u8], u64)> = b.iter().map(|(d, s)| (d, s.to_bits())).collect();
                x.sort_unstable();
                y.sort_unstable();
                if a.id() != b.id() || x != y {
                    return Err("run changed in a write/read round trip".into());
                }
            }
            Ok(format!("ok:q{}", r.len().min(3)))
        }
    }
}

const TINY_QRELS: &[u8] = b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 -1\nq2 0 d1 1\nq3 0 d9 0\n";
const TINY_RUN: &[u8] = b"q1 Q0 d3 1 2.5 r\nq1 Q0 d1 2 2.5 r\nq1 Q0 d7 3 1 r\nq1 Q0 d4 4 -inf r\n\
q2 Q0 d7 1 1.0 r\nq2 Q0 d1 2 inf r\n";

fn measure_target(data: &[u8]) -> Result<String, String> {
    let text = String::from_utf8_lossy(data);
    let names: Vec<&str> = text.split('\n').collect();
    let set = match MeasureSet::parse(&names) {
        Err(e) => {
            if e.to_string().trim().is_empty() {
                return Err(format!("measure error with an empty message: {e:?}"));
            }
            if !matches!(e, Error::Measure(_)) {
                return Err(format!("measure parser gave a non-measure error: {e:?}"));
            }
            return Ok(err_signature(&e));
        }
        Ok(s) => s,
    };
    let qrels = Qrels::from_bytes(TINY_QRELS, "q").map_err(|e| e.to_string())?;
    let run = Run::from_bytes(TINY_RUN, "r").map_err(|e| e.to_string())?;
    let options = Options {
        complete: true,
        n_threads: 1,
        ..Options::default()
    };
    let ev = match irmetrics::Evaluator::new(qrels, set, options) {
        Ok(ev) => ev,
        // a measure that needs an option these defaults lack (fallout needs -N), or
        // judgments it cannot read (sdcg's gains must lie in [0, 1]; the tiny qrels
        // hold a 2): a clear refusal is a valid outcome
        Err(e @ (Error::Option(_) | Error::Measure(_) | Error::Input(_)))
            if !e.to_string().trim().is_empty() =>
        {
            return Ok(err_signature(&e))
        }
        Err(e) => return Err(e.to_string()),
    };
    let res = ev.evaluate(&run).map_err(|e| e.to_string())?;
    let _ = res.to_trec(true, true);
    Ok(format!("ok:m{}", res.columns().len().min(8)))
}

fn eval_target(data: &[u8], rng_byte: u8) -> Result<String, String> {
    let split = data
        .windows(3)
        .position(|w| w == b"%%\n")
        .unwrap_or(data.len());
    let (qd, rd) = (&data[..split], &data[(split + 3).min(data.len())..]);
    let qrels = match Qrels::from_bytes(qd, "f.qrels") {
        Ok(q) => q,
        Err(e) => {
            check_error(&e, "f.qrels")?;
            return Ok(format!("q{}", err_signature(&e)));
        }
    };
    let run = match Run::from_bytes(rd, "f.run") {
        Ok(r) => r,
        Err(e) => {
            check_error(&e, "f.run")?;
            return Ok(format!("r{}", err_signature(&e)));
        }
    };
    let options = Options {
        complete: rng_byte & 1 != 0,
        judged_only: rng_byte & 2 != 0,
        relevance_level: i64::from(rng_byte >> 6),
        max_docs: if rng_byte & 4 != 0 { Some(3) } else { None },
        n_threads: 1 + usize::from(rng_byte & 8 != 0),
        ..Options::default()
    };
    let measures = MeasureSet::parse(&["all_trec", "relstring.5", "recip_rank_cut.3"])
        .map_err(|e| e.to_string())?;
    let ev = match irmetrics::Evaluator::new(qrels, measures, options) {
        Ok(ev) => ev,
        Err(e) => {
            check_error(&e, "f.qrels")?;
            return Ok(format!("e{}", err_signature(&e)));
        }
    };
    match ev.evaluate(&run) {
        Ok(res) => {
            let text = res.to_trec(true, true);
            if text.is_empty() {
                return Err("evaluation printed nothing".into());
            }
            Ok(format!("ok:q{}", res.num_queries().min(3)))
        }
        Err(e) => {
            check_error(&e, "f.run")?;
            Ok(format!("v{}", err_signature(&e)))
        }
    }
}

/// The rows of a `rows` input: an optional first line `tag=BYTES` (the run tag), then
/// one row per line, `QUERY|DOC|VALUE` (ids may then hold any byte but `|` and `\n`,
/// whitespace and NUL included, and may be empty) or, for a line without `|`, its
/// first three whitespace-separated fields (lines with fewer are skipped, so that the
/// field mutations keep producing rows).
fn parse_rows(data: &[u8]) -> (Vec<u8>, Vec<[&[u8]; 3]>) {
    let mut lines: Vec<&[u8]> = data.split(|&c| c == b'\n').collect();
    let mut tag = Vec::new();
    if let Some(t) = lines.first().and_then(|l| l.strip_prefix(b"tag=")) {
        tag = t.to_vec();
        lines.remove(0);
    }
    let mut rows = Vec::new();
    for line in lines {
        if line.contains(&b'|') {
            let mut f = line.splitn(3, |&c| c == b'|');
            let (q, d, v) = (f.next(), f.next(), f.next());
            rows.push([q.unwrap_or(b""), d.unwrap_or(b""), v.unwrap_or(b"")]);
        } else {
            let f: Vec<&[u8]> = line
                .split(|c| c.is_ascii_whitespace() || *c == 0x0b)
                .filter(|f| !f.is_empty())
                .collect();
            if f.len() >= 3 {
                rows.push([f[0], f[1], f[2]]);
            }
        }
    }
    (tag, rows)
}

/// A refusal by a builder: an error with a message; a format error names the
/// builder's source (`qrels` / `run`) and a row.
fn check_builder_error(e: &Error, source: &str) -> Result<(), String> {
    let msg = e.to_string();
    if msg.trim().is_empty() {
        return Err(format!("error with an empty message: {e:?}"));
    }
    match e {
        Error::Format { location, .. } | Error::DuplicateEntry { location, .. }
            if location.source != source || location.unit != irmetrics::error::Unit::Row =>
        {
            Err(format!("builder error without its source and row: {msg}"))
        }
        Error::Format { .. } | Error::DuplicateEntry { .. } | Error::Input(_) => Ok(()),
        _ => Err(format!("unexpected error kind from a builder: {msg}")),
    }
}

/// A scratch folder for the written files: in memory (`/dev/shm`) where there is one,
/// so that the writer's fsync costs nothing; removed when dropped.
fn scratch() -> Result<tempfile::TempDir, String> {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    tempfile::Builder::new()
        .prefix("irmetrics-fuzz-rows-")
        .tempdir_in(base)
        .map_err(|e| format!("no scratch folder: {e}"))
}

/// The output side: rows through `QrelsBuilder` (values that parse as `i64`) and
/// `RunBuilder` (values that parse as `f64`, NaN included: the builder must refuse
/// it), with the run tag of the input. Every row set a builder accepts is written with
/// `write_qrels` / `write_run` through `write_atomically` (what `Qrels.to_file` and
/// `Run.to_file` do) and read back from the file with the readers: the same queries,
/// documents, labels and scores (bit for bit: the writer prints the shortest text that
/// parses back to the same double, so `-0.0`, subnormals such as `1e-320` and
/// infinities survive) and the same tag (an empty tag is written as `irmetrics`). A
/// refusal must be an `Error`, never a panic. Inputs are capped at 64 KiB by the
/// mutator, so no written line reaches the readers' 1 MiB line limit.
/// Feed the rows whose value parses as a `V` to `add`, up to the first refusal: how
/// many were added, and the refusal.
fn add_rows<V: std::str::FromStr>(
    rows: &[[&[u8]; 3]],
    mut add: impl FnMut(&[u8], &[u8], V) -> irmetrics::Result<()>,
) -> (usize, Option<irmetrics::Error>) {
    let mut added = 0;
    for [q, d, v] in rows {
        let Some(value) = std::str::from_utf8(v)
            .ok()
            .and_then(|t| t.parse::<V>().ok())
        else {
            continue;
        };
        if let Err(e) = add(q, d, value) {
            return (added, Some(e));
        }
        added += 1;
    }
    (added, None)
}

/// Write with `write` through the atomic writer to a scratch file named after `what`,
/// and read it back with `read`.
fn write_and_read<T>(
    what: &str,
    write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    read: impl FnOnce(&std::path::Path) -> irmetrics::Result<T>,
) -> Result<T, String> {
    let dir = scratch()?;
    let path = dir.path().join(format!("rows.{what}"));
    let mut buf = Vec::new();
    write(&mut buf).map_err(|e| e.to_string())?;
    irmetrics::trec::write_atomically(&path, &buf).map_err(|e| e.to_string())?;
    read(&path).map_err(|e| format!("{what} re-read: {e}"))
}

fn rows_target(data: &[u8]) -> Result<String, String> {
    let (tag, rows) = parse_rows(data);
    let mut sig = String::new();

    let mut qb = irmetrics::Qrels::builder();
    let (qrels_rows, refused) = add_rows(&rows, |q, d, label: i64| qb.add(q, d, label));
    let built = match refused {
        Some(e) => Err(e),
        None => qb.build(),
    };
    match built {
        Err(e) => {
            check_builder_error(&e, "qrels")?;
            sig.push_str(&format!("q{}", err_signature(&e)));
        }
        Ok(q) if q.is_empty() => sig.push_str("q-empty"),
        Ok(q) => {
            if q.num_judgments() != qrels_rows {
                return Err("the qrels builder lost or added rows".into());
            }
            let back = write_and_read(
                "qrels",
                |b| irmetrics::trec::write_qrels(&q, b),
                |p| Qrels::from_file(p),
            )?;
            if back.len() != q.len() {
                return Err("qrels: another number of queries after write/read".into());
            }
            for (a, b) in q.queries().iter().zip(back.queries()) {
                let mut x: Vec<(&[u8], i64)> = a.iter().collect();
                let mut y: Vec<(&[u8], i64)> = b.iter().collect();
                x.sort_unstable();
                y.sort_unstable();
                if a.id() != b.id() || x != y {
                    return Err(format!(
                        "qrels query {:?} changed in a write/read round trip",
                        String::from_utf8_lossy(a.id())
                    ));
                }
            }
            sig.push_str(&format!("q-ok{}", q.len().min(3)));
        }
    }

    let mut rb = Run::builder();
    let (run_rows, refused) = match rb.runid(&tag) {
        Err(e) => (0, Some(e)),
        Ok(_) => add_rows(&rows, |q, d, score: f64| rb.add(q, d, score)),
    };
    let built = match refused {
        Some(e) => Err(e),
        None => rb.build(),
    };
    match built {
        Err(e) => {
            check_builder_error(&e, "run")?;
            sig.push_str(&format!(" r{}", err_signature(&e)));
        }
        Ok(r) if r.is_empty() => sig.push_str(" r-empty"),
        Ok(r) => {
            if r.num_results() != run_rows {
                return Err("the run builder lost or added rows".into());
            }
            if r.queries()
                .iter()
                .any(|q| q.iter().any(|(_, s)| s.is_nan()))
            {
                return Err("the run builder accepted a NaN score".into());
            }
            let back = write_and_read(
                "run",
                |b| irmetrics::trec::write_run(&r, b),
                |p| Run::from_file(p),
            )?;
            let want_tag: &[u8] = if tag.is_empty() { b"irmetrics" } else { &tag };
            if back.runid() != want_tag {
                return Err("the run tag changed in a write/read round trip".into());
            }
            if back.len() != r.len() {
                return Err("run: another number of queries after write/read".into());
            }
            for (a, b) in r.queries().iter().zip(back.queries()) {
                let mut x: Vec<(&[u8], u64)> = a.iter().map(|(d, s)| (d, s.to_bits())).collect();
                let mut y: Vec<(&[u8], u64)> = b.iter().map(|(d, s)| (d, s.to_bits())).collect();
                x.sort_unstable();
                y.sort_unstable();
                if a.id() != b.id() || x != y {
                    return Err(format!(
                        "run query {:?} changed in a write/read round trip",
                        String::from_utf8_lossy(a.id())
                    ));
                }
            }
            sig.push_str(&format!(" r-ok{}", r.len().min(3)));
        }
    }
    Ok(sig)
}

/// Run one input through a target, catching panics.
pub fn execute(target: Target, data: &[u8]) -> Outcome {
    let r = catch_unwind(AssertUnwindSafe(|| match target {
        Target::Qrels => qrels_target(data),
        Target::Run => run_target(data),
        Target::Measure => measure_target(data),
        Target::Eval => eval_target(data, data.first().copied().unwrap_or(0)),
        Target::Rows => rows_target(data),
    }));
    match r {
        Ok(Ok(sig)) => Outcome::Ok(sig),
        Ok(Err(msg)) => Outcome::Crash(format!("check failed: {msg}")),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "non-string panic".into());
            Outcome::Crash(format!("panic: {msg}"))
        }
    }
}

/// Silence the default panic message (panics are recorded as crashes instead).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// The result of a fuzzing session.
#[derive(Debug, Default)]
pub struct Stats {
    pub executions: u64,
    pub crashes: Vec<(String, Vec<u8>)>,
    pub signatures: usize,
    pub new_inputs: Vec<Vec<u8>>,
    pub slowest: Duration,
    pub elapsed: Duration,
}

/// Fuzz `target` from `corpus` until `budget` has passed or `max_execs` executions.
pub fn fuzz(
    target: Target,
    corpus: &[Vec<u8>],
    seed: u64,
    budget: Duration,
    max_execs: u64,
) -> Stats {
    let mut rng = Rng::new(seed);
    let mut pool: Vec<Vec<u8>> = corpus.to_vec();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut stats = Stats::default();
    for input in corpus {
        if let Outcome::Ok(sig) = execute(target, input) {
            seen.insert(sig);
        }
    }
    let start = Instant::now();
    while start.elapsed() < budget && stats.executions < max_execs {
        let base = pool[rng.below(pool.len())].clone();
        let input = mutate(&mut rng, &base, &pool);
        let t0 = Instant::now();
        let outcome = execute(target, &input);
        stats.slowest = stats.slowest.max(t0.elapsed());
        stats.executions += 1;
        match outcome {
            Outcome::Ok(sig) => {
                if seen.insert(sig) {
                    stats.new_inputs.push(input.clone());
                    pool.push(input);
                }
            }
            Outcome::Crash(msg) => {
                if stats.crashes.len() < 20 {
                    stats.crashes.push((msg, input));
                }
            }
        }
    }
    stats.signatures = seen.len();
    stats.elapsed = start.elapsed();
    stats
}

/// The stored corpus of a target: `fuzz/corpus/<target>/*`.
pub fn corpus_dir(target: Target) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus")
        .join(target.name())
}

/// Load the stored corpus (and, for measures, the built-in seed names).
pub fn load_corpus(target: Target) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(corpus_dir(target)) {
        let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if let Ok(d) = std::fs::read(&p) {
                out.push(d);
            }
        }
    }
    if target == Target::Measure {
        out.extend(MEASURE_SEEDS.iter().map(|s| s.as_bytes().to_vec()));
    }
    out
}

/// Short content-derived file name (FNV-1a).
pub fn name_of(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
