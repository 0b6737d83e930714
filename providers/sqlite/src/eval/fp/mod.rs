//! SQLite's own conversions between text and numbers, ported line by line
//! from SQLite 3.54 (`sqlite3AtoF`, `sqlite3Atoi64`, `sqlite3FpDecode` and
//! the `%!.17g` / `%!.Nf` branches of its printf).
//!
//! They are ported rather than approximated with Rust's parsing and
//! formatting because they differ from them: SQLite truncates mantissas
//! after 19 digits, accepts prefixes (`'12abc'`), renders `1e20` as
//! `1.0e+20` and picks between 15 and 17 significant digits by its own
//! round-trip test. Every difference would be a false alarm in PQS. The
//! unit tests compare these functions with the bundled library on many
//! random inputs.
//!
//! This module is parsing (`sqlite3AtoF`, `sqlite3Atoi64`) and the
//! power-of-ten arithmetic both directions share; [`print`] is printing.

mod print;
pub use print::{quote_real, render_real, round_digits};

/// What `sqlite3Isspace` accepts: `\t \n \v \f \r` and space (Rust's
/// `is_ascii_whitespace` leaves out `\v`).
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | 0x09..=0x0d)
}

const POWERS_OF_10_FIRST: i32 = -348;
const POWERS_OF_10_LAST: i32 = 347;

/// floor(log2(10^p)) the way SQLite approximates it.
fn pwr10to2(p: i32) -> i32 {
    (p * 108_853) >> 15
}

/// floor(log10(2^p)) the way SQLite approximates it.
fn pwr2to10(p: i32) -> i32 {
    (p * 78_913) >> 18
}

/// The high and low 64 bits of `a * b`.
fn multiply128(a: u64, b: u64) -> (u64, u64) {
    let r = u128::from(a) * u128::from(b);
    ((r >> 64) as u64, r as u64)
}

/// The upper 96 bits of the 96-bit `(a << 32) + a_lo` times `b`, as the
/// high 64 bits and the next 32.
fn multiply160(a: u64, a_lo: u32, b: u64) -> (u64, u32) {
    let mut r = u128::from(a) * u128::from(b);
    r += (u128::from(a_lo) * u128::from(b)) >> 32;
    ((r >> 64) as u64, ((r >> 32) & 0xffff_ffff) as u32)
}

const BASE: [u64; 27] = [
    0x8000000000000000,
    0xa000000000000000,
    0xc800000000000000,
    0xfa00000000000000,
    0x9c40000000000000,
    0xc350000000000000,
    0xf424000000000000,
    0x9896800000000000,
    0xbebc200000000000,
    0xee6b280000000000,
    0x9502f90000000000,
    0xba43b74000000000,
    0xe8d4a51000000000,
    0x9184e72a00000000,
    0xb5e620f480000000,
    0xe35fa931a0000000,
    0x8e1bc9bf04000000,
    0xb1a2bc2ec5000000,
    0xde0b6b3a76400000,
    0x8ac7230489e80000,
    0xad78ebc5ac620000,
    0xd8d726b7177a8000,
    0x878678326eac9000,
    0xa968163f0a57b400,
    0xd3c21bcecceda100,
    0x84595161401484a0,
    0xa56fa5b99019a5c8,
];

const SCALE: [u64; 26] = [
    0x8049a4ac0c5811ae,
    0xcf42894a5dce35ea,
    0xa76c582338ed2621,
    0x873e4f75e2224e68,
    0xda7f5bf590966848,
    0xb080392cc4349dec,
    0x8e938662882af53e,
    0xe65829b3046b0afa,
    0xba121a4650e4ddeb,
    0x964e858c91ba2655,
    0xf2d56790ab41c2a2,
    0xc428d05aa4751e4c,
    0x9e74d1b791e07e48,
    0xcccccccccccccccc,
    0xcecb8f27f4200f3a,
    0xa70c3c40a64e6c51,
    0x86f0ac99b4e8dafd,
    0xda01ee641a708de9,
    0xb01ae745b101e9e4,
    0x8e41ade9fbebc27d,
    0xe5d3ef282a242e81,
    0xb9a74a0637ce2ee1,
    0x95f83d0a1fb69cd9,
    0xf24a01a73cf2dccf,
    0xc3b8358109e84f07,
    0x9e19db92b4e31ba9,
];

