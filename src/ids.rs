//! Byte-string ids stored back to back in one buffer, with a hash index.
//!
//! Doc ids and query ids are opaque bytes (trec_eval compares them with `strcmp`),
//! so `7`, `07` and `007` are different ids and no UTF-8 is required.

use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, Result};

/// The hash of an id, for every id table. Ids of up to 16 bytes (nearly every query
/// and document id) are read as the two little-endian words of their bytes padded
/// with zeros and mixed, with the length, by two folded multiplies (foldhash's
/// mixing: 128-bit products, their halves xor-ed); longer ids by rustc-hash. Kept by
/// hand for speed: rustc-hash's byte hasher branches on the length, which mispredicts
/// on ids of mixed lengths ("d7", "d42", "d137": 9-10 ns an id against 3-4 ns for
/// [`Ids::hash`], which reads the padded words from the buffer without a branch; the
/// same 2.5 M ids, one thread). In an evaluation of such ids, about 10% less time;
/// on ids of one length, no measurable change (2026-11-27, a noisy 2-core VM).
#[inline]
pub(crate) fn hash_id(id: &[u8]) -> u64 {
    if id.len() <= 16 {
        let (lo, hi) = padded_words(id);
        fold(lo, hi, id.len())
    } else {
        rustc_hash::FxBuildHasher.hash_one(id)
    }
}

/// The mixing of [`hash_id`] for an id of `n` <= 16 bytes, `lo` and `hi` its bytes
/// padded with zeros to 16 (little-endian): two folded multiplies. One alone leaves
/// the top bits (hashbrown's tags, `FirstSight`'s slots) poorly spread for ids that
/// differ in a few low bytes ("d200" to "d399": 200 ids took 97 of 512 slots by their
/// top bits, about 166 expected; with the second, 159-170 for five such ranges).
#[inline(always)]
fn fold(lo: u64, hi: u64, n: usize) -> u64 {
    const K1: u64 = 0x243f_6a88_85a3_08d3;
    const K2: u64 = 0x1319_8a2e_0370_7344;
    const K3: u64 = 0x9E37_79B9_7F4A_7C15;
    let folded = |a: u64, b: u64| {
        let m = u128::from(a) * u128::from(b);
        (m as u64) ^ ((m >> 64) as u64)
    };
    folded(folded(lo ^ K1, hi ^ K2 ^ n as u64), K3)
}

/// The bytes of an id of at most 16 bytes, padded with zeros to 16, as two
/// little-endian words: read as overlapping words (no byte loop).
#[inline(always)]
fn padded_words(id: &[u8]) -> (u64, u64) {
    let n = id.len();
    if let (Some(a), Some(b)) = (id.first_chunk::<8>(), id.last_chunk::<8>()) {
        // bytes 8..n are the top n - 8 bytes of the last word
        let tail = u64::from_le_bytes(*b).checked_shr(8 * (16 - n as u32));
        (u64::from_le_bytes(*a), tail.unwrap_or(0))
    } else if let (Some(a), Some(b)) = (id.first_chunk::<4>(), id.last_chunk::<4>()) {
        let (a, b) = (u32::from_le_bytes(*a), u32::from_le_bytes(*b));
        (u64::from(a) | u64::from(b) << (8 * (n - 4)), 0)
    } else if let (Some(&first), Some(&last)) = (id.first(), id.last()) {
        let mid = u64::from(id[n / 2]) << (8 * (n / 2));
        (u64::from(first) | mid | u64::from(last) << (8 * (n - 1)), 0)
    } else {
        (0, 0)
    }
}

/// `v.extend_from_slice(id)`, where ids of 4 to 16 bytes (most document ids) are
/// copied as two overlapping words, the second written over the first's tail, instead
/// of by a call to the C library's `memmove` for each id (`memmove` was 7-9% of the
/// samples of a fusion and 5% of reading dicts).
#[inline(always)]
fn append_id(v: &mut Vec<u8>, id: &[u8]) {
    let n = id.len();
    let start = v.len();
    if let (Some(a), Some(b)) = (id.first_chunk::<8>(), id.last_chunk::<8>()) {
        if n <= 16 {
            v.reserve(n);
            v.extend_from_slice(a);
            v.truncate(start + n - 8);
            v.extend_from_slice(b);
            return;
        }
    } else if let (Some(a), Some(b)) = (id.first_chunk::<4>(), id.last_chunk::<4>()) {
        v.reserve(n);
        v.extend_from_slice(a);
        v.truncate(start + n - 4);
        v.extend_from_slice(b);
        return;
    }
    v.extend_from_slice(id);
}

