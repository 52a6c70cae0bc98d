//! Fields of TREC lines: C `isspace` splitting, the strict number readers (labels,
//! scores) and chunking of a block at line starts.

use crate::error::{show, Error, Result};

#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    WS[b as usize]
}

/// The start of a file's text: a UTF-8 byte-order mark is skipped (editors on Windows
/// write one, and it would otherwise become part of the first id); text whose lines end
/// with CR alone (classic Mac OS) is refused, since read as one line it would silently
/// change the numbers. (CRLF endings are fine: CR is whitespace.)
pub(super) fn text_start<'d>(data: &'d [u8], source: &str) -> Result<&'d [u8]> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    if memchr::memchr(b'\n', data).is_none() {
        if let Some(p) = memchr::memchr(b'\r', data) {
            if data[p + 1..].iter().any(|&c| !is_ws(c)) {
                return Err(Error::format(
                    source,
                    1,
                    "lines end with CR alone (classic Mac OS line endings); convert them \
                     to LF first, e.g. `tr '\\r' '\\n'`",
                ));
            }
        }
    }
    Ok(data)
}

/// Split `line` into fields; fills `out` and returns the total number of fields.
#[inline]
pub(super) fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
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

pub(super) fn line_of(data: &[u8], offset: usize) -> u64 {
    1 + memchr::memchr_iter(b'\n', &data[..offset.min(data.len())]).count() as u64
}

pub(super) fn check_nul(data: &[u8], source: &str, lines_before: u64) -> Result<()> {
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
pub(super) fn parse_label(field: &[u8]) -> std::result::Result<i64, String> {
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

pub(super) fn parse_label_slow(field: &[u8]) -> std::result::Result<i64, String> {
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
/// fast_float takes too). `None` for anything else. A loop over the characters, kept:
/// reading the field as one 16-byte word (dot found and removed, digits checked and
/// added eight at a time) took 17 ns a score against this loop's 7, and as one 8-byte
/// word about the same 7 (1 M scores like `16.358`, 2026-11-27).
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

/// Strict score: a complete decimal number (`1`, `-0.5`, `.5`, `+5e-1`, `inf`, `nan`);
/// hex floats and trailing characters are refused. NaN is read as NaN: whether a value
/// may enter a ranking is the intake's one score policy (`crate::intake`), which
/// refuses it naming the line.
/// The plain decimal's loop is inlined into the caller (the run parser's hot loop),
/// the general reader kept out of line: inlined whole it was not inlined at all, and
/// each score went through a call returning its `Result` through memory.
#[inline(always)]
pub(super) fn parse_score(field: &[u8]) -> std::result::Result<f64, String> {
    match parse_plain_decimal(field) {
        Some(v) => Ok(v),
        None => parse_other_score(field),
    }
}

/// A score other than a plain decimal (exponent, `inf`, `nan`), or the error.
#[cold]
#[inline(never)]
fn parse_other_score(field: &[u8]) -> std::result::Result<f64, String> {
    let unsigned = field
        .strip_prefix(b"-")
        .or_else(|| field.strip_prefix(b"+"));
    let hex = unsigned
        .unwrap_or(field)
        .get(..2)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"0x"));
    match fast_float2::parse::<f64, _>(field) {
        Ok(v) => Ok(v),
        Err(_) if hex => Err(format!(
            "score '{}' is not a decimal number (trec_eval's atof reads C's hexadecimal \
             floats; write it in decimal)",
            show(field)
        )),
        Err(_) => Err(format!(
            "score '{}' is not a number (trec_eval would silently read only its numeric prefix, or 0)",
            show(field)
        )),
    }
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
pub(super) fn field_end(line: &[u8], mut i: usize) -> usize {
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

/// The usual line, read in one pass: exactly `N` non-empty fields separated by single
/// spaces and ended by `\n` (or `\r\n`), with no other byte at or below `b' '`. Returns
/// the end of each field (the position of the byte after it) and the start of the next
/// line; `None` for any other line (leading or repeated whitespace, tabs, control bytes,
/// more or fewer fields, the end of the data near), which the general field reader then
/// reads. Hand-written because it is the hot loop of reading a run.
///
/// On x86-64 a line that ends within the 64 bytes from `pos` is read from masks of those
/// bytes ([`plain_line_window`]; M's run read from memory on one thread, best of 7 in
/// four alternating pairs, `tools/parse_speed.rs`: 35.0-38.1 -> 30.8-32.3 ns a line);
/// a longer one, or one near the end of the data, by the word loop
/// ([`plain_line_words`]).
#[inline(always)]
pub(super) fn plain_line<const N: usize>(data: &[u8], pos: usize) -> Option<([usize; N], usize)> {
    #[cfg(target_arch = "x86_64")]
    if let Some(found) = plain_line_window::<N>(data, pos) {
        return found;
    }
    plain_line_words::<N>(data, pos)
}

/// [`plain_line`] of a line that ends within the 64 bytes from `pos`: `None` when the
/// window does not hold its `N` field ends (a longer line, the end of the data near),
/// else what [`plain_line_words`] gives. The bytes at or below `b' '` and the spaces of
/// the window as two 64-bit masks (SSE2, part of every x86-64 CPU: four 16-byte loads,
/// an unsigned minimum and two comparisons each), the `N` field ends taken from the
/// first with no branch, and the line checked at once: every separator before the
/// last a space, the last not, no empty field. The word loop it stands in for branches
/// at every separator (about 180 instructions a line of M's run, mispredicted where the
/// number of separators per word varies; callgrind with line tables).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn plain_line_window<const N: usize>(
    data: &[u8],
    pos: usize,
) -> Option<Option<([usize; N], usize)>> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let window = data.get(pos..pos + 64)?;
    let (mut low, mut spaces) = (0u64, 0u64);
    for (j, part) in window.chunks_exact(16).enumerate() {
        // SAFETY: each load reads the 16 bytes of `part` (unaligned loads); SSE2 is
        // part of x86-64, so the intrinsics are always available.
        let (l, s) = unsafe {
            let x = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
            let blank = _mm_set1_epi8(b' ' as i8);
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(x, blank), x)) as u16,
                _mm_movemask_epi8(_mm_cmpeq_epi8(x, blank)) as u16,
            )
        };
        low |= u64::from(l) << (16 * j);
        spaces |= u64::from(s) << (16 * j);
    }
    let mut ends = [0usize; N];
    let mut m = low;
    let mut last = 64;
    for end in ends.iter_mut() {
        last = m.trailing_zeros() as usize; // 64 when the window ran out
        *end = pos + last;
        m &= m.wrapping_sub(1);
    }
    if last >= 64 {
        return None;
    }
    // the separators up to the last field's end
    let upto = low & (u64::MAX >> (63 - last));
    let ok = (upto & !spaces) == 1 << last // spaces before it, the end not a space
        && upto & ((upto << 1) | 1) == 0; // no field empty (none at the start, none doubled)
    if !ok {
        return Some(None);
    }
    let at = pos + last;
    Some(match window[last] {
        b'\n' => Some((ends, at + 1)),
        b'\r' if data.get(at + 1) == Some(&b'\n') => Some((ends, at + 2)),
        _ => None,
    })
}