const SCALE_LO: [u32; 26] = [
    0x205b896d, 0x52064cad, 0xaf2af2b8, 0x5a7744a7, 0xaf39a475, 0xbd8d794e, 0x547eb47b, 0x0cb4a5a3,
    0x92f34d62, 0x3a6a07f9, 0xfae27299, 0xaa97e14c, 0x775ea265, 0xcccccccc, 0x00000000, 0x999090b6,
    0x69a028bb, 0xe80e6f48, 0x5ec05dd0, 0x14588f14, 0x8f1668c9, 0x6d953e2c, 0x4abdaf10, 0xbc633b39,
    0x0a862f81, 0x6c07a2c2,
];

/// The most significant 64 bits of 10^p and the next 32 (`powerOfTen`).
fn power_of_ten(p: i32) -> (u64, u32) {
    debug_assert!((POWERS_OF_10_FIRST..=POWERS_OF_10_LAST).contains(&p));
    let (g, n);
    if p < 0 {
        if p == -1 {
            return (SCALE[13], SCALE_LO[13]);
        }
        let (mut gg, mut nn) = (p / 27, p % 27);
        if nn != 0 {
            gg -= 1;
            nn += 27;
        }
        (g, n) = (gg, nn);
    } else if p < 27 {
        return (BASE[p as usize], 0);
    } else {
        (g, n) = (p / 27, p % 27);
    }
    let idx = (g + 13) as usize;
    let s = SCALE[idx];
    if n == 0 {
        return (s, SCALE_LO[idx]);
    }
    let (mut x, mut lo) = multiply160(s, SCALE_LO[idx], BASE[n as usize]);
    if x & (1u64 << 63) == 0 {
        x = (x << 1) | u64::from((lo >> 31) & 1);
        lo = (lo << 1) | 1;
    }
    (x, lo)
}

/// `m * 2^e` as `d * 10^p` with at least `n` significant digits in `d`
/// (`sqlite3Fp2Convert10`); `m` has its top bit set.
fn fp2_convert10(m: u64, e: i32, n: i32) -> (u64, i32) {
    let p = n - 1 - pwr2to10(e + 63);
    let (pw, _) = power_of_ten(p);
    let (mut h, _) = multiply128(m, pw);
    let d = if n == 18 {
        h >>= -(e + pwr10to2(p) + 2);
        (h + ((h << 1) & 2)) >> 1
    } else {
        h >> -(e + pwr10to2(p) + 1)
    };
    (d, -p)
}

/// The double nearest `d * 10^p` (`sqlite3Fp10Convert2`), `d` non-zero.
fn fp10_convert2(d: u64, p: i32) -> f64 {
    if p < POWERS_OF_10_FIRST {
        return 0.0;
    }
    if p > POWERS_OF_10_LAST {
        return f64::INFINITY;
    }
    let b = 64 - d.leading_zeros() as i32;
    let lp = pwr10to2(p);
    let mut e = 53 - b - lp;
    if e > 1074 {
        if e >= 1130 {
            return 0.0;
        }
        e = 1074;
    }
    let s = -(e - (64 - b) + lp + 3);
    let (mut pwr10h, mut pwr10l) = power_of_ten(p);
    if pwr10l != 0 {
        pwr10h = pwr10h.wrapping_add(1);
        pwr10l = !pwr10l;
    }
    let x = d << (64 - b);
    let (mut hi, lo) = multiply128(x, pwr10h);
    let mid1 = (lo >> 32) as u32;
    let mut sticky = 1u64;
    if hi & ((1u64 << s) - 1) == 0 {
        let (h2, _) = multiply128(x, u64::from(pwr10l) << 32);
        let mid2 = (h2 >> 32) as u32;
        sticky = u64::from(mid1.wrapping_sub(mid2) > 1);
        if mid1 < mid2 {
            hi = hi.wrapping_sub(1);
        }
    }
    let mut u = (hi >> s) | sticky;
    let adj = i32::from(u >= (1u64 << 55) - 2);
    if adj != 0 {
        u = (u >> adj) | (u & 1);
        e -= adj;
    }
    let mut m = (u + 1 + ((u >> 2) & 1)) >> 2;
    if e <= -972 {
        return f64::INFINITY;
    }
    if m & (1u64 << 52) != 0 {
        m = (m & !(1u64 << 52)) | (((1075 - e) as u64) << 52);
    }
    f64::from_bits(m)
}

