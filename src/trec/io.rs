//! Opening inputs (files, gzip, standard input) and reading them in blocks of whole
//! lines on a thread of their own.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// Bytes read per block when streaming a run.
pub(super) const BLOCK: usize = 16 << 20;

/// Open a file for reading, transparently decompressing gzip (detected by its magic
/// bytes, not its name). `-` is standard input.
pub fn open_input(path: &Path) -> Result<Box<dyn Read + Send>> {
    open_input_sized(path).map(|(r, _)| r)
}

/// [`open_input`], plus the size of the content when known (a plain file's length).
pub(crate) fn open_input_sized(path: &Path) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    let io_err = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut size = None;
    let raw: Box<dyn Read + Send> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other("it is a directory, not a file"),
            });
        }
        if meta.is_file() {
            size = Some(meta.len());
        }
        Box::new(std::fs::File::open(path).map_err(io_err)?)
    };
    let mut br = BufReader::with_capacity(1 << 16, raw);
    let head = br.fill_buf().map_err(io_err)?;
    if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        let gz = GzReader {
            inner: flate2::bufread::MultiGzDecoder::new(br),
        };
        Ok((Box::new(gz), None))
    } else {
        Ok((Box::new(br), size))
    }
}

/// Wraps the gzip decoder so that its errors say the data is corrupt.
struct GzReader<R: BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
}

impl<R: BufRead> Read for GzReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("corrupt or truncated gzip data ({e})"),
            )
        })
    }
}

/// Read a whole file (gzip and `-` handled as in [`open_input`]).
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    let mut r = open_input(path)?;
    let mut data = Vec::new();
    r.read_to_end(&mut data).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    Ok(data)
}

/// Block size for an input of `size_hint` bytes: a small input needs no full-size buffer.
pub(crate) fn block_size(size_hint: Option<u64>) -> usize {
    size_hint.map_or(BLOCK, |n| (n as usize).saturating_add(1).clamp(4096, BLOCK))
}

/// Read `r` in blocks of whole lines on a thread of its own, so that reading overlaps
/// parsing. Each message is a buffer and the length of its whole lines; buffers come
/// back through `recycled` and are reused (zeroed once, when first allocated).
pub(super) fn read_blocks(
    mut r: impl Read,
    block: usize,
    tx: std::sync::mpsc::SyncSender<std::io::Result<(Vec<u8>, usize)>>,
    recycled: std::sync::mpsc::Receiver<Vec<u8>>,
) {
    let mut size = block.max(1);
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = recycled.try_recv().unwrap_or_default();
        if buf.len() < size {
            buf.resize(size, 0);
        }
        let mut filled = carry.len();
        buf[..filled].copy_from_slice(&carry);
        carry.clear();
        let mut eof = false;
        while filled < size {
            match r.read(&mut buf[filled..size]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        let cut = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(i) => i + 1,
                None => {
                    // One line longer than the buffer: read on with a larger one.
                    carry.extend_from_slice(&buf[..filled]);
                    size *= 2;
                    continue;
                }
            }
        };
        carry.extend_from_slice(&buf[cut..filled]);
        if cut > 0 && tx.send(Ok((buf, cut))).is_err() {
            return; // the parser stopped (an error)
        }
        if eof {
            return;
        }
    }
}
