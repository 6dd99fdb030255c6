//! What a listing fetch gives the definition check: the tools of every page, digested from the
//! bytes the upstream served ([`ToolsPage::read`]), or definitions already read as values
//! (digested by the tree path when a check needs them).

use std::sync::{Mutex, MutexGuard, PoisonError};

use jcs_digest::{JsonType, Profile, StreamReader, StreamedTool, StrictJsonError};
use serde_json::Value;

/// The tools of one complete `tools/list` (every page), in listing order, as the definition
/// check receives them from its fetch.
///
/// Built page by page from the upstream's bytes ([`ListedTools::push_page`]: each tool's
/// digest computed as it is read, no `Value` tree), or from definitions already read
/// (`From<Vec<Value>>`: each digested by [`jcs_digest::tool_definition_digest`] when a check
/// first needs it). Both give the same digests for the same bytes. Two listings are equal when
/// they hold the same tools, in the same order, from as many pages.
#[derive(Debug, Default, PartialEq)]
pub struct ListedTools {
    tools: Vec<ListedTool>,
    /// Pages added so far: the position of the next one, by which a [`PageMemo`] holds them.
    pages: usize,
}

#[derive(Debug, PartialEq)]
pub(crate) enum ListedTool {
    /// A definition as a value, not digested yet.
    Value(Value),
    /// A definition digested from the bytes (or an element that is not an object).
    Streamed(StreamedTool),
}

impl ListedTools {
    /// An empty listing, to which pages are added.
    pub fn new() -> ListedTools {
        ListedTools::default()
    }

    /// Adds the tools of one page, after those of the pages before it.
    pub fn push_page(&mut self, page: ToolsPage) {
        self.tools
            .extend(page.tools.into_iter().map(ListedTool::Streamed));
        self.pages += 1;
    }

    /// Reads one page's `result` bytes ([`ToolsPage::read`]) and adds its tools; returns its
    /// `nextCursor`.
    ///
    /// # Errors
    ///
    /// As [`ToolsPage::read`]; nothing is added then.
    pub fn read_page(&mut self, result: &[u8]) -> Result<Option<String>, ToolsPageError> {
        Ok(self.add_page(ToolsPage::read(result)?))
    }

    /// [`read_page`](Self::read_page), unless `memo` holds a page read at the same position of
    /// an earlier listing from exactly these bytes: its tools and cursor are then taken from the
    /// memo, which is what reading the bytes again would give. A page read here replaces what
    /// the memo held at its position and after it.
    ///
    /// # Errors
    ///
    /// As [`ToolsPage::read`]; nothing is added, and the memo is left as it was.
    pub fn read_page_remembered(
        &mut self,
        result: &[u8],
        memo: &PageMemo,
    ) -> Result<Option<String>, ToolsPageError> {
        let position = self.pages;
        let page = match memo.page(position, result) {
            Some(page) => page,
            None => {
                let page = ToolsPage::read(result)?;
                memo.remember(position, result, &page);
                page
            }
        };
        Ok(self.add_page(page))
    }

    /// Adds the tools of `page`; returns its `nextCursor`.
    fn add_page(&mut self, mut page: ToolsPage) -> Option<String> {
        let next = page.next_cursor.take();
        self.push_page(page);
        next
    }

    /// How many tools the listing holds (elements of the `tools` arrays, whatever they are).
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the listing holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub(crate) fn into_tools(self) -> Vec<ListedTool> {
        self.tools
    }
}

impl From<Vec<Value>> for ListedTools {
    fn from(tools: Vec<Value>) -> ListedTools {
        ListedTools {
            tools: tools.into_iter().map(ListedTool::Value).collect(),
            pages: 0,
        }
    }
}

