//! Stable-toolchain fuzz driver (cargo-fuzz needs nightly). Run it niced and bounded:
//!
//! ```sh
//! cargo run --release --example fuzz -- seed ../shared/conformance   # (re)seed fuzz/corpus
//! nice -n 19 cargo run --release --example fuzz -- run --seconds 600 [--target qrels] [--seed 7] [--save]
//! cargo run --example fuzz -- replay [--target rows]                 # each stored input and its outcome
//! ```
//!
//! `run` mutates the stored corpus (`fuzz/corpus/<target>/`), reports executions, time,
//! distinct outcomes and crashes; `--save` keeps the inputs that produced a new outcome
//! (capped) in the corpus, and crashes go to `fuzz/crashes/`. Exit status 1 on a crash.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/fuzz_support/mod.rs"]
mod fuzz_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fuzz_support::{corpus_dir, fuzz, load_corpus, name_of, quiet_panics, Target};

fn head_lines(data: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, line) in data.split(|&c| c == b'\n').enumerate() {
        if i >= n {
            break;
        }
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

fn files_named(dir: &Path, pred: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name()
                .is_some_and(|n| n == "expected" || n == "reference" || n == "pytrec_eval")
            {
                continue;
            }
            files_named(&p, pred, out);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(pred) {
            out.push(p);
        }
    }
}

fn save(target: Target, data: &[u8]) {
    let dir = corpus_dir(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name_of(data)), data).unwrap();
}

fn seed(conformance: &Path) {
    let mut qrels = Vec::new();
    let mut runs = Vec::new();
    files_named(
        conformance,
        &|n| n.starts_with("qrels") && !n.ends_with(".gz"),
        &mut qrels,
    );
    files_named(
        conformance,
        &|n| (n.starts_with("run") || n.starts_with("results")) && !n.ends_with(".gz"),
        &mut runs,
    );
    let mut pairs = Vec::new();
    for p in &qrels {
        let d = head_lines(&std::fs::read(p).unwrap(), 40);
        save(Target::Qrels, &d);
        let run = p.with_file_name(
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .replacen("qrels", "run", 1),
        );
        if let Ok(r) = std::fs::read(&run) {
            let mut e = d.clone();
            e.extend_from_slice(b"%%\n");
            e.extend_from_slice(&head_lines(&r, 60));
            pairs.push(e);
        }
    }
    for p in &runs {
        save(Target::Run, &head_lines(&std::fs::read(p).unwrap(), 60));
    }
    for e in &pairs {
        save(Target::Eval, e);
    }
    println!(
        "seeded: {} qrels, {} runs, {} eval pairs",
        qrels.len(),
        runs.len(),
        pairs.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("seed") => seed(Path::new(
            args.get(1).map_or("../shared/conformance", String::as_str),
        )),
        Some("run") => {
            let mut seconds = 60u64;
            let mut seed_v = 1u64;
            let mut targets: Vec<Target> = Target::ALL.to_vec();
            let mut keep = false;
            let mut i = 1;
            while i < args.len() {
                match args[i].as_str() {
                    "--seconds" => {
                        seconds = args[i + 1].parse().unwrap();
                        i += 1;
                    }
                    "--seed" => {
                        seed_v = args[i + 1].parse().unwrap();
                        i += 1;
                    }
                    "--target" => {
                        targets = vec![Target::from_name(&args[i + 1]).expect("unknown target")];
                        i += 1;
                    }
                    "--save" => keep = true,
                    other => panic!("unknown argument {other}"),
                }
                i += 1;
            }
            quiet_panics();
            let per = Duration::from_secs(seconds) / targets.len() as u32;
            let mut crashed = false;
            for t in targets {
                let corpus = load_corpus(t);
                let st = fuzz(t, &corpus, seed_v, per, u64::MAX);
                println!(
                    "target={} corpus={} executions={} seconds={:.1} execs_per_s={:.0} outcomes={} new_inputs={} slowest_ms={} crashes={}",
                    t.name(),
                    corpus.len(),
                    st.executions,
                    st.elapsed.as_secs_f64(),
                    st.executions as f64 / st.elapsed.as_secs_f64().max(1e-9),
                    st.signatures,
                    st.new_inputs.len(),
                    st.slowest.as_millis(),
                    st.crashes.len()
                );
                if keep {
                    for inp in st.new_inputs.iter().filter(|i| i.len() <= 4096).take(40) {
                        save(t, inp);
                    }
                }
                for (msg, inp) in &st.crashes {
                    crashed = true;
                    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("fuzz")
                        .join("crashes")
                        .join(t.name());
                    std::fs::create_dir_all(&dir).unwrap();
                    let path = dir.join(name_of(inp));
                    std::fs::write(&path, inp).unwrap();
                    println!("  CRASH {}: {}", path.display(), msg);
                }
            }
            std::process::exit(i32::from(crashed));
        }
        Some("replay") => {
            // each stored input of the targets named (all by default) and its outcome
            let targets: Vec<Target> = match args.get(1).map(String::as_str) {
                Some("--target") => vec![Target::from_name(&args[2]).expect("unknown target")],
                _ => Target::ALL.to_vec(),
            };
            quiet_panics();
            let mut crashed = false;
            for t in targets {
                for inp in load_corpus(t) {
                    match fuzz_support::execute(t, &inp) {
                        fuzz_support::Outcome::Ok(sig) => println!("{} ok {sig}", t.name()),
                        fuzz_support::Outcome::Crash(msg) => {
                            crashed = true;
                            println!(
                                "{} CRASH {msg} on {:?}",
                                t.name(),
                                String::from_utf8_lossy(&inp)
                            );
                        }
                    }
                }
            }
            std::process::exit(i32::from(crashed));
        }
        _ => {
            eprintln!("usage: fuzz seed [CONFORMANCE_DIR] | fuzz replay [--target T] | fuzz run [--seconds N] [--target T] [--seed S] [--save]");
            std::process::exit(2);
        }
    }
}
