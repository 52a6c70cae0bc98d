//! Times reading a parquet search log into sessions (`online::read_log`) against
//! decoding the same columns alone (the parquet crate's floor for that file), each
//! `REPEAT` times in one process: `cargo run --release --features mimalloc --example
//! online_read -- LOG.parquet [REPEAT]` (a log written by `benches/online.py`).
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use irmetrics::online::{open_parquet, read_log, LogFormat, LogOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = std::path::PathBuf::from(&args[0]);
    let repeat: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for _ in 0..repeat {
        // the columns `read_log` reads, as it opens them; the row groups shared among
        // the threads
        let t = Instant::now();
        let file = open_parquet(&path, &LogOptions::default()).unwrap();
        let rows: usize = std::thread::scope(|s| {
            let file = &file;
            let tasks: Vec<_> = (0..threads)
                .map(|k| {
                    s.spawn(move || {
                        (k..file.len())
                            .step_by(threads)
                            .flat_map(|g| file.batches(g).unwrap())
                            .map(|b| b.unwrap().0.num_rows())
                            .sum::<usize>()
                    })
                })
                .collect();
            tasks.into_iter().map(|t| t.join().unwrap()).sum()
        });
        let decode = t.elapsed();
        let t = Instant::now();
        let log = read_log(&path, LogFormat::Parquet, LogOptions::default()).unwrap();
        println!(
            "decode {rows} rows on {threads} threads {decode:?}  read_log {:?} ({} events, {} sessions)",
            t.elapsed(),
            log.len(),
            log.n_sessions()
        );
    }
}