/// `a == b` for ids, without a call to the C library's `memcmp` for the short ones
/// (document ids are mostly 4 to 16 bytes, query ids often 1 to 5): two overlapping
/// word loads compare them, or up to three bytes.
/// Kept by hand for speed: the `memcmp` call of each matching probe was 12% of an
/// evaluation at L (100k queries x 100 documents).
#[inline(always)]
pub(crate) fn same_id(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // (always `Some` at the lengths they are used at)
    let word = |s: &[u8], at: usize| s[at..].first_chunk::<8>().map(|w| u64::from_le_bytes(*w));
    let half = |s: &[u8], at: usize| s[at..].first_chunk::<4>().map(|w| u32::from_le_bytes(*w));
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        // the first, middle and last bytes are every byte of 1 to 3
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        _ => a == b,
    }
}

/// A list of ids in one buffer: id `i` is `bytes[ends[i-1]..ends[i]]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ids {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl Ids {
    /// Room for `n` ids of `bytes` bytes together.
    pub(crate) fn with_capacity(n: usize, bytes: usize) -> Self {
        Ids {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(n),
        }
    }

    /// Bytes used by the ids.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// [`hash_id`] of id `i`. An id of at most 16 bytes with 16 bytes of the buffer
    /// from its start (all but the last few) is read as one 16-byte word and masked to
    /// its length: no branch on the length.
    #[inline(always)]
    pub(crate) fn hash(&self, i: usize) -> u64 {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.hash_of(start, self.ends[i] as usize)
    }

    /// [`hash_id`] of the id in `bytes[start..end]` (see [`Ids::hash`]).
    #[inline(always)]
    fn hash_of(&self, start: usize, end: usize) -> u64 {
        let n = end - start;
        if n <= 16 {
            let word = self.bytes.get(start..start + 16);
            if let Some(w) = word.and_then(|w| w.first_chunk::<16>()) {
                // the two words masked to the id's n bytes by 64-bit masks (a 128-bit
                // mask by a variable shift took 40% more time, measured on 1 M ids)
                let bits = 8 * n as u32;
                let lo_keep = if bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                let hi_keep = if bits <= 64 {
                    0
                } else {
                    u64::MAX >> (128 - bits)
                };
                let v = u128::from_le_bytes(*w);
                return fold(v as u64 & lo_keep, (v >> 64) as u64 & hi_keep, n);
            }
        }
        hash_id(&self.bytes[start..end])
    }

    /// [`Ids::hash`] of each id, in order: each id's start is the end of the one
    /// before, carried along (not read again and tested for the first id). Kept a map of
    /// the slice's iterator rather than of [`Ids::hashed`], whose length the standard
    /// library cannot trust for `extend` (not measured either way).
    #[inline]
    pub(crate) fn hashes(&self) -> impl Iterator<Item = u64> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let h = self.hash_of(start, end as usize);
            start = end as usize;
            h
        })
    }

    /// Each id with its [`Ids::hash`], in order, the start carried along as in
    /// [`Ids::hashes`].
    #[inline]
    pub(crate) fn hashed(&self) -> Hashed<'_> {
        Hashed {
            ids: self,
            at: 0,
            start: 0,
        }
    }

    /// Whether some id may be unwritable to a TREC file: a byte up to `' '` (every
    /// whitespace byte and NUL are) somewhere, or an empty id. One branch-free pass over
    /// the buffer (it vectorizes): false in the usual case, so that the exact per-id check
    /// (`intake::id_problem`) runs only when it can find something.
    pub(crate) fn may_hold_unwritable(&self) -> bool {
        let low = self.bytes.iter().fold(false, |acc, &b| acc | (b <= b' '));
        let empty = self.ends.first() == Some(&0) || self.ends.windows(2).any(|w| w[0] == w[1]);
        low || empty
    }

    /// Append an id; fails only if one query's ids exceed 4 GiB together. Inlined into
    /// the loops that add a row at a time (a call was 54 instructions a document id read
    /// from a frame).
    #[inline(always)]
    pub(crate) fn push(&mut self, id: &[u8]) -> Result<()> {
        append_id(&mut self.bytes, id);
        let end = u32::try_from(self.bytes.len()).map_err(|_| {
            Error::Input("the document ids of one query exceed 4 GiB together".into())
        })?;
        self.ends.push(end);
        Ok(())
    }

    /// Bytes of the ids `a..b`.
    #[inline]
    pub(crate) fn range_bytes(&self, a: usize, b: usize) -> usize {
        let start = if a == 0 { 0 } else { self.ends[a - 1] as usize };
        let end = if b == 0 { 0 } else { self.ends[b - 1] as usize };
        end - start
    }

    /// Append the ids `a..b` of `other`.
    pub(crate) fn extend_range(&mut self, other: &Ids, a: usize, b: usize) -> Result<()> {
        if a >= b {
            return Ok(());
        }
        let start = if a == 0 {
            0
        } else {
            other.ends[a - 1] as usize
        };
        let end = other.ends[b - 1] as usize;
        let base = self.bytes.len() as i64 - start as i64;
        self.bytes.extend_from_slice(&other.bytes[start..end]);
        u32::try_from(self.bytes.len()).map_err(|_| {
            Error::Input("the document ids of one query exceed 4 GiB together".into())
        })?;
        self.ends
            .extend(other.ends[a..b].iter().map(|&e| (e as i64 + base) as u32));
        Ok(())
    }

    /// Make room for `n` more ids of `bytes` bytes together.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    pub(crate) fn reserve(&mut self, n: usize, bytes: usize) {
        self.ends.reserve(n);
        self.bytes.reserve(bytes);
    }

    /// Keep the first `n` ids.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            self.ends.truncate(n);
            let end = self.ends.last().map_or(0, |&e| e as usize);
            self.bytes.truncate(end);
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + 4 * self.ends.capacity()
    }
}

