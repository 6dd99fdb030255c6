//! Differential fuzzing of the page memo (`PageMemo`, what `per-call` mode reads every listing
//! through): a sequence of listings read through one memo must give, listing by listing, exactly
//! what reading every page strictly gives (the same tools and cursors, or the same error).
//!
//! Input: listings separated by 0xFE, each one's pages separated by 0xFF. An empty page repeats
//! the page at the same position of the previous listing, so most listings serve pages the memo
//! holds, byte for byte or with the fuzzer's changes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::definition_check::{ListedTools, PageMemo, ToolsPageError};

const MAX_LISTINGS: usize = 8;
const MAX_PAGES: usize = 6;

fuzz_target!(|data: &[u8]| {
    let memo = PageMemo::new();
    let mut previous: Vec<&[u8]> = Vec::new();
    for listing in data.split(|&byte| byte == 0xFE).take(MAX_LISTINGS) {
        let mut pages: Vec<&[u8]> = Vec::new();
        for (position, page) in listing
            .split(|&byte| byte == 0xFF)
            .take(MAX_PAGES)
            .enumerate()
        {
            pages.push(match (page.is_empty(), previous.get(position)) {
                (true, Some(earlier)) => earlier,
                _ => page,
            });
        }
        let reused_before = memo.pages_reused();
        let through_memo = read(&pages, |tools, page| {
            tools.read_page_remembered(page, &memo)
        });
        let strictly = read(&pages, ListedTools::read_page);
        assert_eq!(through_memo, strictly, "listing {pages:?}");
        // A page taken from the memo is one the memo held: never more reuses than pages read.
        assert!(memo.pages_reused() - reused_before <= pages.len() as u64);
        assert!(memo.len() <= MAX_PAGES);
        previous = pages;
    }
});

/// The listing of `pages` read in order with `read_page` until the first error or the last
/// page (no cursor): the tools and every cursor given, or the error and where it came.
fn read(
    pages: &[&[u8]],
    mut read_page: impl FnMut(&mut ListedTools, &[u8]) -> Result<Option<String>, ToolsPageError>,
) -> Result<(ListedTools, Vec<Option<String>>), (usize, ToolsPageError)> {
    let mut tools = ListedTools::new();
    let mut cursors = Vec::new();
    for (position, page) in pages.iter().enumerate() {
        let cursor = read_page(&mut tools, page).map_err(|error| (position, error))?;
        let last = cursor.is_none();
        cursors.push(cursor);
        if last {
            break;
        }
    }
    Ok((tools, cursors))
}