/// The pages of the latest listings of one upstream as [`ListedTools::read_page_remembered`]
/// read them, each with its `result` bytes, so that a page served again byte for byte (an
/// unchanged tool set, listed again in `per-call` mode) is compared rather than read and
/// digested again.
///
/// Equal bytes give equal tools and digests (the reading is a function of the bytes alone), so
/// a remembered page is what reading it again would give; a page whose bytes differ in any way
/// (a drifted definition) is read. The bytes are compared whole, not by a hash of them: a
/// comparison is exact, and it runs at memory speed where SHA-256 took most of the time a page
/// served again cost. So the memo holds the bytes of each page it remembers, at most one page per
/// position a listing reached, each one that a listing within its byte budget had read
/// (`--max-listing-bytes`): about one listing's bytes per upstream, and of each tool its name
/// and digest.
#[derive(Debug, Default)]
pub struct PageMemo {
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    /// By position in the listing.
    pages: Vec<RememberedPage>,
    /// Pages taken from the memo rather than read.
    reused: u64,
}

#[derive(Debug)]
struct RememberedPage {
    /// The page's `result` bytes.
    bytes: Box<[u8]>,
    page: ToolsPage,
}

impl PageMemo {
    /// An empty memo.
    pub fn new() -> PageMemo {
        PageMemo::default()
    }

    /// How many pages it holds.
    pub fn len(&self) -> usize {
        self.lock().pages.len()
    }

    /// Whether it holds no page.
    pub fn is_empty(&self) -> bool {
        self.lock().pages.is_empty()
    }

    /// How many pages were taken from it rather than read, since it was made.
    pub fn pages_reused(&self) -> u64 {
        self.lock().reused
    }

    /// The page at `position` if it was read from exactly `bytes`.
    fn page(&self, position: usize, bytes: &[u8]) -> Option<ToolsPage> {
        let mut held = self.lock();
        let remembered = held.pages.get(position)?;
        if *remembered.bytes != *bytes {
            return None;
        }
        let page = remembered.page.clone();
        held.reused += 1;
        Some(page)
    }