/// A text of up to 15 bytes packed with its length in the last byte (`None`: longer).
#[inline]
pub(crate) fn pack(s: &[u8]) -> Option<u128> {
    if s.len() > 15 {
        return None;
    }
    let mut b = [0u8; 16];
    b[..s.len()].copy_from_slice(s);
    b[15] = s.len() as u8;
    Some(u128::from_le_bytes(b))
}

/// The hash of a [`pack`]ed text.
#[inline]
pub(crate) fn hash_packed(k: u128) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(k)
}

/// The key of a text for [`group_in_order`]: the text packed when short (equal keys:
/// equal texts), else its hash with 255 as length (equal keys: compare the texts).
#[inline]
fn key_of(s: &[u8]) -> u128 {
    pack(s).unwrap_or_else(|| u128::from(hash_id(s)) | 255 << 120)
}

/// One item of [`group_in_order`]: its text's key and its place (20 bytes: the
/// partitions of ten million items hold 200 MB).
#[derive(Clone, Copy)]
struct Keyed {
    key: [u8; 16],
    item: u32,
}

/// Items grouped by their texts, the texts numbered in order of first sight
/// ([`group_in_order`]): text `t`'s items are `order[starts[t]..starts[t + 1]]`, in
/// input order; `names` holds the distinct texts in the order of their numbers.
pub(crate) struct Grouped {
    pub(crate) starts: Vec<usize>,
    pub(crate) order: Vec<u32>,
    pub(crate) names: Ids,
}

