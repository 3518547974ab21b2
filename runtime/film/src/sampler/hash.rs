//! Integer mixing used to derive generator seeds and permutations from sample coordinates.

/// The Tiny Encryption Algorithm (Wheeler and Needham 1994) on the 64-bit block `(v0, v1)`
/// with a 128-bit key. For a fixed key it is a bijection of the block, which is what makes
/// distinct sample coordinates give distinct generator states; Zafar, Olano and Curtis (2010,
/// "GPU random numbers via the tiny encryption algorithm") show that 8 rounds already decorrelate
/// consecutive inputs well.
pub(crate) fn tea(v0: u32, v1: u32, key: [u32; 4], rounds: u32) -> (u32, u32) {
    let ([v0], [v1]) = tea_lanes([v0], [v1], key, rounds);
    (v0, v1)
}

/// [`tea`] on `N` blocks at once (lane `l` is the block `(v0[l], v1[l])`): the lanes' operations
/// side by side, which the compiler turns into vector instructions (shifts, adds and xors only).
#[inline]
pub(crate) fn tea_lanes<const N: usize>(
    mut v0: [u32; N],
    mut v1: [u32; N],
    key: [u32; 4],
    rounds: u32,
) -> ([u32; N], [u32; N]) {
    const DELTA: u32 = 0x9e37_79b9;
    let mix = |v: u32, sum: u32, k0: u32, k1: u32| {
        (v << 4).wrapping_add(k0) ^ v.wrapping_add(sum) ^ (v >> 5).wrapping_add(k1)
    };
    let mut sum = 0u32;
    for _ in 0..rounds {
        sum = sum.wrapping_add(DELTA);
        for l in 0..N {
            v0[l] = v0[l].wrapping_add(mix(v1[l], sum, key[0], key[1]));
        }
        for l in 0..N {
            v1[l] = v1[l].wrapping_add(mix(v0[l], sum, key[2], key[3]));
        }
    }
    (v0, v1)
}

/// The image of `index` under a pseudorandom permutation of `0..length` chosen by `seed`
/// (Kensler 2013, "Correlated Multi-Jittered Sampling", Pixar technical memo 13-01, §3): an
/// invertible hash on the smallest power-of-two range containing `0..length`, repeated until
/// the value falls inside (cycle walking), then a seed-dependent rotation. `length` must be at
/// least 1 and `index` below it.
pub(crate) fn permute(index: u32, length: u32, seed: u32) -> u32 {
    debug_assert!(index < length);
    // All bits below the highest bit of `length - 1`: the hash acts on 0..=mask.
    let mask = u32::MAX.checked_shr((length - 1).leading_zeros()).unwrap_or(0);
    let mut i = index;
    loop {
        // Each step is invertible modulo mask + 1 (xor with a constant or with shifted-down
        // bits, multiplication by an odd number), so the whole round is a bijection of 0..=mask.
        i ^= seed;
        i = i.wrapping_mul(0xe170_893d);
        i ^= seed >> 16;
        i ^= (i & mask) >> 4;
        i ^= seed >> 8;
        i = i.wrapping_mul(0x0929_eb3f);
        i ^= seed >> 23;
        i ^= (i & mask) >> 1;
        i = i.wrapping_mul(1 | seed >> 27);
        i = i.wrapping_mul(0x6935_fa69);
        i ^= (i & mask) >> 11;
        i = i.wrapping_mul(0x74dc_b303);
        i ^= (i & mask) >> 2;
        i = i.wrapping_mul(0x9e50_1cc3);
        i ^= (i & mask) >> 2;
        i = i.wrapping_mul(0xc860_a3df);
        i &= mask;
        i ^= i >> 5;
        if i < length {
            break;
        }
    }
    // The memo adds the seed in 32-bit arithmetic, which stops being a rotation when the sum
    // wraps around 2^32 and `length` is not a power of two; widening keeps it a bijection.
    ((u64::from(i) + u64::from(seed)) % u64::from(length)) as u32
}
