//! Byte-string ids stored back to back in one buffer, with a hash index.
//!
//! Doc ids and query ids are opaque bytes (trec_eval compares them with `strcmp`),
//! so `7`, `07` and `007` are different ids and no UTF-8 is required.

use hashbrown::HashTable;
use std::hash::BuildHasher;

use crate::error::{Error, Result};

/// The hasher used for every id table.
#[inline]
pub(crate) fn hash_id(id: &[u8]) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(id)
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

    /// Whether some id may be unwritable to a TREC file: a byte up to `' '` (every
    /// whitespace byte and NUL are) somewhere, or an empty id. One branch-free pass over
    /// the buffer (it vectorizes): false in the usual case, so that the exact per-id check
    /// (`intake::id_problem`) runs only when it can find something.
    pub(crate) fn may_hold_unwritable(&self) -> bool {
        let low = self.bytes.iter().fold(false, |acc, &b| acc | (b <= b' '));
        let empty = self.ends.first() == Some(&0) || self.ends.windows(2).any(|w| w[0] == w[1]);
        low || empty
    }

    /// Append an id; fails only if one query's ids exceed 4 GiB together.
    #[inline]
    pub(crate) fn push(&mut self, id: &[u8]) -> Result<()> {
        self.bytes.extend_from_slice(id);
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
            .find(hash_id(id), |&i| ids.get(i as usize) == id)
            .map(|&i| i as usize)
    }

    /// [`IdIndex::find`] for the lookup of each ranked document of an evaluation (its
    /// one caller): a closure of its own makes its hash-table probe an instantiation
    /// with one call site, which LLVM inlines; the shared one, called from everywhere,
    /// it stopped inlining (measured at L: 21% of an evaluation out of line, 15% slower).
    #[inline(always)]
    pub(crate) fn find_ranked(&self, ids: &Ids, id: &[u8]) -> Option<usize> {
        self.table
            .find(hash_id(id), |&i| ids.get(i as usize) == id)
            .map(|&i| i as usize)
    }

    /// Index the id at position `pos` of `ids`; returns the earlier position if the id
    /// was already present (and leaves the index unchanged).
    #[inline]
    pub(crate) fn insert(&mut self, ids: &Ids, pos: usize) -> Option<usize> {
        let id = ids.get(pos);
        let h = hash_id(id);
        match self.table.entry(
            h,
            |&i| ids.get(i as usize) == id,
            |&i| hash_id(ids.get(i as usize)),
        ) {
            hashbrown::hash_table::Entry::Occupied(o) => Some(*o.get() as usize),
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(pos as u32);
                None
            }
        }
    }

    /// Position of `id` (whose [`hash_id`] is `h`) in `ids`, pushing it there (and
    /// indexing it) if absent: one probe. Fails only as [`Ids::push`] does.
    #[inline]
    pub(crate) fn find_or_push(&mut self, ids: &mut Ids, id: &[u8], h: u64) -> Result<usize> {
        let entry = self.table.entry(
            h,
            |&i| ids.get(i as usize) == id,
            |&i| hash_id(ids.get(i as usize)),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(o) => Ok(*o.get() as usize),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let pos = ids.len();
                ids.push(id)?;
                v.insert(pos as u32);
                Ok(pos)
            }
        }
    }

    /// Forget every id, keeping the table's room.
    pub(crate) fn clear(&mut self) {
        self.table.clear();
    }

    /// Point the entry of the id at position `from` to position `to` (the same id
    /// pushed again).
    pub(crate) fn repoint(&mut self, ids: &Ids, from: usize, to: usize) {
        if let Some(slot) = self
            .table
            .find_mut(hash_id(ids.get(from)), |&i| i as usize == from)
        {
            *slot = to as u32;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.capacity() * 5
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
            |&i| key(i as usize) == id,
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
            .find(hash_id(id), |&i| key(i as usize) == id)
            .map(|&i| i as usize)
    }
}

/// Finds the first id of a list that repeats an earlier one: an open-addressing table of
/// 32-bit hash tags (8 to 16 bytes per id, reused between lists); ids themselves are
/// compared only when two tags are equal.
#[derive(Debug, Default)]
pub(crate) struct RepeatFinder {
    slots: Vec<u32>,
}

impl RepeatFinder {
    /// Position of the first id equal to an earlier one, if any.
    pub(crate) fn first_repeat(&mut self, ids: &Ids) -> Option<usize> {
        let n = ids.len();
        if n < 2 {
            return None;
        }
        // a sparse table: fewer occupied slots met on the way, fewer mispredicted branches
        let size = (if n < 1 << 20 { 4 * n } else { 2 * n }).next_power_of_two();
        self.slots.clear();
        self.slots.resize(size, 0);
        let mask = size - 1;
        for i in 0..n {
            let id = ids.get(i);
            let h = hash_id(id);
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
                if v == tag && (0..i).any(|j| ids.get(j) == id) {
                    return Some(i);
                }
                s = (s + 1) & mask;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn repeat_finder_names_the_first_repeat(
            ids in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..4), 0..200)
        ) {
            let mut list = Ids::default();
            for id in &ids {
                list.push(id).unwrap();
            }
            let mut seen = std::collections::HashSet::new();
            let expect = ids.iter().position(|id| !seen.insert(id.clone()));
            let mut finder = RepeatFinder::default();
            prop_assert_eq!(finder.first_repeat(&list), expect);
            // the scratch table is reused
            prop_assert_eq!(finder.first_repeat(&list), expect);
        }
    }
}
