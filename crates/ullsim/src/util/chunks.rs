//! Per-key arrays of u32 (0 by default) that exist only for keys written, and cost what their contents
//! need: an array written in index order whose values step evenly (a run: `first`, `first + stride`, ...)
//! is stored as its runs, and becomes a plain array once runs would cost more, or on a write out of order.
//!
//! The FTL keeps one array per flash block this way. Blocks are programmed page by page in order, so the
//! logical pages a block holds are written in index order; a sequential writer striped over the planes
//! puts logical pages `l, l + planes, l + 2 planes, ...` in a block, and garbage collection moves a victim's
//! pages in order into consecutive pages of another block: one run each where a plain array costs 4 bytes a
//! page. Random writes end in plain arrays, 4 bytes a page.

/// One run of an array: entries `start..start + len` hold `first + k * stride` (wrapping) for `k = 0..len`.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: u32,
    len: u32,
    first: u32,
    stride: u32,
}

impl Run {
    fn value(&self, index: u32) -> Option<u32> {
        let k = index.wrapping_sub(self.start);
        (k < self.len).then(|| self.first.wrapping_add(k.wrapping_mul(self.stride)))
    }

    /// Whether `value` at `index` continues the run (a run of one takes any value next to it).
    fn continued_by(&self, index: u32, value: u32) -> bool {
        index == self.start + self.len
            && (self.len == 1 || value == self.first.wrapping_add(self.len.wrapping_mul(self.stride)))
    }
}

#[derive(Debug, Clone)]
enum Chunk {
    /// Runs in index order, with gaps of zeros between them; the array's length.
    Runs {
        runs: Vec<Run>,
        len: u32,
    },
    Plain(Box<[u32]>),
}

impl Default for Chunk {
    fn default() -> Self {
        Chunk::Runs { runs: Vec::new(), len: 0 }
    }
}

impl Chunk {
    fn get(&self, index: u32) -> u32 {
        match self {
            Chunk::Plain(values) => values[index as usize],
            Chunk::Runs { runs, .. } => {
                // The last run starting at or before `index`.
                let after = runs.partition_point(|r| r.start <= index);
                after.checked_sub(1).and_then(|i| runs[i].value(index)).unwrap_or(0)
            }
        }
    }

    fn plain(runs: &[Run], len: u32) -> Box<[u32]> {
        let mut values = vec![0; len as usize].into_boxed_slice();
        for r in runs {
            for index in r.start..r.start + r.len {
                values[index as usize] = r.value(index).expect("index in run");
            }
        }
        values
    }

    /// Set entry `index` to `value`; returns the change of `bytes`.
    fn set(&mut self, index: u32, value: u32) -> i64 {
        match self {
            Chunk::Plain(values) => {
                values[index as usize] = value;
                return 0;
            }
            Chunk::Runs { runs, .. } => {
                if let Some(last) = runs.last_mut().filter(|r| r.continued_by(index, value)) {
                    if last.len == 1 {
                        last.stride = value.wrapping_sub(last.first);
                    }
                    last.len += 1;
                    return 0;
                }
            }
        }
        // A new run, or plain entries from now on: what the array holds changes.
        let before = self.bytes() as i64;
        let Chunk::Runs { runs, len } = self else { unreachable!("plain arrays returned above") };
        // In order, after the last run: a new run, while runs cost at most half a plain array (16 bytes a run,
        // 4 an entry).
        if runs.last().is_none_or(|r| index >= r.start + r.len) && (runs.len() as u32 + 1) * 8 <= *len {
            if runs.len() == runs.capacity() {
                // Grow by doubling, but never past `len / 8` runs: runs never cost more than entries.
                let most = *len as usize / 8;
                runs.reserve_exact((2 * runs.len()).clamp(1, most) - runs.len());
            }
            runs.push(Run { start: index, len: 1, first: value, stride: 0 });
        } else {
            let mut values = Chunk::plain(runs, *len);
            values[index as usize] = value;
            *self = Chunk::Plain(values);
        }
        self.bytes() as i64 - before
    }

    fn bytes(&self) -> u64 {
        match self {
            Chunk::Plain(values) => values.len() as u64 * 4 + ALLOCATION_BYTES,
            Chunk::Runs { runs, .. } if runs.capacity() == 0 => 0,
            Chunk::Runs { runs, .. } => runs.capacity() as u64 * std::mem::size_of::<Run>() as u64 + ALLOCATION_BYTES,
        }
    }
}

/// The allocator's bookkeeping per heap block (glibc: a 16-byte header, rounded to 16 bytes), counted so
/// that `bytes` is close to the memory held.
const ALLOCATION_BYTES: u64 = 16;

#[derive(Debug, Clone, Default)]
pub struct ChunkTable {
    /// Per key: 0 if it has no array, else the array's slot in `chunks` + 1.
    chunk_of: Vec<u32>,
    chunks: Vec<Chunk>,
    /// Slots of `chunks` whose array was dropped, to reuse.
    free_slots: Vec<u32>,
    /// Bytes of the arrays' contents (runs or plain), kept up to date for `bytes`.
    content_bytes: u64,
}

impl ChunkTable {
    /// A table of `keys` keys, none with an array.
    pub fn new(keys: usize) -> Self {
        ChunkTable { chunk_of: vec![0; keys], ..ChunkTable::default() }
    }

    #[inline]
    pub fn get(&self, key: usize, index: usize) -> u32 {
        match self.chunk_of[key] {
            0 => 0,
            slot => self.chunks[slot as usize - 1].get(index as u32),
        }
    }

