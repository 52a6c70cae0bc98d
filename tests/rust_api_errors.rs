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

/// The command line's outputs keep ids and run tags as read: trec and CSV write their
/// bytes, the table shows non-UTF-8 bytes as `\xNN`, and JSON (Unicode only) refuses
/// them by name instead of merging two ids into one U+FFFD key; nothing is written then.
#[cfg(unix)]
#[test]
fn cli_output_keeps_id_bytes_and_json_refuses_non_utf8() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    let dir = tempfile::tempdir().unwrap();
    let qrels = dir.path().join("qrels");
    std::fs::write(&qrels, b"q\xff 0 d 1\nq\xfe 0 d 1\n").unwrap();
    let run = dir.path().join("run");
    std::fs::write(&run, b"q\xff Q0 d 1 2.0 r\nq\xfe Q0 d 2 1.0 r\n").unwrap();
    let tagged = dir.path().join("tagged");
    std::fs::write(&tagged, b"q\xfe Q0 d 1 2.0 r\xff\n").unwrap();
    // a file name that is not UTF-8
    let mut odd = dir.path().as_os_str().to_os_string().into_vec();
    odd.extend_from_slice(b"/r\xff.txt");
    let odd = OsString::from_vec(odd);
    std::fs::write(&odd, b"q\xff Q0 d 1 2.0 r\n").unwrap();
    let cli = |extra: &[&str], run: &OsString| {
        let mut argv: Vec<OsString> = ["-q", "-c", "-m", "map"]
            .iter()
            .map(OsString::from)
            .collect();
        argv.extend(extra.iter().map(OsString::from));
        argv.push(qrels.clone().into_os_string());
        argv.push(run.clone());
        let mut out = Vec::new();
        irmetrics::cli::run(&argv, &mut out).map(|()| out)
    };
    let run_os = run.clone().into_os_string();

    let trec = cli(&[], &run_os).unwrap();
    let want: &[u8] =
        b"map                   \tq\xfe\t1.0000\nmap                   \tq\xff\t1.0000\n";
    assert!(trec.starts_with(want), "{}", String::from_utf8_lossy(&trec));
    let csv = cli(&["--format", "csv"], &run_os).unwrap();
    assert_eq!(csv, b"query,map\nq\xfe,1.0\nq\xff,1.0\nall,1.0\n");
    let table = String::from_utf8(cli(&["--format", "table"], &run_os).unwrap()).unwrap();
    assert!(
        table.contains("\nq\\xfe ") && table.contains("\nq\\xff "),
        "{table}"
    );

    let out_file = dir.path().join("out.json");
    std::fs::write(&out_file, b"old").unwrap();
    let out_arg = out_file.to_str().unwrap();
    for (run, what) in [
        (&run_os, "query id 'q\\xfe'"),
        (&tagged.clone().into_os_string(), "the run tag 'r\\xff'"),
        (&odd, "the run file name '"),
    ] {
        let e = cli(&["--format", "json", "--output", out_arg], run).unwrap_err();
        assert!(matches!(e, Error::Input(_)), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(what) && msg.contains("is not UTF-8"),
            "{msg}"
        );
        assert_eq!(irmetrics::cli::exit_code(&e), 1);
        assert_eq!(
            std::fs::read(&out_file).unwrap(),
            b"old",
            "output untouched"
        );
    }
    // the file name is no obstacle elsewhere
    let trec = cli(&[], &odd).unwrap();
    assert!(trec.windows(10).any(|w| w == b"\tq\xff\t1.0000"));
    let table = String::from_utf8(cli(&["--format", "table"], &odd).unwrap()).unwrap();
    assert!(table.contains("r\\xff.txt (runid r)"), "{table}");
}
