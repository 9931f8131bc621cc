//! Memory helpers of the hot paths: the "no entry" marker of the big tables,
//! tables backed by huge pages and shared by clones until written, and CPU
//! prefetch hints. All of the engine's
//! `unsafe` code is here; none of it changes a result.

// The workspace warns on `unsafe` everywhere else; each block below says why
// it is sound.
#![allow(unsafe_code)]

/// "No entry" in the FTL's tables (map, block lists, logs, shadow model).
pub const NONE: u32 = u32::MAX;

/// Bytes of one chunk of a [`CowTable`] (a huge page).
const COW_CHUNK_BYTES: usize = 2 << 20;

/// Chunk memory kept for reuse after its table dropped it, up to this many
/// bytes per process. Memory fresh from the OS costs the kernel's zeroing of
/// every page on first touch (measured at about 2 s per GB on the 2-core
/// machines, as much as simulating a fill), so a process that builds one
/// simulator after another (a review's or a calibration's runs on a worker)
/// reuses the memory of the last one instead.
const CHUNK_POOL_BYTES: usize = 4 << 30;

/// Chunk memory given back by dropped tables (addresses, as integers).
static CHUNK_POOL: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

fn chunk_layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(COW_CHUNK_BYTES, COW_CHUNK_BYTES).expect("chunk layout")
}

/// The memory of one chunk: from the pool, else new (advised onto a huge page).
fn chunk_memory() -> *mut u8 {
    if let Some(p) = CHUNK_POOL.lock().ok().and_then(|mut pool| pool.pop()) {
        return p as *mut u8;
    }
    let layout = chunk_layout();
    // SAFETY: `layout` has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory we own; failure is harmless.
    unsafe {
        libc::madvise(ptr as *mut libc::c_void, COW_CHUNK_BYTES, libc::MADV_HUGEPAGE);
    }
    ptr
}

/// One chunk's memory (2 MiB, aligned to its size so it can be one huge page).
#[derive(Debug)]
struct Chunk<T> {
    ptr: *mut T,
}

// SAFETY: a chunk owns its memory like a `Box<[T]>`; the tables below only
// write to a chunk they hold alone (its `Arc` is unique).
unsafe impl<T: Send> Send for Chunk<T> {}
// SAFETY: as for `Send`: shared chunks are only read.
unsafe impl<T: Sync> Sync for Chunk<T> {}

impl<T: Copy> Chunk<T> {
    const LEN: usize = COW_CHUNK_BYTES / size_of::<T>();

    /// A chunk of `LEN` values, each `v`.
    fn new(v: T) -> Chunk<T> {
        let ptr = chunk_memory() as *mut T;
        for i in 0..Self::LEN {
            // SAFETY: `i < LEN`, inside the chunk's memory.
            unsafe { ptr.add(i).write(v) };
        }
        Chunk { ptr }
    }

    /// A copy of `src`.
    fn copy_of(src: &Chunk<T>) -> Chunk<T> {
        let ptr = chunk_memory() as *mut T;
        // SAFETY: both chunks hold `LEN` values and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src.ptr, ptr, Self::LEN) };
        Chunk { ptr }
    }
}

impl<T> Drop for Chunk<T> {
    fn drop(&mut self) {
        if let Ok(mut pool) = CHUNK_POOL.lock() {
            if pool.len() < CHUNK_POOL_BYTES / COW_CHUNK_BYTES {
                pool.push(self.ptr as usize);
                return;
            }
        }
        // SAFETY: allocated in `chunk_memory` with this layout.
        unsafe { std::alloc::dealloc(self.ptr as *mut u8, chunk_layout()) };
    }
}

