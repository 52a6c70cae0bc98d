//! A trec_eval replacement in plain Rust (no Python): `cargo run --release --example
//! trec_eval -- -q -m all_trec QRELS RUN`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Err(e) = irmetrics::cli::run(&args, &mut out) {
        eprintln!("irmetrics: {e}");
        std::process::exit(match e {
            irmetrics::Error::Option(_) => 2,
            _ => 1,
        });
    }
}
