//! Evaluation results: a per-query table, the `all` row (each family's
//! [`Statistic`] of its column: `Family::summary_statistic`), other statistics of the
//! columns, and trec_eval's text output.

use std::io::Write;

use crate::measure::{Family, MeasureSet};
use crate::stats::Statistic;

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
    /// The values are z-scores (`-Z`, [`crate::zscore`]).
    zscores: bool,
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
        // One column at a time, in query order: Statistic::of keeps trec_eval's exact
        // arithmetic (sum in query order, divided once).
        let mut column = Vec::with_capacity(nq);
        let summary = columns
            .iter()
            .enumerate()
            .map(|(c, col)| match col.family.summary_statistic() {
                Some(stat) => {
                    column.clear();
                    column.extend((0..nq).map(|q| values[q * ncols + c]));
                    stat.of(&column)
                }
                None => f64::NAN,
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
            zscores: false,
        }
    }

    /// Results put together from rows evaluated apart (parts of a qrels split by query,
    /// as `irmetrics.spark` evaluates them): `values` row-major, one row per id, every
    /// column of `measures`; the rows are put in id order (the qrels' order) and the
    /// `all` row computed from them as `Results::new` does, so the numbers are those
    /// of one evaluation of the whole. A repeated id is refused.
    pub fn from_parts(
        measures: MeasureSet,
        query_ids: Vec<Box<[u8]>>,
        values: &[f64],
        runid: Vec<u8>,
    ) -> crate::Result<Results> {
        let ncols = measures.width();
        if values.len() != query_ids.len() * ncols {
            return Err(crate::Error::Input(format!(
                "{} values for {} queries of {ncols} columns",
                values.len(),
                query_ids.len()
            )));
        }
        let mut order: Vec<usize> = (0..query_ids.len()).collect();
        order.sort_unstable_by(|&a, &b| query_ids[a].cmp(&query_ids[b]));
        if let Some(w) = order
            .windows(2)
            .find(|w| query_ids[w[0]] == query_ids[w[1]])
        {
            return Err(crate::Error::Input(format!(
                "query '{}' was evaluated in more than one part",
                String::from_utf8_lossy(&query_ids[w[0]])
            )));
        }
        let rows = order
            .iter()
            .map(|&q| Row {
                values: values[q * ncols..(q + 1) * ncols].to_vec(),
                relstring: None,
            })
            .collect();
        let ids = order.iter().map(|&q| query_ids[q].clone()).collect();
        Ok(Results::new(measures, ids, rows, runid))
    }

    /// The same results with z-scores for values and `all` row (laid out as `values`).
    pub(crate) fn into_zscores(mut self, values: Vec<f64>, summary: Vec<f64>) -> Results {
        self.values = values;
        self.summary = summary;
        self.zscores = true;
        self
    }

    /// Whether the values are z-scores (`-Z`).
    pub fn is_zscores(&self) -> bool {
        self.zscores
    }

    /// A column's name as trec_eval prints it: with `-Z`, `Z` before the name of every
    /// value turned into a z-score (not runid, not relstring).
    pub fn printed_name(&self, col: &Column) -> String {
        if self.zscored(col) {
            format!("Z{}", col.name)
        } else {
            col.name.clone()
        }
    }

    fn zscored(&self, col: &Column) -> bool {
        self.zscores && !matches!(col.family, Family::RunId | Family::Relstring)
    }

    /// The `%-22s\t` start of a column's trec_eval lines (`Z%-22s\t` for a z-score).
    fn line_prefix(&self, col: &Column) -> String {
        let z = if self.zscored(col) { "Z" } else { "" };
        format!("{z}{:<22}\t", col.name)
    }

    /// Whether a column prints as a count (`%ld`): counts that are not z-scores.
    pub fn prints_integer(&self, col: &Column) -> bool {
        col.family.is_integer() && !self.zscored(col)
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

    /// A statistic of a column's per-query values, in query order (median, standard
    /// deviation, ...): the one way to get an aggregate of a column other than its `all`
    /// value. `Statistic::Mean` of a mean family equals its `all` value bit for bit.
    pub fn column_statistic(&self, col: usize, how: Statistic) -> f64 {
        how.of(&self.column_values(col))
    }

    /// Whether a column has per-query values to aggregate: not the summary-only columns
    /// (runid, num_q, gm_map, gm_bpref) nor relstring.
    pub fn has_per_query_values(col: &Column) -> bool {
        Self::is_per_query(col) && col.family != Family::Relstring
    }

    /// For each column, a statistic of its per-query values: `how` as
    /// [`column_statistic`](Self::column_statistic) gives it, NaN for the columns without
    /// per-query values ([`has_per_query_values`](Self::has_per_query_values): runid,
    /// num_q, gm_map, gm_bpref, relstring). `Statistic::Mean` gives exactly the `all`
    /// row instead ([`summary`](Self::summary) of every column: each family's own
    /// statistic, so num_ret's sum, gm_map's geometric mean, num_q's count, and the
    /// trec_eval corrections such as num_rel under `complete`).
    pub fn summaries(&self, how: Statistic) -> Vec<f64> {
        if how == Statistic::Mean {
            return self.summary.clone();
        }
        self.columns
            .iter()
            .enumerate()
            .map(|(c, col)| {
                if Self::has_per_query_values(col) {
                    self.column_statistic(c, how)
                } else {
                    f64::NAN
                }
            })
            .collect()
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

    /// The columns under the names they were asked for: each request naming one value
    /// keeps its spelling (`nDCG@10`), a request naming several (`P.5,10`, `all_trec`)
    /// gives canonical names; each column once, in request order.
    pub fn requested_columns(&self) -> Vec<(String, usize)> {
        let cols = self.columns();
        let mut offsets = Vec::new();
        let mut at = 0;
        for m in self.measures().measures() {
            offsets.push(at);
            at += m.width();
        }
        let mut out: Vec<(String, usize)> = Vec::new();
        for (name, picks) in self.measures().requests() {
            let idx: Vec<usize> = picks.iter().map(|&(m, c)| offsets[m] + c).collect();
            if idx.len() == 1 {
                out.push((name.clone(), idx[0]));
            } else {
                out.extend(idx.iter().map(|&i| (cols[i].name.clone(), i)));
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|(k, _)| seen.insert(k.clone()));
        out
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
        if per_query {
            self.write_trec_queries(w)?;
        }
        let mut line = Vec::with_capacity(64);
        if summary {
            for (c, col) in self.columns.iter().enumerate() {
                line.clear();
                match col.family {
                    Family::Relstring => continue,
                    Family::RunId => {
                        write!(line, "{}all\t", self.line_prefix(col))?;
                        line.extend_from_slice(&self.runid);
                    }
                    _ => {
                        write!(line, "{}all\t", self.line_prefix(col))?;
                        write_value(&mut line, self.prints_integer(col), self.summary[c])?;
                    }
                }
                line.push(b'\n');
                w.write_all(&line)?;
            }
        }
        Ok(())
    }

    /// The per-query lines of [`Results::write_trec`], formatted in parallel chunks of
    /// queries and written in query order.
    fn write_trec_queries(&self, w: &mut impl Write) -> std::io::Result<()> {
        // each printed column's name, padded as trec_eval's `%-22s\t`, made once
        let prefixes: Vec<(usize, Vec<u8>)> = (self.columns.iter().enumerate())
            .filter(|(_, col)| Self::is_per_query(col))
            .map(|(c, col)| (c, self.line_prefix(col).into_bytes()))
            .collect();
        crate::parallel::write_in_chunks(
            self.query_ids.len(),
            Self::queries_per_chunk(prefixes.len()),
            |queries, buf| {
                for q in queries {
                    self.trec_query_lines(q, &prefixes, buf);
                }
                Ok(())
            },
            |buf| w.write_all(buf),
        )
    }

    /// Queries per chunk of formatted output: about 4,096 values.
    pub(crate) fn queries_per_chunk(columns: usize) -> usize {
        (4096 / columns.max(1)).clamp(16, 1024)
    }

    /// The lines of query `q`: `name\tqid\tvalue`, one per printed column.
    fn trec_query_lines(&self, q: usize, prefixes: &[(usize, Vec<u8>)], buf: &mut Vec<u8>) {
        let qid = &self.query_ids[q];
        for (c, prefix) in prefixes {
            let col = &self.columns[*c];
            buf.extend_from_slice(prefix);
            buf.extend_from_slice(qid);
            buf.push(b'\t');
            if col.family == Family::Relstring {
                buf.push(b'\'');
                buf.extend_from_slice(self.relstrings.get(q).map_or("", |s| s).as_bytes());
                buf.push(b'\'');
            } else {
                // writing to a Vec cannot fail
                let _ = write_value(buf, self.prints_integer(col), self.value(q, *c));
            }
            buf.push(b'\n');
        }
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
fn write_value(w: &mut Vec<u8>, integer: bool, v: f64) -> std::io::Result<()> {
    if integer {
        if !push_count(w, v) {
            write!(w, "{}", v as i64)?;
        }
    } else if v.is_nan() {
        write!(w, "{:>6}", "-nan")?;
    } else if !push_fixed4(w, v) {
        write!(w, "{v:6.4}")?;
    }
    Ok(())
}

/// `%6.4f` of a value in [0, 1e6), written directly; false (nothing written) for any
/// other value and for a product on a tie, which `format!` then writes. Hand-written
/// because formatting is most of writing per-query output, and it is exact: rounding
/// is monotonic and every `k + 1/2` below 1e10 is a double, so the computed `v * 1e4`
/// lies on the same side of each half as the exact product, or on it (declined).
/// Values below 1e6 print at least 6 characters: no padding.
#[inline]
fn push_fixed4(w: &mut Vec<u8>, v: f64) -> bool {
    if !(0.0..1e6).contains(&v) || v.is_sign_negative() {
        return false;
    }
    let r = v * 1e4;
    // r is below 1e10 (< 2^53): truncation is the floor (no call to `floor`, which the
    // baseline x86-64 target makes a function), and whole and r - whole are exact
    let whole = r as u64;
    let frac = r - whole as f64;
    if frac == 0.5 {
        return false;
    }
    let n = whole + u64::from(frac > 0.5);
    let (int, dec) = (n / 10_000, n % 10_000);
    // the text made right-aligned in one buffer and appended with one copy
    let mut text = [0u8; 16];
    text[11..].copy_from_slice(&[
        b'.',
        b'0' + (dec / 1000) as u8,
        b'0' + (dec / 100 % 10) as u8,
        b'0' + (dec / 10 % 10) as u8,
        b'0' + (dec % 10) as u8,
    ]);
    let start = push_digits(&mut text[..11], int);
    w.extend_from_slice(&text[start..]);
    true
}

/// `%ld` of a count (a whole number in [0, 1e15)), written directly; false (nothing
/// written) for any other value, which `format!` then writes.
#[inline]
fn push_count(w: &mut Vec<u8>, v: f64) -> bool {
    if !(0.0..1e15).contains(&v) || v.is_sign_negative() {
        return false;
    }
    let mut text = [0u8; 16];
    let start = push_digits(&mut text, v as u64);
    w.extend_from_slice(&text[start..]);
    true
}

/// The decimal digits of `x` at the end of `text` (long enough for them); where they
/// start.
#[inline(always)]
fn push_digits(text: &mut [u8], mut x: u64) -> usize {
    let mut i = text.len();
    loop {
        i -= 1;
        text[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            return i;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::Statistic;
    use crate::{evaluate, Options, Qrels, Results, Run};

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

    /// Per-query output over many windows of chunks, on several threads, line for line
    /// as trec_eval prints it (`%-22s\t%s\t%6.4f`, `%ld` for counts, relstring quoted).
    #[test]
    fn per_query_output_in_parallel_windows_keeps_query_order() {
        let (mut qtext, mut rtext) = (String::new(), String::new());
        for q in 0..10_000 {
            for d in 0..(q % 7 + 1) {
                qtext.push_str(&format!("q{q} 0 d{d} {}\n", (q + d) % 3));
                rtext.push_str(&format!("q{q} Q0 d{} 1 {}.{d}7 r\n", d * 3 % 8, q % 5));
            }
        }
        let qrels = Qrels::from_bytes(qtext.as_bytes(), "qrels").unwrap();
        let run = Run::from_bytes(rtext.as_bytes(), "run").unwrap();
        let measures = ["num_ret", "map", "P.1,5", "ndcg", "relstring", "runid"];
        let res = evaluate(&qrels, &run, &measures, Options::default()).unwrap();
        let mut expected = Vec::new();
        for (q, qid) in res.query_ids().iter().enumerate() {
            let qid = std::str::from_utf8(qid).unwrap();
            for (c, col) in res.columns().iter().enumerate() {
                let value = match col.family {
                    crate::measure::Family::RunId => continue,
                    crate::measure::Family::Relstring => {
                        format!("'{}'", res.relstring(q).unwrap())
                    }
                    f if f.is_integer() => format!("{}", res.value(q, c) as i64),
                    _ => format!("{:6.4}", res.value(q, c)),
                };
                expected.extend(format!("{:<22}\t{qid}\t{value}\n", col.name).bytes());
            }
        }
        for threads in [1, 3] {
            let got = crate::parallel::with_threads(threads, || res.to_trec(true, false));
            assert!(got == expected, "{threads} threads");
        }
    }

    /// Rows evaluated apart and given in another order make the same results as one
    /// evaluation (the `all` row summed in query order); a query given twice is refused.
    #[test]
    fn from_parts_puts_rows_in_query_order() {
        let qrels = Qrels::from_bytes(
            b"q1 0 a 1\nq1 0 b 0\nq10 0 c 1\nq2 0 d 1\nq2 0 e 2\n",
            "qrels",
        )
        .unwrap();
        let run = Run::from_bytes(
            b"q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq10 Q0 c 1 1 r\nq2 Q0 e 1 0.3 r\nq2 Q0 x 2 0.2 r\n",
            "run",
        )
        .unwrap();
        let measures = ["num_q", "num_rel", "map", "gm_map", "ndcg_cut.2"];
        let whole = evaluate(&qrels, &run, &measures, Options::default()).unwrap();
        let ncols = whole.columns().len();
        let (mut ids, mut values) = (Vec::new(), Vec::new());
        for q in (0..whole.num_queries()).rev() {
            ids.push(whole.query_ids()[q].clone());
            values.extend((0..ncols).map(|c| whole.value(q, c)));
        }
        let parts = Results::from_parts(whole.measures().clone(), ids.clone(), &values, Vec::new())
            .unwrap();
        assert_eq!(parts.query_ids(), whole.query_ids());
        for c in 0..ncols {
            assert_eq!(parts.summary(c).to_bits(), whole.summary(c).to_bits());
        }
        ids[1] = ids[0].clone();
        assert!(Results::from_parts(whole.measures().clone(), ids, &values, Vec::new()).is_err());
    }

    #[test]
    fn summaries_of_every_column() {
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
        let measures = [
            "runid",
            "num_q",
            "num_ret",
            "map",
            "gm_map",
            "P.1",
            "relstring",
        ];
        let res = evaluate(&qrels, &run, &measures, Options::default()).unwrap();
        let names: Vec<&str> = res.columns().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "runid",
                "num_q",
                "num_ret",
                "map",
                "gm_map",
                "P_1",
                "relstring"
            ]
        );
        // Per query (q1, q2, q3): num_ret 2, 1, 1; AP 1/2, 1, 0; P_1 0, 1, 0.
        // Reference values from numpy 2.4.6 / scipy 1.17.1:
        //   scipy.stats.gmean([0.5, 1.0, 1e-5]) = 0.017099759466766968 (AP, 1e-5 floor)
        //   scipy.stats.gmean([2, 1, 1]) = 1.2599210498948732
        //   np.std([0.5, 1, 0], ddof=1) = 0.5, np.std([2, 1, 1], ddof=1) =
        //   0.5773502691896257, np.std([0, 1, 0], ddof=1) = 0.5773502691896258
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-15 * b.abs().max(1.0);
        // Mean: the `all` row, each family's own statistic (num_q counts, num_ret sums,
        // gm_map is the geometric mean)
        let all = res.summaries(Statistic::Mean);
        assert!(all[0].is_nan() && all[6].is_nan());
        assert_eq!(&all[1..4], [3.0, 4.0, 0.5]);
        assert!(close(all[4], 0.017099759466766968));
        assert!(close(all[5], 1.0 / 3.0));
        let all_bits: Vec<u64> = all.iter().map(|v| v.to_bits()).collect();
        let row: Vec<u64> = (0..7).map(|c| res.summary(c).to_bits()).collect();
        assert_eq!(all_bits, row);
        // other statistics: of the per-query values; NaN without them (runid, num_q,
        // gm_map, relstring)
        let nan_cols = |v: &[f64]| [0, 1, 4, 6].iter().all(|&c| v[c].is_nan());
        let median = res.summaries(Statistic::Median);
        assert!(nan_cols(&median));
        assert_eq!([median[2], median[3], median[5]], [1.0, 0.5, 0.0]);
        let std = res.summaries(Statistic::Std);
        assert!(nan_cols(&std));
        assert!(close(std[2], 0.5773502691896257));
        assert!(close(std[3], 0.5));
        assert!(close(std[5], 0.5773502691896258));
        let gmean = res.summaries(Statistic::GeoMean);
        assert!(nan_cols(&gmean));
        assert!(close(gmean[2], 1.2599210498948732));
        assert!(close(gmean[3], 0.017099759466766968));
        // the geometric mean of AP is gm_map's `all` value, bit for bit
        assert_eq!(gmean[3].to_bits(), res.summary(4).to_bits());
        assert_eq!(res.summaries(Statistic::Sum)[2], 4.0);
        assert_eq!(res.summaries(Statistic::Count)[3], 3.0);
    }

    use proptest::prelude::*;

    proptest::proptest! {
        /// The direct `%6.4f` writer agrees with the formatter (whose exact rounding is
        /// printf's, checked above) wherever it writes, and declines near ties.
        #[test]
        fn fixed4_agrees_with_format(
            v in proptest::prop_oneof![
                0.0f64..1.0,
                0.0f64..2e6,
                (0u64..2_000_000).prop_map(|k| k as f64 / 1e4 + 5e-5),
                (0u64..2_000_000).prop_map(|k| (2 * k + 1) as f64 / 2e4),
                proptest::num::f64::ANY,
            ]
        ) {
            let mut got = Vec::new();
            if super::push_fixed4(&mut got, v) {
                proptest::prop_assert_eq!(String::from_utf8(got).unwrap(), format!("{v:6.4}"));
            }
        }
    }

    proptest::proptest! {
        /// The direct `%ld` writer agrees with the formatter of the truncated value
        /// wherever it writes, and writes every whole number in [0, 1e15).
        #[test]
        fn counts_agree_with_format(
            v in proptest::prop_oneof![
                (0u64..1000).prop_map(|k| k as f64),
                (0u64..1_000_000_000_000_000).prop_map(|k| k as f64),
                proptest::num::f64::ANY,
            ]
        ) {
            let mut got = Vec::new();
            let wrote = super::push_count(&mut got, v);
            if wrote {
                proptest::prop_assert_eq!(String::from_utf8(got).unwrap(), format!("{}", v as i64));
            }
            proptest::prop_assert_eq!(wrote, (0.0..1e15).contains(&v) && !v.is_sign_negative());
        }
    }

    #[test]
    fn fixed4_writes_the_usual_values_and_declines_the_rest() {
        let mut w = Vec::new();
        for (v, text) in [
            (0.0, "0.0000"),
            (1.0, "1.0000"),
            (0.123_44, "0.1234"),
            (12.5, "12.5000"),
        ] {
            w.clear();
            assert!(super::push_fixed4(&mut w, v));
            assert_eq!(w, text.as_bytes());
        }
        for v in [-0.0, -0.5, 0.000_05, 0.031_25, 1e6, f64::INFINITY, f64::NAN] {
            assert!(!super::push_fixed4(&mut w, v), "{v}");
        }
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
