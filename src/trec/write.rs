//! Writers for TREC runs and qrels, and atomic file output.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::qrels::Qrels;
use crate::run::{Run, RunQuery};

/// Write `data` to `path` without ever leaving a partial or lost file:
///
/// - a regular file (new or existing) is replaced atomically: a temporary file in the
///   same folder (tempfile), synced, renamed over `path`, then the folder synced so that
///   the rename itself survives a crash; an existing file keeps its permission bits, a
///   new one gets the usual `0666` less the umask;
/// - a symbolic link is followed: the file it points to is replaced, the link stays;
/// - a special file (a device such as `/dev/null` or `/dev/stdout`, a FIFO) is written
///   through, as a shell redirection would;
/// - an error (a full disk, no permission) says "cannot write" and leaves what was at
///   `path` as it was.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    write_atomically_with(path, |w| w.write_all(data))
}

/// [`write_atomically`] of what `fill` writes, as it writes it (large output is not
/// held whole in memory first); an error from `fill` leaves `path` as it was.
pub fn write_atomically_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let err = |e: std::io::Error| Error::Write {
        path: path.to_path_buf(),
        source: e,
    };
    // follow links to the file they name (a dangling link names the file to create)
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&target).map_err(err)?;
                target = match target.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => break,
        }
    }
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(err(e)),
    };
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(err(std::io::Error::other("it is a directory")));
        }
        if !m.is_file() {
            // a device or a FIFO: written through
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(err)?;
            return fill(&mut f).and_then(|()| f.flush()).map_err(err);
        }
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".irmetrics-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // the mode passes through the umask, as for any new file
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| err(without_temp_name(e)))?;
    if let Some(m) = &existing {
        // an existing file keeps its permission bits exactly
        std::fs::set_permissions(tmp.path(), m.permissions()).map_err(err)?;
    }
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        fill(&mut w).and_then(|()| w.flush()).map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(&target).map_err(|e| err(e.error))?;
    // the rename is durable once the folder is (not possible everywhere: best effort)
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// tempfile's error in creating the temporary file, without the name it gave it: the
/// error names the file asked for, not `.irmetrics-XXXX.tmp`. tempfile wraps the
/// system's error in one of its own that only adds ` at path "..."` to its text (its
/// `source` is not the system's error), so that suffix is cut; the kind is kept.
fn without_temp_name(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path \"") {
        Some((system, _)) => std::io::Error::new(e.kind(), system.to_string()),
        None => e,
    }
}

/// What the readers take for something other than text at the very start of a file: a
/// UTF-8 byte-order mark (skipped) and the magic numbers of gzip (decompressed), zstd,
/// bzip2 and xz (refused by name); see `open_input` and `text_start`.
const FILE_MARKERS: &[&[u8]] = &[
    b"\xef\xbb\xbf",
    b"\x1f\x8b",
    b"\x28\xb5\x2f\xfd",
    b"BZh",
    b"\xfd7zXZ\x00",
];

/// A file whose first id starts with a [`FILE_MARKERS`] entry would not read back (its
/// first id changed, or the whole file taken for compressed data): such a file starts
/// with a comment line instead, which both readers skip (as trec_eval does in qrels).
pub(crate) fn guard_first_id(
    first: Option<&[u8]>,
    w: &mut (impl std::io::Write + ?Sized),
) -> std::io::Result<()> {
    match first {
        Some(id) if FILE_MARKERS.iter().any(|m| id.starts_with(m)) => {
            w.write_all(b"# written by irmetrics\n")
        }
        _ => Ok(()),
    }
}

/// Write a run in TREC format, ranked in trec_eval order, ranks from 1. Ids and the
/// tag are written as they are (bytes); scores in the shortest text that reads back as
/// the same double (`{:?}`: `-0.0`, `1e-320`, `inf`).
pub fn write_run(run: &Run, w: &mut impl std::io::Write) -> std::io::Result<()> {
    guard_first_id(run.queries().first().map(|q| q.id()), w)?;
    let tag: &[u8] = if run.runid().is_empty() {
        b"irmetrics"
    } else {
        run.runid()
    };
    let mut order = Vec::new();
    for q in run.queries() {
        write_run_query(q, tag, &mut order, w)?;
    }
    Ok(())
}

/// One query's lines of [`write_run`] (`order`: a buffer for its ranking).
pub(crate) fn write_run_query(
    q: &RunQuery,
    tag: &[u8],
    order: &mut Vec<u32>,
    w: &mut impl std::io::Write,
) -> std::io::Result<()> {
    q.ranking(order);
    for (rank, &i) in order.iter().enumerate() {
        w.write_all(&q.qid)?;
        w.write_all(b" Q0 ")?;
        w.write_all(q.docs.get(i as usize))?;
        write!(w, " {} {:?} ", rank + 1, q.values[i as usize])?;
        w.write_all(tag)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Write qrels in TREC format.
pub fn write_qrels(qrels: &Qrels, w: &mut impl std::io::Write) -> std::io::Result<()> {
    guard_first_id(qrels.queries().first().map(|q| q.id()), w)?;
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
    fn a_missing_folder_is_told_without_the_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-folder").join("out.run");
        let msg = write_atomically(&path, b"x").unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("cannot write {}: ", path.display())),
            "{msg}"
        );
        assert!(
            !msg.contains(".irmetrics-") && !msg.contains(" at path "),
            "{msg}"
        );
        let os = std::io::Error::from_raw_os_error(2).to_string();
        assert!(msg.ends_with(&os), "{msg}");
    }

    #[cfg(unix)]
    #[test]
    fn atomic_output_keeps_links_modes_and_devices() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.txt");
        std::fs::write(&file, b"old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("out.txt", &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // a device is written through, not replaced by a regular file
        write_atomically(Path::new("/dev/null"), b"x").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        // an error leaves the file as it was and says "cannot write"
        let e = write_atomically(&dir.path().join("no/such/dir/f"), b"x").unwrap_err();
        assert!(e.to_string().starts_with("cannot write "), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        // leaves no temporary file behind
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2);
    }

    /// A first id that starts like a byte-order mark or a compressed file's magic
    /// number reads back as it was (it used to lose its BOM, or make the whole file
    /// "corrupt gzip data" or "bzip2-compressed").
    #[test]
    fn first_ids_that_look_like_file_markers_read_back() {
        let dir = tempfile::tempdir().unwrap();
        for m in FILE_MARKERS.iter().filter(|m| !m.contains(&0)) {
            let qid = [*m, b"q"].concat();
            let mut b = Qrels::builder();
            b.add(&qid, b"d", 1).unwrap();
            let q = b.build().unwrap();
            let mut r = Run::builder();
            r.add(&qid, b"d", 1.0).unwrap();
            let r = r.build().unwrap();
            let (qp, rp) = (dir.path().join("q"), dir.path().join("r"));
            let mut buf = Vec::new();
            write_qrels(&q, &mut buf).unwrap();
            write_atomically(&qp, &buf).unwrap();
            buf.clear();
            write_run(&r, &mut buf).unwrap();
            write_atomically(&rp, &buf).unwrap();
            let q2 = Qrels::from_file(&qp).unwrap();
            let r2 = Run::from_file(&rp).unwrap();
            assert_eq!(q2.queries()[0].id(), &qid[..]);
            assert_eq!(r2.queries()[0].id(), &qid[..]);
        }
        // other files start with their first line, as before
        let r = parse_run(b"q Q0 d 1 1 t\n", "r").unwrap();
        let mut buf = Vec::new();
        write_run(&r, &mut buf).unwrap();
        assert_eq!(buf, b"q Q0 d 1 1.0 t\n");
    }

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