/// Group items by their texts, many at once, the texts numbered in order of first
/// sight: `lists` (one text per item, items in order through the lists). The items are
/// put into partitions by their texts' hashes and each partition is numbered on its
/// own, in parallel: a partition's table stays in cache, where one table of millions
/// of texts costs a cache miss or two per item (a log's session ids: 10 M events of
/// 2.9 M sessions). Numbers in order of first sight come from the first items of all
/// partitions, ranked; each partition counts its texts' items, and then writes each
/// item to its text's next place (a partition's items come in input order), so the
/// items are grouped without a number per item and a counting sort over them (10 M
/// session ids on 2 threads: 0.07 s of stores and a 0.15-0.18 s sort before). Fails
/// only if the distinct texts exceed 4 GiB together or the items 2^32.
pub(crate) fn group_in_order(lists: &[Ids]) -> Result<Grouped> {
    let n: usize = lists.iter().map(Ids::len).sum();
    let too_many = || Error::Input("a log column holds more than 2^32 values".into());
    u32::try_from(n).map_err(|_| too_many())?;
    // where each list's items begin (a long text's bytes are found from its item)
    let begins: Vec<usize> = lists
        .iter()
        .scan(0, |at, l| {
            let b = *at;
            *at += l.len();
            Some(b)
        })
        .collect();
    let text = |item: u32| {
        let l = begins.partition_point(|&b| b <= item as usize) - 1;
        lists[l].get(item as usize - begins[l])
    };
    // partitions of about 32 Ki items (at most 256: each list writes to them all at
    // once), each list put into them in parallel. The partition is the top bits of the
    // hash multiplied once more: FxHash's own low and middle bits depend only on the
    // first bytes of a text (ids such as "s1234567" fell into a few partitions of
    // hundreds of thousands, each a table out of cache: 10 M session ids took 0.7 s
    // to number on 2 cores, now 0.4 s), and its top bits are hashbrown's tags.
    let bits = (n >> 15).max(1).next_power_of_two().trailing_zeros().min(8);
    let part_of = |h: u64| {
        let spread = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        spread.checked_shr(64 - bits).unwrap_or(0) as usize
    };
    let each_list: Vec<usize> = (0..lists.len()).collect();
    let scattered: Vec<Vec<Vec<Keyed>>> = crate::parallel::map_chunks(&each_list, |&l| {
        let (l, begin) = (&lists[l], begins[l]);
        let room = (l.len() >> bits) + (l.len() >> bits) / 4;
        let mut parts: Vec<Vec<Keyed>> = (0..1 << bits).map(|_| Vec::with_capacity(room)).collect();
        for (i, s) in l.iter().enumerate() {
            let key = key_of(s);
            parts[part_of(hash_packed(key))].push(Keyed {
                key: key.to_le_bytes(),
                item: (begin + i) as u32,
            });
        }
        parts
    });
    let part = |p: usize| scattered.iter().flat_map(move |l| &l[p]);
    // each partition: its items' numbers among its texts, each text's first item and
    // its number of items
    let numbered = crate::parallel::map_chunks(&(0..1usize << bits).collect::<Vec<_>>(), |&p| {
        let mut table: HashTable<(u128, u32)> = HashTable::new();
        let mut firsts: Vec<u32> = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        let local: Vec<u32> = part(p)
            .map(|e| {
                let k = u128::from_le_bytes(e.key);
                let long = e.key[15] == 255;
                let h = hash_packed(k);
                let found = table.find(h, |&(key, c)| {
                    key == k && (!long || text(firsts[c as usize]) == text(e.item))
                });
                match found {
                    Some(&(_, c)) => {
                        counts[c as usize] += 1;
                        c
                    }
                    None => {
                        let c = firsts.len() as u32;
                        firsts.push(e.item);
                        counts.push(1);
                        table.insert_unique(h, (k, c), |x| hash_packed(x.0));
                        c
                    }
                }
            })
            .collect();
        (local, firsts, counts)
    });
    // the first items of every text, marked; a text's number is its first item's rank
    let mut marks = vec![0u64; n.div_ceil(64)];
    for (_, firsts, _) in &numbered {
        for &f in firsts {
            marks[f as usize / 64] |= 1 << (f % 64);
        }
    }
    let mut before = Vec::with_capacity(marks.len());
    let mut count = 0u32;
    for m in &marks {
        before.push(count);
        count += m.count_ones();
    }
    let rank = |f: u32| {
        let (w, b) = (f as usize / 64, f % 64);
        before[w] + (marks[w] & ((1u64 << b) - 1)).count_ones()
    };
    // each partition's texts' numbers (their first items' ranks)
    let each_part: Vec<usize> = (0..numbered.len()).collect();
    let ranks: Vec<Vec<u32>> = crate::parallel::map_chunks(&each_part, |&p| {
        numbered[p].1.iter().map(|&f| rank(f)).collect()
    });
    // where each text's items begin: their numbers counted, in the texts' order
    let mut starts = vec![0usize; count as usize + 1];
    for ((_, _, counts), ranks) in numbered.iter().zip(&ranks) {
        for (&c, &t) in counts.iter().zip(ranks) {
            starts[t as usize + 1] = c as usize;
        }
    }
    for t in 0..count as usize {
        starts[t + 1] += starts[t];
    }
    // each item at its text's next place, written by the partitions in parallel (each
    // place once: the stores need no order among themselves); a partition's items come
    // in input order, so each text's items are in input order
    let order: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    crate::parallel::map_chunks(&each_part, |&p| {
        let local = &numbered[p].0;
        let mut next: Vec<u32> = ranks[p]
            .iter()
            .map(|&t| starts[t as usize] as u32)
            .collect();
        for (e, &c) in part(p).zip(local) {
            let at = &mut next[c as usize];
            order[*at as usize].store(e.item, Ordering::Relaxed);
            *at += 1;
        }
    });
    let order: Vec<u32> = order.into_iter().map(AtomicU32::into_inner).collect();
    drop(scattered);
    // the texts in order of their first items, walking the lists along
    let mut names = Ids::with_capacity(count as usize, 0);
    let mut l = 0;
    for (w, &m) in marks.iter().enumerate() {
        let mut m = m;
        while m != 0 {
            let f = w * 64 + m.trailing_zeros() as usize;
            while l + 1 < lists.len() && begins[l + 1] <= f {
                l += 1;
            }
            names.push(lists[l].get(f - begins[l])).map_err(|_| {
                Error::Input("the distinct texts of one log column exceed 4 GiB together".into())
            })?;
            m &= m - 1;
        }
    }
    Ok(Grouped {
        starts,
        order,
        names,
    })
}

