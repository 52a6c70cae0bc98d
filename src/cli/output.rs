//! The output formats of the command line: trec_eval's text (from [`Results`]), JSON
//! (serde_json), CSV (the csv crate) and an aligned table for people.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::args::{Args, Format};
use crate::error::{show_whole, Error, Result};
use crate::measure::Family;
use crate::results::Results;

/// A value as JSON: integers for counting measures, null for NaN and infinities.
fn json_value(integer: bool, v: f64) -> Value {
    if integer && v.is_finite() {
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

/// A file name's bytes as the user gave them (any encoding).
fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// Text for JSON, which carries Unicode only: bytes that are not UTF-8 are refused
/// naming what they are (`what`) and the run, never replaced (two ids that differ only
/// in such bytes would become one key).
fn json_text(bytes: &[u8], what: &str, path: &Path) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        let whose = if bytes == path_bytes(path) {
            String::new()
        } else {
            format!(" (run {})", show_whole(path_bytes(path)))
        };
        Error::Input(format!(
            "{what} '{}'{whose} is not UTF-8: JSON holds only Unicode text, so --format \
             json cannot write it; --format trec or csv write ids and tags as they were read",
            show_whole(bytes),
        ))
    })
}

/// Render one run's results in the requested format. trec and CSV write ids and the
/// run tag as the bytes that were read (as trec_eval does); the table shows bytes that
/// are not UTF-8 as `\xNN`; JSON refuses them (nothing is rendered).
/// Render the results of every run, in order. One run is written as trec_eval (or the
/// other formats) write it; several are told apart: trec text puts a `# run FILE` line
/// before each run's block, CSV a `run` column (one header), JSON one document
/// `{"runs": [...]}`, the table the runs side by side.
pub(super) fn render_all(
    results: &[(PathBuf, Results)],
    args: &Args,
    out: &mut Vec<u8>,
) -> Result<()> {
    if args.format == Format::Trec {
        return write_trec_all(results, args, out).map_err(|e| Error::Write {
            path: "<output>".into(),
            source: e,
        });
    }
    if let [(path, res)] = results {
        return render(res, args, path, out, None);
    }
    match args.format {
        Format::Table => return side_by_side(results, args, out),
        Format::Json => out.extend_from_slice(b"{\"runs\":["),
        _ => {}
    }
    for (i, (path, res)) in results.iter().enumerate() {
        match args.format {
            Format::Json if i > 0 => out.push(b','),
            _ => {}
        }
        render(res, args, path, out, Some(i))?;
        if args.format == Format::Json {
            out.pop(); // the document's newline: the runs are one document
        }
    }
    if args.format == Format::Json {
        out.extend_from_slice(b"]}\n");
    }
    Ok(())
}

/// trec_eval's text of every run, written to `w` as it is formatted (the per-query
/// lines of a large run are not held whole: L `-q -m all_trec` is about 450 MB); one
/// run as trec_eval writes it, several each after a `# run FILE` line. Nothing in it
/// can be refused, so it can start before the whole is known.
pub(super) fn write_trec_all(
    results: &[(PathBuf, Results)],
    args: &Args,
    mut w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if let [(_, res)] = results {
        return res.write_trec(&mut w, args.per_query, args.summary);
    }
    for (path, res) in results {
        w.write_all(b"# run ")?;
        w.write_all(path_bytes(path))?;
        w.write_all(b"\n")?;
        res.write_trec(&mut w, args.per_query, args.summary)?;
    }
    Ok(())
}

