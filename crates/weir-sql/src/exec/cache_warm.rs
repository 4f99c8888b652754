//! Bringing memory into the cache before a pass that reads it out of address order: a
//! window fires in key order, which is a random order of a slice's entries, so each of
//! the entries' cache lines would be waited for one at a time; read once in address
//! order (a word per line, with nothing depending on the loads), they stream in, many
//! at once, and the pass in key order finds them cached.

/// Cache lines are 64 bytes.
const LINE: usize = 64;

/// Reads a value of every cache line `values` spans.
#[inline]
pub fn warm<T: Copy>(values: &[T]) {
    let step = (LINE / std::mem::size_of::<T>().max(1)).max(1);
    for v in values.iter().step_by(step) {
        std::hint::black_box(*v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warming_reads_and_leaves_values_of_any_width_as_they_were() {
        let wide: Vec<[u64; 9]> = vec![[7; 9]; 5];
        warm(&wide);
        warm::<u8>(&[]);
        let narrow: Vec<u32> = (0..1000).collect();
        warm(&narrow);
        assert_eq!(narrow.iter().map(|v| *v as u64).sum::<u64>(), 499_500);
        assert_eq!(wide[4], [7; 9]);
    }
}
