//! Spatial sampling of traces by block: which requests a sampled trace keeps.
//!
//! A request is kept when the hash of its *block* — `page / block_pages` — is at most a
//! threshold `T`; the sampling rate is `R = (T + 1) / 2^64`. Every request to a kept block is
//! kept, so a sampled trace holds whole blocks. The simulator's SHARDS and miniature simulation
//! (`flashbuf_sim::sample`, `flashbuf_sim::curve`) sample with it, and a reader can apply it
//! while decoding ([`crate::TraceSource::next_sampled`]), so that the requests it drops are never
//! built.
//!
//! The hash is MurmurHash3's 64-bit finaliser of the block number mixed with a salt: fast, and
//! a good enough avalanche that the kept blocks form a uniform random subset. Same salt, same
//! sample, on every machine.

/// Default salt of the block hash.
pub const DEFAULT_SALT: u64 = 0x5eed_f1a5_b0f0_0001;

/// MurmurHash3's `fmix64` of `block` mixed with `salt`.
#[inline]
pub fn block_hash(block: u64, salt: u64) -> u64 {
    let mut k = block ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// Keeps the requests whose block hashes at or below a threshold (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSampler {
    block_pages: u64,
    shift: Option<u32>,
    salt: u64,
    /// Keep a block when its hash is at most this.
    limit: u64,
}

impl BlockSampler {
    /// A sampler of rate `rate` (in (0, 1]) over blocks of `block_pages` pages.
    pub fn with_rate(rate: f64, block_pages: u64, salt: u64) -> Result<Self, String> {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(format!("sampling rate {rate}: must be in (0, 1] (e.g. 0.01 or 1%)"));
        }
        let limit = if rate >= 1.0 { u64::MAX } else { ((rate * 2f64.powi(64)) as u64).saturating_sub(1) };
        Ok(Self::with_limit(limit, block_pages, salt))
    }

    /// A sampler keeping every block whose hash is at most `limit`.
    pub fn with_limit(limit: u64, block_pages: u64, salt: u64) -> Self {
        let block_pages = block_pages.max(1);
        BlockSampler {
            block_pages,
            shift: block_pages.is_power_of_two().then(|| block_pages.trailing_zeros()),
            salt,
            limit,
        }
    }

    /// The sampling rate `(T + 1) / 2^64`.
    pub fn rate(&self) -> f64 {
        (self.limit as f64 + 1.0) / 2f64.powi(64)
    }

    /// Pages per sampling unit.
    pub fn block_pages(&self) -> u64 {
        self.block_pages
    }

    /// The salt.
    pub fn salt(&self) -> u64 {
        self.salt
    }

    /// The threshold: blocks hashing at most this are kept.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The block of `page`.
    #[inline]
    pub fn block(&self, page: u64) -> u64 {
        match self.shift {
            Some(s) => page >> s,
            None => page / self.block_pages,
        }
    }

    /// The hash of `block`.
    #[inline]
    pub fn hash(&self, block: u64) -> u64 {
        block_hash(block, self.salt)
    }

    /// `true` when `page`'s block is in the sample.
    #[inline]
    pub fn keeps(&self, page: u64) -> bool {
        self.hash(self.block(page)) <= self.limit
    }

    /// Lowers the threshold below `hash`: that block and every block hashing above it leave the
    /// sample (fixed-size SHARDS).
    pub fn exclude_from(&mut self, hash: u64) {
        self.limit = self.limit.min(hash.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_threshold_agree() {
        let s = BlockSampler::with_rate(0.01, 64, 1).unwrap();
        assert!((s.rate() - 0.01).abs() < 1e-12);
        assert_eq!(BlockSampler::with_rate(1.0, 64, 1).unwrap().limit(), u64::MAX);
        assert!(BlockSampler::with_rate(0.0, 64, 1).is_err());
        assert!(BlockSampler::with_rate(1.5, 64, 1).is_err());
        assert!(BlockSampler::with_rate(f64::NAN, 64, 1).is_err());
    }

    #[test]
    fn keeps_whole_blocks_at_about_the_rate() {
        let s = BlockSampler::with_rate(0.1, 64, DEFAULT_SALT).unwrap();
        let blocks = 100_000u64;
        let kept = (0..blocks).filter(|&b| s.keeps(b * 64)).count() as f64;
        // Binomial(100000, 0.1): standard deviation ~95.
        assert!((kept - 10_000.0).abs() < 500.0, "{kept}");
        for b in 0..1000u64 {
            let k = s.keeps(b * 64);
            assert!((0..64).all(|o| s.keeps(b * 64 + o) == k));
        }
    }
}
