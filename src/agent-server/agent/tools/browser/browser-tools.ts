/**
 * OpenHands' BrowserToolSet: fourteen `browser_*` tools sharing one conversation's browser
 * (see browser-session.ts), each answering a BrowserObservation. Calls run one at a time; every
 * failure, a missing Chromium included, is an error observation the agent can read, and no call
 * outlasts CALL_TIMEOUT_MS.
 */
import { z } from 'zod';
import {
  BrowserClickActionSchema,
  BrowserCloseTabActionSchema,
  BrowserGetContentActionSchema,
  BrowserGetStateActionSchema,
  BrowserGetStorageActionSchema,
  BrowserGoBackActionSchema,
  BrowserListTabsActionSchema,
  BrowserNavigateActionSchema,
  BrowserObservationSchema,
  BrowserScrollActionSchema,
  BrowserSetStorageActionSchema,
  BrowserStartRecordingActionSchema,
  BrowserStopRecordingActionSchema,
  BrowserSwitchTabActionSchema,
  BrowserTypeActionSchema,
} from '../../../../events/index.js';
import type { AgentUser } from '../../../agent-user.js';
import type { AgentFs } from '../../../agent-fs/index.js';
import { createSerialQueue } from '../serial-queue.js';
import { defineTool, textContent, type AnyTool, type ToolContext, type ToolSpec } from '../tool.js';
import * as actions from './browser-actions.js';
import { createBrowserRecorder } from './browser-recording.js';
import { createBrowserSession } from './browser-session.js';
import { getStorage, setStorage } from './browser-storage.js';
import { BROWSER_DESCRIPTIONS as D } from './descriptions.js';

export type BrowserObservation = z.output<typeof BrowserObservationSchema>;

export interface BrowserToolOptions {
  workspaceDir: string;
  files: AgentFs;
  agentUser?: AgentUser;
  /** The Chromium to run; otherwise CHROMIUM_PATH or the first Chromium on PATH. */
  executablePath?: string;
}

/** The longest one browser call may take, browser start included. */
export const CALL_TIMEOUT_MS = 120_000;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const ACTS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };

type BrowserActionSchema = ToolSpec<z.ZodObject<{ kind: z.ZodLiteral<string> }>, BrowserObservation>['actionSchema'];

