//! Parsing speed from memory (no disk, no page cache), in ns per line:
//! `cargo run --release --example parse_speed -- [qrels|run] FILE [THREADS] [REPS]`.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use irmetrics::{Qrels, Run};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = std::fs::read(&args[1]).unwrap();
    let threads: usize = args.get(2).and_then(|t| t.parse().ok()).unwrap_or(0);
    let reps: usize = args.get(3).and_then(|t| t.parse().ok()).unwrap_or(3);
    let lines = memchr::memchr_iter(b'\n', &data).count() as f64;
    irmetrics::parallel::with_threads(threads, || {
        for _ in 0..reps {
            let t = Instant::now();
            let queries = match args[0].as_str() {
                "qrels" => Qrels::from_bytes(&data, "qrels").unwrap().len(),
                _ => Run::from_bytes(&data, "run").unwrap().len(),
            };
            let s = t.elapsed().as_secs_f64();
            println!(
                "{} {:.3} s, {:.1} ns/line ({queries} queries)",
                args[0],
                s,
                s * 1e9 / lines
            );
        }
    });
}
