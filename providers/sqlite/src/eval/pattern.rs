//! LIKE and GLOB matching, ported from SQLite's `patternCompare`.
//!
//! LIKE folds only ASCII letters, and only by default: `PRAGMA
//! case_sensitive_like` makes it exact, and the generator cannot know
//! whether a database set it. [`like`] therefore answers only where both
//! modes agree.

/// `'\0'` marks a wildcard that is switched off (an ESCAPE of `%` or `_`),
/// as in SQLite; text never contains NUL here.
const NONE: char = '\0';

#[derive(Clone, Copy)]
struct Info {
    match_all: char,
    match_one: char,
    match_set: char,
    no_case: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Match,
    NoMatch,
    /// No match, and no later start can match either.
    NoWildcardMatch,
}

fn read(s: &[char], i: &mut usize) -> char {
    match s.get(*i) {
        Some(&c) => {
            *i += 1;
            c
        }
        None => NONE,
    }
}

/// `patternCompare`: whether subject `s` matches pattern `p` under the
/// wildcards of `info`, `match_other` being the escape (LIKE) or the set
/// opener (GLOB).
fn compare(p: &[char], s: &[char], info: Info, match_other: char) -> Outcome {
    let (mut pi, mut si) = (0usize, 0usize);
    // Pattern position just after an escaped character.
    let mut escaped: Option<usize> = None;
    loop {
        let mut c = read(p, &mut pi);
        if c == NONE {
            break;
        }
        if c == info.match_all {
            return after_match_all(p, pi, s, si, info, match_other);
        }
        if c == match_other {
            if info.match_set == NONE {
                c = read(p, &mut pi);
                if c == NONE {
                    return Outcome::NoMatch;
                }
                escaped = Some(pi);
            } else {
                let c = read(s, &mut si);
                if c == NONE || !in_set(p, &mut pi, c) {
                    return Outcome::NoMatch;
                }
                continue;
            }
        }
        let c2 = read(s, &mut si);
        if c == c2 {
            continue;
        }
        if info.no_case && c.eq_ignore_ascii_case(&c2) && (c as u32) < 0x80 && (c2 as u32) < 0x80 {
            continue;
        }
        if c == info.match_one && escaped != Some(pi) && c2 != NONE {
            continue;
        }
        return Outcome::NoMatch;
    }
    if si >= s.len() {
        Outcome::Match
    } else {
        Outcome::NoMatch
    }
}

/// The match of the rest of the pattern after a "match all" wildcard (`*`,
/// `%`) that ends at `p[pi]`, the subject from `s[si]` on: the wildcard
/// takes as much of the subject as some match of the rest needs.
fn after_match_all(
    p: &[char],
    mut pi: usize,
    s: &[char],
    mut si: usize,
    info: Info,
    match_other: char,
) -> Outcome {
    let mut c;
    loop {
        c = read(p, &mut pi);
        if c == info.match_all || (c == info.match_one && info.match_one != NONE) {
            if c == info.match_one && read(s, &mut si) == NONE {
                return Outcome::NoWildcardMatch;
            }
            continue;
        }
        break;
    }
    if c == NONE {
        return Outcome::Match;
    } else if c == match_other {
        if info.match_set == NONE {
            c = read(p, &mut pi);
            if c == NONE {
                return Outcome::NoWildcardMatch;
            }
        } else {
            // "[...]" right after "*": try every start.
            while si < s.len() {
                let m = compare(&p[pi - 1..], &s[si..], info, match_other);
                if m != Outcome::NoMatch {
                    return m;
                }
                si += 1;
            }
            return Outcome::NoWildcardMatch;
        }
    }
    if (c as u32) < 0x80 {
        let stop = |x: char| {
            if info.no_case {
                x.eq_ignore_ascii_case(&c) && (x as u32) < 0x80
            } else {
                x == c
            }
        };
        loop {
            while si < s.len() && !stop(s[si]) {
                si += 1;
            }
            if si >= s.len() {
                break;
            }
            si += 1;
            let m = compare(&p[pi..], &s[si..], info, match_other);
            if m != Outcome::NoMatch {
                return m;
            }
        }
    } else {
        loop {
            let c2 = read(s, &mut si);
            if c2 == NONE {
                break;
            }
            if c2 != c {
                continue;
            }
            let m = compare(&p[pi..], &s[si..], info, match_other);
            if m != Outcome::NoMatch {
                return m;
            }
        }
    }
    Outcome::NoWildcardMatch
}

/// Whether `c` is in the GLOB set `[...]` whose text starts at `p[*pi]`
/// (just after the `[`); `*pi` ends after its `]`. An unterminated set
/// holds nothing.
fn in_set(p: &[char], pi: &mut usize, c: char) -> bool {
    let mut prior: u32 = 0;
    let mut seen = false;
    let mut invert = false;
    let mut c2 = read(p, pi);
    if c2 == '^' {
        invert = true;
        c2 = read(p, pi);
    }
    if c2 == ']' {
        if c == ']' {
            seen = true;
        }
        c2 = read(p, pi);
    }
    while c2 != NONE && c2 != ']' {
        let next = p.get(*pi).copied().unwrap_or(NONE);
        if c2 == '-' && next != ']' && next != NONE && prior > 0 {
            c2 = read(p, pi);
            if (c as u32) >= prior && c <= c2 {
                seen = true;
            }
            prior = 0;
        } else {
            if c == c2 {
                seen = true;
            }
            prior = c2 as u32;
        }
        c2 = read(p, pi);
    }
    c2 != NONE && (seen ^ invert)
}

/// `subject GLOB pattern`.
pub fn glob(pattern: &str, subject: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = subject.chars().collect();
    let info = Info {
        match_all: '*',
        match_one: '?',
        match_set: '[',
        no_case: false,
    };
    compare(&p, &s, info, '[') == Outcome::Match
}

/// `subject LIKE pattern [ESCAPE escape]`, with `escape` one character;
/// `None` if the answer depends on `PRAGMA case_sensitive_like`.
pub fn like(pattern: &str, subject: &str, escape: Option<char>) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = subject.chars().collect();
    let mut info = Info {
        match_all: '%',
        match_one: '_',
        match_set: NONE,
        no_case: true,
    };
    let match_other = match escape {
        Some(e) => {
            if e == info.match_all {
                info.match_all = NONE;
            }
            if e == info.match_one {
                info.match_one = NONE;
            }
            e
        }
        None => info.match_set,
    };
    let folded = compare(&p, &s, info, match_other) == Outcome::Match;
    let exact = compare(
        &p,
        &s,
        Info {
            no_case: false,
            ..info
        },
        match_other,
    ) == Outcome::Match;
    (folded == exact).then_some(folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_and_glob() {
        assert_eq!(like("a%", "abc", None), Some(true));
        assert_eq!(like("_b_", "abc", None), Some(true));
        assert_eq!(like("a\\%", "a%", Some('\\')), Some(true));
        assert_eq!(like("a\\%", "ab", Some('\\')), Some(false));
        assert_eq!(like("A%", "abc", None), None);
        assert_eq!(like("x%", "abc", None), Some(false));
        assert!(glob("[a-c]*", "b1"));
        assert!(!glob("[^a]*", "abc"));
        assert!(glob("*.*", "1.5"));
        assert!(!glob("A*", "abc"));
        assert!(glob("?", "é"));
    }
}
