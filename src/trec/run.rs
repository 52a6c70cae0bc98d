//! The TREC run reader: `qid iter docno rank score tag`, one pass per line, blocks
//! parsed in parallel while the next is read. Each chunk yields pieces (consecutive
//! lines of one query) that go to a [`PieceSink`]: a [`Grouper`] building a [`Run`], or
//! a [`crate::QueryStream`] evaluating as the file is read.

use std::io::Read;
use std::path::Path;

use super::fields::text_start;
use super::fields::{
    chunk_bounds, field_in_line, parse_score, plain_line, skip_blank, split_fields, threads,
};
use super::io::{max_line_bytes, too_long, Blocks, Stop, BLOCK};
use crate::error::{Error, Result, Unit};
use crate::ids::same_id;
use crate::intake::{Grouper, PieceSink, Place};
use crate::run::{Run, RunQuery};

impl Run {
    /// Parse TREC run text; `source` names it in error messages.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<Run> {
        parse_run(data, source)
    }
}

/// What one chunk of a run file parses into.
struct Chunk {
    /// Consecutive lines of one query form one segment (with the 0-based index, within
    /// the chunk, of its first line); a blank or comment line ends a segment.
    segments: Vec<(RunQuery, u64)>,
    /// Tag of the chunk's last result line.
    last_tag: Option<Vec<u8>>,
    /// First problem: line index within the chunk and message.
    error: Option<(u64, String)>,
    /// Lines in the chunk.
    lines: u64,
}

/// The message for a run line with fewer than 6 fields.
#[cold]
fn run_fields_error(line: &[u8]) -> String {
    let mut fields: [&[u8]; 6] = [&[]; 6];
    let n = split_fields(line, &mut fields);
    format!(
        "expected 6 fields 'qid iter docno rank score tag', found {n}{}",
        if n == 4 {
            " (is this a qrels file given as a run?)"
        } else {
            ""
        }
    )
}

/// Parse the lines of `block[start..end]`. One pass per line: the fields are found in
/// place (the end of the tag field is usually the line's end), nothing is copied but
/// the document id and the score.
fn parse_run_chunk(block: &[u8], start: usize, end: usize) -> Chunk {
    let mut out = Chunk {
        segments: Vec::new(),
        last_tag: None,
        error: None,
        lines: 0,
    };
    if let Some(p) = memchr::memchr(0, &block[start..end]) {
        let idx = memchr::memchr_iter(b'\n', &block[start..start + p]).count() as u64;
        out.error = Some((
            idx,
            "contains a NUL byte; TREC files are text (is this a binary or corrupt file?)".into(),
        ));
        return out;
    }
    let data = &block[..end];
    let max_line = max_line_bytes();
    let line_end = |from: usize| memchr::memchr(b'\n', &data[from..]).map_or(end, |i| from + i);
    // The current query's results gather in reused buffers; each query (segment) is
    // then copied out at its exact size, so the run holds no slack.
    let mut cur = RunQuery::default();
    let mut cur_qid = (0usize, 0usize);
    let mut cur_start = 0u64;
    let close = |cur: &mut RunQuery, (a, b): (usize, usize), first: u64, out: &mut Chunk| {
        if !cur.is_empty() {
            let seg = RunQuery::from_parts(data[a..b].into(), cur.docs.clone(), cur.values.clone());
            out.segments.push((seg, first));
            cur.truncate(0);
        }
    };
    let mut last_tag: Option<(usize, usize)> = None;
    let mut pos = start;
    let mut idx = 0u64;
    while pos < end {
        let line_start = pos;
        let line_idx = idx;
        idx += 1;
        // qid iter docno rank score tag: the usual line in one pass, any other by fields
        let plain = if data[pos] == b'#' {
            None
        } else {
            plain_line::<6>(data, pos)
        };
        let (q0, q1, d0, d1, s0, s1, t0, t1) = if let Some((e, next)) = plain {
            pos = next;
            (
                line_start,
                e[0],
                e[1] + 1,
                e[2],
                e[3] + 1,
                e[4],
                e[4] + 1,
                e[5],
            )
        } else {
            let Some((q0, q1)) = field_in_line(data, pos) else {
                pos = skip_blank(data, pos) + 1; // blank line
                close(&mut cur, cur_qid, cur_start, &mut out);
                if pos - line_start > max_line + 1 {
                    out.error = Some((line_idx, too_long()));
                    break;
                }
                continue;
            };
            if data[q0] == b'#' {
                pos = line_end(q0) + 1; // comment
                close(&mut cur, cur_qid, cur_start, &mut out);
                if pos - line_start > max_line + 1 {
                    out.error = Some((line_idx, too_long()));
                    break;
                }
                continue;
            }
            let fields = field_in_line(data, q1).and_then(|(_, i1)| {
                let (d0, d1) = field_in_line(data, i1)?;
                let (_, r1) = field_in_line(data, d1)?;
                let (s0, s1) = field_in_line(data, r1)?;
                let (t0, t1) = field_in_line(data, s1)?;
                Some((d0, d1, s0, s1, t0, t1))
            });
            let Some((d0, d1, s0, s1, t0, t1)) = fields else {
                let nl = line_end(line_start);
                out.error = Some((line_idx, run_fields_error(&data[line_start..nl])));
                break;
            };
            pos = if t1 < end && data[t1] == b'\n' {
                t1 + 1
            } else {
                line_end(t1) + 1
            };
            (q0, q1, d0, d1, s0, s1, t0, t1)
        };
        if pos - line_start > max_line + 1 {
            out.error = Some((line_idx, too_long()));
            break;
        }
        let score = match parse_score(&data[s0..s1]) {
            Ok(s) => s,
            Err(m) => {
                out.error = Some((line_idx, m));
                break;
            }
        };
        // (`same_id`: no `memcmp` call a line for the short query ids; 2.7% of the
        // samples of reading M's run on 2 threads)
        if cur.is_empty() || !same_id(&data[cur_qid.0..cur_qid.1], &data[q0..q1]) {
            close(&mut cur, cur_qid, cur_start, &mut out);
            cur_qid = (q0, q1);
            cur_start = line_idx;
        }
        if let Err(e) = cur.docs.push(&data[d0..d1]) {
            out.error = Some((line_idx, e.to_string()));
            break;
        }
        cur.values.push(score);
        last_tag = Some((t0, t1));
    }
    out.lines = idx;
    close(&mut cur, cur_qid, cur_start, &mut out);
    out.last_tag = last_tag.map(|(a, b)| data[a..b].to_vec());
    out
}

