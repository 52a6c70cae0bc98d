//! trec_eval 10.0 conformance, in Rust: every row of
//! `../shared/conformance/{trec_eval_suite,generated,bad_input}/MANIFEST.tsv` is run
//! through `irmetrics::cli::run` and compared with trec_eval's stored output by the
//! rules of `check_conformance.py` (strict mode). Rows that carry a full-precision
//! JSON are additionally compared value by value (1e-6) through the library (the
//! command line's flow, `cli::evaluate_args`, unrounded), because
//! 4-decimal text hides small errors.
//!
//! Without `../shared` the test passes with a notice, unless `CI` is set.
//! `IRMETRICS_CONFORMANCE_DIR` names another place for the conformance directory
//! (`IRMETRICS_SHARED`, another place for the shared folder, as in `.ci/run`).

// The helpers below run only inside the test: a panic there is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use irmetrics::Results;

const SUITES: [&str; 3] = ["trec_eval_suite", "generated", "bad_input"];

/// Absolute tolerance for full-precision values (the checker's default `--tol`).
const TOL: f64 = 1e-6;

/// `runid` and `relstring*` are compared as strings.
fn is_string_measure(m: &str) -> bool {
    m == "runid" || m.starts_with("relstring") || m.starts_with("Zrelstring")
}

struct Row {
    suite: PathBuf,
    case: String,
    qrels: String,
    run: String,
    flags: String,
    expected_output: String,
    expected_json: String,
    expect: String,
}

