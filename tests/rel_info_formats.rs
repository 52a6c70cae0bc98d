//! trec_eval's other judgment formats (`-R prefs`, `-R qrels_prefs`, `-R qrels_jg`) and
//! z-scores (`-Z`) beyond the conformance rows: the preference counts of the worked
//! examples in trec_eval's own documentation of the format (get_prefs.c), and every
//! bad input refused with an error naming the file and line (or query and measure),
//! never a panic. Also trec_eval 10's qrels measures that no nickname names (yaap, dcg,
//! ideal_dcg) and its -c scoring of missing queries, byte for byte.

// The helpers below run only inside the tests: a panic there is the failure report.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;

use irmetrics::rel_info::{JudgmentGroups, Prefs};
use irmetrics::zscore::ZScores;
use irmetrics::{Error, MeasureSet, Options, Run};

/// `prefs_num_prefs_poss` of every query: the number of preferences the file states.
fn prefs_stated(prefs: &[u8], run: &[u8]) -> Vec<f64> {
    let prefs = Prefs::from_bytes(prefs, "prefs.txt").unwrap();
    let run = Run::from_bytes(run, "run.txt").unwrap();
    let m = MeasureSet::parse(&["prefs_num_prefs_poss"]).unwrap();
    let res = prefs.evaluate(&run, &m, &Options::default(), None).unwrap();
    (0..res.num_queries()).map(|q| res.value(q, 0)).collect()
}

/// get_prefs.c, trec_eval's description of the format, counts the preferences of its
/// examples: 13 for a complete ranking of six documents, 5 with transitivity (1>2, 2>4
/// give 1>4), 5 over two judgment groups; for two sub-groups of one group it says 5 (a
/// duplicate 1>2 counted once) but forgets that 4>1 and 1>3 give 4>3: trec_eval 10.0
/// (built from that source) prints 6, as here.
#[test]
fn the_documented_examples_count_as_trec_eval_says() {
    let run = b"qid1 Q0 docno1 1 1 r\n";
    let complete = b"qid1 ujg1 sub1 docno1 3.0\nqid1 ujg1 sub1 docno2 2.0\n\
qid1 ujg1 sub1 docno3 0.0\nqid1 ujg1 sub1 docno4 6.0\nqid1 ujg1 sub1 docno5 0.0\n\
qid1 ujg1 sub1 docno6 2.0\n";
    assert_eq!(prefs_stated(complete, run), [13.0]);
    let partial = b"qid1 ujg1 sub1 docno1 3.0\nqid1 ujg1 sub1 docno2 2.0\n\
qid1 ujg1 sub1 docno3 1.0\nqid1 ujg1 sub2 docno1 2.0\nqid1 ujg1 sub2 docno2 1.0\n\
qid1 ujg1 sub2 docno4 3.0\n";
    assert_eq!(prefs_stated(partial, run), [6.0]);
    let transitive = b"qid1 ujg1 sub1 docno1 3.0\nqid1 ujg1 sub1 docno2 2.0\n\
qid1 ujg1 sub1 docno3 1.0\nqid1 ujg1 sub2 docno2 5.0\nqid1 ujg1 sub2 docno4 4.0\n";
    assert_eq!(prefs_stated(transitive, run), [5.0]);
    let users = b"qid1 ujg1 sub1 docno1 3.0\nqid1 ujg1 sub1 docno2 2.0\n\
qid1 ujg2 sub1 docno1 0.0\nqid1 ujg2 sub1 docno3 6.0\nqid1 ujg2 sub1 docno4 2.0\n\
qid1 ujg2 sub2 docno1 0.0\nqid1 ujg2 sub2 docno2 8.0\n";
    assert_eq!(prefs_stated(users, run), [5.0]);
}

fn message(e: Error) -> String {
    e.to_string()
}