/// Render one run's results; `several` is its position when several runs are written
/// (CSV rows then start with the run, and only the first writes the header).
fn render(
    res: &Results,
    args: &Args,
    path: &Path,
    out: &mut Vec<u8>,
    several: Option<usize>,
) -> Result<()> {
    let cols = res.columns();
    let value_cols: Vec<usize> = (0..cols.len())
        .filter(|&c| !matches!(cols[c].family, Family::RunId | Family::Relstring))
        .collect();
    match args.format {
        Format::Trec => {
            let _ = res.write_trec(out, args.per_query, args.summary);
        }
        Format::Json => {
            let mut o = Map::new();
            o.insert(
                "run".into(),
                json_text(path_bytes(path), "the run file name", path)?.into(),
            );
            o.insert(
                "runid".into(),
                json_text(res.runid(), "the run tag", path)?.into(),
            );
            o.insert("num_q".into(), res.num_queries().into());
            if args.summary {
                let all: Map<String, Value> = value_cols
                    .iter()
                    .filter(|&&c| cols[c].family != Family::NumQ)
                    .map(|&c| {
                        (
                            res.printed_name(&cols[c]),
                            json_value(res.prints_integer(&cols[c]), res.summary(c)),
                        )
                    })
                    .collect();
                o.insert("all".into(), all.into());
            }
            serde_json::to_writer(&mut *out, &o).map_err(json_err)?;
            if args.per_query {
                // `"per_query": {id: {measure: value}}` last, its queries written in
                // parallel chunks: the object's closing brace comes after it
                out.pop();
                out.extend_from_slice(b",\"per_query\":{");
                per_query_json(res, &value_cols, path, out)?;
                out.extend_from_slice(b"}}");
            }
            out.push(b'\n');
        }
        Format::Csv | Format::Table => {
            let table = args.format == Format::Table;
            let shown: Vec<usize> = value_cols
                .iter()
                .copied()
                .filter(|&c| cols[c].family != Family::NumQ)
                .collect();
            // cells as bytes: CSV writes ids as read, the table escapes them
            let id_cell = |id: &[u8]| -> Vec<u8> {
                if table {
                    show_whole(id).into_bytes()
                } else {
                    id.to_vec()
                }
            };
            let mut rows: Vec<Vec<Vec<u8>>> = Vec::new();
            // several runs (CSV): a run column first, the header once
            let run_cell: Vec<Vec<u8>> =
                several.map_or(Vec::new(), |_| vec![path_bytes(path).to_vec()]);
            if several.unwrap_or(0) == 0 {
                let mut header = several.map_or(Vec::new(), |_| vec![b"run".to_vec()]);
                header.push(b"query".to_vec());
                header.extend(
                    shown
                        .iter()
                        .map(|&c| res.printed_name(&cols[c]).into_bytes()),
                );
                rows.push(header);
            }
            let fmt = |c: usize, v: f64| -> Vec<u8> {
                if res.prints_integer(&cols[c]) {
                    format!("{}", v as i64)
                } else if table {
                    format!("{v:.4}")
                } else {
                    format!("{v:?}")
                }
                .into_bytes()
            };
            let per_query_row = |q: usize| {
                let mut r = run_cell.clone();
                r.push(id_cell(&res.query_ids()[q]));
                r.extend(shown.iter().map(|&c| {
                    if Results::is_per_query(&cols[c]) {
                        fmt(c, res.value(q, c))
                    } else {
                        Vec::new()
                    }
                }));
                r
            };
            let summary_row = || {
                let mut r = run_cell.clone();
                r.push(b"all".to_vec());
                r.extend(shown.iter().map(|&c| fmt(c, res.summary(c))));
                r
            };
            if table {
                if args.per_query {
                    rows.extend((0..res.num_queries()).map(per_query_row));
                }
                if args.summary {
                    rows.push(summary_row());
                }
                self::table(&rows, res, path, out);
                return Ok(());
            }
            // CSV: the per-query rows written in parallel chunks (records carry no state
            // from one to the next, so chunks written apart give the same bytes)
            write_csv(&rows, out)?;
            if args.per_query {
                crate::parallel::write_in_chunks(
                    res.num_queries(),
                    Results::queries_per_chunk(shown.len()),
                    |queries, buf| {
                        let rows: Vec<Vec<Vec<u8>>> = queries.map(per_query_row).collect();
                        write_csv(&rows, buf)
                    },
                    |buf| {
                        out.extend_from_slice(buf);
                        Ok(())
                    },
                )?;
            }
            if args.summary {
                write_csv(&[summary_row()], out)?;
            }
        }
    }
    Ok(())
}

/// Rows as CSV records (the csv crate's quoting; ids as their bytes).
fn write_csv(rows: &[Vec<Vec<u8>>], out: &mut Vec<u8>) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.write_record(r).map_err(csv_err)?;
    }
    w.flush().map_err(|e| Error::Write {
        path: "<output>".into(),
        source: e,
    })
}

fn json_err(e: serde_json::Error) -> Error {
    Error::Write {
        path: "<output>".into(),
        source: e.into(),
    }
}