/// Parse a run block by block (each block parsed in parallel while the next is read),
/// handing the pieces to `sink`. Returns the run tag (the last line's).
pub(crate) fn read_run_blocks(
    blocks: Blocks<'_>,
    source: &str,
    sink: &mut dyn PieceSink<f64>,
) -> Result<Vec<u8>> {
    let mut reader = RunReader::new(blocks, source);
    while reader.next_block(sink)? {}
    reader.finish()
}

/// A run file read a block at a time, on demand: [`read_run_blocks`] reads them all;
/// fusion reads several files side by side, each as far as its queries are needed.
pub(crate) struct RunReader<'a> {
    blocks: Blocks<'a>,
    source: String,
    runid: Vec<u8>,
    results: usize,
    /// Number of the first line of the next chunk.
    line: u64,
}

impl<'a> RunReader<'a> {
    pub(crate) fn new(blocks: Blocks<'a>, source: &str) -> RunReader<'a> {
        RunReader {
            blocks,
            source: source.to_string(),
            runid: Vec::new(),
            results: 0,
            line: 1,
        }
    }

    /// Parse the next block (its chunks in parallel) into `sink`; `false` at the end.
    pub(crate) fn next_block(&mut self, sink: &mut dyn PieceSink<f64>) -> Result<bool> {
        let source = &self.source;
        let Some(block) = self.blocks.next_block() else {
            return Ok(false);
        };
        let data = match block {
            Ok(data) => data,
            Err(Stop::TooLong) => return Err(Error::format(source, self.line, too_long())),
            Err(Stop::Failed(e)) => return Err(e),
        };
        let data = if self.line == 1 {
            text_start(data, source)?
        } else {
            data
        };
        let bounds = chunk_bounds(data, threads() * 4);
        let chunks = crate::parallel::map_chunks(&bounds, |&(s, e)| parse_run_chunk(data, s, e));
        for ch in chunks {
            if let Some((idx, msg)) = ch.error {
                return Err(Error::format(source, self.line + idx, msg));
            }
            for (seg, idx) in ch.segments {
                self.results += seg.len();
                sink.piece(seg, self.line + idx)?;
            }
            if let Some(t) = ch.last_tag {
                self.runid = t;
            }
            self.line += ch.lines;
        }
        sink.block_done()?;
        Ok(true)
    }

    /// The run tag (the last line's), once every block is read; an error if there was
    /// no result line at all.
    pub(crate) fn finish(self) -> Result<Vec<u8>> {
        if self.results == 0 {
            return Err(Error::Input(format!(
                "{}: no results (the run file is empty or has only comments and blank lines)",
                self.source
            )));
        }
        Ok(self.runid)
    }
}

/// A run from its blocks.
fn run_of_blocks(blocks: Blocks<'_>, source: &str) -> Result<Run> {
    let mut rows = Grouper::new(Place::new(source, Unit::Line));
    let runid = read_run_blocks(blocks, source, &mut rows)?;
    Run::from_grouper(rows, runid)
}

/// Parse a run from a reader (read on a thread of its own).
pub fn parse_run_reader(r: impl Read + Send + 'static, source: &str) -> Result<Run> {
    run_of_blocks(Blocks::reader(r, source, BLOCK, None)?, source)
}

/// Parse a run held in memory.
pub fn parse_run(data: &[u8], source: &str) -> Result<Run> {
    run_of_blocks(Blocks::memory(data), source)
}

/// Parse a run file (streamed; gzip and `-` handled).
pub fn read_run(path: &Path) -> Result<Run> {
    read_run_cancellable(path, None)
}

/// [`read_run`], stopping with [`Error::Interrupted`] soon after `cancel` is set (even
/// while a read waits). The input is read once: a FIFO or standard input works as a
/// file does.
pub fn read_run_cancellable(
    path: &Path,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Run> {
    read_run_counted(path, cancel, None)
}

/// [`read_run_cancellable`], counting the KiB of the file read in `progress`.
pub(crate) fn read_run_counted(
    path: &Path,
    cancel: Option<&std::sync::atomic::AtomicBool>,
    progress: Option<&crate::progress::Progress>,
) -> Result<Run> {
    let source = path.display().to_string();
    run_of_blocks(Blocks::open_counted(path, None, cancel, progress)?, &source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runid_is_last_tag_and_comments_skip() {
        let run = parse_run(b"# c\nq1 0 d1 1 0.5 a\n\n  # x\nq1 0 d2 2 0.4 b\r\n", "r").unwrap();
        assert_eq!(run.runid(), b"b");
        assert_eq!(run.num_results(), 2);
    }

    #[test]
    fn run_duplicate_names_lines() {
        let e = parse_run(
            b"q1 0 d1 1 0.5 a\nq1 0 d2 1 0.5 a\nq1 0 d1 1 0.3 a\n",
            "r.txt",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("r.txt:3") && e.contains("first at line 1"),
            "{e}"
        );
    }

    #[test]
    fn small_blocks_give_the_same_run() {
        let data = b"q1 0 d1 1 0.5 a\nq2 0 d1 1 0.5 a\nq1 0 d2 1 0.7 b\n";
        for block in [1, 2, 7, 16, 100] {
            let blocks = Blocks::reader(std::io::Cursor::new(data.to_vec()), "r", block, None);
            let r = run_of_blocks(blocks.unwrap(), "r").unwrap();
            assert_eq!(r.num_results(), 3);
            assert_eq!(r.len(), 2);
            assert_eq!(r.runid(), b"b");
        }
        let text = b"q1 0 d1 1 0.5 a\nq1 0 d2 x\n".to_vec();
        let blocks = Blocks::reader(std::io::Cursor::new(text), "r", 4, None).unwrap();
        let e = run_of_blocks(blocks, "r").unwrap_err();
        assert!(e.to_string().starts_with("r:2: "), "{e}");
    }

    /// A plain per-line reading of run text (split into lines, then fields): what the
    /// one-pass chunk parser must agree with. Results, tag of the last result line, and
    /// the index of the first bad line.
    type Parsed = (Vec<(Vec<u8>, Vec<u8>, u64)>, Option<Vec<u8>>, Option<u64>);

    fn reference_run(text: &[u8]) -> Parsed {
        let mut out = Vec::new();
        let mut tag = None;
        let mut fields: [&[u8]; 6] = [&[]; 6];
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        for (i, line) in body.split(|&c| c == b'\n').enumerate() {
            let n = split_fields(line, &mut fields);
            if n == 0 || fields[0][0] == b'#' {
                continue;
            }
            let Some(score) = (n >= 6).then(|| parse_score(fields[4]).ok()).flatten() else {
                return (out, tag, Some(i as u64));
            };
            out.push((fields[0].to_vec(), fields[2].to_vec(), score.to_bits()));
            tag = Some(fields[5].to_vec());
        }
        (out, tag, None)
    }

    fn chunk_run(text: &[u8]) -> Parsed {
        let ch = parse_run_chunk(text, 0, text.len());
        let mut out = Vec::new();
        for (q, _) in &ch.segments {
            for (d, s) in q.iter() {
                out.push((q.qid.to_vec(), d.to_vec(), s.to_bits()));
            }
        }
        match ch.error {
            Some((i, _)) => (out, None, Some(i)),
            None => (out, ch.last_tag, None),
        }
    }

    proptest::proptest! {
        #[test]
        fn one_pass_run_parser_agrees_with_per_line_splitting(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "q1", "q2", "Q0", "d", "doc12345678", "7", "0.5", "-1e3", "2.", "x",
                    "tag", "#", " ", "  ", "\t", "\r", "\x0b", "\x01", "\n", "\n", "\n",
                ]),
                0..60,
            )
        ) {
            let text: Vec<u8> = pieces.concat().into_bytes();
            let (good, tag, bad) = reference_run(&text);
            let (got, got_tag, got_bad) = chunk_run(&text);
            proptest::prop_assert_eq!(got_bad, bad);
            if bad.is_none() {
                proptest::prop_assert_eq!(got, good);
                proptest::prop_assert_eq!(got_tag, tag);
            }
        }
    }

