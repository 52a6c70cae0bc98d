//! Opening inputs (files, gzip, standard input) and reading them in blocks of whole
//! lines on a thread of their own.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::progress::Progress;

/// Bytes read per block when streaming a run.
pub(super) const BLOCK: usize = 16 << 20;

/// The longest line a TREC file may have, in bytes, unless raised with
/// [`set_max_line_bytes`] (or `IRMETRICS_MAX_LINE_BYTES`, or the command line's
/// `--max-line-bytes`): a "line" without an end (`/dev/zero`, a corrupt or malicious
/// file) is refused instead of filling memory.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

static MAX_LINE: AtomicUsize = AtomicUsize::new(0);
/// Whether [`set_max_line_bytes`] set the limit (the variable is not read then).
static MAX_LINE_SET: AtomicBool = AtomicBool::new(false);

/// Set the longest line accepted in TREC files, in bytes (at least 64).
pub fn set_max_line_bytes(n: usize) {
    MAX_LINE.store(n.max(64), Ordering::Relaxed);
    MAX_LINE_SET.store(true, Ordering::Relaxed);
}

/// An `IRMETRICS_MAX_LINE_BYTES` that is not a whole number as an error, unless
/// [`set_max_line_bytes`] set the limit (see [`crate::check_environment`]).
pub fn check_max_line_env() -> Result<()> {
    match unread_env() {
        Some(what) => Err(Error::Option(format!(
            "{what}; give the longest line accepted in bytes (e.g. 4194304) or unset it \
             (default {DEFAULT_MAX_LINE_BYTES})"
        ))),
        None => Ok(()),
    }
}

/// What is wrong with an `IRMETRICS_MAX_LINE_BYTES` that is not a whole number, unless
/// [`set_max_line_bytes`] set the limit and the variable goes unread.
fn unread_env() -> Option<String> {
    match env_max_line_bytes() {
        Some(Err(v)) if !MAX_LINE_SET.load(Ordering::Relaxed) => Some(format!(
            "IRMETRICS_MAX_LINE_BYTES={v:?} is not a whole number of bytes"
        )),
        _ => None,
    }
}

/// `IRMETRICS_MAX_LINE_BYTES`: None when unset, its text when not a whole number.
fn env_max_line_bytes() -> Option<std::result::Result<usize, String>> {
    let v = std::env::var("IRMETRICS_MAX_LINE_BYTES").ok()?;
    Some(v.trim().parse::<usize>().map_err(|_| v))
}

/// The longest line accepted in TREC files, in bytes.
pub fn max_line_bytes() -> usize {
    match MAX_LINE.load(Ordering::Relaxed) {
        0 => {
            let n = match env_max_line_bytes() {
                Some(Ok(n)) => n,
                _ => DEFAULT_MAX_LINE_BYTES,
            }
            .max(64);
            MAX_LINE.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// The message for a line over the limit; it names an `IRMETRICS_MAX_LINE_BYTES` that
/// is not a number (the default applied then: a file read before anything called
/// [`crate::check_environment`], as Python's `Run.from_file` may be).
pub(super) fn too_long() -> String {
    let unread = unread_env().map_or_else(String::new, |what| format!("; {what}"));
    format!(
        "line longer than {} bytes (is this a TREC file? raise the limit with \
         --max-line-bytes or IRMETRICS_MAX_LINE_BYTES if it is{unread})",
        max_line_bytes()
    )
}

/// Open a file for reading, transparently decompressing gzip (detected by its magic
/// bytes, not its name). `-` is standard input. Other compressions are named and
/// refused.
pub fn open_input(path: &Path) -> Result<Box<dyn Read + Send>> {
    open_input_counted(path, None)
}

/// [`open_input`], adding the bytes read from the file (before any decompression) to
/// `read`, for a progress report.
fn open_input_counted(path: &Path, read: Option<Arc<AtomicU64>>) -> Result<Box<dyn Read + Send>> {
    let io_err = |e: std::io::Error| Error::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let raw: Box<dyn Read + Send> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        input_size(path)?;
        let file = std::fs::File::open(path).map_err(io_err)?;
        match read {
            Some(read) => Box::new(Counted { inner: file, read }),
            None => Box::new(file),
        }
    };
    let mut br = BufReader::with_capacity(1 << 16, raw);
    let head = br.fill_buf().map_err(io_err)?;
    let other = |name: &str, tool: &str| {
        Err(io_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is {name}-compressed; only gzip is read directly (decompress it first, \
                 e.g. `{tool} -d`)"
            ),
        )))
    };
    match head {
        [0x1f, 0x8b, ..] => Ok(Box::new(GzReader {
            inner: flate2::bufread::MultiGzDecoder::new(br),
        })),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => other("zstd", "zstd"),
        [b'B', b'Z', b'h', ..] => other("bzip2", "bzip2"),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => other("xz", "xz"),
        _ => Ok(Box::new(br)),
    }
}

