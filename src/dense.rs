//! Dense batches, the shape ML code holds: a matrix of relevance labels and one of
//! scores, one row per query and one column per candidate document (sklearn's
//! `ndcg_score` / `dcg_score`, torchmetrics' retrieval metrics).
//!
//! Two routes:
//! - [`qrels_and_run`] turns the matrices into [`Qrels`] and a [`Run`], so that every
//!   measure of the engine applies with trec_eval's definitions: row `i` is query `i`,
//!   column `j` document `j`, every cell a judgment (label 0: judged non-relevant).
//!   Ids are zero-padded numbers, so query order is row order and trec_eval's tie rule
//!   (equal scores: the larger document id first) ranks the later column first.
//! - [`dcg_rows`] is sklearn's DCG and nDCG with its conventions: real-valued labels as
//!   gains, discount `1 / log_base(rank + 1)`, and tied scores averaged (the gain of a
//!   group of equal scores spread evenly over its ranks, McSherry and Najork 2008)
//!   unless `ignore_ties`.

use crate::error::{Error, Result, Unit};
use crate::intake::{Grouper, PieceSink, Place, Rows};
use crate::qrels::{Qrels, QrelsBuilder};
use crate::run::Run;

/// A row-major matrix: `values[i * cols + j]` is row `i`, column `j`.
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a> {
    /// The cells, row after row.
    pub values: &'a [f64],
    /// Number of rows (queries).
    pub rows: usize,
    /// Number of columns (documents per query).
    pub cols: usize,
}

impl<'a> Matrix<'a> {
    /// A matrix of `rows` x `cols` over `values`; fails when the sizes disagree.
    pub fn new(values: &'a [f64], rows: usize, cols: usize) -> Result<Matrix<'a>> {
        if rows.checked_mul(cols) != Some(values.len()) {
            return Err(Error::Input(format!(
                "a {rows} x {cols} matrix needs {} values, got {}",
                rows.saturating_mul(cols),
                values.len()
            )));
        }
        Ok(Matrix { values, rows, cols })
    }

    fn row(&self, i: usize) -> &'a [f64] {
        &self.values[i * self.cols..(i + 1) * self.cols]
    }
}

fn same_shape(name: &str, y_true: &Matrix<'_>, y_score: &Matrix<'_>) -> Result<()> {
    if (y_true.rows, y_true.cols) != (y_score.rows, y_score.cols) {
        return Err(Error::Input(format!(
            "{name}: y_true is {} x {} but y_score is {} x {}; they must have the same shape",
            y_true.rows, y_true.cols, y_score.rows, y_score.cols
        )));
    }
    Ok(())
}

/// The first NaN of `m`, as an error naming its cell.
fn refuse_nan(what: &str, m: &Matrix<'_>) -> Result<()> {
    if let Some(at) = m.values.iter().position(|v| v.is_nan()) {
        return Err(Error::Input(format!(
            "{what}[{}, {}] is NaN; every cell must be a number",
            at / m.cols.max(1),
            at % m.cols.max(1)
        )));
    }
    Ok(())
}

/// Zero-padded decimal ids `0..n` of one width: byte order is numeric order.
fn padded_ids(n: usize) -> impl Fn(usize) -> Vec<u8> {
    let width = n.saturating_sub(1).to_string().len();
    move |i| format!("{i:0width$}").into_bytes()
}

