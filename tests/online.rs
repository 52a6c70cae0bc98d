//! Online metrics on the small log of tests/data/online_small.jsonl, computed by hand,
//! and the bad inputs the log refuses (with their line).
//!
//! The log (times in seconds after 2024-05-01T00:00:00Z):
//! - s1 (A): SERP "laptop" at 0 (10 results), clicks at 5 (position 1) and 20 (position
//!   3; written before the click at 5), SERP "laptop bag" at 100 (0 results)
//! - s2 (A): SERP "Laptop" at 1000 (10 results), no click
//! - s3 (B): SERP "phone" at 2000 (5 results), click at 2010 (position 2, dwell 5), a
//!   purchase at 2030
//! - s4 (B): SERP "laptop" at 3600 (2 results), click at 3604 (position 2), a hover
//!   (unknown type) at 3610

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use irmetrics::online::{
    evaluate, queries_per, read_log, top_queries, Bucket, Log, LogFormat, LogOptions,
    OnlineOptions, FIELDS,
};

fn small() -> Log {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/online_small.jsonl");
    read_log(&p, LogFormat::Jsonl, LogOptions::default()).unwrap()
}

fn value(log: &Log, name: &str) -> f64 {
    let r = evaluate(log, &[name], &OnlineOptions::default()).unwrap();
    r.groups[0].values[0]
}

#[test]
fn every_metric_by_hand() {
    let log = small();
    assert_eq!((log.len(), log.n_sessions(), log.reordered()), (10, 4, 1));
    assert_eq!(log.ignored(), &[("hover".to_string(), 1)]);
    // 5 SERPs; clicked: s1's first, s3's, s4's
    let expected = [
        ("ctr", 3.0 / 5.0),
        ("ctr@1", 1.0 / 5.0), // only s1's first SERP has a click at position 1
        ("ctr@3", 3.0 / 5.0),
        // clicks at p / SERPs with >= p results (n_results 10, 0, 10, 5, 2)
        ("ctr_by_position@1", 1.0 / 4.0),
        ("ctr_by_position@2", 2.0 / 4.0),
        ("ctr_by_position@3", 1.0 / 3.0),
        ("ctr_by_position@6", 0.0 / 2.0),
        ("clicks_per_query", 4.0 / 5.0),
        ("abandonment_rate", 1.0 / 4.0), // s2
        // s1: dwell 80 (20 -> 100); s3: purchase; s4: last click, the cap 1800
        ("success_rate", 3.0 / 4.0),
        ("zero_result_rate", 1.0 / 5.0),
        ("time_to_first_click", 5.0), // median of 5, 10, 4
        ("click_mrr", (1.0 + 0.0 + 0.0 + 0.5 + 0.5) / 5.0),
    ];
    for (name, v) in expected {
        assert!(
            (value(&log, name) - v).abs() < 1e-12,
            "{name}: {}",
            value(&log, name)
        );
    }
    // s1's click at 5 has dwell 15 (the next event at 20): with T = 10 s1 succeeds by it
    // too; with T = 100 only s3 (purchase) and s4 (the cap) remain
    let opts = OnlineOptions {
        dwell_threshold: 100.0,
        ..OnlineOptions::default()
    };
    let r = evaluate(&log, &["success_rate"], &opts).unwrap();
    assert_eq!(r.groups[0].values, vec![2.0 / 4.0]);
}

#[test]
fn variants_and_their_difference() {
    let log = small();
    let opts = OnlineOptions {
        by_variant: true,
        ..OnlineOptions::default()
    };
    let r = evaluate(&log, &["ctr", "abandonment_rate"], &opts).unwrap();
    let names: Vec<&str> = r.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    // A: 3 SERPs, 1 clicked; s2 abandoned of 2. B: 2 SERPs, both clicked; none abandoned
    assert_eq!(r.groups[0].values, vec![1.0 / 3.0, 0.5]);
    assert_eq!(r.groups[1].values, vec![1.0, 0.0]);
    let c = &r.comparisons[0];
    assert_eq!(
        (c.metric.as_str(), c.baseline.as_str(), c.variant.as_str()),
        ("ctr", "A", "B")
    );
    assert!((c.difference - 2.0 / 3.0).abs() < 1e-12);
    assert!(c.ci.0 <= c.difference && c.difference <= c.ci.1);
    // the same seed gives the same interval for any thread count
    let one = irmetrics::parallel::with_threads(1, || evaluate(&log, &["ctr"], &opts).unwrap());
    let two = irmetrics::parallel::with_threads(2, || evaluate(&log, &["ctr"], &opts).unwrap());
    assert_eq!(one, two);
}