/// A large table whose clone is nearly free: the values lie in chunks of
/// 2 MiB (huge pages where the OS offers them) that a clone shares with its
/// original, and a chunk is copied when one of them first writes to it
/// (copy on write). A simulator cloned for each run that starts from a
/// shared state thus copies only the part of its map that the run changes;
/// a new or refilled table is one chunk shared by all, so a drive costs
/// memory only for the part of its map written (a test over an 8GB span of a
/// 480GB drive touches 2% of it).
/// Reads cost one more load than a flat table (the chunk's address, from a
/// table small enough to stay in cache); writes one flag test more. Results
/// do not depend on it.
#[derive(Debug)]
pub struct CowTable<T> {
    chunks: Vec<std::sync::Arc<Chunk<T>>>,
    /// Chunk `c`'s address, and whether this table holds it alone (cleared for
    /// both tables by a clone; set again when a write copies the chunk or
    /// finds it unique).
    slots: Vec<Slot<T>>,
    len: usize,
}

#[derive(Debug)]
struct Slot<T> {
    ptr: *mut T,
    owned: std::sync::atomic::AtomicBool,
}

// SAFETY: the raw pointers are those of chunks the table holds through `Arc`s;
// reads go through `&self`, writes through `&mut self` to a chunk held alone.
unsafe impl<T: Send + Sync> Send for CowTable<T> {}
// SAFETY: as for `Send`: through `&self` the chunks are only read (and the
// flags are atomics).
unsafe impl<T: Send + Sync> Sync for CowTable<T> {}

impl<T: Copy> CowTable<T> {
    /// Values per chunk (a power of two): every chunk holds this many.
    const PER_CHUNK: usize = Chunk::<T>::LEN;
    const SHIFT: u32 = Self::PER_CHUNK.trailing_zeros();
    const MASK: usize = Self::PER_CHUNK - 1;

    /// `n` values, each `value`. Every chunk starts as one shared chunk of
    /// `value`s, so a table costs memory only for the chunks written since.
    pub fn new(n: usize, value: T) -> Self {
        let count = n.div_ceil(Self::PER_CHUNK).max(1);
        let (chunks, slots) = Self::uniform(count, value);
        CowTable { chunks, slots, len: n }
    }

    /// `count` chunks sharing one chunk of `value`s, none owned.
    fn uniform(count: usize, value: T) -> (Vec<std::sync::Arc<Chunk<T>>>, Vec<Slot<T>>) {
        let one = std::sync::Arc::new(Chunk::new(value));
        let slots = (0..count).map(|_| Slot { ptr: one.ptr, owned: std::sync::atomic::AtomicBool::new(false) }).collect();
        (vec![one; count], slots)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `i` (`i < len`).
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        let p = self.slots[i >> Self::SHIFT].ptr;
        // SAFETY: every chunk holds `PER_CHUNK` values and `slots[i >> SHIFT]`
        // was bounds-checked, so the offset lies inside that chunk.
        unsafe { *p.add(i & Self::MASK) }
    }

