//! Writers for TREC runs and qrels, and atomic file output.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::qrels::Qrels;
use crate::run::Run;

/// Write `data` to `path` atomically: a temporary file in the same folder (tempfile),
/// synced, renamed over `path`, then the folder synced so that the rename itself
/// survives a crash. An interrupted run never leaves a partial file.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".irmetrics-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(data).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    // the rename is durable once the folder is (not possible everywhere: best effort)
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Write a run in TREC format, ranked in trec_eval order, ranks from 1.
pub fn write_run(run: &Run, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let tag: &[u8] = if run.runid().is_empty() {
        b"irmetrics"
    } else {
        run.runid()
    };
    let mut order = Vec::new();
    for q in run.queries() {
        q.ranking(&mut order);
        for (rank, &i) in order.iter().enumerate() {
            w.write_all(&q.qid)?;
            w.write_all(b" Q0 ")?;
            w.write_all(q.docs.get(i as usize))?;
            write!(w, " {} {:?} ", rank + 1, q.values[i as usize])?;
            w.write_all(tag)?;
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Write qrels in TREC format.
pub fn write_qrels(qrels: &Qrels, w: &mut impl std::io::Write) -> std::io::Result<()> {
    for q in qrels.queries() {
        for (doc, label) in q.iter() {
            w.write_all(&q.qid)?;
            w.write_all(b" 0 ")?;
            w.write_all(doc)?;
            writeln!(w, " {label}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::parse_run;

    #[test]
    fn written_run_reads_back() {
        let run = parse_run(
            b"q1 0 d1 1 0.5 tag\nq1 0 d2 2 inf tag\nq2 0 d1 1 -0.25 tag\n",
            "r",
        )
        .unwrap();
        let mut buf = Vec::new();
        write_run(&run, &mut buf).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "q1 Q0 d2 1 inf tag\nq1 Q0 d1 2 0.5 tag\nq2 Q0 d1 1 -0.25 tag\n"
        );
        let back = parse_run(&buf, "w").unwrap();
        assert_eq!(back.num_results(), 3);
        assert_eq!(back.runid(), b"tag");
    }
}
