//! Z-scores (trec_eval's `-Z FILE`): each per-query value becomes
//! `(value - mean) / stddev` with the mean and standard deviation of that measure on
//! that query from a table (`qid measure mean stddev` lines, e.g. over a pool of
//! systems), and the `all` row is formed from the z-scores as it is from the values
//! (mean; sum for counts; num_q counts the queries).
//!
//! Where trec_eval writes a silent -1000000 (a query or measure missing from the table,
//! a deviation of 0 with a value other than the mean), irmetrics stops with an error
//! naming the table and the query, measure or line, with one exception kept for
//! trec_eval's numbers: gm_map and gm_bpref have no per-query value to print, and
//! trec_eval's own z-score table leaves them out; without a line they get trec_eval's
//! marker, so their `all` value is exp(-1000000) = 0, as trec_eval prints.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{show, Error, Result};
use crate::measure::Family;
use crate::results::{Column, Results};
use crate::stats::MIN_GEO_MEAN;
use crate::trec::lines::{number, split_lines, Layout};

/// trec_eval's value for a z-score it cannot compute.
const MISSING: f64 = -1_000_000.0;

/// A table of per-query means and standard deviations, by measure.
#[derive(Clone, Debug)]
pub struct ZScores {
    source: String,
    /// query -> measure -> its line.
    table: HashMap<Box<[u8]>, Measures>,
}

/// One query's lines, by measure name.
type Measures = HashMap<Box<[u8]>, Entry>;

/// One line of the table.
#[derive(Clone, Copy, Debug)]
struct Entry {
    mean: f64,
    sd: f64,
    line: u64,
}

const ZSCORES: Layout = Layout {
    what: "qid measure mean stddev",
    comments: false,
};

impl ZScores {
    /// Read a z-score table file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<ZScores> {
        let (data, source) = crate::trec::lines::read(path.as_ref())?;
        ZScores::from_bytes(&data, &source)
    }

    /// Parse a z-score table; `source` names it in errors.
    pub fn from_bytes(data: &[u8], source: &str) -> Result<ZScores> {
        let mut table: HashMap<Box<[u8]>, Measures> = HashMap::new();
        for l in split_lines::<4>(data, source, &ZSCORES)? {
            let [q, m, mean, sd] = l.fields;
            let entry = Entry {
                mean: number(mean, "mean", source, l.number)?,
                sd: number(sd, "standard deviation", source, l.number)?,
                line: l.number,
            };
            if let Some(first) = table.entry(q.into()).or_default().insert(m.into(), entry) {
                return Err(Error::format(
                    source,
                    l.number,
                    format!(
                        "measure '{}' of query '{}' appears twice (first at line {})",
                        show(m),
                        show(q),
                        first.line
                    ),
                ));
            }
        }
        Ok(ZScores {
            source: source.to_string(),
            table,
        })
    }

    /// The results with every per-query value replaced by its z-score and the `all`
    /// row formed from those, except, when the results were made with `complete` (-c),
    /// num_rel's: trec_eval 10 prints the raw count of documents with label >= 1 there
    /// (its -c correction replaces the accumulated z-scores).
    pub fn apply(&self, res: &Results, complete: bool) -> Result<Results> {
        let ncols = res.columns().len();
        let nq = res.num_queries();
        let mut values = vec![0.0; nq * ncols];
        let mut summary = vec![f64::NAN; ncols];
        for (c, col) in res.columns().iter().enumerate() {
            let geometric = matches!(col.family, Family::GmMap | Family::GmBpref);
            let skip = matches!(col.family, Family::RunId | Family::Relstring | Family::NumQ);
            let mut z = Vec::with_capacity(nq);
            for (q, qid) in res.query_ids().iter().enumerate() {
                let v = res.value(q, c);
                let entry = (self.table.get(&**qid)).and_then(|m| m.get(col.name.as_bytes()));
                z.push(match entry {
                    _ if skip => v,
                    // trec_eval's per-query value of a geometric mean is its logarithm
                    Some(&e) if geometric => self.convert(v.max(MIN_GEO_MEAN).ln(), e, qid, col)?,
                    None if geometric => MISSING,
                    Some(&e) => self.convert(v, e, qid, col)?,
                    None => return Err(self.missing(qid, col)),
                });
            }
            summary[c] = if complete && col.name == Family::NumRel.name() {
                res.summary(c)
            } else if geometric {
                (z.iter().sum::<f64>() / nq as f64).exp()
            } else {
                match col.family.summary_statistic() {
                    Some(stat) if !skip || col.family == Family::NumQ => stat.of(&z),
                    _ => f64::NAN,
                }
            };
            for (q, x) in z.into_iter().enumerate() {
                values[q * ncols + c] = x;
            }
        }
        Ok(res.clone().into_zscores(values, summary))
    }

    fn missing(&self, qid: &[u8], col: &Column) -> Error {
        let what = if self.table.contains_key(qid) {
            format!(
                "no line for measure '{}' of query '{}'",
                col.name,
                show(qid)
            )
        } else {
            format!("no line for query '{}'", show(qid))
        };
        Error::Input(format!(
            "{}: {what}; -Z needs 'qid measure mean stddev' for every value printed per \
             query (trec_eval would print -1000000)",
            self.source
        ))
    }

    /// `(v - mean) / sd`; with a deviation of 0, 0 for the mean itself, else an error.
    fn convert(&self, v: f64, e: Entry, qid: &[u8], col: &Column) -> Result<f64> {
        if e.sd != 0.0 {
            Ok((v - e.mean) / e.sd)
        } else if v == e.mean {
            Ok(0.0)
        } else {
            Err(Error::format(
                &self.source,
                e.line,
                format!(
                    "measure '{}' of query '{}' has standard deviation 0 and mean {}, but its \
                     value is {v}: its z-score is undefined (trec_eval would print -1000000)",
                    col.name,
                    show(qid),
                    e.mean
                ),
            ))
        }
    }
}