/// The size of a plain file (None for standard input, pipes and devices); a directory
/// is an error. Never blocks (a FIFO is not opened).
pub(crate) fn input_size(path: &Path) -> Result<Option<u64>> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    if meta.is_dir() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("it is a directory, not a file"),
        });
    }
    Ok(meta.is_file().then_some(meta.len()))
}

/// A reader that adds the bytes it reads to a shared count.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// How far the reading of a file is, reported to a [`Progress`] in KiB of the file
/// (compressed ones too: the bytes read before decompression).
pub(crate) struct ReadProgress<'a> {
    read: Arc<AtomicU64>,
    progress: &'a Progress,
    total_kib: u64,
    reported_kib: u64,
}

impl ReadProgress<'_> {
    fn report(&mut self) {
        let kib = (self.read.load(Ordering::Relaxed) / 1024).min(self.total_kib);
        if kib > self.reported_kib {
            self.progress.advance(kib - self.reported_kib);
            self.reported_kib = kib;
        }
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

/// Read a whole file (gzip and `-` handled as in [`open_input`]); lines are bounded
/// (see [`max_line_bytes`]).
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    read_input_cancellable(path, None)
}

/// [`read_input`], stopping with [`Error::Interrupted`] soon after `cancel` is set,
/// even while a read waits (a FIFO without a writer, a terminal).
pub fn read_input_cancellable(path: &Path, cancel: Option<&AtomicBool>) -> Result<Vec<u8>> {
    let mut blocks = Blocks::open(path, None, cancel)?;
    // room for a file's size at once (a compressed file's grows past it): grown by
    // doubling, the old and new buffers were held together at each step (a 38 MB
    // qrels file peaked at 64 MB of buffer)
    let size = input_size(path)?.map_or(0, |n| n as usize);
    let mut data = Vec::new();
    data.try_reserve_exact(size).map_err(|_| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!("{size} bytes cannot be held in memory")),
    })?;
    while let Some(b) = blocks.next_block() {
        match b {
            Ok(b) => data.extend_from_slice(b),
            Err(Stop::TooLong) => {
                let line = 1 + memchr::memchr_iter(b'\n', &data).count() as u64;
                return Err(Error::format(&path.display().to_string(), line, too_long()));
            }
            Err(Stop::Failed(e)) => return Err(e),
        }
    }
    Ok(data)
}

/// Block size for an input of `size_hint` bytes: a small input needs no full-size buffer.
pub(crate) fn block_size(size_hint: Option<u64>) -> usize {
    size_hint.map_or(BLOCK, |n| (n as usize).saturating_add(1).clamp(4096, BLOCK))
}

/// Why [`Blocks`] stopped early.
pub(crate) enum Stop {
    /// A line longer than [`max_line_bytes`] starts right after the blocks given so far.
    TooLong,
    /// The input failed or the reading was interrupted.
    Failed(Error),
}

type Message = std::result::Result<(Vec<u8>, usize), ReadFailure>;

pub(crate) enum ReadFailure {
    TooLong,
    Io(Error),
}

/// An input as blocks of whole lines: data in memory cut at line ends, or a file read
/// on a thread of its own (so that reading overlaps parsing, and a read that waits
/// forever — a FIFO without a writer — cannot keep Ctrl-C from stopping the caller:
/// the thread is left behind, blocked, and ends with the process or the read).
pub(crate) enum Blocks<'a> {
    Memory {
        data: &'a [u8],
        at: usize,
        block: usize,
    },
    Reader {
        rx: Receiver<Message>,
        give_back: Sender<Vec<u8>>,
        current: Option<(Vec<u8>, usize)>,
        cancel: Option<&'a AtomicBool>,
        read: Option<ReadProgress<'a>>,
    },
}

impl<'a> Blocks<'a> {
    /// Blocks of data held in memory.
    pub(crate) fn memory(data: &'a [u8]) -> Blocks<'a> {
        Blocks::Memory {
            data,
            at: 0,
            block: BLOCK,
        }
    }

    /// Blocks of a file (gzip and `-` as in [`open_input`]), read on another thread;
    /// at most `block` bytes each (by default [`BLOCK`]), less for a smaller file.
    pub(crate) fn open(
        path: &Path,
        block: Option<usize>,
        cancel: Option<&'a AtomicBool>,
    ) -> Result<Blocks<'a>> {
        Self::open_counted(path, block, cancel, None)
    }

