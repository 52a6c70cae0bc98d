//! TREC file formats: readers for qrels and runs with trec_eval's parsing rules, and
//! writers. Huge runs are read in blocks and parsed in parallel; nothing is kept per
//! line except the document id bytes and the score.
//!
//! Rules (see the conformance README, "trec_eval semantics"): files are bytes; fields
//! are separated by ASCII whitespace (space, `\t`, `\n`, `\v`, `\f`, `\r`); ids are
//! opaque byte strings. Where trec_eval silently reinterprets input (`abc` or `2.5x` as
//! a score, `1.7` as a label, NaN) irmetrics refuses with a clear error instead.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{show, Error, Location, Result};
use crate::ids::{Ids, KeyIndex};
use crate::qrels::{Qrels, QrelsQuery};
use crate::run::{Run, RunQuery};

/// Bytes read per block when streaming a run.
const BLOCK: usize = 16 << 20;

#[inline]
pub(crate) fn is_ws(b: u8) -> bool {
    WS[b as usize]
}

/// Split `line` into fields; fills `out` and returns the total number of fields.
#[inline]
fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && is_ws(line[i]) {
            i += 1;
        }
        if i >= len {
            break;
        }
        let start = i;
        while i < len && !is_ws(line[i]) {
            i += 1;
        }
        if n < out.len() {
            out[n] = &line[start..i];
        }
        n += 1;
    }
    n
}

/// Open a file for reading, transparently decompressing gzip (detected by its magic
/// bytes, not its name). `-` is standard input.
pub fn open_input(path: &Path) -> Result<Box<dyn Read + Send>> {
    open_input_sized(path).map(|(r, _)| r)
}

/// [`open_input`], plus the size of the content when known (a plain file's length).
pub(crate) fn open_input_sized(path: &Path) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let io_err = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut size = None;
    let raw: Box<dyn Read + Send> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("it is a directory, not a file"),
            });
        }
        if meta.is_file() {
            size = Some(meta.len());
        }
        Box::new(std::fs::File::open(path).map_err(io_err)?)
    };
    let mut br = BufReader::with_capacity(1 << 16, raw);
    let head = br.fill_buf().map_err(io_err)?;
    if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        let gz = GzReader {
            inner: flate2::bufread::MultiGzDecoder::new(br),
        };
        Ok((Box::new(gz), None))
    } else {
        Ok((Box::new(br), size))
    }
}

/// Wraps the gzip decoder so that its errors say the data is corrupt.
struct GzReader<R: BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
}

impl<R: BufRead> Read for GzReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("corrupt or truncated gzip data ({e})"),
            )
        })
    }
}

/// Read a whole file (gzip and `-` handled as in [`open_input`]).
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    let mut r = open_input(path)?;
    let mut data = Vec::new();
    r.read_to_end(&mut data).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    Ok(data)
}

fn line_of(data: &[u8], offset: usize) -> u64 {
    1 + memchr::memchr_iter(b'\n', &data[..offset.min(data.len())]).count() as u64
}

fn check_nul(data: &[u8], source: &str, lines_before: u64) -> Result<()> {
    if let Some(p) = memchr::memchr(0, data) {
        return Err(Error::format(
            source,
            lines_before + line_of(data, p),
            "contains a NUL byte; TREC files are text (is this a binary or corrupt file?)",
        ));
    }
    Ok(())
}

/// Strict integer label: optional sign and digits only.
#[inline]
fn parse_label(field: &[u8]) -> std::result::Result<i64, String> {
    // the usual case: a short number, read here; the rest (and errors) by `parse_label_slow`
    let (neg, digits) = match field.first() {
        Some(b'-') => (true, &field[1..]),
        Some(b'+') => (false, &field[1..]),
        _ => (false, field),
    };
    if !digits.is_empty() && digits.len() <= 18 {
        let mut v: i64 = 0;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return parse_label_slow(field);
            }
            v = v * 10 + i64::from(d);
        }
        return Ok(if neg { -v } else { v });
    }
    parse_label_slow(field)
}

fn parse_label_slow(field: &[u8]) -> std::result::Result<i64, String> {
    let s = std::str::from_utf8(field).unwrap_or("");
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "relevance label '{}' is not a whole number (trec_eval would silently truncate it)",
            show(field)
        ));
    }
    s.parse::<i64>().map_err(|_| {
        format!(
            "relevance label '{}' is too large (labels must fit in 64 bits)",
            show(field)
        )
    })
}