    /// Value `i`, or None past the end.
    pub fn try_get(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| self.get(i))
    }

    /// Set value `i` (`i < len`) to `f` of its value.
    #[inline(always)]
    pub fn update(&mut self, i: usize, f: impl FnOnce(T) -> T) {
        debug_assert!(i < self.len);
        let c = i >> Self::SHIFT;
        if !self.slots[c].owned.load(std::sync::atomic::Ordering::Relaxed) {
            self.own(c);
        }
        // SAFETY: as in `get`; chunk `c` is held by this table alone.
        unsafe {
            let p = self.slots[c].ptr.add(i & Self::MASK);
            *p = f(*p);
        }
    }

    /// Set value `i` (`i < len`).
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: T) {
        self.update(i, |_| v);
    }

    /// Make chunk `c` this table's alone: copy it if another table shares it.
    #[inline(never)]
    #[cold]
    fn own(&mut self, c: usize) {
        if std::sync::Arc::strong_count(&self.chunks[c]) > 1 {
            let copy = Chunk::copy_of(&self.chunks[c]);
            self.slots[c].ptr = copy.ptr;
            self.chunks[c] = std::sync::Arc::new(copy);
        }
        // (a count of 1 read after the other holder dropped it: its reads are
        // over, the `Arc`'s release of that drop orders them before our writes)
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        self.slots[c].owned.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Every value set to `v`: the chunks go (back to the pool when no other
    /// table holds them) and the table starts again from one shared chunk.
    pub fn fill(&mut self, v: T) {
        let (chunks, slots) = Self::uniform(self.chunks.len(), v);
        self.chunks = chunks;
        self.slots = slots;
    }

    /// The values, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len).map(move |i| self.get(i))
    }

    /// Ask the CPU to start loading value `i` (no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if i < self.len {
            let p = self.slots[i >> Self::SHIFT].ptr;
            // SAFETY: the pointer is inside a chunk; prefetch never faults.
            unsafe {
                std::arch::x86_64::_mm_prefetch(p.add(i & Self::MASK) as *const i8, std::arch::x86_64::_MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }
}

impl<T: Copy> Clone for CowTable<T> {
    /// Shares every chunk: both tables copy a chunk when they first write it.
    fn clone(&self) -> Self {
        for s in &self.slots {
            s.owned.store(false, std::sync::atomic::Ordering::Relaxed);
        }
        let slots = self.slots.iter().map(|s| Slot { ptr: s.ptr, owned: std::sync::atomic::AtomicBool::new(false) }).collect();
        CowTable { chunks: self.chunks.clone(), slots, len: self.len }
    }
}

/// Ask the CPU to start loading `v[i]` (no effect on results).
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < v.len() {
        // SAFETY: the pointer is inside the slice; prefetch never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch(v.as_ptr().add(i) as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

/// Ask the CPU to start loading every cache line of `*x` (no effect on results).
#[inline(always)]
pub fn prefetch_value<T>(x: &T) {
    let lines = size_of::<T>().div_ceil(64);
    let p = x as *const T as *const u8;
    for i in 0..lines {
        // SAFETY: prefetch never faults; the addresses lie within `*x`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            std::arch::x86_64::_mm_prefetch(p.add(i * 64) as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (p, i);
    }
}

#[cfg(test)]
mod tests {
    use super::CowTable;

    /// A clone and its original never see each other's writes, whichever
    /// writes first, across chunks, after fills and after either is dropped.
    #[test]
    fn clones_are_independent() {
        let n = 3 * (2 << 20) / 4 + 5; // three full chunks of u32 and a partial one
        let mut a = CowTable::new(n, 7u32);
        a.set(0, 1);
        a.set(n - 1, 2);
        let mut b = a.clone();
        assert_eq!((b.get(0), b.get(n - 1), b.get(n / 2)), (1, 2, 7));
        b.set(0, 10);
        a.set(n - 1, 20);
        assert_eq!((a.get(0), a.get(n - 1)), (1, 20));
        assert_eq!((b.get(0), b.get(n - 1)), (10, 2));
        let c = b.clone();
        b.fill(0);
        assert!(b.iter().all(|v| v == 0));
        assert_eq!((c.get(0), c.get(n - 1), c.get(n / 2)), (10, 2, 7));
        drop(c);
        b.update(n / 2, |v| v + 3);
        assert_eq!(b.get(n / 2), 3);
        // memory given back by the dropped tables is reused with its values reset
        drop(b);
        let d = CowTable::new(n, 9u32);
        assert!(d.iter().all(|v| v == 9));
        assert_eq!(a.try_get(n), None);
        assert_eq!(a.iter().filter(|&v| v != 7).count(), 2);
    }

    /// Tables shared across threads: each side's writes stay its own.
    #[test]
    fn clones_on_other_threads() {
        let n = (2 << 20) / 8 * 2;
        let a = CowTable::new(n, 0u64);
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let mut c = a.clone();
                std::thread::spawn(move || {
                    for i in (0..n).step_by(1000) {
                        c.set(i, t + 1);
                    }
                    c.iter().step_by(1000).all(|v| v == t + 1)
                })
            })
            .collect();
        assert!(handles.into_iter().all(|h| h.join().unwrap()));
        assert!(a.iter().all(|v| v == 0));
    }
}
