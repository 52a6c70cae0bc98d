//! Times the phases of a file evaluation (parse qrels, parse run, evaluate):
//! `cargo run --release --example profile_phases -- QRELS RUN [THREADS]`.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use irmetrics::{Evaluator, MeasureSet, Options, Qrels, Run};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let threads: usize = args.get(2).and_then(|t| t.parse().ok()).unwrap_or(0);
    irmetrics::parallel::with_threads(threads, || {
        let t = Instant::now();
        let qrels = Qrels::from_file(&args[0]).unwrap();
        let t_q = t.elapsed();
        let t = Instant::now();
        let run = Run::from_file(&args[1]).unwrap();
        let t_r = t.elapsed();
        let ms = MeasureSet::parse(&[
            "P.10",
            "recall.100",
            "map",
            "ndcg_cut.10",
            "recip_rank_cut.10",
        ])
        .unwrap();
        let ev = Evaluator::new(
            qrels,
            ms,
            Options {
                n_threads: threads,
                ..Options::default()
            },
        )
        .unwrap();
        let t = Instant::now();
        let res = ev.evaluate(&run).unwrap();
        let t_e = t.elapsed();
        println!(
            "qrels {:?}  run {:?}  evaluate {:?}  ({} queries, map {:.4})",
            t_q,
            t_r,
            t_e,
            res.num_queries(),
            res.summary_by_name("map").unwrap()
        );
    });
}