    /// Whether `key` has an array.
    pub fn has(&self, key: usize) -> bool {
        self.chunk_of[key] != 0
    }

    /// Set entry `index` of `key`'s array, first creating it (all zeros, `len` entries) if `key` has none
    /// (`len` is ignored otherwise).
    pub fn set(&mut self, key: usize, index: usize, value: u32, len: usize) {
        if self.chunk_of[key] == 0 {
            let chunk = Chunk::Runs { runs: Vec::new(), len: len as u32 };
            let slot = match self.free_slots.pop() {
                Some(slot) => {
                    self.chunks[slot as usize] = chunk;
                    slot
                }
                None => {
                    self.chunks.push(chunk);
                    self.chunks.len() as u32 - 1
                }
            };
            self.chunk_of[key] = slot + 1;
        }
        let chunk = &mut self.chunks[self.chunk_of[key] as usize - 1];
        let change = chunk.set(index as u32, value);
        self.content_bytes = self.content_bytes.checked_add_signed(change).expect("bytes held stay >= 0");
    }

    /// Drop `key`'s array (every entry reads 0 again).
    pub fn release(&mut self, key: usize) {
        let slot = std::mem::take(&mut self.chunk_of[key]);
        if slot != 0 {
            let chunk = std::mem::take(&mut self.chunks[slot as usize - 1]);
            self.content_bytes -= chunk.bytes();
            self.free_slots.push(slot - 1);
        }
    }

    /// Heap bytes held: the per-key index, the arrays' slots and their contents.
    pub fn bytes(&self) -> u64 {
        self.chunk_of.len() as u64 * 4
            + self.chunks.capacity() as u64 * std::mem::size_of::<Chunk>() as u64
            + self.free_slots.capacity() as u64 * 4
            + self.content_bytes
    }

    /// The most `bytes` can be for `keys` keys whose arrays hold `entries` entries in all (an array's runs
    /// never cost more than its plain entries: at most `len / 8` of 16 bytes).
    pub fn bytes_at_most(keys: u64, entries: u64) -> u64 {
        // `chunks` and `free_slots` grow by doubling: each can reach twice the number of keys.
        keys * 4 + 2 * keys * (std::mem::size_of::<Chunk>() as u64 + 4) + entries * 4 + keys * ALLOCATION_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain array beside the table, written the same way: every read must agree.
    fn check_against_plain(writes: &[(usize, u32)], len: usize) -> ChunkTable {
        let mut t = ChunkTable::new(4);
        let mut plain = vec![0u32; len];
        for &(i, v) in writes {
            t.set(2, i, v, len);
            plain[i] = v;
            for (j, &p) in plain.iter().enumerate() {
                assert_eq!(t.get(2, j), p, "entry {j} after writing {v} at {i}");
            }
        }
        assert_eq!(t.content_bytes, t.chunks.iter().map(Chunk::bytes).sum::<u64>());
        if let Chunk::Runs { runs, .. } = &t.chunks[0] {
            assert!(runs.capacity() * 8 <= len, "{} runs' room for {len} entries", runs.capacity());
        }
        t
    }

    #[test]
    fn in_order_strided_writes_stay_runs_and_anything_else_reads_as_a_plain_array() {
        // One stride, then a gap and a second run of another stride: two runs.
        let writes: Vec<(usize, u32)> =
            (0..40).map(|k| (k, 7 + 1024 * k as u32)).chain((50..60).map(|k| (k, 900 + k as u32))).collect();
        let t = check_against_plain(&writes, 64);
        assert!(matches!(&t.chunks[0], Chunk::Runs { runs, .. } if runs.len() == 2));
        assert!(t.bytes() < ChunkTable::bytes_at_most(4, 64));
        // Out of order (a rewrite of an earlier entry): plain from then on, same contents.
        let mut rewrites = writes.clone();
        rewrites.push((3, 5));
        let t = check_against_plain(&rewrites, 64);
        assert!(matches!(t.chunks[0], Chunk::Plain(_)));
        // Values that never continue a run: plain once runs would cost more.
        let scattered: Vec<(usize, u32)> = (0..64).map(|k| (k, (k as u32).wrapping_mul(2_654_435_761) | 1)).collect();
        let t = check_against_plain(&scattered, 64);
        assert!(matches!(t.chunks[0], Chunk::Plain(_)));
        assert!(t.bytes() <= ChunkTable::bytes_at_most(4, 64));
    }

    #[test]
    fn arrays_exist_only_for_written_keys_and_release_reuses_their_slots() {
        let mut t = ChunkTable::new(1 << 20);
        assert_eq!((t.get(700_000, 5), t.has(700_000)), (0, false));
        t.set(700_000, 5, 9, 16);
        t.set(700_000, 6, 10, 99); // len ignored: the array exists
        t.set(3, 0, 1, 8);
        assert_eq!((t.get(700_000, 5), t.get(700_000, 6), t.get(700_000, 7), t.get(3, 0)), (9, 10, 0, 1));
        t.release(700_000);
        assert_eq!((t.get(700_000, 5), t.has(700_000)), (0, false));
        t.set(42, 1, 4, 16);
        assert_eq!(t.chunks.len(), 2, "the released slot is reused");
        assert_eq!((t.get(42, 1), t.get(42, 0)), (4, 0));
        t.release(3);
        t.release(42);
        assert_eq!(t.content_bytes, 0);
    }
}