/// The powers of ten that are doubles exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The usual score, `[-+]digits[.digits]`, read exactly when its digits form an integer
/// `m` of at most 2^53 and it has at most 22 decimals: `m` and `10^k` are then doubles
/// and `m / 10^k` is one correctly rounded division (Clinger's fast path, the one
/// fast_float takes too). `None` for anything else.
#[inline(always)]
fn parse_plain_decimal(field: &[u8]) -> Option<f64> {
    let (neg, body) = match field.first()? {
        b'-' => (true, &field[1..]),
        b'+' => (false, &field[1..]),
        _ => (false, field),
    };
    if body.len() > 20 {
        return None;
    }
    let mut m: u64 = 0;
    let mut dot = body.len();
    for (i, &c) in body.iter().enumerate() {
        let d = c.wrapping_sub(b'0');
        if d < 10 {
            // 20 digits may wrap; more than 19 are refused below
            m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        } else if c == b'.' && dot == body.len() {
            dot = i;
        } else {
            return None;
        }
    }
    let digits = body.len() - usize::from(dot < body.len());
    let decimals = body.len().saturating_sub(dot + 1);
    if digits == 0 || digits > 19 || m > 1 << 53 || decimals >= POW10.len() {
        return None;
    }
    let v = m as f64 / POW10[decimals];
    Some(if neg { -v } else { v })
}

/// Strict score: a complete decimal number (`1`, `-0.5`, `.5`, `+5e-1`, `inf`); NaN,
/// hex floats and trailing characters are refused.
#[inline]
fn parse_score(field: &[u8]) -> std::result::Result<f64, String> {
    if let Some(v) = parse_plain_decimal(field) {
        return Ok(v);
    }
    match fast_float2::parse::<f64, _>(field) {
        Ok(v) if !v.is_nan() => Ok(v),
        Ok(_) => Err(format!(
            "score '{}' is NaN; a ranking needs comparable scores",
            show(field)
        )),
        Err(_) => Err(format!(
            "score '{}' is not a number (trec_eval would silently read only its numeric prefix, or 0)",
            show(field)
        )),
    }
}

// ------------------------------------------------------------------------------------
// qrels

