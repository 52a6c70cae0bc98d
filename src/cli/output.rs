//! The output formats of the command line: trec_eval's text (from [`Results`]), JSON
//! (serde_json), CSV (the csv crate) and an aligned table for people.

use std::path::Path;

use serde_json::{Map, Value};

use super::args::{Args, Format};
use crate::error::{Error, Result};
use crate::measure::Family;
use crate::results::Results;

/// A value as JSON: integers for counting measures, null for NaN and infinities.
fn json_value(family: Family, v: f64) -> Value {
    if family.is_integer() && v.is_finite() {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

fn csv_err(e: csv::Error) -> Error {
    Error::Write {
        path: "<output>".into(),
        source: std::io::Error::other(e),
    }
}

/// Render one run's results in the requested format.
pub(super) fn render(res: &Results, args: &Args, path: &Path, out: &mut Vec<u8>) -> Result<()> {
    let cols = res.columns();
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let value_cols: Vec<usize> = (0..cols.len())
        .filter(|&c| !matches!(cols[c].family, Family::RunId | Family::Relstring))
        .collect();
    match args.format {
        Format::Trec => {
            let _ = res.write_trec(out, args.per_query, args.summary);
        }
        Format::Json => {
            let mut o = Map::new();
            o.insert("run".into(), path.display().to_string().into());
            o.insert("runid".into(), lossy(res.runid()).into());
            o.insert("num_q".into(), res.num_queries().into());
            if args.summary {
                let all: Map<String, Value> = value_cols
                    .iter()
                    .filter(|&&c| cols[c].family != Family::NumQ)
                    .map(|&c| {
                        (
                            cols[c].name.clone(),
                            json_value(cols[c].family, res.summary(c)),
                        )
                    })
                    .collect();
                o.insert("all".into(), all.into());
            }
            if args.per_query {
                let per: Map<String, Value> = res
                    .query_ids()
                    .iter()
                    .enumerate()
                    .map(|(q, id)| {
                        let vals: Map<String, Value> = value_cols
                            .iter()
                            .filter(|&&c| Results::is_per_query(&cols[c]))
                            .map(|&c| {
                                (
                                    cols[c].name.clone(),
                                    json_value(cols[c].family, res.value(q, c)),
                                )
                            })
                            .collect();
                        (lossy(id), Value::from(vals))
                    })
                    .collect();
                o.insert("per_query".into(), per.into());
            }
            serde_json::to_writer(&mut *out, &o).map_err(|e| Error::Write {
                path: "<output>".into(),
                source: e.into(),
            })?;
            out.push(b'\n');
        }
        Format::Csv | Format::Table => {
            let shown: Vec<usize> = value_cols
                .iter()
                .copied()
                .filter(|&c| cols[c].family != Family::NumQ)
                .collect();
            let mut rows: Vec<Vec<String>> = Vec::new();
            let mut header = vec!["query".to_string()];
            header.extend(shown.iter().map(|&c| cols[c].name.clone()));
            rows.push(header);
            let fmt = |c: usize, v: f64| {
                if cols[c].family.is_integer() {
                    format!("{}", v as i64)
                } else if args.format == Format::Table {
                    format!("{v:.4}")
                } else {
                    format!("{v:?}")
                }
            };
            if args.per_query {
                for (q, id) in res.query_ids().iter().enumerate() {
                    let mut r = vec![lossy(id)];
                    r.extend(shown.iter().map(|&c| {
                        if Results::is_per_query(&cols[c]) {
                            fmt(c, res.value(q, c))
                        } else {
                            String::new()
                        }
                    }));
                    rows.push(r);
                }
            }
            if args.summary {
                let mut r = vec!["all".to_string()];
                r.extend(shown.iter().map(|&c| fmt(c, res.summary(c))));
                rows.push(r);
            }
            if args.format == Format::Csv {
                let mut w = csv::Writer::from_writer(&mut *out);
                for r in &rows {
                    w.write_record(r).map_err(csv_err)?;
                }
                w.flush().map_err(|e| Error::Write {
                    path: "<output>".into(),
                    source: e,
                })?;
            } else {
                table(&rows, res, path, out);
            }
        }
    }
    Ok(())
}

/// An aligned table: the first column left, the values right.
fn table(rows: &[Vec<String>], res: &Results, path: &Path, out: &mut Vec<u8>) {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    out.extend_from_slice(
        format!(
            "run {} (runid {}), {} queries\n",
            path.display(),
            String::from_utf8_lossy(res.runid()),
            res.num_queries()
        )
        .as_bytes(),
    );
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == 0 {
                    format!("{f:<w$}", w = widths[i])
                } else {
                    format!("{f:>w$}", w = widths[i])
                }
            })
            .collect();
        out.extend_from_slice(cells.join("  ").trim_end().as_bytes());
        out.push(b'\n');
    }
}
