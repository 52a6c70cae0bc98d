//! Times `fusion::fuse` on issue 14's workload (`benches/fusion.py`'s shape: 5 seeded
//! runs x 5,000 queries, each retrieving 100 of a query's 200 candidates with uniform
//! scores, stored in no particular order), `REPEAT` warm calls a method in one process,
//! and prints a digest of each fused run so that two builds can be checked to fuse the
//! same bits: `cargo run --release --features mimalloc --example fuse_speed -- [REPEAT]
//! [QUERIES]` (`FUSE_ONLY=NAME` times one setting alone).
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use irmetrics::fusion::{fuse, Method, Norm, Params};
use irmetrics::Run;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repeat: usize = args.first().and_then(|r| r.parse().ok()).unwrap_or(15);
    let nq: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5_000);
    let (n_runs, depth) = (5, 100);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let runs: Vec<Run> = (0..n_runs)
        .map(|r| {
            let mut text = String::new();
            for q in 0..nq {
                // `depth` of the 2 x depth candidates, by a partial Fisher-Yates shuffle
                let mut pool: Vec<usize> = (0..2 * depth).collect();
                for i in 0..depth {
                    let j = i + (rng.next_u64() as usize) % (2 * depth - i);
                    pool.swap(i, j);
                }
                for &d in &pool[..depth] {
                    let score = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 30.0;
                    writeln!(text, "Q{q} Q0 D{q}_{d} 0 {score} r{r}").unwrap();
                }
            }
            Run::from_bytes(text.as_bytes(), &format!("r{r}")).unwrap()
        })
        .collect();
    let refs: Vec<&Run> = runs.iter().collect();
    let weights = Params::new().with_weights(vec![1.0 / n_runs as f64; n_runs]);
    let settings = [
        ("mnz", Method::Mnz, None, Params::new()),
        ("rrf", Method::Rrf, None, Params::new()),
        (
            "wsum min-max",
            Method::Wsum,
            Some(Norm::MinMax),
            weights.clone(),
        ),
        ("sum sum", Method::Sum, Some(Norm::Sum), Params::new()),
        ("bordafuse", Method::BordaFuse, None, Params::new()),
    ];
    // `FUSE_ONLY=mnz` (a setting's name) times that one alone, for a profiler
    let only = std::env::var("FUSE_ONLY").ok();
    for (name, method, norm, params) in settings {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut fused = fuse(&refs, method, norm, &params).unwrap();
        let mut times = Vec::with_capacity(repeat);
        for _ in 0..repeat {
            let t = Instant::now();
            fused = fuse(&refs, method, norm, &params).unwrap();
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name:<13} median {:.2} ms  min {:.2} ms  digest {:016x}",
            1e3 * times[times.len() / 2],
            1e3 * times[0],
            digest(&fused)
        );
    }
}

/// A hash of every (query, document, score bits), documents sorted within a query: the
/// same for two fused runs with the same scores whatever order they hold them in.
fn digest(run: &Run) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for q in run.queries() {
        let mut docs: Vec<(&[u8], u64)> = q.iter().map(|(d, s)| (d, s.to_bits())).collect();
        docs.sort_unstable();
        q.id().hash(&mut h);
        docs.hash(&mut h);
    }
    h.finish()
}
