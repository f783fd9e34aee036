//! Values of Go literals: integers in every base, floats, interpreted and
//! raw strings, runes.

use unsnarl_model::Lit;

/// An integer literal (`42`, `1_000_000`, `0x1F`, `0o17`, `017`, `0b101`).
/// Out-of-range values become `Lit::Other`.
pub fn int(text: &str) -> Lit {
    parse_int(text)
        .and_then(|v| i64::try_from(v).ok())
        .map_or(Lit::Other, Lit::Int)
}

fn parse_int(text: &str) -> Option<i128> {
    let t = text.as_bytes();
    let (radix, digits) = match t {
        [b'0', b'x' | b'X', rest @ ..] => (16, rest),
        [b'0', b'o' | b'O', rest @ ..] => (8, rest),
        [b'0', b'b' | b'B', rest @ ..] => (2, rest),
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
        _ => (10, t),
    };
    let mut value: i128 = 0;
    let mut any = false;
    for &b in digits {
        if b == b'_' {
            continue;
        }
        let d = (b as char).to_digit(radix)?;
        value = value.checked_mul(radix as i128)?.checked_add(d as i128)?;
        any = true;
    }
    any.then_some(value)
}

/// A float literal. Hexadecimal floats (`0x1p-2`) are rare enough to be
/// left as `Lit::Other`.
pub fn float(text: &str) -> Lit {
    if text.starts_with("0x") || text.starts_with("0X") {
        return Lit::Other;
    }
    let cleaned: String;
    let s = if text.contains('_') {
        cleaned = text.chars().filter(|&c| c != '_').collect();
        &cleaned
    } else {
        text
    };
    s.parse::<f64>().map_or(Lit::Other, Lit::Float)
}

/// A raw string `` `...` ``: the content as is, minus carriage returns
/// (which the Go spec discards).
pub fn raw_string(text: &str) -> Lit {
    let inner = text
        .strip_prefix('`')
        .map(|s| s.strip_suffix('`').unwrap_or(s))
        .unwrap_or(text);
    Lit::Str(inner.replace('\r', "").into())
}

/// An interpreted string `"..."` with its escapes decoded. Escapes that
/// would not form valid UTF-8 (`\xff`) become U+FFFD.
pub fn interpreted_string(text: &str) -> Lit {
    let inner = text
        .strip_prefix('"')
        .map(|s| s.strip_suffix('"').unwrap_or(s))
        .unwrap_or(text);
    if !inner.contains('\\') {
        return Lit::Str(inner.into());
    }
    let mut bytes: Vec<u8> = Vec::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(pos) = rest.find('\\') {
        bytes.extend_from_slice(&rest.as_bytes()[..pos]);
        rest = &rest[pos..];
        let (decoded, len) = escape(rest);
        match decoded {
            Escape::Byte(b) => bytes.push(b),
            Escape::Char(c) => {
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        rest = &rest[len.min(rest.len())..];
    }
    bytes.extend_from_slice(rest.as_bytes());
    Lit::Str(String::from_utf8_lossy(&bytes).into_owned().into())
}

/// A rune literal: its code point as an integer (runes are `int32`).
pub fn rune(text: &str) -> Lit {
    let inner = text
        .strip_prefix('\'')
        .map(|s| s.strip_suffix('\'').unwrap_or(s))
        .unwrap_or(text);
    if inner.starts_with('\\') {
        return match escape(inner).0 {
            Escape::Byte(b) => Lit::Int(i64::from(b)),
            Escape::Char(c) => Lit::Int(i64::from(u32::from(c))),
        };
    }
    inner
        .chars()
        .next()
        .map_or(Lit::Other, |c| Lit::Int(i64::from(u32::from(c))))
}

enum Escape {
    /// `\xNN` and octal escapes denote bytes, not code points.
    Byte(u8),
    Char(char),
}

/// Decodes the escape at the start of `s` (which starts with `\`); returns
/// the value and the escape's length in bytes.
fn escape(s: &str) -> (Escape, usize) {
    let b = s.as_bytes();
    let Some(&c) = b.get(1) else {
        return (Escape::Char('\\'), 1);
    };
    let simple = |ch: char| (Escape::Char(ch), 2);
    match c {
        b'a' => simple('\x07'),
        b'b' => simple('\x08'),
        b'f' => simple('\x0c'),
        b'n' => simple('\n'),
        b'r' => simple('\r'),
        b't' => simple('\t'),
        b'v' => simple('\x0b'),
        b'\\' => simple('\\'),
        b'\'' => simple('\''),
        b'"' => simple('"'),
        b'x' => match hex(b, 2, 2) {
            Some(v) => (Escape::Byte(v as u8), 4),
            None => simple('x'),
        },
        b'u' => code_point(b, 4),
        b'U' => code_point(b, 8),
        b'0'..=b'7' => {
            let digits = &b[1..b.len().min(4)];
            if digits.len() == 3 && digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let v = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + (d - b'0') as u32);
                (Escape::Byte(v as u8), 4)
            } else {
                simple(c as char)
            }
        }
        _ => {
            // Unknown escape: keep the character (multi-byte safe).
            let ch = s[1..].chars().next().unwrap_or('\\');
            (Escape::Char(ch), 1 + ch.len_utf8())
        }
    }
}