/// The members of JSON's `per_query` object, `"id":{"measure":value,...}` separated by
/// commas, formatted in parallel chunks of queries. The first id that is not UTF-8 (in
/// query order) is refused.
fn per_query_json(
    res: &Results,
    value_cols: &[usize],
    path: &Path,
    out: &mut Vec<u8>,
) -> Result<()> {
    let cols = res.columns();
    // each printed column's key, `"name":`, made once
    let keys: Vec<(usize, Vec<u8>)> = value_cols
        .iter()
        .filter(|&&c| Results::is_per_query(&cols[c]))
        .map(|&c| {
            let mut key = serde_json::to_vec(&res.printed_name(&cols[c])).unwrap_or_default();
            key.push(b':');
            (c, key)
        })
        .collect();
    crate::parallel::write_in_chunks(
        res.num_queries(),
        Results::queries_per_chunk(keys.len()),
        |queries, buf| {
            for q in queries {
                if q > 0 {
                    buf.push(b',');
                }
                let id = json_text(&res.query_ids()[q], "query id", path)?;
                serde_json::to_writer(&mut *buf, &id).map_err(json_err)?;
                buf.extend_from_slice(b":{");
                for (i, (c, key)) in keys.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    buf.extend_from_slice(key);
                    let v = json_value(res.prints_integer(&cols[*c]), res.value(q, *c));
                    serde_json::to_writer(&mut *buf, &v).map_err(json_err)?;
                }
                buf.push(b'}');
            }
            Ok(())
        },
        |buf| {
            out.extend_from_slice(buf);
            Ok(())
        },
    )
}

/// Several runs in one aligned table: a row per query (with `-q`) and measure, the
/// `all` rows last, a column per run (its file name); a query a run lacks is blank.
fn side_by_side(results: &[(PathBuf, Results)], args: &Args, out: &mut Vec<u8>) -> Result<()> {
    let Some((_, first)) = results.first() else {
        return Ok(());
    };
    // (name, family, printed per query) of each measure, as the first run has them
    let measures: Vec<(String, Family, bool)> = (first.columns().iter())
        .filter(|c| !matches!(c.family, Family::RunId | Family::Relstring | Family::NumQ))
        .map(|c| (c.name.clone(), c.family, Results::is_per_query(c)))
        .collect();
    let fmt = |f: Family, v: f64| {
        if f.is_integer() {
            format!("{}", v as i64)
        } else {
            format!("{v:.4}")
        }
    };
    let column = |res: &Results, name: &str| res.columns().iter().position(|c| c.name == name);
    // each run's query positions, and the queries of all runs in order of appearance
    let mut queries: Vec<&[u8]> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let positions: Vec<std::collections::HashMap<&[u8], usize>> = results
        .iter()
        .map(|(_, res)| {
            (res.query_ids().iter().enumerate())
                .map(|(q, id)| {
                    if seen.insert(&id[..]) {
                        queries.push(id);
                    }
                    (&id[..], q)
                })
                .collect()
        })
        .collect();
    let mut header = vec!["query".to_string(), "measure".to_string()];
    header.extend(results.iter().map(|(p, _)| show_whole(path_bytes(p))));
    let mut rows = vec![header];
    for (name, family, per_query) in &measures {
        if !(args.per_query && *per_query) {
            continue;
        }
        for id in &queries {
            let mut r = vec![show_whole(id), name.clone()];
            for ((_, res), pos) in results.iter().zip(&positions) {
                r.push(match (column(res, name), pos.get(id)) {
                    (Some(c), Some(&q)) => fmt(*family, res.value(q, c)),
                    _ => String::new(),
                });
            }
            rows.push(r);
        }
    }
    if args.summary {
        for (name, family, _) in &measures {
            let mut r = vec!["all".to_string(), name.clone()];
            for (_, res) in results {
                r.push(column(res, name).map_or(String::new(), |c| fmt(*family, res.summary(c))));
            }
            rows.push(r);
        }
    }
    aligned(&rows, 2, out);
    Ok(())
}

/// [`crate::error::aligned`] without a rule, appended to `out`.
pub(super) fn aligned(rows: &[Vec<String>], left: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(crate::error::aligned(rows, left, false).as_bytes());
}

/// An aligned table: the first column left, the values right (cells are UTF-8: ids
/// escaped by the caller).
fn table(rows: &[Vec<Vec<u8>>], res: &Results, path: &Path, out: &mut Vec<u8>) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| text(c)).collect())
        .collect();
    out.extend_from_slice(
        format!(
            "run {} (runid {}), {} queries\n",
            show_whole(path_bytes(path)),
            show_whole(res.runid()),
            res.num_queries()
        )
        .as_bytes(),
    );
    aligned(&rows, 1, out);
}
