//! Credibility judgments: the second judgment file of the relevance-and-credibility
//! measures (`nlre`, `ngre`, `nwcs`, `cam`, `wham`; `metrics/credibility.rs`). Same
//! four-column shape as qrels (`query 0 document label`); a label is a credibility grade
//! on a scale of whole numbers from 0 (not credible at all) up.

use std::path::Path;

use crate::error::{show, Error, Result};
use crate::qrels::Qrels;

/// Read credibility judgments from a qrels-shaped file (any format qrels take, chosen
/// by the file name): malformed lines are refused as in qrels, and a label outside
/// the scale (below 0) is refused naming the file and line.
pub fn read_credibility(path: &Path) -> Result<Qrels> {
    let cred = crate::formats::read_qrels(path, None, None)?;
    if let Err(e) = check_scale(&cred) {
        // the line, for a text file (the reader keeps no line numbers): found again
        let name = path.display().to_string();
        if let Ok(text) = std::fs::read(path) {
            for (n, line) in text.split(|&b| b == b'\n').enumerate() {
                let label = line
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|f| !f.is_empty())
                    .nth(3)
                    .and_then(|f| std::str::from_utf8(f).ok())
                    .and_then(|f| f.parse::<i64>().ok());
                if let Some(l) = label.filter(|&l| l < 0) {
                    return Err(Error::format(&name, n as u64 + 1, out_of_scale(l)));
                }
            }
        }
        return Err(match e {
            Error::Input(m) => Error::Input(format!("{name}: {m}")),
            e => e,
        });
    }
    Ok(cred)
}

fn out_of_scale(label: i64) -> String {
    format!(
        "credibility label {label} is outside the credibility scale (whole numbers from 0, \
         not credible, up); a credibility file has no 'unjudged' label: leave the \
         document out"
    )
}

/// Every credibility label lies on the scale (0 or more).
fn check_scale(cred: &Qrels) -> Result<()> {
    for q in cred.queries() {
        if let Some((doc, l)) = q.iter().find(|&(_, l)| l < 0) {
            return Err(Error::Input(format!(
                "query '{}', document '{}': {}",
                show(q.id()),
                show(doc),
                out_of_scale(l)
            )));
        }
    }
    Ok(())
}

/// The credibility judgments can serve the qrels: labels on the scale, and every
/// judged query of the qrels judged for credibility too (a query without credibility
/// labels would score as if nothing were credible).
pub(super) fn check(qrels: &Qrels, cred: &Qrels) -> Result<()> {
    check_scale(cred)?;
    if let Some(q) = qrels
        .queries()
        .iter()
        .find(|q| cred.query(q.id()).is_none())
    {
        return Err(Error::Input(format!(
            "query '{}' is judged in the qrels but has no credibility judgment; the \
             credibility measures need both for every query",
            show(q.id())
        )));
    }
    Ok(())
}