/// What one chunk of a qrels file parses into: its judgments back to back, in runs of
/// consecutive lines of one query (segments).
struct QrelsChunk {
    docs: Ids,
    labels: Vec<i64>,
    /// Per segment: the query id's byte range in the data and the end of its judgments.
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
    let mut pos = start;
    while pos < end {
        let nl = memchr::memchr(b'\n', &data[pos..end]).map_or(end, |i| pos + i);
        let line = &data[pos..nl];
        let line_start = pos;
        let next = nl + 1;
        pos = next;
        let fail = |msg: String| Some((line_start, msg));
        if line.first() == Some(&b'#') {
            if prev_comment {
                out.error = fail(
                    "a second comment line in a row; trec_eval skips only one '#' line at a \
                     time in qrels and rejects this file; merge or remove the comments"
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
        prev_comment = false;
        // qid iter docno rel
        let (q0, q1) = next_field(line, 0);
        let (_, i1) = next_field(line, q1);
        let (d0, d1) = next_field(line, i1);
        let (l0, l1) = next_field(line, d1);
        if l0 == line.len() || skip_ws(line, l1) != line.len() {
            out.error = fail(qrels_fields_error(line));
            break;
        }
        let label = match parse_label(&line[l0..l1]) {
            Ok(l) => l,
            Err(m) => {
                out.error = fail(m);
                break;
            }
        };
        let (qa, qb) = (line_start + q0, line_start + q1);
        match out.segments.last_mut() {
            Some(seg) if data[seg.0..seg.1] == data[qa..qb] => seg.2 += 1,
            _ => out.segments.push((qa, qb, out.labels.len() + 1)),
        }
        if let Err(e) = out.docs.push(&line[d0..d1]) {
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

/// Parse TREC qrels (`qid iter docno rel`): chunks are parsed in parallel, their
/// segments grouped by query, and each query is assembled and indexed in parallel.
pub fn parse_qrels(data: &[u8], source: &str) -> Result<Qrels> {
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
    // (chunk, first judgment, end).
    let mut first = Vec::with_capacity(qids.len() + 1);
    let mut total = 0usize;
    for &(n, _, _) in &sizes {
        first.push(total);
        total += n as usize;
    }
    let mut fill = first.clone();
    let mut segs = vec![(0u32, 0usize, 0usize); total];
    let mut k = 0;
    for (c, ch) in chunks.iter().enumerate() {
        let mut begin = 0;
        for &(_, _, end) in &ch.segments {
            let slot = seg_slot[k] as usize;
            segs[fill[slot]] = (c as u32, begin, end);
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
    let queries = crate::parallel::map_chunks(&order, |&slot| {
        let slot = slot as usize;
        let (n, judged, bytes) = sizes[slot];
        let mut docs = Ids::with_capacity(judged, bytes);
        let mut labels = Vec::with_capacity(judged);
        for &(c, a, b) in &segs[first[slot]..first[slot] + n as usize] {
            let ch = &chunks[c as usize];
            docs.extend_range(&ch.docs, a, b)?;
            labels.extend_from_slice(&ch.labels[a..b]);
        }
        QrelsQuery::new(qids[slot].into(), docs, labels)
    });
    // the first query (in order of appearance) with a duplicate names it
    let mut built = Vec::with_capacity(queries.len());
    let mut dup: Option<(u32, Error)> = None;
    for (q, &slot) in queries.into_iter().zip(&order) {
        match q {
            Ok(q) => built.push(q),
            Err(e) if dup.as_ref().map_or(true, |(s, _)| slot < *s) => dup = Some((slot, e)),
            Err(_) => {}
        }
    }
    match dup {
        Some((_, e)) => Err(locate_duplicate(e, data, source, 4)),
        None => Ok(Qrels::from_queries(built)),
    }
}

/// 1-based numbers of the first `max` lines whose fields satisfy `pred` (error paths).
fn find_lines(
    data: &[u8],
    pred: impl Fn(&[&[u8]]) -> bool,
    min_fields: usize,
    max: usize,
) -> Vec<u64> {
    let mut fields: [&[u8]; 6] = [&[]; 6];
    let mut out = Vec::new();
    for (i, line) in data.split(|&c| c == b'\n').enumerate() {
        let n = split_fields(line, &mut fields);
        if n >= min_fields && pred(&fields[..n.min(6)]) {
            out.push(i as u64 + 1);
            if out.len() == max {
                break;
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------------
// runs

/// What one chunk of a run file parses into.
struct Chunk {
    /// Consecutive lines of one query form one segment (with the 0-based index, within
    /// the chunk, of its first line).
    segments: Vec<(RunQuery, u64)>,
    /// Tag of the chunk's last result line.
    last_tag: Option<Vec<u8>>,
    /// First problem: line index within the chunk and message.
    error: Option<(u64, String)>,
    /// Lines in the chunk.
    lines: u64,
}

/// C `isspace` in the C locale, as a table.
static WS: [bool; 256] = {
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t[0x0b] = true;
    t[0x0c] = true;
    t
};

/// End of the field starting at `i`: the first whitespace byte at or after `i`.
/// Eight bytes at a time: a byte above 0x20 is never whitespace, and a SWAR test
/// finds the first byte below 0x21 in a word.
#[inline(always)]
fn field_end(line: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let n = line.len();
    loop {
        while i + 8 <= n {
            let mut w = [0u8; 8];
            w.copy_from_slice(&line[i..i + 8]);
            let x = u64::from_le_bytes(w);
            let found = x.wrapping_sub(ONES * 0x21) & !x & HIGHS;
            if found == 0 {
                i += 8;
            } else {
                i += (found.trailing_zeros() / 8) as usize;
                break;
            }
        }
        while i < n && line[i] > b' ' {
            i += 1;
        }
        // a control byte that is not whitespace belongs to the field
        if i < n && !WS[line[i] as usize] {
            i += 1;
            continue;
        }
        return i;
    }
}

/// The first non-whitespace byte at or after `i` (`line.len()` when none).
#[inline(always)]
fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && line[i] <= b' ' && WS[line[i] as usize] {
        i += 1;
    }
    i
}

/// The next field of `line` at or after `i`: (start, end); start == len when none.
#[inline(always)]
fn next_field(line: &[u8], i: usize) -> (usize, usize) {
    let i = skip_ws(line, i);
    (i, field_end(line, i))
}

/// The first byte at or after `i` that is not blank (whitespace other than `\n`).
#[inline(always)]
fn skip_blank(data: &[u8], mut i: usize) -> usize {
    while i < data.len() && data[i] <= b' ' && data[i] != b'\n' && WS[data[i] as usize] {
        i += 1;
    }
    i
}

/// The next field of the line going on at `i`: (start, end), or `None` at the line's end.
#[inline(always)]
fn field_in_line(data: &[u8], i: usize) -> Option<(usize, usize)> {
    let i = skip_blank(data, i);
    if i == data.len() || data[i] == b'\n' {
        return None;
    }
    Some((i, field_end(data, i)))
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
    let line_end = |from: usize| memchr::memchr(b'\n', &data[from..]).map_or(end, |i| from + i);
    // The current query's results gather in reused buffers; each query (segment) is
    // then copied out at its exact size, so the run holds no slack.
    let mut cur = RunQuery::default();
    let mut cur_qid = (0usize, 0usize);
    let mut cur_start = 0u64;
    let close = |cur: &mut RunQuery, (a, b): (usize, usize), first: u64, out: &mut Chunk| {
        if !cur.is_empty() {
            let seg = RunQuery {
                qid: data[a..b].into(),
                docs: cur.docs.clone(),
                scores: cur.scores.clone(),
            };
            out.segments.push((seg, first));
            cur.docs.truncate(0);
            cur.scores.clear();
        }
    };
    let mut last_tag: Option<(usize, usize)> = None;
    let mut pos = start;
    let mut idx = 0u64;
    while pos < end {
        let line_start = pos;
        let line_idx = idx;
        idx += 1;
        // qid iter docno rank score tag
        let Some((q0, q1)) = field_in_line(data, pos) else {
            pos = skip_blank(data, pos) + 1; // blank line
            continue;
        };
        if data[q0] == b'#' {
            pos = line_end(q0) + 1; // comment
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
        let score = match parse_score(&data[s0..s1]) {
            Ok(s) => s,
            Err(m) => {
                out.error = Some((line_idx, m));
                break;
            }
        };
        if cur.is_empty() || data[cur_qid.0..cur_qid.1] != data[q0..q1] {
            close(&mut cur, cur_qid, cur_start, &mut out);
            cur_qid = (q0, q1);
            cur_start = line_idx;
        }
        if let Err(e) = cur.docs.push(&data[d0..d1]) {
            out.error = Some((line_idx, e.to_string()));
            break;
        }
        cur.scores.push(score);
        last_tag = Some((t0, t1));
    }
    out.lines = idx;
    close(&mut cur, cur_qid, cur_start, &mut out);
    out.last_tag = last_tag.map(|(a, b)| data[a..b].to_vec());
    out
}

/// Chunk boundaries of `block` at line starts, about `n` chunks.
fn chunk_bounds(block: &[u8], n: usize) -> Vec<(usize, usize)> {
    let n = n.max(1);
    let target = block.len() / n + 1;
    let mut bounds = Vec::with_capacity(n);
    let mut start = 0;
    while start < block.len() {
        let mut end = (start + target).min(block.len());
        if end < block.len() {
            end = memchr::memchr(b'\n', &block[end..]).map_or(block.len(), |i| end + i + 1);
        }
        bounds.push((start, end));
        start = end;
    }
    bounds
}

fn threads() -> usize {
    crate::parallel::current_threads()
}

/// Receives the parsed pieces of a run, in file order.
pub(crate) trait SegmentSink {
    /// Consecutive lines of one query; `line` is the 1-based line of the first one.
    fn segment(&mut self, seg: RunQuery, line: u64) -> Result<()>;
    /// Called after each block's segments.
    fn block_done(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Groups segments into queries.
#[derive(Default)]
struct Merger {
    queries: Vec<RunQuery>,
    index: KeyIndex,
}

impl SegmentSink for Merger {
    fn segment(&mut self, seg: RunQuery, _line: u64) -> Result<()> {
        let next = self.queries.len();
        match self
            .index
            .get_or_add(&seg.qid, next, |i| &self.queries[i].qid)
        {
            Some(i) => self.queries[i].append(seg),
            None => {
                self.queries.push(seg);
                Ok(())
            }
        }
    }
}

/// Block size for an input of `size_hint` bytes: a small input needs no full-size buffer.
pub(crate) fn block_size(size_hint: Option<u64>) -> usize {
    size_hint.map_or(BLOCK, |n| (n as usize).saturating_add(1).clamp(4096, BLOCK))
}

/// Read `r` in blocks of whole lines on a thread of its own, so that reading overlaps
/// parsing. Each message is a buffer and the length of its whole lines; buffers come
/// back through `recycled` and are reused (zeroed once, when first allocated).
fn read_blocks(
    mut r: impl Read,
    block: usize,
    tx: std::sync::mpsc::SyncSender<std::io::Result<(Vec<u8>, usize)>>,
    recycled: std::sync::mpsc::Receiver<Vec<u8>>,
) {
    let mut size = block.max(1);
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = recycled.try_recv().unwrap_or_default();
        if buf.len() < size {
            buf.resize(size, 0);
        }
        let mut filled = carry.len();
        buf[..filled].copy_from_slice(&carry);
        carry.clear();
        let mut eof = false;
        while filled < size {
            match r.read(&mut buf[filled..size]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        let cut = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(i) => i + 1,
                None => {
                    // One line longer than the buffer: read on with a larger one.
                    carry.extend_from_slice(&buf[..filled]);
                    size *= 2;
                    continue;
                }
            }
        };
        carry.extend_from_slice(&buf[cut..filled]);
        if cut > 0 && tx.send(Ok((buf, cut))).is_err() {
            return; // the parser stopped (an error)
        }
        if eof {
            return;
        }
    }
}

/// Parse a run from a reader, block by block (each block parsed in parallel while the
/// next is read), handing the pieces to `sink`. Returns the run tag (the last line's).
pub(crate) fn read_run_blocks(
    r: impl Read + Send,
    source: &str,
    sink: &mut dyn SegmentSink,
    block: usize,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Vec<u8>> {
    // A rendezvous: the reader fills the next block while this thread parses one, and
    // hands it over when asked; so two blocks are in use at any time.
    let (tx, rx) = std::sync::mpsc::sync_channel(0);
    let (give_back, recycled) = std::sync::mpsc::channel();
    // `move`: on an early error the receiver is dropped with the closure, which stops
    // the reader thread before the scope waits for it.
    std::thread::scope(move |scope| {
        scope.spawn(move || read_blocks(r, block, tx, recycled));
        let mut runid: Vec<u8> = Vec::new();
        let mut results = 0usize;
        let mut line = 1u64; // number of the first line of the next chunk
        for msg in &rx {
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                return Err(Error::Interrupted);
            }
            let (buf, len) = msg.map_err(|e| Error::Io {
                path: source.into(),
                source: e,
            })?;
            let data = &buf[..len];
            let bounds = chunk_bounds(data, threads() * 4);
            let chunks =
                crate::parallel::map_chunks(&bounds, |&(s, e)| parse_run_chunk(data, s, e));
            for ch in chunks {
                if let Some((idx, msg)) = ch.error {
                    return Err(Error::format(source, line + idx, msg));
                }
                for (seg, idx) in ch.segments {
                    results += seg.len();
                    sink.segment(seg, line + idx)?;
                }
                if let Some(t) = ch.last_tag {
                    runid = t;
                }
                line += ch.lines;
            }
            sink.block_done()?;
            let _ = give_back.send(buf);
        }
        if results == 0 {
            return Err(Error::Input(format!(
                "{source}: no results (the run file is empty or has only comments and blank lines)"
            )));
        }
        Ok(runid)
    })
}

/// Parse a run from a reader.
pub fn parse_run_reader(r: impl Read + Send, source: &str) -> Result<Run> {
    parse_run_blocks(r, source, BLOCK)
}

fn parse_run_blocks(r: impl Read + Send, source: &str, block: usize) -> Result<Run> {
    parse_run_blocks_cancellable(r, source, block, None)
}

fn parse_run_blocks_cancellable(
    r: impl Read + Send,
    source: &str,
    block: usize,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Run> {
    let mut merger = Merger::default();
    let runid = read_run_blocks(r, source, &mut merger, block, cancel)?;
    Run::from_queries(merger.queries, runid)
}

/// Parse a run held in memory.
pub fn parse_run(data: &[u8], source: &str) -> Result<Run> {
    parse_run_blocks(data, source, block_size(Some(data.len() as u64)))
        .map_err(|e| locate_duplicate(e, data, source, 6))
}

/// Parse a run file (streamed; gzip and `-` handled).
pub fn read_run(path: &Path) -> Result<Run> {
    read_run_cancellable(path, None)
}

/// [`read_run`], stopping with [`Error::Interrupted`] soon after `cancel` is set.
pub fn read_run_cancellable(
    path: &Path,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Run> {
    let source = path.display().to_string();
    let (r, size) = open_input_sized(path)?;
    parse_run_blocks_cancellable(r, &source, block_size(size), cancel).map_err(|e| match e {
        Error::DuplicateEntry { .. } if path.as_os_str() != "-" => match read_input(path) {
            Ok(data) => locate_duplicate(e, &data, &source, 6),
            Err(_) => e,
        },
        e => e,
    })
}

/// Give a duplicate-document error its file and both line numbers (qrels lines have
/// 4 fields, run lines at least 6; the document is the third field of both).
fn locate_duplicate(e: Error, data: &[u8], source: &str, min_fields: usize) -> Error {
    match e {
        Error::DuplicateEntry { query, doc, .. } => {
            let seen = find_lines(
                data,
                |f| show(f[0]) == query && show(f[2]) == doc,
                min_fields,
                2,
            );
            let (line, first) = match seen.as_slice() {
                [a, b] => (*b, format!(" (first at line {a})")),
                _ => (0, String::new()),
            };
            Error::DuplicateEntry {
                location: Location {
                    source: source.to_string(),
                    line,
                },
                query,
                doc,
                first,
            }
        }
        other => other,
    }
}

// ------------------------------------------------------------------------------------
// writers

/// Write a run in TREC format, ranked in trec_eval order, ranks from 1.
pub fn write_run(run: &Run, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let tag: &[u8] = if run.runid().is_empty() {
        b"irmetrics"
    } else {
        run.runid()
    };
    let mut order = Vec::new();
    for q in run.queries() {
        q.ranking(&mut order);
        for (rank, &i) in order.iter().enumerate() {
            w.write_all(&q.qid)?;
            w.write_all(b" Q0 ")?;
            w.write_all(q.docs.get(i as usize))?;
            write!(w, " {} {:?} ", rank + 1, q.scores[i as usize])?;
            w.write_all(tag)?;
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Write qrels in TREC format.
pub fn write_qrels(qrels: &Qrels, w: &mut impl std::io::Write) -> std::io::Result<()> {
    for q in qrels.queries() {
        for (doc, label) in q.iter() {
            w.write_all(&q.qid)?;
            w.write_all(b" 0 ")?;
            w.write_all(doc)?;
            writeln!(w, " {label}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_field_end_agrees_with_bytewise() {
        let lines: [&[u8]; 6] = [
            b"abcdefghijklmnop qrst",
            b"a\x01b\x02cdefghijk\tz",
            "caf\u{e9}\u{a0}x\u{3000}yyyyyyyy z".as_bytes(),
            b"12345678",
            b"1234567 ",
            b"",
        ];
        for line in lines {
            for i in 0..line.len() {
                let mut j = i;
                while j < line.len() && !WS[line[j] as usize] {
                    j += 1;
                }
                assert_eq!(field_end(line, i), j, "{:?} from {i}", line);
            }
        }
    }

    #[test]
    fn fields_split_on_c_isspace_only() {
        let mut f: [&[u8]; 6] = [&[]; 6];
        let line = "a\x0bb\x0cc\td \u{a0}e".as_bytes();
        let n = split_fields(line, &mut f);
        assert_eq!(n, 5);
        assert_eq!(f[4], "\u{a0}e".as_bytes());
    }

    #[test]
    fn scores_are_strict() {
        assert_eq!(parse_score(b"+.5").unwrap(), 0.5);
        assert_eq!(parse_score(b"5e-1").unwrap(), 0.5);
        assert_eq!(parse_score(b"-inf").unwrap(), f64::NEG_INFINITY);
        assert!(parse_score(b"abc").is_err());
        assert!(parse_score(b"2.5x").is_err());
        assert!(parse_score(b"1,5").is_err());
        assert!(parse_score(b"0x1p2").is_err());
        assert!(parse_score(b"nan").is_err());
    }

    #[test]
    fn plain_decimals_read_as_fast_float_reads_them() {
        let fixed = [
            "0",
            "-0",
            "+0",
            "0.0",
            "-0.0",
            "1.",
            ".5",
            "+.5",
            "-.5",
            "14.212",
            "007.50",
            "9007199254740992",
            "9007199254740993",
            "0.1",
            "0.3",
            "123456.789012",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            ".",
            "-",
            "+",
            "",
            "1.2.3",
            "1e5",
            "--1",
            "1-",
        ];
        let check = |s: &str| {
            let fast = parse_plain_decimal(s.as_bytes());
            let reference = fast_float2::parse::<f64, _>(s.as_bytes()).ok();
            if let Some(v) = fast {
                assert_eq!(Some(v.to_bits()), reference.map(f64::to_bits), "{s}");
            }
        };
        for s in fixed {
            check(s);
        }
        assert_eq!(parse_plain_decimal(b"9007199254740993"), None); // above 2^53
        assert_eq!(parse_plain_decimal(b"."), None);
        assert_eq!(
            parse_plain_decimal(b"-0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        // random decimals of every shape the fast path takes
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 19 + 1) as usize;
            let mut s = String::new();
            if x >> 60 & 1 == 1 {
                s.push('-');
            }
            let mut y = x;
            let dot = (x >> 20) as usize % (digits + 1);
            for i in 0..digits {
                if i == dot && x >> 61 & 1 == 1 {
                    s.push('.');
                }
                y = y
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                s.push((b'0' + (y >> 59) as u8 % 10) as char);
            }
            check(&s);
        }
    }

    #[test]
    fn labels_are_strict() {
        assert_eq!(parse_label(b"+1").unwrap(), 1);
        assert_eq!(parse_label(b"-2").unwrap(), -2);
        assert!(parse_label(b"1.7").is_err());
        assert!(parse_label(b"2abc").is_err());
        assert!(parse_label(b"99999999999999999999").is_err());
        for bad in [&b""[..], b"+", b"-", b"--1", b"+-1", b"1 ", b"\x001"] {
            assert!(parse_label(bad).is_err(), "{bad:?}");
        }
        // the short-number path agrees with the standard parser, up to the 64-bit limits
        for s in [
            "0",
            "-0",
            "+0",
            "007",
            "123456789012345678",
            "-999999999999999999",
        ] {
            assert_eq!(
                parse_label(s.as_bytes()).unwrap(),
                s.parse::<i64>().unwrap()
            );
        }
        assert_eq!(parse_label(b"9223372036854775807").unwrap(), i64::MAX);
        assert_eq!(parse_label(b"-9223372036854775808").unwrap(), i64::MIN);
        assert!(parse_label(b"9223372036854775808").is_err());
    }

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
    fn written_run_reads_back() {
        let run = parse_run(
            b"q1 0 d1 1 0.5 tag\nq1 0 d2 2 inf tag\nq2 0 d1 1 -0.25 tag\n",
            "r",
        )
        .unwrap();
        let mut buf = Vec::new();
        write_run(&run, &mut buf).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "q1 Q0 d2 1 inf tag\nq1 Q0 d1 2 0.5 tag\nq2 Q0 d1 1 -0.25 tag\n"
        );
        let back = parse_run(&buf, "w").unwrap();
        assert_eq!(back.num_results(), 3);
        assert_eq!(back.runid(), b"tag");
    }

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

    #[test]
    fn small_blocks_give_the_same_run() {
        let data = b"q1 0 d1 1 0.5 a\nq2 0 d1 1 0.5 a\nq1 0 d2 1 0.7 b\n";
        for block in [1, 2, 7, 16, 100] {
            let r = parse_run_blocks(&data[..], "r", block).unwrap();
            assert_eq!(r.num_results(), 3);
            assert_eq!(r.len(), 2);
            assert_eq!(r.runid(), b"b");
        }
        let e = parse_run_blocks(&b"q1 0 d1 1 0.5 a\nq1 0 d2 x\n"[..], "r", 4).unwrap_err();
        assert!(e.to_string().starts_with("r:2: "), "{e}");
    }

    #[test]
    fn chunk_bounds_cover_everything() {
        let data = b"a\nbb\nccc\ndddd\n";
        for n in 1..6 {
            let b = chunk_bounds(data, n);
            assert_eq!(b.first().unwrap().0, 0);
            assert_eq!(b.last().unwrap().1, data.len());
            assert!(b.windows(2).all(|w| w[0].1 == w[1].0));
        }
    }
}