fn code_point(b: &[u8], n: usize) -> (Escape, usize) {
    match hex(b, 2, n).and_then(char::from_u32) {
        Some(c) => (Escape::Char(c), 2 + n),
        // Malformed: consume only `\u` so the rest stays on a character
        // boundary (the digits may be cut short by a multi-byte char).
        None => (Escape::Char('\u{fffd}'), 2),
    }
}

fn hex(b: &[u8], from: usize, n: usize) -> Option<u32> {
    let digits = b.get(from..from + n)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &d| Some(acc * 16 + (d as char).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        assert_eq!(int("42"), Lit::Int(42));
        assert_eq!(int("1_000_000"), Lit::Int(1_000_000));
        assert_eq!(int("0x1F"), Lit::Int(31));
        assert_eq!(int("0o17"), Lit::Int(15));
        assert_eq!(int("017"), Lit::Int(15));
        assert_eq!(int("0b101"), Lit::Int(5));
        assert_eq!(int("0"), Lit::Int(0));
        assert_eq!(int("0x_FF"), Lit::Int(255));
        assert_eq!(
            int("99999999999999999999999999999999999999999999"),
            Lit::Other
        );
        assert_eq!(int("09"), Lit::Other);
    }

    #[test]
    fn floats() {
        assert_eq!(float("1.5"), Lit::Float(1.5));
        assert_eq!(float("1_000.5e1"), Lit::Float(10005.0));
        assert_eq!(float(".5"), Lit::Float(0.5));
        assert_eq!(float("1e3"), Lit::Float(1000.0));
        assert_eq!(float("0x1p-2"), Lit::Other);
    }

    #[test]
    fn strings() {
        assert_eq!(interpreted_string(r#""a\tb\n""#), Lit::Str("a\tb\n".into()));
        assert_eq!(
            interpreted_string(r#""\u00e9\U0001F600""#),
            Lit::Str("é😀".into())
        );
        assert_eq!(interpreted_string(r#""\x41\101""#), Lit::Str("AA".into()));
        assert_eq!(interpreted_string(r#""\"q\"""#), Lit::Str("\"q\"".into()));
        assert_eq!(interpreted_string("\"héllo\""), Lit::Str("héllo".into()));
        assert_eq!(interpreted_string(r#""\xff""#), Lit::Str("\u{fffd}".into()));
        assert_eq!(interpreted_string(r#""\"#), Lit::Str("\\".into()));
        assert_eq!(interpreted_string("\"\\é\""), Lit::Str("é".into()));
        // Malformed escapes cut by multi-byte characters must not panic.
        assert_eq!(
            interpreted_string("\"\\u0é\""),
            Lit::Str("\u{fffd}0é".into())
        );
        assert_eq!(interpreted_string("\"\\Ué\""), Lit::Str("\u{fffd}é".into()));
        assert_eq!(interpreted_string("\"\\xé\""), Lit::Str("xé".into()));
        assert_eq!(interpreted_string("\"\\1é\""), Lit::Str("1é".into()));
        assert_eq!(raw_string("`a\\n\r\nb`"), Lit::Str("a\\n\nb".into()));
    }

    #[test]
    fn every_prefix_of_tricky_literals_decodes() {
        let tricky = r#""a\x4é\u00e\U0001F60é\\\"\101\7é 世""#;
        for end in (0..=tricky.len()).filter(|&i| tricky.is_char_boundary(i)) {
            let s = &tricky[..end];
            let _ = interpreted_string(s);
            let _ = rune(s);
            let _ = raw_string(s);
            let _ = int(s);
            let _ = float(s);
        }
    }

    #[test]
    fn runes() {
        assert_eq!(rune("'a'"), Lit::Int(97));
        assert_eq!(rune("'é'"), Lit::Int(0xe9));
        assert_eq!(rune(r"'\n'"), Lit::Int(10));
        assert_eq!(rune(r"'\x41'"), Lit::Int(65));
        assert_eq!(rune(r"'\u00e9'"), Lit::Int(0xe9));
        assert_eq!(rune("''"), Lit::Other);
    }
}
