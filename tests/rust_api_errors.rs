//! The Rust API's errors: the right variant and a message with file, line and fix; and
//! the streaming reader gives the same run whatever the read sizes.

use std::io::Read;

use irmetrics::trec::parse_run_reader;
use irmetrics::{evaluate, Error, MeasureSet, Options, Qrels, Run};

/// A reader that hands out at most `step` bytes per call (pipes, sockets, gzip).
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

const RUN: &[u8] =
    b"q1 Q0 d1 1 0.5 a\n# c\n\nq2 Q0 d1 1 inf a\nq1 Q0 d2 2 -0.5 b\r\nq1 Q0 d3 3 1e-3 b";

#[test]
fn short_reads_give_the_same_run() {
    let whole = Run::from_bytes(RUN, "r").unwrap();
    for step in [1, 2, 3, 7, 64] {
        let r = parse_run_reader(Trickle { data: RUN, step }, "r").unwrap();
        assert_eq!(r.num_results(), whole.num_results());
        assert_eq!(r.runid(), whole.runid());
        for (a, b) in r.queries().iter().zip(whole.queries()) {
            assert_eq!(a.id(), b.id());
            assert!(a.iter().eq(b.iter()));
        }
    }
    let bad = b"q1 Q0 d1 1 0.5 a\nq1 Q0 d2 1 0.5x a\n";
    let e = parse_run_reader(Trickle { data: bad, step: 3 }, "r.txt").unwrap_err();
    assert!(e.to_string().starts_with("r.txt:2: score '0.5x'"), "{e}");
}

#[test]
fn format_errors_name_file_and_line() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"q 0 d 1\nq 0 e 1.5\n",
            "q.txt:2: relevance label '1.5' is not a whole number",
        ),
        (b"q 0 d 1\n\nq 0 e 1\n", "q.txt:2: blank line"),
        (b"q 0 d\n", "q.txt:1: expected 4 fields"),
        (b"q 0 d 1\nq 0 d\x00 1\n", "q.txt:2: contains a NUL byte"),
        (
            b"q 0 d 1\nq 0 d 2\n",
            "q.txt:2: document 'd' appears twice for query 'q' (first at line 1)",
        ),
    ];
    for (data, want) in cases {
        let e = Qrels::from_bytes(data, "q.txt").unwrap_err();
        assert!(
            matches!(e, Error::Format { .. } | Error::DuplicateEntry { .. }),
            "{e:?}"
        );
        assert!(e.to_string().starts_with(want), "{e} / {want}");
    }
    let e = Run::from_bytes(b"q Q0 d 1 NaN r\n", "r.txt").unwrap_err();
    assert_eq!(
        e.to_string(),
        "r.txt:1: score of document 'd' for query 'q' is NaN; a ranking needs comparable scores"
    );
}

#[test]
fn semantic_errors() {
    let q = Qrels::from_bytes(b"q1 0 d 1\nq2 0 d 1\n", "q").unwrap();
    let r = Run::from_bytes(b"q1 Q0 d 1 1 r\n", "r").unwrap();
    let e = evaluate(&q, &r, &["map"], Options::default()).unwrap_err();
    assert!(
        matches!(&e, Error::MissingQuery { query } if query == "q2"),
        "{e:?}"
    );
    let other = Run::from_bytes(b"x Q0 d 1 1 r\n", "r").unwrap();
    let e = evaluate(&q, &other, &["map"], Options::default()).unwrap_err();
    assert!(matches!(e, Error::Input(_)), "{e:?}");
    let opts = Options {
        max_docs: Some(0),
        ..Options::default()
    };
    assert!(matches!(
        evaluate(&q, &r, &["map"], opts),
        Err(Error::Option(_))
    ));
    for bad in ["P.0", "P@0", "mapp", "", "rbp.p=1.5", "P(rel=2@5"] {
        let e = MeasureSet::parse(&[bad]).unwrap_err();
        assert!(matches!(e, Error::Measure(_)), "{bad}: {e:?}");
        assert!(e.to_string().len() > 10, "{bad}: {e}");
    }
}

#[test]
fn file_errors() {
    let dir = std::env::temp_dir().join(format!("irmetrics-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = Run::from_file(dir.join("missing.txt")).unwrap_err();
    assert!(
        matches!(e, Error::Io { .. }) && e.to_string().contains("missing.txt"),
        "{e}"
    );
    let e = Qrels::from_file(&dir).unwrap_err();
    assert!(e.to_string().contains("it is a directory"), "{e}");
    let gz = dir.join("cut.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x4b]).unwrap();
    let e = Run::from_file(&gz).unwrap_err();
    assert!(e.to_string().contains("corrupt or truncated gzip"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn negative_relevance_levels_are_refused() {
    // trec_eval compares its "not pooled" / "unjudged" markers (-1, -2) with the level,
    // so a negative level counts unjudged documents as relevant (map above 1).
    let q = Qrels::from_bytes(b"q1 0 a 0\nq1 0 b 1\n", "q").unwrap();
    let r = Run::from_bytes(b"q1 Q0 a 1 1 r\nq1 Q0 x 2 0.5 r\n", "r").unwrap();
    let opts = Options {
        relevance_level: -1,
        ..Options::default()
    };
    let e = evaluate(&q, &r, &["map"], opts).unwrap_err();
    assert!(
        matches!(e, Error::Option(_)) && e.to_string().contains("-1"),
        "{e}"
    );
    let e = evaluate(&q, &r, &["P(rel=-2)@5"], Options::default()).unwrap_err();
    assert!(matches!(e, Error::Measure(_)), "{e}");
    let zero = Options {
        relevance_level: 0,
        ..Options::default()
    };
    let res = evaluate(&q, &r, &["map"], zero).unwrap();
    assert_eq!(res.summary_by_name("map"), Some(0.5)); // both judged documents relevant
}
