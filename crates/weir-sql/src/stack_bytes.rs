//! A byte string written into a fixed buffer on the stack, for encodings that are
//! short for almost every record (a row, a group key): writing never allocates, and
//! an encoding that turns out longer than the buffer is recognised at the end, so the
//! caller takes its general path for that record.
//!
//! Invariant: `len` counts every byte written, those past the buffer too (which are
//! dropped); the bytes are whole exactly when `len` fits in the buffer.

/// An encoding of at most `N` bytes being written on the stack.
pub(crate) struct StackBytes<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBytes<N> {
    /// An empty encoding.
    #[inline]
    pub fn new() -> Self {
        Self { buf: [0; N], len: 0 }
    }

    /// The encoding, if it fit.
    #[inline]
    pub fn bytes(&self) -> Option<&[u8]> {
        self.buf.get(..self.len)
    }

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, byte: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = byte;
        }
        self.len = self.len.saturating_add(1);
    }

    /// Appends `bytes`.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        let end = self.len.saturating_add(bytes.len());
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(bytes);
        }
        self.len = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_fit_are_kept_and_an_overflow_is_told_at_the_end() {
        let mut b = StackBytes::<4>::new();
        b.push(1);
        b.extend_from_slice(&[2, 3, 4]);
        assert_eq!(b.bytes(), Some(&[1, 2, 3, 4][..]));
        b.extend_from_slice(&[5, 6]);
        b.push(7);
        assert_eq!(b.bytes(), None);
    }
}
