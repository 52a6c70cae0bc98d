//! `irmetrics ndeval [options] QRELS RUN`: ndeval's command line and its CSV output
//! (`runid,topic,ERR-IA@5,...` with a row per topic of the run and the `amean` row),
//! with ndeval's reading rules: topics are whole numbers (a run's may carry a task
//! prefix ending in `-`, `wt09-1`), subtopics and judgments too, a judgment above 1
//! counts as 1; runs are ordered by their rank column unless `-traditional` (score
//! descending, then document id descending); the run tag is the first line's.

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use super::{evaluate, Options, SubtopicQrels, Ties, NDEVAL_COLUMNS};
use crate::error::{show, Error, Result, Unit};
use crate::run::Run;
use crate::trec::lines::{number, read, split_lines, whole, Layout};

/// Usage text of `irmetrics ndeval`.
pub const NDEVAL_USAGE: &str = "\
usage: irmetrics ndeval [options] QRELS RUN

ndeval's diversity evaluation (TREC Web track; ndeval 4.5's numbers and CSV output):
ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG at 5, 10 and 20, NRBP, nNRBP, MAP-IA, P-IA
and subtopic recall (strec) at 5, 10 and 20, a row per topic of the run and the
arithmetic mean (amean). QRELS: 'topic subtopic docno judgment' lines.

options (ndeval's):
  -alpha X       redundancy intolerance, 0 to 1 [default: 0.5]
  -beta X        patience for NRBP, 0 to 1 [default: 0.5]
  -traditional   order runs by score, then by docno (TREC's order) instead of by rank
  -c             average over every topic of QRELS (a topic without results 0)
  -M DEPTH       read only the first DEPTH results of each topic
  -a             accepted (ndeval prints the same)
  -h, -help      show this help
";

/// Parsed `irmetrics ndeval` arguments.
#[derive(Clone, Debug)]
pub struct NdevalArgs {
    /// `-alpha`.
    pub alpha: f64,
    /// `-beta`.
    pub beta: f64,
    /// `-traditional`.
    pub traditional: bool,
    /// `-c`.
    pub complete: bool,
    /// `-M`.
    pub max_docs: Option<usize>,
    /// The judgments.
    pub qrels: PathBuf,
    /// The run.
    pub run: PathBuf,
    /// `-h`.
    pub help: bool,
}

fn usage_err(msg: impl Into<String>) -> Error {
    Error::Option(format!("{} (see irmetrics ndeval -help)", msg.into()))
}

/// Parse `irmetrics ndeval`'s arguments (after `ndeval`).
pub fn parse_ndeval_args(argv: Vec<OsString>) -> Result<NdevalArgs> {
    let mut a = NdevalArgs {
        alpha: 0.5,
        beta: 0.5,
        traditional: false,
        complete: false,
        max_docs: None,
        qrels: PathBuf::new(),
        run: PathBuf::new(),
        help: false,
    };
    let mut files = Vec::new();
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        let mut value = |name: &str| -> Result<String> {
            it.next()
                .map(|v| v.to_string_lossy().into_owned())
                .ok_or_else(|| usage_err(format!("{name} needs a value")))
        };
        let unit = |name: &str, v: String| -> Result<f64> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| usage_err(format!("{name} must be a number from 0 to 1, got '{v}'")))
        };
        match s.as_str() {
            "-h" | "-help" | "--help" => a.help = true,
            "-alpha" => a.alpha = unit("-alpha", value("-alpha")?)?,
            "-beta" => a.beta = unit("-beta", value("-beta")?)?,
            "-traditional" => a.traditional = true,
            "-M" => {
                let v = value("-M")?;
                a.max_docs = Some(
                    v.trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|&m| m > 0)
                        .ok_or_else(|| usage_err(format!("-M must be at least 1, got '{v}'")))?,
                )
            }
            "-baseline" | "-riskAlpha" => {
                return Err(usage_err(format!(
                    "{s} (ndeval's risk-sensitive evaluation) is not supported"
                )))
            }
            flags if flags.len() > 1 && flags.starts_with('-') => {
                for c in flags[1..].chars() {
                    match c {
                        'c' => a.complete = true,
                        'a' => {}
                        _ => return Err(usage_err(format!("unknown option '{flags}'"))),
                    }
                }
            }
            _ => files.push(PathBuf::from(arg)),
        }
    }
    if a.help {
        return Ok(a);
    }
    match <[PathBuf; 2]>::try_from(files) {
        Ok([q, r]) => {
            a.qrels = q;
            a.run = r;
            Ok(a)
        }
        Err(f) => Err(usage_err(format!(
            "expected QRELS and RUN, got {} file name(s)",
            f.len()
        ))),
    }
}

