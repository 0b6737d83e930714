//! Numbers to text as SQLite prints them: `sqlite3FpDecode` and the
//! `%!.17g` / `%!.Nf` branches of its printf, ported step for step (the
//! power-of-ten tables they share with parsing are in the parent module).

use super::*;

/// A double decoded into decimal digits (`FpDecode`).
struct Decoded {
    negative: bool,
    /// 0 finite, 1 infinite, 2 NaN.
    special: u8,
    /// The significant digits, ASCII; only the first `n` count.
    z: Vec<u8>,
    n: usize,
    /// Where the decimal point goes: the value is 0.z * 10^i_dp.
    i_dp: i32,
}

/// `sqlite3FpDecode`: `r` as decimal digits, rounded to `i_round`
/// significant digits (or, if `i_round <= 0`, to `-i_round` digits after
/// the point), at most `mx_round`.
fn fp_decode(r: f64, mut i_round: i32, mx_round: i32) -> Decoded {
    let mut r = r;
    let negative;
    if r < 0.0 {
        negative = true;
        r = -r;
    } else if r == 0.0 {
        return Decoded {
            negative: false,
            special: 0,
            z: b"0".to_vec(),
            n: 1,
            i_dp: 1,
        };
    } else {
        negative = false;
    }
    let bits = r.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0x7ff {
        return Decoded {
            negative,
            special: 1 + u8::from(bits != 0x7ff0_0000_0000_0000),
            z: vec![],
            n: 0,
            i_dp: 0,
        };
    }
    let mut v = bits & 0x000f_ffff_ffff_ffff;
    if e == 0 {
        let nn = v.leading_zeros() as i32;
        v <<= nn;
        e = -1074 - nn;
    } else {
        v = (v << 11) | (1u64 << 63);
        e -= 1086;
    }
    let want = if i_round <= 0 || i_round >= 18 {
        18
    } else {
        i_round + 1
    };
    let (v, exp) = fp2_convert10(v, e, want);
    let mut z = v.to_string().into_bytes();
    let mut n = z.len() as i32;
    let mut i_dp = n + exp;
    if i_round <= 0 {
        i_round = i_dp - i_round;
        if i_round == 0 && z[0] >= b'5' {
            i_round = 1;
            z.insert(0, b'0');
            n += 1;
            i_dp += 1;
        }
    }
    if i_round > 0 && (i_round < n || n > mx_round) {
        if i_round > mx_round {
            i_round = mx_round;
        }
        if i_round == 17 {
            // Fewer digits if they read back as the same double.
            let digits = |z: &[u8], len: usize| {
                z[..len]
                    .iter()
                    .fold(0u64, |acc, &c| acc * 10 + u64::from(c - b'0'))
            };
            if z[15] == b'9' && z[14] == b'9' {
                let mut jj = 14usize;
                while jj > 0 && z[jj - 1] == b'9' {
                    jj -= 1;
                }
                let v2 = if jj == 0 { 1 } else { digits(&z, jj) + 1 };
                if r == fp10_convert2(v2, exp + n - jj as i32) {
                    i_round = jj as i32 + 1;
                }
            } else if i_dp >= n || (z[15] == b'0' && z[14] == b'0' && z[13] == b'0') {
                let mut jj = 13usize;
                while z[jj - 1] == b'0' {
                    jj -= 1;
                }
                let v2 = digits(&z, jj);
                if r == fp10_convert2(v2, exp + n - jj as i32) {
                    i_round = jj as i32 + 1;
                }
            }
        }
        n = i_round;
        if z[i_round as usize] >= b'5' {
            let mut j = i_round as usize - 1;
            loop {
                z[j] += 1;
                if z[j] <= b'9' {
                    break;
                }
                z[j] = b'0';
                if j == 0 {
                    z.insert(0, b'1');
                    n += 1;
                    i_dp += 1;
                    break;
                }
                j -= 1;
            }
        }
    }
    let mut n = n as usize;
    while z[n - 1] == b'0' {
        n -= 1;
    }
    Decoded {
        negative,
        special: 0,
        z,
        n,
        i_dp,
    }
}

