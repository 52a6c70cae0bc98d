//! The TREC qrels reader: `qid iter docno rel`, parsed in parallel chunks; the
//! segments of each query are grouped (a counting sort, no hashing per line) and each
//! query is assembled once at its exact size.

use super::fields::{
    check_nul, chunk_bounds, is_ws, line_of, next_field, parse_label, plain_line, skip_ws,
    split_fields, text_start, threads,
};
use super::io::{max_line_bytes, too_long};
use crate::error::{Error, Result, Unit};
use crate::ids::{same_id, Ids, KeyIndex};
use crate::intake::{Origins, Place, Rows};
use crate::qrels::{Qrels, QrelsQuery};

impl Qrels {
    /// Parse TREC qrels text; `source` names it in error messages.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<Qrels> {
        parse_qrels(data, source)
    }
}

/// What one chunk of a qrels file parses into: its judgments back to back, in runs of
/// consecutive lines of one query (segments).
struct QrelsChunk {
    docs: Ids,
    labels: Vec<i64>,
    /// Per segment (consecutive judgment lines of one query): the query id's byte range
    /// in the data and the end of its judgments.
    segments: Vec<(usize, usize, usize)>,
    /// First problem: byte offset of its line and message.
    error: Option<(usize, String)>,
}

fn parse_qrels_chunk(data: &[u8], start: usize, end: usize) -> QrelsChunk {
    let mut out = QrelsChunk {
        docs: Ids::with_capacity((end - start) / 16, (end - start) / 2),
        labels: Vec::with_capacity((end - start) / 16),
        segments: Vec::new(),
        error: None,
    };
    // Was the line before this chunk a comment? (trec_eval skips one at a time.)
    let mut prev_comment = start > 0 && {
        let before = &data[..start - 1];
        let ls = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        before.get(ls) == Some(&b'#')
    };
    let max_line = max_line_bytes();
    let mut pos = start;
    while pos < end {
        let line_start = pos;
        let fail = |msg: String| Some((line_start, msg));
        // qid iter docno rel: the usual line in one pass (see `plain_line`), any other
        // by fields
        let plain = (data[pos] != b'#')
            .then(|| plain_line::<4>(data, pos))
            .flatten();
        let (q, d, l) = if let Some((e, next)) = plain {
            pos = next;
            ((line_start, e[0]), (e[1] + 1, e[2]), (e[2] + 1, e[3]))
        } else {
            let nl = memchr::memchr(b'\n', &data[pos..end]).map_or(end, |i| pos + i);
            let line = &data[pos..nl];
            let next = nl + 1;
            pos = next;
            if line.first() == Some(&b'#') {
                if line.len() > max_line {
                    out.error = fail(too_long());
                    break;
                }
                if prev_comment {
                    out.error = fail(
                        "a second comment line in a row; trec_eval skips only one '#' line at \
                         a time in qrels and rejects this file; merge or remove the comments"
                            .into(),
                    );
                    break;
                }
                if next >= data.len() || data[next..].iter().all(|&c| is_ws(c)) {
                    out.error = fail(
                        "the qrels end with a comment line, which trec_eval cannot read (it \
                         crashes); remove the trailing comment"
                            .into(),
                    );
                    break;
                }
                prev_comment = true;
                continue;
            }
            let (q0, q1) = next_field(line, 0);
            let (_, i1) = next_field(line, q1);
            let (d0, d1) = next_field(line, i1);
            let (l0, l1) = next_field(line, d1);
            if line.len() <= max_line && (l0 == line.len() || skip_ws(line, l1) != line.len()) {
                out.error = fail(qrels_fields_error(line));
                break;
            }
            let at = |a: usize, b: usize| (line_start + a, line_start + b);
            (at(q0, q1), at(d0, d1), at(l0, l1))
        };
        if pos - line_start > max_line + 1 {
            out.error = fail(too_long());
            break;
        }
        let label = match parse_label(&data[l.0..l.1]) {
            Ok(l) => l,
            Err(m) => {
                out.error = fail(m);
                break;
            }
        };
        match out.segments.last_mut() {
            // a comment ends a segment: the lines of a segment are consecutive
            Some(seg) if !prev_comment && same_id(&data[seg.0..seg.1], &data[q.0..q.1]) => {
                seg.2 += 1
            }
            _ => out.segments.push((q.0, q.1, out.labels.len() + 1)),
        }
        prev_comment = false;
        if let Err(e) = out.docs.push(&data[d.0..d.1]) {
            out.error = fail(e.to_string());
            break;
        }
        out.labels.push(label);
    }
    out
}

/// The message for a qrels line without exactly 4 fields.
fn qrels_fields_error(line: &[u8]) -> String {
    let mut fields: [&[u8]; 1] = [&[]];
    let n = split_fields(line, &mut fields);
    if n == 0 {
        return "blank line; qrels lines are 'qid iter docno rel' and blank lines are not \
                allowed (trec_eval rejects them)"
            .into();
    }
    let hint = if fields[0].first() == Some(&b'#') {
        "; a comment must start with '#' in the first column"
    } else if n == 6 {
        " (is this a run file given as qrels?)"
    } else {
        ""
    };
    format!("expected 4 fields 'qid iter docno rel', found {n}{hint}")
}

