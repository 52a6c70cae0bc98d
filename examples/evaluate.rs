//! Evaluate a run from Rust, without Python: read files, compute measures, print them.
//!
//! `cargo run --example evaluate -- QRELS RUN`

use irmetrics::{Evaluator, MeasureSet, Options, Qrels, Run};

fn main() -> Result<(), irmetrics::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (qrels_path, run_path) = match args.as_slice() {
        [q, r] => (q.clone(), r.clone()),
        _ => {
            eprintln!(
                "usage: cargo run --example evaluate -- QRELS RUN\n\n\
                 Prints MAP, P@10, nDCG@10 and MRR of RUN against QRELS (TREC files; gzip\n\
                 is detected). With the judgments and a run shipped in the repository:\n\n  \
                 cargo run --example evaluate -- tests/data/dl19-passage.qrels tests/data/dl19-synthetic.run"
            );
            std::process::exit(2);
        }
    };
    let qrels = Qrels::from_file(&qrels_path)?;
    let run = Run::from_file(&run_path)?;
    let measures = MeasureSet::parse(&["map", "P.10", "ndcg_cut.10", "recip_rank"])?;
    let evaluator = Evaluator::new(
        qrels,
        measures,
        Options {
            complete: true,
            ..Options::default()
        },
    )?;
    let results = evaluator.evaluate(&run)?;
    for (i, col) in results.columns().iter().enumerate() {
        println!("{:<12} {:.4}", col.name, results.summary(i));
    }
    Ok(())
}
