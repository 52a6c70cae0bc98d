//! Results as Python dicts: `{measure: value}` or `{measure: {query_id: value}}`, keyed
//! as requested or canonically, with the statistic asked for (`evaluate`,
//! `evaluate_file` and the push stream's `finish`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::id_to_py;
use super::errors;
use crate::measure::Family;
use crate::results::Results;
use crate::stats::Statistic;

fn keys_canonical(py: Python<'_>, keys: &str) -> PyResult<bool> {
    match keys {
        "requested" => Ok(false),
        "canonical" => Ok(true),
        other => Err(errors::input_err(
            py,
            format!("keys must be 'requested' or 'canonical', got '{other}'"),
        )),
    }
}

/// How results become a dict (the `per_query`, `keys` and `aggregate` arguments of
/// `evaluate` and its kin), checked once.
pub(super) struct DictShape {
    per_query: bool,
    canonical: bool,
    how: Statistic,
}

impl DictShape {
    pub(super) fn parse(
        py: Python<'_>,
        per_query: bool,
        keys: &str,
        aggregate: &str,
    ) -> PyResult<DictShape> {
        Ok(DictShape {
            per_query,
            canonical: keys_canonical(py, keys)?,
            how: statistic(py, aggregate)?,
        })
    }

    pub(super) fn to_py<'py>(
        &self,
        py: Python<'py>,
        res: &Results,
    ) -> PyResult<Bound<'py, PyDict>> {
        results_to_py(py, res, self.per_query, self.canonical, self.how)
    }
}

fn statistic(py: Python<'_>, aggregate: &str) -> PyResult<Statistic> {
    Statistic::parse(aggregate).map_err(|e| errors::to_py(py, e))
}

/// Results as `{key: value}` (the statistic `how` of each column: the `all` row for
/// the mean) or `{key: {query_id: value}}`.
fn results_to_py<'py>(
    py: Python<'py>,
    res: &Results,
    per_query: bool,
    canonical: bool,
    how: Statistic,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let cols = res.columns();
    let ids: Vec<Bound<'py, PyAny>> = if per_query {
        res.query_ids()
            .iter()
            .map(|id| id_to_py(py, id))
            .collect::<PyResult<_>>()?
    } else {
        Vec::new()
    };
    let summaries = res.summaries(how);
    let keyed = if canonical {
        cols.iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect()
    } else {
        res.requested_columns()
    };
    for (key, c) in keyed {
        let col = &cols[c];
        if per_query {
            if !Results::is_per_query(col) {
                continue;
            }
            let d = PyDict::new(py);
            for (q, id) in ids.iter().enumerate() {
                if col.family == Family::Relstring {
                    d.set_item(id, res.relstring(q).unwrap_or(""))?;
                } else if col.family.is_integer() {
                    d.set_item(id, res.value(q, c) as i64)?;
                } else {
                    d.set_item(id, res.value(q, c))?;
                }
            }
            out.set_item(key, d)?;
        } else if how != Statistic::Mean {
            // other statistics: only columns with per-query values (no num_q, runid, gm_map)
            if Results::has_per_query_values(col) {
                out.set_item(key, summaries[c])?;
            }
        } else {
            match col.family {
                Family::Relstring => continue,
                Family::RunId => out.set_item(key, id_to_py(py, res.runid())?)?,
                f if f.is_integer() => out.set_item(key, summaries[c] as i64)?,
                _ => out.set_item(key, summaries[c])?,
            }
        }
    }
    Ok(out)
}
