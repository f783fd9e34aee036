//! Stable finding fingerprints, for baselines and SARIF `partialFingerprints`.
//!
//! A fingerprint must survive edits elsewhere in the file, so it does not
//! use the line number. It hashes: the rule id, the path, the flagged line's
//! text with whitespace collapsed, the flagged code itself (two findings on
//! one line), and how many earlier lines of the file have the same
//! normalized text (two identical lines). Equal inputs that still collide
//! (the same call twice on one line) get a counter. The hash is a 128-bit
//! FNV-1a: fixed, documented, and not tied to the Rust version the way
//! `DefaultHasher` is.

use std::collections::HashMap;

/// Collapses runs of whitespace to one space and trims the ends.
pub fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// FNV-1a, 128 bits.
pub fn fnv1a128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for part in parts {
        for &b in *part {
            h ^= b as u128;
            h = h.wrapping_mul(PRIME);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// The fingerprint of a finding, as 32 hex digits.
pub fn fingerprint(
    rule: &str,
    path: &str,
    line_text: &str,
    flagged: &str,
    occurrence: usize,
    dup: usize,
) -> String {
    let line = normalize(line_text);
    let flagged = normalize(flagged);
    let occ = occurrence.to_string();
    let dup = dup.to_string();
    let h = fnv1a128(&[
        rule.as_bytes(),
        path.as_bytes(),
        line.as_bytes(),
        flagged.as_bytes(),
        occ.as_bytes(),
        dup.as_bytes(),
    ]);
    format!("{h:032x}")
}

/// For each line, how many of the lines before it normalize to the same
/// text. One pass: a file with thousands of findings must not re-read its
/// earlier lines for each of them.
pub fn occurrences(lines: &[&str]) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(lines.len());
    lines
        .iter()
        .map(|l| {
            let n = seen.entry(normalize(l)).or_insert(0);
            *n += 1;
            *n - 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_and_line_moves_do_not_change_it() {
        let a = fingerprint("PY002", "a.py", "    time.sleep(1)", "time.sleep(1)", 0, 0);
        let b = fingerprint("PY002", "a.py", "\ttime.sleep(1)  ", "time.sleep(1)", 0, 0);
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        assert_ne!(
            a,
            fingerprint("PY002", "a.py", "time.sleep(1)", "time.sleep(1)", 1, 0)
        );
        assert_ne!(
            a,
            fingerprint("PY001", "a.py", "time.sleep(1)", "time.sleep(1)", 0, 0)
        );
        assert_ne!(
            a,
            fingerprint("PY002", "b.py", "time.sleep(1)", "time.sleep(1)", 0, 0)
        );
    }

    #[test]
    fn the_hash_is_pinned() {
        // Changing the scheme invalidates every stored baseline: do it on
        // purpose only.
        assert_eq!(fnv1a128(&[]), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(
            fingerprint(
                "PY002",
                "src/app.py",
                "    time.sleep(1)",
                "time.sleep(1)",
                0,
                0
            ),
            "63b878d01c890bd550e3a7667078208f"
        );
    }

    #[test]
    fn occurrences_count_identical_earlier_lines() {
        let lines = ["a", "b", " a", "a  ", "b", "c"];
        assert_eq!(occurrences(&lines), [0, 0, 1, 2, 1, 0]);
    }
}