/// Qrels and a run from a label matrix and a score matrix of the same shape (see the
/// module's docs for ids and ties). Labels must be whole numbers; NaN is refused in
/// either, naming the cell.
pub fn qrels_and_run(y_true: Matrix<'_>, y_score: Matrix<'_>) -> Result<(Qrels, Run)> {
    same_shape("dense evaluation", &y_true, &y_score)?;
    refuse_nan("y_true", &y_true)?;
    refuse_nan("y_score", &y_score)?;
    if let Some(at) = y_true
        .values
        .iter()
        .position(|v| v.fract() != 0.0 || v.abs() >= 9.0e15)
    {
        return Err(Error::Input(format!(
            "y_true[{}, {}] is {}: measures on judgments need whole-number labels \
             (irmetrics.dense.ndcg_score and dcg_score take any real gains)",
            at / y_true.cols,
            at % y_true.cols,
            y_true.values[at]
        )));
    }
    let qid = padded_ids(y_true.rows);
    let doc = padded_ids(y_true.cols);
    let docs: Vec<Vec<u8>> = (0..y_true.cols).map(&doc).collect();
    let mut qrels = QrelsBuilder::default();
    let mut run = Grouper::new(Place::new("y_score", Unit::Row));
    for i in 0..y_true.rows {
        let q = qid(i);
        let mut labels = Rows::new(&q);
        let mut scores = Rows::new(&q);
        for (j, d) in docs.iter().enumerate() {
            // whole numbers below 2^53 (checked above): exact as integers
            labels.push(d, y_true.row(i)[j] as i64)?;
            scores.push(d, y_score.row(i)[j])?;
        }
        let mark = (i * y_true.cols) as u64;
        qrels.piece(labels, mark)?;
        run.piece(scores, mark)?;
    }
    Ok((qrels.build()?, Run::from_grouper(run, Vec::new())?))
}

/// Which DCG of [`dcg_rows`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dcg {
    /// sklearn's `dcg_score`: the discounted gain itself.
    Dcg,
    /// sklearn's `ndcg_score`: divided by the DCG of the ideal order (0 when that is 0).
    Ndcg,
}

/// sklearn's DCG or nDCG of each row: gains `y_true`, ranked by `y_score` descending,
/// discount `1 / log_base(rank + 1)` for ranks up to `k` (all when None). Tied scores
/// share their group's mean gain over the group's discounts unless `ignore_ties`
/// (then equal scores keep the later column first, as numpy's reversed argsort).
/// nDCG needs non-negative labels (as sklearn); both need more than one column.
pub fn dcg_rows(
    which: Dcg,
    y_true: Matrix<'_>,
    y_score: Matrix<'_>,
    k: Option<usize>,
    log_base: f64,
    ignore_ties: bool,
) -> Result<Vec<f64>> {
    let name = match which {
        Dcg::Dcg => "dcg_score",
        Dcg::Ndcg => "ndcg_score",
    };
    same_shape(name, &y_true, &y_score)?;
    if y_true.cols <= 1 {
        return Err(Error::Input(format!(
            "{name}: computing a DCG is only meaningful with more than one document per \
             query, got {} column(s)",
            y_true.cols
        )));
    }
    if !(log_base > 1.0 && log_base.is_finite()) {
        return Err(Error::Input(format!(
            "{name}: log_base must be a finite number above 1, got {log_base}"
        )));
    }
    if k == Some(0) {
        return Err(Error::Input(format!("{name}: k must be at least 1")));
    }
    refuse_nan("y_true", &y_true)?;
    refuse_nan("y_score", &y_score)?;
    if which == Dcg::Ndcg {
        if let Some(at) = y_true.values.iter().position(|&v| v < 0.0) {
            return Err(Error::Input(format!(
                "ndcg_score: y_true[{}, {}] is {}; nDCG needs non-negative gains",
                at / y_true.cols,
                at % y_true.cols,
                y_true.values[at]
            )));
        }
    }
    // the discounts, as sklearn computes them: 1 / (ln(i + 2) / ln(log_base))
    let ln_base = log_base.ln();
    let discount: Vec<f64> = (0..y_true.cols)
        .map(|i| {
            if k.is_none_or(|k| i < k) {
                1.0 / (((i + 2) as f64).ln() / ln_base)
            } else {
                0.0
            }
        })
        .collect();
    let rows: Vec<usize> = (0..y_true.rows).collect();
    Ok(crate::parallel::map_with(
        &rows,
        || Vec::with_capacity(y_true.cols),
        |order: &mut Vec<usize>, &i| {
            let (t, s) = (y_true.row(i), y_score.row(i));
            let gain = row_dcg(t, s, &discount, ignore_ties, order);
            match which {
                Dcg::Dcg => gain,
                Dcg::Ndcg => {
                    let ideal = row_dcg(t, t, &discount, true, order);
                    if ideal == 0.0 {
                        0.0
                    } else {
                        gain / ideal
                    }
                }
            }
        },
    ))
}