fn read_manifest(suite: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(suite.join("MANIFEST.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_case, c_qrels, c_run, c_flags) = (col("case"), col("qrels"), col("run"), col("flags"));
    let (c_out, c_json, c_expect) = (col("expected_output"), col("expected_json"), col("expect"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            let get = |i: usize| v.get(i).copied().unwrap_or("").to_string();
            let expect = get(c_expect);
            Row {
                suite: suite.to_path_buf(),
                case: get(c_case),
                qrels: get(c_qrels),
                run: get(c_run),
                flags: get(c_flags),
                expected_output: get(c_out),
                expected_json: get(c_json),
                expect: if expect.is_empty() {
                    "ok".into()
                } else {
                    expect
                },
            }
        })
        .collect()
}

/// trec_eval text -> {(measure, qid): value text}; lines not of three fields are errors.
fn parse_lines(text: &str) -> Result<HashMap<(String, String), String>, String> {
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts[..] {
            [m, q, v] => {
                out.insert((m.to_string(), q.to_string()), v.to_string());
            }
            _ => return Err(format!("unparsable output line {line:?}")),
        }
    }
    Ok(out)
}

fn parse_nonfinite(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_start_matches('+');
    match t {
        "nan" | "-nan" => Some(f64::NAN),
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn is_four_dp(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    match s.split_once('.') {
        Some((i, f)) => {
            !i.is_empty()
                && i.bytes().all(|b| b.is_ascii_digit())
                && f.len() == 4
                && f.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// `compare_value` of check_conformance.py for a printed value `got`.
fn compare_text(measure: &str, exp: &str, exp_full: Option<f64>, got: &str) -> bool {
    if let Some(e) = parse_nonfinite(exp) {
        return match parse_nonfinite(got) {
            Some(g) => (e.is_nan() && g.is_nan()) || e == g,
            None => false,
        };
    }
    let numeric = !exp.is_empty() && exp.bytes().all(|b| b"+-0123456789.eE".contains(&b));
    if is_string_measure(measure) || !numeric {
        return got == exp;
    }
    let Ok(gv) = got.trim().parse::<f64>() else {
        return false;
    };
    if !exp.contains('.') {
        return exp.parse::<i64>().is_ok_and(|e| gv == e as f64);
    }
    if is_four_dp(got.trim()) {
        return got.trim() == exp;
    }
    if !gv.is_finite() {
        return false;
    }
    match exp_full {
        Some(f) => (gv - f).abs() <= TOL,
        None => {
            // must round to the 4-decimal text; either neighbour on a midpoint
            let e: f64 = exp.parse().unwrap_or(f64::NAN);
            format!("{gv:.4}") == exp
                || [e - 0.00005, e + 0.00005]
                    .iter()
                    .any(|m| (gv - m).abs() <= 1e-9)
        }
    }
}

#[derive(Default)]
struct Tally {
    rows_compared: usize,
    rows_rejected_as_trec_eval: usize,
    values_matched: usize,
    full_values_matched: usize,
    failures: Vec<String>,
}

/// A JSON number of the expectations (non-finite values are strings).
fn json_f64(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => parse_nonfinite(s),
        _ => None,
    }
}

type FullJson = BTreeMap<String, BTreeMap<String, serde_json::Value>>;

fn check_row(row: &Row, tally: &Mutex<Tally>) {
    // the checker's `absolutise_flags`: the file after -Z lies in the suite
    let flags: Vec<&str> = row.flags.split_whitespace().collect();
    let argv: Vec<String> = flags
        .iter()
        .enumerate()
        .map(|(i, t)| match i.checked_sub(1).map(|p| flags[p]) {
            Some("-Z") => row.suite.join(t).display().to_string(),
            _ => t.to_string(),
        })
        .chain([
            row.suite.join(&row.qrels).display().to_string(),
            row.suite.join(&row.run).display().to_string(),
        ])
        .collect();
    let mut out = Vec::new();
    let result = irmetrics::cli::run(&argv, &mut out);
    let name = format!(
        "{}/{}",
        row.suite.file_name().unwrap().to_string_lossy(),
        row.case
    );
    let fail = |msg: String| {
        tally
            .lock()
            .unwrap()
            .failures
            .push(format!("{name}: {msg}"))
    };
    match (row.expect.as_str(), &result) {
        // NaN scores: trec_eval's order is undefined, nothing to compare
        ("info", _) => return,
        ("reject", Err(_)) => {
            tally.lock().unwrap().rows_rejected_as_trec_eval += 1;
            return;
        }
        ("reject", Ok(())) => return fail("accepted an input trec_eval rejects".into()),
        // stricter than trec_eval is allowed for odd inputs
        ("lenient", Err(_)) => return,
        (_, Err(e)) => return fail(format!("failed: {e}")),
        (_, Ok(())) => {}
    }
    let got = match parse_lines(&String::from_utf8_lossy(&out)) {
        Ok(g) => g,
        Err(e) => return fail(e),
    };
    let expected_text = std::fs::read(row.suite.join(&row.expected_output)).unwrap();
    let expected = parse_lines(&String::from_utf8_lossy(&expected_text)).unwrap();
    let full: Option<FullJson> = (!row.expected_json.is_empty()).then(|| {
        let text = std::fs::read_to_string(row.suite.join(&row.expected_json)).unwrap();
        serde_json::from_str(&text).unwrap()
    });
    let full_value = |m: &str, q: &str| {
        full.as_ref()
            .and_then(|f| f.get(m)?.get(q))
            .and_then(json_f64)
    };

    let mut errors = Vec::new();
    let mut matched = 0;
    for ((m, q), exp) in &expected {
        match got.get(&(m.clone(), q.clone())) {
            None => errors.push(format!("missing {m} {q} (expected {exp})")),
            Some(g) if compare_text(m, exp, full_value(m, q), g) => matched += 1,
            Some(g) => errors.push(format!("mismatch {m} {q}: expected {exp}, got {g}")),
        }
    }
    let expected_measures: std::collections::HashSet<&String> =
        expected.keys().map(|(m, _)| m).collect();
    for (m, q) in got.keys() {
        // measures trec_eval does not print are ignored ("extra")
        if expected_measures.contains(m) && !expected.contains_key(&(m.clone(), q.clone())) {
            errors.push(format!("unexpected {m} {q}"));
        }
    }
    let full_matched = match &full {
        Some(f) => compare_full(&argv, f, &mut errors),
        None => 0,
    };
    let mut t = tally.lock().unwrap();
    t.rows_compared += 1;
    t.values_matched += matched;
    t.full_values_matched += full_matched;
    errors.sort();
    for e in errors.into_iter().take(5) {
        t.failures.push(format!("{name}: {e}"));
    }
}

/// Every float of the full-precision JSON against the library's unrounded values.
fn compare_full(argv: &[String], full: &FullJson, errors: &mut Vec<String>) -> usize {
    // the command line's flow (any judgments format, z-scores), unrounded values
    let args = irmetrics::cli::parse_args(argv).unwrap();
    let (_, res) = irmetrics::cli::evaluate_args(&args, None)
        .unwrap()
        .into_iter()
        .next()
        .unwrap();
    let qids: HashMap<String, usize> = res
        .query_ids()
        .iter()
        .enumerate()
        .map(|(i, id)| (String::from_utf8_lossy(id).into_owned(), i))
        .collect();
    let mut matched = 0;
    for (c, col) in res.columns().iter().enumerate() {
        let Some(per) = full.get(&res.printed_name(col)) else {
            continue;
        };
        for (q, v) in per {
            // integers and strings are fully checked by the text comparison
            let serde_json::Value::Number(n) = v else {
                continue;
            };
            if n.is_i64() || n.is_u64() || is_string_measure(&col.name) {
                continue;
            }
            let e = n.as_f64().unwrap_or(f64::NAN);
            let got = if q == "all" {
                Some(res.summary(c))
            } else if Results::is_per_query(col) {
                qids.get(q).map(|&i| res.value(i, c))
            } else {
                None
            };
            match got {
                Some(g) if (g - e).abs() <= TOL => matched += 1,
                Some(g) => errors.push(format!("full {} {q}: expected {e:?}, got {g:?}", col.name)),
                None => errors.push(format!("full {} {q}: no value", col.name)),
            }
        }
    }
    matched
}

#[test]
fn trec_eval_conformance() {
    // IRMETRICS_CONFORMANCE_DIR: for runs from a copy of the tree (cargo mutants);
    // IRMETRICS_SHARED: the shared folder, as .ci/run and tests/conftest.py read it
    let root = std::env::var_os("IRMETRICS_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("IRMETRICS_SHARED").map(|s| PathBuf::from(s).join("conformance"))
        })
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance"));
    if !root.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing (required when CI is set)",
            root.display()
        );
        eprintln!(
            "notice: {} not found, conformance test skipped",
            root.display()
        );
        return;
    }
    let rows: Vec<Row> = SUITES
        .iter()
        .flat_map(|suite| read_manifest(&root.join(suite)))
        .collect();

    let tally = Mutex::new(Tally::default());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                match rows.get(i) {
                    Some(row) => check_row(row, &tally),
                    None => break,
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    eprintln!(
        "conformance: {} rows, {} compared + {} rejected as trec_eval does, {} values matched \
         (4 decimals), {} full-precision values matched",
        rows.len(),
        t.rows_compared,
        t.rows_rejected_as_trec_eval,
        t.values_matched,
        t.full_values_matched
    );
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
    // every row of the three suites: counts guard against a silently empty run
    assert_eq!(rows.len(), 92);
    assert_eq!(t.rows_rejected_as_trec_eval, 18);
    // 67 = 92 - 18 rejects - 6 lenient rows we refuse - 1 info row; it moves only
    // when the policy on odd inputs changes
    assert_eq!(t.rows_compared, 67);
    assert!(t.values_matched >= 109_000, "{} values", t.values_matched);
    assert!(
        t.full_values_matched >= 100_000,
        "{} full values",
        t.full_values_matched
    );
}