/// ndeval's `naturalNumber`: digits only, at most about 10^6.
fn natural(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 7 || !field.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// ndeval's `parseTopic`: a number, or a task prefix up to `-` and then a number.
fn run_topic(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(u8::is_ascii_digit) {
        return natural(field);
    }
    let dash = field.iter().position(|&b| b == b'-')?;
    natural(&field[dash + 1..])
}

/// Read the judgments as ndeval does (topic and subtopic numbers, judgments 0, 1, ...).
fn read_qrels(path: &std::path::Path) -> Result<SubtopicQrels> {
    const LAYOUT: Layout = Layout {
        what: "topic subtopic docno judgment",
        comments: false,
    };
    let (data, source) = read(path)?;
    let lines = split_lines::<4>(&data, &source, &LAYOUT)?;
    let mut ids: Vec<(String, String)> = Vec::with_capacity(lines.len());
    let mut labels = Vec::with_capacity(lines.len());
    for l in &lines {
        let [q, s, _, v] = l.fields;
        let fail = |what: &str, f: &[u8]| not_whole(&source, l.number, what, f);
        let q = natural(q).ok_or_else(|| fail("topic", q))?;
        let s = natural(s).ok_or_else(|| fail("subtopic", s))?;
        let label = whole(v, &source, l.number)?;
        if label < 0 {
            return Err(fail("judgment", v));
        }
        ids.push((q.to_string(), s.to_string()));
        labels.push(label.min(1));
    }
    let rows = lines
        .iter()
        .zip(&ids)
        .zip(&labels)
        .map(|((l, (q, s)), &v)| (q.as_bytes(), s.as_bytes(), l.fields[2], v, l.number))
        .collect();
    SubtopicQrels::from_raw(rows, &source, Unit::Line)
}

/// A field that ndeval reads as a whole number and that is not one.
fn not_whole(source: &str, line: u64, what: &str, f: &[u8]) -> Error {
    Error::format(
        source,
        line,
        format!(
            "{what} '{}' is not a whole number (as ndeval requires)",
            show(f)
        ),
    )
}

/// Read the run as ndeval does: its tag (the first line's) and the run, each result's
/// score its rank's negation unless `traditional`.
fn read_run(path: &std::path::Path, traditional: bool) -> Result<(String, Run)> {
    const LAYOUT: Layout = Layout {
        what: "topic Q0 docno rank score tag",
        comments: false,
    };
    let (data, source) = read(path)?;
    let lines = split_lines::<6>(&data, &source, &LAYOUT)?;
    let mut b = Run::builder();
    let mut ranks = HashSet::new();
    for l in &lines {
        let [q, _, d, r, s, _] = l.fields;
        let fail = |what: &str, f: &[u8]| not_whole(&source, l.number, what, f);
        let topic = run_topic(q).ok_or_else(|| fail("topic", q))?;
        let rank = natural(r).ok_or_else(|| fail("rank", r))?;
        let score = number(s, "score", &source, l.number)?;
        if !traditional && !ranks.insert((topic, rank)) {
            return Err(Error::format(
                &source,
                l.number,
                format!("duplicate rank ({rank}) for topic {topic} (ndeval refuses it; -traditional orders by score)"),
            ));
        }
        let score = if traditional { score } else { -(rank as f64) };
        b.add(topic.to_string().as_bytes(), d, score)?;
    }
    let tag = lines.first().map(|l| show(l.fields[5])).unwrap_or_default();
    Ok((tag, b.build()?))
}

/// C's `%.6f`, NaN as glibc prints x86's 0/0.
fn fixed(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b",-nan");
    } else {
        let _ = write!(out, ",{v:.6}");
    }
}

