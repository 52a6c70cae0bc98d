//! Parse a run file and report its size: `cargo run --release --example parse_only -- RUN`
//! (used to profile the reader).
#![allow(clippy::unwrap_used)]

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = std::time::Instant::now();
    let run = irmetrics::Run::from_file(&path).unwrap();
    println!(
        "{} queries, {} results in {:?}",
        run.len(),
        run.num_results(),
        t.elapsed()
    );
}
