//! Delta debugging (Zeller and Hildebrandt's ddmin) over a list, followed
//! by a pass that tries removing each remaining element alone, so that the
//! result is 1-minimal: no single element can be removed.

/// Returns a sublist of `items` (order kept) for which `test` still holds.
/// `test(items)` is assumed to hold. `test` returns `None` when the
/// reduction must stop (out of time, interrupted): the best list so far is
/// returned.
pub fn ddmin<T: Clone>(items: Vec<T>, mut test: impl FnMut(&[T]) -> Option<bool>) -> Vec<T> {
    let mut current = items;
    let mut n = 2usize;
    'outer: while current.len() >= 2 {
        let chunks = split(current.len(), n);
        // Try each complement (removing one chunk).
        for &(from, to) in &chunks {
            let candidate: Vec<T> = current[..from]
                .iter()
                .chain(&current[to..])
                .cloned()
                .collect();
            match test(&candidate) {
                None => return current,
                Some(true) => {
                    current = candidate;
                    n = (n - 1).max(2);
                    continue 'outer;
                }
                Some(false) => {}
            }
        }
        if n >= current.len() {
            break;
        }
        n = (n * 2).min(current.len());
    }
    // One at a time, from the end (later statements depend on earlier ones).
    let mut i = current.len();
    while i > 0 {
        i -= 1;
        let mut candidate = current.clone();
        candidate.remove(i);
        match test(&candidate) {
            None => return current,
            Some(true) => current = candidate,
            Some(false) => {}
        }
    }
    current
}

/// `n` contiguous, nearly equal ranges covering `0..len`.
fn split(len: usize, n: usize) -> Vec<(usize, usize)> {
    let n = n.min(len).max(1);
    (0..n).map(|i| (i * len / n, (i + 1) * len / n)).collect()
}

#[cfg(test)]
mod tests {
    use super::ddmin;

    #[test]
    fn finds_the_needed_elements() {
        let items: Vec<u32> = (0..100).collect();
        let mut tests = 0;
        let out = ddmin(items, |s| {
            tests += 1;
            Some(s.contains(&17) && s.contains(&61) && s.contains(&62))
        });
        assert_eq!(out, vec![17, 61, 62]);
        assert!(tests < 200, "{tests} tests");
    }

    #[test]
    fn an_empty_list_can_be_the_answer() {
        assert_eq!(ddmin(vec![1, 2, 3], |_| Some(true)), Vec::<i32>::new());
    }

    #[test]
    fn stops_when_told() {
        let out = ddmin((0..10).collect::<Vec<_>>(), |_| None);
        assert_eq!(out.len(), 10);
    }
}
