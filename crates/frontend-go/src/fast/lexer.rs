//! The tokenizer of the fast path: Go's tokens with its automatic semicolon
//! insertion, and the partner of every bracket.
//!
//! It is strict where Go is strict: anything Go would reject (an unknown
//! character, an unterminated string, a malformed escape or number) makes
//! `lex` fail, and the file goes to tree-sitter.

/// Token kinds. Predeclared identifiers (`nil`, `true`, `new`, ...) are
/// plain identifiers here; the parser looks at their text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum T {
    Eof,
    Ident,
    Int,
    Float,
    Imag,
    Rune,
    Str,
    RawStr,
    // Keywords.
    Break,
    Case,
    Chan,
    Const,
    Continue,
    Default,
    Defer,
    Else,
    Fallthrough,
    For,
    Func,
    Go,
    Goto,
    If,
    Import,
    Interface,
    Map,
    Package,
    Range,
    Return,
    Select,
    Struct,
    Switch,
    Type,
    Var,
    // Operators.
    Add,
    Sub,
    Mul,
    Quo,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    AndNot,
    AddAssign,
    SubAssign,
    MulAssign,
    QuoAssign,
    RemAssign,
    AndAssign,
    OrAssign,
    XorAssign,
    ShlAssign,
    ShrAssign,
    AndNotAssign,
    LAnd,
    LOr,
    Arrow,
    Inc,
    Dec,
    Eql,
    Lss,
    Gtr,
    Assign,
    Not,
    Neq,
    Leq,
    Geq,
    Define,
    Ellipsis,
    LParen,
    LBrack,
    LBrace,
    Comma,
    Period,
    RParen,
    RBrack,
    RBrace,
    /// `;`, written (one byte long) or inserted at a line end (empty).
    Semi,
    Colon,
    Tilde,
}

#[derive(Clone, Copy, Debug)]
pub struct Tok {
    pub kind: T,
    pub start: u32,
    pub end: u32,
}

/// The tokens of a file, ending with `Eof`, and for each bracket token the
/// index of its partner (0 for other tokens).
#[derive(Default)]
pub struct Tokens {
    pub toks: Vec<Tok>,
    pub pair: Vec<u32>,
}

pub struct LexError;

fn keyword(w: &[u8]) -> T {
    match w {
        b"break" => T::Break,
        b"case" => T::Case,
        b"chan" => T::Chan,
        b"const" => T::Const,
        b"continue" => T::Continue,
        b"default" => T::Default,
        b"defer" => T::Defer,
        b"else" => T::Else,
        b"fallthrough" => T::Fallthrough,
        b"for" => T::For,
        b"func" => T::Func,
        b"go" => T::Go,
        b"goto" => T::Goto,
        b"if" => T::If,
        b"import" => T::Import,
        b"interface" => T::Interface,
        b"map" => T::Map,
        b"package" => T::Package,
        b"range" => T::Range,
        b"return" => T::Return,
        b"select" => T::Select,
        b"struct" => T::Struct,
        b"switch" => T::Switch,
        b"type" => T::Type,
        b"var" => T::Var,
        _ => T::Ident,
    }
}

/// Whether a line ending after a token of this kind gets a semicolon.
fn semi_after(k: T) -> bool {
    matches!(
        k,
        T::Ident
            | T::Int
            | T::Float
            | T::Imag
            | T::Rune
            | T::Str
            | T::RawStr
            | T::Break
            | T::Continue
            | T::Fallthrough
            | T::Return
            | T::Inc
            | T::Dec
            | T::RParen
            | T::RBrack
            | T::RBrace
    )
}

/// Byte classes for the main loop.
const C_OTHER: u8 = 0;
const C_SPACE: u8 = 1;
const C_NL: u8 = 2;
const C_IDENT: u8 = 3;
const C_DIGIT: u8 = 4;
const C_SLASH: u8 = 5;
const C_DQUOTE: u8 = 6;
const C_BQUOTE: u8 = 7;
const C_SQUOTE: u8 = 8;
const C_DOT: u8 = 9;
const C_OP: u8 = 10;
const C_HIGH: u8 = 11;