/// `sqlite3AtoF`: the text `z` (up to its first NUL) as a double, and the
/// return code: positive if all of `z` is a number (leading and trailing
/// spaces allowed), negative if only a prefix is, 0 if none is. Bit 1 of
/// the code: a decimal point or exponent was seen; bit 2: exactly zero.
// Long because: a line-by-line port of SQLite's sqlite3AtoF, kept whole to compare with the C.
pub fn atof(z: &[u8]) -> (i32, f64) {
    let at = |i: usize| z.get(i).copied().unwrap_or(0);
    let digit = |c: u8| c.is_ascii_digit();
    let mut i = 0usize;
    let mut neg = false;
    let mut s: u64 = 0;
    let mut d: i32 = 0;
    let mut m_state: i32 = 0;
    const LIMIT: u64 = (u64::MAX - 9) / 10;

    // Leading spaces, a sign and the integer part.
    let mut integer_part = false;
    loop {
        let c = at(i);
        if digit(c) {
            integer_part = true;
        } else if c == b'-' {
            neg = true;
            i += 1;
            integer_part = digit(at(i));
        } else if c == b'+' {
            i += 1;
            integer_part = digit(at(i));
        } else if is_space(c) {
            while is_space(at(i)) {
                i += 1;
            }
            continue;
        }
        break;
    }
    if integer_part {
        m_state = 1;
        s = u64::from(at(i) - b'0');
        i += 1;
        while digit(at(i)) {
            s = s * 10 + u64::from(at(i) - b'0');
            i += 1;
            if s >= LIMIT {
                m_state = 9;
                while digit(at(i)) {
                    i += 1;
                    d += 1;
                }
                break;
            }
        }
    }

    // The fractional part.
    if at(i) == b'.' {
        i += 1;
        if digit(at(i)) {
            m_state |= 1;
            loop {
                if s < LIMIT {
                    s = s * 10 + u64::from(at(i) - b'0');
                    d -= 1;
                } else {
                    m_state = 11;
                }
                i += 1;
                if !digit(at(i)) {
                    break;
                }
            }
        } else if m_state == 0 {
            return (0, 0.0);
        }
        m_state |= 2;
    } else if m_state == 0 {
        return (0, 0.0);
    }

    // The exponent.
    if at(i) == b'e' || at(i) == b'E' {
        i += 1;
        let esign = if at(i) == b'-' {
            i += 1;
            -1
        } else {
            if at(i) == b'+' {
                i += 1;
            }
            1
        };
        if digit(at(i)) {
            let mut exp = i32::from(at(i) - b'0');
            i += 1;
            m_state |= 2;
            while digit(at(i)) {
                exp = if exp < 10000 {
                    exp * 10 + i32::from(at(i) - b'0')
                } else {
                    10000
                };
                i += 1;
            }
            d += esign * exp;
        } else {
            // Back onto the 'e' or sign: what follows is not a number.
            i -= 1;
        }
    }

    let mut result = if s == 0 {
        m_state |= 4;
        0.0
    } else {
        fp10_convert2(s, d)
    };
    if neg {
        result = -result;
    }
    if at(i) == 0 {
        return (m_state, result);
    }
    if is_space(at(i)) {
        while is_space(at(i)) {
            i += 1;
        }
        if at(i) == 0 {
            return (m_state, result);
        }
    }
    ((0xffff_fff0u32 as i32) | m_state, result)
}

