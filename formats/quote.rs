//! Input as error messages show it: quoted or cut after [`MAX_QUOTED_CHARS`] characters, so
//! that no message grows with the input. Shared by the byte layer's errors and the extension's.

/// The most characters of input an error message quotes; longer text is cut (see [`quote`]).
pub const MAX_QUOTED_CHARS: usize = 80;

/// [`cut`] as a `Display`: written into a message as it is formatted, with nothing allocated
/// first (a message made while memory runs out is then made fallibly, or not at all).
pub struct Cut<'a>(pub &'a str);

impl std::fmt::Display for Cut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.char_indices().nth(MAX_QUOTED_CHARS) {
            None => f.write_str(self.0),
            Some((cut, _)) => write!(
                f,
                "{}... ({} characters)",
                &self.0[..cut],
                self.0.chars().count()
            ),
        }
    }
}

/// [`quote`] as a `Display` (see [`Cut`]).
pub struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.char_indices().nth(MAX_QUOTED_CHARS) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => write!(
                f,
                "{:?}... ({} characters)",
                &self.0[..cut],
                self.0.chars().count()
            ),
        }
    }
}

/// Input text (a number's digits, a name) as an error message shows it unquoted: cut after
/// [`MAX_QUOTED_CHARS`] characters to `prefix... (12345 characters)`.
pub fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some(_) => std::borrow::Cow::Owned(Cut(text).to_string()),
    }
}

/// Input bytes meant as text, shown unquoted as [`cut`] does (invalid UTF-8 as U+FFFD).
pub fn cut_bytes(bytes: &[u8]) -> String {
    let limit = MAX_QUOTED_CHARS * 4;
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(limit)]);
    match head.char_indices().nth(MAX_QUOTED_CHARS) {
        None if bytes.len() <= limit => head.into_owned(),
        None => format!("{head}... ({} bytes)", bytes.len()),
        Some((cut, _)) => format!("{}... ({} bytes)", &head[..cut], bytes.len()),
    }
}

/// Input text as an error message quotes it: `"..."` with escapes, cut after
/// [`MAX_QUOTED_CHARS`] characters to `"prefix"... (12345 characters)`, so that no message
/// grows with the input.
pub fn quote(text: &str) -> String {
    Quoted(text).to_string()
}

/// Input bytes meant as text (invalid UTF-8 shown as U+FFFD), quoted as [`quote`] does, the
/// total counted in bytes.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let limit = MAX_QUOTED_CHARS * 4;
    if bytes.len() <= limit {
        let text = String::from_utf8_lossy(bytes);
        if text.chars().count() <= MAX_QUOTED_CHARS {
            return format!("{text:?}");
        }
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(limit)]);
    let cut = head
        .char_indices()
        .nth(MAX_QUOTED_CHARS)
        .map_or(head.len(), |(i, _)| i);
    format!("{:?}... ({} bytes)", &head[..cut], bytes.len())
}