    /// Holds `page` at `position`, in place of what was there and after it (the pages after a
    /// changed one belong to the listing it changed). A position past the end (the pages
    /// before it were not read through this memo, or were cut by another listing meanwhile) is
    /// not held.
    fn remember(&self, position: usize, bytes: &[u8], page: &ToolsPage) {
        let mut held = self.lock();
        held.pages.truncate(position);
        if held.pages.len() == position {
            held.pages.push(RememberedPage {
                bytes: bytes.into(),
                page: page.clone(),
            });
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        // Nothing is left half-updated by a panic while it is held.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One page of a `tools/list`: the `result` object's `tools`, each digested from the bytes
/// under `trace.mcp-tool-definition.v1` (the profile `definition_hash` is computed under), and
/// its `nextCursor`.
#[derive(Clone, Debug)]
pub struct ToolsPage {
    tools: Vec<StreamedTool>,
    next_cursor: Option<String>,
}

/// Why a `tools/list` result is not a page of tools. The messages are the ones the gateway has
/// always given for a malformed listing, whichever way the page was read.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolsPageError {
    /// The result is not strict JSON (docs/design.md §2): definitions are hashed.
    #[error("the result is not strict JSON: {0}")]
    NotStrict(StrictJsonError),
    /// The result is JSON but not an object.
    #[error("the result is not an object")]
    NotAnObject {
        /// What it is.
        found: JsonType,
    },
    /// The result has no `tools` member, or one that is not an array.
    #[error("the result has no `tools` array")]
    NoToolsArray {
        /// What `tools` is, `None` when absent.
        found: Option<JsonType>,
    },
    /// `nextCursor` is neither absent, `null` nor a string.
    #[error("`nextCursor` is not a string")]
    CursorNotAString {
        /// What it is.
        found: JsonType,
    },
}

impl From<StrictJsonError> for ToolsPageError {
    fn from(error: StrictJsonError) -> ToolsPageError {
        ToolsPageError::NotStrict(error)
    }
}

/// What the members of a result object were, as far as a page needs them.
#[derive(Default)]
struct Members {
    tools: Option<Result<Vec<StreamedTool>, JsonType>>,
    cursor: Option<Result<Option<String>, JsonType>>,
}

impl ToolsPage {
    /// Reads the `result` of one `tools/list` answer from its bytes, in one pass: the whole
    /// result strictly (the same acceptance and errors as [`jcs_digest::parse_strict`]), each
    /// element of `tools` digested as it is read, every other member checked and skipped.
    ///
    /// # Errors
    ///
    /// [`ToolsPageError`]: not strict JSON first (wherever in the result the fault is), then
    /// not an object, no `tools` array, a `nextCursor` that is not a string, in that order.
    pub fn read(result: &[u8]) -> Result<ToolsPage, ToolsPageError> {
        let mut reader = StreamReader::new(result);
        let members = match reader.peek() {
            Some(JsonType::Object) => Ok(result_members(&mut reader)?),
            _ => Err(reader.skip_value()?),
        };
        reader.finish()?;
        let members = members.map_err(|found| ToolsPageError::NotAnObject { found })?;
        let tools = match members.tools {
            Some(Ok(tools)) => tools,
            Some(Err(found)) => return Err(ToolsPageError::NoToolsArray { found: Some(found) }),
            None => return Err(ToolsPageError::NoToolsArray { found: None }),
        };
        let next_cursor = members
            .cursor
            .transpose()
            .map_err(|found| ToolsPageError::CursorNotAString { found })?
            .flatten();
        Ok(ToolsPage { tools, next_cursor })
    }

    /// [`read`](Self::read) by the tree path: the result read into a `Value` first, its tools
    /// appended to `tools` as values (for what shows or compares definitions, not only their
    /// digests); returns its `nextCursor`. The same errors as [`read`](Self::read).
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read); nothing is appended then.
    pub fn read_values(
        result: &[u8],
        tools: &mut Vec<Value>,
    ) -> Result<Option<String>, ToolsPageError> {
        let mut result = match jcs_digest::parse_strict(result)? {
            Value::Object(members) => members,
            other => {
                return Err(ToolsPageError::NotAnObject {
                    found: JsonType::of_value(&other),
                });
            }
        };
        let page = match result.remove("tools") {
            Some(Value::Array(page)) => page,
            found => {
                return Err(ToolsPageError::NoToolsArray {
                    found: found.as_ref().map(JsonType::of_value),
                });
            }
        };
        let next = match result.remove("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(next)) => Some(next),
            Some(other) => {
                return Err(ToolsPageError::CursorNotAString {
                    found: JsonType::of_value(&other),
                });
            }
        };
        tools.extend(page);
        Ok(next)
    }

    /// The `nextCursor` of the page: `None` when absent or `null` (the last page).
    pub fn next_cursor(&self) -> Option<&str> {
        self.next_cursor.as_deref()
    }

    /// How many tools the page holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the page holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// Reads the members of the result object that is the next value. A strict reader refuses a
/// repeated member name, so each member is met at most once.
fn result_members(reader: &mut StreamReader<'_>) -> Result<Members, StrictJsonError> {
    let mut members = Members::default();
    reader.enter_object()?;
    while let Some(name) = reader.next_member()? {
        match name {
            "tools" => {
                members.tools = Some(match reader.peek() {
                    Some(JsonType::Array) => Ok(reader.tool_definitions(Profile::Trace)?),
                    _ => Err(reader.skip_value()?),
                });
            }
            "nextCursor" => {
                members.cursor = Some(match reader.peek() {
                    Some(JsonType::String) => Ok(reader.string_value()?),
                    _ => match reader.skip_value()? {
                        JsonType::Null => Ok(None),
                        other => Err(other),
                    },
                });
            }
            _ => {
                reader.skip_value()?;
            }
        }
    }
    Ok(members)
}