/// The two printf conversions SQLite uses on doubles that matter here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Conversion {
    /// `%!.Ng`
    Generic,
    /// `%!.Nf`
    Float,
}

/// SQLite's printf of `r` with the `!` flag (and `0` if `zero_pad`), for
/// `%g` and `%f` with an explicit precision and no width.
fn printf_double(r: f64, conversion: Conversion, precision: i32, zero_pad: bool) -> String {
    let mut precision = precision;
    let i_round = match conversion {
        Conversion::Float => -precision,
        Conversion::Generic => {
            if precision == 0 {
                precision = 1;
            }
            precision
        }
    };
    let mut s = fp_decode(r, i_round, 20);
    if s.special != 0 {
        if s.special == 2 {
            return if zero_pad { "null" } else { "NaN" }.to_string();
        } else if zero_pad {
            s.z = b"9".to_vec();
            s.i_dp = 1000;
            s.n = 1;
        } else {
            return if s.negative { "-Inf" } else { "Inf" }.to_string();
        }
    }
    let mut out = String::new();
    if s.negative {
        out.push('-');
    }
    let mut exponent_form = false;
    if conversion == Conversion::Generic {
        let exp = s.i_dp - 1;
        precision -= 1;
        if exp < -4 || exp > precision {
            exponent_form = true;
        } else {
            precision -= exp;
        }
    }
    let mut e2 = if exponent_form { 0 } else { s.i_dp - 1 };
    let digits = &s.z[..s.n];
    let mut j = 0usize;
    if e2 < 0 {
        out.push('0');
    } else {
        j = ((e2 + 1) as usize).min(s.n);
        out.push_str(std::str::from_utf8(&digits[..j]).unwrap_or(""));
        e2 -= j as i32;
        if e2 >= 0 {
            out.push_str(&"0".repeat((e2 + 1) as usize));
            e2 = -1;
        }
    }
    out.push('.');
    if e2 < -1 && precision > 0 {
        let nn = (-1 - e2).min(precision);
        out.push_str(&"0".repeat(nn as usize));
        precision -= nn;
    }
    if precision > 0 {
        let nn = (s.n - j).min(precision as usize);
        out.push_str(std::str::from_utf8(&digits[j..j + nn]).unwrap_or(""));
    }
    // Trailing zeros go, but `!` keeps one digit after the point.
    while out.ends_with('0') {
        out.pop();
    }
    if out.ends_with('.') {
        out.push('0');
    }
    if exponent_form {
        let mut exp = s.i_dp - 1;
        out.push('e');
        if exp < 0 {
            out.push('-');
            exp = -exp;
        } else {
            out.push('+');
        }
        if exp >= 100 {
            out.push(char::from(b'0' + (exp / 100) as u8));
            exp %= 100;
        }
        out.push(char::from(b'0' + (exp / 10) as u8));
        out.push(char::from(b'0' + (exp % 10) as u8));
    }
    out
}

/// How SQLite 3.54 renders a REAL as text (`%!.17g`, shortened when
/// fewer digits read back as the same double): `1.0`, `0.1`, `1.0e+20`.
pub fn render_real(r: f64) -> String {
    printf_double(r, Conversion::Generic, 17, false)
}

/// `quote()` of a REAL (`%!0.17g`): like [`render_real`], but infinities
/// read `9.0e+999`.
pub fn quote_real(r: f64) -> String {
    printf_double(r, Conversion::Generic, 17, true)
}

/// `round(r, digits)` for 0 < digits <= 30: SQLite prints `%!.Nf` and reads
/// the text back.
pub fn round_digits(r: f64, digits: i32) -> f64 {
    let text = printf_double(r, Conversion::Float, digits, false);
    atof(text.as_bytes()).1
}
