//! Inline suppressions, parsed by a small hand-written scanner.
//!
//! ```text
//! x = risky()  # unsnarl: ignore[blocking-in-async, PY003]   this line
//! # unsnarl: ignore[PY002]                                   the next line
//! y = other()  // unsnarl: ignore                            every rule, this line
//! // unsnarl: ignore-file[unbounded-queue]                   the whole file
//! ```
//!
//! A marker counts only in a comment: `unsnarl:` must directly follow `#` or
//! `//` (spaces allowed between). A directive on a line that holds nothing
//! but the comment also covers the next line. Text after the closing `]` is
//! free (a reason). This module knows nothing about rules: the caller decides
//! which codes are valid and what they match. It must never panic on any
//! input (it has a fuzz target).

use memchr::memmem;

const MARKER: &[u8] = b"unsnarl:";

/// Which findings a directive covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Bare `ignore` / `ignore-file`: every rule.
    All,
    /// `ignore[a, b]`: rules and categories as written.
    Codes(Vec<String>),
}

impl Scope {
    fn covers(&self, matches: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Scope::All => true,
            Scope::Codes(codes) => codes.iter().any(|c| matches(c)),
        }
    }
}

/// One `unsnarl: ignore...` comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// 1-based line of the comment.
    pub line: u32,
    pub file_level: bool,
    /// The comment is alone on its line, so it also covers the next one.
    pub own_line: bool,
    pub scope: Scope,
}

/// A marker that looks meant for us but cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub line: u32,
    pub message: &'static str,
}

/// Every directive of a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suppressions {
    pub directives: Vec<Directive>,
    pub malformed: Vec<Malformed>,
}

impl Suppressions {
    pub fn parse(text: &str) -> Suppressions {
        parse_bytes(text.as_bytes())
    }

    pub fn is_empty(&self) -> bool {
        self.directives.is_empty()
    }

    /// True when a finding on 1-based `line` is suppressed. `matches` says
    /// whether a written code covers the finding.
    pub fn suppresses(&self, line: u32, matches: &dyn Fn(&str) -> bool) -> bool {
        self.covering(line, matches).next().is_some()
    }

    /// The indexes of the directives that cover a finding on 1-based `line`.
    pub fn covering<'a>(
        &'a self,
        line: u32,
        matches: &'a dyn Fn(&str) -> bool,
    ) -> impl Iterator<Item = usize> + 'a {
        self.directives
            .iter()
            .enumerate()
            .filter_map(move |(i, d)| {
                let here = d.file_level
                    || d.line == line
                    || (d.own_line && d.line.checked_add(1) == Some(line));
                (here && d.scope.covers(matches)).then_some(i)
            })
    }

    /// Every written code with its line, for validation.
    pub fn codes(&self) -> impl Iterator<Item = (u32, &str)> {
        self.directives.iter().flat_map(|d| match &d.scope {
            Scope::All => Vec::new(),
            Scope::Codes(c) => c.iter().map(|c| (d.line, c.as_str())).collect(),
        })
    }
}

/// The scanner proper, over bytes (the markers are ASCII, so every slice
/// boundary is a char boundary of valid UTF-8 input; invalid input is fine).
pub fn parse_bytes(text: &[u8]) -> Suppressions {
    let mut out = Suppressions::default();
    let mut line = 1u32;
    let mut counted_to = 0usize;
    for at in memmem::find_iter(text, MARKER) {
        line =
            line.saturating_add(memchr::memchr_iter(b'\n', &text[counted_to..at]).count() as u32);
        counted_to = at;
        let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        let Some(leader) = comment_leader(&text[line_start..at]) else {
            continue;
        };
        let own_line = text[line_start..line_start + leader]
            .iter()
            .all(|b| b.is_ascii_whitespace());
        let rest = &text[at + MARKER.len()..line_end];
        match directive(rest) {
            Parsed::Bad(message) => out.malformed.push(Malformed { line, message }),
            Parsed::Ok { file_level, scope } => out.directives.push(Directive {
                line,
                file_level,
                own_line,
                scope,
            }),
        }
    }
    out
}

/// Where the `#` or `//` right before the marker starts, if there is one.
fn comment_leader(before: &[u8]) -> Option<usize> {
    let mut end = before.len();
    while end > 0 && (before[end - 1] == b' ' || before[end - 1] == b'\t') {
        end -= 1;
    }
    let b = &before[..end];
    if b.ends_with(b"//") {
        Some(end - 2)
    } else if b.ends_with(b"#") {
        Some(end - 1)
    } else {
        None
    }
}