#[test]
fn top_queries_and_traffic() {
    let log = small();
    let top = top_queries(&log, 2, None, false).unwrap();
    assert_eq!(
        top,
        vec![("laptop".into(), 2, 0.4), ("Laptop".into(), 1, 0.2)]
    );
    let top = top_queries(&log, 1, None, true).unwrap();
    assert_eq!(top, vec![("laptop".into(), 3, 0.6)]);
    // the window [0, 1000) after the start holds s1's two SERPs
    let t0 = 1714521600.0;
    let top = top_queries(&log, 5, Some((t0, t0 + 1000.0)), false).unwrap();
    assert_eq!(
        top,
        vec![("laptop".into(), 1, 0.5), ("laptop bag".into(), 1, 0.5)]
    );
    // laptop: s1's first SERP and s4's, both clicked; the others once, phone clicked
    let ctr = irmetrics::online::ctr_by_query(&log, 2, false).unwrap();
    assert_eq!(
        ctr,
        vec![("laptop".into(), 2, 2, 1.0), ("Laptop".into(), 1, 0, 0.0)]
    );
    let tr = queries_per(&log, Bucket::Hour, 3.0).unwrap();
    assert_eq!(tr.start, vec![t0, t0 + 3600.0]);
    assert_eq!(tr.count, vec![4, 1]);
    // latencies of hour 0: 80, 100, 120, 150 -> numpy's p50 110, p95 120 + 0.85 * 30
    let lat = tr.latency.unwrap();
    assert_eq!(lat[0][0], 110.0);
    assert!((lat[0][1] - 145.5).abs() < 1e-9);
    assert_eq!(lat[1], [300.0; 3]);
}

fn jsonl_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.jsonl");
    std::fs::write(&p, text).unwrap();
    match read_log(&p, LogFormat::Jsonl, LogOptions::default()) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_input_names_the_line() {
    let q = r#"{"session_id": "a", "timestamp": 1, "type": "query"}"#;
    let e = jsonl_error(&format!(
        "{q}\n{{\"session_id\": \"b\", \"timestamp\": 2, \"type\": \"click\", \"position\": 1}}\n"
    ));
    assert!(e.contains(":2:") && e.contains("no earlier SERP"), "{e}");
    let e = jsonl_error(&format!(
        "{q}\n{{\"session_id\": \"a\", \"timestamp\": 2, \"type\": \"click\", \"position\": -1}}\n"
    ));
    assert!(e.contains(":2:") && e.contains("position"), "{e}");
    let e = jsonl_error(&format!(
        "{q}\n{{\"session_id\": \"a\", \"timestamp\": 2, \"type\": \"click\", \"position\": 1, \"dwell\": -3}}\n"
    ));
    assert!(e.contains(":2:") && e.contains("dwell"), "{e}");
    let e = jsonl_error(r#"{"session_id": "a", "type": "query"}"#);
    assert!(e.contains(":1:") && e.contains("'timestamp'"), "{e}");
    let e = jsonl_error(&format!(
        "{q}\n{{\"session_id\": \"a\", \"timestamp\": 1714521600000, \"type\": \"query\"}}\n"
    ));
    assert!(e.contains(":2:") && e.contains("milliseconds"), "{e}");
    let e = jsonl_error(&format!("{q}\nnot json\n"));
    assert!(e.contains(":2:"), "{e}");
}

#[test]
fn csv_names_missing_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log.csv");
    std::fs::write(&p, "sid,timestamp,kind\na,1,query\n").unwrap();
    let e = read_log(&p, LogFormat::Csv, LogOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'session_id'") && e.contains("'type'"), "{e}");
    let mut o = LogOptions::default();
    o.map("session_id", "sid").unwrap();
    o.map("type", "kind").unwrap();
    let log = read_log(&p, LogFormat::Csv, o).unwrap();
    assert_eq!(log.len(), 1);
    // the CSV route gives the JSONL route's numbers
    let csv = dir.path().join("small.csv");
    let fields: Vec<&str> = FIELDS.into_iter().filter(|f| *f != "doc_id").collect();
    let mut text = format!("{}\n", fields.join(","));
    let json = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/online_small.jsonl"),
    )
    .unwrap();
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let f = |k: &str| match &v[k] {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(s) => s.clone(),
            x => x.to_string(),
        };
        text.push_str(&fields.iter().map(|k| f(k)).collect::<Vec<_>>().join(","));
        text.push('\n');
    }
    std::fs::write(&csv, text).unwrap();
    let a = read_log(&csv, LogFormat::Csv, LogOptions::default()).unwrap();
    let none: [&str; 0] = [];
    let ra = evaluate(&a, &none, &OnlineOptions::default()).unwrap();
    let rb = evaluate(&small(), &none, &OnlineOptions::default()).unwrap();
    assert_eq!(ra, rb);
}

#[test]
fn empty_logs_give_nan_or_a_clear_error() {
    use irmetrics::error::Unit;
    let mut b =
        irmetrics::online::LogBuilder::new(LogOptions::default(), "log", Unit::Row).unwrap();
    b.declare(9); // a variant column without values
    let log = b.finish().unwrap();
    let r = evaluate(&log, &["ctr"], &OnlineOptions::default()).unwrap();
    assert!(r.groups[0].values[0].is_nan());
    let opts = OnlineOptions {
        by_variant: true,
        ..OnlineOptions::default()
    };
    let e = evaluate(&log, &["ctr"], &opts).unwrap_err().to_string();
    assert!(e.contains("no variant"), "{e}");
    assert!(queries_per(&log, Bucket::Day, 3.0)
        .unwrap()
        .count
        .is_empty());
}