/// A hash index over an [`Ids`] list: finds the position of an id.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdIndex {
    table: HashTable<u32>,
}

impl IdIndex {
    pub(crate) fn with_capacity(n: usize) -> Self {
        IdIndex {
            table: HashTable::with_capacity(n),
        }
    }

    /// Position of `id` in `ids`, if present. Always inlined: it is the one lookup per
    /// ranked document of every evaluation, and left out of line it costs ~10%.
    #[inline(always)]
    pub(crate) fn find(&self, ids: &Ids, id: &[u8]) -> Option<usize> {
        self.table
            .find(hash_id(id), |&i| same_id(ids.get(i as usize), id))
            .map(|&i| i as usize)
    }

    /// [`IdIndex::find`] of an id whose [`hash_id`] is `h`, for the lookup of each
    /// ranked document of an evaluation (its one caller): a closure of its own makes
    /// its hash-table probe an instantiation with one call site, which LLVM inlines;
    /// the shared one, called from everywhere, it stopped inlining (measured at L: 21%
    /// of an evaluation out of line, 15% slower).
    #[inline(always)]
    pub(crate) fn find_ranked(&self, ids: &Ids, id: &[u8], h: u64) -> Option<usize> {
        self.table
            .find(h, |&i| same_id(ids.get(i as usize), id))
            .map(|&i| i as usize)
    }

    /// Index the id at position `pos` of `ids`; returns the earlier position if the id
    /// was already present (and leaves the index unchanged).
    #[inline]
    pub(crate) fn insert(&mut self, ids: &Ids, pos: usize) -> Option<usize> {
        self.insert_hashed(ids, pos, ids.hash(pos))
    }

    /// [`IdIndex::insert`] of an id whose [`Ids::hash`] `h` the caller has already
    /// computed (for a use of its own: the judgments' filter).
    #[inline]
    pub(crate) fn insert_hashed(&mut self, ids: &Ids, pos: usize, h: u64) -> Option<usize> {
        let id = ids.get(pos);
        match self.table.entry(
            h,
            |&i| same_id(ids.get(i as usize), id),
            |&i| ids.hash(i as usize),
        ) {
            hashbrown::hash_table::Entry::Occupied(o) => Some(*o.get() as usize),
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(pos as u32);
                None
            }
        }
    }

    /// Point the entry of the id at position `from` to position `to` (the same id
    /// pushed again).
    pub(crate) fn repoint(&mut self, ids: &Ids, from: usize, to: usize) {
        if let Some(slot) = self.table.find_mut(ids.hash(from), |&i| i as usize == from) {
            *slot = to as u32;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.capacity() * 5
    }
}

/// The iterator of [`Ids::hashed`]: a type of its own, so that its step is inlined
/// into the loop that reads it (a closure's was not, in the Python module's build: a
/// call for each id, 14.5% of a profile of a fusion with mnz; inlined, the fusion's
/// wall time moved less than this VM's noise).
pub(crate) struct Hashed<'a> {
    ids: &'a Ids,
    at: usize,
    start: usize,
}