/// One row's DCG (see [`dcg_rows`]); `order` is scratch space.
fn row_dcg(
    gains: &[f64],
    scores: &[f64],
    discount: &[f64],
    ignore_ties: bool,
    order: &mut Vec<usize>,
) -> f64 {
    order.clear();
    order.extend(0..scores.len());
    // descending score; among equal scores the later column first (numpy's stable
    // ascending argsort, reversed); -0.0 equals 0.0 as in numpy's comparisons
    let key = |j: usize| if scores[j] == 0.0 { 0.0 } else { scores[j] };
    order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(b.cmp(&a)));
    if ignore_ties {
        return order
            .iter()
            .zip(discount)
            .map(|(&j, &d)| gains[j] * d)
            .sum();
    }
    let mut total = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        let mean_gain: f64 =
            order[start..end].iter().map(|&j| gains[j]).sum::<f64>() / (end - start) as f64;
        let discounts: f64 = discount[start..end].iter().sum();
        total += mean_gain * discounts;
        start = end;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sklearn's documentation example of `ndcg_score`: true relevance [10, 0, 0, 1, 5]
    /// and scores [.1, .2, .3, 4, 70] give 0.6956940443813076 (dcg_score 9.499457825916874,
    /// computed by sklearn 1.9); with k=1 and the tied scores [1, 0, 0, 0, 1], 0.75
    /// (ties averaged) and 0.5 (ignore_ties).
    #[test]
    fn sklearn_doc_examples() {
        let t = [10.0, 0.0, 0.0, 1.0, 5.0];
        let s = [0.1, 0.2, 0.3, 4.0, 70.0];
        let m = |v: &'static [f64]| Matrix::new(v, 1, 5).unwrap();
        let t: &'static [f64] = Box::leak(Box::new(t));
        let s: &'static [f64] = Box::leak(Box::new(s));
        let nd = dcg_rows(Dcg::Ndcg, m(t), m(s), None, 2.0, false).unwrap();
        assert!((nd[0] - 0.695_694_044_381_307_6).abs() < 1e-15, "{nd:?}");
        let d = dcg_rows(Dcg::Dcg, m(t), m(s), None, 2.0, false).unwrap();
        assert!((d[0] - 9.499_457_825_916_874).abs() < 1e-12, "{d:?}");
        let ties: &'static [f64] = &[1.0, 0.0, 0.0, 0.0, 1.0];
        let nd = dcg_rows(Dcg::Ndcg, m(t), m(ties), Some(1), 2.0, false).unwrap();
        assert!((nd[0] - 0.75).abs() < 1e-15, "{nd:?}");
        let nd = dcg_rows(Dcg::Ndcg, m(t), m(ties), Some(1), 2.0, true).unwrap();
        assert!((nd[0] - 0.5).abs() < 1e-15, "{nd:?}");
    }

    #[test]
    fn matrices_become_qrels_and_runs_in_row_order() {
        let t = [1.0, 0.0, 2.0, 0.0, 0.0, 1.0];
        let s = [0.5, 0.9, 0.1, 0.3, 0.3, 0.2];
        let (q, r) = qrels_and_run(
            Matrix::new(&t, 2, 3).unwrap(),
            Matrix::new(&s, 2, 3).unwrap(),
        )
        .unwrap();
        assert_eq!(q.queries().len(), 2);
        assert_eq!(r.queries().len(), 2);
        let e = Matrix::new(&t, 3, 3).unwrap_err();
        assert!(e.to_string().contains("needs 9 values"), "{e}");
        let bad = [1.0, 0.5, 0.0, 0.0, 0.0, 0.0];
        let e = qrels_and_run(
            Matrix::new(&bad, 2, 3).unwrap(),
            Matrix::new(&s, 2, 3).unwrap(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("y_true[0, 1] is 0.5"), "{e}");
    }
}
