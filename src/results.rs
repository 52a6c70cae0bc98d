//! Evaluation results: a per-query table, the `all` row, and trec_eval's text output.

use std::io::Write;

use crate::measure::{Aggregate, Family, MeasureSet};

/// trec_eval's floor for geometric means.
const MIN_GEO_MEAN: f64 = 0.00001;

/// One query's values, in the order of the measures' columns.
pub(crate) struct Row {
    pub(crate) values: Vec<f64>,
    pub(crate) relstring: Option<String>,
}

/// One output column (one value per query).
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Canonical name (`P_10`, `ndcg_cut_10`, `map`).
    pub name: String,
    /// The family it belongs to.
    pub family: Family,
}

/// The values of one evaluation.
#[derive(Clone, Debug)]
pub struct Results {
    measures: MeasureSet,
    columns: Vec<Column>,
    query_ids: Vec<Box<[u8]>>,
    /// Row-major: query `q`, column `c` at `q * ncols + c`.
    values: Vec<f64>,
    relstrings: Vec<String>,
    summary: Vec<f64>,
    runid: Vec<u8>,
}

impl Results {
    pub(crate) fn new(
        measures: MeasureSet,
        query_ids: Vec<Box<[u8]>>,
        rows: Vec<Row>,
        runid: Vec<u8>,
    ) -> Results {
        let columns: Vec<Column> = measures
            .measures()
            .iter()
            .flat_map(|m| {
                m.column_names().into_iter().map(|name| Column {
                    name,
                    family: m.family,
                })
            })
            .collect();
        let ncols = columns.len();
        let mut values = Vec::with_capacity(rows.len() * ncols);
        let mut relstrings = Vec::new();
        for r in rows {
            values.extend_from_slice(&r.values);
            if let Some(s) = r.relstring {
                relstrings.push(s);
            }
        }
        let nq = query_ids.len();
        let summary = columns
            .iter()
            .enumerate()
            .map(|(c, col)| {
                let vals = (0..nq).map(|q| values[q * ncols + c]);
                // Sum in query order, divide once: trec_eval's exact arithmetic.
                match col.family.aggregate() {
                    Aggregate::Mean => vals.sum::<f64>() / nq as f64,
                    Aggregate::GeoMean => {
                        (vals.map(|v| v.max(MIN_GEO_MEAN).ln()).sum::<f64>() / nq as f64).exp()
                    }
                    Aggregate::Sum => vals.sum(),
                    Aggregate::NumQ => nq as f64,
                    Aggregate::None | Aggregate::RunId => f64::NAN,
                }
            })
            .collect();
        Results {
            measures,
            columns,
            query_ids,
            values,
            relstrings,
            summary,
            runid,
        }
    }

    /// Replace the `all` value of a family's column (for trec_eval compatibility).
    pub(crate) fn set_summary(&mut self, family: Family, value: f64) {
        let measures = self.measures.measures();
        let mut col = 0;
        for m in measures {
            if m.family == family && m.rel_level.is_none() {
                self.summary[col] = value;
            }
            col += m.width();
        }
    }

    /// The measures evaluated.
    pub fn measures(&self) -> &MeasureSet {
        &self.measures
    }

    /// The output columns, in trec_eval's order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The evaluated query ids, in byte order.
    pub fn query_ids(&self) -> &[Box<[u8]>] {
        &self.query_ids
    }

    /// Number of evaluated queries.
    pub fn num_queries(&self) -> usize {
        self.query_ids.len()
    }

    /// Value of column `col` for query number `q`.
    pub fn value(&self, q: usize, col: usize) -> f64 {
        self.values[q * self.columns.len() + col]
    }

    /// All per-query values of a column, in query order.
    pub fn column_values(&self, col: usize) -> Vec<f64> {
        let n = self.columns.len();
        (0..self.query_ids.len())
            .map(|q| self.values[q * n + col])
            .collect()
    }

    /// The `all` value of a column (NaN for runid and relstring).
    pub fn summary(&self, col: usize) -> f64 {
        self.summary[col]
    }

    /// The `all` value of a column by canonical name.
    pub fn summary_by_name(&self, name: &str) -> Option<f64> {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .map(|i| self.summary[i])
    }

    /// A statistic of a column's per-query values (median, standard deviation, ...).
    pub fn column_statistic(&self, col: usize, how: crate::stats::Statistic) -> f64 {
        crate::stats::aggregate(&self.column_values(col), how)
    }

    /// Seeded percentile-bootstrap confidence interval for a column's mean.
    pub fn bootstrap_ci(
        &self,
        col: usize,
        confidence: f64,
        resamples: usize,
        seed: u64,
    ) -> crate::error::Result<(f64, f64)> {
        crate::stats::bootstrap_ci(&self.column_values(col), confidence, resamples, seed)
    }

