/**
 * The order of a search over a log of events (a conversation's events, its bash events, the control
 * plane's lifecycle events): oldest first, or newest first.
 */
export const EVENT_SORT_ORDERS = ['TIMESTAMP', 'TIMESTAMP_DESC'] as const;

export type EventSortOrder = (typeof EVENT_SORT_ORDERS)[number];
