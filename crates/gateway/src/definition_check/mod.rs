//! `definition_check` (in progress).
