//! Memory helpers of the hot paths: the "no entry" marker of the big tables,
//! tables backed by huge pages, and CPU prefetch hints. All of the engine's
//! `unsafe` code is here; none of it changes a result.

// The workspace warns on `unsafe` everywhere else; each block below says why
// it is sound.
#![allow(unsafe_code)]

/// "No entry" in the FTL's tables (map, block lists, logs, shadow model).
pub const NONE: u32 = u32::MAX;

/// A large table filled with `value`, backed by transparent huge pages where
/// the OS offers them (the maps are hundreds of MB and touched at random, so
/// TLB misses would otherwise dominate). Results do not depend on it.
pub fn big_table<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = big_vec(n);
    v.resize(n, value);
    v
}

/// A copy of a large table, on huge pages as [`big_table`], written once
/// (`Vec::clone` would fault its memory in 4 KiB at a time: cloning a
/// simulator for each run that starts from a shared state is then mostly
/// kernel time).
pub fn big_copy<T: Copy>(src: &[T]) -> Vec<T> {
    let mut v = big_vec(src.len());
    v.extend_from_slice(src);
    v
}

/// An empty Vec with room for `n` values, advised onto huge pages.
fn big_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        let bytes = n * size_of::<T>();
        if bytes >= 4 << 20 {
            let p = v.as_ptr() as usize;
            let huge = 2usize << 20;
            let start = (p + huge - 1) & !(huge - 1);
            let end = (p + bytes) & !(huge - 1);
            if end > start {
                // SAFETY: advice on memory this Vec owns; failure is harmless.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// A big table ([`big_table`]) whose clone is a [`big_copy`].
#[derive(Debug)]
pub struct BigTable<T>(Vec<T>);

impl<T: Copy> BigTable<T> {
    pub fn new(n: usize, value: T) -> Self {
        BigTable(big_table(n, value))
    }
}

impl<T: Copy> Clone for BigTable<T> {
    fn clone(&self) -> Self {
        BigTable(big_copy(&self.0))
    }
}

impl<T> std::ops::Deref for BigTable<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for BigTable<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
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
