//! Byte buffers aligned for O_DIRECT I/O, for every layer that reads or writes a device
//! directly (the workload engines, the evidence probe read, the flash probes).

/// Alignment of every buffer: a page, which covers any logical block size up to 4 KiB.
pub const BUFFER_ALIGN: usize = 4096;

/// A zero-initialised byte buffer whose start is aligned to [`BUFFER_ALIGN`] (or more).
pub struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let align = align.max(BUFFER_ALIGN);
        let storage = vec![0u8; len + align];
        let misalign = storage.as_ptr() as usize % align;
        let start = if misalign == 0 { 0 } else { align - misalign };
        AlignedBuf {
            storage,
            start,
            len,
        }
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned() {
        for len in [512, 4096, 1 << 20] {
            let b = AlignedBuf::new(len, 512);
            assert_eq!(b.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
            assert_eq!(b.len(), len);
        }
    }
}