/// Read a TREC qrels file, stopping with [`Error::Interrupted`] soon after `cancel` is
/// set (even while a read waits).
pub fn read_qrels_cancellable(
    path: &std::path::Path,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Qrels> {
    let data = super::io::read_input_cancellable(path, cancel)?;
    parse_qrels(&data, &path.display().to_string())
}

/// Parse TREC qrels (`qid iter docno rel`): chunks are parsed in parallel, their
/// segments grouped by query, and each query is assembled and indexed in parallel.
pub fn parse_qrels(data: &[u8], source: &str) -> Result<Qrels> {
    let data = text_start(data, source)?;
    check_nul(data, source, 0)?;
    // a chunk's document ids must stay under 4 GiB (`Ids` offsets are 32-bit)
    let bounds = chunk_bounds(data, (threads() * 4).max(data.len() >> 30));
    let chunks = crate::parallel::map_chunks(&bounds, |&(s, e)| parse_qrels_chunk(data, s, e));
    for ch in &chunks {
        if let Some((off, msg)) = &ch.error {
            return Err(Error::format(source, line_of(data, *off), msg.clone()));
        }
    }
    // Number the queries in order of first appearance; list each one's segments.
    let mut slots = KeyIndex::default();
    let mut qids: Vec<&[u8]> = Vec::new();
    let mut seg_slot: Vec<u32> = Vec::new(); // segments of all chunks, in file order
    let mut sizes: Vec<(u32, usize, usize)> = Vec::new(); // segments, judgments, id bytes
    for ch in &chunks {
        let mut begin = 0;
        for &(qa, qb, end) in &ch.segments {
            let qid = &data[qa..qb];
            let slot = match slots.get_or_add(qid, qids.len(), |i| qids[i]) {
                Some(i) => i as u32,
                None => {
                    qids.push(qid);
                    sizes.push((0, 0, 0));
                    qids.len() as u32 - 1
                }
            };
            seg_slot.push(slot);
            let sz = &mut sizes[slot as usize];
            sz.0 += 1;
            sz.1 += end - begin;
            sz.2 += ch.docs.range_bytes(begin, end);
            begin = end;
        }
    }
    if qids.is_empty() {
        return Err(Error::Input(format!(
            "{source}: no judgments (the qrels file is empty or has only comments)"
        )));
    }
    // Segments grouped by query (counting sort, file order kept within a query):
    // (chunk, first judgment, end, offset of its first line).
    let mut first = Vec::with_capacity(qids.len() + 1);
    let mut total = 0usize;
    for &(n, _, _) in &sizes {
        first.push(total);
        total += n as usize;
    }
    let mut fill = first.clone();
    let mut segs = vec![(0u32, 0usize, 0usize, 0usize); total];
    let mut k = 0;
    for (c, ch) in chunks.iter().enumerate() {
        let mut begin = 0;
        for &(qa, _, end) in &ch.segments {
            let slot = seg_slot[k] as usize;
            segs[fill[slot]] = (c as u32, begin, end, qa);
            fill[slot] += 1;
            begin = end;
            k += 1;
        }
    }
    // Built in order of query id, so that the queries need no sorting afterwards.
    let mut order: Vec<u32> = (0..qids.len() as u32).collect();
    if !qids.windows(2).all(|w| w[0] < w[1]) {
        order.sort_unstable_by(|&a, &b| qids[a as usize].cmp(qids[b as usize]));
    }
    let place = Place::new(source, Unit::Line);
    let queries = crate::parallel::map_chunks(&order, |&slot| {
        let slot = slot as usize;
        let (n, judged, bytes) = sizes[slot];
        let segs = &segs[first[slot]..first[slot] + n as usize];
        let mut rows = Rows::new(qids[slot]);
        rows.docs = Ids::with_capacity(judged, bytes);
        rows.values = Vec::with_capacity(judged);
        for &(c, a, b, _) in segs {
            let ch = &chunks[c as usize];
            rows.docs.extend_range(&ch.docs, a, b)?;
            rows.values.extend_from_slice(&ch.labels[a..b]);
        }
        QrelsQuery::new(rows).map_err(|dup| {
            let (rows, d) = *dup;
            // error path: the lines of the query's segments, counted now
            let mut origins = Origins::default();
            let mut at = 0;
            for &(_, a, b, qa) in segs {
                origins.push(at, line_of(data, qa));
                at += b - a;
            }
            place.duplicate(&rows, Some(&origins), d)
        })
    });
    // the first query (in order of appearance) with a duplicate names it
    let mut built = Vec::with_capacity(queries.len());
    let mut dup: Option<(u32, Error)> = None;
    for (q, &slot) in queries.into_iter().zip(&order) {
        match q {
            Ok(q) => built.push(q),
            Err(e) if dup.as_ref().is_none_or(|(s, _)| slot < *s) => dup = Some((slot, e)),
            Err(_) => {}
        }
    }
    match dup {
        Some((_, e)) => Err(e),
        None => Ok(Qrels::from_queries(built)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrels_segments_of_a_query_join_in_file_order() {
        // queries interleaved, so that most chunks end inside a query
        let data = b"q2 0 a 1\nq10 0 b 2\nq2 0 c 0\nq2 0 d -1\nq10 0 a 0\nq1 0 z 3\nq2 0 e 1\n";
        for threads in [1, 2, 4] {
            let q = crate::parallel::with_threads(threads, || parse_qrels(data, "q")).unwrap();
            let ids: Vec<&[u8]> = q.queries().iter().map(|q| q.id()).collect();
            assert_eq!(ids, [&b"q1"[..], b"q10", b"q2"]);
            let q2: Vec<(&[u8], i64)> = q.query(b"q2").unwrap().iter().collect();
            assert_eq!(
                q2,
                [(&b"a"[..], 1), (b"c", 0), (b"d", -1), (b"e", 1)],
                "threads {threads}"
            );
            assert_eq!(q.query(b"q2").unwrap().levels(), &[(0, 1), (1, 2)]);
            assert_eq!(q.query(b"q10").unwrap().label(b"b"), Some(2));
            assert_eq!(q.num_judgments(), 7);
        }
    }

    /// A plain per-line reading of qrels text (split into lines, then fields, with
    /// trec_eval's comment rules): the judgments and the index of the first bad line.
    type Parsed = (Vec<(Vec<u8>, Vec<u8>, i64)>, Option<u64>);

    fn reference_qrels(text: &[u8]) -> Parsed {
        let mut out = Vec::new();
        let mut fields: [&[u8]; 4] = [&[]; 4];
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        let lines: Vec<&[u8]> = body.split(|&c| c == b'\n').collect();
        let mut prev_comment = false;
        for (i, line) in lines.iter().enumerate() {
            if line.first() == Some(&b'#') {
                let rest_blank = lines[i + 1..].iter().all(|l| l.iter().all(|&c| is_ws(c)));
                if prev_comment || rest_blank {
                    return (out, Some(i as u64));
                }
                prev_comment = true;
                continue;
            }
            let n = split_fields(line, &mut fields);
            let Some(label) = (n == 4).then(|| parse_label(fields[3]).ok()).flatten() else {
                return (out, Some(i as u64));
            };
            out.push((fields[0].to_vec(), fields[2].to_vec(), label));
            prev_comment = false;
        }
        (out, None)
    }

    fn chunk_qrels(text: &[u8]) -> Parsed {
        let ch = parse_qrels_chunk(text, 0, text.len());
        let mut out = Vec::new();
        let mut first = 0;
        for &(qa, qb, end) in &ch.segments {
            for j in first..end {
                out.push((text[qa..qb].to_vec(), ch.docs.get(j).to_vec(), ch.labels[j]));
            }
            first = end;
        }
        let bad = ch.error.map(|(at, _)| line_of(text, at) - 1);
        (out, bad)
    }

    proptest::proptest! {
        /// Mostly well-formed lines (four single-spaced fields), where the one-pass
        /// reader of plain lines takes them, with the odd byte, comment or field count
        /// that must send a line to the general reader: the two must agree.
        #[test]
        fn plain_qrels_lines_agree_with_per_line_splitting(
            lines in proptest::collection::vec(
                (
                    proptest::sample::select(vec![4, 4, 4, 4, 3, 5]),
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "q1", "q22", "0", "doc-123456789", "d", "3", "-1", "1", "2", "q1",
                            "q22", "0", "doc-123456789", "d", "3", "-1", "1", "2", "#c", "1.5",
                            "x\x01y", "a\rb", "t\u{e9}", "",
                        ]),
                        5,
                    ),
                    proptest::sample::select(vec![" ", " ", " ", " ", " ", "  ", "\t"]),
                    proptest::sample::select(vec!["\n", "\n", "\n", "\r\n", " \n"]),
                ),
                1..12,
            )
        ) {
            let mut text = Vec::new();
            for (n, fields, sep, eol) in &lines {
                text.extend_from_slice(fields[..*n].join(sep).as_bytes());
                text.extend_from_slice(eol.as_bytes());
            }
            let (good, bad) = reference_qrels(&text);
            let (got, got_bad) = chunk_qrels(&text);
            proptest::prop_assert_eq!(got_bad, bad);
            if bad.is_none() {
                proptest::prop_assert_eq!(got, good);
            }
        }
    }

    #[test]
    fn qrels_duplicate_named_by_first_query_in_the_file() {
        // q9 comes first in the file, q1 first in byte order: q9's duplicate is named
        let data = b"q9 0 a 1\nq1 0 b 1\nq9 0 a 0\nq1 0 b 0\n";
        for threads in [1, 4] {
            let e = crate::parallel::with_threads(threads, || parse_qrels(data, "q")).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("q:3: "), "{msg}");
            assert!(msg.contains("'a'") && msg.contains("'q9'"), "{msg}");
        }
    }
}
