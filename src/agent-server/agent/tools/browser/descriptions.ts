/** What the LLM is told about each browser tool. */

const RULES = `How to use the browser (true of every browser_* tool):
* Prefer the terminal (curl, wget) for plain pages and APIs; use the browser for pages that need JavaScript, clicks or forms, and to see what a page looks like.
* The usual flow: browser_navigate, then browser_get_state to see the numbered elements, act on them by index, browser_get_state again, and browser_get_content to read the page.
* Indices change whenever the page changes: take them from your latest browser_get_state only.
* Give up on a page after a few failed tries (login walls, CAPTCHAs, 403s) rather than repeating them.`;

export const BROWSER_DESCRIPTIONS = {
  browser_navigate: `Open a URL in the browser, in the current tab or a new one. The browser starts on first use.

${RULES}`,
  browser_click: `Click an element of the page by its index (buttons, links, checkboxes, other controls).
Call browser_get_state first: indices come from its latest output and change after every action. A click that opens a new tab makes that tab the current one.
Do not submit forms or create accounts unless you were asked to.`,
  browser_type: `Enter text into an input field, text area or other editable element, by its index from the latest browser_get_state. What the field held is replaced.
Do not submit forms or create accounts unless you were asked to.`,
  browser_get_state: `Read the current page: its URL and title, the open tabs, the scroll position, and its interactive elements numbered for browser_click and browser_type (each with its tag, text, and attributes such as type, placeholder, href or value). Optionally with a screenshot of what is visible.`,
  browser_get_content: `Read the current page's text as markdown (headings, lists, tables, code), without scripts, styles or hidden parts; with extract_links, links and images keep their URLs.
Long pages are cut; the answer says which start_from_char reads on.`,
  browser_scroll: `Scroll the current page up or down by about one screen, to reach content or elements outside the view.`,
  browser_go_back: `Go back to the previous page of the current tab, like the browser's back button.`,
  browser_list_tabs: `List the open tabs with their ids, URLs and titles, marking the current one. Pass the ids to browser_switch_tab or browser_close_tab.`,
  browser_switch_tab: `Make another open tab the current one, by its id from browser_list_tabs.`,
  browser_close_tab: `Close an open tab by its id from browser_list_tabs. Closing the current tab makes the last opened one current.`,
  browser_get_storage: `Read the browser's storage: its cookies, each origin's localStorage, and the current tab's sessionStorage. The answer can be given back to browser_set_storage to restore a session.`,
  browser_set_storage: `Set the browser's storage: add cookies and write localStorage per origin (and sessionStorage where the current tab is on that origin), from the shape browser_get_storage returns:
{"cookies": [{"name", "value", "domain", "path", ...}], "origins": [{"origin", "localStorage": [{"name", "value"}], "sessionStorage": [...]}]}`,
  browser_start_recording: `Start recording the browser session: every action with snapshots of the page before and after, screenshots and network, across navigations and tabs, until browser_stop_recording saves it.`,
  browser_stop_recording: `Stop the running recording and save it into the workspace under .agent_tmp/browser_observations/ as a Playwright trace (view it with \`npx playwright show-trace <file>\`). Answers where it was saved.`,
} as const;
