//! RFC 6901 JSON Pointers, built only when an error needs one.

/// Appends `/` and one reference token to `pointer`, escaping `~` as `~0` and `/` as `~1`.
pub(crate) fn push_member(pointer: &mut String, name: &str) {
    pointer.push('/');
    for c in name.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            _ => pointer.push(c),
        }
    }
}

/// Appends `/` and an array index to `pointer`.
pub(crate) fn push_index(pointer: &mut String, index: usize) {
    pointer.push('/');
    pointer.push_str(&index.to_string());
}