/** The fourteen tools, in OpenHands' order. Closing all of them ends the browser. */
export function createBrowserTools(options: BrowserToolOptions): AnyTool[] {
  const session = createBrowserSession({ agentUser: options.agentUser, executablePath: options.executablePath });
  const recorder = createBrowserRecorder(session, options.workspaceDir, options.files);
  const serial = createSerialQueue();
  let open = 0;

  function tool<S extends BrowserActionSchema>(
    name: string,
    kind: ToolSpec<S, BrowserObservation>['kind'],
    actionSchema: S,
    parameterDescriptions: ToolSpec<S, BrowserObservation>['parameterDescriptions'],
    hints: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean },
    run: (action: z.output<S>) => Promise<actions.BrowserResult>,
  ): AnyTool {
    open += 1;
    let closed = false;
    const made = defineTool<S, BrowserObservation>({
      name,
      kind,
      description: D[name as keyof typeof D],
      actionSchema,
      parameterDescriptions,
      observationKind: 'BrowserObservation',
      annotations: hints,
      execute: (action, ctx) => serial(() => observe(() => run(action), ctx)),
      async close() {
        if (closed) return;
        closed = true;
        open -= 1;
        if (open === 0) await session.close();
      },
    });
    // Each call's S is one of the browser Action schemas, all in the event model's Action union;
    // TypeScript cannot see that through the generic parameter.
    return made as unknown as AnyTool;
  }

  return [
    tool('browser_navigate', 'BrowserNavigateTool', BrowserNavigateActionSchema, {
      url: 'The URL to open (a scheme-less address gets https://).',
      new_tab: 'Open it in a new tab rather than the current one. Default: false.',
    }, { ...ACTS, openWorldHint: true }, (a) => actions.navigate(session, a.url, a.new_tab)),
    tool('browser_click', 'BrowserClickTool', BrowserClickActionSchema, {
      index: 'The index of the element to click, from the latest browser_get_state.',
      new_tab: 'For a link: open its target in a new tab. Default: false.',
    }, { ...ACTS, openWorldHint: true }, (a) => actions.click(session, a.index, a.new_tab)),
    tool('browser_get_state', 'BrowserGetStateTool', BrowserGetStateActionSchema, {
      include_screenshot: 'Also return a screenshot of the visible part of the page. Default: false.',
    }, { ...READ_ONLY, openWorldHint: true }, (a) => actions.getState(session, a.include_screenshot)),
    tool('browser_get_content', 'BrowserGetContentTool', BrowserGetContentActionSchema, {
      extract_links: 'Keep links and images with their URLs in the markdown. Default: false.',
      start_from_char: 'Where in the page content to start (to continue a truncated answer). Default: 0.',
    }, { ...READ_ONLY, openWorldHint: true }, (a) => actions.getContent(session, a.extract_links, a.start_from_char)),
    tool('browser_type', 'BrowserTypeTool', BrowserTypeActionSchema, {
      index: 'The index of the input element, from the latest browser_get_state.',
      text: 'The text to enter; it replaces what the field holds.',
    }, { ...ACTS, openWorldHint: true }, (a) => actions.typeText(session, a.index, a.text)),
    tool('browser_scroll', 'BrowserScrollTool', BrowserScrollActionSchema, {
      direction: "'up' or 'down' by about one screen. Default: 'down'.",
    }, { ...ACTS, openWorldHint: true }, (a) => actions.scroll(session, a.direction)),
    tool('browser_go_back', 'BrowserGoBackTool', BrowserGoBackActionSchema, {}, { ...ACTS, openWorldHint: true }, () => actions.goBack(session)),
    tool('browser_list_tabs', 'BrowserListTabsTool', BrowserListTabsActionSchema, {}, { ...READ_ONLY, openWorldHint: false }, () => actions.listTabs(session)),
    tool('browser_switch_tab', 'BrowserSwitchTabTool', BrowserSwitchTabActionSchema, {
      tab_id: 'The 4-character id of the tab to switch to, from browser_list_tabs.',
    }, { ...ACTS, openWorldHint: false }, (a) => actions.switchTab(session, a.tab_id)),
    tool('browser_close_tab', 'BrowserCloseTabTool', BrowserCloseTabActionSchema, {
      tab_id: 'The 4-character id of the tab to close, from browser_list_tabs.',
    }, { ...ACTS, destructiveHint: true, openWorldHint: false }, (a) => actions.closeTab(session, a.tab_id)),
    tool('browser_get_storage', 'BrowserGetStorageTool', BrowserGetStorageActionSchema, {}, { ...READ_ONLY, openWorldHint: false }, () => getStorage(session)),
    tool('browser_set_storage', 'BrowserSetStorageTool', BrowserSetStorageActionSchema, {
      storage_state: "The storage to set: 'cookies' (a list of cookies) and 'origins' (a list of {origin, localStorage, sessionStorage}), as browser_get_storage returns it.",
    }, { ...ACTS, destructiveHint: true, openWorldHint: false }, (a) => setStorage(session, a.storage_state)),
    tool('browser_start_recording', 'BrowserStartRecordingTool', BrowserStartRecordingActionSchema, {}, { ...ACTS, openWorldHint: false }, () => recorder.start()),
    tool('browser_stop_recording', 'BrowserStopRecordingTool', BrowserStopRecordingActionSchema, {}, { ...ACTS, openWorldHint: false }, () => recorder.stop()),
  ];
}

/** Runs one call into an observation: its text and screenshot, or the failure as an error. */
async function observe(run: () => Promise<actions.BrowserResult>, ctx: ToolContext): Promise<BrowserObservation> {
  try {
    const result = await withDeadline(run(), ctx.signal);
    return BrowserObservationSchema.parse({
      kind: 'BrowserObservation',
      content: [textContent(result.text)],
      screenshot_data: result.screenshot ?? null,
    });
  } catch (error) {
    const why = error instanceof actions.BrowserActionError ? error.message : `Browser operation failed: ${(error as Error).message}`;
    return BrowserObservationSchema.parse({ kind: 'BrowserObservation', content: [textContent(why)], is_error: true });
  }
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the call did not finish within ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS);
    const onAbort = () => reject(new Error('the call was interrupted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}