#[test]
fn malformed_lines_name_file_and_line() {
    let prefs: &[(&[u8], &str)] = &[
        (
            b"q g s d 1\nq g s d2\n",
            "p.txt:2: malformed line: expected 5 fields 'qid jg jsg docno level', found 4",
        ),
        (b"q g s d 1\n\nq g s e 0\n", "p.txt:2: malformed line"),
        (
            b"q g s d 1\nq g s e x\n",
            "p.txt:2: level 'x' is not a finite number",
        ),
        (
            b"# one\n# two\nq g s d 1\n",
            "p.txt:2: a second comment line in a row",
        ),
        (
            b"q g s d 1\n# last\n",
            "p.txt:2: the file ends with a comment",
        ),
        (
            b"q g s d 1\nq g s d 2\n",
            "p.txt:2: document 'd' appears twice for query 'q', first at line 1 (judgment \
             group 'g', sub-group 's')",
        ),
        (b"", "p.txt is empty"),
        (b"q g s d 1\nq g s \x00 1\n", "p.txt:2: contains a NUL byte"),
    ];
    for (data, want) in prefs {
        let got = message(Prefs::from_bytes(data, "p.txt").unwrap_err());
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
    // an indented '#' starts no comment (trec_eval reads such a line as data: query '#x')
    let p = Prefs::from_bytes(b"q g s d 1\n #x g s d 1\n", "p.txt").unwrap();
    assert_eq!(p.queries()[0].id(), b"#x");
    let groups: &[(&[u8], &str)] = &[
        (
            b"q g d 1\nq g d\n",
            "j.txt:2: malformed line: expected 4 fields 'qid jg docno rel', found 3",
        ),
        (
            b"q g d 1\nq g e 1.5\n",
            "j.txt:2: relevance label '1.5' is not a whole number",
        ),
        (
            b"q g d 1\nq h d 0\nq g d 0\n",
            "j.txt:3: document 'd' appears twice for query 'q', first at line 1 (judgment \
             group 'g')",
        ),
    ];
    for (data, want) in groups {
        let got = message(JudgmentGroups::from_bytes(data, "j.txt").unwrap_err());
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
    let qrels_prefs = Prefs::from_qrels_bytes(b"q 0 d 1\nq 0 d 1 x\n", "qp.txt").unwrap_err();
    assert!(message(qrels_prefs).starts_with("qp.txt:2: malformed line: expected 4 fields"));
    let z: &[(&[u8], &str)] = &[
        (
            b"q map 0.5\n",
            "z.txt:1: malformed line: expected 4 fields 'qid measure mean stddev', found 3",
        ),
        (b"q map 0.5 x\n", "z.txt:1: standard deviation 'x' is not"),
        (
            b"q map 0.5 0.1\nq map 0.5 0.2\n",
            "z.txt:2: measure 'map' of query 'q' appears twice (first at line 1)",
        ),
        (b"# comment\nq map 0.5 0.1\n", "z.txt:1: malformed line"),
    ];
    for (data, want) in z {
        let got = message(ZScores::from_bytes(data, "z.txt").unwrap_err());
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
}

/// A judgment group whose sub-groups contradict each other (trec_eval aborts) or call
/// a document both relevant and non-relevant is refused, naming query, group and
/// documents.
#[test]
fn inconsistent_judgment_groups_are_refused() {
    let run = Run::from_bytes(b"q Q0 a 1 3 r\nq Q0 b 2 2 r\n", "r").unwrap();
    let m = MeasureSet::parse(&["prefs"]).unwrap();
    let eval = |text: &[u8]| {
        let p = Prefs::from_bytes(text, "p").unwrap();
        message(p.evaluate(&run, &m, &Options::default(), None).unwrap_err())
    };
    let cycle = eval(b"q g s1 a 2\nq g s1 b 1\nq g s2 b 2\nq g s2 c 1\nq g s3 c 2\nq g s3 a 1\n");
    assert!(
        cycle.starts_with("query 'q', judgment group 'g': documents '")
            && cycle.contains("are each preferred to the other"),
        "{cycle}"
    );
    let zero = eval(b"q g s1 a 2\nq g s1 b 0\nq g s2 b 3\nq g s2 c 1\n");
    assert!(
        zero.starts_with("query 'q', judgment group 'g': document 'b' has level 0"),
        "{zero}"
    );
}

fn write(dir: &std::path::Path, name: &str, text: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(text).unwrap();
    p.display().to_string()
}

fn cli(args: &[&str]) -> Result<String, Error> {
    let mut out = Vec::new();
    irmetrics::cli::run(args, &mut out).map(|()| String::from_utf8(out).unwrap())
}

/// The flags: -R picks the format (and its default measures), measures of another
/// format are refused before any file is read, -Z needs every printed value in its
/// table, -T and -D are accepted in trec_eval's forms.
#[test]
fn command_line_flags() {
    let dir = std::env::temp_dir().join(format!("irmetrics-relinfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let qrels = write(&dir, "qrels", b"q 0 a 1\nq 0 b 0\n");
    let run = write(&dir, "run", b"q Q0 a 1 2 r\nq Q0 b 2 1 r\n");
    let prefs = write(&dir, "prefs", b"q g s a 1\nq g s b 0\n");
    // prefs nickname by default: runid, num_q, 3 counts and 3 ratios
    let out = cli(&["-R", "prefs", &prefs, &run]).unwrap();
    assert_eq!(out.lines().count(), 8, "{out}");
    assert!(
        out.contains("prefs_simp            \tall\t1.0000\n"),
        "{out}"
    );
    // a qrels file read as preferences gives the same preference a > b
    let out = cli(&["-R", "qrels_prefs", "-m", "prefs_simp", &qrels, &run]).unwrap();
    assert_eq!(out, "prefs_simp            \tall\t1.0000\n");
    let out = cli(&[
        "-R",
        "qrels_jg",
        "-m",
        "map_avgjg",
        "-T",
        "trec_results",
        "-D",
        "0",
    ]
    .into_iter()
    .chain([qrels.as_str(), run.as_str()])
    .collect::<Vec<_>>())
    .unwrap();
    assert_eq!(out, "map_avgjg             \tall\t1.0000\n");
    let refused = [
        (vec!["-m", "prefs_simp", &qrels, &run], "measure 'prefs_simp' is computed from preference judgments (-R prefs or -R qrels_prefs), but the judgments are plain qrels"),
        (vec!["-R", "prefs", "-m", "map", "nonexistent", &run], "measure 'map' is computed from plain qrels"),
        (vec!["-R", "qrels_jg", "-m", "prefs", &qrels, &run], "measure 'prefs_num_prefs_poss' is computed from preference judgments"),
        (vec!["-R", "qrels_foo", &qrels, &run], "unknown judgments format -R qrels_foo"),
        (vec!["-T", "other", &qrels, &run], "-T other: the only results format is trec_results"),
        (vec!["-D", "3.q1", &qrels, &run], "-D 3.q1: the debug level must be a whole number"),
    ];
    for (args, want) in refused {
        let got = message(cli(&args).unwrap_err());
        assert!(
            got.starts_with(want),
            "{got:?} does not start with {want:?}"
        );
    }
    // z-scores: every printed value needs its line; gm_map may go without (trec_eval's
    // own table leaves it out)
    let z = write(&dir, "z", b"q map 0.5 0.25\nq num_ret 1 1\n");
    let out = cli(&[
        "-Z", &z, "-q", "-m", "map", "-m", "num_ret", "-m", "gm_map", &qrels, &run,
    ])
    .unwrap();
    assert_eq!(
        out,
        "Znum_ret               \tq\t1.0000\nZmap                   \tq\t2.0000\n\
         Znum_ret               \tall\t1.0000\nZmap                   \tall\t2.0000\n\
         Zgm_map                \tall\t0.0000\n"
    );
    let got = message(cli(&["-Z", &z, "-m", "P.5", &qrels, &run]).unwrap_err());
    assert!(
        got.starts_with(&format!("{z}: no line for measure 'P_5' of query 'q'")),
        "{got}"
    );
    let z0 = write(&dir, "z0", b"q map 0.5 0\n");
    let got = message(cli(&["-Z", &z0, "-m", "map", &qrels, &run]).unwrap_err());
    assert!(
        got.starts_with(&format!(
            "{z0}:1: measure 'map' of query 'q' has standard deviation 0"
        )),
        "{got}"
    );
    let other = write(&dir, "z1", b"x map 0.5 0.1\n");
    let got = message(cli(&["-Z", &other, "-m", "map", &qrels, &run]).unwrap_err());
    assert!(
        got.starts_with(&format!("{other}: no line for query 'q'")),
        "{got}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every row of tests/data/prefs/cases.tsv prints trec_eval 10.0's bytes: generated
/// preferences and judgment groups (transitive sub-groups, ties, level -1, -M, -J, -l,
/// -c) and DL19's qrels read as preferences and as judgment groups, with -Z (see the
/// folder's README.md for where the expected files come from).
#[test]
fn parity_cases_print_trec_eval_bytes() {
    assert_eq!(rows_print_trec_eval_bytes("prefs"), 18);
    // case 3's qrels as preferences: prefs_avgjg_Rnonrel is undefined in trec_eval
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/prefs");
    let (j, r) = (file_in(&dir, "case3.qrels_jg"), file_in(&dir, "case3.run"));
    let e = message(cli(&["-c", "-R", "qrels_prefs", "-m", "all_prefs", &j, &r]).unwrap_err());
    assert!(
        e.starts_with(
            "query 'q63', judgment group 'j2': prefs_avgjg_Rnonrel keeps the group's first R"
        ) && e.contains("its value is undefined"),
        "{e}"
    );
}

/// Every row of tests/data/trec_eval10/cases.tsv prints trec_eval 10.0's bytes: the
/// qrels measures no nickname names (yaap, dcg, ideal_dcg, with and without gain pairs,
/// printed in trec_eval's order), and -c's scoring of a judged query missing from the
/// run, where trec_eval ranks one unjudged stand-in document and resets num_ret,
/// utility, relstring, rbp_resid and unj by name only (utility_2,-1,0,0 keeps -1);
/// fractional gain pairs (trec_eval's gain-table order); a nickname beside parameters
/// of its measures (the parameters replace the defaults); -c with -Z (num_rel's `all`
/// stays the raw count).
#[test]
fn trec_eval_10_measures_outside_the_nicknames_print_its_bytes() {
    assert_eq!(rows_print_trec_eval_bytes("trec_eval10"), 33);
}

/// Runs each row of `tests/data/<folder>/cases.tsv` (flags, judgments, run, expected
/// output) through the command line and compares the bytes; returns the number of rows.
fn rows_print_trec_eval_bytes(folder: &str) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(folder);
    let table = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut rows = 0;
    for line in table.lines().skip(1) {
        let [flags, judgments, run, expected] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("bad row {line:?}");
        };
        let file = |f: &str| file_in(&dir, f);
        let mut argv: Vec<String> = Vec::new();
        let mut words = flags.split_whitespace();
        while let Some(w) = words.next() {
            argv.push(w.to_string());
            if w == "-Z" {
                argv.push(file(words.next().unwrap()));
            }
        }
        argv.extend([file(judgments), file(run)]);
        let got = cli(&argv.iter().map(String::as_str).collect::<Vec<_>>())
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        let want = std::fs::read_to_string(dir.join(expected)).unwrap();
        assert!(got == want, "{line}: output differs from trec_eval's");
        rows += 1;
    }
    rows
}

fn file_in(dir: &std::path::Path, name: &str) -> String {
    dir.join(name).display().to_string()
}
