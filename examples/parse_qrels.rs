//! Parse a qrels file and report its size (used to profile the reader).
#![allow(clippy::unwrap_used)]

fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = std::time::Instant::now();
    for _ in 0..5 {
        let q = irmetrics::Qrels::from_file(&path).unwrap();
        println!(
            "{} queries, {} judgments in {:?}",
            q.len(),
            q.num_judgments(),
            t.elapsed()
        );
    }
}