    proptest::proptest! {
        /// Mostly well-formed lines (six single-spaced fields), where the one-pass reader
        /// of plain lines takes them, with the odd byte that must send a line to the
        /// general reader: the two must agree on every line.
        #[test]
        fn plain_lines_agree_with_per_line_splitting(
            lines in proptest::collection::vec(
                (
                    proptest::sample::select(vec![6, 6, 6, 6, 5, 7]),
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "q1", "q22", "Q0", "doc-123456789", "d", "3", "0.25", "-7", "1e2",
                            "q1", "q22", "Q0", "doc-123456789", "d", "3", "0.25", "-7", "1e2",
                            "#", "x\x01y", "a\rb", "t\u{e9}", "",
                        ]),
                        7,
                    ),
                    proptest::sample::select(vec![" ", " ", " ", " ", " ", "  ", "\t"]),
                    proptest::sample::select(vec!["\n", "\n", "\n", "\r\n", " \n", "\r"]),
                ),
                1..12,
            )
        ) {
            let mut text = Vec::new();
            for (n, fields, sep, eol) in &lines {
                text.extend_from_slice(fields[..*n].join(sep).as_bytes());
                text.extend_from_slice(eol.as_bytes());
            }
            let (good, tag, bad) = reference_run(&text);
            let (got, got_tag, got_bad) = chunk_run(&text);
            proptest::prop_assert_eq!(got_bad, bad);
            if bad.is_none() {
                proptest::prop_assert_eq!(got, good);
                proptest::prop_assert_eq!(got_tag, tag);
            }
        }
    }

    #[test]
    fn one_pass_run_parser_on_awkward_lines() {
        let text = b"  q1\tQ0  d1 1 0.5 t1 extra\r\n\n   \n# c\n  #c2\nq1 Q0 d\x012 2 0.25 t2\nq2 Q0 d3 1 1 t3";
        assert_eq!(chunk_run(text), reference_run(text));
        let (res, tag, bad) = chunk_run(text);
        assert_eq!(bad, None);
        assert_eq!(res.len(), 3);
        assert_eq!(res[1].1, b"d\x012");
        assert_eq!(tag.as_deref(), Some(&b"t3"[..]));
        let short = b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5\n";
        assert_eq!(chunk_run(short).2, Some(1));
    }
}