/// ndeval's CSV for `args`.
pub fn ndeval_text(args: &NdevalArgs) -> Result<Vec<u8>> {
    let qrels = read_qrels(&args.qrels)?;
    let (tag, run) = read_run(&args.run, args.traditional)?;
    let opts = Options {
        alpha: args.alpha,
        beta: args.beta,
        max_docs: args.max_docs,
        ties: Ties::DocDescending,
        ..Options::default()
    };
    let common = qrels
        .queries()
        .iter()
        .filter(|q| run.query(q.id()).is_some())
        .count();
    let res = if common > 0 {
        Some(evaluate(&qrels, &run, &NDEVAL_COLUMNS, &opts)?)
    } else {
        None
    };
    let mut topics: Vec<(u64, &[u8])> = run
        .queries()
        .iter()
        .map(|q| (natural(q.id()).unwrap_or(0), q.id()))
        .collect();
    topics.sort_unstable();
    let mut out = Vec::new();
    out.extend_from_slice(b"runid,topic");
    for c in NDEVAL_COLUMNS {
        let _ = write!(out, ",{c}");
    }
    out.push(b'\n');
    let mut totals = [0.0f64; NDEVAL_COLUMNS.len()];
    for (n, id) in topics {
        let _ = write!(out, "{tag},{n}");
        // the results' topics are in byte order
        let row = res.as_ref().and_then(|r| {
            let i = r.query_ids().binary_search_by(|q| q[..].cmp(id)).ok()?;
            Some((r, i))
        });
        for (m, total) in totals.iter_mut().enumerate() {
            let v = row.map_or(0.0, |(r, i)| r.value(i, m));
            *total += v;
            fixed(&mut out, v);
        }
        out.push(b'\n');
    }
    let n = if args.complete { qrels.len() } else { common } as f64;
    let _ = write!(out, "{tag},amean");
    for t in totals {
        fixed(&mut out, t / n);
    }
    out.push(b'\n');
    Ok(out)
}

/// `irmetrics ndeval ...`: the CSV to `out`.
pub fn run_ndeval(argv: Vec<OsString>, out: &mut dyn Write) -> Result<()> {
    let args = parse_ndeval_args(argv)?;
    let text = if args.help {
        NDEVAL_USAGE.as_bytes().to_vec()
    } else {
        ndeval_text(&args)?
    };
    out.write_all(&text).map_err(Error::stdout_write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<NdevalArgs> {
        parse_ndeval_args(a.iter().map(OsString::from).collect())
    }

    #[test]
    fn ndevals_options() {
        let a = args(&["-alpha", "0.3", "-ca", "-traditional", "-M", "5", "q", "r"]).unwrap();
        assert_eq!(
            (a.alpha, a.beta, a.complete, a.traditional, a.max_docs),
            (0.3, 0.5, true, true, Some(5))
        );
        assert_eq!((a.qrels.to_str(), a.run.to_str()), (Some("q"), Some("r")));
        for (bad, why) in [
            (&["-alpha", "2", "q", "r"][..], "from 0 to 1"),
            (&["-M", "0", "q", "r"], "at least 1"),
            (&["-x", "q", "r"], "unknown option"),
            (&["q"], "expected QRELS and RUN"),
            (&["-baseline", "b", "q", "r"], "not supported"),
        ] {
            let e = args(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn ndevals_topic_numbers() {
        assert_eq!(run_topic(b"201"), Some(201));
        assert_eq!(run_topic(b"wt13-201"), Some(201));
        assert_eq!(run_topic(b"wt13201"), None);
        assert_eq!(natural(b"2x"), None);
        assert_eq!(natural(b""), None);
    }
}