impl<'a> Iterator for Hashed<'a> {
    type Item = (&'a [u8], u64);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let end = *self.ids.ends.get(self.at)? as usize;
        let start = self.start;
        self.at += 1;
        self.start = end;
        Some((&self.ids.bytes[start..end], self.ids.hash_of(start, end)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.ids.ends.len() - self.at;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Hashed<'_> {}

/// Numbers the distinct ids of one short list (a query's fusion candidates) in order of
/// first sight, the ids pushed to an [`Ids`] as they come: an open-addressing table of
/// numbers (0: empty) with each id's full hash beside it, emptied for each list. Kept
/// by hand rather than an [`IdIndex`] (hashbrown): its probe and its comparison
/// closure, called out of line, were 42% of a fusion of 5 runs x 5,000 queries x 100
/// documents; this one, inlined, compares the stored hash before the bytes.
#[derive(Debug, Default)]
pub(crate) struct FirstSight {
    slots: Vec<u32>,
    hashes: Vec<u64>,
    shift: u32,
}

impl FirstSight {
    /// Empty the table for a list of at most `n` ids (kept at most half full).
    pub(crate) fn reset(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(size, 0);
        self.hashes.clear();
        self.shift = 64 - size.trailing_zeros();
    }

    /// The number of `id` (whose [`hash_id`] is `h`), pushing it to `ids` (which holds
    /// exactly the ids numbered since [`FirstSight::reset`]) if it is new. Fails when a
    /// new id would fill the table beyond half (more ids than `reset` was told of,
    /// rounded up), or as [`Ids::push`] does.
    #[inline(always)]
    pub(crate) fn find_or_push(&mut self, ids: &mut Ids, id: &[u8], h: u64) -> Result<usize> {
        let mask = self.slots.len() - 1;
        // the slot from the top bits of the hash multiplied once more (cheap insurance
        // against hashes whose top bits vary little; see `group_in_order`)
        let mut s = (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let v = self.slots[s & mask];
            if v == 0 {
                break;
            }
            let c = v as usize - 1;
            if self.hashes[c] == h && same_id(ids.get(c), id) {
                return Ok(c);
            }
            s += 1;
        }
        let c = ids.len();
        if 2 * (c + 1) > self.slots.len() {
            return Err(Error::Input("more ids than the table was made for".into()));
        }
        ids.push(id)?;
        self.hashes.push(h);
        self.slots[s & mask] = c as u32 + 1;
        Ok(c)
    }
}

/// A hash index from ids to positions in a list that holds the ids itself (queries by
/// their id): nothing is copied; `key(i)` gives the id at position `i`.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyIndex {
    table: HashTable<u32>,
}

impl KeyIndex {
    /// Sort `items` by id (unless they already are) and index them; the ids are distinct.
    pub(crate) fn sorted<T>(items: &mut [T], key: impl Fn(&T) -> &[u8]) -> KeyIndex {
        if !items.windows(2).all(|w| key(&w[0]) < key(&w[1])) {
            items.sort_unstable_by(|a, b| key(a).cmp(key(b)));
        }
        let mut table = HashTable::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let h = hash_id(key(item));
            table.insert_unique(h, i as u32, |&j| hash_id(key(&items[j as usize])));
        }
        KeyIndex { table }
    }

    /// Position of `id` if present; otherwise `id` is recorded at position `next`, where
    /// the caller then puts it, and `None` is returned.
    pub(crate) fn get_or_add<'a>(
        &mut self,
        id: &[u8],
        next: usize,
        key: impl Fn(usize) -> &'a [u8],
    ) -> Option<usize> {
        match self.table.entry(
            hash_id(id),
            |&i| same_id(key(i as usize), id),
            |&i| hash_id(key(i as usize)),
        ) {
            hashbrown::hash_table::Entry::Occupied(o) => Some(*o.get() as usize),
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(next as u32);
                None
            }
        }
    }

    /// Position of `id`, if present.
    #[inline]
    pub(crate) fn get<'a>(&self, id: &[u8], key: impl Fn(usize) -> &'a [u8]) -> Option<usize> {
        self.table
            .find(hash_id(id), |&i| same_id(key(i as usize), id))
            .map(|&i| i as usize)
    }
}

/// Finds the first id of a list that repeats an earlier one: an open-addressing table of
/// 32-bit hash tags (8 to 16 bytes per id, reused between lists); ids themselves are
/// compared only when two tags are equal.
#[derive(Debug, Default)]
pub(crate) struct RepeatFinder {
    slots: Vec<u32>,
    /// [`Ids::hash`] of each id of the last list searched without a repeat, in order.
    hashes: Vec<u64>,
}

impl RepeatFinder {
    /// Position of the first id equal to an earlier one, if any. Without one, the ids'
    /// hashes are kept for [`RepeatFinder::hashes`].
    pub(crate) fn first_repeat(&mut self, ids: &Ids) -> Option<usize> {
        let n = ids.len();
        self.hashes.clear();
        self.hashes.extend(ids.hashes());
        if n < 2 {
            return None;
        }
        // a sparse table: fewer occupied slots met on the way, fewer mispredicted branches
        let size = (if n < 1 << 20 { 4 * n } else { 2 * n }).next_power_of_two();
        self.slots.clear();
        self.slots.resize(size, 0);
        let mask = size - 1;
        for (i, &h) in self.hashes.iter().enumerate() {
            let tag = (h >> 32) as u32 | 1; // 0 marks an empty slot
            let mut s = h as usize & mask;
            loop {
                let v = self.slots[s];
                if v == 0 {
                    self.slots[s] = tag;
                    break;
                }
                // equal tags: compare with the earlier ids (a repeat is an error, so
                // this scan runs once, or on a rare 32-bit tag collision)
                if v == tag && (0..i).any(|j| ids.get(j) == ids.get(i)) {
                    self.hashes.clear();
                    return Some(i);
                }
                s = (s + 1) & mask;
            }
        }
        None
    }