static CLASS: [u8; 256] = {
    let mut t = [C_OTHER; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = match c {
            b' ' | b'\t' | b'\r' => C_SPACE,
            b'\n' => C_NL,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => C_IDENT,
            b'0'..=b'9' => C_DIGIT,
            b'/' => C_SLASH,
            b'"' => C_DQUOTE,
            b'`' => C_BQUOTE,
            b'\'' => C_SQUOTE,
            b'.' => C_DOT,
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b',' | b';' | b'~' | b':' | b'+' | b'-'
            | b'*' | b'%' | b'^' | b'<' | b'>' | b'=' | b'!' | b'&' | b'|' => C_OP,
            0x80..=0xff => C_HIGH,
            _ => C_OTHER,
        };
        i += 1;
    }
    t
};

/// Bytes that continue an ASCII identifier.
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || c == b'_';
        i += 1;
    }
    t
};

#[inline]
fn is_ident_byte(b: u8) -> bool {
    IDENT[b as usize]
}

/// Tokenizes `src` into `out` (cleared first).
pub fn lex(src: &str, out: &mut Tokens) -> Result<(), LexError> {
    let b = src.as_bytes();
    let n = b.len();
    if n >= u32::MAX as usize - 1 {
        return Err(LexError);
    }
    let toks = &mut out.toks;
    toks.clear();
    toks.reserve(n / 4 + 8);
    let mut i = 0usize;
    let mut semi_ok = false;
    macro_rules! push {
        ($kind:expr, $s:expr, $e:expr) => {
            toks.push(Tok {
                kind: $kind,
                start: $s as u32,
                end: $e as u32,
            })
        };
    }
    while i < n {
        let c = b[i];
        let start = i;
        let kind = match CLASS[c as usize] {
            C_SPACE => {
                i += 1;
                continue;
            }
            C_NL => {
                if semi_ok {
                    push!(T::Semi, i, i);
                    semi_ok = false;
                }
                i += 1;
                continue;
            }
            C_IDENT => {
                i += 1;
                while i < n && IDENT[b[i] as usize] {
                    i += 1;
                }
                if i < n && b[i] >= 0x80 {
                    i = ident_tail(src, i)?;
                    T::Ident
                } else if c.is_ascii_lowercase() && i - start >= 2 && i - start <= 11 {
                    keyword(&b[start..i])
                } else {
                    T::Ident
                }
            }
            C_SLASH if i + 1 < n && b[i + 1] == b'/' => {
                i = match find_byte(b'\n', &b[i..]) {
                    Some(j) => i + j,
                    None => n,
                };
                continue;
            }
            C_SLASH if i + 1 < n && b[i + 1] == b'*' => {
                let body = &b[i + 2..];
                let Some(j) = find2(body, b'*', b'/') else {
                    return Err(LexError);
                };
                // A comment spanning lines acts like a newline.
                if semi_ok && find_byte(b'\n', &body[..j]).is_some() {
                    push!(T::Semi, i, i);
                    semi_ok = false;
                }
                i += 2 + j + 2;
                continue;
            }
            C_DIGIT => {
                let (k, e) = number(b, i)?;
                i = e;
                k
            }
            C_DOT if i + 1 < n && b[i + 1].is_ascii_digit() => {
                let (k, e) = number(b, i)?;
                i = e;
                k
            }
            C_DQUOTE => {
                i = string(b, i)?;
                T::Str
            }
            C_BQUOTE => {
                let Some(j) = find_byte(b'`', &b[i + 1..]) else {
                    return Err(LexError);
                };
                i += j + 2;
                T::RawStr
            }
            C_SQUOTE => {
                i = rune(src, i)?;
                T::Rune
            }
            C_HIGH => {
                let ch = src[i..].chars().next().ok_or(LexError)?;
                if !ch.is_alphabetic() {
                    return Err(LexError);
                }
                i = ident_tail(src, i)?;
                T::Ident
            }
            C_OP | C_SLASH | C_DOT => {
                let (k, len) = operator(b, i).ok_or(LexError)?;
                i += len;
                k
            }
            _ => return Err(LexError),
        };
        push!(kind, start, i);
        semi_ok = semi_after(kind);
    }
    if semi_ok {
        push!(T::Semi, n, n);
    }
    push!(T::Eof, n, n);
    pair_brackets(out)
}