/// [`plain_line`] eight bytes at a time: the bytes at or below `b' '` of a word are
/// found with one exact test (no carry crosses a byte), and each is visited once, where
/// the general reader tests every byte against the whitespace table.
#[inline(always)]
fn plain_line_words<const N: usize>(data: &[u8], pos: usize) -> Option<([usize; N], usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut ends = [0usize; N];
    let mut k = 0;
    let mut start = pos;
    let mut i = pos;
    loop {
        let w: [u8; 8] = data.get(i..i + 8)?.try_into().ok()?;
        let x = u64::from_le_bytes(w);
        // the high bit of each byte <= 0x20: (b & 0x7f) + 0x5f reaches 0x80 exactly when
        // b & 0x7f > 0x20, and a byte with its high bit set is never a separator
        let mut m = !(((x & LOW7) + ONES * 0x5f) | x) & HIGHS;
        while m != 0 {
            let at = i + (m.trailing_zeros() / 8) as usize;
            m &= m - 1;
            if at == start {
                return None; // an empty field: leading or repeated whitespace
            }
            let b = data[at];
            ends[k] = at;
            k += 1;
            if k == N {
                return match b {
                    b'\n' => Some((ends, at + 1)),
                    b'\r' if data.get(at + 1) == Some(&b'\n') => Some((ends, at + 2)),
                    _ => None,
                };
            }
            if b != b' ' {
                return None;
            }
            start = at + 1;
        }
        i += 8;
    }
}

/// The first non-whitespace byte at or after `i` (`line.len()` when none).
#[inline(always)]
pub(super) fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && line[i] <= b' ' && WS[line[i] as usize] {
        i += 1;
    }
    i
}

/// The next field of `line` at or after `i`: (start, end); start == len when none.
#[inline(always)]
pub(super) fn next_field(line: &[u8], i: usize) -> (usize, usize) {
    let i = skip_ws(line, i);
    (i, field_end(line, i))
}

/// The first byte at or after `i` that is not blank (whitespace other than `\n`).
#[inline(always)]
pub(super) fn skip_blank(data: &[u8], mut i: usize) -> usize {
    while i < data.len() && data[i] <= b' ' && data[i] != b'\n' && WS[data[i] as usize] {
        i += 1;
    }
    i
}

