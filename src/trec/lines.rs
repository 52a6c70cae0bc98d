//! The small whitespace-separated files of trec_eval's other formats, read line by line:
//! preferences (`qid jg jsg docno level`), qrels read as judgment groups or as
//! preferences (`qid jg docno rel`) and z-score tables (`qid measure mean stddev`).
//! Each line has exactly the format's fields; trec_eval's rules otherwise: bytes split
//! on C `isspace`, a `#` in the first column starts a comment line (where the format
//! has comments), one at a time and never last, and a blank line is malformed.

use super::fields::{check_nul, parse_label, parse_score, split_fields, text_start};
use crate::error::{show, Error, Result};

/// A whole file (gzip and `-` as for runs) and its name for messages.
pub(crate) fn read(path: &std::path::Path) -> Result<(Vec<u8>, String)> {
    Ok((super::read_input(path)?, path.display().to_string()))
}

/// One line of a file: its number (from 1) and its fields.
pub(crate) struct Line<'a, const N: usize> {
    /// The line number, from 1.
    pub(crate) number: u64,
    /// The fields, in order.
    pub(crate) fields: [&'a [u8]; N],
}

/// A file of `N`-field lines: `what` names the fields (`"qid jg jsg docno level"`) in
/// errors; `comments` says whether `#` lines are comments.
pub(crate) struct Layout {
    /// The fields, for messages.
    pub(crate) what: &'static str,
    /// Whether the format has `#` comment lines.
    pub(crate) comments: bool,
}

/// Split `data` (the file `source`) into lines of exactly `N` fields.
pub(crate) fn split_lines<'a, const N: usize>(
    data: &'a [u8],
    source: &str,
    layout: &Layout,
) -> Result<Vec<Line<'a, N>>> {
    let data = text_start(data, source)?;
    check_nul(data, source, 0)?;
    if data.iter().all(|&b| super::fields::is_ws(b)) {
        return Err(Error::Input(format!(
            "{source} is empty: it holds no '{}' line",
            layout.what
        )));
    }
    // a last line without its newline is still a line
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let mut out = Vec::with_capacity(body.len() / 32);
    let mut prev_comment = false;
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    let last = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let number = i as u64 + 1;
        let fail = |msg: String| Err(Error::format(source, number, msg));
        if layout.comments && line.first() == Some(&b'#') {
            if prev_comment {
                return fail(
                    "a second comment line in a row; trec_eval skips only one '#' line at a \
                     time and reads the next one as data; merge or remove the comments"
                        .into(),
                );
            }
            if number as usize == last {
                return fail(
                    "the file ends with a comment line, which trec_eval cannot read; remove \
                     the trailing comment"
                        .into(),
                );
            }
            prev_comment = true;
            continue;
        }
        prev_comment = false;
        let mut fields: [&[u8]; N] = [&[]; N];
        let n = split_fields(line, &mut fields);
        if n != N {
            let hint = if n == 0 {
                " (a blank line)".to_string()
            } else if layout.comments && fields[0].first() == Some(&b'#') {
                "; a comment must start with '#' in the first column".to_string()
            } else {
                String::new()
            };
            return fail(format!(
                "malformed line: expected {N} fields '{}', found {n}{hint}",
                layout.what
            ));
        }
        out.push(Line { number, fields });
    }
    Ok(out)
}

/// A whole-number field (a relevance label), strictly: trec_eval's `atol` would read
/// `1.5` as 1 and `x` as 0.
pub(crate) fn whole(field: &[u8], source: &str, line: u64) -> Result<i64> {
    parse_label(field).map_err(|m| Error::format(source, line, m))
}

/// A finite number field (`what` names it: "level", "mean"), strictly: trec_eval's
/// `atof` would read `2x` as 2 and `x` as 0.
pub(crate) fn number(field: &[u8], what: &str, source: &str, line: u64) -> Result<f64> {
    match parse_score(field) {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Error::format(
            source,
            line,
            format!("{what} '{}' is not a finite number", show(field)),
        )),
    }
}
