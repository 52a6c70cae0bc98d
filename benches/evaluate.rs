#![allow(clippy::unwrap_used)]
//! Criterion benchmarks for the crate: parsing and evaluating a synthetic run.
//! Run with `cargo bench`.

use criterion::{criterion_group, criterion_main, Criterion};
use irmetrics::{Evaluator, MeasureSet, Options, Qrels, Run};

/// A seeded synthetic collection: `nq` queries x `depth` results, ~10% judged.
fn synthetic(nq: usize, depth: usize) -> (Vec<u8>, Vec<u8>) {
    let mut state: u64 = 0x9E3779B97F4A7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut qrels = Vec::new();
    let mut run = Vec::new();
    for q in 0..nq {
        for d in 0..depth {
            let r = next();
            let score = (r % 100_000) as f64 / 1000.0;
            run.extend_from_slice(
                format!("{q} Q0 doc{} {} {score} bench\n", r % 50_000, d + 1).as_bytes(),
            );
            if r % 10 == 0 {
                qrels.extend_from_slice(
                    format!("{q} 0 doc{} {}\n", r % 50_000, (r >> 8) % 3).as_bytes(),
                );
            }
        }
    }
    (qrels, run)
}

fn bench(c: &mut Criterion) {
    let (qrels_text, run_text) = synthetic(1000, 100);
    // Duplicate doc ids can occur in the synthetic run: keep the first of each.
    let run_text = dedup(&run_text);
    let qrels_text = dedup_qrels(&qrels_text);
    c.bench_function("parse run 1k x 100", |b| {
        b.iter(|| Run::from_bytes(&run_text, "bench").unwrap())
    });
    let qrels = Qrels::from_bytes(&qrels_text, "bench").unwrap();
    let run = Run::from_bytes(&run_text, "bench").unwrap();
    let ms =
        MeasureSet::parse(&["P.10", "recall.100", "map", "ndcg_cut.10", "recip_rank"]).unwrap();
    let opts = Options {
        complete: true,
        ..Options::default()
    };
    let ev = Evaluator::new(qrels, ms, opts).unwrap();
    c.bench_function("evaluate 1k x 100, 5 measures", |b| {
        b.iter(|| ev.evaluate(&run).unwrap())
    });
}

fn dedup(text: &[u8]) -> Vec<u8> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for line in text.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
        let f: Vec<&[u8]> = line.split(|&c| c == b' ').collect();
        if seen.insert((f[0].to_vec(), f[2].to_vec())) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

fn dedup_qrels(text: &[u8]) -> Vec<u8> {
    dedup(text)
}

criterion_group!(benches, bench);
criterion_main!(benches);
