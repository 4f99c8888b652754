//! Random strings of the generator (Nexmark's `StringsGenerator`) and the channels
//! bids come through with their URLs.
//!
//! Channels are a fixed table per seed: four hot channels (Google, Facebook, Baidu,
//! Apple), each with a URL, and 10,000 numbered channels `channel-<n>`, nine in ten of
//! whose URLs carry a `&channel_id=` parameter. Nexmark draws these URLs from an
//! unseeded random source once per process; here they follow from the seed, so a run
//! is reproducible.

use std::sync::Arc;
use weir_connectors::Rng;

/// The shortest random string.
const MIN_STRING_LENGTH: u64 = 3;
/// The hot channels.
pub const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];
/// Number of numbered (cold) channels.
pub const CHANNELS_NUMBER: u64 = 10_000;

/// A string of 3 to `max_length - 1` letters and `separator`s (one character in 13),
/// trimmed of leading and trailing separators. `separator` is an ASCII character.
pub fn next_string(rng: &mut Rng, max_length: u64, separator: u8) -> String {
    let len = MIN_STRING_LENGTH + rng.next_below(max_length - MIN_STRING_LENGTH);
    let mut chars = Vec::with_capacity(len as usize);
    for _ in 0..len {
        if rng.next_below(13) == 0 {
            chars.push(separator);
        } else {
            chars.push(b'a' + rng.next_below(26) as u8);
        }
    }
    let end = chars.iter().rposition(|&c| c != separator).map_or(0, |i| i + 1);
    chars.truncate(end);
    let start = chars.iter().position(|&c| c != separator).unwrap_or(end);
    chars.drain(..start);
    String::from_utf8(chars).expect("letters and an ASCII separator are ASCII")
}

/// Letters drawn from one 64-bit random number by [`next_exact_string`].
const LETTERS_PER_DRAW: usize = 12;

/// A string of exactly `length` letters: each letter is the integer part of 26 times
/// a random fraction, whose remaining fraction gives the next letters (up to
/// 12 letters per 64 random bits).
pub fn next_exact_string(rng: &mut Rng, length: usize) -> String {
    let mut letters = vec![0u8; length];
    for chunk in letters.chunks_mut(LETTERS_PER_DRAW) {
        let mut fraction = rng.next_u64();
        for letter in chunk {
            let scaled = u128::from(fraction) * 26;
            *letter = b'a' + (scaled >> 64) as u8;
            fraction = scaled as u64;
        }
    }
    String::from_utf8(letters).expect("lowercase letters are ASCII")
}

/// Padding so that `current_size` plus its length is on average `average_size`: a
/// length uniform within ±20 % of the difference (empty when already larger).
pub fn next_extra(rng: &mut Rng, current_size: u64, average_size: u64) -> String {
    if current_size > average_size {
        return String::new();
    }
    let wanted = average_size - current_size;
    let delta = (wanted as f64 * 0.2).round() as u64;
    let size = wanted - delta + if delta == 0 { 0 } else { rng.next_below(2 * delta) };
    next_exact_string(rng, size as usize)
}

/// The channel table of one seed.
#[derive(Debug, Clone)]
pub struct Channels {
    hot_channels: Vec<(Arc<str>, Arc<str>)>,
    /// Name and URL of each numbered channel.
    numbered: Vec<(Arc<str>, Arc<str>)>,
}

fn base_url(rng: &mut Rng) -> String {
    format!(
        "https://www.nexmark.com/{}/{}/{}/item.htm?query=1",
        next_string(rng, 5, b'_'),
        next_string(rng, 5, b'_'),
        next_string(rng, 5, b'_')
    )
}

impl Channels {
    /// The channels of generator seed `seed`.
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::for_index(seed ^ 0x6e65_786d_6172_6b00, u64::MAX);
        let hot_channels = HOT_CHANNELS
            .iter()
            .map(|name| (Arc::from(*name), Arc::from(base_url(&mut rng))))
            .collect();
        let numbered = (0..CHANNELS_NUMBER)
            .map(|n| {
                let mut url = base_url(&mut rng);
                if rng.next_below(10) > 0 {
                    url.push_str(&format!("&channel_id={}", (n as i32).reverse_bits().wrapping_abs()));
                }
                (Arc::from(format!("channel-{n}")), Arc::from(url))
            })
            .collect();
        Self { hot_channels, numbered }
    }

    /// Hot channel `i` (below 4): name and URL.
    pub fn hot(&self, i: usize) -> &(Arc<str>, Arc<str>) {
        &self.hot_channels[i]
    }

    /// Numbered channel `n` (below [`CHANNELS_NUMBER`]): name and URL.
    pub fn numbered(&self, n: usize) -> &(Arc<str>, Arc<str>) {
        &self.numbered[n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_padding_stays_within_twenty_percent_of_the_missing_size() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let n = next_extra(&mut rng, 32, 100).len();
            assert!((54..82).contains(&n), "{n}");
        }
        assert_eq!(next_extra(&mut rng, 300, 100), "");
    }

    #[test]
    fn random_strings_are_letters_and_separators_of_bounded_length() {
        let mut rng = Rng::new(5);
        for _ in 0..1000 {
            let s = next_string(&mut rng, 20, b' ');
            assert!(s.len() < 20);
            assert!(!s.starts_with(' ') && !s.ends_with(' '));
            assert!(s.chars().all(|c| c == ' ' || c.is_ascii_lowercase()));
        }
    }

    #[test]
    fn numbered_channels_have_ids_in_most_urls_and_the_table_follows_the_seed() {
        let a = Channels::new(1);
        assert_eq!(&*a.numbered(7).0, "channel-7");
        assert!(a.numbered(7).1.starts_with("https://www.nexmark.com/"));
        let with_id = (0..CHANNELS_NUMBER as usize)
            .filter(|n| a.numbered(*n).1.contains("&channel_id="))
            .count();
        assert!((8_500..9_500).contains(&with_id), "{with_id}");
        assert_eq!(Channels::new(1).numbered(42), a.numbered(42));
        assert_eq!(&*a.hot(0).0, "Google");
    }
}