/// Compares the 19 digits at the start of `z` with 2^63 (`compare2pow63`).
fn compare_2pow63(z: &[u8]) -> i32 {
    const POW63: &[u8] = b"922337203685477580";
    let mut c = 0i32;
    for i in 0..18 {
        if c != 0 {
            break;
        }
        c = (i32::from(z[i]) - i32::from(POW63[i])) * 10;
    }
    if c == 0 {
        c = i32::from(z[18]) - i32::from(b'8');
    }
    c
}

/// `sqlite3Atoi64` on UTF-8 text of exactly `z.len()` bytes: the integer
/// prefix of `z` (clamped to the i64 range) and the return code: -1 no
/// digits, 0 an integer that fits, 1 extra text after it, 2 too large,
/// 3 exactly 9223372036854775808.
pub fn atoi64(z: &[u8]) -> (i32, i64) {
    let n = z.len();
    let mut i = 0;
    while i < n && is_space(z[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < n {
        if z[i] == b'-' {
            neg = true;
            i += 1;
        } else if z[i] == b'+' {
            i += 1;
        }
    }
    let start = i;
    while i < n && z[i] == b'0' {
        i += 1;
    }
    let num = &z[i..];
    let mut u: u64 = 0;
    let mut k = 0;
    while k < num.len() && num[k].is_ascii_digit() {
        u = u.wrapping_mul(10).wrapping_add(u64::from(num[k] - b'0'));
        k += 1;
    }
    let mut value = if u > i64::MAX as u64 {
        if neg {
            i64::MIN
        } else {
            i64::MAX
        }
    } else if neg {
        -(u as i64)
    } else {
        u as i64
    };
    let mut rc = 0;
    if k == 0 && start == i {
        rc = -1;
    } else if k < num.len() && num[k..].iter().any(|&c| !is_space(c)) {
        rc = 1;
    }
    if k < 19 {
        return (rc, value);
    }
    let j = if k > 19 { 1 } else { compare_2pow63(num) };
    if j < 0 {
        return (rc, value);
    }
    value = if neg { i64::MIN } else { i64::MAX };
    if j > 0 {
        (2, value)
    } else if neg {
        (rc, value)
    } else {
        (3, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_sqlite() {
        for (r, text) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e20, "1.0e+20"),
            (1e-5, "1.0e-05"),
            (123.456, "123.456"),
            (0.30000000000000004, "0.30000000000000004"),
            (1e308, "1.0e+308"),
            (0.0, "0.0"),
            (-0.0, "0.0"),
            (f64::INFINITY, "Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (9.223372036854776e18, "9.2233720368547758e+18"),
        ] {
            assert_eq!(render_real(r), text, "{r:?}");
        }
        assert_eq!(quote_real(f64::INFINITY), "9.0e+999");
    }

    #[test]
    fn parses_like_sqlite() {
        assert_eq!(atof(b"12"), (1, 12.0));
        assert_eq!(atof(b" 1.5 "), (3, 1.5));
        assert_eq!(atof(b"1e3"), (3, 1000.0));
        assert_eq!(atof(b"abc"), (0, 0.0));
        assert!(atof(b"12abc").0 < 0);
        assert_eq!(atof(b"12abc").1, 12.0);
        assert!(atof(b"0x10").0 < 0);
        assert_eq!(atof(b"-0").1.to_bits(), (-0.0f64).to_bits());
        assert_eq!(atof(b"1e999").1, f64::INFINITY);
        assert_eq!(atoi64(b" 12 "), (0, 12));
        assert_eq!(atoi64(b"12abc"), (1, 12));
        assert_eq!(atoi64(b"abc"), (-1, 0));
        assert_eq!(atoi64(b"9223372036854775808"), (3, i64::MAX));
        assert_eq!(atoi64(b"-9223372036854775808"), (0, i64::MIN));
        assert_eq!(atoi64(b"99999999999999999999"), (2, i64::MAX));
    }
}