/// Continues an identifier over letters and digits (any script).
fn ident_tail(src: &str, mut i: usize) -> Result<usize, LexError> {
    let b = src.as_bytes();
    while i < b.len() {
        let c = b[i];
        if is_ident_byte(c) {
            i += 1;
        } else if c >= 0x80 {
            let ch = src[i..].chars().next().ok_or(LexError)?;
            if ch.is_alphanumeric() {
                i += ch.len_utf8();
            } else {
                break;
            }
        } else {
            break;
        }
    }
    Ok(i)
}

/// The first `needle` in `hay`, eight bytes at a time.
fn find_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pat = LO.wrapping_mul(needle as u64);
    let mut i = 0;
    while i + 8 <= hay.len() {
        let w = u64::from_le_bytes(hay[i..i + 8].try_into().unwrap()) ^ pat;
        let z = w.wrapping_sub(LO) & !w & HI;
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    hay[i..].iter().position(|&c| c == needle).map(|j| i + j)
}

fn find2(hay: &[u8], a: u8, b: u8) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = find_byte(a, &hay[from..]) {
        let at = from + j;
        if hay.get(at + 1) == Some(&b) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A number literal starting at `i`: its kind and end. Mirrors Go's
/// scanner; anything it would reject fails.
fn number(b: &[u8], mut i: usize) -> Result<(T, usize), LexError> {
    let n = b.len();
    // The common case: a plain decimal integer.
    if b[i] != b'0' || !(i + 1 < n && (IDENT[b[i + 1] as usize] || b[i + 1] == b'.')) {
        let mut j = i + 1;
        if b[i] != b'0' {
            while j < n && b[j].is_ascii_digit() {
                j += 1;
            }
        }
        if b[i] != b'.' && (j >= n || !(IDENT[b[j] as usize] || b[j] == b'.' || b[j] >= 0x80)) {
            return Ok((T::Int, j));
        }
    }
    let at = |j: usize| if j < n { b[j] } else { 0 };
    let mut float = false;
    let digits = |i: &mut usize, ok: fn(u8) -> bool| -> bool {
        let mut any = false;
        while *i < n && (ok(b[*i]) || b[*i] == b'_') {
            any |= b[*i] != b'_';
            *i += 1;
        }
        any
    };
    if at(i) == b'0' && matches!(at(i + 1), b'x' | b'X') {
        i += 2;
        let mut any = digits(&mut i, |c| c.is_ascii_hexdigit());
        if at(i) == b'.' {
            float = true;
            i += 1;
            any |= digits(&mut i, |c| c.is_ascii_hexdigit());
        }
        if !any {
            return Err(LexError);
        }
        if matches!(at(i), b'p' | b'P') {
            float = true;
            i += 1;
            if matches!(at(i), b'+' | b'-') {
                i += 1;
            }
            if !digits(&mut i, |c| c.is_ascii_digit()) {
                return Err(LexError);
            }
        } else if float {
            // A hexadecimal mantissa needs a `p` exponent.
            return Err(LexError);
        }
    } else if at(i) == b'0' && matches!(at(i + 1), b'b' | b'B' | b'o' | b'O') {
        let octal = matches!(at(i + 1), b'o' | b'O');
        i += 2;
        let ok = if octal {
            digits(&mut i, |c| (b'0'..=b'7').contains(&c))
        } else {
            digits(&mut i, |c| c == b'0' || c == b'1')
        };
        if !ok || at(i).is_ascii_digit() {
            return Err(LexError);
        }
    } else {
        let legacy_octal = at(i) == b'0';
        let int_start = i;
        digits(&mut i, |c| c.is_ascii_digit());
        if at(i) == b'.' {
            float = true;
            i += 1;
            digits(&mut i, |c| c.is_ascii_digit());
        }
        if matches!(at(i), b'e' | b'E') {
            float = true;
            i += 1;
            if matches!(at(i), b'+' | b'-') {
                i += 1;
            }
            if !digits(&mut i, |c| c.is_ascii_digit()) {
                return Err(LexError);
            }
        }
        if legacy_octal && !float && at(i) != b'i' {
            // `0777`: every digit must be octal.
            if b[int_start..i].iter().any(|&c| c == b'8' || c == b'9') {
                return Err(LexError);
            }
        }
    }
    let mut kind = if float { T::Float } else { T::Int };
    if at(i) == b'i' {
        i += 1;
        kind = T::Imag;
    }
    // `1x`, `0b12`, `1_`: not one number.
    if i < n && (is_ident_byte(b[i]) || b[i] >= 0x80) {
        return Err(LexError);
    }
    if b[i - 1] == b'_' {
        return Err(LexError);
    }
    Ok((kind, i))
}

fn hex_digits(b: &[u8], from: usize, count: usize) -> bool {
    b.get(from..from + count)
        .is_some_and(|d| d.iter().all(u8::is_ascii_hexdigit))
}

/// The length of the escape at `b[i]` (a backslash), for strings
/// (`quote` = `"`) and runes (`'`), or an error for escapes Go rejects.
fn escape_len(b: &[u8], i: usize, quote: u8) -> Result<usize, LexError> {
    let Some(&c) = b.get(i + 1) else {
        return Err(LexError);
    };
    Ok(match c {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'\\' => 2,
        _ if c == quote => 2,
        b'x' if hex_digits(b, i + 2, 2) => 4,
        b'u' if hex_digits(b, i + 2, 4) => 6,
        b'U' if hex_digits(b, i + 2, 8) => 10,
        b'0'..=b'7'
            if b.get(i + 1..i + 4)
                .is_some_and(|d| d.iter().all(|x| (b'0'..=b'7').contains(x))) =>
        {
            4
        }
        _ => return Err(LexError),
    })
}

/// An interpreted string starting at `i` (the quote): its end.
fn string(b: &[u8], mut i: usize) -> Result<usize, LexError> {
    i += 1;
    loop {
        while i < b.len() && !matches!(b[i], b'"' | b'\\' | b'\n') {
            i += 1;
        }
        match b.get(i) {
            None | Some(b'\n') => return Err(LexError),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => i += escape_len(b, i, b'"')?,
            Some(_) => i += 1,
        }
    }
}

/// A rune literal starting at `i`: exactly one character or escape.
fn rune(src: &str, i: usize) -> Result<usize, LexError> {
    let b = src.as_bytes();
    let j = match b.get(i + 1) {
        None | Some(b'\'') | Some(b'\n') => return Err(LexError),
        Some(b'\\') => i + 1 + escape_len(b, i + 1, b'\'')?,
        Some(_) => {
            let ch = src[i + 1..].chars().next().ok_or(LexError)?;
            i + 1 + ch.len_utf8()
        }
    };
    if b.get(j) == Some(&b'\'') {
        Ok(j + 1)
    } else {
        Err(LexError)
    }
}

fn operator(b: &[u8], i: usize) -> Option<(T, usize)> {
    let at = |j: usize| b.get(i + j).copied().unwrap_or(0);
    let c = b[i];
    let c1 = at(1);
    Some(match c {
        b'(' => (T::LParen, 1),
        b')' => (T::RParen, 1),
        b'[' => (T::LBrack, 1),
        b']' => (T::RBrack, 1),
        b'{' => (T::LBrace, 1),
        b'}' => (T::RBrace, 1),
        b',' => (T::Comma, 1),
        b';' => (T::Semi, 1),
        b'~' => (T::Tilde, 1),
        b'.' => {
            if c1 == b'.' && at(2) == b'.' {
                (T::Ellipsis, 3)
            } else {
                (T::Period, 1)
            }
        }
        b':' => {
            if c1 == b'=' {
                (T::Define, 2)
            } else {
                (T::Colon, 1)
            }
        }
        b'+' => match c1 {
            b'+' => (T::Inc, 2),
            b'=' => (T::AddAssign, 2),
            _ => (T::Add, 1),
        },
        b'-' => match c1 {
            b'-' => (T::Dec, 2),
            b'=' => (T::SubAssign, 2),
            _ => (T::Sub, 1),
        },
        b'*' => match c1 {
            b'=' => (T::MulAssign, 2),
            _ => (T::Mul, 1),
        },
        b'/' => match c1 {
            b'=' => (T::QuoAssign, 2),
            _ => (T::Quo, 1),
        },
        b'%' => match c1 {
            b'=' => (T::RemAssign, 2),
            _ => (T::Rem, 1),
        },
        b'^' => match c1 {
            b'=' => (T::XorAssign, 2),
            _ => (T::Xor, 1),
        },
        b'<' => match c1 {
            b'-' => (T::Arrow, 2),
            b'<' => {
                if at(2) == b'=' {
                    (T::ShlAssign, 3)
                } else {
                    (T::Shl, 2)
                }
            }
            b'=' => (T::Leq, 2),
            _ => (T::Lss, 1),
        },
        b'>' => match c1 {
            b'>' => {
                if at(2) == b'=' {
                    (T::ShrAssign, 3)
                } else {
                    (T::Shr, 2)
                }
            }
            b'=' => (T::Geq, 2),
            _ => (T::Gtr, 1),
        },
        b'=' => match c1 {
            b'=' => (T::Eql, 2),
            _ => (T::Assign, 1),
        },
        b'!' => match c1 {
            b'=' => (T::Neq, 2),
            _ => (T::Not, 1),
        },
        b'&' => match c1 {
            b'&' => (T::LAnd, 2),
            b'=' => (T::AndAssign, 2),
            b'^' => {
                if at(2) == b'=' {
                    (T::AndNotAssign, 3)
                } else {
                    (T::AndNot, 2)
                }
            }
            _ => (T::And, 1),
        },
        b'|' => match c1 {
            b'|' => (T::LOr, 2),
            b'=' => (T::OrAssign, 2),
            _ => (T::Or, 1),
        },
        _ => return None,
    })
}

/// Fills `pair`: the partner of every bracket. Unbalanced or mismatched
/// brackets fail.
fn pair_brackets(out: &mut Tokens) -> Result<(), LexError> {
    let toks = &out.toks;
    let pair = &mut out.pair;
    pair.clear();
    pair.resize(toks.len(), 0);
    let mut stack: Vec<u32> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let close = match t.kind {
            T::LParen | T::LBrack | T::LBrace => {
                stack.push(i as u32);
                continue;
            }
            T::RParen => T::LParen,
            T::RBrack => T::LBrack,
            T::RBrace => T::LBrace,
            _ => continue,
        };
        let open = stack.pop().ok_or(LexError)?;
        if toks[open as usize].kind != close {
            return Err(LexError);
        }
        pair[open as usize] = i as u32;
        pair[i] = open;
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(LexError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<T> {
        let mut t = Tokens::default();
        assert!(lex(src, &mut t).is_ok(), "{src:?}");
        t.toks.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn find_byte_finds_the_first() {
        let hay = b"abcdefghijklmnop\nqrs\n";
        assert_eq!(find_byte(b'\n', hay), Some(16));
        assert_eq!(find_byte(b'a', hay), Some(0));
        assert_eq!(find_byte(b'h', hay), Some(7));
        assert_eq!(find_byte(b's', hay), Some(19));
        assert_eq!(find_byte(b'z', hay), None);
        for len in 0..20 {
            let mut v = vec![b'x'; len];
            v.push(b'\x80');
            assert_eq!(find_byte(0x80, &v), Some(len));
        }
    }

    fn fails(src: &str) -> bool {
        lex(src, &mut Tokens::default()).is_err()
    }

    #[test]
    fn semicolons_are_inserted_at_line_ends() {
        use T::*;
        assert_eq!(
            kinds("{\nx := f()\nreturn\n}"),
            vec![
                LBrace, Ident, Define, Ident, LParen, RParen, Semi, Return, Semi, RBrace, Semi, Eof
            ]
        );
        // Not after an operator, a comma or an opening bracket.
        assert_eq!(
            kinds("a +\nb,\n(\n)"),
            vec![Ident, Add, Ident, Comma, LParen, RParen, Semi, Eof]
        );
        // A line comment ends at the newline; a block comment spanning
        // lines acts like one; one on a single line like a space.
        assert_eq!(kinds("x // c\ny"), vec![Ident, Semi, Ident, Semi, Eof]);
        assert_eq!(
            kinds("x /* a\n b */ y"),
            vec![Ident, Semi, Ident, Semi, Eof]
        );
        assert_eq!(kinds("x /* a */ y"), vec![Ident, Ident, Semi, Eof]);
        assert_eq!(
            kinds("break\ncontinue\nfallthrough\ni++\nj--\n"),
            vec![
                Break,
                Semi,
                Continue,
                Semi,
                Fallthrough,
                Semi,
                Ident,
                Inc,
                Semi,
                Ident,
                Dec,
                Semi,
                Eof
            ]
        );
        // At the end of input too.
        assert_eq!(kinds("x"), vec![Ident, Semi, Eof]);
        // Inserted semicolons are empty; written ones are one byte.
        let mut t = Tokens::default();
        let _ = lex("a;\nb\n", &mut t);
        assert_eq!((t.toks[1].start, t.toks[1].end), (1, 2));
        assert_eq!((t.toks[3].start, t.toks[3].end), (4, 4));
    }

    #[test]
    fn literals() {
        use T::*;
        for (src, k) in [
            ("42", Int),
            ("1_000", Int),
            ("0x1F", Int),
            ("0X_ff", Int),
            ("0o17", Int),
            ("0b1010", Int),
            ("017", Int),
            ("0", Int),
            ("1.5", Float),
            ("1.", Float),
            (".5", Float),
            ("1e9", Float),
            ("1E-9", Float),
            ("1_0.2_5e+1_0", Float),
            ("0x1p-2", Float),
            ("0x1.8p1", Float),
            ("0X.8P0", Float),
            ("089.5", Float),
            ("2i", Imag),
            ("1.5i", Imag),
            ("0x1Fi", Imag),
            ("089i", Imag),
            ("'a'", Rune),
            ("'é'", Rune),
            (r"'\n'", Rune),
            (r"'\x41'", Rune),
            (r"'\101'", Rune),
            (r"'\u00e9'", Rune),
            (r"'\U0001F600'", Rune),
            (r"'\''", Rune),
            (r#""a\tb\"c""#, Str),
            ("\"héllo\"", Str),
            ("`raw\n\\n`", RawStr),
        ] {
            assert_eq!(kinds(src)[0], k, "{src}");
            assert_eq!(kinds(src).len(), 3, "{src} is one token");
        }
        for bad in [
            "0x", "0b2", "09", "1__", "1_", "0x1.8", "1e", "'ab'", "''", r"'\q'", r#""\q""#,
            r#""\x4""#, "\"a\nb\"", "\"abc", "`abc", "/* x", "1abc", "@", "#", "$", "?", "\\",
            "\u{a0}",
        ] {
            assert!(fails(bad), "{bad}");
        }
    }

    #[test]
    fn operators_take_the_longest_match() {
        use T::*;
        assert_eq!(
            kinds("<-<<=<<<=&^=&^&&...:=.+=++"),
            vec![
                Arrow,
                ShlAssign,
                Shl,
                Leq,
                AndNotAssign,
                AndNot,
                LAnd,
                Ellipsis,
                Define,
                Period,
                AddAssign,
                Inc,
                Semi,
                Eof
            ]
        );
    }

    #[test]
    fn identifiers_and_keywords() {
        use T::*;
        assert_eq!(
            kinds("func 処理 _x nil map chanx"),
            vec![Func, Ident, Ident, Ident, Map, Ident, Semi, Eof]
        );
    }

    #[test]
    fn brackets_are_paired() {
        let mut t = Tokens::default();
        assert!(lex("f(a[1], {x})", &mut t).is_ok());
        assert_eq!(t.pair[1], 10);
        assert_eq!(t.pair[10], 1);
        assert_eq!(t.pair[3], 5);
        assert!(fails("f(]"));
        assert!(fails("f("));
        assert!(fails(")"));
        // Brackets in strings and comments do not count.
        assert!(lex("f(\")\", `(`, ')') // (", &mut t).is_ok());
    }
}