    /// [`Blocks::open`], announcing the size of a file (not of standard input or a
    /// pipe) in KiB to `progress` and advancing it as the file is read.
    pub(crate) fn open_counted(
        path: &Path,
        block: Option<usize>,
        cancel: Option<&'a AtomicBool>,
        progress: Option<&'a Progress>,
    ) -> Result<Blocks<'a>> {
        let size = input_size(path)?;
        let block = block_size(size).min(block.unwrap_or(BLOCK));
        let read = match (progress, size) {
            (Some(progress), Some(size)) => {
                progress.add_total(size / 1024);
                Some(ReadProgress {
                    read: Arc::new(AtomicU64::new(0)),
                    progress,
                    total_kib: size / 1024,
                    reported_kib: 0,
                })
            }
            _ => None,
        };
        let count = read.as_ref().map(|r| r.read.clone());
        let (tx, rx) = sync_channel(0);
        let (give_back, recycled) = channel();
        let path = path.to_path_buf();
        std::thread::Builder::new()
            .name("irmetrics-reader".into())
            .spawn(move || match open_input_counted(&path, count) {
                Ok(r) => read_blocks(r, &path, block, tx, recycled),
                Err(e) => {
                    let _ = tx.send(Err(ReadFailure::Io(e)));
                }
            })
            .map_err(|e| Error::Input(format!("cannot start a reading thread: {e}")))?;
        Ok(Blocks::Reader {
            rx,
            give_back,
            current: None,
            cancel,
            read,
        })
    }

    /// Blocks of any reader, on another thread.
    pub(crate) fn reader(
        r: impl Read + Send + 'static,
        source: &str,
        block: usize,
        cancel: Option<&'a AtomicBool>,
    ) -> Result<Blocks<'a>> {
        let (tx, rx) = sync_channel(0);
        let (give_back, recycled) = channel();
        let source = std::path::PathBuf::from(source);
        std::thread::Builder::new()
            .name("irmetrics-reader".into())
            .spawn(move || read_blocks(r, &source, block, tx, recycled))
            .map_err(|e| Error::Input(format!("cannot start a reading thread: {e}")))?;
        Ok(Blocks::Reader {
            rx,
            give_back,
            current: None,
            cancel,
            read: None,
        })
    }

    /// The next block of whole lines (the last may end without a newline), `None` at
    /// the end of the input.
    pub(crate) fn next_block(&mut self) -> Option<std::result::Result<&[u8], Stop>> {
        match self {
            Blocks::Memory { data, at, block } => {
                if *at >= data.len() {
                    return None;
                }
                let start = *at;
                let mut end = (start + *block).min(data.len());
                if end < data.len() {
                    end = match memchr::memrchr(b'\n', &data[start..end]) {
                        Some(i) => start + i + 1,
                        None => {
                            memchr::memchr(b'\n', &data[end..]).map_or(data.len(), |i| end + i + 1)
                        }
                    };
                }
                *at = end;
                Some(Ok(&data[start..end]))
            }
            Blocks::Reader {
                rx,
                give_back,
                current,
                cancel,
                read,
            } => {
                if let Some((buf, _)) = current.take() {
                    let _ = give_back.send(buf);
                }
                loop {
                    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                        return Some(Err(Stop::Failed(Error::Interrupted)));
                    }
                    let got = rx.recv_timeout(std::time::Duration::from_millis(50));
                    if let Some(r) = read.as_mut() {
                        r.report();
                    }
                    match got {
                        Ok(Ok(b)) => {
                            *current = Some(b);
                            let (buf, len) = current.as_ref()?;
                            return Some(Ok(&buf[..*len]));
                        }
                        Ok(Err(ReadFailure::TooLong)) => return Some(Err(Stop::TooLong)),
                        Ok(Err(ReadFailure::Io(e))) => return Some(Err(Stop::Failed(e))),
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return None,
                    }
                }
            }
        }
    }
}

/// Read `r` in blocks of whole lines. Each message is a buffer and the length of its
/// whole lines; buffers come back through `recycled` and are reused (zeroed once, when
/// first allocated). A line longer than [`max_line_bytes`] stops the reading: the
/// buffers never grow past it.
fn read_blocks(
    mut r: impl Read,
    source: &Path,
    block: usize,
    tx: SyncSender<Message>,
    recycled: Receiver<Vec<u8>>,
) {
    let max_line = max_line_bytes();
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
                    let _ = tx.send(Err(ReadFailure::Io(Error::Io {
                        path: source.to_path_buf(),
                        source: e,
                    })));
                    return;
                }
            }
        }
        let cut = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(i) => i + 1,
                None if filled > max_line => {
                    let _ = tx.send(Err(ReadFailure::TooLong));
                    return;
                }
                None => {
                    // One line longer than the buffer: read on with a larger one.
                    carry.extend_from_slice(&buf[..filled]);
                    size = (size * 2).min(max_line + 2).max(size + 1);
                    continue;
                }
            }
        };
        if filled - cut > max_line {
            // what follows the last whole line is already too long (sent after them)
            if cut > 0 && tx.send(Ok((buf, cut))).is_err() {
                return;
            }
            let _ = tx.send(Err(ReadFailure::TooLong));
            return;
        }
        carry.extend_from_slice(&buf[cut..filled]);
        if cut > 0 && tx.send(Ok((buf, cut))).is_err() {
            return; // the parser stopped (an error, Ctrl-C)
        }
        if eof {
            return;
        }
    }
}