/// Sessions' parts of two logs holding disjoint sessions, put together in the whole
/// log's session order, give the whole log's numbers to the last bit (as Spark does).
#[test]
fn parts_of_disjoint_sessions_put_together_equal_the_whole() {
    use irmetrics::online::{evaluate_sessions, session_parts, SessionParts};

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/online_small.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let dir = std::env::temp_dir().join(format!("irmetrics-parts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut logs = Vec::new();
    for (i, keep) in [["\"s1\"", "\"s3\""], ["\"s2\"", "\"s4\""]]
        .iter()
        .enumerate()
    {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| keep.iter().any(|k| l.contains(k)))
            .collect();
        let p = dir.join(format!("part{i}.jsonl"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        logs.push(read_log(&p, LogFormat::Jsonl, LogOptions::default()).unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let parts: Vec<SessionParts> = logs
        .iter()
        .map(|l| session_parts(l, &[] as &[&str], 30.0).unwrap())
        .collect();
    // the whole log's order: s1, s2, s3, s4
    let mut whole = SessionParts {
        metrics: parts[0].metrics.clone(),
        variants: vec!["A".into(), "B".into()],
        ttfc_ends: vec![0],
        ..SessionParts::default()
    };
    let w = whole.metrics.len();
    for (p, s) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let part = &parts[p];
        whole.sessions.push(part.sessions[s].clone());
        whole.first_place.push(0);
        let name = &part.variants[part.variant[s] as usize];
        whole
            .variant
            .push(whole.variants.iter().position(|v| v == name).unwrap() as u32);
        whole.num.extend(&part.num[s * w..(s + 1) * w]);
        whole.den.extend(&part.den[s * w..(s + 1) * w]);
        let times = &part.ttfc[part.ttfc_ends[s]..part.ttfc_ends[s + 1]];
        whole.ttfc.extend(times);
        whole.ttfc_ends.push(whole.ttfc.len());
    }
    assert_eq!(whole.sessions, ["s1", "s2", "s3", "s4"]);
    let log = small();
    // parts are one log only if they write their timestamps one way
    for part in &logs {
        assert_eq!(part.time_style(), log.time_style());
    }
    assert_eq!(log.time_style(), Some("text with a time zone"));
    for by_variant in [false, true] {
        let opts = OnlineOptions {
            by_variant,
            ..OnlineOptions::default()
        };
        let expected = evaluate(&log, &[] as &[&str], &opts).unwrap();
        let got = evaluate_sessions(whole.clone(), &opts, "parts").unwrap();
        // Debug prints each f64 to its last bit (and NaN as NaN)
        assert_eq!(format!("{got:?}"), format!("{expected:?}"));
    }
    // parts that disagree: a clear error, no panic
    let mut bad = whole.clone();
    bad.num.pop();
    let e = evaluate_sessions(bad, &OnlineOptions::default(), "parts").unwrap_err();
    assert!(e.to_string().contains("disagree"), "{e}");
    let mut no_arm = whole;
    no_arm.variant[1] = u32::MAX;
    let opts = OnlineOptions {
        by_variant: true,
        ..OnlineOptions::default()
    };
    let e = evaluate_sessions(no_arm, &opts, "parts").unwrap_err();
    assert!(e.to_string().contains("session 's2' has no variant"), "{e}");
}

/// `reordered` is counted in one place (a log's finish); a stream sums its parts, each
/// holding whole sessions. 60,000 sessions of 3 events, the last click written before
/// the one after it in time (5 s back: within the slack), streamed with splits (the
/// stream closes sessions every 65,536 held events) and read whole: each counts every
/// session once.
#[test]
fn a_stream_counts_reordered_events_as_the_whole_log() {
    use irmetrics::online::{evaluate_stream, StreamOptions};
    use std::io::Write;
    let n = 60_000;
    let mut f = tempfile::NamedTempFile::new().unwrap();
    for i in 0..n {
        let t = 100 * i;
        writeln!(
            f,
            "{{\"session_id\": \"s{i}\", \"timestamp\": {t}, \"type\": \"query\", \"query\": \"q\", \"n_results\": 10}}\n\
             {{\"session_id\": \"s{i}\", \"timestamp\": {}, \"type\": \"click\", \"position\": 2}}\n\
             {{\"session_id\": \"s{i}\", \"timestamp\": {}, \"type\": \"click\", \"position\": 1}}",
            t + 10,
            t + 5
        )
        .unwrap();
    }
    f.flush().unwrap();
    let whole = read_log(f.path(), LogFormat::Jsonl, LogOptions::default()).unwrap();
    assert_eq!((whole.n_sessions(), whole.reordered()), (n as usize, n));
    let stream = StreamOptions {
        session_timeout: 30.0,
        time_slack: 5.0,
    };
    let (_, summary) = evaluate_stream(
        f.path(),
        LogFormat::Jsonl,
        LogOptions::default(),
        &["ctr"],
        &OnlineOptions::default(),
        &stream,
    )
    .unwrap();
    assert_eq!((summary.sessions, summary.reordered), (n as usize, n));
}