    /// The hashes of the ids that the last [`RepeatFinder::first_repeat`] found without
    /// a repeat (empty after one with a repeat), for the lookups that follow: each id's
    /// hash made once.
    pub(crate) fn hashes(&self) -> &[u64] {
        &self.hashes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The ids pushed in order.
    fn list_of(ids: &[Vec<u8>]) -> Ids {
        let mut list = Ids::default();
        for id in ids {
            list.push(id).unwrap();
        }
        list
    }

    proptest! {
        /// The word-load comparison is `==`, at every length (the 4-7 and 8-16 byte
        /// paths and their edges) and for ids differing in one byte anywhere.
        #[test]
        fn same_id_is_equality(
            a in proptest::collection::vec(0u8..3, 0..24),
            flip in proptest::option::of(0usize..24),
            extra in proptest::option::of(0u8..3),
        ) {
            let mut b = a.clone();
            if let Some(i) = flip.filter(|&i| i < b.len()) {
                b[i] ^= 1;
            }
            if let Some(x) = extra {
                b.push(x);
            }
            prop_assert_eq!(same_id(&a, &b), a == b);
            prop_assert!(same_id(&a, &a));
        }

        /// An id's two padded words are its bytes padded with zeros to 16, at every
        /// length up to 16 (the 8-16, 4-7, 1-3 byte readings and the empty id).
        #[test]
        fn padded_words_are_the_bytes_padded(id in proptest::collection::vec(any::<u8>(), 0..=16)) {
            let mut b = [0u8; 16];
            b[..id.len()].copy_from_slice(&id);
            let lo = u64::from_le_bytes(b[..8].try_into().unwrap());
            let hi = u64::from_le_bytes(b[8..].try_into().unwrap());
            prop_assert_eq!(padded_words(&id), (lo, hi));
        }

        /// An id's hash read from its list (one padded word, or near the buffer's end
        /// the id alone) is its [`hash_id`], at every length, for every position; ids
        /// of up to 16 bytes that differ only by trailing zero bytes hash apart (the
        /// length is mixed in).
        #[test]
        fn hash_from_the_list_is_hash_id(
            ids in proptest::collection::vec(proptest::collection::vec(0u8..3, 0..40), 1..30)
        ) {
            let list = list_of(&ids);
            for (i, id) in ids.iter().enumerate() {
                prop_assert_eq!(list.hash(i), hash_id(id));
            }
            prop_assert_eq!(list.hashes().collect::<Vec<_>>(), ids.iter().map(|id| hash_id(id)).collect::<Vec<_>>());
            let (id, mut longer) = (&ids[0], ids[0].clone());
            longer.push(0);
            if longer.len() <= 16 {
                prop_assert_ne!(hash_id(id), hash_id(&longer));
            }
        }

        /// Ids of every length (the word copies of 4-16 bytes and the others) are
        /// stored as given, after any earlier ids.
        #[test]
        fn pushed_ids_are_kept_as_given(
            ids in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..30)
        ) {
            let list = list_of(&ids);
            prop_assert_eq!(list.len(), ids.len());
            for (i, id) in ids.iter().enumerate() {
                prop_assert_eq!(list.get(i), id.as_slice());
            }
            prop_assert_eq!(list.byte_len(), ids.iter().map(Vec::len).sum::<usize>());
        }

        #[test]
        fn repeat_finder_names_the_first_repeat(
            ids in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..4), 0..200)
        ) {
            let list = list_of(&ids);
            let mut seen = std::collections::HashSet::new();
            let expect = ids.iter().position(|id| !seen.insert(id.clone()));
            let mut finder = RepeatFinder::default();
            prop_assert_eq!(finder.first_repeat(&list), expect);
            // the scratch table is reused
            prop_assert_eq!(finder.first_repeat(&list), expect);
            // the hashes kept for the lookups that follow: each id's, or none after a
            // repeat (a list searched before must not leave its hashes)
            let want: Vec<u64> = match expect {
                None => list.hashes().collect(),
                Some(_) => Vec::new(),
            };
            prop_assert_eq!(finder.hashes(), &want[..]);
            finder.first_repeat(&list_of(&[b"x".to_vec(), b"x".to_vec()]));
            prop_assert!(finder.hashes().is_empty());
        }

        /// Every id gets the number of its first sight, whatever the hashes (all
        /// equal: every probe compares bytes; table reused at several sizes).
        #[test]
        fn first_sight_numbers_ids_in_order(
            lists in proptest::collection::vec(
                proptest::collection::vec(proptest::collection::vec(0u8..3, 0..12), 0..80),
                1..4,
            ),
            same_hash in any::<bool>(),
        ) {
            let mut table = FirstSight::default();
            for list in &lists {
                table.reset(list.len());
                let mut ids = Ids::default();
                let mut seen: Vec<&Vec<u8>> = Vec::new();
                for id in list {
                    let h = if same_hash { 7 } else { hash_id(id) };
                    let want = seen.iter().position(|s| *s == id).unwrap_or_else(|| {
                        seen.push(id);
                        seen.len() - 1
                    });
                    prop_assert_eq!(table.find_or_push(&mut ids, id, h).unwrap(), want);
                }
                prop_assert_eq!(ids.len(), seen.len());
                for (i, s) in seen.iter().enumerate() {
                    prop_assert_eq!(ids.get(i), s.as_slice());
                }
            }
            // beyond half full (reset(1) makes 16 slots): an error, never a full table
            table.reset(1);
            let mut ids = Ids::default();
            for i in 0..10u8 {
                let r = table.find_or_push(&mut ids, &[i], hash_id(&[i]));
                prop_assert_eq!(r.is_ok(), i < 8, "{}", i);
            }
        }

        #[test]
        fn texts_are_numbered_in_order_of_first_sight(
            texts in proptest::collection::vec("[ab]{0,3}|[ab]{14,18}", 0..300),
            cuts in proptest::collection::vec(0usize..300, 0..4),
        ) {
            let grouped = group_in_order(&lists_of(&texts, &cuts)).unwrap();
            let (numbers, names) = (numbers_of(&grouped), grouped.names);
            let (want, distinct) = first_sight(&texts);
            prop_assert_eq!(numbers, want);
            prop_assert_eq!(names.iter().collect::<Vec<_>>(), distinct);
        }
    }

    /// `texts` as lists cut at `cuts` (empty lists where cuts repeat).
    fn lists_of(texts: &[String], cuts: &[usize]) -> Vec<Ids> {
        let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(texts.len())).collect();
        cuts.sort();
        cuts.push(texts.len());
        let mut from = 0;
        cuts.iter()
            .map(|&to| {
                let mut l = Ids::default();
                texts[from..to]
                    .iter()
                    .for_each(|t| l.push(t.as_bytes()).unwrap());
                from = to;
                l
            })
            .collect()
    }

    /// Each item's number from its group, every item in one group and each group's
    /// items in input order.
    fn numbers_of(g: &Grouped) -> Vec<u32> {
        assert_eq!(g.starts.len(), g.names.len() + 1);
        assert_eq!(g.starts.last().copied(), Some(g.order.len()));
        let mut numbers = vec![u32::MAX; g.order.len()];
        for (t, w) in g.starts.windows(2).enumerate() {
            let items = &g.order[w[0]..w[1]];
            assert!(!items.is_empty() && items.windows(2).all(|p| p[0] < p[1]));
            for &i in items {
                assert_eq!(numbers[i as usize], u32::MAX, "item {i} in two groups");
                numbers[i as usize] = t as u32;
            }
        }
        numbers
    }

    /// The numbers of `texts` in order of first sight, and the distinct texts, by a
    /// plain map.
    fn first_sight(texts: &[String]) -> (Vec<u32>, Vec<&[u8]>) {
        let mut seen = std::collections::HashMap::new();
        let mut distinct = Vec::new();
        let numbers = texts
            .iter()
            .map(|t| {
                *seen.entry(t).or_insert_with(|| {
                    distinct.push(t.as_bytes());
                    distinct.len() as u32 - 1
                })
            })
            .collect();
        (numbers, distinct)
    }

    #[test]
    fn many_texts_in_many_partitions_are_numbered_in_order_of_first_sight() {
        // 300,000 items (16 partitions), 60,000 texts, short and long, in lists of
        // uneven lengths
        let mut rng = crate::testing::Lcg::new(12345);
        let texts: Vec<String> = (0..300_000)
            .map(|_| {
                let k = rng.below(60_000);
                if k % 3 == 0 {
                    format!("session-with-a-long-name-{k}")
                } else {
                    format!("s{k}")
                }
            })
            .collect();
        let lists = lists_of(&texts, &[0, 1, 70_000, 70_000, 200_001]);
        let grouped = group_in_order(&lists).unwrap();
        let (numbers, names) = (numbers_of(&grouped), grouped.names);
        let (want, distinct) = first_sight(&texts);
        assert_eq!(numbers, want);
        assert_eq!(names.iter().collect::<Vec<_>>(), distinct);
    }
}