    /// The relstring of query number `q`, if relstring was requested.
    pub fn relstring(&self, q: usize) -> Option<&str> {
        self.relstrings.get(q).map(|s| s.as_str())
    }

    /// The run tag.
    pub fn runid(&self) -> &[u8] {
        &self.runid
    }

    /// Whether a column is printed per query (runid, num_q and the geometric means are
    /// summary-only in trec_eval).
    pub fn is_per_query(col: &Column) -> bool {
        !matches!(
            col.family,
            Family::RunId | Family::NumQ | Family::GmMap | Family::GmBpref
        )
    }

    /// trec_eval's output, byte for byte: per-query lines (if `per_query`) then the
    /// `all` lines (if `summary`).
    pub fn write_trec(
        &self,
        w: &mut impl Write,
        per_query: bool,
        summary: bool,
    ) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(64);
        if per_query {
            for (q, qid) in self.query_ids.iter().enumerate() {
                for (c, col) in self.columns.iter().enumerate() {
                    if !Self::is_per_query(col) {
                        continue;
                    }
                    line.clear();
                    write!(line, "{:<22}\t", col.name)?;
                    line.extend_from_slice(qid);
                    line.push(b'\t');
                    if col.family == Family::Relstring {
                        write!(line, "'{}'", self.relstrings.get(q).map_or("", |s| s))?;
                    } else {
                        write_value(&mut line, col.family, self.value(q, c))?;
                    }
                    line.push(b'\n');
                    w.write_all(&line)?;
                }
            }
        }
        if summary {
            for (c, col) in self.columns.iter().enumerate() {
                line.clear();
                match col.family {
                    Family::Relstring => continue,
                    Family::RunId => {
                        write!(line, "{:<22}\tall\t", col.name)?;
                        line.extend_from_slice(&self.runid);
                    }
                    f => {
                        write!(line, "{:<22}\tall\t", col.name)?;
                        write_value(&mut line, f, self.summary[c])?;
                    }
                }
                line.push(b'\n');
                w.write_all(&line)?;
            }
        }
        Ok(())
    }

    /// trec_eval's output as a byte vector.
    pub fn to_trec(&self, per_query: bool, summary: bool) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail.
        let _ = self.write_trec(&mut out, per_query, summary);
        out
    }
}

/// `%ld` for counts, `%6.4f` for everything else (NaN printed as glibc does: `-nan`).
fn write_value(w: &mut Vec<u8>, f: Family, v: f64) -> std::io::Result<()> {
    if f.is_integer() {
        write!(w, "{}", v as i64)
    } else if v.is_nan() {
        write!(w, "{:>6}", "-nan")
    } else {
        write!(w, "{v:6.4}")
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::Statistic;
    use crate::{evaluate, Options, Qrels, Run};

    #[test]
    fn column_statistics_and_bootstrap() {
        let qrels = Qrels::from_bytes(
            b"q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq3 0 d 1\nq3 0 e 1\n",
            "qrels",
        )
        .unwrap();
        let run = Run::from_bytes(
            b"q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq2 Q0 c 1 1 r\nq3 Q0 x 1 1 r\n",
            "run",
        )
        .unwrap();
        let res = evaluate(&qrels, &run, &["map", "gm_map"], Options::default()).unwrap();
        // AP per query: 1/2, 1, 0
        assert_eq!(res.column_values(0), [0.5, 1.0, 0.0]);
        assert_eq!(res.column_statistic(0, Statistic::Median), 0.5);
        assert_eq!(res.column_statistic(0, Statistic::Std), 0.5);
        // the geometric mean statistic is trec_eval's gm_map
        let gm = res.column_statistic(0, Statistic::GeoMean);
        assert!((gm - res.summary(1)).abs() < 1e-15);
        let ci = res.bootstrap_ci(0, 0.9, 500, 11).unwrap();
        assert_eq!(ci, res.bootstrap_ci(0, 0.9, 500, 11).unwrap());
        assert!(ci.0 >= 0.0 && ci.1 <= 1.0 && ci.0 <= ci.1);
    }

    #[test]
    fn rust_rounding_matches_printf() {
        // Exact binary ties round to even in C's printf; Rust must agree.
        assert_eq!(format!("{:6.4}", 0.03125f64), "0.0312");
        assert_eq!(format!("{:6.4}", 0.09375f64), "0.0938");
        assert_eq!(format!("{:6.4}", 0.5f64), "0.5000");
        assert_eq!(format!("{:6.4}", -369.0f64), "-369.0000");
        assert_eq!(format!("{:6.4}", f64::INFINITY), "   inf");
    }
}