/// The next field of the line going on at `i`: (start, end), or `None` at the line's end.
#[inline(always)]
pub(super) fn field_in_line(data: &[u8], i: usize) -> Option<(usize, usize)> {
    let i = skip_blank(data, i);
    if i == data.len() || data[i] == b'\n' {
        return None;
    }
    Some((i, field_end(data, i)))
}

/// Chunk boundaries of `block` at line starts, about `n` chunks.
pub(super) fn chunk_bounds(block: &[u8], n: usize) -> Vec<(usize, usize)> {
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

pub(super) fn threads() -> usize {
    crate::parallel::current_threads()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the window reads the line at `pos` (as a run's six fields or a qrels' four),
    /// it reads it as the word loop does.
    #[cfg(target_arch = "x86_64")]
    fn window_agrees(
        data: &[u8],
        pos: usize,
    ) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
        if let Some(w) = plain_line_window::<6>(data, pos) {
            proptest::prop_assert_eq!(w, plain_line_words::<6>(data, pos));
        }
        if let Some(w) = plain_line_window::<4>(data, pos) {
            proptest::prop_assert_eq!(w, plain_line_words::<4>(data, pos));
        }
        Ok(())
    }

    proptest::proptest! {
        /// The 64-byte window reads every line as the word loop does, wherever the line
        /// starts in the data and whatever its length (short and long lines, lines
        /// running past the window, separators of every kind, bytes above 0x7f).
        #[test]
        #[cfg(target_arch = "x86_64")]
        fn window_agrees_with_the_word_loop(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "q1", "Q0", "doc-123456789", "d", "7", "0.25", "t\u{e9}", "x\u{1}y",
                    "abcdefghijklmnopqrstuvwxyz0123456789", " ", " ", " ", " ", "  ", "\t",
                    "\r", "\r\n", "\n", "\n", "\x0b", "",
                ]),
                0..40,
            ),
            start in 0usize..80,
        ) {
            let data: Vec<u8> = pieces.concat().into_bytes();
            window_agrees(&data, start.min(data.len()))?;
        }
    }

    proptest::proptest! {
        /// The same on mostly well-formed lines (the window's usual case), read from
        /// every byte of the data: 3 to 8 fields, single spaces mostly, every ending.
        #[test]
        #[cfg(target_arch = "x86_64")]
        fn window_agrees_on_lines(
            lines in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "q1", "q22", "Q0", "doc-123456789", "d", "3", "0.25", "-7",
                            "t\u{e9}", "x\u{1}y", "0123456789abcdefghij", "",
                        ]),
                        3..9,
                    ),
                    proptest::sample::select(vec![" ", " ", " ", " ", "  ", "\t"]),
                    proptest::sample::select(vec!["\n", "\n", "\r\n", "\r", " \n", ""]),
                ),
                1..8,
            ),
        ) {
            let mut data = Vec::new();
            for (fields, sep, eol) in &lines {
                data.extend_from_slice(fields.join(sep).as_bytes());
                data.extend_from_slice(eol.as_bytes());
            }
            for pos in 0..data.len() {
                window_agrees(&data, pos)?;
            }
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn window_reads_the_usual_lines() {
        let mut data = b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\r\n".to_vec();
        data.resize(200, b'x');
        let first = plain_line_window::<6>(&data, 0).flatten();
        assert_eq!(first, Some(([2, 5, 8, 10, 14, 16], 17)));
        let second = plain_line_window::<6>(&data, 17).flatten();
        assert_eq!(second, Some(([19, 22, 25, 27, 31, 33], 35)));
        // a line longer than the window: left to the word loop
        let mut long = [b"q ".repeat(40), b"\n".to_vec()].concat();
        long.resize(200, b'x');
        assert_eq!(plain_line_window::<6>(&long, 0), Some(None));
        assert_eq!(plain_line_window::<6>(&data[..50], 0), None);
    }

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
    fn bom_is_skipped_and_cr_only_refused() {
        assert_eq!(
            text_start(b"\xef\xbb\xbfq1 0 d 1\n", "f").unwrap(),
            b"q1 0 d 1\n"
        );
        assert_eq!(
            text_start(b"q 0 d 1\r\nq 0 e 1\r\n", "f").unwrap().len(),
            18
        );
        assert_eq!(text_start(b"q 0 d 1\r", "f").unwrap().len(), 8); // one line
        let e = text_start(b"q 0 d 1\rq 0 e 1\r", "f")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f:1: lines end with CR alone"), "{e}");
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
        assert!(parse_score(b"nan").unwrap().is_nan()); // refused by the intake
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
