//! TREC file formats: readers for qrels and runs with trec_eval's parsing rules, and
//! writers. Huge runs are read in blocks and parsed in parallel; nothing is kept per
//! line except the document id bytes and the score.
//!
//! Rules (see the conformance README, "trec_eval semantics"): files are bytes; fields
//! are separated by ASCII whitespace (space, `\t`, `\n`, `\v`, `\f`, `\r`); ids are
//! opaque byte strings. Where trec_eval silently reinterprets input (`abc` or `2.5x` as
//! a score, `1.7` as a label, NaN) irmetrics refuses with a clear error instead.

//!
//! | file | what it holds |
//! |---|---|
//! | `io.rs` | opening files (gzip, `-`), reading blocks of whole lines on a thread |
//! | `fields.rs` | splitting lines into fields, strict labels and scores, chunking |
//! | `qrels.rs` | the qrels reader (`Qrels::from_file`, `from_bytes`) |
//! | `run.rs` | the run reader (`Run::from_file`, `from_bytes`), pieces to a sink |
//! | `lines.rs` | the small files of trec_eval's other formats (preferences, judgment groups, z-scores), line by line |
//! | `write.rs` | TREC writers and atomic file output |

mod fields;
mod io;
pub(crate) mod lines;
mod qrels;
mod run;
mod write;

pub use io::{
    check_max_line_env, max_line_bytes, open_input, read_input, read_input_cancellable,
    set_max_line_bytes, DEFAULT_MAX_LINE_BYTES,
};
pub(crate) use io::{input_size, Blocks};
pub use qrels::{parse_qrels, read_qrels_cancellable};
pub use run::{parse_run, parse_run_reader, read_run, read_run_cancellable};
pub(crate) use run::{read_run_blocks, read_run_counted, RunReader};
pub(crate) use write::{guard_first_id, write_run_query};
pub use write::{write_atomically, write_atomically_with, write_qrels, write_run};