enum Parsed {
    Bad(&'static str),
    Ok { file_level: bool, scope: Scope },
}

fn directive(rest: &[u8]) -> Parsed {
    let rest = trim_start(rest);
    let (file_level, after) = if let Some(r) = rest.strip_prefix(b"ignore-file") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix(b"ignore") {
        (false, r)
    } else {
        return Parsed::Bad("expected `ignore`, `ignore[...]` or `ignore-file` after `unsnarl:`");
    };
    match after.first() {
        None => Parsed::Ok {
            file_level,
            scope: Scope::All,
        },
        Some(b'[') => {
            let Some(close) = memchr::memchr(b']', after) else {
                return Parsed::Bad("unclosed `[` in suppression; nothing suppressed");
            };
            let codes: Vec<String> = after[1..close]
                .split(|&b| b == b',')
                .map(|c| String::from_utf8_lossy(trim(c)).into_owned())
                .filter(|c| !c.is_empty())
                .collect();
            if codes.is_empty() {
                return Parsed::Bad("empty `[]` in suppression; nothing suppressed");
            }
            Parsed::Ok {
                file_level,
                scope: Scope::Codes(codes),
            }
        }
        Some(b) if b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_' => {
            // `ignored`, `ignore-files`: some other word.
            Parsed::Bad("expected `ignore`, `ignore[...]` or `ignore-file` after `unsnarl:`")
        }
        Some(_) => Parsed::Ok {
            file_level,
            scope: Scope::All,
        },
    }
}

fn trim_start(mut b: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = b {
        if first.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

fn trim(b: &[u8]) -> &[u8] {
    let mut b = trim_start(b);
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(s: &[&str]) -> Scope {
        Scope::Codes(s.iter().map(|c| c.to_string()).collect())
    }

    #[test]
    fn directives_are_read_with_their_lines_and_scopes() {
        let s = Suppressions::parse(
            "a()  # unsnarl: ignore[PY002, blocking-in-async] because\n\
             # unsnarl: ignore\n\
             b()\n\
             c()  // unsnarl: ignore-file[x]\n\
             #unsnarl:ignore-file\n",
        );
        assert_eq!(
            s.directives,
            vec![
                Directive {
                    line: 1,
                    file_level: false,
                    own_line: false,
                    scope: codes(&["PY002", "blocking-in-async"]),
                },
                Directive {
                    line: 2,
                    file_level: false,
                    own_line: true,
                    scope: Scope::All,
                },
                Directive {
                    line: 4,
                    file_level: true,
                    own_line: false,
                    scope: codes(&["x"]),
                },
                Directive {
                    line: 5,
                    file_level: true,
                    own_line: true,
                    scope: Scope::All,
                },
            ]
        );
        assert!(s.malformed.is_empty());
    }

    #[test]
    fn markers_outside_comments_do_not_count() {
        let s = Suppressions::parse(
            "x = 'unsnarl: ignore'\nunsnarl: ignore\ny = 1 # see unsnarl: ignore\n",
        );
        assert!(s.is_empty(), "{s:?}");
    }

    #[test]
    fn line_and_line_above() {
        let s = Suppressions::parse("x\n# unsnarl: ignore[A]\ny  # unsnarl: ignore[B]\nz\n");
        let is = |c: &'static str| move |code: &str| code == c;
        assert!(
            s.suppresses(3, &is("A")),
            "comment-only line covers the next"
        );
        assert!(s.suppresses(2, &is("A")));
        assert!(!s.suppresses(4, &is("A")));
        assert!(s.suppresses(3, &is("B")));
        assert!(
            !s.suppresses(4, &is("B")),
            "a trailing comment covers its own line only"
        );
        assert!(!s.suppresses(1, &is("A")));
    }

    #[test]
    fn file_level_covers_every_line() {
        let s = Suppressions::parse("a\nb\n// unsnarl: ignore-file[A]\n");
        assert!(s.suppresses(1, &|c| c == "A"));
        assert!(s.suppresses(100, &|c| c == "A"));
        assert!(!s.suppresses(1, &|c| c == "B"));
    }

    #[test]
    fn malformed_markers_suppress_nothing() {
        let s = Suppressions::parse(
            "a # unsnarl: ignore[A\nb # unsnarl: ignored\nc # unsnarl: ignore[]\nd # unsnarl: skip\n",
        );
        assert!(s.is_empty());
        assert_eq!(
            s.malformed.iter().map(|m| m.line).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        for t in [
            "unsnarl:",
            "#unsnarl:",
            "//unsnarl:ignore[",
            "# unsnarl: ignore[é, 😀]",
            "\n\n#unsnarl: ignore\n",
            "##unsnarl:unsnarl:ignore",
        ] {
            let _ = Suppressions::parse(t);
        }
        let _ = parse_bytes(b"#unsnarl: ignore[\xff\xfe]\n");
    }

    /// A poor man's fuzzer until the fuzz target exists: random sequences of
    /// the tokens the scanner cares about must never panic, and what it
    /// returns must be consistent with the input.
    #[test]
    fn random_token_soup_is_handled() {
        const TOKENS: &[&[u8]] = &[
            b"#",
            b"//",
            b"unsnarl:",
            b"ignore",
            b"ignore-file",
            b"[",
            b"]",
            b",",
            b" ",
            b"\t",
            b"\n",
            b"\r\n",
            b"PY002",
            b"x",
            b"\xc3\xa9",
            b"\xff",
            b"-",
            b"ignored",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let len = (next() % 40) as usize;
            let mut input = Vec::new();
            for _ in 0..len {
                input.extend_from_slice(TOKENS[(next() % TOKENS.len() as u64) as usize]);
            }
            let s = parse_bytes(&input);
            let lines = input.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            for d in &s.directives {
                assert!(d.line >= 1 && d.line <= lines, "{input:?}");
                if let Scope::Codes(c) = &d.scope {
                    assert!(!c.is_empty() && c.iter().all(|c| !c.is_empty() && !c.contains(',')));
                }
            }
        }
    }
}
